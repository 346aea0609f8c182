/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libprofil internals: nothing here is exported. */
#ifndef _PROFIL_PRIVATE_H
#define _PROFIL_PRIVATE_H

#include <stddef.h>

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
		__attribute__((alias(#fn), copy(fn),			\
			       visibility("default")));		\
	__asm__(".symver " #fn ", " #fn "@@@" ours "\n\t"		\
		".symver __profil_glibc_" #fn ", " #fn "@GLIBC_2.2.5")
#else
#define PROFIL_GLIBC_ALIAS_AT(fn, ours) extern int __profil_no_alias_##fn
#endif
/* fn of LIBPROFIL_1.0 */
#define PROFIL_GLIBC_ALIAS(fn) PROFIL_GLIBC_ALIAS_AT(fn, "LIBPROFIL_1.0")

/* glibc's, declared in none of its headers (profil.c). */
int __profile_frequency(void);

/*
 * One ioctl on /dev/profil, through the fd kept since the first successful
 * setup or a fresh one; -1 and errno on failure, ENOSYS when the device is
 * missing (dev.c).
 */
int __profil_dev_ioctl(unsigned long cmd, void *arg);

/* With PROFIL_DEBUG set at startup: one line on stderr, the device missing. */
void __profil_hint(void);

/* profil.c: PROFIL_F_NOINHERIT or 0, as profil_inherit() last said. */
unsigned int __profil_setup_flags(void);

/* regions.c: arming and off, for profil(), sprofil(), AIX and pcsample(). */
int __profil_read_self(void *dst, const void *src, size_t len);
struct profil_region *__profil_regions_alloc(size_t n);
void __profil_regions_free(struct profil_region *r, size_t n);
/* Arm @n regions in @mode at *@rate Hz (0: HZ); *@rate gets the rate used. */
int __profil_arm(struct profil_region *r, unsigned int n, unsigned int mode,
		 unsigned int *rate);
/* Turn the session off; with no module loaded that is done: 0. */
int __profil_off(void);

/* AIX's profil((void *)regions, (size_t)-1, 0, 0), in aix.c. */
int __profil_aix(const void *regions);

#endif /* _PROFIL_PRIVATE_H */
