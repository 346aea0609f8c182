// SPDX-License-Identifier: GPL-2.0
/*
 * Attachments: profiling another process (PROFIL_IOC_ATTACH).
 *
 * The target is not touched: nothing is read from or written to its
 * memory, nothing is pinned there.  Its threads carry task-clock events as
 * a session's do (tick.c: root events on the threads found at attach,
 * inherited by the threads they create, removed at exec), whose tick
 * counts into bins in kernel memory that the caller maps read-only through
 * its /dev/profil fd, as kcov's area is.
 *
 * Permission is ptrace's, decided by the kernel itself: the caller opens
 * /proc/<pid>/mem, whose open runs mm_access() with
 * PTRACE_MODE_ATTACH_FSCREDS (Yama, dumpability, LSMs), and hands us the
 * fd.  We check that it is such a file (its f_op is the one of a
 * /proc/self/mem we opened at load, through a kernel mount of proc of our
 * own) and that its memory (->private_data) is the target's memory now; we
 * keep neither the fd nor its references, but our own.
 *
 * Objects, and who owns them:
 *
 *  struct profil_attachment  one per /dev/profil file that attached
 *                 (file->private_data, set once under profil_attach_mutex),
 *                 freed at the file's release: no ioctl or mmap runs then,
 *                 and a mapping of the bins holds the file.  It owns an arm
 *                 (regions into the bins, the events), the bins' pages and
 *                 their charge, references to the target's tgid pid, mm
 *                 (mmgrab: its identity, never its memory) and credentials.
 *
 * Who ends it: the exec and exit probes (fork.c) set PROFIL_STOP_EXEC and
 * PROFIL_STOP_EXIT; the tick sets PROFIL_STOP_CRED when a thread runs on
 * credentials that none of the target's threads had at attach: any commit
 * of new ones (ids, groups, capabilities, keyrings, an LSM label that
 * SELinux's setcon or AppArmor's change_hat changes alone); OFF on the fd
 * and the release set PROFIL_STOP_USER.  @stop_reason is set once
 * (cmpxchg) and, once set, the tick counts nothing.  The events are
 * released by OFF, by the release, or, for the other ends, by @end_work on
 * the profil-settle thread (session.c), queued by whoever ended it (the
 * tick and the probes may not sleep), so that a target that goes on
 * running after a credential change takes no more ticks.
 *
 * Locking: profil_attach_mutex serialises ATTACH against itself (one
 * attachment per file); @lock guards the arm's events and their time (OFF
 * against OFF and STATS); profil_attach_lock, a spinlock, guards the table
 * that the probes read under RCU, by the target's tgid, so that an exec or
 * an exit looks at its own process's attachments, not at every one.  The
 * tick takes no lock.
 */
#include <linux/bsearch.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/mm.h>
#include <linux/mount.h>
#include <linux/pid.h>
#include <linux/rculist.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "compat.h"
#include "profil_internal.h"

/* The f_op of /proc/<pid>/mem, or NULL: attaching is -EOPNOTSUPP. */
static const struct file_operations *profil_proc_mem_fops;

/* Serialises ATTACH: file->private_data of /dev/profil files. */
static DEFINE_MUTEX(profil_attach_mutex);

/* Guards the table's changes; the probes read it under RCU. */
static DEFINE_SPINLOCK(profil_attach_lock);
static DEFINE_HASHTABLE(profil_attachments, 6);
static atomic_t profil_nr_attachments = ATOMIC_INIT(0);

/*
 * Set @why as the reason the attachment ends, if none is yet, from any
 * context; the events go from @end_work, but for PROFIL_STOP_USER, whose
 * caller releases them itself.  Every caller but the release and OFF is
 * an RCU reader (the tick in hard irq, the probes, ATTACH itself before
 * the file holds @att).  Return: true if @why is the reason now.
 */
static notrace bool profil_attach_end(struct profil_attachment *att, u32 why)
{
	if (cmpxchg(&att->stop_reason, PROFIL_STOP_NONE, why) !=
	    PROFIL_STOP_NONE)
		return false;
	if (why != PROFIL_STOP_USER)
		profil_session_queue_work(&att->end_work);
	return true;
}

static void profil_attach_stop_events(struct profil_attachment *att)
{
	mutex_lock(&att->lock);
	profil_events_stop(att->arm);
	mutex_unlock(&att->lock);
}

/* On the profil-settle thread: an attachment ended, its events go. */
static void profil_attach_end_work(struct kthread_work *work)
{
	profil_attach_stop_events(container_of(work, struct profil_attachment,
					       end_work));
}

/*
 * Whether a thread on @a may be counted with the target, on @b: the same
 * ids, capabilities, user namespace and LSM secid (SELinux's, Smack's).
 */
static bool profil_same_cred(const struct cred *a, const struct cred *b)
{
	u32 sa, sb;

	security_cred_getsecid(a, &sa);
	security_cred_getsecid(b, &sb);
	return uid_eq(a->uid, b->uid) && uid_eq(a->euid, b->euid) &&
	       uid_eq(a->suid, b->suid) && uid_eq(a->fsuid, b->fsuid) &&
	       gid_eq(a->gid, b->gid) && gid_eq(a->egid, b->egid) &&
	       gid_eq(a->sgid, b->sgid) && gid_eq(a->fsgid, b->fsgid) &&
	       a->user_ns == b->user_ns && sa == sb &&
	       !memcmp(&a->cap_permitted, &b->cap_permitted,
		       sizeof(a->cap_permitted)) &&
	       !memcmp(&a->cap_effective, &b->cap_effective,
		       sizeof(a->cap_effective));
}

/* Credentials by address: sort() at attach, bsearch from the tick. */
static notrace int profil_cred_cmp(const void *a, const void *b)
{
	unsigned long x = (unsigned long)*(const struct cred * const *)a;
	unsigned long y = (unsigned long)*(const struct cred * const *)b;

	return x < y ? -1 : x > y;
}

/*
 * profil_attach_creds - the credentials of the target's threads at attach
 * @att: its @cred, the target's (the permission was checked against it)
 * @task: the target
 *
 * A thread shares its creator's credentials until it commits new ones,
 * which glibc's setuid() in a threaded process makes every thread do:
 * those of them that profil_same_cred() finds the same as @att->cred are
 * kept, referenced, in @att->creds, sorted, for the tick to find.  A
 * thread on any other is not the target that was checked, and ends the
 * attachment at its first tick.
 *
 * Return: 0 or -ENOMEM.
 */
static int profil_attach_creds(struct profil_attachment *att,
			       struct task_struct *task)
{
	const struct cred *c;
	struct task_struct *t;
	unsigned int i, n = 0, max;

	max = get_nr_threads(task);
	att->creds = kvcalloc(max, sizeof(*att->creds), GFP_KERNEL_ACCOUNT);
	if (!att->creds)
		return -ENOMEM;
	rcu_read_lock();
	for_each_thread(task, t) {
		c = rcu_dereference(t->real_cred);
		if (n == max || c == att->cred ||
		    !profil_same_cred(c, att->cred))
			continue;
		c = get_cred_rcu(c);
		if (c)
			att->creds[n++] = c;
	}
	rcu_read_unlock();
	/* Sorted, each once: the threads that share one are neighbours. */
	sort(att->creds, n, sizeof(*att->creds), profil_cred_cmp, NULL);
	for (i = 0; i < n; i++) {
		c = att->creds[i];
		if (att->nr_creds && att->creds[att->nr_creds - 1] == c)
			put_cred(c);
		else
			att->creds[att->nr_creds++] = c;
	}
	return 0;
}

/* Whether @c is @att->cred or one of @att->creds, from the tick. */
static notrace bool
profil_attach_cred_known(const struct profil_attachment *att,
			 const struct cred *c)
{
	return c == att->cred ||
	       __inline_bsearch(&c, att->creds, att->nr_creds,
				sizeof(*att->creds), profil_cred_cmp);
}

/**
 * profil_attach_counts - may the tick of @att count for current?
 * @att: the tick's attachment
 *
 * From the tick, in hard irq: current is the thread the event runs for,
 * and its credentials cannot change under it.  A thread on credentials
 * that none of the target's had at attach ends the attachment.
 *
 * Return: true to count the sample.
 */
notrace bool profil_attach_counts(struct profil_attachment *att)
{
	const struct cred *cred;

	if (READ_ONCE(att->stop_reason) != PROFIL_STOP_NONE)
		return false;
	/* A kernel thread on the mm, an io_uring worker: not the target's. */
	if (current->flags & (PF_KTHREAD | PF_IO_WORKER))
		return false;
	/*
	 * A thread of the target on another mm has exec'ed: the exec probe
	 * ends the attachment, and this, should that exec have come before
	 * the attachment was listed (an old mm kept alive by another user).
	 */
	if (current->mm != att->mm) {
		profil_attach_end(att, PROFIL_STOP_EXEC);
		return false;
	}
	cred = rcu_dereference_raw(current->real_cred);
	if (!profil_attach_cred_known(att, cred)) {
		profil_attach_end(att, PROFIL_STOP_CRED);
		return false;
	}
	return true;
}

/* @t execs or its thread group dies (the probes, fork.c): @why. */
static void profil_attach_gone(struct task_struct *t, u32 why)
{
	struct profil_attachment *att;
	struct pid *tgid;

	if (!atomic_read(&profil_nr_attachments))
		return;
	rcu_read_lock();
	tgid = task_tgid(t);
	hash_for_each_possible_rcu(profil_attachments, att, node,
				   (unsigned long)tgid)
		if (att->tgid == tgid)
			profil_attach_end(att, why);
	rcu_read_unlock();
}

/* sched_process_exec, in @t: its process's attachments end. */
void profil_attach_exec(struct task_struct *t)
{
	profil_attach_gone(t, PROFIL_STOP_EXEC);
}

/* sched_process_exit, in @t: the last thread ends them. */
void profil_attach_exit(struct task_struct *t)
{
	if (!atomic_read(&t->signal->live))
		profil_attach_gone(t, PROFIL_STOP_EXIT);
}

/*
 * The target: the process @pid names, whose memory @mem_fd's open of
 * /proc/<pid>/mem checked the caller may access.  Return: 0 with *@tp
 * referenced and *@mmp grabbed, -EBADF, -EINVAL (not a procfs mem file, or
 * another process's), -ESRCH (no such process, or gone).
 */
static int profil_attach_target(int mem_fd, pid_t pid,
				struct task_struct **tp, struct mm_struct **mmp)
{
	struct mm_struct *mm, *tmm;
	struct task_struct *task;
	struct file *mem;
	struct pid *p;
	int ret;

	mem = fget(mem_fd);
	if (!mem)
		return -EBADF;
	ret = -EINVAL;
	if (mem->f_op != profil_proc_mem_fops)
		goto out;
	/* Set by the open; NULL when it found no memory (a zombie). */
	mm = mem->private_data;
	ret = -ESRCH;
	if (!mm || pid <= 0)
		goto out;
	p = find_get_pid(pid);
	task = get_pid_task(p, PIDTYPE_TGID);
	put_pid(p);
	if (!task)
		goto out;
	tmm = get_task_mm(task);
	if (!tmm) {
		put_task_struct(task);
		goto out;
	}
	if (tmm == mm) {
		mmgrab(mm);
		*mmp = mm;
		*tp = task;
		ret = 0;
	} else {
		/* @pid's memory now is not what was opened. */
		ret = atomic_read(&mm->mm_users) ? -EINVAL : -ESRCH;
		put_task_struct(task);
	}
	mmput(tmm);
out:
	fput(mem);
	return ret;
}

/* The end of the bins: the highest byte any region counts into. */
static u64 profil_bins_end(struct profil_arm *arm)
{
	struct profil_kregion *r;
	u64 end = 0;

	/* Checked: no sum wraps (profil_user_buf_check()). */
	profil_for_each_region(arm, r)
		end = max(end,
			  r->uaddr + (r->nbins << profil_bin_shift(r->flags)));
	return end;
}

/* Charge @n pages to the caller, as its pins are (buffer.c). */
static int profil_bins_charge(struct profil_attachment *att, unsigned long n)
{
	const struct cred *cred = get_current_cred();
	int ret;

	ret = profil_user_charge(cred, rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT,
				 n, 0);
	if (ret) {
		put_cred(cred);
		return ret;
	}
	att->charged = cred;
	att->nr_pages = n;
	att->charged_mm = current->mm;
	mmgrab(att->charged_mm);
	atomic64_add(n, &att->charged_mm->pinned_vm);
	return 0;
}

static void profil_bins_free(struct profil_attachment *att)
{
	unsigned long i;

	if (att->bins)
		vunmap(att->bins);
	for (i = 0; att->pages && i < att->nr_pages; i++)
		if (att->pages[i])
			put_page(att->pages[i]);
	kvfree(att->pages);
	if (!att->charged)
		return;
	atomic64_sub(att->nr_pages, &att->charged_mm->pinned_vm);
	mmdrop(att->charged_mm);
	profil_user_uncharge(att->charged, att->nr_pages);
	put_cred(att->charged);
}

/*
 * Charge, allocate (to the caller's memory cgroup) and map the bins, and
 * point @att's regions into them.  Return: 0, -E2BIG past
 * PROFIL_MAX_BUFSIZE, -ENOMEM past RLIMIT_MEMLOCK or out of memory.
 */
static int profil_bins_alloc(struct profil_attachment *att)
{
	u64 end = profil_bins_end(att->arm);
	struct profil_kregion *r;
	unsigned long i, n;
	int ret;

	if (end > PROFIL_MAX_BUFSIZE)
		return -E2BIG;
	/*
	 * One page at least: every attachment is charged, so that the
	 * user's RLIMIT_MEMLOCK bounds how many (and their events) there are.
	 */
	n = max_t(unsigned long, DIV_ROUND_UP(end, PAGE_SIZE), 1);
	ret = profil_bins_charge(att, n);
	if (ret)
		return ret;
	att->pages = kvcalloc(n, sizeof(*att->pages), GFP_KERNEL_ACCOUNT);
	if (!att->pages)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (fatal_signal_pending(current))
			return -EINTR;
		att->pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!att->pages[i])
			return -ENOMEM;
		cond_resched();
	}
	att->bins = vmap(att->pages, n, VM_MAP, PAGE_KERNEL);
	if (!att->bins)
		return -ENOMEM;
	/* An empty region has no bins, as a session's (buffer.c). */
	profil_for_each_region(att->arm, r)
		if (r->nbins)
			r->bins = att->bins + r->uaddr;
	return 0;
}

static void profil_attach_free(struct profil_attachment *att)
{
	/*
	 * Ended now, if not before.  An end that came before may be between
	 * its cmpxchg and its queueing, in an RCU reader: wait for it, so
	 * that no end work is queued after the cancel.
	 */
	if (!profil_attach_end(att, PROFIL_STOP_USER))
		synchronize_rcu();
	kthread_cancel_work_sync(&att->end_work);
	profil_events_stop(att->arm);
	profil_arm_put(att->arm);
	profil_bins_free(att);
	put_pid(att->tgid);
	if (att->mm)
		mmdrop(att->mm);
	if (att->cred)
		put_cred(att->cred);
	while (att->nr_creds)
		put_cred(att->creds[--att->nr_creds]);
	kvfree(att->creds);
	free_percpu(att->cnt.tick);
	mutex_destroy(&att->lock);
	/* The probes may still be looking at it. */
	kfree_rcu(att, rcu);
}

static struct profil_attachment *profil_attach_alloc(struct profil_arm *arm)
{
	struct profil_attachment *att;

	att = kzalloc(sizeof(*att), GFP_KERNEL_ACCOUNT);
	if (!att)
		return NULL;
	att->cnt.tick = alloc_percpu_gfp(struct profil_tick_counters,
					 GFP_KERNEL_ACCOUNT);
	if (!att->cnt.tick) {
		kfree(att);
		return NULL;
	}
	mutex_init(&att->lock);
	kthread_init_work(&att->end_work, profil_attach_end_work);
	INIT_HLIST_NODE(&att->node);
	att->arm = arm;
	arm->att = att;
	arm->cnt = &att->cnt;
	return att;
}

static void profil_attach_unlist(struct profil_attachment *att)
{
	spin_lock(&profil_attach_lock);
	hash_del_rcu(&att->node);
	spin_unlock(&profil_attach_lock);
	atomic_dec(&profil_nr_attachments);
}

/*
 * Listed first, so that the probes see an exec or exit from now on; one
 * before is seen by the check after the events start.
 */
static int profil_attach_go(struct profil_attachment *att,
			    struct task_struct *task)
{
	int ret;

	atomic_inc(&profil_nr_attachments);
	spin_lock(&profil_attach_lock);
	hash_add_rcu(profil_attachments, &att->node, (unsigned long)att->tgid);
	spin_unlock(&profil_attach_lock);
	/* An end work queued meanwhile waits for the events to be made. */
	mutex_lock(&att->lock);
	ret = profil_events_start(att->arm, task);
	mutex_unlock(&att->lock);
	if (ret) {
		profil_attach_unlist(att);
		return ret;
	}
	if (!atomic_read(&task->signal->live))
		profil_attach_end(att, PROFIL_STOP_EXIT);
	else if (!atomic_read(&att->mm->mm_users))
		profil_attach_end(att, PROFIL_STOP_EXEC);
	return 0;
}

/**
 * profil_attach_start - attach @file to a target with @arm's regions
 * @file: the caller's /dev/profil file
 * @arm: regions checked, their 'uaddr' offsets into the bins; taken over
 * @mem_fd: the caller's open /proc/<pid>/mem
 * @pid: the target, in the caller's PID namespace
 * @bins_size: set to the bytes the caller may map
 *
 * Return: 0, -EBUSY if @file is attached already, or an errno of
 * profil_attach_target(), profil_bins_alloc() or profil_events_start().
 */
int profil_attach_start(struct file *file, struct profil_arm *arm,
			int mem_fd, pid_t pid, u64 *bins_size)
{
	struct profil_attachment *att;
	struct task_struct *task;
	int ret;

	if (!profil_proc_mem_fops) {
		profil_arm_put(arm);
		return -EOPNOTSUPP;
	}
	att = profil_attach_alloc(arm);
	if (!att) {
		profil_arm_put(arm);
		return -ENOMEM;
	}
	ret = profil_attach_target(mem_fd, pid, &task, &att->mm);
	if (ret)
		goto err;
	att->tgid = get_pid(task_tgid(task));
	att->cred = get_task_cred(task);
	ret = profil_attach_creds(att, task);
	if (ret)
		goto err_task;
	ret = profil_bins_alloc(att);
	if (ret)
		goto err_task;
	/* The mutex only for the check and the publication: one per file. */
	mutex_lock(&profil_attach_mutex);
	ret = -EBUSY;
	if (!file->private_data)
		ret = profil_attach_go(att, task);
	if (!ret) {
		*bins_size = (u64)att->nr_pages << PAGE_SHIFT;
		/* Published whole: READ_ONCE() in main.c orders what follows. */
		smp_store_release(&file->private_data, att);
	}
	mutex_unlock(&profil_attach_mutex);
err_task:
	put_task_struct(task);
	if (!ret)
		return 0;
err:
	profil_attach_free(att);
	return ret;
}

/* OFF on an attached fd: the events go, the bins stay. */
void profil_attach_off(struct profil_attachment *att)
{
	profil_attach_end(att, PROFIL_STOP_USER);
	profil_attach_stop_events(att);
}

/*
 * @st of @att; with @cpu, its cpu_ns too, which reads each event (an IPI
 * to a CPU where one runs), for a caller whose struct has the field.
 */
void profil_attach_stats(struct profil_attachment *att,
			 struct profil_stats *st, bool cpu)
{
	st->stop_reason = READ_ONCE(att->stop_reason);
	st->state = st->stop_reason == PROFIL_STOP_NONE ? PROFIL_STATE_ON :
							  PROFIL_STATE_OFF;
	st->rate = att->arm->rate;
	st->period_ns = att->arm->period_ns;
	st->armed = 1;
	profil_counters_sum(&att->cnt, st);
	if (!cpu)
		return;
	mutex_lock(&att->lock);
	st->cpu_ns = profil_events_ran(att->arm);
	mutex_unlock(&att->lock);
}

/* The file's release: nothing else uses @att but the probes and works. */
void profil_attach_release(struct profil_attachment *att)
{
	profil_attach_unlist(att);
	profil_attach_free(att);
}

/**
 * profil_attach_mmap - map @att's bins, read-only
 * @att: the attachment of the file mapped
 * @vma: from offset 0, at most the bins' pages
 *
 * Return: 0, -EINVAL for another offset or size, -EPERM if writable or
 * executable (and the mapping may never become so).
 */
int profil_attach_mmap(struct profil_attachment *att,
		       struct vm_area_struct *vma)
{
	unsigned long n = vma_pages(vma);

	if (vma->vm_pgoff || !n || n > att->nr_pages)
		return -EINVAL;
	if (vma->vm_flags & (VM_WRITE | VM_EXEC))
		return -EPERM;
	/* Not copied at fork: the caller's close and munmap end it. */
	profil_vm_flags_mod(vma, VM_DONTEXPAND | VM_DONTDUMP | VM_DONTCOPY,
			    VM_MAYWRITE | VM_MAYEXEC);
	return vm_insert_pages(vma, vma->vm_start, att->pages, &n);
}

/*
 * Learn the f_op of /proc/<pid>/mem from a /proc/self/mem opened through a
 * kernel mount of proc of our own (procfs is built in: get_fs_type() took
 * no module reference).  Without it, ATTACH is -EOPNOTSUPP.
 */
void profil_attach_init(void)
{
	struct file_system_type *proc = get_fs_type("proc");
	struct vfsmount *mnt;
	struct file *f;

	if (!proc)
		return;
	mnt = kern_mount(proc);
	if (IS_ERR(mnt))
		return;
	f = file_open_root_mnt(mnt, "self/mem", O_RDONLY, 0);
	if (!IS_ERR(f)) {
		profil_proc_mem_fops = f->f_op;
		fput(f);
	}
	kern_unmount(mnt);
}
