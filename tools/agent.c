// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * profil(1)'s agent, preloaded into the program it runs (LD_PRELOAD).
 *
 * Before main() it arms one session of /dev/profil over the executable
 * segments of every loaded object (dl_iterate_phdr()), 32-bit bins, and
 * one bin for PCs in none of them; the bins, a header naming each object
 * and the profil_output_ctl live in one image that the kernel writes to
 * the directory profil(1) made when the arm ends (profile-file.h): at
 * exit, _exit, a fatal signal, exec, or a re-arm.  So nothing here needs
 * to run at the end, nor a descriptor to stay open: the program may close
 * them all.  What does run at exit(3) adds the session's counters to the
 * header.  A dlopen() that brings new objects re-arms over a new image;
 * the old arm's file is written then, so each sample is in one file.
 *
 * The environment, set by profil(1):
 *	PROFIL_AGENT_DIR	the directory of the files
 *	PROFIL_AGENT_RATE	Hz
 *	PROFIL_AGENT_PID	the process to profile, without ...
 *	PROFIL_AGENT_CHILDREN	... which every process is, children included
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <linux/profil.h>

#include "profile-file.h"

#define AGENT_MIN_SHIFT	2	/* a bin for each 4 bytes of text */
#define AGENT_MAX_SHIFT	12	/* 4 KiB a bin: RLIMIT_MEMLOCK is short */
#define AGENT_MAX_SEGS	(PROFIL_MAX_REGIONS - 1) /* and the nowhere bin */

struct agent_seg {
	uintptr_t start, end, bias;
	const char *name;
	uint32_t kind;
};

/* Where each part of an image goes, for the bin size of each segment. */
struct agent_layout {
	unsigned char shift[AGENT_MAX_SEGS];
	size_t names_off, names_size;
	size_t bins_off[AGENT_MAX_SEGS + 1];
	size_t head_size, ctl_off, size;
};

static struct {
	/*
	 * Taken to arm (the constructor, dlopen()), at exit, and across
	 * fork() (pthread_atfork()), so that a child never copies an image
	 * half made; everything below is under it.
	 */
	pthread_mutex_t lock;
	char dir[PATH_MAX];
	char exe[PATH_MAX];
	unsigned int rate;
	int inherit;
	unsigned long long adds;	/* dlpi_adds when the segments were read */
	struct agent_seg segs[AGENT_MAX_SEGS];
	unsigned int nr_segs;
	struct profil_region regions[PROFIL_MAX_REGIONS];
	struct agent_layout layout;	/* of image */
	void *image;			/* the armed image, or NULL */
	unsigned int arms;
	uint64_t cpu_start_ns;		/* process CPU time at the first arm */
} agent = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* --- the objects ----------------------------------------------------- */

static int agent_is_vdso(const struct dl_phdr_info *info)
{
	uintptr_t ehdr = getauxval(AT_SYSINFO_EHDR);

	return ehdr && (uintptr_t)info->dlpi_phdr - ehdr < 0x10000;
}

static uint32_t agent_kind(const struct dl_phdr_info *info, const char **name)
{
	if (agent_is_vdso(info)) {
		*name = "[vdso]";
		return PROFILE_REGION_VDSO;
	}
	if (!info->dlpi_name[0]) {
		*name = agent.exe;
		return PROFILE_REGION_EXE;
	}
	*name = info->dlpi_name;
	return PROFILE_REGION_LIB;
}

static int agent_collect(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *name;
	uint32_t kind = agent_kind(info, &name);
	int i;

	(void)data;
	if (size >= offsetof(struct dl_phdr_info, dlpi_adds) + sizeof(info->dlpi_adds))
		agent.adds = info->dlpi_adds;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		struct agent_seg *s = &agent.segs[agent.nr_segs];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || !ph->p_memsz)
			continue;
		if (agent.nr_segs == AGENT_MAX_SEGS)
			return 1;	/* the rest count as nowhere */
		s->start = info->dlpi_addr + ph->p_vaddr;
		s->end = s->start + ph->p_memsz;
		s->bias = info->dlpi_addr;
		s->name = name;
		s->kind = kind;
		agent.nr_segs++;
	}
	return 0;
}

static unsigned long long agent_adds(void)
{
	agent.nr_segs = 0;
	dl_iterate_phdr(agent_collect, NULL);
	return agent.adds;
}

/* --- the image ------------------------------------------------------- */

static size_t agent_nr_bins(const struct agent_seg *s, unsigned int shift)
{
	return ((s->end - s->start) + (1UL << shift) - 1) >> shift;
}

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* Every segment's bins of 1 << @shift bytes. */
static void agent_shifts(struct agent_layout *l, unsigned int shift)
{
	memset(l->shift, shift, sizeof(l->shift));
}

/*
 * Make the largest array of bins that can still be coarser half as long:
 * the big libraries give way first, the program's own text last.  0 when
 * every segment is at the coarsest.
 */
static int agent_coarsen(struct agent_layout *l)
{
	size_t n, most = 0;
	unsigned int i, pick = 0;

	for (i = 0; i < agent.nr_segs; i++) {
		n = agent_nr_bins(&agent.segs[i], l->shift[i]);
		if (l->shift[i] < AGENT_MAX_SHIFT && n > most) {
			most = n;
			pick = i;
		}
	}
	if (!most)
		return 0;
	l->shift[pick]++;
	return 1;
}

/* Where everything goes, for the bin sizes in @l. */
static void agent_plan(struct agent_layout *l)
{
	size_t off;
	unsigned int i;

	l->names_off = sizeof(struct profile_file_hdr) +
		(agent.nr_segs + 1) * sizeof(struct profile_file_region);
	l->names_size = 1;	/* "", the nowhere bin's */
	for (i = 0; i < agent.nr_segs; i++)
		l->names_size += strlen(agent.segs[i].name) + 1;
	off = align8(l->names_off + l->names_size);
	for (i = 0; i < agent.nr_segs; i++) {
		l->bins_off[i] = off;
		off += agent_nr_bins(&agent.segs[i], l->shift[i]) * sizeof(uint32_t);
	}
	l->bins_off[i] = off;		/* the nowhere bin */
	l->head_size = off + sizeof(uint32_t);
	l->ctl_off = align8(l->head_size);
	l->size = align8(l->ctl_off + sizeof(struct profil_output_ctl));
}

static void agent_region(struct profile_file_region *fr,
			 struct profil_region *r, const struct agent_seg *s,
			 const struct agent_layout *l, char *image, size_t i)
{
	fr->start = s->start;
	fr->end = s->end;
	fr->bias = s->bias;
	fr->bins_off = l->bins_off[i];
	fr->nr_bins = agent_nr_bins(s, l->shift[i]);
	fr->shift = l->shift[i];
	fr->kind = s->kind;
	r->buf = (uintptr_t)(image + fr->bins_off);
	r->bufsize = (uint64_t)fr->nr_bins * sizeof(uint32_t);
	r->offset = s->start;
	r->scale = PROFIL_SCALE_ONE >> (l->shift[i] - 1);
	r->flags = PROFIL_REGION_U32;
}

static void agent_nowhere(struct profile_file_region *fr,
			  struct profil_region *r, const struct agent_layout *l,
			  char *image)
{
	size_t i = agent.nr_segs;

	memset(fr, 0, sizeof(*fr));
	fr->bins_off = l->bins_off[i];
	fr->nr_bins = 1;
	fr->kind = PROFILE_REGION_NOWHERE;
	fr->name_off = 0;			/* "" */
	memset(r, 0, sizeof(*r));
	r->buf = (uintptr_t)(image + fr->bins_off);
	r->bufsize = sizeof(uint32_t);
	r->flags = PROFIL_REGION_U32 | PROFIL_REGION_OVERFLOW;
}

/* A new image for the segments read last, its regions in agent.regions. */
static void *agent_image(const struct agent_layout *l)
{
	char *image = mmap(NULL, l->size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct profile_file_hdr *h = (void *)image;
	struct profile_file_region *fr = (void *)(h + 1);
	struct profil_output_ctl *ctl;
	char *names;
	size_t i, n = 1;

	if (image == MAP_FAILED)
		return NULL;
	memcpy(h->magic, PROFILE_FILE_MAGIC, sizeof(h->magic));
	h->hdr_size = sizeof(*h);
	h->region_size = sizeof(*fr);
	h->nr_regions = agent.nr_segs + 1;
	h->pid = getpid();
	h->cpu_start_ns = agent.cpu_start_ns;
	h->names_off = l->names_off;
	h->names_size = l->names_size;
	h->size = l->head_size;
	names = image + l->names_off;
	for (i = 0; i < agent.nr_segs; i++) {
		agent_region(&fr[i], &agent.regions[i], &agent.segs[i], l, image, i);
		fr[i].name_off = n;
		n += strlen(strcpy(names + n, agent.segs[i].name)) + 1;
	}
	agent_nowhere(&fr[i], &agent.regions[i], l, image);
	ctl = (void *)(image + l->ctl_off);
	ctl->enable = 1;
	return image;
}

/* --- arming ---------------------------------------------------------- */

/*
 * What every setup attempt of one arm shares: the device, the directory,
 * and the files' names, unique there by pid, time and arm.
 */
struct agent_dev {
	int fd, dirfd;
	char name[64], child_name[64];
};

static int agent_open(struct agent_dev *d)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(d->name, sizeof(d->name), "p%%p.%llx.%u.prof",
		 (unsigned long long)ts.tv_sec * 1000000000 + ts.tv_nsec,
		 agent.arms);
	snprintf(d->child_name, sizeof(d->child_name), "c%s", d->name + 1);
	d->fd = open("/dev/profil", O_RDWR | O_CLOEXEC);
	d->dirfd = open(agent.dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return d->fd < 0 || d->dirfd < 0 ? -errno : 0;
}

static void agent_close(struct agent_dev *d)
{
	if (d->dirfd >= 0)
		close(d->dirfd);
	if (d->fd >= 0)
		close(d->fd);
}

static int agent_setup(const struct agent_dev *d, void *image,
		       const struct agent_layout *l)
{
	struct profil_output out = {
		.size = sizeof(out),
		.dirfd = d->dirfd,
		.rec_size = sizeof(uint64_t),
		.image = (uintptr_t)image,
		.image_size = l->size,
		.head_size = l->head_size,
		.ctl_offset = l->ctl_off,
		.name = (uintptr_t)d->name,
		.child_name = (uintptr_t)d->child_name,
	};
	struct profil_setup s = {
		.size = sizeof(s),
		.flags = agent.inherit ? 0 : PROFIL_F_NOINHERIT,
		.mode = PROFIL_MODE_HIST,
		.rate = agent.rate,
		.nr_regions = agent.nr_segs + 1,
		.region_size = sizeof(struct profil_region),
		.regions = (uintptr_t)agent.regions,
		.output = (uintptr_t)&out,
	};

	if (ioctl(d->fd, PROFIL_IOC_SETUP, &s))
		return -errno;
	((struct profile_file_hdr *)image)->rate = s.rate;
	return 0;
}

/*
 * Arm over the segments read last, with bins of 4 bytes or, as long as the
 * pins would pass RLIMIT_MEMLOCK, coarser ones where they are the most.
 * The image it replaces is gone once its file is written (by the setup).
 */
static int agent_arm(void)
{
	struct agent_layout l;
	struct agent_dev d;
	void *image = NULL;
	int ret = agent_open(&d);

	if (ret)
		goto out;
	agent_shifts(&l, AGENT_MIN_SHIFT);
	do {
		agent_plan(&l);
		image = agent_image(&l);
		if (!image) {
			ret = -ENOMEM;
			goto out;
		}
		ret = agent_setup(&d, image, &l);
		if (ret)
			munmap(image, l.size);
	} while (ret == -ENOMEM && agent_coarsen(&l));
out:
	agent_close(&d);
	if (ret)
		return ret;
	if (agent.image)
		munmap(agent.image, agent.layout.size);
	agent.image = image;
	agent.layout = l;
	agent.arms++;
	return 0;
}

/* Why this process has no profile, for profil(1) to say. */
static void agent_why(int err)
{
	struct agent_layout fine, coarse;
	struct rlimit rl = { 0, 0 };
	char name[32];
	int dir, fd;

	snprintf(name, sizeof(name), "e%d.txt", (int)getpid());
	dir = open(agent.dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	fd = openat(dir, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (dir >= 0)
		close(dir);
	if (fd < 0)
		return;
	agent_shifts(&fine, AGENT_MIN_SHIFT);
	agent_plan(&fine);
	agent_shifts(&coarse, AGENT_MAX_SHIFT);
	agent_plan(&coarse);
	getrlimit(RLIMIT_MEMLOCK, &rl);
	if (err == -ENOMEM)
		dprintf(fd, "RLIMIT_MEMLOCK (%llu KiB) is too small for the bins: they need %zu KiB, %zu KiB at the coarsest scale (%u bytes a bin); raise it (ulimit -l)\n",
			(unsigned long long)rl.rlim_cur / 1024,
			fine.size / 1024 + 1, coarse.size / 1024 + 1,
			1U << AGENT_MAX_SHIFT);
	else
		dprintf(fd, "/dev/profil: %s\n", strerror(-err));
	close(fd);
}

static uint64_t agent_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* --- the program's life -------------------------------------------- */

static void agent_prepare(void)
{
	pthread_mutex_lock(&agent.lock);
}

static void agent_parent(void)
{
	pthread_mutex_unlock(&agent.lock);
}

/* A forked child counts into its own copy: from zero, under its pid. */
static void agent_child(void)
{
	struct profile_file_hdr *h = agent.image;

	if (h) {
		memset((char *)h + agent.layout.bins_off[0], 0,
		       agent.layout.head_size - agent.layout.bins_off[0]);
		h->pid = getpid();
		h->flags = 0;
		h->cpu_start_ns = agent.cpu_start_ns = agent_cpu_ns();
	}
	pthread_mutex_unlock(&agent.lock);
}

/* Whether this process is one profil(1) asked for; reads the rest. */
static int agent_wanted(void)
{
	const char *dir = getenv("PROFIL_AGENT_DIR");
	const char *pid = getenv("PROFIL_AGENT_PID");
	const char *rate = getenv("PROFIL_AGENT_RATE");
	ssize_t n;

	if (!dir || strlen(dir) >= sizeof(agent.dir))
		return 0;
	agent.inherit = !!getenv("PROFIL_AGENT_CHILDREN");
	if (!agent.inherit && (!pid || atoi(pid) != getpid()))
		return 0;
	strcpy(agent.dir, dir);
	agent.rate = rate ? strtoul(rate, NULL, 10) : 0;
	n = readlink("/proc/self/exe", agent.exe, sizeof(agent.exe) - 1);
	agent.exe[n > 0 ? n : 0] = '\0';
	return 1;
}

__attribute__((constructor)) static void agent_start(void)
{
	int ret;

	if (!agent_wanted())
		return;
	pthread_atfork(agent_prepare, agent_parent, agent_child);
	pthread_mutex_lock(&agent.lock);
	agent_adds();
	agent.cpu_start_ns = agent_cpu_ns();
	ret = agent_arm();
	if (ret)
		agent_why(ret);
	pthread_mutex_unlock(&agent.lock);
}

/* The session's counters into the header, which the kernel writes later. */
__attribute__((destructor)) static void agent_end(void)
{
	struct profil_stats st = { .size = sizeof(st) };
	struct profile_file_hdr *h;
	int fd;

	pthread_mutex_lock(&agent.lock);
	h = agent.image;
	fd = h ? open("/dev/profil", O_RDWR | O_CLOEXEC) : -1;
	if (fd >= 0 && !ioctl(fd, PROFIL_IOC_STATS, &st)) {
		h->cpu_ns = agent_cpu_ns();
		h->samples = st.samples;
		h->out_of_range = st.out_of_range;
		h->saturated = st.saturated;
		h->missed = st.missed;
		h->pid = getpid();
		h->flags |= PROFILE_FILE_ENDED;
	}
	if (fd >= 0)
		close(fd);
	pthread_mutex_unlock(&agent.lock);
}

/*
 * dlopen() as the program calls it: when it brought new objects, arm
 * again over all of them, from 4-byte bins as the first arm did.
 */
__attribute__((visibility("default"))) void *dlopen(const char *file, int mode)
{
	static void *(*real)(const char *, int);
	void *h;

	if (!real)
		real = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
	h = real ? real(file, mode) : NULL;
	pthread_mutex_lock(&agent.lock);
	if (h && agent.image) {
		unsigned long long adds = agent.adds;

		if (agent_adds() != adds)
			agent_arm();
	}
	pthread_mutex_unlock(&agent.lock);
	return h;
}
