// SPDX-License-Identifier: GPL-2.0
/* libcmd_split.so: the 30% of cmd_subject's split, in a shared library. */
#include "cmd_work.h"

__attribute__((noinline)) uint64_t thirty(uint64_t until)
{
	return cmd_churn_until(until);
}
