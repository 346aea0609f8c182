// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/profil: profil(2) for Linux.
 *
 * A misc device whose ioctls arm, stop and query the calling process's
 * profiling session, or attach the fd to another process (attach.c), after
 * which STATS, OFF and mmap() on that fd are the attachment's.  Each
 * handler copies its argument in and validates it completely before it
 * touches the session, so bad input changes nothing.
 * See Documentation in man/profil.4 and the ABI in uapi/linux/profil.h.
 */
#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/uaccess.h>

#include "profil_internal.h"

unsigned int profil_max_rate = 10000;
module_param_named(max_rate, profil_max_rate, uint, 0644);
MODULE_PARM_DESC(max_rate, "highest sampling rate a session may ask for, in Hz (default 10000)");

/*
 * Any process may profile itself: the events we create sample only the
 * caller's own threads, with a fixed attr and no data beyond a PC of its
 * own, so they bypass perf_event_paranoid and the LSM's perf_event_open
 * hook on purpose (as the BSDs' and illumos's profil(2) do).  An
 * administrator who wants the perf rules to apply sets perfmon_only: then
 * arming needs CAP_PERFMON (or CAP_SYS_ADMIN).  See profil(4), SECURITY.
 */
static bool profil_perfmon_only;
module_param_named(perfmon_only, profil_perfmon_only, bool, 0644);
MODULE_PARM_DESC(perfmon_only, "only callers with CAP_PERFMON may arm a session (default N)");

/*
 * The rate of a session that asks for none (profil(2)'s): one sample a
 * clock tick.  Read-only, for programs that turn counts into seconds
 * (libprofil's __profile_frequency()).
 */
static unsigned int profil_default_rate = HZ;
module_param_named(default_rate, profil_default_rate, uint, 0444);
MODULE_PARM_DESC(default_rate, "rate of a session that asks for none: the kernel's HZ (read-only)");

/* The shortest sample period: 10 us of CPU time. */
#define PROFIL_RATE_CAP		100000

/* Read a user struct whose first __u32 is its size (uapi rules). */
int profil_copy_in(void *dst, size_t ksize, size_t min_size,
		   const void __user *src)
{
	u32 usize;

	if (get_user(usize, (const u32 __user *)src))
		return -EFAULT;
	if (usize < min_size)
		return -EINVAL;
	if (usize > PAGE_SIZE)
		return -E2BIG;
	return copy_struct_from_user(dst, ksize, src, usize);
}

/**
 * profil_user_buf_check - a user buffer the kernel may pin: within bounds
 * @addr: its user address
 * @size: its bytes
 *
 * Return: 0, -E2BIG above PROFIL_MAX_BUFSIZE, -EINVAL if it wraps the
 * address space, -EFAULT if it is not user memory.
 */
int profil_user_buf_check(u64 addr, u64 size)
{
	u64 end;

	if (size > PROFIL_MAX_BUFSIZE)
		return -E2BIG;
	if (check_add_overflow(addr, size, &end))
		return -EINVAL;
	if (!access_ok(u64_to_user_ptr(addr), size))
		return -EFAULT;
	return 0;
}

static int profil_region_check(const struct profil_region *ur,
			       struct profil_kregion *r, u32 mode)
{
	u32 flags = ur->flags, shift;
	int ret;

	if (flags & ~PROFIL_REGION_FLAGS)
		return -EINVAL;
	if (mode == PROFIL_MODE_PCSAMPLE) {
		/* An array of __u64 PCs: no flags, offset or scale. */
		if (flags || ur->offset || ur->scale)
			return -EINVAL;
		flags = PROFIL_KREGION_PCS;
	} else if (flags & PROFIL_REGION_OVERFLOW) {
		if (ur->offset || ur->scale)
			return -EINVAL;
		/* A count and room for one PC at least, all __u64. */
		if (flags & PROFIL_REGION_PCLOG) {
			if ((flags & PROFIL_REGION_U32) || ur->bufsize < 16)
				return -EINVAL;
			flags |= PROFIL_KREGION_PCS;
		}
	} else if (flags & PROFIL_REGION_PCLOG) {
		return -EINVAL;
	} else if (!ur->scale || ur->scale > PROFIL_SCALE_ONE) {
		return -EINVAL;
	}
	shift = profil_bin_shift(flags);
	if (ur->buf & ((1U << shift) - 1))
		return -EINVAL;
	ret = profil_user_buf_check(ur->buf, ur->bufsize);
	if (ret)
		return ret;

	r->uaddr = ur->buf;
	r->offset = ur->offset;
	r->scale = ur->scale;
	r->flags = flags;
	r->nbins = ur->bufsize >> shift;
	if ((flags & PROFIL_REGION_OVERFLOW) && !(flags & PROFIL_REGION_PCLOG))
		r->nbins = min_t(u64, r->nbins, 1);
	return 0;
}

static int profil_region_cmp(const void *a, const void *b)
{
	const struct profil_kregion *ra = a, *rb = b;

	/* Highest offset first: in overlaps, the larger offset wins. */
	if (ra->offset != rb->offset)
		return ra->offset < rb->offset ? 1 : -1;
	return 0;
}

/* Copy in and check every region; the overflow region goes last. */
static int profil_regions_copy(struct profil_arm *arm,
			       const struct profil_setup *ks)
{
	const void __user *ur = u64_to_user_ptr(ks->regions);
	struct profil_region r;
	struct profil_kregion *kr;
	u32 i, n = 0;
	int ret;

	for (i = 0; i < ks->nr_regions; i++, ur += ks->region_size) {
		ret = copy_struct_from_user(&r, sizeof(r), ur,
					    ks->region_size);
		if (ret)
			return ret;
		if (r.flags & PROFIL_REGION_OVERFLOW) {
			if (arm->overflow)
				return -EINVAL;
			arm->overflow = &arm->regions[ks->nr_regions - 1];
			kr = arm->overflow;
		} else {
			kr = &arm->regions[n++];
		}
		ret = profil_region_check(&r, kr, ks->mode);
		if (ret)
			return ret;
	}
	if (arm->overflow && n != ks->nr_regions - 1)
		return -EINVAL;
	arm->nr_regions = n;
	sort(arm->regions, n, sizeof(*arm->regions), profil_region_cmp, NULL);
	return profil_index_build(arm);
}

static int profil_setup_check(const struct profil_setup *ks, u32 *rate)
{
	u32 max_rate = READ_ONCE(profil_max_rate);

	if (ks->flags & ~PROFIL_F_ALL)
		return -EINVAL;
	if (ks->mode != PROFIL_MODE_HIST && ks->mode != PROFIL_MODE_PCSAMPLE)
		return -EINVAL;
	/* pcsample: one array of PCs, and no profile file. */
	if (ks->mode == PROFIL_MODE_PCSAMPLE &&
	    (ks->nr_regions != 1 || ks->output ||
	     (ks->flags & PROFIL_F_KEEP_FILE)))
		return -EINVAL;
	/* A file is new or kept, not both. */
	if ((ks->flags & PROFIL_F_KEEP_FILE) && ks->output)
		return -EINVAL;
	*rate = ks->rate ? ks->rate : profil_default_rate;
	if (*rate > max_rate || *rate > PROFIL_RATE_CAP)
		return -EINVAL;
	if (!ks->nr_regions)
		return -EINVAL;
	if (ks->nr_regions > PROFIL_MAX_REGIONS)
		return -E2BIG;
	if (ks->region_size < PROFIL_REGION_SIZE_VER0)
		return -EINVAL;
	if (ks->region_size > PAGE_SIZE)
		return -E2BIG;
	return 0;
}

/*
 * A vfork child runs on its parent's mm until it execs or exits, and the
 * session there is the parent's: the child may not arm or stop it.
 * clone(CLONE_VFORK) without CLONE_VM makes a child with an mm (and a
 * session) of its own, which is an ordinary child.
 */
static bool profil_vfork_child(void)
{
	struct task_struct *parent;
	bool shared;

	if (!current->vfork_done)
		return false;
	rcu_read_lock();
	parent = rcu_dereference(current->real_parent);
	shared = READ_ONCE(parent->mm) == current->mm;
	rcu_read_unlock();
	return shared;
}

static long profil_ioc_setup(void __user *uarg)
{
	struct profil_session *sess;
	struct profil_setup ks;
	struct profil_arm *arm;
	u32 rate;
	int ret;

	ret = profil_copy_in(&ks, sizeof(ks), PROFIL_SETUP_SIZE_VER0, uarg);
	if (ret)
		return ret;
	ret = profil_setup_check(&ks, &rate);
	if (ret)
		return ret;
	if (READ_ONCE(profil_perfmon_only) && !perfmon_capable())
		return -EACCES;
	/* Report the rate now, so that no fault can follow the arming. */
	if (put_user(rate, &((struct profil_setup __user *)uarg)->rate))
		return -EFAULT;

	/* The image of a profile file is one more region, the last. */
	arm = profil_arm_alloc(ks.nr_regions +
			       (ks.output || (ks.flags & PROFIL_F_KEEP_FILE)));
	if (!arm)
		return -ENOMEM;
	arm->flags = ks.flags;
	arm->mode = ks.mode;
	arm->rate = rate;
	arm->period_ns = div_u64(NSEC_PER_SEC, rate);
	ret = profil_regions_copy(arm, &ks);
	if (ret)
		goto err_free;
	if (ks.output) {
		ret = profil_output_setup(arm, &arm->regions[ks.nr_regions],
					  u64_to_user_ptr(ks.output));
		if (ret)
			goto err_free;
	}

	sess = profil_session_get(current->mm);
	if (IS_ERR(sess)) {
		ret = PTR_ERR(sess);
		goto err_free;
	}
	ret = profil_session_start(sess, arm, current);
	if (ret)
		goto err_free;
	return 0;

err_free:
	profil_arm_put(arm);
	return ret;
}

/*
 * The SETUP an attach amounts to, in @ks, checked as SETUP's are; the
 * rate it gets in *@rate.
 */
static int profil_attach_check(const struct profil_attach *ka,
			       struct profil_setup *ks, u32 *rate)
{
	*ks = (struct profil_setup){
		.mode		= PROFIL_MODE_HIST,
		.rate		= ka->rate,
		.nr_regions	= ka->nr_regions,
		.region_size	= ka->region_size,
		.regions	= ka->regions,
	};
	if (ka->flags || ka->reserved)
		return -EINVAL;
	return profil_setup_check(ks, rate);
}

static long profil_ioc_attach(struct file *file, void __user *uarg)
{
	struct profil_attach __user *ua = uarg;
	struct profil_attach ka;
	struct profil_setup ks;
	struct profil_arm *arm;
	u64 bins_size;
	u32 rate;
	int ret;

	ret = profil_copy_in(&ka, sizeof(ka), PROFIL_ATTACH_SIZE_VER0, uarg);
	if (ret)
		return ret;
	ret = profil_attach_check(&ka, &ks, &rate);
	if (ret)
		return ret;
	if (READ_ONCE(profil_perfmon_only) && !perfmon_capable())
		return -EACCES;
	if (put_user(rate, &ua->rate))
		return -EFAULT;

	arm = profil_arm_alloc(ka.nr_regions);
	if (!arm)
		return -ENOMEM;
	arm->mode = PROFIL_MODE_HIST;
	arm->rate = rate;
	arm->period_ns = div_u64(NSEC_PER_SEC, rate);
	ret = profil_regions_copy(arm, &ks);
	if (ret) {
		profil_arm_put(arm);
		return ret;
	}
	ret = profil_attach_start(file, arm, ka.mem_fd, ka.pid, &bins_size);
	if (ret)
		return ret;
	/* A fault here leaves the attachment in place: close() ends it. */
	return put_user(bins_size, &ua->bins_size) ? -EFAULT : 0;
}

static long profil_ioc_stats(struct file *file, void __user *uarg)
{
	struct profil_attachment *att = READ_ONCE(file->private_data);
	struct profil_session *sess;
	struct profil_stats st = {};
	u32 usize;

	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < PROFIL_STATS_SIZE_VER0)
		return -EINVAL;

	/* A vfork child, or a process that never armed: all zero, off. */
	sess = att || profil_vfork_child() ? NULL :
		profil_session_find(current->mm);
	if (att)
		profil_attach_stats(att, &st,
				    usize >= PROFIL_STATS_SIZE_VER4);
	else if (sess)
		profil_session_stats(sess, &st);
	st.size = min_t(u32, usize, sizeof(st));
	return copy_to_user(uarg, &st, st.size) ? -EFAULT : 0;
}

/*
 * The number of a command without its size bits.  A struct's 'size' field
 * carries its version (uapi/linux/profil.h), so the number a later header
 * computes for a grown struct must reach the same handler, as in DRM; the
 * type, number and direction must still match exactly.
 */
#define PROFIL_IOC_BASE(cmd)	((cmd) & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT))

static long profil_ioctl(struct file *file, unsigned int cmd,
			 unsigned long arg)
{
	struct profil_attachment *att = READ_ONCE(file->private_data);
	struct profil_session *sess;

	if (!current->mm)
		return -EINVAL;
	/* A forked caller's inherited session is in place first. */
	profil_fork_settle();

	switch (PROFIL_IOC_BASE(cmd)) {
	case PROFIL_IOC_BASE(PROFIL_IOC_SETUP):
		if (profil_vfork_child())
			return -EINVAL;
		return profil_ioc_setup((void __user *)arg);
	case PROFIL_IOC_BASE(PROFIL_IOC_OFF):
		if (arg)
			return -EINVAL;
		if (att) {
			profil_attach_off(att);
			return 0;
		}
		if (profil_vfork_child())
			return 0;	/* nothing of its own to stop */
		sess = profil_session_find(current->mm);
		if (sess)
			profil_session_off(sess);
		return 0;
	case PROFIL_IOC_BASE(PROFIL_IOC_STATS):
		return profil_ioc_stats(file, (void __user *)arg);
	case PROFIL_IOC_BASE(PROFIL_IOC_ATTACH):
		return profil_ioc_attach(file, (void __user *)arg);
	default:
		return -ENOTTY;
	}
}

/* Only an attached fd maps: its bins (attach.c). */
static int profil_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct profil_attachment *att = READ_ONCE(file->private_data);

	return att ? profil_attach_mmap(att, vma) : -ENODEV;
}

/*
 * misc_open() left our struct miscdevice in ->private_data: it holds an
 * attachment or NULL here (attach.c).
 */
static int profil_open(struct inode *inode, struct file *file)
{
	file->private_data = NULL;
	return nonseekable_open(inode, file);
}

static int profil_release(struct inode *inode, struct file *file)
{
	if (file->private_data)
		profil_attach_release(file->private_data);
	return 0;
}

/* .owner: an open fd, and so an attachment, holds the module. */
static const struct file_operations profil_fops = {
	.owner		= THIS_MODULE,
	.open		= profil_open,
	.release	= profil_release,
	.mmap		= profil_mmap,
	.unlocked_ioctl	= profil_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
};

static struct miscdevice profil_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "profil",
	.fops	= &profil_fops,
	.mode	= 0666,
};

static void profil_check_abi(void)
{
	BUILD_BUG_ON(sizeof(struct profil_region) != PROFIL_REGION_SIZE_VER0);
	BUILD_BUG_ON(offsetof(struct profil_region, bufsize) != 8);
	BUILD_BUG_ON(offsetof(struct profil_region, offset) != 16);
	BUILD_BUG_ON(offsetof(struct profil_region, scale) != 24);
	BUILD_BUG_ON(offsetof(struct profil_region, flags) != 28);
	BUILD_BUG_ON(sizeof(struct profil_setup) != PROFIL_SETUP_SIZE_VER1);
	BUILD_BUG_ON(offsetof(struct profil_setup, output) !=
		     PROFIL_SETUP_SIZE_VER0);
	BUILD_BUG_ON(sizeof(struct profil_output) != PROFIL_OUTPUT_SIZE_VER0);
	BUILD_BUG_ON(offsetof(struct profil_output, image) != 16);
	BUILD_BUG_ON(offsetof(struct profil_output, child_name) != 64);
	BUILD_BUG_ON(sizeof(struct profil_output_ctl) != 16);
	BUILD_BUG_ON(offsetof(struct profil_setup, rate) != 12);
	BUILD_BUG_ON(offsetof(struct profil_setup, region_size) != 20);
	BUILD_BUG_ON(offsetof(struct profil_setup, regions) != 24);
	BUILD_BUG_ON(sizeof(struct profil_stats) != PROFIL_STATS_SIZE_VER4);
	BUILD_BUG_ON(offsetof(struct profil_stats, cpu_ns) !=
		     PROFIL_STATS_SIZE_VER3);
	BUILD_BUG_ON(offsetof(struct profil_stats, inherit_error) !=
		     PROFIL_STATS_SIZE_VER2);
	BUILD_BUG_ON(offsetof(struct profil_stats, paused) !=
		     PROFIL_STATS_SIZE_VER0);
	BUILD_BUG_ON(offsetof(struct profil_stats, period_ns) != 16);
	BUILD_BUG_ON(offsetof(struct profil_stats, armed) != 56);
	BUILD_BUG_ON(offsetof(struct profil_stats, ticks) !=
		     PROFIL_STATS_SIZE_VER1);
	BUILD_BUG_ON(sizeof(struct profil_attach) != PROFIL_ATTACH_SIZE_VER0);
	BUILD_BUG_ON(offsetof(struct profil_attach, rate) != 16);
	BUILD_BUG_ON(offsetof(struct profil_attach, regions) != 32);
	BUILD_BUG_ON(offsetof(struct profil_attach, bins_size) != 40);
}

static int __init profil_init(void)
{
	int ret;

	profil_check_abi();
	profil_attach_init();
	ret = profil_sessions_init();
	if (ret)
		return ret;
	ret = profil_clock_init();
	if (ret)
		goto err_sessions;
	ret = profil_fork_init();
	if (ret)
		goto err_clock;
	ret = misc_register(&profil_misc);
	if (ret)
		goto err_fork;
	return 0;

err_fork:
	profil_fork_exit();
err_clock:
	profil_clock_exit();
err_sessions:
	profil_sessions_exit();
	return ret;
}

/*
 * Every session and every write holds a module reference, so none is
 * left; the arms they freed may still be in RCU callbacks of ours.
 */
static void __exit profil_exit(void)
{
	misc_deregister(&profil_misc);
	profil_fork_exit();
	profil_sessions_exit();
	profil_clock_exit();
	rcu_barrier();
}

module_init(profil_init);
module_exit(profil_exit);

MODULE_AUTHOR("The profil for Linux developers");
MODULE_DESCRIPTION("profil(2): PC sampling into a histogram in the process's memory");
MODULE_LICENSE("GPL");
