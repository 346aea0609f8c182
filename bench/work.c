// SPDX-License-Identifier: GPL-2.0
/*
 * work: the workloads of make bench, and the in-process samplers.
 *
 *	work WORKLOAD THREADS TOOL RATE ITERS
 *	  -> "cpu_ns X run_ns X proc_ns X busy_ns X tool_ns X samples N
 *	      ticks N f1 N f2 N f3 N eintr N lost N rate R"
 *
 * WORKLOAD is cpu (each thread splits its time 50/30/20 between f1, f2
 * and f3 by construction: one loop body, 5:3:2 iterations, interleaved in
 * short rounds), sys (each thread loops on read of /dev/zero, poll with
 * timeout 0 and nanosleep 0, counting EINTR) or block (one thread runs
 * cpu's rounds while THREADS others work a little, 20k iterations outside
 * f1..f3, before each sleep in poll, nanosleep, epoll_wait and
 * sem_timedwait, 1 ms each in turn, until it is done, counting the EINTR
 * that a profiler's signal makes them return).  ITERS is per thread
 * (block: the spinning thread's).
 * TOOL is one of
 *	none	nothing
 *	null	a task-clock perf event at RATE on every thread, whose
 *		samples are 8-byte headers in a ring buffer nobody reads:
 *		the floor any tick-based sampler pays
 *	profil	profil.ko at RATE through PROFIL_IOC_SETUP, 32-bit bins over
 *		f1..f3 (scale 0x10000)
 *	glibc	glibc's profil(): ITIMER_PROF and SIGPROF, its only rate; its
 *		handler is wrapped to count the signals
 *	ext	nothing in-process: perf record or bench/bpfsample samples it
 * The threads are made, and every tool set up, before the window opens:
 * run_ns is the process's CPU time from then to the end of the work (the
 * window); cpu_ns from main() on; proc_ns since the
 * fork, exec and loading included (what perf and BPF sample of it).
 * busy_ns is the whole machine's busy time in the window: every CPU's time
 * less its idle time (/proc/uptime), so that what a tool costs other CPUs
 * (a BPF program on every CPU's clock, perf record draining its buffers,
 * kernel threads) counts.  tool_ns (ext) is the CPU time the parent, perf
 * record or bench/bpfsample, used in the window: their setup (events
 * opened, buffers mapped, the BPF program loaded) is before it, as
 * profil.ko's SETUP is, and their wind-down (perf record's last read of
 * its buffers, its file's end) after.
 * samples are the tool's own: for profil.ko the periods credited, ticks
 * the timer interrupts it took (struct profil_stats.ticks); for the others
 * each sample is a tick taken.  f1..f3 are the samples it put in each
 * function, lost those it counted dropped (profil.ko's missed, the
 * samples the null timer's buffers had no room for).
 *
 *	work classify < PCS  ->  "samples N ticks N f1 N f2 N f3 N"
 *	work hz              ->  the kernel's HZ (profil.ko's default rate)
 *	work lo              ->  the address of f1 (bench/bpfsample's LO)
 * reads "PC [COUNT]" lines (hex PC: perf script -F ip, bench/bpfsample)
 * and sorts them into this binary's functions (built -no-pie, so its
 * addresses are the same in every run).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <semaphore.h>
#include <sys/epoll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/profil.h>

#include "nulltimer.h"

int profil(unsigned short *buf, size_t size, size_t offset, unsigned int scale);
int __profile_frequency(void);

static volatile unsigned long sink;

/* One loop body for all three, so their iterations cost the same. */
#define SPIN(name)							\
	__attribute__((noinline, noclone, aligned(64),			\
		       section("bench_text")))				\
	void name(unsigned long n)					\
	{								\
		unsigned long x = n;					\
									\
		while (n--) {						\
			x = x * 6364136223846793005UL + 1;		\
			__asm__ volatile("" : "+r"(x));			\
		}							\
		sink = x;						\
	}
SPIN(f1)
SPIN(f2)
SPIN(f3)
extern char __start_bench_text[], __stop_bench_text[];

#define NBINS	4096

static unsigned int bins32[NBINS];
static unsigned short bins16[NBINS];
static unsigned long iters;
static unsigned long long eintr;
static volatile unsigned long long sigprof;
static struct sigaction glibc_act;
/* glibc's declaration says nonnull; the NULL that stops it is legal. */
static int (*volatile glibc_profil)(unsigned short *, size_t, size_t,
				    unsigned int) = profil;

static unsigned long long clock_ns(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts))
		return 0;
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static unsigned long long cpu_ns(void)
{
	return clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

/*
 * The machine's busy time so far, in ns: every online CPU's share of the
 * time since boot less the idle time of all (/proc/uptime, in 10 ms).  An
 * interrupt on an idle CPU stops its idle time, so it counts as busy.
 */
static unsigned long long busy_ns(void)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned long long now = clock_ns(CLOCK_BOOTTIME);
	double up, idle;
	FILE *f = fopen("/proc/uptime", "re");
	int n = f ? fscanf(f, "%lf %lf", &up, &idle) : 0;

	if (f)
		fclose(f);
	if (n != 2)
		return 0;
	return now * ncpu - (unsigned long long)(idle * 1e9);
}

/* f1, f2, f3 or 0 (none of them) for @pc. */
static int which(uintptr_t pc)
{
	uintptr_t f[4] = { (uintptr_t)f1, (uintptr_t)f2, (uintptr_t)f3,
			   (uintptr_t)__stop_bench_text };

	for (int i = 0; i < 3; i++)
		if (pc >= f[i] && pc < f[i + 1])
			return i + 1;
	return 0;
}

/* The null timer: one per thread, opened for it before the window. */
#define NULL_PAGES	128
static unsigned int null_rate;
static struct null_timer null_timers[65];
static unsigned int null_nr;

/* Samples in the ring buffers, and those they had no room for. */
static void null_count(unsigned long long *samples, unsigned long long *lost)
{
	unsigned long long l;

	for (unsigned int i = 0; i < null_nr; i++) {
		*samples += null_timer_samples(&null_timers[i], &l);
		*lost += l;
	}
}

static void *cpu_thread(void *arg)
{
	/* Rounds of ~10k iterations per unit: short next to any period. */
	unsigned long unit = 2000, r;

	for (r = 0; r < iters / (10 * unit); r++) {
		f1(5 * unit);
		f2(3 * unit);
		f3(2 * unit);
	}
	return arg;
}

static void *sys_thread(void *arg)
{
	struct timespec zero = { 0, 0 };
	int zfd = open("/dev/zero", O_RDONLY), p[2];
	unsigned long long intr = 0;
	struct pollfd pfd;
	char buf[64];

	if (zfd < 0 || pipe(p))
		exit(3);
	pfd = (struct pollfd){ .fd = p[0], .events = POLLIN };
	for (unsigned long i = 0; i < iters; i++) {
		if (read(zfd, buf, sizeof(buf)) < 0 && errno == EINTR)
			intr++;
		if (poll(&pfd, 1, 0) < 0 && errno == EINTR)
			intr++;
		if (nanosleep(&zero, NULL) < 0 && errno == EINTR)
			intr++;
	}
	__atomic_add_fetch(&eintr, intr, __ATOMIC_RELAXED);
	close(zfd);
	close(p[0]);
	close(p[1]);
	return arg;
}

static volatile int block_done;

/* The sleeping threads' bit of work, outside f1..f3. */
static __attribute__((noinline)) void block_work(unsigned long n)
{
	unsigned long x = n;

	while (n--) {
		x = x * 6364136223846793005UL + 1;
		__asm__ volatile("" : "+r"(x));
	}
	sink = x;
}

/*
 * Work a little, then sleep in one of four calls, 1 ms, each in turn,
 * until the spinning thread is done; count the calls a signal cut short.
 */
static void *block_thread(void *arg)
{
	struct timespec ms = { 0, 1000000 }, at;
	struct epoll_event ev = { .events = EPOLLIN };
	unsigned long long intr = 0;
	int p[2], ep = epoll_create1(0);
	struct pollfd pfd;
	sem_t sem;

	if (ep < 0 || pipe(p) || sem_init(&sem, 0, 0) ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev))
		exit(3);
	pfd = (struct pollfd){ .fd = p[0], .events = POLLIN };
	while (!block_done) {
		block_work(20000);
		intr += poll(&pfd, 1, 1) < 0 && errno == EINTR;
		block_work(20000);
		intr += nanosleep(&ms, NULL) < 0 && errno == EINTR;
		block_work(20000);
		intr += epoll_wait(ep, &ev, 1, 1) < 0 && errno == EINTR;
		block_work(20000);
		clock_gettime(CLOCK_REALTIME, &at);
		at.tv_nsec += 1000000;
		if (at.tv_nsec >= 1000000000) {
			at.tv_sec++;
			at.tv_nsec -= 1000000000;
		}
		intr += sem_timedwait(&sem, &at) < 0 && errno == EINTR;
	}
	__atomic_add_fetch(&eintr, intr, __ATOMIC_RELAXED);
	sem_destroy(&sem);
	close(ep);
	close(p[0]);
	close(p[1]);
	return arg;
}

/*
 * The worker threads are made before the window and wait at the gate:
 * once with their tids published (the null timer's events are opened for
 * them), once more for the window to open.
 */
static pthread_barrier_t gate;
static pid_t worker_tid[64];

struct worker {
	void *(*fn)(void *);
	int i;
};

static void *worker(void *arg)
{
	struct worker *w = arg;

	worker_tid[w->i] = gettid();
	pthread_barrier_wait(&gate);
	pthread_barrier_wait(&gate);
	return w->fn(NULL);
}

/* Arm profil.ko at @rate (0: HZ); the rate in use. */
static unsigned int profil_start(unsigned int rate)
{
	struct profil_region r = {
		.buf = (uintptr_t)bins32, .bufsize = sizeof(bins32),
		.offset = (uintptr_t)__start_bench_text,
		.scale = PROFIL_SCALE_ONE, .flags = PROFIL_REGION_U32,
	};
	struct profil_setup s = {
		.size = sizeof(s), .rate = rate, .nr_regions = 1,
		.region_size = sizeof(r), .regions = (uintptr_t)&r,
	};
	int fd = open("/dev/profil", O_RDWR | O_CLOEXEC);

	if (fd < 0 || ioctl(fd, PROFIL_IOC_SETUP, &s)) {
		perror("profil.ko");
		exit(4);
	}
	close(fd);
	return s.rate;
}

static void profil_count(unsigned long long *samples, unsigned long long *ticks,
			 unsigned long long *lost)
{
	struct profil_stats st = { .size = sizeof(st) };
	int fd = open("/dev/profil", O_RDWR | O_CLOEXEC);

	if (fd < 0 || ioctl(fd, PROFIL_IOC_STATS, &st)) {
		perror("profil.ko stats");
		exit(4);
	}
	close(fd);
	if (st.size < PROFIL_STATS_SIZE_VER2) {
		fprintf(stderr, "profil.ko stats: no ticks (size %u)\n", st.size);
		exit(4);
	}
	*samples = st.samples + st.out_of_range + st.saturated;
	*ticks = st.ticks;
	*lost = st.missed;
}

static void glibc_counter(int sig, siginfo_t *si, void *uc)
{
	sigprof++;
	if (glibc_act.sa_flags & SA_SIGINFO)
		glibc_act.sa_sigaction(sig, si, uc);
	else
		glibc_act.sa_handler(sig);
}

static void glibc_start(void)
{
	struct sigaction act;

	if (profil(bins16, sizeof(bins16), (uintptr_t)__start_bench_text,
		   PROFIL_SCALE_ONE)) {
		perror("glibc profil");
		exit(4);
	}
	/* Count SIGPROF on the way into glibc's own handler. */
	sigaction(SIGPROF, NULL, &glibc_act);
	act = glibc_act;
	act.sa_sigaction = glibc_counter;
	act.sa_flags |= SA_SIGINFO;
	sigaction(SIGPROF, &act, NULL);
}

static int classify(void)
{
	unsigned long long n[4] = { 0 }, pc, cnt;
	char line[256];

	while (fgets(line, sizeof(line), stdin)) {
		cnt = 1;
		if (sscanf(line, "%llx %llu", &pc, &cnt) < 1)
			continue;
		n[which(pc)] += cnt;
	}
	printf("samples %llu ticks %llu f1 %llu f2 %llu f3 %llu\n",
	       n[0] + n[1] + n[2] + n[3], n[0] + n[1] + n[2] + n[3], n[1], n[2],
	       n[3]);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long long t0 = cpu_ns(), t1, t2, samples = 0, lost = 0;
	unsigned long long f[4] = { 0 }, b1, b2, p1 = 0, p2 = 0, ticks = 0;
	unsigned long long s0 = 0, k0 = 0, l0 = 0;
	clockid_t parent = 0;
	int ext;
	unsigned int rate, nt, workers;
	void *(*fn)(void *);
	int block;
	const char *tool;
	pthread_t t[64];
	struct worker w[64];

	if (argc == 2 && !strcmp(argv[1], "classify"))
		return classify();
	if (argc == 2 && !strcmp(argv[1], "hz"))
		return printf("%u\n", profil_start(0)) < 0;
	if (argc == 2 && !strcmp(argv[1], "lo"))
		return printf("%p\n", (void *)__start_bench_text) < 0;
	if (argc != 6) {
		fprintf(stderr, "usage: work cpu|sys|block THREADS none|null|profil|glibc|ext RATE ITERS\n");
		return 2;
	}
	fn = !strcmp(argv[1], "sys") ? sys_thread : cpu_thread;
	block = !strcmp(argv[1], "block");
	/* nanosleep 0 is a system call, not 50 us of timer slack. */
	prctl(PR_SET_TIMERSLACK, 1UL);
	nt = atoi(argv[2]);
	tool = argv[3];
	rate = atoi(argv[4]);
	iters = strtoul(argv[5], NULL, 0);
	if (nt < 1 || nt > 64 ||
	    (!rate && strcmp(tool, "none") && strcmp(tool, "glibc")))
		return 2;

	if (!strcmp(tool, "null"))
		null_rate = rate;
	else if (!strcmp(tool, "profil"))
		profil_start(rate);
	else if (!strcmp(tool, "glibc"))
		glibc_start();
	/*
	 * Workers: block's sleepers (this thread spins), or the threads of
	 * cpu and sys with more than one (with one, this thread works).
	 */
	workers = block || nt > 1 ? nt : 0;
	if (pthread_barrier_init(&gate, NULL, workers + 1))
		return 3;
	for (unsigned int i = 0; i < workers; i++) {
		w[i] = (struct worker){ block ? block_thread : fn, i };
		if (pthread_create(&t[i], NULL, worker, &w[i]))
			return 3;
	}
	pthread_barrier_wait(&gate);
	for (unsigned int i = 0; null_rate && i < workers; i++)
		null_timer_open(&null_timers[null_nr++], worker_tid[i],
				null_rate, NULL_PAGES);
	if (null_rate && (block || !workers))
		null_timer_open(&null_timers[null_nr++], 0, null_rate,
				NULL_PAGES);
	/* perf record or bpfsample: their CPU in the window, measured here. */
	ext = !strcmp(tool, "ext");
	if (ext && clock_getcpuclockid(getppid(), &parent)) {
		fprintf(stderr, "work: no CPU clock for the parent\n");
		return 4;
	}
	if (ext)
		p1 = clock_ns(parent);
	b1 = busy_ns();
	/* profil.ko's counts in the window only: read at both ends. */
	if (!strcmp(tool, "profil"))
		profil_count(&s0, &k0, &l0);
	t1 = cpu_ns();
	pthread_barrier_wait(&gate);
	if (block || !workers)
		fn(NULL);
	block_done = 1;
	for (unsigned int i = 0; i < workers; i++)
		pthread_join(t[i], NULL);
	t2 = cpu_ns();
	if (!strcmp(tool, "profil"))
		profil_count(&samples, &ticks, &lost);
	b2 = busy_ns();
	if (ext)
		p2 = clock_ns(parent);

	if (!strcmp(tool, "null")) {
		null_count(&samples, &lost);
		ticks = samples + lost;
	} else if (!strcmp(tool, "profil")) {
		samples -= s0;
		ticks -= k0;
		lost -= l0;
		for (int i = 0; i < NBINS; i++)
			f[which((uintptr_t)__start_bench_text + 2 * i)] += bins32[i];
	} else if (!strcmp(tool, "glibc")) {
		/* scale 0 does not stop glibc's; a NULL buffer does. */
		glibc_profil(NULL, 0, 0, 0);
		samples = ticks = sigprof;
		for (int i = 0; i < NBINS; i++)
			f[which((uintptr_t)__start_bench_text + 2 * i)] += bins16[i];
		/* What glibc says it samples at (gmon's prof_rate). */
		rate = __profile_frequency();
	}
	printf("cpu_ns %llu run_ns %llu proc_ns %llu busy_ns %lld tool_ns %llu",
	       t2 - t0, t2 - t1, t2, (long long)(b2 - b1), p2 - p1);
	/* ext: the tool's own samples and ticks come from its output. */
	if (!ext)
		printf(" samples %llu ticks %llu f1 %llu f2 %llu f3 %llu lost %llu",
		       samples, ticks, f[1], f[2], f[3], lost);
	printf(" eintr %llu rate %u\n", eintr, rate);
	return 0;
}
