// SPDX-License-Identifier: GPL-2.0
/*
 * Profile files: what an arm with a struct profil_output writes when it
 * ends (uapi/linux/profil.h).
 *
 * User space keeps the profile in its file format in one image that the
 * arm pins with its regions (the image is the arm's last kregion, which the
 * tick never counts into).  When the arm ends, with its events gone and
 * its pages still pinned, profil_output_write() writes the image's head and
 * the first records to a file.  Nothing of the image is trusted but one
 * number, the record count, read once and clamped to the capacity.
 *
 * The writing is done by one kernel thread of ours, the caller waiting for
 * it: the caller may be dying of SIGKILL (a fatal signal cuts a write
 * short), may be exec'ing, or may be another task that dropped the last
 * reference to the mm.  The thread has an fs_struct of its own, so it can
 * take the process's umask, and takes the process's credentials for each
 * file, as they were when the process armed (or, for a forked child, took
 * over).  The file is opened in the directory the process named, as one
 * path component, without following a symlink, and only if it is (or
 * becomes) a regular file.
 */
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/fs_struct.h>
#include <linux/kthread.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "profil_internal.h"

/* The writer thread; its fs_struct is its own (profil_output_init()). */
static struct kthread_worker *profil_writer;

struct profil_output_job {
	struct kthread_work work;
	struct completion done;
	const struct profil_koutput *out;
	const void *data;
	size_t len;
	int ret;
};

/*
 * Expand a template of one path component: "%p" is @pid, "%%" is '%'.
 * Return: the name (kfree() it) or ERR_PTR(-EINVAL / -ENAMETOOLONG).
 */
static char *profil_name_format(const char *tmpl, pid_t pid)
{
	char buf[NAME_MAX + 1];
	size_t n = 0;
	int len;

	for (; *tmpl; tmpl++) {
		if (*tmpl == '/')
			return ERR_PTR(-EINVAL);
		if (n >= NAME_MAX)
			return ERR_PTR(-ENAMETOOLONG);
		if (*tmpl != '%') {
			buf[n++] = *tmpl;
			continue;
		}
		tmpl++;
		if (*tmpl == '%') {
			buf[n++] = '%';
		} else if (*tmpl == 'p') {
			len = snprintf(buf + n, sizeof(buf) - n, "%d", pid);
			if (len >= sizeof(buf) - n)
				return ERR_PTR(-ENAMETOOLONG);
			n += len;
		} else {
			return ERR_PTR(-EINVAL);
		}
	}
	buf[n] = '\0';
	if (!n || !strcmp(buf, ".") || !strcmp(buf, ".."))
		return ERR_PTR(-EINVAL);
	return kstrdup(buf, GFP_KERNEL_ACCOUNT) ?: ERR_PTR(-ENOMEM);
}

void profil_output_free(struct profil_koutput *out)
{
	if (!out)
		return;
	if (out->dir)
		fput(out->dir);
	if (out->cred)
		put_cred(out->cred);
	kfree(out->name);
	kfree(out->child_name);
	kfree(out);
}

/* A name template from user space; longer than one component: too long. */
static char *profil_name_dup(u64 uptr)
{
	char *tmpl = strndup_user(u64_to_user_ptr(uptr), NAME_MAX + 1);

	if (IS_ERR(tmpl) && PTR_ERR(tmpl) == -EINVAL)
		return ERR_PTR(-ENAMETOOLONG);
	return tmpl;
}

/* The caller's side of @out: its credentials, umask, and @tmpl expanded. */
static int profil_output_own(struct profil_koutput *out, const char *tmpl)
{
	char *name = profil_name_format(tmpl, task_tgid_vnr(current));

	if (IS_ERR(name))
		return PTR_ERR(name);
	out->name = name;
	out->cred = get_current_cred();
	out->umask = current_umask();
	return 0;
}

static int profil_output_check(const struct profil_output *uo)
{
	u64 end, recs;
	int ret;

	if (uo->flags)
		return -EINVAL;
	if (!uo->rec_size || uo->rec_size > PAGE_SIZE)
		return -EINVAL;
	if (!uo->image_size || !IS_ALIGNED(uo->image | uo->image_size, 8))
		return -EINVAL;
	ret = profil_user_buf_check(uo->image, uo->image_size);
	if (ret)
		return ret;
	if (check_mul_overflow(uo->nr_recs_max, (u64)uo->rec_size, &recs) ||
	    check_add_overflow(recs, uo->head_size, &end) ||
	    end > uo->ctl_offset || !IS_ALIGNED(uo->ctl_offset, 8) ||
	    uo->ctl_offset > uo->image_size ||
	    uo->image_size - uo->ctl_offset < sizeof(struct profil_output_ctl))
		return -EINVAL;
	return 0;
}

static int profil_output_dir(struct profil_koutput *out, int dirfd)
{
	struct file *dir = fget_raw(dirfd);	/* O_PATH too */

	if (!dir)
		return -EBADF;
	out->dir = dir;
	return S_ISDIR(file_inode(dir)->i_mode) ? 0 : -ENOTDIR;
}

/*
 * Copy in and check @uptr's struct profil_output and its names.  The image
 * becomes @arm's last region, @image.  Called from the arming process.
 */
int profil_output_setup(struct profil_arm *arm, struct profil_kregion *image,
			const void __user *uptr)
{
	struct profil_output uo;
	struct profil_koutput *out;
	char *tmpl, *name;
	int ret;

	ret = profil_copy_in(&uo, sizeof(uo), PROFIL_OUTPUT_SIZE_VER0, uptr);
	if (ret)
		return ret;
	ret = profil_output_check(&uo);
	if (ret)
		return ret;
	out = kzalloc(sizeof(*out), GFP_KERNEL_ACCOUNT);
	if (!out)
		return -ENOMEM;
	arm->out = out;		/* freed with the arm from here on */
	out->rec_size = uo.rec_size;
	out->head_size = uo.head_size;
	out->nr_recs_max = uo.nr_recs_max;
	out->ctl_offset = uo.ctl_offset;

	tmpl = profil_name_dup(uo.child_name);
	if (IS_ERR(tmpl))
		return PTR_ERR(tmpl);
	out->child_name = tmpl;
	/* The child's template is checked now too, expanded once. */
	name = profil_name_format(tmpl, task_tgid_vnr(current));
	if (IS_ERR(name))
		return PTR_ERR(name);
	kfree(name);
	tmpl = profil_name_dup(uo.name);
	if (IS_ERR(tmpl))
		return PTR_ERR(tmpl);
	ret = profil_output_own(out, tmpl);
	kfree(tmpl);
	if (ret)
		return ret;
	ret = profil_output_dir(out, uo.dirfd);
	if (ret)
		return ret;

	image->uaddr = uo.image;
	image->nbins = uo.image_size >> 1;	/* as 16-bit "bins" */
	arm->image = image;
	return 0;
}

/* @src's output for a forked child, called in the child (inheritance). */
int profil_output_clone(struct profil_arm *arm, const struct profil_arm *src)
{
	const struct profil_koutput *s = src->out;
	struct profil_koutput *out;

	if (!s)
		return 0;
	out = kzalloc(sizeof(*out), GFP_KERNEL_ACCOUNT);
	if (!out)
		return -ENOMEM;
	arm->out = out;
	arm->image = &arm->regions[src->image - src->regions];
	out->rec_size = s->rec_size;
	out->head_size = s->head_size;
	out->nr_recs_max = s->nr_recs_max;
	out->ctl_offset = s->ctl_offset;
	out->dir = get_file(s->dir);
	out->child_name = kstrdup(s->child_name, GFP_KERNEL_ACCOUNT);
	if (!out->child_name)
		return -ENOMEM;
	return profil_output_own(out, out->child_name);
}

/* Open @out's file for writing: a regular file, or a new one. */
static struct file *profil_output_open(const struct profil_koutput *out)
{
	const struct path *dir = &out->dir->f_path;
	struct file *f;
	bool regular;

	/* Look first, so that no device or FIFO is ever opened. */
	f = file_open_root(dir, out->name, O_PATH | O_NOFOLLOW, 0);
	if (!IS_ERR(f)) {
		regular = S_ISREG(file_inode(f)->i_mode);
		fput(f);
		if (!regular)
			return ERR_PTR(-EEXIST);
	} else if (PTR_ERR(f) != -ENOENT) {
		return f;
	}
	f = file_open_root(dir, out->name, O_WRONLY | O_CREAT | O_TRUNC |
			   O_NOFOLLOW | O_NONBLOCK | O_LARGEFILE, 0666);
	if (!IS_ERR(f) && !S_ISREG(file_inode(f)->i_mode)) {
		fput(f);
		return ERR_PTR(-EEXIST);
	}
	return f;
}

static int profil_output_file(const struct profil_output_job *job)
{
	struct file *f = profil_output_open(job->out);
	size_t done = 0;
	loff_t pos = 0;
	ssize_t n;

	if (IS_ERR(f))
		return PTR_ERR(f);
	while (done < job->len) {
		n = kernel_write(f, job->data + done, job->len - done, &pos);
		if (n <= 0)
			break;
		done += n;
	}
	fput(f);
	if (done == job->len)
		return 0;
	return n < 0 ? n : -ENOSPC;
}

/* In the writer thread: as the process, with its umask. */
static void profil_output_work(struct kthread_work *work)
{
	struct profil_output_job *job = container_of(work,
						     struct profil_output_job,
						     work);
	const struct cred *old = override_creds(job->out->cred);

	current->fs->umask = job->out->umask;
	job->ret = profil_output_file(job);
	revert_creds(old);
	complete(&job->done);
}

/**
 * profil_output_write - write the profile file of an arm that has ended
 * @arm: an arm with an output, its events released, its pages still pinned
 *
 * Waits for the writer thread.
 *
 * Return: 0 or the -errno that kept the file from being written.
 */
int profil_output_write(struct profil_arm *arm)
{
	const struct profil_koutput *out = arm->out;
	struct profil_output_job job = {
		.out = out,
		.data = arm->image->bins,
	};
	u64 nr;

	if (!job.data)
		return -EFAULT;		/* never pinned */
	nr = min(READ_ONCE(profil_output_ctl(arm)->nr_recs), out->nr_recs_max);
	job.len = out->head_size + nr * out->rec_size;
	kthread_init_work(&job.work, profil_output_work);
	init_completion(&job.done);
	kthread_queue_work(profil_writer, &job.work);
	wait_for_completion(&job.done);
	return job.ret;
}

static void profil_writer_init_fn(struct kthread_work *work)
{
	struct profil_output_job *job = container_of(work,
						     struct profil_output_job,
						     work);

	/* A kernel thread shares init's fs_struct: take our own. */
	job->ret = unshare_fs_struct();
	complete(&job->done);
}

int profil_output_init(void)
{
	struct profil_output_job job = {};

	profil_writer = kthread_create_worker(0, "profil-writer");
	if (IS_ERR(profil_writer))
		return PTR_ERR(profil_writer);
	kthread_init_work(&job.work, profil_writer_init_fn);
	init_completion(&job.done);
	kthread_queue_work(profil_writer, &job.work);
	wait_for_completion(&job.done);
	if (job.ret)
		kthread_destroy_worker(profil_writer);
	return job.ret;
}

void profil_output_exit(void)
{
	kthread_destroy_worker(profil_writer);
}
