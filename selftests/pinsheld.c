// SPDX-License-Identifier: GPL-2.0
/*
 * pinsheld: print the pages pinned with FOLL_PIN and not yet released,
 * system-wide, exactly.  /proc/vmstat folds per-CPU deltas only every
 * second and only root may make it exact at once (vm/stat_refresh), so the
 * guest installs this root-owned and set-user-ID: the tests that run as
 * uid 65534 check the pin balance through it (pins_held() in common.h).
 * It takes no input and prints one number.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static long long vmstat(const char *key)
{
	char name[64];
	long long v, found = -1;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", name, &v) == 2)
		if (!strcmp(name, key)) {
			found = v;
			break;
		}
	fclose(f);
	return found;
}

int main(void)
{
	int fd = open("/proc/sys/vm/stat_refresh", O_WRONLY | O_CLOEXEC);
	long long acq, rel;

	if (fd < 0 || write(fd, "1", 1) != 1)
		return 1;
	close(fd);
	acq = vmstat("nr_foll_pin_acquired");
	rel = vmstat("nr_foll_pin_released");
	if (acq < 0 || rel < 0)
		return 1;
	printf("%lld\n", acq - rel);
	return 0;
}
