// SPDX-License-Identifier: GPL-2.0
/*
 * Allocation failures, injected one at a time (make check-debug): with
 * failslab and fail_page_alloc allowed to fail sleeping allocations, each
 * call is repeated with /proc/thread-self/fail-nth set to 1, 2, 3, ...
 * until a run in which the n-th injection point is never reached: so every
 * allocation the call makes fails once.  Each failure must be a clean
 * errno that leaves the running session exactly as it was; a success must
 * be a working session; afterwards nothing is pinned.  Forks are made to
 * fail at random (make-it-fail): the fork itself, the parent's probe and
 * the child's take-over of its session.  Kernels without fault injection
 * (Debian's) skip.
 */
#define _GNU_SOURCE
#include <sys/wait.h>

#include "common.h"
#include "kselftest_harness.h"

#define DBG	"/sys/kernel/debug/"
#define MAX_NTH	2000

static uint16_t bins[4096], other[64];
static unsigned char image[3 * 4096] __attribute__((aligned(4096)));

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* Let both injectors fail any allocation this task makes, by fail-nth. */
static int injection_ready(void)
{
	return !write_str(DBG "failslab/ignore-gfp-wait", "N") &&
	       !write_str(DBG "fail_page_alloc/ignore-gfp-wait", "N") &&
	       !write_str(DBG "fail_page_alloc/ignore-gfp-highmem", "N") &&
	       !write_str(DBG "fail_page_alloc/min-order", "0") &&
	       !write_str(DBG "failslab/verbose", "0") &&
	       !write_str(DBG "fail_page_alloc/verbose", "0");
}

/*
 * This thread's fail-nth.  fail_nth_set(n): the n-th injection point from
 * now fails (0: none).  fail_nth_left(): how many points were still to go
 * (0: it fired).  The file is opened first: its open is no such point.
 */
static int fail_fd = -1;

static int fail_nth_set(int n)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%d", n);
	return pwrite(fail_fd, buf, strlen(buf), 0) > 0 ? 0 : -1;
}

static int fail_nth_left(void)
{
	char buf[16];
	ssize_t k = pread(fail_fd, buf, sizeof(buf) - 1, 0);

	if (k <= 0)
		return -1;
	buf[k] = '\0';
	return atoi(buf);
}

struct call {
	const char *name;
	int (*fn)(void);
};

/*
 * Opened before any injection is armed, so that every point that fails is
 * one of the call's own: the device and the output's directory.
 */
static int dev_fd = -1, dir_fd = -1;

static int dev_call(unsigned long cmd, void *arg)
{
	return ioctl(dev_fd, cmd, arg) ? -errno : 0;
}

static int setup_n(int nr, int with_output)
{
	static struct profil_region r[16];
	struct profil_output o = {
		.size = sizeof(o), .rec_size = 16, .image = (uintptr_t)image,
		.image_size = sizeof(image), .head_size = 64,
		.nr_recs_max = 8, .ctl_offset = 64 + 16 * 8,
		.name = (uintptr_t)"f.%p", .child_name = (uintptr_t)"c.%p",
	};
	struct profil_setup s = {
		.size = sizeof(s), .rate = RATE, .nr_regions = nr,
		.region_size = sizeof(r[0]), .regions = (uintptr_t)r,
		.output = with_output ? (uintptr_t)&o : 0,
	};

	for (int i = 0; i < nr; i++)
		r[i] = (struct profil_region){
			.buf = (uintptr_t)(bins + 256 * i), .bufsize = 512,
			.offset = (uintptr_t)spin_a - 256 + 64 * i,
			.scale = 0x10000 };
	if (with_output) {
		o.dirfd = dir_fd;
		((struct profil_output_ctl *)(image + o.ctl_offset))->enable = 1;
	}
	return dev_call(PROFIL_IOC_SETUP, &s);
}

static int one_region(void) { return setup_n(1, 0); }
static int sixteen_regions(void) { return setup_n(16, 0); }
static int with_output(void) { return setup_n(2, 1); }

static int pcsample_setup(void)
{
	static uint64_t pcs[512];
	struct profil_region r = { .buf = (uintptr_t)pcs,
				   .bufsize = sizeof(pcs) };
	struct profil_setup s = {
		.size = sizeof(s), .mode = PROFIL_MODE_PCSAMPLE,
		.nr_regions = 1, .region_size = sizeof(r),
		.regions = (uintptr_t)&r,
	};

	return dev_call(PROFIL_IOC_SETUP, &s);
}

/* The session every call replaces: bins "other" over spin_b. */
static int arm_other(void)
{
	return arm_one(other, sizeof(other), (uintptr_t)spin_b - 32, 0x10000,
		       RATE);
}

FIXTURE(inject) {
	long long pins0;
};

FIXTURE_SETUP(inject)
{
	REQUIRE_MODULE();
	if (access("/proc/thread-self/fail-nth", W_OK))
		SKIP_NOW("no fault injection in this kernel (make check-debug)");
	if (geteuid() || !injection_ready())
		SKIP_NOW("the injectors' debugfs knobs need root");
	self->pins0 = pins_held();
	fail_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fail_fd);
	dev_fd = open("/dev/profil", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, dev_fd);
	dir_fd = open("/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC);
	ASSERT_LE(0, dir_fd);
}

FIXTURE_TEARDOWN(inject)
{
	if (fail_fd >= 0) {
		fail_nth_set(0);
		close(fail_fd);
	}
	close(dev_fd);
	close(dir_fd);
	dev_ioctl(PROFIL_IOC_OFF, NULL);
}

/* Fail each allocation of @fn once; check what every outcome leaves. */
static void every_allocation_fails_once(struct __test_metadata *_metadata,
					int (*fn)(void), int running,
					long long pins0)
{
	struct profil_stats st0, st;
	int n, ret, left, fails = 0;

	for (n = 1; n < MAX_NTH; n++) {
		if (running) {
			memset(other, 0, sizeof(other));
			ASSERT_EQ(0, arm_other());
		} else {
			dev_ioctl(PROFIL_IOC_OFF, NULL);
		}
		st0 = get_stats();
		ASSERT_EQ(0, fail_nth_set(n));
		ret = fn();
		left = fail_nth_left();
		fail_nth_set(0);
		st = get_stats();
		if (ret) {
			fails++;
			EXPECT_TRUE(ret == -ENOMEM || ret == -EAGAIN ||
				    ret == -EINTR || ret == -EFAULT) {
				TH_LOG("allocation %d: errno %d", n, -ret);
			}
			/* As it was: running (counting) or off. */
			EXPECT_EQ(st0.armed, st.armed);
			EXPECT_EQ(running ? PROFIL_STATE_ON : PROFIL_STATE_OFF,
				  st.state);
			if (running) {
				spin_cpu(spin_b, 20 * 1000000ULL);
				EXPECT_LT(0, sum16(other, 32)) {
					TH_LOG("allocation %d: not counting", n);
				}
			}
		} else {
			EXPECT_EQ(PROFIL_STATE_ON, st.state);
			EXPECT_EQ(st0.armed + 1, st.armed);
		}
		if (left > 0)
			break;	/* the n-th point was never reached: all done */
	}
	TH_LOG("%d injection points reached, %d calls failed", n - 1, fails);
	EXPECT_LT(0, fails);
	EXPECT_EQ(0, dev_ioctl(PROFIL_IOC_OFF, NULL));
	EXPECT_EQ(0, vmpin_kb());
	EXPECT_PINS(pins0);
}

/* Failures at random, only for tasks with make-it-fail (set: 1, 0). */
static int random_failures(int on)
{
	const char *knobs[] = { DBG "failslab/", DBG "fail_page_alloc/" };
	char path[128];
	int ret = 0;

	for (int i = 0; i < 2; i++) {
#define KNOB(name, val) do {						\
		snprintf(path, sizeof(path), "%s%s", knobs[i], name);	\
		ret |= write_str(path, val);				\
	} while (0)
		KNOB("task-filter", on ? "Y" : "N");
		KNOB("interval", "1");
		KNOB("times", on ? "-1" : "0");
		KNOB("probability", on ? "1" : "0");
#undef KNOB
	}
	return ret;
}

/*
 * A process with a session forks 300 children while 1% of its and their
 * allocations fail: forks fail, inheritances fail (the child runs on with
 * PROFIL_STOP_INHERIT), children spin and exit.  Its own session must run
 * on (unless it dies of its own injected faults), and nothing may stay
 * pinned.
 */
TEST_F(inject, forks_with_allocations_failing_at_random)
{
	int status, forked = 0, refused = 0, kinds[6] = { 0 }, i;
	struct profil_stats st;
	pid_t forker, pid;

	ASSERT_EQ(0, random_failures(1));
	forker = fork();
	ASSERT_LE(0, forker);
	if (!forker) {
		if (arm_one(bins, sizeof(bins), (uintptr_t)spin_a - 256,
			    0x10000, RATE) ||
		    write_str("/proc/self/make-it-fail", "1"))
			_exit(2);
		for (i = 0; i < 300; i++) {
			pid = fork();
			if (!pid) {
				/*
				 * 0: inherited; 1: could not take over
				 * (STOP_INHERIT); 2: stats failed; 3: no
				 * session at all (its creation failed, so
				 * nothing could record why); 5: anything else.
				 */
				spin_cpu(spin_a, 2 * 1000000ULL);
				write_str("/proc/self/make-it-fail", "0");
				if (dev_ioctl(PROFIL_IOC_STATS, &st))
					_exit(2);
				if (st.state == PROFIL_STATE_ON)
					_exit(0);
				if (st.stop_reason == PROFIL_STOP_INHERIT)
					_exit(1);
				_exit(st.stop_reason == PROFIL_STOP_NONE &&
				      !st.armed && !st.samples ? 3 : 5);
			}
			if (pid < 0) {
				refused++;
				continue;
			}
			forked++;
			waitpid(pid, &status, 0);
			/* 4: killed (its own page faults could fail too) */
			kinds[WIFSIGNALED(status) ? 4 :
			      WEXITSTATUS(status) > 3 ? 5 : WEXITSTATUS(status)]++;
		}
		write_str("/proc/self/make-it-fail", "0");
		st = get_stats();
		printf("# %d forks (%d refused): %d inherited, %d could not take over, %d without a session, %d killed, %d unknown, %d otherwise; session %u\n",
		       forked, refused, kinds[0], kinds[1], kinds[3], kinds[4],
		       kinds[2], kinds[5], st.state);
		fflush(stdout);
		_exit(st.state == PROFIL_STATE_ON && kinds[0] && kinds[1] &&
		      !kinds[5] ? 0 : 1);
	}
	ASSERT_EQ(forker, waitpid(forker, &status, 0));
	random_failures(0);
	/*
	 * Its own page faults and stack growth fail too, so the forker may
	 * die of a signal; then only what it leaves behind can be checked.
	 */
	if (WIFSIGNALED(status))
		TH_LOG("the forker died of signal %d", WTERMSIG(status));
	else
		EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_PINS(self->pins0);
}

TEST_F(inject, first_setup_of_one_region)
{
	every_allocation_fails_once(_metadata, one_region, 0, self->pins0);
}

TEST_F(inject, re_arm_over_a_running_session)
{
	every_allocation_fails_once(_metadata, one_region, 1, self->pins0);
}

TEST_F(inject, sixteen_regions)
{
	every_allocation_fails_once(_metadata, sixteen_regions, 1, self->pins0);
}

TEST_F(inject, a_profile_file)
{
	every_allocation_fails_once(_metadata, with_output, 1, self->pins0);
}

TEST_F(inject, pcsample)
{
	every_allocation_fails_once(_metadata, pcsample_setup, 1, self->pins0);
}

TEST_HARNESS_MAIN
