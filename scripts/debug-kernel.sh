#!/bin/sh
# debug-kernel.sh: build the debug kernel of make check-debug once, from
# Debian's linux-source-$DEBUG_KERNEL (6.1, the default, or 6.12) with
# defconfig + kvm_guest.config + scripts/debug-kernel.config, and without
# the exports Debian adds for binder ("Export symbols needed by binder",
# Debian bug #901492; scripts/debian-only-exports, by series), so that the
# module is proven on a kernel that exports only what upstream does; into
# $PROFIL_DEBUG_CACHE (default ~/.cache/profil-debug-kernel for 6.1,
# ~/.cache/profil-debug-kernel-6.12 for 6.12); rebuilt only when the
# fragment, that list or the source changes.  Prints the build directory
# (a KDIR for the module, with arch/x86/boot/bzImage).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
series=${DEBUG_KERNEL:-6.1}
case $series in
6.1) cache=${PROFIL_DEBUG_CACHE:-$HOME/.cache/profil-debug-kernel} ;;
6.12) cache=${PROFIL_DEBUG_CACHE:-$HOME/.cache/profil-debug-kernel-6.12} ;;
*) echo "DEBUG_KERNEL=$series: 6.1 or 6.12" >&2; exit 1 ;;
esac
# The name, not a pattern: linux-source-6.1* would take 6.12's.
tarball=/usr/src/linux-source-$series.tar.xz
[ -e "$tarball" ] || { echo "linux-source-$series is not installed (make deps)" >&2; exit 1; }
frag=$top/scripts/debug-kernel.config
# FILE:SYMBOL, each an EXPORT_SYMBOL_GPL(SYMBOL); line that Debian's
# linux-source-$series has and upstream $series does not: the lines of
# scripts/debian-only-exports that start with the series (make check's
# gate reads every symbol of that list).
debian_exports=$(awk -v s="$series" '$1 == s { print $2 }' \
	"$top/scripts/debian-only-exports")
[ -n "$debian_exports" ] || { echo "debug kernel: no exports listed for $series" >&2; exit 1; }
stamp=$( (cat "$frag"; echo "$debian_exports"; ls -l "$tarball") |
	sha256sum | cut -c1-16)
src=$cache/$(basename "$tarball" .tar.xz)
out=$cache/build-$stamp

if [ -e "$out/.profil-done" ]; then
	echo "$out"
	exit 0
fi
mkdir -p "$cache"
if [ ! -e "$src/.profil-unpacked" ]; then
	rm -rf "$src"
	tar -C "$cache" -xJf "$tarball"
	touch "$src/.profil-unpacked"
fi
# Take Debian's binder exports back out (idempotent: the source is shared).
for fe in $debian_exports; do
	f=${fe%%:*} sym=${fe#*:}
	sed -i "/^EXPORT_SYMBOL_GPL($sym);\$/d" "$src/$f"
	if grep -q "^EXPORT_SYMBOL[_A-Z]*($sym);" "$src/$f"; then
		echo "debug kernel: $sym still exported by $f" >&2
		exit 1
	fi
done
mkdir -p "$out"
make -s -C "$src" O="$out" defconfig kvm_guest.config >&2
"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$frag" >&2
make -s -C "$src" O="$out" olddefconfig >&2
# Every option of the fragment must have survived olddefconfig.
grep -E '^CONFIG_[A-Z0-9_]+=y' "$frag" | while read -r opt; do
	grep -qx "$opt" "$out/.config" || { echo "debug kernel: $opt did not take" >&2; exit 1; }
done
make -s -C "$src" O="$out" -j"$(nproc)" bzImage modules >&2
touch "$out/.profil-done"
echo "$out"
