#!/bin/sh
# kernels.sh: the kernel matrix, every installed kernel with both a vmlinuz
# and a build tree, oldest first.
# kernels.sh --root KVER: the root KVER's /boot and /lib/modules are under:
# empty for an installed kernel, the unpacked tree of newest-kernel.sh
# for Debian's newest.
if [ "${1-}" = --root ]; then
	cache=${PROFIL_KERNELS:-${XDG_CACHE_HOME:-$HOME/.cache}/profil-kernels}
	if [ ! -d "/lib/modules/$2/build" ] && [ -e "$cache/$2/.profil-done" ]; then
		echo "$cache/$2"
	fi
	exit 0
fi
for b in /lib/modules/*/build; do
	[ -d "$b" ] || continue
	k=$(basename "$(dirname "$b")")
	[ -e "/boot/vmlinuz-$k" ] && echo "$k"
done | sort -V
