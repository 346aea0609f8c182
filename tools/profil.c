// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * profil(1): profile an unmodified program with /dev/profil.
 *
 *	profil [-r RATE] [-o FILE] [-f text|csv|gmon|pprof] [-l] [--children]
 *	       [--sort symbol|object|process] [--percent-limit PCT]
 *	       [--debuginfo-path PATH] [--] command [args...]
 *	profil -p PID [--duration SECONDS] [-r RATE] [-o FILE] [-f ...] [-l]
 *	       [--sort ...] [--percent-limit PCT] [--debuginfo-path PATH]
 *	profil record [-r RATE] [-o DIR] [--children] [--] command [args...]
 *	profil report [-o FILE] [-f text|csv|gmon|pprof] [-l]
 *	       [--sort symbol|object|process] [--percent-limit PCT]
 *	       [--debuginfo-path PATH] [DIR]
 *
 * profil record is the run without the report: it keeps the profile files
 * and what the report needs besides (record.c) in DIR, which profil
 * report reads later, on this machine or another that holds the same
 * objects (found by build-ID when they are not at their path: report.c).
 *
 * Runs the command with profil-agent.so as its dynamic linker's audit
 * module (LD_AUDIT; tools/agent.c), its
 * stdio and environment otherwise untouched, waits for it, then reads the
 * files the kernel wrote for its agent's arms from a private directory and
 * prints where the CPU time went (report.c).  What program the command
 * is, execvp() says first, to a child killed before that program runs
 * (probe_exec()): a static or 32-bit one, of which nothing could be
 * profiled, is refused.  The command's exit status
 * is profil's, or 1 when the command exited 0 and no report could be
 * written; a command killed by signal N kills profil with N once the
 * report is out (as timeout --preserve-status does).
 *
 * Signals as time(1) and perf record users expect: SIGINT and SIGQUIT,
 * which a terminal sends the whole process group, are the command's while
 * it runs; SIGTERM and SIGHUP sent to profil are passed on to it.  Once it
 * ended, any of the four removes the run's directory and ends profil as
 * that signal.  The command starts with the dispositions profil was given.
 *
 * profil -p attaches to a running process instead (attach.c) until one of
 * those four signals, --duration or the process's end, and prints the
 * same report, on standard output.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "profil.h"

#ifndef AGENT_PATH
#define AGENT_PATH "/usr/local/lib/profil/profil-agent.so"
#endif
#define DEFAULT_RATE	1000

static const char usage[] =
	"usage: profil [-r RATE] [-o FILE] [-f text|csv|gmon|pprof] [-l] [--children]\n"
	"              [--sort symbol|object|process] [--percent-limit PCT]\n"
	"              [--debuginfo-path PATH] [--] command [args...]\n"
	"       profil -p PID [--duration SECONDS] [-r RATE] [-o FILE]\n"
	"              [-f text|csv|gmon|pprof] [-l] [--sort symbol|object|process]\n"
	"              [--percent-limit PCT] [--debuginfo-path PATH]\n"
	"       profil record [-r RATE] [-o DIR] [--children] [--] command [args...]\n"
	"       profil report [-o FILE] [-f text|csv|gmon|pprof] [-l]\n"
	"              [--sort symbol|object|process] [--percent-limit PCT]\n"
	"              [--debuginfo-path PATH] [DIR]\n";

/* The long options without a letter. */
enum { OPT_SORT = 256, OPT_PERCENT_LIMIT, OPT_DEBUGINFO_PATH, OPT_DURATION };

/* profil, profil record, profil report. */
enum mode { MODE_PROFILE, MODE_RECORD, MODE_REPORT };

struct opts {
	enum mode mode;
	unsigned int rate;
	const char *output;		/* record: the directory */
	const char *debuginfo_path;
	enum report_format format;
	enum report_sort sort;
	int percent_limit_set;
	double percent_limit;
	int lines, children;
	pid_t pid;			/* -p: the process to attach to */
	double duration;		/* --duration, seconds */
	char **argv;
};

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void fail(const char *fmt, ...)
{
	va_list ap;

	fputs("profil: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(PROFIL_EXIT_FAIL);
}

/* --- before the run ---------------------------------------------------- */

static enum report_format parse_format(const char *s)
{
	if (!strcmp(s, "text"))
		return FORMAT_TEXT;
	if (!strcmp(s, "csv"))
		return FORMAT_CSV;
	if (!strcmp(s, "gmon"))
		return FORMAT_GMON;
	if (!strcmp(s, "pprof"))
		return FORMAT_PPROF;
	fail("unknown format '%s' (text, csv, gmon or pprof)", s);
}

static enum report_sort parse_sort(const char *s)
{
	if (!strcmp(s, "symbol"))
		return SORT_SYMBOL;
	if (!strcmp(s, "object"))
		return SORT_OBJECT;
	if (!strcmp(s, "process"))
		return SORT_PROCESS;
	fail("unknown sort key '%s' (symbol, object or process)", s);
}

static double parse_percent(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !(v >= 0 && v <= 100))
		fail("percent limit '%s': a number from 0 to 100", s);
	return v;
}

static unsigned int read_max_rate(void)
{
	FILE *f = fopen("/sys/module/profil/parameters/max_rate", "re");
	unsigned int max = 0;

	if (f) {
		if (fscanf(f, "%u", &max) != 1)
			max = 0;
		fclose(f);
	}
	return max;
}

static const struct option profile_longs[] = {
	{ "rate", required_argument, NULL, 'r' },
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, 'f' },
	{ "lines", no_argument, NULL, 'l' },
	{ "children", no_argument, NULL, 'c' },
	{ "sort", required_argument, NULL, OPT_SORT },
	{ "percent-limit", required_argument, NULL, OPT_PERCENT_LIMIT },
	{ "debuginfo-path", required_argument, NULL, OPT_DEBUGINFO_PATH },
	{ "pid", required_argument, NULL, 'p' },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "help", no_argument, NULL, 'h' },
	{ 0 }
};

static const struct option record_longs[] = {
	{ "rate", required_argument, NULL, 'r' },
	{ "output", required_argument, NULL, 'o' },
	{ "children", no_argument, NULL, 'c' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 }
};

static const struct option report_longs[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, 'f' },
	{ "lines", no_argument, NULL, 'l' },
	{ "sort", required_argument, NULL, OPT_SORT },
	{ "percent-limit", required_argument, NULL, OPT_PERCENT_LIMIT },
	{ "debuginfo-path", required_argument, NULL, OPT_DEBUGINFO_PATH },
	{ "help", no_argument, NULL, 'h' },
	{ 0 }
};

/*
 * The options of o->mode: plain profil's, record's (the run's) or
 * report's (the report's); then the command, or report's directory.
 */
static void parse_opts(struct opts *o, int argc, char **argv)
{
	static const char *const shorts[] = {
		[MODE_PROFILE] = "+r:o:f:lp:h", [MODE_RECORD] = "+r:o:h",
		[MODE_REPORT] = "o:f:lh",
	};
	static const struct option *const longs[] = {
		[MODE_PROFILE] = profile_longs, [MODE_RECORD] = record_longs,
		[MODE_REPORT] = report_longs,
	};
	char *end;
	long v;
	int c;

	while ((c = getopt_long(argc, argv, shorts[o->mode], longs[o->mode],
				NULL)) != -1) {
		switch (c) {
		case 'r':
			v = strtol(optarg, &end, 10);
			if (*end || v <= 0 || v > 100000)
				fail("rate '%s': a number of Hz, 1 to 100000", optarg);
			o->rate = v;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'f':
			o->format = parse_format(optarg);
			break;
		case 'l':
			o->lines = 1;
			break;
		case 'c':
			o->children = 1;
			break;
		case OPT_SORT:
			o->sort = parse_sort(optarg);
			break;
		case OPT_PERCENT_LIMIT:
			o->percent_limit = parse_percent(optarg);
			o->percent_limit_set = 1;
			break;
		case OPT_DEBUGINFO_PATH:
			o->debuginfo_path = optarg;
			break;
		case 'p':
			v = strtol(optarg, &end, 10);
			if (*end || v <= 0 || v > INT_MAX)
				fail("pid '%s': a process ID", optarg);
			o->pid = v;
			break;
		case OPT_DURATION:
			o->duration = strtod(optarg, &end);
			if (*end || !(o->duration > 0 && o->duration <= 1e9))
				fail("duration '%s': seconds, more than 0", optarg);
			break;
		case 'h':
			fputs(usage, stdout);
			exit(0);
		default:
			fputs(usage, stderr);
			exit(PROFIL_EXIT_FAIL);
		}
	}
	if (o->pid && (optind < argc || o->children))
		fail("-p attaches to a running process: no command, no --children");
	if (o->duration && !o->pid)
		fail("--duration is -p's: a command is profiled until it ends");
	/* A command; report: a directory, or none; -p: none. */
	if (o->mode == MODE_REPORT ? argc - optind > 1 : optind == argc && !o->pid) {
		fputs(usage, stderr);
		exit(PROFIL_EXIT_FAIL);
	}
	o->argv = argv + optind;
}

/* /dev/profil usable, and the rate one the module allows. */
static void check_module(struct opts *o)
{
	unsigned int max;
	int fd = open("/dev/profil", O_RDWR | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT)
		fail("/dev/profil does not exist: the profil module is not loaded (modprobe profil)");
	if (fd < 0)
		fail("/dev/profil: %s", strerror(errno));
	close(fd);
	max = read_max_rate();
	if (!o->rate)
		o->rate = max && max < DEFAULT_RATE ? max : DEFAULT_RATE;
	if (max && o->rate > max)
		fail("rate %u Hz is above the module's max_rate, %u Hz", o->rate, max);
}

/* In a probe: what execvp() failed with, or a probe refused, for profil. */
static void __attribute__((noreturn)) probe_fail(int fd, int err)
{
	if (write(fd, &err, sizeof(err)) < 0)
		err = 0;
	_exit(127);
}

/*
 * What the kernel runs for @argv when execvp() is given it, in @path
 * (PATH_MAX): a child of profil calls execvp() itself, traced, and stops
 * where that exec ends, before the first instruction of what it runs
 * (PTRACE_EVENT_EXEC), to be killed there once /proc/PID/exe said what
 * it is.  So the search is glibc's own: empty PATH elements, the default
 * path, a directory or an unexecutable file of the name passed over, a
 * script's interpreter, and /bin/sh for an executable file execve()
 * refuses with ENOEXEC.  Nothing of the program runs, and the command
 * itself is never traced (a set-user-ID program keeps its privileges).
 * 0 when found; the errno execvp() failed with; -1 without an answer
 * (ptrace refused: Yama's ptrace_scope, or profil itself traced).
 */
static int probe_exec(char **argv, char path[PATH_MAX])
{
	int p[2], st, err = -1, traced = 0;
	char proc[32];
	ssize_t n;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (!pid) {
		close(p[0]);
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) || raise(SIGSTOP))
			probe_fail(p[1], -1);
		execvp(argv[0], argv);
		probe_fail(p[1], errno);
	}
	close(p[1]);
	while (waitpid(pid, &st, 0) == pid && WIFSTOPPED(st)) {
		if (!traced && WSTOPSIG(st) == SIGSTOP &&
		    !ptrace(PTRACE_SETOPTIONS, pid, NULL,
			    PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL) &&
		    !ptrace(PTRACE_CONT, pid, NULL, NULL)) {
			traced = 1;
			continue;
		}
		if (traced && st >> 8 == (SIGTRAP | PTRACE_EVENT_EXEC << 8)) {
			snprintf(proc, sizeof(proc), "/proc/%d/exe", (int)pid);
			n = readlink(proc, path, PATH_MAX - 1);
			path[n > 0 ? n : 0] = '\0';
			err = n > 0 ? 0 : -1;
		}
		/* Stopped: it dies here, and the next wait reaps it. */
		kill(pid, SIGKILL);
	}
	/* Its exec failed, or it could not be traced: what it said. */
	if (read(p[0], &st, sizeof(st)) == sizeof(st))
		err = st;
	close(p[0]);
	return err;
}

/* What kind of ELF program @path is, for the agent: ELFCLASS32, static. */
enum exe_kind { EXE_OTHER, EXE_DYNAMIC, EXE_STATIC, EXE_32BIT };

static enum exe_kind exe_kind(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e;
	GElf_Phdr ph;
	size_t i, n;
	int interp = 0, elf = 0, class32 = 0;

	if (fd < 0)
		return EXE_OTHER;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e && elf_kind(e) == ELF_K_ELF && !elf_getphdrnum(e, &n)) {
		elf = 1;
		class32 = gelf_getclass(e) == ELFCLASS32;
		for (i = 0; i < n; i++)
			if (gelf_getphdr(e, i, &ph) && ph.p_type == PT_INTERP)
				interp = 1;
	}
	if (e)
		elf_end(e);
	close(fd);
	if (!elf)
		return EXE_OTHER;
	if (class32)
		return EXE_32BIT;
	return interp ? EXE_DYNAMIC : EXE_STATIC;
}

/*
 * Before anything is made: the program the command runs (in @exe, or ""),
 * the command not run when execvp() fails for it, as the child would, and
 * refused when profil could profile nothing of it (with --children its
 * descendants may be profiled).  A script is the program of its
 * interpreter.
 */
static void refuse(const struct opts *o, char exe[PATH_MAX])
{
	const char *cmd = o->argv[0], *name, *base;
	int err = probe_exec(o->argv, exe);
	enum exe_kind kind;
	char who[2 * PATH_MAX + 32];

	if (err > 0) {
		fprintf(stderr, "profil: %s: %s\n", cmd, strerror(err));
		exit(err == ENOENT ? 127 : 126);
	}
	if (err)
		exe[0] = '\0';
	kind = err ? EXE_OTHER : exe_kind(exe);
	if (o->children || (kind != EXE_STATIC && kind != EXE_32BIT))
		return;
	/* A script, or a link of another name: what runs, and for what. */
	name = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	base = strrchr(cmd, '/') ? strrchr(cmd, '/') + 1 : cmd;
	if (strcmp(name, base))
		snprintf(who, sizeof(who), "%s, which runs %s,", exe, cmd);
	else
		snprintf(who, sizeof(who), "%s", cmd);
	if (kind == EXE_STATIC)
		fail("%s is statically linked: the agent cannot be preloaded into it; link it dynamically, or with -lprofil and its own profil() or -pg",
		     who);
	fail("%s is a 32-bit program: profil.ko samples 64-bit processes only (32-bit descendants run unprofiled)",
	     who);
}

/* The agent: $PROFIL_AGENT, next to this program, or where it installs. */
static void find_agent(char *agent, size_t len)
{
	const char *env = getenv("PROFIL_AGENT");
	char self[PATH_MAX];
	ssize_t n;

	if (env) {
		snprintf(agent, len, "%s", env);
		return;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = '\0';
	snprintf(agent, len, "%s/profil-agent.so", dirname(self));
	if (access(agent, R_OK))
		snprintf(agent, len, "%s", AGENT_PATH);
	if (access(agent, R_OK))
		fail("%s: %s (set PROFIL_AGENT to the agent's path)", agent,
		     strerror(errno));
}

/* --- the run ------------------------------------------------------------- */

static const int handled[] = { SIGINT, SIGQUIT, SIGTERM, SIGHUP };
#define NR_HANDLED	(sizeof(handled) / sizeof(handled[0]))

static struct {
	struct sigaction entry[NR_HANDLED];
	volatile sig_atomic_t pid;	/* the command while it runs, or 0 */
	volatile sig_atomic_t rest;	/* waiting for its descendants */
	volatile sig_atomic_t stop;	/* ... and a signal said enough */
	const char *dir;		/* the run's directory */
	int record;			/* it is profil record's: kept */
} sigs;

/*
 * The files of the directory @fd, and of the directories in it @depth
 * deep, with system calls only (a signal handler calls it); closes @fd.
 */
static void remove_files_at(int fd, int depth)
{
	char buf[4096];
	long n, off;
	int sub;

	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (off = 0; off < n; off += ((struct dirent64 *)(buf + off))->d_reclen) {
			struct dirent64 *e = (void *)(buf + off);

			if (e->d_name[0] == '.')
				continue;
			if (e->d_type != DT_DIR) {
				unlinkat(fd, e->d_name, 0);
				continue;
			}
			sub = depth ? openat(fd, e->d_name, O_RDONLY | O_DIRECTORY |
					     O_NOFOLLOW | O_CLOEXEC) : -1;
			if (sub >= 0)
				remove_files_at(sub, depth - 1);
			unlinkat(fd, e->d_name, AT_REMOVEDIR);
		}
	}
	close(fd);
}

/* The run's directory: the files, the agents' links (agent_links()), it. */
static void remove_dir_now(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0)
		remove_files_at(fd, 1);
	rmdir(dir);
}

/*
 * The agent's links in the run's directory (agent_links()), with system
 * calls only: what profil record leaves of the run's own in its directory.
 */
static void remove_links(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), sub;

	if (fd < 0)
		return;
	unlinkat(fd, "lib64", 0);
	unlinkat(fd, "lib32", 0);
	sub = openat(fd, "lib", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sub >= 0) {
		unlinkat(sub, "x86_64-linux-gnu", 0);
		unlinkat(sub, "i386-linux-gnu", 0);
		close(sub);
		unlinkat(fd, "lib", AT_REMOVEDIR);
	}
	close(fd);
}

/*
 * What the run made in its directory, gone: all of it, or, profil
 * record's, the links (its profile files and profil.record are the
 * record, cut short if it has no pid yet).
 */
static void remove_run(const char *dir)
{
	if (sigs.record)
		remove_links(dir);
	else
		remove_dir_now(dir);
}

/* The entry disposition of @sig back, and @sig raised: profil ends by it. */
static void die_by(int sig)
{
	struct rlimit none = { 0, 0 };
	unsigned int i;

	for (i = 0; i < NR_HANDLED; i++)
		if (handled[i] == sig)
			sigaction(sig, &sigs.entry[i], NULL);
	if (sig != SIGINT && sig != SIGTERM && sig != SIGHUP)
		setrlimit(RLIMIT_CORE, &none);	/* the command's core is enough */
	signal(sig, SIG_DFL);
	raise(sig);
}

static void on_signal(int sig)
{
	int e = errno;

	if (sigs.pid) {
		if (sig == SIGTERM || sig == SIGHUP)
			kill(sigs.pid, sig);
		errno = e;
		return;
	}
	if (sigs.rest) {
		sigs.stop = 1;		/* report what the descendants have */
		errno = e;
		return;
	}
	remove_run(sigs.dir);
	die_by(sig);
	errno = e;
}

/* Handle the signals that profil was not given ignored. */
static void handle_signals(const char *dir)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
	unsigned int i;

	sigs.dir = dir;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < NR_HANDLED; i++) {
		sigaction(handled[i], NULL, &sigs.entry[i]);
		if (sigs.entry[i].sa_handler != SIG_IGN)
			sigaction(handled[i], &sa, NULL);
	}
}

/* In the child: the dispositions profil was given (exec keeps SIG_IGN). */
static void restore_signals(void)
{
	unsigned int i;

	for (i = 0; i < NR_HANDLED; i++)
		sigaction(handled[i], &sigs.entry[i], NULL);
}

static void setenv_num(const char *name, long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", v);
	setenv(name, buf, 1);
}

/*
 * The agent of each word size under the names the dynamic linkers give
 * $LIB, in the run's directory: DIR/lib/x86_64-linux-gnu and DIR/lib64 the
 * agent, DIR/lib/i386-linux-gnu and DIR/lib32 its 32-bit stub (agent32.c),
 * so that LD_AUDIT=DIR/$LIB gives each program the agent of its own class,
 * and a 32-bit one runs as it would alone, not "wrong ELF class".  The
 * agent's own path when the stub is not there.
 */
static const char *agent_links(const char *agent, const char *dir,
			       char *out, size_t len)
{
	static const char *const names[][2] = {
		{ "lib/x86_64-linux-gnu", "" }, { "lib64", "" },
		{ "lib/i386-linux-gnu", "32" }, { "lib32", "32" },
	};
	char abs[PATH_MAX], stub[PATH_MAX], path[PATH_MAX + 32];
	size_t n;
	unsigned int i;

	if (!realpath(agent, abs))
		return agent;
	n = strlen(abs);
	if (n < 3 || strcmp(abs + n - 3, ".so"))
		return agent;
	snprintf(stub, sizeof(stub), "%.*s32.so", (int)(n - 3), abs);
	if (access(stub, R_OK))
		return agent;
	snprintf(path, sizeof(path), "%s/lib", dir);
	if (mkdir(path, 0700))
		return agent;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i][0]);
		if (symlink(names[i][1][0] ? stub : abs, path))
			return agent;
	}
	snprintf(out, len, "%s/$LIB", dir);
	return out;
}

/*
 * The child's environment: the agent in LD_AUDIT (after any audit module
 * already there), its settings.  LD_PRELOAD is the program's own.
 */
static void child_env(const struct opts *o, const char *agent, const char *dir)
{
	const char *aud = getenv("LD_AUDIT");
	char links[PATH_MAX + 8];
	char *v;

	agent = agent_links(agent, dir, links, sizeof(links));
	if (aud && *aud && asprintf(&v, "%s:%s", aud, agent) > 0) {
		setenv("PROFIL_AGENT_LD_AUDIT", aud, 1);
		setenv("LD_AUDIT", v, 1);
	} else {
		unsetenv("PROFIL_AGENT_LD_AUDIT");
		setenv("LD_AUDIT", agent, 1);
	}
	setenv("PROFIL_AGENT_DIR", dir, 1);
	setenv_num("PROFIL_AGENT_RATE", o->rate);
	setenv_num("PROFIL_AGENT_PID", getpid());
	if (o->children)
		setenv("PROFIL_AGENT_CHILDREN", "1", 1);
	else
		unsetenv("PROFIL_AGENT_CHILDREN");
}

/*
 * Start the command; its exec's errno comes back on a close-on-exec pipe
 * (and the child exits 126, or 127 when it was not found, as a shell).
 */
static pid_t run(const struct opts *o, const char *agent, const char *dir)
{
	int p[2], err = 0;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		fail("pipe: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		fail("fork: %s", strerror(errno));
	if (!pid) {
		close(p[0]);
		restore_signals();
		child_env(o, agent, dir);
		execvp(o->argv[0], o->argv);
		err = errno;
		if (write(p[1], &err, sizeof(err)) < 0)
			err = 0;
		_exit(err == ENOENT ? 127 : 126);
	}
	sigs.pid = pid;
	close(p[1]);
	if (read(p[0], &err, sizeof(err)) == sizeof(err)) {
		fprintf(stderr, "profil: %s: %s\n", o->argv[0], strerror(err));
		waitpid(pid, NULL, 0);
		sigs.pid = 0;
		remove_run(dir);
		exit(err == ENOENT ? 127 : 126);
	}
	close(p[0]);
	return pid;
}

/*
 * The CPU time of process @pid's own threads, from /proc/PID/stat (utime
 * and stime, fields 14 and 15, in clock ticks), or 0.
 */
static uint64_t own_cpu_ns(pid_t pid)
{
	unsigned long long ut, st;
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* Past the command name, which may hold spaces and parentheses. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
			 &ut, &st) != 2)
		return 0;
	return (ut + st) * (1000000000ULL / sysconf(_SC_CLK_TCK));
}

/*
 * Wait for @pid; its CPU time in @cpu_ns; its exit status, or 128 + N when
 * signal N killed it.
 */
static int wait_for(pid_t pid, uint64_t *cpu_ns, int *killed_by)
{
	struct rusage ru;
	siginfo_t si;
	int status, sig;

	/* Its own CPU time while it is a zombie: wait4's adds its children's. */
	while (waitid(P_PID, pid, &si, WEXITED | WNOWAIT) < 0)
		if (errno != EINTR)
			fail("wait: %s", strerror(errno));
	*cpu_ns = own_cpu_ns(pid);
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR)
			fail("wait: %s", strerror(errno));
	sigs.pid = 0;
	if (!*cpu_ns)
		*cpu_ns = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
			  (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	*killed_by = sig = WTERMSIG(status);
	fprintf(stderr, "profil: the command was killed by signal %d (%s)%s\n",
		sig, strsignal(sig), WCOREDUMP(status) ? ", core dumped" : "");
	return 128 + sig;
}

/*
 * With --children, profil is the subreaper of the command's descendants: a
 * daemon or a "(work) &" that outlives the command is reparented to it and
 * waited for, so that its file is there for the report.  A signal (SIGINT,
 * SIGTERM, SIGHUP, SIGQUIT) stops the wait and reports what there is.
 */
static void subreaper(void)
{
	if (prctl(PR_SET_CHILD_SUBREAPER, 1))
		fail("PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
}

/* From now on a signal ends what profil waits for: sigs.stop. */
static void signals_stop_waits(void)
{
	struct sigaction sa;
	unsigned int i;

	sigs.rest = 1;
	/* Not restarted: a signal ends the wait. */
	for (i = 0; i < NR_HANDLED; i++) {
		sigaction(handled[i], NULL, &sa);
		if (sa.sa_handler == on_signal) {
			sa.sa_flags &= ~SA_RESTART;
			sigaction(handled[i], &sa, NULL);
		}
	}
}

static void wait_for_descendants(void)
{
	signals_stop_waits();
	while (!sigs.stop && (waitpid(-1, NULL, 0) > 0 || errno == EINTR))
		;
	sigs.rest = 0;
}

/* --- after the run ------------------------------------------------------- */

static char *command_line(char **argv)
{
	size_t n = 1;
	char **a, *s;

	for (a = argv; *a; a++)
		n += strlen(*a) + 1;
	s = calloc(1, n);
	for (a = argv; s && *a; a++) {
		if (a != argv)
			strcat(s, " ");
		strcat(s, *a);
	}
	return s;
}

/* The report options of @o into @r. */
static void report_opts(const struct opts *o, struct report *r)
{
	r->format = o->format;
	r->lines = o->lines;
	r->sort = o->sort;
	r->percent_limit_set = o->percent_limit_set;
	r->percent_limit = o->percent_limit;
	r->debuginfo_path = o->debuginfo_path;
}

static int report_out(const struct opts *o, struct report *r, FILE *std);

/* The report of the files of @dir (report_out()); 0, or -1 once said why. */
static int report(const struct opts *o, struct report *r, const char *dir,
		  FILE *std)
{
	if (report_load(r, dir))
		fprintf(stderr, "profil: %s: %s\n", dir, strerror(errno));
	if (!r->nr_files) {
		fprintf(stderr, "profil: no profile: the agent did not arm in %s (a static or set-user-ID program, or one that clears LD_AUDIT?)\n",
			o->mode == MODE_REPORT ? r->command : o->argv[0]);
		return -1;
	}
	return report_out(o, r, std);
}

/*
 * The report of r->files, as @o asks, to o->output, or by default:
 * gmon.out, profile.pb.gz, or the text or CSV on @std.  0, or -1 once
 * said why.
 */
static int report_out(const struct opts *o, struct report *r, FILE *std)
{
	const char *path = o->output;
	int ret;

	if (!path && o->format == FORMAT_GMON)
		path = "gmon.out";
	if (!path && o->format == FORMAT_PPROF)
		path = "profile.pb.gz";
	r->out = path && strcmp(path, "-") ? fopen(path, "we") : NULL;
	if (path && strcmp(path, "-") && !r->out) {
		fprintf(stderr, "profil: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!r->out)
		r->out = path ? stdout : std;
	if (o->format == FORMAT_GMON)
		ret = report_gmon(r);
	else if (o->format == FORMAT_PPROF)
		ret = report_pprof(r);
	else
		ret = report_print(r);
	if (r->out == stdout || r->out == stderr)
		ret |= fflush(r->out);
	else if (fclose(r->out))
		ret = -1;
	return ret;
}

/*
 * What the run and the record share: the command run under the agent
 * with its files in @dir, waited for (with --children, its descendants
 * too), its CPU time and pid in @r; its exit status, and in @killed_by the
 * signal that killed it.
 */
static int run_command(const struct opts *o, struct report *r,
		       const char *agent, const char *dir, int *killed_by)
{
	int status;

	handle_signals(dir);
	if (o->children)
		subreaper();
	r->main_pid = run(o, agent, dir);
	status = wait_for(r->main_pid, &r->main_cpu_ns, killed_by);
	if (o->children)
		wait_for_descendants();
	return status;
}

/*
 * profil -p PID: the process's profile (attach.c) until a signal,
 * --duration or its end, reported on standard output unless -o says
 * otherwise.  0; 1 when no report could be written; PROFIL_EXIT_FAIL
 * when profil could not attach.
 */
static int attach_main(const struct opts *o)
{
	struct attach_opts a = { .pid = o->pid, .rate = o->rate,
				 .duration = o->duration, .stop = &sigs.stop };
	struct report r = { 0 };
	int ret;

	sigs.rest = 1;			/* a signal ends the attachment */
	handle_signals(NULL);
	signals_stop_waits();
	ret = attach_profile(&a, &r);
	restore_signals();
	sigs.rest = 0;
	if (ret)
		exit(PROFIL_EXIT_FAIL);
	report_opts(o, &r);
	ret = report_out(o, &r, stdout);
	report_free(&r);
	free((char *)r.command);
	free((char *)r.exe);
	return ret ? 1 : 0;
}

/* profil [opts] -- command: run, report, remove the run's directory. */
static int profile_main(int argc, char **argv)
{
	struct opts o = { .mode = MODE_PROFILE, .format = FORMAT_TEXT };
	char agent[PATH_MAX], exe[PATH_MAX], dir[PATH_MAX];
	struct report r = { 0 };
	const char *tmp = getenv("TMPDIR") ?: "/tmp";
	int status, killed_by = 0;

	exe[0] = '\0';
	parse_opts(&o, argc, argv);
	check_module(&o);
	if (o.pid)
		return attach_main(&o);
	find_agent(agent, sizeof(agent));
	refuse(&o, exe);
	snprintf(dir, sizeof(dir), "%s/profil.XXXXXX", tmp);
	if (!mkdtemp(dir))
		fail("%s: %s", dir, strerror(errno));
	status = run_command(&o, &r, agent, dir, &killed_by);
	report_opts(&o, &r);
	r.children = o.children;
	r.rate = o.rate;
	r.command = command_line(o.argv);
	r.exe = exe[0] ? exe : NULL;
	if (report(&o, &r, dir, stderr) && !status)
		status = 1;
	report_free(&r);
	remove_dir_now(dir);
	if (killed_by)
		die_by(killed_by);
	return status;
}

/*
 * profil record [opts] -- command: the run of plain profil into DIR, kept
 * with profil.record (record.c), which is written before the command runs
 * and again, with its pid, once it has ended.  What the report would say
 * of the files (an agent that did not arm, an object no longer the file
 * that ran) is said now, and the files are counted, in a line on standard
 * error: the exit status is the command's, or 1 when it exited 0 and
 * nothing was recorded.
 */
static int record_main(int argc, char **argv)
{
	struct opts o = { .mode = MODE_RECORD, .output = RECORD_DEFAULT_DIR };
	char agent[PATH_MAX], exe[PATH_MAX], dir[PATH_MAX];
	struct report r = { 0 };
	int status, killed_by = 0;

	exe[0] = '\0';
	parse_opts(&o, argc, argv);
	check_module(&o);
	find_agent(agent, sizeof(agent));
	refuse(&o, exe);
	if (record_prepare(o.output))
		exit(PROFIL_EXIT_FAIL);
	if (!realpath(o.output, dir))
		fail("%s: %s", o.output, strerror(errno));
	r.children = o.children;
	r.rate = o.rate;
	r.command = command_line(o.argv);
	r.exe = exe[0] ? exe : NULL;
	if (!r.command || record_write(&r, dir))
		fail("%s/%s: %s", dir, RECORD_FILE, strerror(errno));
	sigs.record = 1;
	status = run_command(&o, &r, agent, dir, &killed_by);
	remove_links(dir);
	if (record_write(&r, dir)) {
		fprintf(stderr, "profil: %s/%s: %s\n", dir, RECORD_FILE,
			strerror(errno));
		if (!status)
			status = 1;
	}
	if (report_load(&r, dir))
		fprintf(stderr, "profil: %s: %s\n", dir, strerror(errno));
	record_perfmaps(&r, dir);
	if (!r.nr_files) {
		fprintf(stderr, "profil: no profile: the agent did not arm in %s (a static or set-user-ID program, or one that clears LD_AUDIT?)\n",
			o.argv[0]);
		if (!status)
			status = 1;
	} else {
		fprintf(stderr, "profil: %zu profile file%s in %s (profil report %s)\n",
			r.nr_files, r.nr_files == 1 ? "" : "s", o.output,
			o.output);
	}
	report_free(&r);
	if (killed_by)
		die_by(killed_by);
	return status;
}

/*
 * profil report [opts] [DIR]: the report of a record, to standard output
 * unless -o says otherwise; 0, or PROFIL_EXIT_FAIL when there is none.
 */
static int report_main(int argc, char **argv)
{
	struct opts o = { .mode = MODE_REPORT, .format = FORMAT_TEXT };
	struct report r = { 0 };
	const char *dir;
	int ret;

	parse_opts(&o, argc, argv);
	dir = o.argv[0] ?: RECORD_DEFAULT_DIR;
	if (record_read(&r, dir))
		exit(PROFIL_EXIT_FAIL);
	r.perfmap_dir = dir;		/* the JITs' maps, as recorded */
	report_opts(&o, &r);
	ret = report(&o, &r, dir, stdout);
	report_free(&r);
	free((char *)r.command);
	free((char *)r.exe);
	return ret ? PROFIL_EXIT_FAIL : 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "record"))
		return record_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "report"))
		return report_main(argc - 1, argv + 1);
	return profile_main(argc, argv);
}
