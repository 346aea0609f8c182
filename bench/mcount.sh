#!/bin/sh
# make bench-mcount: what a call costs under gcc -pg with libprofil's mcount
# and with glibc's, and without -pg, with 1 and 4 threads; the builds run
# interleaved, 5 rounds, in a scratch directory; medians printed, with
# the calls each profile kept.  mcount runs in user space only, so this
# runs on the host, natively (a TCG guest would only slow both alike).
# The rounds go to bench/out/mcount.log and the table to
# bench/out/mcount.md, which make bench-readme puts into README.md.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
b=$top/build/bench
calls=${CALLS:-10000000}
rounds=${ROUNDS:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
for r in $(seq "$rounds"); do
	for t in 1 4; do
		for v in none glibc libprofil; do
			echo "$v $t $(LD_LIBRARY_PATH=$top/lib "$b/mcount-$v" "$t" "$calls")"
		done
	done
done > raw
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
{
	echo "Host: $(nproc) x $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1), $(date -u +%Y-%m-%d); leaf() called $calls times a thread, $rounds interleaved rounds, medians (bench/out/mcount.log)."
	echo
	echo "| build | threads | ns/call (CPU) | vs no -pg | calls in the profile (last round) |"
	echo "|---|---|---|---|---|"
	for t in 1 4; do
		base=$(awk -v t="$t" '$1 == "none" && $2 == t { print $4 }' raw | median)
		for v in none glibc libprofil; do
			m=$(awk -v v="$v" -v t="$t" '$1 == v && $2 == t { print $4 }' raw | median)
			kept=$(awk -v v="$v" -v t="$t" '$1 == v && $2 == t && $5 == "recorded" { k = $6 " of " $8 } END { print k }' raw)
			echo "| $([ "$v" = none ] && echo "no -pg" || echo "$v") | $t | $m | $(awk -v m="$m" -v b="$base" 'BEGIN { printf "%.1fx", m / b }') | ${kept:--} |"
		done
	done
} > table
mkdir -p "$top/bench/out"
cp raw "$top/bench/out/mcount.log"
cp table "$top/bench/out/mcount.md"
cat table
