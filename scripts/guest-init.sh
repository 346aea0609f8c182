#!/bin/sh
# /init of the test guest: load profil.ko, run what the kernel command line
# asks for (profil.mode=check or profil.mode=demo), print the results on
# the console between markers the host reads, power off.
export PATH=/bin:/sbin PROFIL_KO=/opt/profil/profil.ko
# libprofil.so.0 sits next to the programs.
export LD_LIBRARY_PATH=/opt/profil
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
chmod 1777 /tmp
cd /tmp
dmesg -n 1

# A kernel that reported an error of its own while booting, before any
# code of ours ran (the debug kernel once took a KASAN report in early
# boot, at 1.75 s), is no kernel to test in: show its log and power off,
# and guest-run.sh boots it again.  Its errors are never counted as ours,
# nor hidden: any after this point fail the run (count-tap.sh).
if dmesg | grep -Eq -f /kernel-errors.ere; then
	echo "@@ boot error"
	dmesg
	poweroff -f
fi

mode=check install_kroot= install_debs=
for a in $(cat /proc/cmdline); do
	case "$a" in
	profil.mode=*) mode=${a#profil.mode=} ;;
	profil.seed=*) export PROFIL_FUZZ_SEED=${a#profil.seed=} ;;
	profil.churn=*) export PROFIL_CHURN=${a#profil.churn=} ;;
	# make check-debug's kernel: the tests that measure a profile against
	# the truth loosen what its speed forces, each saying where and why.
	profil.debug=*) export PROFIL_DEBUG_KERNEL=${a#profil.debug=} ;;
	profil.kroot=*) install_kroot=${a#profil.kroot=} ;;
	profil.debs=*) install_debs=${a#profil.debs=} ;;
	profil.bench_reps=*) export BENCH_REPS=${a#profil.bench_reps=} ;;
	profil.bench_scale=*) export BENCH_SCALE=${a#profil.bench_scale=} ;;
	profil.bench_only=*) export BENCH_ONLY=${a#profil.bench_only=} ;;
	esac
done

vmstat() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }

echo "@@ guest $(uname -r) mode $mode"
# Keep perf's static keys from being patched at every arm (see perfhold.c).
/opt/profil/perfhold &
hold=$!
if [ "$mode" = install ]; then
	:	# make package-check's install: dkms builds it, modprobe loads it
elif insmod "$PROFIL_KO"; then
	echo "ok - guest: insmod profil.ko"
else
	echo "not ok - guest: insmod profil.ko"
fi

# Filesystems for the file-mapping tests, world-writable: an ext2 image
# on a loop device (ext4.ko) at /mnt/ext, a ramfs at /mnt/ramfs.
for m in $(cat /opt/profil/kmods/order 2>/dev/null); do
	insmod "/opt/profil/kmods/$m.ko" || echo "# insmod $m failed"
done
mkdir -p /mnt/ext /mnt/ramfs
mount -t ramfs ramfs /mnt/ramfs && chmod 1777 /mnt/ramfs
dd if=/dev/zero of=/tmp/ext.img bs=1024 count=4096 2>/dev/null
if mke2fs -q -F /tmp/ext.img && loop=$(losetup -f) &&
   losetup "$loop" /tmp/ext.img && mount -t ext2 "$loop" /mnt/ext; then
	chmod 1777 /mnt/ext
else
	echo "# no ext2 filesystem at /mnt/ext: its tests skip"
	dmesg | tail -n 3
fi

# Swap, on a loop device over tmpfs, so that reclaim (MADV_PAGEOUT in
# pin_test) has somewhere to put anonymous and shmem pages.
dd if=/dev/zero of=/tmp/swap.img bs=1M count=32 2>/dev/null
if ! { swap=$(losetup -f) && losetup "$swap" /tmp/swap.img &&
       mkswap "$swap" > /dev/null && swapon "$swap"; }; then
	echo "# no swap: reclaim tests run without it"
fi

# demo/callgraph (gcc -pg), or PROGRAM, as uid 65534 in DIR; its gmon.out goes to the
# host in base64 between markers, for gprof (scripts/demo.sh, gprof-check.sh).
callgraph_gmon() {
	mkdir -m 1777 "$1" && cd "$1" &&
		PROFIL_RATE=10000 /opt/profil/runas 65534 "${2:-/opt/profil/callgraph}"
	echo "@@ gmon begin"
	base64 gmon.out
	echo "@@ gmon end"
	cd /tmp
}

# profil(1) -f gmon on selftests/cmd_subject (no -pg) as uid 65534 in DIR;
# the file goes to the host as above (gprof-check.sh cmd).
profil_gmon() {
	mkdir -m 1777 "$1" && cd "$1" &&
		/opt/profil/runas 65534 /opt/profil/profil -f gmon -o gmon.out \
		-- /opt/profil/cmd_subject split
	echo "@@ profil-gmon begin"
	base64 gmon.out
	echo "@@ profil-gmon end"
	cd /tmp
}

# profil record of selftests/cmd_subject split as uid 65534 in DIR, and its
# report as -f pprof (base64) and as CSV, to the host between markers
# (pprof-check.sh: go tool pprof reads it as the CSV says).
profil_pprof() {
	mkdir -m 1777 "$1" && cd "$1" &&
		/opt/profil/runas 65534 /opt/profil/profil record -o rec \
		-- /opt/profil/cmd_subject split > /dev/null 2>&1 &&
		/opt/profil/runas 65534 /opt/profil/profil report -f pprof \
		-o p.pb.gz rec &&
		/opt/profil/runas 65534 /opt/profil/profil report -f csv \
		-o p.csv rec
	echo "@@ profil-pprof begin"
	base64 p.pb.gz
	echo "@@ profil-pprof end"
	echo "@@ profil-csv begin"
	cat p.csv
	echo "@@ profil-csv end"
	cd /tmp
}

if [ "$mode" = forkcost ]; then
	# The CPU time a fork costs its parent, module unloaded and loaded
	# with no session, interleaved (bench/forkcost.c).
	for round in 1 2 3 4 5; do
		rmmod profil && echo "@@ forkcost unloaded $(/opt/profil/forkcost)"
		insmod "$PROFIL_KO" && echo "@@ forkcost loaded $(/opt/profil/forkcost)"
	done
elif [ "$mode" = regions ]; then
	# What a tick costs with 0, 1 and 1024 regions at 10 kHz, as the
	# thread's extra CPU time for a fixed loop, side by side in one
	# process (bench/regions.c).
	/opt/profil/runas 65534 /opt/profil/regions 5 10000 100000000 |
		sed 's/^/@@ regions /'
elif [ "$mode" = bench ]; then
	# make bench: every tool on every workload, interleaved (bench/guest.sh).
	sh /opt/profil/guest.sh
elif [ "$mode" = package ]; then
	# make package-check: the packages' files at their own paths, the
	# module dkms built; a -pg program built against them, and profil(1)
	# on the same program.
	unset LD_LIBRARY_PATH
	echo "@@ devmode $(stat -c %a /dev/profil)"
	callgraph_gmon /tmp/pkg /opt/profil/pkg-callgraph
	echo "@@ profil begin"
	/opt/profil/runas 65534 /usr/bin/profil -r 10000 -o - \
		-- /opt/profil/pkg-callgraph
	echo "@@ profil end"
elif [ "$mode" = install ]; then
	# make package-check: the packages installed, used and purged with
	# the host's own dpkg, apt and dkms (scripts/guest-install.sh).
	sh /opt/profil/guest-install.sh "$install_kroot" "$install_debs"
elif [ "$mode" = demo ]; then
	echo "@@ demo begin"
	/opt/profil/runas 65534 /opt/profil/hotspots
	echo "@@ demo end"
	callgraph_gmon /tmp/demo
	echo "@@ profil begin"
	/opt/profil/runas 65534 /opt/profil/profil -r 10000 -o - \
		-- /opt/profil/callgraph-plain
	echo "@@ profil end"
else
	# Every test program as root and as uid 65534, each between markers
	# that name it and give its exit status (scripts/count-tap.sh).
	# The exit line ends with the run's wall time, for the reader.
	run() {
		t0=$(date +%s)
		echo "@@ run $1 $2"
		if [ "$1" = root ]; then
			"/opt/profil/$2"
		else
			/opt/profil/runas 65534 "/opt/profil/$2"
		fi
		rc=$?
		echo "@@ exit $1 $2 $rc $(( $(date +%s) - t0 ))s"
	}
	for t in $(cat /opt/profil/tests); do
		run root "$t"
		run user "$t"
	done
	callgraph_gmon /tmp/gprof
	profil_gmon /tmp/profil-gmon
	profil_pprof /tmp/profil-pprof
	# The no-module tests only mean something with the module gone.
	if rmmod profil && [ ! -e /dev/profil ]; then
		echo "ok - guest: rmmod profil with no session left"
		for t in $(cat /opt/profil/nomod-tests); do
			run root "$t"
			run user "$t"
		done
		# Loaded again, used by a process that is gone, unloaded again.
		if insmod "$PROFIL_KO" && /opt/profil/runas 65534 /opt/profil/probe_dynamic > /dev/null &&
		   rmmod profil && [ ! -e /dev/profil ]; then
			echo "ok - guest: insmod, a session, rmmod again"
		else
			echo "not ok - guest: insmod, a session, rmmod again"
		fi
	else
		echo "not ok - guest: rmmod profil with no session left (the no-module tests did not run)"
	fi
fi

kill -0 "$hold" 2>/dev/null || echo "# perfhold could not hold its perf event"
kill "$hold"
# /proc/vmstat folds per-CPU deltas every second: make it exact first.
echo 1 > /proc/sys/vm/stat_refresh
acq=$(vmstat nr_foll_pin_acquired)
rel=$(vmstat nr_foll_pin_released)
if [ "$acq" = "$rel" ]; then
	echo "ok - guest: pins balanced (acquired $acq, released $rel)"
else
	echo "not ok - guest: pins balanced (acquired $acq, released $rel)"
fi
# A kernel with kmemleak (make check-debug): scan now, report into dmesg.
# A scan refused (kmemleak disabled itself) is a check that did not happen.
if [ -e /sys/kernel/debug/kmemleak ]; then
	if echo scan > /sys/kernel/debug/kmemleak && sleep 6 &&
	   echo scan > /sys/kernel/debug/kmemleak; then
		echo "ok - guest: kmemleak scanned"
	else
		echo "not ok - guest: kmemleak scanned (it refused a scan: disabled?)"
	fi
	head -n 60 /sys/kernel/debug/kmemleak | while read -r line; do
		echo "profil-check: $line" > /dev/kmsg
	done
fi
echo "@@ dmesg begin"
dmesg
echo "@@ dmesg end"
echo "@@ guest done"
poweroff -f
