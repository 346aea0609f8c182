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
 *                         SRCU and an RCU grace period.  From first arming to
 *                         ->release it holds a module reference (rmmod is
 *                         refused while any process that armed lives) and
 *                         sits in a hash by mm, where fork, STATS and OFF
 *                         find it without creating one (session.c).
 *
 *  struct profil_arm      one armed configuration: pinned regions, their
 *                         interval notifiers, the user charged for the pins,
 *                         and the perf events that sample into them.  Created
 *                         by PROFIL_IOC_SETUP or by inheritance at fork,
 *                         stopped by off, re-arm, fault or mm teardown.  It is
 *                         the perf overflow handler's context, immutable while
 *                         running but for its fault state (arm.c).  Reference
 *                         counted: the session holds one while it runs, a fork
 *                         pending in a child and a settle in progress hold one
 *                         each; freed after an RCU grace period.
 *
 *  struct profil_kregion  one pinned, vmapped histogram region of an arm,
 *                         with the interval notifier that watches its pages;
 *                         or the image of its profile file (output.c).
 *
 *  struct profil_koutput  an arm's profile file: directory, credentials,
 *                         name and the image's layout.  Owned by the arm.
 *
 *  struct profil_attachment  an attachment to another process (attach.c):
 *                         an arm whose regions index bins in kernel memory,
 *                         owned by the /dev/profil file that attached.
 *
 *  struct profil_write    the write of an ended arm's profile file (write.c):
 *                         owns that arm, its pins and its charge from the
 *                         stop until the file is written; runs on a kernel
 *                         thread of its own, so that nothing waits for it
 *                         but the process whose file it is.
 *
 * Locking, outermost first:
 *
 *  profil_session.lock    a mutex; guards the session's arm pointer and what
 *                         it says of the last stop.  Held to arm (charge, pin,
 *                         start events), to stop (release events, hand the
 *                         arm to its write or unpin it) and to settle a
 *                         fault; STATS and a finished write take it only to
 *                         copy.  Nobody waits for a write while holding it.
 *  mmap_lock, perf's      taken under it by pinning, GUP, perf_event_create_
 *  locks                  kernel_counter() and perf_event_release_kernel();
 *                         mmu_interval_notifier_remove() under it waits for
 *                         invalidations in progress.
 *  profil_writes_lock     a mutex (write.c), under the session lock: the
 *                         writes in flight per user.
 *  profil_attach_mutex    a mutex (attach.c): serialises ATTACH; above an
 *                         attachment's lock, never taken with a session's.
 *  profil_attachment.lock a mutex: making and releasing an attachment's
 *                         events (perf's locks under it); the profil-settle
 *                         thread takes it to release them, so nobody holding
 *                         it waits for that thread.
 *  profil_attach_lock     a spinlock (attach.c): the table of attachments
 *                         by tgid, which the exec and exit probes read
 *                         under RCU.
 *  profil_owners_lock     a spinlock (session.c), under the session lock:
 *                         the table of sessions by owner, which the exec
 *                         and exit probes read under RCU.
 *  profil_arm.fault_lock  a spinlock, innermost; orders the interval
 *                         notifiers' sequence numbers against the checks that
 *                         make an arm live or resume it (arm.c).
 *
 * So the invalidate callback, which runs under mmap_lock or the rmap locks,
 * takes only @fault_lock; it suspends the arm's writes and leaves the rest
 * to the session's settle work.  The tick (hard irq) and the fork probe
 * (which may not sleep, but is not always run with preemption off: newer
 * kernels run tracepoint probes under SRCU-fast) take no lock at all: they
 * read under an rcu_read_lock() of their own and use atomics.
 * mmu_notifier_get() holds mmap_lock around ->alloc_notifier, which takes
 * no lock of ours.
 */
#ifndef _PROFIL_INTERNAL_H
#define _PROFIL_INTERNAL_H

#include <linux/atomic.h>
#include <linux/kthread.h>
#include <linux/mm_types.h>
#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/rhashtable-types.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include "../uapi/linux/profil.h"

struct profil_arm;

struct profil_kregion {
	/* The configuration, copied from the setup or the parent's arm. */
	u64 offset;		/* PC of bin 0 */
	u64 nbins;		/* usable bins; 0 = counts nothing */
	u32 scale;		/* 16.16 bins per halfword */
	u32 flags;		/* PROFIL_REGION_* */
	unsigned long uaddr;	/* user address of bin 0 */

	/* Set by profil_regions_pin() (buffer.c): into its span's mapping. */
	void *bins;		/* bin 0 through the kernel mapping */
};

/*
 * A run of pages that one or more regions of an arm cover (overlapping or
 * touching regions share one): pinned, mapped and watched once, however
 * many regions index into it (buffer.c).
 */
struct profil_span {
	unsigned long start;	/* user address of the first page */
	unsigned long nr_pages;
	struct profil_arm *arm;	/* owner, for the notifier */
	struct page **pages;	/* pinned with FOLL_LONGTERM, or NULL */
	void *vbase;		/* vmap() of @pages */
	struct mmu_interval_notifier mni; /* watches their addresses */
	unsigned long mni_seq;	/* mmu_interval_read_begin() at the pin */
	bool mni_on;		/* @mni inserted */
};

/*
 * An arm's profile file (output.c); immutable once set up, but for @dir.
 * Referenced by the arm that set it up and by each arm that carried it on
 * (PROFIL_F_KEEP_FILE), of which only the last writes it.
 */
struct profil_koutput {
	refcount_t ref;
	struct file *dir;		/* the directory, referenced; let go */
					/* by the write, after a grace period */
	const struct cred *cred;	/* the file is created as this, */
					/* if the process still has it */
	const void *seccomp;		/* its seccomp filter at arming */
	umode_t umask;			/* and with this umask */
	u32 rec_size;			/* the image's layout: */
	u64 head_size;			/*   struct profil_output */
	u64 nr_recs_max;
	u64 ctl_offset;
	u32 flags;			/* PROFIL_OUTPUT_* */
	bool child;			/* a forked descendant's */
	char *name;			/* this process's file */
	char *child_name;		/* template for forked children */
};

/*
 * One stretch of PCs [start, end) that counts in region @r: the region
 * index that the tick binary-searches (profil_index_build()).
 */
struct profil_interval {
	u64 start;
	u64 end;
	const struct profil_kregion *r;
};

/*
 * struct profil_kregion.flags beyond PROFIL_REGION_*: __u64 slots, a
 * pcsample array or a PROFIL_REGION_PCLOG log.
 */
#define PROFIL_KREGION_PCS	0x80000000U

struct profil_session;

struct profil_arm {
	struct profil_session *sess;	/* owner; outlives the arm's use */
	struct profil_counters *cnt;	/* what the tick counts into: */
					/* @sess's or @att's; set with it */
	struct profil_attachment *att;	/* an attachment's arm: its owner, */
					/* and @sess NULL (attach.c) */
	refcount_t ref;			/* see "Objects" above */
	struct rcu_head rcu;
	u32 flags;			/* PROFIL_F_* */
	u32 mode;			/* PROFIL_MODE_* */
	u64 period_ns;			/* task CPU time per sample */
	u64 id;				/* unique, never 0 (clock.c) */
	u32 rate;			/* samples per CPU second */
	const struct cred *cred;	/* its ->user is charged for the */
					/* pins, or NULL; referenced */
	unsigned long charged;		/* pages charged to it */
	struct perf_event **events;	/* one root event per thread attached */
	unsigned int nr_events;
	unsigned int max_events;	/* allocated slots in @events */
	u64 ran_ns;			/* an attachment's: CPU time under */
					/* its released events (tick.c), */
					/* guarded as @events is */

	/*
	 * The fault state (arm.c).  @fault_lock orders the notifiers'
	 * sequence updates against the checks that make the arm live and
	 * resume it.  @faulted is set by an invalidation once @live; while it
	 * is, the tick writes nothing.  @fault_gp is the RCU grace period
	 * that the first invalidation waits for.
	 */
	spinlock_t fault_lock;
	bool live;
	bool held;			/* a re-arm: the tick counts nothing */
					/* until the old arm's file is written */
	bool no_write;			/* its file is not written at the */
					/* stop: the next arm carries it on, */
					/* or a child's exec drops it; set, */
					/* and read, under the session lock */
	atomic_t faulted;
	unsigned long fault_gp;

	/* PROFIL_MODE_PCSAMPLE: the next slot of regions[0], and full. */
	atomic_long_t pc_next;
	atomic_t full;

	/* By profil_regions_pin(), by address; freed with the arm. */
	struct profil_span *spans;
	u32 nr_spans;

	/* PROFIL_MODE_HIST: sorted, disjoint, by profil_index_build(). */
	struct profil_interval *index;
	u32 nr_index;

	struct profil_kregion *overflow; /* PROFIL_REGION_OVERFLOW or NULL */
	struct profil_koutput *out;	/* the profile file, or NULL */
	struct profil_kregion *image;	/* with @out: its image, never */
					/* counted into */
	u32 nr_regions;			/* in @regions, overflow excluded */
	u32 nr_all;			/* in @regions, all included */
	struct profil_kregion regions[];  /* by offset, highest first, */
					  /* then the overflow region, */
					  /* then the image */
};

struct profil_region_iter {
	struct profil_kregion *next, *end;
};

static inline struct profil_region_iter
profil_region_iter(struct profil_arm *arm)
{
	return (struct profil_region_iter){ arm->regions,
					    arm->regions + arm->nr_all };
}

static inline struct profil_kregion *
profil_region_iter_next(struct profil_region_iter *it)
{
	return it->next < it->end ? it->next++ : NULL;
}

/* Every region of @arm, the overflow region last. */
#define profil_for_each_region(arm, r)					\
	for (struct profil_region_iter __it = profil_region_iter(arm);	\
	     ((r) = profil_region_iter_next(&__it));)

struct profil_span_iter {
	struct profil_span *next, *end;
};

static inline struct profil_span_iter profil_span_iter(struct profil_arm *arm)
{
	return (struct profil_span_iter){ arm->spans,
					  arm->spans + arm->nr_spans };
}

static inline struct profil_span *
profil_span_iter_next(struct profil_span_iter *it)
{
	return it->next < it->end ? it->next++ : NULL;
}

/* Every span of @arm (none before profil_regions_pin()). */
#define profil_for_each_span(arm, s)					\
	for (struct profil_span_iter __sit = profil_span_iter(arm);	\
	     ((s) = profil_span_iter_next(&__sit));)

/* The control block in @arm's pinned image (it has an output). */
static inline const struct profil_output_ctl *
profil_output_ctl(const struct profil_arm *arm)
{
	return arm->image->bins + arm->out->ctl_offset;
}

/* log2 of the size of a bin (or a stored PC) with these flags. */
static inline unsigned int profil_bin_shift(u32 flags)
{
	if (flags & PROFIL_KREGION_PCS)
		return 3;
	return (flags & PROFIL_REGION_U32) ? 2 : 1;
}

/*
 * What the tick counts, one set per CPU: the tick of one thread writes
 * only its own CPU's line, and STATS sums them (profil_session_stats()).
 * Bumped with this_cpu_add() from any context; never reset.
 */
enum profil_tick_counter {
	PROFIL_TC_TICKS,		/* timer interrupts taken */
	PROFIL_TC_SAMPLES,
	PROFIL_TC_OUT_OF_RANGE,
	PROFIL_TC_SATURATED,
	PROFIL_TC_MISSED,
	PROFIL_TC_PAUSED,
	PROFIL_TC_NR
};

struct profil_tick_counters {
	u64 v[PROFIL_TC_NR];
};

/* Counters of a session: per-CPU ones for the tick, atomics, no lock. */
struct profil_counters {
	struct profil_tick_counters __percpu *tick;
	atomic64_t armed;
	atomic64_t written;
	atomic_t writing;	/* files being written (write.c) */
};

struct profil_session {
	struct mmu_notifier mn;		/* our tie to the mm; holds mmgrab() */
	refcount_t ref;			/* the notifier's, its exit file's, */
					/* and one per write in flight */
	struct profil_counters cnt;	/* no lock: atomics */
	struct rhash_head node;		/* in profil_sessions, by @mm */
	struct mm_struct *mm;		/* the hash key: @mn.mm */
	/* Settles a fault (arm.c), on the profil-settle thread (session.c). */
	struct kthread_delayed_work settle_work;
	struct rcu_head rcu;

	/* @lock guards every field below it; @arm is also read under RCU. */
	struct mutex lock;
	struct profil_arm __rcu *arm;	/* running arm, or NULL when off */
	u32 stop_reason;		/* PROFIL_STOP_* of the last stop */
	u32 rate;			/* rate of the running or last arm */
	u64 period_ns;			/* period of the running or last arm */
	int write_error;		/* of the last profile file, or 0 */
	int inherit_error;		/* of a failed take-over, or 0 */
	unsigned long settle_since;	/* jiffies: pages pending since, or 0 */
	bool hashed;			/* in the hash, with a notifier and a */
					/* module reference of its own */
	struct pid *owner;		/* tgid of the process that armed or */
					/* took over last, referenced */
	/*
	 * The owner's exit ends the arm (session.c, the exit file): a file
	 * whose last fput() does, taken by xchg(); the node that lists the
	 * session in profil_owners under @exit_owner (referenced) until that
	 * file's release, once (@exit_done after); and a file another
	 * task's ->release started, which that exit waits for.
	 */
	struct file *exit_file;
	struct hlist_node by_owner;
	struct pid *exit_owner;
	struct profil_write *exit_write;
	bool exit_done;
};

/*
 * An attachment (attach.c).  Immutable once attached, but for
 * @stop_reason (set once, by cmpxchg) and the arm's events (@lock).
 */
struct profil_attachment {
	struct profil_counters cnt;	/* the tick's counts; no lock */
	struct profil_arm *arm;		/* regions into @bins, the events */
	struct mutex lock;		/* guards @arm's events and their time */
	u32 stop_reason;		/* PROFIL_STOP_*, NONE while it runs */
	struct kthread_work end_work;	/* releases the events once it ends */
	struct mm_struct *mm;		/* the target's, mmgrab(): the tick */
					/* counts only on it */
	struct pid *tgid;		/* the target, referenced */
	const struct cred *cred;	/* its credentials at attach */
	const struct cred **creds;	/* its threads' others then, sorted */
	unsigned int nr_creds;		/* (profil_attach_creds()), referenced */
	struct hlist_node node;		/* in the probes' table by @tgid, RCU */
	struct rcu_head rcu;
	struct page **pages;		/* the bins: @nr_pages zeroed pages */
	unsigned long nr_pages;
	void *bins;			/* vmap() of @pages */
	const struct cred *charged;	/* whose user @nr_pages are charged */
					/* to, referenced, or NULL */
	struct mm_struct *charged_mm;	/* the caller's: its pinned_vm */
};

/* Add @n to the tick's counter @i of @cnt, on this CPU. */
static __always_inline void profil_count_add(struct profil_counters *cnt,
					     enum profil_tick_counter i, u64 n)
{
	this_cpu_add(cnt->tick->v[i], n);
}

/* arm.c: arms and their fault state */
struct profil_arm *profil_arm_alloc(u32 nr_regions);
struct profil_arm *profil_arm_clone(const struct profil_arm *src,
				    struct file *dir, struct task_struct *t);
void profil_arm_put(struct profil_arm *arm);
void profil_arm_put_atomic(struct profil_arm *arm);
bool profil_arm_go_live(struct profil_arm *arm);
void profil_arm_invalidated(struct profil_arm *arm,
			    struct mmu_interval_notifier *mni,
			    unsigned long cur_seq, bool blockable);
void profil_arm_fault_in(struct profil_arm *arm);
/* What profil_arm_in_place_locked() found. */
enum profil_place {
	PROFIL_IN_PLACE,	/* every page back: counting resumed */
	PROFIL_PENDING,		/* not mapped yet, the mapping still there */
	PROFIL_GONE,		/* unmapped, read-only, or another page */
};

enum profil_place profil_arm_in_place_locked(struct profil_arm *arm);
void profil_session_kick(struct profil_session *sess);

/* session.c */
struct profil_arm *profil_arm_get_rcu(struct mm_struct *mm);
struct profil_session *profil_session_get(struct mm_struct *mm);
struct profil_session *profil_session_find(struct mm_struct *mm);
int profil_session_start(struct profil_session *sess, struct profil_arm *arm,
			 struct task_struct *t);
void profil_session_put(struct profil_session *sess);
void profil_session_queue_work(struct kthread_work *work);
void profil_session_off(struct profil_session *sess);
void profil_session_failed(struct profil_session *sess, u32 why, int err);
void profil_session_exit(struct task_struct *t);
void profil_session_exec(struct task_struct *t);
bool profil_session_settle_run(struct profil_session *sess);
void profil_session_stats(struct profil_session *sess,
			  struct profil_stats *st);
void profil_counters_sum(const struct profil_counters *cnt,
			 struct profil_stats *st);
int profil_sessions_init(void);
void profil_sessions_exit(void);

/* buffer.c: accounting, pinning, mapping and watching of regions */
int profil_user_charge(const struct cred *cred, unsigned long limit,
		       unsigned long nr, unsigned long credit);
void profil_user_uncharge(const struct cred *cred, unsigned long nr);
int profil_regions_pin(struct profil_arm *arm, unsigned long credit,
		       struct task_struct *t);
void profil_regions_unwatch(struct profil_arm *arm);
void profil_regions_unpin(struct profil_arm *arm);
void profil_regions_read_begin(struct profil_arm *arm);
bool profil_regions_unchanged(struct profil_arm *arm);

/* output.c: profile files */
int profil_output_setup(struct profil_arm *arm, struct profil_kregion *image,
			const void __user *uptr);
int profil_output_clone(struct profil_arm *arm, const struct profil_arm *src,
			struct file *dir, struct task_struct *t);
int profil_output_keep(struct profil_arm *arm, struct profil_arm *old);
bool profil_output_at_exec(const struct profil_arm *arm);
struct file *profil_output_dir_get_rcu(const struct profil_arm *arm);
void profil_output_free(struct profil_koutput *out);

/* write.c: writing the profile file of an ended arm */
struct profil_write;
struct profil_write *profil_write_submit(struct profil_session *sess,
					 struct profil_arm *arm);
void profil_write_wait(struct profil_write *w);
void profil_write_wait_later(struct profil_write *w);
void profil_write_put(struct profil_write *w);

/* clock.c: each profiled thread's CPU clock */
int profil_clock_init(void);
void profil_clock_exit(void);
int profil_clock_add(struct task_struct *t, gfp_t gfp);
void profil_clock_gone(struct task_struct *t);
void profil_clock_exec_rename(struct task_struct *t);
void profil_clock_exec_done(struct task_struct *t);
bool profil_clock_exec_cred(const struct cred *cred);
u64 profil_clock_charge(const struct profil_arm *arm,
			struct perf_event *event);
u64 profil_clock_charge_event(const struct profil_arm *arm,
			      struct perf_event *event);

/* tick.c: the sampling events */
int profil_index_build(struct profil_arm *arm);
int profil_events_start(struct profil_arm *arm, struct task_struct *t);
void profil_events_stop(struct profil_arm *arm);
u64 profil_events_ran(const struct profil_arm *arm);

/* fork.c: inheritance by forked children */
int profil_fork_init(void);
void profil_fork_exit(void);
void profil_fork_settle(void);

/* attach.c: attachments to other processes */
void profil_attach_init(void);
int profil_attach_start(struct file *file, struct profil_arm *arm,
			int mem_fd, pid_t pid, u64 *bins_size);
bool profil_attach_counts(struct profil_attachment *att);
void profil_attach_exec(struct task_struct *t);
void profil_attach_exit(struct task_struct *t);
void profil_attach_off(struct profil_attachment *att);
void profil_attach_stats(struct profil_attachment *att,
			 struct profil_stats *st, bool cpu);
void profil_attach_release(struct profil_attachment *att);
int profil_attach_mmap(struct profil_attachment *att,
		       struct vm_area_struct *vma);

/* main.c */
extern unsigned int profil_max_rate;
int profil_copy_in(void *dst, size_t ksize, size_t min_size,
		   const void __user *src);
int profil_user_buf_check(u64 addr, u64 size);

#endif /* _PROFIL_INTERNAL_H */
