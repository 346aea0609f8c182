// SPDX-License-Identifier: GPL-2.0
/*
 * Does a skip in FIXTURE_SETUP keep the body from running?  With the
 * harness's own SKIP(return, ...) Debian 6.1's kselftest_harness.h runs the
 * body anyway (PLAIN=1 shows it); selftests/common.h's SKIP_NOW() must not.
 * The body fails an assertion and prints a marker if it runs.
 */
#include "../../selftests/common.h"
#include "kselftest_harness.h"

FIXTURE(f) {
	int set_up;
};

FIXTURE_SETUP(f)
{
	if (getenv("PLAIN"))
		SKIP(return, "plain SKIP in setup");
	SKIP_NOW("SKIP_NOW in setup");
}

FIXTURE_TEARDOWN(f)
{
}

TEST_F(f, body_must_not_run)
{
	printf("BODY RAN\n");
	fflush(stdout);
	ASSERT_EQ(1, self->set_up);
}

TEST_HARNESS_MAIN
