// SPDX-License-Identifier: GPL-2.0
/*
 * The gmon runtime: gcc -pg programs (gmon_subject.c) profiled by
 * profil.ko leave a gmon.out that gprof reads, with exact call counts and
 * the true rate, however they end.  Each test runs the program in a fresh
 * directory and reads the file back as gprof does (gmon.h).
 */
#define _GNU_SOURCE
#include <sys/wait.h>

#include "common.h"
#include "gmon.h"
#include "kselftest_harness.h"

/* The kernel's HZ: the rate a session gets when it asks for none. */
static unsigned int kernel_hz(void)
{
	static uint16_t bins[8];
	struct profil_region r = {
		.buf = (uintptr_t)bins, .bufsize = sizeof(bins),
		.scale = PROFIL_SCALE_ONE,
	};
	struct profil_setup s = {
		.size = sizeof(s),
		.nr_regions = 1,
		.region_size = sizeof(r),
		.regions = (uintptr_t)&r,
	};

	if (dev_ioctl(PROFIL_IOC_SETUP, &s))
		return 0;
	dev_ioctl(PROFIL_IOC_OFF, NULL);
	return s.rate;
}

static int within(double got, double want, double tol)
{
	return got >= want * (1 - tol) && got <= want * (1 + tol);
}

static void rm_rf(const char *dir)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "# could not remove %s\n", dir);
}

/* -------- the same checks for each way of linking the runtime -------- */

FIXTURE(link) {
	char dir[64];
	char bin[4200];
	char preload[4300];
	char *env[4];
	struct run r;
	struct gmon g;
};

FIXTURE_VARIANT(link) {
	const char *bin;
	int preload;	/* linked against glibc alone: LD_PRELOAD libprofil */
};

FIXTURE_VARIANT_ADD(link, dynamic) { .bin = "gmon_subject" };
FIXTURE_VARIANT_ADD(link, static) { .bin = "gmon_subject_static" };
FIXTURE_VARIANT_ADD(link, nopie) { .bin = "gmon_subject_nopie" };
FIXTURE_VARIANT_ADD(link, fentry) { .bin = "gmon_subject_fentry" };
FIXTURE_VARIANT_ADD(link, preload) {
	.bin = "gmon_subject_glibc", .preload = 1,
};

FIXTURE_SETUP(link)
{
	REQUIRE_MODULE();
	strcpy(self->dir, "/tmp/gmonXXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	ASSERT_EQ(0, chdir(self->dir));
	gmon_helper(self->bin, sizeof(self->bin), variant->bin);
	if (variant->preload) {
		strcpy(self->preload, "LD_PRELOAD=");
		gmon_helper(self->preload + 11, sizeof(self->preload) - 11,
			    "libprofil.so.0");
		self->env[0] = self->preload;
	}
}

FIXTURE_TEARDOWN(link)
{
	gmon_free(&self->g);
	if (chdir("/tmp") == 0)
		rm_rf(self->dir);
}

/* Load @path into self->g, or fail the test saying why. */
#define LOAD(path) do {							\
	const char *__why;						\
	ASSERT_EQ(0, gmon_load(path, &self->g, &__why)) {		\
		TH_LOG("%s: %s", path, __why);				\
	}								\
} while (0)

/* The calls every mode of gmon_subject makes first, counted exactly. */
#define EXPECT_FIRST_CALLS() do {					\
	struct fn __main = elf_fn(self->bin, "main");			\
									\
	ASSERT_NE(0, __main.hi);					\
	EXPECT_EQ(2000, gmon_calls(&self->g, __main,			\
				   elf_fn(self->bin, "f1")));		\
	EXPECT_EQ(1000, gmon_calls(&self->g, __main,			\
				   elf_fn(self->bin, "f2")));		\
	EXPECT_EQ(1, gmon_calls(&self->g, __main,			\
				elf_fn(self->bin, "f3")));		\
} while (0)

TEST_F(link, exit_writes_exact_counts_and_the_true_rate)
{
	ASSERT_EQ(0, run_subject(&self->r, self->bin, "calls", self->env));
	EXPECT_STREQ("", self->r.stderr_text);
	LOAD("gmon.out");
	EXPECT_FIRST_CALLS();
	EXPECT_EQ(kernel_hz(), self->g.profrate);
	EXPECT_EQ(0, self->g.dropped);
}

TEST_F(link, four_threads_times_a_million_calls_counted_exactly)
{
	ASSERT_EQ(0, run_subject(&self->r, self->bin, "threads", self->env));
	LOAD("gmon.out");
	EXPECT_EQ(4000000, gmon_calls(&self->g, elf_fn(self->bin, "thread_fn"),
				      elf_fn(self->bin, "g")));
	EXPECT_EQ(4000000, gmon_calls_to(&self->g, elf_fn(self->bin, "g")));
}

TEST_F(link, sigkill_leaves_the_file)
{
	char *argv[] = { self->bin, "kill", NULL };
	char line[16] = "";

	ASSERT_EQ(0, run_start(&self->r, self->bin, argv, self->env));
	ASSERT_LT(0, read(self->r.out, line, sizeof(line) - 1));
	ASSERT_EQ(0, strncmp(line, "ready", 5));
	kill(self->r.pid, SIGKILL);
	run_finish(&self->r);
	ASSERT_TRUE(WIFSIGNALED(self->r.status));
	LOAD("gmon.out");
	EXPECT_FIRST_CALLS();
}

/* -------- the rest, with the dynamically linked program -------- */

FIXTURE(gmon) {
	char dir[64];
	char bin[4200];
	char path[4300];
	char *env[4];
	struct run r;
	struct gmon g;
	unsigned int hz;
};

FIXTURE_SETUP(gmon)
{
	REQUIRE_MODULE();
	strcpy(self->dir, "/tmp/gmonXXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	ASSERT_EQ(0, chdir(self->dir));
	gmon_helper(self->bin, sizeof(self->bin), "gmon_subject");
	self->hz = kernel_hz();
	ASSERT_NE(0, self->hz);
}

FIXTURE_TEARDOWN(gmon)
{
	gmon_free(&self->g);
	if (chdir("/tmp") == 0)
		rm_rf(self->dir);
}

TEST_F(gmon, _exit_leaves_the_file)
{
	ASSERT_EQ(0, run_subject(&self->r, self->bin, "_exit", NULL));
	LOAD("gmon.out");
	EXPECT_FIRST_CALLS();
}

TEST_F(gmon, abort_leaves_the_file)
{
	run_subject(&self->r, self->bin, "abort", NULL);
	ASSERT_TRUE(WIFSIGNALED(self->r.status));
	EXPECT_EQ(SIGABRT, WTERMSIG(self->r.status));
	LOAD("gmon.out");
	EXPECT_FIRST_CALLS();
}

TEST_F(gmon, sigsegv_leaves_the_file)
{
	run_subject(&self->r, self->bin, "segv", NULL);
	ASSERT_TRUE(WIFSIGNALED(self->r.status));
	EXPECT_EQ(SIGSEGV, WTERMSIG(self->r.status));
	LOAD("gmon.out");
	EXPECT_FIRST_CALLS();
}

/* gprof's seconds for hot() and cold(): samples / profrate, vs CPU time. */
static void check_spin(struct __test_metadata *_metadata,
		       FIXTURE_DATA(gmon) *self, unsigned int rate)
{
	unsigned long long hot_ns = 0, cold_ns = 0;
	double hot_s, cold_s;

	ASSERT_EQ(0, run_subject(&self->r, self->bin, "spin", self->env));
	ASSERT_EQ(2, sscanf(self->r.stdout_text, "hot %llu cold %llu",
			    &hot_ns, &cold_ns));
	LOAD("gmon.out");
	EXPECT_EQ(rate, self->g.profrate);
	hot_s = (double)gmon_samples(&self->g, elf_fn(self->bin, "hot")) /
		self->g.profrate;
	cold_s = (double)gmon_samples(&self->g, elf_fn(self->bin, "cold")) /
		 self->g.profrate;
	TH_LOG("hot %.3f s of %.3f s CPU, cold %.3f s of %.3f s at %u Hz; %s",
	       hot_s, hot_ns / 1e9, cold_s, cold_ns / 1e9, rate,
	       strchr(self->r.stdout_text, '\n') + 1);
	EXPECT_TRUE(within(hot_s, hot_ns / 1e9, 0.15));
	EXPECT_TRUE(within(cold_s, cold_ns / 1e9, 0.15));
}

TEST_F(gmon, seconds_within_15_percent_at_hz)
{
	check_spin(_metadata, self, self->hz);
}

TEST_F(gmon, seconds_within_15_percent_at_profil_rate_2000)
{
	self->env[0] = "PROFIL_RATE=2000";
	check_spin(_metadata, self, 2000);
}

TEST_F(gmon, fork_leaves_two_files_each_with_its_own_hot_function)
{
	double want = 0.3 * self->hz;
	struct fn hot = elf_fn(self->bin, "hot");
	struct fn child_hot = elf_fn(self->bin, "child_hot");
	int child;

	ASSERT_EQ(0, run_subject(&self->r, self->bin, "fork", NULL));
	ASSERT_EQ(1, sscanf(self->r.stdout_text, "child %d", &child));
	/* The parent's exit does not wait for its child: wait for its file. */
	snprintf(self->path, sizeof(self->path), "gmon.out.%d", child);
	for (int i = 0; i < 600 && access(self->path, F_OK); i++)
		usleep(50000);
	usleep(200000);

	LOAD("gmon.out");
	TH_LOG("parent: hot %llu, child_hot %llu samples",
	       (unsigned long long)gmon_samples(&self->g, hot),
	       (unsigned long long)gmon_samples(&self->g, child_hot));
	EXPECT_TRUE(within(gmon_samples(&self->g, hot), want, 0.2));
	EXPECT_EQ(0, gmon_samples(&self->g, child_hot));
	gmon_free(&self->g);

	LOAD(self->path);
	TH_LOG("child: hot %llu, child_hot %llu samples",
	       (unsigned long long)gmon_samples(&self->g, hot),
	       (unsigned long long)gmon_samples(&self->g, child_hot));
	EXPECT_TRUE(within(gmon_samples(&self->g, child_hot), want, 0.2));
	EXPECT_EQ(0, gmon_samples(&self->g, hot));
	/* The child's profile starts from the parent's at the fork. */
	EXPECT_FIRST_CALLS();
}

TEST_F(gmon, an_execd_image_starts_its_own_profile)
{
	ASSERT_EQ(0, run_subject(&self->r, self->bin, "exec", NULL));
	LOAD("gmon.out");
	/* 2000, not 2010: the calls before the exec are the old image's. */
	EXPECT_FIRST_CALLS();
}

TEST_F(gmon, gmon_out_prefix_names_prefix_dot_pid)
{
	char env[4400];

	ASSERT_EQ(0, mkdir("sub", 0777));
	snprintf(env, sizeof(env), "GMON_OUT_PREFIX=%s/sub/prof", self->dir);
	self->env[0] = env;
	ASSERT_EQ(0, run_subject(&self->r, self->bin, "calls", self->env));
	snprintf(self->path, sizeof(self->path), "sub/prof.%d", self->r.pid);
	LOAD(self->path);
	EXPECT_FIRST_CALLS();
	EXPECT_NE(0, access("gmon.out", F_OK));
}

TEST_F(gmon, profdir_names_dir_slash_pid_dot_progname)
{
	char env[4400];

	ASSERT_EQ(0, mkdir("pd", 0777));
	snprintf(env, sizeof(env), "PROFDIR=%s/pd", self->dir);
	self->env[0] = env;
	ASSERT_EQ(0, run_subject(&self->r, self->bin, "_exit", self->env));
	snprintf(self->path, sizeof(self->path), "pd/%d.gmon_subject",
		 self->r.pid);
	LOAD(self->path);
	EXPECT_FIRST_CALLS();
	EXPECT_NE(0, access("gmon.out", F_OK));
}

TEST_F(gmon, no_sigprof_handler_and_the_programs_own_sigprof_works)
{
	EXPECT_EQ(0, run_subject(&self->r, self->bin, "sigprof", NULL));
	LOAD("gmon.out");
	EXPECT_FIRST_CALLS();
}

static void check_victim(struct __test_metadata *_metadata)
{
	char buf[32] = "";
	int fd = open("victim", O_RDONLY);

	ASSERT_LE(0, fd);
	ASSERT_EQ(9, read(fd, buf, sizeof(buf)));
	close(fd);
	EXPECT_STREQ("precious\n", buf);
}

static void plant_symlink(struct __test_metadata *_metadata)
{
	int fd = open("victim", O_WRONLY | O_CREAT | O_EXCL, 0644);

	ASSERT_LE(0, fd);
	ASSERT_EQ(9, write(fd, "precious\n", 9));
	close(fd);
	ASSERT_EQ(0, symlink("victim", "gmon.out"));
}

TEST_F(gmon, a_symlink_at_the_name_is_not_followed)
{
	plant_symlink(_metadata);
	ASSERT_EQ(0, run_subject(&self->r, self->bin, "calls", NULL));
	check_victim(_metadata);
	EXPECT_NE(NULL, strstr(self->r.stderr_text, "gmon.out"));
	EXPECT_EQ(NULL, strchr(strchr(self->r.stderr_text, '\n') + 1, '\n')) {
		TH_LOG("more than one line: %s", self->r.stderr_text);
	}
}

TEST_F(gmon, a_symlink_at_the_name_is_not_followed_at_sigkill)
{
	char *argv[] = { self->bin, "kill", NULL };
	char line[16] = "";

	plant_symlink(_metadata);
	ASSERT_EQ(0, run_start(&self->r, self->bin, argv, NULL));
	ASSERT_LT(0, read(self->r.out, line, sizeof(line) - 1));
	kill(self->r.pid, SIGKILL);
	run_finish(&self->r);
	check_victim(_metadata);
}

TEST_F(gmon, an_unwritable_directory_is_one_line_and_the_status_kept)
{
	/* Nobody creates files in /proc, root included. */
	self->env[0] = "PROFDIR=/proc";
	ASSERT_EQ(0, run_subject(&self->r, self->bin, "calls", self->env));
	TH_LOG("stderr: %s", self->r.stderr_text);
	ASSERT_NE(NULL, strstr(self->r.stderr_text, "libprofil: gmon: "));
	EXPECT_EQ(NULL, strchr(strchr(self->r.stderr_text, '\n') + 1, '\n'));
}

TEST_F(gmon, a_full_arc_table_gives_a_readable_file_that_says_so)
{
	self->env[0] = "PROFIL_GMON_ARCS=3";
	ASSERT_EQ(0, run_subject(&self->r, self->bin, "many", self->env));
	LOAD("gmon.out");
	EXPECT_FIRST_CALLS();
	EXPECT_EQ(3, self->g.narcs);
	EXPECT_EQ(8, self->g.dropped);
	EXPECT_NE(NULL, strstr(self->r.stderr_text, "arc table was full"));
}

TEST_F(gmon, moncontrol_0_stops_calls_and_samples_and_1_resumes)
{
	struct fn main_fn = elf_fn(self->bin, "main");

	ASSERT_EQ(0, run_subject(&self->r, self->bin, "moncontrol", NULL));
	LOAD("gmon.out");
	EXPECT_EQ(2000, gmon_calls(&self->g, main_fn,
				   elf_fn(self->bin, "f1")));
	EXPECT_EQ(1050, gmon_calls(&self->g, main_fn,
				   elf_fn(self->bin, "f2")));
	/* 0.2 s of CPU in hot() while paused: 50 samples at 250 Hz. */
	EXPECT_GE(1, gmon_samples(&self->g, elf_fn(self->bin, "hot")));
}

TEST_F(gmon, monstartup_and_mcleanup_twice_are_harmless)
{
	ASSERT_EQ(0, run_subject(&self->r, self->bin, "twice", NULL));
	EXPECT_STREQ("", self->r.stderr_text);
	LOAD("gmon.out");
	EXPECT_FIRST_CALLS();
}

TEST_F(gmon, monitor_profiles_a_program_built_without_pg)
{
	gmon_helper(self->bin, sizeof(self->bin), "gmon_monitor");
	ASSERT_EQ(0, run_subject(&self->r, self->bin, "monitor", NULL));
	LOAD("gmon.out");
	EXPECT_EQ(0, self->g.narcs);
	EXPECT_TRUE(within(gmon_samples(&self->g, elf_fn(self->bin, "hot")),
			   0.3 * self->hz, 0.15));
}

TEST_HARNESS_MAIN
