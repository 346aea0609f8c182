// SPDX-License-Identifier: GPL-2.0
/*
 * exec_helper AT PINS: the image a profiling process execs in
 * lifecycle_test.  It maps fresh memory at AT, where the old image's
 * buffer was, runs the same loops the old image was sampled in, and exits
 *   0  the memory stayed zero, the exec had already released the old pins
 *      (the system holds PINS, as before the old image armed; -1 is not
 *      checked), and this
 *      image's own session (a new mm) is off with nothing counted;
 *   3  pins still held;  5  the mapping failed;  6  memory was written;
 *   7  the new session is not pristine.
 */
#define _GNU_SOURCE
#include "common.h"

#define LEN	(2 * 4096UL)

int main(int argc, char **argv)
{
	struct profil_stats st = { .size = sizeof(st) };
	void *at, *buf;
	size_t i;

	if (argc != 3)
		return 2;
	at = (void *)strtoul(argv[1], NULL, 0);
	/* -1: the pins could not be counted (not root); the guest checks. */
	if (atoll(argv[2]) >= 0 && pins_held() != atoll(argv[2]))
		return 3;
	buf = mmap(at, LEN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (buf != at)
		return 5;
	spin_cpu(spin_a, 100 * 1000000ULL);
	spin_cpu(spin_b, 100 * 1000000ULL);
	for (i = 0; i < LEN; i++)
		if (((unsigned char *)buf)[i])
			return 6;
	if (dev_ioctl(PROFIL_IOC_STATS, &st) || st.state != PROFIL_STATE_OFF ||
	    st.armed || st.samples)
		return 7;
	return 0;
}
