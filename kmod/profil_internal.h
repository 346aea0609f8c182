/* SPDX-License-Identifier: GPL-2.0 */
/*
 * profil.ko internals.
 *
 * Objects and who owns them:
 *
 *  struct profil_session  one per mm, embedded in the mmu_notifier we hold on
 *                         that mm (mmu_notifier_get() finds or creates it).
 *                         Lives until the mm is torn down (->release at exit
 *                         or exec), then is freed by ->free_notifier after an
 *                         SRCU grace period.  Holds a module reference from
 *                         creation until ->release, so rmmod is refused
 *                         while any process that used profil lives.
 *
 *  struct profil_arm      one armed configuration: pinned regions and the
 *                         perf events that sample into them.  Created by
 *                         PROFIL_IOC_SETUP, destroyed by off, re-arm or mm
 *                         teardown.  It is the perf overflow handler's
 *                         context, immutable while armed, and freed only
 *                         after every event that points at it is released.
 *
 *  struct profil_kregion  one pinned, vmapped histogram region of an arm.
 *
 * Locking: profil_session.lock is the outermost lock; under it we take
 * mmap_lock (account_locked_vm()) and perf's own locks (creating and
 * releasing events, a root event's child_mutex), never both at once.
 * mmu_notifier_get() holds mmap_lock around ->alloc_notifier, which takes
 * no lock of ours.  The tick (profil_tick(), hard irq) takes no lock at all.
 */
#ifndef _PROFIL_INTERNAL_H
#define _PROFIL_INTERNAL_H

#include <linux/atomic.h>
#include <linux/mm_types.h>
#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/types.h>
#include "../uapi/linux/profil.h"

struct profil_kregion {
	u64 offset;		/* PC of bin 0 */
	u64 nbins;		/* usable bins; 0 = counts nothing */
	u32 scale;		/* 16.16 bins per halfword */
	u32 flags;		/* PROFIL_REGION_* */
	unsigned long uaddr;	/* user address of bin 0 */
	void *bins;		/* bin 0 through the kernel mapping */
	void *vbase;		/* vmap() of the pinned pages, or NULL */
	struct page **pages;	/* pinned with FOLL_LONGTERM */
	unsigned long nr_pages;
};

struct profil_session;

struct profil_arm {
	struct profil_session *sess;	/* owner; outlives the arm */
	u64 period_ns;			/* task CPU time per sample */
	u32 rate;			/* samples per CPU second */
	unsigned long locked_pages;	/* charged with account_locked_vm() */
	struct perf_event **events;	/* one root event per thread attached */
	unsigned int nr_events;
	unsigned int max_events;	/* allocated slots in @events */
	struct profil_kregion *overflow; /* PROFIL_REGION_OVERFLOW or NULL */
	u32 nr_regions;			/* in @regions, overflow excluded */
	struct profil_kregion regions[];  /* by offset, highest first */
};

/* Counters of a session, bumped by the tick: atomics, no lock. */
struct profil_counters {
	atomic64_t samples;
	atomic64_t out_of_range;
	atomic64_t saturated;
	atomic64_t missed;
	atomic64_t armed;
};

struct profil_session {
	struct mmu_notifier mn;		/* our tie to the mm; holds mmgrab() */
	struct profil_counters cnt;	/* no lock: atomics */

	/* @lock guards every field below it. */
	struct mutex lock;
	struct profil_arm *arm;		/* running arm, or NULL when off */
	u32 stop_reason;		/* PROFIL_STOP_* of the last stop */
	u32 rate;			/* rate of the running or last arm */
	u64 period_ns;			/* period of the running or last arm */
	bool kept;			/* the session's own notifier ref taken */
};

/* session.c */
struct profil_session *profil_session_get(struct mm_struct *mm);
int profil_session_arm(struct profil_session *sess, struct profil_arm *arm);
void profil_session_off(struct profil_session *sess);
void profil_sessions_drain(void);
void profil_session_stats(struct profil_session *sess,
			  struct profil_stats *st);

/* buffer.c: pinning, accounting and mapping of regions */
int profil_regions_pin(struct profil_arm *arm);
void profil_regions_unpin(struct profil_arm *arm);

/* tick.c: the sampling events */
int profil_events_start(struct profil_arm *arm);
void profil_events_stop(struct profil_arm *arm);

/* main.c */
extern unsigned int profil_max_rate;

#endif /* _PROFIL_INTERNAL_H */
