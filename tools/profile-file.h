/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The profile file of profil(1): what its agent (tools/agent.c) keeps in
 * one image of the profiled process's memory, and the kernel writes out
 * (struct profil_output of <linux/profil.h>) when the arm ends, however it
 * ends.  One file per arm, named by the agent's templates:
 *
 *	p<pid>.<arm>.prof	the process that armed
 *	c<pid>.<arm>.prof	a forked descendant that inherited the arm
 *	e<pid>.txt		a process whose agent could not arm: why
 *
 * Layout, native byte order, every offset from the start of the file:
 *
 *	struct profile_file_hdr
 *	struct profile_file_region [nr_regions], the first the nowhere bin's,
 *		then room for more
 *	names: NUL-terminated object paths (names_off, names_size), then room
 *	the regions' 32-bit bins, each region at its bins_off, then room
 *
 * The agent adds regions as objects are loaded: their entries, names and
 * bins go into the room, and nr_regions grows last.
 *
 * Only profil(1) and its agent read and write it, from one build; the
 * version in the magic changes with any change of layout.
 */
#ifndef PROFIL_TOOLS_PROFILE_FILE_H
#define PROFIL_TOOLS_PROFILE_FILE_H

#include <stdint.h>

#define PROFILE_FILE_MAGIC	"PROFIL5"	/* 8 bytes with the NUL */

/* profile_file_hdr.flags */
#define PROFILE_FILE_ENDED	0x1U	/* exit(3) ran: the counters are valid */

#define PROFILE_SELF_MAX	8	/* profile_file_hdr.self[] */

struct profile_file_hdr {
	char magic[8];
	uint32_t hdr_size;	/* sizeof(struct profile_file_hdr) */
	uint32_t region_size;	/* sizeof(struct profile_file_region) */
	uint32_t nr_regions;
	uint32_t rate;		/* Hz, as the kernel set it */
	uint32_t pid;		/* the process that wrote the counters */
	uint32_t flags;		/* PROFILE_FILE_* */
	uint64_t names_off;	/* the object paths */
	uint64_t names_size;
	uint64_t size;		/* bytes in the file */
	uint64_t cpu_start_ns;	/* the process's CPU time when it armed */
	/* Filled at exit(3) when PROFILE_FILE_ENDED is set: */
	uint64_t cpu_ns;	/* the process's CPU time, all its threads */
	uint64_t samples;	/* struct profil_stats, the process's life */
	uint64_t out_of_range;
	uint64_t saturated;
	uint64_t missed;
	/*
	 * The agent's own code: the executable segments of its link
	 * namespace (the agent, its own copy of libc), [start, end) each,
	 * the first nr_self of them.  No region covers them; the PCs a log
	 * kept there are profil's own work (its arms' system calls), which
	 * the report names "[profil]".
	 */
	uint32_t nr_self;
	uint32_t reserved;
	uint64_t self[PROFILE_SELF_MAX][2];
};

#define PROFILE_BUILD_ID_MAX	32

/* profile_file_region.kind */
#define PROFILE_REGION_EXE	0	/* the main program's text */
#define PROFILE_REGION_LIB	1	/* a shared object's text */
#define PROFILE_REGION_VDSO	2	/* the kernel's vDSO */
#define PROFILE_REGION_NOWHERE	3	/* one bin: PCs in no region */
#define PROFILE_REGION_PCLOG	4	/* the same, kept: uint64_t [nr_bins], */
					/* a count, then a PC for each sample */
					/* while there is room (a PC of 0: */
					/* unknown) */

struct profile_file_region {
	uint64_t start;		/* the first PC the bins cover */
	uint64_t end;		/* past the last one */
	uint64_t bias;		/* the object's load bias (dlpi_addr) */
	uint64_t bins_off;	/* uint32_t bins[nr_bins] */
	uint32_t nr_bins;
	uint32_t shift;		/* a bin counts 1 << shift bytes of text */
	uint32_t name_off;	/* the object's path, in names */
	uint32_t kind;		/* PROFILE_REGION_* */
	uint32_t build_id_size;	/* bytes of build_id, 0: the object has none */
	uint32_t reserved;
	uint8_t build_id[PROFILE_BUILD_ID_MAX]; /* NT_GNU_BUILD_ID, as loaded */
};

#endif /* PROFIL_TOOLS_PROFILE_FILE_H */
