#!/bin/sh
# gprof-check.sh LOG [pg|cmd] [PROGRAM]: binutils gprof reads a gmon.out
# the guest handed back base64 in LOG.  Prints gprof's flat profile.
# PROGRAM replaces the build tree's (make package-check's own build).
#  pg (the default): demo/callgraph (gcc -pg, -lprofil), between
#   "@@ gmon begin" and "@@ gmon end": the calls exactly (expensive 500,
#   medium 2500, cheap 10000) and the time split 60/30/10 by construction:
#   the two hot shares within 15%, the 10% one within 30% (at 10 kHz over
#   0.3 s it is about 300 samples, and its 10,000 calls add their own
#   prologues).
#  cmd: what `profil -f gmon` wrote for selftests/cmd_subject (no -pg),
#   between "@@ profil-gmon begin" and "@@ profil-gmon end": of the
#   program's own text, fifty and twenty take 5/7 and 2/7 (71.4% and
#   28.6%) by construction, each within 5 points.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
log=$1
what=${2:-pg}
case $what in
pg)	marker=gmon bin=$top/build/demo/callgraph ;;
cmd)	marker=profil-gmon bin=$top/build/selftests/cmd_subject ;;
*)	echo "gprof-check.sh: pg or cmd" >&2; exit 2 ;;
esac
bin=${3:-$bin}
out=${log%.log}.$marker.out
sed -n "/^@@ $marker begin/,/^@@ $marker end/p" "$log" | sed '1d;$d' | base64 -d > "$out"
gprof -b -p "$bin" "$out" > "$out.txt"
cat "$out.txt"
# Flat profile rows: %time cumulative self calls ... name
if [ "$what" = cmd ]; then
	exec awk '
		$NF == "fifty" { f = ($1 >= 66.4 && $1 <= 76.4) }
		$NF == "twenty" { t = ($1 >= 23.6 && $1 <= 33.6) }
		END { exit !(f && t) }' "$out.txt"
fi
awk '
	$NF == "expensive" { e = 1; ok += ($4 == 500 && $1 >= 51 && $1 <= 69) }
	$NF == "medium" { m = 1; ok += ($4 == 2500 && $1 >= 25.5 && $1 <= 34.5) }
	$NF == "cheap" { c = 1; ok += ($4 == 10000 && $1 >= 7 && $1 <= 13) }
	END { exit !(e && m && c && ok == 3) }' "$out.txt"
