#!/bin/sh
# bench/report.sh LOG OUTDIR [SECONDS]: the "@@ bench" lines of a guest log
# (bench/guest.sh) into OUTDIR/results.csv (one row per run), table.md
# (medians, spread, the issue's targets) and cost.png (cost per sample by
# tool and rate, gnuplot).  SECONDS: how long make bench took, for the
# table.  Everything here is computed from the log; nothing is typed in.
set -eu
log=$1 out=$2 secs=${3:-}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
grep -q '^@@ bench ' "$log" || { echo "report: no results in $log"; exit 1; }

awk -v out="$out" -v secs="$secs" -v machine="$(nproc) x $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)" \
	-f "$here/report.awk" "$log"

cd "$out"
gnuplot <<'EOF'
set terminal png size 900,560
set output "cost.png"
set title "Cost per sample, cpu workload (TCG guest: only ratios count)"
set logscale xy
set xlabel "sampling rate (Hz)"
set ylabel "extra CPU ns per sample (median)"
set xrange [70:14000]
set key top right
set grid
plot for [i=2:6] "cost.dat" using 1:i with linespoints lw 2 pt 7 title columnheader(i)
EOF
echo "bench: $out/results.csv, $out/table.md, $out/cost.png"
