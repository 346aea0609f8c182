#!/bin/sh
# bench/run.sh [KVER]: make bench's host side.  Builds profil.ko for KVER
# (default: the oldest kernel of the matrix, 6.1), boots one guest of it
# in mode bench (bench/guest.sh runs every case there) and turns its log
# into bench/out/ (bench.log, and bench/report.sh's files from it).
# BENCH_REPS, BENCH_SCALE and BENCH_ONLY (see bench/guest.sh) shorten a
# run while developing.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
b=$top/build/bench
kver=${1:-$("$top/scripts/kernels.sh" | head -n 1)}
start=$(date +%s)

# Debian's /usr/bin/perf may be a wrapper that execs perf_<version> for
# the running kernel: the guest gets the real binary.
perf=$(command -v perf)
if ! head -c 4 "$perf" | grep -q ELF; then
	perf=$(ls /usr/bin/perf_* 2>/dev/null | sort -V | tail -n 1)
fi
[ -n "$perf" ] && head -c 4 "$perf" | grep -q ELF ||
	{ echo "bench: no perf binary (make bench-deps)"; exit 1; }

"$top/scripts/build-kmod.sh" "$kver"
mkdir -p "$b/guest"
cp "$perf" "$b/guest/perf"
cp "$top/bench/guest.sh" "$b/guest/guest.sh"

echo "bench: guest $kver, $(nproc) host CPUs ($(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1))"
# Of make check's programs, only the two every guest starts or may use.
GUEST_TESTS= GUEST_NOMOD_TESTS= GUEST_HELPERS="perfhold runas" \
GUEST_TIMEOUT=${GUEST_TIMEOUT:-5400} GUEST_MEM=${GUEST_MEM:-2048} \
GUEST_EXTRA="$b/guest/perf $b/guest/guest.sh $b/work $b/cputree $b/bpfsample
	$b/sessmem $b/threads $b/mcount-none $b/mcount-glibc $b/mcount-libprofil" \
GUEST_APPEND="profil.bench_reps=${BENCH_REPS:-15} profil.bench_scale=${BENCH_SCALE:-1} profil.bench_only=${BENCH_ONLY:-.}" \
	"$top/scripts/guest-run.sh" "$kver" bench "$b/guest.log"
grep -q '^@@ guest done' "$b/guest.log" ||
	{ echo "bench: the guest did not finish; see $b/guest.log"; exit 1; }
# The results, how long it all took and on what, kept under bench/out/:
# every figure of the tables comes from this file.
mkdir -p "$top/bench/out"
{
	grep '^@@ bench' "$b/guest.log"
	echo "@@ bench-info secs $(( $(date +%s) - start ))"
	echo "@@ bench-host $(nproc) x $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)"
} > "$top/bench/out/bench.log"
"$top/bench/report.sh" "$top/bench/out/bench.log" "$top/bench/out"
