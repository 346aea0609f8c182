// SPDX-License-Identifier: GPL-2.0
/*
 * The demo: a CPU-bound program that profiles its own text with profil()
 * and prints its hottest functions by name with their share of samples.
 * The work is split 60/30/10 between three functions by construction.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profil.h"

extern char __executable_start[], etext[];

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline __attribute__((always_inline)) unsigned long churn(unsigned long n)
{
	unsigned long x = n;

	while (n--)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

__attribute__((noinline)) unsigned long hash_work(unsigned long n)
{
	return churn(n * 6);
}

__attribute__((noinline)) unsigned long sort_work(unsigned long n)
{
	return churn(n * 3) ^ 1;
}

__attribute__((noinline)) unsigned long parse_work(unsigned long n)
{
	return churn(n) ^ 2;
}

struct hot {
	const char *name;
	unsigned long samples;
};

static int by_samples(const void *a, const void *b)
{
	const struct hot *x = a, *y = b;

	return (x->samples < y->samples) - (x->samples > y->samples);
}

int main(void)
{
	uintptr_t lo = (uintptr_t)__executable_start;
	size_t nbins = ((uintptr_t)etext - lo) / 2 + 1, i, j, nhot = 0;
	unsigned short *bins = calloc(nbins, sizeof(*bins));
	struct hot hot[64];
	unsigned long total = 0, sink = 0;
	double t0;

	if (!bins || profil(bins, nbins * 2, lo, 0x10000)) {
		perror("profil");
		return 1;
	}
	t0 = cpu_seconds();
	while (cpu_seconds() - t0 < 2.0) {
		/* churn() is inlined: each caller runs its own loop. */
		sink += hash_work(20000) + sort_work(20000) + parse_work(20000);
	}
	profil(NULL, 0, 0, 0);

	for (i = 0; i < nbins; i++) {
		Dl_info di;
		const char *name = "?";

		if (!bins[i])
			continue;
		total += bins[i];
		if (dladdr((void *)(lo + 2 * i), &di) && di.dli_sname)
			name = di.dli_sname;
		for (j = 0; j < nhot && strcmp(hot[j].name, name); j++)
			;
		if (j == nhot && nhot < 64)
			hot[nhot++] = (struct hot){ name, 0 };
		if (j < nhot)
			hot[j].samples += bins[i];
	}
	qsort(hot, nhot, sizeof(*hot), by_samples);
	printf("profil(2) demo: %lu samples in %.2f s of CPU (checksum %lx)\n",
	       total, cpu_seconds() - t0, sink & 0xff);
	printf("%8s %7s  %s\n", "samples", "share", "function");
	for (j = 0; j < nhot && j < 10; j++)
		printf("%8lu %6.1f%%  %s\n", hot[j].samples,
		       100.0 * hot[j].samples / total, hot[j].name);
	printf("(by construction: hash_work 60%%, sort_work 30%%, parse_work 10%%)\n");
	return 0;
}
