/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What differs between the kernels profil.ko builds for (6.1 to mainline;
 * tested on Debian's 6.1 and 6.12), in one place.  Tests are by feature:
 * a configuration option, a macro, or a PROFIL_HAVE_* that kmod/Kbuild
 * sets from the headers built against.
 */
#ifndef _PROFIL_COMPAT_H
#define _PROFIL_COMPAT_H

#include <linux/cgroup.h>
#include <linux/fs.h>
#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/mount.h>
#include <linux/sched.h>

/*
 * A kthread_worker whose thread runs.  Since 6.14 kthread_create_worker()
 * leaves the thread asleep, uninterruptible (in the load average, and a
 * hung task after 120 s); kthread_run_worker(), a macro, wakes it.
 */
#ifdef kthread_run_worker
#define profil_run_worker(name)	kthread_run_worker(0, name)
#else
#define profil_run_worker(name)	kthread_create_worker(0, name)
#endif

/* list_count_nodes(): 6.3, and Debian's 6.1; before, our own. */
#ifndef PROFIL_HAVE_LIST_COUNT_NODES
static inline size_t list_count_nodes(struct list_head *head)
{
	struct list_head *pos;
	size_t count = 0;

	list_for_each(pos, head)
		count++;
	return count;
}
#endif

/*
 * The mount's idmapping, as vfs_unlink() and i_uid_into_vfsuid() take it:
 * a struct mnt_idmap since 6.3, the mount's user namespace before.
 */
#ifdef PROFIL_HAVE_MNT_IDMAP
#define profil_mnt_idmap(mnt)	mnt_idmap(mnt)
#else
#define profil_mnt_idmap(mnt)	mnt_user_ns(mnt)
#endif

/* @t's seccomp filter, compared only: which one, not what it says. */
static inline const void *profil_seccomp_filter(struct task_struct *t)
{
#ifdef CONFIG_SECCOMP_FILTER
	return READ_ONCE(t->seccomp.filter);
#else
	return NULL;
#endif
}

/* @t's io (blkcg) css, referenced, or NULL without CONFIG_BLK_CGROUP. */
static inline struct cgroup_subsys_state *profil_blkcg_get(struct task_struct *t)
{
#ifdef CONFIG_BLK_CGROUP
	return task_get_css(t, io_cgrp_id);
#else
	return NULL;
#endif
}

#endif /* _PROFIL_COMPAT_H */
