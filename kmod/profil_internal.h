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
 *                         SRCU and an RCU grace period.  From first use to
 *                         ->release it holds a module reference (rmmod is
 *                         refused while any process that used profil lives)
 *                         and sits in a hash by mm, where fork finds it.
 *
 *  struct profil_arm      one armed configuration: pinned regions, their
 *                         interval notifiers and the perf events that sample
 *                         into them.  Created by PROFIL_IOC_SETUP or by
 *                         inheritance at fork, stopped by off, re-arm, fault
 *                         or mm teardown.  It is the perf overflow handler's
 *                         context, immutable while armed but for @faulted.
 *                         Reference counted: the session holds one while it
 *                         runs, a fork pending in a child holds one to read
 *                         the configuration; freed after an RCU grace period.
 *
 *  struct profil_kregion  one pinned, vmapped histogram region of an arm,
 *                         with the interval notifier that watches its pages.
 *
 * Locking: profil_session.lock is the outermost lock; under it we take
 * mmap_lock (account_locked_vm()), perf's own locks (creating and releasing
 * events, a root event's child_mutex) and wait for invalidations in
 * mmu_interval_notifier_remove(), never two of these at once.  So the
 * invalidate callback must not take it: it takes only profil_arm.fault_lock,
 * a spinlock, and leaves the rest to profil_session.fault_work or the next
 * ioctl: both look the pages up again (mmap_lock under the session lock)
 * and either resume counting or stop the arm.
 * mmu_notifier_get() holds mmap_lock around ->alloc_notifier, which takes
 * no lock of ours.  The tick (hard irq) and the fork tracepoint (preemption
 * off) take no lock at all: they read under RCU and use atomics.
 */
#ifndef _PROFIL_INTERNAL_H
#define _PROFIL_INTERNAL_H

#include <linux/atomic.h>
#include <linux/mm_types.h>
#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include "../uapi/linux/profil.h"

struct profil_arm;

struct profil_kregion {
	/* The configuration, copied from the setup or the parent's arm. */
	u64 offset;		/* PC of bin 0 */
	u64 nbins;		/* usable bins; 0 = counts nothing */
	u32 scale;		/* 16.16 bins per halfword */
	u32 flags;		/* PROFIL_REGION_* */
	unsigned long uaddr;	/* user address of bin 0 */

	/* The pinned state, set up by profil_regions_pin(). */
	struct profil_arm *arm;	/* owner, for the notifier */
	void *bins;		/* bin 0 through the kernel mapping */
	void *vbase;		/* vmap() of the pinned pages, or NULL */
	struct page **pages;	/* pinned with FOLL_LONGTERM */
	unsigned long nr_pages;
	struct mmu_interval_notifier mni; /* watches the pinned pages */
	unsigned long mni_seq;	/* mmu_interval_read_begin() at the pin */
	bool mni_on;		/* @mni inserted */
};

struct profil_session;

struct profil_arm {
	struct profil_session *sess;	/* owner; outlives the arm's use */
	refcount_t ref;			/* session's + pending forks' */
	struct rcu_head rcu;
	u32 flags;			/* PROFIL_F_* */
	u64 period_ns;			/* task CPU time per sample */
	u32 rate;			/* samples per CPU second */
	unsigned long locked_pages;	/* charged with account_locked_vm() */
	struct perf_event **events;	/* one root event per thread attached */
	unsigned int nr_events;
	unsigned int max_events;	/* allocated slots in @events */

	/*
	 * @fault_lock orders the notifiers' sequence updates against the
	 * checks that arm them (@live) and that resume counting.  @faulted is
	 * set by an invalidation after @live; while it is, the tick writes
	 * nothing.  Only profil_regions_recheck() clears it again.
	 */
	spinlock_t fault_lock;
	bool live;
	atomic_t faulted;

	struct profil_kregion *overflow; /* PROFIL_REGION_OVERFLOW or NULL */
	u32 nr_regions;			/* in @regions, overflow excluded */
	u32 nr_all;			/* in @regions, overflow included */
	struct profil_kregion regions[];  /* by offset, highest first, */
					  /* then the overflow region */
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
	struct hlist_node node;		/* in the hash by mm; profil_hash_lock */
	struct work_struct fault_work;	/* stops an arm that faulted */
	struct rcu_head rcu;

	/* @lock guards every field below it; @arm is also read under RCU. */
	struct mutex lock;
	struct profil_arm __rcu *arm;	/* running arm, or NULL when off */
	u32 stop_reason;		/* PROFIL_STOP_* of the last stop */
	u32 rate;			/* rate of the running or last arm */
	u64 period_ns;			/* period of the running or last arm */
	bool kept;			/* the session's own notifier ref taken */
};

/* session.c */
struct profil_arm *profil_arm_alloc(u32 nr_regions);
struct profil_arm *profil_arm_clone(const struct profil_arm *src);
void profil_arm_put(struct profil_arm *arm);
void profil_arm_fault(struct profil_arm *arm, bool sync);
struct profil_arm *profil_arm_get_rcu(struct mm_struct *mm);
struct profil_session *profil_session_get(struct mm_struct *mm);
int profil_session_arm(struct profil_session *sess, struct profil_arm *arm,
		       bool inherited);
void profil_session_off(struct profil_session *sess);
void profil_session_failed(struct profil_session *sess, u32 why);
void profil_sessions_drain(void);
void profil_session_stats(struct profil_session *sess,
			  struct profil_stats *st);

/* buffer.c: pinning, accounting, mapping and watching of regions */
int profil_regions_pin(struct profil_arm *arm);
void profil_regions_unpin(struct profil_arm *arm);
bool profil_regions_recheck(struct profil_arm *arm);

/* tick.c: the sampling events */
int profil_events_start(struct profil_arm *arm);
void profil_events_stop(struct profil_arm *arm);

/* fork.c: inheritance by forked children */
int profil_fork_init(void);
void profil_fork_exit(void);

/* main.c */
extern unsigned int profil_max_rate;

#endif /* _PROFIL_INTERNAL_H */
