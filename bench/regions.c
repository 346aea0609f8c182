// SPDX-License-Identifier: GPL-2.0
/*
 * regions: what a tick costs with 1 and with 1024 histogram regions.
 * A fixed amount of work (a loop of ITERATIONS) is timed in the thread's
 * CPU time with no session, and with a session of 1 or 1024 regions at
 * RATE Hz (one region over the loop, the rest elsewhere), ROUNDS times,
 * the three in an order rotated by one each round: side by side in one
 * process, so that what the host does to the guest from one moment to the
 * next (TCG) weighs on the three alike.  The extra CPU time of a session
 * over the no-session run of its round, over the ticks it took (struct
 * profil_stats.ticks), is what a tick costs.
 *
 *	regions ROUNDS RATE ITERATIONS [MARKS]
 *	  -> per round and case "ROUND NREGIONS cpu_ns X ticks T samples S"
 *
 * With MARKS (a tracefs trace_marker file), each session's window is also
 * written there, "regions-case ROUND NREGIONS profil begin" and "... end",
 * as bench/threads does, so that the hrtimer callbacks traced between them
 * (bench/guest.sh's ticktrace) can be told apart by the number of regions.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <linux/profil.h>

#include "marks.h"

#define MAX	1024

static volatile unsigned long sink;
static FILE *marks;
static unsigned short bins[MAX][64];
static struct profil_region r[MAX];

static unsigned long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

__attribute__((noinline)) static void work(unsigned long n)
{
	while (n--)
		sink += n;
}

static int stats(int fd, struct profil_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	if (ioctl(fd, PROFIL_IOC_STATS, st))
		return -1;
	return st->size >= PROFIL_STATS_SIZE_VER2 ? 0 : -1;
}

/* @n regions at @rate, the last over work(); 0: no session. */
static int arm(int fd, int n, unsigned int rate)
{
	struct profil_setup s = { .size = sizeof(s), .rate = rate,
				  .nr_regions = n, .region_size = sizeof(r[0]),
				  .regions = (unsigned long)r };
	int i;

	if (!n)
		return ioctl(fd, PROFIL_IOC_OFF, 0);
	for (i = 0; i < n; i++)
		r[i] = (struct profil_region){
			.buf = (unsigned long)bins[i], .bufsize = sizeof(bins[i]),
			.offset = 0x10000 + 0x1000 * i, .scale = 0x10000 };
	r[n - 1].offset = (unsigned long)work;
	return ioctl(fd, PROFIL_IOC_SETUP, &s);
}

/* The window of a session of @n regions in MARKS, if any. */
static void mark(int round, int n, const char *what)
{
	if (marks && n)
		fprintf(marks, "regions-case %d %d profil %s\n", round, n, what);
}

int main(int argc, char **argv)
{
	static const int cases[3] = { 0, 1, MAX };
	int rounds = argc > 1 ? atoi(argv[1]) : 5;
	unsigned int rate = argc > 2 ? atoi(argv[2]) : 10000;
	unsigned long iters = argc > 3 ? atol(argv[3]) : 100000000;
	int fd = open("/dev/profil", O_RDWR | O_CLOEXEC), round, k, n;
	struct profil_stats a, b;
	unsigned long long t;

	if (fd < 0 || rounds < 1) {
		perror("regions: /dev/profil");
		return 2;
	}
	if (argc > 4 && !(marks = marks_open(argv[4])))
		return 2;
	for (round = 1; round <= rounds; round++) {
		for (k = 0; k < 3; k++) {
			n = cases[(round + k) % 3];
			if (arm(fd, n, rate) || stats(fd, &a)) {
				perror("regions: arm");
				return 1;
			}
			mark(round, n, "begin");
			t = cpu_ns();
			work(iters);
			t = cpu_ns() - t;
			mark(round, n, "end");
			if (stats(fd, &b))
				return 1;
			printf("%d %d cpu_ns %llu ticks %llu samples %llu\n",
			       round, n, t, (unsigned long long)(b.ticks - a.ticks),
			       (unsigned long long)(b.samples + b.out_of_range -
						    a.samples - a.out_of_range));
		}
	}
	return 0;
}
