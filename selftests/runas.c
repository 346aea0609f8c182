// SPDX-License-Identifier: GPL-2.0
/* runas UID PROGRAM [ARGS]: drop every privilege to UID, then exec. */
#define _GNU_SOURCE
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	uid_t id;

	if (argc < 3) {
		fprintf(stderr, "usage: runas UID PROGRAM [ARGS]\n");
		return 2;
	}
	id = (uid_t)strtoul(argv[1], NULL, 10);
	if (setgroups(0, NULL) || setresgid(id, id, id) ||
	    setresuid(id, id, id)) {
		perror("runas");
		return 1;
	}
	execv(argv[2], argv + 2);
	perror(argv[2]);
	return 127;
}
