#!/bin/sh
# make check-debug: the selftests under a kernel with the bug detectors on
# (KASAN, UBSAN, lockdep, PROVE_RCU, DEBUG_ATOMIC_SLEEP, kmemleak, DEBUG_VM,
# fault injection; scripts/debug-kernel.config), built once into a cache
# (scripts/debug-kernel.sh) from Debian's linux-source-$DEBUG_KERNEL: 6.1
# by default (CI), 6.12 with DEBUG_KERNEL=6.12.  The guest runs what make
# check runs, profil(1)'s tests too, told by profil.debug=1 that its
# kernel is this one (PROFIL_DEBUG_KERNEL=1: the checks of a profile
# against the truth that its speed moves loosen, each saying so in
# selftests/profil_cmd_test.c).  The count (scripts/count-tap.sh) fails
# on any KASAN, UBSAN, lockdep, RCU, sleep-in-atomic, WARN or kmemleak
# line, and on unbalanced pins.  The last line is "N passed, N failed".
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
b=$top/build
series=${DEBUG_KERNEL:-6.1}
# The guest's name: its module's build tree, initramfs and log.
name=debug
[ "$series" = 6.1 ] || name=debug-$series
log=$b/guest-$name.log
pass=0 fail=0 skip=0
start=$(date +%s)

if ! kdir=$(DEBUG_KERNEL=$series "$top/scripts/debug-kernel.sh"); then
	echo "not ok - debug kernel $series: build failed"
	echo "0 passed, 1 failed"
	exit 1
fi
echo "== debug kernel $series: $kdir ($(( $(date +%s) - start )) s)"
if KDIR=$kdir "$top/scripts/build-kmod.sh" "$name"; then
	pass=$((pass + 1))
	rm -f "$log"
	rc=0
	# The churn at scale: 1000 processes (lifecycle_test).
	PROFIL_CHURN=${PROFIL_CHURN:-1000} \
	GUEST_KERNEL=$kdir/arch/x86/boot/bzImage GUEST_MEM=2048 \
		GUEST_TIMEOUT=${GUEST_TIMEOUT:-3000} \
		GUEST_APPEND="profil.debug=1 ${GUEST_APPEND-}" \
		"$top/scripts/guest-run.sh" "$name" check "$log" || rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "not ok - $name: guest-run.sh failed with status $rc (see $log)"
		fail=$((fail + 1))
	fi
	sh "$top/scripts/tap-failures.sh" "$name" "$log"
	runs=
	for t in ${GUEST_TESTS-} ${GUEST_NOMOD_TESTS-}; do
		runs="$runs root:$t user:$t"
	done
	# The guest's checks and kmemleak's scans.
	# shellcheck disable=SC2086
	counts=$(SKIP_KERNEL=debug GUEST_CHECKS_MORE="kmemleak scanned" \
		"$top/scripts/count-tap.sh" "$log" $runs | sed "s/^not ok/   [$name] not ok/")
	echo "$counts" | sed '$d'
	# shellcheck disable=SC2046
	set -- $(echo "$counts" | tail -n 1)
	pass=$((pass + ${1:-0})) fail=$((fail + ${2:-1})) skip=$((skip + ${3:-0}))
else
	echo "not ok - build: profil.ko for the debug kernel $series with W=1"
	fail=$((fail + 1))
fi
echo "== make check-debug took $(( $(date +%s) - start )) s"
echo "== $skip skipped"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
