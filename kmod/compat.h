/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What differs between the kernels profil.ko builds for (Debian's 6.1 and
 * 6.12), in one place.  Tests are by feature: a configuration option, or a
 * PROFIL_HAVE_* that kmod/Kbuild sets from the headers built against.
 */
#ifndef _PROFIL_COMPAT_H
#define _PROFIL_COMPAT_H

#include <linux/cgroup.h>
#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/sched.h>

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
