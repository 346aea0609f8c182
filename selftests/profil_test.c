// SPDX-License-Identifier: GPL-2.0
/*
 * profil.ko and libprofil selftests: the contract of profil(), the bin
 * formula, counting, threads, memlock and the ioctl ABI.  Run as root and as
 * an unprivileged user inside a guest kernel; every test runs in its own
 * process, so no session outlives a test.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "common.h"
#include "kselftest_harness.h"

/* Fixtures whose only state is @n zeroed 16-bit bins in self->buf. */
#define BINS_SETUP(n) do {						\
	REQUIRE_MODULE();						\
	self->buf = calloc((n), 2);					\
	ASSERT_NE(NULL, self->buf);					\
} while (0)

#define BINS_TEARDOWN() do {						\
	profil(NULL, 0, 0, 0);						\
	free(self->buf);						\
} while (0)

#define NBINS	(2 * SPIN_PAD / 2) /* bins covering spin +- SPIN_PAD, 1:1 */

static uintptr_t pc_a(void)
{
	return (uintptr_t)spin_a;
}

/* ------------------------------------------------------------------ bins */

FIXTURE(bins) {
	uint16_t *buf;
	size_t len;
};

FIXTURE_SETUP(bins)
{
	REQUIRE_MODULE();
	self->len = 4 * 4096;
	self->buf = mmap(NULL, self->len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
}

FIXTURE_TEARDOWN(bins)
{
	profil(NULL, 0, 0, 0);
	if (self->buf)
		munmap(self->buf, self->len);
}

/* Spin in spin_a with @buf/@nbins at @off and @scale; return samples. */
static uint64_t run_spin(struct __test_metadata *_metadata, uint16_t *buf,
			 size_t nbins, uintptr_t off, unsigned int scale)
{
	struct profil_stats st0, st1;
	uint64_t ns;

	st0 = get_stats();
	ASSERT_EQ(0, arm_one(buf, nbins * 2, off, scale, RATE));
	ns = spin_cpu(spin_a, SPIN);
	ASSERT_EQ(0, profil(NULL, 0, 0, 0));
	st1 = get_stats();
	TH_LOG("cpu %.3f s, expected %.0f, samples %llu, out of range %llu",
	       ns / 1e9, expected(ns, RATE),
	       (unsigned long long)(st1.samples - st0.samples),
	       (unsigned long long)(st1.out_of_range - st0.out_of_range));
	/* Everything the kernel counted is in the buffer, nothing more. */
	EXPECT_EQ(st1.samples - st0.samples, sum16(buf, nbins));
	return ns;
}

TEST_F_TIMEOUT(bins, scale_0x10000_one_bin_per_halfword, 120)
{
	uint64_t ns = run_spin(_metadata, self->buf, NBINS,
			       pc_a() - SPIN_PAD, 0x10000);
	uint64_t in = 0;
	size_t i;

	/* cmp at +0 -> bin 128, je at +3 -> bin 129, ret at +5 -> 130. */
	for (i = 0; i < NBINS; i++) {
		if (i >= SPIN_PAD / 2 && i <= SPIN_PAD / 2 + 2)
			in += self->buf[i];
		else
			EXPECT_EQ(0, self->buf[i]) TH_LOG("bin %zu", i);
	}
	EXPECT_GE(in, 0.9 * expected(ns, RATE));
}

TEST_F_TIMEOUT(bins, scale_0x8000_one_bin_per_word, 120)
{
	uint64_t ns = run_spin(_metadata, self->buf, NBINS / 2,
			       pc_a() - SPIN_PAD, 0x8000);
	size_t i;

	/* +0 and +3 -> bin 64, +5 -> bin 65. */
	for (i = 0; i < NBINS / 2; i++)
		if (i != SPIN_PAD / 4 && i != SPIN_PAD / 4 + 1)
			EXPECT_EQ(0, self->buf[i]) TH_LOG("bin %zu", i);
	EXPECT_GE(self->buf[SPIN_PAD / 4] + self->buf[SPIN_PAD / 4 + 1],
		  0.9 * expected(ns, RATE));
}

TEST_F_TIMEOUT(bins, scale_0xc000_pc_at_offset_plus_3_in_bin_0, 120)
{
	uint64_t ns = run_spin(_metadata, self->buf, 8, pc_a() - 3, 0xc000);

	/*
	 * glibc: ((pc - off) / 2) * scale / 65536.  The cmp at off+3 is bin
	 * 0, the je at off+6 bin 2, the ret at off+8 bin 3; bin 1 is empty.
	 */
	EXPECT_GT(self->buf[0], 0);
	EXPECT_EQ(0, self->buf[1]);
	EXPECT_EQ(0, self->buf[4]);
	EXPECT_GE(sum16(self->buf, 8), 0.9 * expected(ns, RATE));
}

TEST_F_TIMEOUT(bins, pc_below_offset_not_counted, 120)
{
	struct profil_stats st0 = get_stats(), st1;
	uint64_t ns;

	ASSERT_EQ(0, profil(self->buf, NBINS * 2, pc_a() + 6, 0x10000));
	ns = spin_cpu(spin_a, SPIN);
	ASSERT_EQ(0, profil(NULL, 0, 0, 0));
	st1 = get_stats();
	EXPECT_EQ(0, sum16(self->buf, NBINS));
	EXPECT_EQ(st0.samples, st1.samples);
	EXPECT_GE(st1.out_of_range - st0.out_of_range,
		  0.9 * expected(ns, st1.rate));
}

/* The bin after the last one lies on a PROT_NONE guard page. */
TEST_F_TIMEOUT(bins, pc_past_buffer_not_counted_guard_page, 120)
{
	uint8_t *page = (uint8_t *)self->buf + 4096;
	uint16_t *last = (uint16_t *)(page + 4096 - 2);
	struct profil_stats st0 = get_stats(), st1;

	ASSERT_EQ(0, mprotect(page + 4096, 4096, PROT_NONE));
	*last = 0;
	/* 1 bin; the loop maps onto bin 1, just past the end. */
	ASSERT_EQ(0, arm_one(last, 2, pc_a() - 2, 0x10000, RATE));
	spin_cpu(spin_a, SPIN);
	ASSERT_EQ(0, profil(NULL, 0, 0, 0));
	st1 = get_stats();
	EXPECT_EQ(0, *last);
	EXPECT_EQ(st0.samples, st1.samples);
	EXPECT_GT(st1.out_of_range, st0.out_of_range);
}

TEST_F_TIMEOUT(bins, odd_sized_buffer_last_byte_untouched, 120)
{
	uint8_t *page = (uint8_t *)self->buf + 4096;
	uint8_t *b = page + 4096 - 4;

	ASSERT_EQ(0, mprotect(page + 4096, 4096, PROT_NONE));
	memset(b, 0, 2);
	b[2] = 0xab;
	b[3] = 0xcd;
	/*
	 * 3 bytes: one bin and an odd byte.  The loop maps onto bin 1, which
	 * would be the odd byte and the one after it.
	 */
	ASSERT_EQ(0, profil((unsigned short *)b, 3, pc_a() - 2, 0x10000));
	spin_cpu(spin_a, SPIN);
	ASSERT_EQ(0, profil(NULL, 0, 0, 0));
	EXPECT_EQ(0xab, b[2]);
	EXPECT_EQ(0xcd, b[3]);
	EXPECT_EQ(0, b[0]);
	EXPECT_EQ(0, b[1]);
}

TEST_F_TIMEOUT(bins, bin_at_0xfff0_saturates_at_0xffff, 120)
{
	struct profil_stats st0 = get_stats(), st1;

	self->buf[0] = 0xfff0;
	ASSERT_EQ(0, arm_one(self->buf, 2, pc_a(), 0x100, 10000));
	spin_cpu(spin_a, SPIN / 3);
	ASSERT_EQ(0, profil(NULL, 0, 0, 0));
	st1 = get_stats();
	EXPECT_EQ(0xffff, self->buf[0]);
	EXPECT_EQ(15, st1.samples - st0.samples);
	EXPECT_GT(st1.saturated - st0.saturated, 100);
}

TEST_F_TIMEOUT(bins, u32_bin_saturates_at_0xffffffff, 120)
{
	uint32_t *b = (uint32_t *)self->buf;
	struct profil_region r = {
		.buf = (uintptr_t)b, .bufsize = 8, .offset = pc_a(),
		.scale = 0x100, .flags = PROFIL_REGION_U32,
	};

	b[0] = 0xfffffff0;
	b[1] = 0x12345678;
	ASSERT_EQ(0, arm_regions(&r, 1, 10000));
	spin_cpu(spin_a, SPIN / 3);
	ASSERT_EQ(0, profil(NULL, 0, 0, 0));
	EXPECT_EQ(0xffffffffU, b[0]);
	EXPECT_EQ(0x12345678U, b[1]);
}

static void *spin_a_thread(void *ns)
{
	spin_cpu(spin_a, *(uint64_t *)ns);
	return NULL;
}

/*
 * A 32-bit bin counts past 0xffff from 0: two threads at 10 kHz put 72,000
 * samples into one bin (spin_a's whole loop, scale 0x1000 = 32 bytes of
 * text a bin), and the bin is the kernel's count, not 0xffff.
 */
TEST_F_TIMEOUT(bins, u32_bin_counts_past_0xffff_from_0, 180)
{
	uint64_t ns = 3600 * 1000000ULL;
	uint32_t *b = (uint32_t *)self->buf;
	struct profil_region r = {
		.buf = (uintptr_t)b, .bufsize = 8, .offset = pc_a(),
		.scale = 0x1000, .flags = PROFIL_REGION_U32,
	};
	struct profil_stats st0, st1;
	pthread_t t[2];

	st0 = get_stats();
	ASSERT_EQ(0, arm_regions(&r, 1, 10000));
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, spin_a_thread, &ns));
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	ASSERT_EQ(0, profil(NULL, 0, 0, 0));
	st1 = get_stats();
	TH_LOG("bin 0: %u, samples %llu", b[0],
	       (unsigned long long)(st1.samples - st0.samples));
	EXPECT_LT(0xffffU + 1000, b[0]);
	EXPECT_EQ(st1.samples - st0.samples, b[0] + (uint64_t)b[1]);
	EXPECT_EQ(0, st1.saturated - st0.saturated);
}

/*
 * 32-bit bins are 4 bytes apart: spin16's loops, 64 bytes of text apart,
 * land in u32 bins 32 * i .. 32 * i + 2 (scale 0x10000: one bin per 2
 * bytes of text), for i = 1..15, and no sample lands anywhere else.
 */
TEST_F_TIMEOUT(bins, u32_bins_1_to_n_four_bytes_apart, 180)
{
	uint32_t *b = (uint32_t *)self->buf;
	uintptr_t off = (uintptr_t)spin16;
	struct profil_region r = {
		.buf = (uintptr_t)b, .bufsize = 16 * SPIN16_STRIDE / 2 * 4,
		.offset = off, .scale = 0x10000, .flags = PROFIL_REGION_U32,
	};
	uint64_t sum = 0, in_loops = 0, n;
	struct profil_stats st0, st1;
	size_t i, j;

	ASSERT_LE(r.bufsize, self->len);
	st0 = get_stats();
	ASSERT_EQ(0, arm_regions(&r, 1, RATE));
	for (i = 1; i < 16; i++)
		spin_cpu(spin16_fn(i), SPIN / 15);
	ASSERT_EQ(0, profil(NULL, 0, 0, 0));
	st1 = get_stats();
	for (i = 1; i < 16; i++) {
		n = 0;
		for (j = 0; j < 3; j++)
			n += b[i * SPIN16_STRIDE / 2 + j];
		EXPECT_LT(0, n) {
			TH_LOG("loop %zu: no sample in u32 bins %zu..%zu", i,
			       i * SPIN16_STRIDE / 2, i * SPIN16_STRIDE / 2 + 2);
		}
		in_loops += n;
	}
	for (i = 0; i < r.bufsize / 4; i++)
		sum += b[i];
	EXPECT_EQ(st1.samples - st0.samples, sum);
	EXPECT_EQ(sum, in_loops);
}

TEST_F_TIMEOUT(bins, far_pc_does_not_alias_into_bin_0, 120)
{
	struct profil_stats st0 = get_stats(), st1;
	uintptr_t off = pc_a() - (1ULL << 33);

	if (pc_a() < (1ULL << 33))
		SKIP(return, "text below 8 GiB (not PIE)");
	/* (pc - off) / 2 == 1 << 32: a 32-bit index would be bin 0. */
	ASSERT_EQ(0, arm_one(self->buf, NBINS * 2, off, 0x10000, RATE));
	spin_cpu(spin_a, SPIN);
	ASSERT_EQ(0, profil(NULL, 0, 0, 0));
	st1 = get_stats();
	EXPECT_EQ(0, sum16(self->buf, NBINS));
	EXPECT_EQ(st0.samples, st1.samples);
}

TEST_F_TIMEOUT(bins, overlapping_regions_larger_offset_wins, 120)
{
	uint16_t *lo = self->buf, *hi = self->buf + 1024;
	struct profil_region r[2] = {
		{ .buf = (uintptr_t)hi, .bufsize = 16, .offset = pc_a(),
		  .scale = 0x10000 },
		{ .buf = (uintptr_t)lo, .bufsize = NBINS * 2,
		  .offset = pc_a() - SPIN_PAD, .scale = 0x10000 },
	};

	ASSERT_EQ(0, arm_regions(r, 2, RATE));
	spin_cpu(spin_a, SPIN);
	ASSERT_EQ(0, profil(NULL, 0, 0, 0));
	EXPECT_GT(hi[0] + hi[1], 0);
	EXPECT_EQ(0, sum16(lo, NBINS));
}

TEST_F_TIMEOUT(bins, overflow_region_takes_pcs_in_no_region, 120)
{
	uint16_t *reg = self->buf, *ovf = self->buf + 1024;
	struct profil_region r[2] = {
		{ .buf = (uintptr_t)ovf, .bufsize = 2,
		  .flags = PROFIL_REGION_OVERFLOW },
		{ .buf = (uintptr_t)reg, .bufsize = 16, .offset = pc_a() + 64,
		  .scale = 0x10000 },
	};
	uint64_t ns;

	ASSERT_EQ(0, arm_regions(r, 2, RATE));
	ns = spin_cpu(spin_a, SPIN);
	ASSERT_EQ(0, profil(NULL, 0, 0, 0));
	EXPECT_EQ(0, sum16(reg, 8));
	EXPECT_GE(ovf[0], 0.9 * expected(ns, RATE));
	EXPECT_EQ(0, ovf[1]);
}

/*
 * PROFIL_REGION_PCLOG: the overflow region counts the PCs in no region in
 * its first __u64 and stores each, in order, in the slots after it; the
 * slots past the samples and the bytes past the region stay as they were.
 */
TEST_F_TIMEOUT(bins, pc_log_keeps_the_pcs_in_no_region, 120)
{
	uint16_t *reg = self->buf;
	uint64_t *log = (uint64_t *)(self->buf + 1024);
	struct profil_region r[2] = {
		{ .buf = (uintptr_t)log, .bufsize = 64 * 8,
		  .flags = PROFIL_REGION_OVERFLOW | PROFIL_REGION_PCLOG },
		{ .buf = (uintptr_t)reg, .bufsize = 16, .offset = pc_a() + 64,
		  .scale = 0x10000 },
	};
	uint64_t ns, i, in_spin = 0, n;

	log[64] = 0x5a5a5a5a5a5a5a5aULL;
	ASSERT_EQ(0, arm_regions(r, 2, RATE));
	ns = spin_cpu(spin_a, SPIN / 4);
	ASSERT_EQ(0, profil(NULL, 0, 0, 0));
	EXPECT_EQ(0, sum16(reg, 8));
	EXPECT_GE(log[0], 0.9 * expected(ns, RATE));
	n = log[0] < 63 ? log[0] : 63;
	for (i = 1; i <= n; i++) {
		EXPECT_NE(0, log[i]) TH_LOG("slot %llu", (unsigned long long)i);
		in_spin += log[i] - (uintptr_t)spin_a < 8;
	}
	/* Whatever ran outside the loop: clock_gettime(), the tick's wait. */
	EXPECT_GE(in_spin, n * 8 / 10) TH_LOG("%llu of %llu PCs in spin_a",
					      (unsigned long long)in_spin,
					      (unsigned long long)n);
	for (; i < 64; i++)
		EXPECT_EQ(0, log[i]);
	EXPECT_EQ(0x5a5a5a5a5a5a5a5aULL, log[64]);
}

/* A full log counts on, its PCs as they were, nothing written past it. */
TEST_F_TIMEOUT(bins, a_full_pc_log_counts_on, 120)
{
	uint64_t *log = (uint64_t *)self->buf;
	struct profil_region r = {
		.buf = (uintptr_t)log, .bufsize = 2 * 8,
		.flags = PROFIL_REGION_OVERFLOW | PROFIL_REGION_PCLOG,
	};
	struct profil_stats st0 = get_stats(), st;
	uint64_t ns;

	log[2] = 0x5a5a5a5a5a5a5a5aULL;
	ASSERT_EQ(0, arm_regions(&r, 1, RATE));
	ns = spin_cpu(spin_a, SPIN);
	ASSERT_EQ(0, profil(NULL, 0, 0, 0));
	st = get_stats();
	EXPECT_GE(log[0], 0.9 * expected(ns, RATE));
	EXPECT_EQ(st.samples - st0.samples, log[0]);
	EXPECT_EQ(0, st.saturated - st0.saturated);
	EXPECT_NE(0, log[1]);
	EXPECT_EQ(0x5a5a5a5a5a5a5a5aULL, log[2]);
}

/*
 * User threads add and take away 1 on the very bin the kernel is adding
 * samples to: an update of the kernel's that is not atomic loses one of
 * theirs or keeps a transient value, and the bin ends != samples.
 */
static volatile int wobble_stop;

struct wobbler {
	void *bin;
	int wide;
};

__attribute__((noinline)) static void *wobble_main(void *arg)
{
	struct wobbler *w = arg;

	while (!wobble_stop) {
		if (w->wide) {
			__atomic_fetch_add((uint32_t *)w->bin, 1, __ATOMIC_RELAXED);
			__atomic_fetch_sub((uint32_t *)w->bin, 1, __ATOMIC_RELAXED);
		} else {
			__atomic_fetch_add((uint16_t *)w->bin, 1, __ATOMIC_RELAXED);
			__atomic_fetch_sub((uint16_t *)w->bin, 1, __ATOMIC_RELAXED);
		}
	}
	return NULL;
}

FIXTURE(atomic) {
	union {
		uint16_t b16;
		uint32_t b32;
	} bin;
};

FIXTURE_VARIANT(atomic) {
	int wide;
};

FIXTURE_VARIANT_ADD(atomic, u16) { .wide = 0 };
FIXTURE_VARIANT_ADD(atomic, u32) { .wide = 1 };

FIXTURE_SETUP(atomic)
{
	REQUIRE_MODULE();
	memset(&self->bin, 0, sizeof(self->bin));
}

FIXTURE_TEARDOWN(atomic)
{
	profil(NULL, 0, 0, 0);
}

TEST_F_TIMEOUT(atomic, bin_shared_with_user_atomics_loses_nothing, 180)
{
	struct wobbler w = { .bin = &self->bin, .wide = variant->wide };
	/* scale 2: bin 0 spans 64 KiB of text around wobble_main. */
	struct profil_region r = {
		.buf = (uintptr_t)&self->bin, .bufsize = variant->wide ? 4 : 2,
		.offset = (uintptr_t)wobble_main - 0x8000, .scale = 2,
		.flags = variant->wide ? PROFIL_REGION_U32 : 0,
	};
	struct profil_stats st0, st1;
	struct timespec tick = { 0, 1000000 };
	uint64_t p0, n;
	pthread_t t[2];
	int i;

	wobble_stop = 0;
	/* Before arming: the main thread's own samples may land in bin 0. */
	st0 = get_stats();
	ASSERT_EQ(0, arm_regions(&r, 1, 10000));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, wobble_main, &w));
	/* Let them run for 0.6 s of the process's CPU time. */
	p0 = process_cpu_ns();
	while (process_cpu_ns() - p0 < 2 * SPIN)
		nanosleep(&tick, NULL);
	wobble_stop = 1;
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_OFF, NULL));
	st1 = get_stats();
	n = variant->wide ? self->bin.b32 : self->bin.b16;
	TH_LOG("bin %llu, samples %llu", (unsigned long long)n,
	       (unsigned long long)(st1.samples - st0.samples));
	EXPECT_GT(n, 1000);
	EXPECT_EQ(st1.samples - st0.samples, n);
}

/* -------------------------------------------------------------- contract */

FIXTURE(contract) {
	uint16_t *buf;
};

FIXTURE_SETUP(contract)
{
	REQUIRE_MODULE();
	self->buf = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
}

FIXTURE_TEARDOWN(contract)
{
	profil(NULL, 0, 0, 0);
}

TEST_F_TIMEOUT(contract, size_0_counts_nothing, 120)
{
	struct profil_stats st0, st1;

	ASSERT_EQ(0, profil(self->buf, 0, pc_a() - SPIN_PAD, 0x10000));
	st0 = get_stats();
	EXPECT_EQ(PROFIL_STATE_ON, st0.state);
	spin_cpu(spin_a, SPIN / 3);
	st1 = get_stats();
	EXPECT_EQ(st0.samples, st1.samples);
	EXPECT_GT(st1.out_of_range, st0.out_of_range);
	EXPECT_EQ(0, sum16(self->buf, 4096));
}

TEST_F_TIMEOUT(contract, scale_above_0x10000_is_einval_session_kept, 120)
{
	struct profil_stats st0, st1;

	ASSERT_EQ(0, profil(self->buf, 4096, pc_a() - SPIN_PAD, 0x10000));
	st0 = get_stats();
	errno = 0;
	EXPECT_EQ(-1, profil(self->buf, 4096, 0, 0x10001));
	EXPECT_EQ(EINVAL, errno);
	st1 = get_stats();
	EXPECT_EQ(PROFIL_STATE_ON, st1.state);
	EXPECT_EQ(st0.armed, st1.armed);
	spin_cpu(spin_a, SPIN / 3);
	EXPECT_GT(sum16(self->buf, 2048), 0);
}

TEST_F(contract, readonly_buffer_is_efault_nothing_enabled)
{
	struct profil_stats st;

	ASSERT_EQ(0, mprotect(self->buf, 8192, PROT_READ));
	errno = 0;
	EXPECT_EQ(-1, profil(self->buf, 4096, pc_a(), 0x10000));
	EXPECT_EQ(EFAULT, errno);
	st = get_stats();
	EXPECT_EQ(PROFIL_STATE_OFF, st.state);
	EXPECT_EQ(0, st.armed);
}

TEST_F(contract, partly_unmapped_buffer_is_efault_nothing_enabled)
{
	ASSERT_EQ(0, munmap((char *)self->buf + 4096, 4096));
	errno = 0;
	EXPECT_EQ(-1, profil(self->buf, 8192, pc_a(), 0x10000));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(PROFIL_STATE_OFF, get_stats().state);
	errno = 0;
	EXPECT_EQ(-1, profil((unsigned short *)0xffff800000000000ULL, 64, 0,
			     0x10000));
	EXPECT_EQ(EFAULT, errno);
}

TEST_F_TIMEOUT(contract, rearm_replaces_previous_buffer, 120)
{
	uint16_t *second = self->buf + 2048;
	struct profil_stats st;

	ASSERT_EQ(0, profil(self->buf, NBINS * 2, pc_a() - SPIN_PAD, 0x10000));
	spin_cpu(spin_a, SPIN / 3);
	ASSERT_EQ(0, profil(second, NBINS * 2, pc_a() - SPIN_PAD, 0x10000));
	memset(self->buf, 0, NBINS * 2);
	spin_cpu(spin_a, SPIN / 3);
	st = get_stats();
	EXPECT_EQ(2, st.armed);
	EXPECT_EQ(PROFIL_STATE_ON, st.state);
	EXPECT_EQ(0, sum16(self->buf, NBINS));
	EXPECT_GT(sum16(second, NBINS), 0);
	ASSERT_EQ(0, profil(NULL, 0, 0, 0));
	EXPECT_EQ(PROFIL_STOP_USER, get_stats().stop_reason);
}

FIXTURE(off) {
	uint16_t *buf;
};

FIXTURE_SETUP(off)
{
	BINS_SETUP(2048);
}

FIXTURE_TEARDOWN(off)
{
	BINS_TEARDOWN();
}

FIXTURE_VARIANT(off) {
	unsigned int scale;
	int null_buf;
};

FIXTURE_VARIANT_ADD(off, null_buffer) { .null_buf = 1, .scale = 0x10000 };
FIXTURE_VARIANT_ADD(off, scale_0) { .scale = 0 };
FIXTURE_VARIANT_ADD(off, scale_1) { .scale = 1 };

/* profil(NULL, ...), scale 0 and scale 1: 0, and profiling is off. */
TEST_F_TIMEOUT(off, turns_profiling_off, 120)
{
	unsigned short *b = variant->null_buf ? NULL : self->buf;
	struct profil_stats st0, st1;

	ASSERT_EQ(0, profil(self->buf, 4096, pc_a() - SPIN_PAD, 0x10000));
	ASSERT_EQ(PROFIL_STATE_ON, get_stats().state);
	ASSERT_EQ(0, profil(b, 4096, pc_a() - SPIN_PAD, variant->scale));
	st0 = get_stats();
	EXPECT_EQ(PROFIL_STATE_OFF, st0.state);
	EXPECT_EQ(PROFIL_STOP_USER, st0.stop_reason);
	memset(self->buf, 0, 4096);
	spin_cpu(spin_a, SPIN / 3);
	st1 = get_stats();
	EXPECT_EQ(st0.samples, st1.samples);
	EXPECT_EQ(st0.out_of_range, st1.out_of_range);
	EXPECT_EQ(0, sum16(self->buf, 2048));
}

/* ------------------------------------------------------------------ rate */

FIXTURE(rate) {
	uint16_t *buf;
};

FIXTURE_VARIANT(rate) {
	unsigned int rate;	/* 0: the kernel's HZ */
};

FIXTURE_VARIANT_ADD(rate, hz) { .rate = 0 };
FIXTURE_VARIANT_ADD(rate, r1000) { .rate = 1000 };
FIXTURE_VARIANT_ADD(rate, r10000) { .rate = 10000 };
/* Above the default max_rate: root raises it for the test. */
FIXTURE_VARIANT_ADD(rate, r100000) { .rate = 100000 };

FIXTURE_SETUP(rate)
{
	BINS_SETUP(NBINS);
	if (variant->rate <= 10000)
		return;
	if (geteuid())
		SKIP_NOW("max_rate is root's to raise");
	ASSERT_EQ(0, set_param("max_rate", "100000"));
}

FIXTURE_TEARDOWN(rate)
{
	BINS_TEARDOWN();
	if (variant->rate > 10000 && !geteuid())
		set_param("max_rate", "10000");
}

/* Arm @buf's bins over spin_a at @rate (0: HZ); @s says the rate taken. */
static int rate_arm(uint16_t *buf, unsigned int rate, struct profil_setup *s)
{
	static struct profil_region r;

	r = (struct profil_region){
		.buf = (uintptr_t)buf, .bufsize = NBINS * 2,
		.offset = pc_a() - SPIN_PAD, .scale = 0x10000,
	};
	*s = (struct profil_setup){
		.size = sizeof(*s), .rate = rate, .nr_regions = 1,
		.region_size = sizeof(r), .regions = (uintptr_t)&r,
	};
	return dev_ioctl(PROFIL_IOC_SETUP, s);
}

/* Samples = CPU time x rate, within 10%; the rate is reported truly. */
TEST_F_TIMEOUT(rate, samples_match_cpu_time, 120)
{
	struct profil_setup s;
	struct profil_stats st;
	uint64_t ns, n;

	ASSERT_EQ(0, rate_arm(self->buf, variant->rate, &s));
	if (variant->rate) {
		EXPECT_EQ(variant->rate, s.rate);
	} else {
		EXPECT_TRUE(s.rate == 100 || s.rate == 250 || s.rate == 300 ||
			    s.rate == 1000) TH_LOG("HZ %u", s.rate);
	}
	ns = spin_cpu(spin_a, 2 * SPIN);
	st = get_stats();
	n = sum16(self->buf, NBINS);
	TH_LOG("rate %u: cpu %.3f s, expected %.1f, samples %llu (%.1f%%)",
	       s.rate, ns / 1e9, expected(ns, s.rate), (unsigned long long)n,
	       100.0 * n / expected(ns, s.rate));
	EXPECT_EQ(s.rate, st.rate);
	EXPECT_EQ(NSEC / s.rate, st.period_ns);
	EXPECT_GE(n, 0.9 * expected(ns, s.rate));
	EXPECT_LE(n, 1.1 * expected(ns, s.rate) + 1);
}

/* Every period credited, whatever the tick lost: samples and the rest. */
static uint64_t credited(const struct profil_stats *st)
{
	return st->samples + st->out_of_range + st->saturated + st->missed +
	       st->paused;
}

/*
 * The periods credited are the thread's CPU time x rate, not the ticks
 * taken: under TCG, and on any machine whose timer comes late, a tick
 * owes more than one period, and one sample a tick would fall short by
 * what came late (4 to 2% at 10 kHz here).  Both are counted by the
 * module (STATS' ticks), so the bound is close: what the task clock gives
 * the window between the two STATS calls, within 0.5%, less the tick
 * that may still be owed at the end.  At 100 kHz (root, max_rate), where
 * late ticks are the rule, the gap between the two is wide.
 */
TEST_F_TIMEOUT(rate, periods_credited_are_cpu_time_not_ticks_taken, 120)
{
	struct profil_setup s;
	struct profil_stats st0, st1;
	uint64_t c0, c1, c2, c3, period, n, ticks;
	double lo, hi;

	ASSERT_EQ(0, rate_arm(self->buf, variant->rate, &s));
	c0 = thread_cpu_ns();
	st0 = get_stats();
	c1 = thread_cpu_ns();
	spin_cpu(spin_a, 2 * SPIN);
	c2 = thread_cpu_ns();
	st1 = get_stats();
	c3 = thread_cpu_ns();
	ASSERT_LE(PROFIL_STATS_SIZE_VER2, st1.size);
	period = st1.period_ns;
	n = credited(&st1) - credited(&st0);
	ticks = st1.ticks - st0.ticks;
	/* The window: at least c1..c2, at most c0..c3. */
	lo = 0.995 * (c2 - c1) / period - 2;
	hi = 1.005 * (c3 - c0) / period + 2;
	TH_LOG("rate %u: %.1f to %.1f periods of CPU time, %llu credited, %llu ticks taken (%.1f%%)",
	       st1.rate, (double)(c2 - c1) / period, (double)(c3 - c0) / period,
	       (unsigned long long)n, (unsigned long long)ticks,
	       100.0 * ticks / (n + !n));
	EXPECT_GE(n, lo);
	EXPECT_LE(n, hi);
	EXPECT_LT(0, ticks);
	/* A tick credits what is owed: at least a period, as a rule. */
	EXPECT_GE(n + n / 50 + 2, ticks);
}

FIXTURE(cpu) {
	uint16_t *buf;
};

FIXTURE_SETUP(cpu)
{
	BINS_SETUP(NBINS);
}

FIXTURE_TEARDOWN(cpu)
{
	BINS_TEARDOWN();
}

TEST_F(cpu, above_max_rate_is_einval)
{
	struct profil_region r = {
		.buf = (uintptr_t)self->buf, .bufsize = 2, .scale = 0x10000,
	};

	EXPECT_EQ(-EINVAL, arm_regions(&r, 1, 10001));
	EXPECT_EQ(-EINVAL, arm_regions(&r, 1, ~0U));
	EXPECT_EQ(0, arm_regions(&r, 1, 10000));
}

TEST_F_TIMEOUT(cpu, one_second_asleep_adds_nothing, 120)
{
	struct timespec one = { 1, 0 }, w0, w1;
	struct profil_stats st0, st1;
	uint64_t t0, ns, n, wall;

	/*
	 * The clock starts before the arm: the thread's event is created
	 * inside it, so whatever it will ever credit is CPU time after t0,
	 * and a tick in the sleep may charge what the arm itself cost.
	 */
	t0 = thread_cpu_ns();
	ASSERT_EQ(0, arm_one(self->buf, 2, 0, 2, 10000));
	st0 = get_stats();
	clock_gettime(CLOCK_MONOTONIC, &w0);
	nanosleep(&one, NULL);
	clock_gettime(CLOCK_MONOTONIC, &w1);
	st1 = get_stats();
	ns = thread_cpu_ns() - t0;
	wall = (w1.tv_sec - w0.tv_sec) * NSEC + w1.tv_nsec - w0.tv_nsec;
	n = st1.samples + st1.out_of_range - st0.samples - st0.out_of_range;
	TH_LOG("asleep 1 s: %llu samples for %.2f ms of CPU",
	       (unsigned long long)n, ns / 1e6);
	/*
	 * The sleep was one (a few ms of CPU, 30 or so under the debug
	 * kernel in TCG, against a second of wall time), and the samples
	 * are only what that CPU time earns, against 10000 for the second
	 * asleep.
	 */
	ASSERT_LE(NSEC, wall);
	ASSERT_GT(wall / 2, ns);
	EXPECT_LE(n, expected(ns, 10000) + 2);
}

/*
 * A loop of system calls, one of which sleeps and wakes at once (nanosleep
 * 0 waits for its expired timer's interrupt; poll of an empty pipe with no
 * timeout does not sleep), is sampled at its thread's CPU time x rate, as
 * a loop that computes is: the way back from idle, which the thread's CPU
 * clock counts and the task clock does not, is charged.
 */
/* Loop over those calls for @want ns of the thread's CPU; return it. */
static uint64_t sleepy_syscalls(uint64_t want)
{
	struct timespec zero = { 0, 0 };
	struct pollfd pfd;
	uint64_t t0;
	int p[2];

	if (pipe(p) || prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0))
		return 0;
	pfd = (struct pollfd){ .fd = p[0], .events = POLLIN };
	t0 = thread_cpu_ns();
	do {
		nanosleep(&zero, NULL);
		poll(&pfd, 1, 0);
	} while (thread_cpu_ns() - t0 < want);
	t0 = thread_cpu_ns() - t0;
	close(p[0]);
	close(p[1]);
	return t0;
}

TEST_F_TIMEOUT(cpu, sleeping_system_calls_are_sampled_at_their_cpu_time, 120)
{
	struct profil_stats st0, st1;
	uint64_t ns, n;

	ASSERT_EQ(0, arm_one(self->buf, 2, 0, 2, 1000));
	st0 = get_stats();
	ns = sleepy_syscalls(SPIN);
	st1 = get_stats();
	ASSERT_NE(0, ns);
	n = st1.samples + st1.out_of_range - st0.samples - st0.out_of_range;
	TH_LOG("%llu samples for %.0f expected (%.1f%%)", (unsigned long long)n,
	       expected(ns, 1000), 100.0 * n / expected(ns, 1000));
	EXPECT_GE(n, 0.95 * expected(ns, 1000) - 2);
	EXPECT_LE(n, 1.05 * expected(ns, 1000) + 2);
}

/*
 * Reading /dev/zero in 64 KiB blocks spends its time in the kernel; every
 * tick there is charged to the user PC, the syscall in read().
 */
TEST_F_TIMEOUT(cpu, read_loop_system_time_charged_to_user_pc, 120)
{
	static char block[65536];
	uintptr_t rd = (uintptr_t)read;
	struct profil_stats st0, st1;
	uint64_t t0, ns, n;
	int fd = open("/dev/zero", O_RDONLY);
	uint16_t near;

	ASSERT_LE(0, fd);
	/* Bins of 256 bytes from read - 1024: read() starts in bin 4. */
	ASSERT_EQ(0, arm_one(self->buf, NBINS * 2, rd - 1024, 0x200, RATE));
	st0 = get_stats();
	t0 = thread_cpu_ns();
	do {
		ASSERT_EQ(sizeof(block), read(fd, block, sizeof(block)));
	} while (thread_cpu_ns() - t0 < SPIN);
	ns = thread_cpu_ns() - t0;
	ASSERT_EQ(0, profil(NULL, 0, 0, 0));
	st1 = get_stats();
	close(fd);
	n = st1.samples + st1.out_of_range - st0.samples - st0.out_of_range;
	near = self->buf[4] + self->buf[5];
	TH_LOG("cpu %.3f s, expected %.0f, samples %llu, in read() %u",
	       ns / 1e9, expected(ns, RATE), (unsigned long long)n, near);
	EXPECT_GE(n, 0.9 * expected(ns, RATE));
	EXPECT_LE(n, 1.1 * expected(ns, RATE) + 1);
	EXPECT_GE(near, 0.5 * n);
}

/* --------------------------------------------------------------- threads */

struct spinner {
	void (*fn)(volatile int *);
	uint64_t ns;	/* in: CPU time to spin, 0 = SPIN; out: spun */
	pthread_barrier_t *go;
};

static void *spinner_main(void *arg)
{
	struct spinner *s = arg;

	uint64_t want = s->ns ? s->ns : SPIN;	/* in: CPU to spin, 0 = SPIN */

	if (s->go)
		pthread_barrier_wait(s->go);
	s->ns = spin_cpu(s->fn, want);	/* out: CPU really spun */
	return NULL;
}

FIXTURE(threads) {
	uint16_t *buf;
};

FIXTURE_SETUP(threads)
{
	BINS_SETUP(4 * NBINS);
}

FIXTURE_TEARDOWN(threads)
{
	BINS_TEARDOWN();
}

/* Four threads hammer the same 2-byte range: no increment is lost. */
TEST_F_TIMEOUT(threads, four_threads_one_bin_lose_nothing, 180)
{
	struct spinner s[4];
	struct profil_stats st0, st1;
	pthread_t t[4];
	uint64_t ns = 0, n;
	int i;

	/* scale 2: the whole spin_a loop is one bin. */
	st0 = get_stats();
	ASSERT_EQ(0, arm_one(self->buf, 2, pc_a() - 2, 2, RATE));
	for (i = 0; i < 4; i++) {
		s[i] = (struct spinner){ .fn = spin_a };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, spinner_main, &s[i]));
	}
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		ns += s[i].ns;
	}
	ASSERT_EQ(0, profil(NULL, 0, 0, 0));
	st1 = get_stats();
	n = self->buf[0];
	TH_LOG("cpu %.3f s, expected %.0f, bin %llu, counted %llu",
	       ns / 1e9, expected(ns, RATE), (unsigned long long)n,
	       (unsigned long long)(st1.samples - st0.samples));
	EXPECT_EQ(st1.samples - st0.samples, n);
	EXPECT_GE(n, 0.95 * expected(ns, RATE));
	EXPECT_LE(n, 1.05 * expected(ns, RATE));
}

static void *sleepy_main(void *arg)
{
	*(uint64_t *)arg = sleepy_syscalls(SPIN);
	return NULL;
}

/*
 * Four threads in those calls on two CPUs migrate, and switch between
 * each other (perf then swaps their events): what their CPU clocks gain
 * beyond the task clock is still charged, and once.  Bounded above by the
 * whole process's CPU time in the window.
 */
TEST_F_TIMEOUT(threads, four_threads_in_sleeping_system_calls_charged_once,
	       180)
{
	struct profil_stats st0, st1;
	uint64_t ns[4], sum = 0, p0, p1, n;
	pthread_t t[4];
	int i;

	ASSERT_EQ(0, arm_one(self->buf, 2, 0, 2, 1000));
	st0 = get_stats();
	p0 = process_cpu_ns();
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, sleepy_main, &ns[i]));
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		ASSERT_NE(0, ns[i]);
		sum += ns[i];
	}
	p1 = process_cpu_ns();
	st1 = get_stats();
	n = st1.samples + st1.out_of_range - st0.samples - st0.out_of_range;
	TH_LOG("%llu samples for %.0f expected by the loops, %.0f by the process",
	       (unsigned long long)n, expected(sum, 1000),
	       expected(p1 - p0, 1000));
	EXPECT_GE(n, 0.95 * expected(sum, 1000) - 8);
	EXPECT_LE(n, expected(p1 - p0, 1000) + 8);
}

/* A thread from before the call and one from after are both sampled. */
TEST_F_TIMEOUT(threads, threads_before_and_after_setup_sampled, 180)
{
	struct spinner a = { .fn = spin_a }, b = { .fn = spin_b };
	uint16_t *ba = self->buf, *bb = self->buf + NBINS;
	struct profil_region r[2] = {
		{ .buf = (uintptr_t)ba, .bufsize = 2, .offset = pc_a() - 2,
		  .scale = 2 },
		{ .buf = (uintptr_t)bb, .bufsize = 2,
		  .offset = (uintptr_t)spin_b - 2, .scale = 2 },
	};
	pthread_barrier_t go;
	pthread_t ta, tb;

	pthread_barrier_init(&go, NULL, 2);
	a.go = &go;
	ASSERT_EQ(0, pthread_create(&ta, NULL, spinner_main, &a));
	ASSERT_EQ(0, arm_regions(r, 2, RATE));
	ASSERT_EQ(0, pthread_create(&tb, NULL, spinner_main, &b));
	pthread_barrier_wait(&go);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	TH_LOG("before: %u of %.0f, after: %u of %.0f", ba[0],
	       expected(a.ns, RATE), bb[0], expected(b.ns, RATE));
	/* Each thread sampled once: not missed, not attached twice. */
	EXPECT_GE(ba[0], 0.9 * expected(a.ns, RATE));
	EXPECT_LE(ba[0], 1.1 * expected(a.ns, RATE));
	EXPECT_GE(bb[0], 0.9 * expected(b.ns, RATE));
	EXPECT_LE(bb[0], 1.1 * expected(b.ns, RATE));
}

/*
 * Sixteen threads waiting when profil() is called, each in a loop of its
 * own with a bin of its own: each is sampled, and only once.
 */
TEST_F_TIMEOUT(threads, many_threads_from_before_setup_sampled_once, 180)
{
	struct spinner s[16];
	pthread_barrier_t go;
	pthread_t t[16];
	int i;

	pthread_barrier_init(&go, NULL, 17);
	for (i = 0; i < 16; i++) {
		s[i] = (struct spinner){ .fn = spin16_fn(i), .go = &go,
					 .ns = SPIN / 3 };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, spinner_main, &s[i]));
	}
	/* One bin per 64 bytes: loop i counts in bin i. */
	ASSERT_EQ(0, arm_one(self->buf, 32, (uintptr_t)spin16,
			     0x10000 / (SPIN16_STRIDE / 2), RATE));
	pthread_barrier_wait(&go);
	for (i = 0; i < 16; i++)
		pthread_join(t[i], NULL);
	ASSERT_EQ(0, profil(NULL, 0, 0, 0));
	/*
	 * The lower bound is on the CPU time asked for, when less than the
	 * time spun: under TCG a host stall at the end of a spin shows as CPU
	 * time (201 ms for 100 once) that the thread's next tick, after the
	 * loop, is charged for.
	 */
	for (i = 0; i < 16; i++) {
		EXPECT_GE(self->buf[i],
			  0.8 * expected(s[i].ns < SPIN / 3 ? s[i].ns : SPIN / 3,
					 RATE))
			TH_LOG("thread %d: expected %.0f", i,
			       expected(s[i].ns, RATE));
		EXPECT_LE(self->buf[i], 1.2 * expected(s[i].ns, RATE))
			TH_LOG("thread %d: expected %.0f", i,
			       expected(s[i].ns, RATE));
	}
}

static volatile int churn_stop;

/* Start and join short-lived threads until told to stop. */
static void *churn_main(void *arg)
{
	pthread_t t;

	(void)arg;
	while (!churn_stop) {
		if (pthread_create(&t, NULL, churn_main, (void *)1) == 0)
			pthread_join(t, NULL);
		if (arg)
			break;
	}
	return NULL;
}

/* Threads born and dying while profil() walks them: every call works. */
TEST_F_TIMEOUT(threads, setup_while_threads_come_and_go, 180)
{
	uint64_t t0 = thread_cpu_ns();
	pthread_t t[2];
	int i, calls = 0, failed = 0;

	churn_stop = 0;
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, churn_main, NULL));
	while (thread_cpu_ns() - t0 < SPIN) {
		if (profil(self->buf, NBINS * 2, pc_a() - SPIN_PAD, 0x10000))
			failed++;
		calls++;
	}
	churn_stop = 1;
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	TH_LOG("%d setups, %d failed", calls, failed);
	EXPECT_EQ(0, failed);
	EXPECT_EQ(calls, get_stats().armed);
}

/* --------------------------------------------------------------- memlock */

FIXTURE(memlock) {
	void *buf;
};

FIXTURE_SETUP(memlock)
{
	REQUIRE_MODULE();
	self->buf = mmap(NULL, 64 * 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
}

FIXTURE_TEARDOWN(memlock)
{
	profil(NULL, 0, 0, 0);
}

TEST_F(memlock, buffer_charged_to_vmpin_and_returned)
{
	long before = vmpin_kb();

	ASSERT_LE(0, before);
	ASSERT_EQ(0, profil(self->buf, 16 * 4096, 0, 0x10000));
	EXPECT_EQ(before + 64, vmpin_kb());
	/* A replacement is charged for its own size only. */
	ASSERT_EQ(0, profil(self->buf, 4 * 4096, 0, 0x10000));
	EXPECT_EQ(before + 16, vmpin_kb());
	ASSERT_EQ(0, profil(NULL, 0, 0, 0));
	EXPECT_EQ(before, vmpin_kb());
}

TEST_F(memlock, past_rlimit_memlock_is_enomem)
{
	struct rlimit rl = { 8 * 4096, 8 * 4096 };

	ASSERT_EQ(0, drop_cap_ipc_lock());
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	errno = 0;
	EXPECT_EQ(-1, profil(self->buf, 16 * 4096, 0, 0x10000));
	EXPECT_EQ(ENOMEM, errno);
	EXPECT_EQ(PROFIL_STATE_OFF, get_stats().state);
	EXPECT_EQ(0, vmpin_kb());
	/* Within the limit it works. */
	EXPECT_EQ(0, profil(self->buf, 8 * 4096, 0, 0x10000));
	EXPECT_EQ(32, vmpin_kb());
}

/* ------------------------------------------------------------------- abi */

struct abi_args {
	struct profil_setup *s;
	struct profil_region *r;	/* regions[0], stride s->region_size */
	unsigned char *setup_mem;	/* 8 KiB holding *s */
	unsigned char *region_mem;	/* 8 KiB holding the regions */
	void *buf;			/* a valid 4 KiB bin buffer */
	void *arg;			/* what the ioctl gets */
};

#define REGION(a, i) \
	((struct profil_region *)((a)->region_mem + (i) * (a)->s->region_size))

FIXTURE(abi) {
	struct abi_args a;
	void *mem;
	struct profil_stats before;
};

FIXTURE_VARIANT(abi) {
	void (*mutate)(struct abi_args *a);
	int err;
};

FIXTURE_SETUP(abi)
{
	struct abi_args *a = &self->a;

	REQUIRE_MODULE();
	self->mem = mmap(NULL, 6 * 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->mem);
	/* The sixth page is a hole: PROT_NONE. */
	ASSERT_EQ(0, mprotect((char *)self->mem + 5 * 4096, 4096, PROT_NONE));
	a->setup_mem = self->mem;
	a->region_mem = a->setup_mem + 8192;
	a->buf = a->region_mem + 8192;
	a->s = (struct profil_setup *)a->setup_mem;
	a->r = (struct profil_region *)a->region_mem;
	*a->s = (struct profil_setup){
		.size = sizeof(*a->s), .rate = RATE, .nr_regions = 1,
		.region_size = sizeof(*a->r), .regions = (uintptr_t)a->r,
	};
	*a->r = (struct profil_region){
		.buf = (uintptr_t)a->buf, .bufsize = 4096,
		.offset = pc_a() - SPIN_PAD, .scale = 0x10000,
	};
	a->arg = a->s;
	/* A running session that every bad call must leave alone. */
	ASSERT_EQ(0, profil(a->buf, 4096, pc_a() - SPIN_PAD, 0x10000));
	self->before = get_stats();
}

FIXTURE_TEARDOWN(abi)
{
	profil(NULL, 0, 0, 0);
}

static void m_size_0(struct abi_args *a) { a->s->size = 0; }
static void m_size_31(struct abi_args *a) { a->s->size = 31; }
static void m_size_8192(struct abi_args *a) { a->s->size = 8192; }
static void m_size_tail(struct abi_args *a)
{
	/* A byte past the struct this header knows. */
	a->s->size = sizeof(struct profil_setup) + 8;
	a->setup_mem[sizeof(struct profil_setup) + 4] = 1;
}
static void m_arg_null(struct abi_args *a) { a->arg = NULL; }
static void m_arg_kernel(struct abi_args *a)
{
	a->arg = (void *)0xffffffff81000000ULL;
}
static void m_arg_readonly(struct abi_args *a)
{
	/* Readable but not writable: the rate cannot be reported. */
	mprotect(a->setup_mem, 4096, PROT_READ);
}
static void m_flags(struct abi_args *a) { a->s->flags = 0x80000000; }
static void m_mode(struct abi_args *a) { a->s->mode = 7; }
static void m_mode_pcsample(struct abi_args *a)
{
	a->s->mode = PROFIL_MODE_PCSAMPLE;
}
static void m_rate(struct abi_args *a) { a->s->rate = 10001; }
static void m_nr_0(struct abi_args *a) { a->s->nr_regions = 0; }
static void m_nr_1025(struct abi_args *a)
{
	a->s->nr_regions = PROFIL_MAX_REGIONS + 1;
}
static void m_nr_huge(struct abi_args *a) { a->s->nr_regions = ~0U; }
static void m_rsize_16(struct abi_args *a) { a->s->region_size = 16; }
static void m_rsize_8192(struct abi_args *a) { a->s->region_size = 8192; }
static void m_rsize_tail(struct abi_args *a)
{
	a->s->region_size = 40;
	a->region_mem[36] = 1;
}
static void m_regions_null(struct abi_args *a) { a->s->regions = 0; }
static void m_regions_kernel(struct abi_args *a)
{
	a->s->regions = 0xffffffff81000000ULL;
}
static void m_regions_past_end(struct abi_args *a)
{
	/* Two regions, the second in the hole after the mapping. */
	a->s->nr_regions = 2;
	a->s->regions = (uintptr_t)(a->setup_mem + 5 * 4096 - 32);
	memcpy(a->setup_mem + 5 * 4096 - 32, a->r, 32);
}
static void m_r_flags(struct abi_args *a) { a->r->flags = 0x100; }
static void m_r_scale_0(struct abi_args *a) { a->r->scale = 0; }
static void m_r_scale_big(struct abi_args *a) { a->r->scale = 0x10001; }
static void m_r_odd(struct abi_args *a) { a->r->buf++; }
static void m_r_u32_misaligned(struct abi_args *a)
{
	a->r->buf += 2;
	a->r->flags = PROFIL_REGION_U32;
}
static void m_r_wraps(struct abi_args *a)
{
	a->r->buf = ~0ULL - 1;
	a->r->bufsize = 4;
}
static void m_r_huge(struct abi_args *a)
{
	a->r->bufsize = PROFIL_MAX_BUFSIZE + 2;
}
static void m_r_kernel(struct abi_args *a)
{
	a->r->buf = 0xffff888000000000ULL;
}
static void m_r_unmapped(struct abi_args *a)
{
	a->r->buf = (uintptr_t)a->setup_mem + 5 * 4096;
}
static void m_r_second_bad(struct abi_args *a)
{
	a->s->nr_regions = 2;
	*REGION(a, 1) = *a->r;
	REGION(a, 1)->scale = 0;
}
static void m_r_two_overflow(struct abi_args *a)
{
	a->s->nr_regions = 2;
	a->r->flags = PROFIL_REGION_OVERFLOW;
	a->r->offset = 0;
	a->r->scale = 0;
	*REGION(a, 1) = *a->r;
}
static void m_r_overflow_offset(struct abi_args *a)
{
	a->r->flags = PROFIL_REGION_OVERFLOW;
	a->r->scale = 0;
}
/* PROFIL_REGION_PCLOG: on the overflow region only, __u64 slots, two. */
static void m_r_pclog(struct abi_args *a)
{
	a->r->flags = PROFIL_REGION_OVERFLOW | PROFIL_REGION_PCLOG;
	a->r->offset = 0;
	a->r->scale = 0;
}
static void m_r_pclog_alone(struct abi_args *a)
{
	a->r->flags = PROFIL_REGION_PCLOG;
}
static void m_r_pclog_u32(struct abi_args *a)
{
	m_r_pclog(a);
	a->r->flags |= PROFIL_REGION_U32;
}
static void m_r_pclog_one_slot(struct abi_args *a)
{
	m_r_pclog(a);
	a->r->bufsize = 15;
}
static void m_r_pclog_misaligned(struct abi_args *a)
{
	m_r_pclog(a);
	a->r->buf += 4;
}

FIXTURE_VARIANT_ADD(abi, setup_size_0_is_einval) { m_size_0, EINVAL };
FIXTURE_VARIANT_ADD(abi, setup_size_31_is_einval) { m_size_31, EINVAL };
FIXTURE_VARIANT_ADD(abi, setup_size_8192_is_e2big) { m_size_8192, E2BIG };
FIXTURE_VARIANT_ADD(abi, setup_longer_nonzero_tail_is_e2big) { m_size_tail, E2BIG };
FIXTURE_VARIANT_ADD(abi, setup_null_is_efault) { m_arg_null, EFAULT };
FIXTURE_VARIANT_ADD(abi, setup_kernel_pointer_is_efault) { m_arg_kernel, EFAULT };
FIXTURE_VARIANT_ADD(abi, setup_read_only_is_efault) { m_arg_readonly, EFAULT };
FIXTURE_VARIANT_ADD(abi, unknown_flag_is_einval) { m_flags, EINVAL };
FIXTURE_VARIANT_ADD(abi, unknown_mode_is_einval) { m_mode, EINVAL };
FIXTURE_VARIANT_ADD(abi, pcsample_mode_with_a_histogram_region_is_einval) { m_mode_pcsample, EINVAL };
FIXTURE_VARIANT_ADD(abi, rate_above_max_is_einval) { m_rate, EINVAL };
FIXTURE_VARIANT_ADD(abi, zero_regions_is_einval) { m_nr_0, EINVAL };
FIXTURE_VARIANT_ADD(abi, region_count_1025_is_e2big) { m_nr_1025, E2BIG };
FIXTURE_VARIANT_ADD(abi, region_count_huge_is_e2big) { m_nr_huge, E2BIG };
FIXTURE_VARIANT_ADD(abi, region_size_16_is_einval) { m_rsize_16, EINVAL };
FIXTURE_VARIANT_ADD(abi, region_size_8192_is_e2big) { m_rsize_8192, E2BIG };
FIXTURE_VARIANT_ADD(abi, region_longer_nonzero_tail_is_e2big) { m_rsize_tail, E2BIG };
FIXTURE_VARIANT_ADD(abi, regions_null_is_efault) { m_regions_null, EFAULT };
FIXTURE_VARIANT_ADD(abi, regions_kernel_pointer_is_efault) { m_regions_kernel, EFAULT };
FIXTURE_VARIANT_ADD(abi, regions_past_mapping_is_efault) { m_regions_past_end, EFAULT };
FIXTURE_VARIANT_ADD(abi, region_unknown_flag_is_einval) { m_r_flags, EINVAL };
FIXTURE_VARIANT_ADD(abi, region_pclog_not_overflow_is_einval) { m_r_pclog_alone, EINVAL };
FIXTURE_VARIANT_ADD(abi, region_pclog_u32_is_einval) { m_r_pclog_u32, EINVAL };
FIXTURE_VARIANT_ADD(abi, region_pclog_one_slot_is_einval) { m_r_pclog_one_slot, EINVAL };
FIXTURE_VARIANT_ADD(abi, region_pclog_misaligned_is_einval) { m_r_pclog_misaligned, EINVAL };
FIXTURE_VARIANT_ADD(abi, region_scale_0_is_einval) { m_r_scale_0, EINVAL };
FIXTURE_VARIANT_ADD(abi, region_scale_0x10001_is_einval) { m_r_scale_big, EINVAL };
FIXTURE_VARIANT_ADD(abi, region_odd_buffer_is_einval) { m_r_odd, EINVAL };
FIXTURE_VARIANT_ADD(abi, region_u32_misaligned_is_einval) { m_r_u32_misaligned, EINVAL };
FIXTURE_VARIANT_ADD(abi, region_wrapping_is_einval) { m_r_wraps, EINVAL };
FIXTURE_VARIANT_ADD(abi, region_above_max_bufsize_is_e2big) { m_r_huge, E2BIG };
FIXTURE_VARIANT_ADD(abi, region_kernel_buffer_is_efault) { m_r_kernel, EFAULT };
FIXTURE_VARIANT_ADD(abi, region_unmapped_buffer_is_efault) { m_r_unmapped, EFAULT };
FIXTURE_VARIANT_ADD(abi, second_region_bad_is_einval) { m_r_second_bad, EINVAL };
FIXTURE_VARIANT_ADD(abi, two_overflow_regions_is_einval) { m_r_two_overflow, EINVAL };
FIXTURE_VARIANT_ADD(abi, overflow_region_with_offset_is_einval) { m_r_overflow_offset, EINVAL };

/* Each malformed setup gets its errno and leaves the session as it was. */
TEST_F(abi, malformed_setup_rejected_session_unchanged)
{
	struct profil_stats after;

	variant->mutate(&self->a);
	EXPECT_EQ(-variant->err, dev_ioctl(PROFIL_IOC_SETUP, self->a.arg));
	after = get_stats();
	EXPECT_EQ(PROFIL_STATE_ON, after.state);
	EXPECT_EQ(self->before.armed, after.armed);
	EXPECT_EQ(self->before.rate, after.rate);
	EXPECT_EQ(PROFIL_STOP_NONE, after.stop_reason);
}

TEST(abi_grown_structs_with_zero_tails_accepted)
{
	unsigned char sm[64] = { 0 }, rm[48] = { 0 };
	struct profil_setup *s = (void *)sm;
	struct profil_region *r = (void *)rm;
	uint16_t bins[8];

	REQUIRE_MODULE();
	*r = (struct profil_region){ .buf = (uintptr_t)bins, .bufsize = 16,
				     .scale = 0x10000 };
	*s = (struct profil_setup){ .size = sizeof(sm), .nr_regions = 1,
				    .region_size = sizeof(rm),
				    .regions = (uintptr_t)r };
	EXPECT_EQ(0, dev_ioctl(PROFIL_IOC_SETUP, s));
	EXPECT_NE(0, s->rate);
	EXPECT_EQ(PROFIL_STATE_ON, get_stats().state);
	EXPECT_EQ(0, dev_ioctl(PROFIL_IOC_OFF, NULL));
}

/*
 * The numbers a later header gives grown structs reach the same requests:
 * the size bits of the number are ignored, the struct's size is the
 * version.
 */
struct setup_v1 {
	struct profil_setup s;
	__u64 extra;
};

struct stats_v1 {
	struct profil_stats st;
	__u64 extra[2];
};

TEST(abi_grown_struct_with_a_later_headers_number)
{
	struct profil_region r;
	struct setup_v1 s1 = { 0 };
	struct stats_v1 st1;
	uint16_t bins[8];

	REQUIRE_MODULE();
	r = (struct profil_region){ .buf = (uintptr_t)bins, .bufsize = 16,
				    .scale = 0x10000 };
	s1.s = (struct profil_setup){ .size = sizeof(s1), .nr_regions = 1,
				      .region_size = sizeof(r),
				      .regions = (uintptr_t)&r };
	EXPECT_EQ(0, dev_ioctl(_IOWR(PROFIL_IOC_MAGIC, 1, struct setup_v1),
			       &s1));
	EXPECT_NE(0, s1.s.rate);
	s1.extra = 1;
	EXPECT_EQ(-E2BIG, dev_ioctl(_IOWR(PROFIL_IOC_MAGIC, 1,
					  struct setup_v1), &s1));

	memset(&st1, 0xcc, sizeof(st1));
	st1.st.size = sizeof(st1);
	ASSERT_EQ(0, dev_ioctl(_IOWR(PROFIL_IOC_MAGIC, 3, struct stats_v1),
			       &st1));
	EXPECT_EQ(sizeof(struct profil_stats), st1.st.size);
	EXPECT_EQ(PROFIL_STATE_ON, st1.st.state);
	EXPECT_EQ(1, st1.st.armed);
	EXPECT_EQ(0xccccccccccccccccULL, st1.extra[0]);
	EXPECT_EQ(0xccccccccccccccccULL, st1.extra[1]);

	/* The direction must still match, and the type. */
	EXPECT_EQ(-ENOTTY, dev_ioctl(_IOR(PROFIL_IOC_MAGIC, 1,
					  struct setup_v1), &s1));
	EXPECT_EQ(-ENOTTY, dev_ioctl(_IOW(PROFIL_IOC_MAGIC, 3,
					  struct stats_v1), &st1));
	EXPECT_EQ(-ENOTTY, dev_ioctl(_IOWR(PROFIL_IOC_MAGIC + 1, 1,
					   struct setup_v1), &s1));
	EXPECT_EQ(0, dev_ioctl(PROFIL_IOC_OFF, NULL));
}

TEST(abi_unknown_ioctls_are_enotty)
{
	char arg[64] = { 0 };

	REQUIRE_MODULE();
	EXPECT_EQ(-ENOTTY, dev_ioctl(_IO(PROFIL_IOC_MAGIC, 99), arg));
	EXPECT_EQ(-ENOTTY, dev_ioctl(_IOW(PROFIL_IOC_MAGIC, 1, int), arg));
	EXPECT_EQ(-ENOTTY, dev_ioctl(0x1234, arg));
	EXPECT_EQ(-EINVAL, dev_ioctl(PROFIL_IOC_OFF, arg));
}

TEST(abi_stats_sizes_and_pointers)
{
	unsigned char big[128];
	struct profil_stats *st = (void *)big;

	REQUIRE_MODULE();
	memset(big, 0xcc, sizeof(big));
	st->size = PROFIL_STATS_SIZE_VER0 - 8;
	EXPECT_EQ(-EINVAL, dev_ioctl(PROFIL_IOC_STATS, st));
	EXPECT_EQ(-EFAULT, dev_ioctl(PROFIL_IOC_STATS, NULL));
	st->size = sizeof(big);
	ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_STATS, st));
	/* The kernel wrote its bytes, every one, and not one more. */
	EXPECT_EQ(PROFIL_STATS_SIZE_VER4, st->size);
	EXPECT_EQ(PROFIL_STATE_OFF, st->state);
	EXPECT_EQ(0, st->samples);
	EXPECT_EQ(0, st->armed);
	EXPECT_EQ(0, st->written);
	EXPECT_EQ(0, st->writing);
	EXPECT_EQ(0, st->ticks);
	EXPECT_EQ(0, st->inherit_error);
	EXPECT_EQ(0, st->reserved);
	EXPECT_EQ(0, st->cpu_ns);
	EXPECT_EQ(0xcc, big[PROFIL_STATS_SIZE_VER4]);
	EXPECT_EQ(0xcc, big[sizeof(big) - 1]);
	/* One built against the second header gets its 88. */
	memset(big, 0xcc, sizeof(big));
	st->size = PROFIL_STATS_SIZE_VER1;
	ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_STATS, st));
	EXPECT_EQ(PROFIL_STATS_SIZE_VER1, st->size);
	EXPECT_EQ(0, st->writing);
	EXPECT_EQ(0xcc, big[PROFIL_STATS_SIZE_VER1]);
	/* A program built against the first header gets the first 64. */
	memset(big, 0xcc, sizeof(big));
	st->size = PROFIL_STATS_SIZE_VER0;
	ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_STATS, st));
	EXPECT_EQ(PROFIL_STATS_SIZE_VER0, st->size);
	EXPECT_EQ(0xcc, big[PROFIL_STATS_SIZE_VER0]);
}

/* --------------------------------------------------------------- library */

FIXTURE(lib) {
	char dir[4096];
};

FIXTURE_VARIANT(lib) {
	const char *prog;
	int preload;
	int status;	/* probe's exit: 0 kernel session on, 1 off */
};

FIXTURE_VARIANT_ADD(lib, linked_with_lprofil) { "probe_dynamic", 0, 0 };
FIXTURE_VARIANT_ADD(lib, static_with_libprofil_a) { "probe_static", 0, 0 };
FIXTURE_VARIANT_ADD(lib, glibc_program_ld_preload) { "probe_glibc", 1, 0 };
/* The control: the same program without the preload gets glibc's. */
FIXTURE_VARIANT_ADD(lib, glibc_program_alone_is_glibc) { "probe_glibc", 0, 1 };

FIXTURE_SETUP(lib)
{
	ssize_t n;

	REQUIRE_MODULE();
	n = readlink("/proc/self/exe", self->dir, sizeof(self->dir) - 1);
	ASSERT_LT(0, n);
	self->dir[n] = 0;
	*strrchr(self->dir, '/') = 0;
}

FIXTURE_TEARDOWN(lib)
{
}

/*
 * Run the variant's probe with @arg (or none), its stdout into @out; its
 * exit status, or -1 if it did not exit.  SKIP if it is not installed.
 */
static int run_probe(struct __test_metadata *_metadata,
		     FIXTURE_DATA(lib) *self,
		     const FIXTURE_VARIANT(lib) *variant, const char *arg,
		     char *out, size_t size)
{
	char prog[4200], so[4200];
	int status, fd[2];
	ssize_t n = 0, k;
	pid_t pid;

	snprintf(prog, sizeof(prog), "%s/%s", self->dir, variant->prog);
	snprintf(so, sizeof(so), "%s/libprofil.so.0", self->dir);
	if (access(prog, X_OK) || (variant->preload && access(so, R_OK)))
		SKIP(return -1, "%s or libprofil.so.0 not installed",
		     variant->prog);
	if (pipe(fd))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(fd[1], 1);
		if (variant->preload)
			setenv("LD_PRELOAD", so, 1);
		else
			unsetenv("LD_PRELOAD");
		execl(prog, prog, arg, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	while (pid > 0 && n < (ssize_t)size - 1 &&
	       (k = read(fd[0], out + n, size - 1 - n)) > 0)
		n += k;
	out[n] = 0;
	close(fd[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

TEST_F(lib, profil_reaches_the_kernel)
{
	char out[64];

	EXPECT_EQ(variant->status,
		  run_probe(_metadata, self, variant, NULL, out, sizeof(out)));
}

/*
 * __profile_frequency(), which a program turns profil()'s counts into
 * seconds with, is the rate the kernel samples at, before profil() (the
 * default_rate parameter) and after it (the session's).  glibc's, the
 * control, says AT_CLKTCK.
 */
TEST_F(lib, profile_frequency_is_the_rate_of_the_samples)
{
	unsigned int hz = kernel_hz(), before = 0, after = 0;
	unsigned int want = variant->status ? sysconf(_SC_CLK_TCK) : hz;
	char out[64];

	ASSERT_EQ(variant->status,
		  run_probe(_metadata, self, variant, "freq", out, sizeof(out)));
	ASSERT_EQ(2, sscanf(out, "freq %u %u", &before, &after)) TH_LOG("%s", out);
	EXPECT_EQ(want, before);
	EXPECT_EQ(want, after);
}

/* ------------------------------------------------------------------ exec */

/* A profiling process that execs: the new image runs and exits 0. */
TEST(exec_while_profiling_runs_new_image)
{
	static uint16_t bins[NBINS];
	int status;
	pid_t pid;

	REQUIRE_MODULE();
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (profil(bins, sizeof(bins), pc_a() - SPIN_PAD, 0x10000))
			_exit(2);
		spin_cpu(spin_a, SPIN / 10);
		execl("/bin/sh", "sh", "-c", "exit 0", (char *)NULL);
		_exit(127);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* ---------------------------------------------------------------- module */

/* rmmod is refused while any process has a session, and clean after. */
TEST(module_rmmod_refused_while_session_lives_then_clean)
{
	const char *ko = getenv("PROFIL_KO");
	static uint16_t bins[64];
	int p[2], fd;
	pid_t pid;
	char c;

	REQUIRE_MODULE();
	if (geteuid() != 0 || !ko)
		SKIP(return, "needs root and PROFIL_KO");
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(p[0]);
		if (profil(bins, sizeof(bins), 0, 0x10000))
			_exit(1);
		(void)!write(p[1], "x", 1);
		for (;;)
			pause();
	}
	close(p[1]);	/* a child that fails to arm gives EOF at once */
	ASSERT_EQ(1, read(p[0], &c, 1));
	errno = 0;
	EXPECT_EQ(-1, syscall(SYS_delete_module, "profil", O_NONBLOCK));
	EXPECT_EQ(EWOULDBLOCK, errno);
	EXPECT_TRUE(module_loaded());

	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, NULL, 0));
	ASSERT_EQ(0, syscall(SYS_delete_module, "profil", O_NONBLOCK));
	EXPECT_FALSE(module_loaded());
	errno = 0;
	EXPECT_EQ(-1, profil(bins, sizeof(bins), 0, 0x10000));
	EXPECT_EQ(ENOSYS, errno);

	fd = open(ko, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, syscall(SYS_finit_module, fd, "", 0));
	close(fd);
	ASSERT_TRUE(module_loaded());
	EXPECT_EQ(0, profil(bins, sizeof(bins), 0, 0x10000));
	EXPECT_EQ(0, profil(NULL, 0, 0, 0));
}

TEST_HARNESS_MAIN
