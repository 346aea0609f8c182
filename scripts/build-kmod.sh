#!/bin/sh
# build-kmod.sh KVER: profil.ko for KVER in build/kmod/KVER with W=1;
# prints the compiler's warnings, fails on any.  KDIR overrides the kernel
# build tree (/lib/modules/KVER/build, under scripts/kernels.sh's root).
set -eu
kver=$1
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/kmod/$kver
rm -rf "$out"
mkdir -p "$out"
cp -r "$top/Kbuild" "$top/kmod" "$top/uapi" "$out/"
kroot=$("$top/scripts/kernels.sh" --root "$kver")
make -s -C "${KDIR:-$kroot/lib/modules/$kver/build}" M="$out" W=1 modules > "$out/build.log" 2>&1 ||
	{ cat "$out/build.log"; exit 1; }
if grep -E 'warning:|error:' "$out/build.log"; then
	exit 1
fi
