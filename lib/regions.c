// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Arming regions or a pcsample array, and turning off: what profil(),
 * sprofil(), the AIX form of profil() and pcsample() share.
 *
 * The caller's arrays are read with process_vm_readv() on ourselves, so
 * that a bad pointer is EFAULT, not SIGSEGV; the regions for the kernel are
 * built in an anonymous mapping (no malloc: these calls may come from a
 * signal handler, as profil() may).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "profil-private.h"

int __profil_read_self(void *dst, const void *src, size_t len)
{
	struct iovec local = { dst, len };
	struct iovec remote = { (void *)src, len };
	ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);

	if (n == (ssize_t)len)
		return 0;
	errno = n < 0 && errno != EFAULT ? errno : EFAULT;
	return -1;
}

struct profil_region *__profil_regions_alloc(size_t n)
{
	void *p = mmap(NULL, n * sizeof(struct profil_region),
		       PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void __profil_regions_free(struct profil_region *r, size_t n)
{
	munmap(r, n * sizeof(*r));
}

int __profil_off(void)
{
	/*
	 * Through the fd the session was armed with if this process armed
	 * it; with no module loaded nothing runs, so that is done.
	 */
	if (__profil_dev_ioctl(PROFIL_IOC_OFF, NULL) && errno != ENOSYS)
		return -1;
	return 0;
}

int __profil_arm(struct profil_region *r, unsigned int n, unsigned int mode,
		 unsigned int *rate)
{
	struct profil_setup s = {
		.size = sizeof(s),
		.flags = __profil_setup_flags(),
		.mode = mode,
		.rate = *rate,
		.nr_regions = n,
		.region_size = sizeof(*r),
		.regions = (uintptr_t)r,
	};

	if (__profil_dev_ioctl(PROFIL_IOC_SETUP, &s)) {
		if (errno == ENOSYS)
			__profil_hint();
		return -1;
	}
	*rate = s.rate;
	return 0;
}
