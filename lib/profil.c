// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * profil(3): the classic one-region histogram, served by profil.ko, and
 * AIX's form with several (aix.c).
 *
 * The contract, as in 4.4BSD, Solaris and AIX: a NULL buffer or a scale of
 * 0 or 1 turns profiling off; a scale above 0x10000 is EINVAL and leaves a
 * running session alone; anything else replaces what ran before.  A child
 * made by fork() goes on profiling into its own copy of the buffer, unless
 * profil_inherit(0) was called before the profil() that armed the session.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "profil-private.h"
#include "profil.h"

/* PROFIL_F_NOINHERIT or 0, for the sessions profil() arms (atomic). */
static unsigned int profil_setup_flags;

unsigned int __profil_setup_flags(void)
{
	return __atomic_load_n(&profil_setup_flags, __ATOMIC_RELAXED);
}

__attribute__((visibility("default")))
int profil_inherit(int inherit)
{
	unsigned int old;

	if (inherit != 0 && inherit != 1) {
		errno = EINVAL;
		return -1;
	}
	old = __atomic_exchange_n(&profil_setup_flags,
				  inherit ? 0 : PROFIL_F_NOINHERIT,
				  __ATOMIC_RELAXED);
	return !(old & PROFIL_F_NOINHERIT);
}

__attribute__((visibility("default")))
int profil(unsigned short *buf, size_t bufsiz, size_t offset,
	   unsigned int scale)
{
	struct profil_region r = {
		.buf = (uintptr_t)buf,
		.bufsize = bufsiz,
		.offset = offset,
		.scale = scale,
	};
	unsigned int rate = 0;

	/* AIX: an array of struct prof (<mon.h>), scale and offset unused. */
	if (bufsiz == (size_t)-1 && buf)
		return __profil_aix(buf);
	if (!buf || scale < 2)
		return __profil_off();
	if (scale > PROFIL_SCALE_ONE) {
		errno = EINVAL;
		return -1;
	}
	return __profil_arm(&r, 1, PROFIL_MODE_HIST, &rate);
}

/* glibc's profil@GLIBC_2.2.5, for LD_PRELOAD (see libprofil.map). */
PROFIL_GLIBC_ALIAS(profil);

/*
 * glibc's __profile_frequency(): the rate profil()'s counts are taken at,
 * for programs that turn them into seconds.  glibc answers AT_CLKTCK
 * (100), but profil.ko samples at HZ: the rate of the process's session
 * (the running or the last one), else the one profil() would get
 * (profil.ko's default_rate), else glibc's answer.
 */
__attribute__((visibility("default")))
int __profile_frequency(void)
{
	struct profil_stats st = { .size = PROFIL_STATS_SIZE_VER0 };
	char buf[16];
	ssize_t n;
	long hz;
	int fd;

	if (!__profil_dev_ioctl(PROFIL_IOC_STATS, &st) && st.rate)
		return st.rate;
	fd = open("/sys/module/profil/parameters/default_rate",
		  O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = '\0';
		hz = strtol(buf, NULL, 10);
		if (hz > 0 && hz <= INT_MAX)
			return hz;
	}
	return sysconf(_SC_CLK_TCK);
}
PROFIL_GLIBC_ALIAS_AT(__profile_frequency, "LIBPROFIL_1.4");
