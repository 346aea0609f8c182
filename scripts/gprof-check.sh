#!/bin/sh
# gprof-check.sh LOG: binutils gprof reads the gmon.out that demo/callgraph
# (gcc -pg, -lprofil) left in the guest, handed back base64 in LOG between
# "@@ gmon begin" and "@@ gmon end": the calls exactly (expensive 500,
# medium 2500, cheap 10000) and the time split 60/30/10 by construction:
# the two hot shares within 15%, the 10% one within 30% (at 10 kHz over
# 0.3 s it is about 300 samples, and its 10,000 calls add their own
# prologues).  Prints gprof's flat profile.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
log=$1
out=${log%.log}.gmon.out
sed -n '/^@@ gmon begin/,/^@@ gmon end/p' "$log" | sed '1d;$d' | base64 -d > "$out"
gprof -b -p "$top/build/demo/callgraph" "$out" > "$out.txt"
cat "$out.txt"
# Flat profile rows: %time cumulative self calls ... name
awk '
	$NF == "expensive" { e = 1; ok += ($4 == 500 && $1 >= 51 && $1 <= 69) }
	$NF == "medium" { m = 1; ok += ($4 == 2500 && $1 >= 25.5 && $1 <= 34.5) }
	$NF == "cheap" { c = 1; ok += ($4 == 10000 && $1 >= 7 && $1 <= 13) }
	END { exit !(e && m && c && ok == 3) }' "$out.txt"
