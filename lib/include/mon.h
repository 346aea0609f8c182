/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * <mon.h>: the profiling runtime's classic interfaces (libprofil).
 *
 * monitor(3) as in Solaris and AIX, and the gmon runtime's entry points
 * as glibc's <sys/gmon.h> declares them.  See monitor(3), libprofil(7).
 */
#ifndef _PROFIL_MON_H
#define _PROFIL_MON_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * monitor(lowpc, highpc, buffer, bufsize, nfunc): profile [lowpc, highpc)
 * and make room for nfunc call arcs (0: a default); monitor(NULL, ...)
 * stops and writes gmon.out.  The profile lives in memory libprofil maps
 * itself: buffer and bufsize are not used.
 */
void monitor(int (*lowpc)(void), int (*highpc)(void), unsigned short *buffer,
	     size_t bufsize, size_t nfunc);

void __monstartup(unsigned long lowpc, unsigned long highpc);
void monstartup(unsigned long lowpc, unsigned long highpc);
void moncontrol(int mode);
void _mcleanup(void);

#ifdef __cplusplus
}
#endif

#endif /* _PROFIL_MON_H */
