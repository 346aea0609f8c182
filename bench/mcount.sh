#!/bin/sh
# make bench-mcount: what a call costs under gcc -pg with libprofil's mcount
# and with glibc's, and without -pg, with 1 and 4 threads; the builds run
# interleaved, 5 rounds, in a scratch directory; medians printed, with
# the calls each profile kept.  mcount runs in user space only, so this
# runs on the host, natively (a TCG guest would only slow both alike).
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
printf '%-10s %7s %12s %12s %s\n' build threads ns/call "vs none" "calls kept (last round)"
for t in 1 4; do
	base=$(awk -v t="$t" '$1 == "none" && $2 == t { print $4 }' raw | median)
	for v in none glibc libprofil; do
		m=$(awk -v v="$v" -v t="$t" '$1 == v && $2 == t { print $4 }' raw | median)
		kept=$(awk -v v="$v" -v t="$t" '$1 == v && $2 == t && $5 == "recorded" { k = $6 " of " $8 } END { print k }' raw)
		printf '%-10s %7s %12s %12s %s\n' "$v" "$t" "$m" \
			"$(awk -v m="$m" -v b="$base" 'BEGIN { printf "%.1fx", m / b }')" "${kept:--}"
	done
done
