#!/bin/sh
# debug-kernel.sh: build the debug kernel of make check-debug once, into
# $PROFIL_DEBUG_CACHE (default ~/.cache/profil-debug-kernel), from Debian's
# linux-source-6.1 with defconfig + kvm_guest.config +
# scripts/debug-kernel.config, and without the exports Debian adds for
# binder ("Export symbols needed by binder", Debian bug #901492), so that
# the module is proven on a kernel that exports only what upstream does;
# rebuilt only when the fragment, that list or the source changes.  Prints
# the build directory (a KDIR for the module, with arch/x86/boot/bzImage).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cache=${PROFIL_DEBUG_CACHE:-$HOME/.cache/profil-debug-kernel}
tarball=$(ls /usr/src/linux-source-6.1.tar.xz /usr/src/linux-source-6.1[!0-9]*.tar.xz 2>/dev/null | sort -V | tail -n 1)
[ -n "$tarball" ] || { echo "linux-source-6.1 is not installed (make deps)" >&2; exit 1; }
frag=$top/scripts/debug-kernel.config
# FILE:SYMBOL, each an EXPORT_SYMBOL_GPL(SYMBOL); line that Debian's
# linux-source-6.1 has and upstream 6.1 does not (make check's gate reads
# the same list).
debian_exports=$(cat "$top/scripts/debian-only-exports")
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
