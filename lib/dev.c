// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Access to /dev/profil.
 *
 * The session belongs to the process, not to an fd, but the library keeps
 * the fd it first armed a session through (O_CLOEXEC, never closed): a
 * process that later cannot open /dev/profil (chroot, another mount
 * namespace, a sandbox, the fd limit) can still turn its session off.
 * Before each use the kept fd is checked to still be that device (the
 * program may have closed it and reused the number); otherwise the device
 * is opened again.  Only atomics, open, fstat, ioctl, close and write are
 * used: every function here is thread-safe and async-signal-safe.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profil-private.h"

/* The fd a session was armed through, or -1; its device and inode. */
static int profil_kept_fd = -1;
static dev_t profil_kept_rdev;
static ino_t profil_kept_ino;

/* PROFIL_DEBUG, read once at load: getenv() is not async-signal-safe. */
static int profil_debug;

__attribute__((constructor))
static void profil_read_env(void)
{
	profil_debug = getenv("PROFIL_DEBUG") != NULL;
}

void __profil_hint(void)
{
	static const char msg[] =
		"libprofil: " PROFIL_DEVICE " is missing: load profil.ko (modprobe profil)\n";

	if (profil_debug)
		(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
}

/* Is @fd still the /dev/profil that was kept? */
static int profil_fd_is_kept(int fd)
{
	struct stat st;

	return fd >= 0 && !fstat(fd, &st) && S_ISCHR(st.st_mode) &&
	       st.st_rdev == __atomic_load_n(&profil_kept_rdev,
					     __ATOMIC_ACQUIRE) &&
	       st.st_ino == __atomic_load_n(&profil_kept_ino,
					    __ATOMIC_ACQUIRE);
}

/* Keep @fd, an open /dev/profil, or close it if one is kept already. */
static void profil_keep(int fd)
{
	int old = __atomic_load_n(&profil_kept_fd, __ATOMIC_ACQUIRE);
	struct stat st;

	if (profil_fd_is_kept(old) || fstat(fd, &st)) {
		close(fd);
		return;
	}
	/* Every open of the device has the same device and inode. */
	__atomic_store_n(&profil_kept_rdev, st.st_rdev, __ATOMIC_RELEASE);
	__atomic_store_n(&profil_kept_ino, st.st_ino, __ATOMIC_RELEASE);
	/* A stale @old is the program's now; another thread's is as good. */
	if (!__atomic_compare_exchange_n(&profil_kept_fd, &old, fd, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		close(fd);
}

int __profil_dev_ioctl(unsigned long cmd, void *arg)
{
	int kept = __atomic_load_n(&profil_kept_fd, __ATOMIC_ACQUIRE);
	int fd, ret, err;

	if (profil_fd_is_kept(kept))
		return ioctl(kept, cmd, arg) < 0 ? -1 : 0;

	fd = open(PROFIL_DEVICE, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENODEV || errno == ENXIO)
			errno = ENOSYS;
		return -1;
	}
	ret = ioctl(fd, cmd, arg);
	err = errno;
	if (!ret && cmd == PROFIL_IOC_SETUP)
		profil_keep(fd);	/* to turn the session off later */
	else
		close(fd);
	errno = err;
	return ret < 0 ? -1 : 0;
}
