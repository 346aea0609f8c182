// SPDX-License-Identifier: GPL-2.0
/*
 * regions: what a sample costs with 1 and with 1024 histogram regions.
 * A fixed amount of work (a loop of N iterations) is timed in the
 * process's CPU time with no session, and with a session of 1 or 1024
 * regions at RATE Hz (one region over the loop, the rest elsewhere); the
 * extra CPU time over the samples taken is the cost of a sample, tick
 * included.  The guest runs it interleaved (scripts/guest-init.sh, mode
 * bench).
 *
 *	regions NREGIONS RATE ITERATIONS  ->  "cpu_ns X samples Y"
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <linux/profil.h>

#define MAX	1024

static volatile unsigned long sink;
static unsigned short bins[MAX][64];

static unsigned long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

__attribute__((noinline)) static void work(unsigned long n)
{
	while (n--)
		sink += n;
}

static unsigned long long samples(void)
{
	struct profil_stats st = { .size = sizeof(st) };
	int fd = open("/dev/profil", O_RDWR | O_CLOEXEC);

	if (fd < 0 || ioctl(fd, PROFIL_IOC_STATS, &st))
		return 0;
	close(fd);
	return st.samples + st.out_of_range;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	unsigned int rate = argc > 2 ? atoi(argv[2]) : 10000;
	unsigned long iters = argc > 3 ? atol(argv[3]) : 100000000;
	static struct profil_region r[MAX];
	struct profil_setup s = { .size = sizeof(s), .rate = rate,
				  .nr_regions = n, .region_size = sizeof(r[0]),
				  .regions = (unsigned long)r };
	unsigned long long t0, s0;
	int i, fd;

	if (n < 0 || n > MAX)
		return 2;
	for (i = 0; i < n; i++)
		r[i] = (struct profil_region){
			.buf = (unsigned long)bins[i], .bufsize = sizeof(bins[i]),
			.offset = 0x10000 + 0x1000 * i, .scale = 0x10000 };
	if (n)
		r[n - 1].offset = (unsigned long)work;
	fd = open("/dev/profil", O_RDWR | O_CLOEXEC);
	if (n && (fd < 0 || ioctl(fd, PROFIL_IOC_SETUP, &s)))
		return 1;
	s0 = samples();
	t0 = cpu_ns();
	work(iters);
	printf("cpu_ns %llu samples %llu\n", cpu_ns() - t0, samples() - s0);
	return 0;
}
