/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libprofil: profil(2) for Linux, from the kernel (profil.ko) instead of a
 * SIGPROF handler.
 *
 * Unlike glibc's <unistd.h>, this prototype does not mark the buffer
 * nonnull: profil(NULL, 0, 0, 0) is the documented way to turn profiling
 * off, and a NULL check compiled against a nonnull prototype is deleted by
 * the optimiser.
 */
#ifndef _PROFIL_H
#define _PROFIL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

int profil(unsigned short *buf, size_t bufsiz, size_t offset,
	   unsigned int scale);

/*
 * Whether a child made by fork() goes on profiling into its copy of the
 * buffer (1, the default) or not (0), for the sessions later profil() calls
 * arm.  Returns the previous setting, or -1 with errno EINVAL.
 */
int profil_inherit(int inherit);

#ifdef __cplusplus
}
#endif

#endif /* _PROFIL_H */
