#!/bin/sh
# guest-install.sh KROOT DEBS: make package-check's install in a guest
# (profil.mode=install), the packages installed, used and purged as a user
# of Debian 12 would, with the system's own dpkg, apt, dkms and the hooks
# the packages and the kernel's headers run.
#
# The system is the host's own, read-only over 9p, under an overlay whose
# upper layer is the guest's memory: nothing reaches the host.  The guest
# has no network: apt installs the .debs with what the host has.  Its
# /lib/modules holds the guest's kernel alone (its modules from KROOT,
# fetch-kernel.sh's root for it, and no build tree: no headers), so
# installing profil-dkms first must say that the headers are missing
# and build nothing; the headers are then installed with dpkg -i from
# KROOT/debs, whose hook (/etc/kernel/header_postinst.d/dkms) builds the
# module; it is loaded, used (gcc -pg against the installed library with
# pkg-config, gprof, profil(1) as a user), removed and purged, and nothing
# of the packages may be left.  DEBS holds the four .debs and the list of
# their files (PKG.contents).  Each check prints "ok - install: ..." or
# "not ok - install: ...".
#
# Called by guest-init.sh as "guest-install.sh KROOT DEBS" (it sets up the
# root, then runs itself inside it as "guest-install.sh --inside ...").
set -u
if [ "${1-}" != --inside ]; then
	kroot=$1 debs=$2
	for m in lower up new; do mkdir -p "/mnt/$m"; done
	mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=262144,cache=loose \
		hostroot /mnt/lower &&
	mount -t tmpfs -o size=1536m up /mnt/up &&
	mkdir -p /mnt/up/upper /mnt/up/work &&
	mount -t overlay -o lowerdir=/mnt/lower,upperdir=/mnt/up/upper,workdir=/mnt/up/work \
		root /mnt/new || { echo "not ok - install: the host's system over 9p"; exit 0; }
	echo "ok - install: the host's system over 9p, under an overlay in memory"
	r=/mnt/new
	mount -t proc proc "$r/proc"
	mount -t sysfs sys "$r/sys"
	# devtmpfs has no /dev/fd (udev makes it): bash's <(...) needs it.
	[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
	mkdir -p /dev/pts
	mount -t devpts devpts /dev/pts	# apt's log of dpkg's output
	mount --rbind /dev "$r/dev"
	# Not a tmpfs on /tmp: DEBS may be under the host's /tmp.
	mount -t tmpfs run "$r/run"
	mkdir -p "$r/opt/profil-guest"
	mount --bind /opt/profil "$r/opt/profil-guest"
	env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive \
		chroot "$r" /bin/sh /opt/profil-guest/guest-install.sh --inside \
		"$kroot" "$debs" "$(uname -r)"
	echo "@@ install upper begin"
	(cd /mnt/up/upper && find . -iname '*profil*' ! -iname '*profile*' \
		! -path './var/lib/dpkg/*' ! -path './usr/src/linux-headers-*' \
		! -path './var/log/*' ! -path './var/cache/*' ! -path './tmp/*' \
		! -path './root/*' ! -path './opt/profil-guest*')
	echo "@@ install upper end"
	exit 0
fi

kroot=$2 debs=$3 k=$4
ok() { echo "ok - install: $*"; }
nok() { echo "not ok - install: $*"; }
check() { # check DESCRIPTION COMMAND...: ok when COMMAND succeeds
	d=$1
	shift
	if "$@"; then ok "$d"; else nok "$d"; fi
}
# logged DESCRIPTION COMMAND...: check, COMMAND's output in $log, its end
# shown when it fails.
logged() {
	d=$1
	shift
	if "$@" > $log 2>&1; then
		ok "$d"
	else
		nok "$d"
		tail -n 15 $log | sed 's/^/#   /'
	fi
}
# installed PKG...: dpkg has every PKG installed.
installed() {
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2> /dev/null |
			grep -qx "install ok installed" || return 1
	done
}
# gone: nothing of the packages left: no file their .debs list, no
# package dpkg knows (not even as configuration), nothing of dkms's.
gone() {
	check "dpkg knows none of them (not even their configuration)" \
		eval '! dpkg -l $pkgs 2> /dev/null | grep -q "^[a-z][a-z]"'
	check "no file of theirs is left (their .debs' lists)" left_none
	check "nor dkms's: /var/lib/dkms/profil, /usr/src/profil-*, profil.ko" \
		eval '! find /var/lib/dkms/profil /usr/src/profil-* /lib/modules/$k \
			\( -path "/var/lib/dkms/profil*" -o -path "/usr/src/profil-*" \
			-o -name "profil.ko*" \) -print 2> /dev/null |
			sed "s/^/# left: /" | grep . &&
		! grep -q '/profil\.ko' /lib/modules/$k/modules.dep'
}
left_none() {
	left=0
	for c in "$debs"/*.contents; do
		for f in $(awk '$1 !~ /^d/ { print $6 }' "$c" | sed 's/^\.//'); do
			[ -e "$f" ] || [ -L "$f" ] || continue
			echo "# left: $f"
			left=1
		done
	done
	[ $left -eq 0 ]
}
at() { echo "# at $(cut -d ' ' -f 1 /proc/uptime) s: $*"; }
g=/opt/profil-guest
log=/tmp/install.log
pkgs="profil-dkms libprofil0 libprofil-dev profil-tools"
files=$(ls "$debs"/*.deb)
[ "$(echo $files | wc -w)" -eq 4 ] || nok "four .debs in $debs"

# The guest's kernel alone in /lib/modules: its modules, no build tree.
mount -t tmpfs mods /lib/modules
mkdir -p "/lib/modules/$k"
mount --bind "$kroot/lib/modules/$k" "/lib/modules/$k"
hdrs=$(readlink "/lib/modules/$k/build")
rm -f "/lib/modules/$k/build" "/lib/modules/$k/source"
# man-db's trigger would index every page over 9p: not what is tested.
rm -f /var/lib/man-db/auto-update
for p in $pkgs; do
	! installed "$p" || nok "$p is not installed before the test (the host has it)"
done

# 1. Without the kernel's headers: installed, says so, purged.
at "install without headers"
logged "apt-get install of the four packages without the kernel's headers" \
	apt-get install -y -q $files
check "dpkg: the four installed" installed $pkgs
grep -e DKMS -e 'Building for' -e 'Module build' -e 'kernel headers' $log | sed 's/^/# apt: /'
check "the install says the headers of $k are missing" \
	grep -q "kernel headers for this kernel do not seem to be installed" $log
check "and builds no module" eval '! find /lib/modules/$k -name "profil.ko*" | grep -q .'
logged "apt-get purge of the four packages" apt-get purge -y -q $pkgs
gone

# 2. With them: built by the package's own postinst, used, removed, purged.
at "install with headers"
ln -s "$hdrs" "/lib/modules/$k/build"
logged "apt-get install of the four packages with the headers of $k" \
	apt-get install -y -q $files
sed -n '/DKMS files/,/^Setting up profil-tools/p' $log | sed 's/^/# apt: /'
tail -n 20 /var/lib/dkms/profil/*/build/make.log 2> /dev/null | sed 's/^/# make.log: /'
check "dkms built and installed profil.ko for $k" \
	eval 'ls /lib/modules/$k/updates/dkms/profil.ko* > /dev/null 2>&1'
dkms status | sed 's/^/# dkms: /'
check "dkms status: profil installed for $k" \
	eval 'dkms status -m profil -k $k | grep -q ": installed"'
at "use"
check "modprobe profil" modprobe profil
check "/dev/profil, mode 0666" eval '[ "$(stat -c %a /dev/profil)" = 666 ]'
mkdir -p /tmp/u && chmod 777 /tmp/u && cp $g/callgraph.c /tmp/u/
logged "gcc -pg \$(pkg-config --cflags --libs libprofil) against the installed packages" \
	eval 'gcc -O2 -pg $(pkg-config --cflags libprofil) -o /tmp/u/cg /tmp/u/callgraph.c \
		$(pkg-config --libs libprofil) && pkg-config --exists libprofil &&
		readelf -d /tmp/u/cg | grep -q "NEEDED.*libprofil.so.0"'
check "the -pg program, as a user, writes gmon.out" \
	eval '(cd /tmp/u && $g/runas 65534 ./cg > /dev/null) && [ -s /tmp/u/gmon.out ]'
check "gprof reads it and counts expensive()'s 500 calls" \
	eval 'gprof -b -p /tmp/u/cg /tmp/u/gmon.out 2> /dev/null |
		grep -Eq "^ *[0-9.]+ +[0-9.]+ +[0-9.]+ +500 .* expensive\$"'
logged "profil(1) as a user, its report" \
	eval '(cd /tmp/u && $g/runas 65534 /usr/bin/profil -r 10000 -o - -- /tmp/u/cg)'
check "profil(1)'s report names the hot function" grep -q " expensive " $log
check "rmmod profil" rmmod profil
at "remove"
logged "apt-get remove of the four packages" apt-get remove -y -q $pkgs
check "the removal took profil.ko out of /lib/modules/$k" \
	eval '! find /lib/modules/$k -name "profil.ko*" | grep -q .'
check "/etc/modules-load.d/profil.conf stays until the purge" \
	test -e /etc/modules-load.d/profil.conf
logged "dpkg --purge of the four packages" dpkg --purge $pkgs
gone
at "done"
echo "@@ install done"
