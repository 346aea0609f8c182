/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The work of profil(1)'s test subjects: one multiply-add loop, run for a
 * given number of rounds (cmd_churn) or until the thread's CPU clock reads
 * a given time (cmd_churn_until).  Functions built on cmd_churn_until()
 * take the CPU time they are given as the kernel counts it, which is what
 * a profile samples: under TCG how long a loop takes varies from run to
 * run, and a host that holds the vCPU adds its stall to the guest's clock
 * of whichever thread was running; both land in that function's time.
 */
#ifndef PROFIL_SELFTEST_CMD_WORK_H
#define PROFIL_SELFTEST_CMD_WORK_H

#include <stdint.h>
#include <time.h>

#define CMD_UNIT	20000	/* iterations in one unit of work */
#define CMD_PLUG_COPIES	40	/* plugins cmd_plughost "many" loads */

static inline __attribute__((always_inline)) unsigned long
cmd_churn(unsigned long units)
{
	unsigned long n = units * CMD_UNIT, x = n;

	while (n--) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

/* This thread's CPU time, user and system, in ns. */
static inline uint64_t cmd_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* The loop until this thread's CPU clock reads @until; the clock then. */
static inline __attribute__((always_inline)) uint64_t
cmd_churn_until(uint64_t until)
{
	uint64_t now;

	/* A unit between two looks at the clock: a tenth of the time in them. */
	while ((now = cmd_cpu_ns()) < until)
		cmd_churn(1);
	return now;
}

uint64_t thirty(uint64_t until);		/* libcmd_split.so */
unsigned long dl_work(unsigned long units);	/* libcmd_dl.so */

#endif /* PROFIL_SELFTEST_CMD_WORK_H */
