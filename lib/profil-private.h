/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libprofil internals: nothing here is exported. */
#ifndef _PROFIL_PRIVATE_H
#define _PROFIL_PRIVATE_H

#include <linux/profil.h>

#define PROFIL_DEVICE	"/dev/profil"

/*
 * PROFIL_GLIBC_ALIAS(fn): fn, of LIBPROFIL_1.0, exported a second time as
 * fn@GLIBC_2.2.5, the version programs linked against glibc ask for, so
 * that a preloaded libprofil takes the place of glibc's fn.  Shared
 * library only; libprofil.a has plain, unversioned symbols.
 */
#if defined(PROFIL_SHARED) && defined(__x86_64__)
/*
 * Top-level .symver does not survive link-time optimisation (the alias
 * silently disappears), and GCC's symver attribute cannot give fn its
 * default version at the same time: files that use this are compiled with
 * -fno-lto (Makefile: NO_LTO_SRCS), whatever CFLAGS say.
 */
#define PROFIL_GLIBC_ALIAS_AT(fn, ours)					\
	extern __typeof__(fn) __profil_glibc_##fn			\
		__attribute__((alias(#fn), visibility("default")));	\
	__asm__(".symver " #fn ", " #fn "@@@" ours "\n\t"		\
		".symver __profil_glibc_" #fn ", " #fn "@GLIBC_2.2.5")
#else
#define PROFIL_GLIBC_ALIAS_AT(fn, ours) extern int __profil_no_alias_##fn
#endif
/* fn of LIBPROFIL_1.0 */
#define PROFIL_GLIBC_ALIAS(fn) PROFIL_GLIBC_ALIAS_AT(fn, "LIBPROFIL_1.0")

/*
 * One ioctl on /dev/profil, through the fd kept since the first successful
 * setup or a fresh one; -1 and errno on failure, ENOSYS when the device is
 * missing (dev.c).
 */
int __profil_dev_ioctl(unsigned long cmd, void *arg);

/* With PROFIL_DEBUG set at startup: one line on stderr, the device missing. */
void __profil_hint(void);

#endif /* _PROFIL_PRIVATE_H */
