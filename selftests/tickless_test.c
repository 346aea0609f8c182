// SPDX-License-Identifier: GPL-2.0
/*
 * profil.ko on a tickless CPU (nohz_full=): a thread alone on its CPU runs
 * without the scheduler's tick, and its CPU clock's last update
 * (se.sum_exec_runtime) is then as old as its last system call.  Each tick
 * must still charge the CPU time the thread used since the one before, and
 * where it was used; a tick that read the last update only would charge
 * nothing while the thread spins and all of it at the next update, at
 * whatever PC the thread has then.
 *
 * make check boots every kernel of the matrix once more, with nohz_full=1,
 * for this program alone (scripts/check.sh); elsewhere it skips.
 */
#define _GNU_SOURCE
#include <sched.h>

#include "common.h"
#include "kselftest_harness.h"

/* Bins for spin_a and spin_b, 1:1: from SPIN_PAD below spin_a on. */
#define TL_BINS		(3 * SPIN_PAD)
#define TL_WALL_NS	(300 * 1000000ULL)	/* each loop's wall time */

/* The first CPU of /sys/devices/system/cpu/nohz_full, or -1. */
static int nohz_full_cpu(void)
{
	char buf[64] = "";
	int fd = open("/sys/devices/system/cpu/nohz_full", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || buf[0] < '0' || buf[0] > '9')
		return -1;
	return atoi(buf);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC + ts.tv_nsec;
}

struct stopper {
	volatile int stop;
	uint64_t ns;
};

/*
 * On another CPU: end the loop after @ns of wall time.  The loop itself
 * makes no system call and arms no CPU-time timer, either of which would
 * update its clock or keep its CPU's tick running.
 */
static void *stopper_main(void *arg)
{
	struct stopper *s = arg;
	struct timespec ts = { s->ns / NSEC, s->ns % NSEC };

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
	s->stop = 1;
	return NULL;
}

/* Run @fn for TL_WALL_NS of wall time; its thread's CPU time. */
static uint64_t spin_wall(struct __test_metadata *_metadata,
			  void (*fn)(volatile int *), int cpu)
{
	struct stopper s = { .ns = TL_WALL_NS };
	cpu_set_t set;
	pthread_attr_t attr;
	pthread_t t;
	uint64_t t0, w0;

	/* The stopper anywhere but here, so this CPU keeps one task. */
	CPU_ZERO(&set);
	CPU_SET(cpu ? 0 : 1, &set);
	ASSERT_EQ(0, pthread_attr_init(&attr));
	ASSERT_EQ(0, pthread_attr_setaffinity_np(&attr, sizeof(set), &set));
	t0 = thread_cpu_ns();
	w0 = mono_ns();
	ASSERT_EQ(0, pthread_create(&t, &attr, stopper_main, &s));
	fn(&s.stop);
	t0 = thread_cpu_ns() - t0;
	TH_LOG("loop: %.3f s of CPU in %.3f s", t0 / 1e9, (mono_ns() - w0) / 1e9);
	pthread_join(t, NULL);
	pthread_attr_destroy(&attr);
	return t0;
}

static uint64_t bins_of(const uint16_t *buf, void (*fn)(volatile int *))
{
	uintptr_t at = (uintptr_t)fn - ((uintptr_t)spin_a - SPIN_PAD);

	/* The loop is 6 bytes, bins of 2: the three at its address. */
	return sum16(buf + at / 2, 3);
}

FIXTURE(tickless) {
	uint16_t *buf;
	int cpu;
};

FIXTURE_SETUP(tickless)
{
	cpu_set_t set;

	REQUIRE_MODULE();
	self->cpu = nohz_full_cpu();
	if (self->cpu < 0)
		SKIP(return, "no nohz_full CPU (the kernel was booted without nohz_full=)");
	CPU_ZERO(&set);
	CPU_SET(self->cpu, &set);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(set), &set));
	self->buf = calloc(TL_BINS, 2);
	ASSERT_NE(NULL, self->buf);
}

FIXTURE_TEARDOWN(tickless)
{
	profil(NULL, 0, 0, 0);
	free(self->buf);
}

/*
 * Two loops one after the other, each 0.3 s on the tickless CPU: each has
 * the samples of its own CPU time.  Read at its last update, the clock
 * gains nothing while a loop runs; the system call between the two loops
 * updates it, and the first loop's samples land in the second.
 */
TEST_F_TIMEOUT(tickless, each_loop_charged_its_own_cpu_time, 120)
{
	struct profil_stats st0, st1;
	uint64_t a_ns, b_ns, a, b;

	st0 = get_stats();
	ASSERT_EQ(0, arm_one(self->buf, TL_BINS * 2, (uintptr_t)spin_a - SPIN_PAD,
			     0x10000, RATE));
	a_ns = spin_wall(_metadata, spin_a, self->cpu);
	b_ns = spin_wall(_metadata, spin_b, self->cpu);
	ASSERT_EQ(0, profil(NULL, 0, 0, 0));
	st1 = get_stats();
	a = bins_of(self->buf, spin_a);
	b = bins_of(self->buf, spin_b);
	TH_LOG("CPU %d: spin_a %llu samples for %.0f expected, spin_b %llu for %.0f; ticks %llu, samples %llu",
	       self->cpu, (unsigned long long)a, expected(a_ns, RATE),
	       (unsigned long long)b, expected(b_ns, RATE),
	       (unsigned long long)(st1.ticks - st0.ticks),
	       (unsigned long long)(st1.samples - st0.samples));
	/* The loop ran alone: most of its wall time is its CPU time. */
	EXPECT_GE(a_ns, TL_WALL_NS / 2);
	EXPECT_GE(b_ns, TL_WALL_NS / 2);
	EXPECT_GE(a, 0.9 * expected(a_ns, RATE));
	EXPECT_LE(a, 1.05 * expected(a_ns, RATE) + 2);
	EXPECT_GE(b, 0.9 * expected(b_ns, RATE));
	EXPECT_LE(b, 1.05 * expected(b_ns, RATE) + 2);
}

TEST_HARNESS_MAIN
