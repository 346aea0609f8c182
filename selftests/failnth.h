/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fault injection for the selftests: the debugfs knobs that let failslab
 * and fail_page_alloc fail any allocation a task makes, and the task's
 * fail-nth (Documentation/fault-injection/fault-injection.rst).  Only the
 * debug kernel of make check-debug has them.
 */
#ifndef PROFIL_SELFTESTS_FAILNTH_H
#define PROFIL_SELFTESTS_FAILNTH_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DBG	"/sys/kernel/debug/"

static inline int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* Let both injectors fail any allocation this task makes, by fail-nth. */
static inline int injection_ready(void)
{
	return !write_str(DBG "failslab/ignore-gfp-wait", "N") &&
	       !write_str(DBG "fail_page_alloc/ignore-gfp-wait", "N") &&
	       !write_str(DBG "fail_page_alloc/ignore-gfp-highmem", "N") &&
	       !write_str(DBG "fail_page_alloc/min-order", "0") &&
	       !write_str(DBG "failslab/verbose", "0") &&
	       !write_str(DBG "fail_page_alloc/verbose", "0");
}

/* Set this thread's fail-nth @fd to @n. */
static inline int nth_set(int fd, int n)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%d", n);
	return pwrite(fd, buf, strlen(buf), 0) > 0 ? 0 : -1;
}

/* What is left of this thread's fail-nth @fd: 0 once it has failed one. */
static inline int nth_left(int fd)
{
	char buf[16];
	ssize_t k = pread(fd, buf, sizeof(buf) - 1, 0);

	if (k <= 0)
		return -1;
	buf[k] = '\0';
	return atoi(buf);
}

#endif /* PROFIL_SELFTESTS_FAILNTH_H */
