// SPDX-License-Identifier: GPL-2.0
/*
 * Accounting, pinning, kernel mapping and watching of histogram regions.
 *
 * Every page a region covers is pinned with FOLL_WRITE | FOLL_LONGTERM at
 * setup and mapped with vmap(), so that the tick can add to a bin from hard
 * irq context without touching the user page tables.  The pins taken here
 * are released only by profil_regions_unpin(), which the session calls once
 * every event of the arm is gone.
 *
 * Buffers live in anonymous, shmem or hugetlbfs memory.  A MAP_SHARED
 * mapping of any other file is refused with -EFAULT, on every kernel: a
 * long-term writable pin of a page-cache page races with writeback, which
 * cleans and write-protects the page while we go on writing it (6.5 and
 * later refuse it in GUP themselves; 6.1 does not).  A MAP_PRIVATE file
 * mapping is fine: the write pin breaks copy-on-write into anonymous pages.
 *
 * Pins are charged, as io_uring charges its buffers, to the user's
 * locked_vm against RLIMIT_MEMLOCK (not enforced with CAP_IPC_LOCK), and
 * shown in the mm's pinned_vm (VmPin).  Being per user, the limit bounds
 * what one user pins, whatever the number of processes or forks; mlock()
 * counts in the mm's locked_vm instead, so a buffer both mlocked and pinned
 * is not charged twice to one counter.  A page that several regions of one
 * arm cover is charged once, and a re-arm is charged net of the arm it
 * replaces.
 *
 * The interval notifier on each region's pages hands invalidations to
 * arm.c, but for those known to leave the same pages mapped writable:
 * fork's copy-on-write protection (MMU_NOTIFY_PROTECTION_PAGE; pinned pages
 * are copied for the child, the parent's stay writable), soft-dirty
 * tracking, and a change of protection that keeps VM_WRITE (NUMA hinting,
 * mprotect to read-write-execute).
 */
#include <linux/cred.h>
#include <linux/hugetlb_inline.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/vmalloc.h>

#include "profil_internal.h"

/* Pin attempts an invalidation may spoil before setup gives up. */
#define PROFIL_PIN_TRIES	8

static unsigned long profil_region_bytes(const struct profil_kregion *r)
{
	return r->nbins << profil_bin_shift(r->flags);
}

unsigned long profil_region_start(const struct profil_kregion *r)
{
	return r->uaddr & PAGE_MASK;
}

unsigned long profil_region_pages(const struct profil_kregion *r)
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

	/* The mm is going away: ->release stops the arm right after. */
	if (range->event == MMU_NOTIFY_RELEASE)
		return true;
	if (profil_range_keeps_pages(range, r))
		return true;
	profil_arm_invalidated(r->arm, mni, cur_seq,
			       mmu_notifier_range_blockable(range));
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

	profil_for_each_region(arm, r)
		profil_region_unpin(r);
}

/* Record the notifiers' sequence before looking the pages up. */
void profil_regions_read_begin(struct profil_arm *arm)
{
	struct profil_kregion *r;

	profil_for_each_region(arm, r)
		if (r->mni_on)
			r->mni_seq = mmu_interval_read_begin(&r->mni);
}

/* No invalidation since profil_regions_read_begin()?  Under @fault_lock. */
bool profil_regions_unchanged(struct profil_arm *arm)
{
	struct profil_kregion *r;

	lockdep_assert_held(&arm->fault_lock);
	profil_for_each_region(arm, r)
		if (r->mni_on && mmu_interval_read_retry(&r->mni, r->mni_seq))
			return false;
	return true;
}

/*
 * May the pages of [start, end) be pinned for writing for the long term?
 * Anonymous, shmem and hugetlbfs memory, and private file mappings, whose
 * written pages are anonymous; not a shared mapping of another file.
 */
static bool profil_vma_pinnable(struct vm_area_struct *vma)
{
	struct file *file = vma->vm_file;

	if (!file || !(vma->vm_flags & VM_SHARED))
		return true;
	return shmem_mapping(file->f_mapping) || is_vm_hugetlb_page(vma);
}

static int profil_region_check_vmas(const struct profil_kregion *r,
				    struct mm_struct *mm)
{
	unsigned long addr = profil_region_start(r);
	unsigned long end = addr + (profil_region_pages(r) << PAGE_SHIFT);
	struct vm_area_struct *vma;

	while (addr < end) {
		vma = find_vma(mm, addr);
		if (!vma || vma->vm_start > addr || !profil_vma_pinnable(vma))
			return -EFAULT;
		addr = vma->vm_end;
	}
	return 0;
}

/*
 * Check the mappings, then pin every region; nothing stays pinned on
 * failure.  A mapping changed between the check and the pin moves a
 * notifier's sequence on, and the caller starts over.
 */
static int profil_regions_pin_pages(struct profil_arm *arm)
{
	struct mm_struct *mm = arm->sess->mn.mm;
	struct profil_kregion *r;
	int ret = 0;

	profil_regions_read_begin(arm);
	mmap_read_lock(mm);
	profil_for_each_region(arm, r) {
		ret = profil_region_check_vmas(r, mm);
		if (ret)
			break;
	}
	mmap_read_unlock(mm);
	if (ret)
		return ret;

	profil_for_each_region(arm, r) {
		ret = profil_region_pin(r);
		if (ret) {
			profil_regions_unpin_pages(arm);
			return ret;
		}
	}
	return 0;
}

struct profil_span {
	unsigned long start, end;	/* pages */
};

static int profil_span_cmp(const void *a, const void *b)
{
	const struct profil_span *sa = a, *sb = b;

	if (sa->start != sb->start)
		return sa->start < sb->start ? -1 : 1;
	return 0;
}

/* Pages the regions of @arm cover, each page counted once. */
static long profil_regions_distinct_pages(struct profil_arm *arm)
{
	struct profil_kregion *r;
	struct profil_span *sp;
	unsigned long end = 0, total = 0;
	u32 i, n = 0;

	sp = kvmalloc_array(arm->nr_all, sizeof(*sp), GFP_KERNEL);
	if (!sp)
		return -ENOMEM;
	profil_for_each_region(arm, r) {
		if (!profil_region_pages(r))
			continue;
		sp[n].start = profil_region_start(r) >> PAGE_SHIFT;
		sp[n].end = sp[n].start + profil_region_pages(r);
		n++;
	}
	sort(sp, n, sizeof(*sp), profil_span_cmp, NULL);
	for (i = 0; i < n; i++) {
		if (sp[i].end <= end)
			continue;
		total += sp[i].end - max(sp[i].start, end);
		end = sp[i].end;
	}
	kvfree(sp);
	return total;
}

/*
 * Charge @nr pages to the caller's user, counting @credit pages as about
 * to be released (the arm this one replaces).  As io_uring does, but the
 * charge is made with CAP_IPC_LOCK too, only not limited.
 */
static int profil_charge(struct profil_arm *arm, unsigned long nr,
			 unsigned long credit)
{
	struct user_struct *user = current_user();
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	bool bound = !capable(CAP_IPC_LOCK);
	long cur, new;

	cur = atomic_long_read(&user->locked_vm);
	do {
		new = cur + nr;
		if (new < cur)
			return -ENOMEM;
		if (bound && new - min_t(long, credit, cur) > limit)
			return -ENOMEM;
	} while (!atomic_long_try_cmpxchg(&user->locked_vm, &cur, new));

	arm->user = get_uid(user);
	arm->charged = nr;
	atomic64_add(nr, &arm->sess->mn.mm->pinned_vm);
	return 0;
}

static void profil_uncharge(struct profil_arm *arm)
{
	if (!arm->user)
		return;
	atomic64_sub(arm->charged, &arm->sess->mn.mm->pinned_vm);
	atomic_long_sub(arm->charged, &arm->user->locked_vm);
	free_uid(arm->user);
	arm->user = NULL;
	arm->charged = 0;
}

/**
 * profil_regions_pin - charge, watch, pin and map every region of @arm
 * @arm: an arm not yet started, with its session set
 * @credit: pages the arm this one replaces has charged to the caller's user
 *
 * Must be called from the process that owns the buffers, its session
 * locked.  On failure nothing stays pinned, watched or charged.
 *
 * Return: 0, -ENOMEM past RLIMIT_MEMLOCK or out of memory, -EFAULT if any
 * byte is not mapped writable or lies in a shared file mapping, -EINTR on
 * a fatal signal, -EAGAIN if the buffer kept changing under us.
 */
int profil_regions_pin(struct profil_arm *arm, unsigned long credit)
{
	struct profil_kregion *r;
	long total;
	int ret, tries = 0;

	lockdep_assert_held(&arm->sess->lock);
	total = profil_regions_distinct_pages(arm);
	if (total < 0)
		return total;
	ret = profil_charge(arm, total, credit);
	if (ret)
		return ret;

	profil_for_each_region(arm, r) {
		ret = profil_region_watch(r, arm);
		if (ret)
			goto err;
	}
	for (;;) {
		ret = profil_regions_pin_pages(arm);
		if (ret)
			goto err;
		if (profil_arm_go_live(arm))
			return 0;
		profil_regions_unpin_pages(arm);
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto err;
		}
		if (++tries == PROFIL_PIN_TRIES) {
			ret = -EAGAIN;
			goto err;
		}
	}

err:
	profil_regions_unpin(arm);
	return ret;
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

	profil_for_each_region(arm, r) {
		if (r->mni_on) {
			mmu_interval_notifier_remove(&r->mni);
			r->mni_on = false;
		}
	}
	profil_regions_unpin_pages(arm);
	profil_uncharge(arm);
}
