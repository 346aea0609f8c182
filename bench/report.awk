# bench/report.awk: see bench/report.sh.  POSIX awk (Debian's mawk too).
#
# A run's CPU time: run_ns is the workload's own, from the end of an
# in-process tool's setup to the end of the work; tree_ns adds everything
# else cputree waited for (exec, loading, setup, and perf record's or
# bpfsample's own process).  For each workload, "none" gives the baselines.
#   extra  = run - base_run                       in-process tools
#          + (tree - run) - base_out - fixed      perf, bpf: their process,
#            less their fixed cost (start, stop) measured on an empty workload
#   ns_per_sample = extra / samples
#   overhead_pct  = (tree - base_tree) / base_run  (fixed costs included)
#   expected      = CPU x rate: run_ns for in-process tools, proc_ns (since
#                   the fork) for perf and bpf, which sample the whole process
#   error_pct     = largest |share - 50/30/20| of f1, f2, f3, in points

function kv(i, k) { return (i SUBSEP k) in V ? V[i, k] : "" }

# Median and spread of the values pushed since med_reset(): MIN and MAX,
# and the 95% interval of the median, CLO and CHI (med_ci()).
function med_reset() { NM = 0 }
function med_push(x) { if (x != "") M[++NM] = x + 0 }
function med(   i, j, t) {
	for (i = 2; i <= NM; i++)
		for (j = i; j > 1 && M[j - 1] > M[j]; j--) {
			t = M[j]; M[j] = M[j - 1]; M[j - 1] = t
		}
	if (!NM) return ""
	MIN = M[1]; MAX = M[NM]
	med_ci()
	return NM % 2 ? M[(NM + 1) / 2] : (M[NM / 2] + M[NM / 2 + 1]) / 2
}

# After med(): a distribution-free 95% interval of the median, from the
# order statistics (the binomial's normal approximation), in CLO and CHI.
function med_ci(   k) {
	k = int((NM - 1.96 * sqrt(NM)) / 2)
	if (k < 1) k = 1
	CLO = M[k]; CHI = M[NM - k + 1]
}

# Whether a ratio's interval [lo, hi] shows it within 10% of 1, beyond it,
# or cannot tell.
function flat10(lo, hi) {
	return lo == "" ? "" : lo >= 0.9 && hi <= 1.1 ? "flat within 10%" : \
	       lo > 1.1 || hi < 0.9 ? "not flat within 10%" : \
	       "not resolved at 10% by this many repetitions"
}

function name(t) {
	return t == "null" ? "null-timer" : t == "profil" ? "profil.ko" : \
	       t == "glibc" ? "glibc-profil" : t == "perf" ? "perf-record" : \
	       t == "bpf" ? "bpf-sampler" : t
}
function f(x, d) { return x == "" ? "" : sprintf("%." d "f", x) }
function ratio(a, b) { return a == "" || b == "" || b + 0 <= 0 ? "" : a / b }
# A cost per sample in prose, and " (Nx)" of another where both exist.
function per_sample(x) { return x == "" ? "below noise" : f(x, 0) " ns" }
function times(a, b) { return ratio(a, b) == "" ? "" : " (" f(ratio(a, b), 2) "x)" }

/^@@ bench-info / { for (i = 3; i < NF; i += 2) INFO[$i] = $(i + 1) }

/^@@ bench / {
	n++
	T[n] = $3; W[n] = $4; R[n] = $5; P[n] = $6
	for (i = 7; i < NF; i += 2) V[n, $i] = $(i + 1)
	if ($7 == "not-available") V[n, "note"] = "not available: " $8
	if (T[n] == "regions" || T[n] == "forkexec" || T[n] == "profilfork" || T[n] == "sessmem")
		next
	SEEN[T[n], W[n], R[n]] = 1
}

# The cases seen, in the order of the tables: workload, tool, rate.
function order(   w, t, r, a, b, c) {
	split("cpu mt mt16 sys block pg pg-mt pg-mt16", a, " ")
	split("none null profil glibc perf bpf", b, " ")
	split("0 100 " INFO["hz"] " 1000 10000", c, " ")
	for (w = 1; w <= 8; w++) for (t = 1; t <= 6; t++) for (r = 1; r <= 5; r++)
		if ((b[t] SUBSEP a[w] SUBSEP c[r]) in SEEN) {
			NK++; K[NK] = b[t] SUBSEP a[w] SUBSEP c[r]
		}
}

# Median of the ratio of field k of (t, wb) to that of (t, wa) in the same
# repetition, paired so that what varies from one repetition to the next
# (the host's load under TCG) cancels; sets MIN, MAX, CLO and CHI.
function pmed(t, wa, wb, k,   i, p, A, B) {
	for (i = 1; i <= n; i++) if (T[i] == t && W[i] == wa) A[P[i]] = C[i, k]
	for (i = 1; i <= n; i++) if (T[i] == t && W[i] == wb) B[P[i]] = C[i, k]
	med_reset()
	for (p in B) if ((p in A) && A[p] > 0 && B[p] != "") med_push(B[p] / A[p])
	return med()
}
# A paired ratio and its interval in prose: "1.09x (1.02-1.20)".
function pratio(t, wa, wb, k,   r) {
	r = pmed(t, wa, wb, k)
	return r == "" ? "" : f(r, 2) "x (" f(CLO, 2) "–" f(CHI, 2) ")"
}

# Median of field k over the runs of (t, w, r); sets MIN, MAX, CLO and CHI.
function cmed(t, w, r, k,   i) {
	med_reset()
	for (i = 1; i <= n; i++)
		if (T[i] == t && W[i] == w && R[i] == r) med_push(C[i, k])
	return med()
}

END {
	order()
	# The baselines, per workload.
	for (i = 1; i <= n; i++) if (T[i] == "none") {
		C[i, "run"] = kv(i, "run_ns"); C[i, "out"] = kv(i, "tree_ns") - kv(i, "run_ns")
		C[i, "tree"] = kv(i, "tree_ns"); C[i, "call"] = kv(i, "ns/call")
		if (W[i] ~ /^pg/) PCALL[W[i], P[i]] = kv(i, "ns/call")
	}
	for (i = 1; i <= n; i++) if (T[i] == "none" && !(W[i] in BRUN)) {
		BRUN[W[i]] = cmed("none", W[i], 0, "run")
		BOUT[W[i]] = cmed("none", W[i], 0, "out")
		BTREE[W[i]] = cmed("none", W[i], 0, "tree")
		BCALL[W[i]] = cmed("none", W[i], 0, "call")
		cmed("none", W[i], 0, "run")
		NOISE[W[i]] = (MAX - MIN) / 2
	}
	# The fixed cost of perf and bpf: their runs on the empty workload.
	for (i = 1; i <= n; i++) if (W[i] == "empty" && T[i] != "none")
		C[i, "tool"] = kv(i, "tree_ns") - kv(i, "run_ns") - BOUT["empty"]
	FIXED["perf"] = cmed("perf", "empty", INFO["hz"], "tool")
	FIXED["bpf"] = cmed("bpf", "empty", INFO["hz"], "tool")

	csv = out "/results.csv"
	print "tool,workload,rate_hz,samples,overhead_pct,ns_per_sample,error_pct,rep,threads,run_ms,tool_ms,post_ms,expected,samples_pct,eintr,lost,ns_per_call,calls_kept_pct,note" > csv
	for (i = 1; i <= n; i++) {
		if (T[i] == "regions" || T[i] == "forkexec" || T[i] == "profilfork" || T[i] == "sessmem" || W[i] == "empty")
			continue
		t = T[i]; w = W[i]; ext = t == "perf" || t == "bpf"
		s = kv(i, "samples"); rate = kv(i, "rate")
		if (rate == "") rate = R[i]
		run = kv(i, "run_ns"); tree = kv(i, "tree_ns")
		ovh = nps = err = tool = expd = spct = call = kept = ""
		if (w ~ /^pg/) {
			call = kv(i, "ns/call")
			if (kv(i, "of") > 0) kept = 100 * kv(i, "recorded") / kv(i, "of")
			if (BTREE[w] > 0) ovh = 100 * (tree - BTREE[w]) / BTREE[w]
			# Paired: less the no -pg build's call in this repetition.
			C[i, "mcount"] = call - ((w SUBSEP P[i]) in PCALL ? \
					  PCALL[w, P[i]] : BCALL[w])
		} else if (kv(i, "note") == "") {
			tool = tree - run - BOUT[w]
			extra = run - BRUN[w] + (ext ? tool - FIXED[t] : 0)
			if (s > 0 && t != "none") nps = extra / s
			ovh = 100 * (tree - BTREE[w]) / BRUN[w]
			expd = (ext ? kv(i, "proc_ns") : run) * rate / 1e9
			if (expd > 0 && t != "none") spct = 100 * s / expd
			sum = kv(i, "f1") + kv(i, "f2") + kv(i, "f3")
			if (sum > 0) {
				e1 = kv(i, "f1") / sum - 0.5; e2 = kv(i, "f2") / sum - 0.3
				e3 = kv(i, "f3") / sum - 0.2
				err = e1 < 0 ? -e1 : e1
				if (e2 * e2 > err * err) err = e2 < 0 ? -e2 : e2
				if (e3 * e3 > err * err) err = e3 < 0 ? -e3 : e3
				err *= 100
			}
		}
		C[i, "nps"] = nps; C[i, "ovh"] = ovh; C[i, "err"] = err
		C[i, "extra"] = extra
		C[i, "spct"] = spct; C[i, "samples"] = s; C[i, "eintr"] = kv(i, "eintr")
		C[i, "tool"] = tool == "" ? "" : tool / 1e6
		C[i, "post"] = kv(i, "post_tree_ns") == "" ? "" : kv(i, "post_tree_ns") / 1e6
		C[i, "kept"] = kept; C[i, "call"] = call
		printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", \
			name(t), w, R[i], s, f(ovh, 2), f(nps, 0), f(err, 2), P[i], \
			kv(i, "threads"), f(run / 1e6, 1), f(C[i, "tool"], 1), \
			f(C[i, "post"], 1), f(expd, 0), f(spct, 2), kv(i, "eintr"), \
			kv(i, "lost"), call, f(kept, 2), kv(i, "note") > csv
	}
	close(csv)
	# Threads against one, paired: a -pg build's mcount cost per call
	# with N threads over its cost with one, in the same repetition.
	for (i = 1; i <= n; i++) if (W[i] ~ /^pg-mt/ && T[i] != "none")
		for (j = 1; j <= n; j++)
			if (T[j] == T[i] && W[j] == "pg" && R[j] == R[i] && P[j] == P[i])
				C[i, "scale"] = ratio(C[i, "mcount"], C[j, "mcount"])

	md = out "/table.md"
	print "Medians of " INFO["reps"] " interleaved repetitions (in brackets a 95% interval of the median, from the order statistics; with 10 or fewer repetitions that is min–max), " \
	      "guest kernel " INFO["kernel"] " (HZ " INFO["hz"] ") under QEMU TCG, " \
	      INFO["cpus"] " vCPUs on " machine "" (secs != "" ? "; make bench took " \
	      int(secs / 60) " min " secs % 60 " s" : "") ". TCG emulates every " \
	      "interrupt and timer in software: absolute costs are far above native, " \
	      "only ratios measured side by side count." > md
	print "" > md
	print "| workload | tool | rate Hz | samples | overhead % | ns/sample | vs null-timer | samples / (CPU x rate) % | split error (points) | EINTR | tool's own ms (post ms) |" > md
	print "|---|---|---|---|---|---|---|---|---|---|---|" > md
	for (j = 1; j <= NK; j++) {
		split(K[j], a, SUBSEP); t = a[1]; w = a[2]; r = a[3]
		if (w ~ /^pg/ || w == "empty") continue
		nps = cmed(t, w, r, "nps"); lo = CLO; hi = CHI
		MED[t, w, r] = nps
		note = ""
		for (i = 1; i <= n; i++)
			if (T[i] == t && W[i] == w && R[i] == r && kv(i, "note") != "") note = kv(i, "note")
		if (note != "") {
			printf "| %s | %s | %s | %s |||||||\n", w, name(t), r, note > md
			continue
		}
		# A median extra CPU time within the spread of the baseline
		# runs says nothing: no cost per sample, no ratio, for it.
		xt = cmed(t, w, r, "extra")
		QUIET[t, w, r] = t != "none" && xt != "" && (xt < 0 ? -xt : xt) < NOISE[w]
		if (QUIET[t, w, r]) MED[t, w, r] = ""
		nullr = t == "null" || t == "none" || t == "glibc" || QUIET[t, w, r] || \
			QUIET["null", w, r] ? "" : f(ratio(nps, MED["null", w, r]), 2)
		nps = cmed(t, w, r, "nps"); lo = CLO; hi = CHI
		if (QUIET[t, w, r]) nps = "q"
		printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", w, name(t), r, \
			f(cmed(t, w, r, "samples"), 0), f(cmed(t, w, r, "ovh"), 1), \
			nps == "q" ? "below noise (" f(xt / 1e6, 0) " ms extra)" : \
			nps == "" ? "" : f(nps, 0) " (" f(lo, 0) "–" f(hi, 0) ")", \
			nullr == "" ? "" : nullr "x", \
			f(cmed(t, w, r, "spct"), 1), f(cmed(t, w, r, "err"), 1), \
			w == "sys" || w == "block" ? f(cmed(t, w, r, "eintr"), 0) : "", \
			t == "perf" || t == "bpf" ? f(cmed(t, w, r, "tool"), 0) \
			(t == "perf" ? " (" f(cmed(t, w, r, "post"), 0) ")" : "") : "" > md
	}
	print "" > md
	print "The baseline's own spread (half its min–max CPU time): cpu " f(NOISE["cpu"] / 1e6, 0) \
	      " ms, mt " f(NOISE["mt"] / 1e6, 0) " ms, mt16 " f(NOISE["mt16"] / 1e6, 0) " ms, sys " \
	      f(NOISE["sys"] / 1e6, 0) " ms; a median extra CPU time below it is \"below noise\" " \
	      "and gives no cost per sample and no ratio." > md
	print "perf-record and bpf-sampler: ns/sample counts their own process's CPU " \
	      "beyond its fixed cost (start and stop on an empty workload: perf " \
	      f(FIXED["perf"] / 1e6, 0) " ms, bpf " f(FIXED["bpf"] / 1e6, 0) " ms); perf " \
	      "script's CPU is the post ms. glibc-profil's rate is the one it claims " \
	      "(gmon's prof_rate)." > md

	# The issue's targets, computed at each rate for cpu and mt.
	print "" > md
	print "| target | cpu 100 Hz | cpu " INFO["hz"] " Hz | cpu 1 kHz | cpu 10 kHz | mt 10 kHz |" > md
	print "|---|---|---|---|---|---|" > md
	split("null perf bpf", peers, " ")
	for (p = 1; p <= 3; p++) {
		line = "| profil.ko / " name(peers[p]) " cost per sample (target <= " \
		       (peers[p] == "null" ? "1.2" : peers[p] == "perf" ? "0.7" : "1.0") ") |"
		split("cpu:100 cpu:" INFO["hz"] " cpu:1000 cpu:10000 mt:10000", cs, " ")
		for (c = 1; c <= 5; c++) {
			split(cs[c], wr, ":")
			line = line " " f(ratio(MED["profil", wr[1], wr[2]], MED[peers[p], wr[1], wr[2]]), 2) " |"
		}
		print line > md
	}
	g = MED["glibc", "cpu", 0]
	line = "| profil.ko / glibc-profil cost per sample (target <= 0.5) |"
	split("cpu:100 cpu:" INFO["hz"] " cpu:1000 cpu:10000 mt:10000", cs, " ")
	for (c = 1; c <= 5; c++) {
		split(cs[c], wr, ":")
		line = line " " f(ratio(MED["profil", wr[1], wr[2]], MED["glibc", wr[1], 0]), 2) " |"
	}
	print line > md
	line = "| profil.ko samples / (CPU x rate), % (target 98–102) |"
	for (c = 1; c <= 5; c++) {
		split(cs[c], wr, ":")
		line = line " " f(cmed("profil", wr[1], wr[2], "spct"), 1) " |"
	}
	print line > md
	line = "| profil.ko EINTR in sys (target 0; glibc-profil: " f(cmed("glibc", "sys", 0, "eintr"), 0) ") |"
	split("100 " INFO["hz"] " 1000 10000", rs, " ")
	for (c = 1; c <= 4; c++) line = line " " f(cmed("profil", "sys", rs[c], "eintr"), 0) " |"
	print line " |" > md
	# Threads asleep in poll, nanosleep, epoll_wait, sem_timedwait.
	line = "| EINTR of sleeping threads, block (target 0 for every tool): glibc-profil " \
	       f(cmed("glibc", "block", 0, "eintr"), 0) ", null-timer " \
	       f(cmed("null", "block", INFO["hz"], "eintr"), 0) ", perf-record " \
	       f(cmed("perf", "block", INFO["hz"], "eintr"), 0) ", bpf-sampler " \
	       f(cmed("bpf", "block", INFO["hz"], "eintr"), 0) "; profil.ko |"
	line = line " | " f(cmed("profil", "block", INFO["hz"], "eintr"), 0) " | | " \
	       f(cmed("profil", "block", 10000, "eintr"), 0) " | |"
	print line > md
	print "" > md

	# Threads and regions: profil.ko at 10 kHz.
	t1 = MED["profil", "cpu", 10000]; t4 = MED["profil", "mt", 10000]; t16 = MED["profil", "mt16", 10000]
	print "Cost per sample against threads (profil.ko, 10 kHz; target: flat within 10%): " \
	      "1 thread " per_sample(t1) ", 4 threads " per_sample(t4) times(t4, t1) ", 16 threads " \
	      per_sample(t16) times(t16, t1) "; the null timer: " \
	      per_sample(MED["null", "cpu", 10000]) ", " per_sample(MED["null", "mt", 10000]) ", " \
	      per_sample(MED["null", "mt16", 10000]) "." > md
	for (i = 1; i <= n; i++) if (T[i] == "regions") {
		C[i, "cpu"] = kv(i, "cpu_ns"); C[i, "s"] = kv(i, "samples")
	}
	# Paired: each session's extra CPU over the no-session run of the
	# same repetition, per sample; 1024 regions over 1 in that repetition.
	for (i = 1; i <= n; i++) if (T[i] == "regions" && W[i] == 0) RZ[P[i]] = C[i, "cpu"]
	for (i = 1; i <= n; i++) if (T[i] == "regions" && W[i] > 0 && C[i, "s"] > 0 && (P[i] in RZ)) {
		C[i, "rnps"] = (C[i, "cpu"] - RZ[P[i]]) / C[i, "s"]
		RN[W[i], P[i]] = C[i, "rnps"]
	}
	g1 = cmed("regions", 1, 10000, "rnps"); lo1 = CLO; hi1 = CHI
	g2 = cmed("regions", 1024, 10000, "rnps"); lo2 = CLO; hi2 = CHI
	med_reset()
	for (p in RZ) if ((1 SUBSEP p) in RN && (1024 SUBSEP p) in RN && RN[1, p] > 0)
		med_push(RN[1024, p] / RN[1, p])
	gr = med(); nr = NM
	print "" > md
	print "Cost per sample against regions (bench/regions, 10 kHz; target: flat within 10%), each over the no-session run of its repetition: " \
	      "1 region " f(g1, 0) " ns (" f(lo1, 0) "–" f(hi1, 0) "), 1024 regions " f(g2, 0) \
	      " ns (" f(lo2, 0) "–" f(hi2, 0) "); 1024 over 1 in the same repetition: " f(gr, 2) \
	      "x (95% interval of the median " f(CLO, 2) "–" f(CHI, 2) ", " nr " repetitions): " \
	      flat10(gr == "" ? "" : CLO, CHI) "." > md

	# mcount: the pg workloads, each figure paired per repetition.
	print "" > md
	print "-pg builds calling a leaf function from 1, 4 and 16 threads: mcount's cost per call is the build's less the no -pg build's in the same repetition; N threads / 1 is that cost's ratio in the same repetition (median, 95% interval of the median; target for libprofil: 1.5x or less)." > md
	print "" > md
	print "| -pg build | threads | ns/call | mcount ns/call | N threads / 1 | calls kept % | samples | overhead % |" > md
	print "|---|---|---|---|---|---|---|---|" > md
	split("pg pg-mt pg-mt16", pw, " ")
	split("1 4 16", pn, " ")
	for (j = 1; j <= NK; j++) {
		split(K[j], a, SUBSEP); t = a[1]; w = a[2]; r = a[3]
		if (w != "pg") continue
		for (k = 1; k <= 3; k++) {
			ww = pw[k]
			if (!((t SUBSEP ww SUBSEP r) in SEEN)) continue
			sc = k == 1 || t == "none" ? "" : cmed(t, ww, r, "scale")
			scl = CLO; sch = CHI
			printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", \
				t == "none" ? "no -pg" : name(t) (r > 0 ? " " r " Hz" : ""), \
				pn[k], f(cmed(t, ww, r, "call"), 1), \
				t == "none" ? "" : f(cmed(t, ww, r, "mcount"), 1), \
				sc == "" ? "" : f(sc, 2) "x (" f(scl, 2) "–" f(sch, 2) ")", \
				f(cmed(t, ww, r, "kept"), 1), f(cmed(t, ww, r, "samples"), 0), \
				f(cmed(t, ww, r, "ovh"), 1) > md
		}
	}

	# fork + exec, and kernel memory.
	for (i = 1; i <= n; i++) if (T[i] == "forkexec") C[i, "fork"] = kv(i, "ns/fork")
	fe = cmed("forkexec", "exec", 0, "fork"); fel = CLO; feh = CHI
	fs = cmed("forkexec", "session", 0, "fork"); fsl = CLO; fsh = CHI
	fp = cmed("forkexec", "parent", 0, "fork"); fpl = CLO; fph = CHI
	print "" > md
	print "fork + exec of /bin/true + exit + wait (CPU of parent and child): " \
	      f(fe / 1000, 0) " us (" f(fel / 1000, 0) "–" f(feh / 1000, 0) ") without a session, " \
	      (fp == "" ? "" : f(fp / 1000, 0) " us (" f(fpl / 1000, 0) "–" f(fph / 1000, 0) ") with one the children do not inherit, ") \
	      f(fs / 1000, 0) " us (" f(fsl / 1000, 0) "–" f(fsh / 1000, 0) ") with one to inherit: " \
	      f(ratio(fs, fe), 2) "x." > md
	# A fork under profil(1) against the same fork alone (the issue: 1.2x):
	# the forking process's CPU time (with its children's, exec), and the
	# busy time of the whole machine, kernel threads included; each a
	# median of ratios paired by repetition, with its 95% interval.
	for (i = 1; i <= n; i++) if (T[i] == "profilfork") {
		C[i, "fork"] = kv(i, "ns/fork"); C[i, "sys"] = kv(i, "sys/fork")
	}
	for (m = 1; m <= 2; m++) {
		mode = m == 1 ? "fork" : "exec"
		pa = cmed("profilfork", mode ":alone", 0, "fork")
		if (pa == "")
			continue
		nr = NM
		pp = cmed("profilfork", mode ":profil", 0, "fork")
		qp = pratio("profilfork", mode ":alone", mode ":perf", "fork")
		qc = pratio("profilfork", mode ":alone", mode ":perfchildren", "fork")
		print "" > md
		print "fork" (mode == "exec" ? " + exec of /bin/true" : "") " + exit + wait under profil(1), on one CPU, " \
		      nr " repetitions: " f(pp / 1000, 0) " us against " f(pa / 1000, 0) " us alone (medians); " \
		      "paired by repetition, " pratio("profilfork", mode ":alone", mode ":profil", "fork") \
		      " of the same alone, with --children " pratio("profilfork", mode ":alone", mode ":children", "fork") \
		      " (target: 1.2x).  The whole machine's busy time: " \
		      pratio("profilfork", mode ":alone", mode ":profil", "sys") ", with --children " \
		      pratio("profilfork", mode ":alone", mode ":children", "sys") "." \
		      (qp == "" ? "" : "  Under perf record at the same rate (task-clock, a sample a ms): " \
		       qp (qc == "" ? "" : ", with its children " qc) \
		       "; profil(1) to perf record, paired: " pratio("profilfork", mode ":perf", mode ":profil", "fork") ".") > md
	}
	for (i = 1; i <= n; i++) if (T[i] == "sessmem") {
		SM[W[i], R[i], P[i], "slab"] = kv(i, "slab_kb")
		SM[W[i], R[i], P[i], "vm"] = kv(i, "vmalloc_kb")
		SMR[W[i], P[i]] = 1
	}
	print "" > md
	print "| sessions | slab KiB per session | vmalloc KiB per session |" > md
	print "|---|---|---|" > md
	split("1 100 1000", ns, " ")
	for (c = 1; c <= 3; c++) {
		line = "| " ns[c] " |"
		split("slab vm", ks, " ")
		for (k = 1; k <= 2; k++) {
			med_reset()
			for (p = 1; p <= 9; p++) if ((ns[c] SUBSEP p) in SMR)
				med_push((SM[ns[c], 1, p, ks[k]] - SM[ns[c], 0, p, ks[k]]) / ns[c])
			v = med()
			line = line " " f(v, 1) " (" f(CLO, 1) "–" f(CHI, 1) ") |"
		}
		print line > md
	}
	close(md)

	# The plot's data: cpu workload, ns/sample by rate, one column a tool.
	dat = out "/cost.dat"
	print "rate null-timer profil.ko perf-record bpf-sampler glibc-profil" > dat
	split("100 " INFO["hz"] " 1000 10000", rs, " ")
	for (c = 1; c <= 4; c++) {
		line = rs[c]
		split("null profil perf bpf", ts, " ")
		for (k = 1; k <= 4; k++) {
			v = MED[ts[k], "cpu", rs[c]]
			line = line " " (v == "" || v <= 0 ? "NaN" : v)
		}
		v = MED["glibc", "cpu", 0]
		line = line " " (rs[c] == 100 && v > 0 ? v : "NaN")
		print line > dat
	}
	close(dat)
}
