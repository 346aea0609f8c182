#!/bin/sh
# The kernel matrix: every installed kernel with both a vmlinuz and a
# build tree, oldest first.
for b in /lib/modules/*/build; do
	[ -d "$b" ] || continue
	k=$(basename "$(dirname "$b")")
	[ -e "/boot/vmlinuz-$k" ] && echo "$k"
done | sort -V
