// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * profil(1)'s agent, an audit module of the dynamic linker (LD_AUDIT,
 * rtld-audit(7)) in the program it runs.  It wraps nothing and binds no
 * symbol: every dlopen() resolves as it would without it (against its
 * caller's RUNPATH, $ORIGIN and namespace), and it lives in a link-map
 * namespace of its own, so the program's objects are in the order and
 * number they would be (an ASan runtime still first).
 *
 * As soon as the linker reports the program it arms over the program and
 * the linker (whose mapping and relocation of the libraries is work of the
 * program's too); once the objects are loaded (the first
 * LA_ACT_CONSISTENT) it arms one session of /dev/profil over the
 * executable segments of every object the linker reported (la_objopen(),
 * any namespace), 32-bit bins, and
 * one bin for PCs in none of them; the bins, a header naming each object
 * and the profil_output_ctl live in one image that the kernel writes to
 * the directory profil(1) made when the arm ends (profile-file.h): at
 * exit, _exit, a fatal signal, exec, or a re-arm.  So nothing here needs
 * to run at the end, nor a descriptor to stay open: the program may close
 * them all.  What does run at exit(3) adds the session's counters to the
 * header.  An image keeps room for objects loaded later: a dlopen() or
 * dlmopen() that adds objects gives them bins there when the linker says
 * the objects are consistent again, and re-arms keeping the file
 * (agent_extend()); a dlclose(), or room used up, re-arms over a new
 * image, and the old arm's file is written then.  Each sample is in one
 * file.
 * A process profil(1) did not ask for gets la_version() 0: the linker
 * unloads the agent, and the process runs as it would without it.
 *
 * The environment, set by profil(1):
 *	PROFIL_AGENT_DIR	the directory of the files
 *	PROFIL_AGENT_RATE	Hz
 *	PROFIL_AGENT_PID	the process to profile (and what it execs),
 *				without ...
 *	PROFIL_AGENT_CHILDREN	... which every process is, children included;
 *				without it, a forked child loses LD_AUDIT's
 *				agent and these (agent_scrub_env())
 *	PROFIL_AGENT_LD_AUDIT	LD_AUDIT before profil(1) added the agent
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
#include <sys/syscall.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/profil.h>

#include "profile-file.h"

#define AGENT_MIN_SHIFT	2	/* a bin for each 4 bytes of text */
#define AGENT_MAX_SHIFT	12	/* 4 KiB a bin: RLIMIT_MEMLOCK is short */
#define AGENT_MAX_SEGS	(PROFIL_MAX_REGIONS - 1) /* and the nowhere bin */
#define AGENT_MAX_OBJS	1024	/* the objects followed; more count as nowhere */
#define AGENT_SPARE	(256 << 10) /* bins reserved at first for objects */
#define AGENT_SPARE_MAX	(64 << 20)  /* loaded later, doubled when short, */
#define AGENT_SPARE_SLOTS 32	    /* and header entries for them, */
#define AGENT_NAME_ROOM	256	    /* with this many bytes of name each */

/* An object the linker reported, and its name made absolute if it was not. */
struct agent_obj {
	struct link_map *map;
	char *path;
};

struct agent_seg {
	uintptr_t start, end, bias;
	const char *name;
	uint32_t kind;
	const unsigned char *build_id;	/* in the object's notes, or NULL */
	size_t build_id_size;
};

/*
 * Where each part of an image goes, for the bin size of each segment.  The
 * header has room for @slots regions and @names_cap bytes of names, and
 * @spare bytes of bins follow the segments' own: what objects loaded later
 * get (agent_extend()), @spare_used of it so far.
 */
struct agent_layout {
	unsigned char shift[AGENT_MAX_SEGS];
	unsigned int slots;
	size_t names_off, names_size, names_cap;
	size_t bins_off[AGENT_MAX_SEGS + 1];	/* [0] the nowhere bin's, */
						/* [1 + i] segment i's */
	size_t spare_off, spare, spare_used;
	size_t head_size, ctl_off, size;
	int pclog;		/* the nowhere bin is a PC log */
};

/*
 * The PCs in no object, a JIT's code, are kept for the report to name from
 * the JIT's /tmp/perf-PID.map: a count and this many PCs, 8 KiB in all
 * (PROFIL_REGION_PCLOG; a module without it gets the one bin).
 */
#define AGENT_PCLOG_SLOTS	1024

static struct {
	/*
	 * What a fork touches comes first, on one page: a child that is not
	 * profiled writes it, and nothing else of the agent's
	 * (agent_child_left()).
	 */
	int left;			/* a child left alone: the agent is off */
	void *image;			/* the armed image, or NULL */
	char ***environ;		/* the program's libc's environ */
	char *audit_was;		/* "LD_AUDIT=" what it was, or NULL */
	int inherit;
	/*
	 * Taken to arm (la_activity()), at exit, and with --children across
	 * fork() (pthread_atfork()), so that a child never copies an image
	 * half made; everything below is under it.
	 */
	pthread_mutex_t lock;
	char dir[PATH_MAX];
	char exe[PATH_MAX];
	unsigned int rate;
	/*
	 * The objects the linker reported, in its order; whether they changed
	 * since the last arm, and whether that was more than objects added
	 * after the first @nr_objs_armed.
	 */
	struct agent_obj objs[AGENT_MAX_OBJS];
	unsigned int nr_objs, nr_objs_armed;
	int changed, closed;
	size_t spare;			/* bins to reserve in a new image */
	unsigned int spare_slots;	/* and header entries */
	struct agent_seg segs[AGENT_MAX_SEGS];
	unsigned int nr_segs;
	struct profil_region regions[PROFIL_MAX_REGIONS];
	struct agent_layout layout;	/* of image */
	/*
	 * The agent's own code (agent_self()), which every image's header
	 * names: its system calls are PCs in no region, profil's work.
	 */
	uint64_t self[PROFILE_SELF_MAX][2];
	unsigned int nr_self;
	int self_read;
	unsigned int arms;
	int ending;			/* the program is exiting */
	struct link_map *main;		/* the program's own object */
	int no_pclog;			/* the module refused PROFIL_REGION_PCLOG */
	int whole;			/* armed over every object once */
	uint64_t armed_seen;		/* profil_stats.armed after our arm */
	const char *interp;		/* the dynamic linker's name */
	uint64_t cpu_start_ns;		/* process CPU time at the first arm */
} agent = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.spare = AGENT_SPARE,
	.spare_slots = AGENT_SPARE_SLOTS,
};

/* --- the objects ----------------------------------------------------- */

static int agent_is_vdso(const ElfW(Phdr) *phdr)
{
	uintptr_t ehdr = getauxval(AT_SYSINFO_EHDR);

	return ehdr && (uintptr_t)phdr - ehdr < 0x10000;
}

static uint32_t agent_kind(const struct link_map *map, const ElfW(Phdr) *phdr,
			   const char **name)
{
	if (agent_is_vdso(phdr)) {
		*name = "[vdso]";
		return PROFILE_REGION_VDSO;
	}
	if (map == agent.objs[0].map && !map->l_name[0]) {
		*name = agent.exe;
		return PROFILE_REGION_EXE;
	}
	if (agent.interp && map->l_addr == getauxval(AT_BASE)) {
		*name = agent.interp;
		return PROFILE_REGION_LIB;
	}
	*name = map->l_name;
	return PROFILE_REGION_LIB;
}

/*
 * A name as the process opened it may be relative ("./x.so", a relative
 * LD_LIBRARY_PATH): made absolute while the directory it was opened in
 * is still the current one, so that it names the same file to profil(1).
 */
static char *agent_abs_path(const char *name)
{
	return name[0] && name[0] != '/' ? realpath(name, NULL) : NULL;
}

/* The NT_GNU_BUILD_ID note of the object of @phdr[@n] at @bias, or NULL. */
static const unsigned char *agent_build_id(const ElfW(Phdr) *phdr, int n,
					   uintptr_t bias, size_t *size)
{
	const ElfW(Nhdr) *nh;
	const char *p, *end;
	int i;

	for (i = 0; i < n; i++) {
		if (phdr[i].p_type != PT_NOTE)
			continue;
		p = (const char *)(bias + phdr[i].p_vaddr);
		end = p + phdr[i].p_memsz;
		while (end - p >= (ptrdiff_t)sizeof(*nh)) {
			nh = (const void *)p;
			p += sizeof(*nh) + ((nh->n_namesz + 3) & ~3U);
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(nh + 1, "GNU", 4) && p <= end &&
			    nh->n_descsz <= PROFILE_BUILD_ID_MAX &&
			    (size_t)(end - p) >= nh->n_descsz) {
				*size = nh->n_descsz;
				return (const unsigned char *)p;
			}
			p += (nh->n_descsz + 3) & ~3U;
		}
	}
	return NULL;
}

/* Executable segments of @phdr[@n] at @bias into agent.segs; 1: full. */
static int agent_add_segs(const ElfW(Phdr) *phdr, int n, uintptr_t bias,
			  const char *name, uint32_t kind)
{
	const unsigned char *build_id;
	size_t build_id_size = 0;
	int i;

	build_id = agent_build_id(phdr, n, bias, &build_id_size);
	for (i = 0; i < n; i++) {
		const ElfW(Phdr) *ph = &phdr[i];
		struct agent_seg *s = &agent.segs[agent.nr_segs];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || !ph->p_memsz)
			continue;
		if (agent.nr_segs == AGENT_MAX_SEGS)
			return 1;	/* the rest count as nowhere */
		s->start = bias + ph->p_vaddr;
		s->end = s->start + ph->p_memsz;
		s->bias = bias;
		s->name = name;
		s->kind = kind;
		s->build_id = build_id;
		s->build_id_size = build_id ? build_id_size : 0;
		agent.nr_segs++;
	}
	return 0;
}

/* @map's executable segments into agent.segs; 1 when they are full. */
static int agent_collect(struct link_map *map, const char *path)
{
	const ElfW(Phdr) *phdr;
	const char *name;
	uint32_t kind;
	int n = dlinfo(map, RTLD_DI_PHDR, &phdr);

	if (n <= 0)
		return 0;
	kind = agent_kind(map, phdr, &name);
	return agent_add_segs(phdr, n, map->l_addr, path ?: name, kind);
}

/*
 * The dynamic linker's own text, from its ELF header in memory (AT_BASE),
 * and its name, the program's PT_INTERP: what runs while the program's
 * objects are mapped and relocated, before the linker reports them
 * consistent.
 */
static int agent_collect_ldso(struct link_map *main)
{
	const ElfW(Ehdr) *eh = (const void *)getauxval(AT_BASE);
	const ElfW(Phdr) *phdr;
	int i, n = dlinfo(main, RTLD_DI_PHDR, &phdr);

	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG))
		return 0;
	for (i = 0; i < n && !agent.interp; i++)
		if (phdr[i].p_type == PT_INTERP)
			agent.interp = (const char *)(main->l_addr + phdr[i].p_vaddr);
	return agent_add_segs((const void *)((const char *)eh + eh->e_phoff),
			      eh->e_phnum, (uintptr_t)eh,
			      agent.interp ?: "ld.so", PROFILE_REGION_LIB);
}

/*
 * An executable segment of an object of the agent's namespace
 * (dl_iterate_phdr() walks its caller's): the agent and its own libc, but
 * not the linker and the vDSO, which the program shares and has regions
 * for.
 */
static int agent_self_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	int i;

	(void)size;
	(void)arg;
	if (info->dlpi_addr == getauxval(AT_BASE) ||
	    agent_is_vdso(info->dlpi_phdr))
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t *r = agent.self[agent.nr_self];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (agent.nr_self == PROFILE_SELF_MAX)
			return 1;
		r[0] = info->dlpi_addr + ph->p_vaddr;
		r[1] = r[0] + ph->p_memsz;
		agent.nr_self++;
	}
	return 0;
}

/* The agent's own code, read the first time, into @h. */
static void agent_self(struct profile_file_hdr *h)
{
	if (!agent.self_read)
		dl_iterate_phdr(agent_self_one, NULL);
	agent.self_read = 1;
	h->nr_self = agent.nr_self;
	memcpy(h->self, agent.self, sizeof(h->self));
}

/* The segments of the objects from the @first, after agent.segs'. */
static void agent_read_segs(unsigned int first)
{
	unsigned int i;

	for (i = first; i < agent.nr_objs; i++)
		if (agent_collect(agent.objs[i].map, agent.objs[i].path))
			break;
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

static size_t align_page(size_t n)
{
	size_t page = sysconf(_SC_PAGESIZE);

	return (n + page - 1) & ~(page - 1);
}

/*
 * Every segment's bins of 1 << @shift bytes, and room for @slots more
 * objects with @spare bytes of bins.
 */
static void agent_shifts(struct agent_layout *l, unsigned int shift,
			 size_t spare, unsigned int slots)
{
	memset(l->shift, shift, sizeof(l->shift));
	l->spare = spare;
	if (slots > AGENT_MAX_SEGS - agent.nr_segs)
		slots = AGENT_MAX_SEGS - agent.nr_segs;
	l->slots = agent.nr_segs + 1 + slots;
}

/*
 * Make the largest array of bins of the segments from @first on that can
 * still be coarser, but no coarser than @max, half as long: the big
 * libraries give way first, the program's own text last.  0 when every
 * one is at @max.
 */
static int agent_coarsen_from(struct agent_layout *l, unsigned int first,
			      unsigned int max)
{
	size_t n, most = 0;
	unsigned int i, pick = 0;

	for (i = first; i < agent.nr_segs; i++) {
		n = agent_nr_bins(&agent.segs[i], l->shift[i]);
		if (l->shift[i] < max && n > most) {
			most = n;
			pick = i;
		}
	}
	if (!most)
		return 0;
	l->shift[pick]++;
	return 1;
}

/*
 * Fewer pinned pages: the reserve gives way first, halved down to nothing,
 * then the bins of the segments.  0 when there is nothing left to give.
 */
static int agent_coarsen(struct agent_layout *l)
{
	if (l->spare) {
		l->spare = l->spare > 8192 ? l->spare / 2 : 0;
		return 1;
	}
	return agent_coarsen_from(l, 0, AGENT_MAX_SHIFT);
}

/* Bytes of bins of segments @first to @end, at the sizes in @l. */
static size_t agent_bins_bytes(const struct agent_layout *l,
			       unsigned int first, unsigned int end)
{
	size_t n = 0;

	for (; first < end; first++)
		n += agent_nr_bins(&agent.segs[first], l->shift[first]) *
		     sizeof(uint32_t);
	return n;
}

/* Bytes of names of segments @first to @end. */
static size_t agent_names_bytes(unsigned int first, unsigned int end)
{
	size_t n = 0;

	for (; first < end; first++)
		n += strlen(agent.segs[first].name) + 1;
	return n;
}

/* Segments @first on, bins one after the other from @off; the end. */
static size_t agent_place_bins(struct agent_layout *l, unsigned int first,
			       size_t off)
{
	for (; first < agent.nr_segs; first++) {
		l->bins_off[1 + first] = off;
		off += agent_nr_bins(&agent.segs[first], l->shift[first]) *
		       sizeof(uint32_t);
	}
	return off;
}

/* Where everything goes, for the bin sizes and the room in @l. */
static void agent_plan(struct agent_layout *l)
{
	size_t off;

	l->names_off = sizeof(struct profile_file_hdr) +
		l->slots * sizeof(struct profile_file_region);
	l->names_size = 1 + agent_names_bytes(0, agent.nr_segs); /* 1: "" */
	l->names_cap = l->names_size +
		(l->slots - agent.nr_segs - 1) * AGENT_NAME_ROOM;
	/* The bins and the control word on pages of their own (agent_image()). */
	off = align_page(l->names_off + l->names_cap);
	l->bins_off[0] = off;		/* the nowhere bin, or its PC log */
	l->pclog = !agent.no_pclog;
	off += l->pclog ? AGENT_PCLOG_SLOTS * sizeof(uint64_t) :
			  sizeof(uint32_t);
	off = agent_place_bins(l, 0, off);
	l->spare_off = off;
	l->spare_used = 0;
	l->head_size = off + l->spare;
	l->ctl_off = align8(l->head_size);
	l->size = align_page(l->ctl_off + sizeof(struct profil_output_ctl));
}

/* Pages the user may pin, as the kernel counts them; SIZE_MAX: no limit. */
static size_t agent_memlock_limit(void)
{
	struct __user_cap_header_struct ch = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct cd[_LINUX_CAPABILITY_U32S_3];
	struct rlimit rl;

	if (!syscall(SYS_capget, &ch, cd) &&
	    (cd[CAP_TO_INDEX(CAP_IPC_LOCK)].effective & CAP_TO_MASK(CAP_IPC_LOCK)))
		return SIZE_MAX;
	if (getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return SIZE_MAX;
	return rl.rlim_cur;
}

/* Region @i of the file (segment i - 1) and of the setup. */
static void agent_region(struct profile_file_region *fr,
			 struct profil_region *r, const struct agent_seg *s,
			 const struct agent_layout *l, char *image, size_t i)
{
	fr->start = s->start;
	fr->end = s->end;
	fr->bias = s->bias;
	fr->bins_off = l->bins_off[i];
	fr->nr_bins = agent_nr_bins(s, l->shift[i - 1]);
	fr->shift = l->shift[i - 1];
	fr->kind = s->kind;
	fr->build_id_size = s->build_id_size;
	if (s->build_id_size)
		memcpy(fr->build_id, s->build_id, s->build_id_size);
	r->buf = (uintptr_t)(image + fr->bins_off);
	r->bufsize = (uint64_t)fr->nr_bins * sizeof(uint32_t);
	r->offset = s->start;
	r->scale = PROFIL_SCALE_ONE >> (l->shift[i - 1] - 1);
	r->flags = PROFIL_REGION_U32;
}

/* Region 0 of the file and of the setup, which agent_extend() keeps. */
static void agent_nowhere(struct profile_file_region *fr,
			  struct profil_region *r, const struct agent_layout *l,
			  char *image)
{
	memset(fr, 0, sizeof(*fr));
	fr->bins_off = l->bins_off[0];
	fr->nr_bins = 1;
	fr->kind = PROFILE_REGION_NOWHERE;
	fr->name_off = 0;			/* "" */
	memset(r, 0, sizeof(*r));
	r->buf = (uintptr_t)(image + fr->bins_off);
	r->bufsize = sizeof(uint32_t);
	r->flags = PROFIL_REGION_U32 | PROFIL_REGION_OVERFLOW;
	if (l->pclog) {
		fr->nr_bins = AGENT_PCLOG_SLOTS;
		fr->kind = PROFILE_REGION_PCLOG;
		r->bufsize = AGENT_PCLOG_SLOTS * sizeof(uint64_t);
		r->flags = PROFIL_REGION_OVERFLOW | PROFIL_REGION_PCLOG;
	}
}

/*
 * What a fork does with an image: its pages are pinned, and a fork copies
 * pinned pages at once.  A child that is not profiled gets none of it
 * (MADV_DONTFORK); one that is gets the header copied and its bins and
 * control word as zeroed pages, with nothing copied (MADV_WIPEONFORK),
 * and agent_child() makes them its own.
 */
static int agent_fork_advice(char *image, const struct agent_layout *l)
{
	if (!agent.inherit)
		return madvise(image, l->size, MADV_DONTFORK);
	return madvise(image + l->bins_off[0], l->size - l->bins_off[0],
		       MADV_WIPEONFORK);
}

/*
 * Segments @first to agent.nr_segs into the header of @image, their names
 * from @names_size in its names; the names' size after them.
 */
static size_t agent_header_add(char *image, const struct agent_layout *l,
			       unsigned int first, size_t names_size)
{
	struct profile_file_region *fr =
		(void *)(image + sizeof(struct profile_file_hdr));
	char *names = image + l->names_off;
	unsigned int i;

	for (i = first; i < agent.nr_segs; i++) {
		agent_region(&fr[1 + i], &agent.regions[1 + i], &agent.segs[i],
			     l, image, 1 + i);
		fr[1 + i].name_off = names_size;
		names_size += strlen(strcpy(names + names_size,
					    agent.segs[i].name)) + 1;
	}
	return names_size;
}

/* A new image for the segments read last, its regions in agent.regions. */
static void *agent_image(const struct agent_layout *l)
{
	char *image = mmap(NULL, l->size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct profile_file_hdr *h = (void *)image;
	struct profile_file_region *fr = (void *)(h + 1);
	struct profil_output_ctl *ctl;

	if (image == MAP_FAILED)
		return NULL;
	if (agent_fork_advice(image, l)) {
		munmap(image, l->size);
		return NULL;
	}
	memcpy(h->magic, PROFILE_FILE_MAGIC, sizeof(h->magic));
	h->hdr_size = sizeof(*h);
	h->region_size = sizeof(*fr);
	h->nr_regions = agent.nr_segs + 1;
	h->pid = getpid();
	h->cpu_start_ns = agent.cpu_start_ns;
	h->names_off = l->names_off;
	h->names_size = l->names_size;
	h->size = l->head_size;
	agent_self(h);
	agent_nowhere(&fr[0], &agent.regions[0], l, image);
	agent_header_add(image, l, 0, 1);	/* after "", the nowhere bin's */
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

/*
 * Arm over @image, or with @keep over the running arm's image, which the
 * new arm carries on (PROFIL_F_KEEP_FILE): its file is not written now.
 */
static int agent_setup(const struct agent_dev *d, void *image,
		       const struct agent_layout *l, int keep)
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
		.flags = (agent.inherit ? 0 : PROFIL_F_NOINHERIT) |
			 (keep ? PROFIL_F_KEEP_FILE : 0),
		.mode = PROFIL_MODE_HIST,
		.rate = agent.rate,
		.nr_regions = agent.nr_segs + 1,
		.region_size = sizeof(struct profil_region),
		.regions = (uintptr_t)agent.regions,
		.output = keep ? 0 : (uintptr_t)&out,
	};

	struct profil_stats st = { .size = sizeof(st) };

	if (ioctl(d->fd, PROFIL_IOC_SETUP, &s))
		return -errno;
	((struct profile_file_hdr *)image)->rate = s.rate;
	/* How many arms the process has had, this one the last of them. */
	if (!ioctl(d->fd, PROFIL_IOC_STATS, &st))
		agent.armed_seen = st.armed;
	return 0;
}

/*
 * The layout of a new image with @spare bytes and @slots entries in
 * reserve: bins of 4 bytes, the first @kept segments' as the running
 * image has them; then made coarser until the image fits RLIMIT_MEMLOCK.
 */
static void agent_layout_new(struct agent_layout *l, size_t spare,
			     unsigned int slots, unsigned int kept)
{
	size_t limit = agent_memlock_limit();

	agent_shifts(l, AGENT_MIN_SHIFT, spare, slots);
	if (kept && agent.image)
		memcpy(l->shift, agent.layout.shift, kept);
	agent_plan(l);
	while (l->size > limit && agent_coarsen(l))
		agent_plan(l);
}

/*
 * Arm over the segments read last, with the bins agent_layout_new() gives
 * them or, as long as the pins pass what the user may lock (other pins of
 * the user's count too), coarser ones where they are the most.  The image
 * it replaces is gone once its file is written (by the setup).
 */
static int agent_arm(size_t spare, unsigned int slots, unsigned int kept)
{
	struct agent_layout l;
	struct agent_dev d;
	void *image = NULL;
	int ret = agent_open(&d);

	if (ret)
		goto out;
	agent_layout_new(&l, spare, slots, kept);
	for (;;) {
		image = agent_image(&l);
		if (!image) {
			ret = -ENOMEM;
			goto out;
		}
		ret = agent_setup(&d, image, &l, 0);
		if (!ret)
			break;
		munmap(image, l.size);
		if (ret == -EINVAL && l.pclog) {
			agent.no_pclog = 1;	/* an older module */
		} else if (ret != -ENOMEM || !agent_coarsen(&l)) {
			goto out;
		}
		agent_plan(&l);
	}
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

/* The first @first segments' coarsest bins, the finest if none. */
static unsigned int agent_max_shift(const struct agent_layout *l,
				    unsigned int first)
{
	unsigned int i, max = AGENT_MIN_SHIFT;

	for (i = 0; i < first; i++)
		if (l->shift[i] > max)
			max = l->shift[i];
	return max;
}

/*
 * The segments from @first on get bins from the reserve of @l, no coarser
 * than the coarsest before them; and places in its header.  -ENOSPC when
 * they do not fit.
 */
static int agent_fit(struct agent_layout *l, unsigned int first)
{
	unsigned int max = agent_max_shift(l, first);
	size_t off = l->spare_off + l->spare_used;

	if (agent.nr_segs + 1 > l->slots ||
	    l->names_size + agent_names_bytes(first, agent.nr_segs) > l->names_cap)
		return -ENOSPC;
	memset(l->shift + first, AGENT_MIN_SHIFT, agent.nr_segs - first);
	while (agent_bins_bytes(l, first, agent.nr_segs) > l->spare - l->spare_used)
		if (!agent_coarsen_from(l, first, max))
			return -ENOSPC;
	l->spare_used = agent_place_bins(l, first, off) - l->spare_off;
	return 0;
}

/*
 * Objects added since the image was made, and none closed: their segments
 * get bins from the image's reserve and entries in its header, then a
 * re-arm that keeps the file (PROFIL_F_KEEP_FILE) counts them too.  So a
 * process that loads many objects one by one has one file, not one (of
 * the whole image) per dlopen().  -ENOSPC when the reserve is short.
 */
static int agent_extend(void)
{
	struct profile_file_hdr *h = agent.image;
	struct agent_layout l = agent.layout;
	unsigned int first = agent.nr_segs;
	uint32_t nr_was = h->nr_regions;
	uint64_t names_was = h->names_size;
	struct agent_dev d;
	int ret;

	agent_read_segs(agent.nr_objs_armed);
	if (agent.nr_segs == first)
		return 0;		/* no new text */
	ret = agent_fit(&l, first);
	if (ret)
		return ret;
	l.names_size = agent_header_add(agent.image, &l, first, l.names_size);
	h->names_size = l.names_size;
	/* The count last: a file written meanwhile is whole either way. */
	__atomic_store_n(&h->nr_regions, agent.nr_segs + 1, __ATOMIC_RELEASE);
	ret = agent_open(&d);
	if (!ret)
		ret = agent_setup(&d, agent.image, &l, 1);
	agent_close(&d);
	if (ret) {
		__atomic_store_n(&h->nr_regions, nr_was, __ATOMIC_RELEASE);
		h->names_size = names_was;
		return ret;
	}
	agent.layout = l;
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
	agent_shifts(&fine, AGENT_MIN_SHIFT, 0, 0);
	agent_plan(&fine);
	agent_shifts(&coarse, AGENT_MAX_SHIFT, 0, 0);
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

/* Whether @s starts with @prefix, without a call into libc (after a fork). */
static inline int agent_starts(const char *s, const char *prefix)
{
	while (*prefix && *s == *prefix)
		s++, prefix++;
	return !*prefix;
}

/*
 * A child profil(1) did not ask for gets the environment the program was
 * given, without LD_AUDIT's agent and PROFIL_AGENT_*, so that it and what
 * it execs run as they would alone.  Only moves pointers (after a fork).
 */
static void agent_scrub_env(void)
{
	char **env = agent.environ ? *agent.environ : NULL, **w = env;

	for (; env && *env; env++) {
		if (agent_starts(*env, "PROFIL_AGENT_"))
			continue;
		if (agent_starts(*env, "LD_AUDIT=")) {
			if (agent.audit_was)
				*w++ = agent.audit_was;
			continue;
		}
		*w++ = *env;
	}
	if (w)
		*w = NULL;
}

/*
 * Without --children a fork costs the program nothing more than the
 * child's handler: no lock is taken across it (the image is not the
 * child's, MADV_DONTFORK), and the child, which has no image, loses the
 * agent's environment and turns the agent off: the la_*() calls and the
 * destructor return at once, whatever state another thread left the
 * agent in.  It writes one page of the agent's and the environment's,
 * and calls nothing (a call into this namespace's libc would fault its
 * pages in, in every child).
 */
static void agent_child_left(void)
{
	agent.left = 1;
	agent.image = NULL;
	agent_scrub_env();
}

/*
 * With --children a forked child counts into its own bins, zeroed pages
 * (agent_fork_advice()), under its pid, once its control word says so.
 */
static void agent_child(void)
{
	struct profile_file_hdr *h = agent.image;

	if (h) {
		h->pid = getpid();
		h->flags = 0;
		h->cpu_start_ns = agent.cpu_start_ns = agent_cpu_ns();
		((struct profil_output_ctl *)((char *)h + agent.layout.ctl_off))->enable = 1;
	}
	pthread_mutex_unlock(&agent.lock);
}

/* Whether this process is one profil(1) asked for; reads the rest. */
static int agent_wanted(void)
{
	const char *dir = getenv("PROFIL_AGENT_DIR");
	const char *pid = getenv("PROFIL_AGENT_PID");
	const char *rate = getenv("PROFIL_AGENT_RATE");
	const char *was = getenv("PROFIL_AGENT_LD_AUDIT");
	ssize_t n;

	if (!dir || strlen(dir) >= sizeof(agent.dir))
		return 0;
	agent.inherit = !!getenv("PROFIL_AGENT_CHILDREN");
	if (!agent.inherit && (!pid || atoi(pid) != getpid()))
		return 0;
	strcpy(agent.dir, dir);
	agent.rate = rate ? strtoul(rate, NULL, 10) : 0;
	if (was && asprintf(&agent.audit_was, "LD_AUDIT=%s", was) < 0)
		agent.audit_was = NULL;
	n = readlink("/proc/self/exe", agent.exe, sizeof(agent.exe) - 1);
	agent.exe[n > 0 ? n : 0] = '\0';
	return 1;
}

/* --- the dynamic linker's audit interface (rtld-audit(7)) --------------- */

#define AGENT_API __attribute__((visibility("default")))

AGENT_API unsigned int la_version(unsigned int version)
{
	if (version < 1 || !agent_wanted())
		return 0;
	return version < LAV_CURRENT ? version : LAV_CURRENT;
}

/*
 * The program reported, its libraries not yet: arm over it and the dynamic
 * linker, which maps and relocates the rest now, so that this work is
 * counted too.  The first LA_ACT_CONSISTENT, after relocation, arms over
 * everything; that is where a failure is reported.
 */
static void agent_arm_startup(struct link_map *main)
{
	agent.nr_segs = 0;
	if (agent_collect(main, NULL) || agent_collect_ldso(main))
		return;
	agent.cpu_start_ns = agent_cpu_ns();
	agent_arm(0, 0, 0);
}

/* An object in any namespace but ours: followed; no symbol is bound. */
AGENT_API unsigned int la_objopen(struct link_map *map, Lmid_t lmid,
				  uintptr_t *cookie)
{
	(void)lmid;
	*cookie = (uintptr_t)map;
	if (agent.left)
		return 0;
	pthread_mutex_lock(&agent.lock);
	if (agent.nr_objs < AGENT_MAX_OBJS) {
		agent.objs[agent.nr_objs].path = agent_abs_path(map->l_name);
		agent.objs[agent.nr_objs++].map = map;
		agent.changed = 1;
	}
	if (agent.nr_objs == 1 && !agent.arms) {
		agent.main = map;
		agent_arm_startup(map);
	}
	pthread_mutex_unlock(&agent.lock);
	return 0;
}

AGENT_API unsigned int la_objclose(uintptr_t *cookie)
{
	unsigned int i;

	if (agent.left)
		return 0;
	pthread_mutex_lock(&agent.lock);
	/*
	 * Only the exit closes the program itself: where agent_exiting() did
	 * not run before (an exit from a library's constructor, before
	 * la_preinit()), what the exit closes after it is worth no new arm.
	 */
	if ((struct link_map *)*cookie == agent.main)
		agent.ending = 1;
	for (i = 0; i < agent.nr_objs; i++) {
		if ((uintptr_t)agent.objs[i].map != *cookie)
			continue;
		free(agent.objs[i].path);
		memmove(&agent.objs[i], &agent.objs[i + 1],
			(agent.nr_objs - i - 1) * sizeof(agent.objs[0]));
		agent.nr_objs--;
		agent.changed = agent.closed = 1;
		break;
	}
	pthread_mutex_unlock(&agent.lock);
	return 0;
}

/*
 * The reserve ran short: twice as much room in the next image, but never
 * more bins than the @kept segments have (nor AGENT_SPARE_MAX), so that an
 * image is at most about twice what its objects need.
 */
static void agent_more_room(unsigned int kept)
{
	size_t cap = agent_bins_bytes(&agent.layout, 0, kept);

	if (cap < AGENT_SPARE)
		cap = AGENT_SPARE;
	if (cap > AGENT_SPARE_MAX)
		cap = AGENT_SPARE_MAX;
	agent.spare = agent.spare * 2 < cap ? agent.spare * 2 : cap;
	agent.spare_slots *= 2;
}

/*
 * Arm over every object the linker reports now, in a new image that keeps
 * the bins of the first @kept segments as they were and has room for
 * more.  A failure leaves the image that runs, which the next change
 * replaces (agent.closed).
 */
static void agent_arm_all(unsigned int kept)
{
	int ret;

	agent.nr_segs = 0;
	agent_read_segs(0);
	if (!agent.arms)
		agent.cpu_start_ns = agent_cpu_ns();
	ret = agent_arm(agent.spare, agent.spare_slots, kept);
	agent.closed = !!ret;
	if (!ret)
		agent.whole = 1;
	else if (!agent.whole)
		agent_why(ret);
}

/*
 * The objects are consistent again (the linker's own lock held): the first
 * time, arm over all of them (agent_arm_startup() covered the linker's
 * work before); after that, when objects were only added, give them room
 * in the running image (agent_extend()), and arm over a new one with twice
 * the room when it is short or one was closed.  A dlclose() by the
 * program's exit (_dl_fini) changes nothing worth a new file.
 */
AGENT_API void la_activity(uintptr_t *cookie, unsigned int flag)
{
	unsigned int kept;
	int ret = -ENOSPC;

	(void)cookie;
	if (flag != LA_ACT_CONSISTENT || agent.left)
		return;
	pthread_mutex_lock(&agent.lock);
	if (agent.changed && (!agent.arms || agent.image) && !agent.ending) {
		kept = agent.whole && !agent.closed ? agent.nr_segs : 0;
		if (kept)
			ret = agent_extend();
		if (ret == -ENOSPC && kept)
			agent_more_room(kept);
		if (ret)
			agent_arm_all(kept);
		agent.changed = 0;
		agent.nr_objs_armed = agent.nr_objs;
	}
	pthread_mutex_unlock(&agent.lock);
}

/*
 * A session the program armed before main(), in its preinit or its
 * constructors (a -pg program's gcrt1 starts libprofil's gmon runtime
 * from .preinit_array), replaced the agent's: profil(1) was asked for
 * this process's profile, so the agent arms again.  One the program arms
 * later replaces the agent's for good (profil(1), CAVEATS).
 */
static void agent_take_back(void)
{
	struct profil_stats st = { .size = sizeof(st) };
	int fd;

	pthread_mutex_lock(&agent.lock);
	fd = agent.image ? open("/dev/profil", O_RDWR | O_CLOEXEC) : -1;
	if (fd >= 0 && !ioctl(fd, PROFIL_IOC_STATS, &st) &&
	    st.armed != agent.armed_seen)
		agent_arm(agent.spare, agent.spare_slots, agent.nr_segs);
	if (fd >= 0)
		close(fd);
	pthread_mutex_unlock(&agent.lock);
}

/*
 * The program's exit() has begun: its last exit handler, so that the
 * linker's _dl_fini(), registered before it, runs after.  What that
 * closes, in every namespace (dlmopen()'s first, the program's last), is
 * worth no new arm: one over what it leaves (the vDSO) would be a file
 * of its own, whose exit PCs no other arm could name.
 */
static void agent_exiting(void *arg)
{
	(void)arg;
	if (agent.left)
		return;
	pthread_mutex_lock(&agent.lock);
	agent.ending = 1;
	pthread_mutex_unlock(&agent.lock);
}

/*
 * Before main(): the program's libc is relocated now, so the fork and exit
 * handlers go into its lists (this namespace's libc is not the one that
 * forks and exits), and its environ is the one a child of the program
 * would pass on.
 */
AGENT_API void la_preinit(uintptr_t *cookie)
{
	int (*reg)(void (*)(void), void (*)(void), void (*)(void), void *);
	int (*at_exit)(void (*)(void *), void *, void *);
	void *libc = dlmopen(LM_ID_BASE, "libc.so.6", RTLD_LAZY | RTLD_NOLOAD);

	(void)cookie;
	reg = libc ? (int (*)(void (*)(void), void (*)(void), void (*)(void),
			      void *))dlsym(libc, "__register_atfork") : NULL;
	if (reg && agent.inherit)
		reg(agent_prepare, agent_parent, agent_child, NULL);
	else if (reg)
		reg(NULL, NULL, agent_child_left, NULL);
	at_exit = libc ? (int (*)(void (*)(void *), void *, void *))
			 dlsym(libc, "__cxa_atexit") : NULL;
	if (at_exit)
		at_exit(agent_exiting, NULL, NULL);
	agent.environ = libc ? dlsym(libc, "environ") : NULL;
	if (libc)
		dlclose(libc);
	agent_take_back();
}

/* The session's counters into the header, which the kernel writes later. */
__attribute__((destructor)) static void agent_end(void)
{
	struct profil_stats st = { .size = sizeof(st) };
	struct profile_file_hdr *h;
	int fd;

	if (agent.left)
		return;
	pthread_mutex_lock(&agent.lock);
	agent.ending = 1;
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
