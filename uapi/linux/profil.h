/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * profil(2) for Linux: the /dev/profil ioctl ABI.
 *
 * A process arms a session for itself (SETUP has no pid): every thread of
 * the calling process, present and future, is sampled on its own CPU
 * time, and each sample adds one to a bin of a histogram in the process's
 * own memory, or stores the raw PC (pcsample mode).  A process may also
 * attach to another it may ptrace (PROFIL_IOC_ATTACH), into bins in kernel
 * memory that it maps read-only.
 *
 * Compatibility rules, for every struct below:
 *  - the first member is 'size', set by user space to sizeof() the struct as
 *    it knows it.  A size below the first version is -EINVAL; a larger size
 *    whose extra bytes are not all zero is -E2BIG (copy_struct_from_user());
 *  - fixed-width types only, pointers travel as __u64, padding is explicit
 *    and must be zero;
 *  - unknown flag bits are -EINVAL.
 * Released numbers and layouts never change; new fields go at the end.
 */
#ifndef _UAPI_LINUX_PROFIL_H
#define _UAPI_LINUX_PROFIL_H

#include <linux/types.h>
#include <linux/ioctl.h>

/* The classic scale: 0x10000 maps each 2 bytes of text onto one bin. */
#define PROFIL_SCALE_ONE	0x10000

/* struct profil_region.flags */
#define PROFIL_REGION_U32	0x1U /* 32-bit bins (default 16-bit) */
#define PROFIL_REGION_OVERFLOW	0x2U /* one bin for PCs in no region */
#define PROFIL_REGION_PCLOG	0x4U /* with OVERFLOW: and their PCs (below) */
#define PROFIL_REGION_FLAGS	(PROFIL_REGION_U32 | PROFIL_REGION_OVERFLOW | \
				 PROFIL_REGION_PCLOG)

/*
 * One histogram region.  A PC counts in bin
 *	((pc - offset) >> 1) * scale >> 16
 * computed without overflow, if that bin lies inside the buffer.  Bins are
 * 16-bit (saturating at 0xffff) or 32-bit (saturating at 0xffffffff) and
 * must be naturally aligned.
 *
 * The overflow region (PROFIL_REGION_OVERFLOW, offset and scale 0) counts
 * the PCs no other region holds, in its first bin.  With
 * PROFIL_REGION_PCLOG (and not PROFIL_REGION_U32) it is instead an array
 * of __u64, 8-byte aligned, of at least 2: [0] counts its samples (never
 * saturates; it wraps modulo 2^64), and the sample that finds it at c
 * stores its PC in [1 + c] when there is one; later samples are counted
 * only.  So the code no object holds (a
 * JIT's) can be named afterwards.
 */
struct profil_region {
	__aligned_u64 buf;	/* user address of the bins */
	__aligned_u64 bufsize;	/* bytes; a trailing odd byte is never used */
	__aligned_u64 offset;	/* the PC that maps onto bin 0 */
	__u32 scale;		/* 1..PROFIL_SCALE_ONE, 16.16 fixed point */
	__u32 flags;		/* PROFIL_REGION_* */
};

/* struct profil_setup.mode */
#define PROFIL_MODE_HIST	0 /* histogram regions (profil, sprofil) */
#define PROFIL_MODE_PCSAMPLE	1 /* raw PCs into one __u64 array */

/* struct profil_setup.flags */
#define PROFIL_F_NOINHERIT	0x1U /* a forked child is not profiled */
#define PROFIL_F_KEEP_FILE	0x2U /* a re-arm carries on the running */
				     /* arm's profile file (below) */
#define PROFIL_F_ALL		(PROFIL_F_NOINHERIT | PROFIL_F_KEEP_FILE)

/* Limits a setup must respect; above them it is -E2BIG. */
#define PROFIL_MAX_REGIONS	1024
#define PROFIL_MAX_BUFSIZE	0x80000000ULL /* bytes in one region */

/*
 * PROFIL_IOC_SETUP argument.  Arms (or re-arms, replacing what ran before)
 * the session of the calling process.  'rate' is set to the sampling rate
 * in use once the struct is validated, before the session is armed.
 *
 * A re-arm normally writes the profile file of the arm it replaces.  With
 * PROFIL_F_KEEP_FILE (and 'output' 0) that file carries on instead: it is
 * not written now, and the new arm pins the same image and writes it, in
 * the same directory, under the same names and credentials, when it ends.
 * So a process can add regions (over bins it reserved in the image)
 * without a second file.  -ENOENT if the running arm has no profile file;
 * -EINVAL with 'output' set or in PROFIL_MODE_PCSAMPLE.
 */
struct profil_setup {
	__u32 size;		/* sizeof(struct profil_setup) */
	__u32 flags;		/* PROFIL_F_* */
	__u32 mode;		/* PROFIL_MODE_* */
	__u32 rate;		/* in: Hz, 0 = HZ; out: the rate in use */
	__u32 nr_regions;	/* entries in 'regions' */
	__u32 region_size;	/* sizeof(struct profil_region) */
	__aligned_u64 regions;	/* user address of struct profil_region[] */
	/* Version 1: */
	__aligned_u64 output;	/* user address of struct profil_output, */
				/* or 0: no profile file */
};

#define PROFIL_SETUP_SIZE_VER0	32 /* first published struct profil_setup */
#define PROFIL_SETUP_SIZE_VER1	40 /* adds 'output' */

/*
 * A profile file, written by the kernel when the arm that carries it ends:
 * PROFIL_IOC_OFF, a re-arm replacing it, a fault, exec, or the end of the
 * process however it comes (exit, _exit, a fatal signal, SIGKILL).
 *
 * The image is one range of the process's memory, pinned and charged with
 * the histogram regions, that user space keeps in the file's own format:
 *
 *	image + 0          'head_size' bytes written as they are (a header
 *	                   and the histogram, which a region may cover)
 *	image + head_size  records of 'rec_size' bytes, at most 'nr_recs_max'
 *	image + ctl_offset struct profil_output_ctl, never written
 *
 * The file is head + the first min(ctl.nr_recs, nr_recs_max) records;
 * ctl.nr_recs is read once, and nothing else in the image is interpreted.
 * It is created in the directory 'dirfd' names (an fd of any kind on a
 * directory, O_PATH included; the kernel keeps its own reference), as a
 * new regular file 'name' (what is at the name is unlinked first, and
 * nothing but a file just created is ever opened), with the credentials
 * and umask the process had when it armed (a forked child: when it took
 * over), and only while it still has those credentials and is dumpable
 * (profil(4), SECURITY); mode 0666 & ~umask.  'name' and 'child_name' are
 * templates of one path component in which "%p" stands for the process ID
 * and "%%" for '%'; 'name' is used by the process that armed,
 * 'child_name' by every forked descendant that inherits the arm.  While
 * ctl.enable is 0 the tick counts nothing (struct profil_stats.paused).
 * With PROFIL_OUTPUT_CHILD_EXIT_ONLY a forked descendant that execs writes
 * no file: its file is written only if it ends without exec, as glibc's
 * gmon writes a child's gmon.out at exit and never at exec.
 * PROFIL_OUTPUT_FORKED says that the caller is such a descendant arming
 * anew the profile it inherited (its take-over failed, PROFIL_STOP_INHERIT;
 * it passes its 'child_name' as 'name'): its session is a descendant's, so
 * that with PROFIL_OUTPUT_CHILD_EXIT_ONLY its exec writes no file either.
 */
struct profil_output {
	__u32 size;		/* sizeof(struct profil_output) */
	__u32 flags;		/* PROFIL_OUTPUT_* */
	__s32 dirfd;		/* the directory of the file */
	__u32 rec_size;		/* bytes in one record, 1..PAGE_SIZE */
	__aligned_u64 image;	/* user address, 8-byte aligned */
	__aligned_u64 image_size; /* bytes, a multiple of 8 */
	__aligned_u64 head_size; /* bytes written as they are */
	__aligned_u64 nr_recs_max; /* records the image holds */
	__aligned_u64 ctl_offset; /* of struct profil_output_ctl; 8-aligned, */
				  /* past the records */
	__aligned_u64 name;	/* user address: the file name template */
	__aligned_u64 child_name; /* user address: for forked children */
};

#define PROFIL_OUTPUT_SIZE_VER0	72 /* first published struct profil_output */

/* struct profil_output.flags */
#define PROFIL_OUTPUT_CHILD_EXIT_ONLY 0x1U /* no file for a forked */
					   /* descendant's exec */
#define PROFIL_OUTPUT_FORKED	0x2U	/* the caller is a forked */
					/* descendant (its re-arm) */
#define PROFIL_OUTPUT_FLAGS	(PROFIL_OUTPUT_CHILD_EXIT_ONLY | \
				 PROFIL_OUTPUT_FORKED)

/* Lives in the image at ctl_offset; shared with the tick, never written. */
struct profil_output_ctl {
	__u64 nr_recs;		/* records in use (may exceed nr_recs_max) */
	__u32 enable;		/* 0: the tick counts nothing */
	__u32 reserved;
};

#define PROFIL_REGION_SIZE_VER0	32 /* first published struct profil_region */

/* struct profil_stats.state */
#define PROFIL_STATE_OFF	0 /* never armed, or stopped */
#define PROFIL_STATE_ON		1 /* sampling */

/* struct profil_stats.stop_reason: why the last session ended */
#define PROFIL_STOP_NONE	0 /* still running, or never armed */
#define PROFIL_STOP_USER	1 /* PROFIL_IOC_OFF */
#define PROFIL_STOP_REPLACED	2 /* never reported: a re-armed session */
				  /* runs on, with PROFIL_STOP_NONE */
#define PROFIL_STOP_FAULT	3 /* the buffer was unmapped or invalidated */
#define PROFIL_STOP_FULL	4 /* pcsample buffer full */
#define PROFIL_STOP_INHERIT	5 /* a forked child could not take over */
				  /* (or a pcsample array: not inherited) */
/* An attachment (PROFIL_IOC_ATTACH) ends when its target: */
#define PROFIL_STOP_EXIT	6 /* exited */
#define PROFIL_STOP_EXEC	7 /* exec'ed */
#define PROFIL_STOP_CRED	8 /* changed its credentials */

/*
 * PROFIL_IOC_STATS argument.  Counters cover the life of the process's
 * session, across re-arms.  A forked child's inherited session starts at
 * zero, with 'armed' 0 and the CPU time it ran before taking over its
 * copy of the buffer counted in 'missed'.  On return 'size' is the number
 * of bytes the kernel wrote.
 */
struct profil_stats {
	__u32 size;		/* sizeof(struct profil_stats) */
	__u32 state;		/* PROFIL_STATE_* */
	__u32 stop_reason;	/* PROFIL_STOP_* */
	__u32 rate;		/* Hz of the current or last session */
	__aligned_u64 period_ns; /* CPU time per sample */
	__aligned_u64 samples;	/* samples added to a bin (or stored PCs) */
	__aligned_u64 out_of_range; /* samples whose PC fell in no bin */
	__aligned_u64 saturated; /* samples lost to a bin already at its max */
	__aligned_u64 missed;	/* samples that had nowhere to go yet */
	__aligned_u64 armed;	/* successful PROFIL_IOC_SETUP calls */
	/* Version 1: */
	__aligned_u64 paused;	/* samples while profil_output_ctl.enable was 0 */
	__aligned_u64 written;	/* profile files written (struct profil_output) */
	__s32 write_error;	/* -errno of the last failed file, 0 if none */
	__u32 writing;		/* profile files being written now (an */
				/* output field, 0 from kernels before it) */
	/* Version 2: */
	__aligned_u64 ticks;	/* timer interrupts taken for the threads; */
				/* each credits the periods their CPU */
				/* clock owes to the samples, out_of_range, */
				/* saturated, missed and paused counts */
	/* Version 3: */
	__s32 inherit_error;	/* -errno that kept a forked child from */
				/* taking over (PROFIL_STOP_INHERIT), or 0 */
	__u32 reserved;		/* 0 */
	/* Version 4: */
	__aligned_u64 cpu_ns;	/* an attachment's: CPU time the target's */
				/* threads ran under its events; 0 for */
				/* a session */
};

#define PROFIL_STATS_SIZE_VER0	64 /* first published struct profil_stats */
#define PROFIL_STATS_SIZE_VER1	88 /* adds paused, written, write_error */
#define PROFIL_STATS_SIZE_VER2	96 /* adds ticks */
#define PROFIL_STATS_SIZE_VER3	104 /* adds inherit_error */
#define PROFIL_STATS_SIZE_VER4	112 /* adds cpu_ns */

/*
 * PROFIL_IOC_ATTACH argument.  Samples every thread, present and future,
 * of another process (the target) into bins in kernel memory, which the
 * caller maps read-only with mmap() on the same /dev/profil fd (offset 0,
 * up to 'bins_size' bytes).  The fd becomes the attachment: STATS and OFF
 * on it are the attachment's, and closing it (and unmapping the bins)
 * ends it.  One attachment per fd.
 *
 * Permission is ptrace's: 'mem_fd' is the caller's own open of
 * /proc/<pid>/mem (O_RDONLY is enough), whose open runs the kernel's
 * ptrace access check (PTRACE_MODE_ATTACH_FSCREDS: Yama, dumpability,
 * LSMs).  The kernel checks that it is such a file and that its memory is
 * the target's now, so a recycled PID is not profiled by mistake; it does
 * not keep the fd.  The target's memory is never read or written.
 *
 * The regions are struct profil_region as for PROFIL_MODE_HIST, but 'buf'
 * is the byte offset of the bins in the mapping, not an address.  The
 * bins are charged to the caller's user (RLIMIT_MEMLOCK, -ENOMEM past it)
 * and memory cgroup.  The attachment ends (PROFIL_STOP_EXIT, _EXEC,
 * _CRED) when the target exits, execs or changes credentials; counting
 * stops then, the bins stay readable.
 */
struct profil_attach {
	__u32 size;		/* sizeof(struct profil_attach) */
	__u32 flags;		/* none defined yet: 0 */
	__s32 mem_fd;		/* the caller's open /proc/<pid>/mem */
	__s32 pid;		/* the target's process ID, in the */
				/* caller's PID namespace */
	__u32 rate;		/* in: Hz, 0 = HZ; out: the rate in use */
	__u32 nr_regions;	/* entries in 'regions' */
	__u32 region_size;	/* sizeof(struct profil_region) */
	__u32 reserved;		/* 0 */
	__aligned_u64 regions;	/* user address of struct profil_region[] */
	__aligned_u64 bins_size; /* out: bytes to mmap(), page multiple */
};

#define PROFIL_ATTACH_SIZE_VER0	48 /* first published struct profil_attach */

/*
 * The ioctl numbers.  SETUP and STATS carry sizeof() their struct in the
 * size bits, as _IOWR() computes it with the header a program was built
 * with; the kernel ignores those bits (it matches the type, the number and
 * the direction) and reads the version from the struct's 'size' field.  So
 * a program built against a later header, whose structs have grown, gets
 * the same command, and an old program keeps working on a new kernel.
 */
#define PROFIL_IOC_MAGIC	0xB9
#define PROFIL_IOC_SETUP	_IOWR(PROFIL_IOC_MAGIC, 1, struct profil_setup)
#define PROFIL_IOC_OFF		_IO(PROFIL_IOC_MAGIC, 2)
#define PROFIL_IOC_STATS	_IOWR(PROFIL_IOC_MAGIC, 3, struct profil_stats)
#define PROFIL_IOC_ATTACH	_IOWR(PROFIL_IOC_MAGIC, 4, struct profil_attach)

#endif /* _UAPI_LINUX_PROFIL_H */
