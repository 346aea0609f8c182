// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * sprofil(3), glibc's <sys/profil.h> interface, served by profil.ko.
 *
 * Each struct prof with a scale of 2 or more is a region: 16-bit bins, or
 * 32-bit ones with PROF_UINT, both saturating; the one with pr_off 0 and
 * pr_scale 2 is the overflow bin, counting the PCs that fall in no other
 * region; the others (scale 0 or 1) are ignored, as glibc does.  Where
 * regions overlap, the one with the larger offset counts.  PROF_FAST asks
 * for 1000 Hz (the module's max_rate if that is lower) instead of HZ.
 * *tvp gets the true sampling period.  sprofil(NULL, 0, NULL, 0), or a
 * call with no region left, turns profiling off.  A call that fails leaves
 * a running session as it was.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/profil.h>
#include <sys/time.h>
#include <unistd.h>

#include "profil-private.h"

#define PROF_FAST_RATE	1000
#define PROF_FLAGS	(PROF_UINT | PROF_FAST)

/* The rate PROF_FAST asks for: 1000 Hz or the module's max_rate. */
static unsigned int sprofil_fast_rate(void)
{
	int fd = open("/sys/module/profil/parameters/max_rate",
		      O_RDONLY | O_CLOEXEC);
	unsigned long max = 0;
	char buf[16];
	ssize_t n;

	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = '\0';
			max = strtoul(buf, NULL, 10);
		}
	}
	return max && max < PROF_FAST_RATE ? max : PROF_FAST_RATE;
}

/* Check and convert @p; 1 if it counts, 0 if ignored, -1 with errno. */
static int sprofil_region(const struct prof *p, unsigned int flags,
			  struct profil_region *r)
{
	size_t bin = (flags & PROF_UINT) ? 4 : 2;

	if (p->pr_scale < 2)
		return 0;
	if (p->pr_scale > PROFIL_SCALE_ONE || p->pr_size % bin ||
	    (uintptr_t)p->pr_base % bin) {
		errno = EINVAL;
		return -1;
	}
	*r = (struct profil_region){
		.buf = (uintptr_t)p->pr_base,
		.bufsize = p->pr_size,
		.offset = p->pr_off,
		.scale = p->pr_scale,
		.flags = (flags & PROF_UINT) ? PROFIL_REGION_U32 : 0,
	};
	if (p->pr_off == 0 && p->pr_scale == 2) {
		r->flags |= PROFIL_REGION_OVERFLOW;
		r->scale = 0;
	}
	return 1;
}

__attribute__((visibility("default")))
int sprofil(struct prof *profp, int profcnt, struct timeval *tvp,
	    unsigned int flags)
{
	struct profil_region *r;
	unsigned int n = 0, rate = 0;
	struct prof p;
	int i, ret = 0;

	if (profcnt < 0 || profcnt > PROFIL_MAX_REGIONS) {
		errno = E2BIG;
		return -1;
	}
	if (flags & ~PROF_FLAGS) {
		errno = EINVAL;
		return -1;
	}
	if (!profp || !profcnt)
		return __profil_off();
	r = __profil_regions_alloc(profcnt);
	if (!r)
		return -1;
	for (i = 0; i < profcnt; i++) {
		if (__profil_read_self(&p, profp + i, sizeof(p))) {
			ret = -1;
			goto out;
		}
		ret = sprofil_region(&p, flags, &r[n]);
		if (ret < 0)
			goto out;
		n += ret;
	}
	if (!n) {
		ret = __profil_off();
		goto out;
	}
	if (flags & PROF_FAST)
		rate = sprofil_fast_rate();
	ret = __profil_arm(r, n, PROFIL_MODE_HIST, &rate);
	if (!ret && tvp) {
		tvp->tv_sec = 0;
		tvp->tv_usec = 1000000 / rate;
	}
out:
	__profil_regions_free(r, profcnt);
	return ret;
}

/* glibc's sprofil@GLIBC_2.2.5, for LD_PRELOAD (see libprofil.map). */
PROFIL_GLIBC_ALIAS_AT(sprofil, "LIBPROFIL_1.3");
