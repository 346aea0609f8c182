#!/bin/sh
# make check-debug: the selftests under a kernel with the bug detectors on
# (KASAN, UBSAN, lockdep, PROVE_RCU, DEBUG_ATOMIC_SLEEP, kmemleak, DEBUG_VM,
# fault injection; scripts/debug-kernel.config), built once into a cache
# (scripts/debug-kernel.sh).  The guest runs what make check runs; the
# count (scripts/count-tap.sh) fails on any KASAN, UBSAN, lockdep, RCU,
# sleep-in-atomic, WARN or kmemleak line, and on unbalanced pins.  The last
# line is "N passed, N failed".
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
b=$top/build
log=$b/guest-debug.log
pass=0 fail=0 skip=0
start=$(date +%s)

if ! kdir=$("$top/scripts/debug-kernel.sh"); then
	echo "not ok - debug kernel: build failed"
	echo "0 passed, 1 failed"
	exit 1
fi
echo "== debug kernel: $kdir ($(( $(date +%s) - start )) s)"
if KDIR=$kdir "$top/scripts/build-kmod.sh" debug; then
	pass=$((pass + 1))
	rm -f "$log"
	rc=0
	# The churn at scale: 1000 processes (lifecycle_test).
	PROFIL_CHURN=${PROFIL_CHURN:-1000} \
	GUEST_KERNEL=$kdir/arch/x86/boot/bzImage GUEST_MEM=2048 \
		GUEST_TIMEOUT=${GUEST_TIMEOUT:-3000} \
		"$top/scripts/guest-run.sh" debug check "$log" || rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "not ok - debug: guest-run.sh failed with status $rc (see $log)"
		fail=$((fail + 1))
	fi
	grep -E '^not ok ' "$log" 2>/dev/null | sed "s/^/   [debug] /"
	runs=
	for t in ${GUEST_TESTS-} ${GUEST_NOMOD_TESTS-}; do
		runs="$runs root:$t user:$t"
	done
	# The guest's checks and kmemleak's scans.
	# shellcheck disable=SC2086
	counts=$(SKIP_KERNEL=debug GUEST_CHECKS_MORE="kmemleak scanned" \
		"$top/scripts/count-tap.sh" "$log" $runs | sed "s/^not ok/   [debug] not ok/")
	echo "$counts" | sed '$d'
	# shellcheck disable=SC2046
	set -- $(echo "$counts" | tail -n 1)
	pass=$((pass + ${1:-0})) fail=$((fail + ${2:-1})) skip=$((skip + ${3:-0}))
else
	echo "not ok - build: profil.ko for the debug kernel with W=1"
	fail=$((fail + 1))
fi
echo "== make check-debug took $(( $(date +%s) - start )) s"
echo "== $skip skipped"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
