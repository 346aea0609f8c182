// SPDX-License-Identifier: GPL-2.0
/*
 * The timer that times the ticks: a perf PMU of profil.ko's own.
 *
 * A thread's ticks used to come from a task-clock event, whose hrtimer perf
 * cancels when the thread is switched out and starts again when it is
 * switched back in.  Each of those reprograms the CPU's timer when the
 * tick is the next thing due, which it mostly is: under TCG a fork + exit
 * + wait took 1.3x its CPU time with a sampling task-clock event on the
 * parent, and 1.05x with a counting one, which has no timer.
 *
 * So each profiled thread carries an event of this PMU instead (tick.c).
 * perf still does everything it did for the task-clock event: it switches
 * the event in and out with its thread (->add, ->del), inherits it to new
 * threads, removes it at exec, and releases it with its parent.  The timer
 * is the PMU's, one per CPU, and it is not cancelled when a thread is
 * switched out:
 *
 *  - ->start links the event into its CPU's list of the events of the
 *    thread running there, and brings the timer forward only if it is due
 *    later than the event's next tick; ->stop unlinks it and leaves the
 *    timer as it is.
 *  - Each event counts its thread's time on the CPU from ->start to
 *    ->stop, as the task clock does (@count, which clock.c charges when
 *    it keeps no clock for the thread), and the time left to its next
 *    tick (@hw.period_left).
 *  - The timer's callback ticks every listed event whose time has run
 *    out, through its overflow handler, and sets itself for the earliest
 *    of the next ones.  With no event listed it keeps going, at the last
 *    one's time left, for PROFIL_PMU_IDLE expiries, in case its thread
 *    comes back (a parent waiting for the child it forked), and then stops.
 *
 * Only profil.ko's own events are this PMU's: ->event_init refuses any other,
 * perf_event_open()'s included (EACCES).
 *
 * A CPU that goes offline has its pending timer moved to a CPU still up;
 * there the callback sees that the timer is not its own, and stops it.
 * Ticks on a CPU that comes back resume at its first switch in; the time
 * in between is charged then (clock.c), as a late tick's is.
 */
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/perf_event.h>
#include <linux/percpu.h>

#include <asm/irq_regs.h>

#include "compat.h"
#include "profil_internal.h"

/* The shortest time between two ticks of a thread, as perf's own timers. */
#define PROFIL_PMU_MIN_NS	10000
/* Expiries in a row with no event listed before the timer stops. */
#define PROFIL_PMU_IDLE		2

/*
 * One per CPU.  Used only on its CPU, with interrupts disabled: perf calls
 * ->add, ->del, ->start, ->stop and ->read so, and the timer's callback
 * runs in hard irq.
 */
struct profil_pmu_cpu {
	struct hrtimer timer;
	struct list_head active;	/* the started events, by hw.tp_list */
	u64 last_left;		/* time left of the last event stopped, ns */
	unsigned int idle;	/* expiries in a row with nothing listed */
};

static DEFINE_PER_CPU(struct profil_pmu_cpu, profil_pmu_cpu);

/* Bring @event's count and time left up to @now. */
static notrace void profil_pmu_update(struct perf_event *event, u64 now)
{
	u64 delta = now - local64_read(&event->hw.prev_count);

	local64_set(&event->hw.prev_count, now);
	local64_add(delta, &event->count);
	local64_sub(delta, &event->hw.period_left);
}

static notrace u64 profil_pmu_left(struct perf_event *event)
{
	return max_t(s64, local64_read(&event->hw.period_left),
		     PROFIL_PMU_MIN_NS);
}

/* Have the timer expire by @at; one due earlier is left alone. */
static notrace void profil_pmu_arm(struct profil_pmu_cpu *pc, u64 at)
{
	if (hrtimer_is_queued(&pc->timer) &&
	    ktime_to_ns(hrtimer_get_expires(&pc->timer)) <= at)
		return;
	hrtimer_start(&pc->timer, ns_to_ktime(at),
		      HRTIMER_MODE_ABS_PINNED_HARD);
}

static notrace void profil_pmu_start(struct perf_event *event, int flags)
{
	struct profil_pmu_cpu *pc = this_cpu_ptr(&profil_pmu_cpu);
	u64 now = ktime_get_ns();

	event->hw.state = 0;
	local64_set(&event->hw.prev_count, now);
	list_add_tail(&event->hw.tp_list, &pc->active);
	pc->idle = 0;
	profil_pmu_arm(pc, now + profil_pmu_left(event));
}

static notrace void profil_pmu_stop(struct perf_event *event, int flags)
{
	struct profil_pmu_cpu *pc = this_cpu_ptr(&profil_pmu_cpu);

	if (event->hw.state & PERF_HES_STOPPED)
		return;
	profil_pmu_update(event, ktime_get_ns());
	list_del(&event->hw.tp_list);
	pc->last_left = profil_pmu_left(event);
	event->hw.state = PERF_HES_STOPPED | PERF_HES_UPTODATE;
}

static notrace int profil_pmu_add(struct perf_event *event, int flags)
{
	event->hw.state = PERF_HES_STOPPED | PERF_HES_UPTODATE;
	if (flags & PERF_EF_START)
		profil_pmu_start(event, PERF_EF_RELOAD);
	return 0;
}

static notrace void profil_pmu_del(struct perf_event *event, int flags)
{
	profil_pmu_stop(event, PERF_EF_UPDATE);
}

static notrace void profil_pmu_read(struct perf_event *event)
{
	if (!(event->hw.state & PERF_HES_STOPPED))
		profil_pmu_update(event, ktime_get_ns());
}

static struct pmu profil_pmu;

static int profil_pmu_event_init(struct perf_event *event)
{
	if (event->attr.type != profil_pmu.type)
		return -ENOENT;
	if (!profil_is_tick(event))
		return -EACCES;
	if (!event->attr.sample_period || event->attr.freq)
		return -EINVAL;
	local64_set(&event->hw.period_left, event->attr.sample_period);
	return 0;
}

/* Tick @event if its time has run out; return its time left after. */
static notrace u64 profil_pmu_tick(struct perf_event *event, u64 now,
				   struct pt_regs *regs)
{
	profil_pmu_update(event, now);
	if ((s64)local64_read(&event->hw.period_left) > 0)
		return profil_pmu_left(event);
	/* profil_tick() or profil_attach_tick(), set at creation, for good */
	event->overflow_handler(event, NULL, regs);
	local64_set(&event->hw.period_left, event->attr.sample_period);
	return profil_pmu_left(event);
}

static notrace enum hrtimer_restart profil_pmu_expire(struct hrtimer *timer)
{
	struct profil_pmu_cpu *pc = container_of(timer, struct profil_pmu_cpu,
						 timer);
	struct pt_regs *regs = get_irq_regs();
	struct perf_event *event;
	u64 now, next = U64_MAX;

	/* A CPU that went offline left it here: not ours to run. */
	if (pc != this_cpu_ptr(&profil_pmu_cpu))
		return HRTIMER_NORESTART;
	now = ktime_get_ns();
	list_for_each_entry(event, &pc->active, hw.tp_list)
		next = min(next, now + profil_pmu_tick(event, now, regs));
	if (next == U64_MAX) {
		if (++pc->idle > PROFIL_PMU_IDLE)
			return HRTIMER_NORESTART;
		next = now + pc->last_left;
	}
	hrtimer_set_expires(timer, ns_to_ktime(next));
	return HRTIMER_RESTART;
}

static struct pmu profil_pmu = {
	.module		= THIS_MODULE,
	.task_ctx_nr	= perf_sw_context,
	.event_init	= profil_pmu_event_init,
	.add		= profil_pmu_add,
	.del		= profil_pmu_del,
	.start		= profil_pmu_start,
	.stop		= profil_pmu_stop,
	.read		= profil_pmu_read,
};

/* The attr.type of profil.ko's events. */
u32 profil_pmu_type(void)
{
	return profil_pmu.type;
}

int profil_pmu_init(void)
{
	struct profil_pmu_cpu *pc;
	int cpu;

	for_each_possible_cpu(cpu) {
		pc = per_cpu_ptr(&profil_pmu_cpu, cpu);
		hrtimer_setup(&pc->timer, profil_pmu_expire, CLOCK_MONOTONIC,
			      HRTIMER_MODE_ABS_PINNED_HARD);
		INIT_LIST_HEAD(&pc->active);
		pc->last_left = PROFIL_PMU_MIN_NS;
	}
	return perf_pmu_register(&profil_pmu, "profil", -1);
}

/* With no event left (each holds a module reference), so none listed. */
void profil_pmu_exit(void)
{
	int cpu;

	perf_pmu_unregister(&profil_pmu);
	for_each_possible_cpu(cpu)
		hrtimer_cancel(&per_cpu_ptr(&profil_pmu_cpu, cpu)->timer);
}
