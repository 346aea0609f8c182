// SPDX-License-Identifier: GPL-2.0
/*
 * AIX's multi-region profil((void *)regions, (size_t)-1, 0, 0) with
 * <mon.h>, and Solaris's pcsample(2) with <pcsample.h>, served by
 * profil.ko.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>

#include "common.h"
#include "mon.h"
#include "pcsample.h"
#include "kselftest_harness.h"

#define PAD	SPIN_PAD

static uint16_t bins_a[PAD], bins_b[PAD];

static uint64_t sum(const uint16_t *b, size_t n)
{
	return sum16(b, n);
}

#define EXPECT_NEAR(got, ns) EXPECT_SAMPLES_NEAR(got, ns, self->hz)

/* AIX: a region of PAD bytes... over [fn - PAD, fn + PAD). */
static struct prof aix_over(void (*fn)(volatile int *), uint16_t *bins,
			    unsigned int scale)
{
	return (struct prof){
		.p_low = (void *)((uintptr_t)fn - PAD),
		.p_high = (void *)((uintptr_t)fn + PAD),
		.p_buff = bins, .p_bufsize = PAD * 2, .p_scale = scale,
	};
}

FIXTURE(aix) {
	unsigned int hz;
	struct prof p[4];
};

FIXTURE_SETUP(aix)
{
	REQUIRE_MODULE();
	memset(bins_a, 0, sizeof(bins_a));
	memset(bins_b, 0, sizeof(bins_b));
	self->hz = kernel_hz();
	ASSERT_NE(0, self->hz);
}

FIXTURE_TEARDOWN(aix)
{
	profil(NULL, 0, 0, 0);
}

static int aix_profil(struct prof *p)
{
	return profil((unsigned short *)p, (size_t)-1, 0, 0);
}

TEST_F(aix, two_regions_computed_and_explicit_scales)
{
	uint64_t ns_a, ns_b;

	/* 512 bytes of text onto 512 bytes of bins: computed 0x10000. */
	self->p[0] = aix_over(spin_a, bins_a, (unsigned int)-1);
	self->p[1] = aix_over(spin_b, bins_b, 0x10000);
	self->p[2] = (struct prof){ 0 };
	ASSERT_EQ(0, aix_profil(self->p));
	ns_a = spin_cpu(spin_a, 150 * 1000000ULL);
	ns_b = spin_cpu(spin_b, 150 * 1000000ULL);
	ASSERT_EQ(0, profil(NULL, 0, 0, 0));
	EXPECT_NEAR(sum(bins_a, PAD), ns_a);
	EXPECT_NEAR(sum(bins_b, PAD), ns_b);
	/* A bin per halfword: the loop's cmp and je, PAD bytes in. */
	EXPECT_EQ(sum(bins_a, PAD), bins_a[PAD / 2] + bins_a[PAD / 2 + 1]);
}

TEST_F(aix, a_computed_scale_maps_the_range_onto_the_buffer)
{
	uint64_t ns;

	/* 512 bytes of text onto 8 bytes: 4 bins of 128 bytes each. */
	self->p[0] = aix_over(spin_a, bins_a, (unsigned int)-1);
	self->p[0].p_bufsize = 8;
	self->p[1] = (struct prof){ 0 };
	ASSERT_EQ(0, aix_profil(self->p));
	ns = spin_cpu(spin_a, 150 * 1000000ULL);
	ASSERT_EQ(0, profil(NULL, 0, 0, 0));
	/* spin_a is PAD = 256 bytes in: bin 2. */
	EXPECT_NEAR(bins_a[2], ns);
	EXPECT_EQ(0, bins_a[4]);
}

TEST_F(aix, an_empty_array_turns_profiling_off)
{
	self->p[0] = aix_over(spin_a, bins_a, 0x10000);
	self->p[1] = (struct prof){ 0 };
	ASSERT_EQ(0, aix_profil(self->p));
	self->p[0] = (struct prof){ 0 };
	ASSERT_EQ(0, aix_profil(self->p));
	EXPECT_EQ(PROFIL_STATE_OFF, get_stats().state);
}

static void expect_aix_fails(struct __test_metadata *_metadata,
			     struct prof *p, int err)
{
	struct prof good[2] = { aix_over(spin_a, bins_a, 0x10000), { 0 } };
	struct profil_stats st0, st;

	ASSERT_EQ(0, aix_profil(good));
	st0 = get_stats();
	errno = 0;
	EXPECT_EQ(-1, aix_profil(p));
	EXPECT_EQ(err, errno);
	st = get_stats();
	EXPECT_EQ(PROFIL_STATE_ON, st.state);
	EXPECT_EQ(st0.armed, st.armed);
}

TEST_F(aix, bad_arrays_are_refused_and_change_nothing)
{
	static struct prof many[PROFIL_MAX_REGIONS + 2];
	struct prof *p = self->p;

	/* p_high not ascending. */
	p[0] = aix_over(spin_b, bins_b, 0x10000);
	p[1] = aix_over(spin_a, bins_a, 0x10000);
	p[2] = (struct prof){ 0 };
	expect_aix_fails(_metadata, p, EINVAL);
	/* p_high at or below p_low. */
	p[0] = aix_over(spin_a, bins_a, 0x10000);
	p[0].p_low = p[0].p_high;
	p[1] = (struct prof){ 0 };
	expect_aix_fails(_metadata, p, EINVAL);
	/* A negative size, a scale above 0x10000. */
	p[0] = aix_over(spin_a, bins_a, 0x10000);
	p[0].p_bufsize = -2;
	expect_aix_fails(_metadata, p, EINVAL);
	p[0] = aix_over(spin_a, bins_a, 0x10001);
	expect_aix_fails(_metadata, p, EINVAL);
	/* Bins that are not there. */
	p[0] = aix_over(spin_a, (uint16_t *)4096, 0x10000);
	expect_aix_fails(_metadata, p, EFAULT);
	/* An array that is not there, one too long. */
	expect_aix_fails(_metadata, (struct prof *)8, EFAULT);
	for (int i = 0; i <= PROFIL_MAX_REGIONS; i++)
		many[i] = (struct prof){ (char *)0x10000 + 16 * i,
					 (char *)0x10000 + 16 * i + 8,
					 bins_a, 2, 0x10000 };
	expect_aix_fails(_metadata, many, E2BIG);
}

/* ------------------------------------------------------------ pcsample */

#define NPC	4096
static uintptr_t pc_buf[NPC], pc_buf2[NPC];

FIXTURE(pc) {
	unsigned int hz;
};

FIXTURE_SETUP(pc)
{
	REQUIRE_MODULE();
	self->hz = kernel_hz();
	ASSERT_NE(0, self->hz);
	pcsample(NULL, 0);	/* forget any collection of an earlier test */
}

FIXTURE_TEARDOWN(pc)
{
	pcsample(NULL, 0);
}

/* Every PC of @pc_buf[0..n) inside @fn's loop. */
static long in_loop(const uintptr_t *pc, long n, void (*fn)(volatile int *))
{
	long k = 0;

	for (long i = 0; i < n; i++)
		k += pc[i] >= (uintptr_t)fn && pc[i] < (uintptr_t)fn + 8;
	return k;
}

/*
 * A collection holds the samples of its spin, and at most those of the
 * CPU time from the pcsample() that opened it to the one that closed it
 * (the spin's timer and the calls themselves).
 */
TEST_F(pc, first_call_0_then_the_pcs_stored_since)
{
	uint64_t ns, c0, c1, c2;
	long n;

	c0 = thread_cpu_ns();
	EXPECT_EQ(0, pcsample(pc_buf, NPC));
	ns = spin_cpu(spin_a, 200 * 1000000ULL);
	c2 = thread_cpu_ns();	/* the next collection's start */
	n = pcsample(pc_buf2, NPC);
	c1 = thread_cpu_ns();
	EXPECT_SAMPLES_WITHIN(n, ns, c1 - c0, self->hz);
	/* The PCs are the loop's (a few may catch the timer). */
	EXPECT_GE(in_loop(pc_buf, n, spin_a) * 1.25 + 2, n);
	EXPECT_EQ(0, pc_buf[n]);
	/* The next collection, into the other array. */
	c0 = c2;
	ns = spin_cpu(spin_b, 100 * 1000000ULL);
	n = pcsample(NULL, 0);
	c1 = thread_cpu_ns();
	EXPECT_SAMPLES_WITHIN(n, ns, c1 - c0, self->hz);
	EXPECT_GE(in_loop(pc_buf2, n, spin_b) * 1.25 + 2, n);
	EXPECT_EQ(PROFIL_STATE_OFF, get_stats().state);
}

TEST_F(pc, a_full_array_stops_sampling)
{
	struct profil_stats st;

	EXPECT_EQ(0, pcsample(pc_buf, 10));
	spin_cpu(spin_a, 200 * 1000000ULL);
	st = get_stats();
	EXPECT_EQ(PROFIL_STATE_OFF, st.state);
	EXPECT_EQ(PROFIL_STOP_FULL, st.stop_reason);
	EXPECT_EQ(10, pcsample(NULL, 0));
	EXPECT_EQ(0, pc_buf[10]);
}

/* SCHED_FIFO on CPU @cpu alone, for the calling thread; 0 or -1. */
static int hold_cpu(int cpu)
{
	struct sched_param sp = { .sched_priority = 1 };
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		return -1;
	return sched_setscheduler(0, SCHED_FIFO, &sp);
}

struct hog {
	pthread_t t;
	int cpu, held;
	volatile int *stop;
};

/* Hold a CPU until told to stop. */
static void *hog(void *arg)
{
	struct hog *h = arg;

	h->held = !hold_cpu(h->cpu);
	while (!*h->stop)
		;
	return NULL;
}

/*
 * OFF after a tick found the array full says PROFIL_STOP_FULL, as STATS
 * would have: why a collection ended does not depend on whether the
 * module's settle thread, which that tick only wakes, ran before the
 * call.  SCHED_FIFO threads, this one among them, hold every CPU so
 * that it cannot (as root: SCHED_FIFO needs CAP_SYS_NICE).
 */
TEST_F(pc, off_after_the_array_filled_says_full)
{
	static struct hog h[CPU_SETSIZE];
	volatile uintptr_t *last = &pc_buf[7];
	struct sched_param other = { 0 };
	struct profil_stats st;
	volatile int stop = 0;
	int i, n = get_nprocs(), off, held;
	cpu_set_t all;
	uint64_t t0;

	if (geteuid())
		SKIP(return, "SCHED_FIFO needs CAP_SYS_NICE");
	ASSERT_LT(1, n) TH_LOG("one CPU: nothing to hold the settle thread off");
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(all), &all));
	memset(pc_buf, 0, 8 * sizeof(pc_buf[0]));
	/* Armed first: pinning may wait for every CPU's workqueue. */
	ASSERT_EQ(0, pcsample(pc_buf, 8));
	for (i = 1; i < n; i++) {
		h[i] = (struct hog){ .cpu = i, .stop = &stop };
		ASSERT_EQ(0, pthread_create(&h[i].t, NULL, hog, &h[i]));
	}
	held = !hold_cpu(0);
	/* Filled, then a tick more that finds no room, then OFF. */
	t0 = thread_cpu_ns();
	while (!*last && thread_cpu_ns() - t0 < 4 * NSEC)
		;
	spin_cpu(spin_a, 4 * NSEC / self->hz);
	off = dev_ioctl(PROFIL_IOC_OFF, NULL);
	st = get_stats();
	stop = 1;
	sched_setscheduler(0, SCHED_OTHER, &other);
	sched_setaffinity(0, sizeof(all), &all);
	for (i = 1; i < n; i++) {
		pthread_join(h[i].t, NULL);
		held &= h[i].held;
	}
	ASSERT_TRUE(held) TH_LOG("a CPU was not held");
	ASSERT_NE(0, *last) TH_LOG("the array never filled");
	EXPECT_EQ(0, off);
	EXPECT_EQ(PROFIL_STATE_OFF, st.state);
	EXPECT_EQ(PROFIL_STOP_FULL, st.stop_reason);
	EXPECT_LT(0, st.missed);
}

TEST_F(pc, negative_is_einval_and_a_bad_array_efault)
{
	errno = 0;
	EXPECT_EQ(-1, pcsample(pc_buf, -1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, pcsample((uintptr_t *)8, 10));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(PROFIL_STATE_OFF, get_stats().state);
}

/*
 * A forked child does not inherit the collection (pcsample(2)): it stores
 * nothing, its first call returns 0, its stats say PROFIL_STOP_INHERIT,
 * and the parent's collection goes on, with the samples of the parent's
 * CPU time alone: the loops', and at most the CPU time from the call that
 * opened it to the one that closed it, the fork included, owes (a bound
 * of the parent's own clock, which the child's 100 ms would pass).
 */
TEST_F(pc, a_forked_child_does_not_inherit_the_collection)
{
	struct profil_stats st;
	uint64_t c0, c1, ns;
	int status;
	long n;
	pid_t pid;

	c0 = thread_cpu_ns();
	EXPECT_EQ(0, pcsample(pc_buf, NPC));
	ns = spin_cpu(spin_a, 50 * 1000000ULL);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		spin_cpu(spin_b, 100 * 1000000ULL);
		st = get_stats();
		n = pcsample(NULL, 0);
		_exit(n == 0 && !st.samples && st.state == PROFIL_STATE_OFF &&
		      st.stop_reason == PROFIL_STOP_INHERIT &&
		      !in_loop(pc_buf, NPC, spin_b) ? 0 : 1);
	}
	ns += spin_cpu(spin_a, 50 * 1000000ULL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
	n = pcsample(NULL, 0);
	c1 = thread_cpu_ns();
	EXPECT_SAMPLES_WITHIN(n, ns, c1 - c0, self->hz);
	EXPECT_EQ(0, in_loop(pc_buf, n, spin_b));
}

TEST_F(pc, the_kernel_refuses_a_pcsample_setup_that_is_not_one_array)
{
	struct profil_region r[2] = {
		{ .buf = (uintptr_t)pc_buf, .bufsize = sizeof(pc_buf) },
		{ .buf = (uintptr_t)pc_buf2, .bufsize = sizeof(pc_buf2) },
	};
	struct profil_output o = { .size = sizeof(o) };
	struct profil_setup s = { .size = sizeof(s),
				  .mode = PROFIL_MODE_PCSAMPLE,
				  .nr_regions = 1, .region_size = sizeof(r[0]),
				  .regions = (uintptr_t)r };

	s.nr_regions = 2;
	EXPECT_EQ(-EINVAL, dev_ioctl(PROFIL_IOC_SETUP, &s));
	s.nr_regions = 1;
	s.output = (uintptr_t)&o;
	EXPECT_EQ(-EINVAL, dev_ioctl(PROFIL_IOC_SETUP, &s));
	s.output = 0;
	r[0].flags = PROFIL_REGION_U32;
	EXPECT_EQ(-EINVAL, dev_ioctl(PROFIL_IOC_SETUP, &s));
	r[0].flags = 0;
	r[0].scale = 0x10000;
	EXPECT_EQ(-EINVAL, dev_ioctl(PROFIL_IOC_SETUP, &s));
	r[0].scale = 0;
	r[0].buf += 4;
	EXPECT_EQ(-EINVAL, dev_ioctl(PROFIL_IOC_SETUP, &s));
	r[0].buf -= 4;
	EXPECT_EQ(PROFIL_STATE_OFF, get_stats().state);
	EXPECT_EQ(0, dev_ioctl(PROFIL_IOC_SETUP, &s));
	EXPECT_EQ(PROFIL_STATE_ON, get_stats().state);
}

TEST_F(pc, profil_and_pcsample_cancel_each_other)
{
	uint64_t c0, c1;
	long n;

	c0 = thread_cpu_ns();
	EXPECT_EQ(0, pcsample(pc_buf, NPC));
	spin_cpu(spin_a, 50 * 1000000ULL);
	ASSERT_EQ(0, profil(bins_a, sizeof(bins_a), (uintptr_t)spin_a - PAD,
			    0x10000));
	c1 = thread_cpu_ns();
	spin_cpu(spin_a, 50 * 1000000ULL);
	/*
	 * The collection ended at profil(): it holds what came before, at
	 * most the CPU time from the pcsample() that opened it to profil().
	 */
	n = pcsample(pc_buf + NPC / 2, NPC / 2);
	EXPECT_LT(0, n);
	EXPECT_GE(expected(c1 - c0, self->hz) * 1.05 + 2, n)
		TH_LOG("%ld samples for %.1f expected", n,
		       expected(c1 - c0, self->hz));
	EXPECT_LT(0, sum(bins_a, PAD));
	/* ... and pcsample() ended profil()'s session. */
	memset(bins_a, 0, sizeof(bins_a));
	spin_cpu(spin_a, 50 * 1000000ULL);
	EXPECT_EQ(0, sum(bins_a, PAD));
	EXPECT_LT(0, pcsample(NULL, 0));
}

TEST_HARNESS_MAIN
