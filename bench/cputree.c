// SPDX-License-Identifier: GPL-2.0
/*
 * cputree: run a command and print the CPU time of it and of every
 * descendant it waited for (wait4()'s rusage: user + system), so that a
 * tool that runs the workload as its child (perf record, bench/bpfsample)
 * is charged for its own CPU too.
 *
 *	cputree CMD [ARG...]  ->  CMD's output, then "tree_ns N status S"
 */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned long long tv_ns(struct timeval tv)
{
	return tv.tv_sec * 1000000000ULL + tv.tv_usec * 1000ULL;
}

int main(int argc, char **argv)
{
	struct rusage ru;
	int status;
	pid_t pid;

	if (argc < 2)
		return 2;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		execvp(argv[1], argv + 1);
		perror(argv[1]);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid)
		return 1;
	printf("tree_ns %llu status %d\n",
	       tv_ns(ru.ru_utime) + tv_ns(ru.ru_stime), status);
	return 0;
}
