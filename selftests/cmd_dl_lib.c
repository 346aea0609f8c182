// SPDX-License-Identifier: GPL-2.0
/* libcmd_dl.so: what cmd_subject dlopen()s after it started, and runs. */
#include "cmd_work.h"

__attribute__((noinline)) unsigned long dl_work(unsigned long units)
{
	return cmd_churn(units);
}
