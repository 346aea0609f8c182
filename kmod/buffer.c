// SPDX-License-Identifier: GPL-2.0
/*
 * Pinning, accounting, kernel mapping and watching of histogram regions.
 *
 * Every page a region covers is pinned with FOLL_WRITE | FOLL_LONGTERM at
 * setup and charged to the mm's locked_vm (RLIMIT_MEMLOCK unless
 * CAP_IPC_LOCK), then mapped with vmap() so that the tick can add to a bin
 * from hard irq context without touching the user page tables.  The pins
 * taken here are released only by profil_regions_unpin(), which the session
 * calls once every event of the arm is gone.
 *
 * A pin keeps the pages, not the mapping: after munmap(), mremap(),
 * mprotect(PROT_READ) or MADV_DONTNEED the process no longer sees them.  So
 * each region's pages carry an mmu_interval_notifier, and an invalidation
 * that takes them from the process faults the arm (profil_arm_fault()).
 * Invalidations known to leave the same pages mapped writable are ignored:
 * fork's copy-on-write protection (MMU_NOTIFY_PROTECTION_PAGE; pinned pages
 * are copied for the child, the parent's stay writable), writeback's
 * cleaning, soft-dirty tracking, and a change of protection that keeps
 * VM_WRITE (NUMA hinting, mprotect to read-write-execute).  Others may or
 * may not take the pages away: splitting a transparent huge page that holds
 * the buffer, or khugepaged looking at it, invalidates 2 MiB around it with
 * MMU_NOTIFY_CLEAR, as MADV_DONTNEED does.  So a fault only suspends the
 * writes, and profil_regions_recheck() decides in process context: if every
 * page of the buffer is still mapped writable at its address, counting
 * resumes; otherwise the session ends.
 */
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "profil_internal.h"

/* Pin attempts an invalidation may spoil before setup gives up. */
#define PROFIL_PIN_TRIES	8

static unsigned long profil_region_bytes(const struct profil_kregion *r)
{
	return r->nbins << ((r->flags & PROFIL_REGION_U32) ? 2 : 1);
}

static unsigned long profil_region_start(const struct profil_kregion *r)
{
	return r->uaddr & PAGE_MASK;
}

static unsigned long profil_region_pages(const struct profil_kregion *r)
{
	if (!r->nbins)
		return 0;
	return (PAGE_ALIGN(r->uaddr + profil_region_bytes(r)) -
		profil_region_start(r)) >> PAGE_SHIFT;
}

/*
 * Is every page of @r within @range still in a VM_WRITE vma?  For
 * MMU_NOTIFY_PROTECTION_VMA only, whose callers (mprotect, NUMA hinting,
 * userfaultfd) hold mmap_lock and have set the new vm_flags already.
 */
static bool profil_range_writable(const struct mmu_notifier_range *range,
				  const struct profil_kregion *r)
{
	unsigned long start = profil_region_start(r);
	unsigned long addr = max(range->start, start);
	unsigned long end = min(range->end,
				start + (profil_region_pages(r) << PAGE_SHIFT));
	struct vm_area_struct *vma;

	while (addr < end) {
		vma = find_vma(range->mm, addr);
		if (!vma || vma->vm_start > addr || !(vma->vm_flags & VM_WRITE))
			return false;
		addr = vma->vm_end;
	}
	return true;
}

static bool profil_range_keeps_pages(const struct mmu_notifier_range *range,
				     const struct profil_kregion *r)
{
	switch (range->event) {
	case MMU_NOTIFY_PROTECTION_PAGE:
	case MMU_NOTIFY_SOFT_DIRTY:
		return true;
	case MMU_NOTIFY_PROTECTION_VMA:
		return profil_range_writable(range, r);
	default:
		return false;
	}
}

static bool profil_region_invalidate(struct mmu_interval_notifier *mni,
				     const struct mmu_notifier_range *range,
				     unsigned long cur_seq)
{
	struct profil_kregion *r = container_of(mni, struct profil_kregion,
						mni);
	struct profil_arm *arm = r->arm;
	bool live;

	/* The mm is going away: ->release stops the arm right after. */
	if (range->event == MMU_NOTIFY_RELEASE)
		return true;
	if (profil_range_keeps_pages(range, r))
		return true;

	spin_lock(&arm->fault_lock);
	mmu_interval_set_seq(mni, cur_seq);
	live = arm->live;
	spin_unlock(&arm->fault_lock);
	/* Before @live, profil_regions_pin() sees the new seq and retries. */
	if (live)
		profil_arm_fault(arm, mmu_notifier_range_blockable(range));
	return true;
}

static const struct mmu_interval_notifier_ops profil_mni_ops = {
	.invalidate = profil_region_invalidate,
};

static void profil_region_unpin(struct profil_kregion *r)
{
	if (!r->pages)
		return;
	vunmap(r->vbase);
	unpin_user_pages_dirty_lock(r->pages, r->nr_pages, true);
	kvfree(r->pages);
	r->pages = NULL;
	r->vbase = NULL;
	r->bins = NULL;
}

static int profil_region_pin(struct profil_kregion *r)
{
	unsigned long nr = profil_region_pages(r);
	long pinned;
	int ret;

	if (!nr)
		return 0;
	r->pages = kvmalloc_array(nr, sizeof(*r->pages), GFP_KERNEL_ACCOUNT);
	if (!r->pages)
		return -ENOMEM;

	pinned = pin_user_pages_fast(profil_region_start(r), nr,
				     FOLL_WRITE | FOLL_LONGTERM, r->pages);
	if (pinned != nr) {
		/* A partial pin is undone; any hole or RO page is -EFAULT. */
		if (pinned > 0)
			unpin_user_pages(r->pages, pinned);
		ret = pinned < 0 ? pinned : -EFAULT;
		goto err_free;
	}

	r->vbase = vmap(r->pages, nr, VM_MAP, PAGE_KERNEL);
	if (!r->vbase) {
		unpin_user_pages(r->pages, nr);
		ret = -ENOMEM;
		goto err_free;
	}
	r->nr_pages = nr;
	r->bins = r->vbase + offset_in_page(r->uaddr);
	return 0;

err_free:
	kvfree(r->pages);
	r->pages = NULL;
	return ret;
}

static int profil_region_watch(struct profil_kregion *r, struct profil_arm *arm)
{
	unsigned long nr = profil_region_pages(r);
	int ret;

	r->arm = arm;
	if (!nr)
		return 0;
	ret = mmu_interval_notifier_insert(&r->mni, arm->sess->mn.mm,
					   profil_region_start(r),
					   nr << PAGE_SHIFT, &profil_mni_ops);
	if (ret)
		return ret;
	r->mni_on = true;
	return 0;
}

static void profil_regions_unpin_pages(struct profil_arm *arm)
{
	struct profil_kregion *r;

	for (r = arm->regions; r < arm->regions + arm->nr_all; r++)
		profil_region_unpin(r);
}

/* Record the notifiers' sequence before looking the pages up. */
static void profil_regions_read_begin(struct profil_arm *arm)
{
	struct profil_kregion *r;

	for (r = arm->regions; r < arm->regions + arm->nr_all; r++)
		if (r->mni_on)
			r->mni_seq = mmu_interval_read_begin(&r->mni);
}

/* Pin every region; nothing stays pinned on failure. */
static int profil_regions_pin_pages(struct profil_arm *arm)
{
	struct profil_kregion *r;
	int ret;

	profil_regions_read_begin(arm);
	for (r = arm->regions; r < arm->regions + arm->nr_all; r++) {
		ret = profil_region_pin(r);
		if (ret) {
			profil_regions_unpin_pages(arm);
			return ret;
		}
	}
	return 0;
}

/* No invalidation since profil_regions_read_begin()?  Under @fault_lock. */
static bool profil_regions_unchanged(struct profil_arm *arm)
{
	struct profil_kregion *r;

	lockdep_assert_held(&arm->fault_lock);
	for (r = arm->regions; r < arm->regions + arm->nr_all; r++)
		if (r->mni_on && mmu_interval_read_retry(&r->mni, r->mni_seq))
			return false;
	return true;
}

/*
 * No invalidation since the pages were looked up?  Then from here on any
 * invalidation faults the arm.  (Breaking copy-on-write to pin a page
 * invalidates it, so a first attempt on fresh memory usually fails.)
 */
static bool profil_regions_settled(struct profil_arm *arm)
{
	bool ok;

	spin_lock(&arm->fault_lock);
	ok = profil_regions_unchanged(arm);
	arm->live = ok;
	spin_unlock(&arm->fault_lock);
	return ok;
}

/**
 * profil_regions_pin - charge, watch, pin and map every region of @arm
 * @arm: an arm not yet started, with its session set
 *
 * Must be called from the process that owns the buffers, with no lock of
 * the session held.  On failure nothing stays pinned, watched or charged.
 *
 * Return: 0, -ENOMEM past RLIMIT_MEMLOCK or out of memory, -EFAULT if any
 * byte is not mapped writable, -EAGAIN if the buffer kept changing under
 * us.
 */
int profil_regions_pin(struct profil_arm *arm)
{
	struct profil_kregion *r;
	unsigned long total = 0;
	int ret, tries = 0;

	for (r = arm->regions; r < arm->regions + arm->nr_all; r++)
		total += profil_region_pages(r);

	ret = account_locked_vm(arm->sess->mn.mm, total, true);
	if (ret)
		return ret;
	arm->locked_pages = total;

	for (r = arm->regions; r < arm->regions + arm->nr_all; r++) {
		ret = profil_region_watch(r, arm);
		if (ret)
			goto err;
	}
	for (;;) {
		ret = profil_regions_pin_pages(arm);
		if (ret)
			goto err;
		if (profil_regions_settled(arm))
			return 0;
		profil_regions_unpin_pages(arm);
		if (++tries == PROFIL_PIN_TRIES) {
			ret = -EAGAIN;
			goto err;
		}
	}

err:
	profil_regions_unpin(arm);
	return ret;
}

/* Pages looked up at a time by profil_region_mapped(). */
#define PROFIL_RECHECK_BATCH	32

/* Are @r's pinned pages what current->mm maps, writable, at its address? */
static bool profil_region_mapped(const struct profil_kregion *r)
{
	struct page *pages[PROFIL_RECHECK_BATCH];
	unsigned long i = 0, addr = profil_region_start(r);
	int n, j;
	bool same = true;

	while (same && i < r->nr_pages) {
		n = min_t(unsigned long, r->nr_pages - i, ARRAY_SIZE(pages));
		n = get_user_pages_fast(addr + (i << PAGE_SHIFT), n,
					FOLL_WRITE | FOLL_NOFAULT, pages);
		if (n <= 0)
			return false;
		for (j = 0; j < n; j++) {
			same &= pages[j] == r->pages[i + j];
			put_page(pages[j]);
		}
		i += n;
	}
	return same;
}

static bool profil_regions_mapped(const struct profil_arm *arm)
{
	const struct profil_kregion *r;

	for (r = arm->regions; r < arm->regions + arm->nr_all; r++)
		if (!profil_region_mapped(r))
			return false;
	return true;
}

/**
 * profil_regions_recheck - after a fault, is every buffer still in place?
 * @arm: a faulted arm, its session locked
 *
 * Looks the pages up again, with no invalidation in between; if they are
 * all the pinned ones, mapped writable, clears @arm->faulted and the tick
 * counts again.  Runs on the process's mm (an ioctl, a forked child taking
 * over) or borrows it (the fault work, a kthread).
 *
 * Return: true if counting resumed, false if the arm must stop.
 */
bool profil_regions_recheck(struct profil_arm *arm)
{
	struct mm_struct *mm = arm->sess->mn.mm;
	bool ok = true, resumed = false, borrowed = false;
	int tries;

	if (current->mm != mm) {
		if (!(current->flags & PF_KTHREAD) || current->mm ||
		    !mmget_not_zero(mm))
			return false;
		kthread_use_mm(mm);
		borrowed = true;
	}
	for (tries = 0; ok && !resumed && tries < PROFIL_PIN_TRIES; tries++) {
		profil_regions_read_begin(arm);
		ok = profil_regions_mapped(arm);

		spin_lock(&arm->fault_lock);
		if (ok && profil_regions_unchanged(arm)) {
			atomic_set(&arm->faulted, 0);
			resumed = true;
		}
		spin_unlock(&arm->fault_lock);
	}
	if (borrowed) {
		kthread_unuse_mm(mm);
		/* Maybe the last user: the teardown must not run in our work. */
		mmput_async(mm);
	}
	return resumed;
}

/**
 * profil_regions_unpin - undo profil_regions_pin()
 * @arm: an arm whose events are all released
 *
 * Safe on a partially set up arm, and from the mm's ->release.  May wait
 * for an invalidation in progress, so the caller holds no lock that
 * profil_region_invalidate() takes.
 */
void profil_regions_unpin(struct profil_arm *arm)
{
	struct profil_kregion *r;

	for (r = arm->regions; r < arm->regions + arm->nr_all; r++) {
		if (r->mni_on) {
			mmu_interval_notifier_remove(&r->mni);
			r->mni_on = false;
		}
	}
	profil_regions_unpin_pages(arm);
	account_locked_vm(arm->sess->mn.mm, arm->locked_pages, false);
	arm->locked_pages = 0;
}
