// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * pcsample(2) of Solaris (<pcsample.h>): the kernel stores the process's
 * raw PCs, in order, into samples[] (PROFIL_MODE_PCSAMPLE).
 *
 * Each call ends the previous collection and returns how many PCs it
 * stored (the first call returns 0), then starts a new one into
 * samples[nsamples] unless nsamples is 0.  The array is zeroed first (by
 * read() from /dev/zero, so that a bad array is EFAULT): the kernel fills
 * it from the start and a user PC is never 0, so the count is the length
 * of the non-zero prefix once the collection has ended.  A full array
 * ends the collection by itself (PROFIL_STOP_FULL); so do a profil() or
 * sprofil() call, which replace it, exec and a fault.  A forked child
 * does not inherit the collection (the kernel does not carry it over,
 * pcsample(2)): the parent's collection is not the child's to count, and
 * the child's first call returns 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include "profil-private.h"
#include "pcsample.h"

static pthread_mutex_t pcsample_lock = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t *pcsample_buf;		/* the running collection's */
static long pcsample_n;
static pid_t pcsample_pid;		/* the process it belongs to */

/* PCs stored in @buf: its non-zero prefix, found by bisection. */
static long pcsample_count(const uintptr_t *buf, long n)
{
	long lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (buf[mid])
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Zero @n PCs at @buf through the kernel: EFAULT, not SIGSEGV. */
static int pcsample_zero(uintptr_t *buf, long n)
{
	size_t len = n * sizeof(*buf), done = 0;
	ssize_t k;
	int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while (done < len) {
		k = read(fd, (char *)buf + done, len - done);
		if (k <= 0) {
			if (!k)
				errno = EIO;
			close(fd);
			return -1;
		}
		done += k;
	}
	close(fd);
	return 0;
}

static long pcsample_start(uintptr_t *samples, long nsamples)
{
	struct profil_region r = {
		.buf = (uintptr_t)samples,
		.bufsize = nsamples * sizeof(*samples),
	};
	unsigned int rate = 0;

	if ((unsigned long)nsamples > PROFIL_MAX_BUFSIZE / sizeof(*samples)) {
		errno = E2BIG;
		return -1;
	}
	if (pcsample_zero(samples, nsamples) ||
	    __profil_arm(&r, 1, PROFIL_MODE_PCSAMPLE, &rate))
		return -1;
	pcsample_buf = samples;
	pcsample_n = nsamples;
	pcsample_pid = getpid();
	return 0;
}

__attribute__((visibility("default")))
long pcsample(uintptr_t *samples, long nsamples)
{
	long stored = 0;

	if (nsamples < 0) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&pcsample_lock);
	if (pcsample_buf && pcsample_pid != getpid())
		pcsample_buf = NULL;	/* the parent's, in a forked child */
	if (pcsample_buf) {
		/* End it: every PC it will hold is there once this returns. */
		if (__profil_off()) {
			stored = -1;
			goto out;
		}
		stored = pcsample_count(pcsample_buf, pcsample_n);
		pcsample_buf = NULL;
	}
	if (nsamples && pcsample_start(samples, nsamples))
		stored = -1;
out:
	pthread_mutex_unlock(&pcsample_lock);
	return stored;
}
