#!/bin/sh
# make check: for every kernel of the matrix, build profil.ko with W=1, boot
# the kernel under QEMU with the selftests, and count the TAP it prints.
# The host fails a kernel on any "not ok", on BUG/WARNING/oops/lockdep in
# its dmesg, on unbalanced pins and on a guest that did not finish.
# The last line is "N passed, N failed"; the skips are on the line before.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
b=$top/build
mkdir -p "$b"
pass=0 fail=0 skip=0
start=$(date +%s)

tap() { # tap LOG: counts of the TAP lines in a guest log
	awk '
	/^@@ dmesg begin/ { indmesg = 1 }
	/^@@ dmesg end/ { indmesg = 0; next }
	indmesg { next }
	/^ok / { if ($0 ~ /# SKIP/) s++; else p++ }
	/^not ok / { f++ }
	END { printf "%d %d %d\n", p, f, s }' "$1"
}

kernels=$("$top/scripts/kernels.sh")
[ -n "$kernels" ] || { echo "no kernel with headers installed (make deps)"; echo "0 passed, 1 failed"; exit 1; }

# gate NAME LOG CMD...: a host-side check, counted like a test.
gate() {
	name=$1 glog=$2
	shift 2
	if "$@" > "$glog" 2>&1; then
		echo "ok - $name"
		pass=$((pass + 1))
	else
		echo "not ok - $name"
		sed 's/^/   | /' "$glog"
		fail=$((fail + 1))
	fi
}

srcs=$(ls "$top"/kmod/*.[ch] | grep -v '\.mod\.c$')
# shellcheck disable=SC2086
gate "lint: checkpatch --strict on kmod/ and uapi/" "$b/checkpatch.log" \
	perl "$b/checkpatch/checkpatch.pl" --no-tree --strict --terse --quiet \
	-f $srcs "$top/uapi/linux/profil.h"
gate "lint: mandoc -Tlint on man/" "$b/mandoc.log" \
	mandoc -Tlint -W warning "$top"/man/*.[0-9]
gate "abi: profil.h leaves the buffer nullable" "$b/nonnull.log" sh -c \
	"printf '#include <profil.h>\nint f(void) { return profil(0, 0, 0, 0); }\n' |
	 cc -Werror -Wnonnull -fsyntax-only -I'$top/lib/include' -x c -"
gate "abi: the uapi header stands alone in C and C++" "$b/uapi.log" sh -c \
	"echo '#include <linux/profil.h>' | cc -Werror -Wall -fsyntax-only -I'$top/uapi' -x c - &&
	 echo '#include <linux/profil.h>' | c++ -Werror -Wall -fsyntax-only -I'$top/uapi' -x c++ -"
gate "abi: libprofil.so.0 exports profil@@LIBPROFIL_1.0, profil@GLIBC_2.2.5 and profil_inherit@@LIBPROFIL_1.1 only" \
	"$b/symbols.log" sh -c \
	"nm -D --defined-only '$top/lib/libprofil.so.0' | awk '{ print \$3 }' |
	 LC_ALL=C sort | tee /dev/stderr | tr '\n' ' ' |
	 grep -qx 'GLIBC_2.2.5 LIBPROFIL_1.0 LIBPROFIL_1.1 profil@@LIBPROFIL_1.0 profil@GLIBC_2.2.5 profil_inherit@@LIBPROFIL_1.1 '"

for k in $kernels; do
	t0=$(date +%s)
	log=$b/guest-$k.log
	echo "== $k: building profil.ko (W=1)"
	if ! "$top/scripts/build-kmod.sh" "$k"; then
		echo "not ok - build: profil.ko for $k with W=1"
		fail=$((fail + 1))
		continue
	fi
	pass=$((pass + 1))
	echo "== $k: booting the guest (QEMU TCG)"
	"$top/scripts/guest-run.sh" "$k" check "$log"
	set -- $(tap "$log")
	p=$1 f=$2 s=$3
	grep -E '^not ok ' "$log" | sed "s/^/   [$k] /"
	if ! grep -q '^@@ guest done' "$log"; then
		echo "not ok - $k: the guest did not finish (see $log)"
		tail -n 40 "$log" | sed 's/^/   | /'
		f=$((f + 1))
	fi
	bad=$(sed -n '/^@@ dmesg begin/,/^@@ dmesg end/p' "$log" |
	      grep -E 'BUG:|WARNING:|Oops|lockdep|possible circular|general protection|Call Trace|refcount_t:' || true)
	if [ -n "$bad" ]; then
		echo "not ok - $k: dmesg has kernel errors:"
		echo "$bad" | head -n 20 | sed 's/^/   | /'
		f=$((f + 1))
	else
		p=$((p + 1))
	fi
	echo "== $k: $p passed, $f failed, $s skipped ($(( $(date +%s) - t0 )) s; log $log)"
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
done

echo "== make check took $(( $(date +%s) - start )) s"
echo "== $skip skipped"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
