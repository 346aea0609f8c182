// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A JIT's names for its code, as perf reads them: /tmp/perf-PID.map, a
 * line "START SIZE name" for each piece of code (hexadecimal, with or
 * without 0x), written by the process itself (Node --perf-basic-prof,
 * Python 3.12 -X perf, the JVM's perf-map-agent).  A later line for the
 * same address wins, as code is freed and the address used again.
 *
 * The file is the profiled program's: read it as data that may be
 * anything.  Only a regular file is read (a FIFO would never end), at
 * most PERFMAP_MAX_BYTES of it, lines past PERFMAP_LINE_MAX and lines that
 * do not parse are left out.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profil.h"

void *report_grow(void *v, size_t *cap, size_t n, size_t size, size_t first)
{
	size_t c = *cap ? 2 * *cap : first;

	if (n < *cap)
		return v;
	v = reallocarray(v, c, size);
	if (v)
		*cap = c;
	return v;
}

#define PERFMAP_LINE_MAX	4096
#define PERFMAP_BACK		64

/* One line: [start, end) named @name, the @seq-th of the file. */
static int perfmap_line(struct perfmap *m, char *line, size_t seq)
{
	struct perfmap_sym *v;
	unsigned long long start, size;
	char *p = line, *end;

	errno = 0;
	start = strtoull(p, &end, 16);
	if (end == p || *end != ' ' || errno)
		return 0;
	p = end + 1;
	size = strtoull(p, &end, 16);
	if (end == p || *end != ' ' || errno || !size || start + size < start)
		return 0;
	p = end + 1;
	p[strcspn(p, "\n")] = '\0';
	if (!*p)
		return 0;
	v = report_grow(m->v, &m->cap, m->n, sizeof(*v), 256);
	if (!v)
		return -1;
	m->v = v;
	v = &m->v[m->n];
	v->name = strdup(p);
	if (!v->name)
		return -1;
	v->start = start;
	v->end = start + size;
	v->seq = seq;
	m->n++;
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const struct perfmap_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/**
 * perfmap_load - read @dir/perf-@pid.map into @m
 *
 * Return: 0, also when there is no such file (@m is then empty), or -1
 * with errno for a failure to allocate.
 */
int perfmap_load(struct perfmap *m, const char *dir, pid_t pid)
{
	char path[4096], *line = NULL;
	size_t cap = 0, seq = 0, bytes = 0;
	struct stat st;
	ssize_t len;
	FILE *f;
	int fd, ret = 0;

	memset(m, 0, sizeof(*m));
	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, (int)pid);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !(f = fdopen(fd, "r"))) {
		close(fd);
		return 0;
	}
	while (!ret && (len = getline(&line, &cap, f)) > 0) {
		bytes += len;
		if (bytes > PERFMAP_MAX_BYTES)
			break;
		if (len <= PERFMAP_LINE_MAX)
			ret = perfmap_line(m, line, seq++);
	}
	free(line);
	fclose(f);
	qsort(m->v, m->n, sizeof(*m->v), by_start);
	return ret;
}

/**
 * perfmap_find - the piece of code that holds @pc, or NULL
 *
 * Of those that hold it, the one the file named last.
 */
const struct perfmap_sym *perfmap_find(const struct perfmap *m, uint64_t pc)
{
	const struct perfmap_sym *best = NULL;
	size_t lo = 0, hi = m->n, mid, n;

	/* Past the last piece that starts at or below @pc. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (m->v[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/*
	 * The pieces that start there or before may hold @pc: a JIT's may
	 * overlap when code moved.  The last PERFMAP_BACK of them are looked
	 * at, enough for the maps JITs write, bounded for any other.
	 */
	for (n = 0; lo && n < PERFMAP_BACK; n++) {
		const struct perfmap_sym *s = &m->v[--lo];

		if (pc < s->end && (!best || s->seq > best->seq))
			best = s;
	}
	return best;
}

void perfmap_free(struct perfmap *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		free(m->v[i].name);
	free(m->v);
	memset(m, 0, sizeof(*m));
}
