// SPDX-License-Identifier: GPL-2.0
/*
 * A plugin host, as programs in the wild are: it loads libcmd_dl.so by
 * its bare name, found through the host's own RUNPATH ($ORIGIN/plug,
 * linked with --enable-new-dtags), and runs its dl_work() for 400 ms of
 * CPU time, then says "loaded".  Modes:
 *	dlopen		dlopen(), into the program's namespace
 *	dlmopen		dlmopen(LM_ID_NEWLM), a namespace of its own
 *	dlclose		dlopen(), dl_work() 200 ms, dlclose(), then dlopen()
 *			again and dl_work() 200 ms more
 *	relative	dlopen("./plug/libcmd_dl.so") from its own directory,
 *			then chdir("/") before dl_work()
 *	replaced	dlopen(), then plug/libcmd_other.so renamed over
 *			plug/libcmd_dl.so before dl_work(), as an upgrade
 *			replaces a library under a running program
 *	many		dlopen() of plug/libcmd_dl.0.so to .39.so, copies of
 *			it, one after the other, and 10 ms of dl_work() in each
 *			(as Python imports its extension modules)
 * Exit status 0, or 1 with the loader's message on stderr.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd_work.h"

static volatile unsigned long sink;

/* dlopen() by a relative name from the program's directory, then away. */
static void *load_relative(void)
{
	char dir[4096];
	ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	void *h;

	dir[n > 0 ? n : 0] = '\0';
	if (chdir(dirname(dir)))
		return NULL;
	h = dlopen("./plug/libcmd_dl.so", RTLD_NOW);
	return chdir("/") ? NULL : h;
}

/* plug/@name of the program's directory into @path[4096]. */
static char *plug_path(char *path, const char *name)
{
	ssize_t n = readlink("/proc/self/exe", path, 4095);

	path[n > 0 ? n : 0] = '\0';
	snprintf(strrchr(path, '/') ?: path, 256, "/plug/%s", name);
	return path;
}

/* plug/libcmd_dl.@i.so. */
static void *load_copy(int i)
{
	char path[4096], name[64];

	snprintf(name, sizeof(name), "libcmd_dl.%d.so", i);
	return dlopen(plug_path(path, name), RTLD_NOW);
}

/* The plugin, loaded; then another file at its name. */
static void *load_replaced(void)
{
	char from[4096], to[4096];
	void *h = dlopen("libcmd_dl.so", RTLD_NOW);

	if (h && rename(plug_path(from, "libcmd_other.so"),
			plug_path(to, "libcmd_dl.so")))
		perror("cmd_plughost: rename");
	return h;
}

static int many_copies;		/* "many": the copy to load next */

static void *load(const char *mode)
{
	if (!strcmp(mode, "dlmopen"))
		return dlmopen(LM_ID_NEWLM, "libcmd_dl.so", RTLD_NOW);
	if (!strcmp(mode, "relative"))
		return load_relative();
	if (!strcmp(mode, "many"))
		return load_copy(many_copies++);
	if (!strcmp(mode, "replaced"))
		return load_replaced();
	return dlopen("libcmd_dl.so", RTLD_NOW);
}

/* dl_work() of a fresh load for @ms of CPU; 0, or -1 when it did not load. */
static int run(const char *mode, unsigned int ms, int unload)
{
	unsigned long (*fn)(unsigned long);
	uint64_t end;
	void *h = load(mode);

	fn = h ? (unsigned long (*)(unsigned long))dlsym(h, "dl_work") : NULL;
	if (!fn) {
		fprintf(stderr, "cmd_plughost: %s\n", dlerror());
		return -1;
	}
	end = cmd_cpu_ns() + ms * 1000000ULL;
	while (cmd_cpu_ns() < end)
		sink += fn(10);
	if (unload)
		dlclose(h);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "dlopen";
	int again = !strcmp(mode, "dlclose"), i;

	if (!strcmp(mode, "many")) {
		for (i = 0; i < CMD_PLUG_COPIES; i++)
			if (run(mode, 10, 0))
				return 1;
	} else if (run(mode, again ? 200 : 400, again) ||
		   (again && run(mode, 200, 0))) {
		return 1;
	}
	printf("loaded\n");
	return 0;
}
