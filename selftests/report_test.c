// SPDX-License-Identifier: GPL-2.0
/*
 * profil(1)'s gmon.out writer (tools/report.c, report_gmon()) on profile
 * files made here, on the host: the bins of arms of different bin sizes
 * merged at the coarsest, and a histogram past 16 bits scaled with its
 * rate so that gprof still shows the seconds it stands for.  And its CSV
 * (report_print()) on this host's libc: each row's function named with
 * its address in the object, wherever the object was loaded.  And its
 * rows on functions of this program: those under --percent-limit (0.5% in
 * the text by default) summed in one line, every row in the CSV unless
 * the limit is given, and --sort object and process; a libc function
 * named from libc's separate debug file; and -f pprof as go tool pprof
 * reads it, merges it, and tells its processes apart.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libgen.h>
#include <link.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "../lib/gmon-bsd.h"
#include "../tools/profil.h"

#define TEXT_START	0x401000ULL
#define TEXT_BYTES	4096
#define MAIN_PID	42

/*
 * A profile file of one region, @exe's text at @start in bins of 1 <<
 * @shift, @kind (PROFILE_REGION_EXE: at @bias 0).
 */
static struct profile_file_hdr *make_region(const char *exe, uint32_t kind,
					    uint64_t start, uint64_t bias,
					    unsigned int shift, unsigned int rate)
{
	size_t nr_bins = TEXT_BYTES >> shift, names = strlen(exe) + 2;
	size_t bins_off = sizeof(struct profile_file_hdr) +
			  sizeof(struct profile_file_region) + names;
	size_t size = ((bins_off + 3) & ~3UL) + nr_bins * 4;
	struct profile_file_hdr *h = calloc(1, size);
	struct profile_file_region *fr = (void *)(h + 1);

	memcpy(h->magic, PROFILE_FILE_MAGIC, sizeof(h->magic));
	h->hdr_size = sizeof(*h);
	h->region_size = sizeof(*fr);
	h->nr_regions = 1;
	h->rate = rate;
	h->pid = MAIN_PID;
	h->names_off = sizeof(*h) + sizeof(*fr);
	h->names_size = names;
	strcpy((char *)h + h->names_off + 1, exe);
	h->size = size;
	fr->start = start;
	fr->end = start + TEXT_BYTES;
	fr->bias = bias;
	fr->bins_off = (bins_off + 3) & ~3UL;
	fr->nr_bins = nr_bins;
	fr->shift = shift;
	fr->name_off = 1;
	fr->kind = kind;
	return h;
}

/* The program's text at TEXT_START in bins of 1 << @shift. */
static struct profile_file_hdr *make_file(const char *exe, unsigned int shift,
					  unsigned int rate)
{
	return make_region(exe, PROFILE_REGION_EXE, TEXT_START, 0, shift, rate);
}

static uint32_t *bins_of(struct profile_file_hdr *h)
{
	struct profile_file_region *fr = (void *)(h + 1);

	return (uint32_t *)((char *)h + fr->bins_off);
}

struct gmon {
	struct gmon_hdr h;
	uint16_t bins[TEXT_BYTES];
	size_t n;
	char err[512];
};

/* report_gmon() over @files, into @g; its return. */
static int run_gmon(struct profile_file_hdr **files, int nr, unsigned int rate,
		    struct gmon *g)
{
	struct report r = { .format = FORMAT_GMON, .main_pid = MAIN_PID,
			    .exe = "/usr/bin/prog", .rate = rate };
	FILE *err = tmpfile(), *saved;
	int i, ret, fd;

	r.files = calloc(nr, sizeof(*r.files));
	for (i = 0; i < nr; i++)
		r.files[i] = (struct pfile){ .pid = MAIN_PID, .h = files[i],
					     .size = files[i]->size };
	r.nr_files = nr;
	r.out = tmpfile();
	/* What it says goes to stderr: into @err for a while. */
	fflush(stderr);
	fd = dup(2);
	dup2(fileno(err), 2);
	saved = stderr;
	ret = report_gmon(&r);
	fflush(saved);
	dup2(fd, 2);
	close(fd);
	memset(g, 0, sizeof(*g));
	rewind(err);
	g->err[fread(g->err, 1, sizeof(g->err) - 1, err)] = '\0';
	rewind(r.out);
	if (fread(&g->h, sizeof(g->h), 1, r.out) == 1)
		g->n = fread(g->bins, sizeof(g->bins[0]), TEXT_BYTES, r.out);
	fclose(r.out);
	fclose(err);
	free(r.files);
	return ret;
}

static uint64_t total(const struct gmon *g)
{
	uint64_t t = 0;
	size_t i;

	for (i = 0; i < g->n; i++)
		t += g->bins[i];
	return t;
}

/* One arm, no bin past 16 bits: the bins as they are, the rate too. */
TEST(one_arm_as_it_is)
{
	struct profile_file_hdr *f = make_file("/usr/bin/prog", 2, 1000);
	struct gmon g;

	bins_of(f)[0] = 7;
	bins_of(f)[1023] = 65535;
	ASSERT_EQ(0, run_gmon(&f, 1, 1000, &g));
	EXPECT_EQ(1000, g.h.profrate);
	EXPECT_EQ(TEXT_START, g.h.lowpc);
	EXPECT_EQ(TEXT_START + TEXT_BYTES, g.h.highpc);
	ASSERT_EQ(1024, g.n);
	EXPECT_EQ(7, g.bins[0]);
	EXPECT_EQ(65535, g.bins[1023]);
	EXPECT_STREQ("", g.err);
	free(f);
}

/*
 * Two arms, bins of 4 and 16 bytes (a re-arm that coarsened): merged at
 * 16 bytes, nothing dropped; then a bin of 100000 samples: bins and rate
 * halved (2 divides 1000), the seconds the same.
 */
TEST(arms_of_two_bin_sizes_merged_then_scaled)
{
	struct profile_file_hdr *f[2] = { make_file("/usr/bin/prog", 2, 1000),
					  make_file("/usr/bin/prog", 4, 1000) };
	struct gmon g;

	bins_of(f[0])[9] = 300;		/* bytes 36..39: 16-byte bin 2 */
	bins_of(f[0])[10] = 700;	/* bytes 40..43: bin 2 too */
	bins_of(f[1])[2] = 1000;
	bins_of(f[1])[255] = 5;
	ASSERT_EQ(0, run_gmon(f, 2, 1000, &g));
	ASSERT_EQ(256, g.n);
	EXPECT_EQ(1000, g.h.profrate);
	EXPECT_EQ(2000, g.bins[2]);
	EXPECT_EQ(5, g.bins[255]);
	EXPECT_EQ(2005, total(&g));

	bins_of(f[0])[10] = 99000;	/* bin 2: 100300 */
	ASSERT_EQ(0, run_gmon(f, 2, 1000, &g));
	EXPECT_EQ(500, g.h.profrate);
	EXPECT_EQ(50150, g.bins[2]);
	EXPECT_EQ(3, g.bins[255]);	/* 2.5, rounded */
	/* Seconds: 100305 samples at 1000 Hz as 50153 at 500 Hz. */
	EXPECT_EQ(50153, total(&g));
	EXPECT_NE(NULL, strstr(g.err, "divided by 2 (500 Hz)")) TH_LOG("%s", g.err);
	free(f[0]);
	free(f[1]);
}

/* A rate with no divisor small enough: the nearest rate, and said so. */
TEST(a_rate_no_divisor_fits_is_rounded_and_said)
{
	struct profile_file_hdr *f = make_file("/usr/bin/prog", 2, 997);
	struct gmon g;

	bins_of(f)[5] = 200000;		/* k = 4; 997 is prime */
	ASSERT_EQ(0, run_gmon(&f, 1, 997, &g));
	EXPECT_EQ(249, g.h.profrate);
	EXPECT_EQ(50000, g.bins[5]);
	EXPECT_NE(NULL, strstr(g.err, "rounds the rate")) TH_LOG("%s", g.err);
	free(f);
}

/* An arm of another program, or another process's, is not in it. */
TEST(other_programs_and_processes_left_out)
{
	struct profile_file_hdr *f[2] = { make_file("/usr/bin/prog", 2, 1000),
					  make_file("/usr/bin/other", 2, 1000) };
	struct gmon g;

	bins_of(f[0])[1] = 11;
	bins_of(f[1])[1] = 22;
	ASSERT_EQ(0, run_gmon(f, 2, 1000, &g));
	EXPECT_EQ(11, g.bins[1]);
	free(f[0]);
	free(f[1]);
}

/* One row of report_print()'s CSV: the function, its object and address. */
struct csv_row {
	char function[128], object[256], bins[16];
	unsigned long long samples, start;
};

/* report_print() as CSV over @f, its rows in @rows (up to @max); how many. */
static int run_csv(struct profile_file_hdr *f, struct csv_row *rows, int max)
{
	struct pfile pf = { .pid = MAIN_PID, .h = f, .size = f->size };
	struct report r = { .format = FORMAT_CSV, .main_pid = MAIN_PID,
			    .rate = 1000, .command = "prog", .files = &pf,
			    .nr_files = 1 };
	char line[1024];
	int n = 0;

	r.out = tmpfile();
	if (!r.out || report_print(&r))
		return -1;
	rewind(r.out);
	while (n < max && fgets(line, sizeof(line), r.out)) {
		struct csv_row *w = &rows[n];

		/* all,SAMPLES,PCT,SELF,FUNCTION,OBJECT,SOURCE,BINS,ADDRESS */
		if (strncmp(line, "all,", 4))
			continue;
		w->bins[0] = '\0';
		if (sscanf(line, "all,%llu,%*f,%*f,%127[^,],%255[^,],,%15[^,],%llx",
			   &w->samples, w->function, w->object, w->bins,
			   &w->start) == 5 ||
		    sscanf(line, "all,%llu,%*f,%*f,%127[^,],%255[^,],,,%llx",
			   &w->samples, w->function, w->object, &w->start) == 4)
			n++;
	}
	fclose(r.out);
	return n;
}

/*
 * libc's text put at an address this process does not have it at: the
 * CSV names the function of a 4-byte bin with its address in libc, as nm
 * gives it, and every function a 256-byte bin is shared among with its
 * own (what this process finds by the name, less where libc is here).
 */
TEST(csv_gives_each_function_s_address_in_its_object)
{
	const uint64_t bias = 0x500000000000ULL;
	struct csv_row rows[64];
	struct profile_file_hdr *f;
	uint64_t base, at;
	void *fn = dlsym(RTLD_DEFAULT, "read");
	Dl_info info;
	int i, n, named = 0;

	ASSERT_NE(NULL, fn);
	ASSERT_NE(0, dladdr(fn, &info));
	base = (uintptr_t)info.dli_fbase;
	at = ((uintptr_t)fn - base) & ~255ULL;	/* read's, 256-aligned */

	f = make_region(info.dli_fname, PROFILE_REGION_LIB, bias + at, bias, 2, 1000);
	bins_of(f)[(((uintptr_t)fn - base) - at + 8) >> 2] = 10;	/* read + 8 */
	n = run_csv(f, rows, 64);
	ASSERT_EQ(1, n);
	EXPECT_EQ(10, rows[0].samples);
	EXPECT_EQ((uintptr_t)dlsym(RTLD_DEFAULT, rows[0].function) - base,
		  rows[0].start) TH_LOG("%s at %#llx", rows[0].function, rows[0].start);
	EXPECT_EQ((uintptr_t)fn - base, rows[0].start);
	free(f);

	f = make_region(info.dli_fname, PROFILE_REGION_LIB, bias + at, bias, 8, 1000);
	for (i = 0; i < TEXT_BYTES >> 8; i++)
		bins_of(f)[i] = 1000;
	n = run_csv(f, rows, 64);
	ASSERT_LT(1, n);
	for (i = 0; i < n; i++) {
		fn = dlsym(RTLD_DEFAULT, rows[i].function);
		EXPECT_STREQ("split", rows[i].bins);
		if (!fn || strcmp(rows[i].object, info.dli_fname))
			continue;	/* a name not exported, or [unknown] */
		named++;
		EXPECT_EQ((uintptr_t)fn - base, rows[i].start)
			TH_LOG("%s at %#llx", rows[i].function, rows[i].start);
	}
	EXPECT_LT(1, named);
	free(f);
}

/* --- rows, --percent-limit, --sort ------------------------------------- */

/* Functions of this program for the report to name: one bin each. */
#define HOT(name) \
	static __attribute__((noinline, noclone, used)) int name(int x) \
	{ return x * __LINE__ + 1; }
HOT(hot_a) HOT(hot_b) HOT(hot_c) HOT(hot_d) HOT(hot_e) HOT(hot_f)

static int (*const hot[])(int) = { hot_a, hot_b, hot_c, hot_d, hot_e, hot_f };
/* hot_a..hot_f's samples: 1000, of which 6 (3 rows) under 0.5%. */
static const uint32_t hot_samples[] = { 600, 300, 94, 3, 2, 1 };

/* A region of a file make_regions() makes. */
struct mk_region {
	const char *path;
	uint32_t kind;
	uint64_t start, end, bias;
	unsigned int shift;
};

/* A profile file of process @pid with @n regions, in bins of 4 bytes. */
static struct profile_file_hdr *make_regions(pid_t pid,
					     const struct mk_region *m, int n)
{
	size_t names = 1, bins_off, size, nr_bins = 0;
	struct profile_file_region *fr;
	struct profile_file_hdr *h;
	char *name;
	int i;

	for (i = 0; i < n; i++) {
		names += strlen(m[i].path) + 1;
		nr_bins += (m[i].end - m[i].start) >> m[i].shift;
	}
	bins_off = (sizeof(*h) + n * sizeof(*fr) + names + 3) & ~3UL;
	size = bins_off + nr_bins * 4;
	h = calloc(1, size);
	fr = (void *)(h + 1);
	memcpy(h->magic, PROFILE_FILE_MAGIC, sizeof(h->magic));
	h->hdr_size = sizeof(*h);
	h->region_size = sizeof(*fr);
	h->nr_regions = n;
	h->rate = 1000;
	h->pid = pid;
	h->names_off = sizeof(*h) + n * sizeof(*fr);
	h->names_size = names;
	h->size = size;
	name = (char *)h + h->names_off + 1;
	for (i = 0; i < n; i++) {
		fr[i].start = m[i].start;
		fr[i].end = m[i].end;
		fr[i].bias = m[i].bias;
		fr[i].shift = m[i].shift;
		fr[i].kind = m[i].kind;
		fr[i].nr_bins = (m[i].end - m[i].start) >> m[i].shift;
		fr[i].bins_off = bins_off;
		bins_off += fr[i].nr_bins * 4;
		fr[i].name_off = name - ((char *)h + h->names_off);
		strcpy(name, m[i].path);
		name += strlen(name) + 1;
	}
	return h;
}

/* The bin of @pc in region @i of @h. */
static uint32_t *bin_at(struct profile_file_hdr *h, int i, uint64_t pc)
{
	struct profile_file_region *fr = (void *)(h + 1);

	fr += i;
	if (pc < fr->start || pc >= fr->end)
		return NULL;
	return (uint32_t *)((char *)h + fr->bins_off) +
	       ((pc - fr->start) >> fr->shift);
}

static char self_path[4096];

/* This program's text, as the agent would give it. */
static int self_text_of(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct mk_region *m = arg;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		m->start = (info->dlpi_addr + ph->p_vaddr) & ~3ULL;
		m->end = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + 3) & ~3ULL;
		m->bias = info->dlpi_addr;
		break;
	}
	return 1;			/* the first object is the program */
}

static struct mk_region self_text(void)
{
	struct mk_region m = { .path = self_path, .kind = PROFILE_REGION_EXE,
			       .shift = 2 };
	ssize_t n = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);

	self_path[n > 0 ? n : 0] = '\0';
	dl_iterate_phdr(self_text_of, &m);
	return m;
}

/* A file of MAIN_PID over this program, hot_samples[] in hot[]'s bins. */
static struct profile_file_hdr *make_hot(void)
{
	struct mk_region m = self_text();
	struct profile_file_hdr *h = make_regions(MAIN_PID, &m, 1);
	size_t i;

	for (i = 0; i < sizeof(hot) / sizeof(hot[0]); i++)
		*bin_at(h, 0, (uintptr_t)hot[i]) = hot_samples[i];
	return h;
}

/* report_print() over @files as @r (format, sort, limit) says: its output. */
static char *run_report(struct report *r, struct profile_file_hdr **files,
			int nr)
{
	char *text = calloc(1, 1 << 16);
	int i;

	r->main_pid = MAIN_PID;
	r->rate = 1000;
	r->command = "prog";
	r->files = calloc(nr, sizeof(*r->files));
	for (i = 0; i < nr; i++)
		r->files[i] = (struct pfile){ .pid = files[i]->pid,
					      .child = files[i]->pid != MAIN_PID,
					      .h = files[i],
					      .size = files[i]->size };
	r->nr_files = nr;
	r->out = tmpfile();
	if (!r->out || report_print(r))
		text[0] = '\0';
	rewind(r->out);
	text[fread(text, 1, (1 << 16) - 1, r->out)] = '\0';
	fclose(r->out);
	free(r->files);
	return text;
}

/* A row of the text table, or its line of hidden rows. */
struct text_row {
	double samples, pct;
	char name[512];
	int split;		/* '~': shares of coarse bins */
};

/*
 * The rows of the last table of @text into @rows (up to @max): how many;
 * the line that sums the hidden rows in @hidden (name "" if none).
 */
static int text_rows(const char *text, struct text_row *rows, int max,
		     struct text_row *hidden)
{
	const char *line = text;
	struct text_row w;
	int n = 0;

	memset(hidden, 0, sizeof(*hidden));
	for (; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (strstr(line, "self s") && strstr(line, "samples") == line + 2) {
			n = 0;		/* a new table */
			memset(hidden, 0, sizeof(*hidden));
			continue;
		}
		if (sscanf(line + 1, "%lf %lf %*f  %511[^\n]", &w.samples,
			   &w.pct, w.name) != 3)
			continue;
		w.split = line[0] == '~';
		if (w.name[0] == '[' && strstr(w.name, " under "))
			*hidden = w;
		else if (n < max)
			rows[n++] = w;
	}
	return n;
}

/* The row whose name (its first word) is @name, or NULL. */
static const struct text_row *row_named(const struct text_row *rows, int n,
					const char *name)
{
	size_t len = strlen(name);
	int i;

	for (i = 0; i < n; i++)
		if (!strncmp(rows[i].name, name, len) &&
		    (rows[i].name[len] == ' ' || !rows[i].name[len]))
			return &rows[i];
	return NULL;
}

/*
 * By default the text shows the rows of 0.5% or more, each, and one line
 * sums the rest: 3 rows of 1000 samples (600, 300, 94) and one line of 3
 * rows, 6 samples, 0.60%.
 */
TEST(text_hides_rows_under_half_a_percent_behind_one_line)
{
	struct profile_file_hdr *f = make_hot();
	struct report r = { .format = FORMAT_TEXT };
	struct text_row rows[16], hidden;
	char *text = run_report(&r, &f, 1);
	int n = text_rows(text, rows, 16, &hidden);

	ASSERT_EQ(3, n) TH_LOG("%s", text);
	EXPECT_EQ(600, rows[0].samples);
	EXPECT_NE(NULL, row_named(rows, n, "hot_a")) TH_LOG("%s", text);
	EXPECT_NE(NULL, row_named(rows, n, "hot_b")) TH_LOG("%s", text);
	EXPECT_NE(NULL, row_named(rows, n, "hot_c")) TH_LOG("%s", text);
	EXPECT_EQ(94, rows[2].samples);
	EXPECT_STREQ("[3 rows under 0.5%]", hidden.name) TH_LOG("%s", text);
	EXPECT_EQ(6, hidden.samples);
	EXPECT_EQ(0.6, hidden.pct);
	free(text);
	free(f);
}

/* --percent-limit 0: every row, no line of hidden ones; 10: two rows. */
TEST(percent_limit_0_shows_every_row_and_10_hides_four)
{
	struct profile_file_hdr *f = make_hot();
	struct report r = { .format = FORMAT_TEXT, .percent_limit_set = 1 };
	struct text_row rows[16], hidden;
	char *text = run_report(&r, &f, 1);
	int n = text_rows(text, rows, 16, &hidden), i;
	double sum = 0;

	ASSERT_EQ(6, n) TH_LOG("%s", text);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(hot_samples[i], rows[i].samples) TH_LOG("%s", text);
		sum += rows[i].samples;
	}
	EXPECT_EQ(1000, sum);
	EXPECT_NE(NULL, row_named(rows, n, "hot_f")) TH_LOG("%s", text);
	EXPECT_STREQ("", hidden.name) TH_LOG("%s", text);
	free(text);

	r.percent_limit = 10;	/* hot_c's 9.4% under it too */
	text = run_report(&r, &f, 1);
	n = text_rows(text, rows, 16, &hidden);
	ASSERT_EQ(2, n) TH_LOG("%s", text);
	EXPECT_EQ(300, rows[1].samples);
	EXPECT_STREQ("[4 rows under 10%]", hidden.name) TH_LOG("%s", text);
	EXPECT_EQ(100, hidden.samples);
	EXPECT_EQ(10, hidden.pct);
	free(text);
	free(f);
}

/* The CSV's "all" rows of @text. */
static int csv_all_rows(const char *text)
{
	const char *s;
	int n = 0;

	for (s = text; (s = strstr(s, "\nall,")); s++)
		n++;
	return n;
}

/* The CSV has every row, unless --percent-limit is given; never a sum. */
TEST(csv_has_every_row_unless_percent_limit_given)
{
	struct profile_file_hdr *f = make_hot();
	struct report r = { .format = FORMAT_CSV };
	char *text = run_report(&r, &f, 1);

	EXPECT_EQ(6, csv_all_rows(text)) TH_LOG("%s", text);
	EXPECT_NE(NULL, strstr(text, ",hot_f,")) TH_LOG("%s", text);
	free(text);
	r.percent_limit_set = 1;
	r.percent_limit = 0.5;
	text = run_report(&r, &f, 1);
	EXPECT_EQ(3, csv_all_rows(text)) TH_LOG("%s", text);
	EXPECT_EQ(NULL, strstr(text, ",hot_d,")) TH_LOG("%s", text);
	EXPECT_EQ(NULL, strstr(text, "under")) TH_LOG("%s", text);
	free(text);
	free(f);
}

/*
 * --sort object: one row for each object, all its functions summed: this
 * program's six (1000 samples) and libc's read (200), 83.33% and 16.67%.
 */
TEST(sort_object_gives_each_object_s_total)
{
	const uint64_t bias = 0x500000000000ULL;
	struct report r = { .format = FORMAT_TEXT, .sort = SORT_OBJECT };
	struct text_row rows[16], hidden;
	struct mk_region m[2] = { self_text() };
	void *fn = dlsym(RTLD_DEFAULT, "read");
	struct profile_file_hdr *f;
	Dl_info info;
	uint64_t at;
	size_t i;
	char *text;
	int n;

	ASSERT_NE(0, dladdr(fn, &info));
	at = ((uintptr_t)fn - (uintptr_t)info.dli_fbase) & ~255ULL;
	m[1] = (struct mk_region){ .path = info.dli_fname,
				   .kind = PROFILE_REGION_LIB,
				   .start = bias + at, .end = bias + at + 4096,
				   .bias = bias, .shift = 2 };
	f = make_regions(MAIN_PID, m, 2);
	for (i = 0; i < sizeof(hot) / sizeof(hot[0]); i++)
		*bin_at(f, 0, (uintptr_t)hot[i]) = hot_samples[i];
	*bin_at(f, 1, bias + at) = 150;
	*bin_at(f, 1, bias + at + 8) = 50;
	text = run_report(&r, &f, 1);
	n = text_rows(text, rows, 16, &hidden);
	ASSERT_EQ(2, n) TH_LOG("%s", text);
	EXPECT_STREQ(self_path, rows[0].name) TH_LOG("%s", text);
	EXPECT_EQ(1000, rows[0].samples);
	EXPECT_EQ(83.33, rows[0].pct);
	EXPECT_STREQ(info.dli_fname, rows[1].name) TH_LOG("%s", text);
	EXPECT_EQ(200, rows[1].samples);
	EXPECT_EQ(16.67, rows[1].pct);
	EXPECT_STREQ("", hidden.name);
	free(text);
	free(f);
}

/*
 * --sort process: one row for each process, its program named: the main
 * one's 1000 samples and a child's 250 (80% and 20%), in one table.
 */
TEST(sort_process_gives_each_process_s_total)
{
	struct report r = { .format = FORMAT_TEXT, .sort = SORT_PROCESS,
			    .children = 1 };
	struct profile_file_hdr *f[2] = { make_hot() };
	struct mk_region m = self_text();
	struct text_row rows[16], hidden;
	char *text, want[4200];
	int n;

	f[1] = make_regions(MAIN_PID + 1, &m, 1);
	*bin_at(f[1], 0, (uintptr_t)hot_b) = 250;
	text = run_report(&r, f, 2);
	n = text_rows(text, rows, 16, &hidden);
	ASSERT_EQ(2, n) TH_LOG("%s", text);
	snprintf(want, sizeof(want), "%-8d %s", MAIN_PID, self_path);
	EXPECT_STREQ(want, rows[0].name) TH_LOG("%s", text);
	EXPECT_EQ(1000, rows[0].samples);
	EXPECT_EQ(80, rows[0].pct);
	snprintf(want, sizeof(want), "%-8d %s", MAIN_PID + 1, self_path);
	EXPECT_STREQ(want, rows[1].name) TH_LOG("%s", text);
	EXPECT_EQ(250, rows[1].samples);
	EXPECT_EQ(20, rows[1].pct);
	free(text);
	free(f[0]);
	free(f[1]);
}

/* --- names from separate debug files -------------------------------------- */

/*
 * The first local function of @lib's separate debug file (libc6-dbg's,
 * under /usr/lib/debug/.build-id/), one that its dynamic symbols do not
 * name: its name in @name, its address in @lib returned; 0 if none.
 */
static uint64_t debug_only_function(const char *lib, char *name, size_t len,
				    char *debug, size_t dlen)
{
	const unsigned char *id = NULL;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Sym sym;
	uint64_t at = 0;
	int fd, i, n;
	size_t k;
	Elf *e;

	elf_version(EV_CURRENT);
	fd = open(lib, O_RDONLY | O_CLOEXEC);
	e = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	n = e ? dwelf_elf_gnu_build_id(e, (const void **)&id) : -1;
	if (n > 2) {
		k = snprintf(debug, dlen, "/usr/lib/debug/.build-id/%02x/", id[0]);
		for (i = 1; i < n && k + 2 < dlen; i++, k += 2)
			snprintf(debug + k, dlen - k, "%02x", id[i]);
		snprintf(debug + k, dlen - k, ".debug");
	}
	elf_end(e);
	if (fd >= 0)
		close(fd);
	if (n <= 2)
		return 0;
	fd = open(debug, O_RDONLY | O_CLOEXEC);
	e = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	while (e && !at && (scn = elf_nextscn(e, scn))) {
		Elf_Data *d = elf_getdata(scn, NULL);

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !d)
			continue;
		for (k = 0; k < sh.sh_size / sh.sh_entsize && !at; k++) {
			const char *s;

			if (!gelf_getsym(d, k, &sym) ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    GELF_ST_BIND(sym.st_info) != STB_LOCAL ||
			    sym.st_size < 16 || !sym.st_value)
				continue;
			s = elf_strptr(e, sh.sh_link, sym.st_name);
			if (!s || !s[0] || strchr(s, '.') || dlsym(RTLD_DEFAULT, s))
				continue;
			snprintf(name, len, "%s", s);
			at = sym.st_value;
		}
	}
	elf_end(e);
	if (fd >= 0)
		close(fd);
	return at;
}

/*
 * A function of libc that its dynamic symbols do not name is named from
 * libc's separate debug file (libc6-dbg, which deps.sh installs: without
 * it the test fails), through libdwfl's standard lookup by build-ID.
 */
TEST(stripped_libc_s_local_function_named_from_its_debug_file)
{
	const uint64_t bias = 0x500000000000ULL;
	struct report r = { .format = FORMAT_TEXT, .percent_limit_set = 1 };
	char name[256], debug[512] = "";
	struct text_row rows[4], hidden;
	struct profile_file_hdr *f;
	struct mk_region m;
	Dl_info info;
	uint64_t at;
	char *text;

	ASSERT_NE(0, dladdr(dlsym(RTLD_DEFAULT, "read"), &info));
	at = debug_only_function(info.dli_fname, name, sizeof(name), debug,
				 sizeof(debug));
	ASSERT_NE(0, at) TH_LOG("no local function in %s's debug file %s (libc6-dbg)",
			      info.dli_fname, debug);
	m = (struct mk_region){ .path = info.dli_fname,
				.kind = PROFILE_REGION_LIB,
				.start = bias + (at & ~4095ULL),
				.end = bias + (at & ~4095ULL) + 8192,
				.bias = bias, .shift = 2 };
	f = make_regions(MAIN_PID, &m, 1);
	*bin_at(f, 0, bias + at + 4) = 10;
	text = run_report(&r, &f, 1);
	ASSERT_EQ(1, text_rows(text, rows, 4, &hidden)) TH_LOG("%s", text);
	EXPECT_EQ(0, strncmp(rows[0].name, name, strlen(name)))
		TH_LOG("%s at %#llx: %s", name, (unsigned long long)at, text);
	EXPECT_EQ(' ', rows[0].name[strlen(name)]);
	free(text);
	free(f);
}

/* --- -f pprof, read by go tool pprof -------------------------------------- */

/* report_print() or report_pprof() over @files to the file @path. */
static int write_report(struct report *r, struct profile_file_hdr **files,
			int nr, const char *path)
{
	int i, ret;

	r->main_pid = MAIN_PID;
	r->rate = 1000;
	r->command = "prog";
	r->files = calloc(nr, sizeof(*r->files));
	for (i = 0; i < nr; i++)
		r->files[i] = (struct pfile){ .pid = files[i]->pid,
					      .child = files[i]->pid != MAIN_PID,
					      .h = files[i],
					      .size = files[i]->size };
	r->nr_files = nr;
	r->out = fopen(path, "we");
	if (!r->out)
		return -1;
	ret = r->format == FORMAT_PPROF ? report_pprof(r) : report_print(r);
	if (fclose(r->out))
		ret = -1;
	free(r->files);
	return ret;
}

/*
 * What @cmd prints (up to 64 KiB), its status in @status; go must be
 * there (deps.sh installs golang-go): without it the test fails.
 */
static char *output_of(const char *cmd, int *status)
{
	char *text = calloc(1, 1 << 16);
	FILE *p = popen(cmd, "r");
	size_t n = 0;

	*status = -1;
	if (!p)
		return text;
	n = fread(text, 1, (1 << 16) - 1, p);
	text[n] = '\0';
	*status = pclose(p);
	return text;
}

/* A row of go tool pprof -top: flat, flat%, and the name. */
struct top_row {
	double flat, pct;
	char name[512];
};

/* The rows of go tool pprof -top's @text into @rows (up to @max). */
static int top_rows(const char *text, struct top_row *rows, int max)
{
	const char *line = strstr(text, "flat  flat%");
	int n = 0;

	line = line ? strchr(line, '\n') : NULL;
	while (line && n < max) {
		line++;
		if (sscanf(line, "%lf %lf%% %*f%% %*f %*f%% %511[^\n]",
			   &rows[n].flat, &rows[n].pct, rows[n].name) == 3)
			n++;
		line = strchr(line, '\n');
	}
	return n;
}

static const struct top_row *top_named(const struct top_row *rows, int n,
				       const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(rows[i].name, name))
			return &rows[i];
	return NULL;
}

#define PPROF_TOP "go tool pprof -top -sample_index=%s -nodefraction=0 " \
		  "-nodecount=10000 %s 2>&1"

/*
 * The functions of this program and libc's read of the sort_object test
 * (1200 samples), 100 samples in a 256-byte bin of libc that getenv
 * starts in (shared among the functions in it: split), and 5 in no known
 * code: 1305.
 */
static struct profile_file_hdr *make_hot_and_libc(void)
{
	const uint64_t bias = 0x500000000000ULL;
	struct mk_region m[4] = { self_text() };
	void *fn = dlsym(RTLD_DEFAULT, "read"), *env = dlsym(RTLD_DEFAULT, "getenv");
	struct profile_file_hdr *f;
	uint64_t at, coarse;
	Dl_info info;
	size_t i;

	if (!dladdr(fn, &info))
		return NULL;
	at = ((uintptr_t)fn - (uintptr_t)info.dli_fbase) & ~255ULL;
	coarse = ((uintptr_t)env - (uintptr_t)info.dli_fbase) & ~4095ULL;
	m[1] = (struct mk_region){ .path = info.dli_fname,
				   .kind = PROFILE_REGION_LIB,
				   .start = bias + at, .end = bias + at + 4096,
				   .bias = bias, .shift = 2 };
	m[2] = m[1];
	m[2].start = bias + coarse;
	m[2].end = bias + coarse + 4096;
	m[2].shift = 8;
	m[3] = (struct mk_region){ .path = "", .kind = PROFILE_REGION_NOWHERE,
				   .end = 4, .shift = 2 };
	f = make_regions(MAIN_PID, m, 4);
	for (i = 0; i < sizeof(hot) / sizeof(hot[0]); i++)
		*bin_at(f, 0, (uintptr_t)hot[i]) = hot_samples[i];
	*bin_at(f, 1, (uintptr_t)fn - (uintptr_t)info.dli_fbase + bias) = 200;
	*bin_at(f, 2, (uintptr_t)env - (uintptr_t)info.dli_fbase + bias) = 100;
	*bin_at(f, 3, 0) = 5;
	return f;
}

/*
 * go tool pprof -top on -f pprof names the same functions as the text
 * report (every row of it, --percent-limit 0) with the same samples and
 * shares, and the same CPU time (cpu, the default sample type).
 */
TEST(pprof_top_names_the_text_report_s_functions_with_its_shares)
{
	char dir[] = "/tmp/report_test.XXXXXX", pb[64], txt[64], cmd[256];
	struct report r = { .format = FORMAT_TEXT, .percent_limit_set = 1 };
	struct profile_file_hdr *f = make_hot_and_libc();
	struct text_row rows[16], hidden;
	struct top_row top[32];
	const struct top_row *t;
	char *text, *out;
	int n, nt, i, status, split = 0;
	FILE *in;

	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(pb, sizeof(pb), "%s/a.pb.gz", dir);
	snprintf(txt, sizeof(txt), "%s/a.txt", dir);
	ASSERT_EQ(0, write_report(&r, &f, 1, txt));
	text = calloc(1, 1 << 16);
	in = fopen(txt, "re");
	ASSERT_NE(NULL, in);
	text[fread(text, 1, (1 << 16) - 1, in)] = '\0';
	fclose(in);
	n = text_rows(text, rows, 16, &hidden);
	ASSERT_LT(8, n) TH_LOG("%s", text);	/* 6 + read + nowhere + split */

	r = (struct report){ .format = FORMAT_PPROF };
	ASSERT_EQ(0, write_report(&r, &f, 1, pb));
	snprintf(cmd, sizeof(cmd), PPROF_TOP, "samples", pb);
	out = output_of(cmd, &status);
	ASSERT_EQ(0, status) TH_LOG("%s: %s", cmd, out);
	nt = top_rows(out, top, 32);
	EXPECT_EQ(n, nt) TH_LOG("%s\n%s", text, out);
	for (i = 0; i < n; i++) {
		char name[512];

		if (rows[i].name[0] == '[')	/* "[in no known code]" */
			snprintf(name, sizeof(name), "%.*s",
				 (int)(strchr(rows[i].name, ']') + 1 - rows[i].name),
				 rows[i].name);
		else
			sscanf(rows[i].name, "%511s", name);
		t = top_named(top, nt, name);
		ASSERT_NE(NULL, t) TH_LOG("%s not in\n%s", name, out);
		/*
		 * The text's share of a split bin is a fraction, printed
		 * rounded; pprof's counts are rounded so that each bin's sum
		 * is exact: one apart at most.  Shares: the text's to 0.01,
		 * pprof's to 3 digits.
		 */
		EXPECT_GE(rows[i].split ? 1 : 0, fabs(rows[i].samples - t->flat))
			TH_LOG("%s: %.0f against %.0f", name, rows[i].samples, t->flat);
		EXPECT_GE(rows[i].split ? 0.0051 + 100.0 / 1305 : 0.0051,
			  fabs(rows[i].pct - t->pct))
			TH_LOG("%s: %.3f%% against %.3f%%", name, rows[i].pct, t->pct);
		split += rows[i].split;
	}
	EXPECT_LT(0, split);
	EXPECT_NE(NULL, strstr(out, "of 1305 total")) TH_LOG("%s", out);
	free(out);

	/* cpu/nanoseconds, the default: 1 ms a sample at 1000 Hz. */
	snprintf(cmd, sizeof(cmd), "go tool pprof -top -nodefraction=0 %s 2>&1", pb);
	out = output_of(cmd, &status);
	ASSERT_EQ(0, status) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "Type: cpu")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "of 1305ms total")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "600ms 45.98%")) TH_LOG("%s", out);
	free(out);
	free(text);
	free(f);
	unlink(pb);
	unlink(txt);
	rmdir(dir);
}

/*
 * Two runs' profiles merged by go tool pprof -proto, as a fleet merges
 * them: each function's samples are the sum of the two (1000 + 500),
 * though the second run loaded the program elsewhere (another bias, as
 * ASLR gives each run).
 */
TEST(pprof_profiles_merged_by_go_tool_pprof_sum)
{
	static const uint32_t more[] = { 400, 0, 94, 3, 2, 1 };
	const uint64_t moved = 0x10000000;
	char dir[] = "/tmp/report_test.XXXXXX", a[64], b[64], m[64], cmd[512];
	struct mk_region there = self_text();
	struct profile_file_hdr *f[2] = { make_hot() };
	struct report r = { .format = FORMAT_PPROF };
	struct top_row top[32];
	const struct top_row *t;
	int status, nt;
	char *out;
	size_t i;

	there.start += moved;
	there.end += moved;
	there.bias += moved;
	f[1] = make_regions(MAIN_PID, &there, 1);
	for (i = 0; i < sizeof(hot) / sizeof(hot[0]); i++)
		*bin_at(f[1], 0, (uintptr_t)hot[i] + moved) = more[i];
	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/a.pb.gz", dir);
	snprintf(b, sizeof(b), "%s/b.pb.gz", dir);
	snprintf(m, sizeof(m), "%s/m.pb.gz", dir);
	ASSERT_EQ(0, write_report(&r, &f[0], 1, a));
	ASSERT_EQ(0, write_report(&r, &f[1], 1, b));
	snprintf(cmd, sizeof(cmd), "go tool pprof -proto %s %s > %s", a, b, m);
	out = output_of(cmd, &status);
	ASSERT_EQ(0, status) TH_LOG("%s: %s", cmd, out);
	free(out);
	snprintf(cmd, sizeof(cmd), PPROF_TOP, "samples", m);
	out = output_of(cmd, &status);
	ASSERT_EQ(0, status) TH_LOG("%s", out);
	nt = top_rows(out, top, 32);
	EXPECT_EQ(6, nt) TH_LOG("%s", out);
	for (i = 0; i < sizeof(hot) / sizeof(hot[0]); i++) {
		char name[8];

		snprintf(name, sizeof(name), "hot_%c", (char)('a' + i));
		t = top_named(top, nt, name);
		ASSERT_NE(NULL, t) TH_LOG("%s not in\n%s", name, out);
		EXPECT_EQ(hot_samples[i] + more[i], t->flat) TH_LOG("%s", name);
	}
	EXPECT_NE(NULL, strstr(out, "of 1500 total")) TH_LOG("%s", out);
	free(out);
	free(f[0]);
	free(f[1]);
	unlink(a);
	unlink(b);
	unlink(m);
	rmdir(dir);
}

/*
 * With several processes (--children), one profile whose samples carry
 * each one's pid and program: go tool pprof -tags counts 1000 for pid
 * 42 and 300 for pid 43 (two files, one of them over no main program),
 * all of this program, and -tagfocus keeps pid 43's.
 */
TEST(pprof_samples_carry_each_process_s_pid)
{
	char dir[] = "/tmp/report_test.XXXXXX", pb[64], cmd[512], want[4200];
	struct report r = { .format = FORMAT_PPROF, .children = 1 };
	struct profile_file_hdr *f[3] = { make_hot() };
	struct mk_region m = self_text();
	struct top_row top[32];
	int status, nt;
	char *out;

	f[1] = make_regions(MAIN_PID + 1, &m, 1);
	*bin_at(f[1], 0, (uintptr_t)hot_b) = 250;
	/*
	 * The child's first arm, over no main program (the agent's first
	 * arm, over the dynamic linker, may have none): its samples are the
	 * child's program's still.  (This program's text as a library's:
	 * what names the samples is the path, not the kind.)
	 */
	m.kind = PROFILE_REGION_LIB;
	f[2] = make_regions(MAIN_PID + 1, &m, 1);
	*bin_at(f[2], 0, (uintptr_t)hot_c) = 50;
	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(pb, sizeof(pb), "%s/c.pb.gz", dir);
	ASSERT_EQ(0, write_report(&r, f, 3, pb));
	snprintf(cmd, sizeof(cmd), "go tool pprof -tags -sample_index=samples %s 2>&1", pb);
	out = output_of(cmd, &status);
	ASSERT_EQ(0, status) TH_LOG("%s", out);
	snprintf(want, sizeof(want), "1000.0 (76.92%%): %d\n", MAIN_PID);
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s", out);
	snprintf(want, sizeof(want), "300.0 (23.08%%): %d\n", MAIN_PID + 1);
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s", out);
	snprintf(want, sizeof(want), "1300.0 (  100%%): %s\n", self_path);
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s", out);
	free(out);

	snprintf(cmd, sizeof(cmd), "go tool pprof -top -sample_index=samples -tagfocus=pid=%d %s 2>&1",
		 MAIN_PID + 1, pb);
	out = output_of(cmd, &status);
	ASSERT_EQ(0, status) TH_LOG("%s", out);
	nt = top_rows(out, top, 32);
	ASSERT_EQ(2, nt) TH_LOG("%s", out);
	EXPECT_STREQ("hot_b", top[0].name);
	EXPECT_EQ(250, top[0].flat);
	EXPECT_STREQ("hot_c", top[1].name);
	EXPECT_EQ(50, top[1].flat);
	free(out);
	free(f[0]);
	free(f[1]);
	free(f[2]);
	unlink(pb);
	rmdir(dir);
}

/* --- profil record's directory, read by profil report -------------------- */

/* build/tools/profil, beside this program's build/selftests. */
static void profil_path(char *path, size_t len)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	self[n > 0 ? n : 0] = '\0';
	snprintf(path, len, "%s/../tools/profil", dirname(self));
}

/* The file at @path (up to 1 MiB), NUL-terminated, its size in @len. */
static char *slurp_len(const char *path, size_t *len)
{
	char *text = calloc(1, 1 << 20);
	FILE *f = fopen(path, "re");

	*len = 0;
	if (f) {
		*len = fread(text, 1, (1 << 20) - 1, f);
		text[*len] = '\0';
		fclose(f);
	}
	return text;
}

/* The text of the file at @path (up to 1 MiB), or "". */
static char *slurp(const char *path)
{
	size_t len;

	return slurp_len(path, &len);
}

/*
 * profil report @args (a shell word list): its standard output in @out,
 * its standard error in @err (the caller frees both); its exit status.
 */
static int profil_report(const char *args, char **out, char **err)
{
	char profil[4200], cmd[16384], o[] = "/tmp/report_test.out.XXXXXX",
	     e[] = "/tmp/report_test.err.XXXXXX";
	int st, fo = mkstemp(o), fe = mkstemp(e);

	close(fo);
	close(fe);
	profil_path(profil, sizeof(profil));
	snprintf(cmd, sizeof(cmd), "'%s' report %s > %s 2> %s", profil, args, o, e);
	st = system(cmd);
	*out = slurp(o);
	*err = slurp(e);
	unlink(o);
	unlink(e);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* @nr files into the directory @dir as the agent names them. */
static int write_files(const char *dir, struct profile_file_hdr **files, int nr)
{
	char path[4200];
	FILE *f;
	int i;

	for (i = 0; i < nr; i++) {
		snprintf(path, sizeof(path), "%s/%c%d.%x.%d.prof", dir,
			 files[i]->pid == MAIN_PID ? 'p' : 'c', files[i]->pid,
			 0x1234 + i, i);
		f = fopen(path, "we");
		if (!f || fwrite(files[i], files[i]->size, 1, f) != 1 || fclose(f))
			return -1;
	}
	return 0;
}

/*
 * A record of @files in a new directory @dir (a mkdtemp() template), as
 * profil record leaves one: the files, and profil.record of a run of
 * "prog" as run_report() describes it.
 */
static int make_record(char *dir, struct profile_file_hdr **files, int nr,
		       int children)
{
	struct report r = { .main_pid = MAIN_PID, .rate = 1000,
			    .command = "prog", .children = children };

	if ((strstr(dir, "XXXXXX") ? !mkdtemp(dir) : mkdir(dir, 0700)) ||
	    write_files(dir, files, nr))
		return -1;
	return record_write(&r, dir);
}

/* rm -r @dir, whatever the test left in it. */
static void remove_tree(const char *dir)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "# %s failed\n", cmd);
}

/*
 * profil report of a record gives what the report in one go (plain
 * profil) gives on the same files: the text (every process, and all of
 * them; of ./profil.data when no directory is named), the CSV, and the
 * same bytes of -f pprof.
 */
TEST(record_reported_as_in_one_go)
{
	char dir[] = "/tmp/report_test.rec.XXXXXX", args[4400], pb[4200];
	char cwd[64], was[4096];
	struct profile_file_hdr *f[2] = { make_hot_and_libc() };
	struct mk_region m = self_text();
	struct report r = { .format = FORMAT_TEXT, .children = 1 };
	static const struct {
		const char *name;
		enum report_sort sort;
	} sorts[] = { { "symbol", SORT_SYMBOL }, { "object", SORT_OBJECT },
		      { "process", SORT_PROCESS } };
	char *want, *out, *err, *got;
	size_t want_len, got_len;
	int i;

	ASSERT_NE(NULL, f[0]);
	f[1] = make_regions(MAIN_PID + 1, &m, 1);
	*bin_at(f[1], 0, (uintptr_t)hot_b) = 250;
	ASSERT_EQ(0, make_record(dir, f, 2, 1));

	want = run_report(&r, f, 2);
	snprintf(args, sizeof(args), "'%s'", dir);
	ASSERT_EQ(0, profil_report(args, &out, &err)) TH_LOG("%s", err);
	EXPECT_STREQ(want, out);
	EXPECT_STREQ("", err);
	EXPECT_NE(NULL, strstr(out, "# all 2 processes")) TH_LOG("%s", out);
	free(out);
	free(err);

	/* No directory named: ./profil.data. */
	snprintf(cwd, sizeof(cwd), "%s.cwd", dir);
	snprintf(pb, sizeof(pb), "%s/%s", cwd, RECORD_DEFAULT_DIR);
	ASSERT_EQ(0, mkdir(cwd, 0700));
	ASSERT_EQ(0, make_record(pb, f, 2, 1));
	ASSERT_NE(NULL, getcwd(was, sizeof(was)));
	ASSERT_EQ(0, chdir(cwd));
	EXPECT_EQ(0, profil_report("", &out, &err)) TH_LOG("%s", err);
	ASSERT_EQ(0, chdir(was));
	EXPECT_STREQ(want, out);
	remove_tree(cwd);
	free(want);
	free(out);
	free(err);

	r = (struct report){ .format = FORMAT_CSV, .children = 1 };
	want = run_report(&r, f, 2);
	snprintf(args, sizeof(args), "-f csv -o - '%s'", dir);
	ASSERT_EQ(0, profil_report(args, &out, &err)) TH_LOG("%s", err);
	EXPECT_STREQ(want, out);
	free(want);
	free(out);
	free(err);

	/* The command line's --sort and --percent-limit, as parsed. */
	for (i = 0; i < 3; i++) {
		r = (struct report){ .format = FORMAT_TEXT, .children = 1,
				     .sort = sorts[i].sort,
				     .percent_limit_set = 1,
				     .percent_limit = 10 };
		want = run_report(&r, f, 2);
		snprintf(args, sizeof(args), "--sort %s --percent-limit 10 '%s'",
			 sorts[i].name, dir);
		ASSERT_EQ(0, profil_report(args, &out, &err)) TH_LOG("%s", err);
		EXPECT_STREQ(want, out) TH_LOG("--sort %s", sorts[i].name);
		free(want);
		free(out);
		free(err);
	}
	snprintf(args, sizeof(args), "--percent-limit 101 '%s'", dir);
	EXPECT_EQ(125, profil_report(args, &out, &err));
	EXPECT_NE(NULL, strstr(err, "from 0 to 100")) TH_LOG("%s", err);
	free(out);
	free(err);
	snprintf(args, sizeof(args), "--sort address '%s'", dir);
	EXPECT_EQ(125, profil_report(args, &out, &err));
	EXPECT_NE(NULL, strstr(err, "unknown sort key")) TH_LOG("%s", err);
	free(out);
	free(err);

	/* One file: the pprof's order is the files' order. */
	snprintf(pb, sizeof(pb), "%s.pb.gz", dir);
	r = (struct report){ .format = FORMAT_PPROF };
	ASSERT_EQ(0, write_report(&r, f, 1, pb));
	want = slurp_len(pb, &want_len);
	unlink(pb);
	remove_tree(dir);
	ASSERT_EQ(0, make_record(dir, f, 1, 0));
	snprintf(args, sizeof(args), "-f pprof -o '%s' '%s'", pb, dir);
	ASSERT_EQ(0, profil_report(args, &out, &err)) TH_LOG("%s", err);
	got = slurp_len(pb, &got_len);
	EXPECT_LT(100, want_len);
	EXPECT_EQ(want_len, got_len);
	EXPECT_EQ(0, memcmp(want, got, want_len));
	unlink(pb);
	free(want);
	free(got);
	free(out);
	free(err);
	remove_tree(dir);
	free(f[0]);
	free(f[1]);
}

/* A copy of the file @from at @to; 0 or -1. */
static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC), out;
	ssize_t n;

	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (in < 0 || out < 0)
		return -1;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			return -1;
	close(in);
	return close(out) || n < 0 ? -1 : 0;
}

/* @path's build-ID into @id (its size), in hex in @hex; -1 if none. */
static int build_id_of(const char *path, uint8_t *id, char *hex)
{
	const void *p = NULL;
	int fd, n, i;
	Elf *e;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	e = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	n = e ? dwelf_elf_gnu_build_id(e, &p) : -1;
	if (n > PROFILE_BUILD_ID_MAX)
		n = -1;
	for (i = 0; i < n; i++) {
		id[i] = ((const uint8_t *)p)[i];
		sprintf(hex + 2 * i, "%02x", id[i]);
	}
	elf_end(e);
	if (fd >= 0)
		close(fd);
	return n;
}

/* The build-ID of this program into @id (its size), in hex in @hex. */
static int self_build_id(uint8_t *id, char *hex)
{
	self_text();
	return build_id_of(self_path, id, hex);
}

/*
 * make_hot()'s file, its object at @path with build-ID @id (@n bytes),
 * in @nr_regions regions (two: its text split in two, as an object of
 * two text segments).
 */
static struct profile_file_hdr *make_hot_at(const char *path, const uint8_t *id,
					    int n, int nr_regions)
{
	struct mk_region m[2] = { self_text() };
	struct profile_file_region *fr;
	struct profile_file_hdr *h;
	uint64_t mid;
	size_t i;
	int k;

	m[0].path = path;
	if (nr_regions == 2) {
		mid = ((uintptr_t)hot_c + 4) & ~3ULL;
		m[1] = m[0];
		m[0].end = m[1].start = mid;
	}
	h = make_regions(MAIN_PID, m, nr_regions);
	fr = (void *)(h + 1);
	for (k = 0; k < nr_regions; k++) {
		fr[k].build_id_size = n;
		memcpy(fr[k].build_id, id, n);
	}
	for (i = 0; i < sizeof(hot) / sizeof(hot[0]); i++)
		for (k = 0; k < nr_regions; k++)
			if (bin_at(h, k, (uintptr_t)hot[i]))
				*bin_at(h, k, (uintptr_t)hot[i]) = hot_samples[i];
	return h;
}

/* How many times @needle is in @hay. */
static int count_of(const char *hay, const char *needle)
{
	int n = 0;

	for (; (hay = strstr(hay, needle)); hay++)
		n++;
	return n;
}

/*
 * With -l, pprof's locations carry the source line the text report names:
 * go tool pprof -top -lines gives each function's file and line as the
 * text's source column does, with the same samples.
 */
TEST(pprof_lines_are_the_text_report_s_source_lines)
{
	char dir[] = "/tmp/report_test.XXXXXX", pb[64], cmd[256], want[600];
	struct report r = { .format = FORMAT_TEXT, .lines = 1,
			    .percent_limit_set = 1 };
	struct profile_file_hdr *f = make_hot();
	struct text_row rows[16], hidden;
	char *text, *out;
	int n, i, status;

	text = run_report(&r, &f, 1);
	n = text_rows(text, rows, 16, &hidden);
	ASSERT_EQ(6, n) TH_LOG("%s", text);
	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(pb, sizeof(pb), "%s/a.pb.gz", dir);
	r = (struct report){ .format = FORMAT_PPROF, .lines = 1 };
	ASSERT_EQ(0, write_report(&r, &f, 1, pb));
	snprintf(cmd, sizeof(cmd), "go tool pprof -top -lines -sample_index=samples "
		 "-nodefraction=0 -nodecount=10000 %s 2>&1", pb);
	out = output_of(cmd, &status);
	ASSERT_EQ(0, status) TH_LOG("%s", out);
	for (i = 0; i < n; i++) {
		/* "hot_a report_test  report_test.c:317", as pprof names it */
		char fn[64], src[512], at[512], *l;
		double flat;

		ASSERT_EQ(2, sscanf(rows[i].name, "%63s %*s %511s", fn, src))
			TH_LOG("%s", rows[i].name);
		snprintf(want, sizeof(want), "%% %s ", fn);
		l = strstr(out, want + 1);
		ASSERT_NE(NULL, l) TH_LOG("%s not in\n%s", fn, out);
		ASSERT_EQ(1, sscanf(l + strlen(want) - 1, "%511s", at));
		while (l > out && l[-1] != '\n')
			l--;
		ASSERT_EQ(1, sscanf(l, "%lf", &flat));
		EXPECT_EQ(rows[i].samples, flat) TH_LOG("%s", fn);
		l = strrchr(at, '/');
		EXPECT_STREQ(src, l ? l + 1 : at) TH_LOG("%s", fn);
	}
	free(text);
	free(out);
	free(f);
	unlink(pb);
	rmdir(dir);
}

/* The file offset of this program's text (its PT_LOAD with PF_X). */
static int self_text_offset_of(struct dl_phdr_info *info, size_t size,
			       void *arg)
{
	uint64_t *off = arg;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD &&
		    (info->dlpi_phdr[i].p_flags & PF_X)) {
			*off = info->dlpi_phdr[i].p_offset;
			break;
		}
	return 1;
}

/*
 * The mapping of a pprof location, as go tool pprof -raw prints it
 * ("ID: START/LIMIT/OFFSET FILE BUILDID"), is the region's: its range, the
 * file offset its start is loaded from, and the object's build-ID.
 */
TEST(pprof_mapping_has_the_object_s_range_file_offset_and_build_id)
{
	char dir[] = "/tmp/report_test.XXXXXX", pb[64], cmd[256], hex[128];
	char file[4096], id[128];
	unsigned long long start, limit, off;
	struct profile_file_hdr *f = make_hot();
	struct profile_file_region *fr = (void *)(f + 1);
	struct report r = { .format = FORMAT_PPROF };
	uint64_t want_off = ~0ULL;
	int status, found = 0;
	char *out, *line;

	fr->build_id_size = self_build_id(fr->build_id, hex);
	ASSERT_LT(0, fr->build_id_size);
	dl_iterate_phdr(self_text_offset_of, &want_off);
	ASSERT_NE(~0ULL, want_off);
	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(pb, sizeof(pb), "%s/a.pb.gz", dir);
	ASSERT_EQ(0, write_report(&r, &f, 1, pb));
	snprintf(cmd, sizeof(cmd), "go tool pprof -raw %s 2>&1", pb);
	out = output_of(cmd, &status);
	ASSERT_EQ(0, status) TH_LOG("%s", out);
	line = strstr(out, "\nMappings\n");
	ASSERT_NE(NULL, line) TH_LOG("%s", out);
	while ((line = strchr(line + 1, '\n')))
		if (sscanf(line + 1, "%*d: %llx/%llx/%llx %4095s %127s", &start,
			   &limit, &off, file, id) == 5 &&
		    !strcmp(file, self_path)) {
			found++;
			EXPECT_EQ(fr->start, start);
			EXPECT_EQ(fr->end, limit);
			EXPECT_EQ(want_off, off) TH_LOG("%s", out);
			EXPECT_STREQ(hex, id);
		}
	EXPECT_EQ(1, found) TH_LOG("%s", out);
	free(out);
	free(f);
	unlink(pb);
	rmdir(dir);
}

/*
 * An object recorded at a path that is gone, on a machine that holds it
 * under .build-id/ of a directory named with --debuginfo-path (as
 * libdwfl looks for it): found there by its build-ID, its functions
 * named, its rows under its recorded path, nothing said.  Then with only
 * its separate debug file there (objcopy --only-keep-debug, at
 * .build-id/xx/yyyy.debug): named from it.
 */
TEST(object_moved_is_found_by_build_id)
{
	char dir[] = "/tmp/report_test.rec.XXXXXX", base[] = "/tmp/report_test.obj.XXXXXX";
	char obj[4200], ids[4200], path[4400], args[9000], hex[80], cmd[16384];
	struct profile_file_hdr *f;
	struct text_row rows[16], hidden;
	uint8_t id[PROFILE_BUILD_ID_MAX];
	char *out, *err;
	int n, i;

	n = self_build_id(id, hex);
	ASSERT_LT(2, n) TH_LOG("%s has no build-ID", self_path);
	ASSERT_NE(NULL, mkdtemp(base));
	snprintf(obj, sizeof(obj), "%s/prog", base);
	ASSERT_EQ(0, copy_file(self_path, obj));
	f = make_hot_at(obj, id, n, 1);
	ASSERT_EQ(0, make_record(dir, &f, 1, 0));

	/* The object moved: under ids/.build-id/xx/yyyy only. */
	snprintf(ids, sizeof(ids), "%s/ids", base);
	snprintf(path, sizeof(path), "%s/.build-id/%.2s", ids, hex);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && mv '%s' '%s/%s'", path,
		 obj, path, hex + 2);
	ASSERT_EQ(0, system(cmd));
	snprintf(args, sizeof(args), "--percent-limit 0 --debuginfo-path '%s' '%s'",
		 ids, dir);
	ASSERT_EQ(0, profil_report(args, &out, &err)) TH_LOG("%s", err);
	EXPECT_STREQ("", err);
	ASSERT_EQ(6, text_rows(out, rows, 16, &hidden)) TH_LOG("%s", out);
	for (i = 0; i < 6; i++) {
		char name[8];

		snprintf(name, sizeof(name), "hot_%c", 'a' + i);
		EXPECT_NE(NULL, row_named(rows, 6, name)) TH_LOG("%s", out);
		EXPECT_EQ(hot_samples[i], rows[i].samples) TH_LOG("%s", out);
		EXPECT_NE(NULL, strstr(rows[i].name, " prog ")) TH_LOG("%s", out);
	}
	free(out);
	free(err);

	/* Only its debug file, .build-id/xx/yyyy.debug: named from it. */
	snprintf(cmd, sizeof(cmd), "objcopy --only-keep-debug '%s/%s' '%s/%s.debug' && rm '%s/%s'",
		 path, hex + 2, path, hex + 2, path, hex + 2);
	ASSERT_EQ(0, system(cmd));
	ASSERT_EQ(0, profil_report(args, &out, &err)) TH_LOG("%s", err);
	EXPECT_STREQ("", err);
	ASSERT_EQ(6, text_rows(out, rows, 16, &hidden)) TH_LOG("%s", out);
	EXPECT_NE(NULL, row_named(rows, 6, "hot_a")) TH_LOG("%s", out);
	EXPECT_NE(NULL, row_named(rows, 6, "hot_f")) TH_LOG("%s", out);
	free(out);
	free(err);
	remove_tree(base);
	remove_tree(dir);
	free(f);
}

/*
 * libc recorded at a path that is gone, on a machine with libc6-dbg: with
 * no --debuginfo-path, found where libdwfl looks by default
 * (/usr/lib/debug/.build-id/xx/yyyy.debug), read()'s bin named as it is
 * with libc where it was.
 */
TEST(object_gone_is_named_from_usr_lib_debug_by_default)
{
	static const char gone[] = "/nonexistent/report_test/libc.so.6";
	char dir[] = "/tmp/report_test.rec.XXXXXX", args[4400], hex[80];
	char debug[4400], name[2][512];
	void *fn = dlsym(RTLD_DEFAULT, "read");
	struct profile_file_region *fr;
	struct profile_file_hdr *f;
	struct text_row rows[16], hidden;
	struct mk_region m;
	Dl_info info;
	char *out, *err;
	int n, i;

	ASSERT_NE(0, dladdr(fn, &info));
	m = (struct mk_region){ .kind = PROFILE_REGION_LIB,
				.start = ((uintptr_t)fn & ~255ULL),
				.bias = (uintptr_t)info.dli_fbase, .shift = 2 };
	m.end = m.start + 4096;
	for (i = 0; i < 2; i++) {
		m.path = i ? gone : info.dli_fname;
		f = make_regions(MAIN_PID, &m, 1);
		fr = (void *)(f + 1);
		n = build_id_of(info.dli_fname, fr->build_id, hex);
		ASSERT_LT(2, n);
		fr->build_id_size = n;
		*bin_at(f, 0, (uintptr_t)fn) = 100;
		ASSERT_EQ(0, make_record(dir, &f, 1, 0));
		snprintf(args, sizeof(args), "'%s'", dir);
		ASSERT_EQ(0, profil_report(args, &out, &err)) TH_LOG("%s", err);
		EXPECT_STREQ("", err);
		ASSERT_EQ(1, text_rows(out, rows, 16, &hidden)) TH_LOG("%s", out);
		ASSERT_EQ(1, sscanf(rows[0].name, "%511s", name[i]));
		EXPECT_NE('[', name[i][0]) TH_LOG("%s", out);
		EXPECT_EQ(100, rows[0].samples);
		free(out);
		free(err);
		remove_tree(dir);
		strcpy(dir, "/tmp/report_test.rec.XXXXXX");
		free(f);
	}
	EXPECT_STREQ(name[0], name[1]);
	snprintf(debug, sizeof(debug), "/usr/lib/debug/.build-id/%.2s/%s.debug",
		 hex, hex + 2);
	EXPECT_EQ(0, access(debug, R_OK)) TH_LOG("%s: libc6-dbg not installed?", debug);
}

/*
 * An object whose file at its path has another build-ID (rebuilt, or
 * another machine's build), none of its own anywhere: said once, though
 * two regions and two files name it, and named from that file still.
 */
TEST(build_id_mismatch_warns_once)
{
	char dir[] = "/tmp/report_test.rec.XXXXXX", args[4400], hex[80];
	uint8_t id[PROFILE_BUILD_ID_MAX];
	struct profile_file_hdr *f[2];
	struct text_row rows[16], hidden;
	char *out, *err;
	int n;

	n = self_build_id(id, hex);
	ASSERT_LT(2, n);
	id[n - 1] ^= 0xff;		/* another build */
	f[0] = make_hot_at(self_path, id, n, 2);
	f[1] = make_hot_at(self_path, id, n, 1);
	f[1]->pid = MAIN_PID;
	ASSERT_EQ(0, make_record(dir, f, 2, 0));
	snprintf(args, sizeof(args), "'%s'", dir);
	ASSERT_EQ(0, profil_report(args, &out, &err)) TH_LOG("%s", err);
	EXPECT_EQ(1, count_of(err, "is not the file that ran (its build-ID differs")) TH_LOG("%s", err);
	EXPECT_EQ(1, count_of(err, self_path)) TH_LOG("%s", err);
	ASSERT_EQ(3, text_rows(out, rows, 16, &hidden)) TH_LOG("%s", out);
	EXPECT_NE(NULL, row_named(rows, 3, "hot_a")) TH_LOG("%s", out);
	EXPECT_EQ(2 * hot_samples[0], rows[0].samples) TH_LOG("%s", out);
	free(out);
	free(err);
	remove_tree(dir);
	free(f[0]);
	free(f[1]);
}

/*
 * An object that is nowhere (its path gone, no file of its build-ID):
 * said once, and its samples stay under its path, as [unknown].
 */
TEST(missing_object_warns_and_keeps_its_samples_under_its_name)
{
	char dir[] = "/tmp/report_test.rec.XXXXXX", args[4400], gone[4200];
	static const uint8_t id[20] = { 0xde, 0xad, 0xbe, 0xef, 0x01 };
	struct profile_file_hdr *f;
	char *out, *err, *s;
	unsigned long samples = 0, v;
	int rows = 0;

	snprintf(gone, sizeof(gone), "%s.gone/libgone.so", dir);
	f = make_hot_at(gone, id, sizeof(id), 1);
	ASSERT_EQ(0, make_record(dir, &f, 1, 0));
	snprintf(args, sizeof(args), "-f csv '%s'", dir);
	ASSERT_EQ(0, profil_report(args, &out, &err)) TH_LOG("%s", err);
	EXPECT_EQ(1, count_of(err, "is not the file that ran (it is gone, and no file of build-ID deadbeef01")) TH_LOG("%s", err);
	EXPECT_EQ(1, count_of(err, gone)) TH_LOG("%s", err);
	for (s = out; (s = strstr(s, "\nall,")); s++) {
		char fn[64], obj[4200];

		ASSERT_EQ(3, sscanf(s, "\nall,%lu,%*f,%*f,%63[^,],%4199[^,],", &v, fn, obj))
			TH_LOG("%s", out);
		EXPECT_STREQ("[unknown]", fn);
		EXPECT_STREQ(gone, obj);
		samples += v;
		rows++;
	}
	EXPECT_EQ(1, rows) TH_LOG("%s", out);
	EXPECT_EQ(1000, samples) TH_LOG("%s", out);
	free(out);
	free(err);
	remove_tree(dir);
	free(f);
}

/* profil.record of @dir replaced by @text (@len bytes). */
static void put_record(const char *dir, const char *text, size_t len)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, RECORD_FILE);
	f = fopen(path, "we");
	if (f) {
		fwrite(text, 1, len, f);
		fclose(f);
	}
}

/*
 * A record is input from elsewhere: a profil.record that is missing,
 * malformed, out of range, too big or cut short (no pid), and a profile
 * file whose bins do not match its range, are refused, said, exit 125.
 */
TEST(malformed_record_refused)
{
	static const struct { const char *text, *said; } bad[] = {
		{ "profil-record 2\nrate 1000\npid 42\n", "not a record of this profil" },
		{ "profil-record 1\nrate 0\npid 42\n", "not a record of this profil" },
		{ "profil-record 1\nrate 1000\npid -1\n", "not a record of this profil" },
		{ "profil-record 1\nrate 1000\npid 42\ncommand a\\tb\n", "not a record of this profil" },
		{ "profil-record 1\nrate 1000\npid 42\nexe prog\n", "not a record of this profil" },
		{ "profil-record 1\nrate 1000\npid 42", "not a record of this profil" },
		{ "profil-record 1\nrate 1000\ncommand prog\n", "cut short" },
	};
	char dir[] = "/tmp/report_test.rec.XXXXXX", args[4400], path[4200];
	struct profile_file_hdr *f = make_hot();
	struct profile_file_region *fr = (void *)(f + 1);
	char *out, *err, *big;
	size_t i;

	ASSERT_EQ(0, make_record(dir, &f, 1, 0));
	snprintf(args, sizeof(args), "'%s'", dir);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put_record(dir, bad[i].text, strlen(bad[i].text));
		EXPECT_EQ(125, profil_report(args, &out, &err)) TH_LOG("%s", bad[i].text);
		EXPECT_NE(NULL, strstr(err, bad[i].said)) TH_LOG("%s: %s", bad[i].text, err);
		EXPECT_STREQ("", out);
		free(out);
		free(err);
	}
	/* A NUL in it; more than 1 MiB of it. */
	put_record(dir, "profil-record 1\nrate 1000\n\0pid 42\n", 33);
	EXPECT_EQ(125, profil_report(args, &out, &err));
	free(out);
	free(err);
	big = malloc(2 << 20);
	memset(big, 'x', 2 << 20);
	memcpy(big, "profil-record 1\nrate 1000\npid 42\ncommand ", 41);
	big[(2 << 20) - 1] = '\n';
	put_record(dir, big, 2 << 20);
	free(big);
	EXPECT_EQ(125, profil_report(args, &out, &err));
	EXPECT_NE(NULL, strstr(err, "more than")) TH_LOG("%s", err);
	free(out);
	free(err);
	snprintf(path, sizeof(path), "%s/%s", dir, RECORD_FILE);
	unlink(path);
	EXPECT_EQ(125, profil_report(args, &out, &err));
	EXPECT_NE(NULL, strstr(err, "not a directory profil record made")) TH_LOG("%s", err);
	free(out);
	free(err);

	/* A well-formed record, its file's bins past its range. */
	remove_tree(dir);
	strcpy(dir, "/tmp/report_test.rec.XXXXXX");
	fr->end -= 64;
	ASSERT_EQ(0, make_record(dir, &f, 1, 0));
	snprintf(args, sizeof(args), "'%s'", dir);
	EXPECT_EQ(125, profil_report(args, &out, &err));
	EXPECT_NE(NULL, strstr(err, "not a profile file of this profil")) TH_LOG("%s", err);
	EXPECT_NE(NULL, strstr(err, "no profile")) TH_LOG("%s", err);
	free(out);
	free(err);
	remove_tree(dir);
	free(f);
}

/* record_prepare(@dir), what it says in @said (@len bytes); its return. */
static int prepare(const char *dir, char *said, size_t len)
{
	FILE *err = tmpfile();
	int fd, ret;

	fflush(stderr);
	fd = dup(2);
	dup2(fileno(err), 2);
	ret = record_prepare(dir);
	fflush(stderr);
	dup2(fd, 2);
	close(fd);
	rewind(err);
	said[fread(said, 1, len - 1, err)] = '\0';
	fclose(err);
	return ret;
}

/*
 * profil record's directory: made when missing, used when empty, a
 * previous record's files removed, and any other directory refused with
 * what is in it untouched.
 */
TEST(record_directory_made_reused_or_refused)
{
	char dir[] = "/tmp/report_test.rec.XXXXXX", path[4200], sub[4200];
	struct profile_file_hdr *f = make_hot();
	char said[4400];
	struct stat st;
	FILE *o;

	ASSERT_EQ(0, make_record(dir, &f, 1, 0));
	snprintf(sub, sizeof(sub), "%s/new", dir);
	ASSERT_EQ(0, record_prepare(sub));		/* made */
	ASSERT_EQ(0, stat(sub, &st));
	EXPECT_TRUE(S_ISDIR(st.st_mode));
	EXPECT_EQ(0700, st.st_mode & 07777);
	EXPECT_EQ(0, record_prepare(sub));		/* empty */
	EXPECT_EQ(0, rmdir(sub));

	EXPECT_EQ(0, record_prepare(dir));		/* a record's */
	snprintf(path, sizeof(path), "%s/%s", dir, RECORD_FILE);
	EXPECT_NE(0, access(path, F_OK));
	snprintf(path, sizeof(path), "%s/p%d.1234.0.prof", dir, MAIN_PID);
	EXPECT_NE(0, access(path, F_OK));
	EXPECT_EQ(0, rmdir(dir));			/* nothing left */

	ASSERT_EQ(0, make_record(dir, &f, 1, 0));	/* and a file of the user's */
	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	o = fopen(path, "we");
	ASSERT_NE(NULL, o);
	fclose(o);
	EXPECT_EQ(-1, prepare(dir, said, sizeof(said)));
	EXPECT_NE(NULL, strstr(said, "is not empty, and not a directory profil record made"))
		TH_LOG("%s", said);
	EXPECT_EQ(0, access(path, F_OK));
	snprintf(path, sizeof(path), "%s/%s", dir, RECORD_FILE);
	EXPECT_EQ(0, access(path, F_OK));
	remove_tree(dir);

	strcpy(dir, "/tmp/report_test.rec.XXXXXX");	/* no record's at all */
	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/p1.1.prof", dir);
	o = fopen(path, "we");
	ASSERT_NE(NULL, o);
	fclose(o);
	EXPECT_EQ(-1, prepare(dir, said, sizeof(said)));
	EXPECT_NE(NULL, strstr(said, dir)) TH_LOG("%s", said);
	EXPECT_EQ(0, access(path, F_OK));
	remove_tree(dir);
	free(f);
}

/*
 * A profile file of process @pid whose one region is a PC log
 * (PROFILE_REGION_PCLOG) of @slots: @count samples, @n PCs kept.
 */
static struct profile_file_hdr *make_pclog(pid_t pid, uint32_t slots,
					   uint64_t count, const uint64_t *pcs,
					   uint32_t n)
{
	struct profile_file_region *fr;
	struct profile_file_hdr *h;
	size_t off = (sizeof(*h) + sizeof(*fr) + 1 + 7) & ~7UL;
	uint64_t *log;

	h = calloc(1, off + slots * sizeof(uint64_t));
	if (!h)
		return NULL;
	fr = (void *)(h + 1);
	memcpy(h->magic, PROFILE_FILE_MAGIC, sizeof(h->magic));
	h->hdr_size = sizeof(*h);
	h->region_size = sizeof(*fr);
	h->nr_regions = 1;
	h->rate = 1000;
	h->pid = pid;
	h->names_off = sizeof(*h) + sizeof(*fr);
	h->names_size = 1;				/* "" */
	h->size = off + slots * sizeof(uint64_t);
	fr->kind = PROFILE_REGION_PCLOG;
	fr->bins_off = off;
	fr->nr_bins = slots;
	log = (uint64_t *)((char *)h + off);
	log[0] = count;
	memcpy(log + 1, pcs, n * sizeof(*pcs));
	return h;
}

#define JIT_A	0x7f0000001000ULL
#define JIT_B	0x7f0000002000ULL

/*
 * A PC log's PCs named from the process's /tmp/perf-PID.map, as perf
 * reads it: hexadecimal with or without 0x, a name with spaces, a later
 * line for the same code winning, a line that does not parse left out; a
 * PC the map does not name is "[in no known code]".  10 samples, 5 PCs
 * kept: each stands for 2.
 */
TEST(jit_pcs_are_named_from_the_process_s_perf_map)
{
	static const uint64_t pcs[] = { JIT_A + 0x10, JIT_A + 0x20,
					JIT_B + 0x40, JIT_B + 0x7f,
					0x7f0000009000ULL };
	struct report r = { .format = FORMAT_TEXT, .percent_limit_set = 1 };
	struct profile_file_hdr *f = make_pclog(getpid(), 6, 10, pcs, 5);
	struct text_row rows[16], hidden;
	const struct text_row *w;
	char map[64], *text;
	FILE *m;
	int n;

	ASSERT_NE(NULL, f);
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", getpid());
	m = fopen(map, "we");
	ASSERT_NE(NULL, m);
	fprintf(m, "%llx 100 jit_old\n", JIT_A);
	fprintf(m, "not a line\n");
	fprintf(m, "0x%llx 0x80 LazyCompile:*foo app.js:1\n", JIT_B);
	fprintf(m, "%llx 100 jit_hot\n", JIT_A);
	fprintf(m, "%llx 0 empty\n", JIT_A);
	ASSERT_EQ(0, fclose(m));
	text = run_report(&r, &f, 1);
	unlink(map);
	n = text_rows(text, rows, 16, &hidden);
	ASSERT_EQ(3, n) TH_LOG("%s", text);
	w = row_named(rows, n, "jit_hot");
	ASSERT_NE(NULL, w) TH_LOG("%s", text);
	EXPECT_EQ(4, w->samples);
	EXPECT_NE(NULL, strstr(w->name, "[jit]")) TH_LOG("%s", w->name);
	w = row_named(rows, n, "LazyCompile:*foo");
	ASSERT_NE(NULL, w) TH_LOG("%s", text);
	EXPECT_EQ(4, w->samples);
	EXPECT_NE(NULL, strstr(w->name, "app.js:1")) TH_LOG("%s", w->name);
	w = row_named(rows, n, "[in");
	ASSERT_NE(NULL, w) TH_LOG("%s", text);
	EXPECT_EQ(2, w->samples);
	EXPECT_EQ(NULL, strstr(text, "jit_old")) TH_LOG("%s", text);
	free(text);
	free(f);
}

/*
 * No map, or a FIFO at its name (never opened for long: a reader would
 * wait for ever): every PC is "[in no known code]", with every sample.
 */
TEST(jit_pcs_without_a_readable_map_are_in_no_known_code)
{
	static const uint64_t pcs[] = { JIT_A, JIT_B };
	struct report r = { .format = FORMAT_TEXT, .percent_limit_set = 1 };
	struct profile_file_hdr *f = make_pclog(getpid(), 3, 7, pcs, 2);
	struct text_row rows[16], hidden;
	char map[64], *text;
	int n, fifo;

	ASSERT_NE(NULL, f);
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", getpid());
	for (fifo = 0; fifo < 2; fifo++) {
		unlink(map);
		if (fifo)
			ASSERT_EQ(0, mkfifo(map, 0600));
		text = run_report(&r, &f, 1);
		n = text_rows(text, rows, 16, &hidden);
		ASSERT_EQ(1, n) TH_LOG("%s", text);
		EXPECT_EQ(7, rows[0].samples);
		EXPECT_NE(NULL, strstr(rows[0].name, "[in no known code]"));
		free(text);
	}
	unlink(map);
	free(f);
}

/*
 * A file of @pid over @m, whose nowhere bin is a PC log of @n PCs (each
 * for @count / @n samples): an arm the agent made before the objects that
 * hold them were mapped.
 */
static struct profile_file_hdr *make_logged(pid_t pid, struct mk_region m,
					    uint64_t count, const uint64_t *pcs,
					    uint32_t n)
{
	struct profile_file_hdr *l = make_pclog(pid, n + 1, count, pcs, n);
	struct profile_file_hdr *h = make_regions(pid, &m, 1), *both;
	struct profile_file_region *fr;
	size_t size;

	if (!l || !h)
		return NULL;
	/* h's region, then l's, whose log goes after h's bins. */
	size = (h->size + 7) & ~7UL;
	both = calloc(1, size + (n + 1) * sizeof(uint64_t) +
		      sizeof(*fr));
	if (!both)
		return NULL;
	memcpy(both, h, sizeof(*h));
	fr = (void *)(both + 1);
	memcpy(fr, h + 1, sizeof(*fr));
	memcpy(fr + 1, l + 1, sizeof(*fr));
	both->nr_regions = 2;
	both->names_off = sizeof(*both) + 2 * sizeof(*fr);
	memcpy((char *)both + both->names_off, (char *)h + h->names_off,
	       h->names_size);
	fr[0].bins_off = (both->names_off + h->names_size + 3) & ~3UL;
	fr[1].bins_off = (fr[0].bins_off + fr[0].nr_bins * 4 + 7) & ~7UL;
	memcpy((char *)both + fr[1].bins_off,
	       (char *)l + ((struct profile_file_region *)(l + 1))->bins_off,
	       (n + 1) * sizeof(uint64_t));
	both->size = fr[1].bins_off + (n + 1) * sizeof(uint64_t);
	free(h);
	free(l);
	return both;
}

/*
 * The agent's first arm covers the program and the linker only, and the
 * PCs it logs in the libraries the linker maps next are named from a later
 * arm of the same image that covers them; not from an arm of another
 * image of the process (after an exec: the program elsewhere), nor of
 * another process.  Here the first arm covers 16 bytes of this program,
 * and the later one all of it: hot_b's 2 logged PCs (of 6 samples, 3
 * PCs) are hot_b's 4 samples; the third PC, in nothing, stays nowhere, as
 * do the other image's and the other process's, each its own count.
 */
TEST(logged_pcs_named_from_another_arm_of_the_image)
{
	struct report r = { .format = FORMAT_TEXT, .percent_limit_set = 1 };
	struct mk_region all = self_text(), first = all, moved = all;
	const uint64_t a_pcs[] = { (uintptr_t)hot_b, (uintptr_t)hot_b + 4,
				   0x7f0000009000ULL };
	const uint64_t c_pcs[] = { (uintptr_t)hot_c };
	const uint64_t d_pcs[] = { (uintptr_t)hot_d };
	struct profile_file_hdr *f[4];
	struct text_row rows[16], hidden;
	const struct text_row *w;
	char *text;
	int i, n;

	first.end = first.start + 16;
	moved.start += 16;
	f[0] = make_logged(MAIN_PID, first, 6, a_pcs, 3);
	f[1] = make_regions(MAIN_PID, &all, 1);
	f[2] = make_logged(MAIN_PID, moved, 3, c_pcs, 1);
	f[3] = make_logged(MAIN_PID + 1, all, 7, d_pcs, 1);
	for (i = 0; i < 4; i++)
		ASSERT_NE(NULL, f[i]);
	*bin_at(f[1], 0, (uintptr_t)hot_a) = 100;
	text = run_report(&r, f, 4);
	n = text_rows(text, rows, 16, &hidden);
	w = row_named(rows, n, "hot_a");
	ASSERT_NE(NULL, w) TH_LOG("%s", text);
	EXPECT_EQ(100, w->samples);
	w = row_named(rows, n, "hot_b");
	ASSERT_NE(NULL, w) TH_LOG("%s", text);
	EXPECT_EQ(4, w->samples);
	EXPECT_EQ(NULL, row_named(rows, n, "hot_c")) TH_LOG("%s", text);
	EXPECT_EQ(NULL, row_named(rows, n, "hot_d")) TH_LOG("%s", text);
	w = row_named(rows, n, "[in");
	ASSERT_NE(NULL, w) TH_LOG("%s", text);
	EXPECT_EQ(2 + 3 + 7, w->samples);
	/* The headers count what stays nowhere: 2 + 3 of 42's, 7 of 43's. */
	EXPECT_NE(NULL, strstr(text, "5 in no known code")) TH_LOG("%s", text);
	EXPECT_NE(NULL, strstr(text, "7 in no known code")) TH_LOG("%s", text);
	free(text);
	for (i = 0; i < 4; i++)
		free(f[i]);
}

/* The files report_load() takes of a record holding @h alone; -1: failed. */
static int load_one(const struct profile_file_hdr *h)
{
	char dir[] = "/tmp/report_test.XXXXXX", path[64];
	struct report r = { .format = FORMAT_TEXT };
	int fd, n = -1;

	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/p%d.1.prof", dir, (int)h->pid);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd >= 0 && write(fd, h, h->size) == (ssize_t)h->size &&
	    !report_load(&r, dir))
		n = r.nr_files;
	if (fd >= 0)
		close(fd);
	report_free(&r);
	unlink(path);
	rmdir(dir);
	return n;
}

#define SELF_A	0x7f1000000000ULL
#define SELF_B	0x7f1000200000ULL

/*
 * A PC log's PCs in the agent's own code (the header's self ranges, its
 * link namespace's text) are profil's work, "[profil]", not code in no
 * known place; the header counts the rest alone as in no known code.  10
 * samples, 5 PCs kept, each for 2: 3 in the ranges (their first and last
 * bytes), 2 outside (the byte past the first, and elsewhere).
 */
TEST(logged_pcs_in_the_agent_s_own_code_are_profil_s_work)
{
	static const uint64_t pcs[] = { SELF_A, SELF_A + 0xfff, SELF_B + 0x80,
					SELF_A + 0x1000, 0x7f0000009000ULL };
	struct report r = { .format = FORMAT_TEXT, .percent_limit_set = 1 };
	struct profile_file_hdr *f = make_pclog(getpid(), 6, 10, pcs, 5);
	struct text_row rows[16], hidden;
	const struct text_row *w;
	char map[64], *text;
	int n;

	ASSERT_NE(NULL, f);
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", getpid());
	unlink(map);
	f->nr_self = 2;
	f->self[0][0] = SELF_A;
	f->self[0][1] = SELF_A + 0x1000;
	f->self[1][0] = SELF_B;
	f->self[1][1] = SELF_B + 0x100;
	text = run_report(&r, &f, 1);
	n = text_rows(text, rows, 16, &hidden);
	w = row_named(rows, n, "[profil]");
	ASSERT_NE(NULL, w) TH_LOG("%s", text);
	EXPECT_EQ(6, w->samples);
	w = row_named(rows, n, "[in");
	ASSERT_NE(NULL, w) TH_LOG("%s", text);
	EXPECT_EQ(4, w->samples);
	EXPECT_NE(NULL, strstr(text, "; 4 in no known code")) TH_LOG("%s", text);
	free(text);
	/* Read from a record: whole, it is loaded; with more ranges than
	 * the header holds, it is not a file of this build. */
	EXPECT_EQ(1, load_one(f));
	f->nr_self = PROFILE_SELF_MAX + 1;
	EXPECT_EQ(0, load_one(f));
	free(f);
}

TEST_HARNESS_MAIN
