/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The reference of fuzz_test: what PROFIL_IOC_SETUP, PROFIL_IOC_STATS and
 * PROFIL_IOC_OFF must answer, written from uapi/linux/profil.h and
 * profil(4) alone, never from kmod/, so that where the module and the
 * reference disagree, one of the two (or the page) is wrong.
 *
 * profil(4) names the errors, not their order.  So the reference answers
 * with a set: every result the call may have.  An error belongs to the set
 * when its condition holds at the first of these stages that has one; a
 * struct is looked at before what it points to:
 *
 *   1. the struct profil_setup: read (EFAULT), its size (EINVAL, E2BIG:
 *      a tail the kernel does not know, not zero), its fields;
 *   2. what it points to: each struct profil_region, the struct
 *      profil_output; and the rate written back (EFAULT), perfmon_only
 *      (EACCES);
 *   3. the output's name templates and its directory;
 *   4. the session: PROFIL_F_KEEP_FILE without a running file (ENOENT);
 *   5. the memory: RLIMIT_MEMLOCK (ENOMEM), bins or an image not all
 *      mapped writable, or in a shared mapping of a file (EFAULT).
 *
 * A set without an error is success.  The caller describes the memory
 * (struct fz_env's page()), since it made it, and the rest of the world.
 */
#ifndef PROFIL_FUZZ_REF_H
#define PROFIL_FUZZ_REF_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <linux/profil.h>

/* Results: bit e for errno e (all below 64), bit 0 for success. */
typedef uint64_t fz_set;
#define FZ_OK		1ULL
#define FZ_E(e)		(1ULL << (e))

/* What a page of the caller's memory is. */
enum fz_page {
	FZ_PG_NONE,	/* unmapped, PROT_NONE, or not user space */
	FZ_PG_RO,	/* readable only */
	FZ_PG_RW,	/* anonymous, shared memory or a private file mapping */
	FZ_PG_SHFILE,	/* MAP_SHARED of a file that is not shared memory */
};

#define FZ_READABLE	(1U << FZ_PG_RO | 1U << FZ_PG_RW | 1U << FZ_PG_SHFILE)
#define FZ_WRITABLE	(1U << FZ_PG_RW | 1U << FZ_PG_SHFILE)
#define FZ_PINNABLE	(1U << FZ_PG_RW)

/* The end of user space on x86-64 with 4-level page tables (TASK_SIZE_MAX). */
#define FZ_USER_END	0x7ffffffff000ULL
#define FZ_PAGE_SIZE	4096ULL
/* profil(4): 10 us of CPU time is the shortest period. */
#define FZ_RATE_CAP	100000U
/* The longest process ID (PID_MAX_LIMIT), for a child's name. */
#define FZ_PID_LONGEST	4194304

struct fz_env {
	enum fz_page (*page)(uint64_t addr);
	unsigned int hz;		/* the rate of a setup that asks for 0 */
	unsigned int max_rate;		/* the module parameter */
	bool perfmon_only;		/* the module parameter */
	bool perfmon_capable;		/* CAP_PERFMON or CAP_SYS_ADMIN */
	bool memlock_bound;		/* no CAP_IPC_LOCK */
	uint64_t memlock_pages;		/* RLIMIT_MEMLOCK, soft, in pages */
	bool vfork_child;		/* the call comes from a vfork child */
	bool file_running;		/* the running session has a file */
	uint64_t kept_image;		/* its image, which a KEEP arm pins */
	uint64_t kept_image_size;
	pid_t pid;
};

/* One region as the kernel counts into it. */
struct fz_bins {
	uint64_t addr;		/* the first bin */
	uint64_t nbins;
	unsigned int shift;	/* log2 of a bin's bytes */
	uint64_t offset;
	uint32_t scale;
	bool overflow;
	bool pclog;		/* a count and PCs, not a bin */
};

/* What a setup that succeeds sets up. */
struct fz_want {
	fz_set set;
	uint32_t rate;		/* in use, written back */
	uint32_t mode, flags;
	uint32_t nr;
	uint64_t pages;		/* distinct pages pinned: VmPin / 4 kB */
	bool file;		/* a new profile file */
	struct profil_output out;
	char name[256];		/* its file name, expanded */
	bool keep;		/* carries the running file on */
	struct fz_bins bins[PROFIL_MAX_REGIONS];	/* last: not cleared */
};

static inline bool fz_user(uint64_t a, uint64_t n)
{
	return a + n >= a && a + n <= FZ_USER_END;
}

/* Is every page of [a, a + n) of a kind in @ok? */
static inline bool fz_mem(const struct fz_env *env, uint64_t a, uint64_t n,
			  unsigned int ok)
{
	uint64_t p;

	if (!n)
		return true;
	if (!fz_user(a, n))
		return false;
	for (p = a & ~(FZ_PAGE_SIZE - 1); p < a + n; p += FZ_PAGE_SIZE)
		if (!(ok >> env->page(p) & 1))
			return false;
	return true;
}

/*
 * Read @usize bytes at @a into @dst of @ksize bytes, as every struct of the
 * ABI is read: what the kernel does not know must be zero (E2BIG), and
 * the kernel knows nothing past what was given (zero).
 */
static inline fz_set fz_copy_struct(const struct fz_env *env, uint64_t a,
				    uint32_t usize, void *dst, uint32_t ksize)
{
	const unsigned char *u = (const unsigned char *)(uintptr_t)a;
	fz_set e = 0;
	uint32_t i;

	memset(dst, 0, ksize);
	if (!fz_mem(env, a, usize, FZ_READABLE)) {
		if (!fz_user(a, usize))
			return FZ_E(EFAULT);
		e |= FZ_E(EFAULT);
	}
	for (i = ksize; i < usize; i++)
		if (fz_mem(env, a + i, 1, FZ_READABLE) && u[i])
			return e | FZ_E(E2BIG);
	if (!e)
		memcpy(dst, u, usize < ksize ? usize : ksize);
	return e;
}

/* The size a struct at @a starts with: EFAULT unreadable, EINVAL below @ver0. */
static inline fz_set fz_size(const struct fz_env *env, uint64_t a,
			     uint32_t *size, uint32_t ver0)
{
	if (!fz_mem(env, a, 4, FZ_READABLE))
		return FZ_E(EFAULT);
	memcpy(size, (const void *)(uintptr_t)a, 4);
	return *size < ver0 ? FZ_E(EINVAL) : FZ_OK;
}

/* A struct that starts with its size: below @ver0 EINVAL, above a page E2BIG. */
static inline fz_set fz_copy_in(const struct fz_env *env, uint64_t a,
				void *dst, uint32_t ksize, uint32_t ver0)
{
	uint32_t usize;
	fz_set e = fz_size(env, a, &usize, ver0);

	if (e != FZ_OK)
		return e;
	if (usize > FZ_PAGE_SIZE)
		return FZ_E(E2BIG);
	return fz_copy_struct(env, a, usize, dst, ksize);
}

/* A buffer the kernel will pin: 2 GiB at most, no wrap, user space. */
static inline fz_set fz_buf(uint64_t a, uint64_t n)
{
	fz_set e = 0;

	if (n > PROFIL_MAX_BUFSIZE)
		e |= FZ_E(E2BIG);
	if (a + n < a)
		e |= FZ_E(EINVAL);
	else if (!fz_user(a, n))
		e |= FZ_E(EFAULT);
	return e;
}

/* One region (profil(4): Structures, Raw PCs); fills @b. */
static inline fz_set fz_region(const struct profil_region *r, uint32_t mode,
			       struct fz_bins *b)
{
	fz_set e = 0;

	b->overflow = r->flags & PROFIL_REGION_OVERFLOW;
	b->pclog = false;
	b->shift = r->flags & PROFIL_REGION_U32 ? 2 : 1;
	if (r->flags & ~PROFIL_REGION_FLAGS)
		e |= FZ_E(EINVAL);
	if (mode == PROFIL_MODE_PCSAMPLE) {
		if (r->flags || r->offset || r->scale)
			e |= FZ_E(EINVAL);
		b->shift = 3;
	} else if (b->overflow) {
		if (r->offset || r->scale)
			e |= FZ_E(EINVAL);
		/* PCLOG: __u64 slots, a count and a PC at least. */
		if (r->flags & PROFIL_REGION_PCLOG) {
			if ((r->flags & PROFIL_REGION_U32) || r->bufsize < 16)
				e |= FZ_E(EINVAL);
			b->pclog = true;
			b->shift = 3;
		}
	} else if (r->flags & PROFIL_REGION_PCLOG) {
		e |= FZ_E(EINVAL);
	} else if (!r->scale || r->scale > PROFIL_SCALE_ONE) {
		e |= FZ_E(EINVAL);
	}
	if (r->buf & ((1ULL << b->shift) - 1))
		e |= FZ_E(EINVAL);
	e |= fz_buf(r->buf, r->bufsize);
	b->addr = r->buf;
	b->nbins = r->bufsize >> b->shift;
	/* Only the overflow region's first bin counts (or its log's). */
	if (b->overflow && !b->pclog && b->nbins > 1)
		b->nbins = 1;
	b->offset = r->offset;
	b->scale = r->scale;
	return e;
}

/* The output's layout (profil(4): Profile files, ERRORS). */
static inline fz_set fz_output(const struct profil_output *o)
{
	uint64_t recs, end;
	fz_set e = 0;

	if (o->flags & ~PROFIL_OUTPUT_FLAGS)
		e |= FZ_E(EINVAL);
	if (!o->rec_size || o->rec_size > FZ_PAGE_SIZE)
		e |= FZ_E(EINVAL);
	if (!o->image_size || (o->image | o->image_size) % 8)
		e |= FZ_E(EINVAL);
	e |= fz_buf(o->image, o->image_size);
	if (__builtin_mul_overflow(o->nr_recs_max, (uint64_t)o->rec_size,
				   &recs) ||
	    __builtin_add_overflow(recs, o->head_size, &end) ||
	    end > o->ctl_offset || o->ctl_offset % 8 ||
	    o->ctl_offset > o->image_size ||
	    o->image_size - o->ctl_offset < sizeof(struct profil_output_ctl))
		e |= FZ_E(EINVAL);
	return e;
}

/*
 * A name template at @a, expanded with @pid into @out (if not NULL): one
 * path component, "%p" the process ID, "%%" a '%', 255 bytes at most,
 * template and name alike.
 */
static inline fz_set fz_name(const struct fz_env *env, uint64_t a, pid_t pid,
			     char *out)
{
	const char *t = (const char *)(uintptr_t)a;
	char buf[1024], num[16];
	size_t n = 0, len, i;
	fz_set e = 0;

	for (len = 0; len < 256; len++) {
		if (!fz_mem(env, a + len, 1, FZ_READABLE))
			return FZ_E(EFAULT);
		if (!t[len])
			break;
	}
	if (len == 256)
		return FZ_E(ENAMETOOLONG);
	snprintf(num, sizeof(num), "%d", (int)pid);
	for (i = 0; i < len; i++) {
		if (t[i] == '/')
			e |= FZ_E(EINVAL);
		if (t[i] != '%') {
			buf[n++] = t[i];
		} else if (t[i + 1] == '%') {
			buf[n++] = '%';
			i++;
		} else if (t[i + 1] == 'p') {
			memcpy(buf + n, num, strlen(num));
			n += strlen(num);
			i++;
		} else {
			e |= FZ_E(EINVAL);
		}
	}
	buf[n] = 0;
	if (n > 255)
		e |= FZ_E(ENAMETOOLONG);
	if (!n || !strcmp(buf, ".") || !strcmp(buf, ".."))
		e |= FZ_E(EINVAL);
	if (out && !e)
		strcpy(out, buf);
	return e;
}

static inline fz_set fz_dirfd(int fd)
{
	struct stat st;

	if (fd < 0 || fstat(fd, &st))
		return FZ_E(EBADF);
	return S_ISDIR(st.st_mode) ? 0 : FZ_E(ENOTDIR);
}

struct fz_range {
	uint64_t start, end;
};

static inline int fz_range_cmp(const void *a, const void *b)
{
	const struct fz_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The distinct pages of @n page ranges. */
static inline uint64_t fz_pages(struct fz_range *r, unsigned int n)
{
	uint64_t total = 0, end = 0, s;
	unsigned int i;

	qsort(r, n, sizeof(*r), fz_range_cmp);
	for (i = 0; i < n; i++) {
		s = r[i].start > end ? r[i].start : end;
		if (r[i].end > s) {
			total += r[i].end - s;
			end = r[i].end;
		}
	}
	return total;
}

/* Stage 5: every range pinnable, and the pages within RLIMIT_MEMLOCK. */
static inline fz_set fz_pin(const struct fz_env *env, struct fz_want *w,
			    const struct profil_output *img)
{
	static struct fz_range pg[PROFIL_MAX_REGIONS + 1];
	unsigned int i, n = 0;
	fz_set e = 0;

	for (i = 0; i <= w->nr; i++) {
		uint64_t a, len;

		if (i < w->nr) {
			a = w->bins[i].addr;
			len = w->bins[i].nbins << w->bins[i].shift;
		} else if (img) {
			a = img->image;
			len = img->image_size;
		} else {
			break;
		}
		if (!len)
			continue;
		if (!fz_mem(env, a, len, FZ_PINNABLE))
			e |= FZ_E(EFAULT);
		pg[n].start = a / FZ_PAGE_SIZE;
		pg[n++].end = (a + len + FZ_PAGE_SIZE - 1) / FZ_PAGE_SIZE;
	}
	w->pages = fz_pages(pg, n);
	if (env->memlock_bound && w->pages > env->memlock_pages)
		e |= FZ_E(ENOMEM);
	return e;
}

/* PROFIL_IOC_SETUP with @arg: the results it may have, and @w on success. */
static inline fz_set fz_ref_setup(const struct fz_env *env, uint64_t arg,
				  struct fz_want *w)
{
	struct profil_setup s;
	struct profil_output o, kept;
	uint32_t i, nr_ovf = 0, cap;
	fz_set e;

	memset(w, 0, offsetof(struct fz_want, bins));
	/* "until a vfork(2) child calls execve(2) or exits ... EINVAL" */
	if (env->vfork_child)
		return w->set = FZ_E(EINVAL);

	/* 1. The setup. */
	e = fz_copy_in(env, arg, &s, sizeof(s), PROFIL_SETUP_SIZE_VER0);
	if (e)
		return w->set = e;
	if (s.flags & ~PROFIL_F_ALL)
		e |= FZ_E(EINVAL);
	if (s.mode != PROFIL_MODE_HIST && s.mode != PROFIL_MODE_PCSAMPLE)
		e |= FZ_E(EINVAL);
	if (s.mode == PROFIL_MODE_PCSAMPLE &&
	    (s.nr_regions != 1 || s.output || s.flags & PROFIL_F_KEEP_FILE))
		e |= FZ_E(EINVAL);
	if (s.flags & PROFIL_F_KEEP_FILE && s.output)
		e |= FZ_E(EINVAL);
	w->rate = s.rate ? s.rate : env->hz;
	cap = env->max_rate < FZ_RATE_CAP ? env->max_rate : FZ_RATE_CAP;
	if (w->rate > cap)
		e |= FZ_E(EINVAL);
	if (!s.nr_regions)
		e |= FZ_E(EINVAL);
	if (s.nr_regions > PROFIL_MAX_REGIONS)
		e |= FZ_E(E2BIG);
	if (s.region_size < PROFIL_REGION_SIZE_VER0)
		e |= FZ_E(EINVAL);
	if (s.region_size > FZ_PAGE_SIZE)
		e |= FZ_E(E2BIG);
	if (e)
		return w->set = e;
	w->mode = s.mode;
	w->flags = s.flags;
	w->nr = s.nr_regions;

	/* 2. What it points to; the rate goes back; who may arm. */
	if (!fz_mem(env, arg + offsetof(struct profil_setup, rate), 4,
		    FZ_WRITABLE))
		e |= FZ_E(EFAULT);
	if (env->perfmon_only && !env->perfmon_capable)
		e |= FZ_E(EACCES);
	for (i = 0; i < s.nr_regions; i++) {
		struct profil_region r;
		fz_set re;

		memset(&w->bins[i], 0, sizeof(w->bins[i]));
		re = fz_copy_struct(env, s.regions + (uint64_t)i * s.region_size,
				    s.region_size, &r, sizeof(r));
		if (!re)
			re = fz_region(&r, s.mode, &w->bins[i]);
		nr_ovf += w->bins[i].overflow;
		e |= re;
	}
	if (nr_ovf > 1)
		e |= FZ_E(EINVAL);
	if (s.output) {
		fz_set oe = fz_copy_in(env, s.output, &o, sizeof(o),
				       PROFIL_OUTPUT_SIZE_VER0);

		e |= oe ? oe : fz_output(&o);
		if (e)
			return w->set = e;
		/* 3. Names and directory. */
		e |= fz_name(env, o.child_name, FZ_PID_LONGEST, NULL);
		e |= fz_name(env, o.name, env->pid, w->name);
		e |= fz_dirfd(o.dirfd);
		w->file = true;
		w->out = o;
	}
	if (e)
		return w->set = e;

	/* 4. The session. */
	if (s.flags & PROFIL_F_KEEP_FILE) {
		if (!env->file_running)
			return w->set = FZ_E(ENOENT);
		w->keep = true;
		kept.image = env->kept_image;
		kept.image_size = env->kept_image_size;
	}

	/* 5. The memory. */
	e = fz_pin(env, w, w->file ? &o : w->keep ? &kept : NULL);
	return w->set = e ? e : FZ_OK;
}

/* PROFIL_IOC_STATS with @arg; @wrote gets the bytes the kernel writes. */
static inline fz_set fz_ref_stats(const struct fz_env *env, uint64_t arg,
				  uint32_t *wrote)
{
	uint32_t size;
	fz_set e = fz_size(env, arg, &size, PROFIL_STATS_SIZE_VER0);

	*wrote = 0;
	if (e != FZ_OK)
		return e;
	if (size > sizeof(struct profil_stats))
		size = sizeof(struct profil_stats);
	if (!fz_mem(env, arg, size, FZ_WRITABLE))
		return FZ_E(EFAULT);
	*wrote = size;
	return FZ_OK;
}

/* PROFIL_IOC_OFF: "The argument must be 0." */
static inline fz_set fz_ref_off(unsigned long arg)
{
	return arg ? FZ_E(EINVAL) : FZ_OK;
}

/*
 * Which request @cmd is: "it matches the type, the number and the
 * direction" and ignores the size bits.  0 for none (ENOTTY).
 */
static inline unsigned long fz_ref_cmd(unsigned int cmd)
{
	static const unsigned long cmds[] = {
		PROFIL_IOC_SETUP, PROFIL_IOC_OFF, PROFIL_IOC_STATS,
		PROFIL_IOC_ATTACH,
	};
	unsigned int i;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (_IOC_TYPE(cmd) == _IOC_TYPE(cmds[i]) &&
		    _IOC_NR(cmd) == _IOC_NR(cmds[i]) &&
		    _IOC_DIR(cmd) == _IOC_DIR(cmds[i]))
			return cmds[i];
	return 0;
}

/*
 * The bin that counts @pc (profil(4)): ((pc - offset) >> 1) * scale >> 16
 * of the region with the highest offset whose bins hold it, or else the
 * overflow region's first bin.  Return: its address, or 0 for none; *tie
 * when two regions of that offset hold it (which one counts is not said).
 */
static inline uint64_t fz_ref_bin(const struct fz_want *w, uint64_t pc,
				  bool *tie)
{
	const struct fz_bins *best = NULL, *ovf = NULL;
	unsigned __int128 idx;
	uint64_t addr = 0;
	uint32_t i;

	*tie = false;
	for (i = 0; i < w->nr; i++) {
		const struct fz_bins *b = &w->bins[i];

		if (b->overflow) {
			ovf = b;
			continue;
		}
		if (pc < b->offset)
			continue;
		idx = (unsigned __int128)((pc - b->offset) >> 1) * b->scale >> 16;
		if (idx >= b->nbins)
			continue;
		if (best && b->offset == best->offset)
			*tie = true;
		if (!best || b->offset > best->offset) {
			best = b;
			*tie = false;
			addr = b->addr + ((uint64_t)idx << b->shift);
		}
	}
	if (!best && ovf && ovf->nbins)
		addr = ovf->addr;
	return addr;
}

/* "EINVAL|E2BIG", "ok" */
static inline const char *fz_set_str(fz_set set, char *buf, size_t len)
{
	size_t n = 0;
	int e;

	buf[0] = 0;
	for (e = 0; e < 64; e++) {
		if (!(set >> e & 1))
			continue;
		n += snprintf(buf + n, n < len ? len - n : 0, "%s%s",
			      n ? "|" : "", e ? strerrorname_np(e) : "ok");
	}
	return buf;
}

#endif /* PROFIL_FUZZ_REF_H */
