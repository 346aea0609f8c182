/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The work of profil(1)'s test subjects: a fixed number of rounds of one
 * multiply-add loop, so that two functions built from it take CPU time in
 * the ratio of their rounds, wherever they are linked.
 */
#ifndef PROFIL_SELFTEST_CMD_WORK_H
#define PROFIL_SELFTEST_CMD_WORK_H

#define CMD_UNIT	20000	/* iterations in one unit of work */

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

unsigned long thirty(unsigned long units);	/* libcmd_split.so */
unsigned long dl_work(unsigned long units);	/* libcmd_dl.so */

#endif /* PROFIL_SELFTEST_CMD_WORK_H */
