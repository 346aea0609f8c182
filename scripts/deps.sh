#!/bin/sh
# deps.sh [bench|package|linux-source-6.12]: install what make check and
# make demo need on Debian 12, by metapackage, and only what is missing,
# then unpack the kernels of the matrix (scripts/kernels.sh: their images,
# modules and build trees, from the same apt sources) into a cache: no
# kernel is installed on the host, so its boot loader and default kernel
# stay as they were.  With "bench", also what make bench needs (perf,
# clang and libbpf for the BPF sampler, gnuplot); with "package", what
# make package-check needs (debhelper, dkms, lintian, pkg-config); with
# "linux-source-6.12", the source of make check-debug DEBUG_KERNEL=6.12.
# Needs root (or sudo) when anything is.
set -eu
pkgs="linux-source-6.1 qemu-system-x86 busybox-static pahole
gcc g++ make libc6-dev mandoc cpio gzip xz-utils perl binutils
flex bison bc libelf-dev libssl-dev libdw-dev linux-perf curl python3
libc6-i386 libprotobuf-c-dev protobuf-c-compiler zlib1g-dev golang-go
libc6-dbg kmod"
case ${1:-} in
bench)	pkgs="$pkgs clang llvm libbpf-dev bpftool gnuplot-nox" ;;
package) pkgs="$pkgs debhelper dh-dkms dpkg-dev dkms lintian pkgconf fakeroot" ;;
linux-source-6.12) pkgs="$pkgs linux-source-6.12" ;;
esac

missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
		grep -q '^install ok installed$' || missing="$missing $p"
done
sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
if [ -n "$missing" ]; then
	echo "deps: installing$missing"
	$sudo apt-get update -q
	# shellcheck disable=SC2086
	$sudo apt-get install -y -q --no-install-recommends $missing
elif ! apt-cache show linux-headers-amd64 > /dev/null 2>&1; then
	$sudo apt-get update -q		# for the kernels' packages
fi
"$(dirname "$0")/kernels.sh" > /dev/null
