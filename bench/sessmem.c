// SPDX-License-Identifier: GPL-2.0
/*
 * sessmem: kernel memory held by N processes, each with a profil.ko
 * session (ARM 1) or without one (ARM 0).  Each child arms a session over
 * one page of 16-bit bins at HZ, says it is ready and sleeps; with all N
 * asleep, the parent folds the per-CPU counters and reads /proc/meminfo.
 * The guest runs ARM 0 and 1 interleaved; (with - without) / N is what a
 * session costs the kernel (bench/guest.sh).
 *
 *	sessmem N ARM  ->  "slab_kb X vmalloc_kb Y percpu_kb Z"
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/profil.h>

static unsigned short bins[2048] __attribute__((aligned(4096)));

static void child(int arm, int ready, int hold)
{
	struct profil_region r = { .buf = (unsigned long)bins,
				   .bufsize = sizeof(bins),
				   .offset = 0x400000, .scale = 0x10000 };
	struct profil_setup s = { .size = sizeof(s), .nr_regions = 1,
				  .region_size = sizeof(r),
				  .regions = (unsigned long)&r };
	char c;
	int fd;

	if (arm) {
		fd = open("/dev/profil", O_RDWR | O_CLOEXEC);
		if (fd < 0 || ioctl(fd, PROFIL_IOC_SETUP, &s))
			_exit(1);
		close(fd);
	}
	if (write(ready, "", 1) != 1)
		_exit(1);
	/* Until the parent closes the pipe. */
	while (read(hold, &c, 1) > 0)
		;
	_exit(0);
}

static long meminfo(const char *key)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) &&
		    line[strlen(key)] == ':')
			v = atol(line + strlen(key) + 1);
	if (f)
		fclose(f);
	return v;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[1]) : 0, arm = argc > 2 && atoi(argv[2]);
	int ready[2], hold[2], i, got = 0, st, bad = 0;
	char buf[256];
	ssize_t k;
	FILE *f;

	if (n < 1 || pipe(ready) || pipe(hold))
		return 2;
	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0) {
			close(ready[0]);
			close(hold[1]);
			child(arm, ready[1], hold[0]);
		}
	}
	close(ready[1]);
	close(hold[0]);
	while (got < n && (k = read(ready[0], buf, sizeof(buf))) > 0)
		got += k;
	/* /proc/vmstat folds per-CPU deltas every second: exact now. */
	f = fopen("/proc/sys/vm/stat_refresh", "w");
	if (f) {
		fputs("1\n", f);
		fclose(f);
	}
	printf("slab_kb %ld vmalloc_kb %ld percpu_kb %ld ready %d\n",
	       meminfo("Slab"), meminfo("VmallocUsed"), meminfo("Percpu"), got);
	fflush(stdout);
	close(hold[1]);
	while (wait(&st) > 0)
		bad += !WIFEXITED(st) || WEXITSTATUS(st);
	return bad ? 1 : 0;
}
