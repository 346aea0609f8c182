/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the profil selftests: direct ioctls, stats, and spin
 * loops whose PCs are known to the byte and that run for a given amount of
 * the calling thread's CPU time (never wall time: TCG's clock lies).
 */
#ifndef PROFIL_SELFTEST_COMMON_H
#define PROFIL_SELFTEST_COMMON_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/profil.h>
#include "profil.h"

/*
 * spin_a and spin_b: "1: cmpl $0,(%rdi); je 1b; ret", each alone between
 * 256 bytes of int3, so that any PC within 256 bytes of one is that loop's.
 * The cmp is at +0, the je at +3, the ret at +5.
 */
asm(".pushsection .text.profil_spin,\"ax\",@progbits\n"
    ".balign 64\n"
    ".skip 256, 0xcc\n"
    ".globl spin_a\n"
    ".type spin_a,@function\n"
    "spin_a:\n"
    "1:	cmpl $0, (%rdi)\n"
    "	je 1b\n"
    "	ret\n"
    ".size spin_a, .-spin_a\n"
    ".skip 256, 0xcc\n"
    ".globl spin_b\n"
    ".type spin_b,@function\n"
    "spin_b:\n"
    "1:	cmpl $0, (%rdi)\n"
    "	je 1b\n"
    "	ret\n"
    ".size spin_b, .-spin_b\n"
    ".skip 256, 0xcc\n"
    ".popsection\n");

void spin_a(volatile int *stop);
void spin_b(volatile int *stop);

/* Sixteen more such loops, spin16 + 64 * i for i in 0..15. */
asm(".pushsection .text.profil_spin16,\"ax\",@progbits\n"
    ".balign 64\n"
    ".globl spin16\n"
    ".type spin16,@function\n"
    "spin16:\n"
    ".rept 16\n"
    ".balign 64, 0xcc\n"
    "1:	cmpl $0, (%rdi)\n"
    "	je 1b\n"
    "	ret\n"
    ".endr\n"
    ".balign 64, 0xcc\n"
    ".size spin16, .-spin16\n"
    ".popsection\n");

void spin16(volatile int *stop);
#define SPIN16_STRIDE	64

static inline void (*spin16_fn(int i))(volatile int *)
{
	return (void (*)(volatile int *))((char *)spin16 + SPIN16_STRIDE * i);
}

#define SPIN_PAD	256
#define NSEC		1000000000ULL
#define RATE		1000		/* Hz for most tests: 1 sample per ms */
#define SPIN		(300 * 1000000ULL) /* 0.3 s of CPU */

static inline uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * NSEC + ts.tv_nsec;
}

static inline uint64_t process_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * NSEC + ts.tv_nsec;
}

static void spin_stop(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	*(volatile int *)si->si_value.sival_ptr = 1;
}

/*
 * make check-debug's kernel (KASAN, lockdep, kmemleak: the guest sets
 * PROFIL_DEBUG_KERNEL=1, scripts/guest-init.sh).  The kernel's own work,
 * exec, mmap, page faults, fork, exit, costs it several times what it
 * costs Debian's, and profil charges a tick in the kernel to the user PC
 * that entered it, as perf does.  The checks whose bound that moves say so
 * where they loosen; every path runs, and every other check holds as is.
 */
static inline int debug_kernel(void)
{
	const char *s = getenv("PROFIL_DEBUG_KERNEL");

	return s && !strcmp(s, "1");
}

/*
 * Run @fn until the calling thread has used @ns more nanoseconds of CPU
 * time (a CPU-time timer stops it); return the CPU time really used.
 */
static inline uint64_t spin_cpu(void (*fn)(volatile int *), uint64_t ns)
{
	struct sigaction sa = { .sa_sigaction = spin_stop,
				.sa_flags = SA_SIGINFO | SA_RESTART };
	struct itimerspec its = { .it_value = { ns / NSEC, ns % NSEC } };
	struct sigevent sev = { 0 };
	volatile int stop = 0;
	uint64_t t0, t1;
	timer_t timer;

	sigaction(SIGRTMIN, &sa, NULL);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGRTMIN;
	sev.sigev_value.sival_ptr = (void *)&stop;
	sev._sigev_un._tid = syscall(SYS_gettid);
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &timer))
		abort();
	t0 = thread_cpu_ns();
	timer_settime(timer, 0, &its, NULL);
	fn(&stop);
	t1 = thread_cpu_ns();
	timer_delete(timer);
	return t1 - t0;
}

/* Write @val to profil.ko's parameter @name (root); 0 or -1. */
static inline int set_param(const char *name, const char *val)
{
	char path[128];
	int fd, ok;

	snprintf(path, sizeof(path), "/sys/module/profil/parameters/%s", name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ok = write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	close(fd);
	return ok ? 0 : -1;
}

/* One ioctl on a fresh /dev/profil fd: 0 or -errno. */
static inline int dev_ioctl(unsigned long cmd, void *arg)
{
	int fd = open("/dev/profil", O_RDWR | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = ioctl(fd, cmd, arg) ? -errno : 0;
	close(fd);
	return ret;
}

static inline int arm_regions(struct profil_region *r, unsigned int n,
			      unsigned int rate)
{
	struct profil_setup s = {
		.size = sizeof(s),
		.rate = rate,
		.nr_regions = n,
		.region_size = sizeof(*r),
		.regions = (uintptr_t)r,
	};

	return dev_ioctl(PROFIL_IOC_SETUP, &s);
}

/* A 16-bit region of @bytes at @buf with bin 0 at @offset. */
static inline int arm_one(void *buf, uint64_t bytes, uint64_t offset,
			  unsigned int scale, unsigned int rate)
{
	struct profil_region r = {
		.buf = (uintptr_t)buf, .bufsize = bytes,
		.offset = offset, .scale = scale,
	};

	return arm_regions(&r, 1, rate);
}

static inline struct profil_stats get_stats(void)
{
	struct profil_stats st;

	memset(&st, 0xcc, sizeof(st));
	st.size = sizeof(st);
	if (dev_ioctl(PROFIL_IOC_STATS, &st))
		abort();
	return st;
}

static inline uint64_t sum16(const uint16_t *b, size_t n)
{
	uint64_t s = 0;

	while (n--)
		s += *b++;
	return s;
}

/* Samples expected for @ns of CPU time at @rate. */
static inline double expected(uint64_t ns, unsigned int rate)
{
	return (double)ns * rate / NSEC;
}

/*
 * @got samples for at least @lo_ns and at most @hi_ns of CPU time at
 * @rate: 90% - 2 of the one to 105% + 2 of the other, logged.
 */
#define EXPECT_SAMPLES_WITHIN(got, lo_ns, hi_ns, rate) do {		\
	double __lo = expected(lo_ns, rate), __hi = expected(hi_ns, rate); \
	TH_LOG("%s: %llu samples for %.1f to %.1f expected", #got,	\
	       (unsigned long long)(got), __lo, __hi);			\
	EXPECT_TRUE((got) >= __lo * 0.9 - 2 && (got) <= __hi * 1.05 + 2); \
} while (0)

/* @got samples for @ns of CPU time at @rate: 90% - 2 to 105% + 2, logged. */
#define EXPECT_SAMPLES_NEAR(got, ns, rate)				\
	EXPECT_SAMPLES_WITHIN(got, ns, ns, rate)

/*
 * The kernel's HZ: the rate a session gets when it asks for none (armed
 * on a bin of its own for a moment, then off); 0 if it cannot be armed.
 */
static inline unsigned int kernel_hz(void)
{
	static uint16_t bin;
	struct profil_region r = { .buf = (uintptr_t)&bin, .bufsize = 2,
				   .flags = PROFIL_REGION_OVERFLOW };
	struct profil_setup s = { .size = sizeof(s), .nr_regions = 1,
				  .region_size = sizeof(r),
				  .regions = (uintptr_t)&r };

	if (dev_ioctl(PROFIL_IOC_SETUP, &s))
		return 0;
	dev_ioctl(PROFIL_IOC_OFF, NULL);
	return s.rate;
}

static inline int module_loaded(void)
{
	return access("/dev/profil", F_OK) == 0;
}

/*
 * Skip the running test from anywhere, FIXTURE_SETUP included.  Debian
 * 6.1's kselftest_harness.h runs the test body after a SKIP() in the
 * setup (it only marks the test skipped), so a setup that skips with
 * "return" lets a body run on what was never set up and hides its
 * failures as a skip.  Every test runs in a child process of its own:
 * end it with the status the harness reads as a skip (255).
 * scripts/harness-skip.sh checks this on the host.
 */
#define SKIP_NOW(fmt, ...) SKIP(_exit(255), fmt, ##__VA_ARGS__)

/* In a kselftest fixture setup or test: skip without the module. */
#define REQUIRE_MODULE() do {						\
	if (!module_loaded())						\
		SKIP_NOW("/dev/profil missing: profil.ko not loaded");	\
} while (0)

/*
 * VmPin of the calling process, in kB, or -1: the pages the module pinned
 * for it (mm->pinned_vm), charged to the user's RLIMIT_MEMLOCK.
 */
static inline long vmpin_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* A counter of /proc/vmstat, or -1. */
static inline long long vmstat_get(const char *key)
{
	char name[64];
	long long v, found = -1;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", name, &v) == 2)
		if (!strcmp(name, key)) {
			found = v;
			break;
		}
	fclose(f);
	return found;
}

/* Pins held as pinsheld (selftests/pinsheld.c, next to this program) says. */
static inline long long pins_held_by_helper(void)
{
	char path[4200], out[32] = "";
	long long n = -1;
	ssize_t len;
	FILE *f;

	len = readlink("/proc/self/exe", path, sizeof(path) - 16);
	if (len <= 0)
		return -1;
	path[len] = 0;
	strcpy(strrchr(path, '/'), "/pinsheld");
	f = popen(path, "re");
	if (!f)
		return -1;
	if (!fgets(out, sizeof(out), f) || sscanf(out, "%lld", &n) != 1)
		n = -1;
	if (pclose(f))
		n = -1;
	return n;
}

/*
 * Pages pinned with FOLL_PIN and not yet released, system-wide, or -1 when
 * that cannot be known now: /proc/vmstat folds per-CPU deltas only every
 * second, and only root may make it exact at once (vm/stat_refresh); other
 * users ask the set-user-ID helper the guest installs.
 */
static inline long long pins_held(void)
{
	int fd = open("/proc/sys/vm/stat_refresh", O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return pins_held_by_helper();
	n = write(fd, "1", 1);
	close(fd);
	if (n != 1)
		return pins_held_by_helper();
	return vmstat_get("nr_foll_pin_acquired") -
	       vmstat_get("nr_foll_pin_released");
}

/*
 * No pin left over since @pins0 was read.  A count that could not be read
 * (the set-user-ID helper failed) is a failure: the check did not happen.
 */
#define EXPECT_PINS(pins0) do {						\
	long long __p0 = (pins0);					\
									\
	EXPECT_LE(0, __p0)						\
		TH_LOG("the pins held could not be read: pin balance not checked"); \
	if (__p0 >= 0)							\
		EXPECT_EQ(__p0, pins_held());				\
} while (0)

/* Root keeps its uid but loses CAP_IPC_LOCK, so the limit applies. */
static inline int drop_cap_ipc_lock(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[0].effective &= ~(1U << CAP_IPC_LOCK);
	return syscall(SYS_capset, &h, d);
}

/*
 * Nothing is left charged to the user: with CAP_IPC_LOCK dropped (root)
 * and RLIMIT_MEMLOCK at exactly 3 pages, a child can pin 3 pages and not
 * 4.  Return: 0 if so.
 */
static inline int memlock_balanced(void)
{
	struct rlimit rl = { 3 * 4096, 3 * 4096 };
	uintptr_t off = (uintptr_t)spin_a - SPIN_PAD;
	int status;
	pid_t pid = fork();
	char *b;

	if (!pid) {
		b = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (b == MAP_FAILED || drop_cap_ipc_lock() ||
		    setrlimit(RLIMIT_MEMLOCK, &rl))
			_exit(2);
		if (arm_one(b, 3 * 4096, off, 0x10000, RATE))
			_exit(3);
		dev_ioctl(PROFIL_IOC_OFF, NULL);
		_exit(arm_one(b, 4 * 4096, off, 0x10000, RATE) == -ENOMEM ?
		      0 : 4);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

#endif /* PROFIL_SELFTEST_COMMON_H */
