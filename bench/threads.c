// SPDX-License-Identifier: GPL-2.0
/*
 * threads: what a tick costs with 1, 4 and 16 threads, profil.ko's and a
 * bare perf timer's, side by side in one process.  A fixed amount of work
 * (ITERATIONS of a loop, split evenly between the threads) is timed in the
 * process's CPU time with no tool, with the null timer (a task-clock perf
 * event per thread at RATE whose samples go to a ring buffer nobody
 * reads) and with profil.ko at RATE, for each number of threads, ROUNDS
 * times, in an order rotated every round: what the host does to the guest
 * (TCG) from one moment to the next weighs on every case alike.  The
 * threads are made, and the tool set up, before the clock is read; a
 * case's extra CPU time over the no-tool case of its round and thread
 * count, over the ticks it took (struct profil_stats.ticks, or the null
 * timer's samples and lost ones), is what a tick costs.
 *
 *	threads ROUNDS RATE ITERATIONS [MARKS]
 *	  -> per round and case "ROUND NTHREADS TOOL cpu_ns X ticks T"
 *
 * With MARKS (a tracefs trace_marker file), each case's window is also
 * written there, "threads-case ROUND NTHREADS TOOL begin" and "... end",
 * so that the ticks traced between them (bench/guest.sh: the hrtimer
 * callback of every tick, entry to exit) can be told apart by case.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/profil.h>

#include "marks.h"
#include "nulltimer.h"

#define MAX_THREADS	16
#define RB_PAGES	64

static volatile unsigned long sink;
static unsigned int bins[1024];
static unsigned long share;
static pthread_barrier_t gate;
static pid_t tid[MAX_THREADS];
static FILE *marks;

static unsigned long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* In registers: the threads share no cache line while they work. */
__attribute__((noinline, aligned(64))) static void work(unsigned long n)
{
	unsigned long x = n;

	while (n--) {
		x = x * 6364136223846793005UL + 1;
		__asm__ volatile("" : "+r"(x));
	}
	sink = x;
}

/* Publish the tid, wait for the tool, wait for the clock, work. */
static void *worker(void *arg)
{
	tid[(long)arg] = gettid();
	pthread_barrier_wait(&gate);
	pthread_barrier_wait(&gate);
	work(share);
	return NULL;
}

static unsigned long long profil_ticks(int fd)
{
	struct profil_stats st = { .size = sizeof(st) };

	if (ioctl(fd, PROFIL_IOC_STATS, &st) || st.size < PROFIL_STATS_SIZE_VER2) {
		perror("threads: stats");
		exit(1);
	}
	return st.ticks;
}

static int profil_arm(int fd, unsigned int rate)
{
	struct profil_region r = {
		.buf = (unsigned long)bins, .bufsize = sizeof(bins),
		.offset = (unsigned long)work, .scale = PROFIL_SCALE_ONE,
		.flags = PROFIL_REGION_U32,
	};
	struct profil_setup s = {
		.size = sizeof(s), .rate = rate, .nr_regions = 1,
		.region_size = sizeof(r), .regions = (unsigned long)&r,
	};

	return ioctl(fd, PROFIL_IOC_SETUP, &s);
}

/* One case: @n threads, @tool 0 none, 1 null timer, 2 profil.ko. */
static void run(int fd, int round, int n, int tool, unsigned int rate,
		unsigned long iters)
{
	static const char *const name[] = { "none", "null", "profil" };
	struct null_timer nt[MAX_THREADS];
	unsigned long long t, ticks = 0, lost;
	pthread_t th[MAX_THREADS];
	long i;

	share = iters / n;
	if (pthread_barrier_init(&gate, NULL, n + 1))
		exit(1);
	for (i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)i))
			exit(1);
	pthread_barrier_wait(&gate);
	for (i = 0; tool == 1 && i < n; i++)
		null_timer_open(&nt[i], tid[i], rate, RB_PAGES);
	if (tool == 2 && profil_arm(fd, rate)) {
		perror("threads: profil.ko");
		exit(1);
	}
	if (tool == 2)
		ticks = profil_ticks(fd);
	if (marks)
		fprintf(marks, "threads-case %d %d %s begin\n", round, n,
			name[tool]);
	t = cpu_ns();
	pthread_barrier_wait(&gate);
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	t = cpu_ns() - t;
	if (marks)
		fprintf(marks, "threads-case %d %d %s end\n", round, n,
			name[tool]);
	if (tool == 2) {
		ticks = profil_ticks(fd) - ticks;
		ioctl(fd, PROFIL_IOC_OFF, 0);
	}
	for (i = 0; tool == 1 && i < n; i++) {
		ticks += null_timer_samples(&nt[i], &lost) + lost;
		null_timer_close(&nt[i]);
	}
	pthread_barrier_destroy(&gate);
	printf("%d %d %s cpu_ns %llu ticks %llu\n", round, n, name[tool], t,
	       ticks);
}

int main(int argc, char **argv)
{
	static const int counts[3] = { 1, 4, MAX_THREADS };
	int rounds = argc > 1 ? atoi(argv[1]) : 4;
	unsigned int rate = argc > 2 ? atoi(argv[2]) : 10000;
	unsigned long iters = argc > 3 ? atol(argv[3]) : 100000000;
	int fd = open("/dev/profil", O_RDWR | O_CLOEXEC), round, k, j;

	if (fd < 0 || rounds < 1 || !rate) {
		perror("threads: /dev/profil");
		return 2;
	}
	if (argc > 4 && !(marks = marks_open(argv[4])))
		return 2;
	for (round = 1; round <= rounds; round++)
		for (k = 0; k < 3; k++)
			for (j = 0; j < 3; j++)
				run(fd, round, counts[(round + k) % 3],
				    (round + j) % 3, rate, iters);
	return 0;
}
