/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * <mon.h>: the profiling runtime's classic interfaces (libprofil).
 *
 * AIX's struct prof, for profil((void *)regions, (size_t)-1, 0, 0);
 * monitor(3) as in Solaris and AIX; and the gmon runtime's entry points as
 * glibc's <sys/gmon.h> declares them.  See profil(2), monitor(3),
 * libprofil(7).
 *
 * This struct prof is AIX's, not the one of glibc's <sys/profil.h>
 * (sprofil()): a file includes one header or the other.
 */
#ifndef _PROFIL_MON_H
#define _PROFIL_MON_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * One region of AIX's profil((void *)regions, (size_t)-1, 0, 0): the PCs
 * [p_low, p_high) counted into the p_bufsize bytes of 16-bit bins at
 * p_buff, with p_scale as profil()'s scale, or (unsigned)-1 for the scale
 * that maps the range onto the bins.  p_high ascends from one entry to the
 * next; an entry whose p_high is 0 ends the array.
 */
struct prof {
	void *p_low;
	void *p_high;
	unsigned short *p_buff;
	int p_bufsize;
	unsigned int p_scale;
};

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
