#!/bin/sh
# fetch-kernel.sh META [SUITE]: a kernel of the matrix, the one the headers
# metapackage META (linux-headers-amd64, linux-headers-6.12-amd64) depends
# on, unpacked (never installed: the host's kernels, its boot loader and
# its packages stay as they are) into a root of its own under
# $PROFIL_KERNELS (default ~/.cache/profil-kernels): ROOT/boot/vmlinuz-KVER,
# ROOT/lib/modules/KVER with its modules and its build tree, and the
# packages themselves in ROOT/debs (make package-check installs the headers
# from there in a guest).  Prints KVER.
#
# Without SUITE the packages come from the host's apt sources (Debian 12,
# its security updates included): apt-cache names them, apt-get download
# fetches them.  With SUITE (make check's newest kernel: trixie-backports)
# they come from that suite of $DEBIAN_MIRROR, whose kbuild programs need
# its newer C library: that is unpacked too.
#
# The tree is made usable from here, and only for building profil.ko: its
# Makefile's /usr/src paths point into ROOT.  A newer SUITE's tree also:
# - builds with the host's gcc, not the suite's (gcc-14 for trixie);
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
meta=$1 suite=${2:-}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${PROFIL_KERNELS:-${XDG_CACHE_HOME:-$HOME/.cache}/profil-kernels}
gcc_lacks="CC_HAS_MIN_FUNCTION_ALIGNMENT CC_HAS_ASSUME CC_HAS_COUNTED_BY
	CC_HAS_COUNTED_BY_PTR CC_HAS_MULTIDIMENSIONAL_NONSTRING CC_HAS_NAMED_AS
	CC_HAS_NAMED_AS_FIXED_SANITIZERS USE_X86_SEG_SUPPORT"
me=fetch-kernel.sh
sandbox=
[ "$(id -u)" -ne 0 ] || sandbox=APT::Sandbox::User=root

mkdir -p "$cache"
tmp=$(mktemp -d "$cache/.new.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The suite's packages, and its base suite's (libc6 is not in backports).
if [ -n "$suite" ]; then
	for s in "$suite" "${suite%-backports}"; do
		curl -fsS --retry 3 -o "$tmp/Packages.xz" \
			"$mirror/dists/$s/main/binary-amd64/Packages.xz"
		xz -dc "$tmp/Packages.xz" >> "$tmp/Packages"
		echo >> "$tmp/Packages"
		[ "$s" != "${suite%-backports}" ] || break
	done
fi

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

# depends PKG: the names PKG depends on, one a line (alternatives too).
depends() {
	if [ -n "$suite" ]; then
		field "$1" Depends | tr ',|' '\n\n' | sed 's/^ *//; s/[ :].*//'
	else
		apt-cache depends --no-recommends --no-suggests --no-conflicts \
			--no-breaks --no-replaces --no-enhances "$1" 2>/dev/null |
			sed -n 's/^ *|\{0,1\}Depends: \([^<][^ ]*\)$/\1/p'
	fi
}

# known PKG: PKG is in the suite (or the host's apt sources).
known() {
	if [ -n "$suite" ]; then
		[ -n "$(field "$1" Filename)" ]
	else
		apt-cache show "$1" > /dev/null 2>&1
	fi
}

# fetch PKG: PKG's newest .deb into $tmp/debs.
fetch() {
	mkdir -p "$tmp/debs"
	if [ -n "$suite" ]; then
		curl -fsS --retry 3 -o "$tmp/debs/$1.deb" "$mirror/$(field "$1" Filename)"
	else
		# As root, apt fetches as root (not as _apt, who cannot write here).
		(cd "$tmp/debs" && apt-get download -q ${sandbox:+-o "$sandbox"} "$1" > /dev/null)
	fi
}

# suite_tree HDR: a newer suite's build tree made usable with Debian 12's
# toolchain.
suite_tree() {
	# Debian names its own compiler (gcc-14 for trixie); here it is gcc 12.
	sed -i 's/^CC = .*/CC = gcc/' "$1/.kernelvariables"
	# The kbuild programs through the suite's loader and libc.
	lib=$root/usr/lib/x86_64-linux-gnu
	for real in "$root"/usr/lib/linux-kbuild-*/scripts/mod/modpost.real-lsb-64 \
		    "$root"/usr/lib/linux-kbuild-*/tools/objtool/objtool.real-x86; do
		[ -e "$real" ] || continue
		mv "$real" "$real.bin"
		printf '#!/bin/sh\nexec %s/ld-linux-x86-64.so.2 --library-path %s %s.bin "$@"\n' \
			"$lib" "$lib" "$real" > "$real"
		chmod 755 "$real"
	done
	for o in $gcc_lacks; do
		sed -i "s/^CONFIG_$o=.*/# CONFIG_$o is not set/" "$1/include/config/auto.conf"
		sed -i "/^#define CONFIG_$o /d" "$1/include/generated/autoconf.h"
	done
	# No BTF step for the module (in kbuild's copy only: the C one keeps
	# the option, which gives struct module the fields the kernel expects).
	sed -i "s/^CONFIG_DEBUG_INFO_BTF_MODULES=.*/# CONFIG_DEBUG_INFO_BTF_MODULES is not set/" \
		"$1/include/config/auto.conf"
	pahole=$(sh "$1/scripts/pahole-version.sh" pahole 2>/dev/null || echo 0)
	sed -i "s/^CONFIG_PAHOLE_VERSION=.*/CONFIG_PAHOLE_VERSION=$pahole/" \
		"$1/include/config/auto.conf"
}

# META depends on linux-headers-KVER (= its version).
kver=$(depends "$meta" | sed -n 's/^linux-headers-\([0-9][^ ]*-amd64\)$/\1/p' | head -n 1)
[ -n "$kver" ] || { echo "$me: $meta names no kernel${suite:+ in $suite}" >&2; exit 1; }
root=$cache/$kver

# modules.dep, which guest-modules.sh reads: the packages do not ship it
# (their postinst runs depmod), so it is made here, and a cache that has
# none (an older fetch on a host without depmod) gets it now.  Without it
# the guest has no loop, ext4 or fuse modules, and their tests skip.
moddep() {
	[ -r "$root/lib/modules/$kver/modules.dep" ] && return 0
	depmod -b "$root" "$kver" && [ -r "$root/lib/modules/$kver/modules.dep" ] ||
		{ echo "$me: depmod -b $root $kver failed (kmod installed?)" >&2; exit 1; }
}

if [ -e "$root/.profil-done" ]; then
	moddep
	echo "$kver"
	exit 0
fi
echo "$me: $kver ($meta${suite:+ of $suite}) into $root" >&2

# The headers with the packages they need of the same kernel (the common
# headers, kbuild, the compiler metapackage: all of them in ROOT/debs are
# what dpkg -i needs to install the headers on Debian 12), and the image:
# one package up to Debian 12, the kernel and its modules apart since
# trixie.
pkgs="linux-headers-$kver $(depends "linux-headers-$kver" |
	grep -E '^linux-(headers-.*-common|kbuild-|compiler-)' | sort -u)"
if known "linux-modules-$kver"; then
	pkgs="$pkgs linux-binary-$kver linux-modules-$kver"
else
	pkgs="$pkgs linux-image-$kver"
fi
[ -z "$suite" ] || pkgs="$pkgs libc6"
for p in $pkgs; do
	known "$p" || { echo "$me: no $p${suite:+ in $suite}" >&2; exit 1; }
	fetch "$p"
done
rm -rf "$root"
mkdir -p "$root"
for d in "$tmp"/debs/*.deb; do
	dpkg-deb -x "$d" "$root"
done
mv "$tmp/debs" "$root/debs"

# Since trixie, modules are in /usr/lib/modules.
[ -e "$root/lib" ] || ln -s usr/lib "$root/lib"

# The kernel image may come as /boot/vmlinuz-KVER or under /usr/lib.
if [ ! -e "$root/boot/vmlinuz-$kver" ]; then
	mkdir -p "$root/boot"
	img=$(find "$root" -name "vmlinuz*" -type f | head -n 1)
	[ -n "$img" ] || { echo "$me: no vmlinuz for $kver" >&2; exit 1; }
	mv "$img" "$root/boot/vmlinuz-$kver"
fi

hdr=$root/usr/src/linux-headers-$kver
sed -i "s#/usr/src/#$root/usr/src/#g" "$hdr/Makefile"
ln -sfn "$root/usr/src/linux-headers-$kver" "$root/lib/modules/$kver/build"
if [ -n "$suite" ]; then suite_tree "$hdr"; fi

moddep
touch "$root/.profil-done"
echo "$kver"
