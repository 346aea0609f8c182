// SPDX-License-Identifier: GPL-2.0
/*
 * mcount: what a profiled call costs, and how many calls the profile
 * keeps, with 1, 4 and 16 threads.  Built three times from this file (make
 * bench-mcount): with -pg against libprofil, with -pg against glibc's
 * runtime, and without -pg (the floor).  Each thread calls leaf() N times;
 * the cost is the process's CPU time per call, less nothing: compare the
 * builds, measured side by side (bench/mcount.sh).  Then (-DPROFILED)
 * _mcleanup() writes
 * the profile and this program reads it back (glibc's tagged format or
 * libprofil's 4.4BSD one) and counts the calls recorded to leaf().
 *
 *	mcount THREADS CALLS  ->  "ns/call X recorded Y of Z samples S"
 *
 * (S: the histogram's samples in gmon.out.)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void _mcleanup(void);

/*
 * Each thread's own: a counter the threads shared would bounce its cache
 * line between CPUs and price that into every build, the floor included.
 */
static __thread volatile unsigned long sink;
static long calls;

__attribute__((noinline, noclone)) void leaf(void)
{
	sink++;
}

__attribute__((noinline, noclone)) void *worker(void *arg)
{
	for (long i = 0; i < calls; i++)
		leaf();
	return arg;
}

static unsigned long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

#ifdef PROFILED
/* Histogram samples in gmon.out (recorded() counts them). */
static unsigned long long hist;

static uint64_t get(const unsigned char *p, int n)
{
	uint64_t v = 0;

	memcpy(&v, p, n);
	return v;
}

/* Calls recorded to [lo, hi) in gmon.out, either format; -1 if none. */
static long long recorded(uintptr_t lo, uintptr_t hi)
{
	static unsigned char buf[1 << 24];
	FILE *f = fopen("gmon.out", "r");
	size_t len, off, nb;
	long long n = 0;

	if (!f)
		return -1;
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	if (len >= 20 && !memcmp(buf, "gmon", 4)) {
		/* glibc: tagged records after a 20-byte header. */
		for (off = 20; off < len;) {
			if (buf[off] == 0) {	/* histogram: 40 + 2 * bins */
				nb = get(buf + off + 17, 4);
				for (size_t i = 0; i < nb && off + 43 + 2 * i <= len; i++)
					hist += get(buf + off + 41 + 2 * i, 2);
				off += 1 + 40 + 2 * nb;
			} else if (buf[off] == 1) {	/* arc: 8 + 8 + 4 */
				if (get(buf + off + 9, 8) - lo < hi - lo)
					n += get(buf + off + 17, 4);
				off += 21;
			} else {
				return -1;
			}
		}
		return n;
	}
	/* 4.4BSD: a 40-byte header and bins (ncnt bytes), then 24-byte arcs. */
	for (off = 40; off + 2 <= get(buf + 16, 4) && off + 2 <= len; off += 2)
		hist += get(buf + off, 2);
	for (off = get(buf + 16, 4); off + 24 <= len; off += 24)
		if (get(buf + off + 8, 8) - lo < hi - lo)
			n += get(buf + off + 16, 8);
	return n;
}

extern char __executable_start[];
#endif

int main(int argc, char **argv)
{
	int nt = argc > 1 ? atoi(argv[1]) : 1;
	pthread_t t[64];
	unsigned long long t0, dt;

	calls = argc > 2 ? atol(argv[2]) : 10000000;
	if (nt < 1 || nt > 64)
		return 2;
	t0 = cpu_ns();
	for (int i = 0; i < nt; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < nt; i++)
		pthread_join(t[i], NULL);
	dt = cpu_ns() - t0;
	printf("ns/call %.2f", (double)dt / ((double)calls * nt));
#ifdef PROFILED
	{
		uintptr_t lo = (uintptr_t)leaf, bias;

		_mcleanup();
		/* Both runtimes write link-time addresses (PIE). */
		bias = (uintptr_t)__executable_start;
		printf(" recorded %lld of %lld",
		       recorded(lo - bias, lo - bias + 64),
		       (long long)calls * nt);
		printf(" samples %llu", hist);
	}
#endif
	printf("\n");
	return 0;
}
