// SPDX-License-Identifier: GPL-2.0
/*
 * probe: call profil() as an ordinary program does, then ask the kernel
 * whether a session is on.  Built three ways (linked with -lprofil, static
 * with libprofil.a, and against glibc alone, to be run with LD_PRELOAD) so
 * that the tests see which profil() the link or the preload picked.
 * Exit 0: the kernel's session is on; 1: it is not; 2: profil() failed.
 * "probe freq" also prints __profile_frequency() before and after
 * profil(): "freq BEFORE AFTER".
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/profil.h>

static unsigned short bins[256];

/* glibc's (and libprofil's), declared in no header. */
int __profile_frequency(void);

int main(int argc, char **argv)
{
	int freq = argc > 1 && !strcmp(argv[1], "freq");
	int before = freq ? __profile_frequency() : 0;
	struct profil_stats st;
	int fd;

	if (profil(bins, sizeof(bins), 0, 0x10000))
		return 2;
	if (freq)
		printf("freq %d %d\n", before, __profile_frequency());
	fflush(stdout);
	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	fd = open("/dev/profil", O_RDWR | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, PROFIL_IOC_STATS, &st))
		return 2;
	return st.state == PROFIL_STATE_ON ? 0 : 1;
}
