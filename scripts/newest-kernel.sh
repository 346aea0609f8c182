#!/bin/sh
# newest-kernel.sh: Debian's newest kernel for the matrix of make check,
# the one linux-image-amd64 and linux-headers-amd64 name in
# $NEWEST_SUITE (default trixie-backports), unpacked (never installed:
# the host's own kernels and packages stay as they are) into a root of
# its own under $PROFIL_KERNELS (default ~/.cache/profil-kernels):
# ROOT/boot/vmlinuz-KVER, ROOT/lib/modules/KVER with its modules and
# its build tree.  Prints KVER; scripts/kernels.sh finds the root.
#
# The tree is made usable from here, and only for building profil.ko:
# - its Makefile's /usr/src paths point into ROOT, and it builds with
#   the host's gcc, not the suite's (gcc-14 for trixie);
# - its kbuild programs (modpost, objtool), linked against the suite's
#   newer glibc, run through the suite's own dynamic loader;
# - options that say what the kernel's compiler (the suite's gcc) can do
#   and Debian 12's gcc 12 cannot are turned off in the copy of its
#   configuration that builds modules (include/config/auto.conf and
#   include/generated/autoconf.h); they change attributes and flags
#   (counted_by, __seg_gs per-CPU access, function alignment), not the
#   layout of a structure or the ABI of a call.  BTF for modules needs a
#   newer pahole than Debian 12's: kbuild skips that step (and records
#   the host's pahole version, so that it does not warn of it).
set -eu
suite=${NEWEST_SUITE:-trixie-backports}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${PROFIL_KERNELS:-${XDG_CACHE_HOME:-$HOME/.cache}/profil-kernels}
gcc_lacks="CC_HAS_MIN_FUNCTION_ALIGNMENT CC_HAS_ASSUME CC_HAS_COUNTED_BY
	CC_HAS_COUNTED_BY_PTR CC_HAS_MULTIDIMENSIONAL_NONSTRING CC_HAS_NAMED_AS
	CC_HAS_NAMED_AS_FIXED_SANITIZERS USE_X86_SEG_SUPPORT"

mkdir -p "$cache"
tmp=$(mktemp -d "$cache/.new.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The suite's packages, and its base suite's (libc6 is not in backports).
for s in "$suite" "${suite%-backports}"; do
	curl -fsS --retry 3 -o "$tmp/Packages.xz" \
		"$mirror/dists/$s/main/binary-amd64/Packages.xz"
	xz -dc "$tmp/Packages.xz" >> "$tmp/Packages"
	echo >> "$tmp/Packages"
	[ "$s" != "${suite%-backports}" ] || break
done

# field PKG FIELD: FIELD of the newest version of PKG in the suite.
field() {
	awk -v RS= -v p="$1" -v f="$2" '
		{ n = split($0, l, "\n"); pkg = ""; val = ""; ver = ""
		  for (i = 1; i <= n; i++) {
			if (l[i] ~ "^Package: ") pkg = substr(l[i], 10)
			if (l[i] ~ "^Version: ") ver = substr(l[i], 10)
			if (l[i] ~ "^" f ": ") val = substr(l[i], length(f) + 3)
		  }
		  if (pkg == p) print ver "\t" val }' "$tmp/Packages" |
	sort -V | tail -n 1 | cut -f 2
}

# linux-headers-amd64 depends on linux-headers-KVER (= its version).
kver=$(field linux-headers-amd64 Depends | tr ',' '\n' |
	sed -n 's/^ *linux-headers-\([0-9][^ ]*-amd64\) .*/\1/p' | head -n 1)
[ -n "$kver" ] || { echo "newest-kernel.sh: no linux-headers-amd64 in $suite" >&2; exit 1; }
root=$cache/$kver
if [ -e "$root/.profil-done" ]; then
	echo "$kver"
	exit 0
fi
kbase=${kver%-amd64}
rm -rf "$root"
mkdir -p "$root"
for p in "linux-headers-$kver" "linux-headers-$kbase-common" \
	 "linux-kbuild-$kbase" "linux-binary-$kver" "linux-modules-$kver" libc6; do
	f=$(field "$p" Filename)
	[ -n "$f" ] || { echo "newest-kernel.sh: no $p in $suite" >&2; exit 1; }
	curl -fsS --retry 3 -o "$tmp/p.deb" "$mirror/$f"
	dpkg-deb -x "$tmp/p.deb" "$root"
done

# Since trixie, modules are in /usr/lib/modules.
[ -e "$root/lib" ] || ln -s usr/lib "$root/lib"

# The kernel image may come as /boot/vmlinuz-KVER or under /usr/lib.
if [ ! -e "$root/boot/vmlinuz-$kver" ]; then
	mkdir -p "$root/boot"
	img=$(find "$root" -name "vmlinuz*" -type f | head -n 1)
	[ -n "$img" ] || { echo "newest-kernel.sh: no vmlinuz in linux-binary-$kver" >&2; exit 1; }
	mv "$img" "$root/boot/vmlinuz-$kver"
fi

hdr=$root/usr/src/linux-headers-$kver
sed -i "s#/usr/src/#$root/usr/src/#g" "$hdr/Makefile"
# Debian names its own compiler (gcc-14 for trixie); here it is Debian 12's.
sed -i 's/^CC = .*/CC = gcc/' "$hdr/.kernelvariables"
ln -sfn "$root/usr/src/linux-headers-$kver" "$root/lib/modules/$kver/build"

# The kbuild programs through the suite's loader and libc.
lib=$root/usr/lib/x86_64-linux-gnu
for real in "$root/usr/lib/linux-kbuild-$kbase/scripts/mod/modpost.real-lsb-64" \
	    "$root/usr/lib/linux-kbuild-$kbase/tools/objtool/objtool.real-x86"; do
	[ -e "$real" ] || continue
	mv "$real" "$real.bin"
	printf '#!/bin/sh\nexec %s/ld-linux-x86-64.so.2 --library-path %s %s.bin "$@"\n' \
		"$lib" "$lib" "$real" > "$real"
	chmod 755 "$real"
done

for o in $gcc_lacks; do
	sed -i "s/^CONFIG_$o=.*/# CONFIG_$o is not set/" "$hdr/include/config/auto.conf"
	sed -i "/^#define CONFIG_$o /d" "$hdr/include/generated/autoconf.h"
done

# No BTF step for the module (in kbuild's copy only: the C one keeps the
# option, which gives struct module the fields the kernel expects).
sed -i "s/^CONFIG_DEBUG_INFO_BTF_MODULES=.*/# CONFIG_DEBUG_INFO_BTF_MODULES is not set/" \
	"$hdr/include/config/auto.conf"
pahole=$(sh "$hdr/scripts/pahole-version.sh" pahole 2>/dev/null || echo 0)
sed -i "s/^CONFIG_PAHOLE_VERSION=.*/CONFIG_PAHOLE_VERSION=$pahole/" \
	"$hdr/include/config/auto.conf"

# modules.dep for guest-modules.sh comes with the modules package.
[ -r "$root/lib/modules/$kver/modules.dep" ] ||
	depmod -b "$root" "$kver" 2>/dev/null || true
touch "$root/.profil-done"
echo "$kver"
