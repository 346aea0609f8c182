// SPDX-License-Identifier: GPL-2.0
/*
 * Sessions: one per process address space.
 *
 * A session is found or created with mmu_notifier_get() on the caller's mm,
 * when the process first arms, so it belongs to the process, not to an fd:
 * the library may close /dev/profil right after setup.  The session is then
 * "hashed": it sits in profil_sessions, keyed by mm, and keeps a notifier
 * and a module reference of its own until the mm's ->release, which runs
 * when the last user of the mm goes (process exit, or exec replacing the
 * mm): that is where a running arm is stopped, its events released, its
 * pins dropped and its charge returned.  STATS and OFF only look a session
 * up: a process that never armed costs nothing, and every fork on the
 * system costs one test while no session exists.  Callers run on the mm, so
 * ->release cannot run under them and they need no reference.
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
 *                    probe hands the child to the profil-settle thread,
 *                    which pins the child's own copy of the buffer on the
 *                    child's mm and starts its events; the child's CPU time
 *                    until then is counted as missed.
 *   exec             perf's remove_on_exec drops the exec'ing thread's event,
 *                    and the old mm's ->release stops the arm.  A vfork child
 *                    never had an event, and its exec does not release the
 *                    mm its parent still runs on.
 *   exit             ->release of the mm, when its last user goes; and,
 *                    should another task hold the mm then (a reader of
 *                    /proc/PID/, process_vm_readv(), our own settle or
 *                    take-over), the exit of the process's last thread,
 *                    which the sched_process_exit probe makes drop the
 *                    session's exit file: its release, in that thread's
 *                    task work, stops the arm, or waits for the file the
 *                    other task's ->release started, before the parent is
 *                    told (profil_session_exit()).
 *   fault            an mmu_interval_notifier on each region's pages
 *                    (buffer.c, arm.c): the invalidation marks the arm
 *                    faulted, so the tick stops writing at once, and
 *                    @settle_work, borrowing the mm, looks the pages up
 *                    again and resumes or stops the arm.  Neither can be
 *                    done under the mmap_lock the invalidation holds.
 *
 * The settle work runs on a kernel thread of ours, "profil-settle", not on
 * a system workqueue: its allocations (page faults on the buffer) are then
 * made by one task that fault injection can single out (make-it-fail,
 * fail-nth).  One thread serves every session, one settle at a time; a
 * settle that stops an arm with a profile file hands it to its writer
 * thread and goes on (write.c): no settle waits for a file.
 */
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/hashtable.h>
#include <linux/kthread.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/rhashtable.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "compat.h"
#include "profil_internal.h"

/*
 * How long a fault may wait for pages that are on their way back (swap-in,
 * writeback) before it ends the session, and how often it looks.
 */
#define PROFIL_SETTLE_PATIENCE	(2 * HZ)
#define PROFIL_SETTLE_DELAY	(HZ / 50 ?: 1)

/* The thread every session's settle work runs on. */
static struct kthread_worker *profil_settler;

/*
 * Sessions whose owner's exit ends their arm, by owner (@exit_owner, the
 * tgid's struct pid): the exit and exec probes' table.  Changed under the
 * spinlock, which is taken under a session's lock; read under RCU.
 */
static DEFINE_HASHTABLE(profil_owners, 6);
static DEFINE_SPINLOCK(profil_owners_lock);
static atomic_t profil_nr_owned = ATOMIC_INIT(0);

/* Hashed sessions by mm; rhashtable's own locks, lookups under RCU. */
static struct rhashtable profil_sessions;
static atomic_t profil_nr_hashed;

static const struct rhashtable_params profil_sessions_params = {
	.key_len		= sizeof(struct mm_struct *),
	.key_offset		= offsetof(struct profil_session, mn.mm),
	.head_offset		= offsetof(struct profil_session, node),
	.automatic_shrinking	= true,
};

/**
 * profil_arm_get_rcu - the running arm of @mm's session, referenced
 * @mm: any mm
 *
 * Called under rcu_read_lock(), from any context.  With no session on the
 * system, or none on an mm without notifiers, it is one test.
 *
 * Return: the arm (drop with profil_arm_put()), or NULL.
 */
struct profil_arm *profil_arm_get_rcu(struct mm_struct *mm)
{
	struct profil_session *sess;
	struct profil_arm *arm;

	if (!atomic_read(&profil_nr_hashed) || !mm_has_notifiers(mm))
		return NULL;
	sess = rhashtable_lookup(&profil_sessions, &mm, profil_sessions_params);
	if (!sess)
		return NULL;
	arm = rcu_dereference(sess->arm);
	if (arm && refcount_inc_not_zero(&arm->ref))
		return arm;
	return NULL;
}

static struct profil_arm *profil_locked_arm(struct profil_session *sess)
{
	return rcu_dereference_protected(sess->arm,
					 lockdep_is_held(&sess->lock));
}

/*
 * Stop the running arm.  One with a profile file goes, pinned, to its
 * write; the caller drops the lock, then waits for it or puts it.
 * Return: that write, or NULL.
 */
static struct profil_write *
profil_session_stop_locked(struct profil_session *sess, u32 why)
{
	struct profil_arm *arm = profil_locked_arm(sess);

	lockdep_assert_held(&sess->lock);
	if (!arm)
		return NULL;
	RCU_INIT_POINTER(sess->arm, NULL);
	sess->settle_since = 0;
	/* Events first: no tick may run once the pins are gone. */
	profil_events_stop(arm);
	/*
	 * A pcsample array that a tick found full ended the session then,
	 * whether or not the settle thread has run since: OFF says so too.
	 */
	if (why == PROFIL_STOP_USER && atomic_read(&arm->full))
		why = PROFIL_STOP_FULL;
	sess->stop_reason = why;
	profil_regions_unwatch(arm);
	if (arm->out && !arm->no_write)
		return profil_write_submit(sess, arm);
	profil_regions_unpin(arm);
	profil_arm_put(arm);
	return NULL;
}

/* The running arm if it is faulted, referenced, or NULL. */
static struct profil_arm *profil_session_faulted(struct profil_session *sess)
{
	struct profil_arm *arm;

	mutex_lock(&sess->lock);
	arm = profil_locked_arm(sess);
	if (arm && atomic_read(&arm->faulted))
		refcount_inc(&arm->ref);
	else
		arm = NULL;
	mutex_unlock(&sess->lock);
	return arm;
}

/* A pcsample arm whose array filled up stops here (the tick cannot). */
static void profil_session_stop_full(struct profil_session *sess)
{
	struct profil_write *w = NULL;
	struct profil_arm *arm;

	mutex_lock(&sess->lock);
	arm = profil_locked_arm(sess);
	if (arm && atomic_read(&arm->full))
		w = profil_session_stop_locked(sess, PROFIL_STOP_FULL);
	mutex_unlock(&sess->lock);
	profil_write_put(w);	/* (a pcsample arm has no file) */
}

/* Queue @work on the profil-settle thread, from any context (fork.c). */
void profil_session_queue_work(struct kthread_work *work)
{
	kthread_queue_work(profil_settler, work);
}

/*
 * Run the settle work now: from any context, the tick's hard irq too (the
 * work's timer is TIMER_IRQSAFE, so cancelling it there is allowed).
 */
void profil_session_kick(struct profil_session *sess)
{
	kthread_mod_delayed_work(profil_settler, &sess->settle_work, 0);
}

/*
 * Decide a faulted @arm: resume, stop, or look again later.  A page that is
 * not mapped while a writable mapping is still there (swap-in or writeback
 * in flight, its fault-in only started) gets PROFIL_SETTLE_PATIENCE from
 * the first such look; STATS flushing the work in between does not shorten
 * it.  Return: true to look again later.
 */
static bool profil_session_decide_locked(struct profil_session *sess,
					 struct profil_arm *arm,
					 struct profil_write **w)
{
	enum profil_place place = profil_arm_in_place_locked(arm);

	lockdep_assert_held(&sess->lock);
	if (place == PROFIL_PENDING) {
		if (!sess->settle_since)
			sess->settle_since = jiffies ?: 1;
		if (time_before(jiffies, sess->settle_since +
				PROFIL_SETTLE_PATIENCE))
			return true;
	}
	sess->settle_since = 0;
	if (place != PROFIL_IN_PLACE)
		*w = profil_session_stop_locked(sess, PROFIL_STOP_FAULT);
	return false;
}

/**
 * profil_session_settle_run - settle a fault or a full pcsample array now
 * @sess: the session
 *
 * On the profil-settle thread: from @sess's settle work, or from a child's
 * take-over that needs its parent settled first (fork.c).  Borrows the mm
 * (a worker has none) to fault the pages in, with no lock held, then
 * checks them under the session lock (arm.c).  A file of an arm it stops
 * is written on, not waited for.
 *
 * Return: true if the pages are still on their way: look again later.
 */
bool profil_session_settle_run(struct profil_session *sess)
{
	struct mm_struct *mm = sess->mn.mm;
	struct profil_write *w = NULL;
	struct profil_arm *arm;
	bool again = false;

	/* An mm on its way out: its ->release stops the arm. */
	if (!mmget_not_zero(mm))
		return false;
	profil_session_stop_full(sess);
	kthread_use_mm(mm);
	arm = profil_session_faulted(sess);
	if (arm) {
		profil_arm_fault_in(arm);
		mutex_lock(&sess->lock);
		if (arm == profil_locked_arm(sess) &&
		    atomic_read(&arm->faulted))
			again = profil_session_decide_locked(sess, arm, &w);
		mutex_unlock(&sess->lock);
		profil_write_put(w);
		profil_arm_put(arm);
	}
	kthread_unuse_mm(mm);
	/* Maybe the last user: the teardown must not run in this work. */
	mmput_async(mm);
	return again;
}

/*
 * The session's settle_work, queued by the first invalidation, or by the
 * tick that found the array full, or by itself to look again.
 */
static void profil_session_settle(struct kthread_work *work)
{
	struct profil_session *sess = container_of(work, struct profil_session,
						   settle_work.work);

	if (profil_session_settle_run(sess))
		kthread_queue_delayed_work(profil_settler, &sess->settle_work,
					   PROFIL_SETTLE_DELAY);
}

static struct mmu_notifier *profil_mn_alloc(struct mm_struct *mm)
{
	struct profil_session *sess;

	sess = kzalloc(sizeof(*sess), GFP_KERNEL_ACCOUNT);
	if (!sess)
		return ERR_PTR(-ENOMEM);
	sess->cnt.tick = alloc_percpu_gfp(struct profil_tick_counters,
					  GFP_KERNEL_ACCOUNT);
	if (!sess->cnt.tick) {
		kfree(sess);
		return ERR_PTR(-ENOMEM);
	}
	refcount_set(&sess->ref, 1);
	mutex_init(&sess->lock);
	kthread_init_delayed_work(&sess->settle_work, profil_session_settle);
	return &sess->mn;
}

static void profil_session_free_rcu(struct rcu_head *rcu)
{
	struct profil_session *sess = container_of(rcu, struct profil_session,
						   rcu);

	free_percpu(sess->cnt.tick);
	kfree(sess);
}

/* Drop a reference: the notifier's (->free_notifier) or a write's. */
void profil_session_put(struct profil_session *sess)
{
	if (!refcount_dec_and_test(&sess->ref))
		return;
	put_pid(sess->owner);
	mutex_destroy(&sess->lock);
	/* A lookup under RCU may still be looking at it. */
	call_rcu(&sess->rcu, profil_session_free_rcu);
}

static void profil_mn_free(struct mmu_notifier *mn)
{
	profil_session_put(container_of(mn, struct profil_session, mn));
}

/*
 * Whether @sess's process has gone on to another mm, alive: an exec (the
 * mm is released by the process itself, or later by whoever held it).
 */
static bool profil_session_execd(struct profil_session *sess)
{
	struct task_struct *t;
	bool execd;

	rcu_read_lock();
	t = pid_task(sess->owner, PIDTYPE_TGID);
	execd = t && !(t->flags & PF_EXITING) &&
		READ_ONCE(t->mm) != sess->mn.mm;
	rcu_read_unlock();
	return execd;
}

/* Off the owners' table, if on it, for good. */
static void profil_session_unlist_locked(struct profil_session *sess)
{
	lockdep_assert_held(&sess->lock);
	sess->exit_done = true;
	if (hlist_unhashed(&sess->by_owner))
		return;
	spin_lock(&profil_owners_lock);
	hash_del_rcu(&sess->by_owner);
	spin_unlock(&profil_owners_lock);
	atomic_dec(&profil_nr_owned);
	put_pid(sess->exit_owner);
	sess->exit_owner = NULL;
}

/* Drop @sess's exit file, if it has one still: its release follows. */
static void profil_session_drop_exit_file(struct profil_session *sess)
{
	struct file *f = xchg(&sess->exit_file, NULL);

	if (f)
		fput(f);
}

/*
 * The last reference of a session's exit file goes: from its owner's exit
 * (the probe's fput(), run as task work in exit_task_work(), where the
 * thread holds nothing, after it let go of its mm and before its parent
 * is told), or from an exec, a failed take-over or the owner's own
 * ->release, which need nothing of it.  The owner's exit stops the arm,
 * as ->release would have had the mm's last user been the process, or
 * finds the file another task's ->release started, and waits for it.
 */
static int profil_exit_file_release(struct inode *inode, struct file *file)
{
	struct profil_session *sess = file->private_data;
	struct profil_write *w = NULL, *other;
	bool exiting;

	mutex_lock(&sess->lock);
	exiting = (current->flags & (PF_EXITING | PF_KTHREAD)) == PF_EXITING &&
		  task_tgid(current) == sess->exit_owner;
	profil_session_unlist_locked(sess);
	if (exiting)
		w = profil_session_stop_locked(sess, PROFIL_STOP_NONE);
	other = sess->exit_write;
	sess->exit_write = NULL;
	mutex_unlock(&sess->lock);
	if (exiting) {
		profil_write_wait(w);
		profil_write_wait(other);
	} else {
		profil_write_put(other);
	}
	profil_session_put(sess);
	return 0;
}

static const struct file_operations profil_exit_file_fops = {
	.owner		= THIS_MODULE,
	.release	= profil_exit_file_release,
};

/*
 * Before @t's process arms @sess (a setup, or a take-over of the child
 * @t): an exit file, listed under it, once.  The listing ends with that
 * file's release and is never made again: the process that owns it
 * exits or execs.  Another process on the mm (CLONE_VM, not a thread)
 * that arms ends it too, and has none: with two processes on one mm,
 * the mm's ->release alone ends the arm, as before the exit file.  A
 * take-over of a child that is dying already fails (-ESRCH): its exit
 * may have looked in the table before the session was there.
 * Return: 0 or -errno.
 */
static int profil_session_guard_locked(struct profil_session *sess,
				       struct task_struct *t)
{
	struct pid *tgid = task_tgid(t);
	struct file *f;

	lockdep_assert_held(&sess->lock);
	if (sess->exit_done || sess->exit_owner == tgid)
		return 0;
	if (sess->exit_owner || (sess->owner && sess->owner != tgid)) {
		profil_session_unlist_locked(sess);
		profil_session_drop_exit_file(sess);
		return 0;
	}
	refcount_inc(&sess->ref);
	f = anon_inode_getfile("[profil-exit]", &profil_exit_file_fops, sess,
			       O_RDONLY);
	if (IS_ERR(f)) {
		refcount_dec(&sess->ref);	/* the caller's stays */
		return PTR_ERR(f);
	}
	sess->exit_file = f;
	sess->exit_owner = get_pid(tgid);
	spin_lock(&profil_owners_lock);
	hash_add_rcu(profil_owners, &sess->by_owner, (unsigned long)tgid);
	spin_unlock(&profil_owners_lock);
	atomic_inc(&profil_nr_owned);
	if (t == current)
		return 0;
	/* Pairs with the full barrier of do_exit()'s decrement of live. */
	smp_mb();
	if (atomic_read(&t->signal->live))
		return 0;
	profil_session_unlist_locked(sess);
	/* Or the child's exit has it: nothing to stop. */
	profil_session_drop_exit_file(sess);
	return -ESRCH;
}

/*
 * From the exec and exit probes, in @t, which may not sleep: the exit
 * files of the sessions @t's process owns are dropped, so their release
 * is @t's task work.  A session on the list stays valid under RCU
 * (profil_session_put()); its file holds a reference.
 */
static void profil_session_owner_drop(struct task_struct *t)
{
	struct pid *tgid = task_tgid(t);
	struct profil_session *sess;

	if (!atomic_read(&profil_nr_owned))
		return;
	rcu_read_lock();
	hash_for_each_possible_rcu(profil_owners, sess, by_owner,
				   (unsigned long)tgid)
		if (READ_ONCE(sess->exit_owner) == tgid)
			profil_session_drop_exit_file(sess);
	rcu_read_unlock();
}

/**
 * profil_session_exit - sched_process_exit, in the exiting thread @t
 * @t: current
 *
 * The thread that finds its group's live count at zero (it, or one after
 * it) makes its exit end the arms of the sessions its process owns and
 * wait for their files, even while another task holds the mm, whose
 * ->release would come too late (after the parent was told) and there.
 */
void profil_session_exit(struct task_struct *t)
{
	if (!atomic_read(&t->signal->live))
		profil_session_owner_drop(t);
}

/**
 * profil_session_exec - sched_process_exec, in @t, on its new mm
 * @t: current
 *
 * The sessions its process owned are the old mm's: that mm's ->release
 * ends them (write.c says what is written then), not the new image's exit.
 */
void profil_session_exec(struct task_struct *t)
{
	profil_session_owner_drop(t);
}

static void profil_mn_release(struct mmu_notifier *mn, struct mm_struct *mm)
{
	struct profil_session *sess = container_of(mn, struct profil_session,
						   mn);
	struct profil_arm *arm;
	struct profil_write *w;
	bool hashed, own;

	mutex_lock(&sess->lock);
	arm = profil_locked_arm(sess);
	if (arm && !profil_output_at_exec(arm) && profil_session_execd(sess))
		arm->no_write = true;
	w = profil_session_stop_locked(sess, PROFIL_STOP_NONE);
	hashed = sess->hashed;
	sess->hashed = false;
	own = task_tgid(current) == sess->owner;
	/*
	 * Another task let go of the mm last: the owner's exit, still to
	 * drop the exit file or to run its release, waits for the file.
	 */
	if (!own && w && !hlist_unhashed(&sess->by_owner)) {
		sess->exit_write = w;
		w = NULL;
	}
	if (own || hlist_unhashed(&sess->by_owner))
		profil_session_drop_exit_file(sess);
	mutex_unlock(&sess->lock);
	/*
	 * Inside the notifiers' SRCU section, at exec under exec_update_lock:
	 * the process (not another task that let go of the mm last) waits
	 * for its file later, holding nothing (write.c).
	 */
	if (own)
		profil_write_wait_later(w);
	else
		profil_write_put(w);
	/* No arm is left to fault, so nothing can queue the work again. */
	kthread_cancel_delayed_work_sync(&sess->settle_work);
	if (!hashed)
		return;

	rhashtable_remove_fast(&profil_sessions, &sess->node,
			       profil_sessions_params);
	atomic_dec(&profil_nr_hashed);
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

/* Put @sess in the hash, with its own notifier and module reference. */
static int profil_session_hash_locked(struct profil_session *sess)
{
	int ret;

	lockdep_assert_held(&sess->lock);
	ret = rhashtable_insert_fast(&profil_sessions, &sess->node,
				     profil_sessions_params);
	if (ret)
		return ret;
	atomic_inc(&profil_nr_hashed);
	__module_get(THIS_MODULE);
	sess->hashed = true;
	return 0;
}

/**
 * profil_session_get - the session of @mm, created and hashed on first use
 * @mm: current->mm
 *
 * Return: the session, valid while the caller runs on @mm, or ERR_PTR().
 */
struct profil_session *profil_session_get(struct mm_struct *mm)
{
	struct profil_session *sess;
	struct mmu_notifier *mn;
	bool had_ref;
	int ret = 0;

	mn = mmu_notifier_get(&profil_mn_ops, mm);
	if (IS_ERR(mn))
		return ERR_CAST(mn);
	sess = container_of(mn, struct profil_session, mn);

	mutex_lock(&sess->lock);
	had_ref = sess->hashed;
	if (!had_ref)
		ret = profil_session_hash_locked(sess);
	mutex_unlock(&sess->lock);
	/* The hashed session keeps the reference mmu_notifier_get() took. */
	if (had_ref || ret)
		mmu_notifier_put(mn);
	return ret ? ERR_PTR(ret) : sess;
}

/**
 * profil_session_find - the session of @mm, if it ever armed
 * @mm: current->mm
 *
 * Return: the session, valid while the caller runs on @mm, or NULL.
 */
struct profil_session *profil_session_find(struct mm_struct *mm)
{
	struct profil_session *sess;

	rcu_read_lock();
	sess = rhashtable_lookup(&profil_sessions, &mm, profil_sessions_params);
	rcu_read_unlock();
	return sess;
}

/* Pages the running arm charged to @t's user, for a re-arm. */
static unsigned long profil_session_credit_locked(struct profil_session *sess,
						  struct task_struct *t)
{
	struct profil_arm *old = profil_locked_arm(sess);
	bool same;

	lockdep_assert_held(&sess->lock);
	if (!old || !old->cred)
		return 0;
	rcu_read_lock();
	same = old->cred->user == __task_cred(t)->user;
	rcu_read_unlock();
	return same ? old->charged : 0;
}

/* @t's process owns the session from now on (write.c). */
static void profil_session_own_locked(struct profil_session *sess,
				      struct task_struct *t)
{
	struct pid *tgid = task_tgid(t);

	lockdep_assert_held(&sess->lock);
	if (sess->owner == tgid)
		return;
	put_pid(sess->owner);
	sess->owner = get_pid(tgid);
}

/**
 * profil_session_start - make @arm the running arm of @sess
 * @sess: the session of @t's mm
 * @arm: a fully validated arm, regions not yet pinned
 * @t: current (a setup call), or a forked child that inherits @arm from
 *	its parent, referenced by the caller, a kernel thread using its mm
 *
 * The new buffer is pinned and its events started before the old arm
 * stops, so any failure leaves a running session as it was; the charge is
 * net of what the old arm returns.  With PROFIL_F_KEEP_FILE, @arm carries
 * on the old arm's profile file, which the stop then does not write.
 *
 * Return: 0 (@arm now belongs to @sess) or -errno (the caller puts @arm).
 */
int profil_session_start(struct profil_session *sess, struct profil_arm *arm,
			 struct task_struct *t)
{
	struct profil_write *w = NULL;
	struct profil_arm *old;
	bool held, keep;
	u64 ran;
	int ret;

	arm->sess = sess;
	arm->cnt = &sess->cnt;
	mutex_lock(&sess->lock);
	old = profil_locked_arm(sess);
	keep = arm->flags & PROFIL_F_KEEP_FILE;
	if (keep) {
		ret = profil_output_keep(arm, old);
		if (ret)
			goto out;
	}
	/*
	 * The old arm's file is written, or its events stopped when the new
	 * arm keeps it, before the new arm counts: no sample in both.
	 */
	held = old && old->out;
	arm->held = held;
	if (arm->out) {
		ret = profil_session_guard_locked(sess, t);
		if (ret)
			goto out;
	}
	ret = profil_regions_pin(arm, profil_session_credit_locked(sess, t), t);
	if (ret)
		goto out;
	/*
	 * A child taken over (fork.c) runs on while its copy is pinned: the
	 * CPU time it ran until its events start, the pinning's included,
	 * is missed (as of its clock's last update, a tick at most behind).
	 */
	ran = t == current ? 0 : READ_ONCE(t->se.sum_exec_runtime);
	ret = profil_events_start(arm, t);
	if (ret) {
		profil_regions_unpin(arm);
		goto out;
	}
	profil_count_add(&sess->cnt, PROFIL_TC_MISSED,
			 div64_u64(ran, arm->period_ns));
	/*
	 * Replaced: the session runs on, so its stop_reason stays NONE and
	 * PROFIL_STOP_REPLACED is never reported (see the uapi header).
	 */
	if (keep)
		old->no_write = true;
	w = profil_session_stop_locked(sess, PROFIL_STOP_NONE);
	rcu_assign_pointer(sess->arm, arm);
	profil_session_own_locked(sess, t);
	sess->rate = arm->rate;
	sess->period_ns = arm->period_ns;
	sess->stop_reason = PROFIL_STOP_NONE;
	sess->inherit_error = 0;
	if (t == current)
		atomic64_inc(&sess->cnt.armed);
	/* A fault since the arm went live found it not running yet. */
	if (atomic_read(&arm->faulted) || atomic_read(&arm->full))
		profil_session_kick(sess);
	if (held)
		refcount_inc(&arm->ref);
out:
	mutex_unlock(&sess->lock);
	if (!ret && held) {
		profil_write_wait(w);
		WRITE_ONCE(arm->held, false);
		profil_arm_put(arm);
	}
	return ret;
}

void profil_session_off(struct profil_session *sess)
{
	struct profil_write *w;

	mutex_lock(&sess->lock);
	w = profil_session_stop_locked(sess, PROFIL_STOP_USER);
	mutex_unlock(&sess->lock);
	profil_write_wait(w);
}

/*
 * Record why a session that never started is off (a failed inheritance),
 * and the error that stopped it.
 */
void profil_session_failed(struct profil_session *sess, u32 why, int err)
{
	mutex_lock(&sess->lock);
	if (!profil_locked_arm(sess)) {
		sess->stop_reason = why;
		sess->inherit_error = err;
	}
	mutex_unlock(&sess->lock);
}

/* Has the running arm a fault or a full array still to settle? */
static bool profil_session_unsettled(struct profil_session *sess)
{
	struct profil_arm *arm;
	bool ret;

	mutex_lock(&sess->lock);
	arm = profil_locked_arm(sess);
	ret = arm && (atomic_read(&arm->faulted) || atomic_read(&arm->full));
	mutex_unlock(&sess->lock);
	return ret;
}

/*
 * Run the settle work now if there is something to settle, and wait for
 * it.  Not kthread_flush_work(): on a work whose timer is pending (a settle
 * that looks again later) that would wait for ever.  Flushing the thread
 * waits for the settles queued before ours too.
 */
static void profil_session_settle_now(struct profil_session *sess)
{
	if (!profil_session_unsettled(sess))
		return;
	kthread_mod_delayed_work(profil_settler, &sess->settle_work, 0);
	kthread_flush_worker(profil_settler);
}

/*
 * The tick's counters, summed over the CPUs.  Each CPU's only grows, so
 * a sum read while ticks run is no less than one read before it; once the
 * session (or attachment) is off, its events released, it is exact.
 */
void profil_counters_sum(const struct profil_counters *cnt,
			 struct profil_stats *st)
{
	const struct profil_tick_counters *c;
	int cpu;

	for_each_possible_cpu(cpu) {
		c = per_cpu_ptr(cnt->tick, cpu);
		st->ticks += READ_ONCE(c->v[PROFIL_TC_TICKS]);
		st->samples += READ_ONCE(c->v[PROFIL_TC_SAMPLES]);
		st->out_of_range += READ_ONCE(c->v[PROFIL_TC_OUT_OF_RANGE]);
		st->saturated += READ_ONCE(c->v[PROFIL_TC_SATURATED]);
		st->missed += READ_ONCE(c->v[PROFIL_TC_MISSED]);
		st->paused += READ_ONCE(c->v[PROFIL_TC_PAUSED]);
	}
}

/*
 * A fault noted before the call is settled first (by the work: the lock
 * is only held to copy), so that STATS after a munmap() says how it ended.
 */
void profil_session_stats(struct profil_session *sess, struct profil_stats *st)
{
	profil_session_settle_now(sess);
	mutex_lock(&sess->lock);
	st->state = profil_locked_arm(sess) ? PROFIL_STATE_ON :
					      PROFIL_STATE_OFF;
	st->stop_reason = sess->stop_reason;
	st->rate = sess->rate;
	st->period_ns = sess->period_ns;
	st->write_error = sess->write_error;
	st->inherit_error = sess->inherit_error;
	mutex_unlock(&sess->lock);
	profil_counters_sum(&sess->cnt, st);
	st->armed = atomic64_read(&sess->cnt.armed);
	st->written = atomic64_read(&sess->cnt.written);
	st->writing = atomic_read(&sess->cnt.writing);
}

int profil_sessions_init(void)
{
	int ret;

	profil_settler = profil_run_worker("profil-settle");
	if (IS_ERR(profil_settler))
		return PTR_ERR(profil_settler);
	ret = rhashtable_init(&profil_sessions, &profil_sessions_params);
	if (ret)
		kthread_destroy_worker(profil_settler);
	return ret;
}

/*
 * Module exit: every session is gone, its settle work cancelled by
 * ->release; wait for each ->free_notifier.
 */
void profil_sessions_exit(void)
{
	mmu_notifier_synchronize();
	rhashtable_destroy(&profil_sessions);
	kthread_destroy_worker(profil_settler);
}
