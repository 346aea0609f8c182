// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * profil(1)'s agent for 32-bit programs.  profil.ko samples 64-bit
 * processes only, so this audit module just tells a 32-bit dynamic linker
 * that it is not wanted (la_version() 0, as the agent answers a process
 * profil did not ask for), and the linker unloads it without a word: a
 * 32-bit descendant runs as it would alone, where the 64-bit agent would
 * have its linker print "wrong ELF class".  profil(1) names it for the
 * 32-bit values of $LIB (profil.c, agent_links()).  Built with -m32
 * -nostdlib: it needs no 32-bit C library.
 */
unsigned int la_version(unsigned int version);

__attribute__((visibility("default")))
unsigned int la_version(unsigned int version)
{
	(void)version;
	return 0;
}
