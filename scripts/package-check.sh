#!/bin/sh
# package-check.sh [KVER]: the Debian packages built and used as a user
# would.  From a copy of the tracked files (a clean clone's tree) in
# build/package: dpkg-buildpackage -us -uc -b, lintian (errors fail), the
# .debs extracted into build/package/root, their contents checked, the
# module built by dkms from that root for every kernel of the matrix, a
# -pg program (demo/callgraph.c) built against the extracted headers and
# library found with pkg-config, run with the dkms-built module in a guest
# of KVER (default the oldest kernel) with the packages' files at their own
# paths, its gmon.out read with gprof on the host, and the packaged
# profil(1) run on it there too.  Then the packages installed for real in
# a guest of KVER, with the host's own apt, dpkg and dkms over 9p under an
# overlay in the guest's memory (scripts/guest-install.sh): without the
# kernel's headers first, then with them, used, removed and purged.  Last
# line: N passed, N failed.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
kvers=$("$top/scripts/kernels.sh")
kver=${1:-$(echo "$kvers" | head -n 1)}
out=$top/build/package
pass=0 fail=0
ok() { echo "ok - $*"; pass=$((pass + 1)); }
nok() { echo "not ok - $*"; fail=$((fail + 1)); }
check() { # check DESCRIPTION COMMAND...: ok when COMMAND succeeds
	d=$1
	shift
	if "$@"; then ok "$d"; else nok "$d"; fi
}
finish() { echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit; }

version=$(sed -n 's/^VERSION[[:space:]]*:= *//p' "$top/Makefile")
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
rm -rf "$out"
src=$out/src/profil-$version
mkdir -p "$src"
git -C "$top" ls-files -z | (cd "$top" && xargs -0 cp --parents -t "$src")

# --- build and lintian ----------------------------------------------------
if (cd "$src" && dpkg-buildpackage -us -uc -b) > "$out/build.log" 2>&1; then
	ok "dpkg-buildpackage -us -uc -b"
else
	tail -n 30 "$out/build.log"
	nok "dpkg-buildpackage -us -uc -b (see $out/build.log)"
	finish
fi
changes=$(ls "$out"/src/profil_*.changes)
lintian --tag-display-limit 0 "$changes" > "$out/lintian.log" 2>&1 || true
sed 's/^/# lintian: /' "$out/lintian.log"
check "lintian: no errors" eval '! grep -q "^E:" "$out/lintian.log"'

# --- contents -------------------------------------------------------------
root=$out/root
mkdir -p "$root"
for p in profil-dkms libprofil0 libprofil-dev profil-tools; do
	deb=$(ls "$out"/src/${p}_*.deb 2>/dev/null || true)
	if [ -n "$deb" ]; then
		dpkg-deb -c "$deb" > "$out/$p.contents"
		dpkg-deb -x "$deb" "$root"
		ok "package $p built"
	else
		nok "package $p built"
	fi
done
lib=$root/usr/lib/$multiarch
check "libprofil0: libprofil.so.0 (soname libprofil.so.0)" \
	eval 'objdump -p "$lib/libprofil.so.0" | grep -q "SONAME *libprofil.so.0$"'
check "libprofil-dev: libprofil.so -> libprofil.so.0, libprofil.a" \
	eval '[ "$(readlink "$lib/libprofil.so")" = libprofil.so.0 ] && [ -f "$lib/libprofil.a" ]'
check "libprofil-dev: the headers" eval 'for h in profil.h mon.h pcsample.h linux/profil.h; do
	[ -f "$root/usr/include/$h" ] || exit 1; done'
check "libprofil0: its symbols file lists lib/libprofil.symbols" eval '
	dpkg-deb -e "$(ls "$out"/src/libprofil0_*.deb)" "$out/libprofil0.control" &&
	sed -n "s/^ \([^ ]*\) .*/\1/p" "$out/libprofil0.control/symbols" | sort > "$out/symbols.deb" &&
	sed -e "s/@@/@/" -e "/@/!s/.*/&@&/" "$top/lib/libprofil.symbols" | sort |
		cmp -s - "$out/symbols.deb"'
# shellcheck disable=SC2034 # used in the eval below
pages="man1/profil.1 man2/profil.2 man2/profil_inherit.2 man2/pcsample.2
	man3/monitor.3 man3/monstartup.3 man3/moncontrol.3 man3/_mcleanup.3
	man3/sprofil.3 man4/profil.4 man7/libprofil.7"
check "man pages and a link for every name they document" eval 'for m in $pages; do
	[ -e "$root/usr/share/man/$m.gz" ] || { echo "# no $m"; exit 1; }; done'
check "mandoc -Tlint: no warnings" mandoc -Tlint -W warning "$src"/man/*.[1-9]
check "man -l renders every page" eval 'for m in "$root"/usr/share/man/man*/*; do
	MANWIDTH=80 man -l "$m" 2>&1 >/dev/null | grep . && exit 1; done; true'
check "profil-tools: profil(1) looks for its agent where the package puts it" eval '
	[ -f "$lib/profil/profil-agent.so" ] &&
	grep -q "/usr/lib/$multiarch/profil/profil-agent.so" "$root/usr/bin/profil"'
check "profil-tools: the bash completion of profil(1)" eval '
	grep -q "^complete -F _profil profil$" "$root/usr/share/bash-completion/completions/profil"'
check "profil-dkms: modules-load.d snippet, off by default" eval '
	grep -q "^#profil$" "$root/etc/modules-load.d/profil.conf" &&
	! grep -q "^[^#]" "$root/etc/modules-load.d/profil.conf"'

# --- dkms, from the package's source, for every kernel ------------------
# Installed into build/package/modules, not /lib/modules, and no depmod.
dkmsroot=$out/dkms
mkdir -p "$dkmsroot"
dk="--sourcetree $root/usr/src --dkmstree $dkmsroot --installtree $out/modules --no-depmod"
# shellcheck disable=SC2086
check "dkms add profil/$version" eval 'dkms add -m profil -v "$version" $dk > "$out/dkms-add.log" 2>&1'
for k in $kvers; do
	# The kernel's build tree where fetch-kernel.sh unpacked it.
	ksrc=$("$top/scripts/kernels.sh" --root "$k")/lib/modules/$k/build
	# shellcheck disable=SC2086
	if dkms build -m profil -v "$version" -k "$k" --kernelsourcedir "$ksrc" $dk \
		> "$out/dkms-$k.log" 2>&1 &&
	   ko=$(ls "$dkmsroot/profil/$version/$k"/*/module/profil.ko* 2>/dev/null) &&
	   modinfo -F vermagic "$ko" | grep -q "^$k "; then
		ok "dkms build for $k"
		mkdir -p "$out/modules/$k"
		# shellcheck disable=SC2086
		check "dkms install for $k" eval 'dkms install -m profil -v "$version" -k "$k" \
			--kernelsourcedir "$ksrc" $dk \
			> "$out/dkms-install-$k.log" 2>&1 &&
			ls "$out/modules/$k/updates/dkms/profil.ko"* > /dev/null'
	else
		tail -n 20 "$out/dkms-$k.log"
		cat "$dkmsroot/profil/$version/build/make.log" 2>/dev/null | tail -n 20
		nok "dkms build for $k"
	fi
done

# --- a user's -pg program, built against the extracted packages --------
pc() {
	PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$lib/pkgconfig \
		pkg-config "$@" libprofil
}
check "pkg-config: libprofil $version" eval '[ "$(pc --modversion)" = "$version" ]'
prog=$out/pkg-callgraph
# shellcheck disable=SC2046
check "gcc -pg \$(pkg-config --cflags --libs libprofil)" eval '
	gcc -O2 -g -Wall -pg $(pc --cflags) -o "$prog" "$top/demo/callgraph.c" $(pc --libs) &&
	readelf -d "$prog" | grep -q "NEEDED.*libprofil.so.0" &&
	readelf -V "$prog" | grep -q LIBPROFIL_1.2'

# --- in a guest, with the module dkms built -------------------------------
make -s -C "$top" build/selftests/runas build/selftests/perfhold
# The module as dkms built it (compressed for kernels that compress theirs).
ko=$(ls "$dkmsroot/profil/$version/$kver"/*/module/profil.ko* 2>/dev/null || true)
log=$out/guest-$kver.log
case $ko in
'')	nok "guest $kver: no profil.ko built by dkms for it"; finish ;;
*.xz)	xz -dc "$ko" > "$out/profil.ko" && ko=$out/profil.ko ;;
*.zst)	zstd -qdc "$ko" > "$out/profil.ko" && ko=$out/profil.ko ;;
esac
if GUEST_KO=$ko GUEST_ROOT=$root GUEST_TIMEOUT=300 \
   GUEST_EXTRA="$prog $root/usr/bin/profil $top/build/selftests/runas $top/build/selftests/perfhold" \
   "$top/scripts/guest-run.sh" "$kver" package "$log"; then
	ok "guest $kver booted and powered off"
else
	nok "guest $kver booted and powered off (see $log)"
fi
grep '^\(not \)\?ok - guest' "$log" | sed 's/^/# /'
check "guest: insmod of the dkms-built profil.ko" grep -q '^ok - guest: insmod profil.ko' "$log"
check "guest: /dev/profil has mode 0666" grep -q '^@@ devmode 666$' "$log"
check "guest: pins balanced" grep -q '^ok - guest: pins balanced' "$log"
check "guest: no BUG, WARNING or oops in dmesg" eval '
	! sed -n "/^@@ dmesg begin/,/^@@ dmesg end/p" "$log" | grep -E "BUG|WARNING|Oops|Call Trace"'
rc=0
"$top/scripts/gprof-check.sh" "$log" pg "$prog" > "$out/gprof.txt" || rc=$?
sed 's/^/# /' "$out/gprof.txt"
check "gprof reads the -pg program's gmon.out (calls exact, time 60/30/10)" \
	[ "$rc" -eq 0 ]
sed -n '/^@@ profil begin/,/^@@ profil end/p' "$log" | sed 's/^/# /'
check "guest: the packaged profil(1) names the hot function" eval '
	sed -n "/^@@ profil begin/,/^@@ profil end/p" "$log" | grep -q " expensive "'

# --- installed for real, in a guest ----------------------------------------
# The host's own system, read-only over 9p under an overlay in the guest's
# memory: apt installs the four packages without the kernel's headers,
# then dpkg the headers, whose hook has dkms build the module; used, then
# removed and purged (scripts/guest-install.sh).  Nothing reaches the host.
inst=$out/install
mkdir -p "$inst"
for p in profil-dkms libprofil0 libprofil-dev profil-tools; do
	cp "$out"/src/${p}_*.deb "$out/$p.contents" "$inst/" 2>/dev/null || true
done
kroot=$("$top/scripts/kernels.sh" --root "$kver")
ilog=$out/install-$kver.log
if [ -z "$kroot" ] || [ ! -d "$kroot/debs" ]; then
	nok "install: $kver's packages fetched by fetch-kernel.sh (make deps)"
	finish
fi
if GUEST_TIMEOUT=${INSTALL_TIMEOUT:-1800} GUEST_MEM=3072 \
   GUEST_KMODS="virtio_pci 9pnet_virtio 9p overlay" \
   GUEST_QEMU_MORE="-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
   GUEST_APPEND="profil.kroot=$kroot profil.debs=$inst" \
   GUEST_EXTRA="$top/scripts/guest-install.sh $top/demo/callgraph.c $top/build/selftests/runas $top/build/selftests/perfhold" \
   "$top/scripts/guest-run.sh" "$kver" install "$ilog"; then
	ok "install guest $kver booted and powered off"
else
	nok "install guest $kver booted and powered off (see $ilog)"
fi
grep '^# ' "$ilog" | head -n 80
while read -r line; do
	case $line in
	"ok - install: "*) ok "${line#ok - }" ;;
	"not ok - install: "*) nok "${line#not ok - }" ;;
	esac
done < "$ilog"
check "install: every check ran (guest-install.sh finished)" grep -q '^@@ install done' "$ilog"
left=$(sed -n "/^@@ install upper begin/,/^@@ install upper end/p" "$ilog" | sed '1d;$d')
echo "$left" | grep . | sed 's/^/# left: /'
check "install: nothing named profil left in the overlay after the purge" \
	eval '[ -z "$left" ] && grep -q "^@@ install upper end" "$ilog"'
check "install: no BUG, WARNING or oops in dmesg" eval '
	! sed -n "/^@@ dmesg begin/,/^@@ dmesg end/p" "$ilog" | grep -E "BUG|WARNING|Oops|Call Trace"'
finish
