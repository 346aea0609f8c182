// SPDX-License-Identifier: GPL-2.0
/*
 * profil.ko lifecycle selftests: a session across fork, vfork,
 * posix_spawn, system() and exec, its shutoff when the buffer goes away,
 * threads and processes exiting or killed while sampled, rmmod with
 * sessions in several processes, and a churn of a few hundred processes
 * after which no pin and no memlock charge is left.
 *
 * Children report through a shared page; only the test process asserts.
 * Work is measured in CPU time, never in wall time.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "common.h"
#include "kselftest_harness.h"

extern char **environ;

#define PAGE	4096UL
#define LEN	(2 * PAGE)		/* 16-bit bins from spin_a - SPIN_PAD */
#define FRESH	(MAP_PRIVATE | MAP_ANONYMOUS)


/* The plain tests: TEST() has a fixed 30 s timeout, too short for TCG. */
FIXTURE(life) {
	int unused;
};

FIXTURE_SETUP(life)
{
	REQUIRE_MODULE();
}

FIXTURE_TEARDOWN(life)
{
}

#define LIFE_TEST(name, timeout) TEST_F_TIMEOUT(life, name, timeout)

/* bin 0 of every buffer here: SPIN_PAD bytes before spin_a */
static uintptr_t text_off(void)
{
	return (uintptr_t)spin_a - SPIN_PAD;
}

/* Samples in the bins of loop @fn (its cmp and je, one bin per 2 bytes). */
static uint64_t loop_bins(const uint16_t *buf, void (*fn)(volatile int *))
{
	size_t i = ((uintptr_t)fn - text_off()) / 2;

	return (uint64_t)buf[i] + buf[i + 1] + buf[i + 2];
}

static uint16_t *map_buf(void *at, int flags)
{
	void *p = mmap(at, LEN, PROT_READ | PROT_WRITE, flags, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int arm_buf(uint16_t *buf)
{
	return arm_one(buf, LEN, text_off(), 0x10000, RATE);
}

static int all_zero(const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--)
		if (*c++)
			return 0;
	return 1;
}

/* What a child reports: a page shared with the test process. */
struct report {
	int64_t v[32];
};

static struct report *report_page(void)
{
	void *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Fill @r from the caller's stats, starting at @r->v[@at]. */
static void report_stats(struct report *r, int at)
{
	struct profil_stats st = get_stats();

	r->v[at] = st.state;
	r->v[at + 1] = st.stop_reason;
	r->v[at + 2] = st.armed;
	r->v[at + 3] = st.missed;
	r->v[at + 4] = st.samples;
}

/*
 * The CPU time a spin of @asked is sampled for at least: what it used, or
 * what it asked for if less.  Under TCG a host stall at the end of a spin
 * shows as more CPU time, which the thread's next tick, after the loop,
 * is charged for.
 */
static uint64_t cpu_asked(uint64_t used, uint64_t asked)
{
	return used < asked ? used : asked;
}

/*
 * Spin in spin_a for 2 * SPIN / 3 of CPU time and expect its samples counted
 * in @buf, or a few counted missed: an invalidation that left the buffer in
 * place (khugepaged, a huge page split) suspends counting until the kernel
 * has looked the pages up again.  The bound leaves 10%: the CPU time owed
 * when the spin ends is charged at the thread's next tick, elsewhere, and
 * under TCG a vCPU the host preempts shows the lost time as CPU time of the
 * guest's running thread (93% seen once on a loaded host).
 */
static void expect_counting(struct __test_metadata *_metadata, uint16_t *buf)
{
	uint64_t a0 = loop_bins(buf, spin_a), m0 = get_stats().missed, ns, n;

	ns = spin_cpu(spin_a, 2 * SPIN / 3);
	ns = cpu_asked(ns, 2 * SPIN / 3);
	n = loop_bins(buf, spin_a) - a0;
	m0 = get_stats().missed - m0;
	if (n < expected(ns, RATE) * 0.95)	/* for the log */
		TH_LOG("%llu samples in spin_a for %.0f expected, %llu missed",
		       (unsigned long long)n, expected(ns, RATE),
		       (unsigned long long)m0);
	EXPECT_LE(expected(ns, RATE) * 0.9, n + m0);
	EXPECT_LE(expected(ns, RATE) * 0.75, n);
}

enum { R_STATE, R_STOP, R_ARMED, R_MISSED, R_SAMPLES };

static int wait_exit(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* ------------------------------------------------------------------ fork */

LIFE_TEST(fork_child_profiles_into_its_own_copy, 180)
{
	struct report *r = report_page();
	uint16_t *buf = map_buf(NULL, FRESH);
	struct profil_stats st;
	uint64_t a0, ns;
	pid_t pid;

	ASSERT_NE(NULL, r);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, arm_buf(buf));
	spin_cpu(spin_a, SPIN / 3);
	a0 = loop_bins(buf, spin_a);
	ASSERT_LT(0, a0);

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		r->v[10] = loop_bins(buf, spin_a);	/* the copy at fork */
		ns = spin_cpu(spin_b, SPIN);
		r->v[11] = loop_bins(buf, spin_b);
		r->v[12] = (int64_t)expected(cpu_asked(ns, SPIN), RATE);
		r->v[14] = (int64_t)expected(ns, RATE);
		r->v[13] = vmpin_kb();
		report_stats(r, 0);
		_exit(0);
	}
	ASSERT_EQ(0, wait_exit(pid));

	/* The child: its copy, its own pins, its own stats. */
	TH_LOG("child: %lld samples in spin_b for %lld expected, %lld missed",
	       (long long)r->v[11], (long long)r->v[12],
	       (long long)r->v[R_MISSED]);
	EXPECT_EQ(a0, r->v[10]);
	EXPECT_EQ(PROFIL_STATE_ON, r->v[R_STATE]);
	EXPECT_EQ(PROFIL_STOP_NONE, r->v[R_STOP]);
	EXPECT_EQ(0, r->v[R_ARMED]);
	/* CPU time before the takeover: little, but TCG inflates it. */
	EXPECT_GE(r->v[12] / 20 + 2, r->v[R_MISSED]);
	EXPECT_LE(r->v[12] * 90 / 100, r->v[11]);
	EXPECT_GE(r->v[14] * 105 / 100 + 2, r->v[11]);
	EXPECT_EQ((int64_t)(LEN / 1024), r->v[13]);

	/* The parent: untouched by the child, and still on. */
	EXPECT_EQ(0, loop_bins(buf, spin_b));
	st = get_stats();
	EXPECT_EQ(PROFIL_STATE_ON, st.state);
	EXPECT_EQ(PROFIL_STOP_NONE, st.stop_reason);
	expect_counting(_metadata, buf);
	EXPECT_EQ(0, dev_ioctl(PROFIL_IOC_OFF, NULL));
}

/*
 * A child is taken over once it could owe a sample, a period of the rate
 * after the fork: one that ends (or execs) before never is, and pins
 * nothing.  At 1 Hz that is a second, far longer than these children
 * live; they look at their pins without a request, which would take them
 * over at once, as the last child's does.
 */
LIFE_TEST(children_are_taken_over_once_they_could_owe_a_sample, 120)
{
	struct report *r = report_page();
	uint16_t *buf = map_buf(NULL, FRESH);
	struct profil_stats st;
	int i, n = 8;
	pid_t pid;

	ASSERT_NE(NULL, r);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, arm_one(buf, LEN, text_off(), 0x10000, 1));
	for (i = 0; i <= n; i++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			r->v[i] = vmpin_kb();
			if (i == n) {
				st = get_stats();
				r->v[n + 1] = st.state;
				r->v[n + 2] = vmpin_kb();
			}
			_exit(0);
		}
		ASSERT_EQ(0, wait_exit(pid));
	}
	for (i = 0; i <= n; i++)
		EXPECT_EQ(0, r->v[i]);
	EXPECT_EQ(PROFIL_STATE_ON, r->v[n + 1]);
	EXPECT_EQ((int64_t)(LEN / 1024), r->v[n + 2]);
	EXPECT_EQ(0, dev_ioctl(PROFIL_IOC_OFF, NULL));
}

/*
 * A child whose take-over is still waiting outlives its parent, whose
 * buffer went away first (the arm stopped on a fault): the take-over, run
 * by the child's first request, finds the parent's session gone and says
 * so (PROFIL_STOP_INHERIT), without touching what the parent freed (the
 * debug kernel's KASAN watches).  The pause only leaves the freeing time
 * to happen; nothing is measured.
 */
LIFE_TEST(a_waiting_take_over_outlives_its_parent, 120)
{
	struct report *r = report_page();
	int go[2], i = 0;
	uint16_t *buf;
	pid_t mid, pid;
	char c = 0;

	ASSERT_NE(NULL, r);
	ASSERT_EQ(0, pipe(go));
	r->v[10] = -1;
	mid = fork();
	ASSERT_LE(0, mid);
	if (mid == 0) {
		buf = map_buf(NULL, FRESH);
		if (!buf || arm_one(buf, LEN, text_off(), 0x10000, 1))
			_exit(2);
		pid = fork();
		if (pid == 0) {
			close(go[1]);
			if (read(go[0], &c, 1) != 1)
				_exit(3);
			report_stats(r, 0);
			r->v[10] = get_stats().inherit_error;
			_exit(0);
		}
		r->v[11] = pid;
		munmap(buf, LEN);
		_exit(pid > 0 ? 0 : 4);
	}
	close(go[0]);
	ASSERT_EQ(0, wait_exit(mid));
	usleep(200 * 1000);
	ASSERT_EQ(1, write(go[1], &c, 1));
	close(go[1]);
	while (r->v[10] == -1 && i++ < 6000)
		usleep(10 * 1000);
	EXPECT_EQ(PROFIL_STATE_OFF, r->v[R_STATE]);
	EXPECT_EQ(PROFIL_STOP_INHERIT, r->v[R_STOP]);
	EXPECT_EQ(-EFAULT, r->v[10]);
}

LIFE_TEST(grandchild_inherits_from_child, 180)
{
	struct report *r = report_page();
	uint16_t *buf = map_buf(NULL, FRESH);
	pid_t pid, gpid;
	uint64_t ns;

	ASSERT_NE(NULL, r);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, arm_buf(buf));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		gpid = fork();
		if (gpid == 0) {
			ns = spin_cpu(spin_b, SPIN);
			r->v[10] = loop_bins(buf, spin_b);
			r->v[11] = (int64_t)expected(cpu_asked(ns, SPIN),
						     RATE);
			report_stats(r, 0);
			_exit(0);
		}
		r->v[12] = wait_exit(gpid);
		r->v[13] = loop_bins(buf, spin_b);
		_exit(0);
	}
	ASSERT_EQ(0, wait_exit(pid));
	EXPECT_EQ(0, r->v[12]);
	EXPECT_EQ(PROFIL_STATE_ON, r->v[R_STATE]);
	EXPECT_LE(r->v[11] * 90 / 100, r->v[10]);
	EXPECT_EQ(0, r->v[13]);		/* not in the child's copy */
	EXPECT_EQ(0, loop_bins(buf, spin_b));	/* nor in ours */
}

/* Fork a child that spins in spin_b and reports its bins and stats. */
static int fork_spin_b_child(struct report *r, uint16_t *buf)
{
	pid_t pid = fork();

	if (pid == 0) {
		spin_cpu(spin_b, SPIN / 3);
		r->v[10] = loop_bins(buf, spin_b);
		report_stats(r, 0);
		_exit(0);
	}
	return pid < 0 ? -1 : wait_exit(pid);
}

LIFE_TEST(profil_inherit_0_child_not_profiled, 180)
{
	struct report *r = report_page();
	uint16_t *buf = map_buf(NULL, FRESH);

	ASSERT_NE(NULL, r);
	ASSERT_NE(NULL, buf);
	EXPECT_EQ(1, profil_inherit(0));	/* inheriting is the default */
	EXPECT_EQ(0, profil_inherit(0));
	errno = 0;
	EXPECT_EQ(-1, profil_inherit(2));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, profil(buf, LEN, text_off(), 0x10000));

	ASSERT_EQ(0, fork_spin_b_child(r, buf));
	EXPECT_EQ(PROFIL_STATE_OFF, r->v[R_STATE]);
	EXPECT_EQ(0, r->v[R_SAMPLES]);
	EXPECT_EQ(0, r->v[10]);
	EXPECT_EQ(PROFIL_STATE_ON, get_stats().state);

	/* The control: inheritance back on, the next child profiles. */
	EXPECT_EQ(0, profil_inherit(1));
	ASSERT_EQ(0, profil(buf, LEN, text_off(), 0x10000));
	ASSERT_EQ(0, fork_spin_b_child(r, buf));
	EXPECT_EQ(PROFIL_STATE_ON, r->v[R_STATE]);
	EXPECT_LT(0, r->v[10]);
	profil(NULL, 0, 0, 0);
}

/*
 * A buffer that shares its first and last pages, and its mapping, with other
 * data, as one in the heap or .bss does.  Fork write-protects the whole
 * mapping; the parent's writes next to the buffer then break copy-on-write
 * on the pages around it.  None of that may end the session.
 */
LIFE_TEST(fork_then_cow_next_to_the_buffer_keeps_session, 120)
{
	char *area = mmap(NULL, 6 * PAGE, PROT_READ | PROT_WRITE, FRESH, -1, 0);
	uint16_t *buf = (uint16_t *)(area + PAGE + 100);
	struct profil_stats st;
	int p[2], i;
	pid_t pid;
	char c;

	ASSERT_NE(MAP_FAILED, area);
	memset(area, 1, 6 * PAGE);
	memset(buf, 0, LEN);
	ASSERT_EQ(0, arm_buf(buf));
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(p[1]);	/* EOF if the test process fails first */
		(void)!read(p[0], &c, 1);	/* keep the pages shared */
		_exit(0);
	}
	close(p[0]);
	/* Every byte of the mapping that is not the buffer, pinned pages too. */
	for (i = 0; i < 6 * (int)PAGE; i++)
		if (area + i < (char *)buf || area + i >= (char *)buf + LEN)
			area[i] = 2;
	st = get_stats();
	EXPECT_EQ(PROFIL_STATE_ON, st.state);
	EXPECT_EQ(PROFIL_STOP_NONE, st.stop_reason);
	expect_counting(_metadata, buf);
	EXPECT_EQ(1, write(p[1], "x", 1));
	EXPECT_EQ(0, wait_exit(pid));
	EXPECT_EQ(0, dev_ioctl(PROFIL_IOC_OFF, NULL));
}

/* AnonHugePages, in kB, of the mapping that holds @p; -1 if none. */
static long anon_huge_kb(const void *p)
{
	unsigned long lo, hi, at = (unsigned long)p;
	char line[512];
	long kb = -1;
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in = lo <= at && at < hi;
		else if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

/*
 * A buffer inside a transparent huge page: splitting it (here by an
 * mprotect of one page far from the buffer) invalidates the whole 2 MiB
 * with MMU_NOTIFY_CLEAR, as MADV_DONTNEED would, but the buffer stays where
 * it is, and so must the session.
 */
LIFE_TEST(thp_split_around_the_buffer_keeps_session, 120)
{
	const size_t huge = 2UL << 20;
	char *area = mmap(NULL, 2 * huge, PROT_READ | PROT_WRITE, FRESH, -1, 0);
	char *hp = (char *)(((uintptr_t)area + huge - 1) & ~(huge - 1));
	uint16_t *buf = (uint16_t *)(hp + 64 * PAGE);
	struct profil_stats st;
	uint64_t a0;

	ASSERT_NE(MAP_FAILED, area);
	madvise(hp, huge, MADV_HUGEPAGE);
	hp[0] = 1;
	if (anon_huge_kb(hp) < 2048)
		SKIP(return, "no transparent huge page here");
	ASSERT_EQ(0, arm_buf(buf));
	spin_cpu(spin_a, SPIN / 10);
	a0 = loop_bins(buf, spin_a);
	ASSERT_LT(0, a0);

	ASSERT_EQ(0, mprotect(hp + 256 * PAGE, PAGE, PROT_READ));
	EXPECT_EQ(0, anon_huge_kb(hp));		/* it was split */
	st = get_stats();
	EXPECT_EQ(PROFIL_STATE_ON, st.state);
	EXPECT_EQ(PROFIL_STOP_NONE, st.stop_reason);
	expect_counting(_metadata, buf);
	EXPECT_EQ(0, dev_ioctl(PROFIL_IOC_OFF, NULL));
}

/* A child that cannot take the buffer over is off, and says why. */
FIXTURE(inherit_fails) {
	struct report *r;
	uint16_t *buf;
	long long pins0;
};

FIXTURE_VARIANT(inherit_fails) {
	int dontfork;	/* the child has no buffer */
	int memlock;	/* the child may not lock it */
};

FIXTURE_VARIANT_ADD(inherit_fails, madv_dontfork_buffer) { .dontfork = 1 };
FIXTURE_VARIANT_ADD(inherit_fails, child_past_rlimit_memlock) { .memlock = 1 };

FIXTURE_SETUP(inherit_fails)
{
	REQUIRE_MODULE();
	self->r = report_page();
	self->buf = map_buf(NULL, FRESH);
	ASSERT_NE(NULL, self->r);
	ASSERT_NE(NULL, self->buf);
	self->pins0 = pins_held();
}

FIXTURE_TEARDOWN(inherit_fails)
{
	dev_ioctl(PROFIL_IOC_OFF, NULL);
}

TEST_F_TIMEOUT(inherit_fails, child_off_reason_inherit_parent_on, 120)
{
	struct rlimit none = { 0, 0 };
	struct profil_stats st;
	pid_t pid;

	if (variant->dontfork)
		ASSERT_EQ(0, madvise(self->buf, LEN, MADV_DONTFORK));
	if (variant->memlock)
		ASSERT_EQ(0, drop_cap_ipc_lock());
	ASSERT_EQ(0, arm_buf(self->buf));
	/* Lowering the limit leaves what is charged already alone. */
	if (variant->memlock)
		ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &none));

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		spin_cpu(spin_b, SPIN / 10);
		report_stats(self->r, 0);
		self->r->v[10] = vmpin_kb();
		_exit(0);
	}
	ASSERT_EQ(0, wait_exit(pid));
	EXPECT_EQ(PROFIL_STATE_OFF, self->r->v[R_STATE]);
	EXPECT_EQ(PROFIL_STOP_INHERIT, self->r->v[R_STOP]);
	EXPECT_EQ(0, self->r->v[R_SAMPLES]);
	EXPECT_EQ(0, self->r->v[10]);

	st = get_stats();
	EXPECT_EQ(PROFIL_STATE_ON, st.state);
	spin_cpu(spin_a, SPIN / 10);
	EXPECT_LT(0, loop_bins(self->buf, spin_a));
	EXPECT_EQ(0, dev_ioctl(PROFIL_IOC_OFF, NULL));
	EXPECT_PINS(self->pins0);
}

/*
 * profil_inherit() applies to sessions armed afterwards: a running session
 * keeps what it was armed with, until profil() arms again.
 */
LIFE_TEST(profil_inherit_leaves_a_running_session_alone, 120)
{
	uint16_t *buf = map_buf(NULL, FRESH);
	struct report *r = report_page();
	pid_t pid;

	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, r);
	ASSERT_EQ(1, profil_inherit(1));
	ASSERT_EQ(0, profil(buf, LEN, text_off(), 0x10000));
	ASSERT_EQ(1, profil_inherit(0));
	for (int round = 0; round < 2; round++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			r->v[round] = get_stats().state;
			_exit(0);
		}
		ASSERT_EQ(0, wait_exit(pid));
		/* Armed again: now the setting applies. */
		ASSERT_EQ(0, profil(buf, LEN, text_off(), 0x10000));
	}
	profil_inherit(1);
	EXPECT_EQ(PROFIL_STATE_ON, r->v[0]);
	EXPECT_EQ(PROFIL_STATE_OFF, r->v[1]);
}

static int clone_vm_child(void *arg)
{
	struct report *r = arg;

	r->v[0] = get_stats().state;
	spin_cpu(spin_b, SPIN / 10);
	return 0;
}

/*
 * clone(CLONE_VM) without CLONE_THREAD or CLONE_VFORK (profil(4), CAVEATS):
 * the child shares the address space and its one session, which samples
 * only the threads of the process that armed it; the child's exit leaves
 * the session running.
 */
LIFE_TEST(clone_vm_child_shares_the_session_and_is_not_sampled, 120)
{
	uint16_t *buf = map_buf(NULL, FRESH);
	struct report *r = report_page();
	size_t stack_len = 256 * 1024;
	char *stack = mmap(NULL, stack_len, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	pid_t pid;

	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, r);
	ASSERT_NE(MAP_FAILED, stack);
	ASSERT_EQ(0, arm_buf(buf));
	pid = clone(clone_vm_child, stack + stack_len, CLONE_VM | SIGCHLD, r);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, wait_exit(pid));
	EXPECT_EQ(PROFIL_STATE_ON, r->v[0]);
	EXPECT_EQ(0, loop_bins(buf, spin_b));
	EXPECT_EQ(PROFIL_STATE_ON, get_stats().state);
	expect_counting(_metadata, buf);
	EXPECT_EQ(0, dev_ioctl(PROFIL_IOC_OFF, NULL));
}

/* ----------------------------------------------------- vfork, spawn, system */

FIXTURE(shared_mm) {
	uint16_t *buf;
	uint64_t armed;
};

FIXTURE_VARIANT(shared_mm) {
	int how;
};

enum { VIA_VFORK, VIA_SPAWN, VIA_SYSTEM, VIA_CLONE_VM };

FIXTURE_VARIANT_ADD(shared_mm, vfork_exec) { VIA_VFORK };
FIXTURE_VARIANT_ADD(shared_mm, posix_spawn) { VIA_SPAWN };
FIXTURE_VARIANT_ADD(shared_mm, system) { VIA_SYSTEM };
FIXTURE_VARIANT_ADD(shared_mm, clone_vm_vfork_exec) { VIA_CLONE_VM };

FIXTURE_SETUP(shared_mm)
{
	REQUIRE_MODULE();
	self->buf = map_buf(NULL, FRESH);
	ASSERT_NE(NULL, self->buf);
	ASSERT_EQ(0, arm_buf(self->buf));
	self->armed = get_stats().armed;
}

FIXTURE_TEARDOWN(shared_mm)
{
	dev_ioctl(PROFIL_IOC_OFF, NULL);
}

static char *const sh_exit0[] = { "sh", "-c", "exit 0", NULL };

static int exec_sh(void *arg)
{
	(void)arg;
	execv("/bin/sh", sh_exit0);
	_exit(127);
}

/* Start /bin/sh -c 'exit 0' with a child that shares our mm; its status. */
static int run_shared_mm_child(int how)
{
	static char stack[64 * 1024] __attribute__((aligned(16)));
	pid_t pid;

	switch (how) {
	case VIA_VFORK:
		pid = vfork();
		if (pid == 0)
			exec_sh(NULL);
		break;
	case VIA_SPAWN:
		if (posix_spawn(&pid, "/bin/sh", NULL, NULL, sh_exit0, environ))
			return -1;
		break;
	case VIA_SYSTEM:
		return WEXITSTATUS(system("exit 0"));
	default:
		pid = clone(exec_sh, stack + sizeof(stack),
			    CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
		break;
	}
	return pid < 0 ? -1 : wait_exit(pid);
}

TEST_F_TIMEOUT(shared_mm, child_exec_keeps_parent_session, 120)
{
	struct profil_stats st;

	spin_cpu(spin_a, SPIN / 10);
	ASSERT_EQ(0, run_shared_mm_child(variant->how));

	st = get_stats();
	EXPECT_EQ(PROFIL_STATE_ON, st.state);
	EXPECT_EQ(PROFIL_STOP_NONE, st.stop_reason);
	EXPECT_EQ(self->armed, st.armed);
	expect_counting(_metadata, self->buf);
}

/* What a vfork child got from each ioctl, written into our memory. */
static int vfork_setup, vfork_off;
static struct profil_stats vfork_st;

static int vfork_child_tries(void *buf)
{
	vfork_setup = arm_one((uint16_t *)buf + LEN / 4, LEN / 2, 0,
			      0x10000, RATE);
	vfork_off = dev_ioctl(PROFIL_IOC_OFF, NULL);
	vfork_st.size = sizeof(vfork_st);
	dev_ioctl(PROFIL_IOC_STATS, &vfork_st);
	_exit(0);
}

LIFE_TEST(vfork_child_cannot_arm_or_stop_the_parent, 120)
{
	static char stack[64 * 1024] __attribute__((aligned(16)));
	uint16_t *buf = map_buf(NULL, FRESH);
	struct profil_stats st;
	pid_t pid;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, arm_buf(buf));
	memset(&vfork_st, 0xcc, sizeof(vfork_st));
	pid = clone(vfork_child_tries, stack + sizeof(stack),
		    CLONE_VM | CLONE_VFORK | SIGCHLD, buf);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, wait_exit(pid));
	EXPECT_EQ(-EINVAL, vfork_setup);
	EXPECT_EQ(0, vfork_off);
	EXPECT_EQ(PROFIL_STATE_OFF, vfork_st.state);
	EXPECT_EQ(0, vfork_st.armed);
	EXPECT_EQ(0, vfork_st.samples);

	st = get_stats();
	EXPECT_EQ(PROFIL_STATE_ON, st.state);
	EXPECT_EQ(1, st.armed);
	expect_counting(_metadata, buf);
	EXPECT_EQ(0, dev_ioctl(PROFIL_IOC_OFF, NULL));
}

/* ------------------------------------------------------------------ exec */

static char exec_helper[4200];

/* The memfd behind the buffer of the exec tests, kept open across exec. */
static int exec_memfd = -1;

/* A buffer in a memfd that exec_helper can still read after the exec. */
static uint16_t *exec_buf(void)
{
	void *p;

	exec_memfd = memfd_create("profil-exec", 0);
	if (exec_memfd < 0 || ftruncate(exec_memfd, LEN))
		return NULL;
	p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, exec_memfd, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* Exec exec_helper (exec_helper.c, next to this program) on @buf's address. */
static void exec_the_helper(uint16_t *buf, long long pins0)
{
	char at[32], pins[32], fd[16];

	snprintf(at, sizeof(at), "%#lx", (unsigned long)buf);
	snprintf(pins, sizeof(pins), "%lld", pins0);
	snprintf(fd, sizeof(fd), "%d", exec_memfd);
	execl(exec_helper, exec_helper, at, pins, fd, (char *)NULL);
	_exit(127);
}

static volatile int exec_spin_stop;
static long long exec_pins0;

static void *exec_spinner(void *arg)
{
	(void)arg;
	spin_b(&exec_spin_stop);
	return NULL;
}

static void *exec_thread(void *buf)
{
	exec_the_helper(buf, exec_pins0);
	return NULL;
}

FIXTURE(exec) {
	long long pins0;
};

FIXTURE_VARIANT(exec) {
	int threads;	/* spinning threads; the exec comes from another */
};

FIXTURE_VARIANT_ADD(exec, single_threaded) { 0 };
FIXTURE_VARIANT_ADD(exec, from_a_thread_while_others_sampled) { 3 };

FIXTURE_SETUP(exec)
{
	ssize_t n;

	REQUIRE_MODULE();
	n = readlink("/proc/self/exe", exec_helper, sizeof(exec_helper) - 1);
	ASSERT_LT(0, n);
	exec_helper[n] = 0;
	strcpy(strrchr(exec_helper, '/'), "/exec_helper");
	if (access(exec_helper, X_OK))
		SKIP_NOW("exec_helper not installed next to the test");
	self->pins0 = pins_held();
}

FIXTURE_TEARDOWN(exec)
{
}

TEST_F_TIMEOUT(exec, new_image_runs_and_old_buffer_never_written_after_exec, 180)
{
	pthread_t t;
	uint16_t *buf;
	pid_t pid;
	int i;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		buf = exec_buf();
		if (!buf || arm_buf(buf) || !spin_cpu(spin_a, SPIN / 10) ||
		    !loop_bins(buf, spin_a))
			_exit(2);
		if (!variant->threads)
			exec_the_helper(buf, self->pins0);
		/* Threads sampled in spin_b; another thread execs. */
		exec_pins0 = self->pins0;
		for (i = 0; i < variant->threads; i++)
			pthread_create(&t, NULL, exec_spinner, NULL);
		pthread_create(&t, NULL, exec_thread, buf);
		spin_a(&exec_spin_stop);
		_exit(3);
	}
	EXPECT_EQ(0, wait_exit(pid));
	EXPECT_PINS(self->pins0);
}

/* ------------------------------------------------------------------ fault */

enum {
	OP_MUNMAP, OP_MUNMAP_PAGE, OP_MREMAP, OP_MPROTECT_RO, OP_MPROTECT_NONE,
	OP_DONTNEED, OP_MPROTECT_RWX, OP_FORK,
};

FIXTURE(fault) {
	uint16_t *buf;
	long long pins0;
	long lck0;
};

FIXTURE_VARIANT(fault) {
	int op;
	int ends;	/* the session must end */
};

FIXTURE_VARIANT_ADD(fault, munmap_whole_buffer) { OP_MUNMAP, 1 };
FIXTURE_VARIANT_ADD(fault, munmap_one_page) { OP_MUNMAP_PAGE, 1 };
FIXTURE_VARIANT_ADD(fault, mremap_moves_it) { OP_MREMAP, 1 };
FIXTURE_VARIANT_ADD(fault, mprotect_read_only) { OP_MPROTECT_RO, 1 };
FIXTURE_VARIANT_ADD(fault, mprotect_none) { OP_MPROTECT_NONE, 1 };
FIXTURE_VARIANT_ADD(fault, madvise_dontneed) { OP_DONTNEED, 1 };
/* Not faults: the pages stay mapped writable. */
FIXTURE_VARIANT_ADD(fault, mprotect_rwx_keeps_session) { OP_MPROTECT_RWX, 0 };
FIXTURE_VARIANT_ADD(fault, fork_cow_protect_keeps_session) { OP_FORK, 0 };

FIXTURE_SETUP(fault)
{
	REQUIRE_MODULE();
	self->pins0 = pins_held();
	self->lck0 = vmpin_kb();
	/* Two buffers' worth: the second page pair is mremap's target. */
	self->buf = mmap(NULL, 2 * LEN, PROT_READ | PROT_WRITE, FRESH, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	ASSERT_EQ(0, munmap((char *)self->buf + LEN, LEN));
}

FIXTURE_TEARDOWN(fault)
{
	dev_ioctl(PROFIL_IOC_OFF, NULL);
}

/* Fork a child that exits at once (it inherits first); 1 when it did. */
static int fork_and_wait(struct __test_metadata *_metadata)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	EXPECT_EQ(0, wait_exit(pid));
	return pid > 0;
}

/*
 * Apply the variant's operation to the running buffer; return where its
 * old bins can still be read (or NULL), and leave fresh zeroed memory at
 * any part of the old address that lost its pages.
 */
static uint16_t *fault_op(struct __test_metadata *_metadata, uint16_t *buf,
			  int op)
{
	char *b = (char *)buf;
	void *p;

	switch (op) {
	case OP_MUNMAP:
		EXPECT_EQ(0, munmap(b, LEN));
		EXPECT_EQ(buf, map_buf(b, FRESH | MAP_FIXED_NOREPLACE));
		return NULL;
	case OP_MUNMAP_PAGE:
		EXPECT_EQ(0, munmap(b + PAGE, PAGE));
		p = mmap(b + PAGE, PAGE, PROT_READ | PROT_WRITE,
			 FRESH | MAP_FIXED_NOREPLACE, -1, 0);
		EXPECT_EQ(b + PAGE, p);
		return buf;	/* page 0 is still the buffer's */
	case OP_MREMAP:
		p = mremap(b, LEN, LEN, MREMAP_MAYMOVE | MREMAP_FIXED,
			   b + LEN);
		EXPECT_EQ(b + LEN, p);
		EXPECT_EQ(buf, map_buf(b, FRESH | MAP_FIXED_NOREPLACE));
		return p;
	case OP_MPROTECT_RO:
		EXPECT_EQ(0, mprotect(b, LEN, PROT_READ));
		return buf;
	case OP_MPROTECT_NONE:
		EXPECT_EQ(0, mprotect(b, LEN, PROT_NONE));
		return NULL;
	case OP_DONTNEED:
		EXPECT_EQ(0, madvise(b, LEN, MADV_DONTNEED));
		return NULL;
	case OP_MPROTECT_RWX:
		EXPECT_EQ(0, mprotect(b, LEN, PROT_READ | PROT_WRITE |
				      PROT_EXEC));
		return buf;
	default:
		return fork_and_wait(_metadata) ? buf : NULL;
	}
}

TEST_F_TIMEOUT(fault, buffer_taken_away_ends_session_nothing_written, 180)
{
	static uint16_t snap[LEN / 2];
	struct profil_stats st, st2;
	uint16_t *old, *fresh;
	uint64_t a0;

	ASSERT_EQ(0, arm_buf(self->buf));
	spin_cpu(spin_a, SPIN / 10);
	a0 = loop_bins(self->buf, spin_a);
	ASSERT_LT(0, a0);

	old = fault_op(_metadata, self->buf, variant->op);
	if (old)
		memcpy(snap, old, variant->op == OP_MUNMAP_PAGE ? PAGE : LEN);
	st = get_stats();

	if (!variant->ends) {
		EXPECT_EQ(PROFIL_STATE_ON, st.state);
		EXPECT_EQ(PROFIL_STOP_NONE, st.stop_reason);
		expect_counting(_metadata, self->buf);
		return;
	}
	EXPECT_EQ(PROFIL_STATE_OFF, st.state);
	EXPECT_EQ(PROFIL_STOP_FAULT, st.stop_reason);
	EXPECT_PINS(self->pins0);
	EXPECT_EQ(self->lck0, vmpin_kb());

	/* Nothing is counted anywhere from now on. */
	spin_cpu(spin_a, SPIN / 3);
	st2 = get_stats();
	EXPECT_EQ(st.samples, st2.samples);
	EXPECT_EQ(st.out_of_range, st2.out_of_range);
	if (old)
		EXPECT_EQ(0, memcmp(snap, old,
				    variant->op == OP_MUNMAP_PAGE ? PAGE : LEN));
	if (variant->op == OP_MUNMAP || variant->op == OP_MREMAP ||
	    variant->op == OP_DONTNEED)
		EXPECT_TRUE(all_zero(self->buf, LEN));
	if (variant->op == OP_MUNMAP_PAGE)
		EXPECT_TRUE(all_zero((char *)self->buf + PAGE, PAGE));

	/* And profil can be armed again. */
	fresh = map_buf(NULL, FRESH);
	ASSERT_NE(NULL, fresh);
	ASSERT_EQ(0, arm_buf(fresh));
	expect_counting(_metadata, fresh);
	EXPECT_EQ(PROFIL_STATE_ON, get_stats().state);
}

/* ------------------------------------------------------------------ exit */

/* CPU time the short spinners spun, and that capped at what they asked */
static uint64_t short_spin_ns, short_asked_ns;

static void *short_spinner(void *arg)
{
	uint64_t ns = spin_cpu(spin_b, SPIN / 40);

	(void)arg;
	__atomic_add_fetch(&short_spin_ns, ns, __ATOMIC_RELAXED);
	__atomic_add_fetch(&short_asked_ns, cpu_asked(ns, SPIN / 40),
			   __ATOMIC_RELAXED);
	return NULL;
}

/*
 * Forks while the parent's buffer is being settled: MADV_FREE invalidates
 * its pages and leaves them in place, and the fork comes before the settle
 * thread, or after it.  Every child is taken over all the same (once its
 * parent is settled), none is left without a session or a reason.
 */
LIFE_TEST(forks_while_the_buffer_is_settled_are_taken_over, 120)
{
	uint16_t *buf = map_buf(NULL, FRESH);
	int i, on = 0;
	pid_t pid;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, arm_buf(buf));
	for (i = 0; i < 20; i++) {
		ASSERT_EQ(0, madvise(buf, LEN, MADV_FREE));
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			struct profil_stats st = get_stats();

			_exit(st.state == PROFIL_STATE_ON ? 0 :
			      100 + st.stop_reason);
		}
		if (!wait_exit(pid))
			on++;
		else
			TH_LOG("fork %d: the child was not taken over", i);
	}
	EXPECT_EQ(20, on);
	EXPECT_EQ(PROFIL_STATE_ON, get_stats().state);
}

LIFE_TEST(threads_exit_while_sampled_session_runs_on, 180)
{
	uint16_t *buf = map_buf(NULL, FRESH);
	long long pins0 = pins_held();
	double want;
	pthread_t t[8];
	int round, i;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, arm_buf(buf));
	for (round = 0; round < 4; round++) {
		for (i = 0; i < 8; i++)
			ASSERT_EQ(0, pthread_create(&t[i], NULL, short_spinner,
						    NULL));
		for (i = 0; i < 8; i++)
			pthread_join(t[i], NULL);
	}
	EXPECT_EQ(PROFIL_STATE_ON, get_stats().state);
	/*
	 * 32 threads came and went, each sampled in spin_b for the CPU time
	 * it spun there, give or take the part of a period at either end.
	 */
	want = expected(short_spin_ns, RATE);
	TH_LOG("%llu samples in spin_b for %.0f expected",
	       (unsigned long long)loop_bins(buf, spin_b), want);
	EXPECT_LE(expected(short_asked_ns, RATE) * 0.9 - 32,
		  loop_bins(buf, spin_b));
	EXPECT_GE(want * 1.05 + 32, loop_bins(buf, spin_b));
	EXPECT_EQ(0, dev_ioctl(PROFIL_IOC_OFF, NULL));
	EXPECT_PINS(pins0);
}

static void *last_thread(void *arg)
{
	(void)arg;
	spin_cpu(spin_b, SPIN / 10);
	return NULL;
}

LIFE_TEST(last_thread_exiting_releases_everything, 120)
{
	long long pins0 = pins_held();
	pthread_t t;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		uint16_t *buf = map_buf(NULL, FRESH);

		if (!buf || arm_buf(buf) ||
		    pthread_create(&t, NULL, last_thread, NULL))
			_exit(2);
		/* The main thread goes first (exit, not exit_group). */
		syscall(SYS_exit, 0);
	}
	EXPECT_EQ(0, wait_exit(pid));
	EXPECT_PINS(pins0);
}

LIFE_TEST(sigkill_mid_sample_releases_everything, 120)
{
	long long pins0 = pins_held();
	struct timespec ts;
	clockid_t clk;
	int p[2];
	pid_t pid;
	char c;

	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		uint16_t *buf = map_buf(NULL, FRESH);
		volatile int never = 0;

		close(p[0]);
		if (!buf || arm_one(buf, LEN, text_off(), 0x10000, 10000))
			_exit(2);
		(void)!write(p[1], "x", 1);
		spin_a(&never);
		_exit(3);
	}
	close(p[1]);	/* a child that fails to arm gives EOF at once */
	ASSERT_EQ(1, read(p[0], &c, 1));
	/* Let it run 50 ms of its CPU time, sampled at 10 kHz. */
	ASSERT_EQ(0, clock_getcpuclockid(pid, &clk));
	do {
		sched_yield();
		ASSERT_EQ(0, clock_gettime(clk, &ts));
	} while (ts.tv_sec == 0 && ts.tv_nsec < 50000000);
	kill(pid, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, wait_exit(pid));
	EXPECT_PINS(pins0);
}

/* ---------------------------------------------------------------- module */

LIFE_TEST(rmmod_refused_while_several_processes_profile_then_clean, 180)
{
	const char *ko = getenv("PROFIL_KO");
	long long pins0 = pins_held();
	uint16_t *buf;
	int p[2], fd, i;
	char c[4];
	pid_t pid;

	if (geteuid() != 0 || !ko)
		SKIP(return, "needs root and PROFIL_KO");
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* A process group of four sessions: one armed, three forked. */
		setpgid(0, 0);
		close(p[0]);
		buf = map_buf(NULL, FRESH);
		if (!buf || arm_buf(buf))
			_exit(2);
		fork();
		fork();
		/* Each of the four says whether it has a session: no wait. */
		(void)!write(p[1], get_stats().state == PROFIL_STATE_ON ?
			     "x" : "n", 1);
		for (;;)
			pause();
	}
	close(p[1]);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(1, read(p[0], c, 1)) {
			kill(-pid, SIGKILL);
		}
		EXPECT_EQ('x', c[0]);
	}
	errno = 0;
	EXPECT_EQ(-1, syscall(SYS_delete_module, "profil", O_NONBLOCK));
	EXPECT_EQ(EWOULDBLOCK, errno);
	EXPECT_TRUE(module_loaded());

	kill(-pid, SIGKILL);
	while (wait(NULL) > 0)
		;
	EXPECT_PINS(pins0);
	ASSERT_EQ(0, syscall(SYS_delete_module, "profil", O_NONBLOCK));
	EXPECT_FALSE(module_loaded());

	fd = open(ko, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, syscall(SYS_finit_module, fd, "", 0));
	close(fd);
	ASSERT_TRUE(module_loaded());
	buf = map_buf(NULL, FRESH);
	EXPECT_EQ(0, arm_buf(buf));
	EXPECT_EQ(0, dev_ioctl(PROFIL_IOC_OFF, NULL));
}

/* ----------------------------------------------------------------- churn */

#define CHURN_PROCS	240	/* top-level processes; children come on top */
#define CHURN_MAX	4000	/* PROFIL_CHURN (make check-debug) up to this */
#define CHURN_PARALLEL	6
#define CHURN_CPU	(5 * 1000000ULL)

static void *churn_thread(void *arg)
{
	(void)arg;
	spin_cpu(spin_b, CHURN_CPU);
	return NULL;
}

static void churn_threads(int n, int join)
{
	pthread_t t[4];
	int i;

	for (i = 0; i < n; i++)
		pthread_create(&t[i], NULL, churn_thread, NULL);
	for (i = 0; join && i < n; i++)
		pthread_join(t[i], NULL);
}

/* One churn process, kind @i % 7; 0 when everything it saw was right. */
static int churn_one(int i)
{
	uint16_t *buf = map_buf(NULL, FRESH);
	struct profil_stats st;
	pid_t pid;

	if (!buf || arm_buf(buf))
		return 10;
	spin_cpu(spin_a, CHURN_CPU);
	switch (i % 7) {
	case 0:		/* threads come and go, then off */
		churn_threads(3, 1);
		break;
	case 1:		/* a child inherits, runs, exits */
		pid = fork();
		if (pid == 0) {
			churn_threads(2, 1);
			_exit(get_stats().state == PROFIL_STATE_ON ? 0 : 11);
		}
		if (wait_exit(pid))
			return 12;
		break;
	case 2:		/* exec */
		execv("/bin/sh", sh_exit0);
		return 13;
	case 3:		/* the buffer goes away mid-run */
		churn_threads(2, 0);
		munmap(buf, LEN);
		st = get_stats();
		if (st.state != PROFIL_STATE_OFF ||
		    st.stop_reason != PROFIL_STOP_FAULT || vmpin_kb() != 0)
			return 14;
		return 0;
	case 4:		/* exit with threads still running */
		churn_threads(3, 0);
		spin_cpu(spin_a, CHURN_CPU);
		exit(0);
	case 5:		/* orphan a child that is still taking over */
		if (fork() == 0) {
			churn_threads(1, 1);
			_exit(0);
		}
		return 0;
	default:	/* vfork + exec, then off */
		pid = vfork();
		if (pid == 0) {
			execv("/bin/sh", sh_exit0);
			_exit(127);
		}
		if (wait_exit(pid) || get_stats().state != PROFIL_STATE_ON)
			return 15;
		break;
	}
	if (dev_ioctl(PROFIL_IOC_OFF, NULL) || vmpin_kb() != 0)
		return 16;
	return 0;
}

/* Was @status a clean end for churn process @i (or its orphan, i < 0)? */
static int churn_ok(struct __test_metadata *_metadata, int i, int status)
{
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return 1;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && i >= 0 &&
	    i % 11 == 10)
		return 1;
	TH_LOG("churn process %d (kind %d): status %#x", i, i < 0 ? -1 : i % 7,
	       status);
	return 0;
}

/*
 * As root, every 100 processes: rmmod must be refused while sessions live
 * (this process holds one, so there always is).
 */
static int churn_rmmod_refused(int started)
{
	if (geteuid() || started % 100)
		return 1;
	if (!syscall(SYS_delete_module, "profil", O_NONBLOCK))
		return 0;
	return errno == EWOULDBLOCK || errno == EBUSY;
}

LIFE_TEST(churn_hundreds_of_processes_leave_no_pin, 1800)
{
	static pid_t pids[CHURN_MAX];
	static uint16_t own[64];
	const char *env = getenv("PROFIL_CHURN");
	int procs = env ? atoi(env) : CHURN_PROCS;
	long long pins0 = pins_held();
	int started = 0, running = 0, reaped = 0, bad = 0, status, i;
	pid_t pid;

	if (procs < 1 || procs > CHURN_MAX)
		procs = CHURN_PROCS;
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
	/* A session of our own, not inherited by the churn. */
	struct profil_region r = { .buf = (uintptr_t)own, .bufsize = sizeof(own),
				   .offset = (uintptr_t)spin_b, .scale = 0x10000 };
	struct profil_setup s = { .size = sizeof(s), .flags = PROFIL_F_NOINHERIT,
				  .rate = RATE, .nr_regions = 1,
				  .region_size = sizeof(r), .regions = (uintptr_t)&r };

	ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_SETUP, &s));
	while (started < procs || running) {
		if (started < procs && running < CHURN_PARALLEL) {
			EXPECT_TRUE(churn_rmmod_refused(started));
			pid = fork();
			ASSERT_LE(0, pid);
			if (pid == 0)
				_exit(churn_one(started));
			/* Every 11th is killed at once, wherever it is. */
			if (started % 11 == 10)
				kill(pid, SIGKILL);
			pids[started++] = pid;
			running++;
			continue;
		}
		pid = wait(&status);
		ASSERT_LT(0, pid);
		for (i = 0; i < started && pids[i] != pid; i++)
			;
		if (i == started) {
			i = -1;		/* an orphan reparented to us */
		} else {
			running--;
			reaped++;
		}
		bad += !churn_ok(_metadata, i, status);
	}
	while (wait(&status) > 0)
		bad += !churn_ok(_metadata, -1, status);
	TH_LOG("%d processes reaped, %d not clean", reaped, bad);
	EXPECT_EQ(procs, reaped);
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, dev_ioctl(PROFIL_IOC_OFF, NULL));
	EXPECT_PINS(pins0);
	EXPECT_EQ(0, vmpin_kb());
}

/*
 * pcsample is not inherited: with the array in MAP_SHARED memory, parent
 * and child both spinning, the PCs stored are exactly the parent's
 * samples, and the child's session says PROFIL_STOP_INHERIT.
 */
LIFE_TEST(pcsample_array_is_not_inherited_by_a_forked_child, 120)
{
	const size_t n = 4096;
	struct profil_region r;
	struct profil_setup s;
	struct profil_stats st;
	uint64_t *pcs, stored = 0;
	int status;
	pid_t pid;

	pcs = mmap(NULL, n * 8, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, pcs);
	r = (struct profil_region){ .buf = (uintptr_t)pcs, .bufsize = n * 8 };
	s = (struct profil_setup){
		.size = sizeof(s), .mode = PROFIL_MODE_PCSAMPLE, .rate = RATE,
		.nr_regions = 1, .region_size = sizeof(r),
		.regions = (uintptr_t)&r,
	};
	ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_SETUP, &s));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		spin_cpu(spin_b, 50 * 1000000ULL);
		st = get_stats();
		_exit(st.state == PROFIL_STATE_OFF &&
		      st.stop_reason == PROFIL_STOP_INHERIT && !st.samples ?
		      0 : 1);
	}
	spin_cpu(spin_a, 50 * 1000000ULL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_OFF, NULL));
	st = get_stats();
	for (size_t i = 0; i < n; i++)
		stored += pcs[i] != 0;
	EXPECT_LT(0, st.samples);
	EXPECT_EQ(st.samples, stored);
	munmap(pcs, n * 8);
}

TEST_HARNESS_MAIN
