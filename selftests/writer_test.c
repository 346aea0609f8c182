// SPDX-License-Identifier: GPL-2.0
/*
 * The profile writer against a hostile local user (struct profil_output;
 * SECURITY in profil(4)): nobody waits for a file under a lock others
 * need, a write that never completes delays only its owner, a file is
 * written only with the credentials the process still has, only ever into
 * a file just made, charged to the process (RLIMIT_FSIZE, memory cgroup),
 * and a re-arm's old file holds nothing of the new arm.
 */
#define _GNU_SOURCE
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <dirent.h>
#include <poll.h>
#include <linux/filter.h>
#include <linux/fuse.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <sched.h>

#include "common.h"
#include "kselftest_harness.h"

#define PARAM		"/sys/module/profil/parameters/"
#define HARDLINKS	"/proc/sys/fs/protected_hardlinks"
#define IMG_HEAD	(4 * 4096)	/* written as it is; bins at its end */
#define IMG_REC		16
#define IMG_MAX		16
#define IMG_CTL		(IMG_HEAD + IMG_REC * IMG_MAX)
#define IMG_SIZE	(IMG_CTL + 4096)

FIXTURE(writer) {
	char dir[64];
	int dirfd;
	unsigned char *img;
	struct profil_output_ctl *ctl;
	struct profil_region r;
	struct profil_output o;
	struct profil_setup s;
	long long pins0;
};

/* Bin @i from the end of the head: 1 is the arm's, 2 a second arm's. */
static uint16_t *head_bin(FIXTURE_DATA(writer) *self, int i)
{
	return (uint16_t *)(self->img + IMG_HEAD) - i;
}

FIXTURE_SETUP(writer)
{
	REQUIRE_MODULE();
	self->pins0 = pins_held();
	strcpy(self->dir, "/tmp/writerXXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	ASSERT_EQ(0, chmod(self->dir, 0755));
	self->dirfd = open(self->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ASSERT_LE(0, self->dirfd);
	self->img = mmap(NULL, IMG_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->img);
	memset(self->img, 'h', IMG_HEAD - 4);
	self->ctl = (void *)(self->img + IMG_CTL);
	self->ctl->enable = 1;
	self->r = (struct profil_region){
		.buf = (uintptr_t)head_bin(self, 1), .bufsize = 2,
		.flags = PROFIL_REGION_OVERFLOW,
	};
	self->o = (struct profil_output){
		.size = sizeof(self->o), .dirfd = self->dirfd,
		.rec_size = IMG_REC, .image = (uintptr_t)self->img,
		.image_size = IMG_SIZE, .head_size = IMG_HEAD,
		.nr_recs_max = IMG_MAX, .ctl_offset = IMG_CTL,
		.name = (uintptr_t)"w.%p", .child_name = (uintptr_t)"k.%p",
	};
	self->s = (struct profil_setup){
		.size = sizeof(self->s), .rate = RATE, .nr_regions = 1,
		.region_size = sizeof(self->r), .regions = (uintptr_t)&self->r,
		.output = (uintptr_t)&self->o,
	};
}

FIXTURE_TEARDOWN(writer)
{
	char cmd[128];

	dev_ioctl(PROFIL_IOC_OFF, NULL);
	close(self->dirfd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", self->dir);
	if (system(cmd))
		TH_LOG("could not remove %s", self->dir);
	EXPECT_PINS(self->pins0);
}

/* The names in @dir, but . and .., or -1. */
static int dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/* stat() of DIR/NAME with %d as @pid; -1 if there is none. */
static int stat_pid(const char *dir, const char *fmt, pid_t pid,
		    struct stat *st)
{
	char name[64], path[256];

	snprintf(name, sizeof(name), fmt, (int)pid);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, st);
}

/* Wait for @pid; its exit status, or 128 + the signal. */
static int wait_status(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) :
				   128 + WTERMSIG(status);
}

/* In a child: after OFF, was the file refused with @err and not written? */
static int off_refused(int err)
{
	struct profil_stats st;

	if (dev_ioctl(PROFIL_IOC_OFF, NULL))
		return 10;
	st = get_stats();
	if (st.written)
		return 11;
	return st.write_error == -err ? 0 : 12;
}

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	close(fd);
	return ok ? 0 : -1;
}

static int write_param(const char *name, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), PARAM "%s", name);
	return write_file(path, val);
}

static long read_long(const char *path)
{
	char buf[32] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? atol(buf) : -1;
}

/*
 * The exec deadlock of the old writer: a file named "mem" in /proc/self.
 * The writer must never open it (it would wait for the exec'ing task's
 * exec_update_lock while the exec waited for the writer): the exec goes
 * on, and another process's file is still written afterwards.
 */
TEST_F_TIMEOUT(writer, exec_with_proc_pid_mem_as_the_file_goes_on, 120)
{
	struct stat st;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		self->o.dirfd = open("/proc/self", O_PATH | O_DIRECTORY);
		self->o.name = (uintptr_t)"mem";
		if (dev_ioctl(PROFIL_IOC_SETUP, &self->s))
			_exit(3);
		spin_cpu(spin_a, 20 * 1000000ULL);
		execl("/bin/sh", "sh", "-c", "exit 7", (char *)NULL);
		_exit(4);
	}
	ASSERT_EQ(7, wait_status(pid));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (dev_ioctl(PROFIL_IOC_SETUP, &self->s))
			_exit(3);
		spin_cpu(spin_a, 20 * 1000000ULL);
		_exit(0);
	}
	ASSERT_EQ(0, wait_status(pid));
	ASSERT_EQ(0, stat_pid(self->dir, "w.%d", pid, &st));
	EXPECT_EQ(IMG_HEAD, st.st_size);
}

/*
 * A directory on a FUSE server that reads nothing and answers nothing:
 * every write there hangs until the connection is aborted.  The owner's
 * OFF and exit wait write_wait_ms and go on; the writes in flight count
 * against writes_per_user; nobody else's file, STATS or exit waits; rmmod
 * is refused, not blocked; once the server dies, everything is let go.
 */
TEST_F_TIMEOUT(writer, a_fuse_server_that_never_answers_delays_only_its_owner,
	       300)
{
	char mnt[] = "/tmp/fuseXXXXXX", opts[128];
	long ref0, ref;
	int fuse, fd, i;
	struct stat st;
	pid_t pid;

	if (geteuid())
		SKIP(return, "mounting FUSE needs root");
	fuse = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fuse < 0)
		SKIP(return, "no /dev/fuse in this kernel");
	ASSERT_NE(NULL, mkdtemp(mnt));
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=40000,user_id=0,group_id=0", fuse);
	ASSERT_EQ(0, mount("profil-silent", mnt, "fuse", MS_NOSUID | MS_NODEV,
			   opts)) {
		TH_LOG("mount: %s", strerror(errno));
	}
	fd = open(mnt, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ref0 = read_long("/sys/module/profil/refcnt");
	ASSERT_EQ(0, write_param("write_wait_ms", "1000"));
	ASSERT_EQ(0, write_param("writes_per_user", "2"));

	/* Two files that hang: one at OFF, one at exit.  Both owners go on. */
	self->o.dirfd = fd;
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(fuse);
		if (dev_ioctl(PROFIL_IOC_SETUP, &self->s))
			_exit(3);
		/* OFF waited write_wait_ms: still being written. */
		_exit(off_refused(0) ? 4 : get_stats().writing == 1 ? 0 : 5);
	}
	EXPECT_EQ(0, wait_status(pid));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(fuse);
		_exit(dev_ioctl(PROFIL_IOC_SETUP, &self->s) ? 3 : 0);
	}
	EXPECT_EQ(0, wait_status(pid));
	/* A third is past the bound: not written, said at once. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(fuse);
		if (dev_ioctl(PROFIL_IOC_SETUP, &self->s))
			_exit(3);
		_exit(off_refused(EBUSY));
	}
	EXPECT_EQ(0, wait_status(pid));
	ref = read_long("/sys/module/profil/refcnt");
	EXPECT_EQ(ref0 + 2, ref);
	EXPECT_EQ(-1, syscall(SYS_delete_module, "profil", O_NONBLOCK));

	/* Another user's file is written, its STATS and exit unhindered. */
	ASSERT_EQ(0, chmod(self->dir, 0777));
	self->o.dirfd = self->dirfd;
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct profil_stats st;

		close(fuse);
		/* Dumpable again after the drop, as a login would be. */
		if (setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534) ||
		    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) ||
		    dev_ioctl(PROFIL_IOC_SETUP, &self->s))
			_exit(3);
		spin_cpu(spin_a, 10 * 1000000ULL);
		if (dev_ioctl(PROFIL_IOC_OFF, NULL))
			_exit(4);
		st = get_stats();
		_exit(st.written == 1 && !st.write_error ? 0 : 5);
	}
	EXPECT_EQ(0, wait_status(pid));
	EXPECT_EQ(0, stat_pid(self->dir, "w.%d", pid, &st));

	/* The server dies: the hung writes end, their references go. */
	close(fd);
	close(fuse);
	EXPECT_EQ(0, umount2(mnt, MNT_DETACH));
	for (i = 0; i < 3000; i++) {
		ref = read_long("/sys/module/profil/refcnt");
		if (ref == ref0)
			break;
		usleep(10000);
	}
	EXPECT_EQ(ref0, ref);
	write_param("write_wait_ms", "10000");
	write_param("writes_per_user", "8");
	rmdir(mnt);
}

/*
 * A FUSE server that answers just enough to create and write a file, and
 * fails every FLUSH (the ->flush of close(2)) with EIO, as NFS, CIFS or
 * FUSE may report a write error only at close.
 */
#define FUSE_BUF	(256 * 1024)

struct fuse_srv {
	int fd;
	pthread_t thread;
	size_t written;		/* bytes of WRITE requests */
	int flushes;
};

static void fuse_reply(int fd, uint64_t unique, int error, const void *arg,
		       size_t len)
{
	struct {
		struct fuse_out_header h;
		char arg[256];
	} r = { .h = { .len = sizeof(r.h) + len, .error = error,
		       .unique = unique } };

	memcpy(r.arg, arg, len);
	if (write(fd, &r, r.h.len) < 0)
		perror("fuse reply");
}

static void fuse_answer(struct fuse_srv *srv, const struct fuse_in_header *in)
{
	const void *arg = in + 1;
	union {
		struct fuse_init_out init;
		struct fuse_attr_out attr;
		struct fuse_write_out write;
		struct {
			struct fuse_entry_out e;
			struct fuse_open_out o;
		} create;
	} o;

	memset(&o, 0, sizeof(o));
	switch (in->opcode) {
	case FUSE_INIT: {
		const struct fuse_init_in *ii = arg;

		o.init.major = FUSE_KERNEL_VERSION;
		o.init.minor = ii->minor < FUSE_KERNEL_MINOR_VERSION ?
			       ii->minor : FUSE_KERNEL_MINOR_VERSION;
		o.init.max_readahead = ii->max_readahead;
		o.init.max_background = 16;
		o.init.congestion_threshold = 12;
		o.init.max_write = 65536;
		o.init.time_gran = 1;
		fuse_reply(srv->fd, in->unique, 0, &o, sizeof(o.init));
		return;
	}
	case FUSE_GETATTR:
		o.attr.attr.ino = in->nodeid;
		o.attr.attr.mode = in->nodeid == FUSE_ROOT_ID ?
				   S_IFDIR | 0755 : S_IFREG | 0644;
		o.attr.attr.nlink = 1;
		fuse_reply(srv->fd, in->unique, 0, &o, sizeof(o.attr));
		return;
	case FUSE_CREATE:
		o.create.e.nodeid = 2;
		o.create.e.attr.ino = 2;
		o.create.e.attr.mode = S_IFREG | 0644;
		o.create.e.attr.nlink = 1;
		o.create.e.attr.blksize = 4096;
		o.create.o.fh = 1;
		fuse_reply(srv->fd, in->unique, 0, &o, sizeof(o.create));
		return;
	case FUSE_WRITE:
		o.write.size = ((const struct fuse_write_in *)arg)->size;
		srv->written += o.write.size;
		fuse_reply(srv->fd, in->unique, 0, &o, sizeof(o.write));
		return;
	case FUSE_FLUSH:
		srv->flushes++;
		fuse_reply(srv->fd, in->unique, -EIO, NULL, 0);
		return;
	case FUSE_RELEASE:
		fuse_reply(srv->fd, in->unique, 0, NULL, 0);
		return;
	case FUSE_LOOKUP:
		fuse_reply(srv->fd, in->unique, -ENOENT, NULL, 0);
		return;
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
		return;		/* no reply */
	default:
		fuse_reply(srv->fd, in->unique, -ENOSYS, NULL, 0);
	}
}

/* Serve until the file system is unmounted (ENODEV). */
static void *fuse_serve(void *arg)
{
	struct fuse_srv *srv = arg;
	char *buf = malloc(FUSE_BUF);
	ssize_t n;

	while (buf) {
		n = read(srv->fd, buf, FUSE_BUF);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < (ssize_t)sizeof(struct fuse_in_header))
			break;
		fuse_answer(srv, (struct fuse_in_header *)buf);
	}
	free(buf);
	return NULL;
}

/*
 * The close of the file fails (FLUSH: EIO): the file is not counted as
 * written, and write_error says why; every byte was written before.
 */
TEST_F_TIMEOUT(writer, an_error_at_close_is_an_error, 120)
{
	char mnt[] = "/tmp/fuseXXXXXX", opts[160];
	struct fuse_srv srv = { 0 };
	pid_t pid;

	if (geteuid())
		SKIP(return, "mounting FUSE needs root");
	srv.fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (srv.fd < 0)
		SKIP(return, "no /dev/fuse in this kernel");
	ASSERT_NE(NULL, mkdtemp(mnt));
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=40755,user_id=0,group_id=0,default_permissions",
		 srv.fd);
	ASSERT_EQ(0, mount("profil-flush", mnt, "fuse", MS_NOSUID | MS_NODEV,
			   opts));
	ASSERT_EQ(0, pthread_create(&srv.thread, NULL, fuse_serve, &srv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		self->o.dirfd = open(mnt, O_PATH | O_DIRECTORY);
		if (dev_ioctl(PROFIL_IOC_SETUP, &self->s))
			_exit(3);
		_exit(off_refused(EIO));
	}
	EXPECT_EQ(0, wait_status(pid));
	EXPECT_EQ(IMG_HEAD, srv.written);
	EXPECT_LE(1, srv.flushes);
	EXPECT_EQ(0, umount2(mnt, MNT_DETACH));
	pthread_cancel(srv.thread);	/* if its read() did not end */
	pthread_join(srv.thread, NULL);
	close(srv.fd);
	rmdir(mnt);
}

/*
 * Root arms into a directory only root may write, then drops to nobody:
 * the process is no longer who armed (and not dumpable), so no file,
 * whether OFF (which says -EACCES) or the exit ends the session.
 */
static int arm_then_drop_to_nobody(FIXTURE_DATA(writer) *self, int by_off)
{
	pid_t pid = fork();

	if (pid)
		return pid < 0 ? -1 : wait_status(pid);
	if (dev_ioctl(PROFIL_IOC_SETUP, &self->s))
		_exit(3);
	if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
		_exit(4);
	spin_cpu(spin_a, 10 * 1000000ULL);
	_exit(by_off ? off_refused(EACCES) : 0);
}

TEST_F(writer, root_dropping_to_nobody_after_arming_gets_no_file)
{
	if (geteuid())
		SKIP(return, "a drop from root needs root");
	ASSERT_EQ(0, chmod(self->dir, 0700));
	EXPECT_EQ(0, arm_then_drop_to_nobody(self, 1));
	EXPECT_EQ(0, dir_entries(self->dir));
}

TEST_F(writer, root_dropping_to_nobody_then_exiting_gets_no_file)
{
	if (geteuid())
		SKIP(return, "a drop from root needs root");
	ASSERT_EQ(0, chmod(self->dir, 0700));
	EXPECT_EQ(0, arm_then_drop_to_nobody(self, 0));
	EXPECT_EQ(0, dir_entries(self->dir));
}

/* A Landlock domain that forbids making files, entered after arming. */
TEST_F(writer, a_landlock_domain_entered_after_arming_gets_no_file)
{
	pid_t pid;
	int status;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct landlock_ruleset_attr attr = {
			.handled_access_fs = LANDLOCK_ACCESS_FS_MAKE_REG,
		};
		int rs;

		if (dev_ioctl(PROFIL_IOC_SETUP, &self->s))
			_exit(3);
		rs = syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr),
			     0);
		if (rs < 0)
			_exit(errno == ENOSYS || errno == EOPNOTSUPP ? 42 : 4);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    syscall(SYS_landlock_restrict_self, rs, 0))
			_exit(5);
		_exit(off_refused(EPERM));
	}
	status = wait_status(pid);
	if (status == 42)
		SKIP(return, "no Landlock in this kernel");
	EXPECT_EQ(0, status);
	EXPECT_EQ(0, dir_entries(self->dir));
}

/* A seccomp filter (any filter) installed after arming. */
TEST_F(writer, a_seccomp_filter_installed_after_arming_gets_no_file)
{
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = { .len = 1, .filter = &allow };
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (dev_ioctl(PROFIL_IOC_SETUP, &self->s))
			_exit(3);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
			_exit(4);
		_exit(off_refused(EPERM));
	}
	EXPECT_EQ(0, wait_status(pid));
	EXPECT_EQ(0, dir_entries(self->dir));
}

static void *thread_returns(void *arg)
{
	return arg;
}

/*
 * A child on CPU 0 alone: it arms, starts a thread and joins it, then
 * exit_group()s.  Its pid, or -1.
 */
static pid_t join_then_exit(FIXTURE_DATA(writer) *self)
{
	cpu_set_t cpu0;
	pthread_t t;
	pid_t pid = fork();

	if (pid)
		return pid;
	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	if (sched_setaffinity(0, sizeof(cpu0), &cpu0) ||
	    dev_ioctl(PROFIL_IOC_SETUP, &self->s))
		_exit(3);
	if (pthread_create(&t, NULL, thread_returns, NULL) ||
	    pthread_join(t, NULL))
		_exit(4);
	_exit(0);
}

/*
 * pthread_join() returns once the thread's exit has cleared its tid,
 * before that exit lets go of the mm.  On one CPU the main thread, woken
 * by it, mostly runs first: its exit_group() sends SIGKILL to the thread
 * still on its way out (zap_other_threads() spares only the dead), and
 * that thread, the mm's last user, ends the arm with SIGKILL pending, in
 * which kthread_run() fails (-EINTR).  Every round's file is there, whole,
 * when the parent's wait returns.
 */
TEST_F_TIMEOUT(writer, a_thread_killed_on_its_way_out_still_leaves_the_file,
	       300)
{
	int i, missing = 0, rounds = 40;
	struct stat st;
	pid_t pid;

	for (i = 0; i < rounds; i++) {
		pid = join_then_exit(self);
		ASSERT_LE(0, pid);
		ASSERT_EQ(0, wait_status(pid));
		if (stat_pid(self->dir, "w.%d", pid, &st) ||
		    st.st_size != IMG_HEAD)
			missing++;
	}
	EXPECT_EQ(0, missing) TH_LOG("%d of %d files missing", missing, rounds);
}

struct mm_holder {
	pid_t pid;
	void *local;		/* a page of ours that userfaultfd holds */
	void *remote;		/* an address of @pid's */
	ssize_t ret;
};

/* Holds @pid's mm until the fault on @local is resolved. */
static void *hold_mm(void *arg)
{
	struct mm_holder *h = arg;
	struct iovec l = { h->local, 64 }, r = { h->remote, 64 };

	h->ret = process_vm_readv(h->pid, &l, 1, &r, 1, 0);
	return NULL;
}

static char hold_there[64];

/*
 * Another task holds the mm when the process exits, so the mm's ->release
 * comes later, in that task: here process_vm_readv() into a page of ours
 * that userfaultfd keeps missing (a reader of /proc/PID/ or our own settle
 * may, for a moment).  The exit itself still ends the arm and writes the
 * file before the parent is told, and the holder's letting go later adds
 * nothing.
 */
TEST_F(writer, an_exit_while_another_task_holds_the_mm_still_leaves_the_file)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct uffdio_zeropage zero = { 0 };
	struct mm_holder h = { .remote = hold_there };
	struct pollfd pfd = { .events = POLLIN };
	int uffd, go[2], ready[2];
	struct stat st = { 0 };
	struct uffd_msg msg;
	pthread_t t;
	char c;

	if (geteuid())
		SKIP(return, "userfaultfd for a kernel access needs root");
	uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
	if (uffd < 0 && (errno == ENOSYS || errno == EPERM || errno == EACCES))
		SKIP(return, "no userfaultfd here: %s", strerror(errno));
	ASSERT_LE(0, uffd);
	pfd.fd = uffd;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api));
	h.local = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, h.local);
	reg.range.start = (uintptr_t)h.local;
	reg.range.len = 4096;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg));
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(ready));
	h.pid = fork();
	ASSERT_LE(0, h.pid);
	if (!h.pid) {
		close(go[1]);
		close(ready[0]);
		if (dev_ioctl(PROFIL_IOC_SETUP, &self->s))
			_exit(3);
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(4);
		_exit(0);
	}
	close(go[0]);
	close(ready[1]);
	/* Any failure below closes go[1] by the test's exit: the child ends. */
	ASSERT_EQ(1, read(ready[0], &c, 1));
	ASSERT_EQ(0, pthread_create(&t, NULL, hold_mm, &h));
	/* Its fault on our page: it holds the child's mm until we answer. */
	ASSERT_EQ(1, poll(&pfd, 1, 10000))
		TH_LOG("no fault: process_vm_readv() gave %zd", h.ret);
	ASSERT_EQ(sizeof(msg), read(uffd, &msg, sizeof(msg)));
	ASSERT_EQ(UFFD_EVENT_PAGEFAULT, msg.event);
	ASSERT_EQ(1, write(go[1], "g", 1));
	EXPECT_EQ(0, wait_status(h.pid));
	EXPECT_EQ(0, stat_pid(self->dir, "w.%d", h.pid, &st))
		TH_LOG("no file when the wait returned");
	EXPECT_EQ(IMG_HEAD, st.st_size);
	zero.range = reg.range;
	EXPECT_EQ(0, ioctl(uffd, UFFDIO_ZEROPAGE, &zero));
	EXPECT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(64, h.ret);
	EXPECT_EQ(1, dir_entries(self->dir));
	close(go[1]);
	close(ready[0]);
	close(uffd);
	munmap(h.local, 4096);
}

/*
 * A hard link planted at the name (as root, to another user's file, with
 * fs.protected_hardlinks=0) is unlinked, never truncated or written.
 */
TEST_F(writer, a_hard_link_at_the_name_is_not_truncated)
{
	char victim[128], link_at[128], buf[16] = "";
	struct stat st, vst;
	int fd;

	snprintf(victim, sizeof(victim), "%s/victim", self->dir);
	snprintf(link_at, sizeof(link_at), "%s/w.%d", self->dir, getpid());
	fd = open(victim, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	ASSERT_LE(0, fd);
	ASSERT_EQ(9, write(fd, "precious\n", 9));
	close(fd);
	if (!geteuid()) {
		ASSERT_EQ(0, chown(victim, 65534, 65534));
		ASSERT_EQ(0, write_file(HARDLINKS, "0"));
	}
	ASSERT_EQ(0, link(victim, link_at));
	if (!geteuid())
		write_file(HARDLINKS, "1");
	ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_SETUP, &self->s));
	spin_cpu(spin_a, 10 * 1000000ULL);
	ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_OFF, NULL));
	EXPECT_EQ(1, get_stats().written);
	fd = open(victim, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(9, read(fd, buf, sizeof(buf)));
	close(fd);
	EXPECT_STREQ("precious\n", buf);
	ASSERT_EQ(0, stat(victim, &vst));
	ASSERT_EQ(0, stat(link_at, &st));
	EXPECT_EQ(1, vst.st_nlink);
	EXPECT_EQ(1, st.st_nlink);
	EXPECT_NE(vst.st_ino, st.st_ino);
	EXPECT_EQ(IMG_HEAD, st.st_size);
	EXPECT_EQ(geteuid(), st.st_uid);
}

/* RLIMIT_FSIZE: the file stops at the limit, and says why. */
TEST_F(writer, rlimit_fsize_bounds_the_file)
{
	struct stat st;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct rlimit rl = { 4096, 4096 };

		signal(SIGXFSZ, SIG_IGN);
		if (dev_ioctl(PROFIL_IOC_SETUP, &self->s) ||
		    setrlimit(RLIMIT_FSIZE, &rl))
			_exit(3);
		_exit(off_refused(EFBIG));
	}
	EXPECT_EQ(0, wait_status(pid));
	ASSERT_EQ(0, stat_pid(self->dir, "w.%d", pid, &st));
	EXPECT_EQ(4096, st.st_size);
}

/* DIR/w.PID, the head, into @got; its size, or -1. */
static ssize_t read_own_file(FIXTURE_DATA(writer) *self, pid_t pid,
			     unsigned char *got)
{
	char path[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/w.%d", self->dir, (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, got, IMG_HEAD + 1);
	close(fd);
	return n;
}

struct spinner {
	volatile int stop;
	pthread_t t;
};

static void *spin_thread(void *arg)
{
	struct spinner *sp = arg;

	spin_a(&sp->stop);
	return NULL;
}

/*
 * A re-arm over the same image: the old arm's file holds nothing the new
 * arm counted, even with another thread running through the switch.  The
 * new arm counts into a bin of its own in the head, which must be 0 in the
 * old file and counting afterwards.
 */
TEST_F(writer, a_re_arm_writes_the_old_file_before_the_new_arm_counts)
{
	struct profil_region r2 = self->r;
	struct profil_output o2 = self->o;
	struct profil_setup s2 = self->s;
	struct spinner sp = { 0 };
	unsigned char *got;
	struct stat st;
	int round;

	r2.buf = (uintptr_t)head_bin(self, 2);
	s2.regions = (uintptr_t)&r2;
	s2.output = (uintptr_t)&o2;
	o2.name = (uintptr_t)"second.%p";
	got = malloc(IMG_HEAD + 1);
	ASSERT_NE(NULL, got);
	ASSERT_EQ(0, pthread_create(&sp.t, NULL, spin_thread, &sp));
	for (round = 0; round < 20; round++) {
		*head_bin(self, 1) = 0;
		*head_bin(self, 2) = 0;
		ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_SETUP, &self->s));
		spin_cpu(spin_a, 5 * 1000000ULL);
		ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_SETUP, &s2));
		ASSERT_EQ(0, stat_pid(self->dir, "w.%d", getpid(), &st));
		ASSERT_EQ(IMG_HEAD, st.st_size);
		ASSERT_EQ(IMG_HEAD, read_own_file(self, getpid(), got));
		EXPECT_LT(0, ((uint16_t *)(got + IMG_HEAD))[-1]);
		ASSERT_EQ(0, ((uint16_t *)(got + IMG_HEAD))[-2]) {
			TH_LOG("round %d: the old file has %u samples of the new arm",
			       round, ((uint16_t *)(got + IMG_HEAD))[-2]);
		}
		spin_cpu(spin_a, 5 * 1000000ULL);
		EXPECT_LT(0, *head_bin(self, 2));
		ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_OFF, NULL));
	}
	sp.stop = 1;
	pthread_join(sp.t, NULL);
	free(got);
}

/* A re-arm with PROFIL_F_KEEP_FILE: the running arm's bin 1, and bin 2. */
static struct profil_setup keep_setup(FIXTURE_DATA(writer) *self,
				      struct profil_region r2[2])
{
	struct profil_setup s2 = self->s;

	r2[0] = self->r;
	r2[0].flags = PROFIL_REGION_U32;	/* no more the overflow bin, */
	r2[0].offset = 0;			/* but all of the low PCs */
	r2[0].scale = 1;
	r2[0].buf = (uintptr_t)(head_bin(self, 3) - 1) & ~3UL;
	r2[0].bufsize = 4;
	r2[1] = self->r;
	r2[1].buf = (uintptr_t)head_bin(self, 2);
	s2.flags = PROFIL_F_KEEP_FILE;
	s2.output = 0;
	s2.nr_regions = 2;
	s2.regions = (uintptr_t)r2;
	return s2;
}


/*
 * Regions added by a re-arm that keeps the file: no file at the re-arm,
 * one at the end holding what both arms counted, and a forked child of the
 * new arm still gets a file of its own.
 */
TEST_F(writer, a_re_arm_that_keeps_the_file_writes_one_file_with_both_arms)
{
	struct profil_region r2[2];
	struct profil_setup s2 = keep_setup(self, r2);
	unsigned char *got = malloc(IMG_HEAD + 1);
	struct stat st;
	pid_t pid;

	ASSERT_NE(NULL, got);
	ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_SETUP, &self->s));
	spin_cpu(spin_a, 10 * 1000000ULL);
	ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_SETUP, &s2));
	EXPECT_EQ(0, get_stats().written);
	EXPECT_EQ(0, dir_entries(self->dir));
	spin_cpu(spin_a, 10 * 1000000ULL);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/*
		 * A request takes the child over now: without one, a child
		 * that ends within a period of its fork may end before its
		 * take-over, and leaves no file (profil(4)).
		 */
		_exit(get_stats().state == PROFIL_STATE_ON &&
		      spin_cpu(spin_a, 10 * 1000000ULL) ? 0 : 3);
	}
	EXPECT_EQ(0, wait_status(pid));
	EXPECT_EQ(0, stat_pid(self->dir, "k.%d", pid, &st));
	ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_OFF, NULL));
	EXPECT_EQ(1, get_stats().written);
	EXPECT_EQ(0, get_stats().write_error);
	ASSERT_EQ(IMG_HEAD, read_own_file(self, getpid(), got));
	EXPECT_LT(0, ((uint16_t *)(got + IMG_HEAD))[-1]);
	EXPECT_LT(0, ((uint16_t *)(got + IMG_HEAD))[-2]);
	EXPECT_EQ(0, memcmp(got, self->img, IMG_HEAD));
	EXPECT_EQ(2, dir_entries(self->dir));
	free(got);
}

/* What a re-arm that keeps the file refuses, the running arm untouched. */
TEST_F(writer, a_re_arm_that_keeps_the_file_needs_one_and_keeps_it_on_failure)
{
	struct profil_region r2[2];
	struct profil_setup s2 = keep_setup(self, r2), bad = s2, none = s2;
	unsigned char *got = malloc(IMG_HEAD + 1);
	struct profil_region pc = { .buf = (uintptr_t)self->img + IMG_SIZE,
				    .bufsize = 64 };
	struct profil_setup pcs = { .size = sizeof(pcs), .rate = RATE,
				    .flags = PROFIL_F_KEEP_FILE,
				    .mode = PROFIL_MODE_PCSAMPLE,
				    .nr_regions = 1, .region_size = sizeof(pc),
				    .regions = (uintptr_t)&pc };
	void *hole;

	ASSERT_NE(NULL, got);
	/* Nothing running, then an arm without a file: nothing to keep. */
	EXPECT_EQ(-ENOENT, dev_ioctl(PROFIL_IOC_SETUP, &s2));
	none.flags = 0;
	none.nr_regions = 1;
	ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_SETUP, &none));
	EXPECT_EQ(-ENOENT, dev_ioctl(PROFIL_IOC_SETUP, &s2));
	ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_SETUP, &self->s));
	spin_cpu(spin_a, 10 * 1000000ULL);
	/* A new file and a kept one; a pcsample arm, which has none. */
	bad.output = self->s.output;
	EXPECT_EQ(-EINVAL, dev_ioctl(PROFIL_IOC_SETUP, &bad));
	EXPECT_EQ(-EINVAL, dev_ioctl(PROFIL_IOC_SETUP, &pcs));
	/* Bins that cannot be pinned: the running arm and its file go on. */
	hole = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, hole);
	ASSERT_EQ(0, munmap(hole, 4096));
	r2[1].buf = (uintptr_t)hole;
	EXPECT_EQ(-EFAULT, dev_ioctl(PROFIL_IOC_SETUP, &s2));
	EXPECT_EQ(PROFIL_STATE_ON, get_stats().state);
	EXPECT_EQ(0, dir_entries(self->dir));
	ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_OFF, NULL));
	EXPECT_EQ(1, get_stats().written);
	ASSERT_EQ(IMG_HEAD, read_own_file(self, getpid(), got));
	EXPECT_LT(0, ((uint16_t *)(got + IMG_HEAD))[-1]);
	/* And after the stop there is no file to keep. */
	s2 = keep_setup(self, r2);
	EXPECT_EQ(-ENOENT, dev_ioctl(PROFIL_IOC_SETUP, &s2));
	free(got);
}

/*
 * A kept file keeps the credentials of the arm that made it: a process
 * that dropped them since gets no file, however many times it re-arms.
 */
TEST_F(writer, a_kept_file_is_not_written_once_its_credentials_are_dropped)
{
	struct profil_region r2[2];
	struct profil_setup s2 = keep_setup(self, r2);
	pid_t pid;

	if (geteuid())
		SKIP(return, "a drop from root needs root");
	ASSERT_EQ(0, chmod(self->dir, 0700));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (dev_ioctl(PROFIL_IOC_SETUP, &self->s))
			_exit(3);
		if (setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(4);
		if (dev_ioctl(PROFIL_IOC_SETUP, &s2))
			_exit(5);
		spin_cpu(spin_a, 10 * 1000000ULL);
		_exit(off_refused(EACCES));
	}
	EXPECT_EQ(0, wait_status(pid));
	EXPECT_EQ(0, dir_entries(self->dir));
}

/*
 * The memory cgroup: the files' page cache (tmpfs here) is charged to the
 * cgroup of the process whose files they are, not to the root.  Its
 * memory.current counts them once the process is gone (its own memory is
 * uncharged then): four files of 1 MiB.
 */
#define BIG_HEAD	(1 << 20)
TEST_F_TIMEOUT(writer, the_files_are_charged_to_the_process_memory_cgroup, 120)
{
	char cg[] = "/tmp/cgXXXXXX", grp[128], path[160], shm[] =
		"/tmp/shmXXXXXX";
	unsigned char *big;
	long cur;
	FILE *f;
	pid_t pid;

	if (geteuid())
		SKIP(return, "a cgroup of its own needs root");
	ASSERT_NE(NULL, mkdtemp(cg));
	if (mount("cgroup2", cg, "cgroup2", 0, NULL)) {
		rmdir(cg);
		SKIP(return, "no cgroup2: %s", strerror(errno));
	}
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", cg);
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fputs("+memory", f);
	if (fclose(f)) {
		umount(cg);
		rmdir(cg);
		SKIP(return, "no memory controller");
	}
	snprintf(grp, sizeof(grp), "%s/profil", cg);
	ASSERT_EQ(0, mkdir(grp, 0755));
	ASSERT_NE(NULL, mkdtemp(shm));
	ASSERT_EQ(0, mount("tmpfs", shm, "tmpfs", 0, "size=64m"));
	ASSERT_EQ(0, chmod(shm, 0755));
	big = mmap(NULL, BIG_HEAD + 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, big);
	memset(big, 'b', BIG_HEAD);
	self->o.image = (uintptr_t)big;
	self->o.image_size = BIG_HEAD + 4096;
	self->o.head_size = BIG_HEAD;
	self->o.nr_recs_max = 0;
	self->o.ctl_offset = BIG_HEAD;
	((struct profil_output_ctl *)(big + BIG_HEAD))->enable = 1;
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		snprintf(path, sizeof(path), "%s/cgroup.procs", grp);
		f = fopen(path, "w");
		if (!f || fprintf(f, "%d", getpid()) < 0 || fclose(f))
			_exit(3);
		self->o.dirfd = open(shm, O_PATH | O_DIRECTORY);
		for (int i = 0; i < 4; i++) {
			char name[16];

			snprintf(name, sizeof(name), "f%d", i);
			self->o.name = (uintptr_t)name;
			if (dev_ioctl(PROFIL_IOC_SETUP, &self->s) ||
			    dev_ioctl(PROFIL_IOC_OFF, NULL))
				_exit(4);
		}
		_exit(get_stats().written == 4 ? 0 : 5);
	}
	EXPECT_EQ(0, wait_status(pid));
	snprintf(path, sizeof(path), "%s/memory.current", grp);
	cur = read_long(path);
	EXPECT_LE(4L * BIG_HEAD, cur);
	munmap(big, BIG_HEAD + 4096);
	EXPECT_EQ(0, umount(shm));
	rmdir(shm);
	EXPECT_EQ(0, rmdir(grp));
	umount(cg);
	rmdir(cg);
}

/*
 * Pins: one per distinct page of an arm, however many regions cover it.
 * 1024 regions over one 8 MiB buffer, under an 8 MiB RLIMIT_MEMLOCK
 * without CAP_IPC_LOCK: armed with 2048 pins (one per page), not 2
 * million, and VmPin says 8 MiB.
 */
#define MANY		PROFIL_MAX_REGIONS
#define MANY_BYTES	(8UL << 20)

TEST(many_regions_over_one_buffer_pin_each_page_once)
{
	long long pins0, pins;
	pid_t pid;
	int status;

	pins0 = pins_held();
	if (pins0 < 0)
		SKIP(return, "the pins held cannot be read exactly here");
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct rlimit rl = { MANY_BYTES, MANY_BYTES };
		struct profil_region *r = calloc(MANY, sizeof(*r));
		char *buf = mmap(NULL, MANY_BYTES, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (!r || buf == MAP_FAILED || drop_cap_ipc_lock() ||
		    setrlimit(RLIMIT_MEMLOCK, &rl))
			_exit(2);
		for (int i = 0; i < MANY; i++)
			r[i] = (struct profil_region){
				.buf = (uintptr_t)buf, .bufsize = MANY_BYTES,
				.offset = (uintptr_t)spin_a - SPIN_PAD + i * 2,
				.scale = 0x10000,
			};
		if (arm_regions(r, MANY, RATE))
			_exit(3);
		pins = pins_held() - pins0;
		/* The page tables of the pin may take a few more. */
		if (pins < (long long)(MANY_BYTES / 4096) ||
		    pins > (long long)(MANY_BYTES / 4096) + 16)
			_exit(4);
		if (vmpin_kb() != (long)(MANY_BYTES >> 10))
			_exit(5);
		spin_cpu(spin_a, 10 * 1000000ULL);
		_exit(get_stats().samples ? 0 : 6);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_PINS(pins0);
}

TEST_HARNESS_MAIN
