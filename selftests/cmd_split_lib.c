// SPDX-License-Identifier: GPL-2.0
/* libcmd_split.so: the 30% of cmd_subject's split, in a shared library. */
#include "cmd_work.h"

__attribute__((noinline)) unsigned long thirty(unsigned long units)
{
	return cmd_churn(units);
}
