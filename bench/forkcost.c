// SPDX-License-Identifier: GPL-2.0
/*
 * forkcost: what a fork costs the forking process, in its own CPU time
 * (fork, exit of the child, wait), averaged over many forks.  profil.ko's
 * fork probe runs in the parent's fork path, so this is where its cost
 * shows.  Prints "ns/fork N"; the guest runs it with the module loaded and
 * unloaded, interleaved, and compares medians (scripts/guest-init.sh,
 * mode forkcost).  CPU time, not wall time: TCG's clock is unreliable.
 *
 *	forkcost [N [fork|exec|session|parent|forkparent|forktimer|forkcount
 *		     [RATE]]]
 *
 * exec: each child execs /bin/true, and the cost is the CPU time of the
 * parent and its children together (fork, exec, exit, wait).  session:
 * the same with the parent profiled by profil.ko at HZ, so that each child
 * inherits a session (taken over in the child) that its exec then ends
 * (make bench, bench/guest.sh).  parent: the same session with
 * PROFIL_F_NOINHERIT, so that only the parent is profiled: what profiling
 * the forking process costs its forks, without any take-over.  fork and
 * forkparent: the same without exec (fork, exit, wait), the second with
 * parent's session: the kernel's share of what a fork costs under
 * profil(1), which adds its agent to that.  RATE: the session's, in Hz
 * (default 0, HZ); make bench gives forkparent profil(1)'s 1 kHz.
 * forktimer: fork + exit + wait with a bare perf task-clock event on the
 * parent that samples at RATE (nothing reads the samples), forkcount with
 * one that only counts, so has no timer: what any per-task sampling timer
 * costs these forks, and what perf's switching of an event costs without
 * one.
 *
 * It also prints "sys/fork N": the busy CPU time of the whole machine per
 * fork (/proc/stat, every CPU, all but idle and iowait), which counts the
 * work a fork causes elsewhere too: kernel threads (profil.ko's take-over
 * of an inherited session, the writer of a child's profile file) and a
 * child that runs on the other CPU.  The guest runs nothing else.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <linux/profil.h>
#include <sys/syscall.h>

static unsigned long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* The CPU time of this process and of the children it waited for. */
static unsigned long long tree_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_CHILDREN, &ru);
	return cpu_ns() + ru.ru_utime.tv_sec * 1000000000ULL +
	       ru.ru_utime.tv_usec * 1000ULL +
	       ru.ru_stime.tv_sec * 1000000000ULL + ru.ru_stime.tv_usec * 1000ULL;
}

/* Busy CPU time of every CPU so far, from /proc/stat's first line, in ns. */
static unsigned long long busy_ns(void)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "re");
	int n = f ? fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu",
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
			   &v[7]) : 0;

	if (f)
		fclose(f);
	if (n < 7)
		return 0;
	/* user nice system idle iowait irq softirq steal: less idle, iowait */
	return (v[0] + v[1] + v[2] + v[5] + v[6]) *
	       (1000000000ULL / sysconf(_SC_CLK_TCK));
}

int main(int argc, char **argv);

/*
 * A session at @rate (0: HZ) over one page of this program's text; @flags
 * 0, or PROFIL_F_NOINHERIT (mode parent: the children are not profiled).
 */
static int profile_self(unsigned int flags, unsigned int rate)
{
	static unsigned short bins[2048];
	struct profil_region r = { .buf = (unsigned long)bins,
				   .bufsize = sizeof(bins),
				   .offset = (unsigned long)main,
				   .scale = 0x10000 };
	struct profil_setup s = { .size = sizeof(s), .nr_regions = 1,
				  .region_size = sizeof(r), .flags = flags,
				  .rate = rate, .regions = (unsigned long)&r };
	int fd = open("/dev/profil", O_RDWR | O_CLOEXEC);

	if (fd < 0 || ioctl(fd, PROFIL_IOC_SETUP, &s))
		return -1;
	close(fd);
	return 0;
}

/* A task-clock event on this process: sampling at @rate, or counting. */
static int perf_self(unsigned int rate)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE,
				     .size = sizeof(a),
				     .config = PERF_COUNT_SW_TASK_CLOCK };

	if (rate)
		a.sample_period = 1000000000ULL / rate;
	return syscall(SYS_perf_event_open, &a, 0, -1, -1, 0) < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	int i, n = argc > 1 ? atoi(argv[1]) : 2000;
	const char *mode = argc > 2 ? argv[2] : "fork";
	unsigned int rate = argc > 3 ? strtoul(argv[3], NULL, 10) : 0;
	int ex = strncmp(mode, "fork", 4) != 0;	/* fork*: no exec */
	unsigned long long t0, b0;
	pid_t pid;

	if (!strcmp(mode, "session") && profile_self(0, rate))
		return 1;
	if ((!strcmp(mode, "parent") || !strcmp(mode, "forkparent")) &&
	    profile_self(PROFIL_F_NOINHERIT, rate))
		return 1;
	if (!strcmp(mode, "forktimer") && (!rate || perf_self(rate)))
		return 1;
	if (!strcmp(mode, "forkcount") && perf_self(0))
		return 1;
	b0 = busy_ns();
	t0 = ex ? tree_ns() : cpu_ns();
	for (i = 0; i < n; i++) {
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			if (ex)
				execl("/bin/true", "true", (char *)NULL);
			_exit(0);
		}
		if (waitpid(pid, NULL, 0) != pid)
			return 1;
	}
	t0 = ((ex ? tree_ns() : cpu_ns()) - t0) / n;
	printf("ns/fork %llu sys/fork %llu\n", t0, (busy_ns() - b0) / n);
	return 0;
}
