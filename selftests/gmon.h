/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the gmon runtime's tests: run gmon_subject (a -pg program)
 * in a directory of its own, read the gmon.out it leaves the way gprof
 * does (4.4BSD header, 16-bit bins, 64-bit arcs), and find its functions
 * in its ELF symbol table, at the link-time addresses the file uses.
 */
#ifndef PROFIL_SELFTEST_GMON_H
#define PROFIL_SELFTEST_GMON_H

#include <elf.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define GMON_HDR_SIZE	40
#define GMON_ARC_SIZE	24
#define GMON_VERSION	0x00051879

struct gmon {
	uint64_t lowpc, highpc;
	uint32_t ncnt, version, profrate, dropped;
	const uint16_t *bins;
	size_t nbins;
	const uint64_t *arcs;	/* from, self, count */
	size_t narcs;
	void *data;
	size_t len;
};

/* Read @path as gprof would; 0 or -1 (with the reason in @why). */
static inline int gmon_load(const char *path, struct gmon *g,
			    const char **why)
{
	const uint32_t *w;
	struct stat st;
	int fd;

	memset(g, 0, sizeof(*g));
	*why = "cannot open";
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || st.st_size < GMON_HDR_SIZE) {
		close(fd);
		*why = "shorter than a header";
		return -1;
	}
	g->len = st.st_size;
	g->data = malloc(g->len);
	if (!g->data || read(fd, g->data, g->len) != (ssize_t)g->len) {
		close(fd);
		*why = "cannot read";
		return -1;
	}
	close(fd);
	memcpy(&g->lowpc, g->data, 8);
	memcpy(&g->highpc, (char *)g->data + 8, 8);
	w = (const uint32_t *)((char *)g->data + 16);
	g->ncnt = w[0];
	g->version = w[1];
	g->profrate = w[2];
	g->dropped = w[3];
	*why = "bad header";
	if (g->version != GMON_VERSION || g->ncnt < GMON_HDR_SIZE ||
	    g->ncnt > g->len || g->lowpc > g->highpc)
		return -1;
	g->bins = (const uint16_t *)((char *)g->data + GMON_HDR_SIZE);
	g->nbins = (g->ncnt - GMON_HDR_SIZE) / 2;
	*why = "a partial arc record";
	if ((g->len - g->ncnt) % GMON_ARC_SIZE)
		return -1;
	g->arcs = (const uint64_t *)((char *)g->data + g->ncnt);
	g->narcs = (g->len - g->ncnt) / GMON_ARC_SIZE;
	return 0;
}

static inline void gmon_free(struct gmon *g)
{
	free(g->data);
	g->data = NULL;
}

struct fn {
	uint64_t lo, hi;	/* [lo, hi): link-time addresses */
};

/* Find function @name in the ELF file @bin; {0, 0} if it is not there. */
static inline struct fn elf_fn(const char *bin, const char *name)
{
	struct fn f = { 0, 0 };
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	const Elf64_Sym *sym;
	const char *str;
	struct stat st;
	void *map;
	size_t i, j, n;
	int fd;

	fd = open(bin, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st))
		return f;
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return f;
	eh = map;
	sh = (const Elf64_Shdr *)((char *)map + eh->e_shoff);
	for (i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_SYMTAB)
			continue;
		sym = (const Elf64_Sym *)((char *)map + sh[i].sh_offset);
		str = (char *)map + sh[sh[i].sh_link].sh_offset;
		n = sh[i].sh_size / sizeof(*sym);
		for (j = 0; j < n; j++) {
			if (ELF64_ST_TYPE(sym[j].st_info) != STT_FUNC ||
			    strcmp(str + sym[j].st_name, name))
				continue;
			f.lo = sym[j].st_value;
			f.hi = f.lo + sym[j].st_size;
		}
	}
	munmap(map, st.st_size);
	return f;
}

/* Calls from @from to @to that the file records (all arcs summed). */
static inline uint64_t gmon_calls(const struct gmon *g, struct fn from,
				  struct fn to)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < g->narcs; i++) {
		const uint64_t *a = g->arcs + 3 * i;

		if (a[0] >= from.lo && a[0] < from.hi &&
		    a[1] >= to.lo && a[1] < to.hi)
			n += a[2];
	}
	return n;
}

/* The records of arcs from @from to @to (each CPU's, race losers'). */
static inline size_t gmon_records(const struct gmon *g, struct fn from,
				  struct fn to)
{
	size_t i, n = 0;

	for (i = 0; i < g->narcs; i++) {
		const uint64_t *a = g->arcs + 3 * i;

		n += a[0] >= from.lo && a[0] < from.hi &&
		     a[1] >= to.lo && a[1] < to.hi;
	}
	return n;
}

/* Calls to @to from anywhere. */
static inline uint64_t gmon_calls_to(const struct gmon *g, struct fn to)
{
	struct fn any = { 0, UINT64_MAX };

	return gmon_calls(g, any, to);
}

/* Samples in the bins that lie in @f (gprof's 4 bytes a bin). */
/* The samples in the bins that overlap @f, of whatever width. */
static inline uint64_t gmon_samples(const struct gmon *g, struct fn f)
{
	uint64_t n = 0, pc, width;
	size_t i;

	if (!g->nbins)
		return 0;
	width = (g->highpc - g->lowpc) / g->nbins;
	for (i = 0; i < g->nbins; i++) {
		pc = g->lowpc + width * i;
		if (pc < f.hi && pc + width > f.lo)
			n += g->bins[i];
	}
	return n;
}

static inline uint64_t gmon_all_samples(const struct gmon *g)
{
	struct fn all = { 0, UINT64_MAX };

	return gmon_samples(g, all);
}

/* The directory this test program runs from, with @name appended. */
static inline void gmon_helper(char *buf, size_t len, const char *name)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	self[n > 0 ? n : 0] = '\0';
	snprintf(buf, len, "%s/%s", dirname(self), name);
}

struct run {
	pid_t pid;
	int out, err;		/* the child's stdout and stderr */
	int status;
	char stdout_text[512];
	char stderr_text[1024];
};

/*
 * Start @bin with @argv and, in its environment, the "NAME=value" strings
 * of @env (NULL-terminated, may be NULL); stdout and stderr piped back.
 */
static inline int run_start(struct run *r, const char *bin,
			    char *const argv[], char *const env[])
{
	int o[2], e[2];

	memset(r, 0, sizeof(*r));
	if (pipe2(o, O_CLOEXEC) || pipe2(e, O_CLOEXEC))
		return -1;
	fflush(NULL);
	r->pid = fork();
	if (r->pid < 0)
		return -1;
	if (!r->pid) {
		dup2(o[1], STDOUT_FILENO);
		dup2(e[1], STDERR_FILENO);
		for (; env && *env; env++)
			putenv(*env);
		execv(bin, argv);
		_exit(127);
	}
	close(o[1]);
	close(e[1]);
	r->out = o[0];
	r->err = e[0];
	return 0;
}

static inline void read_all(int fd, char *buf, size_t len)
{
	size_t n = 0;
	ssize_t k;

	while (n + 1 < len && (k = read(fd, buf + n, len - 1 - n)) > 0)
		n += k;
	buf[n] = '\0';
}

/* Read what the child printed until it ends; its wait status. */
static inline int run_finish(struct run *r)
{
	read_all(r->out, r->stdout_text, sizeof(r->stdout_text));
	read_all(r->err, r->stderr_text, sizeof(r->stderr_text));
	close(r->out);
	close(r->err);
	if (waitpid(r->pid, &r->status, 0) != r->pid)
		return -1;
	return r->status;
}

/* Run @bin with one argument and @env to its end. */
static inline int run_subject(struct run *r, const char *bin,
			      const char *mode, char *const env[])
{
	char *argv[] = { (char *)bin, (char *)mode, NULL };

	if (run_start(r, bin, argv, env))
		return -1;
	return run_finish(r);
}

#endif /* PROFIL_SELFTEST_GMON_H */
