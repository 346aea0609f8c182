// SPDX-License-Identifier: GPL-2.0
/*
 * Pinning, accounting and kernel mapping of histogram regions.
 *
 * Every page a region covers is pinned with FOLL_WRITE | FOLL_LONGTERM at
 * setup and charged to the mm's locked_vm (RLIMIT_MEMLOCK unless
 * CAP_IPC_LOCK), then mapped with vmap() so that the tick can add to a bin
 * from hard irq context without touching the user page tables.  The pins
 * taken here are released only by profil_regions_unpin(), which the session
 * calls once every event of the arm is gone.
 */
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "profil_internal.h"

static unsigned long profil_region_bytes(const struct profil_kregion *r)
{
	return r->nbins << ((r->flags & PROFIL_REGION_U32) ? 2 : 1);
}

static unsigned long profil_region_pages(const struct profil_kregion *r)
{
	unsigned long start = r->uaddr & PAGE_MASK;

	if (!r->nbins)
		return 0;
	return (PAGE_ALIGN(r->uaddr + profil_region_bytes(r)) - start) >>
	       PAGE_SHIFT;
}

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

	pinned = pin_user_pages_fast(r->uaddr & PAGE_MASK, nr,
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

static struct profil_kregion *profil_region_at(struct profil_arm *arm,
					       u32 i)
{
	return i < arm->nr_regions ? &arm->regions[i] : arm->overflow;
}

/**
 * profil_regions_pin - charge, pin and map every region of @arm
 * @arm: an arm not yet started, filled in by the ioctl
 *
 * Must be called from the process that owns the buffers.  On failure
 * nothing stays pinned or charged.
 *
 * Return: 0, -ENOMEM past RLIMIT_MEMLOCK or out of memory, -EFAULT if any
 * byte is not mapped writable.
 */
int profil_regions_pin(struct profil_arm *arm)
{
	u32 i, n = arm->nr_regions + !!arm->overflow;
	unsigned long total = 0;
	int ret;

	for (i = 0; i < n; i++)
		total += profil_region_pages(profil_region_at(arm, i));

	ret = account_locked_vm(arm->sess->mn.mm, total, true);
	if (ret)
		return ret;
	arm->locked_pages = total;

	for (i = 0; i < n; i++) {
		ret = profil_region_pin(profil_region_at(arm, i));
		if (ret)
			goto err_unpin;
	}
	return 0;

err_unpin:
	profil_regions_unpin(arm);
	return ret;
}

/**
 * profil_regions_unpin - undo profil_regions_pin()
 * @arm: an arm whose events are all released
 *
 * Safe on a partially pinned arm, and from the mm's ->release.
 */
void profil_regions_unpin(struct profil_arm *arm)
{
	u32 i, n = arm->nr_regions + !!arm->overflow;

	for (i = 0; i < n; i++)
		profil_region_unpin(profil_region_at(arm, i));
	account_locked_vm(arm->sess->mn.mm, arm->locked_pages, false);
	arm->locked_pages = 0;
}
