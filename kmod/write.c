// SPDX-License-Identifier: GPL-2.0
/*
 * Writing the profile file of an arm that has ended, as fs/coredump.c
 * writes a core: for the process, as the process, charged to it.
 *
 * The stop path (session.c: OFF, a re-arm, a fault, exec, the end of the
 * process) releases the arm's events and its interval notifiers, then hands
 * the arm, still pinned, to profil_write_submit() and returns.  The write
 * runs on a kernel thread of its own ("profil-writer"), one per file, so a
 * write that never completes (a FUSE server that never answers) holds that
 * thread and the arm's pins, and nothing else: no session lock, no other
 * process's write, no exit, no STATS, no settle.  The caller starts that
 * thread, or the profil-settle thread does when the caller cannot (SIGKILL
 * pending: profil_write_start()).  Writes in flight are bounded per user
 * (@writes_per_user); each holds a module reference, so rmmod is refused,
 * never blocked, while one runs.
 *
 * Who waits for a file: only the process whose file it is, at a point
 * where it holds nothing, for at most @write_wait_ms.  PROFIL_IOC_OFF and
 * a re-arm wait in the ioctl once the session lock is dropped.  Exit and
 * exec end the arm in the mm's ->release (inside the notifiers' SRCU read
 * section, at exec under exec_update_lock), where nobody may wait: there
 * the owner gets a file of ours whose last fput() is deferred, as every
 * fput() of a user task is, to the task's own task work, which runs at the
 * end of exit (after the files and the fs are gone, before the parent is
 * told) or on the way back to user space after exec; its ->release waits.
 * So `./prog && gprof prog gmon.out` sees a whole file.
 *
 * What is written, as whom (SECURITY in profil(4)):
 *  - Only while the process that armed still has the credentials it armed
 *    with (the same struct cred: any setuid, capset, Landlock domain or LSM
 *    transition makes a new one) and the same seccomp filter, and its mm is
 *    dumpable: else no file, and write_error says why (-EPERM, -EACCES).
 *    At exec, the credentials the old image ended with, not the new
 *    program's, which some kernels install before the old mm goes.
 *  - With those credentials and the umask of the arming, in the directory
 *    it named, under one name: what is at the name is unlinked (a symlink,
 *    a hard link, a FIFO: never opened), then a file is created with
 *    O_CREAT | O_EXCL | O_NOFOLLOW, so only a file just made is opened;
 *    it must be a regular file with one link, hashed, owned by the fsuid.
 *  - Charged to the process's memory cgroup (set_active_memcg()) and io
 *    cgroup (kthread_associate_blkcg()); at most its RLIMIT_FSIZE bytes
 *    (-EFBIG past it, no SIGXFSZ to anyone).
 *  - Closed with filp_close(), whose error counts: a file counts as written
 *    only if every byte was written and the close succeeded.
 */
#include <linux/anon_inodes.h>
#include <linux/completion.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/fs_struct.h>
#include <linux/kthread.h>
#include <linux/memcontrol.h>
#include <linux/module.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/pid.h>
#include <linux/sched/coredump.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include "compat.h"
#include "profil_internal.h"

static unsigned int profil_write_wait_ms = 10000;
module_param_named(write_wait_ms, profil_write_wait_ms, uint, 0644);
MODULE_PARM_DESC(write_wait_ms, "how long a process waits for its own profile file at OFF, re-arm, exit or exec, in ms (default 10000)");

static unsigned int profil_writes_per_user = 8;
module_param_named(writes_per_user, profil_writes_per_user, uint, 0644);
MODULE_PARM_DESC(writes_per_user, "profile files one user may have in flight; past it a file is not written (-EBUSY) (default 8)");

/* Writes in flight by uid, as xarray values; guarded by the mutex. */
static DEFINE_XARRAY(profil_writes);
static DEFINE_MUTEX(profil_writes_lock);

struct profil_write {
	refcount_t ref;			/* the thread's and the waiter's */
	struct completion done;		/* the file is written or failed */
	struct profil_session *sess;	/* referenced: gets the result */
	struct profil_arm *arm;		/* ended, unwatched, still pinned */
	struct mm_struct *mm;		/* mmgrab()ed: its pinned_vm */
	const void *data;		/* the image, through its mapping */
	size_t len;			/* head and records in use */
	unsigned long fsize;		/* the process's RLIMIT_FSIZE */
	struct mem_cgroup *memcg;	/* the process's, referenced, or NULL */
	struct cgroup_subsys_state *blkcg; /* likewise */
	kuid_t uid;			/* counted in profil_writes */
	struct kthread_work start;	/* starts the writer when the caller */
					/* could not (profil_write_start()) */
};

/* Count a write in flight for @uid.  Return: 0, -EBUSY past the bound. */
static int profil_writes_get(kuid_t uid)
{
	unsigned long key = __kuid_val(uid), n;
	int ret = 0;

	mutex_lock(&profil_writes_lock);
	n = xa_to_value(xa_load(&profil_writes, key) ?: xa_mk_value(0));
	if (n >= READ_ONCE(profil_writes_per_user))
		ret = -EBUSY;
	else
		ret = xa_err(xa_store(&profil_writes, key, xa_mk_value(n + 1),
				      GFP_KERNEL));
	mutex_unlock(&profil_writes_lock);
	return ret;
}

static void profil_writes_put(kuid_t uid)
{
	unsigned long key = __kuid_val(uid), n;

	mutex_lock(&profil_writes_lock);
	n = xa_to_value(xa_load(&profil_writes, key));
	if (n > 1)	/* replacing a value entry allocates nothing */
		xa_store(&profil_writes, key, xa_mk_value(n - 1), GFP_KERNEL);
	else
		xa_erase(&profil_writes, key);
	mutex_unlock(&profil_writes_lock);
}

void profil_write_put(struct profil_write *w)
{
	if (!w || !refcount_dec_and_test(&w->ref))
		return;
	profil_arm_put(w->arm);
	mmdrop(w->mm);
	mem_cgroup_put(w->memcg);
	if (w->blkcg)
		css_put(w->blkcg);
	profil_session_put(w->sess);
	kfree(w);
}

/*
 * Unlink what is at @name in @dir, whatever it is but a directory, as
 * unlinkat(2) would for the caller.  Return: 0, or -errno (-ENOENT: none).
 */
static int profil_write_unlink(const struct path *dir, const char *name)
{
	struct dentry *d;
	int ret;

	ret = mnt_want_write(dir->mnt);
	if (ret)
		return ret;
	d = profil_start_removing(dir, name);
	if (IS_ERR(d)) {
		ret = PTR_ERR(d);
		goto drop;
	}
	if (d_is_negative(d))
		ret = -ENOENT;
	else
		ret = security_path_unlink(dir, d) ?:
		      vfs_unlink(profil_mnt_idmap(dir->mnt), d_inode(dir->dentry),
				 d, NULL);
	profil_end_removing(d);
drop:
	mnt_drop_write(dir->mnt);
	return ret;
}

/*
 * filp_close(), whose ->flush error counts, then the last fput() here, not
 * delayed (see profil_write_put_dir()).
 */
static int profil_write_close(struct file *f)
{
	int ret;

	get_file(f);
	ret = filp_close(f, NULL);
	__fput_sync(f);
	return ret;
}

/* A file just made: regular, one link, hashed, the caller's fsuid's. */
static int profil_write_check_new(struct file *f)
{
	struct inode *inode = file_inode(f);
	vfsuid_t owner = i_uid_into_vfsuid(profil_mnt_idmap(f->f_path.mnt),
					   inode);

	if (!S_ISREG(inode->i_mode) || inode->i_nlink != 1 ||
	    d_unhashed(f->f_path.dentry))
		return -EEXIST;
	return vfsuid_eq_kuid(owner, current_fsuid()) ? 0 : -EPERM;
}

/* Open @name in @dir for writing: only ever a file this call made. */
static struct file *profil_write_create(const struct path *dir,
					const char *name)
{
	const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			  O_LARGEFILE;
	struct file *f;
	int ret;

	f = file_open_root(dir, name, flags, 0666);
	if (PTR_ERR_OR_ZERO(f) == -EEXIST) {
		ret = profil_write_unlink(dir, name);
		if (ret && ret != -ENOENT)
			return ERR_PTR(ret);
		f = file_open_root(dir, name, flags, 0666);
	}
	if (IS_ERR(f))
		return f;
	ret = profil_write_check_new(f);
	if (ret) {
		profil_write_close(f);
		return ERR_PTR(ret);
	}
	return f;
}

/* Write the file; in the writer thread, as the process. */
static int profil_write_file(struct profil_write *w)
{
	const struct profil_koutput *out = w->arm->out;
	size_t want = min_t(u64, w->len, w->fsize), done = 0;
	struct file *f;
	loff_t pos = 0;
	ssize_t n = 0;
	int ret;

	f = profil_write_create(&out->dir->f_path, out->name);
	if (IS_ERR(f))
		return PTR_ERR(f);
	while (done < want) {
		n = kernel_write(f, w->data + done, want - done, &pos);
		if (n <= 0)
			break;
		done += n;
	}
	ret = profil_write_close(f);
	if (done < want)
		return n < 0 ? n : -ENOSPC;
	if (want < w->len)
		return -EFBIG;
	return ret;
}

/*
 * Let go of the directory now, synchronously, not by a delayed fput() of
 * this kernel thread: a umount right after the owner's exit must not find
 * it busy.  A fork probe may be taking a reference under RCU (fork.c).
 */
static void profil_write_put_dir(struct profil_koutput *out)
{
	struct file *dir = out->dir;

	WRITE_ONCE(out->dir, NULL);
	synchronize_rcu();
	__fput_sync(dir);
}

/* The write is over: unpin, tell the session, wake the waiter. */
static void profil_write_finish(struct profil_write *w, int ret)
{
	struct profil_session *sess = w->sess;

	profil_write_put_dir(w->arm->out);
	profil_regions_unpin(w->arm);
	mutex_lock(&sess->lock);
	sess->write_error = ret;
	if (!ret)
		atomic64_inc(&sess->cnt.written);
	atomic_dec(&sess->cnt.writing);
	mutex_unlock(&sess->lock);
	profil_writes_put(w->uid);
	complete_all(&w->done);
	profil_write_put(w);
}

/* In the writer thread: the process's credentials, umask and cgroups. */
static int profil_write_as_owner(struct profil_write *w)
{
	const struct profil_koutput *out = w->arm->out;
	struct mem_cgroup *old_memcg;
	const struct cred *old_cred;
	int ret;

	/* A kernel thread shares init's fs_struct: take one of our own. */
	ret = unshare_fs_struct();
	if (ret)
		return ret;
	current->fs->umask = out->umask;
	old_cred = override_creds(out->cred);
	old_memcg = set_active_memcg(w->memcg);
	kthread_associate_blkcg(w->blkcg);
	ret = profil_write_file(w);
	kthread_associate_blkcg(NULL);
	set_active_memcg(old_memcg);
	revert_creds(old_cred);
	return ret;
}

static int profil_writer(void *data)
{
	struct profil_write *w = data;

	profil_write_finish(w, profil_write_as_owner(w));
	module_put_and_kthread_exit(0);
}

/*
 * On the profil-settle thread: start the writer that the caller could not.
 * The work holds the write's module reference, which the thread's
 * destruction at module exit outlasts (session.c).
 */
static void profil_write_start_work(struct kthread_work *work)
{
	struct profil_write *w = container_of(work, struct profil_write, start);
	struct task_struct *writer;

	writer = kthread_run(profil_writer, w, "profil-writer");
	if (!IS_ERR(writer))
		return;
	profil_write_finish(w, PTR_ERR(writer));
	module_put(THIS_MODULE);
}

/*
 * May the file still be written as the arm's credentials say?  @t is the
 * process (any of its threads).  Fills in what the write is charged to.
 */
static int profil_write_may(struct profil_write *w, struct task_struct *t)
{
	const struct profil_koutput *out = w->arm->out;

	if (!profil_dumpable(t, w->mm))
		return -EACCES;
	/* At exec, the old image's last credentials (clock.c). */
	if ((rcu_access_pointer(t->real_cred) != out->cred &&
	     !(t == current && profil_clock_exec_cred(out->cred))) ||
	    profil_seccomp_filter(t) != out->seccomp)
		return -EPERM;
	w->fsize = task_rlimit(t, RLIMIT_FSIZE);
	w->memcg = get_mem_cgroup_from_mm(w->mm);
	w->blkcg = profil_blkcg_get(t);
	return 0;
}

/* The process whose file it is: the caller, or found by its tgid. */
static struct task_struct *profil_write_owner(struct profil_session *sess)
{
	if (task_tgid(current) == sess->owner)
		return get_task_struct(current);
	return get_pid_task(sess->owner, PIDTYPE_TGID);
}

static struct profil_write *profil_write_alloc(struct profil_session *sess,
					       struct profil_arm *arm)
{
	const struct profil_koutput *out = arm->out;
	struct profil_write *w;
	u64 nr;

	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!w)
		return NULL;
	refcount_set(&w->ref, 1);
	init_completion(&w->done);
	refcount_inc(&sess->ref);
	w->sess = sess;
	w->arm = arm;
	w->mm = sess->mn.mm;
	mmgrab(w->mm);
	w->uid = out->cred->uid;
	w->data = arm->image->bins;
	/* The one number of the image we read: once, clamped. */
	nr = min(READ_ONCE(profil_output_ctl(arm)->nr_recs), out->nr_recs_max);
	w->len = out->head_size + nr * out->rec_size;
	return w;
}

/* Check and start @w's write.  Return: 0, or why it was not started. */
static int profil_write_start(struct profil_write *w)
{
	struct task_struct *t, *writer;
	int ret;

	if (!w->data)
		return -EFAULT;		/* never pinned */
	t = profil_write_owner(w->sess);
	if (!t)
		return -ESRCH;
	ret = profil_write_may(w, t);
	put_task_struct(t);
	if (ret)
		return ret;
	ret = profil_writes_get(w->uid);
	if (ret)
		return ret;
	/* The session's holds the module: not the last reference. */
	__module_get(THIS_MODULE);
	refcount_inc(&w->ref);
	atomic_inc(&w->sess->cnt.writing);
	writer = kthread_run(profil_writer, w, "profil-writer");
	if (!IS_ERR(writer))
		return 0;
	/*
	 * kthread_run() waits for kthreadd killably: -EINTR in a caller with
	 * SIGKILL pending.  exit_group() and exec kill every other thread,
	 * those already on their way out too, and such a thread may be the
	 * one that lets go of the mm last (a thread just joined, the others
	 * gone before it).  The file is no less the process's: the settle
	 * thread starts the writer, and the caller waits for it as ever.
	 */
	if (PTR_ERR(writer) == -EINTR) {
		kthread_init_work(&w->start, profil_write_start_work);
		profil_session_queue_work(&w->start);
		return 0;
	}
	atomic_dec(&w->sess->cnt.writing);
	refcount_dec(&w->ref);
	module_put(THIS_MODULE);
	profil_writes_put(w->uid);
	return PTR_ERR(writer);
}

/**
 * profil_write_submit - write the profile file of an arm that has ended
 * @sess: its session, locked
 * @arm: an arm with an output, its events released and its notifiers
 *	removed, its pages still pinned; the caller's reference passes to
 *	the write, which unpins it when the file is written
 *
 * Return: the write, for profil_write_wait() or profil_write_wait_later()
 * or profil_write_put(); or NULL if it was over before it began (no file,
 * its error in @sess, @arm unpinned).
 */
struct profil_write *profil_write_submit(struct profil_session *sess,
					 struct profil_arm *arm)
{
	struct profil_write *w = profil_write_alloc(sess, arm);
	int ret;

	lockdep_assert_held(&sess->lock);
	if (!w) {
		sess->write_error = -ENOMEM;
		profil_regions_unpin(arm);
		profil_arm_put(arm);
		return NULL;
	}
	ret = profil_write_start(w);
	if (!ret)
		return w;
	sess->write_error = ret;
	profil_regions_unpin(arm);
	profil_write_put(w);
	return NULL;
}

/**
 * profil_write_wait - wait, for a bounded time, until @w's file is written
 * @w: the write (NULL: nothing); the caller's reference is dropped
 *
 * Called by the process whose file it is, holding nothing.  Not killable:
 * a process killed at exit still leaves its whole file to its parent.
 */
void profil_write_wait(struct profil_write *w)
{
	unsigned int ms = READ_ONCE(profil_write_wait_ms);

	if (!w)
		return;
	wait_for_completion_timeout(&w->done, msecs_to_jiffies(ms));
	profil_write_put(w);
}

static int profil_write_wait_release(struct inode *inode, struct file *file)
{
	struct profil_write *w = file->private_data;

	/* Run by a worker (the task work could not be queued): no wait. */
	if (current->flags & PF_KTHREAD)
		profil_write_put(w);
	else
		profil_write_wait(w);
	return 0;
}

static const struct file_operations profil_write_wait_fops = {
	.owner		= THIS_MODULE,
	.release	= profil_write_wait_release,
};

/**
 * profil_write_wait_later - wait for @w once the caller holds nothing
 * @w: the write (NULL: nothing); the caller's reference passes on
 *
 * For the mm's ->release, in the process whose file it is: the wait runs
 * from the task's own task work, through the deferred fput() of a file
 * whose ->release waits (see the top of this file).
 */
void profil_write_wait_later(struct profil_write *w)
{
	struct file *f;

	if (!w)
		return;
	if (current->flags & PF_KTHREAD)
		goto put;
	f = anon_inode_getfile("[profil-write]", &profil_write_wait_fops, w,
			       O_RDONLY);
	if (IS_ERR(f))
		goto put;
	fput(f);
	return;
put:
	profil_write_put(w);
}
