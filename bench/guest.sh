#!/bin/sh
# bench/guest.sh: the cases of make bench, run inside the guest by
# scripts/guest-init.sh (mode bench) as root, with profil.ko loaded.  Each
# result is one line for the host (bench/report.sh):
#	@@ bench TOOL WORKLOAD RATE REP key value ...
# where later keys override earlier ones.  Every repetition runs every
# case once, in an order rotated by one case per repetition, so that each
# tool is measured next to every other under the same conditions.
# BENCH_REPS (default 15) and BENCH_SCALE (default 1: the iteration counts
# below, sized for a run of under 30 min under TCG on 2 cores) come from the
# kernel command line (profil.bench=REPS,SCALE); BENCH_ONLY, a regular
# expression over "TOOL:RATE WORKLOAD", keeps the cases it matches.
B=/opt/profil
reps=${BENCH_REPS:-15}
scale=${BENCH_SCALE:-1}
only=${BENCH_ONLY:-.}
pcs=/tmp/bench-pcs
hz=$($B/work hz)
lo=$($B/work lo)
rates="100 $hz 1000 10000"
# The peers at 10 kHz in the matrix: below that, no tool's cost is above
# the noise of a TCG guest, no target reads them, and make bench must stay
# under 30 minutes (the EINTR cases, block, have them at HZ).
peer_rates="10000"

# The kernel would lower perf's sample rate after a slow interrupt, and
# under TCG every interrupt is slow: keep every tool at the rate asked.
# (The rate first: with the throttling off, the kernel refuses to set it.)
echo 100000 > /proc/sys/kernel/perf_event_max_sample_rate
echo 0 > /proc/sys/kernel/perf_cpu_time_max_percent
echo "@@ bench-info hz $hz reps $reps scale $scale kernel $(uname -r) cpus $(nproc)"
# The guest's seconds since boot, for where make bench's time goes.
section() { echo "@@ bench-time $1 $(cut -d ' ' -f 1 /proc/uptime)"; }

# Workloads: what bench/work runs, iterations per thread (cpu about 1.4 s
# of CPU under TCG, mt 1.25 s a thread, mt16 1 s a thread; the thread
# figures come from bench/threads now, and mt16 is left for BENCH_ONLY).
args() {
	case $1 in
	cpu) echo "cpu 1 $((1200000000 * scale))" ;;
	mt) echo "cpu 4 $((250000000 * scale))" ;;
	mt16) echo "cpu 16 $((50000000 * scale))" ;;
	sys) echo "sys 1 $((10000 * scale))" ;;
	sys4) echo "sys 1 $((40000 * scale))" ;;
	block) echo "block 4 $((600000000 * scale))" ;;
	esac
}

# pg: bench/mcount's three builds (no -pg; -pg with glibc's runtime and
# its profil; -pg with libprofil's, the histogram from profil.ko at RATE),
# 1, 4 or 16 threads each calling a leaf function.
pg_run() {
	tool=$1 rate=$2 w=$3 rep=$4
	case $w in
	pg) nt=1 calls=$((20000000 * scale)) ;;
	pg-mt) nt=4 calls=$((2000000 * scale)) ;;
	*) nt=16 calls=$((500000 * scale)) ;;
	esac
	case $tool in
	none) prog=mcount-none ;;
	glibc) prog=mcount-glibc ;;
	profil) prog=mcount-libprofil ;;
	esac
	rm -rf /tmp/pg && mkdir /tmp/pg && cd /tmp/pg || return
	line=$(PROFIL_RATE=$rate $B/cputree $B/$prog $nt $calls 2>&1)
	cd /tmp
	echo "@@ bench $tool $w $rate $rep threads $nt calls $calls $(echo $line)"
}

# case TOOL RATE WORKLOAD REP: one run, one result line.
case_run() {
	tool=$1 rate=$2 w=$3 rep=$4
	case $w in pg*) pg_run "$@"; return ;; esac
	set -- $(args "$w")
	wl=$1 nt=$2 it=$3
	line=
	case $tool in
	none|null|profil|glibc)
		line=$($B/cputree $B/work "$wl" "$nt" "$tool" "$rate" "$it" 2>&1) ;;
	perf)
		rm -f /tmp/perf.data
		line=$($B/cputree $B/perf record -e task-clock -c $((1000000000 / rate)) \
			-B -q -o /tmp/perf.data -- $B/work "$wl" "$nt" ext "$rate" "$it" 2>&1)
		post=$($B/cputree sh -c "$B/perf script -i /tmp/perf.data -F ip > $pcs 2>/dev/null")
		# The samples perf record says it lost (LOST, LOST_SAMPLES).
		lost=$($B/perf report -i /tmp/perf.data --stats 2>/dev/null |
			awk '$1 ~ /^LOST/ && $2 == "events:" { n += $3 } END { print n + 0 }')
		line="$line post_$post $($B/work classify < $pcs) lost $lost" ;;
	bpf)
		rm -f $pcs
		line=$($B/cputree $B/bpfsample "$rate" "$lo" $pcs \
			$B/work "$wl" "$nt" ext "$rate" "$it" 2>&1)
		if [ -e $pcs ]; then
			# An array map's slot is always there: none lost.
			line="$line $($B/work classify < $pcs) lost 0"
		else
			line="not-available $(echo "$line" | sed -n 's/.*not available: //p' | tr ' ' _)"
		fi ;;
	esac
	echo "@@ bench $tool $w $rate $rep threads $nt $(echo $line)"
}

# The cases of the main matrix, as "TOOL:RATE WORKLOAD".
cases() {
	for w in cpu mt sys; do
		echo "none:0 $w"
		for r in $peer_rates; do echo "null:$r $w"; done
		# (sys at 100 Hz: sys4 below; mt at HZ and 10 kHz only,
		# glibc on cpu only: no target reads the others, and make
		# bench must stay under 30 minutes.)
		for r in $rates; do
			case $w$r in
			sys100|mt100|mt1000) ;;
			*) echo "profil:$r $w" ;;
			esac
		done
		[ "$w" != cpu ] || echo "glibc:0 $w"
		for r in $peer_rates; do echo "perf:$r $w"; done
		for r in $peer_rates; do echo "bpf:$r $w"; done
	done
	# profil.ko's periods credited at 100 Hz, over a sys run 4x as long:
	# a run ends with up to a tick's time not yet credited, a period or
	# more of the 35 or so that a sys run owes at 100 Hz.
	echo "profil:100 sys4"
	# What each tool does to threads asleep in poll, nanosleep,
	# epoll_wait and sem_timedwait while another spins: their EINTR.
	for tr in none:0 null:$hz profil:$hz profil:10000 glibc:0 perf:$hz bpf:$hz; do
		echo "$tr block"
	done
	for w in pg pg-mt pg-mt16; do
		echo "none:0 $w"
		echo "glibc:0 $w"
		echo "profil:10000 $w"
	done
}

section matrix
cases | grep -E "$only" > /tmp/bench-cases
n=$(wc -l < /tmp/bench-cases)
rep=1
[ "$n" -gt 0 ] || rep=$((reps + 1))	# BENCH_ONLY kept no case of the matrix
while [ "$rep" -le "$reps" ]; do
	# Rotate: this repetition starts at case (rep * 7) mod n.
	k=$(( (rep * 7) % n ))
	{ tail -n +$((k + 1)) /tmp/bench-cases; head -n "$k" /tmp/bench-cases; } |
	while read -r tr w; do
		case_run "${tr%:*}" "${tr#*:}" "$w" "$rep" < /dev/null
	done
	rep=$((rep + 1))
done

# The figures outside the matrix, interleaved the same way (BENCH_ONLY
# matches their names: regions, threads, ticktrace, forkexec, profilfork,
# sessmem).
want() { echo "$1" | grep -qE "$only"; }

# ticktrace: every tick's hrtimer callback (perf_swevent_hrtimer, which
# runs profil.ko's or the null timer's overflow handler) from entry to
# exit, in TSC cycles, by the timer tracepoints.  The entry's filter keeps
# that callback's; an exit is paired with the entry of the same timer on
# the same CPU.  bench/threads and bench/regions mark each case's window
# in the trace ("threads-case ..." and "regions-case ...").
T=/sys/kernel/tracing
ticktrace() {
	e=$T/events/timer
	echo "$1" > $e/hrtimer_expire_entry/enable &&
	echo "$1" > $e/hrtimer_expire_exit/enable
}
ticktrace_setup() {
	[ -d $T/events ] || mount -t tracefs nodev $T || return 1
	fn=$(awk '$3 == "perf_swevent_hrtimer" { print $1; exit }' /proc/kallsyms)
	[ -n "$fn" ] && echo x86-tsc > $T/trace_clock &&
	echo 16384 > $T/buffer_size_kb &&
	echo "function == 0x$fn" > $T/events/timer/hrtimer_expire_entry/filter &&
	mhz=$(dmesg | sed -n 's/.*tsc: Detected \([0-9.]*\) MHz.*/\1/p' | head -n 1) &&
	echo "@@ bench-info tsc_mhz $mhz"
}
# The median callback of each case marked:
# "KIND ROUND N TOOL CYCLES COUNT", KIND threads-case or regions-case.
ticktrace_cases() {
	awk '{
		for (i = 1; i <= NF && $i !~ /^\[[0-9]+\]$/; i++);
		cpu = $i
		for (; i <= NF && $i !~ /^[0-9.]+:$/; i++);
		ts = substr($i, 1, length($i) - 1); ev = $(i + 1); a = $(i + 2)
		if (ev == "tracing_mark_write:" && a ~ /^(threads|regions)-case$/)
			key = $(i + 6) == "begin" ? a " " $(i + 3) " " $(i + 4) " " $(i + 5) : ""
		else if (ev == "hrtimer_expire_entry:" && /function=perf_swevent_hrtimer /) {
			T0[cpu] = ts; H[cpu] = a
		} else if (ev == "hrtimer_expire_exit:" && (cpu in T0) && H[cpu] == a) {
			if (key != "")
				print key, ts - T0[cpu]
			delete T0[cpu]
		}
	}' $T/trace | sort -k1,1 -k2,2n -k3,3n -k4,4 -k5,5n |
	awk '{ k = $1 " " $2 " " $3 " " $4; c[k]++; d[k, c[k]] = $5 }
	     END { for (k in c) print k, d[k, int((c[k] + 1) / 2)], c[k] }'
}
want ticktrace && { ticktrace_setup || echo "@@ bench-error ticktrace: no tracefs"; }
section others
rep=1
while [ "$rep" -le "$reps" ]; do
	# A tick's cost with 0 (none), 1 and 1024 regions at 10 kHz, side by
	# side in one process, 6 rounds (bench/regions.c): "ROUND N ...".
	want regions && $B/regions 6 10000 $((100000000 * scale)) |
		while read -r round n rest; do
			echo "@@ bench regions $n 10000 $rep.$round $rest"
		done
	# A tick's cost with 1, 4 and 16 threads, profil.ko's and the null
	# timer's at 10 kHz, side by side in one process, 6 rounds
	# (bench/threads.c): "ROUND N TOOL ...".
	want threads && taskset -c 1 $B/threads 6 10000 $((100000000 * scale)) |
		while read -r round n tool rest; do
			echo "@@ bench threads $n $tool $rep.$round $rest"
		done
	# The same, 3 rounds, traced: what each tick's callback takes (one
	# round left intervals of 15 values as wide as the host's worst
	# moments); and 3 rounds of regions, traced (half the work: a median
	# of some 1200 callbacks a case), with 1 and with 1024 regions.
	if want ticktrace && echo > $T/trace && ticktrace 1; then
		taskset -c 1 $B/threads 3 10000 $((100000000 * scale)) $T/trace_marker > /dev/null
		want regions && taskset -c 1 $B/regions 3 10000 $((50000000 * scale)) \
			$T/trace_marker > /dev/null
		ticktrace 0
		ticktrace_cases | while read -r kind round n tool cyc cnt; do
			t=ticktrace
			[ "$kind" = threads-case ] || t=regiontrace
			echo "@@ bench $t $n $tool $rep.$round cycles $cyc calls $cnt"
		done
	fi
	# fork + exec + exit + wait, without a session, with one that children
	# do not inherit (parent) and with one they do.
	want forkexec && for m in exec parent session; do
		echo "@@ bench forkexec $m 0 $rep $($B/forkcost $((100 * scale)) $m)"
	done
	# The same forks (fork + exit, fork + exec) alone and under profil(1),
	# without and with --children: what profiling costs a fork.  On one
	# CPU, parent and child: on two, under TCG, the parent spins for locks
	# the child holds as it exits, by as much as the fork costs, more or
	# less from run to run (alone measured dearer than under profil).
	# session: the same process profiled by profil.ko alone at profil(1)'s
	# 1 kHz, no agent (forkcost's forkparent and parent modes): the
	# kernel's share.  And under perf record at a sample a ms of task
	# clock, of the forking process only (--no-inherit): what sampling by
	# a perf event costs a fork anyway.
	# timer and count, fork only: a bare task-clock event on the forking
	# process, sampling at 1 kHz (nothing reads it) or only counting:
	# what any per-task sampling timer costs a fork on this guest, and
	# what perf's switching of an event costs without a timer.
	want profilfork && for m in fork exec; do
		tools="alone session profil children perf"
		[ $m = exec ] || tools="$tools timer count"
		for t in $tools; do
			fm=$m
			case $t in
			alone) run= ;;
			session) run= fm="${m%exec}parent 1000" ;;
			timer) run= fm="forktimer 1000" ;;
			count) run= fm="forkcount" ;;
			profil) run="$B/profil -o /dev/null --" ;;
			children) run="$B/profil --children -o /dev/null --" ;;
			perf) run="$B/perf record -q -e task-clock -c 1000000 --no-inherit -o /tmp/forkcost.data --" ;;
			esac
			echo "@@ bench profilfork $m:$t 0 $rep $(taskset -c 1 $run $B/forkcost $((300 * scale)) $fm 2> /dev/null)"
			rm -f /tmp/forkcost.data
		done
	done
	rep=$((rep + 1))
done
# Kernel memory: N sleeping processes with and without a session.
section sessmem
want sessmem && for rep in 1 2 3; do
	for n in 1 100 1000; do
		for arm in 0 1; do
			echo "@@ bench sessmem $n $arm $rep $($B/sessmem $n $arm)"
		done
	done
done
section end
