// SPDX-License-Identifier: GPL-2.0
/*
 * sprofil(3), glibc's <sys/profil.h> interface, served by profil.ko:
 * several regions, 16- and 32-bit bins, the overflow bin, overlaps, the
 * true period in tv, on and off any number of times, every error leaving a
 * running session alone, 1024 regions at full rate, and LD_PRELOAD over
 * glibc's sprofil.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/profil.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "common.h"
#include "kselftest_harness.h"

#define PAD	SPIN_PAD

static uint16_t bins_a[PAD], bins_b[PAD], bins_wide[4 * PAD], ovf[2];
static uint32_t bins32[PAD];

/* A region of 16-bit bins over [fn - PAD, fn + PAD), a bin per halfword. */
static struct prof over(void (*fn)(volatile int *), uint16_t *bins)
{
	return (struct prof){
		.pr_base = bins, .pr_size = PAD * 2,
		.pr_off = (uintptr_t)fn - PAD,
		.pr_scale = 0x10000,
	};
}

static struct prof overflow_bin(void)
{
	return (struct prof){ .pr_base = ovf, .pr_size = sizeof(ovf),
			      .pr_off = 0, .pr_scale = 2 };
}

static uint64_t sum(const uint16_t *b, size_t n)
{
	return sum16(b, n);
}

FIXTURE(sp) {
	unsigned int hz;
};

FIXTURE_SETUP(sp)
{
	REQUIRE_MODULE();
	memset(bins_a, 0, sizeof(bins_a));
	memset(bins_b, 0, sizeof(bins_b));
	memset(bins_wide, 0, sizeof(bins_wide));
	memset(ovf, 0, sizeof(ovf));
	memset(bins32, 0, sizeof(bins32));
	self->hz = kernel_hz();
	ASSERT_NE(0, self->hz);
}

FIXTURE_TEARDOWN(sp)
{
	sprofil(NULL, 0, NULL, 0);
}

#define EXPECT_NEAR_HZ(got, ns) EXPECT_SAMPLES_NEAR(got, ns, self->hz)

TEST_F(sp, two_regions_alternating_get_all_their_samples)
{
	struct prof p[3] = { over(spin_a, bins_a), over(spin_b, bins_b),
			     overflow_bin() };
	uint64_t ns_a = 0, ns_b = 0;
	struct timeval tv;

	ASSERT_EQ(0, sprofil(p, 3, &tv, 0));
	for (int i = 0; i < 6; i++) {
		ns_a += spin_cpu(spin_a, 50 * 1000000ULL);
		ns_b += spin_cpu(spin_b, 50 * 1000000ULL);
	}
	ASSERT_EQ(0, sprofil(NULL, 0, NULL, 0));
	EXPECT_NEAR_HZ(sum(bins_a, PAD), ns_a);
	EXPECT_NEAR_HZ(sum(bins_b, PAD), ns_b);
	/*
	 * Only what ran outside both loops (the CPU-time timer's setup and
	 * signal): glibc sends the first sample after each switch here too.
	 */
	EXPECT_GE(3 + (sum(bins_a, PAD) + sum(bins_b, PAD)) / 5, ovf[0]);
}

TEST_F(sp, overlapping_regions_the_larger_offset_wins)
{
	/* Wide: 4 * PAD halfwords from spin_a - PAD; spin_b is inside. */
	struct prof wide = { .pr_base = bins_wide, .pr_size = sizeof(bins_wide),
			     .pr_off = (uintptr_t)spin_a - PAD,
			     .pr_scale = 0x10000 };
	struct prof p[2] = { wide, over(spin_b, bins_b) };
	uint64_t ns_a, ns_b;

	ASSERT_GT((uintptr_t)spin_b, wide.pr_off);
	ASSERT_LT((uintptr_t)spin_b + 8, wide.pr_off + 4 * PAD * 2);
	ASSERT_EQ(0, sprofil(p, 2, NULL, 0));
	ns_a = spin_cpu(spin_a, 200 * 1000000ULL);
	ns_b = spin_cpu(spin_b, 200 * 1000000ULL);
	ASSERT_EQ(0, sprofil(NULL, 0, NULL, 0));
	EXPECT_NEAR_HZ(sum(bins_b, PAD), ns_b);
	EXPECT_NEAR_HZ(sum(bins_wide, 4 * PAD), ns_a);
}

/*
 * The overflow bin counts every PC outside bins_b's region: the loop's,
 * and those of the calls that armed and disarmed, which the debug kernel
 * makes dear (57 samples for the loop's 51 at 250 Hz in two debug runs,
 * one of them a clean-clone CI): at
 * least the loop's, at most the CPU time from before the one call to
 * after the other.
 */
TEST_F(sp, the_overflow_bin_counts_pcs_in_no_region)
{
	struct prof p[2] = { overflow_bin(), over(spin_b, bins_b) };
	uint64_t ns, c0, c1;

	c0 = thread_cpu_ns();
	ASSERT_EQ(0, sprofil(p, 2, NULL, 0));
	ns = spin_cpu(spin_a, 200 * 1000000ULL);
	ASSERT_EQ(0, sprofil(NULL, 0, NULL, 0));
	c1 = thread_cpu_ns();
	EXPECT_SAMPLES_WITHIN(ovf[0], ns, c1 - c0, self->hz);
	EXPECT_EQ(0, sum(bins_b, PAD));
}

TEST_F(sp, prof_uint_counts_past_65535_and_saturates_at_0xffffffff)
{
	struct prof p = { .pr_base = bins32, .pr_size = sizeof(bins32),
			  .pr_off = (uintptr_t)spin_a - PAD, .pr_scale = 2 };
	struct profil_stats st;

	/* Scale 2 at offset spin_a - PAD: one bin for 64 KiB of text. */
	bins32[0] = 65530;
	ASSERT_EQ(0, sprofil(&p, 1, NULL, PROF_UINT));
	spin_cpu(spin_a, 100 * 1000000ULL);
	EXPECT_LT(65535, bins32[0]);
	bins32[0] = 0xfffffff0;
	spin_cpu(spin_a, 200 * 1000000ULL);
	st = get_stats();
	ASSERT_EQ(0, sprofil(NULL, 0, NULL, 0));
	EXPECT_EQ(0xffffffff, bins32[0]);
	EXPECT_LT(0, st.saturated);
}

struct spinner {
	int i;
	uint64_t ns;
};

static void *spin_thread(void *arg)
{
	struct spinner *s = arg;

	s->ns = spin_cpu(spin16_fn(s->i), 150 * 1000000ULL);
	return NULL;
}

/* Four threads spin; the samples over their CPU time give the rate. */
static double measured_rate(unsigned int flags, struct timeval *tv)
{
	static uint16_t bins[16 * SPIN16_STRIDE / 2];
	struct prof p = { .pr_base = bins, .pr_size = sizeof(bins),
			  .pr_off = (uintptr_t)spin16, .pr_scale = 0x10000 };
	struct spinner s[4];
	pthread_t t[4];
	uint64_t ns = 0;

	memset(bins, 0, sizeof(bins));
	if (sprofil(&p, 1, tv, flags))
		return -1;
	for (int i = 0; i < 4; i++) {
		s[i].i = i;
		pthread_create(&t[i], NULL, spin_thread, &s[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		ns += s[i].ns;
	}
	sprofil(NULL, 0, NULL, 0);
	return sum16(bins, sizeof(bins) / 2) / ((double)ns / NSEC);
}

TEST_F(sp, tv_is_the_measured_period_at_hz_and_with_prof_fast)
{
	struct timeval tv = { 0 };
	double rate, told;

	rate = measured_rate(0, &tv);
	told = 1e6 / tv.tv_usec;
	TH_LOG("HZ: tv %ld us (%.0f Hz), measured %.1f Hz", (long)tv.tv_usec,
	       told, rate);
	EXPECT_EQ(0, tv.tv_sec);
	EXPECT_TRUE(rate > told * 0.9 && rate < told * 1.1);

	rate = measured_rate(PROF_FAST, &tv);
	told = 1e6 / tv.tv_usec;
	TH_LOG("PROF_FAST: tv %ld us (%.0f Hz), measured %.1f Hz",
	       (long)tv.tv_usec, told, rate);
	EXPECT_EQ(1000, tv.tv_usec);
	EXPECT_TRUE(rate > told * 0.9 && rate < told * 1.1);
}

TEST_F(sp, on_and_off_five_times)
{
	struct prof p = over(spin_a, bins_a);
	uint64_t before;

	for (int i = 0; i < 5; i++) {
		memset(bins_a, 0, sizeof(bins_a));
		ASSERT_EQ(0, sprofil(&p, 1, NULL, 0));
		spin_cpu(spin_a, 40 * 1000000ULL);
		ASSERT_EQ(0, sprofil(NULL, 0, NULL, 0));
		before = sum(bins_a, PAD);
		EXPECT_LT(0, before);
		spin_cpu(spin_a, 40 * 1000000ULL);
		EXPECT_EQ(before, sum(bins_a, PAD));
	}
}

TEST_F(sp, sprofil_replaces_a_running_profil)
{
	struct prof p = over(spin_b, bins_b);

	ASSERT_EQ(0, profil(bins_a, sizeof(bins_a),
			    (uintptr_t)spin_a - PAD, 0x10000));
	ASSERT_EQ(0, sprofil(&p, 1, NULL, 0));
	spin_cpu(spin_a, 50 * 1000000ULL);
	spin_cpu(spin_b, 50 * 1000000ULL);
	ASSERT_EQ(0, sprofil(NULL, 0, NULL, 0));
	EXPECT_EQ(0, sum(bins_a, PAD));
	EXPECT_LT(0, sum(bins_b, PAD));
}

/* A failing call: @err, and the running session exactly as it was. */
static void expect_fails(struct __test_metadata *_metadata,
			 struct prof *p, int n, unsigned int flags, int err)
{
	struct prof good = over(spin_a, bins_a);
	struct profil_stats st0, st;
	uint64_t before;

	ASSERT_EQ(0, sprofil(&good, 1, NULL, 0));
	st0 = get_stats();
	errno = 0;
	EXPECT_EQ(-1, sprofil(p, n, NULL, flags));
	EXPECT_EQ(err, errno);
	st = get_stats();
	EXPECT_EQ(PROFIL_STATE_ON, st.state);
	EXPECT_EQ(st0.armed, st.armed);
	before = sum(bins_a, PAD);
	spin_cpu(spin_a, 30 * 1000000ULL);
	EXPECT_LT(before, sum(bins_a, PAD));
}

TEST_F(sp, errors_leave_a_running_session_alone)
{
	struct prof p = over(spin_b, bins_b), q;

	expect_fails(_metadata, &p, -1, 0, E2BIG);
	expect_fails(_metadata, &p, PROFIL_MAX_REGIONS + 1, 0, E2BIG);
	expect_fails(_metadata, &p, 1, 1U << 5, EINVAL);
	q = p;
	q.pr_size = 3;
	expect_fails(_metadata, &q, 1, 0, EINVAL);
	q = p;
	q.pr_base = (char *)bins_b + 1;
	q.pr_size = 4;
	expect_fails(_metadata, &q, 1, 0, EINVAL);
	q = p;
	q.pr_size = 6;
	expect_fails(_metadata, &q, 1, PROF_UINT, EINVAL);
	q = p;
	q.pr_scale = 0x10001;
	expect_fails(_metadata, &q, 1, 0, EINVAL);
	expect_fails(_metadata, (struct prof *)8, 1, 0, EFAULT);
	q = p;
	q.pr_base = (void *)4096;
	expect_fails(_metadata, &q, 1, 0, EFAULT);
}

TEST_F(sp, pinning_past_rlimit_memlock_is_enomem_and_changes_nothing)
{
	size_t len = 8 << 20;
	void *big = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct prof p = { .pr_base = big, .pr_size = len,
			  .pr_off = (uintptr_t)spin_b, .pr_scale = 0x10000 };
	struct rlimit rl = { 1 << 20, 1 << 20 };

	ASSERT_NE(MAP_FAILED, big);
	/* In a child: the limit and the capability stay there. */
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid) {
		if (drop_cap_ipc_lock() || setrlimit(RLIMIT_MEMLOCK, &rl))
			_exit(2);
		expect_fails(_metadata, &p, 1, 0, ENOMEM);
		_exit(_metadata->passed ? 0 : 1);
	}
	int status;

	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_F(sp, a_thousand_regions_count_at_the_full_rate)
{
	static struct prof p[PROFIL_MAX_REGIONS];
	static uint16_t many[PROFIL_MAX_REGIONS];
	struct profil_stats st0, st;
	uint64_t ns;
	int i;

	/* 1023 regions over text never run, one over spin_a, unsorted. */
	for (i = 0; i < PROFIL_MAX_REGIONS - 1; i++)
		p[i] = (struct prof){ .pr_base = &many[i], .pr_size = 2,
				      .pr_off = 0x10000 + 0x1000 * ((i * 7) % 1023),
				      .pr_scale = 0x10000 };
	p[i] = over(spin_a, bins_a);
	st0 = get_stats();
	ASSERT_EQ(0, sprofil(p, PROFIL_MAX_REGIONS, NULL, 0));
	ns = spin_cpu(spin_a, 300 * 1000000ULL);
	st = get_stats();
	ASSERT_EQ(0, sprofil(NULL, 0, NULL, 0));
	EXPECT_NEAR_HZ(sum(bins_a, PAD), ns);
	EXPECT_EQ(0, sum(many, PROFIL_MAX_REGIONS));
	EXPECT_EQ(st0.missed, st.missed);
}

TEST_F(sp, ld_preload_takes_glibcs_place)
{
	char bin[4200], lib[4200], self_exe[4096], out[128] = "";
	char *env[] = { NULL, NULL };
	int pfd[2], status;
	ssize_t n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	pid_t pid;

	ASSERT_LT(0, n);
	self_exe[n] = '\0';
	*strrchr(self_exe, '/') = '\0';
	snprintf(bin, sizeof(bin), "%s/sprofil_probe_glibc", self_exe);
	snprintf(lib, sizeof(lib), "LD_PRELOAD=%s/libprofil.so.0", self_exe);
	env[0] = lib;
	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		dup2(pfd[1], STDOUT_FILENO);
		close(pfd[0]);
		execle(bin, bin, (char *)NULL, env);
		_exit(127);
	}
	close(pfd[1]);
	n = read(pfd[0], out, sizeof(out) - 1);
	close(pfd[0]);
	out[n > 0 ? n : 0] = '\0';
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	TH_LOG("probe: %s", out);
	EXPECT_EQ(0, status);
	/* libprofil's: the true period, and a session in the kernel. */
	EXPECT_EQ(1000000 / self->hz, atoi(strstr(out, "tv ") + 3));
	EXPECT_NE(NULL, strstr(out, "armed 1"));
}

TEST_HARNESS_MAIN
