// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * profil(1)'s report: read the profile files the agent's arms left (see
 * profile-file.h; a record's may come from another machine, so each is
 * checked and bounded), find each object they name here (at its path when
 * its build-ID is the one that ran, else by build-ID: object_find()),
 * name each sampled PC with elfutils' libdwfl (symbol, and with -l source
 * line, from that file at the load bias the object had), sum by process
 * and function, and print a flat profile as text or CSV, or the main
 * program's histogram as a gmon.out for gprof.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/profil.h>

#include "../lib/gmon-bsd.h"
#include "profil.h"

/*
 * The bytes of a profile file read at most: the agent's biggest image
 * (AGENT_SPARE_MAX of spare bins, and the bins of as much text) is far
 * under it, and a record from elsewhere is read no further.
 */
#define REPORT_FILE_MAX		(1ULL << 30)
#define REPORT_WHY_MAX		4096	/* bytes of an e<pid>.txt said */

/* Samples of one function (and source line) in one object and process. */
struct row {
	pid_t pid;		/* 0: every process */
	const char *object;	/* path, or "[vdso]", "[unknown]" */
	const char *function;
	uint64_t start;		/* the function's address in its object, or 0 */
	const char *source;	/* "file:line", or "" */
	double samples;		/* a share of a coarse bin is a fraction */
	int split;		/* some of them shares of coarse bins */
};

struct rows {
	struct row *v;
	size_t n, cap;
	char **strs;		/* what the rows' strings point into */
	size_t nr_strs, cap_strs;
};

/* What one process's files say of it. */
struct proc {
	pid_t pid;
	const char *exe;
	unsigned int rate, min_shift, max_shift, files;
	uint64_t total, nowhere;
	int ended;
	uint64_t cpu_start_ns, cpu_ns, saturated, missed;
};

/* --- reading the files ----------------------------------------------- */

static const struct profile_file_region *
file_regions(const struct profile_file_hdr *h)
{
	return (const void *)((const char *)h + h->hdr_size);
}

static const char *file_name(const struct profile_file_hdr *h,
			     const struct profile_file_region *fr)
{
	return (const char *)h + h->names_off + fr->name_off;
}

static const uint32_t *file_bins(const struct profile_file_hdr *h,
				 const struct profile_file_region *fr)
{
	return (const void *)((const char *)h + fr->bins_off);
}

/* A PC log: its count, and the PCs kept of them (*@n). */
static const uint64_t *file_log(const struct profile_file_hdr *h,
				const struct profile_file_region *fr,
				uint64_t *count, uint64_t *n)
{
	const uint64_t *log = (const void *)((const char *)h + fr->bins_off);

	*count = log[0];
	*n = *count < fr->nr_bins - 1 ? *count : fr->nr_bins - 1;
	return log + 1;
}

/*
 * A region's bins are in the file, its name in the names, its build-ID in
 * its field, and its bins cover [start, end) exactly as the agent sized
 * them (so that a bin's address is in the region: gmon's sums rely on it).
 * The nowhere bin has no range; a PC log, a count and a PC at least.
 */
static int region_valid(const struct profile_file_hdr *h,
			const struct profile_file_region *fr, size_t size)
{
	uint64_t len = fr->end - fr->start;

	if (fr->kind == PROFILE_REGION_PCLOG)
		return fr->bins_off % sizeof(uint64_t) == 0 &&
		       fr->nr_bins >= 2 && fr->bins_off <= size &&
		       (size - fr->bins_off) / sizeof(uint64_t) >= fr->nr_bins &&
		       fr->name_off < h->names_size;
	if (fr->bins_off % sizeof(uint32_t) || fr->shift >= 32 ||
	    fr->bins_off > size ||
	    (size - fr->bins_off) / sizeof(uint32_t) < fr->nr_bins ||
	    fr->name_off >= h->names_size ||
	    fr->build_id_size > PROFILE_BUILD_ID_MAX ||
	    fr->kind > PROFILE_REGION_NOWHERE)
		return 0;
	if (fr->kind == PROFILE_REGION_NOWHERE)
		return fr->nr_bins <= 1;
	return fr->end >= fr->start &&
	       fr->nr_bins == (len >> fr->shift) + !!(len & ((1ULL << fr->shift) - 1));
}

/* Whether @size bytes at @h are a whole profile file of this build. */
static int file_valid(const struct profile_file_hdr *h, size_t size)
{
	const struct profile_file_region *fr = file_regions(h);
	uint32_t i;

	if (size < sizeof(*h) || memcmp(h->magic, PROFILE_FILE_MAGIC, 8) ||
	    h->hdr_size != sizeof(*h) || h->region_size != sizeof(*fr) ||
	    h->size != size || h->nr_regions > (size - sizeof(*h)) / sizeof(*fr) ||
	    h->nr_regions > PROFIL_MAX_REGIONS || h->nr_self > PROFILE_SELF_MAX ||
	    h->names_off > size || size - h->names_off < h->names_size ||
	    !h->names_size || ((const char *)h)[h->names_off + h->names_size - 1])
		return 0;
	for (i = 0; i < h->nr_regions; i++)
		if (!region_valid(h, &fr[i], size))
			return 0;
	return 1;
}

/*
 * The regular file @name of @dir, its first @max bytes at most, in @size,
 * NUL-terminated; NULL with errno when it is not one, or is empty (a
 * symbolic link, a FIFO: a record from elsewhere may hold anything).
 */
static void *read_file(int dir, const char *name, size_t *size, uint64_t max)
{
	struct stat st;
	char *buf = NULL;
	size_t n = 0, want = 0;
	ssize_t k;
	int fd;

	/* Not even opened unless regular: opening a device may do things. */
	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return NULL;
	}
	fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return NULL;
	}
	want = (uint64_t)st.st_size < max ? (size_t)st.st_size : max;
	errno = EINVAL;
	if (want)
		buf = malloc(want + 1);
	while (buf && n < want && (k = read(fd, buf + n, want - n)) > 0)
		n += k;
	close(fd);
	*size = n;
	if (buf)
		buf[n] = '\0';
	return buf;
}

void report_printable(char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < ' ' || s[i] == 0x7f)
			s[i] = '?';
}

/*
 * e<pid>.txt: why the agent of a process did not arm, its first
 * REPORT_WHY_MAX bytes, one line, anything but printable text shown '?'.
 */
static void report_why(struct report *r, int dir, const char *name, pid_t pid)
{
	size_t size;
	char *text;

	if (!r->children && pid != r->main_pid)
		return;
	text = read_file(dir, name, &size, REPORT_WHY_MAX);
	if (!text)
		return;
	size = strcspn(text, "\n");
	report_printable(text, size);
	fprintf(stderr, "profil: no profile of pid %d: %.*s\n", (int)pid,
		(int)size, text);
	free(text);
}

static int report_add(struct report *r, int dir, const char *name, pid_t pid,
		      int child)
{
	size_t size;
	void *data = read_file(dir, name, &size, REPORT_FILE_MAX);

	if (!data && errno != ENOMEM) {
		fprintf(stderr, "profil: %s: not a profile file of this profil\n",
			name);
		return 0;
	}
	if (!data)
		return -1;
	if (!file_valid(data, size)) {
		fprintf(stderr, "profil: %s: not a profile file of this profil\n", name);
		free(data);
		return 0;
	}
	if (report_add_file(r, pid, child, data, size)) {
		free(data);
		return -1;
	}
	return 0;
}

int report_add_file(struct report *r, pid_t pid, int child,
		    const struct profile_file_hdr *h, size_t size)
{
	struct pfile *f = realloc(r->files, (r->nr_files + 1) * sizeof(*f));

	if (!f)
		return -1;
	r->files = f;
	f[r->nr_files++] = (struct pfile){ .pid = pid, .child = child,
					   .h = h, .size = size };
	return 0;
}

/* --- finding the objects ----------------------------------------------- */

/*
 * An object the files name (by path and build-ID), and the file here that
 * names its code (report_objects()).
 */
struct object {
	const char *path;		/* as recorded, in a file of r->files */
	uint32_t build_id_size;		/* 0: the object had none */
	uint8_t build_id[PROFILE_BUILD_ID_MAX];
	char *file;			/* the file here, or NULL: none */
};

/* The directories libdwfl looks in by build-ID, Dwfl_Callbacks' form. */
static char *sym_debuginfo_path;

/* libdwfl's own default (DEFAULT_DEBUGINFO_PATH) when none is given. */
#define REPORT_DEBUGINFO_PATH	":.debug:/usr/lib/debug"

static const Dwfl_Callbacks sym_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &sym_debuginfo_path,
};

/*
 * Whether the file at @path is object @o: 1 when it is a regular file of
 * @o's build-ID (any regular file, for an object without one), 0 when it
 * is another file, -1 when there is no regular file there.  Never opens
 * anything but a regular file for reading (a path from a record may name
 * a FIFO, a device).
 */
static int object_is(const char *path, const struct object *o)
{
	const void *id = NULL;
	struct stat st;
	int fd, same;
	ssize_t n;
	Elf *e;

	/* Not even opened unless regular: opening a device may do things. */
	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return -1;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	n = e ? dwelf_elf_gnu_build_id(e, &id) : -1;
	same = !o->build_id_size ||
	       (n == (ssize_t)o->build_id_size && !memcmp(id, o->build_id, n));
	elf_end(e);
	close(fd);
	return same;
}

/*
 * The file of @o's build-ID where libdwfl looks for one: a .build-id/
 * directory of the debuginfo path (.build-id/xx/yyyy..., the object
 * itself), or a debuginfod server if DEBUGINFOD_URLS names one; checked
 * by libdwfl.  NULL if none.
 */
static char *object_by_build_id(const struct object *o)
{
	const char *main_file = NULL;
	Dwfl_Module *m;
	char *found = NULL;
	GElf_Addr bias;
	Dwfl *d = dwfl_begin(&sym_callbacks);

	if (!d)
		return NULL;
	dwfl_report_begin(d);
	m = dwfl_report_module(d, o->path, 0, 1);
	if (m && dwfl_module_report_build_id(m, o->build_id, o->build_id_size, 0))
		m = NULL;
	dwfl_report_end(d, NULL, NULL);
	if (m && dwfl_module_getelf(m, &bias))
		dwfl_module_info(m, NULL, NULL, NULL, NULL, NULL, &main_file, NULL);
	if (main_file && object_is(main_file, o) == 1)
		found = strdup(main_file);
	dwfl_end(d);
	return found;
}

/*
 * @o's separate debug file, in the .build-id/ directories libdwfl looks
 * in for one (.build-id/xx/yyyy....debug under each absolute directory of
 * the debuginfo path): its symbol table names the object's code when the
 * object itself is nowhere.  NULL if none.
 */
static char *object_debug_file(const struct object *o)
{
	char *path = strdup(sym_debuginfo_path ?: REPORT_DEBUGINFO_PATH);
	char *dirs = path, *dir, *name, hex[2 * PROFILE_BUILD_ID_MAX + 1];
	char *found = NULL;
	uint32_t i;

	if (!path || o->build_id_size < 2)
		goto out;
	for (i = 0; i < o->build_id_size; i++)
		sprintf(hex + 2 * i, "%02x", o->build_id[i]);
	while (!found && (dir = strsep(&dirs, ":"))) {
		if (dir[0] == '+' || dir[0] == '-')
			dir++;
		if (dir[0] != '/')
			continue;
		if (asprintf(&name, "%s/.build-id/%.2s/%s.debug", dir, hex,
			     hex + 2) < 0)
			break;
		if (object_is(name, o) == 1)
			found = name;
		else
			free(name);
	}
out:
	free(path);
	return found;
}

/* @o's build-ID in hexadecimal, for a message. */
static const char *object_hex(const struct object *o)
{
	static char hex[2 * PROFILE_BUILD_ID_MAX + 1];
	uint32_t i;

	for (i = 0; i < o->build_id_size; i++)
		sprintf(hex + 2 * i, "%02x", o->build_id[i]);
	hex[2 * i] = '\0';
	return hex;
}

/*
 * The file that names @o's code: the file at its path when that is the
 * object that ran; else one of its build-ID (object_by_build_id()), else
 * its separate debug file (object_debug_file()); else, said, the other
 * file at its path (rebuilt, upgraded, replaced while the program ran:
 * its names may be wrong), or none (its code is [unknown], under the
 * object's path still).
 */
static void object_find(struct object *o)
{
	int at_path = object_is(o->path, o);

	if (at_path == 1) {
		o->file = strdup(o->path);
		return;
	}
	if (o->build_id_size) {
		o->file = object_by_build_id(o) ?: object_debug_file(o);
		if (o->file)
			return;
	}
	if (at_path == 0) {
		o->file = strdup(o->path);
		fprintf(stderr, "profil: %s is not the file that ran (its build-ID differs, and no file of build-ID %s was found): the names of its code may be wrong\n",
			o->path, object_hex(o));
	} else if (o->build_id_size) {
		fprintf(stderr, "profil: %s is not the file that ran (it is gone, and no file of build-ID %s was found): its code is [unknown]\n",
			o->path, object_hex(o));
	} else {
		fprintf(stderr, "profil: %s is gone: its code is [unknown]\n",
			o->path);
	}
}

/*
 * The object of region @fr of @h, found (object_find(), once for each
 * path and build-ID) the first time it is asked for; NULL when it is no
 * object, or without memory.
 */
static const struct object *object_of(struct report *r,
				      const struct profile_file_hdr *h,
				      const struct profile_file_region *fr)
{
	const char *path = file_name(h, fr);
	struct object *o;
	size_t i;

	if (fr->kind != PROFILE_REGION_EXE && fr->kind != PROFILE_REGION_LIB)
		return NULL;
	for (i = 0; i < r->nr_objects; i++) {
		o = &r->objects[i];
		if (o->build_id_size == fr->build_id_size &&
		    !memcmp(o->build_id, fr->build_id, fr->build_id_size) &&
		    !strcmp(o->path, path))
			return o;
	}
	o = realloc(r->objects, (r->nr_objects + 1) * sizeof(*o));
	if (!o)
		return NULL;
	r->objects = o;
	o += r->nr_objects++;
	o->path = path;
	o->build_id_size = fr->build_id_size;
	memcpy(o->build_id, fr->build_id, fr->build_id_size);
	o->file = NULL;
	sym_debuginfo_path = (char *)r->debuginfo_path;
	object_find(o);
	return o;
}

/*
 * Find every object of r->files (object_of()) now, so that what is said of
 * them comes before the report.
 */
void report_objects(struct report *r)
{
	const struct profile_file_region *fr;
	size_t i;
	uint32_t j;

	for (i = 0; i < r->nr_files; i++) {
		fr = file_regions(r->files[i].h);
		for (j = 0; j < r->files[i].h->nr_regions; j++)
			object_of(r, r->files[i].h, &fr[j]);
	}
}

/* Every file of @dir: profiles in r->files, the agents' complaints said. */
int report_load(struct report *r, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char kind, end[8];
	int pid, ret = 0;

	if (!d)
		return -1;
	while (!ret && (e = readdir(d))) {
		/* pid 0 is the rows' "every process" (struct row) */
		if (sscanf(e->d_name, "e%d.tx%1s", &pid, end) == 2 && pid > 0)
			report_why(r, dirfd(d), e->d_name, pid);
		else if (sscanf(e->d_name, "%c%d.", &kind, &pid) == 2 &&
			 (kind == 'p' || kind == 'c') && pid > 0 &&
			 strstr(e->d_name, ".prof"))
			ret = report_add(r, dirfd(d), e->d_name, pid, kind == 'c');
	}
	closedir(d);
	if (!ret)
		report_objects(r);
	return ret;
}

void report_free(struct report *r)
{
	size_t i;

	for (i = 0; i < r->nr_objects; i++)
		free(r->objects[i].file);
	free(r->objects);
	r->objects = NULL;
	r->nr_objects = 0;
	for (i = 0; i < r->nr_files; i++)
		free((void *)r->files[i].h);
	free(r->files);
	r->files = NULL;
	r->nr_files = 0;
}

/* --- naming the PCs -------------------------------------------------- */

/*
 * A libdwfl session with the file's objects at the biases they had, each
 * from the file here that names its code (object_of()), under its
 * recorded path.
 */
static Dwfl *sym_open(struct report *r, const struct profile_file_hdr *h)
{
	const struct profile_file_region *fr = file_regions(h);
	const struct object *o;
	Dwfl *d;
	uint32_t i, j;

	sym_debuginfo_path = (char *)r->debuginfo_path;
	d = dwfl_begin(&sym_callbacks);
	if (!d)
		return NULL;
	dwfl_report_begin(d);
	for (i = 0; i < h->nr_regions; i++) {
		const char *path = file_name(h, &fr[i]);

		o = object_of(r, h, &fr[i]);
		if (!o || !o->file)
			continue;
		for (j = 0; j < i; j++)	/* an object with two text segments */
			if (fr[j].bias == fr[i].bias &&
			    !strcmp(file_name(h, &fr[j]), path))
				break;
		if (j == i)
			dwfl_report_elf(d, path, o->file, -1, fr[i].bias, false);
	}
	dwfl_report_end(d, NULL, NULL);
	return d;
}

/* libstdc++'s demangler (the Itanium C++ ABI's), as elfutils' tools use it. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/*
 * A C++ (Itanium ABI) symbol as its source spells it, "ns::f(int, long)";
 * any other name as it is.  The result lives until the next call.
 */
static const char *demangle(const char *name)
{
	static char *buf;
	static size_t len;
	char *s;
	int status;

	if (strncmp(name, "_Z", 2))
		return name;
	s = __cxa_demangle(name, buf, &len, &status);
	if (!s || status)
		return name;
	buf = s;
	return s;
}

/*
 * Name @s->pc by the symbols of @d: its function (demangled, and as the
 * object spells it), the function's address in its object (as nm(1)
 * gives it: its PC less the object's @bias), and with @src its source
 * file and line.
 */
static void sym_name(Dwfl *d, uint64_t bias, int src, struct report_sample *s)
{
	Dwfl_Module *m = d ? dwfl_addrmodule(d, s->pc) : NULL;
	const char *name;
	GElf_Off off;
	GElf_Sym sym;
	Dwfl_Line *l;

	s->function = s->symbol = "[unknown]";
	s->start = 0;
	s->src_file = NULL;
	s->src_line = 0;
	if (!m)
		return;
	name = dwfl_module_addrinfo(m, s->pc, &off, &sym, NULL, NULL, NULL);
	if (name) {
		s->start = s->pc - off - bias;
		s->symbol = name;
		s->function = demangle(name);
	}
	l = src ? dwfl_module_getsrc(m, s->pc) : NULL;
	if (l)
		s->src_file = dwfl_lineinfo(l, NULL, &s->src_line, NULL, NULL,
					    NULL);
}

/* Bins of at most this many bytes are one function's, and have a line. */
#define REPORT_FINE_SHIFT	2

/* The bytes [from, to) of a coarse bin that function @name covers. */
struct piece {
	uint64_t from, to;
	uint64_t start;		/* where the function starts */
	const char *name;
};

/*
 * The functions a coarse bin at [@a, @end) covers, as pieces in @piece (up
 * to @max), by the symbols of @d: the bytes of each.
 */
static size_t bin_pieces(Dwfl *d, uint64_t a, uint64_t end,
			 struct piece *piece, size_t max)
{
	Dwfl_Module *m = d ? dwfl_addrmodule(d, a) : NULL;
	size_t n = 0;
	GElf_Off off;
	GElf_Sym sym;

	while (m && a < end && n < max) {
		const char *name = dwfl_module_addrinfo(m, a, &off, &sym, NULL,
							NULL, NULL);

		if (!name || off >= sym.st_size) {
			a = (a | 15) + 1;	/* padding: on to the next 16 */
			continue;
		}
		piece[n].from = a;
		piece[n].start = a - off;
		piece[n].to = a - off + sym.st_size < end ? a - off + sym.st_size : end;
		piece[n].name = name;
		a = piece[n++].to;
	}
	return n;
}

/* A logged PC that another arm of its process's image has a region for. */
struct adopted {
	size_t file;			/* in r->files */
	const struct profile_file_region *fr;
	uint64_t pc;
	double samples;
	int split;
};

struct adoptions {
	struct adopted *v;
	size_t n, cap;
};

/* What report_walk() calls, for the files of one process. */
struct walk {
	struct report *r;
	const struct pfile *f;
	int src;			/* source lines */
	const char *maps;		/* where the JITs' perf-PID.map are */
	struct adoptions *adopt;	/* the PCs pclog_walk() left to */
					/* another file's regions */
	report_visit_fn *fn;
	void *arg;
};

/*
 * A coarse bin's samples shared among the functions it covers in
 * proportion to their bytes in it (gprof's rule), each share at the
 * function's first byte in the bin; the samples say so (split).  A bin no
 * symbol covers goes to the name at its first byte, as a fine one.
 */
static int coarse_bin_walk(const struct walk *w, struct report_sample *s,
			   Dwfl *d, unsigned int shift, uint64_t bias)
{
	struct piece piece[64];
	uint64_t bytes = 0;
	double samples = s->samples;
	size_t i, n = bin_pieces(d, s->pc, s->pc + (1ULL << shift), piece, 64);
	int ret = 0;

	for (i = 0; i < n; i++)
		bytes += piece[i].to - piece[i].from;
	s->split = 1;
	if (!bytes) {
		sym_name(d, bias, 0, s);
		return w->fn(w->arg, s);
	}
	for (i = 0; i < n && !ret; i++) {
		s->pc = piece[i].from;
		s->symbol = piece[i].name;
		s->function = demangle(piece[i].name);
		s->start = piece[i].start - bias;
		s->samples = samples * (piece[i].to - piece[i].from) / bytes;
		ret = w->fn(w->arg, s);
	}
	return ret;
}

/* The main program's region of @h, or NULL. */
static const struct profile_file_region *
file_exe(const struct profile_file_hdr *h)
{
	const struct profile_file_region *fr = file_regions(h);
	uint32_t i;

	for (i = 0; i < h->nr_regions; i++)
		if (fr[i].kind == PROFILE_REGION_EXE)
			return &fr[i];
	return NULL;
}

/*
 * @a and @b are arms of one image of one process: the same pid and the
 * same program at the same place (an exec maps it anew, and the kernel's
 * ASLR moves it unless it is not PIE).
 */
static int same_image(const struct profile_file_hdr *a,
		      const struct profile_file_hdr *b)
{
	const struct profile_file_region *x = file_exe(a), *y = file_exe(b);

	return a->pid == b->pid && x && y && x->start == y->start &&
	       !strcmp(file_name(a, x), file_name(b, y));
}

/*
 * The region that another arm of @f's image has for @pc, its file in
 * *@file; NULL if none has.  The agent arms over the program and the
 * linker before the libraries are mapped, and the code of a library
 * loaded later, or of one dlclose() removed, is in no region of the other
 * arms: the PCs the log kept there are named from the arm that knew it.
 */
static const struct profile_file_region *
pc_home(const struct report *r, const struct pfile *f, uint64_t pc,
	size_t *file)
{
	const struct profile_file_region *fr;
	size_t i;
	uint32_t j;

	for (i = 0; i < r->nr_files; i++) {
		const struct profile_file_hdr *h = r->files[i].h;

		if (&r->files[i] == f || !same_image(f->h, h))
			continue;
		fr = file_regions(h);
		for (j = 0; j < h->nr_regions; j++)
			if (fr[j].kind != PROFILE_REGION_NOWHERE &&
			    fr[j].kind != PROFILE_REGION_PCLOG &&
			    fr[j].start <= pc && pc < fr[j].end) {
				*file = i;
				return &fr[j];
			}
	}
	return NULL;
}

/* Whether @pc is in the agent's own code, as @h says (profile-file.h). */
static int pc_self(const struct profile_file_hdr *h, uint64_t pc)
{
	uint32_t i;

	for (i = 0; i < h->nr_self; i++)
		if (h->self[i][0] <= pc && pc < h->self[i][1])
			return 1;
	return 0;
}

/* @s (a logged PC) to be named from region @fr of file @file. */
static int adopt(struct adoptions *a, size_t file,
		 const struct profile_file_region *fr,
		 const struct report_sample *s)
{
	struct adopted *v;

	v = report_grow(a->v, &a->cap, a->n, sizeof(*v), 256);
	if (!v)
		return -1;
	a->v = v;
	a->v[a->n++] = (struct adopted){ .file = file, .fr = fr, .pc = s->pc,
					 .samples = s->samples,
					 .split = s->split };
	return 0;
}

/*
 * The PCs in no region: "[profil]" in the agent's own code, named from
 * the JIT's map of its code when the process wrote one, left to the
 * region another arm of the process has for them (pc_home()), else
 * "[in no known code]".  Each PC kept stands
 * for an equal share of the samples counted (all of them but when the log
 * filled).
 */
static int pclog_walk(const struct walk *w, const struct profile_file_region *fr)
{
	struct report_sample s = { .pf = w->f, .region = fr };
	const struct profile_file_region *home;
	const struct perfmap_sym *sym;
	uint64_t count, n, i;
	const uint64_t *pcs = file_log(w->f->h, fr, &count, &n);
	struct perfmap m;
	size_t file;
	int ret = 0;

	/* A log has room for a PC (region_valid()): samples, then PCs. */
	if (!count)
		return 0;
	if (perfmap_load(&m, w->maps, w->f->h->pid))
		return -1;
	s.samples = (double)count / n;
	s.split = count != n;
	for (i = 0; i < n && !ret; i++) {
		s.pc = pcs[i];
		if (s.pc && pc_self(w->f->h, s.pc)) {
			s.object = s.function = s.symbol = "[profil]";
			s.start = 0;
			ret = w->fn(w->arg, &s);
			continue;
		}
		sym = s.pc ? perfmap_find(&m, s.pc) : NULL;
		home = !sym && s.pc ? pc_home(w->r, w->f, s.pc, &file) : NULL;
		if (home) {
			ret = adopt(w->adopt, file, home, &s);
			continue;
		}
		s.object = sym ? "[jit]" : "[unknown]";
		s.function = s.symbol = sym ? sym->name : "[in no known code]";
		s.start = sym ? sym->start : 0;
		ret = w->fn(w->arg, &s);
	}
	perfmap_free(&m);
	return ret;
}

static int by_file(const void *a, const void *b)
{
	const struct adopted *x = a, *y = b;

	return x->file < y->file ? -1 : x->file > y->file;
}

/* The adopted PCs, each named exactly (its PC is known) in its region. */
static int adopted_walk(struct walk *w)
{
	struct adoptions *a = w->adopt;
	struct report_sample s;
	const struct object *o;
	Dwfl *d = NULL;
	size_t i;
	int ret = 0;

	qsort(a->v, a->n, sizeof(*a->v), by_file);
	for (i = 0; i < a->n && !ret; i++) {
		const struct adopted *v = &a->v[i];

		if (!i || v->file != a->v[i - 1].file) {
			if (d)
				dwfl_end(d);
			w->f = &w->r->files[v->file];
			d = sym_open(w->r, w->f->h);
		}
		o = object_of(w->r, w->f->h, v->fr);
		s = (struct report_sample){ .pf = w->f, .region = v->fr,
					    .pc = v->pc, .samples = v->samples,
					    .split = v->split,
					    .file = o ? o->file : NULL };
		s.object = file_name(w->f->h, v->fr);
		if (v->fr->kind == PROFILE_REGION_VDSO)
			s.function = s.symbol = "[vdso]";
		else
			sym_name(d, v->fr->bias, w->src, &s);
		ret = w->fn(w->arg, &s);
	}
	if (d)
		dwfl_end(d);
	return ret;
}

static int region_walk(const struct walk *w, Dwfl *d,
		       const struct profile_file_region *fr)
{
	const struct profile_file_hdr *h = w->f->h;
	const uint32_t *bins = file_bins(h, fr);
	const struct object *o = object_of(w->r, h, fr);
	struct report_sample s = { .pf = w->f, .region = fr,
				   .file = o ? o->file : NULL };
	uint32_t i;
	int ret = 0;

	if (fr->kind == PROFILE_REGION_PCLOG)
		return pclog_walk(w, fr);
	for (i = 0; i < fr->nr_bins && !ret; i++) {
		if (!bins[i])
			continue;
		s.pc = fr->start + ((uint64_t)i << fr->shift);
		s.object = file_name(h, fr);
		s.samples = bins[i];
		s.split = 0;
		s.start = 0;
		s.src_file = NULL;
		s.src_line = 0;
		if (fr->kind == PROFILE_REGION_NOWHERE) {
			s.object = "[unknown]";
			s.function = s.symbol = "[in no known code]";
		} else if (fr->kind == PROFILE_REGION_VDSO) {
			s.function = s.symbol = "[vdso]";
		} else if (fr->shift > REPORT_FINE_SHIFT) {
			ret = coarse_bin_walk(w, &s, d, fr->shift, fr->bias);
			continue;
		} else {
			sym_name(d, fr->bias, w->src, &s);
		}
		ret = w->fn(w->arg, &s);
	}
	return ret;
}

/*
 * Every bin with samples of every file of @r, named as the report names
 * it (with r->lines, its source line too), to @fn: 0, or what @fn
 * returned that was not.
 */
int report_walk(struct report *r, report_visit_fn *fn, void *arg)
{
	const struct profile_file_region *fr;
	struct adoptions adopted = { 0 };
	struct walk w = { .r = r, .src = r->lines, .fn = fn, .arg = arg,
			  .maps = r->perfmap_dir ? r->perfmap_dir : "/tmp",
			  .adopt = &adopted };
	size_t i;
	uint32_t j;
	int ret = 0;
	Dwfl *d;

	for (i = 0; i < r->nr_files && !ret; i++) {
		w.f = &r->files[i];
		fr = file_regions(w.f->h);
		d = sym_open(r, w.f->h);
		for (j = 0; j < w.f->h->nr_regions && !ret; j++)
			ret = region_walk(&w, d, &fr[j]);
		if (d)
			dwfl_end(d);
	}
	if (!ret)
		ret = adopted_walk(&w);
	free(adopted.v);
	return ret;
}

/* --- rows -------------------------------------------------------------- */

static const char *keep(struct rows *rs, const char *s)
{
	char **v;

	v = report_grow(rs->strs, &rs->cap_strs, rs->nr_strs, sizeof(*v), 256);
	if (!v)
		return NULL;
	rs->strs = v;
	return rs->strs[rs->nr_strs++] = strdup(s);
}

/* @k's samples into @into, a row of the same key. */
static void row_absorb(struct row *into, const struct row *k)
{
	into->samples += k->samples;
	into->split |= k->split;
}

static int same_key(const struct row *a, const struct row *b)
{
	return a->pid == b->pid && !strcmp(a->object, b->object) &&
	       a->start == b->start && !strcmp(a->function, b->function) &&
	       !strcmp(a->source, b->source);
}

/* Add @samples to the row of @k; consecutive bins of a function merge. */
static int rows_add(struct rows *rs, const struct row *k)
{
	struct row *v;

	if (rs->n && same_key(&rs->v[rs->n - 1], k)) {
		row_absorb(&rs->v[rs->n - 1], k);
		return 0;
	}
	v = report_grow(rs->v, &rs->cap, rs->n, sizeof(*v), 1024);
	if (!v)
		return -1;
	rs->v = v;
	v = &rs->v[rs->n];
	*v = *k;
	v->function = keep(rs, k->function);
	v->source = keep(rs, k->source);
	if (!v->function || !v->source)
		return -1;
	rs->n++;
	return 0;
}

/* A named sample into the rows of its process. */
static int row_visit(void *arg, const struct report_sample *s)
{
	struct row k = { .pid = s->pf->pid, .object = s->object,
			 .function = s->function, .start = s->start,
			 .source = "", .samples = s->samples,
			 .split = s->split };
	char line[256];

	if (s->src_file) {
		snprintf(line, sizeof(line), "%s:%d", basename(s->src_file),
			 s->src_line);
		k.source = line;
	}
	return rows_add(arg, &k);
}

static int by_key(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int c;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	c = strcmp(x->object, y->object);
	if (!c)
		c = strcmp(x->function, y->function);
	if (!c && x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return c ?: strcmp(x->source, y->source);
}

/* Sort by key and sum the rows of one key. */
static void rows_merge(struct rows *rs)
{
	size_t i, n = 0;

	qsort(rs->v, rs->n, sizeof(*rs->v), by_key);
	for (i = 0; i < rs->n; i++) {
		if (n && same_key(&rs->v[n - 1], &rs->v[i]))
			row_absorb(&rs->v[n - 1], &rs->v[i]);
		else
			rs->v[n++] = rs->v[i];
	}
	rs->n = n;
}

/* The rows of every process again, as pid 0: all of them together. */
static int rows_all(struct rows *rs)
{
	size_t i, n = rs->n;

	for (i = 0; i < n; i++) {
		struct row k = rs->v[i];

		k.pid = 0;
		if (rows_add(rs, &k))
			return -1;
	}
	rows_merge(rs);
	return 0;
}

static void rows_free(struct rows *rs)
{
	size_t i;

	for (i = 0; i < rs->nr_strs; i++)
		free(rs->strs[i]);
	free(rs->strs);
	free(rs->v);
}

/* --- processes ------------------------------------------------------- */

static struct proc *proc_of(struct proc *p, size_t *n, pid_t pid)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (p[i].pid == pid)
			return &p[i];
	memset(&p[i], 0, sizeof(p[i]));
	p[i].pid = pid;
	p[i].min_shift = 31;
	p[i].cpu_start_ns = UINT64_MAX;
	(*n)++;
	return &p[i];
}

/* The samples of a PC log that no other arm of the process names. */
static uint64_t log_nowhere(const struct report *r, const struct pfile *f,
			    const struct profile_file_region *fr)
{
	uint64_t count, n, i, homed = 0;
	const uint64_t *pcs = file_log(f->h, fr, &count, &n);
	size_t file;

	for (i = 0; i < n; i++)
		homed += pcs[i] && (pc_self(f->h, pcs[i]) ||
				    pc_home(r, f, pcs[i], &file));
	return n ? count - (uint64_t)((double)count * homed / n + 0.5) : count;
}

static void proc_add(const struct report *r, struct proc *p,
		     const struct pfile *f)
{
	const struct profile_file_hdr *h = f->h;
	const struct profile_file_region *fr = file_regions(h);
	uint32_t i, j;

	p->rate = h->rate;
	p->files++;
	if (h->cpu_start_ns < p->cpu_start_ns)
		p->cpu_start_ns = h->cpu_start_ns;
	for (i = 0; i < h->nr_regions; i++) {
		const uint32_t *bins = file_bins(h, &fr[i]);
		uint64_t count, n;

		if (fr[i].kind == PROFILE_REGION_PCLOG) {
			file_log(h, &fr[i], &count, &n);
			p->total += count;
			p->nowhere += log_nowhere(r, f, &fr[i]);
			continue;
		}
		if (fr[i].kind == PROFILE_REGION_EXE)
			p->exe = file_name(h, &fr[i]);
		if (fr[i].kind != PROFILE_REGION_NOWHERE) {
			if (fr[i].shift > p->max_shift)
				p->max_shift = fr[i].shift;
			if (fr[i].shift < p->min_shift)
				p->min_shift = fr[i].shift;
		}
		for (j = 0; j < fr[i].nr_bins; j++) {
			p->total += bins[j];
			if (fr[i].kind == PROFILE_REGION_NOWHERE)
				p->nowhere += bins[j];
		}
	}
	if (h->flags & PROFILE_FILE_ENDED) {
		p->ended = 1;
		p->cpu_ns = h->cpu_ns;
		p->saturated = h->saturated;
		p->missed = h->missed;
	}
}

/* The processes of r->files, the main one first, then by pid. */
static struct proc *procs_of(struct report *r, size_t *n)
{
	struct proc *p = calloc(r->nr_files + 1, sizeof(*p));
	size_t i;

	*n = 0;
	if (!p)
		return NULL;
	proc_of(p, n, r->main_pid);
	for (i = 0; i < r->nr_files; i++)
		proc_add(r, proc_of(p, n, r->files[i].pid), &r->files[i]);
	if (!p[0].ended && r->main_cpu_ns) {
		p[0].cpu_ns = r->main_cpu_ns;
		p[0].ended = 1;
	}
	return p;
}

/* --- printing ---------------------------------------------------------- */

static void print_csv_field(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

/*
 * The process's line: its CPU time, the part of it after the agent armed
 * (sampled), and what that is worth at the rate against what was counted.
 */
static void print_header(const struct report *r, const struct proc *p)
{
	double sampled = 0;
	FILE *out = r->out;

	if (p->ended && p->cpu_start_ns <= p->cpu_ns)
		sampled = (p->cpu_ns - p->cpu_start_ns) / 1e9;
	fprintf(out, "# pid %d %s: %u Hz", (int)p->pid, p->exe ?: "?", p->rate);
	if (p->ended)
		fprintf(out, ", CPU %.3f s (%.3f s sampled), %llu samples (%.0f expected)",
			p->cpu_ns / 1e9, sampled, (unsigned long long)p->total,
			sampled * p->rate);
	else
		fprintf(out, ", %llu samples", (unsigned long long)p->total);
	fprintf(out, "; lost: %llu saturated, %llu missed; %llu in no known code; bins of %u",
		(unsigned long long)p->saturated, (unsigned long long)p->missed,
		(unsigned long long)p->nowhere, 1U << p->min_shift);
	if (p->max_shift != p->min_shift)
		fprintf(out, " to %u", 1U << p->max_shift);
	fprintf(out, " bytes; profile files: %u\n", p->files);
}

/*
 * The share of the samples under which a row is hidden: --percent-limit,
 * or REPORT_PERCENT_LIMIT in the text and none in the CSV, whose scripts
 * get every row unless they ask otherwise.
 */
static double percent_limit(const struct report *r)
{
	if (r->percent_limit_set)
		return r->percent_limit;
	return r->format == FORMAT_TEXT ? REPORT_PERCENT_LIMIT : 0;
}

static void print_csv_row(const struct report *r, const struct row *w,
			  double pct, double self)
{
	if (w->pid)
		fprintf(r->out, "%d,", (int)w->pid);
	else
		fputs("all,", r->out);
	fprintf(r->out, "%.0f,%.2f,%.3f,", w->samples, pct, self);
	print_csv_field(r->out, w->function);
	fputc(',', r->out);
	print_csv_field(r->out, w->object);
	fputc(',', r->out);
	print_csv_field(r->out, w->source);
	fputs(w->split ? ",split," : ",,", r->out);
	if (w->start)
		fprintf(r->out, "%#llx", (unsigned long long)w->start);
	fputc('\n', r->out);
}

static void print_row(const struct report *r, const struct row *w,
		      uint64_t total, unsigned int rate)
{
	double pct = total ? 100.0 * w->samples / total : 0;
	double self = rate ? (double)w->samples / rate : 0;
	const char *obj = w->object;
	char mark = w->split ? '~' : ' ';

	if (r->format == FORMAT_CSV) {
		print_csv_row(r, w, pct, self);
		return;
	}
	switch (r->sort) {
	case SORT_OBJECT:
		fprintf(r->out, "%c%8.0f %6.2f %9.3f  %s\n", mark, w->samples,
			pct, self, obj);
		return;
	case SORT_PROCESS:
		fprintf(r->out, "%c%8.0f %6.2f %9.3f  %-8d %s\n", mark,
			w->samples, pct, self, (int)w->pid, obj);
		return;
	case SORT_SYMBOL:
		break;
	}
	if (strrchr(obj, '/'))
		obj = strrchr(obj, '/') + 1;
	fprintf(r->out, "%c%8.0f %6.2f %9.3f  %-32s %-20s %s\n", mark,
		w->samples, pct, self, w->function, obj, w->source);
}

/* The text table's column names, for the rows of r->sort. */
static void print_columns(const struct report *r)
{
	fprintf(r->out, "%9s %6s %9s  ", "samples", "%", "self s");
	switch (r->sort) {
	case SORT_OBJECT:
		fputs("object\n", r->out);
		return;
	case SORT_PROCESS:
		fprintf(r->out, "%-8s %s\n", "process", "program");
		return;
	case SORT_SYMBOL:
		break;
	}
	fprintf(r->out, "%-32s %-20s %s\n", "function", "object",
		r->lines ? "source" : "");
}

static int by_samples(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int c;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	c = strcmp(x->function, y->function);
	if (!c)
		c = strcmp(x->object, y->object);
	if (!c && x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return c;
}

/*
 * The rows @v[@n], most samples first, those under percent_limit() of
 * @total left out; in the text, one line sums them.
 */
static void print_table(const struct report *r, struct row *v, size_t n,
			uint64_t total, unsigned int rate)
{
	double limit = percent_limit(r), hidden = 0;
	size_t i, nr_hidden = 0;

	qsort(v, n, sizeof(*v), by_samples);
	if (r->format == FORMAT_TEXT)
		print_columns(r);
	for (i = 0; i < n; i++) {
		if (total && 100.0 * v[i].samples / total < limit) {
			hidden += v[i].samples;
			nr_hidden++;
			continue;
		}
		print_row(r, &v[i], total, rate);
	}
	if (nr_hidden && r->format == FORMAT_TEXT)
		fprintf(r->out, " %8.0f %6.2f %9.3f  [%zu row%s under %g%%]\n",
			hidden, 100.0 * hidden / total, rate ? hidden / rate : 0,
			nr_hidden, nr_hidden == 1 ? "" : "s", limit);
}

/* The rows of @pid (0: all). */
static void print_proc(const struct report *r, struct rows *rs, pid_t pid,
		       uint64_t total, unsigned int rate)
{
	size_t i, first = 0, n = 0;

	for (i = 0; i < rs->n; i++) {
		if (rs->v[i].pid != pid)
			continue;
		if (!n++)
			first = i;
	}
	print_table(r, rs->v + first, n, total, rate);
}

/* --sort process: one row for each process that has samples. */
static int print_by_process(const struct report *r, const struct proc *p,
			    size_t nr, uint64_t total)
{
	struct row *v = calloc(nr, sizeof(*v));
	size_t i, n = 0;

	if (!v)
		return -1;
	for (i = 0; i < nr; i++)
		if (p[i].total)
			v[n++] = (struct row){ .pid = p[i].pid,
					       .object = p[i].exe ?: "?",
					       .function = "", .source = "",
					       .samples = p[i].total };
	if (r->format == FORMAT_TEXT && nr > 1)
		fprintf(r->out, "\n# all %zu processes\n", nr);
	print_table(r, v, n, total, r->rate);
	free(v);
	return 0;
}

static int print_all(struct report *r, struct rows *rs, struct proc *p,
		     size_t nr)
{
	uint64_t total = 0;
	size_t i;

	fprintf(r->out, "# profil: %s\n", r->command);
	for (i = 0; i < nr; i++) {
		total += p[i].total;
		if (p[i].total || !i)
			print_header(r, &p[i]);
	}
	if (r->format == FORMAT_CSV)
		fputs("process,samples,percent,self_seconds,function,object,source,bins,address\n",
		      r->out);
	if (r->sort == SORT_PROCESS)
		return print_by_process(r, p, nr, total);
	for (i = 0; i < nr; i++) {
		if (nr == 1 || !p[i].total)
			continue;
		if (r->format == FORMAT_TEXT)
			fprintf(r->out, "\n# pid %d\n", (int)p[i].pid);
		print_proc(r, rs, p[i].pid, p[i].total, r->rate);
	}
	if (r->format == FORMAT_TEXT && nr > 1)
		fprintf(r->out, "\n# all %zu processes\n", nr);
	print_proc(r, rs, 0, total, r->rate);
	return 0;
}

/* --sort object: the rows of each object of a process summed into one. */
static void rows_by_object(struct rows *rs)
{
	size_t i;

	for (i = 0; i < rs->n; i++) {
		rs->v[i].function = "";
		rs->v[i].source = "";
		rs->v[i].start = 0;
	}
	rows_merge(rs);
}

int report_print(struct report *r)
{
	struct rows rs = { 0 };
	struct proc *p;
	size_t nr;
	int ret;

	ret = report_walk(r, row_visit, &rs);
	p = procs_of(r, &nr);
	if (!ret && p) {
		rows_merge(&rs);
		ret = rows_all(&rs);
	}
	if (!ret && p && r->sort == SORT_OBJECT)
		rows_by_object(&rs);
	if (!ret && p)
		ret = print_all(r, &rs, p, nr);
	free(p);
	rows_free(&rs);
	return ret || !p ? -1 : 0;
}

/* --- gmon.out ---------------------------------------------------------- */

/* The main program's text in @f, if it is r->exe (or r->exe is unknown). */
static const struct profile_file_region *gmon_region(const struct report *r,
						     const struct pfile *f)
{
	const struct profile_file_region *fr = file_regions(f->h);
	uint32_t i;

	if (f->pid != r->main_pid)
		return NULL;
	for (i = 0; i < f->h->nr_regions; i++)
		if (fr[i].kind == PROFILE_REGION_EXE &&
		    (!r->exe || !strcmp(file_name(f->h, &fr[i]), r->exe)))
			return &fr[i];
	return NULL;
}

/* @f's arm over the text of @t (any, when @t is NULL), or NULL. */
static const struct profile_file_region *
gmon_arm(const struct report *r, const struct pfile *f,
	 const struct profile_file_region *t)
{
	const struct profile_file_region *fr = gmon_region(r, f);

	if (!fr || (t && (fr->start != t->start || fr->end != t->end)))
		return NULL;
	return fr;
}

/*
 * The histogram in 16-bit bins, as the format has them: when a bin holds
 * more than 65535 samples, every bin is divided by k and the rate too, so
 * that gprof still shows the seconds they stand for.  k divides the rate
 * when such a k is small enough, so that the seconds stay exact.
 */
static unsigned int gmon_divisor(const uint64_t *sum, size_t n,
				 unsigned int rate)
{
	uint64_t max = 0, k;
	size_t i;

	for (i = 0; i < n; i++)
		if (sum[i] > max)
			max = sum[i];
	k = (max + 0xfffe) / 0xffff;
	if (k <= 1)
		return 1;
	for (i = k; i <= rate / 2; i++)
		if (rate % i == 0)
			return i;
	return k;
}

static int gmon_write(const struct report *r, unsigned int rate,
		      uint64_t lowpc, unsigned int shift, const uint64_t *sum,
		      size_t n)
{
	unsigned int k = gmon_divisor(sum, n, rate);
	struct gmon_hdr h = {
		.lowpc = lowpc,
		.highpc = lowpc + ((uint64_t)n << shift),
		.ncnt = sizeof(h) + n * sizeof(uint16_t),
		.version = GMON_VERSION,
		.profrate = (rate + k / 2) / k ?: 1,
	};
	size_t i;

	if (k > 1)
		fprintf(stderr, "profil: a bin holds more than 65535 samples: the gmon.out bins and rate are divided by %u (%u Hz)%s\n",
			k, h.profrate, rate % k ? ", which rounds the rate" : "");
	fwrite(&h, sizeof(h), 1, r->out);
	for (i = 0; i < n; i++) {
		uint64_t c = (sum[i] + k / 2) / k;
		uint16_t b = c > 0xffff ? 0xffff : c;

		fwrite(&b, sizeof(b), 1, r->out);
	}
	return ferror(r->out) ? -1 : 0;
}

/*
 * A gmon.out of the main program's histogram (gprof -p reads it): the
 * bins of every arm over its text (the first text segment of the
 * program), summed at the coarsest bin size any of them had, at link-time
 * addresses; scaled to 16 bits by gmon_write().
 */
int report_gmon(struct report *r)
{
	const struct profile_file_region *t = NULL, *fr;
	unsigned int shift = 0, rate = r->rate;
	uint64_t *sum;
	size_t i, j, n;
	int ret;

	/* The text every arm covered, and the coarsest bins over it. */
	for (i = 0; i < r->nr_files; i++) {
		fr = gmon_arm(r, &r->files[i], t);
		if (!fr)
			continue;
		t = fr;
		rate = r->files[i].h->rate;	/* as the kernel set it */
		if (fr->shift > shift)
			shift = fr->shift;
	}
	if (!t) {
		fprintf(stderr, "profil: no profile of the main program's text to write\n");
		return -1;
	}
	n = ((t->end - t->start) + (1ULL << shift) - 1) >> shift;
	sum = calloc(n, sizeof(*sum));
	if (!sum)
		return -1;
	for (i = 0; i < r->nr_files; i++) {
		fr = gmon_arm(r, &r->files[i], t);
		if (!fr)
			continue;
		for (j = 0; j < fr->nr_bins; j++)
			sum[((uint64_t)j << fr->shift) >> shift] +=
				file_bins(r->files[i].h, fr)[j];
	}
	ret = gmon_write(r, rate, t->start - t->bias, shift, sum, n);
	free(sum);
	return ret;
}
