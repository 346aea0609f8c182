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
 * Event ownership in this module:
 *   thread creation    perf event inheritance (tick.c)
 *   exec               perf remove_on_exec, then ->release of the old mm
 *   process exit       ->release of the mm
 *   thread exit        perf (the thread's event is detached by perf)
 */
#include <linux/module.h>
#include <linux/slab.h>

#include "profil_internal.h"

static struct mmu_notifier *profil_mn_alloc(struct mm_struct *mm)
{
	struct profil_session *sess;

	sess = kzalloc(sizeof(*sess), GFP_KERNEL_ACCOUNT);
	if (!sess)
		return ERR_PTR(-ENOMEM);
	mutex_init(&sess->lock);
	/* Dropped in ->release; module exit waits for ->free_notifier. */
	__module_get(THIS_MODULE);
	return &sess->mn;
}

static void profil_mn_free(struct mmu_notifier *mn)
{
	struct profil_session *sess = container_of(mn, struct profil_session,
						   mn);

	mutex_destroy(&sess->lock);
	kfree(sess);
}

static void profil_session_stop_locked(struct profil_session *sess, u32 why)
{
	struct profil_arm *arm = sess->arm;

	lockdep_assert_held(&sess->lock);
	if (!arm)
		return;
	sess->arm = NULL;
	sess->stop_reason = why;
	/* Events first: no tick may run once the pins are gone. */
	profil_events_stop(arm);
	profil_regions_unpin(arm);
	kvfree(arm);
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

	if (kept)
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
	sess->kept = true;
	mutex_unlock(&sess->lock);
	if (extra)
		mmu_notifier_put(mn);	/* the kept reference remains */
	return sess;
}

/**
 * profil_session_arm - make @arm the running arm of @sess
 * @sess: the caller's session
 * @arm: a fully validated arm, regions not yet pinned
 *
 * The new buffer is pinned and its events started before the old arm
 * stops, so any failure leaves a running session as it was.
 *
 * Return: 0 (@arm now belongs to @sess) or -errno (the caller frees @arm).
 */
int profil_session_arm(struct profil_session *sess, struct profil_arm *arm)
{
	int ret;

	arm->sess = sess;
	ret = profil_regions_pin(arm);
	if (ret)
		return ret;

	mutex_lock(&sess->lock);
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
	sess->arm = arm;
	sess->rate = arm->rate;
	sess->period_ns = arm->period_ns;
	sess->stop_reason = PROFIL_STOP_NONE;
	atomic64_inc(&sess->cnt.armed);
	mutex_unlock(&sess->lock);
	return 0;
}

void profil_session_off(struct profil_session *sess)
{
	mutex_lock(&sess->lock);
	profil_session_stop_locked(sess, PROFIL_STOP_USER);
	mutex_unlock(&sess->lock);
}

void profil_session_stats(struct profil_session *sess, struct profil_stats *st)
{
	mutex_lock(&sess->lock);
	st->state = sess->arm ? PROFIL_STATE_ON : PROFIL_STATE_OFF;
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
