// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * profil record's directory (profil.data by default): what profil report
 * reads later, here or on another machine.  It holds
 *
 *	p<pid>.*.prof, c<pid>.*.prof	the profile files the agent's arms
 *					left, as they are (profile-file.h:
 *					each names its objects by absolute
 *					path, build-ID and load bias)
 *	e<pid>.txt			why an agent could not arm
 *	perf-<pid>.map			a JIT's map of its code, copied from
 *					/tmp at the end of the run, for the
 *					PCs it names (perfmap.c)
 *	profil.record			what the run adds, below
 *
 * and nothing else.  profil.record is text, one "key value" a line, a
 * backslash or a newline in a value written \\ and \n:
 *
 *	profil-record 1		the first line: this format
 *	command ./prog in.txt	the command line (its first 64 KiB)
 *	rate 1000		the rate asked for, Hz
 *	children 0		whether --children was given
 *	exe /home/me/prog	the program execvp() ran, if known
 *	pid 4242		the command's process, once it has ended,
 *	cpu_ns 2013000000	and its CPU time (the main header's, when its
 *				last file was not ended by exit(3))
 *
 * A reader skips keys it does not know, so later versions may add some.
 * profil record writes the file before the command runs, without pid, and
 * again once it has ended: a record cut short (profil killed) has no pid,
 * which report refuses, and may be recorded over.
 *
 * A record may come from another machine: everything read here is checked
 * and bounded (RECORD_MAX bytes, numbers in range, paths at most PATH_MAX).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profil.h"

#define RECORD_MAGIC	"profil-record 1"
#define RECORD_NEW	".profil.record.new"	/* written, then renamed */
#define RECORD_MAX	(1 << 20)		/* bytes of profil.record */
#define RECORD_COMMAND_MAX (64 << 10)		/* bytes of command kept */
#define RECORD_RATE_MAX	1000000

/*
 * Whether @name is one a record makes: a profile file, an agent's
 * complaint, profil.record, or the agent's links that the run makes
 * beside them (lib, lib32, lib64; profil.c's agent_links()).
 */
int record_name(const char *name)
{
	char kind, end[8];
	size_t n = strlen(name);
	int pid;

	if (!strcmp(name, RECORD_FILE) || !strcmp(name, RECORD_NEW) ||
	    !strcmp(name, "lib") || !strcmp(name, "lib32") ||
	    !strcmp(name, "lib64"))
		return 1;
	if (sscanf(name, "e%d.tx%1s", &pid, end) == 2)
		return n > 4 && !strcmp(name + n - 4, ".txt");
	if (sscanf(name, "perf-%d.ma%1s", &pid, end) == 2)
		return n > 4 && !strcmp(name + n - 4, ".map");
	return sscanf(name, "%c%d.", &kind, &pid) == 2 &&
	       (kind == 'p' || kind == 'c') && n > 5 &&
	       !strcmp(name + n - 5, ".prof");
}

/* The entries of @fd, a directory: how many, and whether all a record's. */
static int record_scan(int fd, size_t *n, int *marked)
{
	DIR *d = fdopendir(openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	struct dirent *e;
	int ok = 1;

	*n = 0;
	*marked = 0;
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		(*n)++;
		ok &= record_name(e->d_name);
		*marked |= !strcmp(e->d_name, RECORD_FILE);
	}
	closedir(d);
	return ok;
}

/* The files of a previous record in @fd: gone. */
static int record_empty(int fd)
{
	DIR *d = fdopendir(openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	struct dirent *e;
	int sub, ret = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (strcmp(e->d_name, "lib")) {
			if (unlinkat(fd, e->d_name, 0) && errno != ENOENT)
				ret = -1;
			continue;
		}
		/* lib/: the agent's links, x86_64-linux-gnu, i386-linux-gnu */
		sub = openat(fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			     O_CLOEXEC);
		if (sub >= 0) {
			unlinkat(sub, "x86_64-linux-gnu", 0);
			unlinkat(sub, "i386-linux-gnu", 0);
			close(sub);
		}
		if (unlinkat(fd, e->d_name, AT_REMOVEDIR) && errno != ENOENT)
			ret = -1;
	}
	closedir(d);
	return ret;
}

/*
 * @dir ready for a record: made (mode 0700, as the run's private
 * directory of plain profil), or empty, or a previous record's, whose
 * files are removed.  Any other directory is refused, as anything that is
 * not a directory.  0, or -1 once said why.
 */
int record_prepare(const char *dir)
{
	int fd, marked, all;
	size_t n;

	if (mkdir(dir, 0700) && errno != EEXIST) {
		fprintf(stderr, "profil: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "profil: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	all = record_scan(fd, &n, &marked);
	if (all < 0 || (n && (!all || !marked))) {
		if (all < 0)
			fprintf(stderr, "profil: %s: %s\n", dir, strerror(errno));
		else
			fprintf(stderr, "profil: %s is not empty, and not a directory profil record made: give another -o DIR, or remove it\n",
				dir);
		close(fd);
		return -1;
	}
	if (n && record_empty(fd)) {
		fprintf(stderr, "profil: %s: the previous record cannot be removed: %s\n",
			dir, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* "@key @v\n", @v escaped, its first @max bytes ("..." after them). */
static void put_value(FILE *f, const char *key, const char *v, size_t max)
{
	size_t i;

	fprintf(f, "%s ", key);
	for (i = 0; v[i] && i < max; i++) {
		if (v[i] == '\\')
			fputs("\\\\", f);
		else if (v[i] == '\n')
			fputs("\\n", f);
		else
			fputc(v[i], f);
	}
	fputs(v[i] ? "...\n" : "\n", f);
}

/*
 * profil.record in @dir, of @r: the command, rate, --children, program;
 * with r->main_pid the process and its CPU time, which make it a finished
 * record.  Written whole under another name first, then renamed.
 */
int record_write(const struct report *r, const char *dir)
{
	char tmp[PATH_MAX], path[PATH_MAX];
	FILE *f;
	int err;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/%s", dir, RECORD_NEW) >= sizeof(tmp) ||
	    (size_t)snprintf(path, sizeof(path), "%s/%s", dir, RECORD_FILE) >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	f = fopen(tmp, "we");
	if (!f)
		return -1;
	fprintf(f, "%s\n", RECORD_MAGIC);
	put_value(f, "command", r->command ?: "", RECORD_COMMAND_MAX);
	fprintf(f, "rate %u\nchildren %d\n", r->rate, !!r->children);
	if (r->exe)
		put_value(f, "exe", r->exe, PATH_MAX);
	if (r->main_pid)
		fprintf(f, "pid %d\ncpu_ns %llu\n", (int)r->main_pid,
			(unsigned long long)r->main_cpu_ns);
	err = ferror(f);
	if (fclose(f) || err || rename(tmp, path)) {
		err = errno ?: EIO;
		unlink(tmp);
		errno = err;
		return -1;
	}
	return 0;
}

/*
 * /tmp/perf-@pid.map into @dir, if the process wrote one: a regular file,
 * at most PERFMAP_MAX_BYTES of it, never over what is at the name.
 */
static void record_perfmap(const char *dir, pid_t pid)
{
	char from[64], to[PATH_MAX], buf[65536];
	size_t total = 0;
	struct stat st;
	int in, out;
	ssize_t n;

	snprintf(from, sizeof(from), "/tmp/perf-%d.map", (int)pid);
	if ((size_t)snprintf(to, sizeof(to), "%s/perf-%d.map", dir, (int)pid) >=
	    sizeof(to))
		return;
	in = open(from, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (in < 0)
		return;
	if (fstat(in, &st) || !S_ISREG(st.st_mode)) {
		close(in);
		return;
	}
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		   0644);
	while (out >= 0 && total < PERFMAP_MAX_BYTES &&
	       (n = read(in, buf, sizeof(buf))) > 0) {
		if (write(out, buf, n) != n)
			break;
		total += n;
	}
	if (out >= 0)
		close(out);
	close(in);
}

/* The JITs' maps of the processes of @r's files, into @dir. */
void record_perfmaps(const struct report *r, const char *dir)
{
	size_t i, j;

	for (i = 0; i < r->nr_files; i++) {
		for (j = 0; j < i && r->files[j].pid != r->files[i].pid; j++)
			;
		if (j == i && r->files[i].pid > 0)
			record_perfmap(dir, r->files[i].pid);
	}
}

/* @s unescaped in place (\\ and \n); -1 on any other escape. */
static int unescape(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (*s != '\\') {
			*w++ = *s;
			continue;
		}
		s++;
		if (*s == '\\')
			*w++ = '\\';
		else if (*s == 'n')
			*w++ = '\n';
		else
			return -1;
	}
	*w = '\0';
	return 0;
}

/* @s, all of it, a number from @min to @max; -1 if not. */
static int number(const char *s, unsigned long long min,
		  unsigned long long max, unsigned long long *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end || *v < min || *v > max ? -1 : 0;
}

/* One line "@key @value" of profil.record into @r; -1 if malformed. */
static int record_line(struct report *r, const char *key, char *value)
{
	unsigned long long v;

	if (unescape(value))
		return -1;
	if (!strcmp(key, "command")) {
		free((char *)r->command);
		r->command = strdup(value);
		return r->command ? 0 : -1;
	}
	if (!strcmp(key, "exe")) {
		if (value[0] != '/' || strlen(value) >= PATH_MAX)
			return -1;
		free((char *)r->exe);
		r->exe = strdup(value);
		return r->exe ? 0 : -1;
	}
	if (!strcmp(key, "rate")) {
		if (number(value, 1, RECORD_RATE_MAX, &v))
			return -1;
		r->rate = v;
	} else if (!strcmp(key, "children")) {
		if (number(value, 0, 1, &v))
			return -1;
		r->children = v;
	} else if (!strcmp(key, "pid")) {
		if (number(value, 1, INT_MAX, &v))
			return -1;
		r->main_pid = v;
	} else if (!strcmp(key, "cpu_ns")) {
		if (number(value, 0, UINT64_MAX, &v))
			return -1;
		r->main_cpu_ns = v;
	}
	return 0;			/* a key of a later version */
}

static int record_parse(struct report *r, char *text, size_t size)
{
	char *line, *next, *value;

	if (memchr(text, '\0', size))
		return -1;
	line = text;
	next = strchr(line, '\n');
	if (!next || (size_t)(next - line) != strlen(RECORD_MAGIC) ||
	    memcmp(line, RECORD_MAGIC, next - line))
		return -1;
	for (line = next + 1; *line; line = next + 1) {
		next = strchr(line, '\n');
		if (!next)
			return -1;	/* cut short */
		*next = '\0';
		value = strchr(line, ' ');
		if (!value)
			return -1;
		*value++ = '\0';
		if (record_line(r, line, value))
			return -1;
	}
	return r->rate ? 0 : -1;
}

/*
 * profil.record of the record @dir into @r: the command (r->command),
 * the rate, --children, the program (r->exe), the main process and its
 * CPU time; r->command and r->exe are the caller's to free.  0; or -1
 * once said why: no record there, a malformed one, one cut short.
 */
int record_read(struct report *r, const char *dir)
{
	char path[PATH_MAX], *text = NULL;
	struct stat st;
	ssize_t n = 0, k = 0;
	int fd = -1;

	snprintf(path, sizeof(path), "%s/%s", dir, RECORD_FILE);
	/* Not even opened unless regular: opening a device may do things. */
	if (!lstat(path, &st) && !S_ISREG(st.st_mode))
		errno = EINVAL;
	else
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			fprintf(stderr, "profil: %s: not a directory profil record made (no %s)\n",
				dir, RECORD_FILE);
		else if (errno == EINVAL || errno == ELOOP)
			fprintf(stderr, "profil: %s: not a regular file\n", path);
		else
			fprintf(stderr, "profil: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size < RECORD_MAX)
		text = malloc(st.st_size + 1);
	while (text && n <= st.st_size &&
	       (k = read(fd, text + n, st.st_size + 1 - n)) > 0)
		n += k;
	close(fd);
	if (!text || k < 0 || n > st.st_size)
		n = -1;		/* unread, or grown since: not as it was */
	else
		text[n] = '\0';
	if (n < 0 || record_parse(r, text, n)) {
		fprintf(stderr, "profil: %s: not a record of this profil (malformed, or more than %d bytes)\n",
			path, RECORD_MAX);
		free(text);
		return -1;
	}
	free(text);
	if (!r->main_pid) {
		fprintf(stderr, "profil: %s: the record was cut short (profil record did not see the command end)\n",
			dir);
		return -1;
	}
	return 0;
}
