// SPDX-License-Identifier: GPL-2.0
/*
 * The sampling tick.
 *
 * Each profiled thread carries a task-clock perf event (software, counts the
 * thread's own CPU time, user and system) with a sample_period of
 * NSEC_PER_SEC / rate and profil_tick() as its in-kernel overflow handler.
 * Threads that exist at setup get a root event each; threads created later
 * inherit one from their creator (attr.inherit + attr.inherit_thread), and
 * perf removes the events at exec (attr.remove_on_exec).  Releasing the root
 * events releases every inherited one: perf_event_release_kernel() detaches
 * and waits for all of them, so after profil_events_stop() no tick runs with
 * the arm as its context.
 *
 * The clock event fires from an hrtimer, once per period of wall time while
 * the thread runs, and a late expiry is not repeated.  So a tick does not
 * count one: it charges every whole period of CPU time the thread's event
 * has accumulated (event->count, brought up to date by perf just before the
 * handler runs) and carries the remainder.  event->count is thus our
 * per-thread "CPU time not yet charged"; it is private to this event, only
 * ever touched on the CPU the thread runs on, and nobody reads it as a total.
 */
#include <linux/math64.h>
#include <linux/perf_event.h>
#include <linux/ptrace.h>
#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/sched/task_stack.h>
#include <linux/bsearch.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "profil_internal.h"

/* Add @n to a saturating bin; return how much was really added. */
static notrace u32 profil_bin_add32(u32 *bin, u32 n)
{
	u32 old = READ_ONCE(*bin), add;

	do {
		add = min(n, U32_MAX - old);
		if (!add)
			return 0;
	} while (!try_cmpxchg(bin, &old, old + add));
	return add;
}

static notrace u32 profil_bin_add16(u16 *bin, u32 n)
{
	u16 old = READ_ONCE(*bin);
	u32 add;

	do {
		add = min_t(u32, n, U16_MAX - old);
		if (!add)
			return 0;
	} while (!try_cmpxchg(bin, &old, (u16)(old + add)));
	return add;
}

static notrace void *profil_region_bin(const struct profil_kregion *r, u64 pc)
{
	u64 idx;

	if (pc < r->offset)
		return NULL;
	/* 64x32 multiply without overflow, so far PCs never alias. */
	idx = mul_u64_u32_shr((pc - r->offset) >> 1, r->scale, 16);
	if (idx >= r->nbins)
		return NULL;
	return r->bins + (idx << profil_bin_shift(r->flags));
}

/* Find the bin for @pc: the region with the highest offset that holds it. */
static notrace void *profil_find_bin(const struct profil_arm *arm, u64 pc,
				     const struct profil_kregion **rp)
{
	u32 i;
	void *bin;

	for (i = 0; i < arm->nr_regions; i++) {
		bin = profil_region_bin(&arm->regions[i], pc);
		if (bin) {
			*rp = &arm->regions[i];
			return bin;
		}
	}
	*rp = arm->overflow;
	return arm->overflow ? arm->overflow->bins : NULL;
}

static notrace void profil_count(const struct profil_arm *arm, u64 pc, u32 n)
{
	struct profil_counters *cnt = &arm->sess->cnt;
	const struct profil_kregion *r;
	void *bin = profil_find_bin(arm, pc, &r);
	u32 added;

	if (!bin) {
		atomic64_add(n, &cnt->out_of_range);
		return;
	}
	if (r->flags & PROFIL_REGION_U32)
		added = profil_bin_add32(bin, n);
	else
		added = profil_bin_add16(bin, n);
	atomic64_add(added, &cnt->samples);
	if (added != n)
		atomic64_add(n - added, &cnt->saturated);
}

/* The user PC of current; a tick in the kernel is charged to it too. */
static notrace u64 profil_user_pc(struct pt_regs *regs)
{
	if (!regs || !user_mode(regs))
		regs = task_pt_regs(current);
	return instruction_pointer(regs);
}

static notrace void profil_tick(struct perf_event *event,
				struct perf_sample_data *data,
				struct pt_regs *regs)
{
	const struct profil_arm *arm = event->overflow_handler_context;
	u64 owed = local64_read(&event->count);
	u64 n;

	if (owed < arm->period_ns)
		return;
	n = div64_u64(owed, arm->period_ns);
	local64_sub(n * arm->period_ns, &event->count);
	n = min_t(u64, n, U32_MAX);

	/*
	 * Nowhere to count: an io_uring worker of the process, the window
	 * between exec's switch of mm and remove_on_exec, or a buffer that
	 * an invalidation may have taken from the process, until the
	 * recheck (profil_arm_fault(), profil_regions_recheck()).
	 */
	if (unlikely(current->mm != arm->sess->mn.mm ||
		     (current->flags & (PF_KTHREAD | PF_IO_WORKER)) ||
		     atomic_read(&arm->faulted))) {
		atomic64_add(n, &arm->sess->cnt.missed);
		return;
	}
	/* Paused by the process (moncontrol(0)), through its image. */
	if (arm->out && !READ_ONCE(profil_output_ctl(arm)->enable)) {
		atomic64_add(n, &arm->sess->cnt.paused);
		return;
	}
	profil_count(arm, profil_user_pc(regs), n);
}

static struct perf_event *profil_event_create(struct profil_arm *arm,
					      struct task_struct *t)
{
	struct perf_event_attr attr = {
		.type		= PERF_TYPE_SOFTWARE,
		.size		= sizeof(attr),
		.config		= PERF_COUNT_SW_TASK_CLOCK,
		.sample_period	= arm->period_ns,
		.inherit	= 1,
		.inherit_thread	= 1,
		.remove_on_exec	= 1,
		.exclude_hv	= 1,
	};

	return perf_event_create_kernel_counter(&attr, -1, t, profil_tick,
						arm);
}

static int profil_task_cmp(const void *a, const void *b)
{
	const struct task_struct *ta = *(struct task_struct * const *)a;
	const struct task_struct *tb = *(struct task_struct * const *)b;

	return ta == tb ? 0 : (ta < tb ? -1 : 1);
}

/*
 * The tasks that carry one of @arm's events, as a root or inherited, sorted
 * for bsearch(); pointers only, never dereferenced.
 */
static int profil_covered_tasks(struct profil_arm *arm,
				struct task_struct ***covp)
{
	struct task_struct **cov = NULL;
	struct perf_event *ev, *child;
	unsigned int i, n = 0, max = 0;

	for (i = 0; i < arm->nr_events; i++) {
		ev = arm->events[i];
		mutex_lock(&ev->child_mutex);
		max += 1 + list_count_nodes(&ev->child_list);
		mutex_unlock(&ev->child_mutex);
	}
	if (max) {
		/* Children inherited since the count are found next pass. */
		cov = kvmalloc_array(max, sizeof(*cov), GFP_KERNEL);
		if (!cov)
			return -ENOMEM;
	}
	for (i = 0; i < arm->nr_events && n < max; i++) {
		ev = arm->events[i];
		cov[n++] = ev->hw.target;
		mutex_lock(&ev->child_mutex);
		list_for_each_entry(child, &ev->child_list, child_list) {
			if (n == max)
				break;
			cov[n++] = child->hw.target;
		}
		mutex_unlock(&ev->child_mutex);
	}
	sort(cov, n, sizeof(*cov), profil_task_cmp, NULL);
	*covp = cov;
	return n;
}

/* Snapshot the live threads of current's thread group, referenced. */
static int profil_threads_snapshot(struct task_struct ***tsp)
{
	struct task_struct *t, **ts;
	int n, max = get_nr_threads(current) + 8;

retry:
	ts = kvmalloc_array(max, sizeof(*ts), GFP_KERNEL);
	if (!ts)
		return -ENOMEM;
	n = 0;
	rcu_read_lock();
	for_each_thread(current, t) {
		if (t->flags & PF_EXITING)
			continue;
		if (n == max)
			break;
		ts[n++] = get_task_struct(t);
	}
	rcu_read_unlock();
	if (n == max) {
		while (n)
			put_task_struct(ts[--n]);
		kvfree(ts);
		max *= 2;
		goto retry;
	}
	*tsp = ts;
	return n;
}

static int profil_events_add(struct profil_arm *arm, struct task_struct *t)
{
	struct perf_event *ev;

	if (arm->nr_events == arm->max_events) {
		unsigned int max = max(8U, arm->max_events * 2);
		struct perf_event **evs;

		evs = krealloc_array(arm->events, max, sizeof(*evs),
				     GFP_KERNEL_ACCOUNT);
		if (!evs)
			return -ENOMEM;
		arm->events = evs;
		arm->max_events = max;
	}
	ev = profil_event_create(arm, t);
	if (IS_ERR(ev))
		return PTR_ERR(ev);
	arm->events[arm->nr_events++] = ev;
	return 0;
}

/* One pass over the threads; returns how many it attached, or -errno. */
static int profil_events_pass(struct profil_arm *arm)
{
	struct task_struct **ts, **cov;
	int i, n, nr_cov, added = 0, ret;

	/*
	 * Threads first: each is referenced, so no stale pointer among the
	 * covered ones can equal a thread of the snapshot but itself.
	 */
	n = profil_threads_snapshot(&ts);
	if (n < 0)
		return n;
	nr_cov = profil_covered_tasks(arm, &cov);
	for (i = 0, ret = min(nr_cov, 0); i < n; i++) {
		if (!ret && !bsearch(&ts[i], cov, nr_cov, sizeof(*cov),
				     profil_task_cmp)) {
			ret = profil_events_add(arm, ts[i]);
			/* Exiting since the snapshot: nothing to sample. */
			if (ret == -ESRCH)
				ret = 0;
			else
				added++;
		}
		put_task_struct(ts[i]);
	}
	kvfree(ts);
	if (nr_cov >= 0)
		kvfree(cov);
	return ret ? ret : added;
}

/**
 * profil_events_start - sample every thread of the calling process
 * @arm: a pinned arm
 *
 * Threads created while this runs by a thread already covered inherit an
 * event; those created by a thread not yet covered are found by the next
 * pass, so passes repeat until one finds nothing to attach.
 *
 * Return: 0, or -errno (-EINTR on a fatal signal) with no event left
 * behind.
 */
int profil_events_start(struct profil_arm *arm)
{
	int ret;

	do {
		ret = profil_events_pass(arm);
		if (ret > 0 && fatal_signal_pending(current))
			ret = -EINTR;
	} while (ret > 0);
	if (ret < 0)
		profil_events_stop(arm);
	return ret;
}

/**
 * profil_events_stop - release every event of @arm
 * @arm: the arm
 *
 * Returns with no tick running or pending for @arm, on any CPU.
 */
void profil_events_stop(struct profil_arm *arm)
{
	while (arm->nr_events)
		perf_event_release_kernel(arm->events[--arm->nr_events]);
	kfree(arm->events);
	arm->events = NULL;
	arm->max_events = 0;
}
