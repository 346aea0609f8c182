#!/bin/sh
# kernels.sh: the kernel matrix, oldest first: the kernels Debian 12's
# headers metapackages name ($PROFIL_KERNEL_METAS, default
# linux-headers-amd64 and linux-headers-6.12-amd64, as the host's apt
# sources resolve them), each unpacked by fetch-kernel.sh into a cache
# (fetched the first time, never installed).  make check adds Debian's
# newest kernel (fetch-kernel.sh linux-headers-amd64 trixie-backports).
# kernels.sh --root KVER: the root KVER's /boot and /lib/modules are
# under (the cache's tree for KVER; empty for a kernel installed on the
# host, for KVER=... with a kernel the cache does not have).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1-}" = --root ]; then
	cache=${PROFIL_KERNELS:-${XDG_CACHE_HOME:-$HOME/.cache}/profil-kernels}
	if [ -e "$cache/$2/.profil-done" ]; then
		echo "$cache/$2"
	fi
	exit 0
fi
# A kernel that cannot be fetched fails the list: no matrix without it.
list=
for m in ${PROFIL_KERNEL_METAS:-linux-headers-amd64 linux-headers-6.12-amd64}; do
	list="$list $("$top/scripts/fetch-kernel.sh" "$m")"
done
printf '%s\n' $list | sort -V
