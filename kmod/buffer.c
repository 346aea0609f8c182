// SPDX-License-Identifier: GPL-2.0
/*
 * Accounting, pinning, kernel mapping and watching of histogram regions.
 *
 * Every page the regions of an arm cover is pinned with FOLL_WRITE |
 * FOLL_LONGTERM at setup and mapped with vmap(), so that the tick can add
 * to a bin from hard irq context without touching the user page tables.
 * Pages are taken once per arm, however many regions cover them: the
 * regions' page runs are merged into spans (struct profil_span), each
 * pinned, mapped and watched once, and each region's bins point into its
 * span's mapping.  So the pins, the vmap space and the notifiers of an
 * arm are bounded by the distinct pages charged to RLIMIT_MEMLOCK, not
 * by the number of regions.  The pins taken here are released only by
 * profil_regions_unpin(), once every event of the arm is gone (by the
 * write of its profile file, if it has one: write.c).
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
 * The interval notifier on each span hands invalidations to
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

static unsigned long profil_span_end(const struct profil_span *s)
{
	return s->start + (s->nr_pages << PAGE_SHIFT);
}

/*
 * Is every page of @s within @range still in a VM_WRITE vma?  For
 * MMU_NOTIFY_PROTECTION_VMA only, whose callers (mprotect, NUMA hinting,
 * userfaultfd) hold mmap_lock and have set the new vm_flags already.
 */
static bool profil_range_writable(const struct mmu_notifier_range *range,
				  const struct profil_span *s)
{
	unsigned long addr = max(range->start, s->start);
	unsigned long end = min(range->end, profil_span_end(s));
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
				     const struct profil_span *s)
{
	switch (range->event) {
	case MMU_NOTIFY_PROTECTION_PAGE:
	case MMU_NOTIFY_SOFT_DIRTY:
		return true;
	case MMU_NOTIFY_PROTECTION_VMA:
		return profil_range_writable(range, s);
	default:
		return false;
	}
}

static bool profil_span_invalidate(struct mmu_interval_notifier *mni,
				   const struct mmu_notifier_range *range,
				   unsigned long cur_seq)
{
	struct profil_span *s = container_of(mni, struct profil_span, mni);

	/* The mm is going away: ->release stops the arm right after. */
	if (range->event == MMU_NOTIFY_RELEASE)
		return true;
	if (profil_range_keeps_pages(range, s))
		return true;
	profil_arm_invalidated(s->arm, mni, cur_seq,
			       mmu_notifier_range_blockable(range));
	return true;
}

static const struct mmu_interval_notifier_ops profil_mni_ops = {
	.invalidate = profil_span_invalidate,
};

static void profil_span_unpin(struct profil_span *s)
{
	if (!s->pages)
		return;
	vunmap(s->vbase);
	unpin_user_pages_dirty_lock(s->pages, s->nr_pages, true);
	kvfree(s->pages);
	s->pages = NULL;
	s->vbase = NULL;
}

static int profil_span_pin(struct profil_span *s, unsigned int nofault)
{
	long pinned;
	int ret;

	s->pages = kvmalloc_array(s->nr_pages, sizeof(*s->pages),
				  GFP_KERNEL_ACCOUNT);
	if (!s->pages)
		return -ENOMEM;

	pinned = pin_user_pages_fast(s->start, s->nr_pages,
				     FOLL_WRITE | FOLL_LONGTERM | nofault,
				     s->pages);
	if (pinned != s->nr_pages) {
		/* A partial pin is undone; any hole or RO page is -EFAULT. */
		if (pinned > 0)
			unpin_user_pages(s->pages, pinned);
		ret = pinned < 0 ? pinned : -EFAULT;
		goto err_free;
	}

	s->vbase = vmap(s->pages, s->nr_pages, VM_MAP, PAGE_KERNEL);
	if (!s->vbase) {
		unpin_user_pages(s->pages, s->nr_pages);
		ret = -ENOMEM;
		goto err_free;
	}
	return 0;

err_free:
	kvfree(s->pages);
	s->pages = NULL;
	return ret;
}

static int profil_span_watch(struct profil_span *s, struct profil_arm *arm)
{
	int ret;

	s->arm = arm;
	ret = mmu_interval_notifier_insert(&s->mni, arm->sess->mn.mm, s->start,
					   s->nr_pages << PAGE_SHIFT,
					   &profil_mni_ops);
	if (ret)
		return ret;
	s->mni_on = true;
	return 0;
}

static void profil_regions_unpin_pages(struct profil_arm *arm)
{
	struct profil_kregion *r;
	struct profil_span *s;

	profil_for_each_span(arm, s)
		profil_span_unpin(s);
	profil_for_each_region(arm, r)
		r->bins = NULL;
}

/* Record the notifiers' sequence before looking the pages up. */
void profil_regions_read_begin(struct profil_arm *arm)
{
	struct profil_span *s;

	profil_for_each_span(arm, s)
		if (s->mni_on)
			s->mni_seq = mmu_interval_read_begin(&s->mni);
}

/* No invalidation since profil_regions_read_begin()?  Under @fault_lock. */
bool profil_regions_unchanged(struct profil_arm *arm)
{
	struct profil_span *s;

	lockdep_assert_held(&arm->fault_lock);
	profil_for_each_span(arm, s)
		if (s->mni_on && mmu_interval_read_retry(&s->mni, s->mni_seq))
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

static int profil_span_check_vmas(const struct profil_span *s,
				  struct mm_struct *mm)
{
	unsigned long addr = s->start, end = profil_span_end(s);
	struct vm_area_struct *vma;

	while (addr < end) {
		vma = find_vma(mm, addr);
		if (!vma || vma->vm_start > addr || !profil_vma_pinnable(vma))
			return -EFAULT;
		addr = vma->vm_end;
	}
	return 0;
}

/* The span that holds user address @addr (it has one). */
static struct profil_span *profil_span_of(struct profil_arm *arm,
					  unsigned long addr)
{
	u32 lo = 0, hi = arm->nr_spans, mid;

	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (arm->spans[mid].start <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return &arm->spans[lo];
}

/* Point every region's bins into the mapping of its span. */
static void profil_regions_map(struct profil_arm *arm)
{
	struct profil_kregion *r;
	struct profil_span *s;

	profil_for_each_region(arm, r) {
		if (!profil_region_pages(r))
			continue;
		s = profil_span_of(arm, r->uaddr);
		r->bins = s->vbase + (r->uaddr - s->start);
	}
}

/*
 * Check the mappings, then pin every span; nothing stays pinned on
 * failure.  A mapping changed between the check and the pin moves a
 * notifier's sequence on, and the caller starts over.
 */
static int profil_regions_pin_pages(struct profil_arm *arm,
				    unsigned int nofault)
{
	struct mm_struct *mm = arm->sess->mn.mm;
	struct profil_span *s;
	int ret = 0;

	profil_regions_read_begin(arm);
	mmap_read_lock(mm);
	profil_for_each_span(arm, s) {
		ret = profil_span_check_vmas(s, mm);
		if (ret)
			break;
	}
	mmap_read_unlock(mm);
	if (ret)
		return ret;

	profil_for_each_span(arm, s) {
		ret = profil_span_pin(s, nofault);
		if (ret) {
			profil_regions_unpin_pages(arm);
			return ret;
		}
	}
	profil_regions_map(arm);
	return 0;
}

static int profil_span_cmp(const void *a, const void *b)
{
	const struct profil_span *sa = a, *sb = b;

	if (sa->start != sb->start)
		return sa->start < sb->start ? -1 : 1;
	return 0;
}

/*
 * Make @arm's spans: the pages its regions cover, each page in one span,
 * overlapping and touching runs merged; freed with the arm.  Return: the
 * pages, or -ENOMEM.
 */
static long profil_spans_build(struct profil_arm *arm)
{
	struct profil_kregion *r;
	struct profil_span *sp;
	unsigned long total = 0;
	u32 i, n = 0;

	sp = kvcalloc(arm->nr_all, sizeof(*sp), GFP_KERNEL_ACCOUNT);
	if (!sp)
		return -ENOMEM;
	profil_for_each_region(arm, r) {
		if (!profil_region_pages(r))
			continue;
		sp[n].start = profil_region_start(r);
		sp[n].nr_pages = profil_region_pages(r);
		n++;
	}
	sort(sp, n, sizeof(*sp), profil_span_cmp, NULL);
	for (i = 0; i < n; i++) {
		struct profil_span *last = arm->nr_spans ?
					   &sp[arm->nr_spans - 1] : NULL;

		if (last && sp[i].start <= profil_span_end(last)) {
			if (profil_span_end(&sp[i]) > profil_span_end(last))
				last->nr_pages = (profil_span_end(&sp[i]) -
						  last->start) >> PAGE_SHIFT;
			continue;
		}
		sp[arm->nr_spans++] = sp[i];
	}
	for (i = 0; i < arm->nr_spans; i++)
		total += sp[i].nr_pages;
	arm->spans = sp;
	return total;
}

/*
 * Whether @cred has CAP_IPC_LOCK, unaudited: an unprivileged SETUP is no
 * denial worth a record.  Asked as @cred, as current:
 * has_capability_noaudit() is not exported to modules by 7.3.
 */
static bool profil_cred_ipc_lock(const struct cred *cred)
{
	const struct cred *old = override_creds(cred);
	bool ret = ns_capable_noaudit(&init_user_ns, CAP_IPC_LOCK);

	revert_creds(old);
	return ret;
}

/**
 * profil_user_charge - charge @nr pages to @cred's user
 * @cred: whose ->user is charged; the caller keeps it until the uncharge
 * @limit: RLIMIT_MEMLOCK, in pages, of the task charged for
 * @nr: pages to charge
 * @credit: pages counted as about to be released (an arm being replaced)
 *
 * As io_uring does, but the charge is made with CAP_IPC_LOCK too, only not
 * limited.  Shared by arms (their pins) and attachments (their bins).
 *
 * Return: 0, or -ENOMEM past @limit.
 */
int profil_user_charge(const struct cred *cred, unsigned long limit,
		       unsigned long nr, unsigned long credit)
{
	atomic_long_t *locked = &cred->user->locked_vm;
	bool bound = !profil_cred_ipc_lock(cred);
	long cur, new;

	cur = atomic_long_read(locked);
	do {
		new = cur + nr;
		if (new < cur ||
		    (bound && new - min_t(long, credit, cur) > limit))
			return -ENOMEM;
	} while (!atomic_long_try_cmpxchg(locked, &cur, new));
	return 0;
}

/* Undo profil_user_charge(@cred, ..., @nr, ...). */
void profil_user_uncharge(const struct cred *cred, unsigned long nr)
{
	atomic_long_sub(nr, &cred->user->locked_vm);
}

/*
 * Charge @nr pages to the user of @t (the caller, or a forked child taken
 * over), against @t's RLIMIT_MEMLOCK, counting @credit pages as about to
 * be released (the arm this one replaces).  The arm keeps the cred whose
 * user it charged (free_uid() is not exported everywhere).
 */
static int profil_charge(struct profil_arm *arm, unsigned long nr,
			 unsigned long credit, struct task_struct *t)
{
	const struct cred *cred = get_task_cred(t);
	unsigned long limit = task_rlimit(t, RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	int ret;

	ret = profil_user_charge(cred, limit, nr, credit);
	if (ret) {
		put_cred(cred);
		return ret;
	}
	arm->cred = cred;
	arm->charged = nr;
	atomic64_add(nr, &arm->sess->mn.mm->pinned_vm);
	return 0;
}

static void profil_uncharge(struct profil_arm *arm)
{
	if (!arm->cred)
		return;
	atomic64_sub(arm->charged, &arm->sess->mn.mm->pinned_vm);
	profil_user_uncharge(arm->cred, arm->charged);
	put_cred(arm->cred);
	arm->cred = NULL;
	arm->charged = 0;
}

/**
 * profil_regions_pin - charge, watch, pin and map every region of @arm
 * @arm: an arm not yet started, with its session set
 * @credit: pages the arm this one replaces has charged to @t's user
 * @t: the process's task that arms: current, or a forked child whose mm
 *	the caller (a kernel thread) uses
 *
 * Must be called on the mm that owns the buffers (current->mm: the process
 * itself, or a kernel thread that uses the mm of a forked child), its
 * session locked.  On failure nothing stays pinned, watched or charged.
 * For a child, a kernel thread faults nothing in that could wait (a
 * userfaultfd, I/O): its pages are faulted in with FOLL_NOWAIT first, then
 * pinned with FOLL_NOFAULT, and a page that is not there is -EFAULT.
 *
 * Return: 0, -ENOMEM past RLIMIT_MEMLOCK or out of memory, -EFAULT if any
 * byte is not mapped writable or lies in a shared file mapping, -EINTR on
 * a fatal signal, -EAGAIN if the buffer kept changing under us.
 */
int profil_regions_pin(struct profil_arm *arm, unsigned long credit,
		       struct task_struct *t)
{
	unsigned int nofault = t == current ? 0 : FOLL_NOFAULT;
	struct profil_span *s;
	long total;
	int ret, tries = 0;

	lockdep_assert_held(&arm->sess->lock);
	total = profil_spans_build(arm);
	if (total < 0)
		return total;
	ret = profil_charge(arm, total, credit, t);
	if (ret)
		goto err;

	profil_for_each_span(arm, s) {
		ret = profil_span_watch(s, arm);
		if (ret)
			goto err;
	}
	for (;;) {
		if (nofault)
			profil_arm_fault_in(arm);
		ret = profil_regions_pin_pages(arm, nofault);
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
 * profil_regions_unwatch - remove @arm's interval notifiers
 * @arm: an arm whose events are all released
 *
 * The pins stay: an ended arm's image is written after this (write.c).
 * May wait for an invalidation in progress, so the caller holds no lock
 * that profil_span_invalidate() takes.
 */
void profil_regions_unwatch(struct profil_arm *arm)
{
	struct profil_span *s;

	profil_for_each_span(arm, s) {
		if (s->mni_on) {
			mmu_interval_notifier_remove(&s->mni);
			s->mni_on = false;
		}
	}
}

/**
 * profil_regions_unpin - undo profil_regions_pin()
 * @arm: an arm whose events are all released
 *
 * Safe on a partially set up arm, from the mm's ->release, and from a
 * writer thread once the arm is unwatched (the mm is held by mmgrab()).
 */
void profil_regions_unpin(struct profil_arm *arm)
{
	profil_regions_unwatch(arm);
	profil_regions_unpin_pages(arm);
	profil_uncharge(arm);
	/*
	 * The spans themselves stay until the arm is freed: a settle that
	 * holds a reference may still walk their addresses (arm.c).
	 */
}
