/* SPDX-License-Identifier: GPL-2.0-or-later */
/* profil(1): what its run side (profil.c) and report side (report.c) share. */
#ifndef PROFIL_TOOLS_PROFIL_H
#define PROFIL_TOOLS_PROFIL_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "profile-file.h"

/* The exit status of profil(1)'s own failures, as env(1), timeout(1). */
#define PROFIL_EXIT_FAIL	125

enum report_format { FORMAT_TEXT, FORMAT_CSV, FORMAT_GMON, FORMAT_PPROF };

/* --sort: what one row of the report is, as perf report's keys. */
enum report_sort {
	SORT_SYMBOL,			/* a function (or line) of an object */
	SORT_OBJECT,			/* an object, its functions summed */
	SORT_PROCESS,			/* a process, all of it */
};

/* Rows under this share of the samples are one line in the text report. */
#define REPORT_PERCENT_LIMIT	0.5

/* One profile file the agent left, read in. */
struct pfile {
	pid_t pid;			/* from its name */
	int child;			/* an inherited arm (c<pid>...) */
	const struct profile_file_hdr *h;
	size_t size;
};

struct object;

struct report {
	/* What the run gives (or a record's RECORD_FILE, record_read()): */
	enum report_format format;
	int lines;			/* -l: source lines */
	enum report_sort sort;		/* --sort */
	int percent_limit_set;		/* --percent-limit given: */
	double percent_limit;		/* its value */
	int children;			/* --children */
	pid_t main_pid;
	const char *command;		/* the command line, for the header */
	const char *exe;		/* the program as resolved, or NULL */
	uint64_t main_cpu_ns;		/* of the main process, from wait4() */
	unsigned int rate;
	const char *perfmap_dir;	/* the JITs' perf-PID.map, or NULL: */
					/* /tmp */
	const char *debuginfo_path;	/* --debuginfo-path, or NULL: libdwfl's */
	FILE *out;
	/* What the directory holds: */
	struct pfile *files;
	size_t nr_files;
	/* The objects they name, and the files here that name their code: */
	struct object *objects;
	size_t nr_objects;
};

/*
 * The samples of a bin, as the report names them (report_walk()): all of
 * a fine bin's, or one function's share of a coarse bin's (split), at the
 * bin's first byte or the function's first in it.  The strings live until
 * the visitor returns.
 */
struct report_sample {
	const struct pfile *pf;		/* its file */
	const struct profile_file_region *region;
	uint64_t pc;
	const char *object;		/* path, "[vdso]", "[unknown]" */
	const char *file;		/* the file here that names its code */
					/* (report_objects()), or NULL */
	const char *function;		/* as the text report names it */
	const char *symbol;		/* as the object spells it (mangled) */
	uint64_t start;			/* the function's address in its */
					/* object, or 0 */
	const char *src_file;		/* with lines: the source file, */
	int src_line;			/* or NULL */
	double samples;
	int split;			/* a share of a coarse bin */
};

typedef int report_visit_fn(void *arg, const struct report_sample *s);

/*
 * report_grow - room for one more in the array @v of @n @size-byte
 * elements that has room for *@cap: @v itself, or @v moved to twice the
 * room (@first the first time), *@cap updated.  NULL when out of memory,
 * @v and *@cap as they were.
 */
void *report_grow(void *v, size_t *cap, size_t n, size_t size, size_t first);

/* report_printable - each control character of @s[0..@n) as '?'. */
void report_printable(char *s, size_t n);

/* perfmap.c: a JIT's /tmp/perf-PID.map, at most this much of it */
#define PERFMAP_MAX_BYTES	(256u << 20)

struct perfmap_sym {
	uint64_t start, end;
	size_t seq;			/* its line in the file */
	char *name;
};

struct perfmap {
	struct perfmap_sym *v;		/* by start, then line */
	size_t n, cap;
};

int perfmap_load(struct perfmap *m, const char *dir, pid_t pid);
const struct perfmap_sym *perfmap_find(const struct perfmap *m, uint64_t pc);
void perfmap_free(struct perfmap *m);

/*
 * report_add_file - the profile file @h (@size bytes, malloc()ed) of
 * process @pid appended to r->files, which owns it from then on.  0, or
 * -1 without memory (@h still the caller's).
 */
int report_add_file(struct report *r, pid_t pid, int child,
		    const struct profile_file_hdr *h, size_t size);
int report_load(struct report *r, const char *dir);
void report_objects(struct report *r);
int report_walk(struct report *r, report_visit_fn *fn, void *arg);
int report_print(struct report *r);
int report_gmon(struct report *r);
int report_pprof(struct report *r);
void report_free(struct report *r);

/*
 * profil record's directory (record.c): the profile files, and what the
 * run adds to them, in RECORD_FILE.
 */
#define RECORD_FILE		"profil.record"
#define RECORD_DEFAULT_DIR	"profil.data"

int record_prepare(const char *dir);
int record_write(const struct report *r, const char *dir);
void record_perfmaps(const struct report *r, const char *dir);
int record_read(struct report *r, const char *dir);
int record_name(const char *name);

/* profil -p (attach.c): what to attach to, and until when. */
struct attach_opts {
	pid_t pid;
	unsigned int rate;		/* Hz */
	double duration;		/* seconds; 0: until the end or *stop */
	volatile sig_atomic_t *stop;	/* set by a signal: detach */
};

/*
 * A running process's profile into @r, as profile files in memory (one
 * for each attachment: a new one when it maps more code), with its pid,
 * program, command line and rate, its objects found (report_objects());
 * 0, or -1 once said why.
 */
int attach_profile(const struct attach_opts *o, struct report *r);

#endif /* PROFIL_TOOLS_PROFIL_H */
