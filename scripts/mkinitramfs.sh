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

# The libraries a 32-bit ELF file needs, and its interpreter, from its
# headers (readelf) and the host's 32-bit library directories, never by
# running its loader: a host without IA32 emulation cannot, and its ldd
# then names none.
elf32_needs() {
	todo=$1 seen=
	while [ -n "$todo" ]; do
		# shellcheck disable=SC2086 # a list of paths without spaces
		set -- $todo
		x=$1
		shift
		todo=$*
		readelf -lW "$x" 2>/dev/null |
			sed -n 's/.*Requesting program interpreter: \(.*\)]$/\1/p'
		for n in $(readelf -dW "$x" 2>/dev/null |
			   sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'); do
			case " $seen " in *" $n "*) continue ;; esac
			seen="$seen $n"
			for d in /lib32 /usr/lib32 /lib/i386-linux-gnu /usr/lib/i386-linux-gnu; do
				[ -e "$d/$n" ] || continue
				echo "$d/$n"
				todo="$todo $d/$n"
				break
			done
		done
	done
}

# Whether $1 is a 32-bit ELF file (EI_CLASS 1).
is_elf32() {
	[ "$(od -An -c -N 5 "$1" 2>/dev/null | tr -d ' ')" = '177ELF001' ]
}

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
	{
		ldd "$f" 2>/dev/null | awk '/=>/ { print $3 } /^\t\// { print $1 }'
		! is_elf32 "$f" || elf32_needs "$f"
	} |
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
