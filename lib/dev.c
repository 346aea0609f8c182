// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Access to /dev/profil.  Every call opens the device, makes one ioctl and
 * closes it again: the session belongs to the process, not to the fd, so
 * nothing is cached, and every function here is thread-safe and
 * async-signal-safe (open, ioctl, close and write only).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "profil-private.h"

static void profil_hint(void)
{
	static const char msg[] =
		"libprofil: " PROFIL_DEVICE " is missing: load profil.ko (modprobe profil)\n";

	if (getenv("PROFIL_DEBUG"))
		(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
}

int __profil_dev_ioctl(unsigned long cmd, void *arg)
{
	int fd, ret, err;

	fd = open(PROFIL_DEVICE, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENODEV || errno == ENXIO) {
			profil_hint();
			errno = ENOSYS;
		}
		return -1;
	}
	ret = ioctl(fd, cmd, arg);
	err = errno;
	close(fd);
	errno = err;
	return ret < 0 ? -1 : 0;
}
