// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * AIX's profil((void *)regions, (size_t)-1, 0, 0) (<mon.h>): an array of
 * struct prof, p_high ascending, ended by an entry whose p_high is 0; a
 * p_scale of (unsigned)-1 maps [p_low, p_high) onto p_bufsize bytes.
 * Entries with a scale of 0 or 1 count nothing (as profil() with such a
 * scale); an array with none left turns profiling off.
 */
#include <errno.h>
#include <stdint.h>

#include "profil-private.h"
#include "mon.h"

/* The scale that maps [low, high) onto @bytes of 16-bit bins. */
static unsigned int aix_scale(uintptr_t low, uintptr_t high, int bytes)
{
	unsigned __int128 s = (unsigned __int128)bytes * PROFIL_SCALE_ONE /
			      (high - low);

	return s > PROFIL_SCALE_ONE ? PROFIL_SCALE_ONE : (unsigned int)s;
}

/* Check and convert @p; 1 if it counts, 0 if not, -1 with errno. */
static int aix_region(const struct prof *p, uintptr_t prev_high,
		      struct profil_region *r)
{
	uintptr_t low = (uintptr_t)p->p_low, high = (uintptr_t)p->p_high;
	unsigned int scale = p->p_scale;

	if (high <= prev_high || high <= low || p->p_bufsize < 0) {
		errno = EINVAL;
		return -1;
	}
	if (scale == (unsigned int)-1)
		scale = aix_scale(low, high, p->p_bufsize);
	if (scale > PROFIL_SCALE_ONE) {
		errno = EINVAL;
		return -1;
	}
	if (scale < 2)
		return 0;
	*r = (struct profil_region){
		.buf = (uintptr_t)p->p_buff,
		.bufsize = (unsigned int)p->p_bufsize,
		.offset = low,
		.scale = scale,
	};
	return 1;
}

int __profil_aix(const void *regions)
{
	const struct prof *up = regions;
	struct profil_region *r;
	uintptr_t prev_high = 0;
	unsigned int n = 0, i, rate = 0;
	struct prof p;
	int ret = 0;

	r = __profil_regions_alloc(PROFIL_MAX_REGIONS);
	if (!r)
		return -1;
	for (i = 0;; i++) {
		if (__profil_read_self(&p, up + i, sizeof(p))) {
			ret = -1;
			goto out;
		}
		if (!p.p_high)
			break;
		if (i == PROFIL_MAX_REGIONS) {
			errno = E2BIG;
			ret = -1;
			goto out;
		}
		ret = aix_region(&p, prev_high, &r[n]);
		if (ret < 0)
			goto out;
		n += ret;
		prev_high = (uintptr_t)p.p_high;
	}
	if (!n)
		ret = __profil_off();
	else
		ret = __profil_arm(r, n, PROFIL_MODE_HIST, &rate);
out:
	__profil_regions_free(r, PROFIL_MAX_REGIONS);
	return ret;
}
