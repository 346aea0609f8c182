// SPDX-License-Identifier: GPL-2.0
/*
 * perfhold: hold one perf event on ourselves until killed.
 *
 * Test infrastructure, not a test.  Every task-bound perf event counts in
 * perf's perf_sched_events static key, which is switched on when the first
 * one is created and off again (a second later) when the last one goes; the
 * selftests arm and stop sessions hundreds of times, so without a holder
 * that key's code is patched over and over.  QEMU's TCG now and then
 * mishandles that cross-CPU text patching (an "Oops: int3" at a static key
 * site in __schedule, seen once in several hundred arms; the same happens at
 * boot with no module loaded), so the guest keeps the key on for the run.
 */
#include <linux/perf_event.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.exclude_kernel = 1;
	if (syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0) < 0)
		return 1;
	for (;;)
		pause();
}
