// SPDX-License-Identifier: GPL-2.0
/*
 * Profile files: what an arm with a struct profil_output writes when it
 * ends (uapi/linux/profil.h).
 *
 * User space keeps the profile in its file format in one image that the
 * arm pins with its regions (the image is the arm's last kregion, which the
 * tick never counts into).  When the arm ends, with its events gone and
 * its pages still pinned, write.c writes the image's head and the first
 * records to a file.  Nothing of the image is trusted but one number, the
 * record count, read once and clamped to the capacity.
 *
 * Here: what the arming process said of its file (directory, names,
 * layout) and who it was then (credentials, seccomp filter, umask), which
 * write.c checks again when the arm ends.
 */
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/fs_struct.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/threads.h>
#include <linux/uaccess.h>

#include "compat.h"
#include "profil_internal.h"

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
	if (!out || !refcount_dec_and_test(&out->ref))
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

/* @t's umask (0022, as init's, if it has no fs any more). */
static umode_t profil_task_umask(struct task_struct *t)
{
	umode_t umask = 0022;

	task_lock(t);
	if (t->fs)
		umask = t->fs->umask;
	task_unlock(t);
	return umask;
}

/*
 * @t's side of @out: its credentials, umask, and @tmpl expanded with its
 * process ID as its own pid namespace sees it.  @t is current, or a forked
 * child taken over by a kernel thread (fork.c).
 */
static int profil_output_own(struct profil_koutput *out, const char *tmpl,
			     struct task_struct *t)
{
	pid_t pid = task_tgid_nr_ns(t, task_active_pid_ns(t));
	char *name = profil_name_format(tmpl, pid);

	if (IS_ERR(name))
		return PTR_ERR(name);
	out->name = name;
	out->cred = get_task_cred(t);
	out->seccomp = profil_seccomp_filter(t);
	out->umask = profil_task_umask(t);
	return 0;
}

static int profil_output_check(const struct profil_output *uo)
{
	u64 end, recs;
	int ret;

	if (uo->flags & ~PROFIL_OUTPUT_FLAGS)
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
	refcount_set(&out->ref, 1);
	arm->out = out;		/* freed with the arm from here on */
	out->rec_size = uo.rec_size;
	out->head_size = uo.head_size;
	out->nr_recs_max = uo.nr_recs_max;
	out->ctl_offset = uo.ctl_offset;
	out->flags = uo.flags;
	out->child = uo.flags & PROFIL_OUTPUT_FORKED;

	tmpl = profil_name_dup(uo.child_name);
	if (IS_ERR(tmpl))
		return PTR_ERR(tmpl);
	out->child_name = tmpl;
	/* The child's template is checked now, with the longest pid. */
	name = profil_name_format(tmpl, PID_MAX_LIMIT);
	if (IS_ERR(name))
		return PTR_ERR(name);
	kfree(name);
	tmpl = profil_name_dup(uo.name);
	if (IS_ERR(tmpl))
		return PTR_ERR(tmpl);
	ret = profil_output_own(out, tmpl, current);
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

/*
 * The directory of @arm's file, referenced, or NULL once its write let it
 * go (profil_write_finish()).  Under rcu_read_lock(), from any context.
 */
struct file *profil_output_dir_get_rcu(const struct profil_arm *arm)
{
	struct file *dir;

	if (!arm->out)
		return NULL;
	dir = READ_ONCE(arm->out->dir);
	return dir ? get_file(dir) : NULL;
}

/*
 * @src's output for a forked child, in @dir (the caller's reference),
 * called in the child (inheritance).
 */
int profil_output_clone(struct profil_arm *arm, const struct profil_arm *src,
			struct file *dir, struct task_struct *t)
{
	const struct profil_koutput *s = src->out;
	struct profil_koutput *out;

	if (!s)
		return 0;
	out = kzalloc(sizeof(*out), GFP_KERNEL_ACCOUNT);
	if (!out)
		return -ENOMEM;
	refcount_set(&out->ref, 1);
	arm->out = out;
	arm->image = &arm->regions[src->image - src->regions];
	out->rec_size = s->rec_size;
	out->head_size = s->head_size;
	out->nr_recs_max = s->nr_recs_max;
	out->ctl_offset = s->ctl_offset;
	out->flags = s->flags;
	out->child = true;
	if (!dir)
		return -ESRCH;	/* the parent's file was written already */
	out->dir = get_file(dir);
	out->child_name = kstrdup(s->child_name, GFP_KERNEL_ACCOUNT);
	if (!out->child_name)
		return -ENOMEM;
	return profil_output_own(out, out->child_name, t);
}

/*
 * Whether @arm's file is written when its process execs: not a forked
 * descendant's whose output says PROFIL_OUTPUT_CHILD_EXIT_ONLY.
 */
bool profil_output_at_exec(const struct profil_arm *arm)
{
	return !arm->out || !arm->out->child ||
	       !(arm->out->flags & PROFIL_OUTPUT_CHILD_EXIT_ONLY);
}

/**
 * profil_output_keep - carry @old's profile file on in @arm
 * @arm: a new arm set up with PROFIL_F_KEEP_FILE, its last region free
 * @old: the session's running arm, or NULL
 *
 * @arm takes a reference to @old's output and the image as its last
 * region, which it pins anew; profil_session_start() marks @old's file
 * kept once @arm runs.  Under the session lock.
 *
 * Return: 0, or -ENOENT if @old has no profile file.
 */
int profil_output_keep(struct profil_arm *arm, struct profil_arm *old)
{
	struct profil_kregion *image = &arm->regions[arm->nr_all - 1];

	if (!old || !old->out)
		return -ENOENT;
	image->uaddr = old->image->uaddr;
	image->nbins = old->image->nbins;
	refcount_inc(&old->out->ref);
	arm->out = old->out;
	arm->image = image;
	return 0;
}
