#!/bin/sh
# mkinitramfs.sh OUT KO FILE...: a busybox initramfs holding profil.ko as
# /opt/profil/profil.ko (none with KO ""), the given programs in
# /opt/profil (a FILE written =PATH: at PATH), the shared libraries they
# need, and
# scripts/guest-init.sh as /init.  With KVER set,
# also the modules the tests' filesystems need (scripts/guest-modules.sh)
# in /opt/profil/kmods.  With GUEST_ROOT set, that tree too, at its own
# paths (make package-check: the extracted packages).
set -eu
out=$1 ko=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
chmod 755 "$root"

mkdir -p "$root/bin" "$root/opt/profil" "$root/proc" "$root/sys" \
	 "$root/dev" "$root/tmp" "$root/etc"
cp /bin/busybox "$root/bin/busybox"
for applet in $(/bin/busybox --list); do
	[ "$applet" = busybox ] || ln -sf busybox "$root/bin/$applet"
done
ln -s bin "$root/sbin"
printf 'root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n' \
	> "$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$root/etc/group"
[ -z "$ko" ] || cp "$ko" "$root/opt/profil/profil.ko"
cp "$here/guest-init.sh" "$root/init"
cp "$here/kernel-errors.ere" "$root/kernel-errors.ere"
[ -z "${KVER:-}" ] || "$here/guest-modules.sh" "$KVER" "$root/opt/profil/kmods"
chmod 755 "$root/init"

for f in "$@"; do
	case $f in
	=*)	# Its times too: Python's compiled modules are valid only
		# for a source of the same time and size.
		f=${f#=}
		mkdir -p "$root$(dirname "$f")"
		cp -pL "$f" "$root$f" ;;
	*)	cp -L "$f" "$root/opt/profil/" ;;
	esac
	# Each library a program needs, at the path the loader looks for it.
	# And at the path a symbolic link names (the dynamic linker is
	# /lib64/ld-linux-x86-64.so.2 as an interpreter, and found by its
	# real path when a new namespace needs it: LD_AUDIT, dlmopen()).
	ldd "$f" 2>/dev/null | awk '/=>/ { print $3 } /^\t\// { print $1 }' |
	while read -r lib; do
		[ -e "$lib" ] || continue
		for p in "$lib" "$(readlink -f "$lib")"; do
			mkdir -p "$root$(dirname "$p")"
			cp -L "$lib" "$root$p"
		done
	done
done

[ -z "${GUEST_ROOT:-}" ] || cp -a "$GUEST_ROOT/." "$root/"

# The pin counter for unprivileged tests is root's and set-user-ID.
[ ! -e "$root/opt/profil/pinsheld" ] || chmod 4755 "$root/opt/profil/pinsheld"
[ ! -e "$root/opt/profil/gmon_subject_setuid" ] ||
	chmod 4755 "$root/opt/profil/gmon_subject_setuid"
(cd "$root" && find . | cpio -o -H newc -R 0:0 --quiet | gzip -1) > "$out"
