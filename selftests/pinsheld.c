// SPDX-License-Identifier: GPL-2.0
/*
 * pinsheld: print the pages pinned with FOLL_PIN and not yet released,
 * system-wide, exactly.  /proc/vmstat folds per-CPU deltas only every
 * second and only root may make it exact at once (vm/stat_refresh), so the
 * guest installs this root-owned and set-user-ID: the tests that run as
 * uid 65534 check the pin balance through it (pins_held() in common.h).
 * It takes no input and prints one number.
 */
#include "common.h"

int main(void)
{
	int fd = open("/proc/sys/vm/stat_refresh", O_WRONLY | O_CLOEXEC);
	long long acq, rel;

	if (fd < 0 || write(fd, "1", 1) != 1)
		return 1;
	close(fd);
	acq = vmstat_get("nr_foll_pin_acquired");
	rel = vmstat_get("nr_foll_pin_released");
	if (acq < 0 || rel < 0)
		return 1;
	printf("%lld\n", acq - rel);
	return 0;
}
