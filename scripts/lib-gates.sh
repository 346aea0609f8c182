#!/bin/sh
# lib-gates.sh header|lto: host checks of libprofil's promises (check.sh).
#  header  <profil.h> leaves profil()'s buffer nullable in C and C++, with
#          <unistd.h> included before or after it: profil(0, 0, 0, 0)
#          compiles with -Wall -Werror, and a NULL test after the call
#          survives -O2 (run against the built library, no module needed).
#          Each public header also compiles alone, in C and C++ (<mon.h>'s
#          struct prof is AIX's: it and <sys/profil.h> never meet).
#  lto     a build with CFLAGS=-flto exports exactly what a plain one does,
#          the GLIBC_2.2.5 alias included.
#  cet     a build with -fcf-protection (Ubuntu's and Fedora's default)
#          marks every object of libprofil for IBT and SHSTK (mcount.S
#          among them: one without takes the marks from the library), and
#          mcount, _mcount and __fentry__, reached through a pointer from
#          -pg -fpie code, begin with endbr64.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# libprofil built afresh in $tmp with CFLAGS=$1.
build_copy() {
	cp -r "$top/Makefile" "$top/lib" "$top/uapi" "$tmp/"
	make -s -C "$tmp" clean > /dev/null
	make -s -C "$tmp" lib CFLAGS="$1"
}

case $1 in
header)
	for order in "" -DUNISTD_AFTER; do
		cc -O2 -Wall -Wextra -Werror -Wnonnull $order -I"$top/lib/include" \
			-o "$tmp/c" "$top/scripts/lib-gates/null_check.c" \
			-L"$top/lib" -lprofil
		LD_LIBRARY_PATH=$top/lib "$tmp/c"
		c++ -O2 -Wall -Wextra -Werror $order -I"$top/lib/include" -x c++ \
			-o "$tmp/cxx" "$top/scripts/lib-gates/null_check.c" \
			-L"$top/lib" -lprofil
		LD_LIBRARY_PATH=$top/lib "$tmp/cxx"
		echo "ok ${order:-unistd.h first}"
	done
	for h in profil.h mon.h pcsample.h; do
		echo "#include <$h>" | cc -Wall -Werror -fsyntax-only \
			-I"$top/lib/include" -x c -
		echo "#include <$h>" | c++ -Wall -Werror -fsyntax-only \
			-I"$top/lib/include" -x c++ -
		echo "ok <$h> alone"
	done
	;;
lto)
	build_copy "-O2 -g -flto"
	syms() { nm -D --defined-only "$1" | awk '{ print $3 }' | LC_ALL=C sort; }
	syms "$top/lib/libprofil.so.0" > "$tmp/plain"
	syms "$tmp/lib/libprofil.so.0" > "$tmp/lto"
	diff -u "$tmp/plain" "$tmp/lto"
	;;
cet)
	build_copy "-O2 -g -fcf-protection=full"
	# Ours together, as the linker ANDs them (Debian's own crti.o has
	# no marks, so a .so linked here has none whatever we do).
	ld -r -o "$tmp/all.o" "$tmp"/lib/*.os
	for f in "$tmp/all.o" "$tmp/lib/mcount.o"; do
		readelf -n "$f" | grep -q 'x86 feature: IBT, SHSTK' || {
			echo "not ok: ${f#"$tmp"/} without the IBT and SHSTK marks"
			exit 1; }
	done
	so=$tmp/lib/libprofil.so.0
	for s in mcount _mcount __fentry__; do
		a=$(nm -D --defined-only "$so" | awk -v s="$s@@" \
			'index($3, s) == 1 { print $1; exit }')
		[ -n "$a" ] || { echo "not ok: no $s in libprofil.so.0"; exit 1; }
		objdump -d --no-show-raw-insn --start-address=0x"$a" \
			--stop-address=$((0x$a + 4)) "$so" | grep -q 'endbr64' ||
			{ echo "not ok: $s does not begin with endbr64"; exit 1; }
	done
	;;
*)
	echo "usage: $0 header|lto|cet" >&2
	exit 2
	;;
esac
