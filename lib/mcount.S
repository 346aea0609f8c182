/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mcount, _mcount and __fentry__ for x86-64: what gcc -pg (and -pg
 * -mfentry) calls at every function entry.  Each saves the registers that
 * may carry arguments (and %r10, the static chain), finds the call site
 * (frompc) and the called function (selfpc), and calls __profil_mcount()
 * (gmon.c, compiled with general registers only) on an aligned stack.
 *
 * mcount is called after the prologue (push %rbp; mov %rsp,%rbp), so the
 * function's return address is at 8(%rbp); __fentry__ is called before
 * it, with the return address just above its own.
 *
 * <cet.h> marks the object for IBT and SHSTK when the build has
 * -fcf-protection (or the library would lose the marks the C objects
 * carry), and _CET_ENDBR is the landing pad that -pg -fpie code's call
 * through mcount@GOTPCREL needs under IBT; both are nothing without it.
 */
#include <cet.h>

	.text

/*
 * PROFILE_ENTRY frame, self, from: save the argument registers in
 * a frame of @frame bytes (which leaves %rsp 16-aligned), load selfpc
 * from @self(%rsp) and frompc from @from, call __profil_mcount().
 */
	.macro	PROFILE_ENTRY frame, self, from
	.cfi_startproc
	_CET_ENDBR
	subq	$\frame, %rsp
	.cfi_adjust_cfa_offset \frame
	movq	%rax, (%rsp)
	movq	%rcx, 8(%rsp)
	movq	%rdx, 16(%rsp)
	movq	%rsi, 24(%rsp)
	movq	%rdi, 32(%rsp)
	movq	%r8, 40(%rsp)
	movq	%r9, 48(%rsp)
	movq	%r10, 56(%rsp)
	movq	\self(%rsp), %rsi
	movq	\from, %rdi
	call	__profil_mcount
	movq	56(%rsp), %r10
	movq	48(%rsp), %r9
	movq	40(%rsp), %r8
	movq	32(%rsp), %rdi
	movq	24(%rsp), %rsi
	movq	16(%rsp), %rdx
	movq	8(%rsp), %rcx
	movq	(%rsp), %rax
	addq	$\frame, %rsp
	.cfi_adjust_cfa_offset -\frame
	ret
	.cfi_endproc
	.endm

	.globl	mcount
	.type	mcount, @function
	.globl	_mcount
	.type	_mcount, @function
	.p2align 4
mcount:
_mcount:
	/* Entry %rsp is 8 mod 16; selfpc is our return address. */
	PROFILE_ENTRY 72, 72, 8(%rbp)
	.size	mcount, .-mcount
	.size	_mcount, .-_mcount

	.globl	__fentry__
	.type	__fentry__, @function
	.p2align 4
__fentry__:
	/* Entry %rsp is 0 mod 16; the function's return address is above ours. */
	PROFILE_ENTRY 64, 64, 72(%rsp)
	.size	__fentry__, .-__fentry__

#ifdef PROFIL_SHARED
/*
 * As in profil-private.h: the default version, and glibc's for
 * LD_PRELOAD (mcount and _mcount since 2.2.5, __fentry__ since 2.13).
 */
	.globl	__profil_glibc_mcount
	.set	__profil_glibc_mcount, mcount
	.globl	__profil_glibc__mcount
	.set	__profil_glibc__mcount, _mcount
	.globl	__profil_glibc___fentry__
	.set	__profil_glibc___fentry__, __fentry__
	.symver	mcount, mcount@@@LIBPROFIL_1.2
	.symver	_mcount, _mcount@@@LIBPROFIL_1.2
	.symver	__fentry__, __fentry__@@@LIBPROFIL_1.2
	.symver	__profil_glibc_mcount, mcount@GLIBC_2.2.5
	.symver	__profil_glibc__mcount, _mcount@GLIBC_2.2.5
	.symver	__profil_glibc___fentry__, __fentry__@GLIBC_2.13
#endif

	.section .note.GNU-stack, "", @progbits
