// SPDX-License-Identifier: GPL-2.0
/*
 * exec_helper AT PINS FD: the image a profiling process execs in
 * lifecycle_test.  The old image's buffer was a MAP_SHARED mapping of the
 * memfd FD, which the exec keeps open: its pages are what the old session
 * wrote into, and this image can still see them.  It maps fresh memory at
 * AT, where the old buffer was, maps FD elsewhere, runs the same loops the
 * old image was sampled in, and exits
 *   0  the old buffer's pages did not change while this image ran (no
 *      sample of the old session after the exec), the exec had already
 *      released the old pins (the system holds PINS, as before the old
 *      image armed; -1: the pins could not be counted), and this image's
 *      own session (a new mm) is off with nothing counted;
 *   3  pins still held;  5  a mapping failed;  6  the old buffer was
 *      written after the exec;  7  the new session is not pristine.
 */
#define _GNU_SOURCE
#include "common.h"

#define LEN	(2 * 4096UL)

int main(int argc, char **argv)
{
	struct profil_stats st = { .size = sizeof(st) };
	unsigned char before[LEN];
	void *at, *buf, *old;

	if (argc != 4)
		return 2;
	at = (void *)strtoul(argv[1], NULL, 0);
	buf = mmap(at, LEN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	old = mmap(NULL, LEN, PROT_READ, MAP_SHARED, atoi(argv[3]), 0);
	if (buf != at || old == MAP_FAILED)
		return 5;
	memcpy(before, old, LEN);
	spin_cpu(spin_a, 100 * 1000000ULL);
	spin_cpu(spin_b, 100 * 1000000ULL);
	if (memcmp(before, old, LEN))
		return 6;
	if (atoll(argv[2]) >= 0 && pins_held() != atoll(argv[2]))
		return 3;
	if (dev_ioctl(PROFIL_IOC_STATS, &st) || st.state != PROFIL_STATE_OFF ||
	    st.armed || st.samples)
		return 7;
	return 0;
}
