// SPDX-License-Identifier: GPL-2.0
/*
 * bpfsample: the closest in-kernel peer of profil.ko, with libbpf.  A
 * cpu-clock perf event per CPU at RATE Hz runs a BPF program
 * (bpfsample.bpf.c) that counts the user PCs of one process in a BPF array
 * map.  Runs CMD as that process: the child waits until the program is
 * attached, then execs.  At its end, writes the bins to OUT as
 * "PC COUNT" lines (hex PC; PC 0 for the PCs outside [LO, LO + 8 KiB)),
 * which bench/work classify sorts into functions, and prints
 * "ticks_all N": the program's runs on every CPU, the target's or not.
 *
 *	bpfsample RATE LO OUT CMD [ARG...]
 *
 * Exits 3 with "not available: ..." on stderr when BPF cannot be used.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bpfsample.skel.h"

#define NBINS	4096

static int unavailable(const char *what, int err)
{
	fprintf(stderr, "bpfsample: not available: %s: %s\n", what,
		strerror(err < 0 ? -err : err));
	return 3;
}

/* The per-CPU tick counts summed. */
static unsigned long long ticks_all(int fd)
{
	int n = libbpf_num_possible_cpus(), i;
	unsigned long long sum = 0;
	__u64 *v = n > 0 ? calloc(n, sizeof(*v)) : NULL;
	__u32 k = 0;

	if (v && !bpf_map_lookup_elem(fd, &k, v))
		for (i = 0; i < n; i++)
			sum += v[i];
	free(v);
	return sum;
}

int main(int argc, char **argv)
{
	int go[2], ncpu = sysconf(_SC_NPROCESSORS_ONLN), status, fd, err, i;
	unsigned long rate = argc > 4 ? strtoul(argv[1], NULL, 0) : 0;
	struct bpf_link *links[256];
	struct bpfsample *skel;
	__u64 count;
	__u32 k;
	pid_t pid;
	FILE *out;

	if (!rate || ncpu < 1 || ncpu > 256) {
		fprintf(stderr, "usage: bpfsample RATE LO OUT CMD [ARG...]\n");
		return 2;
	}
	if (pipe(go))
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		close(go[1]);
		if (read(go[0], &count, 1) != 1)
			_exit(126);
		execvp(argv[4], argv + 4);
		_exit(127);
	}
	close(go[0]);

	skel = bpfsample__open();
	if (!skel)
		return unavailable("open", errno);
	skel->rodata->target_tgid = pid;
	skel->rodata->lo = strtoull(argv[2], NULL, 0);
	err = bpfsample__load(skel);
	if (err)
		return unavailable("load", err);
	for (i = 0; i < ncpu; i++) {
		struct perf_event_attr a = {
			.type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
			.config = PERF_COUNT_SW_CPU_CLOCK,
			.sample_period = 1000000000UL / rate,
		};

		fd = syscall(SYS_perf_event_open, &a, -1, i, -1,
			     PERF_FLAG_FD_CLOEXEC);
		if (fd < 0)
			return unavailable("perf_event_open", errno);
		links[i] = bpf_program__attach_perf_event(skel->progs.sample, fd);
		err = libbpf_get_error(links[i]);
		if (err)
			return unavailable("attach", err);
	}
	if (write(go[1], "", 1) != 1 || waitpid(pid, &status, 0) != pid)
		return 1;
	for (i = 0; i < ncpu; i++)
		bpf_link__destroy(links[i]);

	out = fopen(argv[3], "w");
	if (!out)
		return 1;
	fd = bpf_map__fd(skel->maps.bins);
	for (k = 0; k <= NBINS; k++)
		if (!bpf_map_lookup_elem(fd, &k, &count) && count)
			fprintf(out, "%llx %llu\n", k < NBINS ?
				skel->rodata->lo + 2 * k : 0ULL,
				(unsigned long long)count);
	fclose(out);
	printf("ticks_all %llu\n", ticks_all(bpf_map__fd(skel->maps.ticks)));
	bpfsample__destroy(skel);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
