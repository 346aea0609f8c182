// SPDX-License-Identifier: GPL-2.0
/*
 * forkcost: what a fork costs the forking process, in its own CPU time
 * (fork, exit of the child, wait), averaged over many forks.  profil.ko's
 * fork probe runs in the parent's fork path, so this is where its cost
 * shows.  Prints "ns/fork N"; the guest runs it with the module loaded and
 * unloaded, interleaved, and compares medians (scripts/guest-init.sh,
 * mode forkcost).  CPU time, not wall time: TCG's clock is unreliable.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static unsigned long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int i, n = argc > 1 ? atoi(argv[1]) : 2000;
	unsigned long long t0;
	pid_t pid;

	t0 = cpu_ns();
	for (i = 0; i < n; i++) {
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0)
			_exit(0);
		if (waitpid(pid, NULL, 0) != pid)
			return 1;
	}
	printf("ns/fork %llu\n", (cpu_ns() - t0) / n);
	return 0;
}
