#!/bin/sh
# make demo: boot a guest of Debian's default kernel with profil.ko, run a
# CPU-bound program that profiles itself with profil() and print its
# profile, then a gcc -pg program (demo/callgraph.c) whose gmon.out comes
# back to the host for gprof, and profil(1) on that program built without
# -pg.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
k=${DEMO_KERNEL:-$("$top/scripts/kernels.sh" | head -n 1)}
[ -n "$k" ] || { echo "no kernel with headers installed (make deps)" >&2; exit 1; }
log=$top/build/demo-$k.log

echo "== building profil.ko for $k"
"$top/scripts/build-kmod.sh" "$k"
echo "== booting $k under QEMU (TCG); the program runs as an unprivileged user"
"$top/scripts/guest-run.sh" "$k" demo "$log"
if ! grep -q '^@@ demo end' "$log"; then
	echo "the demo did not finish; the console says:" >&2
	tail -n 30 "$log" >&2
	exit 1
fi
echo "== profil(): demo/hotspots, split 60/30/10 by construction"
sed -n '/^@@ demo begin/,/^@@ demo end/p' "$log" | sed '1d;$d'
out=$top/build/demo/gmon.out
sed -n '/^@@ gmon begin/,/^@@ gmon end/p' "$log" | sed '1d;$d' | base64 -d > "$out"
echo "== gcc -pg -lprofil: demo/callgraph, gprof -b build/demo/callgraph $out"
echo "   (60/30/10 by construction; expensive 500, medium 2500, cheap 10000 calls)"
gprof -b "$top/build/demo/callgraph" "$out" | sed -n '1,40p'
echo "== profil(1) on the same program built unmodified (no -pg, no libprofil):"
echo "   profil -r 10000 -- build/demo/callgraph-plain, as an unprivileged user"
sed -n '/^@@ profil begin/,/^@@ profil end/p' "$log" | sed '1d;$d'
