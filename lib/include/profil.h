/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libprofil: profil(2) for Linux, from the kernel (profil.ko) instead of a
 * SIGPROF handler.
 *
 * profil(NULL, 0, 0, 0) is the documented way to turn profiling off, but
 * glibc's <unistd.h> declares profil() with its buffer nonnull, and GCC
 * merges that attribute into every other declaration of the function,
 * whichever comes first: -Wnonnull rejects the call, and a NULL check
 * around it may be deleted by the optimiser.  So this header includes
 * <unistd.h> first and sends calls written profil(...) to
 * __profil_nullable(), the same function (the same symbol, "profil") under
 * a declaration with no nonnull.  That holds in C and C++, with <unistd.h>
 * included before or after this header.  Only calls are redirected: the
 * name profil alone (its address) is glibc's declaration.
 */
#ifndef _PROFIL_H
#define _PROFIL_H

#include <stddef.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

int __profil_nullable(unsigned short *buf, size_t bufsiz, size_t offset,
		      unsigned int scale) __asm__("profil");
#define profil(buf, bufsiz, offset, scale) \
	__profil_nullable(buf, bufsiz, offset, scale)

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
