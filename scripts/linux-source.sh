#!/bin/sh
# Take kselftest_harness.h and checkpatch.pl from Debian's linux-source-6.1
# package at build time; neither is kept in our tree.  6.1's by name: the
# tests are written to its harness (6.12's, which make check-debug
# DEBUG_KERNEL=6.12 installs, has no _metadata->passed).
set -eu
out=${1:-build}
tarball=/usr/src/linux-source-6.1.tar.xz
[ -e "$tarball" ] || { echo "linux-source-6.1 is not installed (make deps)" >&2; exit 1; }
top=$(basename "$tarball" .tar.xz)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -C "$tmp" -xJf "$tarball" \
	"$top/tools/testing/selftests/kselftest_harness.h" \
	"$top/tools/testing/selftests/kselftest.h" \
	"$top/scripts/checkpatch.pl" \
	"$top/scripts/spelling.txt" \
	"$top/scripts/const_structs.checkpatch"
mkdir -p "$out/kselftest" "$out/checkpatch"
cp "$tmp/$top/tools/testing/selftests/"kselftest*.h "$out/kselftest/"
cp "$tmp/$top/scripts/checkpatch.pl" "$tmp/$top/scripts/spelling.txt" \
   "$tmp/$top/scripts/const_structs.checkpatch" "$out/checkpatch/"
