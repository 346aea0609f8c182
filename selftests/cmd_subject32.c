// SPDX-License-Identifier: GPL-2.0
/*
 * A 32-bit, dynamically linked program for profil(1)'s tests: it says
 * "32-bit ran" and exits 0.  Built with -m32 -nostdlib against the 32-bit
 * libc.so.6 itself (libc6-i386), with an entry point of its own, so that
 * no 32-bit development files are needed.
 */
int puts(const char *s);
void exit(int status);
void start(void);

/* The entry point: the stack is 16-byte aligned, with no return address. */
__attribute__((force_align_arg_pointer, noreturn)) void start(void)
{
	puts("32-bit ran");
	exit(0);
}
