// SPDX-License-Identifier: GPL-2.0
/*
 * libprofil without profil.ko: profil() is ENOSYS, turning profiling off
 * still succeeds, and the hint goes to stderr only with PROFIL_DEBUG set.
 */
#define _GNU_SOURCE
#include "common.h"
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

TEST_F(nomod, profil_debug_prints_one_line_hint)
{
	int ret, err;

	setenv("PROFIL_DEBUG", "1", 1);
	ASSERT_EQ(0, profil_stderr(self->msg, sizeof(self->msg), &ret, &err));
	EXPECT_EQ(-1, ret);
	EXPECT_EQ(ENOSYS, err);
	EXPECT_NE(NULL, strstr(self->msg, "/dev/profil"));
	EXPECT_EQ(strlen(self->msg) - 1, strcspn(self->msg, "\n"));
}

TEST_F(nomod, profil_off_succeeds)
{
	EXPECT_EQ(0, profil(NULL, 0, 0, 0));
	EXPECT_EQ(0, profil((unsigned short *)self->msg, 16, 0, 1));
}

TEST_HARNESS_MAIN
