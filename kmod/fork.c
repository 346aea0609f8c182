// SPDX-License-Identifier: GPL-2.0
/*
 * Inheritance at fork.
 *
 * A forked child gets a copy of its parent's memory, the buffer included
 * (pinned pages are copied at fork, never shared copy-on-write), and, as on
 * the BSDs and Solaris, it goes on profiling into that copy.  The pins are
 * the parent's, so the child needs its own.  The sched_process_fork
 * tracepoint runs in the parent once the child exists and before it first
 * runs; its probe queues a task_work on the child, which the child runs on
 * its way out to user space, before its first user instruction: there, in
 * process context and on its own mm, it pins its copy and starts its events
 * with the parent's configuration.  The CPU time the child used before that
 * is counted in its stats as missed.
 *
 * A vfork(), posix_spawn() or clone(CLONE_VM) child shares its parent's mm
 * and is not sampled; a new thread inherits through perf (tick.c).
 */
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/task_work.h>
#include <linux/tracepoint.h>

#include "profil_internal.h"

struct profil_fork {
	struct callback_head cb;
	struct profil_arm *arm;	/* the parent's, referenced; config only */
	struct file *dir;	/* its file's directory, referenced, or NULL */
};

static struct tracepoint *profil_fork_tp;

/*
 * In the new child: take over the parent's configuration.  Not a pcsample
 * array: the child's copy of it was made while the parent's other threads
 * went on storing (slots below the next one may be empty in the copy), and
 * a MAP_SHARED array would be one array for two writers.  The child's
 * session says PROFIL_STOP_INHERIT instead (pcsample(2)).
 */
static void profil_inherit(const struct profil_arm *parent, struct file *dir)
{
	struct profil_session *sess;
	struct profil_arm *arm;

	sess = profil_session_get(current->mm);
	if (IS_ERR(sess))
		return;
	if (parent->mode == PROFIL_MODE_PCSAMPLE)
		goto failed;
	atomic64_add(div64_u64(current->se.sum_exec_runtime,
			       parent->period_ns), &sess->cnt.missed);
	arm = profil_arm_clone(parent, dir);
	if (arm) {
		if (!profil_session_start(sess, arm, true))
			return;
		profil_arm_put(arm);
	}
failed:
	profil_session_failed(sess, PROFIL_STOP_INHERIT);
}

/*
 * The work holds a module reference, dropped by its last statement: the
 * code after it (the return) still runs in this module, so module exit
 * waits for every task to leave it (profil_fork_exit()).
 */
static void profil_fork_run(struct callback_head *cb)
{
	struct profil_fork *f = container_of(cb, struct profil_fork, cb);

	/* Run from do_exit() instead if the child died first: nothing then. */
	if (current->mm && !(current->flags & PF_EXITING))
		profil_inherit(f->arm, f->dir);
	if (f->dir)
		fput(f->dir);
	profil_arm_put(f->arm);
	kfree(f);
	module_put(THIS_MODULE);
}

/* sched_process_fork: in the parent, preemption off, @child not yet run. */
static void profil_on_fork(void *data, struct task_struct *parent,
			   struct task_struct *child)
{
	struct mm_struct *mm = parent->mm;
	struct profil_arm *arm;
	struct profil_fork *f;
	struct file *dir;

	/* Threads, vfork and CLONE_VM children run on the parent's mm. */
	if (!mm || !child->mm || child->mm == mm ||
	    (child->flags & PF_KTHREAD))
		return;
	rcu_read_lock();
	arm = profil_arm_get_rcu(mm);
	dir = arm ? profil_output_dir_get_rcu(arm) : NULL;
	rcu_read_unlock();
	if (!arm)
		return;
	/*
	 * Not while a fault is being settled: the parent's buffer may be gone
	 * and something else mapped at its address, in the child too.
	 */
	if ((arm->flags & PROFIL_F_NOINHERIT) || atomic_read(&arm->faulted))
		goto out_put;

	f = kmalloc(sizeof(*f), GFP_ATOMIC | __GFP_ACCOUNT);
	if (!f)
		goto out_put;
	f->arm = arm;
	f->dir = dir;
	init_task_work(&f->cb, profil_fork_run);
	/* The session in the hash holds the module: not the last ref. */
	__module_get(THIS_MODULE);
	if (!task_work_add(child, &f->cb, TWA_RESUME))
		return;
	module_put(THIS_MODULE);
	kfree(f);
out_put:
	if (dir)
		fput(dir);
	profil_arm_put_atomic(arm);
}

static void profil_find_fork_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_process_fork"))
		*(struct tracepoint **)priv = tp;
}

int profil_fork_init(void)
{
	for_each_kernel_tracepoint(profil_find_fork_tp, &profil_fork_tp);
	if (!profil_fork_tp)
		return -ENOENT;
	return tracepoint_probe_register(profil_fork_tp, profil_on_fork,
					 NULL);
}

void profil_fork_exit(void)
{
	tracepoint_probe_unregister(profil_fork_tp, profil_on_fork, NULL);
	tracepoint_synchronize_unregister();
	/*
	 * A task that ran the last module_put() of a work may still be
	 * returning through profil_fork_run().  It does not sleep there, and
	 * a tasks-RCU grace period ends only when every task has slept or
	 * been in user space since it began: after it, none is in our text.
	 */
	synchronize_rcu_tasks();
}
