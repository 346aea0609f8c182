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
#include <sys/resource.h>
#include <sys/wait.h>
#include <dirent.h>

#include "common.h"
#include "failnth.h"
#include "kselftest_harness.h"

#define MAX_NTH	2000

static uint16_t bins[4096], other[64];
static unsigned char image[3 * 4096] __attribute__((aligned(4096)));

/* In a fixture setup: skip unless this kernel and this user can inject. */
#define REQUIRE_INJECTION() do {					\
	REQUIRE_MODULE();						\
	if (access("/proc/thread-self/fail-nth", W_OK))			\
		SKIP_NOW("no fault injection in this kernel (make check-debug)"); \
	if (geteuid() || !injection_ready())				\
		SKIP_NOW("the injectors' debugfs knobs need root");	\
} while (0)

/*
 * A task's fail-nth file, @fd.  nth_set(fd, n): the n-th injection point
 * of that task from now fails (0: none).  nth_left(fd): how many points
 * were still to go (0: it fired).  The file is opened first: its open is
 * no such point (failnth.h).
 */

/* This thread's fail-nth. */
static int fail_fd = -1;

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
	REQUIRE_INJECTION();
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
		nth_set(fail_fd, 0);
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
		ASSERT_EQ(0, nth_set(fail_fd, n));
		ret = fn();
		left = nth_left(fail_fd);
		nth_set(fail_fd, 0);
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

/*
 * Failures at random, only for tasks with make-it-fail: @percent of their
 * allocations fail (0: none).
 */
static int random_failures(int percent)
{
	const char *knobs[] = { DBG "failslab/", DBG "fail_page_alloc/" };
	char path[128], prob[8];
	int ret = 0;

	snprintf(prob, sizeof(prob), "%d", percent);
	for (int i = 0; i < 2; i++) {
#define KNOB(name, val) do {						\
		snprintf(path, sizeof(path), "%s%s", knobs[i], name);	\
		ret |= write_str(path, val);				\
	} while (0)
		/*
		 * The filter goes last when turning off: with it off first,
		 * every task, this one writing the other knobs included,
		 * would fail at random until they are written, and a write
		 * that failed would leave the whole guest failing (init
		 * could not make a pipe, and died).
		 */
		if (percent) {
			KNOB("task-filter", "Y");
			KNOB("interval", "1");
			KNOB("times", "-1");
			KNOB("probability", prob);
		} else {
			KNOB("probability", prob);
			KNOB("times", "0");
			KNOB("interval", "1");
			KNOB("task-filter", "N");
		}
#undef KNOB
	}
	return ret;
}

static pid_t kthread_pid(const char *comm);
static int make_it_fail(pid_t pid, int on);

/*
 * A process with a session forks 300 children while 1% of its, their and
 * the settle thread's allocations fail (the thread takes each child over):
 * forks fail, inheritances fail (the child runs on with
 * PROFIL_STOP_INHERIT), children spin and exit.  Its own session must run
 * on (unless it dies of its own injected faults), and nothing may stay
 * pinned.
 */
TEST_F(inject, forks_with_allocations_failing_at_random)
{
	int status, forked = 0, refused = 0, kinds[6] = { 0 }, i;
	pid_t forker, pid, settler = kthread_pid("profil-settle");
	struct profil_stats st;

	ASSERT_LT(0, settler);
	ASSERT_EQ(0, random_failures(1));
	ASSERT_EQ(0, make_it_fail(settler, 1));
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
	make_it_fail(settler, 0);
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


/* ------------------------------------------- the module's own threads */

/*
 * The module's kernel threads make allocations of their own: a writer
 * thread ("profil-writer", one per file) creates and writes a profile
 * file, the settle thread ("profil-settle") faults a buffer back in after
 * an invalidation.  Root may set another task's fail-nth, so each of the
 * settle thread's allocations is made to fail once, exactly as the
 * caller's are above.  A writer thread lives for one file and starts with
 * fail-nth 0, but it inherits make-it-fail from kthreadd, which forks it:
 * with the injectors' task filter on and make-it-fail set on kthreadd just
 * while a session ends, the new writer's allocations (and kthreadd's own,
 * in making it) fail at random.
 */
#define IMG_HEAD	64
#define IMG_REC		16
#define IMG_MAX		8
#define IMG_RECS	3	/* in use: the file is head + 3 records */
#define IMG_LEN		(IMG_HEAD + IMG_REC * IMG_RECS)
#define BUF_LEN		(2 * 4096)

/* The pid of the kernel thread called @comm, or -1. */
static pid_t kthread_pid(const char *comm)
{
	char path[300], name[32];
	struct dirent *d;
	pid_t pid = -1;
	DIR *proc = opendir("/proc");
	FILE *f;

	while (proc && pid < 0 && (d = readdir(proc))) {
		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", d->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(name, sizeof(name), f) &&
		    !strncmp(name, comm, strlen(comm)) &&
		    name[strlen(comm)] == '\n')
			pid = atoi(d->d_name);
		fclose(f);
	}
	if (proc)
		closedir(proc);
	return pid;
}

/* @pid's fail-nth (a single-threaded kernel thread), opened read-write. */
static int open_fail_nth(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/fail-nth", pid, pid);
	return open(path, O_RDWR | O_CLOEXEC);
}

/* make-it-fail of @pid: 1 or 0. */
static int make_it_fail(pid_t pid, int on)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/make-it-fail", pid);
	return write_str(path, on ? "1" : "0");
}

FIXTURE(worker) {
	pid_t kthreadd, settler;
	int settler_nth;
	char dir[32];
	char file[64];
	int dirfd;
	unsigned char *img;	/* the profile image: head, records, ctl */
	uint16_t *buf;		/* the histogram: two anonymous pages */
	long long pins0;
};

FIXTURE_SETUP(worker)
{
	REQUIRE_INJECTION();
	self->pins0 = pins_held();
	self->kthreadd = kthread_pid("kthreadd");
	self->settler = kthread_pid("profil-settle");
	ASSERT_LT(0, self->kthreadd);
	ASSERT_LT(0, self->settler);
	self->settler_nth = open_fail_nth(self->settler);
	ASSERT_LE(0, self->settler_nth);
	strcpy(self->dir, "/tmp/wfailXXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	self->dirfd = open(self->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ASSERT_LE(0, self->dirfd);
	snprintf(self->file, sizeof(self->file), "%s/w.%d", self->dir,
		 getpid());
	self->img = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->img);
	for (int i = 0; i < IMG_LEN; i++)
		self->img[i] = 'a' + i % 26;
}

FIXTURE_TEARDOWN(worker)
{
	if (self->settler_nth >= 0)
		nth_set(self->settler_nth, 0);
	if (self->kthreadd > 0)
		make_it_fail(self->kthreadd, 0);
	if (self->settler > 0)
		make_it_fail(self->settler, 0);
	random_failures(0);
	dev_ioctl(PROFIL_IOC_OFF, NULL);
}

/*
 * Arm on a fresh mapping of two pages (over spin_a), with a profile file
 * w.PID in the test's directory, head + IMG_RECS records long.
 */
static int arm_with_file(FIXTURE_DATA(worker) *self)
{
	struct profil_output_ctl *ctl = (void *)(self->img + 512);
	struct profil_region r;
	struct profil_output o = {
		.size = sizeof(o), .dirfd = self->dirfd, .rec_size = IMG_REC,
		.image = (uintptr_t)self->img, .image_size = 4096,
		.head_size = IMG_HEAD, .nr_recs_max = IMG_MAX,
		.ctl_offset = 512, .name = (uintptr_t)"w.%p",
		.child_name = (uintptr_t)"wc.%p",
	};
	struct profil_setup s = {
		.size = sizeof(s), .rate = RATE, .nr_regions = 1,
		.region_size = sizeof(r), .regions = (uintptr_t)&r,
		.output = (uintptr_t)&o,
	};

	if (self->buf)
		munmap(self->buf, BUF_LEN);
	self->buf = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (self->buf == MAP_FAILED)
		return -ENOMEM;
	r = (struct profil_region){ .buf = (uintptr_t)self->buf,
				    .bufsize = BUF_LEN,
				    .offset = (uintptr_t)spin_a - SPIN_PAD,
				    .scale = 0x10000 };
	ctl->nr_recs = IMG_RECS;
	ctl->enable = 1;
	unlink(self->file);
	return dev_ioctl(PROFIL_IOC_SETUP, &s);
}


/*
 * What the session's last profile file came to, after a stop: written
 * whole (return 0), or not written, with a documented errno in the stats
 * and the file absent or a prefix of what it should hold (return 1).
 */
static int check_file(struct __test_metadata *_metadata,
		      FIXTURE_DATA(worker) *self,
		      const struct profil_stats *st0,
		      const struct profil_stats *st)
{
	unsigned char got[IMG_LEN + 64];
	ssize_t len = -1;
	int fd = open(self->file, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		len = read(fd, got, sizeof(got));
		close(fd);
	}
	if (st->written == st0->written + 1) {
		EXPECT_EQ(0, st->write_error);
		EXPECT_EQ(IMG_LEN, len);
		EXPECT_EQ(0, memcmp(got, self->img, IMG_LEN));
		return 0;
	}
	EXPECT_EQ(st0->written, st->written);
	EXPECT_TRUE(st->write_error == -ENOMEM ||
		    st->write_error == -ENOSPC ||
		    st->write_error == -EAGAIN) {
		TH_LOG("write_error %d", st->write_error);
	}
	if (len > 0) {
		EXPECT_GT(IMG_LEN, len);
		EXPECT_EQ(0, memcmp(got, self->img, len));
	}
	return 1;
}

/* How a session with a file ends: PROFIL_IOC_OFF, or a fault. */
static void end_by_off(FIXTURE_DATA(worker) *self)
{
	dev_ioctl(PROFIL_IOC_OFF, NULL);
}

/* The settle thread faults a new page in: not the pinned one, it stops. */
static void end_by_fault(FIXTURE_DATA(worker) *self)
{
	madvise(self->buf, 4096, MADV_DONTNEED);
}

/*
 * STATS once the session is off and its file written: a fault may wait 2 s
 * for its pages, and nobody waits for the file of a session a fault ended.
 */
static struct profil_stats stats_when_off(void)
{
	struct profil_stats st;

	for (int i = 0; i < 1000; i++) {
		st = get_stats();
		if (st.state == PROFIL_STATE_OFF && !st.writing)
			break;
		usleep(10000);
	}
	return st;
}

struct ending {
	void (*end)(FIXTURE_DATA(worker) *self);
	__u32 reason;		/* the stop reason it leads to */
};

static const struct ending by_off = { end_by_off, PROFIL_STOP_USER };
static const struct ending by_fault = { end_by_fault, PROFIL_STOP_FAULT };

/*
 * Arm with a file, end the session as @how says, and check what is left:
 * the session off for @how's reason, the file whole or reported, nothing
 * pinned.  @nth_fd: a thread's fail-nth to set to @n first, or -1.
 * @fail_pid: a task (kthreadd) with make-it-fail while the session ends,
 * or 0.  Return: 1 if the file was not written.
 */
static int arm_and_end(struct __test_metadata *_metadata,
		       FIXTURE_DATA(worker) *self, const struct ending *how,
		       int nth_fd, int n, pid_t fail_pid)
{
	struct profil_stats st0, st;

	EXPECT_EQ(0, arm_with_file(self));
	spin_cpu(spin_a, 5 * 1000000ULL);
	st0 = get_stats();
	EXPECT_EQ(PROFIL_STATE_ON, st0.state);
	if (nth_fd >= 0)
		EXPECT_EQ(0, nth_set(nth_fd, n));
	if (fail_pid > 0)
		EXPECT_EQ(0, make_it_fail(fail_pid, 1));
	how->end(self);
	st = stats_when_off();
	if (fail_pid > 0)
		make_it_fail(fail_pid, 0);
	EXPECT_EQ(PROFIL_STATE_OFF, st.state);
	EXPECT_EQ(how->reason, st.stop_reason);
	EXPECT_EQ(0, vmpin_kb());
	return check_file(_metadata, self, &st0, &st);
}

/*
 * Make each allocation of one thread fail once while sessions with a
 * profile file end as @how says.
 */
static void thread_fails_once(struct __test_metadata *_metadata,
			      FIXTURE_DATA(worker) *self, int nth_fd,
			      const struct ending *how)
{
	int n, left, reached = 0, unwritten = 0;

	for (n = 1; n < MAX_NTH; n++) {
		unwritten += arm_and_end(_metadata, self, how, nth_fd, n, 0);
		left = nth_left(nth_fd);
		nth_set(nth_fd, 0);
		if (left > 0)
			break;	/* the n-th point was never reached: done */
		reached++;
		if (_metadata->passed != 1)
			break;	/* the first failure says enough */
	}
	TH_LOG("%d injection points reached, %d files not written",
	       reached, unwritten);
	EXPECT_LT(0, reached);
	/* A session still arms and writes its file. */
	EXPECT_EQ(0, arm_and_end(_metadata, self, how, -1, 0, 0));
	EXPECT_PINS(self->pins0);
	EXPECT_EQ(0, memlock_balanced());
}

/*
 * The writer threads, each made by kthreadd with make-it-fail while the
 * session ends, 2% of the allocations (theirs and kthreadd's in making
 * them) failing: some files are written whole, the others reported.
 */
static void writers_fail_at_random(struct __test_metadata *_metadata,
				   FIXTURE_DATA(worker) *self,
				   const struct ending *how)
{
	int i, unwritten = 0;

	ASSERT_EQ(0, random_failures(2));
	for (i = 0; i < 40 && _metadata->passed == 1; i++)
		unwritten += arm_and_end(_metadata, self, how, -1, 0,
					 self->kthreadd);
	random_failures(0);
	TH_LOG("%d sessions, %d files not written", i, unwritten);
	EXPECT_LT(0, unwritten);
	EXPECT_GT(i, unwritten);
	EXPECT_EQ(0, arm_and_end(_metadata, self, how, -1, 0, 0));
	EXPECT_PINS(self->pins0);
	EXPECT_EQ(0, memlock_balanced());
}

/* The writer of a file at PROFIL_IOC_OFF. */
TEST_F_TIMEOUT(worker, writer_allocations_fail_at_random_at_off, 900)
{
	writers_fail_at_random(_metadata, self, &by_off);
}

/* The writer of a file of a session the settle thread stopped. */
TEST_F_TIMEOUT(worker, writer_allocations_fail_at_random_at_a_fault, 900)
{
	writers_fail_at_random(_metadata, self, &by_fault);
}

/*
 * The settle thread: faulting a new page in after MADV_DONTNEED fails,
 * the session waits for its page, then stops with PROFIL_STOP_FAULT.
 */
TEST_F_TIMEOUT(worker, settle_allocations_fail_once_at_a_fault, 900)
{
	thread_fails_once(_metadata, self, self->settler_nth, &by_fault);
}

/*
 * Both threads with make-it-fail, the injectors filtered to them, 5% of
 * their allocations failing: sessions with a file end by OFF and by a
 * fault, each with a sane end, a whole or reported file, nothing pinned.
 */
TEST_F_TIMEOUT(worker, both_threads_fail_at_random, 900)
{
	int i, unwritten = 0;

	ASSERT_EQ(0, random_failures(5));
	ASSERT_EQ(0, make_it_fail(self->settler, 1));
	for (i = 0; i < 60 && _metadata->passed == 1; i++)
		unwritten += arm_and_end(_metadata, self,
					 i % 2 ? &by_off : &by_fault, -1, 0,
					 self->kthreadd);
	make_it_fail(self->settler, 0);
	random_failures(0);
	TH_LOG("%d sessions, %d files not written", i, unwritten);
	EXPECT_LT(0, unwritten);
	EXPECT_GT(i, unwritten);
	EXPECT_PINS(self->pins0);
	EXPECT_EQ(0, memlock_balanced());
}

TEST_HARNESS_MAIN
