#!/bin/sh
# guest-run.sh KVER MODE LOG: boot Debian's kernel KVER under QEMU (TCG:
# KVM aborts on these hosts) with an initramfs holding profil.ko built for
# it, the library, the selftests named in $GUEST_TESTS, $GUEST_NOMOD_TESTS
# and $GUEST_HELPERS (the Makefile's lists), the demo, the benchmarks,
# profil(1) with its agent, perf (for profil_cmd_test's reference) and the
# Debian programs and files that test uses (xz, gzip, dash, and what
# scripts/guest-files.sh lists: Python 3, a gconv module);
# the console goes to LOG, which starts empty.  Exits non-zero when the
# initramfs cannot be made, or QEMU fails or times out ($GUEST_TIMEOUT
# seconds, default 600, for all boots together; killed 10 s later if it
# does not stop).
# GUEST_KERNEL names another kernel image than /boot/vmlinuz-KVER (under
# scripts/kernels.sh's root for KVER; the
# debug kernel of make check-debug).  GUEST_EXTRA names more files for
# /opt/profil (make bench: its programs and perf), GUEST_APPEND more
# words for the kernel command line.  GUEST_KO names another profil.ko
# (make package-check: the one dkms built).  In MODE package and install
# the initramfs holds only GUEST_EXTRA's files and GUEST_ROOT's tree (the
# extracted packages, at their own paths), none of the build tree's.
# PROFIL_FUZZ_SEED, when set, is fuzz_test's seed (profil.seed=); unset,
# each run of it draws its own and prints it.
# GUEST_QEMU_MORE gives QEMU more options (make package-check's install:
# the host's root, read-only over 9p), GUEST_KMODS the kernel's modules
# to load (scripts/guest-modules.sh).
set -eu
kver=$1 mode=$2 log=$3
top=$(cd "$(dirname "$0")/.." && pwd)
b=$top/build
initrd=$b/initramfs-$kver.cpio.gz
limit=${GUEST_TIMEOUT:-600}
end=$(( $(date +%s) + limit ))
kernel=${GUEST_KERNEL:-$("$top/scripts/kernels.sh" --root "$kver")/boot/vmlinuz-$kver}

rm -f "$log" "$log".boot*
lists=$(mktemp -d)
trap 'rm -rf "$lists"' EXIT
echo ${GUEST_TESTS-} > "$lists/tests"
echo ${GUEST_NOMOD_TESTS-} > "$lists/nomod-tests"
ko=${GUEST_KO:-$b/kmod/$kver/kmod/profil.ko}
# make package-check's install: dkms builds the module in the guest.
[ "$mode" != install ] || ko=
files=
if [ "$mode" != package ] && [ "$mode" != install ]; then
	files="$top/lib/libprofil.so.0 $lists/tests $lists/nomod-tests
		$b/demo/hotspots $b/demo/callgraph $b/demo/callgraph-plain
		$b/bench/forkcost $b/bench/regions $b/tools/profil
		$b/tools/profil-agent.so $b/tools/profil-agent32.so
		$(command -v perf || true)
		$(command -v xz) $(command -v gzip) $(command -v dash)
		$("$top/scripts/guest-files.sh")"
	for t in ${GUEST_TESTS-} ${GUEST_NOMOD_TESTS-} ${GUEST_HELPERS-}; do
		files="$files $b/selftests/$t"
	done
fi
# shellcheck disable=SC2086
KVER=$kver "$top/scripts/mkinitramfs.sh" "$initrd" "$ko" $files ${GUEST_EXTRA-}

# boot: one guest run, console to LOG with the CRs dropped; QEMU's status.
# tsc=reliable: TCG's TSC follows QEMU's virtual clock, and the clocksource
# watchdog, comparing it with the HPET under load, would switch clocksource
# in the middle of a run; 7.3 once took an int3 oops in timekeeping while
# that switch patched the kernel's text.
boot() {
	rc=0
	left=$(( end - $(date +%s) ))
	[ "$left" -gt 0 ] || return 124
	# shellcheck disable=SC2086 # GUEST_QEMU_MORE: words
	timeout -k 10 "$left" qemu-system-x86_64 -accel tcg -cpu max -smp 2 \
		-m "${GUEST_MEM:-1024}" -nodefaults -nic none -display none -serial stdio \
		-no-reboot -kernel "$kernel" -initrd "$initrd" ${GUEST_QEMU_MORE-} \
		-append "console=ttyS0 quiet panic=-1 oops=panic tsc=reliable profil.mode=$mode ${PROFIL_FUZZ_SEED:+profil.seed=$PROFIL_FUZZ_SEED} profil.churn=${PROFIL_CHURN:-240} ${GUEST_APPEND-}" \
		< /dev/null > "$log" 2>&1 || rc=$?
	tr -d '\r' < "$log" > "$log.tmp" && mv "$log.tmp" "$log"
	return "$rc"
}

# A kernel that dies before /init says a word (TCG's SMP text patching
# now and then trips an int3 at boot on a loaded host), or that /init
# finds has reported an error of its own while booting ("@@ boot error"),
# has run nothing of ours: boot it again, at most twice, keep the failed
# log and show its errors.
for try in 1 2 3; do
	rc=0
	boot || rc=$?
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "   (guest $kver timed out after $limit s; see $log)"
		exit "$rc"
	fi
	if grep -q '^@@ boot error' "$log"; then
		cp "$log" "$log.boot$try"
		echo "   (guest $kver reported a kernel error while booting, before profil.ko was loaded; see $log.boot$try)"
		sed -n '/^@@ boot error/,$p' "$log" | grep -E -A 16 -f "$top/scripts/kernel-errors.ere" |
			head -n 40 | sed 's/^/   | /'
		continue
	fi
	grep -q '@@ guest ' "$log" && exit "$rc"
	cp "$log" "$log.boot$try"
	echo "   (guest $kver died while booting, before /init; see $log.boot$try)"
done
exit 1
