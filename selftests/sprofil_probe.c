// SPDX-License-Identifier: GPL-2.0
/*
 * Built against glibc alone and run with LD_PRELOAD=libprofil.so.0 by
 * sprofil_test: calls sprofil() with glibc's declaration, and prints the
 * period it was told and the kernel's count of setups of this process
 * ("tv US armed N"): libprofil's sprofil reports the true period and arms
 * a session; glibc's reports 10000 us and arms nothing.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/profil.h>
#include <sys/time.h>
#include <unistd.h>
#include <linux/profil.h>

static unsigned short bins[1024];

int main(void)
{
	struct prof p = { .pr_base = bins, .pr_size = sizeof(bins),
			  .pr_off = (unsigned long)main, .pr_scale = 0x10000 };
	struct profil_stats st = { .size = sizeof(st) };
	struct timeval tv = { 0 };
	int fd;

	if (sprofil(&p, 1, &tv, 0))
		return 1;
	fd = open("/dev/profil", O_RDWR | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, PROFIL_IOC_STATS, &st))
		st.armed = 0;
	sprofil(NULL, 0, NULL, 0);
	printf("tv %ld armed %llu\n", (long)tv.tv_usec,
	       (unsigned long long)st.armed);
	return 0;
}
