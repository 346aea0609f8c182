/* SPDX-License-Identifier: GPL-2.0 */
/*
 * marks.h: bench/threads' and bench/regions' trace_marker, where each
 * case's window is written for bench/guest.sh's ticktrace.
 */
#ifndef BENCH_MARKS_H
#define BENCH_MARKS_H

#include <stdio.h>

/* @path opened unbuffered for writing, or NULL having said why. */
static inline FILE *marks_open(const char *path)
{
	FILE *f = fopen(path, "we");

	if (!f)
		perror(path);
	else
		setvbuf(f, NULL, _IONBF, 0);
	return f;
}

#endif
