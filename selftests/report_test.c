// SPDX-License-Identifier: GPL-2.0
/*
 * profil(1)'s gmon.out writer (tools/report.c, report_gmon()) on profile
 * files made here, on the host: the bins of arms of different bin sizes
 * merged at the coarsest, and a histogram past 16 bits scaled with its
 * rate so that gprof still shows the seconds it stands for.  And its CSV
 * (report_print()) on this host's libc: each row's function named with
 * its address in the object, wherever the object was loaded.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

TEST_HARNESS_MAIN
