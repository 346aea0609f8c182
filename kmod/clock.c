// SPDX-License-Identifier: GPL-2.0
/*
 * Each profiled thread's CPU clock.
 *
 * The task-clock event that times a thread's ticks (tick.c) runs from the
 * thread's switch in to its switch out.  The thread's CPU clock
 * (se.sum_exec_runtime, what CLOCK_THREAD_CPUTIME_ID reads) runs from the
 * scheduler's pick to its dequeue, and so also counts the way back from
 * idle that a wake-up charges to it: the end of the timer interrupt,
 * leaving idle, the switch.  A thread that sleeps and wakes often
 * (nanosleep, poll with a timeout) spends a fifth of its CPU time there
 * under TCG, which the event never sees.  So a tick charges what the
 * thread's clock has gained since the thread's last tick.
 *
 * That needs state per thread, which the events cannot hold: perf swaps the
 * contexts of two sibling threads at a switch between them, so an event
 * runs, counts and ticks for whichever thread holds it.  The state lives
 * here instead, in a table keyed by task: an entry for every thread of a
 * process that has events, added by profil_events_start() for the threads
 * it finds and by the fork probe for the threads created while an arm
 * runs, and removed at the thread's exit (sched_process_exit, whose probe
 * is fork.c's).
 * The tick looks its thread up under RCU and is the only writer of the
 * entry (a thread ticks on one CPU at a time, in hard irq); the first
 * tick under an arm charges the event's count (the task clock since the
 * arm started) and reads the clock, and every later one charges the
 * clock's gain.  A thread without an entry (created by a thread that had
 * none yet, or an allocation failed) is charged on its event's count, as
 * if there were no table.  An entry outlives its thread's sessions (exec,
 * OFF) until the thread exits: an id that is not the arm's is stale.
 */
#include <linux/cred.h>
#include <linux/math64.h>
#include <linux/rhashtable.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>

#include "compat.h"
#include "profil_internal.h"

struct profil_thread {
	struct rhash_head node;
	const struct task_struct *task;	/* the key; gone with the thread */
	u64 arm_id;		/* the arm it was last charged for, or 0 */
	u64 clock;		/* its CPU clock then */
	u64 rem;		/* CPU time of it not yet charged, ns */
	/*
	 * Its credentials when its exec renamed it (the old image's last),
	 * for the writer, only until that exec ends; compared, not held.
	 * Written and read by the thread itself.
	 */
	const struct cred *exec_cred;
	struct rcu_head rcu;
};

static struct rhashtable profil_threads;
static atomic_t profil_nr_threads = ATOMIC_INIT(0);

static const struct rhashtable_params profil_threads_params = {
	.key_len		= sizeof(struct task_struct *),
	.key_offset		= offsetof(struct profil_thread, task),
	.head_offset		= offsetof(struct profil_thread, node),
	.automatic_shrinking	= true,
};

static struct profil_thread *profil_thread_find(const struct task_struct *t)
{
	return rhashtable_lookup(&profil_threads, &t, profil_threads_params);
}

static void profil_thread_remove(struct profil_thread *th)
{
	if (rhashtable_remove_fast(&profil_threads, &th->node,
				   profil_threads_params))
		return;		/* removed by the other side of a race */
	atomic_dec(&profil_nr_threads);
	kfree_rcu(th, rcu);
}

/**
 * profil_clock_add - give @t an entry, if it has none
 * @t: a thread, referenced or not yet running
 * @gfp: how to allocate it
 *
 * A thread that began exiting meanwhile (its exit may have looked for an
 * entry already) has it taken away again.
 *
 * Return: 0 or -ENOMEM.
 */
int profil_clock_add(struct task_struct *t, gfp_t gfp)
{
	struct profil_thread *th, *old;

	th = kzalloc(sizeof(*th), gfp);
	if (!th)
		return -ENOMEM;
	th->task = t;
	rcu_read_lock();
	old = rhashtable_lookup_get_insert_fast(&profil_threads, &th->node,
						profil_threads_params);
	if (old) {
		kfree(th);
		rcu_read_unlock();
		return IS_ERR(old) ? PTR_ERR(old) : 0;
	}
	atomic_inc(&profil_nr_threads);
	/* Pairs with profil_clock_gone()'s: it finds @th, or we see the flag. */
	smp_mb();
	if (READ_ONCE(t->flags) & PF_EXITING)
		profil_thread_remove(th);
	rcu_read_unlock();
	return 0;
}

/*
 * The run queue's task clock, which se.exec_start is read on, is
 * sched_clock, local_clock() here, unless IRQ or steal time is accounted
 * apart: then it runs behind by all of that time since boot.
 */
#define PROFIL_TASK_CLOCK_IS_LOCAL \
	(!IS_ENABLED(CONFIG_IRQ_TIME_ACCOUNTING) && \
	 !IS_ENABLED(CONFIG_PARAVIRT_TIME_ACCOUNTING))

/*
 * The thread's CPU clock now: se.sum_exec_runtime as of its last update,
 * plus the time since (se.exec_start).  Both change under the run queue's
 * lock, which a reader of the thread's clock on another CPU
 * (task_sched_runtime()) may hold while the tick reads them: a torn pair
 * reads a little ahead or behind, and as only what the clock gains beyond
 * its highest reading is charged, nothing is charged twice, only a tick
 * early or late.
 *
 * The time since the last update is whatever it is: on a tickless CPU
 * (nohz_full) the scheduler's tick, which makes the update, stops, and a
 * virtual machine's CPU stalled by its host comes back with all the time
 * of the stall on the thread's clock.  Left to a later tick, that time is
 * charged where the thread then runs, or never if it exits first.  Where
 * the two clocks differ, a gap of over two scheduler ticks is taken as
 * their difference and only the last update is read.
 */
static notrace u64 profil_thread_clock(void)
{
	u64 clock = READ_ONCE(current->se.sum_exec_runtime);
	s64 since = (s64)(local_clock() - READ_ONCE(current->se.exec_start));

	if (since > 0 && (PROFIL_TASK_CLOCK_IS_LOCAL || since <= 2 * TICK_NSEC))
		clock += since;
	return clock;
}

/* Whole periods in *@owed, taken from it. */
static notrace u64 profil_periods(u64 *owed, u64 period)
{
	u64 n = div64_u64(*owed, period);

	*owed -= n * period;
	return n;
}

/**
 * profil_clock_charge_event - the periods @event's count owes @arm
 * @arm: the tick's arm
 * @event: the tick's event, its count brought up to date
 *
 * From the tick, in hard irq: the whole periods are taken from the count,
 * which keeps the remainder.  An attachment charges this way only: the
 * target's threads' entries belong to the target's own session.
 *
 * Return: how many periods of @arm to charge.
 */
notrace u64 profil_clock_charge_event(const struct profil_arm *arm,
				      struct perf_event *event)
{
	u64 owed = local64_read(&event->count);
	u64 n = profil_periods(&owed, arm->period_ns);

	local64_sub(n * arm->period_ns, &event->count);
	return n;
}

/**
 * profil_clock_charge - the periods current's tick charges
 * @arm: the tick's arm
 * @event: the tick's event, its count brought up to date
 *
 * From the tick, in hard irq.  A thread with an entry is charged on its
 * clock, and the event's count is dropped, so that nothing charges it
 * again; one without, on the count, which keeps the remainder.
 *
 * Return: how many periods of @arm to charge.
 */
notrace u64 profil_clock_charge(const struct profil_arm *arm,
				struct perf_event *event)
{
	struct profil_thread *th = NULL;
	u64 clock, n;

	rcu_read_lock();
	if (atomic_read(&profil_nr_threads))
		th = profil_thread_find(current);
	if (!th) {
		rcu_read_unlock();
		return profil_clock_charge_event(arm, event);
	}
	clock = profil_thread_clock();
	if (th->arm_id != arm->id) {
		th->arm_id = arm->id;
		th->rem = local64_xchg(&event->count, 0);
	} else {
		local64_set(&event->count, 0);
		if (clock > th->clock)
			th->rem += clock - th->clock;
		else
			clock = th->clock;	/* not brought up to date yet */
	}
	th->clock = clock;
	n = profil_periods(&th->rem, arm->period_ns);
	rcu_read_unlock();
	return n;
}

/**
 * profil_clock_exec_rename - @t's exec renames it
 * @t: the renamed thread (task_rename, fork.c)
 *
 * An exec renames the thread after it let go of the old memory and before
 * it installs the new program's credentials: the credentials the old
 * image ended with are the ones now.  Kept until the exec ends.
 */
void profil_clock_exec_rename(struct task_struct *t)
{
	struct profil_thread *th;

	if (t != current || !t->in_execve || !atomic_read(&profil_nr_threads))
		return;
	rcu_read_lock();
	th = profil_thread_find(t);
	if (th)
		WRITE_ONCE(th->exec_cred, rcu_access_pointer(t->real_cred));
	rcu_read_unlock();
}

/* @t's exec is over (sched_process_exec, fork.c). */
void profil_clock_exec_done(struct task_struct *t)
{
	struct profil_thread *th;

	if (!atomic_read(&profil_nr_threads))
		return;
	rcu_read_lock();
	th = profil_thread_find(t);
	if (th)
		WRITE_ONCE(th->exec_cred, NULL);
	rcu_read_unlock();
}

/**
 * profil_clock_exec_cred - did current's old image end with @cred?
 * @cred: the credentials an arm was made with
 *
 * For the writer, when an exec lets go of the old memory only after it
 * installed the new program's credentials (bprm->old_mm, freed in
 * setup_new_exec()): the credentials then are the new program's, and the
 * old image's last ones are those profil_clock_exec_rename() saw.
 *
 * Return: true only inside an exec, if they were @cred.
 */
bool profil_clock_exec_cred(const struct cred *cred)
{
	struct profil_thread *th;
	bool ret = false;

	if (!current->in_execve || !atomic_read(&profil_nr_threads))
		return false;
	rcu_read_lock();
	th = profil_thread_find(current);
	if (th)
		ret = READ_ONCE(th->exec_cred) == cred;
	rcu_read_unlock();
	return ret;
}

/**
 * profil_clock_gone - @t exits: its entry goes
 * @t: the exiting thread (sched_process_exit, fork.c)
 */
void profil_clock_gone(struct task_struct *t)
{
	struct profil_thread *th;

	/* PF_EXITING is set: see profil_clock_add(). */
	smp_mb();
	if (!atomic_read(&profil_nr_threads))
		return;
	rcu_read_lock();
	th = profil_thread_find(t);
	if (th)
		profil_thread_remove(th);
	rcu_read_unlock();
}

int profil_clock_init(void)
{
	return rhashtable_init(&profil_threads, &profil_threads_params);
}

static void profil_thread_free(void *ptr, void *arg)
{
	kfree(ptr);
}

/* After the last session and profil_fork_exit(): no tick, no probe runs. */
void profil_clock_exit(void)
{
	rhashtable_free_and_destroy(&profil_threads, profil_thread_free, NULL);
}
