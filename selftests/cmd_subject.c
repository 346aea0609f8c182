// SPDX-License-Identifier: GPL-2.0
/*
 * The unmodified program profil(1)'s tests (profil_cmd_test.c) run: no
 * -pg, no libprofil.  Its CPU time goes where the mode says:
 *
 *	split [ms]	fifty / thirty / twenty, 50/30/20 of its CPU time (its
 *			thread clock) by construction,
 *			thirty() in libcmd_split.so; ms of CPU (2000)
 *	threads		split in 4 threads, 300 ms each
 *	exec		a forked child execs "twenty" while the parent runs
 *			fifty for 300 ms
 *	twenty		twenty alone, 300 ms
 *	spawn PROG	a forked child execs "PROG twenty", waited for (the
 *			static build too)
 *	forks N		N children that exit at once, one after the other, at
 *			eight offsets of the stack;
 *			"faults P C" on stdout: the page faults of this
 *			process and of a child, a fork
 *	fork		fifty for 300 ms, then a forked child runs twenty
 *			for 300 ms while the parent waits
 *	dlopen		fifty 20%, then dl_work() of libcmd_dl.so, loaded
 *			with dlopen() after start, 80%
 *	jit		an anonymous executable page, 90%, fifty 10%
 *	stdio		echo a line of stdin to stdout, a word to stderr,
 *			split 100 ms, exit status 7
 *	kill		split 600 ms, then SIGTERM to itself
 *	closefds	close every descriptor, then split
 *	ready		split 300 ms, "ready" on stdout, then split until a
 *			signal ends it (at most 20 s of CPU)
 *	attached [ms]	"ready" on stdout, then, once SIGUSR1 comes (profil -p
 *			has attached), split for ms of CPU (2000), "done",
 *			exit status 0
 *	attached_dlopen [ms]	the same, with dlopen's work for ms of CPU
 *	untouched	"ready" on stdout once it summed its memory, then
 *			fifty() until SIGUSR1 comes, writing nothing but its
 *			stack; then "memory untouched" when its mappings and
 *			every byte of them (but the stack's, and the rseq
 *			area's and vvar's, which the kernel writes) are as
 *			they were, "memory changed" when they are not; exit
 *			status 1 when it could not sum them
 *	sigint		"SIGINT ignored" or "SIGINT default" on stdout: the
 *			disposition it was started with
 *	waitkill	a forked child runs twenty 300 ms and is waited for,
 *			then fifty 300 ms; prints "self S children S", its
 *			own CPU time and its child's (getrusage), then
 *			SIGTERM to itself
 *	daemon		a forked child waits for the command to exit, then,
 *			orphaned, runs twenty 300 ms
 *	iconv		UTF-8 into ISO-8859-2 with iconv(3) for 400 ms of
 *			CPU: glibc dlopen()s the gconv module itself; prints
 *			"iconv ok" when every round converted exactly
 *	twenty also names on stdout any of profil(1)'s agent's variables it
 *	finds in its environment (a child profil did not ask for has none).
 */
#define _GNU_SOURCE
#include <alloca.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <iconv.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd_work.h"

static volatile unsigned long sink;

__attribute__((noinline)) uint64_t fifty(uint64_t until)
{
	return cmd_churn_until(until);
}

__attribute__((noinline)) uint64_t twenty(uint64_t until)
{
	return cmd_churn_until(until);
}

/*
 * Rounds are long because a sample is charged to the code where the tick's
 * interrupt is taken, and under TCG that can be milliseconds after the
 * tick (a QEMU timer thread that the host runs late): at each change of
 * function the one before loses that much to the one after.  With 10 ms
 * rounds, on a loaded host, fifty came out 47% and thirty 33% of the
 * samples; with 500 ms rounds, 50.1 and 29.9.
 */
#define ROUND_MS	500

/*
 * @ms of this thread's CPU time, shared @a:@b:@c between fifty, thirty and
 * twenty in rounds of ROUND_MS.  Each runs until the clock says it has had
 * its share so far (what it overran comes off its next turn), so the split
 * is exact in CPU time, however fast the loop runs.
 */
static void work(unsigned int a, unsigned int b, unsigned int c, unsigned int ms)
{
	uint64_t (*const fn[3])(uint64_t) = { fifty, thirty, twenty };
	const unsigned int share[3] = { a, b, c };
	uint64_t now = cmd_cpu_ns(), end = now + ms * 1000000ULL;
	uint64_t round = (ms < ROUND_MS ? ms : ROUND_MS) * 1000000ULL;
	int64_t owed[3] = { 0, 0, 0 };
	uint64_t then;
	int i;

	while (now < end) {
		for (i = 0; i < 3; i++) {
			if (!share[i])
				continue;
			owed[i] += round * share[i] / (a + b + c);
			if (owed[i] <= 0)
				continue;
			then = now;
			now = fn[i](now + owed[i]);
			owed[i] -= now - then;
		}
	}
}

static void *split_thread(void *arg)
{
	(void)arg;
	work(5, 3, 2, 300);
	return NULL;
}

static int threads(void)
{
	pthread_t t[4];
	int i;

	for (i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, split_thread, NULL))
			return 1;
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return 0;
}

/* Fork a child that exits; 0, or -1. */
static int fork_one(void)
{
	pid_t pid = fork();

	if (!pid)
		_exit(0);
	return pid > 0 && waitpid(pid, NULL, 0) == pid ? 0 : -1;
}

/* Page faults a fork of fork_one() costs this process and the child. */
static int __attribute__((noinline)) fork_batch(int n, double *p, double *c)
{
	struct rusage self[2], children[2];
	int i;

	getrusage(RUSAGE_SELF, &self[0]);
	getrusage(RUSAGE_CHILDREN, &children[0]);
	for (i = 0; i < n; i++)
		if (fork_one())
			return -1;
	getrusage(RUSAGE_SELF, &self[1]);
	getrusage(RUSAGE_CHILDREN, &children[1]);
	*p = (double)(self[1].ru_minflt - self[0].ru_minflt) / n;
	*c = (double)(children[1].ru_minflt - children[0].ru_minflt) / n;
	return 0;
}

/*
 * After a fork every page of the parent's stack it writes is a copy on
 * write, so where the stack's frames fall against a page boundary (the
 * environment's size, ASLR) moves the count by one.  The batch runs at
 * eight offsets of the stack, an eighth of a page apart, and the least
 * of each count is the cost of a fork itself.
 */
static int forks(int n)
{
	double p, c, pmin = 1e9, cmin = 1e9;
	int k;

	/* The first binds fork() and waitpid(), and faults their code in. */
	if (n <= 0 || fork_one())
		return 1;
	for (k = 0; k < 8; k++) {
		volatile char *pad = alloca(k * 512 + 1);

		pad[0] = 0;
		if (fork_batch(n, &p, &c))
			return 1;
		pmin = p < pmin ? p : pmin;
		cmin = c < cmin ? c : cmin;
	}
	printf("faults %.2f %.2f\n", pmin, cmin);
	return 0;
}

/* A forked child runs "@prog twenty"; its exit status. */
static int spawn(const char *prog)
{
	int status;
	pid_t pid = fork();

	if (!pid) {
		execl(prog, prog, "twenty", (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static int exec_child(void)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int status;
	pid_t pid;

	self[n > 0 ? n : 0] = '\0';
	pid = fork();
	if (!pid) {
		execl(self, self, "twenty", (char *)NULL);
		_exit(127);
	}
	work(5, 0, 0, 300);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/*
 * The exec'd child's twenty 300 ms; it names what it finds of profil(1)'s
 * agent in its environment on stdout (nothing, without --children).
 */
static void twenty_alone(void)
{
	static const char *const names[] = {
		"LD_AUDIT", "LD_PRELOAD", "PROFIL_AGENT_DIR", NULL
	};
	const char *const *n;

	for (n = names; *n; n++)
		if (getenv(*n))
			printf("%s=%s\n", *n, getenv(*n));
	fflush(stdout);
	work(0, 0, 2, 300);
}

static int ready(void)
{
	work(5, 3, 2, 300);
	printf("ready\n");
	fflush(stdout);
	work(5, 3, 2, 20000);
	return 3;	/* no signal came */
}

static int late_dlopen(unsigned int ms);

static int attached(unsigned int ms, int dl)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready\n");
	fflush(stdout);
	if (sigwait(&set, &sig))
		return 1;
	if (dl) {
		if (late_dlopen(ms))
			return 1;
	} else {
		work(5, 3, 2, ms);
	}
	printf("done\n");
	return 0;
}

/* FNV-1a of @len bytes at @p into @h. */
static uint64_t fnv1a(uint64_t h, const unsigned char *p, size_t len)
{
	while (len--)
		h = (h ^ *p++) * 0x100000001b3ULL;
	return h;
}

/*
 * A sum of this process's memory, the list of its mappings and the bytes
 * of every private one that can be read, but its stack, the rseq area
 * the kernel writes when the thread moves and the vvar pages the kernel
 * keeps the time in; read with system calls alone, so that the sum
 * writes nothing but the stack.  0, or -1 when the list could not be
 * read whole.
 */
static int memory_sum(uint64_t *sum)
{
	char maps[32768], *line, *end;
	const char *rseq = (const char *)__builtin_thread_pointer() + __rseq_offset;
	size_t rseq_len = __rseq_size > 32 ? __rseq_size : 32, n = 0;
	uint64_t h = 0xcbf29ce484222325ULL;
	unsigned long lo, hi;
	ssize_t got = 0;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while (n < sizeof(maps) - 1 &&
	       (got = read(fd, maps + n, sizeof(maps) - 1 - n)) > 0)
		n += got;
	close(fd);
	if (got)
		return -1;		/* an error, or no room for the rest */
	maps[n] = '\0';
	h = fnv1a(h, (const unsigned char *)maps, n);
	for (line = maps; *line; line = end + 1) {
		char perms[5];

		end = strchr(line, '\n');
		if (!end)
			break;
		*end = '\0';
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) != 3 ||
		    perms[0] != 'r' || perms[3] != 'p' ||
		    strstr(line, "[stack]") || strstr(line, "[vvar"))
			continue;
		if (rseq >= (char *)lo && rseq + rseq_len <= (char *)hi) {
			h = fnv1a(h, (void *)lo, rseq - (char *)lo);
			lo = (unsigned long)(rseq + rseq_len);
		}
		h = fnv1a(h, (void *)lo, hi - lo);
	}
	*sum = h;
	return 0;
}

/* Whether SIGUSR1 (blocked) is pending. */
static int usr1_pending(void)
{
	sigset_t pending;

	return !sigpending(&pending) && sigismember(&pending, SIGUSR1) == 1;
}

/*
 * profil -p's attach, samples and detach while fifty() runs, between two
 * sums of the process's memory: nothing of it changed.  A round
 * of everything first, so that the linker's lazy binding of what it calls
 * (which writes the GOT and the linker's data) is done before.
 */
static int untouched(void)
{
	uint64_t before, after;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	fifty(cmd_cpu_ns() + 1000000);
	usr1_pending();
	if (memory_sum(&before) || write(STDOUT_FILENO, "", 0) ||
	    memory_sum(&before))
		return 1;
	/* Not stdio's: its buffer is in the heap. */
	if (write(STDOUT_FILENO, "ready\n", 6) != 6)
		return 1;
	do
		fifty(cmd_cpu_ns() + 10000000);
	while (!usr1_pending());
	if (memory_sum(&after))
		return 1;
	printf("memory %s\n", after == before ? "untouched" : "changed");
	return 0;
}

static int sigint_disposition(void)
{
	struct sigaction sa;

	if (sigaction(SIGINT, NULL, &sa))
		return 1;
	printf("SIGINT %s\n", sa.sa_handler == SIG_IGN ? "ignored" : "default");
	return 0;
}

/* A forked child runs twenty 300 ms; its wait status, or -1. */
static int child_twenty(void)
{
	int status;
	pid_t pid = fork();

	if (!pid) {
		work(0, 0, 2, 300);
		exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

static double ru_s(int who)
{
	struct rusage ru;

	getrusage(who, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static int wait_then_die(void)
{
	if (child_twenty() < 0)
		return 1;
	work(1, 0, 0, 300);
	printf("self %.3f children %.3f\n", ru_s(RUSAGE_SELF),
	       ru_s(RUSAGE_CHILDREN));
	fflush(stdout);
	raise(SIGTERM);
	return 1;
}

static int daemonize(void)
{
	pid_t pid;
	char c;
	int p[2];

	if (pipe(p))
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		/* The child: on once the command has exited (EOF). */
		close(p[1]);
		if (read(p[0], &c, 1) != 0)
			_exit(1);
		work(0, 0, 2, 300);
		_exit(0);
	}
	return 0;
}

static int fork_after_work(void)
{
	int status;

	work(5, 0, 0, 300);
	status = child_twenty();
	return status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static int late_dlopen(unsigned int ms)
{
#ifdef CMD_STATIC
	return 2;	/* only the refusal of a static program is tested */
#else
	unsigned long (*fn)(unsigned long);
	uint64_t end;
	void *h;

	work(1, 0, 0, 100);
	h = dlopen("libcmd_dl.so", RTLD_NOW);
	fn = h ? (unsigned long (*)(unsigned long))dlsym(h, "dl_work") : NULL;
	if (!fn) {
		fprintf(stderr, "cmd_subject: %s\n", dlerror());
		return 1;
	}
	end = cmd_cpu_ns() + ms * 1000000ULL;
	while (cmd_cpu_ns() < end)
		sink += fn(10);
	return 0;
#endif
}

static void stop_spin(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	*(volatile int *)si->si_value.sival_ptr = 1;
}

/*
 * Code of no object: "1: cmpl $0, (%rdi); je 1b; ret", for 450 ms of CPU;
 * with @map, named in /tmp/perf-PID.map as a JIT names its code there.
 */
static int jit(int map)
{
	static const unsigned char code[] = { 0x83, 0x3f, 0x00, 0x74, 0xfb, 0xc3 };
	struct sigaction sa = { .sa_sigaction = stop_spin, .sa_flags = SA_SIGINFO };
	struct itimerspec its = { .it_value = { 0, 450000000 } };
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID,
				.sigev_signo = SIGRTMIN };
	volatile int stop = 0;
	void (*fn)(volatile int *);
	timer_t timer;
	void *page;

	work(1, 0, 0, 50);
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return 1;
	memcpy(page, code, sizeof(code));
	if (mprotect(page, 4096, PROT_READ | PROT_EXEC))
		return 1;
	if (map) {
		char path[64];
		FILE *f;

		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
		f = fopen(path, "we");
		if (!f || fprintf(f, "%lx %zx LazyCompile:*spin jit.js:1\n",
				  (unsigned long)page, sizeof(code)) < 0 ||
		    fclose(f))
			return 1;
	}
	fn = (void (*)(volatile int *))page;
	sigaction(SIGRTMIN, &sa, NULL);
	sev.sigev_value.sival_ptr = (void *)&stop;
	sev._sigev_un._tid = syscall(SYS_gettid);
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &timer) ||
	    timer_settime(timer, 0, &its, NULL))
		return 1;
	fn(&stop);
	return 0;
}

/* "Łódź żółw " over and over: 16 bytes of UTF-8, 10 of ISO-8859-2. */
static int iconv_rounds(void)
{
	static const char word[] = "\xc5\x81\xc3\xb3" "d\xc5\xba \xc5\xbc\xc3\xb3\xc5\x82w ";
	static char in[64 * 1024], out[64 * 1024];
	size_t n = 0, w = strlen(word), left, room;
	iconv_t cd = iconv_open("ISO-8859-2", "UTF-8");
	uint64_t end = cmd_cpu_ns() + 400 * 1000000ULL;
	char *ip, *op;
	int ok = 1;

	if (cd == (iconv_t)-1) {
		perror("cmd_subject: iconv_open");
		return 1;
	}
	while (n + w < sizeof(in))
		memcpy(in + n, word, w), n += w;
	while (ok && cmd_cpu_ns() < end) {
		ip = in, op = out, left = n, room = sizeof(out);
		ok = iconv(cd, &ip, &left, &op, &room) == 0 && !left &&
		     out[0] == '\xa3' && op - out == (ptrdiff_t)(n / w * 10);
	}
	iconv_close(cd);
	printf("iconv %s\n", ok ? "ok" : "wrong");
	return !ok;
}

static int stdio(void)
{
	char line[256];

	if (!fgets(line, sizeof(line), stdin))
		return 1;
	printf("cmd_subject read: %s", line);
	fflush(stdout);
	fputs("cmd_subject on stderr\n", stderr);
	work(5, 3, 2, 100);
	return 7;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "split";

	if (!strcmp(mode, "split"))
		work(5, 3, 2, argc > 2 ? atoi(argv[2]) : 2000);
	else if (!strcmp(mode, "threads"))
		return threads();
	else if (!strcmp(mode, "exec"))
		return exec_child();
	else if (!strcmp(mode, "fork"))
		return fork_after_work();
	else if (!strcmp(mode, "twenty"))
		twenty_alone();
	else if (!strcmp(mode, "spawn") && argc > 2)
		return spawn(argv[2]);
	else if (!strcmp(mode, "forks") && argc > 2)
		return forks(atoi(argv[2]));
	else if (!strcmp(mode, "dlopen"))
		return late_dlopen(400);
	else if (!strcmp(mode, "jit"))
		return jit(0);
	else if (!strcmp(mode, "jitmap"))
		return jit(1);
	else if (!strcmp(mode, "stdio"))
		return stdio();
	else if (!strcmp(mode, "kill"))
		work(5, 3, 2, 600), raise(SIGTERM);
	else if (!strcmp(mode, "closefds"))
		syscall(SYS_close_range, 0, ~0U, 0), work(5, 3, 2, 600);
	else if (!strcmp(mode, "ready"))
		return ready();
	else if (!strcmp(mode, "attached"))
		return attached(argc > 2 ? atoi(argv[2]) : 2000, 0);
	else if (!strcmp(mode, "attached_dlopen"))
		return attached(argc > 2 ? atoi(argv[2]) : 2000, 1);
	else if (!strcmp(mode, "untouched"))
		return untouched();
	else if (!strcmp(mode, "sigint"))
		return sigint_disposition();
	else if (!strcmp(mode, "daemon"))
		return daemonize();
	else if (!strcmp(mode, "waitkill"))
		return wait_then_die();
	else if (!strcmp(mode, "iconv"))
		return iconv_rounds();
	else
		return 2;
	return 0;
}
