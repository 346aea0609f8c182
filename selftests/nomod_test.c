// SPDX-License-Identifier: GPL-2.0
/*
 * libprofil without profil.ko: profil() is ENOSYS, turning profiling off
 * still succeeds, and the hint goes to stderr only with PROFIL_DEBUG set.
 */
#define _GNU_SOURCE
#include <sys/wait.h>

#include "common.h"
#include "gmon.h"
#include "kselftest_harness.h"

/* Call profil() with stderr captured; return what it printed. */
static int profil_stderr(char *out, size_t len, int *ret, int *err)
{
	static uint16_t bins[16];
	int p[2], saved;
	ssize_t n;

	if (pipe(p))
		return -1;
	saved = dup(STDERR_FILENO);
	dup2(p[1], STDERR_FILENO);
	close(p[1]);
	errno = 0;
	*ret = profil(bins, sizeof(bins), 0, 0x10000);
	*err = errno;
	dup2(saved, STDERR_FILENO);
	close(saved);
	n = read(p[0], out, len - 1);
	close(p[0]);
	out[n > 0 ? n : 0] = 0;
	return 0;
}

FIXTURE(nomod) {
	char msg[256];
};

/* Run after rmmod: a module still loaded is a failure, not a skip. */
FIXTURE_SETUP(nomod)
{
	ASSERT_FALSE(module_loaded()) {
		TH_LOG("profil.ko is still loaded: nothing here can be tested");
	}
	unsetenv("PROFIL_DEBUG");
}

FIXTURE_TEARDOWN(nomod)
{
}

TEST_F(nomod, profil_is_enosys_and_silent)
{
	int ret, err;

	ASSERT_EQ(0, profil_stderr(self->msg, sizeof(self->msg), &ret, &err));
	EXPECT_EQ(-1, ret);
	EXPECT_EQ(ENOSYS, err);
	EXPECT_STREQ("", self->msg);
}

/*
 * libprofil reads PROFIL_DEBUG once, when it is loaded (getenv() is not
 * async-signal-safe): the child runs this program again with it set, and
 * the constructor below makes one call and prints what it wrote to stderr.
 */
__attribute__((constructor))
static void nomod_child(void)
{
	const char *what = getenv("NOMOD_CHILD");
	char msg[256];
	int ret, err;

	if (!what)
		return;
	if (!strcmp(what, "off")) {
		static uint16_t bins[16];
		int p[2];

		if (pipe(p) || dup2(p[1], STDERR_FILENO) < 0)
			_exit(2);
		ret = profil(NULL, 0, 0, 0) || profil(bins, 32, 0, 1);
		fflush(stderr);
		close(STDERR_FILENO);
		close(p[1]);
		msg[0] = 0;
		err = read(p[0], msg, sizeof(msg) - 1);
		_exit(ret ? 3 : err > 0 ? 4 : 0);
	}
	if (profil_stderr(msg, sizeof(msg), &ret, &err) || ret != -1 ||
	    err != ENOSYS)
		_exit(2);
	fputs(msg, stdout);
	fflush(stdout);
	_exit(0);
}

/* Run this program with PROFIL_DEBUG=1 and NOMOD_CHILD=@what; its output. */
static int run_child(const char *what, char *out, size_t len)
{
	int p[2], status;
	ssize_t n = 0, r;
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(p[1], STDOUT_FILENO);
		close(p[0]);
		setenv("PROFIL_DEBUG", "1", 1);
		setenv("NOMOD_CHILD", what, 1);
		execl("/proc/self/exe", "nomod_test", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	while (len > 1 && (r = read(p[0], out + n, len - 1 - n)) > 0)
		n += r;
	out[n] = 0;
	close(p[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

TEST_F(nomod, profil_debug_prints_one_line_hint)
{
	ASSERT_EQ(0, run_child("hint", self->msg, sizeof(self->msg)));
	EXPECT_NE(NULL, strstr(self->msg, "/dev/profil"));
	EXPECT_EQ(strlen(self->msg) - 1, strcspn(self->msg, "\n"));
}

/* Turning off succeeds without the module, and says nothing even then. */
TEST_F(nomod, profil_debug_silent_when_turning_off)
{
	EXPECT_EQ(0, run_child("off", self->msg, sizeof(self->msg)));
}

TEST_F(nomod, profil_off_succeeds)
{
	EXPECT_EQ(0, profil(NULL, 0, 0, 0));
	EXPECT_EQ(0, profil((unsigned short *)self->msg, 16, 0, 1));
}

/* A -pg program: call counts written by the library, no histogram. */
TEST_F(nomod, gmon_without_the_module_has_calls_and_says_why)
{
	char dir[] = "/tmp/gmonXXXXXX", bin[4200];
	struct fn main_fn;
	const char *why;
	struct run r;
	struct gmon g;

	ASSERT_NE(NULL, mkdtemp(dir));
	ASSERT_EQ(0, chdir(dir));
	gmon_helper(bin, sizeof(bin), "gmon_subject");
	main_fn = elf_fn(bin, "main");
	EXPECT_EQ(0, run_subject(&r, bin, "calls", NULL));
	EXPECT_NE(NULL, strstr(r.stderr_text, "/dev/profil is missing")) {
		TH_LOG("stderr: %s", r.stderr_text);
	}
	ASSERT_EQ(0, gmon_load("gmon.out", &g, &why)) {
		TH_LOG("gmon.out: %s", why);
	}
	EXPECT_EQ(2000, gmon_calls(&g, main_fn, elf_fn(bin, "f1")));
	EXPECT_EQ(1000, gmon_calls(&g, main_fn, elf_fn(bin, "f2")));
	EXPECT_EQ(1, gmon_calls(&g, main_fn, elf_fn(bin, "f3")));
	EXPECT_EQ(0, gmon_all_samples(&g));
	EXPECT_LT(0, g.nbins);
	gmon_free(&g);
	unlink("gmon.out");
	ASSERT_EQ(0, chdir("/tmp"));
	rmdir(dir);
}

/* profil(1) says the module is missing in one line, runs nothing, 125. */
TEST_F(nomod, profil_command_says_the_module_is_not_loaded)
{
	char profil[4200], bin[4200];
	struct run r;

	gmon_helper(profil, sizeof(profil), "profil");
	gmon_helper(bin, sizeof(bin), "cmd_subject");
	{
		char *argv[] = { profil, "--", bin, "stdio", NULL };

		ASSERT_EQ(0, run_start(&r, profil, argv, NULL));
	}
	run_finish(&r);
	ASSERT_TRUE(WIFEXITED(r.status));
	EXPECT_EQ(125, WEXITSTATUS(r.status));
	EXPECT_STREQ("profil: /dev/profil does not exist: the profil module is not loaded (modprobe profil)\n",
		     r.stderr_text);
	EXPECT_STREQ("", r.stdout_text);
}

TEST_HARNESS_MAIN
