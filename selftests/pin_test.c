// SPDX-License-Identifier: GPL-2.0
/*
 * profil.ko selftests for what a buffer may be and what it costs: shared
 * file mappings refused, pins charged to the user (VmPin) across forks and
 * processes, re-arms charged net, overlapping regions charged once, a
 * MAP_SHARED buffer counted by parent and child, invalidations that leave
 * the pages in place (reclaim, soft-dirty) keeping the session, a
 * CLONE_VFORK child with its own mm, sessions not created by STATS or
 * OFF, and the perfmon_only parameter.
 *
 * The guest's /init mounts an ext2 filesystem (ext4.ko on a loop device)
 * at /mnt/ext and a ramfs at /mnt/ramfs, world-writable, for the file
 * tests; without them those tests skip and say so.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "common.h"
#include "kselftest_harness.h"

#define PAGE	4096UL
#define LEN	(2 * PAGE)		/* 16-bit bins from spin_a - SPIN_PAD */
#define NPAGES	8			/* the buffer of the charge tests */

/* TEST() has a fixed 30 s timeout, too short for TCG: an empty fixture. */
FIXTURE(pin) {
	int unused;
};

FIXTURE_SETUP(pin)
{
}

FIXTURE_TEARDOWN(pin)
{
	dev_ioctl(PROFIL_IOC_OFF, NULL);
	/* Whatever became of the tests that change the parameters. */
	if (geteuid() == 0) {
		set_param("perfmon_only", "0");
		set_param("max_rate", "10000");
	}
}

#define PIN_TEST(name) TEST_F_TIMEOUT(pin, name, 180)

static uintptr_t text_off(void)
{
	return (uintptr_t)spin_a - SPIN_PAD;
}

static uint64_t loop_bins(const uint16_t *buf, void (*fn)(volatile int *))
{
	size_t i = ((uintptr_t)fn - text_off()) / 2;

	return (uint64_t)buf[i] + buf[i + 1] + buf[i + 2];
}

static void *map_anon(size_t len, int flags)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       flags | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int arm_buf(void *buf)
{
	return arm_one(buf, LEN, text_off(), 0x10000, RATE);
}

static int wait_exit(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* A page shared with children, for what they report. */
static int64_t *report_page(void)
{
	return map_anon(PAGE, MAP_SHARED);
}

/* Limit the caller's pins to @pages, CAP_IPC_LOCK or not. */
static int limit_pins(unsigned long pages)
{
	struct rlimit rl = { pages * PAGE, pages * PAGE };

	if (drop_cap_ipc_lock())
		return -1;
	return setrlimit(RLIMIT_MEMLOCK, &rl);
}

/* ----------------------------------------------------------- file pages */

/* A file of @len bytes under @dir, mapped with @flags, or NULL. */
static void *map_file(const char *dir, size_t len, int flags)
{
	char path[256];
	void *p;
	int fd;

	snprintf(path, sizeof(path), "%s/profil-%d", dir, getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return NULL;
	unlink(path);
	if (ftruncate(fd, len)) {
		close(fd);
		return NULL;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

/* Is @dir a mount of filesystem type @fstype (from /proc/mounts)? */
static int mounted(const char *dir, const char *fstype)
{
	char line[512], mnt[256], type[64];
	int found = 0;
	FILE *f = fopen("/proc/mounts", "r");

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%*s %255s %63s", mnt, type) == 2 &&
			!strcmp(mnt, dir) && !strcmp(type, fstype);
	fclose(f);
	return found;
}

/*
 * A shared file mapping is refused, nothing pinned or charged, and the
 * running session stays as it was.
 */
static void expect_refused(struct __test_metadata *_metadata, void *fbuf)
{
	uint16_t *buf = map_anon(LEN, MAP_PRIVATE);
	struct profil_stats st;
	long long pins0;
	long pin0;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, arm_buf(buf));
	pins0 = pins_held();
	pin0 = vmpin_kb();
	EXPECT_EQ(-EFAULT, arm_buf(fbuf));
	EXPECT_EQ(pin0, vmpin_kb());
	if (pins0 >= 0)
		EXPECT_EQ(pins0, pins_held());
	st = get_stats();
	EXPECT_EQ(PROFIL_STATE_ON, st.state);
	EXPECT_EQ(1, st.armed);
	spin_cpu(spin_a, SPIN / 10);
	EXPECT_LT(0, loop_bins(buf, spin_a));
	EXPECT_EQ(0, dev_ioctl(PROFIL_IOC_OFF, NULL));
	EXPECT_EQ(0, vmpin_kb());
}

/* Map a file of @dir shared, if @dir is a mount of @type or @alt. */
#define MAP_FILE_ON(dir, type, alt, flags) ({				\
	if (!mounted(dir, type) && !mounted(dir, alt))			\
		SKIP(return, "no %s filesystem at %s", type, dir);	\
	map_file(dir, LEN, flags);					\
})

PIN_TEST(shared_mapping_of_an_ext2_file_is_efault)
{
	void *fbuf;

	REQUIRE_MODULE();
	fbuf = MAP_FILE_ON("/mnt/ext", "ext2", "ext4", MAP_SHARED);
	ASSERT_NE(NULL, fbuf);
	expect_refused(_metadata, fbuf);
}

PIN_TEST(shared_mapping_of_a_ramfs_file_is_efault)
{
	void *fbuf;

	REQUIRE_MODULE();
	fbuf = MAP_FILE_ON("/mnt/ramfs", "ramfs", "ramfs", MAP_SHARED);
	ASSERT_NE(NULL, fbuf);
	expect_refused(_metadata, fbuf);
}

/* Written pages of a private file mapping are anonymous: accepted. */
PIN_TEST(private_mapping_of_an_ext2_file_counts)
{
	uint16_t *buf;

	REQUIRE_MODULE();
	buf = MAP_FILE_ON("/mnt/ext", "ext2", "ext4", MAP_PRIVATE);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, arm_buf(buf));
	spin_cpu(spin_a, SPIN / 10);
	EXPECT_LT(0, loop_bins(buf, spin_a));
	EXPECT_EQ(8, vmpin_kb());
}

/* Shared memory: MAP_SHARED | MAP_ANONYMOUS, memfd, tmpfs. */
PIN_TEST(shmem_buffers_are_accepted)
{
	uint16_t *a = map_anon(LEN, MAP_SHARED), *m, *t;
	int fd = memfd_create("profil", MFD_CLOEXEC);

	REQUIRE_MODULE();
	ASSERT_NE(NULL, a);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, LEN));
	m = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	t = map_file("/tmp", LEN, MAP_SHARED);
	ASSERT_NE(NULL, t);
	EXPECT_EQ(0, arm_buf(a));
	EXPECT_EQ(0, arm_buf(m));
	EXPECT_EQ(0, arm_buf(t));
	spin_cpu(spin_a, SPIN / 10);
	EXPECT_LT(0, loop_bins(t, spin_a));
}

/* ------------------------------------------------------------- charges */

PIN_TEST(buffer_pins_show_in_vmpin_not_vmlck)
{
	uint16_t *buf = map_anon(NPAGES * PAGE, MAP_PRIVATE);
	char line[256];
	long lck = -1;
	FILE *f;

	REQUIRE_MODULE();
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, arm_one(buf, NPAGES * PAGE, text_off(), 0x10000, RATE));
	EXPECT_EQ(NPAGES * 4, vmpin_kb());
	f = fopen("/proc/self/status", "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f))
		sscanf(line, "VmLck: %ld kB", &lck);
	fclose(f);
	EXPECT_EQ(0, lck);
	EXPECT_EQ(0, dev_ioctl(PROFIL_IOC_OFF, NULL));
	EXPECT_EQ(0, vmpin_kb());
}

/*
 * The limit bounds what the user pins, whatever the forks: a child's copy
 * of a buffer of the whole limit cannot be pinned as well.
 */
PIN_TEST(fork_child_copy_counts_against_the_users_limit)
{
	uint16_t *buf = map_anon(NPAGES * PAGE, MAP_PRIVATE);
	int64_t *r = report_page();
	struct profil_stats st;
	pid_t pid;

	REQUIRE_MODULE();
	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, r);
	ASSERT_EQ(0, limit_pins(NPAGES));
	ASSERT_EQ(0, arm_one(buf, NPAGES * PAGE, text_off(), 0x10000, RATE));

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		st = get_stats();
		r[0] = st.state;
		r[1] = st.stop_reason;
		r[2] = vmpin_kb();
		r[3] = st.inherit_error;
		_exit(0);
	}
	ASSERT_EQ(0, wait_exit(pid));
	EXPECT_EQ(PROFIL_STATE_OFF, r[0]);
	EXPECT_EQ(PROFIL_STOP_INHERIT, r[1]);
	EXPECT_EQ(0, r[2]);
	/* STATS says why: the limit. */
	EXPECT_EQ(-ENOMEM, r[3]);

	st = get_stats();
	EXPECT_EQ(PROFIL_STATE_ON, st.state);
	spin_cpu(spin_a, SPIN / 10);
	EXPECT_LT(0, loop_bins(buf, spin_a));
}

/*
 * Another process of the same user cannot pin past what the first holds,
 * and can once the first lets go.
 */
PIN_TEST(second_process_of_the_user_is_enomem_until_the_first_is_off)
{
	uint16_t *buf = map_anon(NPAGES * PAGE, MAP_PRIVATE);
	int64_t *r = report_page();
	pid_t pid;

	REQUIRE_MODULE();
	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, r);
	ASSERT_EQ(0, limit_pins(NPAGES));
	ASSERT_EQ(1, profil_inherit(0));
	ASSERT_EQ(0, profil((unsigned short *)buf, NPAGES * PAGE, text_off(),
			    0x10000));
	ASSERT_EQ(0, profil_inherit(1));

	for (int round = 0; round < 2; round++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			r[round] = arm_one(buf, NPAGES * PAGE, text_off(),
					   0x10000, RATE);
			_exit(0);
		}
		ASSERT_EQ(0, wait_exit(pid));
		/* Let go after the first round. */
		ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_OFF, NULL));
	}
	EXPECT_EQ(-ENOMEM, r[0]);
	EXPECT_EQ(0, r[1]);
}

/* A re-arm is charged net of the buffer it replaces. */
PIN_TEST(rearm_with_a_new_buffer_of_the_whole_limit_works)
{
	uint16_t *a = map_anon(NPAGES * PAGE, MAP_PRIVATE);
	uint16_t *b = map_anon(NPAGES * PAGE, MAP_PRIVATE);

	REQUIRE_MODULE();
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, limit_pins(NPAGES));
	ASSERT_EQ(0, arm_one(a, NPAGES * PAGE, text_off(), 0x10000, RATE));
	EXPECT_EQ(0, arm_one(b, NPAGES * PAGE, text_off(), 0x10000, RATE));
	EXPECT_EQ(NPAGES * 4, vmpin_kb());
	EXPECT_EQ(2, get_stats().armed);
	spin_cpu(spin_a, SPIN / 10);
	EXPECT_LT(0, loop_bins(b, spin_a));
	EXPECT_EQ(0, loop_bins(a, spin_a));
	EXPECT_EQ(0, dev_ioctl(PROFIL_IOC_OFF, NULL));
	EXPECT_EQ(0, vmpin_kb());
}

/* Two regions over the same pages are charged once. */
PIN_TEST(overlapping_regions_are_charged_once)
{
	uint16_t *buf = map_anon(NPAGES * PAGE, MAP_PRIVATE);
	struct profil_region r[2] = {
		{ .buf = (uintptr_t)buf, .bufsize = NPAGES * PAGE,
		  .offset = text_off(), .scale = 0x10000 },
		{ .buf = (uintptr_t)buf + PAGE, .bufsize = (NPAGES - 1) * PAGE,
		  .offset = text_off() + 0x100000, .scale = 0x10000 },
	};

	REQUIRE_MODULE();
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, limit_pins(NPAGES));
	ASSERT_EQ(0, arm_regions(r, 2, RATE));
	EXPECT_EQ(NPAGES * 4, vmpin_kb());
	EXPECT_EQ(0, dev_ioctl(PROFIL_IOC_OFF, NULL));
	EXPECT_EQ(0, vmpin_kb());
}

/* ---------------------------------------------------------------- fork */

/* A buffer mapped with @flags, armed, and a report page for a child. */
static int64_t *armed_with_report(struct __test_metadata *_metadata,
				  int flags, uint16_t **bufp)
{
	int64_t *r = report_page();

	REQUIRE_MODULE();
	*bufp = map_anon(LEN, flags);
	ASSERT_NE(NULL, *bufp);
	ASSERT_NE(NULL, r);
	ASSERT_EQ(0, arm_buf(*bufp));
	return r;
}

/* A MAP_SHARED buffer is the same pages in both: one histogram. */
PIN_TEST(map_shared_buffer_counted_by_parent_and_child)
{
	uint16_t *buf;
	int64_t *r = armed_with_report(_metadata, MAP_SHARED, &buf);
	struct profil_stats st;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		spin_cpu(spin_b, SPIN / 3);
		st = get_stats();
		r[0] = st.state;
		r[1] = st.samples;
		_exit(0);
	}
	ASSERT_EQ(0, wait_exit(pid));
	spin_cpu(spin_a, SPIN / 3);
	ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_OFF, NULL));
	st = get_stats();

	EXPECT_EQ(PROFIL_STATE_ON, r[0]);
	EXPECT_LT(0, loop_bins(buf, spin_b));	/* the child's loop */
	EXPECT_LT(0, loop_bins(buf, spin_a));	/* the parent's */
	TH_LOG("bins %llu, parent %llu + child %lld samples",
	       (unsigned long long)sum16(buf, LEN / 2),
	       (unsigned long long)st.samples, (long long)r[1]);
	EXPECT_EQ(st.samples + r[1], sum16(buf, LEN / 2));
}

/*
 * clone(CLONE_VFORK) without CLONE_VM: an mm of its own, so an ordinary
 * child that inherits and controls its own session.
 */
PIN_TEST(clone_vfork_without_vm_is_an_ordinary_child)
{
	uint16_t *buf;
	int64_t *r = armed_with_report(_metadata, MAP_PRIVATE, &buf);
	struct profil_stats st;
	long pid;

	pid = syscall(SYS_clone, CLONE_VFORK | SIGCHLD, 0, 0, 0, 0);
	ASSERT_LE(0, pid);
	if (pid == 0) {
		r[0] = get_stats().state;
		spin_cpu(spin_b, SPIN / 10);
		r[1] = loop_bins(buf, spin_b);
		r[2] = dev_ioctl(PROFIL_IOC_OFF, NULL);
		st = get_stats();
		r[3] = st.state;
		r[4] = st.stop_reason;
		r[5] = arm_buf(buf);
		r[6] = get_stats().state;
		_exit(0);
	}
	ASSERT_EQ(0, wait_exit(pid));
	EXPECT_EQ(PROFIL_STATE_ON, r[0]);
	EXPECT_LT(0, r[1]);
	EXPECT_EQ(0, r[2]);
	EXPECT_EQ(PROFIL_STATE_OFF, r[3]);
	EXPECT_EQ(PROFIL_STOP_USER, r[4]);
	EXPECT_EQ(0, r[5]);
	EXPECT_EQ(PROFIL_STATE_ON, r[6]);
	/* The parent's own buffer never saw the child's loop. */
	EXPECT_EQ(0, loop_bins(buf, spin_b));
	EXPECT_EQ(PROFIL_STATE_ON, get_stats().state);
}

/* ----------------------------------------- invalidations that keep pages */

/* Spin in spin_a and expect the samples in @buf, the session on. */
static void expect_counting(struct __test_metadata *_metadata, uint16_t *buf)
{
	uint64_t a0 = loop_bins(buf, spin_a), ns;
	struct profil_stats st;

	ns = spin_cpu(spin_a, SPIN / 3);
	st = get_stats();
	EXPECT_EQ(PROFIL_STATE_ON, st.state);
	EXPECT_EQ(PROFIL_STOP_NONE, st.stop_reason);
	EXPECT_LE(expected(ns < SPIN / 3 ? ns : SPIN / 3, RATE) * 0.75,
		  loop_bins(buf, spin_a) - a0);
}

static int clear_soft_dirty(void)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -1;
	ret = write(fd, "4", 1) == 1 ? 0 : -1;
	close(fd);
	return ret;
}

/* Reclaim unmaps pinned shmem pages it cannot free: the pages stay. */
PIN_TEST(madv_pageout_of_a_shmem_buffer_keeps_session)
{
	uint16_t *buf = map_anon(LEN, MAP_SHARED);

	REQUIRE_MODULE();
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, arm_buf(buf));
	spin_cpu(spin_a, SPIN / 10);
	ASSERT_EQ(0, madvise(buf, LEN, MADV_PAGEOUT));
	expect_counting(_metadata, buf);
	ASSERT_EQ(0, madvise(buf, LEN, MADV_PAGEOUT));
	expect_counting(_metadata, buf);
}

/* Soft-dirty clearing write-protects the PTEs, then reclaim unmaps them. */
PIN_TEST(soft_dirty_clearing_then_pageout_keeps_session)
{
	uint16_t *buf = map_anon(LEN, MAP_SHARED);

	REQUIRE_MODULE();
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, arm_buf(buf));
	ASSERT_EQ(0, clear_soft_dirty());
	expect_counting(_metadata, buf);
	ASSERT_EQ(0, clear_soft_dirty());
	ASSERT_EQ(0, madvise(buf, LEN, MADV_PAGEOUT));
	expect_counting(_metadata, buf);
}

/* ------------------------------------------------------------ sessions */

static long module_refcnt(void)
{
	FILE *f = fopen("/sys/module/profil/refcnt", "r");
	long n = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &n) != 1)
		n = -1;
	fclose(f);
	return n;
}

/* A process that never armed gets answers, and no session is made. */
PIN_TEST(stats_and_off_create_no_session)
{
	int go[2], done[2];
	long before, during;
	char c = 0;
	pid_t pid;

	REQUIRE_MODULE();
	ASSERT_EQ(0, pipe2(go, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(done, O_CLOEXEC));
	before = module_refcnt();
	ASSERT_LE(0, before);

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct profil_stats st = get_stats();

		close(go[1]);
		close(done[0]);
		if (st.state != PROFIL_STATE_OFF || st.armed ||
		    dev_ioctl(PROFIL_IOC_OFF, NULL))
			_exit(1);
		/* Tell the parent, then stay until it has looked. */
		if (write(done[1], &c, 1) != 1 || read(go[0], &c, 1) < 0)
			_exit(2);
		_exit(0);
	}
	close(go[0]);
	close(done[1]);
	ASSERT_EQ(1, read(done[0], &c, 1));
	during = module_refcnt();
	close(go[1]);
	ASSERT_EQ(0, wait_exit(pid));
	EXPECT_EQ(before, during);
}

/* ---------------------------------------------------------- perfmon_only */

PIN_TEST(perfmon_only_refuses_unprivileged_setups)
{
	uint16_t *buf = map_anon(LEN, MAP_PRIVATE);
	int64_t *r = report_page();
	pid_t pid;

	REQUIRE_MODULE();
	if (geteuid() != 0)
		SKIP(return, "needs root to set the module parameter");
	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, r);
	ASSERT_EQ(0, set_param("perfmon_only", "1"));

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(1);
		r[0] = arm_buf(buf);
		r[1] = get_stats().state;
		r[2] = dev_ioctl(PROFIL_IOC_OFF, NULL);
		_exit(0);
	}
	EXPECT_EQ(0, wait_exit(pid));
	r[3] = arm_buf(buf);		/* root has CAP_PERFMON */
	dev_ioctl(PROFIL_IOC_OFF, NULL);
	ASSERT_EQ(0, set_param("perfmon_only", "0"));

	EXPECT_EQ(-EACCES, r[0]);
	EXPECT_EQ(PROFIL_STATE_OFF, r[1]);
	EXPECT_EQ(0, r[2]);
	EXPECT_EQ(0, r[3]);
}

/* ------------------------------------------------------------ max_rate */

PIN_TEST(max_rate_parameter_bounds_the_rate_up_to_100_khz)
{
	uint16_t bins[4];
	struct profil_region r = {
		.buf = (uintptr_t)bins, .bufsize = sizeof(bins), .scale = 2,
	};

	REQUIRE_MODULE();
	if (geteuid() != 0)
		SKIP(return, "needs root to set the module parameter");
	ASSERT_EQ(0, set_param("max_rate", "2000"));
	EXPECT_EQ(-EINVAL, arm_regions(&r, 1, 2001));
	EXPECT_EQ(0, arm_regions(&r, 1, 2000));
	/* Above it, the module's own cap: 10 us of CPU a sample. */
	ASSERT_EQ(0, set_param("max_rate", "1000000"));
	EXPECT_EQ(-EINVAL, arm_regions(&r, 1, 100001));
	EXPECT_EQ(0, arm_regions(&r, 1, 100000));
	EXPECT_EQ(100000, get_stats().rate);
	EXPECT_EQ(0, dev_ioctl(PROFIL_IOC_OFF, NULL));
	ASSERT_EQ(0, set_param("max_rate", "10000"));
}

TEST_HARNESS_MAIN
