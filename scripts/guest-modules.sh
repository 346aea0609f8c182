#!/bin/sh
# guest-modules.sh KVER DIR: copy the kernel modules the tests' filesystems
# need (loop.ko, ext4.ko with its dependencies and the crc32c it asks
# the crypto API for, for an ext2 image, and fuse.ko for writer_test) from
# Debian's /lib/modules/KVER (under scripts/kernels.sh's root) into DIR, uncompressed, with DIR/order listing
# them in the order insmod takes them ($GUEST_KMODS names others: make
# package-check's install, 9p and overlayfs).  A module the kernel builds in, or
# does not have, is left out: the tests that need it skip.
set -eu
kver=$1 dir=$2
mods=$("$(dirname "$0")/kernels.sh" --root "$kver")/lib/modules/$kver
mkdir -p "$dir"
: > "$dir/order"
[ -r "$mods/modules.dep" ] || exit 0	# a kernel of our own: built in
for want in ${GUEST_KMODS:-loop crc32c_generic ext4 fuse}; do
	line=$(grep -E "/$want\.ko(\.xz|\.zst)?:" "$mods/modules.dep" || true)
	[ -n "$line" ] || continue
	# modules.dep: "mod: dep1 dep2 ..." with the deepest dependency last.
	for m in $(echo "$line" | tr -d ':' | awk '{ for (i = NF; i > 0; i--) print $i }'); do
		name=$(basename "$m" | sed -E 's/\.ko(\.xz|\.zst)?$//')
		grep -qx "$name" "$dir/order" && continue
		case "$m" in
		*.xz) xz -dc "$mods/$m" > "$dir/$name.ko" ;;
		*.zst) zstd -qdc "$mods/$m" > "$dir/$name.ko" ;;
		*) cp "$mods/$m" "$dir/$name.ko" ;;
		esac
		echo "$name" >> "$dir/order"
	done
done
