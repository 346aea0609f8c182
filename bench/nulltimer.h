/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The null timer of make bench (bench/work.c, bench/threads.c): a
 * task-clock perf event on one thread at a rate, whose samples (8-byte
 * headers) go to a ring buffer of @pages pages that nobody reads: the
 * floor any tick-based sampler pays.  One event per thread: perf refuses
 * to map an inherited per-task one.
 */
#ifndef BENCH_NULLTIMER_H
#define BENCH_NULLTIMER_H

#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

struct null_timer {
	int fd;
	void *rb;
	unsigned long long pages;
};

/* The null timer on thread @tid (0: the caller's); exits on failure. */
static inline void null_timer_open(struct null_timer *nt, pid_t tid,
				   unsigned int rate, unsigned long long pages)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
		.config = PERF_COUNT_SW_TASK_CLOCK,
		.sample_period = 1000000000ULL / rate,
		.read_format = PERF_FORMAT_LOST,
		.exclude_hv = 1,
		.wakeup_events = 1U << 31,
	};
	unsigned long long pg = sysconf(_SC_PAGESIZE);

	nt->pages = pages;
	nt->fd = syscall(SYS_perf_event_open, &a, tid, -1, -1,
			 PERF_FLAG_FD_CLOEXEC);
	if (nt->fd < 0) {
		perror("null timer: perf_event_open");
		exit(4);
	}
	nt->rb = mmap(NULL, (pages + 1) * pg, PROT_READ | PROT_WRITE,
		      MAP_SHARED, nt->fd, 0);
	if (nt->rb == MAP_FAILED) {
		perror("null timer: mmap");
		exit(4);
	}
}

/*
 * The samples in the ring buffer; @lost gets those it had no room for,
 * the kernel's count (PERF_FORMAT_LOST), as a buffer nobody reads never
 * has room for a PERF_RECORD_LOST either.
 */
static inline unsigned long long
null_timer_samples(const struct null_timer *nt, unsigned long long *lost)
{
	const struct perf_event_mmap_page *m = nt->rb;
	unsigned long long pg = sysconf(_SC_PAGESIZE), head, off, n = 0;
	const struct perf_event_header *h;
	struct { __u64 value, lost; } rd;

	if (read(nt->fd, &rd, sizeof(rd)) != sizeof(rd)) {
		perror("null timer: read");
		exit(4);
	}
	*lost = rd.lost;
	head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE);
	for (off = 0; off < head && off < nt->pages * pg; off += h->size) {
		h = (const void *)((const char *)m + pg + off);
		if (!h->size)
			break;
		n += h->type == PERF_RECORD_SAMPLE;
	}
	return n;
}

static inline void null_timer_close(struct null_timer *nt)
{
	munmap(nt->rb, (nt->pages + 1) * sysconf(_SC_PAGESIZE));
	close(nt->fd);
}

#endif /* BENCH_NULLTIMER_H */
