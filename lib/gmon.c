// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The gmon runtime: gcc -pg programs profiled by profil.ko, for gprof.
 *
 * __monstartup() (called by gcrt1.o before main) lays the whole profile
 * out in one anonymous mapping, in the format gprof reads, at all times:
 *
 *	4.4BSD gmon header (40 bytes), with the true sampling rate
 *	histogram: 16-bit bins, one per 4 bytes of text (scale 0x8000)
 *	arc records: {from, self, count}, 64-bit each, appended by mcount
 *	struct profil_output_ctl: records in use, enable (not written)
 *	hash of the arcs: record numbers (not written, and not pinned)
 *
 * and arms one kernel session with the histogram as its region and the
 * mapping as the image of its profile file (struct profil_output), with
 * the directory it started in.  The kernel counts into the histogram and,
 * when the session ends however it ends (exit, _exit, a fatal signal,
 * SIGKILL, exec, _mcleanup()), writes the file from the pinned mapping.
 * No SIGPROF handler and no interval timer are involved.
 *
 * mcount is lock-free and exact: a record is claimed with one atomic add
 * on the count of records and published into the hash with a
 * compare-and-swap; a known arc is counted with one atomic add.  When two
 * threads race to insert the same arc, the loser's record stays in the
 * table, unhashed, with its count of 1: gprof adds up arcs that appear
 * twice.  Nothing blocks, so mcount is also safe in signal handlers.
 *
 * Arcs are counted per CPU, so that threads on different CPUs calling the
 * same function do not bounce one count between them: a thread adds to
 * its arc's record for the CPU it runs on (the cpu_id of the rseq area
 * that glibc 2.35 and later registers; without one, every thread counts
 * as CPU 0), and gprof sums the records of one arc.  Each CPU takes its
 * records from a chunk of its own (GMON_CHUNK records, whole cache lines:
 * the records start one), so two CPUs' counts never share a line; a
 * chunk's unused records are written as zeros, which gprof leaves out.  A
 * thread that migrates between reading its CPU and adding counts in
 * another CPU's record: once all the same.
 *
 * Addresses in the file are link-time addresses (the run-time address less
 * the load bias of the object that holds the profiled range), so that PIE
 * programs read back right.  Arcs from or to outside that range (main
 * called from libc, -pg code in shared libraries) are not recorded, as in
 * glibc.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/rseq.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/kcmp.h>
#include <unistd.h>

#include "gmon-bsd.h"
#include "profil-private.h"
#include "mon.h"

#define GMON_TEXT_PER_BIN	4	/* bytes of text per 16-bit bin */
#define GMON_COARSEST		0x10000	/* ... at most, RLIMIT_MEMLOCK */
					/* permitting (profil() scale 2) */
#define GMON_ARCS_MIN		50	/* arcs: 2% of the text, as glibc */
#define GMON_ARCS_MAX		(1U << 20)

struct gmon_arc {
	uint64_t from;		/* link-time PC of the call site */
	uint64_t self;		/* link-time PC in the called function */
	uint64_t count;
};

enum { GMON_OFF, GMON_STARTING, GMON_ON, GMON_DONE };

/* Everything mcount reads is set before @ctl is published (release). */
static struct {
	int state;			/* GMON_*, atomic */
	struct profil_output_ctl *ctl;	/* published last */
	struct gmon_hdr *hdr;
	struct gmon_arc *arcs;
	uint32_t *hash;			/* record number + 1, or 0 */
	uint64_t nr_max;
	uint32_t hash_mask;
	uintptr_t lowpc, textsize, bias;
	size_t head_size;
	size_t image_size;		/* what is pinned: head to ctl */
	size_t pad;			/* the image's offset in its mapping */
	size_t pin_tried;		/* the last image refused */
	unsigned int text_per_bin;	/* GMON_TEXT_PER_BIN, or coarser */
	int kernel;			/* a session writes the file */
	int kernel_errno;		/* or why not */
	int dirfd;			/* O_PATH, for our own writing */
	pid_t pid;			/* of the process that started */
	char name[NAME_MAX + 1];	/* templates, "%p" = pid */
	char child_name[NAME_MAX + 1];
	size_t want_arcs;		/* monitor()'s nfunc, or 0 */
	int said_unwritable;		/* said so at the start */
	unsigned int refit_from;	/* its bin size before, said at */
	size_t refit_size;		/* exit; the image's size before */
} gmon = { .dirfd = -1 };

static void gmon_say(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* One line on stderr, "libprofil: gmon: ...". */
static void gmon_say(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	n = snprintf(line, sizeof(line), "libprofil: gmon: ");
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	(void)!write(STDERR_FILENO, line, n);
}

/*
 * A hash slot: the record number + 1 in its low GMON_SLOT_BITS, the CPU
 * (modulo 2048) above; 0 is free.  The hash is of the arc alone, so the
 * records of one arc for several CPUs follow each other in its chain.
 */
#define GMON_SLOT_BITS		21	/* GMON_ARCS_MAX + 1 fits */
#define GMON_SLOT_REC(s)	((s) & ((1U << GMON_SLOT_BITS) - 1))
#define GMON_SLOT_CPU(s)	((s) >> GMON_SLOT_BITS)

/*
 * Per CPU, each in a cache line of its own: the CPU's chunk of records
 * (the next free one, and its end), and the calls it could not count.
 */
#define GMON_STRIPES	64
#define GMON_CHUNK	8	/* records: 3 cache lines */

static struct {
	uint64_t chunk;		/* next | end << 32, record numbers */
	uint64_t dropped;
} __attribute__((aligned(64))) gmon_cpus[GMON_STRIPES];

static uint32_t gmon_hash(uint64_t from, uint64_t self)
{
	uint64_t h = (from * 0x9e3779b97f4a7c15ULL) ^ (self + (self >> 29));

	return (uint32_t)(h ^ (h >> 32));
}

/* The CPU this thread runs on, as a slot holds it; 0 without rseq. */
static uint32_t gmon_cpu(void)
{
	const struct rseq *rs;
	int32_t cpu;

	if (!__rseq_size)
		return 0;
	rs = (const void *)((char *)__builtin_thread_pointer() +
			    __rseq_offset);
	cpu = (int32_t)__atomic_load_n(&rs->cpu_id, __ATOMIC_RELAXED);
	return cpu < 0 ? 0 : (uint32_t)cpu & (UINT32_MAX >> GMON_SLOT_BITS);
}

/* A record from the chunk @c, or UINT64_MAX if it has none left. */
static uint64_t gmon_take(uint64_t *c)
{
	uint64_t cur = __atomic_load_n(c, __ATOMIC_RELAXED);

	while ((uint32_t)cur < cur >> 32)
		if (__atomic_compare_exchange_n(c, &cur, cur + 1, 0,
						__ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			return (uint32_t)cur;
	return UINT64_MAX;
}

/*
 * A free record for @cpu: from its chunk, or the first of a new chunk that
 * it claims from the table (the one add on a shared line, once every
 * GMON_CHUNK new arcs), or, the table full, from any CPU's chunk.  A chunk
 * claimed by two threads at once keeps the loser's other records empty:
 * zero records, from and to address 0, which gprof leaves out.
 * Return: the record number, or UINT64_MAX.
 */
static uint64_t gmon_claim(struct profil_output_ctl *ctl, uint32_t cpu)
{
	uint64_t *c = &gmon_cpus[cpu % GMON_STRIPES].chunk;
	uint64_t n, cur, end;
	unsigned int i;

	n = gmon_take(c);
	if (n != UINT64_MAX)
		return n;
	if (__atomic_load_n(&ctl->nr_recs, __ATOMIC_RELAXED) < gmon.nr_max) {
		n = __atomic_fetch_add(&ctl->nr_recs, GMON_CHUNK,
				       __ATOMIC_RELAXED);
		if (n < gmon.nr_max) {
			end = n + GMON_CHUNK < gmon.nr_max ?
			      n + GMON_CHUNK : gmon.nr_max;
			cur = __atomic_load_n(c, __ATOMIC_RELAXED);
			__atomic_compare_exchange_n(c, &cur, end << 32 | (n + 1),
						    0, __ATOMIC_RELAXED,
						    __ATOMIC_RELAXED);
			return n;
		}
	}
	for (i = 0; i < GMON_STRIPES; i++) {
		n = gmon_take(&gmon_cpus[i].chunk);
		if (n != UINT64_MAX)
			return n;
	}
	return UINT64_MAX;
}

/* Record a new arc for @cpu in record @n and hash it, from slot @h on. */
static void gmon_insert(uint64_t n, uint32_t h, uint64_t from, uint64_t self,
			uint32_t cpu)
{
	uint32_t seen, slot = cpu << GMON_SLOT_BITS | (uint32_t)(n + 1);
	struct gmon_arc *a = &gmon.arcs[n];
	const struct gmon_arc *o;

	a->from = from;
	a->self = self;
	a->count = 1;
	for (;; h = (h + 1) & gmon.hash_mask) {
		seen = 0;
		if (__atomic_compare_exchange_n(&gmon.hash[h], &seen, slot, 0,
						__ATOMIC_RELEASE,
						__ATOMIC_ACQUIRE))
			return;
		o = &gmon.arcs[GMON_SLOT_REC(seen) - 1];
		/* Lost a race for this very record: ours counts alone. */
		if (GMON_SLOT_CPU(seen) == cpu && o->from == from &&
		    o->self == self)
			return;
	}
}

/*
 * No room for @cpu's record of the arc: count the call in another CPU's
 * record of it, or as dropped, in 64 bits, in the CPU's own line: a full
 * table's every new-arc call would otherwise bounce one line between all
 * CPUs.  _mcleanup() sums the drops into the header; until then the
 * header says 1, so that a file the kernel writes at a kill still says the
 * table was full.
 */
static void gmon_full(uint32_t h, uint64_t from, uint64_t self, uint32_t cpu)
{
	struct gmon_arc *a;
	uint32_t slot;

	for (;; h = (h + 1) & gmon.hash_mask) {
		slot = __atomic_load_n(&gmon.hash[h], __ATOMIC_ACQUIRE);
		if (!slot)
			break;
		a = &gmon.arcs[GMON_SLOT_REC(slot) - 1];
		if (a->from == from && a->self == self) {
			__atomic_fetch_add(&a->count, 1, __ATOMIC_RELAXED);
			return;
		}
	}
	if (!__atomic_load_n(&gmon.hdr->dropped, __ATOMIC_RELAXED))
		__atomic_store_n(&gmon.hdr->dropped, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&gmon_cpus[cpu % GMON_STRIPES].dropped, 1,
			   __ATOMIC_RELAXED);
}

/* The calls not counted so far; the header says as many as it can. */
static uint64_t gmon_dropped(void)
{
	uint64_t sum = 0;
	int i;

	for (i = 0; i < GMON_STRIPES; i++)
		sum += __atomic_load_n(&gmon_cpus[i].dropped,
				       __ATOMIC_RELAXED);
	if (sum)
		__atomic_store_n(&gmon.hdr->dropped,
				 sum > UINT32_MAX ? UINT32_MAX : (uint32_t)sum,
				 __ATOMIC_RELAXED);
	return sum;
}

/* Called by mcount and __fentry__ (mcount.S), for every profiled call. */
__attribute__((visibility("hidden")))
void __profil_mcount(uintptr_t frompc, uintptr_t selfpc);

void __profil_mcount(uintptr_t frompc, uintptr_t selfpc)
{
	struct profil_output_ctl *ctl = __atomic_load_n(&gmon.ctl,
							__ATOMIC_ACQUIRE);
	uint32_t h, h0, slot, cpu;
	uint64_t from, self, n;
	struct gmon_arc *a;

	if (!ctl || !__atomic_load_n(&ctl->enable, __ATOMIC_RELAXED))
		return;
	if (frompc - gmon.lowpc >= gmon.textsize ||
	    selfpc - gmon.lowpc >= gmon.textsize)
		return;
	from = frompc - gmon.bias;
	self = selfpc - gmon.bias;
	cpu = gmon_cpu();
	h0 = gmon_hash(from, self) & gmon.hash_mask;
	for (h = h0;; h = (h + 1) & gmon.hash_mask) {
		slot = __atomic_load_n(&gmon.hash[h], __ATOMIC_ACQUIRE);
		if (!slot)
			break;
		if (GMON_SLOT_CPU(slot) != cpu)
			continue;
		a = &gmon.arcs[GMON_SLOT_REC(slot) - 1];
		if (a->from == from && a->self == self) {
			__atomic_fetch_add(&a->count, 1, __ATOMIC_RELAXED);
			return;
		}
	}
	n = gmon_claim(ctl, cpu);
	if (n == UINT64_MAX)
		gmon_full(h0, from, self, cpu);
	else
		gmon_insert(n, h, from, self, cpu);
}

struct gmon_find {
	uintptr_t pc;
	uintptr_t bias;
	int found;
};

static int gmon_find_object(struct dl_phdr_info *info, size_t size,
			    void *data)
{
	struct gmon_find *f = data;
	uintptr_t start;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type != PT_LOAD)
			continue;
		start = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
		if (f->pc - start < info->dlpi_phdr[i].p_memsz) {
			f->bias = info->dlpi_addr;
			f->found = 1;
			return 1;
		}
	}
	return 0;
}

/* The load bias of the object that holds @pc (0 if none does). */
static uintptr_t gmon_bias(uintptr_t pc)
{
	struct gmon_find f = { .pc = pc };

	dl_iterate_phdr(gmon_find_object, &f);
	return f.found ? f.bias : 0;
}

/* Copy @s into @dst as a template: '%' doubled. */
static int gmon_template(char *dst, size_t size, const char *s,
			 const char *suffix)
{
	size_t n = 0;

	for (; *s; s++) {
		if (n + 2 >= size)
			return -1;
		if (*s == '%')
			dst[n++] = '%';
		dst[n++] = *s;
	}
	if (n + strlen(suffix) >= size)
		return -1;
	strcpy(dst + n, suffix);
	return 0;
}

/* Open @dir (O_PATH) as the output directory. */
static int gmon_open_dir(const char *dir)
{
	gmon.dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (gmon.dirfd < 0) {
		gmon_say("cannot use directory %s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Where the file goes: gmon.out in the current directory (children:
 * gmon.out.PID); GMON_OUT_PREFIX=p gives p.PID (glibc); PROFDIR=d gives
 * d/PID.progname (OpenBSD).  The variables are ignored in set-id programs.
 */
static int gmon_naming(void)
{
	const char *prefix = NULL, *profdir = NULL, *base;
	char dir[PATH_MAX];
	int ret;

	if (!getauxval(AT_SECURE)) {
		prefix = getenv("GMON_OUT_PREFIX");
		profdir = getenv("PROFDIR");
	}
	if (prefix && *prefix) {
		base = strrchr(prefix, '/');
		if (base) {
			snprintf(dir, sizeof(dir), "%.*s",
				 (int)(base - prefix) ?: 1, prefix);
			base++;
		} else {
			strcpy(dir, ".");
			base = prefix;
		}
		ret = gmon_template(gmon.name, sizeof(gmon.name), base, ".%p");
		strcpy(gmon.child_name, gmon.name);
	} else if (profdir && *profdir) {
		snprintf(dir, sizeof(dir), "%s", profdir);
		strcpy(gmon.name, "%p.");
		ret = gmon_template(gmon.name + 3, sizeof(gmon.name) - 3,
				    program_invocation_short_name, "");
		strcpy(gmon.child_name, gmon.name);
	} else {
		strcpy(dir, ".");
		strcpy(gmon.name, "gmon.out");
		strcpy(gmon.child_name, "gmon.out.%p");
		ret = 0;
	}
	if (ret) {
		gmon_say("file name too long");
		return -1;
	}
	return gmon_open_dir(dir);
}

/* The rate asked for in PROFIL_RATE (Hz), or 0 for the kernel's HZ. */
static unsigned int gmon_rate(void)
{
	const char *s = getenv("PROFIL_RATE");
	unsigned long v;
	char *end;

	if (!s || !*s)
		return 0;
	v = strtoul(s, &end, 10);
	if (*end || v > UINT_MAX) {
		gmon_say("PROFIL_RATE=%s is not a rate in Hz: using HZ", s);
		return 0;
	}
	return v;
}

/*
 * SETUP, and again without PROFIL_OUTPUT_CHILD_EXIT_ONLY if the module
 * refuses it (one loaded before the flag: a child that execs then leaves
 * its file, as profil(1) --children wants).
 */
static int gmon_setup(struct profil_setup *s, struct profil_output *o)
{
	int ret = __profil_dev_ioctl(PROFIL_IOC_SETUP, s);

	if (ret && errno == EINVAL && o->flags) {
		o->flags = 0;
		ret = __profil_dev_ioctl(PROFIL_IOC_SETUP, s);
		if (ret)
			o->flags = PROFIL_OUTPUT_CHILD_EXIT_ONLY;
	}
	return ret;
}

/*
 * Arm the session: the histogram, and the image as the file's.  A forked
 * child's file is written when it ends, not when it execs: what it holds
 * then is the parent's profile up to the fork, which glibc's gmon does not
 * write either, and 10,000 spawned helpers would leave 10,000 files.
 * The image is the one gmon_place() put at gmon.hdr, @ctl its control.
 */
static int gmon_arm(const struct profil_output_ctl *ctl, unsigned int rate,
		    const char *name, uint32_t flags)
{
	char *image = (char *)gmon.hdr;

	struct profil_region r = {
		.buf = (uintptr_t)image + sizeof(struct gmon_hdr),
		.bufsize = gmon.head_size - sizeof(struct gmon_hdr),
		.offset = gmon.lowpc,
		.scale = 0x20000 / gmon.text_per_bin,
	};
	struct profil_output o = {
		.size = sizeof(o),
		.flags = PROFIL_OUTPUT_CHILD_EXIT_ONLY | flags,
		.dirfd = gmon.dirfd,
		.rec_size = sizeof(struct gmon_arc),
		.image = (uintptr_t)image,
		.image_size = gmon.image_size,
		.head_size = gmon.head_size,
		.nr_recs_max = gmon.nr_max,
		.ctl_offset = (const char *)ctl - image,
		.name = (uintptr_t)name,
		.child_name = (uintptr_t)gmon.child_name,
	};
	struct profil_setup s = {
		.size = sizeof(s),
		.mode = PROFIL_MODE_HIST,
		.rate = rate,
		.nr_regions = 1,
		.region_size = sizeof(r),
		.regions = (uintptr_t)&r,
		.output = (uintptr_t)&o,
	};
	int ret;

	/* A forked child's re-arm is the one asked for, or none. */
	if (flags & PROFIL_OUTPUT_FORKED) {
		ret = __profil_dev_ioctl(PROFIL_IOC_SETUP, &s);
	} else {
		ret = gmon_setup(&s, &o);
		if (ret && errno == EINVAL && rate) {
			gmon_say("PROFIL_RATE=%u refused (above the module's max_rate?): using HZ",
				 rate);
			s.rate = 0;
			ret = gmon_setup(&s, &o);
		}
	}
	if (ret)
		return -1;
	gmon.hdr->profrate = s.rate;
	return 0;
}

/* Expand a "%p" template for @pid into @dst. */
static void gmon_expand(char *dst, size_t size, const char *tmpl, pid_t pid)
{
	size_t n = 0;

	for (; *tmpl && n + 1 < size; tmpl++) {
		if (*tmpl != '%') {
			dst[n++] = *tmpl;
			continue;
		}
		tmpl++;
		if (*tmpl == 'p')
			n += snprintf(dst + n, size - n, "%d", (int)pid);
		else
			dst[n++] = *tmpl;
		if (n >= size)
			n = size - 1;
	}
	dst[n] = '\0';
}

/* Can the file be written where it goes?  Said once, at the start. */
static void gmon_check_dir(void)
{
	char name[NAME_MAX + 32];

	gmon_expand(name, sizeof(name), gmon.name, gmon.pid);
	if (!faccessat(gmon.dirfd, name, W_OK, AT_EACCESS) ||
	    (errno == ENOENT &&
	     !faccessat(gmon.dirfd, ".", W_OK | X_OK, AT_EACCESS)))
		return;
	gmon_say("%s cannot be written: %s", name, strerror(errno));
	gmon.said_unwritable = 1;
}

static uint64_t gmon_nr_arcs(uintptr_t textsize)
{
	const char *s = getenv("PROFIL_GMON_ARCS");
	uint64_t n = textsize / 100 * 2;

	if (n < GMON_ARCS_MIN)
		n = GMON_ARCS_MIN;
	if (gmon.want_arcs)
		n = gmon.want_arcs;
	if (s && *s)
		n = strtoull(s, NULL, 10);
	if (n < 1)
		n = 1;
	return n > GMON_ARCS_MAX ? GMON_ARCS_MAX : n;
}

/*
 * Lay the image out with a bin per @per_bin bytes of text, the bins a
 * multiple of 4 so that the records after them are 8-aligned; the image
 * ends with the control structure, and starts @gmon.pad bytes into the
 * mapping.  Return: the control's offset.
 */
static size_t gmon_layout(unsigned int per_bin)
{
	size_t nbins = (gmon.textsize + 4 * per_bin - 1) / (4 * per_bin) * 4;
	size_t ctl_off;

	gmon.text_per_bin = per_bin;
	gmon.head_size = sizeof(struct gmon_hdr) + nbins * 2;
	/* The records start a cache line: so does each CPU's chunk. */
	gmon.pad = (64 - gmon.head_size % 64) % 64;
	ctl_off = gmon.head_size + gmon.nr_max * sizeof(struct gmon_arc);
	gmon.image_size = ctl_off + sizeof(struct profil_output_ctl);
	return ctl_off;
}

/*
 * Lay the image out with a bin per @per_bin bytes of text (gmon_layout())
 * at @base + its pad, with the header's version and its rate until the
 * kernel says, counting.  Return: its control structure.
 */
static struct profil_output_ctl *gmon_place(char *base, unsigned int per_bin)
{
	size_t ctl_off = gmon_layout(per_bin);
	struct profil_output_ctl *ctl;

	gmon.hdr = (struct gmon_hdr *)(base + gmon.pad);
	gmon.hdr->version = GMON_VERSION;
	gmon.hdr->profrate = sysconf(_SC_CLK_TCK);
	ctl = (struct profil_output_ctl *)((char *)gmon.hdr + ctl_off);
	ctl->enable = 1;
	return ctl;
}

/* The header's histogram range, from @lowpc to its last bin's end. */
static void gmon_range(uintptr_t lowpc)
{
	gmon.hdr->lowpc = lowpc;
	gmon.hdr->highpc = lowpc + (gmon.head_size -
		sizeof(struct gmon_hdr)) / 2 * gmon.text_per_bin;
	gmon.hdr->ncnt = gmon.head_size;
}

/* RLIMIT_MEMLOCK in KiB, for a message; -1 if unlimited. */
static long long gmon_memlock_kib(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return -1;
	return rl.rlim_cur >> 10;
}

/*
 * Arm with the finest histogram that the kernel can pin: one the user's
 * RLIMIT_MEMLOCK refuses (ENOMEM) is halved until it fits, and that is
 * said.  Calls are counted whatever happens (the records are the same in
 * every layout).  Return: the control structure in use.
 */
static struct profil_output_ctl *gmon_arm_fitting(char *base,
						  unsigned int rate)
{
	struct profil_output_ctl *ctl;
	unsigned int per_bin;
	size_t finest = 0;

	for (per_bin = GMON_TEXT_PER_BIN;; per_bin *= 2) {
		ctl = gmon_place(base, per_bin);
		if (!finest)
			finest = gmon.image_size;
		if (!gmon_arm(ctl, rate, gmon.name, 0)) {
			gmon.kernel = 1;
			break;
		}
		gmon.kernel_errno = errno;
		gmon.pin_tried = gmon.image_size;
		/* Where the next layout may put bins or records. */
		ctl->enable = 0;
		memset(gmon.hdr, 0, sizeof(*gmon.hdr));
		if (gmon.kernel_errno != ENOMEM || per_bin >= GMON_COARSEST ||
		    gmon.head_size == sizeof(struct gmon_hdr) + 8)
			/* Calls only, in the finest layout: we write it. */
			return gmon_place(base, GMON_TEXT_PER_BIN);
	}
	if (per_bin != GMON_TEXT_PER_BIN)
		gmon_say("RLIMIT_MEMLOCK (%lld KiB) cannot pin the profile (%zu KiB): a bin per %u bytes of text, not %u (%zu KiB)",
			 gmon_memlock_kib(), finest >> 10, per_bin,
			 GMON_TEXT_PER_BIN, gmon.image_size >> 10);
	return ctl;
}

/*
 * Add the @nold bins at @old, of @old_per bytes of text each, into the
 * zeroed bins after gmon.hdr, of gmon.text_per_bin bytes, saturating.
 */
static void gmon_fold(const uint16_t *old, size_t nold, unsigned int old_per)
{
	uint16_t *bins = (uint16_t *)(gmon.hdr + 1);
	unsigned int k = gmon.text_per_bin / old_per;
	uint32_t v;
	size_t i;

	for (i = 0; i < nold; i++) {
		v = bins[i / k] + old[i];
		bins[i / k] = v > UINT16_MAX ? UINT16_MAX : v;
	}
}

/*
 * Lay the profile at @old (its control @old_ctl, in the layout of
 * @old_per) out at @base, a bin per @per_bin bytes of text: the bins
 * folded, the records copied, the header's range and counts kept.
 * Return: the new control structure.
 */
static struct profil_output_ctl *
gmon_relayout(char *base, unsigned int per_bin, const struct gmon_hdr *old,
	      const struct profil_output_ctl *old_ctl, size_t old_head,
	      unsigned int old_per)
{
	uint64_t nr = __atomic_load_n(&old_ctl->nr_recs, __ATOMIC_RELAXED);
	struct profil_output_ctl *ctl = gmon_place(base, per_bin);

	if (nr > gmon.nr_max)
		nr = gmon.nr_max;
	gmon_fold((const uint16_t *)(old + 1),
		  (old_head - sizeof(*old)) / 2, old_per);
	memcpy((char *)gmon.hdr + gmon.head_size, (const char *)old + old_head,
	       nr * sizeof(struct gmon_arc));
	ctl->nr_recs = nr;
	ctl->enable = old_ctl->enable;
	gmon_range(old->lowpc);
	gmon.hdr->dropped = old->dropped;
	return ctl;
}

/*
 * A forked child whose copy of the profile the kernel could not take
 * over, RLIMIT_MEMLOCK having no room for a second one: the same profile
 * in a mapping of the child's own at the next coarser histogram that the
 * limit pins, armed as the child's (PROFIL_OUTPUT_FORKED: its exec still
 * writes no file), so that its file has its own samples too (said at its
 * exit, gmon_say_refit()).  The
 * parent's up to the fork are folded in, the records copied; the old
 * copy stays, for the arcs' hash in its mapping.  Signals are blocked
 * meanwhile: mcount in a handler would count into the old records.
 * When no layout fits, nothing changes, and _mcleanup() says so.
 */
static void gmon_child_refit(void)
{
	struct profil_stats st = { .size = sizeof(st) };
	struct profil_output_ctl *old_ctl = gmon.ctl, *ctl = NULL;
	struct gmon_hdr *old = gmon.hdr;
	size_t old_head = gmon.head_size, old_image = gmon.image_size;
	size_t old_pad = gmon.pad, len = 64 + old_image;
	unsigned int per_bin, old_per = gmon.text_per_bin;
	sigset_t all, was;
	char *base;

	if (__profil_dev_ioctl(PROFIL_IOC_STATS, &st) ||
	    st.stop_reason != PROFIL_STOP_INHERIT ||
	    st.inherit_error != -ENOMEM)
		return;
	base = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &was);
	for (per_bin = old_per * 2; per_bin <= GMON_COARSEST; per_bin *= 2) {
		memset(base, 0, len);
		ctl = gmon_relayout(base, per_bin, old, old_ctl, old_head,
				    old_per);
		if (!gmon_arm(ctl, old->profrate, gmon.child_name,
			      PROFIL_OUTPUT_FORKED))
			break;
		ctl = NULL;
		if (errno != ENOMEM ||
		    gmon.head_size == sizeof(struct gmon_hdr) + 8)
			break;
	}
	if (ctl) {
		gmon.arcs = (struct gmon_arc *)((char *)gmon.hdr +
						gmon.head_size);
		__atomic_store_n(&gmon.ctl, ctl, __ATOMIC_RELEASE);
		gmon.refit_from = old_per;
		gmon.refit_size = old_image;
	} else {
		gmon.hdr = old;
		gmon.head_size = old_head;
		gmon.image_size = old_image;
		gmon.pad = old_pad;
		gmon.text_per_bin = old_per;
		munmap(base, len);
	}
	pthread_sigmask(SIG_SETMASK, &was, NULL);
}

/*
 * Said at a refitted child's exit, not at its fork: a program that spawns
 * helpers (fork + exec) would print a line for each.
 */
static void gmon_say_refit(void)
{
	gmon_say("forked child %d: RLIMIT_MEMLOCK (%lld KiB) has no room for a second copy of the profile (%zu KiB): a bin per %u bytes of text, not %u (%zu KiB)",
		 (int)getpid(), gmon_memlock_kib(), gmon.refit_size >> 10,
		 gmon.text_per_bin, gmon.refit_from, gmon.image_size >> 10);
}

/*
 * pthread_atfork()'s child handler, registered only where a child's copy
 * of the profile cannot be pinned besides its parent's
 * (gmon_no_room_for_a_child()), so that other forks, fork + exec above
 * all, stay as cheap as without it.
 */
static void gmon_forked(void)
{
	gmon.refit_from = 0;	/* a refitted parent's is not ours */
	if (__atomic_load_n(&gmon.state, __ATOMIC_ACQUIRE) == GMON_ON)
		gmon_child_refit();
}

/*
 * Whether RLIMIT_MEMLOCK leaves no room for a forked child's copy of the
 * profile besides ours (the pages of two images, one of them straddling
 * a page more).
 */
static int gmon_no_room_for_a_child(void)
{
	long long kib = gmon_memlock_kib();
	size_t page = sysconf(_SC_PAGESIZE);
	size_t pages = (gmon.image_size + page - 1) / page + 1;

	return kib >= 0 && (unsigned long long)kib << 10 < 2 * pages * page;
}

/*
 * Start profiling [lowpc, highpc): called by gcrt1.o before main, or by
 * the program (monitor()).  A second call while profiling is a no-op.
 */
__attribute__((visibility("default")))
void __monstartup(unsigned long lowpc, unsigned long highpc)
{
	struct profil_output_ctl *ctl;
	size_t hash_slots, total;
	int state = GMON_OFF;
	char *base;

	if (!__atomic_compare_exchange_n(&gmon.state, &state, GMON_STARTING,
					 0, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return;
	lowpc &= ~(uintptr_t)15;
	highpc = (highpc + 15) & ~(uintptr_t)15;
	if (highpc <= lowpc)
		goto fail;
	gmon.lowpc = lowpc;
	gmon.textsize = highpc - lowpc;
	gmon.nr_max = gmon_nr_arcs(gmon.textsize);
	for (hash_slots = 1; hash_slots < 2 * gmon.nr_max; hash_slots <<= 1)
		;
	gmon.hash_mask = hash_slots - 1;
	/*
	 * The finest layout's image after its pad (a layout's pad is less
	 * than 64), then the hash, which is not pinned.
	 */
	gmon_layout(GMON_TEXT_PER_BIN);
	total = 64 + gmon.image_size + hash_slots * 4;

	base = mmap(NULL, total, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED) {
		gmon_say("no memory for the profile (%zu bytes)", total);
		goto fail;
	}
	gmon.hash = (uint32_t *)(base + 64 + gmon.image_size);
	gmon.bias = gmon_bias(lowpc);
	gmon.pid = getpid();
	if (gmon_naming())
		goto fail_unmap;
	gmon_check_dir();

	ctl = gmon_arm_fitting(base, gmon_rate());
	gmon_range(lowpc - gmon.bias);
	gmon.arcs = (struct gmon_arc *)((char *)gmon.hdr + gmon.head_size);
	if (gmon.kernel && gmon_no_room_for_a_child())
		pthread_atfork(NULL, NULL, gmon_forked);
	/* mcount starts here. */
	__atomic_store_n(&gmon.ctl, ctl, __ATOMIC_RELEASE);
	__atomic_store_n(&gmon.state, GMON_ON, __ATOMIC_RELEASE);
	return;

fail_unmap:
	munmap(base, total);
	gmon.hdr = NULL;
fail:
	__atomic_store_n(&gmon.state, GMON_DONE, __ATOMIC_RELEASE);
}

__attribute__((visibility("default")))
void monstartup(unsigned long lowpc, unsigned long highpc)
	__attribute__((alias("__monstartup")));

/* 0: stop counting calls and samples; anything else: count again. */
__attribute__((visibility("default")))
void moncontrol(int mode)
{
	struct profil_output_ctl *ctl = __atomic_load_n(&gmon.ctl,
							__ATOMIC_ACQUIRE);

	if (ctl && __atomic_load_n(&gmon.state, __ATOMIC_ACQUIRE) == GMON_ON)
		__atomic_store_n(&ctl->enable, mode != 0, __ATOMIC_RELAXED);
}

/* Write the profile ourselves: the module is missing or did not write. */
static void gmon_write(void)
{
	uint64_t nr = __atomic_load_n(&gmon.ctl->nr_recs, __ATOMIC_RELAXED);
	pid_t pid = getpid();
	char name[NAME_MAX + 32];
	size_t len, done = 0;
	ssize_t n;
	int fd;

	gmon_expand(name, sizeof(name),
		    pid == gmon.pid ? gmon.name : gmon.child_name, pid);
	if (nr > gmon.nr_max)
		nr = gmon.nr_max;
	len = gmon.head_size + nr * sizeof(struct gmon_arc);
	fd = openat(gmon.dirfd, name, O_WRONLY | O_CREAT | O_TRUNC |
		    O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666);
	if (fd < 0) {
		if (!gmon.said_unwritable)
			gmon_say("cannot write %s: %s", name, strerror(errno));
		return;
	}
	while (done < len) {
		n = write(fd, (char *)gmon.hdr + done, len - done);
		if (n <= 0) {
			gmon_say("cannot write %s: %s", name,
				 n ? strerror(errno) : "short write");
			break;
		}
		done += n;
	}
	close(fd);
}

/*
 * A forked child that the kernel could not take over (PROFIL_STOP_INHERIT,
 * the error @err): its file has its calls and its parent's samples up to
 * the fork, none of its own.
 */
static void gmon_say_uninherited(int err)
{
	char name[NAME_MAX + 32];
	char why[96];

	gmon_expand(name, sizeof(name), gmon.child_name, getpid());
	if (err == ENOMEM)
		snprintf(why, sizeof(why),
			 "RLIMIT_MEMLOCK, %lld KiB, cannot pin %zu KiB more",
			 gmon_memlock_kib(), gmon.image_size >> 10);
	else
		snprintf(why, sizeof(why), "%s",
			 err ? strerror(err) : "the module's reason unknown");
	gmon_say("no samples of this forked child (%s): %s has its calls and its parent's samples up to the fork",
		 why, name);
}

/* Did the kernel write the file just now?  Ends the session. */
static int gmon_kernel_wrote(void)
{
	struct profil_stats before = { .size = sizeof(before) };
	struct profil_stats after = { .size = sizeof(after) };

	if (__profil_dev_ioctl(PROFIL_IOC_STATS, &before) ||
	    __profil_dev_ioctl(PROFIL_IOC_OFF, NULL) ||
	    __profil_dev_ioctl(PROFIL_IOC_STATS, &after))
		return 0;
	/* Written, or still being written (a slow file system): not ours. */
	if (after.written > before.written || after.writing)
		return 1;
	/*
	 * Not written now.  The kernel failed (after.write_error): we try
	 * ourselves, and say why if that fails too.  Or a fault ended the
	 * session early: the kernel wrote the file then, with what it had.
	 * Or a forked child could not take over: we write its file.  A
	 * vfork child finds no session of its own: its parent's file is not
	 * ours to write.
	 */
	if (before.stop_reason == PROFIL_STOP_FAULT ||
	    (getpid() != gmon.pid &&
	     before.stop_reason != PROFIL_STOP_INHERIT))
		return 1;
	if (getpid() != gmon.pid)
		gmon_say_uninherited(-before.inherit_error);
	return 0;
}

/*
 * A vfork() child runs in its parent's memory until it execs or exits, and
 * some call exit() after a failed exec: that exit must leave the parent's
 * profile as it is (its state, its image's enable), and write nothing.
 * The parent shares our memory then; kcmp(2) says so (a kernel without
 * it: as before, the child is taken for a forked one).
 */
static int gmon_in_vfork_child(void)
{
	return syscall(SYS_kcmp, getpid(), getppid(), KCMP_VM, 0, 0) == 0;
}

/*
 * Stop and write the profile: called at exit (registered by gcrt1.o), or
 * by the program.  After it, profiling stays off.
 */
__attribute__((visibility("default")))
void _mcleanup(void)
{
	int state = GMON_ON;
	uint64_t dropped;

	if (gmon_in_vfork_child())
		return;
	if (!__atomic_compare_exchange_n(&gmon.state, &state, GMON_DONE, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&gmon.ctl->enable, 0, __ATOMIC_RELAXED);
	dropped = gmon_dropped();
	if (!gmon.kernel || !gmon_kernel_wrote()) {
		if (!gmon.kernel && gmon.kernel_errno == ENOMEM)
			gmon_say("no histogram (RLIMIT_MEMLOCK, %lld KiB, cannot pin even %zu KiB): %s has call counts only",
				 gmon_memlock_kib(), gmon.pin_tried >> 10,
				 gmon.name);
		else if (!gmon.kernel)
			gmon_say("no histogram (%s%s): %s has call counts only",
				 gmon.kernel_errno == ENOSYS ?
				 PROFIL_DEVICE " is missing, load profil.ko" :
				 "profil.ko refused the session: ",
				 gmon.kernel_errno == ENOSYS ? "" :
				 strerror(gmon.kernel_errno), gmon.name);
		gmon_write();
	}
	if (gmon.refit_from)
		gmon_say_refit();
	if (dropped)
		gmon_say("the arc table was full (%llu arcs): %llu calls not counted; raise PROFIL_GMON_ARCS",
			 (unsigned long long)gmon.nr_max,
			 (unsigned long long)dropped);
}

/*
 * monitor(3) of Solaris and AIX: monitor(lowpc, highpc, buffer, bufsize,
 * nfunc) starts profiling [lowpc, highpc), monitor(NULL, ...) stops it and
 * writes the file.  The profile lives in memory of our own, so that the
 * kernel can write it however the process ends: @buffer is not used, and
 * @nfunc, if not 0, is the number of arcs to make room for.
 */
__attribute__((visibility("default")))
void monitor(int (*lowpc)(void), int (*highpc)(void), unsigned short *buffer,
	     size_t bufsize, size_t nfunc)
{
	(void)buffer;
	(void)bufsize;
	if (!lowpc) {
		_mcleanup();
		return;
	}
	gmon.want_arcs = nfunc;
	__monstartup((uintptr_t)lowpc, (uintptr_t)highpc);
}

/* glibc's, for LD_PRELOAD (see libprofil.map); mcount.S has the rest. */
PROFIL_GLIBC_ALIAS_AT(__monstartup, "LIBPROFIL_1.2");
PROFIL_GLIBC_ALIAS_AT(monstartup, "LIBPROFIL_1.2");
PROFIL_GLIBC_ALIAS_AT(_mcleanup, "LIBPROFIL_1.2");
PROFIL_GLIBC_ALIAS_AT(moncontrol, "LIBPROFIL_1.2");
