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
 * count one: it charges every whole period of CPU time the thread has used
 * since its last tick, on the thread's own CPU clock, and carries the
 * remainder (clock.c).  A thread the module keeps no clock for is charged
 * on its event's count instead (brought up to date by perf just before the
 * handler runs), which then carries the remainder; nobody reads the count
 * as a total.
 */
#include <linux/overflow.h>
#include <linux/perf_event.h>
#include <linux/ptrace.h>
#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/sched/task_stack.h>
#include <linux/bsearch.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "compat.h"
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

/*
 * Find the bin for @pc: the region with the highest offset that holds it,
 * by binary search of the arm's index, whatever the number of regions.
 */
static notrace void *profil_find_bin(const struct profil_arm *arm, u64 pc,
				     const struct profil_kregion **rp)
{
	const struct profil_interval *iv = arm->index;
	u32 lo = 0, hi = arm->nr_index, mid;

	/* The last interval that starts at or below @pc. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (iv[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && pc < iv[lo - 1].end) {
		*rp = iv[lo - 1].r;
		return profil_region_bin(*rp, pc);
	}
	*rp = arm->overflow;
	return arm->overflow ? arm->overflow->bins : NULL;
}

/* The PCs [start, end) that count in @r; end saturates at U64_MAX. */
static void profil_region_span(const struct profil_kregion *r, u64 *start,
			       u64 *end)
{
	/* Halfwords h with (h * scale) >> 16 < nbins: below this. */
	u64 halfwords = DIV_ROUND_UP(r->nbins << 16, r->scale);

	*start = r->offset;
	if (check_add_overflow(r->offset, halfwords * 2, end))
		*end = U64_MAX;
}

static int profil_u64_cmp(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/*
 * The region that counts @pc: the first whose span, in @span (start, end
 * per region, as profil_region_span() gives them), holds it; the regions
 * are by offset, highest first.  An empty region's span is empty.
 */
static const struct profil_kregion *
profil_region_at(const struct profil_arm *arm, const u64 *span, u64 pc)
{
	u32 i;

	for (i = 0; i < arm->nr_regions; i++)
		if (pc >= span[2 * i] && pc < span[2 * i + 1])
			return &arm->regions[i];
	return NULL;
}

/**
 * profil_index_build - flatten @arm's regions for the tick
 * @arm: an arm whose regions are set and sorted, highest offset first
 *
 * Cuts the PC space at every region's start and end and names, for each
 * piece, the region that wins there (the highest offset); adjacent pieces
 * of one region are merged.  O(n^2) in regions at setup, O(log n) a tick.
 *
 * Return: 0 or -ENOMEM.
 */
int profil_index_build(struct profil_arm *arm)
{
	const struct profil_kregion *r, *cur;
	u32 i, n = 0, nr_pts = 2 * arm->nr_regions;
	struct profil_interval *iv;
	u64 *span, *pts;

	if (arm->mode != PROFIL_MODE_HIST || !arm->nr_regions)
		return 0;
	/* @span by region, @pts the same points sorted. */
	span = kvmalloc_array(2 * nr_pts, sizeof(*span), GFP_KERNEL);
	iv = kvmalloc_array(nr_pts, sizeof(*iv), GFP_KERNEL_ACCOUNT);
	if (!span || !iv) {
		kvfree(span);
		kvfree(iv);
		return -ENOMEM;
	}
	pts = span + nr_pts;
	for (i = 0; i < arm->nr_regions; i++)
		profil_region_span(&arm->regions[i], &span[2 * i],
				   &span[2 * i + 1]);
	memcpy(pts, span, nr_pts * sizeof(*pts));
	sort(pts, nr_pts, sizeof(*pts), profil_u64_cmp, NULL);
	for (i = 0; i + 1 < nr_pts; i++) {
		if (pts[i] == pts[i + 1])
			continue;
		cur = profil_region_at(arm, span, pts[i]);
		if (!cur)
			continue;
		r = n ? iv[n - 1].r : NULL;
		if (r == cur && iv[n - 1].end == pts[i]) {
			iv[n - 1].end = pts[i + 1];
			continue;
		}
		iv[n++] = (struct profil_interval){ pts[i], pts[i + 1], cur };
	}
	kvfree(span);
	arm->index = iv;
	arm->nr_index = n;
	return 0;
}

/* Store @pc in slots @from to @to - 1 of a PC log (element 1 + slot). */
static notrace void profil_log_fill(u64 *log, u64 from, u64 to, u64 pc)
{
	for (; from < to; from++)
		WRITE_ONCE(log[1 + from], pc);
}

/*
 * PROFIL_REGION_PCLOG: count @n samples in @log[0] and store @pc for each
 * that has a slot: the sample that finds the count at c (modulo 2^64, as
 * one at a time would) gets slot c if c < @nslots - 1.  The count is the
 * process's memory too: whatever it holds, only slots 1 to @nslots - 1
 * are written.  Return: @n.
 */
static notrace u32 profil_log_pc(u64 *log, u64 nslots, u64 pc, u32 n)
{
	u64 i = READ_ONCE(log[0]), end;

	while (!try_cmpxchg64(&log[0], &i, i + n))
		;
	end = i + n;
	profil_log_fill(log, i, min(end, nslots - 1), pc);
	if (end < i)		/* the count wrapped: from slot 0 on too */
		profil_log_fill(log, 0, min(end, nslots - 1), pc);
	return n;
}

static notrace void profil_count(const struct profil_arm *arm, u64 pc, u32 n)
{
	struct profil_counters *cnt = arm->cnt;
	const struct profil_kregion *r;
	void *bin = profil_find_bin(arm, pc, &r);
	u32 added;

	if (!bin) {
		profil_count_add(cnt, PROFIL_TC_OUT_OF_RANGE, n);
		return;
	}
	if (r->flags & PROFIL_REGION_PCLOG)
		added = profil_log_pc(bin, r->nbins, pc, n);
	else if (r->flags & PROFIL_REGION_U32)
		added = profil_bin_add32(bin, n);
	else
		added = profil_bin_add16(bin, n);
	profil_count_add(cnt, PROFIL_TC_SAMPLES, added);
	if (added != n)
		profil_count_add(cnt, PROFIL_TC_SATURATED, n - added);
}

/*
 * PROFIL_MODE_PCSAMPLE: store @pc @n times, in order, into the array; a
 * full array stops the arm, from the session's work (PROFIL_STOP_FULL).
 */
static notrace void profil_store_pc(struct profil_arm *arm, u64 pc, u32 n)
{
	const struct profil_kregion *r = &arm->regions[0];
	struct profil_session *sess = arm->sess;
	u64 *pcs = r->bins;
	long i;

	for (; n; n--) {
		i = atomic_long_inc_return(&arm->pc_next) - 1;
		if (i >= r->nbins) {
			profil_count_add(arm->cnt, PROFIL_TC_MISSED, n);
			if (!atomic_xchg(&arm->full, 1))
				profil_session_kick(sess);
			return;
		}
		WRITE_ONCE(pcs[i], pc);
		profil_count_add(arm->cnt, PROFIL_TC_SAMPLES, 1);
	}
}

/* The user PC of current; a tick in the kernel is charged to it too. */
static notrace u64 profil_user_pc(struct pt_regs *regs)
{
	if (!regs || !user_mode(regs))
		regs = task_pt_regs(current);
	return instruction_pointer(regs);
}

/*
 * Count a tick taken that charged @owed periods; return the samples it
 * gives, at most what one add to a bin takes.
 */
static notrace u32 profil_ticked(const struct profil_arm *arm, u64 owed)
{
	profil_count_add(arm->cnt, PROFIL_TC_TICKS, 1);
	return min_t(u64, owed, U32_MAX);
}

static notrace void profil_tick(struct perf_event *event,
				struct perf_sample_data *data,
				struct pt_regs *regs)
{
	struct profil_arm *arm = event->overflow_handler_context;
	u32 n = profil_ticked(arm, profil_clock_charge(arm, event));

	if (!n)
		return;

	/*
	 * Nowhere to count: an io_uring worker of the process, the window
	 * between exec's switch of mm and remove_on_exec, or a buffer that
	 * an invalidation may have taken from the process, until the
	 * recheck (profil_arm_fault(), profil_regions_recheck()), or a
	 * re-arm whose old file is being written (profil_session_start()).
	 */
	if (unlikely(current->mm != arm->sess->mn.mm ||
		     (current->flags & (PF_KTHREAD | PF_IO_WORKER)) ||
		     atomic_read(&arm->faulted) || READ_ONCE(arm->held))) {
		profil_count_add(arm->cnt, PROFIL_TC_MISSED, n);
		return;
	}
	/* Paused by the process (moncontrol(0)), through its image. */
	if (arm->out && !READ_ONCE(profil_output_ctl(arm)->enable)) {
		profil_count_add(arm->cnt, PROFIL_TC_PAUSED, n);
		return;
	}
	if (arm->mode == PROFIL_MODE_PCSAMPLE)
		profil_store_pc(arm, profil_user_pc(regs), n);
	else
		profil_count(arm, profil_user_pc(regs), n);
}

/*
 * The tick of an attachment (attach.c).  It charges the event's own count:
 * the clock table's entries of the target's threads are the target's own
 * session's.  It counts only while the attachment lasts, on the memory
 * attached to, and under the credentials it had.
 */
static notrace void profil_attach_tick(struct perf_event *event,
				       struct perf_sample_data *data,
				       struct pt_regs *regs)
{
	struct profil_arm *arm = event->overflow_handler_context;
	u32 n = profil_ticked(arm, profil_clock_charge_event(arm, event));

	if (!n)
		return;
	if (unlikely(!profil_attach_counts(arm->att))) {
		profil_count_add(arm->cnt, PROFIL_TC_MISSED, n);
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

	return perf_event_create_kernel_counter(&attr, -1, t,
						arm->att ? profil_attach_tick :
							   profil_tick, arm);
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

/* Snapshot the live threads of @p's thread group, referenced. */
static int profil_threads_snapshot(struct task_struct *p,
				   struct task_struct ***tsp)
{
	struct task_struct *t, **ts;
	int n, max = get_nr_threads(p) + 8;

retry:
	ts = kvmalloc_array(max, sizeof(*ts), GFP_KERNEL);
	if (!ts)
		return -ENOMEM;
	n = 0;
	rcu_read_lock();
	for_each_thread(p, t) {
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

/* One pass over @p's threads; how many it attached, or -errno. */
static int profil_events_pass(struct profil_arm *arm, struct task_struct *p)
{
	struct task_struct **ts, **cov;
	int i, n, nr_cov, added = 0, ret;

	/*
	 * Threads first: each is referenced, so no stale pointer among the
	 * covered ones can equal a thread of the snapshot but itself.
	 */
	n = profil_threads_snapshot(p, &ts);
	if (n < 0)
		return n;
	nr_cov = profil_covered_tasks(arm, &cov);
	for (i = 0, ret = min(nr_cov, 0); i < n; i++) {
		/* Without memory, charged on its event: no error. */
		if (!arm->att)
			profil_clock_add(ts[i], GFP_KERNEL_ACCOUNT);
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
 * profil_events_start - sample every thread of @t's process
 * @arm: a pinned arm
 * @t: current, or a forked child being taken over (fork.c)
 *
 * Threads created while this runs by a thread already covered inherit an
 * event; those created by a thread not yet covered are found by the next
 * pass, so passes repeat until one finds nothing to attach.
 *
 * Return: 0, or -errno (-EINTR on a fatal signal) with no event left
 * behind.
 */
int profil_events_start(struct profil_arm *arm, struct task_struct *t)
{
	int ret;

	do {
		ret = profil_events_pass(arm, t);
		if (ret > 0 && fatal_signal_pending(current))
			ret = -EINTR;
	} while (ret > 0);
	if (ret < 0)
		profil_events_stop(arm);
	return ret;
}

/*
 * The CPU time that @ev's thread, and the threads that inherited it, ran
 * under it: its time running, which the charges (clock.c) leave alone.
 */
static u64 profil_event_ran(struct perf_event *ev)
{
	u64 enabled, running;

	perf_event_read_value(ev, &enabled, &running);
	return running;
}

/**
 * profil_events_ran - the CPU time the threads ran under @arm's events
 * @arm: an attachment's arm, its events' release excluded by the caller
 *
 * Return: the time of the events released (profil_events_stop()) and of
 * those still there, ns.
 */
u64 profil_events_ran(const struct profil_arm *arm)
{
	u64 ran = arm->ran_ns;
	unsigned int i;

	for (i = 0; i < arm->nr_events; i++)
		ran += profil_event_ran(arm->events[i]);
	return ran;
}

/**
 * profil_events_stop - release every event of @arm
 * @arm: the arm
 *
 * Returns with no tick running or pending for @arm, on any CPU.
 */
void profil_events_stop(struct profil_arm *arm)
{
	struct perf_event *ev;

	while (arm->nr_events) {
		ev = arm->events[--arm->nr_events];
		if (arm->att)
			arm->ran_ns += profil_event_ran(ev);
		perf_event_release_kernel(ev);
	}
	kfree(arm->events);
	arm->events = NULL;
	arm->max_events = 0;
}
