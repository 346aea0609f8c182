// SPDX-License-Identifier: GPL-2.0
/*
 * The make demo program for the gmon runtime: built with gcc -pg and
 * linked with -lprofil, it makes calls whose counts are known and spends
 * its CPU time 60/30/10 in three functions by construction; gprof then
 * shows both, from the kernel's histogram and libprofil's exact arcs.
 *
 *	main -> simulate  x 50 -> expensive x 10  (60% of the time)
 *	                       -> medium    x 50  (30%)
 *	                       -> cheap     x 200 (10%)
 */
#include <stdio.h>

/* Written by each function, so that no call can be optimised away. */
static volatile unsigned long sink;

static inline __attribute__((always_inline)) unsigned long churn(unsigned long n)
{
	unsigned long x = n;

	while (n--)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

__attribute__((noinline)) void expensive(void)
{
	sink += churn(300000);
}

__attribute__((noinline)) void medium(void)
{
	sink += churn(30000);
}

__attribute__((noinline)) void cheap(void)
{
	sink += churn(2500);
}

__attribute__((noinline)) void simulate(void)
{
	int i;

	for (i = 0; i < 10; i++)
		expensive();
	for (i = 0; i < 50; i++)
		medium();
	for (i = 0; i < 200; i++)
		cheap();
}

int main(void)
{
	int i;

	for (i = 0; i < 50; i++)
		simulate();
	printf("callgraph: done (%lx)\n", sink & 0xfff);
	return 0;
}
