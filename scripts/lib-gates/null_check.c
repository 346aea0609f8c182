/*
 * profil(NULL, ...) through <profil.h>, with <unistd.h> before it (or after
 * it with -DUNISTD_AFTER): it compiles under -Wnonnull -Werror, and the
 * NULL test after the call is not optimised away (glibc's prototype alone
 * makes it so: exit 1).
 */
#ifndef UNISTD_AFTER
#include <unistd.h>
#endif
#include <profil.h>
#ifdef UNISTD_AFTER
#include <unistd.h>
#endif

__attribute__((noinline)) static int off_is_null(unsigned short *buf)
{
	profil(buf, 0, 0, 0);
	return buf == 0;
}

int main(void)
{
	unsigned short *volatile none = 0;

	if (profil(0, 0, 0, 0))
		return 2;
	return off_is_null(none) ? 0 : 1;
}
