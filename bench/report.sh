#!/bin/sh
# bench/report.sh LOG OUTDIR: the "@@ bench" lines of a guest log
# (bench/guest.sh; bench/run.sh keeps them in bench/out/bench.log, with
# how long make bench took and the host's CPUs) into OUTDIR/results.csv
# (one row per run), table.md (the targets, met or not, and every case,
# each a median of paired values with its interval), summary.md (README's
# sentence) and cost.png (ns per tick taken by tool and rate, gnuplot).
# Everything here is computed from the log; nothing is typed in, and
# running it again on the committed log gives the same files.
set -eu
log=$1 out=$2
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
grep -q '^@@ bench ' "$log" || { echo "report: no results in $log"; exit 1; }

machine=$(sed -n 's/^@@ bench-host //p' "$log" | tail -n 1)
awk -v out="$out" -v machine="${machine:-an unrecorded host}" \
	-f "$here/report.awk" "$log"

cd "$out"
gnuplot <<'EOF'
set terminal png size 900,560
set output "cost.png"
set title "Cost per tick taken, cpu workload (TCG guest: only ratios count)"
set logscale xy
set xlabel "sampling rate (Hz)"
set ylabel "machine's extra busy ns per tick taken (median)"
set xrange [70:14000]
set key top right
set grid
set datafile missing "NaN"
plot for [i=2:5] "cost.dat" using 1:i with points ps 2 pt 7 title columnheader(i)
EOF
echo "bench: $out/results.csv, $out/table.md, $out/summary.md, $out/cost.png"
