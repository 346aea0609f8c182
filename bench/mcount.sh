#!/bin/sh
# make bench-mcount: what a call costs under gcc -pg with libprofil's mcount
# and with glibc's, and without -pg, with 1, 4 and 16 threads; the builds
# run interleaved, $ROUNDS rounds, in a scratch directory.  Each round
# pairs a build with the floor (no -pg) of the same round: the extra cost
# of a call, and that cost at N threads against one thread's in the same
# round (the scaling goal: within 1.5x), median and range over the rounds,
# with the calls each profile kept.  mcount runs in user space only, so
# this runs on the host, natively (a TCG guest would only slow both
# alike).  The rounds go to bench/out/mcount.log and the table to
# bench/out/mcount.md, which make bench-readme puts into README.md.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
b=$top/build/bench
calls=${CALLS:-10000000}
rounds=${ROUNDS:-7}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
for r in $(seq "$rounds"); do
	for t in 1 4 16; do
		for v in none glibc libprofil; do
			echo "$r $v $t $(LD_LIBRARY_PATH=$top/lib "$b/mcount-$v" "$t" "$calls" 2>/dev/null)"
		done
	done
done > raw
{
	echo "Host: $(nproc) x $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1), $(date -u +%Y-%m-%d); leaf() called $calls times a thread, $rounds interleaved rounds; each build paired with the floor of its round: median [min-max] over the rounds (bench/out/mcount.log)."
	echo
	echo "| build | threads | ns/call (CPU) | extra ns/call | extra vs 1 thread | calls in the profile (last round) |"
	echo "|---|---|---|---|---|---|"
	awk '
	# ROUND BUILD THREADS "ns/call" X ["recorded" Y "of" Z ...]
	{ ns[$1, $2, $3] = $5; if ($6 == "recorded") kept[$2, $3] = $7 " of " $9
	  if ($1 > n) n = $1 }
	function stat(a, k,   i, j, t, s) {	# median [min-max] of a[1..k]
		for (i = 2; i <= k; i++)
			for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
				t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
			}
		s = sprintf("%.2f", k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2)
		return s " [" sprintf("%.2f", a[1]) "-" sprintf("%.2f", a[k]) "]"
	}
	END {
		split("1 4 16", threads, " ")
		split("none glibc libprofil", builds, " ")
		for (ti = 1; ti <= 3; ti++)
			for (bi = 1; bi <= 3; bi++) {
				t = threads[ti]; v = builds[bi]
				delete x; delete e; delete q
				for (r = 1; r <= n; r++) {
					x[r] = ns[r, v, t]
					e[r] = ns[r, v, t] - ns[r, "none", t]
					q[r] = e[r] / (ns[r, v, 1] - ns[r, "none", 1])
				}
				printf "| %s | %d | %s | %s | %s | %s |\n",
				       v == "none" ? "no -pg" : v, t, stat(x, n),
				       v == "none" ? "-" : stat(e, n),
				       v == "none" || t == 1 ? "-" : stat(q, n) "x",
				       (v, t) in kept ? kept[v, t] : "-"
			}
	}' raw
} > table
mkdir -p "$top/bench/out"
cp raw "$top/bench/out/mcount.log"
cp table "$top/bench/out/mcount.md"
cat table
