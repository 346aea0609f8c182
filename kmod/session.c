// SPDX-License-Identifier: GPL-2.0
/*
 * Sessions: one per process address space.
 *
 * A session is found or created with mmu_notifier_get() on the caller's mm,
 * so it belongs to the process, not to an fd: the library may close
 * /dev/profil right after setup.  The session keeps one notifier reference
 * of its own ("kept") until the mm's ->release, which runs when the last
 * user of the mm goes (process exit, or exec replacing the mm): that is
 * where a running arm is stopped, its events released, its pins dropped and
 * its locked_vm charge returned.  Callers of profil_session_get() run on
 * that mm, so ->release cannot run under them and they need no reference.
 *
 * Who owns which event of a process's life, and why that one:
 *
 *   thread creation  perf event inheritance (attr.inherit + inherit_thread,
 *                    tick.c): the new thread carries an event from its first
 *                    instruction, and nothing of ours runs on the hot path.
 *   thread exit      perf detaches the exiting thread's event itself.
 *   fork             the sched_process_fork tracepoint (fork.c).  perf does
 *                    not inherit across fork (inherit_thread), as the child's
 *                    events would still point at the parent's pins; the
 *                    probe queues a task_work that pins the child's own copy
 *                    of the buffer in the child, in process context, before
 *                    the child's first user instruction.
 *   exec             perf's remove_on_exec drops the exec'ing thread's event,
 *                    and the old mm's ->release stops the arm.  A vfork child
 *                    never had an event, and its exec does not release the
 *                    mm its parent still runs on.
 *   exit             ->release of the mm, when its last user goes.
 *   fault            an mmu_interval_notifier on each region's pages
 *                    (buffer.c): the invalidation marks the arm faulted, so
 *                    the tick stops writing at once, and @fault_work, in
 *                    process context, looks the pages up again and resumes
 *                    or stops the arm.  Neither can be done under the
 *                    mmap_lock the invalidation holds.
 */
#include <linux/hashtable.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "profil_internal.h"

/* Sessions by mm, for the fork probe.  Writers: profil_hash_lock. */
static DEFINE_HASHTABLE(profil_hash, 6);
static DEFINE_SPINLOCK(profil_hash_lock);

struct profil_arm *profil_arm_alloc(u32 nr_regions)
{
	struct profil_arm *arm;

	arm = kvzalloc(struct_size(arm, regions, nr_regions),
		       GFP_KERNEL_ACCOUNT);
	if (!arm)
		return NULL;
	refcount_set(&arm->ref, 1);
	spin_lock_init(&arm->fault_lock);
	arm->nr_all = nr_regions;
	return arm;
}

/* A new, unpinned arm with @src's configuration (inheritance at fork). */
struct profil_arm *profil_arm_clone(const struct profil_arm *src)
{
	struct profil_arm *arm = profil_arm_alloc(src->nr_all);
	const struct profil_kregion *s;
	struct profil_kregion *r;
	u32 i;

	if (!arm)
		return NULL;
	arm->flags = src->flags;
	arm->rate = src->rate;
	arm->period_ns = src->period_ns;
	arm->nr_regions = src->nr_regions;
	for (i = 0; i < src->nr_all; i++) {
		s = &src->regions[i];
		r = &arm->regions[i];
		r->offset = s->offset;
		r->nbins = s->nbins;
		r->scale = s->scale;
		r->flags = s->flags;
		r->uaddr = s->uaddr;
	}
	if (src->overflow)
		arm->overflow = &arm->regions[src->overflow - src->regions];
	return arm;
}

void profil_arm_put(struct profil_arm *arm)
{
	if (refcount_dec_and_test(&arm->ref))
		kvfree_rcu(arm, rcu);
}

/**
 * profil_arm_fault - an invalidation hit a buffer of @arm
 * @arm: a live arm
 * @sync: the caller may sleep
 *
 * From then on the tick writes nothing; with @sync, a tick that already
 * passed its check has finished when this returns, so no write follows the
 * unmap or mprotect that got us here.  Whether the pages are really gone,
 * and the stop, need locks the invalidating thread may hold: that is left
 * to the session's work (or its next ioctl), profil_regions_recheck().
 */
void profil_arm_fault(struct profil_arm *arm, bool sync)
{
	bool first = !atomic_xchg(&arm->faulted, 1);

	if (sync)
		synchronize_rcu();
	if (first)
		schedule_work(&arm->sess->fault_work);
}

/**
 * profil_arm_get_rcu - the running arm of @mm's session, referenced
 * @mm: any mm
 *
 * Called under rcu_read_lock(), from any context.
 *
 * Return: the arm (drop with profil_arm_put()), or NULL.
 */
struct profil_arm *profil_arm_get_rcu(struct mm_struct *mm)
{
	struct profil_session *sess;
	struct profil_arm *arm;

	hash_for_each_possible_rcu(profil_hash, sess, node, (unsigned long)mm) {
		if (sess->mn.mm != mm)
			continue;
		arm = rcu_dereference(sess->arm);
		if (arm && refcount_inc_not_zero(&arm->ref))
			return arm;
		break;
	}
	return NULL;
}

static struct profil_arm *profil_locked_arm(struct profil_session *sess)
{
	return rcu_dereference_protected(sess->arm,
					 lockdep_is_held(&sess->lock));
}

static void profil_session_stop_locked(struct profil_session *sess, u32 why)
{
	struct profil_arm *arm = profil_locked_arm(sess);

	if (!arm)
		return;
	RCU_INIT_POINTER(sess->arm, NULL);
	sess->stop_reason = why;
	/* Events first: no tick may run once the pins are gone. */
	profil_events_stop(arm);
	profil_regions_unpin(arm);
	profil_arm_put(arm);
}

/* Settle a fault: counting resumes if the buffer is in place, else stop. */
static void profil_session_settle_locked(struct profil_session *sess)
{
	struct profil_arm *arm = profil_locked_arm(sess);

	if (arm && atomic_read(&arm->faulted) && !profil_regions_recheck(arm))
		profil_session_stop_locked(sess, PROFIL_STOP_FAULT);
}

/* Every locked operation first settles a fault. */
static void profil_session_lock(struct profil_session *sess)
{
	mutex_lock(&sess->lock);
	profil_session_settle_locked(sess);
}

static void profil_fault_work(struct work_struct *work)
{
	struct profil_session *sess = container_of(work, struct profil_session,
						   fault_work);

	profil_session_lock(sess);
	mutex_unlock(&sess->lock);
}

static struct mmu_notifier *profil_mn_alloc(struct mm_struct *mm)
{
	struct profil_session *sess;

	sess = kzalloc(sizeof(*sess), GFP_KERNEL_ACCOUNT);
	if (!sess)
		return ERR_PTR(-ENOMEM);
	mutex_init(&sess->lock);
	INIT_WORK(&sess->fault_work, profil_fault_work);
	return &sess->mn;
}

static void profil_mn_free(struct mmu_notifier *mn)
{
	struct profil_session *sess = container_of(mn, struct profil_session,
						   mn);

	mutex_destroy(&sess->lock);
	/* The fork probe may still be looking at it. */
	kfree_rcu(sess, rcu);
}

static void profil_mn_release(struct mmu_notifier *mn, struct mm_struct *mm)
{
	struct profil_session *sess = container_of(mn, struct profil_session,
						   mn);
	bool kept;

	mutex_lock(&sess->lock);
	profil_session_stop_locked(sess, PROFIL_STOP_NONE);
	kept = sess->kept;
	sess->kept = false;
	mutex_unlock(&sess->lock);
	/* No arm is left to fault, so nothing can queue the work again. */
	cancel_work_sync(&sess->fault_work);
	if (!kept)
		return;

	spin_lock(&profil_hash_lock);
	hash_del_rcu(&sess->node);
	spin_unlock(&profil_hash_lock);
	mmu_notifier_put(mn);
	/*
	 * Last: the put above queued ->free_notifier, and module exit's
	 * mmu_notifier_synchronize() waits for it, so our text stays.
	 */
	module_put(THIS_MODULE);
}

static const struct mmu_notifier_ops profil_mn_ops = {
	.release	= profil_mn_release,
	.alloc_notifier	= profil_mn_alloc,
	.free_notifier	= profil_mn_free,
};

/**
 * profil_session_get - the session of @mm, created on first use
 * @mm: current->mm
 *
 * Return: the session, valid while the caller runs on @mm, or ERR_PTR().
 */
struct profil_session *profil_session_get(struct mm_struct *mm)
{
	struct profil_session *sess;
	struct mmu_notifier *mn;
	bool extra;

	mn = mmu_notifier_get(&profil_mn_ops, mm);
	if (IS_ERR(mn))
		return ERR_CAST(mn);
	sess = container_of(mn, struct profil_session, mn);

	mutex_lock(&sess->lock);
	extra = sess->kept;
	if (!extra) {
		/* Both dropped in ->release. */
		sess->kept = true;
		__module_get(THIS_MODULE);
		spin_lock(&profil_hash_lock);
		hash_add_rcu(profil_hash, &sess->node, (unsigned long)mm);
		spin_unlock(&profil_hash_lock);
	}
	mutex_unlock(&sess->lock);
	if (extra)
		mmu_notifier_put(mn);	/* the kept reference remains */
	return sess;
}

/**
 * profil_session_arm - make @arm the running arm of @sess
 * @sess: the caller's session
 * @arm: a fully validated arm, regions not yet pinned
 * @inherited: @arm comes from the parent at fork, not from a setup call
 *
 * The new buffer is pinned and its events started before the old arm
 * stops, so any failure leaves a running session as it was.
 *
 * Return: 0 (@arm now belongs to @sess) or -errno (the caller puts @arm).
 */
int profil_session_arm(struct profil_session *sess, struct profil_arm *arm,
		       bool inherited)
{
	int ret;

	arm->sess = sess;
	ret = profil_regions_pin(arm);
	if (ret)
		return ret;

	profil_session_lock(sess);
	/*
	 * The new events start before the old ones stop: until this call
	 * returns the old buffer may still count, and a failure to start
	 * leaves the old arm running.
	 */
	ret = profil_events_start(arm);
	if (ret) {
		mutex_unlock(&sess->lock);
		profil_regions_unpin(arm);
		return ret;
	}
	profil_session_stop_locked(sess, PROFIL_STOP_REPLACED);
	rcu_assign_pointer(sess->arm, arm);
	sess->rate = arm->rate;
	sess->period_ns = arm->period_ns;
	sess->stop_reason = PROFIL_STOP_NONE;
	if (!inherited)
		atomic64_inc(&sess->cnt.armed);
	/* A fault since the pin found no arm to settle yet. */
	profil_session_settle_locked(sess);
	mutex_unlock(&sess->lock);
	return 0;
}

void profil_session_off(struct profil_session *sess)
{
	profil_session_lock(sess);
	profil_session_stop_locked(sess, PROFIL_STOP_USER);
	mutex_unlock(&sess->lock);
}

/* Record why a session that never started is off (a failed inheritance). */
void profil_session_failed(struct profil_session *sess, u32 why)
{
	profil_session_lock(sess);
	if (!profil_locked_arm(sess))
		sess->stop_reason = why;
	mutex_unlock(&sess->lock);
}

void profil_session_stats(struct profil_session *sess, struct profil_stats *st)
{
	profil_session_lock(sess);
	st->state = profil_locked_arm(sess) ? PROFIL_STATE_ON :
					      PROFIL_STATE_OFF;
	st->stop_reason = sess->stop_reason;
	st->rate = sess->rate;
	st->period_ns = sess->period_ns;
	mutex_unlock(&sess->lock);
	st->samples = atomic64_read(&sess->cnt.samples);
	st->out_of_range = atomic64_read(&sess->cnt.out_of_range);
	st->saturated = atomic64_read(&sess->cnt.saturated);
	st->missed = atomic64_read(&sess->cnt.missed);
	st->armed = atomic64_read(&sess->cnt.armed);
}

/* Module exit: wait for every queued ->free_notifier. */
void profil_sessions_drain(void)
{
	mmu_notifier_synchronize();
}
