// SPDX-License-Identifier: GPL-2.0
/*
 * The gmon runtime: gcc -pg programs (gmon_subject.c) profiled by
 * profil.ko leave a gmon.out that gprof reads, with exact call counts and
 * the true rate, however they end.  Each test runs the program in a fresh
 * directory and reads the file back as gprof does (gmon.h).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <linux/capability.h>

#include "common.h"
#include "gmon.h"
#include "kselftest_harness.h"

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

/*
 * Threads on different CPUs count an arc in a record for each CPU (the
 * calls of one never bounce the count of another's cache line), and the
 * file's records of it add up to every call.
 */
TEST_F(link, threads_on_two_cpus_count_in_a_record_each)
{
	struct fn from = elf_fn(self->bin, "thread_fn");
	struct fn to = elf_fn(self->bin, "g");
	long ncpu;

	ASSERT_EQ(0, run_subject(&self->r, self->bin, "threads-cpus",
				 self->env));
	ASSERT_EQ(1, sscanf(self->r.stdout_text, "cpus %ld", &ncpu));
	if (ncpu < 2)
		SKIP(return, "one CPU");
	LOAD("gmon.out");
	EXPECT_EQ(4000000, gmon_calls(&self->g, from, to));
	EXPECT_LE(ncpu < 4 ? ncpu : 4, gmon_records(&self->g, from, to));
	TH_LOG("%zu records of the arc for %ld CPUs",
	       gmon_records(&self->g, from, to), ncpu);
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

/* gmon_subject ended by @mode: by @sig, or exit status 0 if @sig is 0. */
static void check_end(struct __test_metadata *_metadata,
		      FIXTURE_DATA(gmon) *self, const char *mode, int sig)
{
	run_subject(&self->r, self->bin, mode, NULL);
	if (sig) {
		ASSERT_TRUE(WIFSIGNALED(self->r.status));
		EXPECT_EQ(sig, WTERMSIG(self->r.status));
	} else {
		ASSERT_EQ(0, self->r.status);
	}
	LOAD("gmon.out");
	EXPECT_FIRST_CALLS();
}

TEST_F(gmon, _exit_leaves_the_file)
{
	check_end(_metadata, self, "_exit", 0);
}

TEST_F(gmon, abort_leaves_the_file)
{
	check_end(_metadata, self, "abort", SIGABRT);
}

TEST_F(gmon, sigsegv_leaves_the_file)
{
	check_end(_metadata, self, "segv", SIGSEGV);
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

	/*
	 * The parent does not wait for its child: we reap it, orphaned, and
	 * its exit has waited for its file (profil(4)).
	 */
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0));
	ASSERT_EQ(0, run_subject(&self->r, self->bin, "fork", NULL));
	ASSERT_EQ(1, sscanf(self->r.stdout_text, "child %d", &child));
	ASSERT_EQ(child, waitpid(child, NULL, 0));
	snprintf(self->path, sizeof(self->path), "gmon.out.%d", child);

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

/*
 * A vfork() child's exit() after a failed exec leaves its parent's profile
 * alone: the parent goes on counting calls and samples, and the child
 * writes no file (its _mcleanup() would have ended the parent's).
 */
TEST_F(gmon, a_vfork_childs_exit_leaves_the_parents_profile_alone)
{
	struct fn hot = elf_fn(self->bin, "hot");
	int child;

	ASSERT_EQ(0, run_subject(&self->r, self->bin, "vfork", NULL));
	EXPECT_STREQ("", self->r.stderr_text);
	ASSERT_EQ(1, sscanf(self->r.stdout_text, "child %d", &child));
	snprintf(self->path, sizeof(self->path), "gmon.out.%d", child);
	EXPECT_NE(0, access(self->path, F_OK));
	LOAD("gmon.out");
	EXPECT_EQ(1500, gmon_calls_to(&self->g, elf_fn(self->bin, "f2")));
	EXPECT_TRUE(within(gmon_samples(&self->g, hot), 0.3 * self->hz, 0.2))
		TH_LOG("hot: %llu samples",
		       (unsigned long long)gmon_samples(&self->g, hot));
}

/*
 * A forked child that execs leaves no gmon.out.PID (it would hold the
 * parent's profile up to the fork, as glibc's gmon does not write either),
 * though it was profiled until then.
 */
TEST_F(gmon, a_forked_child_that_execs_leaves_no_file)
{
	const char *line;
	int child;

	ASSERT_EQ(0, run_subject(&self->r, self->bin, "spawn", NULL));
	EXPECT_NE(NULL, strstr(self->r.stdout_text, "stats: state 1 "))
		TH_LOG("%s", self->r.stdout_text);
	line = strstr(self->r.stdout_text, "child ");
	ASSERT_NE(NULL, line);
	ASSERT_EQ(1, sscanf(line, "child %d", &child));
	snprintf(self->path, sizeof(self->path), "gmon.out.%d", child);
	EXPECT_NE(0, access(self->path, F_OK));
	LOAD("gmon.out");
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

TEST_F(gmon, set_id_programs_ignore_gmon_out_prefix_and_profdir)
{
	char prefix[4400], profdir[4400];

	if (!geteuid())
		SKIP(return, "root runs a set-user-ID root program as itself");
	gmon_helper(self->bin, sizeof(self->bin), "gmon_subject_setuid");
	ASSERT_EQ(0, mkdir("pd", 0777));
	snprintf(prefix, sizeof(prefix), "GMON_OUT_PREFIX=%s/prof", self->dir);
	snprintf(profdir, sizeof(profdir), "PROFDIR=%s/pd", self->dir);
	self->env[0] = prefix;
	self->env[1] = profdir;
	ASSERT_EQ(0, run_subject(&self->r, self->bin, "calls", self->env));
	snprintf(self->path, sizeof(self->path), "prof.%d", self->r.pid);
	EXPECT_NE(0, access(self->path, F_OK));
	EXPECT_EQ(0, rmdir("pd"));	/* empty */
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

/* The kernel replaces the symlink with the profile (profil(4)). */
TEST_F(gmon, a_symlink_at_the_name_is_not_followed)
{
	struct stat st;

	plant_symlink(_metadata);
	ASSERT_EQ(0, run_subject(&self->r, self->bin, "calls", NULL));
	check_victim(_metadata);
	ASSERT_EQ(0, lstat("gmon.out", &st));
	EXPECT_TRUE(S_ISREG(st.st_mode));
	LOAD("gmon.out");
	EXPECT_FIRST_CALLS();
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

/*
 * Four threads each calling g() a million times through an arc a full
 * table has no room for: every call is said, none lost to a race, though
 * the threads count them in stripes of their CPUs and not in one line.
 */
TEST_F(gmon, a_full_table_counts_every_call_it_drops_under_threads)
{
	char *nl;

	self->env[0] = "PROFIL_GMON_ARCS=3";
	ASSERT_EQ(0, run_subject(&self->r, self->bin, "threads", self->env));
	LOAD("gmon.out");
	EXPECT_FIRST_CALLS();
	EXPECT_EQ(3, self->g.narcs);
	EXPECT_EQ(4000000, self->g.dropped);
	nl = strchr(self->r.stderr_text, '\n');
	EXPECT_NE(NULL, strstr(self->r.stderr_text,
			       "(3 arcs): 4000000 calls not counted"));
	EXPECT_TRUE(nl && !nl[1]) TH_LOG("%s", self->r.stderr_text);
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

/*
 * Held to RLIMIT_MEMLOCK @kib: root too, without CAP_IPC_LOCK in its
 * bounding set (so not after exec either).  In the test's own process.
 */
static int memlock_limit(unsigned long kib)
{
	struct rlimit rl = { kib << 10, kib << 10 };

	if (!geteuid() && prctl(PR_CAPBSET_DROP, CAP_IPC_LOCK, 0, 0, 0))
		return -1;
	return setrlimit(RLIMIT_MEMLOCK, &rl);
}

/*
 * A profile that RLIMIT_MEMLOCK cannot pin gets a coarser histogram, said
 * in one line: 64 MiB of text at 4 bytes a bin is 32 MiB of bins, and 1
 * MiB fits a bin per 256 bytes (one per 128 would take 257 pages).  The
 * arcs' hash is not pinned.
 */
TEST_F(gmon, a_profile_past_rlimit_memlock_gets_a_coarser_histogram)
{
	struct fn hot;
	char *nl;

	gmon_helper(self->bin, sizeof(self->bin), "gmon_monitor");
	hot = elf_fn(self->bin, "hot");
	ASSERT_EQ(0, memlock_limit(1024));
	ASSERT_EQ(0, run_subject(&self->r, self->bin, "monitor-wide", NULL));
	EXPECT_NE(NULL, strstr(self->r.stderr_text,
			       "RLIMIT_MEMLOCK (1024 KiB) cannot pin the profile (32770 KiB): a bin per 256 bytes of text, not 4 (514 KiB)"))
		TH_LOG("%s", self->r.stderr_text);
	nl = strchr(self->r.stderr_text, '\n');
	EXPECT_TRUE(nl && !nl[1]) TH_LOG("%s", self->r.stderr_text);
	LOAD("gmon.out");
	EXPECT_EQ((64 << 20) / 256, self->g.nbins);
	EXPECT_EQ(64 << 20, self->g.highpc - self->g.lowpc);
	EXPECT_TRUE(within(gmon_samples(&self->g, hot), 0.3 * self->hz, 0.15))
		TH_LOG("hot: %llu samples",
		       (unsigned long long)gmon_samples(&self->g, hot));
}

/*
 * gmon_monitor in @mode (monitor-fork...) held to RLIMIT_MEMLOCK @kib:
 * the pid of its forked child, from its output.
 */
static int run_forked(struct __test_metadata *_metadata,
		      FIXTURE_DATA(gmon) *self, unsigned long kib,
		      const char *mode)
{
	const char *p;
	int child = -1;

	gmon_helper(self->bin, sizeof(self->bin), "gmon_monitor");
	ASSERT_EQ(0, memlock_limit(kib));
	ASSERT_EQ(0, run_subject(&self->r, self->bin, mode, NULL));
	TH_LOG("%s", self->r.stdout_text);
	p = strstr(self->r.stdout_text, "child ");
	ASSERT_NE(NULL, p);
	ASSERT_EQ(1, sscanf(p, "child %d", &child));
	return child;
}

/*
 * A forked child whose copy of the profile the limit cannot pin as well
 * (514 KiB twice in 1 MiB) lays it out again at the next coarser
 * histogram, which fits besides its parent's, says so in one line, and
 * its file has its own samples and its parent's before the fork, folded
 * (0.1 s of hot()); the parent's profile goes on.
 */
TEST_F(gmon, a_forked_child_past_rlimit_memlock_gets_a_coarser_histogram)
{
	unsigned long long own_samples;
	struct fn hot, child_hot;
	const char *own;
	int child;

	child = run_forked(_metadata, self, 1024, "monitor-fork");
	hot = elf_fn(self->bin, "hot");
	child_hot = elf_fn(self->bin, "child_hot");
	snprintf(self->path, sizeof(self->path),
		 "forked child %d: RLIMIT_MEMLOCK (1024 KiB) has no room for a second copy of the profile (514 KiB): a bin per 512 bytes of text, not 256 (",
		 child);
	EXPECT_NE(NULL, strstr(self->r.stderr_text, self->path))
		TH_LOG("%s", self->r.stderr_text);
	EXPECT_EQ(NULL, strstr(self->r.stderr_text, "no samples"));
	snprintf(self->path, sizeof(self->path), "gmon.out.%d", child);
	LOAD(self->path);
	EXPECT_EQ((64 << 20) / 512, self->g.nbins);
	EXPECT_EQ(64 << 20, self->g.highpc - self->g.lowpc);
	/*
	 * At 512 bytes a bin, hot() and child_hot() may share bins: the
	 * child's own samples are its stats', and the file has those and
	 * the parent's 0.1 s before the fork.
	 */
	own = strstr(self->r.stdout_text, "stats: state 1 samples ");
	ASSERT_NE(NULL, own);
	own_samples = strtoull(own + strlen("stats: state 1 samples "), NULL,
			       10);
	EXPECT_TRUE(within(own_samples, 0.1 * self->hz, 0.3))
		TH_LOG("the child's own: %llu samples", own_samples);
	EXPECT_LT(0, gmon_samples(&self->g, child_hot));
	EXPECT_TRUE(within(gmon_all_samples(&self->g), 0.2 * self->hz, 0.3))
		TH_LOG("all: %llu samples",
		       (unsigned long long)gmon_all_samples(&self->g));
	gmon_free(&self->g);
	LOAD("gmon.out");
	EXPECT_EQ((64 << 20) / 256, self->g.nbins);
	EXPECT_TRUE(within(gmon_samples(&self->g, hot), 0.3 * self->hz, 0.15))
		TH_LOG("hot: %llu samples",
		       (unsigned long long)gmon_samples(&self->g, hot));
}

/*
 * A limit that pins the parent's profile and not a page more (516 KiB,
 * the 129 pages of its layout at 256 bytes a bin): the child's refit finds
 * no layout that fits, keeps its copy as it was, and its file has its
 * calls and its parent's samples up to the fork, none of its own, as a
 * line at its exit says.
 */
TEST_F(gmon, a_forked_child_with_no_room_at_all_says_it_has_no_samples)
{
	struct fn child_hot;
	int child;

	child = run_forked(_metadata, self, 516, "monitor-fork");
	child_hot = elf_fn(self->bin, "child_hot");
	EXPECT_NE(NULL, strstr(self->r.stderr_text,
			       "a bin per 256 bytes of text, not 4"))
		TH_LOG("%s", self->r.stderr_text);
	snprintf(self->path, sizeof(self->path),
		 "no samples of this forked child (RLIMIT_MEMLOCK, 516 KiB, cannot pin 514 KiB more): gmon.out.%d has its calls",
		 child);
	EXPECT_NE(NULL, strstr(self->r.stderr_text, self->path))
		TH_LOG("%s", self->r.stderr_text);
	EXPECT_EQ(NULL, strstr(self->r.stderr_text, "no room"));
	snprintf(self->path, sizeof(self->path), "gmon.out.%d", child);
	LOAD(self->path);
	EXPECT_EQ((64 << 20) / 256, self->g.nbins);
	EXPECT_EQ(0, gmon_samples(&self->g, child_hot));
}

/*
 * The same child execs at once: its profile, laid out again and armed
 * (its stats before the exec), is still a forked child's, and its exec
 * writes no file and says nothing: a program spawning helpers under the
 * limit prints no line for each.
 */
TEST_F(gmon, a_forked_child_past_rlimit_memlock_that_execs_leaves_no_file)
{
	int child;

	child = run_forked(_metadata, self, 1024, "monitor-fork-exec");
	EXPECT_NE(NULL, strstr(self->r.stdout_text, "stats: state 1 "))
		TH_LOG("%s", self->r.stdout_text);
	EXPECT_NE(NULL, strstr(self->r.stdout_text, " stop 0 "))
		TH_LOG("%s", self->r.stdout_text);
	EXPECT_EQ(NULL, strstr(self->r.stderr_text, "forked child"))
		TH_LOG("%s", self->r.stderr_text);
	snprintf(self->path, sizeof(self->path), "%s/gmon.out.%d", self->dir,
		 child);
	EXPECT_NE(0, access(self->path, F_OK));
	LOAD("gmon.out");
}

/*
 * A limit that pins nothing: the calls are counted all the same, in the
 * file the library writes itself, and the line says why.
 */
TEST_F(gmon, rlimit_memlock_0_keeps_the_calls_and_names_the_limit)
{
	ASSERT_EQ(0, memlock_limit(0));
	ASSERT_EQ(0, run_subject(&self->r, self->bin, "calls", self->env));
	EXPECT_NE(NULL, strstr(self->r.stderr_text,
			       "no histogram (RLIMIT_MEMLOCK, 0 KiB, cannot pin even "))
		TH_LOG("%s", self->r.stderr_text);
	LOAD("gmon.out");
	EXPECT_FIRST_CALLS();
	EXPECT_EQ(0, gmon_all_samples(&self->g));
}

/* -------- struct profil_output, straight through the ioctl -------- */

#define IMG_PAGES	4
#define IMG_HEAD	64	/* bytes written as they are: 32 "bins" */
#define IMG_REC		16
#define IMG_MAX		100
#define IMG_CTL		(IMG_HEAD + IMG_REC * IMG_MAX)

FIXTURE(output) {
	char dir[64];
	unsigned char *img;
	struct profil_output_ctl *ctl;
	struct profil_region r;
	struct profil_output o;
	struct profil_setup s;
	int dirfd;
};

FIXTURE_SETUP(output)
{
	REQUIRE_MODULE();
	strcpy(self->dir, "/tmp/gmonXXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	self->dirfd = open(self->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ASSERT_LE(0, self->dirfd);
	self->img = mmap(NULL, IMG_PAGES * 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->img);
	memset(self->img, 'h', IMG_HEAD - 2);
	self->ctl = (void *)(self->img + IMG_CTL);
	self->ctl->enable = 1;
	/* Every PC in one 16-bit bin, the head's last two bytes. */
	self->r = (struct profil_region){
		.buf = (uintptr_t)self->img + IMG_HEAD - 2, .bufsize = 2,
		.flags = PROFIL_REGION_OVERFLOW,
	};
	self->o = (struct profil_output){
		.size = sizeof(self->o), .dirfd = self->dirfd,
		.rec_size = IMG_REC, .image = (uintptr_t)self->img,
		.image_size = IMG_PAGES * 4096, .head_size = IMG_HEAD,
		.nr_recs_max = IMG_MAX, .ctl_offset = IMG_CTL,
		.name = (uintptr_t)"prof.%p", .child_name = (uintptr_t)"kid.%p",
	};
	self->s = (struct profil_setup){
		.size = sizeof(self->s), .rate = RATE, .nr_regions = 1,
		.region_size = sizeof(self->r), .regions = (uintptr_t)&self->r,
		.output = (uintptr_t)&self->o,
	};
}

FIXTURE_TEARDOWN(output)
{
	dev_ioctl(PROFIL_IOC_OFF, NULL);
	close(self->dirfd);
	rm_rf(self->dir);
}

/* The size of DIR/NAME, or -1. */
static long file_size(const char *dir, const char *name)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) ? -1 : st.st_size;
}

static void name_pid(char *buf, size_t len, const char *fmt, pid_t pid)
{
	snprintf(buf, len, fmt, (int)pid);
}

TEST_F(output, off_writes_the_head_and_the_records_in_use)
{
	char name[64], path[256];
	unsigned char buf[IMG_HEAD + 3 * IMG_REC];
	struct profil_stats st;
	int fd;

	ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_SETUP, &self->s));
	memset(self->img + IMG_HEAD, 'r', 5 * IMG_REC);
	self->ctl->nr_recs = 3;
	spin_cpu(spin_a, 50 * 1000000ULL);
	ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_OFF, NULL));
	name_pid(name, sizeof(name), "prof.%d", getpid());
	EXPECT_EQ(IMG_HEAD + 3 * IMG_REC, file_size(self->dir, name));
	snprintf(path, sizeof(path), "%s/%s", self->dir, name);
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(sizeof(buf), read(fd, buf, sizeof(buf)));
	close(fd);
	/* What the image held when the session ended, bin included. */
	EXPECT_EQ(0, memcmp(buf, self->img, sizeof(buf)));
	EXPECT_NE(0, *(uint16_t *)(self->img + IMG_HEAD - 2));
	st = get_stats();
	EXPECT_EQ(1, st.written);
	EXPECT_EQ(0, st.write_error);
}

TEST_F(output, a_record_count_past_the_capacity_is_clamped)
{
	char name[64];

	ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_SETUP, &self->s));
	self->ctl->nr_recs = ~0ULL;
	ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_OFF, NULL));
	name_pid(name, sizeof(name), "prof.%d", getpid());
	EXPECT_EQ(IMG_HEAD + IMG_MAX * IMG_REC, file_size(self->dir, name));
}

TEST_F(output, enable_0_pauses_the_count)
{
	struct profil_stats st0 = get_stats(), st;

	self->ctl->enable = 0;
	ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_SETUP, &self->s));
	/*
	 * 100 ms at 1 kHz, and 40 paused at least: the spin's CPU time is
	 * credited at the ticks, the last ones' after it (38 of 50 once in a
	 * 50 ms spin on 6.12); a count that is not paused shows in samples.
	 */
	spin_cpu(spin_a, 100 * 1000000ULL);
	st = get_stats();
	EXPECT_EQ(st0.samples, st.samples);
	EXPECT_LE(40, st.paused - st0.paused);
	EXPECT_EQ(0, *(uint16_t *)(self->img + IMG_HEAD - 2));
}

TEST_F(output, the_file_gets_the_umask_and_the_owner_of_the_process)
{
	char name[64], path[256];
	struct stat st;
	mode_t old = umask(027);

	ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_SETUP, &self->s));
	umask(0);	/* the umask at arming counts */
	ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_OFF, NULL));
	umask(old);
	name_pid(name, sizeof(name), "prof.%d", getpid());
	snprintf(path, sizeof(path), "%s/%s", self->dir, name);
	ASSERT_EQ(0, stat(path, &st));
	EXPECT_EQ(0640, st.st_mode & 0777);
	EXPECT_EQ(geteuid(), st.st_uid);
}

TEST_F(output, exit_writes_and_a_forked_child_uses_its_own_name)
{
	char name[64];
	int status;
	pid_t pid;

	ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_SETUP, &self->s));
	self->ctl->nr_recs = 2;
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		self->ctl->nr_recs = 1;
		/*
		 * Any request waits for the take-over (profil(4)); the
		 * child's session, ended by the exit.
		 */
		_exit(get_stats().state == PROFIL_STATE_ON ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
	name_pid(name, sizeof(name), "kid.%d", pid);
	EXPECT_EQ(IMG_HEAD + IMG_REC, file_size(self->dir, name));
	name_pid(name, sizeof(name), "prof.%d", getpid());
	EXPECT_EQ(-1, file_size(self->dir, name));
}

/*
 * A forked child taken over, then ended by @how: "exec" (a shell that
 * exits) or "exit"; the size of its file, or -1 (the directory logged).
 */
static long child_file(struct __test_metadata *_metadata,
		       FIXTURE_DATA(output) *self, const char *how)
{
	char name[64];
	long size;
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -2;
	if (!pid) {
		self->ctl->nr_recs = 1;
		if (get_stats().state != PROFIL_STATE_ON)
			_exit(1);
		if (!strcmp(how, "exec"))
			execl("/bin/sh", "sh", "-c", "exit 0", (char *)NULL);
		_exit(strcmp(how, "exit") ? 2 : 0);
	}
	EXPECT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status) TH_LOG("%s", how);
	name_pid(name, sizeof(name), "kid.%d", pid);
	size = file_size(self->dir, name);
	if (size < 0) {
		DIR *d = opendir(self->dir);
		struct dirent *e;

		while (d && (e = readdir(d)))
			TH_LOG("%s: no %s; %s is there", how, name, e->d_name);
		if (d)
			closedir(d);
	}
	return size;
}

/*
 * PROFIL_OUTPUT_CHILD_EXIT_ONLY: a forked child's exec writes no file (its
 * image holds the parent's profile up to the fork), its exit does, and
 * without the flag its exit does too.  The parent's own file is its own
 * business.
 */
TEST_F(output, child_exit_only_writes_a_childs_file_at_exit_not_at_exec)
{
	char name[64];

	self->o.flags = PROFIL_OUTPUT_CHILD_EXIT_ONLY;
	ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_SETUP, &self->s));
	EXPECT_EQ(-1, child_file(_metadata, self, "exec"));
	EXPECT_EQ(IMG_HEAD + IMG_REC, child_file(_metadata, self, "exit"));
	ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_OFF, NULL));
	name_pid(name, sizeof(name), "prof.%d", getpid());
	EXPECT_EQ(IMG_HEAD, file_size(self->dir, name));

	self->o.flags = 0;
	ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_SETUP, &self->s));
	EXPECT_EQ(IMG_HEAD + IMG_REC, child_file(_metadata, self, "exit"));
	EXPECT_EQ(IMG_HEAD + IMG_REC, child_file(_metadata, self, "exec"));
}

/*
 * A process's own exec writes its file, with the credentials its old image
 * ended with: those it armed with, or none.  7.3 installs the new
 * program's credentials before it lets go of the old memory (where the
 * writer starts), 6.1 and 6.12 after.  @uid: drop to it before the exec.
 */
static long exec_file(struct __test_metadata *_metadata,
		      FIXTURE_DATA(output) *self, uid_t uid)
{
	char name[64];
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -2;
	if (!pid) {
		if (dev_ioctl(PROFIL_IOC_SETUP, &self->s))
			_exit(1);
		if (uid != getuid() && setresuid(uid, uid, uid))
			_exit(2);
		execl("/bin/sh", "sh", "-c", "exit 0", (char *)NULL);
		_exit(3);
	}
	EXPECT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
	name_pid(name, sizeof(name), "prof.%d", pid);
	return file_size(self->dir, name);
}

TEST_F(output, exec_writes_the_file_of_the_process_that_armed)
{
	EXPECT_EQ(IMG_HEAD, exec_file(_metadata, self, getuid()));
}

/*
 * PROFIL_OUTPUT_FORKED: a forked child that arms its inherited profile
 * anew (libprofil, when its take-over failed) is a descendant: with
 * PROFIL_OUTPUT_CHILD_EXIT_ONLY its exec writes no file.  Without the
 * flag the same exec writes one (above).
 */
TEST_F(output, a_forked_rearm_writes_no_file_at_exec)
{
	self->o.flags = PROFIL_OUTPUT_CHILD_EXIT_ONLY | PROFIL_OUTPUT_FORKED;
	EXPECT_EQ(-1, exec_file(_metadata, self, getuid()));
	self->o.flags = PROFIL_OUTPUT_FORKED;
	EXPECT_EQ(IMG_HEAD, exec_file(_metadata, self, getuid()));
}

TEST_F(output, exec_after_dropping_credentials_writes_nothing)
{
	if (getuid())
		SKIP(return, "needs root, to drop to uid 65534");
	EXPECT_EQ(-1, exec_file(_metadata, self, 65534));
}

/*
 * A FIFO at the name is unlinked, never opened: a reader waiting on it
 * sees no writer, and the name holds the profile.
 */
TEST_F(output, a_fifo_at_the_name_is_replaced_never_opened)
{
	char name[64], path[256], c;
	struct profil_stats st;
	struct stat sb;
	int fd;

	name_pid(name, sizeof(name), "prof.%d", getpid());
	snprintf(path, sizeof(path), "%s/%s", self->dir, name);
	ASSERT_EQ(0, mkfifo(path, 0666));
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_SETUP, &self->s));
	ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_OFF, NULL));
	st = get_stats();
	EXPECT_EQ(0, st.write_error);
	EXPECT_EQ(1, st.written);
	/* No writer ever opened the FIFO: a read says end of file. */
	EXPECT_EQ(0, read(fd, &c, 1));
	close(fd);
	ASSERT_EQ(0, stat(path, &sb));
	EXPECT_TRUE(S_ISREG(sb.st_mode));
	EXPECT_EQ(IMG_HEAD, sb.st_size);
}

/* A bad output leaves a running session exactly as it was. */
static void expect_refused(struct __test_metadata *_metadata,
			   FIXTURE_DATA(output) *self, int err)
{
	static uint16_t bins[4];
	struct profil_region r = {
		.buf = (uintptr_t)bins, .bufsize = sizeof(bins),
		.flags = PROFIL_REGION_OVERFLOW,
	};
	struct profil_stats st0, st;

	bins[0] = 0;
	ASSERT_EQ(0, arm_regions(&r, 1, RATE));
	st0 = get_stats();
	EXPECT_EQ(-err, dev_ioctl(PROFIL_IOC_SETUP, &self->s));
	st = get_stats();
	EXPECT_EQ(PROFIL_STATE_ON, st.state);
	EXPECT_EQ(st0.armed, st.armed);
	EXPECT_EQ(0, st.written);
	spin_cpu(spin_a, 20 * 1000000ULL);
	EXPECT_LT(0, bins[0]);
}

TEST_F(output, bad_dirfd_is_ebadf)
{
	self->o.dirfd = -1;
	expect_refused(_metadata, self, EBADF);
}

TEST_F(output, a_file_as_dirfd_is_enotdir)
{
	self->o.dirfd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	expect_refused(_metadata, self, ENOTDIR);
	close(self->o.dirfd);
}

TEST_F(output, bad_templates_are_einval)
{
	const char *bad[] = { "", ".", "..", "a/b", "a%", "a%d", "%p/x" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		self->o.name = (uintptr_t)bad[i];
		expect_refused(_metadata, self, EINVAL);
		self->o.name = (uintptr_t)"ok";
		self->o.child_name = (uintptr_t)bad[i];
		expect_refused(_metadata, self, EINVAL);
		self->o.child_name = (uintptr_t)"kid";
	}
}

TEST_F(output, a_long_name_is_enametoolong)
{
	char name[300];

	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	self->o.name = (uintptr_t)name;
	expect_refused(_metadata, self, ENAMETOOLONG);
	name[254] = '\0';
	strcat(name, "%p");	/* 254 bytes and a pid: too long expanded */
	expect_refused(_metadata, self, ENAMETOOLONG);
}

/*
 * The child's template is checked with the longest pid there can be, not
 * with the caller's: a child with a longer pid would silently get no file.
 */
TEST_F(output, a_child_name_too_long_for_the_longest_pid_is_enametoolong)
{
	char name[300];

	memset(name, 'k', 249);		/* 249 + 7 digits > NAME_MAX */
	strcpy(name + 249, "%p");
	self->o.child_name = (uintptr_t)name;
	expect_refused(_metadata, self, ENAMETOOLONG);
	name[248] = '\0';		/* 248 + 7 fits */
	strcat(name, "%p");
	self->o.child_name = (uintptr_t)name;
	ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_SETUP, &self->s));
}

TEST_F(output, bad_pointers_are_efault)
{
	self->o.name = 0;
	expect_refused(_metadata, self, EFAULT);
	self->o.name = (uintptr_t)"ok";
	self->s.output = 8;
	expect_refused(_metadata, self, EFAULT);
	self->s.output = (uintptr_t)&self->o;
	munmap(self->img + 4096, 4096);
	expect_refused(_metadata, self, EFAULT);
}

TEST_F(output, bad_layouts_are_einval)
{
	struct profil_output good = self->o;

	self->o.flags = ~PROFIL_OUTPUT_FLAGS;
	expect_refused(_metadata, self, EINVAL);
	self->o.flags = 0x80000000U;
	expect_refused(_metadata, self, EINVAL);
	self->o = good;
	self->o.rec_size = 0;
	expect_refused(_metadata, self, EINVAL);
	self->o = good;
	self->o.rec_size = 4097;
	expect_refused(_metadata, self, EINVAL);
	self->o = good;
	self->o.image += 4;
	expect_refused(_metadata, self, EINVAL);
	self->o = good;
	self->o.ctl_offset = IMG_CTL - 8;	/* over the last record */
	expect_refused(_metadata, self, EINVAL);
	self->o = good;
	self->o.ctl_offset = IMG_CTL + 4;	/* misaligned */
	expect_refused(_metadata, self, EINVAL);
	self->o = good;
	self->o.ctl_offset = good.image_size - 8;	/* past the end */
	expect_refused(_metadata, self, EINVAL);
	self->o = good;
	self->o.nr_recs_max = ~0ULL / 2;	/* overflows */
	expect_refused(_metadata, self, EINVAL);
	self->o = good;
	self->o.size = PROFIL_OUTPUT_SIZE_VER0 - 8;
	expect_refused(_metadata, self, EINVAL);
}

TEST_HARNESS_MAIN
