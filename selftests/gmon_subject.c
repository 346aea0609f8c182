// SPDX-License-Identifier: GPL-2.0
/*
 * The -pg program gmon_test runs: built with gcc -pg against libprofil
 * (dynamic PIE, static, non-PIE, -mfentry) and against glibc alone (for
 * LD_PRELOAD), and without -pg as gmon_monitor (monitor()).
 *
 *	gmon_subject MODE [ARG]
 *
 * Every mode first makes the same calls: f1 2000 times, f2 1000 times and
 * f3 once, all from main.  Then:
 *	calls		exit(0)
 *	_exit, abort, segv
 *			end that way
 *	kill		print "ready", wait to be killed
 *	threads		four threads, each calling g 1,000,000 times
 *	threads-cpus	the same, thread i on CPU i modulo the CPUs online;
 *			prints "cpus N"
 *	spin		hot() for 0.6 s of CPU, cold() for 0.2 s; prints the
 *			CPU nanoseconds each took: "hot NS cold NS"
 *	fork		forks; the child spins in child_hot(), the parent in
 *			hot(), 0.3 s each; prints the child's pid
 *	exec		calls f1 10 times more, then execs itself with "calls"
 *	spawn		forks a child that spins in child_hot() for 0.05 s,
 *			prints its stats and execs a shell; waits for it and
 *			prints its pid
 *	vfork		a vfork() child whose exec fails calls exit(0); then
 *			the parent calls f2 500 times more and hot() for
 *			0.3 s; prints the child's pid
 *	moncontrol	moncontrol(0), f1 100 times and hot() for 0.2 s,
 *			moncontrol(1), f2 50 times
 *	twice		__monstartup() and _mcleanup() called twice
 *	many		calls fa..fh once each (for a full arc table)
 *	sigprof		checks that no SIGPROF handler or ITIMER_PROF is set,
 *			then uses both itself: exits 3 if something is wrong
 *	monitor		(gmon_monitor) monitor() over the text, hot() for
 *			0.3 s, monitor(NULL)
 *	monitor-wide	(gmon_monitor) the same over 64 MiB from the text's
 *			start, with room for 100 arcs
 *	monitor-fork	monitor-wide, but hot() for 0.1 s first, then a
 *			forked child spins in child_hot() for 0.1 s, prints
 *			its stats and calls monitor(NULL); waited for, its
 *			pid printed, and hot() for 0.2 s more
 *	monitor-fork-exec  monitor-fork, but the child prints its stats and
 *			execs sh -c 'exit 0'
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <linux/profil.h>

void __monstartup(unsigned long lowpc, unsigned long highpc);
void _mcleanup(void);
void moncontrol(int mode);
/* Weak: glibc has no monitor(), and gmon_subject_glibc links to it alone. */
void monitor(int (*lowpc)(void), int (*highpc)(void), unsigned short *buffer,
	     size_t bufsize, size_t nfunc) __attribute__((weak));
extern char __executable_start[], etext[];

#define NOINLINE __attribute__((noinline, noclone))

static volatile unsigned long sink;
static int *volatile nowhere;	/* NULL: for a real SIGSEGV */

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

NOINLINE void f1(void) { sink++; }
NOINLINE void f2(void) { sink += 2; }
NOINLINE void f3(void) { sink += 3; }
NOINLINE void g(void) { sink++; }
NOINLINE void fa(void) { sink++; }
NOINLINE void fb(void) { sink++; }
NOINLINE void fc(void) { sink++; }
NOINLINE void fd(void) { sink++; }
NOINLINE void fe(void) { sink++; }
NOINLINE void ff(void) { sink++; }
NOINLINE void fg(void) { sink++; }
NOINLINE void fh(void) { sink++; }

/*
 * Spin for @ns of this thread's CPU time; returns what it took.  Inlined
 * into each caller, so that the time is that caller's own, and with few
 * clock reads (the vDSO lies outside the profiled text).
 */
static inline __attribute__((always_inline)) uint64_t spin_for(uint64_t ns)
{
	uint64_t t0 = cpu_ns(), t;

	do {
		for (int i = 0; i < 1000000; i++)
			sink += i;
		t = cpu_ns();
	} while (t - t0 < ns);
	return t - t0;
}

NOINLINE uint64_t hot(uint64_t ns) { return spin_for(ns); }
NOINLINE uint64_t cold(uint64_t ns) { return spin_for(ns); }
NOINLINE uint64_t child_hot(uint64_t ns) { return spin_for(ns); }

NOINLINE void *thread_fn(void *arg)
{
	for (int i = 0; i < 1000000; i++)
		g();
	return arg;
}

static int threads(int spread)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	pthread_attr_t attr;
	pthread_t t[4];
	cpu_set_t set;

	if (spread)
		printf("cpus %ld\n", ncpu);
	for (int i = 0; i < 4; i++) {
		if (pthread_attr_init(&attr))
			return 2;
		CPU_ZERO(&set);
		CPU_SET(i % ncpu, &set);
		if (spread &&
		    pthread_attr_setaffinity_np(&attr, sizeof(set), &set))
			return 2;
		if (pthread_create(&t[i], &attr, thread_fn, NULL))
			return 2;
		pthread_attr_destroy(&attr);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return 0;
}

static volatile sig_atomic_t sigprofs;

static void on_sigprof(int sig)
{
	(void)sig;
	sigprofs++;
}

/* No SIGPROF handler, no ITIMER_PROF of the runtime's; ours work. */
static int sigprof(void)
{
	struct itimerval it = { .it_value.tv_usec = 10000,
				.it_interval.tv_usec = 10000 };
	struct sigaction sa;

	if (sigaction(SIGPROF, NULL, &sa) || sa.sa_handler != SIG_DFL)
		return 3;
	if (getitimer(ITIMER_PROF, &it) == 0 &&
	    (it.it_value.tv_sec || it.it_value.tv_usec))
		return 3;
	it.it_value.tv_usec = it.it_interval.tv_usec = 10000;
	signal(SIGPROF, on_sigprof);
	if (setitimer(ITIMER_PROF, &it, NULL))
		return 3;
	hot(200000000ULL);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_PROF, &it, NULL);
	return sigprofs >= 5 ? 0 : 3;
}

/* The session's counters, for the test's log. */
static struct profil_stats get_stats(void)
{
	struct profil_stats st = { .size = sizeof(st) };
	int fd = open("/dev/profil", O_RDWR | O_CLOEXEC);

	if (fd < 0 || ioctl(fd, PROFIL_IOC_STATS, &st))
		st.size = 0;
	if (fd >= 0)
		close(fd);
	return st;
}

static void print_stats(void)
{
	struct profil_stats st = get_stats();

	if (!st.size)
		return;
	printf("stats: state %u samples %llu ticks %llu out_of_range %llu missed %llu paused %llu stop %u inherit_error %d written %llu\n",
	       st.state, (unsigned long long)st.samples,
	       (unsigned long long)st.ticks,
	       (unsigned long long)st.out_of_range,
	       (unsigned long long)st.missed, (unsigned long long)st.paused,
	       st.stop_reason, st.inherit_error,
	       (unsigned long long)st.written);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "calls";
	uint64_t h, c;
	int status;
	pid_t pid;

	if (!strncmp(mode, "monitor-", 8)) {
		monitor((int (*)(void))__executable_start,
			(int (*)(void))(__executable_start + (64 << 20)),
			NULL, 0, 100);
		if (!strncmp(mode, "monitor-fork", 12)) {
			hot(100000000ULL);
			fflush(stdout);
			pid = fork();
			if (pid < 0)
				return 2;
			if (!pid && mode[12]) {
				print_stats();
				fflush(stdout);
				execl("/bin/sh", "sh", "-c", "exit 0",
				      (char *)NULL);
				_exit(127);
			}
			if (!pid) {
				child_hot(100000000ULL);
				print_stats();
				fflush(stdout);
				monitor(NULL, NULL, NULL, 0, 0);
				_exit(0);
			}
			if (waitpid(pid, &status, 0) != pid || status)
				return 2;
			printf("child %d\n", (int)pid);
		}
		hot(!strcmp(mode, "monitor-wide") ? 300000000ULL :
						     200000000ULL);
		monitor(NULL, NULL, NULL, 0, 0);
		return 0;
	}
	if (!strcmp(mode, "monitor")) {
		monitor((int (*)(void))__executable_start,
			(int (*)(void))etext, NULL, 0, 0);
		hot(300000000ULL);
		monitor(NULL, NULL, NULL, 0, 0);
		return 0;
	}
	for (int i = 0; i < 2000; i++)
		f1();
	for (int i = 0; i < 1000; i++)
		f2();
	f3();

	if (!strcmp(mode, "calls"))
		exit(0);
	if (!strcmp(mode, "_exit"))
		_exit(0);
	if (!strcmp(mode, "abort"))
		abort();
	if (!strcmp(mode, "segv"))
		*nowhere = 1;
	if (!strcmp(mode, "kill")) {
		printf("ready\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	if (!strcmp(mode, "threads") || !strcmp(mode, "threads-cpus"))
		return threads(mode[7] == '-');
	if (!strcmp(mode, "spin")) {
		struct profil_stats st[3];

		st[0] = get_stats();
		h = hot(600000000ULL);
		st[1] = get_stats();
		c = cold(200000000ULL);
		st[2] = get_stats();
		printf("hot %llu cold %llu\n", (unsigned long long)h,
		       (unsigned long long)c);
		/* What the kernel counted while each ran, for the test's log. */
		printf("kernel: %llu samples in %llu ticks while hot ran, %llu in %llu while cold ran; ",
		       (unsigned long long)(st[1].samples - st[0].samples),
		       (unsigned long long)(st[1].ticks - st[0].ticks),
		       (unsigned long long)(st[2].samples - st[1].samples),
		       (unsigned long long)(st[2].ticks - st[1].ticks));
		print_stats();
		return 0;
	}
	if (!strcmp(mode, "fork")) {
		fflush(stdout);
		pid = fork();
		if (pid < 0)
			return 2;
		if (!pid) {
			child_hot(300000000ULL);
			return 0;
		}
		printf("child %d\n", (int)pid);
		hot(300000000ULL);
		return 0;
	}
	if (!strcmp(mode, "spawn")) {
		fflush(stdout);
		pid = fork();
		if (pid < 0)
			return 2;
		if (!pid) {
			child_hot(50000000ULL);
			print_stats();	/* STATS waits for the take-over */
			fflush(stdout);
			execl("/bin/sh", "sh", "-c", "exit 0", (char *)NULL);
			_exit(2);
		}
		if (waitpid(pid, &status, 0) != pid || status)
			return 2;
		printf("child %d\n", (int)pid);
		return 0;
	}
	if (!strcmp(mode, "exec")) {
		for (int i = 0; i < 10; i++)
			f1();
		execl("/proc/self/exe", argv[0], "calls", (char *)NULL);
		return 2;
	}
	if (!strcmp(mode, "vfork")) {
		fflush(stdout);
		pid = vfork();
		if (pid < 0)
			return 2;
		if (!pid) {
			execl("/nonexistent/gmon_subject", "x", (char *)NULL);
			exit(0);	/* atexit's _mcleanup, in our memory */
		}
		printf("child %d\n", (int)pid);
		for (int i = 0; i < 500; i++)
			f2();
		hot(300000000ULL);
		return 0;
	}
	if (!strcmp(mode, "moncontrol")) {
		moncontrol(0);
		for (int i = 0; i < 100; i++)
			f1();
		hot(200000000ULL);
		moncontrol(1);
		for (int i = 0; i < 50; i++)
			f2();
		return 0;
	}
	if (!strcmp(mode, "twice")) {
		__monstartup((unsigned long)__executable_start,
			     (unsigned long)etext);
		_mcleanup();
		_mcleanup();
		return 0;
	}
	if (!strcmp(mode, "many")) {
		fa(); fb(); fc(); fd(); fe(); ff(); fg(); fh();
		return 0;
	}
	if (!strcmp(mode, "sigprof"))
		return sigprof();
	return 2;
}
