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
#include <stdint.h>

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
