// SPDX-License-Identifier: GPL-2.0
/*
 * profil(1) on an unmodified program (cmd_subject.c, no -pg, no libprofil):
 * the split it reports against the split built in, threads, children,
 * a stripped program, source lines, a library loaded late, code in no
 * object, stdio and exit status passed through, a fatal signal, a program
 * that closes every descriptor, the error cases, gmon output, and perf
 * record's verdict on the same program as an outside reference (root).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include "kselftest_harness.h"
#include "common.h"
#include "gmon.h"

#define CMD_TOL		5.0	/* points of % between reported and built in */

/* |got - want| <= tol, in doubles; a TH_LOG() may follow. */
#define EXPECT_NEAR(want, got, tol)					\
	EXPECT_TRUE((double)(got) - (double)(want) <= (tol) &&		\
		    (double)(want) - (double)(got) <= (tol))

struct prow {
	char proc[16];
	unsigned long samples;
	double pct;
	char function[128];
	char object[256];
	char source[128];
};

struct prof {
	struct prow rows[1024];
	int n;
	char header[4096];
};

/* The next field of a CSV line, unquoted ("a ""b"", c" is a "b", c). */
static char *field(char **s)
{
	char *f = *s, *r, *w;

	if (!f)
		return "";
	if (*f != '"')
		return strsep(s, ",") ?: "";
	for (r = w = f + 1; *r && (*r != '"' || r[1] == '"'); r++)
		*w++ = *r == '"' ? *r++ : *r;
	*s = *r && r[1] == ',' ? r + 2 : NULL;
	*w = '\0';
	return f + 1;
}

/* profil's CSV at @path: '#' lines into header, rows into rows. */
static int prof_load(const char *path, struct prof *p)
{
	char line[1024], *s;
	FILE *f = fopen(path, "re");

	memset(p, 0, sizeof(*p));
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f) && p->n < 1024) {
		struct prow *w = &p->rows[p->n];

		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#') {
			strncat(p->header, line, sizeof(p->header) - strlen(p->header) - 2);
			strcat(p->header, "\n");
			continue;
		}
		if (!strncmp(line, "process,", 8))
			continue;
		s = line;
		snprintf(w->proc, sizeof(w->proc), "%s", field(&s));
		w->samples = strtoul(field(&s), NULL, 10);
		w->pct = strtod(field(&s), NULL);
		field(&s);
		snprintf(w->function, sizeof(w->function), "%s", field(&s));
		snprintf(w->object, sizeof(w->object), "%s", field(&s));
		snprintf(w->source, sizeof(w->source), "%s", field(&s));
		p->n++;
	}
	fclose(f);
	return 0;
}

/* Samples of @fn (NULL: every function) in process @proc ("all", a pid). */
static unsigned long samples_of(const struct prof *p, const char *proc,
				const char *fn)
{
	unsigned long n = 0;
	int i;

	for (i = 0; i < p->n; i++)
		if (!strcmp(p->rows[i].proc, proc) &&
		    (!fn || !strcmp(p->rows[i].function, fn)))
			n += p->rows[i].samples;
	return n;
}

static const struct prow *top_row(const struct prof *p, const char *proc)
{
	const struct prow *top = NULL;
	int i;

	for (i = 0; i < p->n; i++)
		if (!strcmp(p->rows[i].proc, proc) &&
		    (!top || p->rows[i].samples > top->samples))
			top = &p->rows[i];
	return top;
}

/* @fn's share of fifty + thirty + twenty in "all", in %. */
static double share(const struct prof *p, const char *fn)
{
	double all = samples_of(p, "all", "fifty") +
		     samples_of(p, "all", "thirty") +
		     samples_of(p, "all", "twenty");

	return all ? 100.0 * samples_of(p, "all", fn) / all : 0;
}

/*
 * The split within @tol points.  The 5 points is checked by the
 * tests about the split; the others, whose point is elsewhere (a signal,
 * no descriptors, coarser bins), allow 10.  The subject splits its CPU
 * time exactly, by its own thread clock, in rounds long enough that late
 * interrupts under TCG do not move samples between functions (see
 * cmd_subject.c); what is left is the sampling's own spread, about one
 * point at 2000 samples.
 */
#define EXPECT_SPLIT_TOL(p, tol) do {					\
	EXPECT_NEAR(50.0, share(p, "fifty"), tol);			\
	EXPECT_NEAR(30.0, share(p, "thirty"), tol);			\
	EXPECT_NEAR(20.0, share(p, "twenty"), tol);			\
	TH_LOG("split %.1f/%.1f/%.1f", share(p, "fifty"),		\
	       share(p, "thirty"), share(p, "twenty"));			\
} while (0)
#define EXPECT_SPLIT(p)		EXPECT_SPLIT_TOL(p, CMD_TOL)
#define EXPECT_SANE_SPLIT(p)	EXPECT_SPLIT_TOL(p, 2 * CMD_TOL)

/* The process profil ran (its header line comes first). */
static int main_pid(const struct prof *p)
{
	int pid = 0;
	const char *h = strstr(p->header, "# pid ");

	if (h)
		sscanf(h, "# pid %d", &pid);
	return pid;
}

/* A process in the rows other than @pid and "all", in @cpid ("" if none). */
static void other_proc(const struct prof *p, const char *pid, char cpid[16])
{
	int i;

	cpid[0] = '\0';
	for (i = 0; i < p->n; i++)
		if (strcmp(p->rows[i].proc, pid) && strcmp(p->rows[i].proc, "all"))
			strcpy(cpid, p->rows[i].proc);
}

/* The header line of process @pid: rate, CPU, samples and expected. */
static int header_of(const struct prof *p, int pid, unsigned int *rate,
		     double *cpu, unsigned long *samples, double *expect)
{
	char key[32];
	const char *h;

	snprintf(key, sizeof(key), "# pid %d ", pid);
	h = strstr(p->header, key);
	h = h ? strchr(h, ':') : NULL;
	if (!h || sscanf(h, ": %u Hz, CPU %lf s (%*f s sampled), %lu samples (%lf expected)",
			 rate, cpu, samples, expect) != 4)
		return -1;
	return 0;
}

FIXTURE(cmd) {
	char dir[2048];
	char profil[4096];
	char csv[64];
	struct run r;
	struct prof p;
};

FIXTURE_SETUP(cmd)
{
	REQUIRE_MODULE();
	gmon_helper(self->dir, sizeof(self->dir), "");
	gmon_helper(self->profil, sizeof(self->profil), "profil");
	snprintf(self->csv, sizeof(self->csv), "/tmp/profil_cmd.%d.csv", getpid());
	unlink(self->csv);
}

FIXTURE_TEARDOWN(cmd)
{
	unlink(self->csv);
}

/*
 * profil -f csv -o CSV -r RATE OPTS... -- SUBJECT MODE ARG; the wait
 * status.  @opts is NULL-terminated; @arg may be NULL.
 */
static int profil_run(struct run *r, const char *profil, const char *csv,
		      const char *const *opts, const char *subject,
		      const char *mode, const char *arg)
{
	const char *argv[32] = { profil, "-f", "csv", "-o", csv, "-r", "1000" };
	int n = 7;

	for (; opts && *opts && n < 24; opts++)
		argv[n++] = *opts;
	argv[n++] = "--";
	argv[n++] = subject;
	argv[n++] = mode;
	argv[n++] = arg;
	argv[n] = NULL;
	if (run_start(r, profil, (char *const *)argv, NULL))
		return -1;
	return run_finish(r);
}

static void subject(char *buf, size_t len, const char *dir, const char *name)
{
	snprintf(buf, len, "%s%s", dir, name);
}

#define RUN(opts, bin, mode, arg) ({					\
	char _b[4096];							\
	subject(_b, sizeof(_b), self->dir, bin);			\
	profil_run(&self->r, self->profil, self->csv, opts, _b, mode, arg); \
})

#define LOAD() do {							\
	ASSERT_EQ(0, prof_load(self->csv, &self->p))			\
		TH_LOG("no CSV; profil said: %s", self->r.stderr_text);	\
} while (0)

TEST_F(cmd, split_50_30_20_one_function_in_a_library)
{
	unsigned long samples;
	unsigned int rate;
	double cpu, expect;
	int i;

	ASSERT_EQ(0, RUN(NULL, "cmd_subject", "split", NULL))
		TH_LOG("%s", self->r.stderr_text);
	LOAD();
	EXPECT_SPLIT(&self->p);
	for (i = 0; i < self->p.n; i++)
		if (!strcmp(self->p.rows[i].function, "thirty"))
			EXPECT_NE(NULL, strstr(self->p.rows[i].object, "libcmd_split.so"));
	ASSERT_EQ(0, header_of(&self->p, main_pid(&self->p), &rate, &cpu, &samples, &expect))
		TH_LOG("%s", self->p.header);
	EXPECT_EQ(1000, rate);
	EXPECT_NEAR(expect, samples, expect * 0.1) TH_LOG("%s", self->p.header);
}

TEST_F(cmd, four_threads)
{
	unsigned long samples;
	unsigned int rate;
	double cpu, expect;

	ASSERT_EQ(0, RUN(NULL, "cmd_subject", "threads", NULL))
		TH_LOG("%s", self->r.stderr_text);
	LOAD();
	EXPECT_SPLIT(&self->p);
	ASSERT_EQ(0, header_of(&self->p, main_pid(&self->p), &rate, &cpu, &samples, &expect));
	EXPECT_GT(cpu, 1.1);	/* 4 x 0.3 s: every thread counted */
	EXPECT_NEAR(expect, samples, expect * 0.1) TH_LOG("%s", self->p.header);
}

/* A forked child that execs: its own process in the report, and the sum. */
TEST_F(cmd, children_forked_and_execed)
{
	const char *opts[] = { "--children", NULL };
	const struct prow *top;
	char pid[16], cpid[16];
	unsigned long fifty, twenty;

	ASSERT_EQ(0, RUN(opts, "cmd_subject", "exec", NULL))
		TH_LOG("%s", self->r.stderr_text);
	LOAD();
	snprintf(pid, sizeof(pid), "%d", main_pid(&self->p));
	top = top_row(&self->p, pid);
	ASSERT_NE(NULL, top) TH_LOG("%s", self->p.header);
	EXPECT_STREQ("fifty", top->function);
	other_proc(&self->p, pid, cpid);
	ASSERT_NE(0, cpid[0]) TH_LOG("no row of the child");
	top = top_row(&self->p, cpid);
	ASSERT_NE(NULL, top);
	EXPECT_STREQ("twenty", top->function);
	/* "all" is the sum of the two processes, 300 ms of CPU each. */
	EXPECT_EQ(samples_of(&self->p, "all", NULL),
		  samples_of(&self->p, pid, NULL) + samples_of(&self->p, cpid, NULL));
	fifty = samples_of(&self->p, "all", "fifty");
	twenty = samples_of(&self->p, "all", "twenty");
	EXPECT_NEAR(50.0, 100.0 * twenty / (twenty + fifty), 10.0);
}

/*
 * A child forked after its parent's work counts from zero: the parent's
 * samples before the fork are the parent's alone.
 */
TEST_F(cmd, forked_child_counts_its_own_samples_only)
{
	const char *opts[] = { "--children", NULL };
	char pid[16], cpid[16];
	unsigned long fifty, twenty;

	ASSERT_EQ(0, RUN(opts, "cmd_subject", "fork", NULL))
		TH_LOG("%s", self->r.stderr_text);
	LOAD();
	snprintf(pid, sizeof(pid), "%d", main_pid(&self->p));
	other_proc(&self->p, pid, cpid);
	ASSERT_NE(0, cpid[0]) TH_LOG("no row of the child: %s", self->p.header);
	EXPECT_GT(samples_of(&self->p, cpid, "twenty") / 20 + 1,
		  samples_of(&self->p, cpid, "fifty"));
	EXPECT_EQ(0, samples_of(&self->p, pid, "twenty"));
	fifty = samples_of(&self->p, "all", "fifty");
	twenty = samples_of(&self->p, "all", "twenty");
	EXPECT_NEAR(50.0, 100.0 * twenty / (twenty + fifty), 10.0);
}

TEST_F(cmd, children_left_alone_without_the_option)
{
	ASSERT_EQ(0, RUN(NULL, "cmd_subject", "exec", NULL))
		TH_LOG("%s", self->r.stderr_text);
	LOAD();
	EXPECT_EQ(0, samples_of(&self->p, "all", "twenty"));
	/* 300 ms of fifty, less the tenth of it spent reading the clock. */
	EXPECT_LT(200, samples_of(&self->p, "all", "fifty"));
}

/* C++ names as the source spells them; a comma in one, quoted in the CSV. */
TEST_F(cmd, cxx_names_demangled)
{
	const struct prow *top;
	unsigned long heavy, run;

	ASSERT_EQ(0, RUN(NULL, "cmd_subject_cxx", "1000", NULL))
		TH_LOG("%s", self->r.stderr_text);
	LOAD();
	top = top_row(&self->p, "all");
	ASSERT_NE(NULL, top) TH_LOG("%s", self->p.header);
	EXPECT_STREQ("cxx::heavy(unsigned long, int)", top->function);
	EXPECT_NE(NULL, strstr(top->object, "cmd_subject_cxx"));
	heavy = samples_of(&self->p, "all", "cxx::heavy(unsigned long, int)");
	run = samples_of(&self->p, "all", "cxx::worker<int>::run(unsigned long)");
	EXPECT_LT(0, run);
	/* 2:1 by construction. */
	EXPECT_NEAR(66.7, 100.0 * heavy / (heavy + run + !(heavy + run)), CMD_TOL)
		TH_LOG("heavy %lu, run %lu", heavy, run);
}

TEST_F(cmd, stripped_program_by_its_dynamic_symbols)
{
	ASSERT_EQ(0, RUN(NULL, "cmd_subject_stripped", "split", NULL))
		TH_LOG("%s", self->r.stderr_text);
	LOAD();
	EXPECT_SPLIT(&self->p);
}

TEST_F(cmd, source_lines_from_debug_info)
{
	const char *opts[] = { "-l", NULL };
	const struct prow *top = NULL;
	int i;

	ASSERT_EQ(0, RUN(opts, "cmd_subject", "split", NULL))
		TH_LOG("%s", self->r.stderr_text);
	LOAD();
	for (i = 0; i < self->p.n; i++)
		if (!strcmp(self->p.rows[i].proc, "all") &&
		    !strcmp(self->p.rows[i].function, "fifty") &&
		    (!top || self->p.rows[i].samples > top->samples))
			top = &self->p.rows[i];
	ASSERT_NE(NULL, top);
	/* The loop of cmd_churn(), inlined from cmd_work.h. */
	EXPECT_EQ(0, strncmp(top->source, "cmd_work.h:", 11)) TH_LOG("%s", top->source);
	EXPECT_NEAR(50.0, share(&self->p, "fifty"), CMD_TOL)
		TH_LOG("fifty %.1f%%", share(&self->p, "fifty"));
}

TEST_F(cmd, library_dlopened_after_start)
{
	const struct prow *top;

	ASSERT_EQ(0, RUN(NULL, "cmd_subject", "dlopen", NULL))
		TH_LOG("%s", self->r.stderr_text);
	LOAD();
	top = top_row(&self->p, "all");
	ASSERT_NE(NULL, top);
	EXPECT_STREQ("dl_work", top->function);
	EXPECT_NE(NULL, strstr(top->object, "libcmd_dl.so"));
	EXPECT_LT(50.0, top->pct);	/* 80% by construction */
}

TEST_F(cmd, code_in_no_object_has_a_line_of_its_own)
{
	const struct prow *top;

	ASSERT_EQ(0, RUN(NULL, "cmd_subject", "jit", NULL))
		TH_LOG("%s", self->r.stderr_text);
	LOAD();
	top = top_row(&self->p, "all");
	ASSERT_NE(NULL, top);
	EXPECT_STREQ("[in no known code]", top->function);
	EXPECT_LT(70.0, top->pct);
	EXPECT_LT(0, samples_of(&self->p, "all", "fifty"));
}

TEST_F(cmd, stdio_and_exit_status_passed_through)
{
	char b[4096];
	int in[2], saved;

	ASSERT_EQ(0, pipe(in));
	ASSERT_EQ(6, write(in[1], "hello\n", 6));
	close(in[1]);
	saved = dup(STDIN_FILENO);
	dup2(in[0], STDIN_FILENO);
	close(in[0]);
	subject(b, sizeof(b), self->dir, "cmd_subject");
	{
		const char *argv[] = { self->profil, "-f", "csv", "-o", self->csv,
				       "--", b, "stdio", NULL };

		ASSERT_EQ(0, run_start(&self->r, self->profil, (char *const *)argv, NULL));
	}
	dup2(saved, STDIN_FILENO);
	close(saved);
	run_finish(&self->r);
	ASSERT_TRUE(WIFEXITED(self->r.status));
	EXPECT_EQ(7, WEXITSTATUS(self->r.status));
	EXPECT_STREQ("cmd_subject read: hello\n", self->r.stdout_text);
	EXPECT_NE(NULL, strstr(self->r.stderr_text, "cmd_subject on stderr"));
	LOAD();
	EXPECT_LT(0, samples_of(&self->p, "all", "fifty"));
}

TEST_F(cmd, killed_by_a_signal_reported_and_128_plus_n)
{
	RUN(NULL, "cmd_subject", "kill", NULL);
	ASSERT_TRUE(WIFEXITED(self->r.status));
	EXPECT_EQ(128 + SIGTERM, WEXITSTATUS(self->r.status));
	EXPECT_NE(NULL, strstr(self->r.stderr_text, "killed by signal 15"))
		TH_LOG("%s", self->r.stderr_text);
	LOAD();
	EXPECT_SANE_SPLIT(&self->p);
}

TEST_F(cmd, program_that_closes_every_descriptor)
{
	ASSERT_EQ(0, RUN(NULL, "cmd_subject", "closefds", NULL))
		TH_LOG("%s", self->r.stderr_text);
	LOAD();
	EXPECT_SANE_SPLIT(&self->p);
}

TEST_F(cmd, rate_10khz)
{
	const char *opts[] = { "-r", "10000", NULL };
	unsigned long samples;
	unsigned int rate;
	double cpu, expect;

	ASSERT_EQ(0, RUN(opts, "cmd_subject", "split", "300"))
		TH_LOG("%s", self->r.stderr_text);
	LOAD();
	ASSERT_EQ(0, header_of(&self->p, main_pid(&self->p), &rate, &cpu, &samples, &expect));
	EXPECT_EQ(10000, rate);
	EXPECT_NEAR(expect, samples, expect * 0.1) TH_LOG("%s", self->p.header);
	EXPECT_LT(2500, samples);
	EXPECT_SANE_SPLIT(&self->p);
}

TEST_F(cmd, static_program_refused_with_a_hint)
{
	RUN(NULL, "cmd_subject_static", "split", NULL);
	ASSERT_TRUE(WIFEXITED(self->r.status));
	EXPECT_EQ(125, WEXITSTATUS(self->r.status));
	EXPECT_NE(NULL, strstr(self->r.stderr_text, "statically linked"));
	EXPECT_NE(NULL, strstr(self->r.stderr_text, "-lprofil"));
	EXPECT_NE(0, access(self->csv, F_OK));
}

TEST_F(cmd, bad_usage)
{
	const char *fmt[] = { "-f", "xml", NULL };
	const char *rate[] = { "-r", "100001", NULL };
	const char *argv[] = { self->profil, NULL };

	RUN(fmt, "cmd_subject", "split", NULL);
	EXPECT_EQ(125, WEXITSTATUS(self->r.status));
	EXPECT_NE(NULL, strstr(self->r.stderr_text, "unknown format"));
	RUN(rate, "cmd_subject", "split", NULL);
	EXPECT_EQ(125, WEXITSTATUS(self->r.status));
	RUN(NULL, "no-such-program", "split", NULL);
	EXPECT_EQ(127, WEXITSTATUS(self->r.status));
	EXPECT_NE(NULL, strstr(self->r.stderr_text, "No such file"));
	ASSERT_EQ(0, run_start(&self->r, self->profil, (char *const *)argv, NULL));
	run_finish(&self->r);
	EXPECT_EQ(125, WEXITSTATUS(self->r.status));
	EXPECT_NE(NULL, strstr(self->r.stderr_text, "usage"));
}

/* Run profil with RLIMIT_MEMLOCK at @kib KiB, CAP_IPC_LOCK gone for good. */
static int run_limited(struct run *r, const char *profil, const char *csv,
		       const char *bin, rlim_t kib)
{
	struct rlimit rl = { kib * 1024, kib * 1024 };
	const char *argv[] = { profil, "-f", "csv", "-o", csv, "--", bin,
			       "split", NULL };

	fflush(NULL);
	r->pid = fork();
	if (!r->pid) {
		prctl(PR_CAPBSET_DROP, CAP_IPC_LOCK, 0, 0, 0);
		drop_cap_ipc_lock();
		if (setrlimit(RLIMIT_MEMLOCK, &rl))
			_exit(99);
		execv(profil, (char *const *)argv);
		_exit(98);
	}
	return waitpid(r->pid, &r->status, 0) == r->pid ? r->status : -1;
}

TEST_F(cmd, memlock_short_coarser_bins_first)
{
	char b[4096];

	subject(b, sizeof(b), self->dir, "cmd_subject");
	ASSERT_EQ(0, run_limited(&self->r, self->profil, self->csv, b, 512));
	LOAD();
	/* Coarser where the bins were the most (libc), 4 bytes still in the
	 * program and libcmd_split.so, so the split holds. */
	EXPECT_NE(NULL, strstr(self->p.header, "bins of 4 to "))
		TH_LOG("%s", self->p.header);
	EXPECT_SANE_SPLIT(&self->p);
}

TEST_F(cmd, memlock_far_too_short_says_what_is_needed)
{
	char b[4096], err[1024] = "";
	int e[2], saved;

	subject(b, sizeof(b), self->dir, "cmd_subject");
	ASSERT_EQ(0, pipe2(e, O_CLOEXEC));
	saved = dup(STDERR_FILENO);
	dup2(e[1], STDERR_FILENO);
	close(e[1]);
	run_limited(&self->r, self->profil, self->csv, b, 0);
	dup2(saved, STDERR_FILENO);
	close(saved);
	read_all(e[0], err, sizeof(err));
	close(e[0]);
	EXPECT_EQ(0, self->r.status);	/* the program's */
	EXPECT_NE(NULL, strstr(err, "RLIMIT_MEMLOCK (0 KiB) is too small")) TH_LOG("%s", err);
	EXPECT_NE(NULL, strstr(err, "ulimit -l"));
	EXPECT_NE(0, access(self->csv, F_OK));
}

/* -f gmon: a 4.4BSD gmon.out of the main program, as gprof reads it. */
TEST_F(cmd, gmon_output_of_the_main_program)
{
	const char *opts[] = { "-f", "gmon", NULL };
	char b[4096];
	const char *why;
	struct gmon g;
	uint64_t f, t;

	ASSERT_EQ(0, RUN(opts, "cmd_subject", "split", NULL))
		TH_LOG("%s", self->r.stderr_text);
	ASSERT_EQ(0, gmon_load(self->csv, &g, &why)) TH_LOG("%s", why);
	subject(b, sizeof(b), self->dir, "cmd_subject");
	EXPECT_EQ(1000, g.profrate);
	f = gmon_samples(&g, elf_fn(b, "fifty"));
	t = gmon_samples(&g, elf_fn(b, "twenty"));
	ASSERT_LT(0, f + t);
	EXPECT_NEAR(100.0 * 5 / 7, 100.0 * f / (f + t), CMD_TOL);
	gmon_free(&g);
}

/* perf record, allowed to root, names the same function first. */
TEST_F(cmd, perf_record_agrees_on_the_top_function)
{
	char perf[4096], data[64], b[4096], cmd[16384], line[512], sym[256] = "";
	const struct prow *top;
	FILE *f;

	if (geteuid())
		SKIP_NOW("perf_event_paranoid keeps perf from users");
	subject(perf, sizeof(perf), self->dir, "perf");
	if (access(perf, X_OK))
		SKIP_NOW("no perf in the guest");
	ASSERT_EQ(0, RUN(NULL, "cmd_subject", "split", NULL));
	LOAD();
	top = top_row(&self->p, "all");
	ASSERT_NE(NULL, top);
	snprintf(data, sizeof(data), "/tmp/perf.%d.data", getpid());
	subject(b, sizeof(b), self->dir, "cmd_subject");
	snprintf(cmd, sizeof(cmd),
		 "%s record -q -N -e cpu-clock -F 1000 -o %s -- %s split > /dev/null 2>&1 && "
		 "%s report -i %s --stdio -q --sort sym 2> /dev/null", perf, data, b, perf, data);
	f = popen(cmd, "r");
	ASSERT_NE(NULL, f);
	while (!sym[0] && fgets(line, sizeof(line), f))
		if (strstr(line, "] "))
			sscanf(strstr(line, "] ") + 2, "%255s", sym);
	pclose(f);
	unlink(data);
	EXPECT_STREQ(top->function, sym) TH_LOG("profil: %s %.1f%%; perf: %s",
						top->function, top->pct, sym);
}

TEST_HARNESS_MAIN
