#!/bin/sh
# make check: for every kernel of the matrix (Debian 12's, scripts/kernels.sh,
# and Debian's newest, each unpacked by fetch-kernel.sh into a cache, none
# installed on the host), build profil.ko with W=1, boot
# the kernel under QEMU with the selftests, and count the TAP it prints
# (scripts/count-tap.sh): against each program's plan and exit status, so a
# test that never ran is a failure, as are BUG/WARNING/oops/lockdep in
# dmesg, unbalanced pins, a missing guest check and a guest that did not
# finish.  The last line is always "N passed, N failed"; the skips are on
# the line before.  GUEST_TESTS and GUEST_NOMOD_TESTS come from the Makefile.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
b=$top/build
mkdir -p "$b"
pass=0 fail=0 skip=0
start=$(date +%s)

if kernels=$("$top/scripts/kernels.sh" 2> "$b/kernels.log"); then
	echo "ok - kernels: Debian 12's," $kernels "unpacked for the matrix"
	pass=$((pass + 1))
else
	echo "not ok - kernels: Debian 12's kernels could not be unpacked"
	sed 's/^/   | /' "$b/kernels.log"
	fail=$((fail + 1))
	kernels=
fi
# And Debian's newest kernel, from a newer suite of its archive.
if newest=$("$top/scripts/fetch-kernel.sh" linux-headers-amd64 \
	    "${NEWEST_SUITE:-trixie-backports}" 2> "$b/newest-kernel.log"); then
	echo "ok - kernels: Debian's newest, $newest, unpacked for the matrix"
	pass=$((pass + 1))
	kernels="$kernels $newest"
else
	echo "not ok - kernels: Debian's newest kernel could not be unpacked"
	sed 's/^/   | /' "$b/newest-kernel.log"
	fail=$((fail + 1))
fi

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
gate "abi: <profil.h> keeps profil(NULL, ...) nullable in C and C++, <unistd.h> before or after; each header compiles alone" \
	"$b/nonnull.log" "$top/scripts/lib-gates.sh" header
gate "abi: an -flto build of libprofil exports the same symbols (GLIBC_2.2.5 alias kept)" \
	"$b/lto.log" "$top/scripts/lib-gates.sh" lto
gate "abi: a -fcf-protection build of libprofil keeps IBT and SHSTK, and mcount, _mcount and __fentry__ begin with endbr64" \
	"$b/cet.log" "$top/scripts/lib-gates.sh" cet
gate "abi: the uapi header stands alone in C and C++" "$b/uapi.log" sh -c \
	"echo '#include <linux/profil.h>' | cc -Werror -Wall -fsyntax-only -I'$top/uapi' -x c - &&
	 echo '#include <linux/profil.h>' | c++ -Werror -Wall -fsyntax-only -I'$top/uapi' -x c++ -"
gate "abi: libprofil.so.0 exports exactly the symbols of lib/libprofil.symbols" \
	"$b/symbols.log" sh -c \
	"nm -D --defined-only '$top/lib/libprofil.so.0' | awk '{ print \$3 }' |
	 LC_ALL=C sort | diff -u '$top/lib/libprofil.symbols' -"

# The runs each guest owes: every test program as root and as uid 65534.
runs=
for t in ${GUEST_TESTS-} ${GUEST_NOMOD_TESTS-}; do
	runs="$runs root:$t user:$t"
done
[ -n "$runs" ] || { echo "not ok - no test programs named (run through make check)"; fail=$((fail + 1)); }

gate "report: profil -f gmon merges arms of every bin size and scales past 16 bits; --sort, --percent-limit; libc's local functions from libc6-dbg; -f pprof as go tool pprof reads and merges it; profil report of a record as in one go, objects found by build-ID, mismatched and missing ones said, malformed records refused (selftests/report_test, on the host)" \
	"$b/report_test.log" "$b/selftests/report_test"
gate "profil(1)'s bash completion: subcommands, options, their values, the command's own words, report's directory (scripts/completion-test.sh, on the host)" \
	"$b/completion.log" "$top/scripts/completion-test.sh"
gate "harness: check-harness (the count on canned guest logs)" \
	"$b/check-harness.log" "$top/scripts/check-harness.sh"

# guest TAG KVER LOG TESTS NOMOD_TESTS APPEND RUN...: boot KVER's guest
# (profil.mode=check) with those test programs and APPEND on the kernel's
# command line, count its TAP against the RUNs, each failure with what its
# test said so that CI's output shows why; the counts go to the totals.
guest() {
	gtag=$1 gk=$2 glog=$3 gtests=$4 gnomod=$5 gappend=$6 g0=$(date +%s)
	shift 6
	rm -f "$glog"
	rc=0 f=0
	GUEST_TESTS=$gtests GUEST_NOMOD_TESTS=$gnomod GUEST_APPEND=$gappend \
		"$top/scripts/guest-run.sh" "$gk" check "$glog" || rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "not ok - $gtag: guest-run.sh failed with status $rc (see $glog)"
		tail -n 20 "$glog" 2>/dev/null | sed 's/^/   | /'
		f=1
	fi
	sh "$top/scripts/tap-failures.sh" "$gtag" "$glog"
	counts=$("$top/scripts/count-tap.sh" "$glog" "$@" | sed "s/^not ok/   [$gtag] not ok/")
	echo "$counts" | sed '$d'
	# shellcheck disable=SC2046
	set -- $(echo "$counts" | tail -n 1)
	f=$((f + ${2:-1}))
	echo "== $gtag: ${1:-0} passed, $f failed, ${3:-0} skipped ($(( $(date +%s) - g0 )) s; log $glog)"
	pass=$((pass + ${1:-0})) fail=$((fail + f)) skip=$((skip + ${3:-0}))
}

# The same kernel booted again with nohz_full=1 (CPU 1 without the
# scheduler's tick while it runs one task), for $GUEST_TICKLESS_TESTS alone.
truns=
for t in ${GUEST_TICKLESS_TESTS-}; do
	truns="$truns root:$t user:$t"
done

for k in $kernels; do
	echo "== $k: building profil.ko (W=1)"
	if ! "$top/scripts/build-kmod.sh" "$k"; then
		echo "not ok - build: profil.ko for $k with W=1"
		fail=$((fail + 1))
		continue
	fi
	pass=$((pass + 1))
	gate "$k: profil.ko imports no symbol that only Debian's kernels export" \
		"$b/exports-$k.log" sh -c "nm -u '$b/kmod/$k/kmod/profil.ko' |
		awk 'NR == FNR { sub(/.*:/, \"\"); bad[\$0] = 1; next }
		     \$2 in bad { print; n++ } END { exit n > 0 }' \
		'$top/scripts/debian-only-exports' -"
	echo "== $k: booting the guest (QEMU TCG)"
	log=$b/guest-$k.log
	# shellcheck disable=SC2086
	guest "$k" "$k" "$log" "${GUEST_TESTS-}" "${GUEST_NOMOD_TESTS-}" \
		"${GUEST_APPEND-}" $runs
	gate "$k: gprof reads a -pg program's gmon.out (exact calls, 60/30/10 time)" \
		"$b/gprof-$k.log" "$top/scripts/gprof-check.sh" "$log"
	gate "$k: gprof reads profil(1)'s gmon.out of an unmodified program (50:20 of its text)" \
		"$b/gprof-cmd-$k.log" "$top/scripts/gprof-check.sh" "$log" cmd
	gate "$k: go tool pprof reads profil report -f pprof of a record, the same functions and samples as its CSV" \
		"$b/pprof-$k.log" "$top/scripts/pprof-check.sh" "$log"
	[ -n "$truns" ] || continue
	echo "== $k: booting the guest with nohz_full=1"
	# shellcheck disable=SC2086
	guest "$k nohz_full" "$k" "$b/guest-$k-tickless.log" \
		"$GUEST_TICKLESS_TESTS" "" "${GUEST_APPEND-} nohz_full=1" $truns
done

echo "== make check took $(( $(date +%s) - start )) s"
echo "== $skip skipped"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
