/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What differs between the kernels profil.ko builds for (6.1 to mainline;
 * tested on Debian's 6.1 and 6.12, built against Debian's newest), in one
 * place.  Tests are by feature:
 * a configuration option, a macro, or a PROFIL_HAVE_* that kmod/Kbuild
 * sets from the headers built against.
 */
#ifndef _PROFIL_COMPAT_H
#define _PROFIL_COMPAT_H

#include <linux/cgroup.h>
#include <linux/fs.h>
#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/sched.h>
#include <linux/sched/coredump.h>
#ifdef PROFIL_HAVE_TASK_EXEC_STATE
#include <linux/sched/exec_state.h>
#endif
#include <linux/string.h>

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

/*
 * The parameters of a sched_process_exit probe: by 7.3 (not in 6.12) it
 * also says whether the thread group died.  The task is @t.
 */
#ifdef PROFIL_HAVE_EXIT_GROUP_DEAD
#define PROFIL_EXIT_PROBE_ARGS	struct task_struct *t, bool group_dead
#else
#define PROFIL_EXIT_PROBE_ARGS	struct task_struct *t
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

/*
 * Look @name up in @dir for an unlink, with @dir locked: a dentry, maybe
 * negative, or an ERR_PTR with @dir unlocked again.  The VFS does this
 * itself since start_removing() (6.19, checking MAY_EXEC on @dir; a name
 * with nothing there is -ENOENT), which replaced lookup_noperm() (6.16),
 * which replaced lookup_one_len().  vfs_unlink() checks MAY_WRITE |
 * MAY_EXEC in all.
 */
#ifdef PROFIL_HAVE_START_REMOVING
static inline struct dentry *profil_start_removing(const struct path *dir,
						   const char *name)
{
	struct qstr q = QSTR_INIT(name, strlen(name));

	return start_removing(profil_mnt_idmap(dir->mnt), dir->dentry, &q);
}

static inline void profil_end_removing(struct dentry *d)
{
	end_removing(d);
}
#else
static inline struct dentry *profil_start_removing(const struct path *dir,
						   const char *name)
{
	struct inode *dino = d_inode(dir->dentry);
	struct dentry *d;
#ifdef PROFIL_HAVE_LOOKUP_NOPERM
	struct qstr q = QSTR_INIT(name, strlen(name));
#endif

	inode_lock_nested(dino, I_MUTEX_PARENT);
#ifdef PROFIL_HAVE_LOOKUP_NOPERM
	d = lookup_noperm(&q, dir->dentry);
#else
	d = lookup_one_len(name, dir->dentry, strlen(name));
#endif
	if (IS_ERR(d))
		inode_unlock(dino);
	return d;
}

/* The parent is locked, so @d->d_parent is stable. */
static inline void profil_end_removing(struct dentry *d)
{
	inode_unlock(d_inode(d->d_parent));
	dput(d);
}
#endif

/*
 * May @t's process be dumped (and so have files written) as its owner?
 * Dumpability was two bits of the mm; by 7.2 it is the task's exec_state
 * (read here as the exported accessor would, which is not exported).
 */
static inline bool profil_dumpable(struct task_struct *t, struct mm_struct *mm)
{
#ifdef PROFIL_HAVE_TASK_EXEC_STATE
	const struct task_exec_state *es;
	bool ret;

	rcu_read_lock();
	es = rcu_dereference(t->exec_state);
	ret = es && READ_ONCE(es->dumpable) == TASK_DUMPABLE_OWNER;
	rcu_read_unlock();
	return ret;
#else
	return get_dumpable(mm) == SUID_DUMP_USER;
#endif
}

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

/*
 * Set and clear flags of a VMA being mapped: vm_flags_set() and
 * vm_flags_clear() since 6.3 (vm_flags became read-only), a plain field
 * before.
 */
#ifdef PROFIL_HAVE_VM_FLAGS_SET
static inline void profil_vm_flags_mod(struct vm_area_struct *vma,
				       vm_flags_t set, vm_flags_t clear)
{
	vm_flags_set(vma, set);
	vm_flags_clear(vma, clear);
}
#else
static inline void profil_vm_flags_mod(struct vm_area_struct *vma,
				       unsigned long set, unsigned long clear)
{
	vma->vm_flags = (vma->vm_flags | set) & ~clear;
}
#endif

#endif /* _PROFIL_COMPAT_H */
