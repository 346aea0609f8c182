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

#ifdef __cplusplus
}
#endif

#endif /* _PROFIL_H */
