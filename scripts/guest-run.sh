#!/bin/sh
# guest-run.sh KVER MODE LOG: boot Debian's kernel KVER under QEMU (TCG:
# KVM aborts on these hosts) with an initramfs holding profil.ko built for
# it, the library and the selftests; the console goes to LOG.
set -eu
kver=$1 mode=$2 log=$3
top=$(cd "$(dirname "$0")/.." && pwd)
b=$top/build
initrd=$b/initramfs-$kver.cpio.gz

KVER=$kver "$top/scripts/mkinitramfs.sh" "$initrd" "$b/kmod/$kver/kmod/profil.ko" \
	"$top/lib/libprofil.so.0" "$b/selftests/profil_test" \
	"$b/selftests/nomod_test" "$b/selftests/lifecycle_test" \
	"$b/selftests/pin_test" \
	"$b/selftests/exec_helper" "$b/selftests/perfhold" \
	"$b/selftests/runas" "$b/demo/hotspots" "$b/bench/forkcost" \
	"$b/selftests/probe_dynamic" "$b/selftests/probe_static" \
	"$b/selftests/probe_glibc"

# boot: one guest run, console to LOG with the CRs dropped.
boot() {
	timeout --foreground 900 qemu-system-x86_64 -accel tcg -cpu max -smp 2 \
		-m 1024 -nographic -no-reboot -monitor none -serial stdio \
		-kernel "/boot/vmlinuz-$kver" -initrd "$initrd" \
		-append "console=ttyS0 quiet panic=-1 oops=panic profil.mode=$mode" \
		< /dev/null > "$log" 2>&1 || true
	tr -d '\r' < "$log" > "$log.tmp" && mv "$log.tmp" "$log"
}

# A kernel that dies before /init says a word (TCG's SMP text patching
# now and then trips an int3 at boot on a loaded host) has run nothing of
# ours: boot it again, at most twice, and keep the failed log.
for try in 1 2 3; do
	boot
	grep -q '@@ guest ' "$log" && break
	cp "$log" "$log.boot$try"
	echo "   (guest $kver died while booting, before /init; see $log.boot$try)"
done
