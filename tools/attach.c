// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * profil -p PID: a running process's profile, from bins the kernel keeps
 * in its own memory (PROFIL_IOC_ATTACH, profil(4)) and maps read-only
 * here, made into the profile file an agent would have written, so that
 * the report is the one for a command.  Nothing is written into the
 * target, nothing is pinned in it, no signal is sent to it: the kernel
 * samples its threads at their CPU clock ticks.
 *
 * Permission is ptrace's: profil opens /proc/PID/mem, whose open runs the
 * kernel's ptrace access check, and hands the fd to the kernel, which
 * checks that it is the target's memory now (a PID reused meanwhile is
 * refused).  The objects are those /proc/PID/maps maps executable at the
 * attach, each an ELF file read here for its load bias and build-ID;
 * code mapped later counts in the nowhere bin, its PCs kept (a PC log).
 */
#define _GNU_SOURCE
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <linux/profil.h>

#include "profil.h"

#define ATTACH_MIN_SHIFT	2	/* a bin for each 4 bytes of text */
#define ATTACH_MAX_SHIFT	12	/* to 4 KiB, when memory is short */
#define ATTACH_PCLOG_SLOTS	1024	/* the nowhere bin: a count, 1023 PCs */
#define ATTACH_MAX_SEGS		(PROFIL_MAX_REGIONS - 1)
#define ATTACH_POLL_MS		100
#define ATTACH_NO_LIMIT		(256ULL << 20) /* bins at most, unlimited */

/* An executable mapping of the target's, as its profile file region. */
struct attach_seg {
	uint64_t start, end, bias;
	char *path;
	uint32_t kind;
	uint32_t build_id_size;
	uint8_t build_id[PROFILE_BUILD_ID_MAX];
};

struct attach_target {
	pid_t pid;
	char exe[PATH_MAX];
	struct attach_seg *segs;
	size_t nr_segs, cap;
};

/*
 * The ELF file of a mapping, as the target maps it: through its root
 * (/proc/PID/root), and only when it is still the file mapped there (its
 * device and inode as the maps say), never opened unless regular.
 */
static int attach_open_file(pid_t pid, const char *path, dev_t dev,
			    ino_t ino)
{
	char in_root[PATH_MAX + 32];
	struct stat st;
	int fd;

	snprintf(in_root, sizeof(in_root), "/proc/%d/root%s", (int)pid, path);
	if (stat(in_root, &st) || !S_ISREG(st.st_mode))
		return -1;
	fd = open(in_root, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_dev != dev ||
	    st.st_ino != ino) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * @s's bias and text from the executable PT_LOAD mapped at s->start from
 * file offset @off, and its build-ID; left as the mapping says (a bias of
 * start - off) when the file cannot be read.
 */
static void attach_elf(struct attach_seg *s, int fd, uint64_t off)
{
	uint64_t page = sysconf(_SC_PAGESIZE), end;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *id;
	GElf_Phdr ph;
	size_t i, n;
	ssize_t len;

	if (!e || elf_getphdrnum(e, &n))
		goto out;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X) || (ph.p_offset & ~(page - 1)) != off)
			continue;
		s->bias = s->start - (ph.p_vaddr & ~(page - 1));
		end = s->bias + ph.p_vaddr + ph.p_memsz;
		if (s->bias + ph.p_vaddr > s->start)
			s->start = s->bias + ph.p_vaddr;
		if (end < s->end)
			s->end = end;
		break;
	}
	len = dwelf_elf_gnu_build_id(e, &id);
	if (len > 0 && len <= PROFILE_BUILD_ID_MAX) {
		memcpy(s->build_id, id, len);
		s->build_id_size = len;
	}
out:
	elf_end(e);
}

/* One line of /proc/PID/maps into t->segs when it maps code. */
static int attach_map_line(struct attach_target *t, const char *line)
{
	unsigned long long start, end, off, ino;
	unsigned int maj, min;
	char perms[8], path[PATH_MAX];
	struct attach_seg *s;
	int fd;

	path[0] = '\0';
	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %4095[^\n]", &start,
		   &end, perms, &off, &maj, &min, &ino, path) < 7 ||
	    perms[2] != 'x' || start >= end ||
	    (path[0] != '/' && strcmp(path, "[vdso]")))
		return 0;	/* not code, or code of no object (a JIT's) */
	if (t->nr_segs == ATTACH_MAX_SEGS)
		return 0;	/* the rest count as nowhere */
	s = report_grow(t->segs, &t->cap, t->nr_segs, sizeof(*s), 64);
	if (!s)
		return -1;
	t->segs = s;
	s += t->nr_segs;
	memset(s, 0, sizeof(*s));
	s->start = start;
	s->end = end;
	s->bias = start - off;
	s->kind = PROFILE_REGION_LIB;
	if (!strcmp(path, "[vdso]"))
		s->kind = PROFILE_REGION_VDSO;
	else if (!strcmp(path, t->exe))
		s->kind = PROFILE_REGION_EXE;
	s->path = strdup(path);
	if (!s->path)
		return -1;
	t->nr_segs++;
	if (s->kind == PROFILE_REGION_VDSO)
		return 0;
	fd = attach_open_file(t->pid, path, makedev(maj, min), ino);
	if (fd >= 0) {
		attach_elf(s, fd, off);
		close(fd);
	}
	return 0;
}

/* The target's program and its code now, from /proc. */
static int attach_read_maps(struct attach_target *t)
{
	char path[64], line[PATH_MAX + 128];
	ssize_t n;
	FILE *f;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)t->pid);
	n = readlink(path, t->exe, sizeof(t->exe) - 1);
	t->exe[n > 0 ? n : 0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)t->pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	elf_version(EV_CURRENT);
	while (!ret && fgets(line, sizeof(line), f))
		ret = attach_map_line(t, line);
	fclose(f);
	return ret;
}

/* Bytes of bins the user may have: RLIMIT_MEMLOCK, or a bound of ours. */
static uint64_t attach_budget(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur > ATTACH_NO_LIMIT)
		return ATTACH_NO_LIMIT;
	return rl.rlim_cur;
}

static uint32_t attach_nr_bins(const struct attach_seg *s, unsigned int shift)
{
	return ((s->end - s->start) + (1ULL << shift) - 1) >> shift;
}

/* Bytes of the mapping with bins of 1 << @shift bytes: the PC log first. */
static uint64_t attach_bins_size(const struct attach_target *t,
				 unsigned int shift)
{
	uint64_t size = ATTACH_PCLOG_SLOTS * sizeof(uint64_t);
	size_t i;

	for (i = 0; i < t->nr_segs; i++)
		size += (uint64_t)attach_nr_bins(&t->segs[i], shift) * sizeof(uint32_t);
	return size;
}

/* The regions of the attach, bins of 1 << @shift bytes; @regs[0] the log. */
static void attach_regions(const struct attach_target *t, unsigned int shift,
			   struct profil_region *regs)
{
	uint64_t off = ATTACH_PCLOG_SLOTS * sizeof(uint64_t);
	size_t i;

	memset(regs, 0, (t->nr_segs + 1) * sizeof(*regs));
	regs[0].bufsize = off;
	regs[0].flags = PROFIL_REGION_OVERFLOW | PROFIL_REGION_PCLOG;
	for (i = 0; i < t->nr_segs; i++) {
		struct profil_region *r = &regs[i + 1];

		r->buf = off;
		r->bufsize = (uint64_t)attach_nr_bins(&t->segs[i], shift) *
			     sizeof(uint32_t);
		r->offset = t->segs[i].start;
		r->scale = PROFIL_SCALE_ONE >> (shift - 1);
		r->flags = PROFIL_REGION_U32;
		off += r->bufsize;
	}
}

/* What the attach gives the report. */
struct attach_run {
	int fd;
	unsigned int shift, rate;
	const void *bins;
	uint64_t bins_size;
	clockid_t clock;		/* the target's CPU clock, */
	int have_clock;			/* if it had one at the attach */
	uint64_t cpu_start_ns, cpu_ns;
	struct profil_stats stats;
};

/* The target's CPU time now, or @was when it has none (reaped). */
static uint64_t attach_cpu_ns(const struct attach_run *run, uint64_t was)
{
	struct timespec ts;

	if (!run->have_clock || clock_gettime(run->clock, &ts))
		return was;
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * PROFIL_IOC_ATTACH on a fresh /dev/profil fd with @mem_fd, the bins as
 * fine as the user's memory allows (coarser while the kernel says
 * ENOMEM), mapped.  0, or -1 with errno.
 */
static int attach_start(const struct attach_target *t, int mem_fd,
			unsigned int rate, struct attach_run *run)
{
	struct profil_region *regs = calloc(t->nr_segs + 1, sizeof(*regs));
	uint64_t budget = attach_budget();
	struct profil_attach a;
	int err = ENOMEM;

	run->shift = ATTACH_MIN_SHIFT;
	while (run->shift < ATTACH_MAX_SHIFT &&
	       attach_bins_size(t, run->shift) > budget)
		run->shift++;
	run->fd = open("/dev/profil", O_RDWR | O_CLOEXEC);
	if (!regs || run->fd < 0)
		goto fail;
	for (;; run->shift++) {
		attach_regions(t, run->shift, regs);
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.mem_fd = mem_fd;
		a.pid = t->pid;
		a.rate = rate;
		a.nr_regions = t->nr_segs + 1;
		a.region_size = sizeof(*regs);
		a.regions = (uintptr_t)regs;
		if (!ioctl(run->fd, PROFIL_IOC_ATTACH, &a))
			break;
		err = errno;
		if (err != ENOMEM || run->shift == ATTACH_MAX_SHIFT)
			goto fail;
	}
	run->rate = a.rate;
	run->bins_size = a.bins_size;
	run->bins = mmap(NULL, a.bins_size, PROT_READ, MAP_SHARED, run->fd, 0);
	err = errno;
	if (run->bins == MAP_FAILED)
		goto fail;
	run->have_clock = !clock_getcpuclockid(t->pid, &run->clock);
	run->cpu_start_ns = attach_cpu_ns(run, 0);
	run->cpu_ns = run->cpu_start_ns;
	free(regs);
	return 0;
fail:
	if (run->fd >= 0)
		close(run->fd);
	free(regs);
	errno = err;
	return -1;
}

static int attach_stats(struct attach_run *run)
{
	run->stats.size = sizeof(run->stats);
	return ioctl(run->fd, PROFIL_IOC_STATS, &run->stats);
}

/*
 * Until *@stop, @duration seconds (0: none), or the attachment's end (the
 * target exited, exec'ed or changed credentials), then counting stopped:
 * the stats as they end.
 */
static void attach_wait(struct attach_run *run, volatile sig_atomic_t *stop,
			double duration)
{
	struct timespec t0, now;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!*stop && !attach_stats(run) &&
	       run->stats.state == PROFIL_STATE_ON) {
		run->cpu_ns = attach_cpu_ns(run, run->cpu_ns);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (duration > 0 && (now.tv_sec - t0.tv_sec) +
		    (now.tv_nsec - t0.tv_nsec) / 1e9 >= duration)
			break;
		poll(NULL, 0, ATTACH_POLL_MS);
	}
	if (!ioctl(run->fd, PROFIL_IOC_OFF))
		run->cpu_ns = attach_cpu_ns(run, run->cpu_ns);
	attach_stats(run);
}

/* The names of the regions: "" (the nowhere bin's), then each path. */
static size_t attach_names(const struct attach_target *t, char *names,
			   uint32_t *name_off)
{
	size_t i, n = 1;

	if (names)
		names[0] = '\0';
	for (i = 0; i < t->nr_segs; i++) {
		size_t len = strlen(t->segs[i].path) + 1;

		if (names) {
			name_off[i] = n;
			memcpy(names + n, t->segs[i].path, len);
		}
		n += len;
	}
	return n;
}

static void attach_file_region(struct profile_file_region *fr,
			       const struct attach_seg *s, unsigned int shift,
			       uint64_t bins_off, uint32_t name_off)
{
	fr->start = s->start;
	fr->end = s->end;
	fr->bias = s->bias;
	fr->bins_off = bins_off;
	fr->nr_bins = attach_nr_bins(s, shift);
	fr->shift = shift;
	fr->name_off = name_off;
	fr->kind = s->kind;
	fr->build_id_size = s->build_id_size;
	memcpy(fr->build_id, s->build_id, s->build_id_size);
}

/*
 * The profile file of the attachment, as an agent's (profile-file.h):
 * header, regions, names, then the bins as the kernel counted them.
 */
static struct profile_file_hdr *attach_file(const struct attach_target *t,
					    const struct attach_run *run,
					    size_t *size)
{
	size_t names_size = attach_names(t, NULL, NULL);
	size_t head = sizeof(struct profile_file_hdr) +
		      (t->nr_segs + 1) * sizeof(struct profile_file_region);
	size_t bins_off = (head + names_size + 7) & ~(size_t)7;
	uint32_t *name_off = calloc(t->nr_segs + 1, sizeof(*name_off));
	struct profile_file_hdr *h = calloc(1, bins_off + run->bins_size);
	struct profile_file_region *fr = (void *)(h + 1);
	const struct profil_region *r;
	struct profil_region *regs = calloc(t->nr_segs + 1, sizeof(*regs));
	size_t i;

	if (!h || !name_off || !regs) {
		free(h);
		h = NULL;
		goto out;
	}
	memcpy(h->magic, PROFILE_FILE_MAGIC, sizeof(h->magic));
	h->hdr_size = sizeof(*h);
	h->region_size = sizeof(*fr);
	h->nr_regions = t->nr_segs + 1;
	h->rate = run->rate;
	h->pid = t->pid;
	h->flags = PROFILE_FILE_ENDED;
	h->names_off = head;
	h->names_size = names_size;
	h->size = bins_off + run->bins_size;
	h->cpu_start_ns = run->cpu_start_ns;
	h->cpu_ns = run->cpu_ns;
	h->samples = run->stats.samples;
	h->out_of_range = run->stats.out_of_range;
	h->saturated = run->stats.saturated;
	h->missed = run->stats.missed;
	attach_names(t, (char *)h + head, name_off);
	attach_regions(t, run->shift, regs);
	fr[0].bins_off = bins_off;
	fr[0].nr_bins = ATTACH_PCLOG_SLOTS;
	fr[0].kind = PROFILE_REGION_PCLOG;
	for (i = 0; i < t->nr_segs; i++) {
		r = &regs[i + 1];
		attach_file_region(&fr[i + 1], &t->segs[i], run->shift,
				   bins_off + r->buf, name_off[i]);
	}
	memcpy((char *)h + bins_off, run->bins, run->bins_size);
	*size = h->size;
out:
	free(name_off);
	free(regs);
	return h;
}

static void attach_target_free(struct attach_target *t)
{
	size_t i;

	for (i = 0; i < t->nr_segs; i++)
		free(t->segs[i].path);
	free(t->segs);
}

/* The target's command line, its arguments joined by spaces, or NULL. */
static char *attach_command(pid_t pid)
{
	char path[64], *buf = malloc(4096);
	ssize_t n = -1, i;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (buf && fd >= 0)
		n = read(fd, buf, 4095);
	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		free(buf);
		return NULL;
	}
	for (i = 0; i < n - 1; i++)
		if (!buf[i])
			buf[i] = ' ';
	buf[n] = '\0';
	return buf;
}

/* Why an attach failed, for the user. */
static const char *attach_why(int err)
{
	switch (err) {
	case ENOENT:
	case ESRCH:
		return "no such process (or it exec'ed or exited meanwhile)";
	case EACCES:
	case EPERM:
		return "permission denied: profil -p may profile what ptrace may attach to (the same user, a dumpable process, Yama's ptrace_scope)";
	case ENOTTY:
		return "the profil module cannot attach (PROFIL_IOC_ATTACH): it is older than this profil";
	default:
		return strerror(err);
	}
}

int attach_profile(const struct attach_opts *o, struct report *r)
{
	struct attach_target t = { .pid = o->pid };
	struct attach_run run = { .fd = -1 };
	struct profile_file_hdr *h;
	char path[64];
	size_t size;
	int mem_fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)o->pid);
	mem_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (mem_fd < 0 || attach_read_maps(&t) ||
	    attach_start(&t, mem_fd, o->rate, &run)) {
		fprintf(stderr, "profil: pid %d: %s\n", (int)o->pid,
			attach_why(errno));
		if (mem_fd >= 0)
			close(mem_fd);
		attach_target_free(&t);
		return -1;
	}
	close(mem_fd);
	r->command = attach_command(o->pid);
	fprintf(stderr, "profil: attached to pid %d (%s) at %u Hz\n",
		(int)o->pid, t.exe[0] ? t.exe : "?", run.rate);
	attach_wait(&run, o->stop, o->duration);
	h = attach_file(&t, &run, &size);
	munmap((void *)run.bins, run.bins_size);
	close(run.fd);
	r->files = h ? calloc(1, sizeof(*r->files)) : NULL;
	if (!r->files) {
		free(h);
		attach_target_free(&t);
		fprintf(stderr, "profil: %s\n", strerror(ENOMEM));
		return -1;
	}
	r->files[0].pid = o->pid;
	r->files[0].h = h;
	r->files[0].size = size;
	r->nr_files = 1;
	r->main_pid = o->pid;
	r->rate = run.rate;
	r->exe = t.exe[0] ? strdup(t.exe) : NULL;
	attach_target_free(&t);
	if (run.stats.stop_reason >= PROFIL_STOP_EXIT &&
	    run.stats.stop_reason <= PROFIL_STOP_CRED)
		fprintf(stderr, "profil: pid %d %s\n", (int)o->pid,
			run.stats.stop_reason == PROFIL_STOP_EXIT ? "exited" :
			run.stats.stop_reason == PROFIL_STOP_EXEC ?
			"exec'ed another program: its profile ends there" :
			"changed its credentials: its profile ends there");
	report_objects(r);
	return 0;
}
