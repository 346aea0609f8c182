// SPDX-License-Identifier: GPL-2.0
/*
 * libprofil's promises: profil() turns a session off through the fd it was
 * armed with when /dev/profil cannot be opened any more (fd limit, chroot),
 * and never says "off" while the kernel still samples; it may be called
 * from several threads and from signal handlers at once.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "common.h"
#include "kselftest_harness.h"

#define LEN	4096

FIXTURE(lib) {
	uint16_t *buf;
	int fd;		/* the test's own /dev/profil, for STATS */
};

FIXTURE_SETUP(lib)
{
	REQUIRE_MODULE();
	self->buf = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	self->fd = open("/dev/profil", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(lib)
{
	profil(NULL, 0, 0, 0);
}

static int state(int fd)
{
	struct profil_stats st = { .size = sizeof(st) };

	return ioctl(fd, PROFIL_IOC_STATS, &st) ? -1 : (int)st.state;
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* No fd left to open /dev/profil with: off goes through the kept one. */
TEST_F(lib, off_at_the_fd_limit_uses_the_fd_it_armed_with)
{
	struct rlimit rl;
	int i, n;

	ASSERT_EQ(0, profil(self->buf, LEN, 0, 2));
	ASSERT_EQ(PROFIL_STATE_ON, state(self->fd));
	/* Use up every fd below the limit. */
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &rl));
	rl.rlim_cur = 64;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	for (i = 0; i < 64; i++)
		if (open("/dev/null", O_RDONLY) < 0)
			break;
	ASSERT_EQ(-1, open("/dev/profil", O_RDWR));
	ASSERT_EQ(EMFILE, errno);

	EXPECT_EQ(0, profil(NULL, 0, 0, 0));
	EXPECT_EQ(PROFIL_STATE_OFF, state(self->fd));
	/* And it arms again, through the same fd. */
	n = open_fds();
	EXPECT_EQ(0, profil(self->buf, LEN, 0, 2));
	EXPECT_EQ(PROFIL_STATE_ON, state(self->fd));
	EXPECT_EQ(n, open_fds());
}

/* In a chroot /dev/profil is not there: ENOSYS would be a lie. */
TEST_F(lib, off_in_a_chroot_without_the_device_turns_it_off)
{
	char dir[] = "/tmp/profil-chroot-XXXXXX";

	if (geteuid() != 0)
		SKIP(return, "chroot needs root");
	ASSERT_NE(NULL, mkdtemp(dir));
	ASSERT_EQ(0, profil(self->buf, LEN, 0, 2));
	ASSERT_EQ(0, chroot(dir));
	ASSERT_EQ(0, chdir("/"));
	ASSERT_NE(0, access("/dev/profil", F_OK));
	EXPECT_EQ(0, profil(NULL, 0, 0, 0));
	EXPECT_EQ(PROFIL_STATE_OFF, state(self->fd));
}

/*
 * The kept fd is checked before use: a program that closes it and opens
 * something else on the same number gets a fresh /dev/profil, and the
 * other file is not sent profil's ioctls.
 */
TEST_F(lib, kept_fd_closed_and_reused_by_the_program)
{
	struct stat st;
	int fd, n0;

	n0 = open_fds();
	ASSERT_EQ(0, profil(self->buf, LEN, 0, 2));
	ASSERT_EQ(n0 + 1, open_fds());
	/* Find the kept fd: the /dev/profil that is not self->fd. */
	for (fd = 3; fd < 64; fd++) {
		char path[64], link[64] = "";

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if (fd != self->fd &&
		    readlink(path, link, sizeof(link) - 1) > 0 &&
		    !strcmp(link, "/dev/profil"))
			break;
	}
	ASSERT_GT(64, fd);
	close(fd);
	ASSERT_EQ(fd, open("/dev/null", O_RDONLY));
	EXPECT_EQ(0, profil(NULL, 0, 0, 0));
	EXPECT_EQ(PROFIL_STATE_OFF, state(self->fd));
	EXPECT_EQ(0, fstat(fd, &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode) && major(st.st_rdev) == 1);
}

static uint16_t *sig_buf;
static volatile int sig_calls, sig_bad;

/* A CPU-time timer's handler arms and turns off, as a program's might. */
static void on_sigprof(int sig)
{
	int err = errno;

	(void)sig;
	if (profil(sig_buf, LEN, 0, (sig_calls & 1) ? 0 : 2))
		sig_bad++;
	sig_calls++;
	errno = err;
}

/* Rounds of arm and off per thread: fewer under the debug kernel. */
static int arm_rounds = 200;

static void *arm_loop(void *arg)
{
	uint16_t *buf = arg;
	long bad = 0;

	for (int i = 0; i < arm_rounds; i++) {
		bad += profil(buf, LEN, 0, 2) != 0;
		bad += profil(NULL, 0, 0, 0) != 0;
	}
	return (void *)bad;
}

/*
 * SIGPROF every 2 ms of the process's CPU time, five threads running: the
 * handler's own SETUP must cost less than that, or the program does
 * nothing but handle signals.  Under the debug kernel it does not: the
 * test ran out of its 180 s in CI at 2 ms, and again at 10 ms, where a
 * local run took 4 s for a quarter of the rounds, with the handler called
 * 160 times a second, near the most the interval allows (threads
 * that wait for the session's lock may spin, and that CPU time brings the
 * next signal nearer).  So 40 ms there, and 250 SETUPs and OFFs in all,
 * not 1000: the same races, in a fortieth of the time allowed here.
 */
TEST_F_TIMEOUT(lib, from_threads_and_a_signal_handler_at_once, 180)
{
	long us = debug_kernel() ? 40000 : 2000;
	struct timespec t0, t1;
	struct itimerval it = { { 0, us }, { 0, us } };
	struct sigaction sa = { .sa_handler = on_sigprof };
	pthread_t t[4];
	void *bad;
	int n0, i;

	sig_buf = self->buf;
	if (debug_kernel())
		arm_rounds = 50;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* The session exists before any signal: its creation may be EINTR. */
	ASSERT_EQ(0, profil(self->buf, LEN, 0, 2));
	ASSERT_EQ(0, profil(NULL, 0, 0, 0));
	n0 = open_fds();
	ASSERT_EQ(0, sigaction(SIGPROF, &sa, NULL));
	ASSERT_EQ(0, setitimer(ITIMER_PROF, &it, NULL));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, arm_loop,
					    mmap(NULL, LEN, PROT_READ | PROT_WRITE,
						 MAP_PRIVATE | MAP_ANONYMOUS,
						 -1, 0)));
	arm_loop(self->buf);
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], &bad);
		EXPECT_EQ(0, (long)bad);
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_PROF, &it, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	TH_LOG("%d calls from the handler, %d rounds a thread in %.1f s",
	       sig_calls, arm_rounds,
	       t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	EXPECT_LT(0, sig_calls);
	EXPECT_EQ(0, sig_bad);
	EXPECT_EQ(0, profil(NULL, 0, 0, 0));
	EXPECT_EQ(PROFIL_STATE_OFF, state(self->fd));
	/* One fd kept at most, whatever the races. */
	EXPECT_EQ(n0, open_fds());
}

TEST_HARNESS_MAIN
