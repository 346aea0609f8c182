# bench/report.awk: see bench/report.sh.  POSIX awk (Debian's mawk too).
#
# Every cost is paired: a run is compared with the run of "none" (no tool)
# on the same workload in the same repetition, so that what varies from
# one repetition to the next (the host's load under TCG) cancels, and the
# figure is the median of those per-repetition values, with a 95% interval
# of the median from the order statistics.
#   extra   = run_ns - none's run_ns + tool_ns    the process's extra CPU in
#             the work's window, and that of perf record's or bpfsample's
#             own process in the same window (their setup is before it)
#   mextra  = busy_ns - none's busy_ns             the whole machine's extra
#             busy time in the window: every CPU, interrupts on idle CPUs
#             and kernel threads included (the BPF program on every CPU)
#   ticks   = the timer interrupts the tool took for the process (profil.ko:
#             struct profil_stats.ticks; the others: one per sample)
#   ns/tick = mextra / ticks;   vs null = mextra / the null timer's mextra,
#             both at the same nominal rate in the same repetition
#   credited = profil.ko's periods credited / (CPU x rate): not accuracy,
#             its construction; the quality is the split error against
#             50/30/20, the largest |share - construction| in points
# A value is published only where its interval lies above zero: a median
# whose repetitions cross zero says nothing, and no cost is negative.

function kv(i, k) { return (i SUBSEP k) in V ? V[i, k] : "" }
# The kinds of line that are not a case of the matrix (tool, workload, rate).
function apart(t) {
	return t == "regions" || t == "forkexec" || t == "profilfork" || t == "sessmem" || \
	       t == "threads" || t == "ticktrace" || t == "regiontrace"
}

# Median and spread of the values pushed since med_reset(): MIN and MAX,
# and the 95% interval of the median, CLO and CHI.
function med_reset() { NM = 0 }
function med_push(x) { if (x != "") M[++NM] = x + 0 }
function med(   i, j, t) {
	for (i = 2; i <= NM; i++)
		for (j = i; j > 1 && M[j - 1] > M[j]; j--) {
			t = M[j]; M[j] = M[j - 1]; M[j - 1] = t
		}
	CLO = CHI = ""
	if (!NM) return ""
	MIN = M[1]; MAX = M[NM]
	med_ci()
	return NM % 2 ? M[(NM + 1) / 2] : (M[NM / 2] + M[NM / 2 + 1]) / 2
}

# After med(): a distribution-free interval of the median from the order
# statistics, [X(k), X(n-k+1)] with the largest k whose coverage,
# 1 - 2 P(Binomial(n, 1/2) <= k - 1), is 95% or more; none (CLO and CHI
# empty) with 5 values or fewer, where even min-max covers less.
function med_ci(   k, j, c, cdf) {
	CLO = CHI = ""
	cdf = 0; c = 1		# C(n, j), P(B <= j - 1) before adding j
	for (k = 1; 2 * k <= NM + 1; k++) {
		cdf += c / 2 ^ NM; c = c * (NM - (k - 1)) / k
		if (1 - 2 * cdf < 0.95) break
		CLO = M[k]; CHI = M[NM - k + 1]
	}
}

# Whether an interval [lo, hi] lies inside [a, b] (met), outside it (not
# met), or across a bound: more repetitions would tell.  a "": no lower
# bound.
function verdict(lo, hi, a, b) {
	if (lo == "" || hi == "") return "too few repetitions for an interval"
	if ((a == "" || lo >= a) && hi <= b) return "met"
	if ((a != "" && hi < a) || lo > b) return "not met"
	return "not resolved"
}

function name(t) {
	return t == "null" ? "null-timer" : t == "profil" ? "profil.ko" : \
	       t == "glibc" ? "glibc-profil" : t == "perf" ? "perf-record" : \
	       t == "bpf" ? "bpf-sampler" : t
}
function f(x, d) { return x == "" ? "" : sprintf("%." d "f", x) }
function ms(x) { return x == "" ? "" : f(x / 1e6, 1) }
function ratio(a, b) { return a == "" || b == "" || b + 0 <= 0 ? "" : a / b }
# "m (lo–hi)" with d decimals, from the last med().
function mci(m, d) {
	return m == "" ? "" : CLO == "" ? f(m, d) : f(m, d) " (" f(CLO, d) "–" f(CHI, d) ")"
}

/^@@ bench-info / { for (i = 3; i < NF; i += 2) INFO[$i] = $(i + 1) }
/^@@ bench-time / { TIME[$3] = $4 }

/^@@ bench / {
	n++
	T[n] = $3; W[n] = $4; R[n] = $5; P[n] = $6
	for (i = 7; i < NF; i += 2) V[n, $i] = $(i + 1)
	if (kv(n, "not-available") != "") V[n, "note"] = "not available: " kv(n, "not-available")
	else if (kv(n, "status") != "" && kv(n, "status") + 0 != 0) V[n, "note"] = "failed: status " kv(n, "status")
	if (apart(T[n]))
		next
	SEEN[T[n], W[n], R[n]] = 1
}

# The cases seen, in the order of the tables: workload, tool, rate.
function order(   w, t, r, a, b, c) {
	split("cpu mt mt16 sys sys4 block pg pg-mt pg-mt16", a, " ")
	split("none null profil glibc perf bpf", b, " ")
	split("0 100 " INFO["hz"] " 1000 10000", c, " ")
	for (w = 1; w <= 9; w++) for (t = 1; t <= 6; t++) for (r = 1; r <= 5; r++)
		if ((b[t] SUBSEP a[w] SUBSEP c[r]) in SEEN) {
			NK++; K[NK] = b[t] SUBSEP a[w] SUBSEP c[r]
		}
}

# Median of field k over the runs of (t, w, r); sets CLO and CHI.
function cmed(t, w, r, k,   i) {
	med_reset()
	for (i = 1; i <= n; i++)
		if (T[i] == t && W[i] == w && R[i] == r) med_push(C[i, k])
	return med()
}

# Median over the repetitions of field k of (t, wb, rb) over that of
# (t, wa, ra) in the same repetition; sets CLO, CHI and NM.
function pmed(t, wa, ra, wb, rb, k,   i, p, A, B) {
	for (i = 1; i <= n; i++) if (T[i] == t && W[i] == wa && R[i] == ra) A[P[i]] = C[i, k]
	for (i = 1; i <= n; i++) if (T[i] == t && W[i] == wb && R[i] == rb) B[P[i]] = C[i, k]
	med_reset()
	for (p in B) if ((p in A) && A[p] != "" && A[p] > 0 && B[p] != "") med_push(B[p] / A[p])
	return med()
}

# The same for two tools on one workload and rate (a tool over a peer).
function tmed(ta, tb, w, r, k,   i, p, A, B) {
	for (i = 1; i <= n; i++) if (T[i] == ta && W[i] == w && R[i] == r) A[P[i]] = C[i, k]
	for (i = 1; i <= n; i++) if (T[i] == tb && W[i] == w && R[i] == r) B[P[i]] = C[i, k]
	med_reset()
	for (p in B) if ((p in A) && A[p] != "" && A[p] > 0 && B[p] != "") med_push(B[p] / A[p])
	return med()
}

# Threads: profil.ko's ns per tick with nt threads over its ns per tick
# with one, over the same ratio of the null timer, in each round of
# bench/threads: what it adds to what more threads cost any tick (TCG).
function tnorm(nt,   k, p, a, b, c, d, S) {
	for (k in TN) { split(k, S, SUBSEP); RP[S[3]] = 1 }
	med_reset()
	for (p in RP) {
		a = TN[1, "profil", p]; b = TN[nt, "profil", p]
		c = TN[1, "null", p]; d = TN[nt, "null", p]
		if (a > 0 && b > 0 && c > 0 && d > 0) med_push((b / a) / (d / c))
	}
	return med()
}

# profil.ko's machine extra over peer's on workload w at 10 kHz, in words,
# or "not resolved" where either is within the noise.
function vs(peer, w,   m) {
	if (!above("profil", w, 10000) || !above(peer, w, 10000)) return "not resolved against"
	m = tmed(peer, "profil", w, 10000, "mextra")
	return CLO == "" ? f(m, 2) "x" : f(m, 2) "x (" f(CLO, 2) "–" f(CHI, 2) ")"
}

# bench/threads' ns per tick of @tool with @nt threads in words.
function tns(nt, tool,   m) {
	m = cmed("threads", nt, tool, "tnps")
	return CLO != "" && CLO > 0 ? mci(m, 0) : "below the noise"
}

# Whether bench/threads' ns per tick of @tool with @nt threads is above
# the noise: its interval above zero.
function tabove(nt, tool) { cmed("threads", nt, tool, "tnps"); return CLO != "" && CLO > 0 }

# Whether the machine's extra busy time of (t, w, r) is above the noise:
# its interval above zero.
function above(t, w, r) { cmed(t, w, r, "mextra"); return CLO != "" && CLO > 0 }

# One row of the targets table: what, the target in words, the median and
# its interval (from the last med(), d decimals), the verdict against [a, b].
function target(what, goal, m, d, a, b,   lo, hi, nn) {
	lo = CLO; hi = CHI; nn = NM
	printf "| %s | %s | %s | %s |\n", what, goal, m == "" ? "no figure" : \
		f(m, d) (lo == "" ? "" : " (" f(lo, d) "–" f(hi, d) ")") ", n " nn, \
		(m == "" ? "not resolved (below the noise)" : verdict(lo, hi, a, b)) > MD
}

END {
	order()
	# The no-tool runs, per workload and repetition.
	for (i = 1; i <= n; i++) if (T[i] == "none") {
		BRUN[W[i], P[i]] = kv(i, "run_ns"); BBUSY[W[i], P[i]] = kv(i, "busy_ns")
		BTREE[W[i], P[i]] = kv(i, "tree_ns")
		if (W[i] ~ /^pg/) PCALL[W[i], P[i]] = kv(i, "ns/call")
	}

	csv = out "/results.csv"
	print "tool,workload,rate_hz,rep,threads,run_ms,tool_ms,busy_ms,extra_ms,machine_extra_ms,samples,ticks,ticks_all,lost,ns_per_tick,credited_pct,ticks_pct,error_pts,eintr,post_ms,ns_per_call,mcount_ns_per_call,calls_kept_pct,note" > csv
	for (i = 1; i <= n; i++) {
		if (apart(T[i]))
			continue
		t = T[i]; w = W[i]; p = P[i]; ext = t == "perf" || t == "bpf"
		s = kv(i, "samples"); tk = kv(i, "ticks"); rate = kv(i, "rate")
		if (rate == "") rate = R[i]
		run = kv(i, "run_ns"); busy = kv(i, "busy_ns")
		extra = mextra = nps = err = crd = tpct = call = mc = kept = ""
		if (w ~ /^pg/) {
			call = kv(i, "ns/call")
			if (kv(i, "of") > 0) kept = 100 * kv(i, "recorded") / kv(i, "of")
			if ((w SUBSEP p) in PCALL && t != "none") mc = call - PCALL[w, p]
		} else if (kv(i, "note") == "" && (w SUBSEP p) in BRUN && run != "" && busy != "" && \
			   BRUN[w, p] != "" && BBUSY[w, p] != "") {
			if (t != "none") {
				extra = run - BRUN[w, p] + (ext ? kv(i, "tool_ns") : 0)
				mextra = busy - BBUSY[w, p]
				if (tk > 0) nps = mextra / tk
			}
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
		# CPU x rate: the process's CPU in the window for in-process
		# tools, since the fork for perf and bpf (no no-tool run needed).
		owed = w !~ /^pg/ && kv(i, "note") == "" && run != "" ? \
		       (ext ? kv(i, "proc_ns") : run) * rate / 1e9 : 0
		if (owed > 0 && t != "none") {
			crd = 100 * s / owed; tpct = 100 * tk / owed
		}
		C[i, "extra"] = extra; C[i, "mextra"] = mextra; C[i, "nps"] = nps
		C[i, "ticks"] = tk; C[i, "crd"] = crd; C[i, "tpct"] = tpct
		C[i, "err"] = err; C[i, "lost"] = kv(i, "lost"); C[i, "eintr"] = kv(i, "eintr")
		C[i, "post"] = kv(i, "post_tree_ns") == "" ? "" : kv(i, "post_tree_ns") / 1e6
		C[i, "call"] = call; C[i, "mcount"] = mc; C[i, "kept"] = kept; C[i, "samples"] = s
		C[i, "rate"] = rate
		printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", \
			name(t), w, R[i], p, kv(i, "threads"), ms(run), \
			ms(kv(i, "tool_ns")), ms(busy), ms(extra), ms(mextra), s, tk, kv(i, "ticks_all"), kv(i, "lost"), \
			f(nps, 0), f(crd, 2), f(tpct, 2), f(err, 2), kv(i, "eintr"), \
			f(C[i, "post"], 1), call, f(mc, 1), f(kept, 2), kv(i, "note") > csv
	}
	close(csv)

	MD = out "/table.md"
	secs = INFO["secs"]
	print "Guest kernel " INFO["kernel"] " (HZ " INFO["hz"] ") under QEMU TCG, " INFO["cpus"] \
	      " vCPUs on " machine ", " INFO["reps"] " repetitions, each running every case once in " \
	      "an order rotated from the last" (secs != "" ? "; make bench took " int(secs / 60) \
	      " min " int(secs % 60) " s" : "") ". Each figure is the median over the repetitions of " \
	      "a value paired within its repetition (a tool against no tool, or against a peer), " \
	      "with a 95% interval of that median in brackets. TCG emulates every interrupt and " \
	      "timer in software: absolute costs are far above native; only ratios measured side " \
	      "by side count." > MD
	print "" > MD
	print "## Targets" > MD
	print "" > MD
	print "Met: the whole interval inside the target; not met: the whole interval outside it; " \
	      "not resolved: the interval across a bound (more repetitions would tell)." > MD
	print "" > MD
	print "| target | goal | measured: median (95% interval) | verdict |" > MD
	print "|---|---|---|---|" > MD
	# The peers, at equal nominal rate: the whole machine's extra busy
	# time of profil.ko over the peer's, paired by repetition.
	# A ratio only where both extras are above the noise.
	split("null:1.2 perf:0.7 bpf:1.0", peers, " ")
	for (i = 1; i <= n; i++) if (T[i] == "ticktrace" || T[i] == "regiontrace") C[i, "cyc"] = kv(i, "cycles")
	for (q = 1; q <= 3; q++) {
		split(peers[q], pq, ":")
		for (c = 1; c <= 2; c++) {
			w = c == 1 ? "cpu" : "mt"
			m = above("profil", w, 10000) && above(pq[1], w, 10000) ? \
			    tmed(pq[1], "profil", w, 10000, "mextra") : ""
			target("profil.ko over " name(pq[1]) ", machine's extra busy time, " w " 10 kHz", \
			       "<= " pq[2] "x", m, 2, "", pq[2])
		}
		if (pq[1] != "perf") continue
		# How much of a tick is profil.ko's own: its hrtimer callback
		# (traced, bench/threads with one thread on one CPU, 10 kHz).
		cb = cmed("ticktrace", 1, "profil", "cyc")
		cb = cb != "" && INFO["tsc_mhz"] > 0 ? 1000 * cb / INFO["tsc_mhz"] : ""
		print "| (a tick at 10 kHz, cpu, the machine's extra per tick taken: profil.ko " \
		      mci(cmed("profil", "cpu", 10000, "nps"), 0) " ns, perf record " \
		      mci(cmed("perf", "cpu", 10000, "nps"), 0) " ns; of profil.ko's, its hrtimer callback, " \
		      "traced, " f(cb, 0) " ns: the rest is the timer interrupt around it, which every tool pays) | | | |" > MD
	}
	# glibc at its one rate, profil.ko at 100 Hz: the same rate.
	for (i = 1; i <= n; i++) if (T[i] == "glibc" && W[i] == "cpu") GX[P[i]] = C[i, "mextra"]
	ok = above("profil", "cpu", 100) && above("glibc", "cpu", 0)
	med_reset()
	for (i = 1; i <= n; i++)
		if (T[i] == "profil" && W[i] == "cpu" && R[i] == 100 && (P[i] in GX) && GX[P[i]] > 0)
			med_push(C[i, "mextra"] / GX[P[i]])
	m = med()
	if (!ok) m = ""
	target("profil.ko (100 Hz) over glibc-profil (ITIMER_PROF), machine's extra busy time, cpu", \
	       "<= 0.5x", m, 2, "", 0.5)
	# Threads (bench/threads): each case's extra CPU over the no-tool
	# case of its round and thread count, per tick; N threads over 1 in
	# the same round, and that over the null timer's same ratio.
	for (i = 1; i <= n; i++) if (T[i] == "threads" && R[i] == "none") TZ[W[i], P[i]] = kv(i, "cpu_ns")
	for (i = 1; i <= n; i++)
		if (T[i] == "threads" && R[i] != "none" && kv(i, "ticks") > 0 && ((W[i] SUBSEP P[i]) in TZ)) {
			C[i, "tnps"] = (kv(i, "cpu_ns") - TZ[W[i], P[i]]) / kv(i, "ticks")
			TN[W[i], R[i], P[i]] = C[i, "tnps"]
		}
	print "| (bench/threads, ns per tick taken: profil.ko with 1, 4, 16 threads " \
	      tns(1, "profil") ", " tns(4, "profil") ", " tns(16, "profil") "; the null timer " \
	      tns(1, "null") ", " tns(4, "null") ", " tns(16, "null") ") | | | |" > MD
	for (c = 1; c <= 2; c++) {
		nt = c == 1 ? 4 : 16
		m = tabove(1, "profil") && tabove(nt, "profil") ? \
		    pmed("threads", 1, "profil", nt, "profil", "tnps") : ""
		target("profil.ko ns per tick taken, " nt " threads over 1 (bench/threads, 10 kHz, one CPU, rounds in one process)", \
		       "0.9–1.1x", m, 2, 0.9, 1.1)
		m = tabove(1, "null") && tabove(nt, "null") ? \
		    pmed("threads", 1, "null", nt, "null", "tnps") : ""
		print "| (the null timer's same ratio, " nt " threads: " mci(m, 2) "x) | | | |" > MD
		m = tabove(1, "profil") && tabove(nt, "profil") && tabove(1, "null") && \
		    tabove(nt, "null") ? tnorm(nt) : ""
		target("the same over the null timer's same ratio, round by round", \
		       "0.9–1.1x", m, 2, 0.9, 1.1)
	}
	# The tick itself (bench/threads traced: bench/guest.sh's ticktrace):
	# each case's median hrtimer callback, entry to exit, in TSC cycles;
	# N threads over 1 in the same round.
	print "| (traced, the median tick's callback in cycles of the " INFO["tsc_mhz"] \
	      " MHz TSC: profil.ko with 1, 4, 16 threads " mci(cmed("ticktrace", 1, "profil", "cyc"), 0) \
	      ", " mci(cmed("ticktrace", 4, "profil", "cyc"), 0) ", " \
	      mci(cmed("ticktrace", 16, "profil", "cyc"), 0) "; the null timer " \
	      mci(cmed("ticktrace", 1, "null", "cyc"), 0) ", " mci(cmed("ticktrace", 4, "null", "cyc"), 0) \
	      ", " mci(cmed("ticktrace", 16, "null", "cyc"), 0) "; profil.ko's over the null timer's, 1 thread, " \
	      mci(pmed("ticktrace", 1, "null", 1, "profil", "cyc"), 2) "x) | | | |" > MD
	for (c = 1; c <= 2; c++) {
		nt = c == 1 ? 4 : 16
		m = pmed("ticktrace", 1, "profil", nt, "profil", "cyc")
		target("profil.ko's tick, its hrtimer callback traced, " nt " threads over 1 (10 kHz, one CPU, rounds in one process)", \
		       "0.9–1.1x", m, 2, 0.9, 1.1)
		print "| (the null timer's same ratio, " nt " threads: " \
		      mci(pmed("ticktrace", 1, "null", nt, "null", "cyc"), 2) "x) | | | |" > MD
	}
	# Regions: each case's extra CPU over the no-session case of its
	# round, per tick; 1024 over 1 in the same round.
	for (i = 1; i <= n; i++) if (T[i] == "regions" && W[i] == 0) RZ[P[i]] = kv(i, "cpu_ns")
	for (i = 1; i <= n; i++) if (T[i] == "regions" && W[i] > 0 && kv(i, "ticks") > 0 && (P[i] in RZ))
		C[i, "rnps"] = (kv(i, "cpu_ns") - RZ[P[i]]) / kv(i, "ticks")
	m = pmed("regions", 1, 10000, 1024, 10000, "rnps")
	target("profil.ko ns per tick taken, 1024 regions over 1 (bench/regions, 10 kHz, rounds in one process)", \
	       "0.9–1.1x", m, 2, 0.9, 1.1)
	# The tick's own work with 1 and 1024 regions (bench/regions traced):
	# what the regions' index costs the callback, apart from the timer
	# interrupt around it, whose noise the whole tick's figure carries.
	print "| (traced, the median tick's callback in cycles: profil.ko with 1 region " \
	      mci(cmed("regiontrace", 1, "profil", "cyc"), 0) ", 1024 regions " \
	      mci(cmed("regiontrace", 1024, "profil", "cyc"), 0) ") | | | |" > MD
	m = pmed("regiontrace", 1, "profil", 1024, "profil", "cyc")
	target("profil.ko's tick, its hrtimer callback traced, 1024 regions over 1 (bench/regions, 10 kHz, one CPU, rounds in one process)", \
	       "0.9–1.1x", m, 2, 0.9, 1.1)
	for (c = 1; c <= 4; c++) {
		r = c == 1 ? 100 : c == 2 ? INFO["hz"] : c == 3 ? 1000 : 10000
		w = r == 100 ? "sys4" : "sys"
		m = cmed("profil", w, r, "crd")
		target("profil.ko periods credited over the thread's CPU clock x rate, " w ", " r " Hz", \
		       "98–102%", m, 1, 98, 102)
	}
	m = cmed("profil", "sys", 10000, "tpct")
	CLO = CHI = ""
	print "| (for comparison) ticks taken over CPU x rate, sys 10 kHz: profil.ko " f(m, 1) \
	      "%, null-timer " f(cmed("null", "sys", 10000, "tpct"), 1) "%, perf-record " \
	      f(cmed("perf", "sys", 10000, "tpct"), 1) "%, bpf-sampler " f(cmed("bpf", "sys", 10000, "tpct"), 1) \
	      "% | | | |" > MD
	for (c = 1; c <= 2; c++) {
		r = c == 1 ? INFO["hz"] : 10000
		cmed("profil", "block", r, "eintr")
		mx = NM ? MAX : ""
		printf "| profil.ko EINTR of threads asleep in poll, nanosleep, epoll_wait, sem_timedwait (block, %s Hz), most in a repetition | 0 | %s | %s |\n", \
			r, mx, mx == "" ? "no figure" : mx == 0 ? "met" : "not met" > MD
	}
	# Forks.
	for (i = 1; i <= n; i++) if (T[i] == "forkexec" || T[i] == "profilfork") {
		C[i, "fork"] = kv(i, "ns/fork"); C[i, "sys"] = kv(i, "sys/fork")
	}
	m = pmed("forkexec", "exec", 0, "session", 0, "fork")
	target("fork + exec + exit + wait with a session to inherit, over none", "<= 1.2x", m, 2, "", 1.2)
	for (c = 1; c <= 4; c++) {
		mode = c <= 2 ? "fork" : "exec"; how = c % 2 ? "profil" : "children"
		m = pmed("profilfork", mode ":alone", 0, mode ":" how, 0, "fork")
		target((mode == "fork" ? "fork + exit" : "fork + exec") " + wait under profil(1)" \
		       (how == "children" ? " --children" : "") ", over alone (the forking process's CPU, one CPU)", \
		       "<= 1.2x", m, 2, "", 1.2)
		if (how == "children") continue
		# Its parts, at profil(1)'s 1 kHz: profil.ko's session alone
		# (no agent) and perf record over alone; profil(1) over the
		# session alone, the agent's share.
		print "| (the same forks at 1 kHz: with profil.ko's session alone, no agent, " \
		      mci(pmed("profilfork", mode ":alone", 0, mode ":session", 0, "fork"), 2) \
		      "x; under perf record --no-inherit " \
		      mci(pmed("profilfork", mode ":alone", 0, mode ":perf", 0, "fork"), 2) \
		      "x; under profil(1) over the session alone, the agent's share, " \
		      mci(pmed("profilfork", mode ":session", 0, mode ":profil", 0, "fork"), 2) "x" \
		      (mode == "fork" ? "; a bare task-clock event sampling at 1 kHz, nothing reading it, " \
		       mci(pmed("profilfork", "fork:alone", 0, "fork:timer", 0, "fork"), 2) \
		       "x, one that only counts, no timer, " \
		       mci(pmed("profilfork", "fork:alone", 0, "fork:count", 0, "fork"), 2) "x" : "") ") | | | |" > MD
	}
	# mcount: libprofil's cost per call with N threads over one thread's,
	# each the -pg build's call less the no -pg build's, same repetition.
	# (Every -pg build's, for the mcount table below too.)
	for (i = 1; i <= n; i++) if (W[i] ~ /^pg-mt/ && T[i] != "none")
		for (j = 1; j <= n; j++)
			if (T[j] == T[i] && W[j] == "pg" && R[j] == R[i] && P[j] == P[i])
				C[i, "scale"] = ratio(C[i, "mcount"], C[j, "mcount"])
	for (c = 1; c <= 2; c++) {
		w = c == 1 ? "pg-mt" : "pg-mt16"
		m = cmed("profil", w, 10000, "scale")
		target("libprofil mcount ns per call, " (c == 1 ? 4 : 16) " threads over 1 (10 kHz)", \
		       "<= 1.5x", m, 2, "", 1.5)
	}
	if (secs != "") {
		CLO = CHI = secs / 60; NM = 1
		target("make bench's time, minutes (profil.ko's build and the guest's run)", "< 30", \
		       secs / 60, 1, "", 29.99)
	}

	print "" > MD
	print "## Every case" > MD
	print "" > MD
	print "ticks: timer interrupts taken for the process (profil.ko's count; for the others one a sample). " \
	      "extra CPU: the process's CPU in the work's window over the no-tool run of the same " \
	      "repetition, with perf record's or bpfsample's own CPU in that window. machine: the same for " \
	      "the whole machine's busy time (every CPU; bpf-sampler's program runs on every CPU's clock). " \
	      "ns/tick: the machine's extra over the ticks taken. vs null-timer: the machine's extra over " \
	      "the null timer's at the same rate in the same repetition. credited: profil.ko's periods " \
	      "credited over CPU x rate, its construction; ticks %: the ticks over CPU x rate (late timers " \
	      "under TCG); split error: the largest distance of a function's share from 50/30/20, in points. " \
	      "An empty cell: the interval reaches zero (below the noise of the repetitions)." > MD
	print "" > MD
	print "| workload | tool | rate Hz | ticks | extra CPU ms | machine extra ms | ns/tick | vs null-timer | credited % | ticks % | split error | lost | EINTR |" > MD
	print "|---|---|---|---|---|---|---|---|---|---|---|---|---|" > MD
	for (j = 1; j <= NK; j++) {
		split(K[j], a, SUBSEP); t = a[1]; w = a[2]; r = a[3]
		if (w ~ /^pg/ || t == "none") continue
		note = ""
		for (i = 1; i <= n; i++)
			if (T[i] == t && W[i] == w && R[i] == r && kv(i, "note") != "") note = kv(i, "note")
		if (note != "") {
			printf "| %s | %s | %s | %s |||||||||||\n", w, name(t), r, note > MD
			continue
		}
		x = cmed(t, w, r, "extra")
		xs = CLO > 0 ? f(x / 1e6, 0) " (" f(CLO / 1e6, 0) "–" f(CHI / 1e6, 0) ")" : ""
		mx = cmed(t, w, r, "mextra"); up = CLO > 0
		mxs = up ? f(mx / 1e6, 0) " (" f(CLO / 1e6, 0) "–" f(CHI / 1e6, 0) ")" : ""
		np = cmed(t, w, r, "nps"); npt = up && CLO > 0 ? mci(np, 0) : ""
		vn = ""
		if (up && t != "null" && t != "glibc") {
			cmed("null", w, r, "mextra")
			if (CLO > 0) { v = tmed("null", t, w, r, "mextra"); vn = CLO > 0 ? mci(v, 2) "x" : "" }
		}
		printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", w, name(t), r, \
			f(cmed(t, w, r, "ticks"), 0), xs, mxs, npt, vn, \
			t == "profil" ? f(cmed(t, w, r, "crd"), 1) : "", f(cmed(t, w, r, "tpct"), 1), \
			f(cmed(t, w, r, "err"), 1), f(cmed(t, w, r, "lost"), 0), \
			(w == "sys" || w == "block" ? f(cmed(t, w, r, "eintr"), 0) : "") > MD
		MED[t, w, r] = npt == "" ? "" : np
	}
	print "" > MD
	print "glibc-profil runs at its one rate, ITIMER_PROF's (it says " f(cmed("glibc", "cpu", 0, "rate"), 0) \
	      " Hz: gmon's prof_rate); perf record's perf script, run after it, is not in its figures (median " f(cmed("perf", "cpu", 10000, "post"), 0) \
	      " ms of CPU at cpu 10 kHz). lost: perf record's LOST records, the null timer's, profil.ko's " \
	      "missed; an array map loses nothing." > MD

	# The regions figures.
	r1 = cmed("regions", 1, 10000, "rnps"); s1 = CLO > 0 ? mci(r1, 0) : "below the noise"
	r2 = cmed("regions", 1024, 10000, "rnps"); s2 = CLO > 0 ? mci(r2, 0) : "below the noise"
	rr = mci(pmed("regions", 1, 10000, 1024, 10000, "rnps"), 2); nr = NM
	print "" > MD
	print "Regions (bench/regions: one process alternating no session, 1 and 1024 regions at 10 kHz " \
	      "over the same loop, in rounds): ns per tick taken with 1 region " s1 ", with 1024 " s2 \
	      "; 1024 over 1, paired by round: " rr "x over " nr " rounds." > MD

	# mcount: the pg workloads, each figure paired per repetition.
	print "" > MD
	print "-pg builds calling a leaf function from 1, 4 and 16 threads: mcount's cost per call is the build's less the no -pg build's in the same repetition; N threads / 1 is that cost's ratio in the same repetition." > MD
	print "" > MD
	print "| -pg build | threads | ns/call | mcount ns/call | N threads / 1 | calls kept % | samples |" > MD
	print "|---|---|---|---|---|---|---|" > MD
	split("pg pg-mt pg-mt16", pw, " ")
	split("1 4 16", pn, " ")
	for (j = 1; j <= NK; j++) {
		split(K[j], a, SUBSEP); t = a[1]; w = a[2]; r = a[3]
		if (w != "pg") continue
		for (k = 1; k <= 3; k++) {
			ww = pw[k]
			if (!((t SUBSEP ww SUBSEP r) in SEEN)) continue
			sc = k == 1 || t == "none" ? "" : cmed(t, ww, r, "scale")
			sc = sc == "" ? "" : mci(sc, 2) "x"
			printf "| %s | %s | %s | %s | %s | %s | %s |\n", \
				t == "none" ? "no -pg" : name(t) (r > 0 ? " " r " Hz" : ""), \
				pn[k], f(cmed(t, ww, r, "call"), 1), \
				t == "none" ? "" : mci(cmed(t, ww, r, "mcount"), 1), sc, \
				f(cmed(t, ww, r, "kept"), 1), f(cmed(t, ww, r, "samples"), 0) > MD
		}
	}

	# Forks, in full.
	print "" > MD
	fe = cmed("forkexec", "exec", 0, "fork"); fel = CLO; feh = CHI
	fs = cmed("forkexec", "session", 0, "fork"); fsl = CLO; fsh = CHI
	fp = cmed("forkexec", "parent", 0, "fork")
	print "fork + exec of /bin/true + exit + wait (CPU of parent and child): " \
	      f(fe / 1000, 0) " us (" f(fel / 1000, 0) "–" f(feh / 1000, 0) ") without a session, " \
	      f(fp / 1000, 0) " us with one the children do not inherit (paired: " \
	      mci(pmed("forkexec", "exec", 0, "parent", 0, "fork"), 2) "x), " \
	      f(fs / 1000, 0) " us (" f(fsl / 1000, 0) "–" f(fsh / 1000, 0) ") with one to inherit (paired: " \
	      mci(pmed("forkexec", "exec", 0, "session", 0, "fork"), 2) "x)." > MD
	for (c = 1; c <= 2; c++) {
		mode = c == 1 ? "fork" : "exec"
		pa = cmed("profilfork", mode ":alone", 0, "fork")
		if (pa == "") continue
		print "" > MD
		print (mode == "exec" ? "fork + exec of /bin/true" : "fork") " + exit + wait on one CPU, " \
		      "alone " f(pa / 1000, 0) " us; paired by repetition, with a session of profil.ko alone " \
		      "(1 kHz, no agent, not inherited) " mci(pmed("profilfork", mode ":alone", 0, mode ":session", 0, "fork"), 2) \
		      "x, under profil(1) " \
		      mci(pmed("profilfork", mode ":alone", 0, mode ":profil", 0, "fork"), 2) "x, with --children " \
		      mci(pmed("profilfork", mode ":alone", 0, mode ":children", 0, "fork"), 2) "x; the whole " \
		      "machine's busy time " mci(pmed("profilfork", mode ":alone", 0, mode ":profil", 0, "sys"), 2) \
		      "x and " mci(pmed("profilfork", mode ":alone", 0, mode ":children", 0, "sys"), 2) "x. Under " \
		      "perf record at a sample a ms of task clock: " \
		      mci(pmed("profilfork", mode ":alone", 0, mode ":perf", 0, "fork"), 2) "x." > MD
	}

	# Kernel memory per session.
	for (i = 1; i <= n; i++) if (T[i] == "sessmem") {
		SM[W[i], R[i], P[i], "slab"] = kv(i, "slab_kb")
		SM[W[i], R[i], P[i], "vm"] = kv(i, "vmalloc_kb")
		SMR[W[i], P[i]] = 1
	}
	print "" > MD
	print "| sessions | slab KiB per session | vmalloc KiB per session |" > MD
	print "|---|---|---|" > MD
	split("1 100 1000", ns, " ")
	for (c = 1; c <= 3; c++) {
		line = "| " ns[c] " |"
		split("slab vm", ks, " ")
		for (k = 1; k <= 2; k++) {
			med_reset()
			for (p = 1; p <= 9; p++) if ((ns[c] SUBSEP p) in SMR)
				med_push((SM[ns[c], 1, p, ks[k]] - SM[ns[c], 0, p, ks[k]]) / ns[c])
			v = med()
			# Three runs: min-max, and nothing published below it.
			line = line " " (v == "" ? "" : MIN <= 0 ? "below the spread" : f(v, 1)) \
			       (v == "" ? "" : " (" f(MIN, 1) "–" f(MAX, 1) ")") " |"
		}
		print line > MD
	}
	# Where the time went.
	if (TIME["others"] != "" && TIME["sessmem"] != "")
		print "\nThe guest's time: the matrix " int((TIME["others"] - TIME["matrix"]) / 60) \
		      " min, regions and forks " int((TIME["sessmem"] - TIME["others"]) / 60) \
		      " min, kernel memory " int((TIME["end"] - TIME["sessmem"]) / 60) " min." > MD
	close(MD)

	# The plot's data: cpu workload, ns per tick taken by rate.
	dat = out "/cost.dat"
	print "rate null-timer profil.ko perf-record bpf-sampler" > dat
	split("100 " INFO["hz"] " 1000 10000", rs, " ")
	for (c = 1; c <= 4; c++) {
		line = rs[c]
		split("null profil perf bpf", ts, " ")
		for (k = 1; k <= 4; k++) {
			v = MED[ts[k], "cpu", rs[c]]
			line = line " " (v == "" || v <= 0 ? "NaN" : v)
		}
		print line > dat
	}
	close(dat)

	# README's summary sentence (bench/readme.sh puts it there).
	sm = out "/summary.md"
	split("null perf bpf profil", ts, " ")
	peer_lo = peer_hi = ""
	for (k = 1; k <= 4; k++) {
		v = cmed(ts[k], "sys", 10000, "tpct")
		if (v != "" && (peer_lo == "" || v < peer_lo)) peer_lo = v
		if (v != "" && (peer_hi == "" || v > peer_hi)) peer_hi = v
	}
	print "In short (" INFO["kernel"] " guest, " INFO["reps"] " repetitions, bench/out/table.md, " \
	      "written from bench/out/bench.log): at 10 kHz the whole machine's extra busy time under " \
	      "profil.ko is " vs("null", "cpu") " that under a bare perf timer at the same rate with one " \
	      "thread and " vs("null", "mt") " with four, and " vs("perf", "cpu") " that under perf record; " \
	      "its split of 50/30/20 is off by " f(cmed("profil", "cpu", 10000, "err"), 1) \
	      " points (perf record's " f(cmed("perf", "cpu", 10000, "err"), 1) "). A tick's own work in " \
	      "profil.ko (its hrtimer callback, traced) is " \
	      mci(pmed("ticktrace", 1, "null", 1, "profil", "cyc"), 2) "x the bare timer's and, with 16 " \
	      "threads, " mci(pmed("ticktrace", 1, "profil", 16, "profil", "cyc"), 2) "x what it is with " \
	      "one; the rest of a tick is the timer interrupt's, which every tool pays. On a syscall-heavy " \
	      "thread every tool takes " f(peer_lo, 0) "–" f(peer_hi, 0) \
	      "% of the ticks its CPU clock owes (the timing event misses the switch path); profil.ko " \
	      "credits each with what that clock gained, " f(cmed("profil", "sys", 10000, "crd"), 1) \
	      "% of the periods, where the others' profiles keep what they took. " \
	      "The targets, met or not: doc/measurements.md." > sm
	close(sm)
}
