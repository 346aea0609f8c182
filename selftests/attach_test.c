// SPDX-License-Identifier: GPL-2.0
/*
 * profil.ko selftests for PROFIL_IOC_ATTACH: profiling another process.
 *
 * The target is a forked child of the test (a descendant, as Yama's
 * ptrace_scope 1 wants), with the test's own text, so spin_a and spin_b are
 * at the same addresses in both.  It waits on a pipe until the attachment
 * is made, then spins on its own CPU clock; it reports its CPU times in a
 * shared page, checksums its writable data before and after, and says so
 * on its standard output and in its exit status.  Bounds are CPU time
 * times the rate, never wall time.
 */
#define _GNU_SOURCE
#include <grp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "common.h"
#include "failnth.h"
#include "kselftest_harness.h"

#define PAGE	4096UL
#define LEN	(2 * PAGE)	/* 32-bit bins of text from spin_a - SPIN_PAD */
#define OVF	(3 * PAGE)	/* the overflow bin's offset */
#define STATUS	42		/* the target's exit status when intact */

/* What a target reports, in a page it shares with the test. */
struct report {
	uint64_t cpu_a;		/* CPU time spent in spin_a, ns */
	uint64_t cpu_b;		/* in spin_b, by a thread made after attach */
	int unshared;		/* a credential change happened (0/1) */
};

/* The target's end of the pipe it waits on (start_target()). */
static int target_go_fd = -1;

/* Writable data the target checksums before and after. */
static volatile unsigned char data[64 * 1024];

FIXTURE(attach) {
	int dev;		/* /dev/profil, attached by the test */
	pid_t pid;		/* the target */
	int go;			/* write end: the target starts */
	int out;		/* read end: the target's stdout */
	int mem;		/* /proc/<pid>/mem */
	struct report *rep;
	void *bins;		/* the mapping, or MAP_FAILED */
	uint64_t bins_size;
	long vmpin0;		/* VmPin before attaching, kB */
};

static uintptr_t text_off(void)
{
	return (uintptr_t)spin_a - SPIN_PAD;
}

/* Bins of the loop at @fn (32-bit, scale 1:1 over halfwords). */
static uint64_t loop_bins(const uint32_t *bins, void (*fn)(volatile int *))
{
	size_t i = ((uintptr_t)fn - text_off()) / 2;

	return (uint64_t)bins[i] + bins[i + 1] + bins[i + 2];
}

static uint64_t checksum(void)
{
	uint64_t h = 1469598103934665603ULL;
	size_t i;

	for (i = 0; i < sizeof(data); i++)
		h = (h ^ data[i]) * 1099511628211ULL;
	return h;
}

static int wait_status(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

typedef int (*target_fn)(struct report *rep);

/*
 * Fork a target that runs @fn once the test writes a byte to @self->go,
 * and exits with what it returns.  Its stdout is @self->out.
 */
static int start_target(FIXTURE_DATA(attach) *self, target_fn fn)
{
	int go[2], out[2];
	char c;

	if (pipe2(go, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		return -1;
	/*
	 * The attaching fd is the test's, not the target's: opened after the
	 * fork, so that its release never waits for the target to close it.
	 */
	close(self->dev);
	self->pid = fork();
	if (self->pid < 0)
		return -1;
	if (!self->pid) {
		close(go[1]);
		close(out[0]);
		dup2(out[1], 1);
		target_go_fd = go[0];
		if (read(go[0], &c, 1) != 1)
			_exit(3);
		_exit(fn(self->rep));
	}
	close(go[0]);
	close(out[1]);
	self->go = go[1];
	self->out = out[0];
	self->dev = open("/dev/profil", O_RDWR | O_CLOEXEC);
	return self->dev < 0 ? -1 : 0;
}

static void target_go(FIXTURE_DATA(attach) *self)
{
	if (write(self->go, "g", 1) != 1)
		abort();
	close(self->go);
	self->go = -1;
}

/* The target's output, up to its end. */
static void target_output(FIXTURE_DATA(attach) *self, char *buf, size_t len)
{
	size_t n = 0;
	ssize_t r;

	while (n + 1 < len && (r = read(self->out, buf + n, len - 1 - n)) > 0)
		n += r;
	buf[n] = 0;
}

static int attach_regions(int dev, pid_t pid, int mem, unsigned int rate,
			  struct profil_region *r, unsigned int n,
			  uint64_t *size)
{
	struct profil_attach a = {
		.size = sizeof(a), .mem_fd = mem, .pid = pid, .rate = rate,
		.nr_regions = n, .region_size = sizeof(*r),
		.regions = (uintptr_t)r,
	};
	int ret = ioctl(dev, PROFIL_IOC_ATTACH, &a) ? -errno : 0;

	if (!ret && size)
		*size = a.bins_size;
	return ret;
}

/* The text of both loops in 32-bit bins at 0, an overflow bin at OVF. */
static int attach_spin(FIXTURE_DATA(attach) *self, int mem, pid_t pid)
{
	struct profil_region r[2] = {
		{ .buf = 0, .bufsize = LEN, .offset = text_off(),
		  .scale = 0x10000, .flags = PROFIL_REGION_U32 },
		{ .buf = OVF, .bufsize = 4,
		  .flags = PROFIL_REGION_OVERFLOW | PROFIL_REGION_U32 },
	};

	return attach_regions(self->dev, pid, mem, RATE, r, 2,
			      &self->bins_size);
}

static int open_mem(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* Attach to the started target and map the bins. */
static void attach_target(struct __test_metadata *_metadata,
			  FIXTURE_DATA(attach) *self)
{
	self->mem = open_mem(self->pid);
	ASSERT_LE(0, self->mem);
	ASSERT_EQ(0, attach_spin(self, self->mem, self->pid));
	ASSERT_EQ(4 * PAGE, self->bins_size);
	EXPECT_EQ(self->vmpin0 + 16, vmpin_kb());
	self->bins = mmap(NULL, self->bins_size, PROT_READ, MAP_SHARED,
			  self->dev, 0);
	ASSERT_NE(MAP_FAILED, self->bins);
}

static struct profil_stats attach_stats(int dev)
{
	struct profil_stats st;

	memset(&st, 0xcc, sizeof(st));
	st.size = sizeof(st);
	if (ioctl(dev, PROFIL_IOC_STATS, &st))
		abort();
	return st;
}

FIXTURE_SETUP(attach)
{
	REQUIRE_MODULE();
	self->dev = open("/dev/profil", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->dev);
	self->pid = -1;
	self->go = -1;
	self->out = -1;
	self->mem = -1;
	self->bins = MAP_FAILED;
	self->rep = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->rep);
	self->vmpin0 = vmpin_kb();
}

FIXTURE_TEARDOWN(attach)
{
	if (self->pid > 0) {
		kill(self->pid, SIGKILL);
		waitpid(self->pid, NULL, 0);
	}
	if (self->bins != MAP_FAILED)
		munmap(self->bins, self->bins_size);
	if (self->mem >= 0)
		close(self->mem);
	close(self->dev);
	/* The bins and their charge go with the last reference. */
	EXPECT_EQ(self->vmpin0, vmpin_kb());
}

#define ATTACH_TEST(name) TEST_F_TIMEOUT(attach, name, 180)

/*
 * Let the attached target go and reap it: it exits with @status, its
 * spin_a counted at its CPU time.
 */
static void reap_attached(struct __test_metadata *_metadata,
			  FIXTURE_DATA(attach) *self, int status)
{
	target_go(self);
	EXPECT_EQ(status, wait_status(self->pid));
	self->pid = -1;
	EXPECT_SAMPLES_NEAR(loop_bins(self->bins, spin_a), self->rep->cpu_a,
			    RATE);
}

/* Start a target running @fn, attach to it, and reap_attached(). */
static void run_attached(struct __test_metadata *_metadata,
			 FIXTURE_DATA(attach) *self, target_fn fn, int status)
{
	ASSERT_EQ(0, start_target(self, fn));
	attach_target(_metadata, self);
	reap_attached(_metadata, self, status);
}

static void *spin_b_thread(void *arg)
{
	struct report *rep = arg;

	rep->cpu_b = spin_cpu(spin_b, 2 * SPIN / 3);
	return NULL;
}

/* 0.3 s in spin_a, then 0.2 s in spin_b on a new thread: 60/40. */
static int spin_subject(struct report *rep)
{
	uint64_t sum0, sum1;
	pthread_t t;
	size_t i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = i * 7;
	sum0 = checksum();
	rep->cpu_a = spin_cpu(spin_a, SPIN);
	if (pthread_create(&t, NULL, spin_b_thread, rep) ||
	    pthread_join(t, NULL))
		return 4;
	sum1 = checksum();
	printf("subject %s\n", sum0 == sum1 ? "intact" : "changed");
	fflush(stdout);
	return sum0 == sum1 ? STATUS : 5;
}

/*
 * The samples fall in the target's functions in the proportions of its CPU
 * time, present and future threads; the target sees nothing; the
 * attachment ends with its exit.
 */
ATTACH_TEST(samples_land_in_the_target_functions_at_its_cpu_time)
{
	const uint32_t *bins;
	struct profil_stats st;
	uint64_t a, b, cpu;
	char out[64];
	double share;

	ASSERT_EQ(0, start_target(self, spin_subject));
	attach_target(_metadata, self);
	bins = self->bins;
	EXPECT_EQ(0, loop_bins(bins, spin_a) + loop_bins(bins, spin_b));
	st = attach_stats(self->dev);
	EXPECT_EQ(PROFIL_STATE_ON, st.state);
	EXPECT_EQ(PROFIL_STOP_NONE, st.stop_reason);
	EXPECT_EQ(RATE, st.rate);

	target_go(self);
	target_output(self, out, sizeof(out));
	EXPECT_EQ(STATUS, wait_status(self->pid));
	self->pid = -1;
	EXPECT_STREQ("subject intact\n", out);

	a = loop_bins(bins, spin_a);
	b = loop_bins(bins, spin_b);
	cpu = self->rep->cpu_a + self->rep->cpu_b;
	EXPECT_SAMPLES_NEAR(a + b, cpu, RATE);
	share = a + b ? 100.0 * a / (a + b) : 0;
	TH_LOG("spin_a %llu, spin_b %llu: %.1f%% in spin_a, %.1f%% of CPU",
	       (unsigned long long)a, (unsigned long long)b, share,
	       100.0 * self->rep->cpu_a / cpu);
	EXPECT_LT(share, 100.0 * self->rep->cpu_a / cpu + 5);
	EXPECT_GT(share, 100.0 * self->rep->cpu_a / cpu - 5);

	st = attach_stats(self->dev);
	EXPECT_EQ(PROFIL_STATE_OFF, st.state);
	EXPECT_EQ(PROFIL_STOP_EXIT, st.stop_reason);
	EXPECT_LE(a + b, st.samples);
	EXPECT_EQ(1, st.armed);
	/*
	 * The CPU time under the events: the spins' (their threads' own
	 * clocks) and the little the target did around them, attached before
	 * it began; what the samples cover, to a period; kept at the end.
	 */
	EXPECT_LE(cpu * 0.97, st.cpu_ns);
	EXPECT_GE(cpu * 1.1 + 50000000, st.cpu_ns)
		TH_LOG("cpu_ns %llu for %llu ns of spins",
		       (unsigned long long)st.cpu_ns, (unsigned long long)cpu);
	EXPECT_SAMPLES_NEAR(st.samples + st.out_of_range, st.cpu_ns, RATE);
	EXPECT_EQ(st.cpu_ns, attach_stats(self->dev).cpu_ns);
}

/* The target's own session and the attachment both count. */
static int session_subject(struct report *rep)
{
	uint32_t *own = calloc(LEN / 4, 4);
	struct profil_region r = {
		.buf = (uintptr_t)own, .bufsize = LEN, .offset = text_off(),
		.scale = 0x10000, .flags = PROFIL_REGION_U32,
	};
	uint64_t n;

	if (!own || arm_regions(&r, 1, RATE))
		return 6;
	rep->cpu_a = spin_cpu(spin_a, SPIN);
	dev_ioctl(PROFIL_IOC_OFF, NULL);
	n = loop_bins(own, spin_a);
	/* Its own count, as EXPECT_SAMPLES_NEAR wants it. */
	return n >= expected(rep->cpu_a, RATE) * 0.9 - 2 &&
	       n <= expected(rep->cpu_a, RATE) * 1.05 + 2 ? STATUS : 7;
}

ATTACH_TEST(target_own_session_and_the_attachment_coexist)
{
	run_attached(_metadata, self, session_subject, STATUS);
}

/* Spins in spin_a, then execs a shell that counts a while and exits 7. */
static int exec_subject(struct report *rep)
{
	rep->cpu_a = spin_cpu(spin_a, SPIN / 3);
	execl("/bin/sh", "sh", "-c",
	      "i=0; while [ $i -lt 50000 ]; do i=$((i + 1)); done; exit 7",
	      (char *)NULL);
	return 8;
}

/*
 * The exec ends the attachment, and its CPU time with it: the shell's
 * counting after the exec is not in cpu_ns (the CPU the target took in
 * all from its rusage).
 */
ATTACH_TEST(exec_of_the_target_ends_it)
{
	struct profil_stats st;
	struct rusage ru;
	uint64_t all;
	int status;

	ASSERT_EQ(0, start_target(self, exec_subject));
	attach_target(_metadata, self);
	target_go(self);
	ASSERT_EQ(self->pid, wait4(self->pid, &status, 0, &ru));
	self->pid = -1;
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 7)
		TH_LOG("status %#x", status);
	EXPECT_SAMPLES_NEAR(loop_bins(self->bins, spin_a), self->rep->cpu_a,
			    RATE);
	st = attach_stats(self->dev);
	EXPECT_EQ(PROFIL_STATE_OFF, st.state);
	EXPECT_EQ(PROFIL_STOP_EXEC, st.stop_reason);
	all = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
	      (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
	/* The shell ran long enough after the exec for the check to tell. */
	ASSERT_LE(self->rep->cpu_a * 1.1 + 150000000, all);
	EXPECT_LE(self->rep->cpu_a * 0.97, st.cpu_ns);
	EXPECT_GE(self->rep->cpu_a * 1.1 + 50000000, st.cpu_ns)
		TH_LOG("cpu_ns %llu: spin_a %llu ns, %llu ns in all",
		       (unsigned long long)st.cpu_ns,
		       (unsigned long long)self->rep->cpu_a,
		       (unsigned long long)all);
}

/*
 * Spins in spin_a, changes its credentials (a user namespace of its own;
 * root may also just become uid 65534), then spins in spin_b.
 */
static int cred_subject(struct report *rep)
{
	rep->cpu_a = spin_cpu(spin_a, SPIN / 3);
	if (unshare(CLONE_NEWUSER) == 0)
		rep->unshared = 1;
	else if (geteuid() == 0 && setresuid(65534, 65534, 65534) == 0)
		rep->unshared = 1;
	else
		return 9;
	rep->cpu_b = spin_cpu(spin_b, SPIN / 3);
	return STATUS;
}

ATTACH_TEST(credential_change_of_the_target_ends_it)
{
	struct profil_stats st;
	int status;

	ASSERT_EQ(0, start_target(self, cred_subject));
	attach_target(_metadata, self);
	target_go(self);
	status = wait_status(self->pid);
	self->pid = -1;
	if (status == 9)
		SKIP(return, "no user namespace for uid %d", geteuid());
	EXPECT_EQ(STATUS, status);
	EXPECT_SAMPLES_NEAR(loop_bins(self->bins, spin_a), self->rep->cpu_a,
			    RATE);
	EXPECT_EQ(0, loop_bins(self->bins, spin_b));
	st = attach_stats(self->dev);
	EXPECT_EQ(PROFIL_STOP_CRED, st.stop_reason);
	EXPECT_LT(0, st.missed);
	/* Its events went soon after: the target took few ticks more. */
	TH_LOG("%llu ticks for %.1f + %.1f periods",
	       (unsigned long long)st.ticks, expected(self->rep->cpu_a, RATE),
	       expected(self->rep->cpu_b, RATE));
	EXPECT_GT(expected(self->rep->cpu_a, RATE) * 1.05 + 2 +
		  expected(self->rep->cpu_b, RATE) / 4, st.ticks);
}

/*
 * Commits new credentials, the same as the old: capset() of the
 * capabilities the thread has (capset() always commits, unlike
 * setresuid() of the same ids).
 */
static int recommit_cred(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	return syscall(SYS_capget, &h, d) || syscall(SYS_capset, &h, d);
}

/*
 * Spins in spin_a, commits new credentials with the same ids and
 * capabilities, then spins in spin_b: what an LSM label change alone
 * (SELinux's setcon, AppArmor's change_hat) looks like to the attachment,
 * which no guest policy here can make.
 */
static int capset_subject(struct report *rep)
{
	rep->cpu_a = spin_cpu(spin_a, SPIN / 3);
	if (recommit_cred())
		return 9;
	rep->cpu_b = spin_cpu(spin_b, SPIN / 3);
	return STATUS;
}

ATTACH_TEST(new_credentials_with_the_same_ids_and_caps_end_it)
{
	struct profil_stats st;

	run_attached(_metadata, self, capset_subject, STATUS);
	EXPECT_EQ(0, loop_bins(self->bins, spin_b));
	st = attach_stats(self->dev);
	EXPECT_EQ(PROFIL_STOP_CRED, st.stop_reason);
}

static volatile int setxid_run, setxid_ready;

static void *setxid_thread(void *arg)
{
	struct report *rep = arg;

	setxid_ready = recommit_cred() ? -1 : 1;
	while (!setxid_run)
		;
	rep->cpu_b = spin_cpu(spin_b, SPIN / 2);
	return NULL;
}

/*
 * Makes a thread; each commits credentials of its own, the same as the
 * other's (as glibc's setuid() in a threaded program has every thread
 * do).  Says "ready" and waits for a second byte (the attachment is made
 * then), then spins in spin_a while the thread spins in spin_b.
 */
static int setxid_subject(struct report *rep)
{
	pthread_t t;
	char c;

	if (pthread_create(&t, NULL, setxid_thread, rep))
		return 4;
	while (!setxid_ready)
		;
	if (setxid_ready < 0 || recommit_cred())
		return 9;
	printf("ready\n");
	fflush(stdout);
	if (read(target_go_fd, &c, 1) != 1)
		return 3;
	setxid_run = 1;
	rep->cpu_a = spin_cpu(spin_a, SPIN / 2);
	return pthread_join(t, NULL) ? 4 : STATUS;
}

/*
 * A target whose threads run on credentials of their own, each the same
 * as the others (a threaded program that called setuid()), is profiled
 * whole: no thread of it ends the attachment.
 */
ATTACH_TEST(threads_with_the_same_credentials_of_their_own_are_counted)
{
	struct profil_stats st;
	char line[16];

	ASSERT_EQ(0, start_target(self, setxid_subject));
	ASSERT_EQ(1, write(self->go, "g", 1));
	target_output(self, line, sizeof("ready\n"));
	ASSERT_STREQ("ready\n", line);
	attach_target(_metadata, self);
	reap_attached(_metadata, self, STATUS);
	EXPECT_SAMPLES_NEAR(loop_bins(self->bins, spin_b), self->rep->cpu_b,
			    RATE);
	st = attach_stats(self->dev);
	EXPECT_EQ(PROFIL_STOP_EXIT, st.stop_reason);
}

/* OFF on the attached fd stops counting; the bins stay readable. */
ATTACH_TEST(off_on_the_fd_stops_it)
{
	struct profil_stats st0, st;

	ASSERT_EQ(0, start_target(self, spin_subject));
	attach_target(_metadata, self);
	EXPECT_EQ(0, ioctl(self->dev, PROFIL_IOC_OFF, 0));
	/* The target may have ticked on its way to wait for us: before. */
	st0 = attach_stats(self->dev);
	target_go(self);
	EXPECT_EQ(STATUS, wait_status(self->pid));
	self->pid = -1;
	EXPECT_EQ(0, loop_bins(self->bins, spin_a) +
		     loop_bins(self->bins, spin_b));
	st = attach_stats(self->dev);
	EXPECT_EQ(PROFIL_STOP_USER, st.stop_reason);
	EXPECT_EQ(st0.samples, st.samples);
	/* The events went with OFF: not a tick after it, in 0.6 s of CPU. */
	EXPECT_EQ(st0.ticks, st.ticks);
}

static int idle_subject(struct report *rep)
{
	(void)rep;
	pause();
	return 0;
}

/*
 * An overflow region too small for a bin has none: the target's samples,
 * all outside the one other region, are counted out of range, nothing is
 * written past the bins (a bin there would be past the vmap of one page).
 */
ATTACH_TEST(an_overflow_region_without_a_bin_counts_out_of_range)
{
	struct profil_region r[2] = {
		{ .buf = 0, .bufsize = 4, .offset = 0, .scale = 0x10000,
		  .flags = PROFIL_REGION_U32 },
		{ .buf = PAGE, .bufsize = 2,
		  .flags = PROFIL_REGION_OVERFLOW | PROFIL_REGION_U32 },
	};
	struct profil_stats st;
	const uint32_t *bins;
	struct rusage ru;
	uint64_t all;
	int status;
	size_t i;

	ASSERT_EQ(0, start_target(self, spin_subject));
	self->mem = open_mem(self->pid);
	ASSERT_LE(0, self->mem);
	ASSERT_EQ(0, attach_regions(self->dev, self->pid, self->mem, RATE, r,
				    2, &self->bins_size));
	EXPECT_EQ(PAGE, self->bins_size);
	self->bins = mmap(NULL, self->bins_size, PROT_READ, MAP_SHARED,
			  self->dev, 0);
	ASSERT_NE(MAP_FAILED, self->bins);
	target_go(self);
	ASSERT_EQ(self->pid, wait4(self->pid, &status, 0, &ru));
	self->pid = -1;
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == STATUS);
	/* Its loops at least, all that it ran at most (its start, exit). */
	all = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
	      (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
	st = attach_stats(self->dev);
	EXPECT_SAMPLES_WITHIN(st.out_of_range,
			      self->rep->cpu_a + self->rep->cpu_b, all, RATE);
	EXPECT_EQ(0, st.samples);
	bins = self->bins;
	for (i = 0; i < PAGE / 4; i++)
		ASSERT_EQ(0, bins[i]) TH_LOG("bin %zu", i);
}

/* Exec sleep: a target whose memory changes after its mem was opened. */
static int exec_sleep_subject(struct report *rep)
{
	(void)rep;
	execl("/bin/sleep", "sleep", "60", (char *)NULL);
	return 8;
}

/* Until @pid runs @comm; 0, or -1 after a few thousand looks. */
static int wait_comm(pid_t pid, const char *comm)
{
	struct timespec ms = { 0, 1000000 };
	char path[64], buf[32];
	int i, fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	for (i = 0; i < 5000; i++) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		if (fd >= 0)
			close(fd);
		if (n > 0) {
			buf[n] = 0;
			buf[strcspn(buf, "\n")] = 0;
			if (!strcmp(buf, comm))
				return 0;
		}
		nanosleep(&ms, NULL);
	}
	return -1;
}

/*
 * The mem fd names the memory it was opened on: once the target has
 * exec'ed (a set-ID program's would be no longer the caller's to trace),
 * that memory is gone, the same PID with that fd is refused, ESRCH, and
 * nothing is charged.
 */
ATTACH_TEST(a_mem_fd_opened_before_the_target_execs_is_refused)
{
	ASSERT_EQ(0, start_target(self, exec_sleep_subject));
	self->mem = open_mem(self->pid);
	ASSERT_LE(0, self->mem);
	target_go(self);
	ASSERT_EQ(0, wait_comm(self->pid, "sleep"));
	EXPECT_EQ(-ESRCH, attach_spin(self, self->mem, self->pid));
	EXPECT_EQ(self->vmpin0, vmpin_kb());
	/* A mem fd opened now is the target's. */
	close(self->mem);
	self->mem = open_mem(self->pid);
	ASSERT_LE(0, self->mem);
	EXPECT_EQ(0, attach_spin(self, self->mem, self->pid));
}

/* Writable, executable, at an offset, too long: refused. */
ATTACH_TEST(bins_are_mapped_read_only)
{
	void *p;
	int fd;

	ASSERT_EQ(0, start_target(self, idle_subject));
	attach_target(_metadata, self);
	errno = 0;
	EXPECT_EQ(MAP_FAILED, mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
				   MAP_SHARED, self->dev, 0));
	EXPECT_EQ(EPERM, errno);
	errno = 0;
	EXPECT_EQ(MAP_FAILED, mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE, self->dev, 0));
	EXPECT_EQ(EPERM, errno);
	errno = 0;
	EXPECT_EQ(MAP_FAILED, mmap(NULL, PAGE, PROT_READ | PROT_EXEC,
				   MAP_SHARED, self->dev, 0));
	EXPECT_EQ(EPERM, errno);
	errno = 0;
	EXPECT_NE(0, mprotect(self->bins, PAGE, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	errno = 0;
	EXPECT_EQ(MAP_FAILED, mmap(NULL, PAGE, PROT_READ, MAP_SHARED,
				   self->dev, PAGE));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 5 * PAGE, PROT_READ, MAP_SHARED,
				   self->dev, 0));
	EXPECT_EQ(EINVAL, errno);
	/* An fd not attached maps nothing. */
	fd = open("/dev/profil", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	errno = 0;
	p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(ENODEV, errno);
	close(fd);
}

/* Bad arguments change nothing: the fd can still attach after them. */
ATTACH_TEST(bad_arguments_are_refused)
{
	struct profil_region r = { .buf = 0, .bufsize = LEN,
				   .offset = text_off(), .scale = 0x10000 };
	struct {
		struct profil_attach a;
		uint64_t tail;
	} big;
	struct profil_attach a;

	ASSERT_EQ(0, start_target(self, idle_subject));
	self->mem = open_mem(self->pid);
	ASSERT_LE(0, self->mem);
	a = (struct profil_attach){ .size = sizeof(a), .mem_fd = self->mem,
				    .pid = self->pid, .nr_regions = 1,
				    .region_size = sizeof(r),
				    .regions = (uintptr_t)&r };
	a.flags = 1;
	EXPECT_NE(0, ioctl(self->dev, PROFIL_IOC_ATTACH, &a));
	EXPECT_EQ(EINVAL, errno);
	a.flags = 0;
	a.reserved = 1;
	EXPECT_NE(0, ioctl(self->dev, PROFIL_IOC_ATTACH, &a));
	EXPECT_EQ(EINVAL, errno);
	a.reserved = 0;
	a.size = PROFIL_ATTACH_SIZE_VER0 - 8;
	EXPECT_NE(0, ioctl(self->dev, PROFIL_IOC_ATTACH, &a));
	EXPECT_EQ(EINVAL, errno);
	a.size = sizeof(a);
	a.nr_regions = 0;
	EXPECT_NE(0, ioctl(self->dev, PROFIL_IOC_ATTACH, &a));
	EXPECT_EQ(EINVAL, errno);
	a.nr_regions = 1;
	a.rate = 10000000;
	EXPECT_NE(0, ioctl(self->dev, PROFIL_IOC_ATTACH, &a));
	EXPECT_EQ(EINVAL, errno);
	a.rate = 0;
	r.scale = 0x10001;
	EXPECT_NE(0, ioctl(self->dev, PROFIL_IOC_ATTACH, &a));
	EXPECT_EQ(EINVAL, errno);
	r.scale = 0x10000;
	/* Bins past PROFIL_MAX_BUFSIZE. */
	r.buf = PROFIL_MAX_BUFSIZE;
	EXPECT_NE(0, ioctl(self->dev, PROFIL_IOC_ATTACH, &a));
	EXPECT_EQ(E2BIG, errno);
	r.buf = 0;
	big.a = a;
	big.a.size = sizeof(big);
	big.tail = 1;
	EXPECT_NE(0, ioctl(self->dev, PROFIL_IOC_ATTACH, &big));
	EXPECT_EQ(E2BIG, errno);
	EXPECT_EQ(self->vmpin0, vmpin_kb());

	/* Still unattached: now it attaches, and only once. */
	EXPECT_EQ(0, ioctl(self->dev, PROFIL_IOC_ATTACH, &a));
	EXPECT_EQ(PAGE * 2, a.bins_size);
	EXPECT_NE(0, ioctl(self->dev, PROFIL_IOC_ATTACH, &a));
	EXPECT_EQ(EBUSY, errno);
	self->bins_size = a.bins_size;
}

/* Only a procfs mem file of the target itself will do. */
ATTACH_TEST(forged_mem_fd_is_refused)
{
	struct profil_region r = { .buf = 0, .bufsize = LEN,
				   .offset = text_off(), .scale = 0x10000 };
	char path[64];
	int fd;

	ASSERT_EQ(0, start_target(self, idle_subject));
	snprintf(path, sizeof(path), "/proc/%d/status", self->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, attach_regions(self->dev, self->pid, fd, RATE,
					  &r, 1, NULL));
	close(fd);
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, attach_regions(self->dev, self->pid, fd, RATE,
					  &r, 1, NULL));
	close(fd);
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, attach_regions(self->dev, self->pid, fd, RATE,
					  &r, 1, NULL));
	close(fd);
	EXPECT_EQ(-EBADF, attach_regions(self->dev, self->pid, 999, RATE,
					 &r, 1, NULL));
	/* The memory of another process than the one named. */
	fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, attach_regions(self->dev, self->pid, fd, RATE,
					  &r, 1, NULL));
	close(fd);
	/* PID 0 names no target. */
	fd = open_mem(self->pid);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-ESRCH, attach_regions(self->dev, 0, fd, RATE, &r, 1,
					 NULL));
	close(fd);
	EXPECT_EQ(self->vmpin0, vmpin_kb());
}

/* A process that is gone: reaped, or a zombie. */
ATTACH_TEST(exited_target_is_esrch)
{
	struct profil_region r = { .buf = 0, .bufsize = LEN,
				   .offset = text_off(), .scale = 0x10000 };
	pid_t pid;
	int fd;

	ASSERT_EQ(0, start_target(self, idle_subject));
	fd = open_mem(self->pid);
	ASSERT_LE(0, fd);
	kill(self->pid, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, wait_status(self->pid));
	EXPECT_EQ(-ESRCH, attach_regions(self->dev, self->pid, fd, RATE,
					 &r, 1, NULL));
	close(fd);
	self->pid = -1;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(0);
	/* A zombie's mem opens, with no memory behind it. */
	ASSERT_EQ(0, waitid(P_PID, pid, &(siginfo_t){ 0 }, WEXITED | WNOWAIT));
	fd = open_mem(pid);
	if (fd >= 0) {
		EXPECT_EQ(-ESRCH, attach_regions(self->dev, pid, fd, RATE,
						 &r, 1, NULL));
		close(fd);
	}
	EXPECT_EQ(0, wait_status(pid));
	EXPECT_EQ(self->vmpin0, vmpin_kb());
}

/* Drop to uid 65534 (a test run as root), in a child. */
static int become_nobody(void)
{
	if (geteuid() != 0)
		return 0;
	if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	    setresuid(65534, 65534, 65534))
		return -1;
	return 0;
}

/* As ptrace would: another user's process (init, root's) is refused. */
ATTACH_TEST(another_users_process_is_refused)
{
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid) {
		if (become_nobody())
			_exit(2);
		if (open_mem(1) >= 0)
			_exit(3);
		_exit(errno == EACCES ? 0 : 4);
	}
	EXPECT_EQ(0, wait_status(pid));
}

/* A non-dumpable process (as a set-ID one is) is refused to its user. */
ATTACH_TEST(non_dumpable_process_is_refused)
{
	int status, go[2];
	pid_t pid = fork();
	char c;

	ASSERT_LE(0, pid);
	if (!pid) {
		pid_t t;

		if (become_nobody() || pipe(go))
			_exit(2);
		t = fork();
		if (!t) {
			prctl(PR_SET_DUMPABLE, 0);
			close(go[0]);
			close(go[1]);
			pause();
			_exit(0);
		}
		close(go[1]);
		/* The target made itself non-dumpable once it closed. */
		if (read(go[0], &c, 1) != 0)
			_exit(5);
		status = open_mem(t) >= 0 ? 3 : errno == EACCES ? 0 : 4;
		kill(t, SIGKILL);
		_exit(status);
	}
	EXPECT_EQ(0, wait_status(pid));
}

/* Set kernel.yama.ptrace_scope (root): 0 or -1. */
static int set_ptrace_scope(int v)
{
	int fd = open("/proc/sys/kernel/yama/ptrace_scope", O_WRONLY | O_CLOEXEC);
	char c = '0' + v;
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, &c, 1) == 1;
	close(fd);
	return ok ? 0 : -1;
}

/* kernel.yama.ptrace_scope, 0 without Yama. */
static int ptrace_scope(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
	int v = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%d", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

/* Attach a fresh fd to @pid through @mem: 0 or -errno. */
static int attach_once(pid_t pid, int mem)
{
	struct profil_region r = { .buf = 0, .bufsize = LEN,
				   .offset = text_off(), .scale = 0x10000 };
	int dev = open("/dev/profil", O_RDWR | O_CLOEXEC), ret;

	if (dev < 0)
		return -errno;
	ret = attach_regions(dev, pid, mem, RATE, &r, 1, NULL);
	close(dev);
	return ret;
}

/*
 * As uid 65534 (dumpable): a child may be attached to; with Yama's
 * ptrace_scope 1 or more a sibling may not, unless it named the sibling
 * its ptracer (PR_SET_PTRACER, scope 1); with 0 it may.
 */
static int yama_check(int scope)
{
	int mem, ready[2], want;
	pid_t t, s;
	char c;

	if (become_nobody() || prctl(PR_SET_DUMPABLE, 1) || pipe(ready))
		return 2;
	t = fork();
	if (!t) {
		close(ready[0]);
		if (scope == 1 && getenv("YAMA_PTRACER"))
			prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY);
		close(ready[1]);
		pause();
		_exit(0);
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 0)
		return 3;
	mem = open_mem(t);
	if (mem < 0 || attach_once(t, mem))
		return 4;	/* a descendant is always allowed */
	close(mem);
	s = fork();
	if (!s) {
		mem = open_mem(t);
		want = scope >= 1 && !(scope == 1 && getenv("YAMA_PTRACER"));
		if (want)
			_exit(mem < 0 && errno == EACCES ? 0 : 5);
		_exit(mem >= 0 && !attach_once(t, mem) ? 0 : 6);
	}
	want = wait_status(s);
	kill(t, SIGKILL);
	waitpid(t, NULL, 0);
	return want;
}

static void yama_run(struct __test_metadata *_metadata, int scope,
		     int ptracer)
{
	pid_t pid;

	if (ptracer)
		setenv("YAMA_PTRACER", "1", 1);
	else
		unsetenv("YAMA_PTRACER");
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(yama_check(scope));
	EXPECT_EQ(0, wait_status(pid));
}

/*
 * The scope the guest has (Debian's: 0), and, as root, which may change
 * it, scope 1 too, with and without PR_SET_PTRACER, then back.
 */
ATTACH_TEST(yama_ptrace_scope_applies)
{
	int scope = ptrace_scope();

	TH_LOG("kernel.yama.ptrace_scope %d", scope);
	yama_run(_metadata, scope, 0);
	if (scope == 1)
		yama_run(_metadata, 1, 1);
	if (scope != 0 || geteuid() != 0 ||
	    access("/proc/sys/kernel/yama/ptrace_scope", F_OK))
		return;
	ASSERT_EQ(0, set_ptrace_scope(1));
	TH_LOG("kernel.yama.ptrace_scope 1 for a moment");
	yama_run(_metadata, 1, 0);
	yama_run(_metadata, 1, 1);
	EXPECT_EQ(0, set_ptrace_scope(0));
}

/*
 * Past RLIMIT_MEMLOCK (root without CAP_IPC_LOCK): -ENOMEM, nothing
 * charged; within it, charged until the close.
 */
ATTACH_TEST(memlock_limit_bounds_the_bins)
{
	struct profil_region r = { .buf = 0, .bufsize = 4 * PAGE,
				   .offset = text_off(), .scale = 0x10000 };
	struct rlimit rl = { 3 * PAGE, 3 * PAGE };
	uint64_t size;
	pid_t pid;
	int dev;

	ASSERT_EQ(0, start_target(self, idle_subject));
	self->mem = open_mem(self->pid);
	ASSERT_LE(0, self->mem);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (drop_cap_ipc_lock() || setrlimit(RLIMIT_MEMLOCK, &rl))
			_exit(2);
		if (attach_regions(self->dev, self->pid, self->mem, RATE, &r,
				   1, NULL) != -ENOMEM)
			_exit(3);
		if (vmpin_kb() != self->vmpin0)
			_exit(4);
		r.bufsize = 3 * PAGE;
		dev = open("/dev/profil", O_RDWR | O_CLOEXEC);
		if (attach_regions(dev, self->pid, self->mem, RATE, &r, 1,
				   &size) || size != 3 * PAGE)
			_exit(5);
		if (vmpin_kb() != self->vmpin0 + 12)
			_exit(6);
		close(dev);
		if (vmpin_kb() != self->vmpin0)
			_exit(7);
		_exit(0);
	}
	EXPECT_EQ(0, wait_status(pid));
	EXPECT_EQ(0, memlock_balanced());
}

/*
 * make check-debug: every allocation an ATTACH makes fails once (fail-nth
 * 1, 2, ... until the call reaches no n-th point): each failure is a clean
 * -ENOMEM with nothing charged, the success a working attachment; KASAN
 * and kmemleak watch the unwinding.
 */
ATTACH_TEST(every_allocation_of_an_attach_fails_once)
{
	int n, ret, left = 0, fails = 0, nth, dev;
	uint64_t size;

	if (access("/proc/thread-self/fail-nth", W_OK))
		SKIP(return, "no fault injection in this kernel (make check-debug)");
	if (geteuid() || !injection_ready())
		SKIP(return, "the injectors' debugfs knobs need root");
	ASSERT_EQ(0, start_target(self, idle_subject));
	self->mem = open_mem(self->pid);
	ASSERT_LE(0, self->mem);
	nth = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, nth);
	for (n = 1; n < 2000 && !left; n++) {
		struct profil_region r[2] = {
			{ .buf = 0, .bufsize = LEN, .offset = text_off(),
			  .scale = 0x10000, .flags = PROFIL_REGION_U32 },
			{ .buf = OVF, .bufsize = 4,
			  .flags = PROFIL_REGION_OVERFLOW },
		};

		dev = open("/dev/profil", O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, dev);
		ASSERT_EQ(0, nth_set(nth, n));
		ret = attach_regions(dev, self->pid, self->mem, RATE, r, 2,
				     &size);
		left = nth_left(nth);
		ASSERT_EQ(0, nth_set(nth, 0));
		if (ret) {
			fails++;
			EXPECT_EQ(-ENOMEM, ret) TH_LOG("fail-nth %d", n);
			EXPECT_EQ(self->vmpin0, vmpin_kb());
		} else {
			EXPECT_EQ(4 * PAGE, size);
			EXPECT_EQ(self->vmpin0 + 16, vmpin_kb());
			EXPECT_EQ(PROFIL_STATE_ON, attach_stats(dev).state);
		}
		close(dev);
		EXPECT_EQ(self->vmpin0, vmpin_kb());
	}
	TH_LOG("%d allocations failed in turn, then it attached", fails);
	EXPECT_LT(0, left);
	EXPECT_LT(3, fails);
	close(nth);
}

/*
 * The attached fd, and a mapping of its bins, hold the module; once both
 * are gone rmmod succeeds, with the target still running on unharmed.
 */
ATTACH_TEST(rmmod_refused_while_attached_then_clean)
{
	const char *ko = getenv("PROFIL_KO");
	int fd;

	if (geteuid() != 0 || !ko)
		SKIP(return, "needs root and PROFIL_KO");
	ASSERT_EQ(0, start_target(self, spin_subject));
	attach_target(_metadata, self);
	close(self->dev);
	self->dev = -1;
	errno = 0;
	EXPECT_EQ(-1, syscall(SYS_delete_module, "profil", O_NONBLOCK));
	EXPECT_EQ(EWOULDBLOCK, errno);
	EXPECT_EQ(0, munmap(self->bins, self->bins_size));
	self->bins = MAP_FAILED;
	EXPECT_EQ(self->vmpin0, vmpin_kb());
	ASSERT_EQ(0, syscall(SYS_delete_module, "profil", O_NONBLOCK));
	EXPECT_FALSE(module_loaded());

	target_go(self);
	EXPECT_EQ(STATUS, wait_status(self->pid));
	self->pid = -1;

	fd = open(ko, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, syscall(SYS_finit_module, fd, "", 0));
	close(fd);
	ASSERT_TRUE(module_loaded());
}

/* 20 ms of CPU in spin_a, then exit. */
static int brief_subject(struct report *rep)
{
	rep->cpu_a = spin_cpu(spin_a, 20 * 1000000ULL);
	return STATUS;
}

/*
 * The release of an attached fd racing the target's exit (its probe ends
 * the attachment and queues the events' release on the settle thread;
 * the release must neither miss that work nor free what it uses): every
 * other round closes at once when STATS first says the target exited,
 * while that work is likely still queued, and the others after 0 to 14
 * ms of the test's CPU while the target spins its 20 ms, before its exit
 * or during it.  Every round leaves nothing (VmPin back where it was, the
 * target's exit status intact); a use after free or a work left queued
 * would show in the guest's dmesg check (KASAN, under make check-debug).
 */
ATTACH_TEST(close_racing_the_target_exit_leaves_nothing)
{
	int i, before = 0, after = 0;

	for (i = 0; i < 30; i++) {
		ASSERT_EQ(0, start_target(self, brief_subject));
		self->mem = open_mem(self->pid);
		ASSERT_LE(0, self->mem);
		ASSERT_EQ(0, attach_spin(self, self->mem, self->pid));
		close(self->mem);
		self->mem = -1;
		target_go(self);
		if (i % 2)
			while (attach_stats(self->dev).stop_reason ==
			       PROFIL_STOP_NONE)
				;
		else if (i)	/* a timer of 0 would never fire */
			spin_cpu(spin_b, i / 2 * 1000000ULL);
		if (attach_stats(self->dev).stop_reason == PROFIL_STOP_EXIT)
			after++;
		else
			before++;
		close(self->dev);
		self->dev = -1;
		EXPECT_EQ(STATUS, wait_status(self->pid));
		self->pid = -1;
		EXPECT_EQ(self->vmpin0, vmpin_kb());
		close(self->out);
		self->out = -1;
	}
	TH_LOG("%d releases before the target's exit, %d after it", before,
	       after);
	EXPECT_LE(15, after);
}

TEST_HARNESS_MAIN
