/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gprof's 4.4BSD gmon.out header for a 64-bit target (binutils
 * gprof/gmon_io.c), as libprofil's gmon runtime (gmon.c) and profil(1)'s
 * -f gmon (tools/report.c) write it: the header, then 16-bit bins.
 * Internal: not installed.
 */
#ifndef _PROFIL_GMON_BSD_H
#define _PROFIL_GMON_BSD_H

#include <stdint.h>

struct gmon_hdr {
	uint64_t lowpc;
	uint64_t highpc;
	uint32_t ncnt;		/* bytes of this header and the histogram */
	uint32_t version;	/* GMON_VERSION */
	uint32_t profrate;	/* samples per second */
	uint32_t dropped;	/* ours (a spare): calls not recorded, */
	uint32_t spare[2];	/* the arc table being full */
};

#define GMON_VERSION		0x00051879

#endif /* _PROFIL_GMON_BSD_H */
