#!/bin/sh
# deps.sh [bench|package|linux-source-6.12]: install what make check and
# make demo need on Debian 12, by metapackage, and only what is missing;
# with "bench", also what make bench needs (perf, clang and libbpf for the
# BPF sampler, gnuplot); with "package", what make package-check needs
# (debhelper, dkms, lintian, pkg-config); with "linux-source-6.12", the
# source of make check-debug DEBUG_KERNEL=6.12.  Needs root (or sudo) when
# anything is.
set -eu
pkgs="linux-image-amd64 linux-headers-amd64 linux-image-6.12-amd64
linux-headers-6.12-amd64 linux-source-6.1 qemu-system-x86 busybox-static
gcc g++ make libc6-dev mandoc cpio gzip xz-utils perl binutils
flex bison bc libelf-dev libssl-dev libdw-dev linux-perf curl python3
libc6-i386"
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
[ -n "$missing" ] || exit 0

echo "deps: installing$missing"
sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
# shellcheck disable=SC2086
$sudo apt-get install -y -q --no-install-recommends $missing
