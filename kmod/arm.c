// SPDX-License-Identifier: GPL-2.0
/*
 * Arms, and the one state machine they carry: faults.
 *
 * A pin keeps the pages, not the mapping: after munmap(), mremap(),
 * mprotect(PROT_READ) or MADV_DONTNEED the process no longer sees them, and
 * the tick must write there no more.  Each region's pages carry an
 * mmu_interval_notifier (buffer.c) whose invalidations come here:
 *
 *   not live     the arm is being pinned; the invalidation only moves the
 *                notifier's sequence on, and profil_arm_go_live() sees it
 *                and makes the pin start over.
 *   live         counting.  An invalidation that may take pages away sets
 *                @faulted, waits until no tick can still be writing
 *                (profil_arm_invalidated()) and queues the session's settle
 *                work.
 *   faulted      the tick counts in 'missed' instead.  The settle work, in
 *                process context, faults the pages in again where they can
 *                be (profil_arm_fault_in(), outside the session lock: reclaim
 *                unmaps pinned shmem pages, soft-dirty tracking write-
 *                protects them) and then, under the session lock, looks them
 *                up without faulting (profil_arm_in_place_locked()): every
 *                one the pinned page, mapped writable at its address, with
 *                no invalidation in between?  Then @faulted is cleared and
 *                counting resumes; otherwise the session stops the arm with
 *                PROFIL_STOP_FAULT.
 *
 * Many invalidations are harmless: splitting a transparent huge page that
 * holds the buffer, khugepaged, reclaim of a pinned shmem page, a PTE made
 * read-only and writable again.  So a fault never ends a session by itself;
 * only a page that is really gone or replaced does.
 */
#include <linux/mm.h>
#include <linux/slab.h>

#include "profil_internal.h"

/* Lookups an invalidation may spoil before a check gives up. */
#define PROFIL_LOOKUP_TRIES	8

/* Every arm's id, from 1 (clock.c). */
static atomic64_t profil_arm_ids = ATOMIC64_INIT(0);

/* Pages looked up at a time. */
#define PROFIL_LOOKUP_BATCH	32

struct profil_arm *profil_arm_alloc(u32 nr_regions)
{
	struct profil_arm *arm;

	arm = kvzalloc(struct_size(arm, regions, nr_regions),
		       GFP_KERNEL_ACCOUNT);
	if (!arm)
		return NULL;
	arm->id = atomic64_inc_return(&profil_arm_ids);
	refcount_set(&arm->ref, 1);
	spin_lock_init(&arm->fault_lock);
	arm->nr_all = nr_regions;
	return arm;
}

/*
 * A new, unpinned arm with @src's configuration, for inheritance at fork:
 * for the child @t, whose output it becomes, in @dir (referenced by the
 * caller, taken when the child was forked).  Return: the arm, or an
 * ERR_PTR().
 */
struct profil_arm *profil_arm_clone(const struct profil_arm *src,
				    struct file *dir, struct task_struct *t)
{
	struct profil_arm *arm = profil_arm_alloc(src->nr_all);
	const struct profil_kregion *s = src->regions;
	struct profil_kregion *r;
	int ret;

	if (!arm)
		return ERR_PTR(-ENOMEM);
	/* A file kept is the parent's business: the child has its own. */
	arm->flags = src->flags & ~PROFIL_F_KEEP_FILE;
	arm->mode = src->mode;
	arm->rate = src->rate;
	arm->period_ns = src->period_ns;
	arm->nr_regions = src->nr_regions;
	profil_for_each_region(arm, r) {
		r->offset = s->offset;
		r->nbins = s->nbins;
		r->scale = s->scale;
		r->flags = s->flags;
		r->uaddr = s->uaddr;
		s++;
	}
	if (src->overflow)
		arm->overflow = &arm->regions[src->overflow - src->regions];
	ret = profil_index_build(arm);
	if (!ret)
		ret = profil_output_clone(arm, src, dir, t);
	if (ret) {
		profil_arm_put(arm);
		return ERR_PTR(ret);
	}
	return arm;
}

/* No tick runs with @arm any more: only RCU readers may still look. */
static void profil_arm_free(struct profil_arm *arm)
{
	profil_output_free(arm->out);
	kvfree(arm->index);
	kvfree(arm->spans);
	kvfree_rcu(arm, rcu);
}

void profil_arm_put(struct profil_arm *arm)
{
	if (refcount_dec_and_test(&arm->ref))
		profil_arm_free(arm);
}

static void profil_arm_free_rcu(struct rcu_head *rcu)
{
	struct profil_arm *arm = container_of(rcu, struct profil_arm, rcu);

	/* vfree() and fput() defer themselves from here (softirq). */
	profil_output_free(arm->out);
	kvfree(arm->index);
	kvfree(arm->spans);
	kvfree(arm);
}

/*
 * Drop a reference where nothing may sleep (the fork probe), where kvfree()
 * may not sleep: the last one frees from RCU.  Module exit waits for these
 * callbacks (rcu_barrier()).
 */
void profil_arm_put_atomic(struct profil_arm *arm)
{
	if (refcount_dec_and_test(&arm->ref))
		call_rcu(&arm->rcu, profil_arm_free_rcu);
}

/**
 * profil_arm_go_live - end the pinning of @arm, if nothing moved under it
 * @arm: an arm whose pages were looked up after profil_regions_read_begin()
 *
 * Return: true if no invalidation came since: from here on any invalidation
 * faults the arm.  False if the pages must be looked up again.  (Breaking
 * copy-on-write to pin a page invalidates it, so a first attempt on fresh
 * memory usually fails.)
 */
bool profil_arm_go_live(struct profil_arm *arm)
{
	bool ok;

	spin_lock(&arm->fault_lock);
	ok = profil_regions_unchanged(arm);
	arm->live = ok;
	spin_unlock(&arm->fault_lock);
	return ok;
}

/*
 * From now on the tick writes nothing.  When @sync, a tick that already
 * passed its check (hard irq: an RCU read-side section) has finished when
 * this returns, so no write follows the syscall that got us here.  One
 * grace period serves every region an invalidation covers.
 */
static void profil_arm_fault(struct profil_arm *arm, bool sync)
{
	bool first = !atomic_xchg(&arm->faulted, 1);

	if (first)
		WRITE_ONCE(arm->fault_gp, get_state_synchronize_rcu());
	if (sync)
		cond_synchronize_rcu(READ_ONCE(arm->fault_gp));
	if (first)
		profil_session_kick(arm->sess);
}

/**
 * profil_arm_invalidated - an invalidation may take pages of @arm away
 * @arm: the arm the notifier belongs to
 * @mni: the span's notifier
 * @cur_seq: the sequence the invalidation brings
 * @blockable: the invalidation may sleep
 */
void profil_arm_invalidated(struct profil_arm *arm,
			    struct mmu_interval_notifier *mni,
			    unsigned long cur_seq, bool blockable)
{
	bool live;

	spin_lock(&arm->fault_lock);
	mmu_interval_set_seq(mni, cur_seq);
	live = arm->live;
	spin_unlock(&arm->fault_lock);
	if (live)
		profil_arm_fault(arm, blockable);
}

/**
 * profil_arm_fault_in - map @arm's pages writable again where they can be
 * @arm: a faulted arm, referenced; its regions' configuration is read only
 *
 * Runs on the arm's mm, with no lock of ours held: a write fault on each
 * page brings back a pinned shmem page that reclaim unmapped and makes a
 * write-protected PTE writable, as the process's own next write would.
 * FOLL_NOWAIT: nothing here waits for I/O or a userfaultfd handler; a page
 * that cannot be had at once is simply not in place.
 */
void profil_arm_fault_in(struct profil_arm *arm)
{
	struct page *pages[PROFIL_LOOKUP_BATCH];
	struct profil_span *s;
	unsigned long addr, left;
	long n;

	profil_for_each_span(arm, s) {
		addr = s->start;
		left = s->nr_pages;
		while (left) {
			n = min_t(unsigned long, left, ARRAY_SIZE(pages));
			n = get_user_pages_unlocked(addr, n, pages,
						    FOLL_WRITE | FOLL_NOWAIT);
			if (n <= 0)
				break;
			release_pages(pages, n);
			addr += n << PAGE_SHIFT;
			left -= n;
		}
	}
}

/*
 * @addr is not mapped writable: is that on its way back (a writable
 * mapping is still there: swap-in or writeback in flight, a userfaultfd)
 * or for good (unmapped, moved, read-only)?
 */
static enum profil_place profil_addr_place(unsigned long addr)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	bool writable;

	mmap_read_lock(mm);
	vma = find_vma(mm, addr);
	writable = vma && vma->vm_start <= addr && (vma->vm_flags & VM_WRITE);
	mmap_read_unlock(mm);
	return writable ? PROFIL_PENDING : PROFIL_GONE;
}

/* Are @s's pinned pages what current->mm maps, writable, at its address? */
static enum profil_place profil_span_mapped(const struct profil_span *s)
{
	struct page *pages[PROFIL_LOOKUP_BATCH];
	unsigned long i = 0, addr = s->start;
	int n, j;
	bool same = true;

	while (same && i < s->nr_pages) {
		n = min_t(unsigned long, s->nr_pages - i, ARRAY_SIZE(pages));
		n = get_user_pages_fast(addr + (i << PAGE_SHIFT), n,
					FOLL_WRITE | FOLL_NOFAULT, pages);
		if (n <= 0)
			return profil_addr_place(addr + (i << PAGE_SHIFT));
		for (j = 0; j < n; j++)
			same &= pages[j] == s->pages[i + j];
		release_pages(pages, n);
		i += n;
	}
	return same ? PROFIL_IN_PLACE : PROFIL_GONE;
}

static enum profil_place profil_regions_mapped(struct profil_arm *arm)
{
	enum profil_place place;
	struct profil_span *s;

	profil_for_each_span(arm, s) {
		place = profil_span_mapped(s);
		if (place != PROFIL_IN_PLACE)
			return place;
	}
	return PROFIL_IN_PLACE;
}

/**
 * profil_arm_in_place_locked - after a fault, is every buffer still in place?
 * @arm: a faulted arm; its session's lock held, on the arm's mm
 *
 * Looks the pages up without faulting, with no invalidation in between; if
 * they are all the pinned ones, mapped writable, clears @arm->faulted and
 * the tick counts again.
 *
 * Return: PROFIL_IN_PLACE if counting resumed; PROFIL_PENDING if a page is
 * not mapped yet where a writable mapping still is (the session looks
 * again later); PROFIL_GONE if the arm must stop.
 */
enum profil_place profil_arm_in_place_locked(struct profil_arm *arm)
{
	enum profil_place place = PROFIL_IN_PLACE;
	int tries;

	lockdep_assert_held(&arm->sess->lock);
	for (tries = 0; tries < PROFIL_LOOKUP_TRIES; tries++) {
		profil_regions_read_begin(arm);
		place = profil_regions_mapped(arm);
		if (place != PROFIL_IN_PLACE)
			return place;

		spin_lock(&arm->fault_lock);
		if (profil_regions_unchanged(arm)) {
			atomic_set(&arm->faulted, 0);
			spin_unlock(&arm->fault_lock);
			return PROFIL_IN_PLACE;
		}
		spin_unlock(&arm->fault_lock);
	}
	/* The pages kept moving under us: look again later. */
	return PROFIL_PENDING;
}
