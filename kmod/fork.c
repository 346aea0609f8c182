// SPDX-License-Identifier: GPL-2.0
/*
 * Inheritance at fork.
 *
 * A forked child gets a copy of its parent's memory, the buffer included
 * (pinned pages are copied at fork, never shared copy-on-write), and, as on
 * the BSDs and Solaris, it goes on profiling into that copy.  The pins are
 * the parent's, so the child needs its own.
 *
 * The sched_process_fork tracepoint runs in the parent once the child
 * exists and before it first runs; its probe, which may not sleep, takes a
 * reference to the child, to its mm and to the parent's arm, and hands them
 * to the module's own kernel thread ("profil-settle", session.c) once the
 * child has run for a period of the parent's rate (profil_fork_delay()):
 * a child that execs or exits before is never taken over (the exec and
 * exit probes drop its take-over), and one that makes a request first is
 * taken over then (profil_fork_settle()).  The thread takes the child over
 * in process context, on the child's mm
 * (kthread_use_mm(), as the settle work does): it pins the child's copy of
 * the buffer, charged to the child's user, and starts events on the
 * child's threads with the parent's configuration.  The child has no event
 * until then (perf does not inherit across fork: inherit_thread), so none
 * of its samples can land in the parent's buffer; the CPU time it ran
 * before the take-over is counted in its stats as missed.  This uses only
 * interfaces every kernel exports to modules (no task_work_add(), which
 * only Debian's kernels export).
 *
 * A parent whose buffer an invalidation made the tick stop counting (a
 * fault still to settle, session.c) is settled first, on the same thread:
 * its pages in place, the child's copy is the buffer; gone, the child's
 * session says why it has none.
 *
 * The thread faults nothing in that could wait on the child (userfaultfd,
 * I/O): buffer.c pins a child's pages with FOLL_NOFAULT after a FOLL_NOWAIT
 * fault-in, so a child that replaced its buffer gets PROFIL_STOP_INHERIT,
 * not a stuck thread.
 *
 * A vfork(), posix_spawn() or clone(CLONE_VM) child shares its parent's mm
 * and is not sampled; a new thread inherits through perf (tick.c).
 */
#include <linux/kthread.h>
#include <linux/memcontrol.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/rhashtable.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

#include "compat.h"
#include "profil_internal.h"

struct linux_binprm;

struct profil_fork {
	struct kthread_work work;
	struct timer_list timer;	/* queues @work: profil_fork_delay() */
	struct rhash_head by_mm;	/* in profil_forks_mm until done */
	struct rhash_head by_child;	/* in profil_forks_child until done */
	struct task_struct *child;	/* referenced */
	struct mm_struct *mm;		/* the child's, mmgrab() */
	struct profil_arm *arm;	/* the parent's, referenced; config only */
	struct profil_session *sess;	/* @arm's, referenced, its mm grabbed */
	struct file *dir;	/* its file's directory, referenced, or NULL */
};

static struct tracepoint *profil_fork_tp, *profil_exec_tp, *profil_exit_tp;
static struct tracepoint *profil_rename_tp;

/*
 * Take-overs queued and not yet done, on the whole system: a counter for
 * the probes' and requests' one test, and two tables of them, one by the
 * child's mm (a request, or a child forking before it is taken over: its
 * child inherits the same configuration) and one by the child (its exec
 * or exit drops a take-over still waiting).  Each mm and each child has
 * at most one.  Both tables change together under profil_forks_lock; a
 * lookup that needs the entry to stay takes it too.
 */
static atomic_t profil_forks_pending = ATOMIC_INIT(0);
static DEFINE_SPINLOCK(profil_forks_lock);
static struct rhashtable profil_forks_mm;
static struct rhashtable profil_forks_child;

static const struct rhashtable_params profil_forks_mm_params = {
	.key_len		= sizeof(struct mm_struct *),
	.key_offset		= offsetof(struct profil_fork, mm),
	.head_offset		= offsetof(struct profil_fork, by_mm),
	.automatic_shrinking	= true,
};

static const struct rhashtable_params profil_forks_child_params = {
	.key_len		= sizeof(struct task_struct *),
	.key_offset		= offsetof(struct profil_fork, child),
	.head_offset		= offsetof(struct profil_fork, by_child),
	.automatic_shrinking	= true,
};

/* @mm's take-over, if one is pending.  Under profil_forks_lock. */
static struct profil_fork *profil_fork_find(struct mm_struct *mm)
{
	lockdep_assert_held(&profil_forks_lock);
	return rhashtable_lookup_fast(&profil_forks_mm, &mm,
				      profil_forks_mm_params);
}

/* In both tables, or in none: 0 or -errno.  Under profil_forks_lock. */
static int profil_fork_insert(struct profil_fork *f)
{
	int ret;

	lockdep_assert_held(&profil_forks_lock);
	ret = rhashtable_insert_fast(&profil_forks_mm, &f->by_mm,
				     profil_forks_mm_params);
	if (ret)
		return ret;
	ret = rhashtable_insert_fast(&profil_forks_child, &f->by_child,
				     profil_forks_child_params);
	if (ret)
		rhashtable_remove_fast(&profil_forks_mm, &f->by_mm,
				       profil_forks_mm_params);
	return ret;
}

/* Out of both tables.  Under profil_forks_lock. */
static void profil_fork_remove(struct profil_fork *f)
{
	lockdep_assert_held(&profil_forks_lock);
	rhashtable_remove_fast(&profil_forks_mm, &f->by_mm,
			       profil_forks_mm_params);
	rhashtable_remove_fast(&profil_forks_child, &f->by_child,
			       profil_forks_child_params);
}

/*
 * The configuration that @mm's take-over, still pending, will start, and
 * its directory, both referenced; or NULL.  From the fork probe.
 */
static struct profil_arm *profil_fork_pending_arm(struct mm_struct *mm,
						  struct file **dir)
{
	struct profil_arm *arm = NULL;
	struct profil_fork *f;

	spin_lock(&profil_forks_lock);
	f = profil_fork_find(mm);
	if (f) {
		arm = f->arm;
		refcount_inc(&arm->ref);
		*dir = f->dir ? get_file(f->dir) : NULL;
	}
	spin_unlock(&profil_forks_lock);
	return arm;
}

static DECLARE_WAIT_QUEUE_HEAD(profil_forks_wq);

/* Is a take-over of @mm still to come?  Its work or timer is pending. */
static bool profil_fork_pending(struct mm_struct *mm)
{
	bool ret;

	spin_lock(&profil_forks_lock);
	ret = profil_fork_find(mm);
	spin_unlock(&profil_forks_lock);
	return ret;
}

/**
 * profil_fork_settle - let the caller's own take-over finish
 *
 * Called by every request before it looks at the caller's session: a
 * child's take-over is set up before the child first runs, and is run now
 * if it is still waiting for its delay, so after this a child sees the
 * session it inherited (or why it has none), and its own setup is never
 * replaced by the take-over.  One test while none is pending.
 */
void profil_fork_settle(void)
{
	struct mm_struct *mm = current->mm;
	struct profil_fork *f;

	if (!atomic_read(&profil_forks_pending))
		return;
	spin_lock(&profil_forks_lock);
	f = profil_fork_find(mm);
	/* Once the timer is off, only we queue the work. */
	if (f && timer_delete(&f->timer))
		profil_session_queue_work(&f->work);
	spin_unlock(&profil_forks_lock);
	wait_event(profil_forks_wq, !profil_fork_pending(mm));
}

/*
 * Take @child over: @parent's configuration on the child's mm, which the
 * caller uses.  Not a pcsample array: the child's copy of it was made while
 * the parent's other threads went on storing (slots below the next one may
 * be empty in the copy), and a MAP_SHARED array would be one array for two
 * writers.  The child's session says PROFIL_STOP_INHERIT instead
 * (pcsample(2)).
 */
static void profil_inherit(const struct profil_arm *parent, struct file *dir,
			   struct task_struct *child, struct mm_struct *mm,
			   int ret)
{
	struct profil_session *sess;
	struct profil_arm *arm;

	sess = profil_session_get(mm);
	if (IS_ERR(sess))
		return;
	if (ret || parent->mode == PROFIL_MODE_PCSAMPLE)
		goto failed;	/* pcsample: by design, no error */
	arm = profil_arm_clone(parent, dir, child);
	if (IS_ERR(arm)) {
		ret = PTR_ERR(arm);
		goto failed;
	}
	ret = profil_session_start(sess, arm, child);
	if (!ret)
		return;
	profil_arm_put(arm);
failed:
	profil_session_failed(sess, PROFIL_STOP_INHERIT, ret);
}

/*
 * A parent's arm that a fault stopped counting (an invalidation of its
 * buffer, around the fork or after it) is settled first: its buffer may
 * have been gone and something else mapped at its address, in the child's
 * copy too.  If the parent's pages are the pinned ones still, they were
 * at the fork.  Return: 0, -EAGAIN (still on their way back), or -EFAULT
 * (the parent's arm was stopped meanwhile).
 */
static int profil_fork_parent_settled(struct profil_arm *arm)
{
	struct profil_arm *now;

	if (!atomic_read(&arm->faulted))
		return 0;
	profil_session_settle_run(arm->sess);
	if (!atomic_read(&arm->faulted))
		return 0;
	rcu_read_lock();
	now = rcu_dereference(arm->sess->arm);
	rcu_read_unlock();
	return now == arm ? -EAGAIN : -EFAULT;
}

/* Is @f's child still alive on the mm it was forked with? */
static bool profil_fork_child_there(const struct profil_fork *f)
{
	bool there;

	task_lock(f->child);
	there = f->child->mm == f->mm && !(f->child->flags & PF_EXITING);
	task_unlock(f->child);
	return there;
}

/*
 * Out of the tables: drop what @f holds.  From any context that may
 * take a spinlock (the exec and exit probes too).
 */
static void profil_fork_free(struct profil_fork *f)
{
	if (f->dir)
		fput(f->dir);
	profil_arm_put_atomic(f->arm);
	put_task_struct(f->child);
	mmdrop(f->mm);
	/* @arm does not hold its session; the parent's exit ends it */
	mmdrop(f->sess->mn.mm);
	profil_session_put(f->sess);
	kfree(f);
	atomic_dec(&profil_forks_pending);
	wake_up_all(&profil_forks_wq);
	module_put(THIS_MODULE);
}

/*
 * On the profil-settle thread.  The work holds a module reference, which
 * the thread's destruction at module exit outlasts (session.c).
 */
static void profil_fork_take_over(struct kthread_work *work)
{
	struct profil_fork *f = container_of(work, struct profil_fork, work);
	struct mem_cgroup *memcg, *old;
	int ret;

	/*
	 * Exited or exec'ed first: nothing to take over.  The child's mm is
	 * only grabbed, so that an exec or exit tears it down at once, in
	 * the child, as without a session: get it while it is still used.
	 */
	if (profil_fork_child_there(f) && mmget_not_zero(f->mm)) {
		ret = profil_fork_parent_settled(f->arm);
		/* What it allocates is the child's, as if it ran there. */
		memcg = get_mem_cgroup_from_mm(f->mm);
		old = set_active_memcg(memcg);
		kthread_use_mm(f->mm);
		profil_inherit(f->arm, f->dir, f->child, f->mm, ret);
		kthread_unuse_mm(f->mm);
		set_active_memcg(old);
		mem_cgroup_put(memcg);
		/* Maybe the last user: its ->release must not run here. */
		mmput_async(f->mm);
	}
	/* From here on a fork of the child finds its session, if any. */
	spin_lock(&profil_forks_lock);
	profil_fork_remove(f);
	spin_unlock(&profil_forks_lock);
	profil_fork_free(f);
}

/* The child has run for its delay: take it over. */
static void profil_fork_due(struct timer_list *t)
{
	struct profil_fork *f = container_of(t, struct profil_fork, timer);

	profil_session_queue_work(&f->work);
}

/*
 * How long a child runs before it is taken over: one period of its
 * parent's rate, the least CPU time it takes to owe a sample, and a jiffy
 * more.  A child that execs or exits before (a shell's command, a helper
 * that forks and execs) is never taken over: pinning its copy of the
 * buffer and starting its events, only for the exec to throw them away,
 * cost a fork + exec more than half again.  What a child runs before its
 * take-over is counted as missed (profil_session_start()).
 */
static unsigned long profil_fork_delay(const struct profil_arm *arm)
{
	return nsecs_to_jiffies(arm->period_ns) + 1;
}

/*
 * @t execs or exits: a take-over of it still waiting for its timer is
 * dropped here; one whose timer fired finds the child gone (its work is
 * queued).
 */
static void profil_fork_gone(struct task_struct *t)
{
	struct profil_fork *f;

	if (!atomic_read(&profil_forks_pending))
		return;
	spin_lock(&profil_forks_lock);
	f = rhashtable_lookup_fast(&profil_forks_child, &t,
				   profil_forks_child_params);
	if (f && timer_delete(&f->timer))
		profil_fork_remove(f);
	else
		f = NULL;
	spin_unlock(&profil_forks_lock);
	if (f)
		profil_fork_free(f);
}

/*
 * sched_process_exec, in @t once its exec cannot fail: also ends the
 * attachments to its process (attach.c).
 */
static void profil_on_exec(void *data, struct task_struct *t, pid_t old_pid,
			   struct linux_binprm *bprm)
{
	profil_clock_exec_done(t);
	profil_fork_gone(t);
	profil_attach_exec(t);
	profil_session_exec(t);
}

/* task_rename: an exec (or a prctl) renames @t. */
static void profil_on_rename(void *data, struct task_struct *t,
			     const char *comm)
{
	profil_clock_exec_rename(t);
}

/*
 * sched_process_exit, in the exiting @t: its clock, its take-over, and,
 * if it is the last thread, the attachments to its process and the arms
 * of the sessions it owns.
 */
static void profil_on_exit(void *data, PROFIL_EXIT_PROBE_ARGS)
{
	profil_clock_gone(t);
	profil_fork_gone(t);
	profil_attach_exit(t);
	profil_session_exit(t);
}

/* sched_process_fork: in the parent, may not sleep, @child not yet run. */
static void profil_on_fork(void *data, struct task_struct *parent,
			   struct task_struct *child)
{
	struct mm_struct *mm = parent->mm;
	struct profil_arm *arm;
	struct profil_fork *f;
	struct file *dir;

	if (!mm || !child->mm || (child->flags & PF_KTHREAD))
		return;
	rcu_read_lock();
	arm = profil_arm_get_rcu(mm);
	dir = arm && child->mm != mm ? profil_output_dir_get_rcu(arm) : NULL;
	rcu_read_unlock();
	/*
	 * Threads, vfork and CLONE_VM children run on the parent's mm: a
	 * thread inherits the events, and gets its clock here (clock.c).
	 */
	if (child->mm == mm) {
		if (!arm)
			return;
		if (same_thread_group(child, parent))
			profil_clock_add(child, GFP_ATOMIC | __GFP_ACCOUNT);
		goto out_put;
	}
	/* A child forking before its own take-over passes that one on. */
	if (!arm && atomic_read(&profil_forks_pending))
		arm = profil_fork_pending_arm(mm, &dir);
	if (!arm)
		return;
	if (arm->flags & PROFIL_F_NOINHERIT)
		goto out_put;

	f = kmalloc(sizeof(*f), GFP_ATOMIC | __GFP_ACCOUNT);
	if (!f)
		goto out_put;
	f->arm = arm;
	/* Alive: @arm runs in it, or a pending take-over holds it. */
	f->sess = arm->sess;
	refcount_inc(&f->sess->ref);
	mmgrab(f->sess->mn.mm);
	f->dir = dir;
	f->child = get_task_struct(child);
	f->mm = child->mm;
	mmgrab(f->mm);
	kthread_init_work(&f->work, profil_fork_take_over);
	timer_setup(&f->timer, profil_fork_due, 0);
	f->timer.expires = jiffies + profil_fork_delay(arm);
	/* The session in the hash holds the module: not the last ref. */
	__module_get(THIS_MODULE);
	atomic_inc(&profil_forks_pending);
	spin_lock(&profil_forks_lock);
	if (profil_fork_insert(f)) {
		spin_unlock(&profil_forks_lock);
		/* Not taken over, as if the allocation above failed. */
		profil_fork_free(f);
		return;
	}
	add_timer(&f->timer);
	spin_unlock(&profil_forks_lock);
	return;

out_put:
	if (dir)
		fput(dir);
	profil_arm_put_atomic(arm);
}

static void profil_find_fork_tps(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_process_fork"))
		profil_fork_tp = tp;
	else if (!strcmp(tp->name, "sched_process_exec"))
		profil_exec_tp = tp;
	else if (!strcmp(tp->name, "sched_process_exit"))
		profil_exit_tp = tp;
	else if (!strcmp(tp->name, "task_rename"))
		profil_rename_tp = tp;
}

int profil_fork_init(void)
{
	int ret;

	for_each_kernel_tracepoint(profil_find_fork_tps, NULL);
	if (!profil_fork_tp || !profil_exec_tp || !profil_exit_tp ||
	    !profil_rename_tp)
		return -ENOENT;
	ret = rhashtable_init(&profil_forks_mm, &profil_forks_mm_params);
	if (ret)
		return ret;
	ret = rhashtable_init(&profil_forks_child, &profil_forks_child_params);
	if (ret)
		goto err_mm;
	ret = tracepoint_probe_register(profil_rename_tp, profil_on_rename,
					NULL);
	if (ret)
		goto err_child;
	ret = tracepoint_probe_register(profil_exec_tp, profil_on_exec, NULL);
	if (ret)
		goto err_rename;
	ret = tracepoint_probe_register(profil_exit_tp, profil_on_exit, NULL);
	if (ret)
		goto err_exec;
	ret = tracepoint_probe_register(profil_fork_tp, profil_on_fork, NULL);
	if (ret)
		goto err_exit;
	return 0;

err_exit:
	tracepoint_probe_unregister(profil_exit_tp, profil_on_exit, NULL);
err_exec:
	tracepoint_probe_unregister(profil_exec_tp, profil_on_exec, NULL);
err_rename:
	tracepoint_probe_unregister(profil_rename_tp, profil_on_rename, NULL);
	tracepoint_synchronize_unregister();
err_child:
	rhashtable_destroy(&profil_forks_child);
err_mm:
	rhashtable_destroy(&profil_forks_mm);
	return ret;
}

/*
 * After it, no probe runs.  Pending take-overs hold module references:
 * there are none, and the tables are empty.
 */
void profil_fork_exit(void)
{
	tracepoint_probe_unregister(profil_fork_tp, profil_on_fork, NULL);
	tracepoint_probe_unregister(profil_exit_tp, profil_on_exit, NULL);
	tracepoint_probe_unregister(profil_exec_tp, profil_on_exec, NULL);
	tracepoint_probe_unregister(profil_rename_tp, profil_on_rename, NULL);
	tracepoint_synchronize_unregister();
	rhashtable_destroy(&profil_forks_child);
	rhashtable_destroy(&profil_forks_mm);
}
