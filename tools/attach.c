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
 * refused).  The process is held by a pidfd from the start: what profil
 * read of /proc/PID is the target's only while the pidfd still names a
 * process that is not reaped (attach_same()).
 *
 * The objects are the ELF files /proc/PID/maps maps executable, each read
 * here for its load bias and build-ID; other code (a JIT's, a memfd's, a
 * file deleted) counts in the PC log.  The maps are read again every
 * ATTACH_MAPS_MS: when the process has mapped code since (a
 * dlopen()), the attachment is replaced by one over all of it, as the
 * agent re-arms, each its own profile file, so that every sample is in
 * one; the code's PCs before that are in the first one's PC log, named
 * from the second (report.c, pc_home()).
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
#include <sys/pidfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/openat2.h>
#include <linux/profil.h>

#include "profil.h"

#define ATTACH_MIN_SHIFT	2	/* a bin for each 4 bytes of text */
#define ATTACH_MAX_SHIFT	12	/* to 4 KiB, when memory is short */
#define ATTACH_PCLOG_SLOTS	1024	/* the nowhere bin: a count, 1023 PCs */
#define ATTACH_MAX_SEGS		(PROFIL_MAX_REGIONS - 1)
#define ATTACH_POLL_MS		100
#define ATTACH_MAPS_MS		500	/* the maps read again this often, */
#define ATTACH_MAX_AGAIN	8	/* and this many attachments more */
#define ATTACH_NO_LIMIT		(256ULL << 20) /* bins at most, unlimited */

/* An executable mapping of the target's, as its profile file region. */
struct attach_seg {
	uint64_t map_start, map_end, map_off, ino;	/* as the maps say */
	uint64_t start, end, bias;			/* its object's text */
	char *path;
	uint32_t kind;
	uint32_t build_id_size;
	uint8_t build_id[PROFILE_BUILD_ID_MAX];
};

struct attach_target {
	pid_t pid;
	int pidfd;			/* the process, since profil started */
	char exe[PATH_MAX];
	int root;			/* /proc/PID/root, O_PATH, while read */
	struct attach_seg *segs;
	size_t nr_segs, cap;
};

/*
 * The file the target maps at @path, opened for reading: resolved in the
 * target's root (symbolic links not followed: the maps give resolved
 * paths), looked at before it is opened (a regular file of inode @ino,
 * the one mapped, never a FIFO or a device put there since).  The device
 * is not compared: btrfs and overlayfs give another in the maps than
 * stat() does.  -1 when it is not that file.
 */
static int attach_open_file(const struct attach_target *t, const char *path,
			    uint64_t ino)
{
	struct open_how how = {
		.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS,
	};
	char again[64];
	struct stat st;
	int fd, file;

	fd = syscall(SYS_openat2, t->root, path, &how, sizeof(how));
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_ino != ino) {
		close(fd);
		return -1;
	}
	snprintf(again, sizeof(again), "/proc/self/fd/%d", fd);
	file = open(again, O_RDONLY | O_CLOEXEC);
	close(fd);
	return file;
}

/*
 * @s's object from its ELF file: the executable PT_LOAD that holds file
 * offset s->map_off, mapped at s->map_start, gives the load bias and the
 * text; and its build-ID.  0, or -1 when no such segment is there.
 */
static int attach_elf(struct attach_seg *s, int fd)
{
	uint64_t page = sysconf(_SC_PAGESIZE), lo, hi;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *id;
	GElf_Phdr ph;
	size_t i, n;
	ssize_t len;
	int ret = -1;

	if (!e || elf_getphdrnum(e, &n))
		goto out;
	for (i = 0; i < n && ret; i++) {
		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X) ||
		    (ph.p_offset & ~(page - 1)) > s->map_off ||
		    s->map_off >= ph.p_offset + ph.p_filesz)
			continue;
		s->bias = s->map_start - s->map_off + ph.p_offset - ph.p_vaddr;
		lo = s->bias + ph.p_vaddr;
		hi = lo + ph.p_memsz;
		s->start = lo > s->map_start ? lo : s->map_start;
		s->end = hi < s->map_end ? hi : s->map_end;
		ret = s->start < s->end ? 0 : -1;
	}
	len = dwelf_elf_gnu_build_id(e, &id);
	if (len > 0 && len <= PROFILE_BUILD_ID_MAX) {
		memcpy(s->build_id, id, len);
		s->build_id_size = len;
	}
out:
	elf_end(e);
	return ret;
}

/* The segment of @t mapped as @s is, or NULL. */
static const struct attach_seg *attach_known(const struct attach_target *t,
					     const struct attach_seg *s)
{
	size_t i;

	for (i = 0; t && i < t->nr_segs; i++)
		if (t->segs[i].map_start == s->map_start &&
		    t->segs[i].map_end == s->map_end &&
		    t->segs[i].map_off == s->map_off &&
		    t->segs[i].ino == s->ino && !strcmp(t->segs[i].path, s->path))
			return &t->segs[i];
	return NULL;
}

/*
 * @s, a mapping of code, as an object's: the vDSO, or an ELF file whose
 * executable segment it maps (its segment in @known, else read).  0, or
 * -1 when it is code of no object that profil can read (a JIT's, a
 * memfd's, a file gone or replaced), which counts in the PC log.
 */
static int attach_object(const struct attach_target *t,
			 const struct attach_target *known,
			 struct attach_seg *s)
{
	const struct attach_seg *k = attach_known(known, s);
	int fd, ret;

	if (!strcmp(s->path, "[vdso]")) {
		s->kind = PROFILE_REGION_VDSO;
		s->bias = s->start = s->map_start;
		s->end = s->map_end;
		return 0;
	}
	if (s->path[0] != '/' || !strncmp(s->path, "/memfd:", 7) ||
	    strstr(s->path, " (deleted)"))
		return -1;
	if (k) {
		free(s->path);
		*s = *k;
		s->path = strdup(k->path);
		return s->path ? 0 : -1;
	}
	s->kind = strcmp(s->path, t->exe) ? PROFILE_REGION_LIB : PROFILE_REGION_EXE;
	fd = attach_open_file(t, s->path, s->ino);
	if (fd < 0)
		return -1;
	ret = attach_elf(s, fd);
	close(fd);
	return ret;
}

/*
 * One line of /proc/PID/maps (a whole one: it ends in a newline) into
 * t->segs when it maps an object's code (attach_object()), at most 4 GiB
 * of it.  0, or -1 without memory.
 */
static int attach_map_line(struct attach_target *t,
			   const struct attach_target *known, const char *line)
{
	unsigned long long start, end, off, ino;
	struct attach_seg *s;
	char perms[8];
	int at = 0;

	if (!strchr(line, '\n') ||
	    sscanf(line, "%llx-%llx %7s %llx %*x:%*x %llu %n", &start, &end,
		   perms, &off, &ino, &at) < 5 || !at ||
	    perms[2] != 'x' || start >= end || end - start > UINT32_MAX ||
	    t->nr_segs == ATTACH_MAX_SEGS)
		return 0;	/* the rest count in the PC log */
	s = report_grow(t->segs, &t->cap, t->nr_segs, sizeof(*s), 64);
	if (!s)
		return -1;
	t->segs = s;
	s += t->nr_segs;
	memset(s, 0, sizeof(*s));
	s->map_start = start;
	s->map_end = end;
	s->map_off = off;
	s->ino = ino;
	s->path = strndup(line + at, strcspn(line + at, "\n"));
	if (!s->path)
		return -1;
	if (attach_object(t, known, s))
		free(s->path);
	else
		t->nr_segs++;
	return 0;
}

/*
 * The target's program and its code now, from /proc (the segments @known
 * has, if not NULL, not read again).  0, or -1 with errno.
 */
static int attach_read_maps(struct attach_target *t,
			    const struct attach_target *known)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *f;
	int ret = 0, err;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)t->pid);
	n = readlink(path, t->exe, sizeof(t->exe) - 1);
	t->exe[n > 0 ? n : 0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/root", (int)t->pid);
	t->root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)t->pid);
	f = t->root >= 0 ? fopen(path, "re") : NULL;
	if (!f) {
		err = errno;
		if (t->root >= 0)
			close(t->root);
		errno = err;
		return -1;
	}
	elf_version(EV_CURRENT);
	while (!ret && getline(&line, &cap, f) > 0)
		ret = attach_map_line(t, known, line);
	err = errno;
	free(line);
	fclose(f);
	close(t->root);
	errno = err;
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

/* Bins of 1 << @shift bytes that cover @s's text. */
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
	if (!regs || run->fd < 0) {
		err = regs ? errno : ENOMEM;
		goto fail;
	}
	run->have_clock = !clock_getcpuclockid(t->pid, &run->clock);
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
	/*
	 * The target ran on while the kernel allocated and cleared the bins,
	 * which it made the events after: its CPU time from here on, and
	 * before mmap(), which may be slow (a kernel without the events' own
	 * count of it, attach_wait(), says no nearer).
	 */
	run->cpu_start_ns = attach_cpu_ns(run, 0);
	run->rate = a.rate;
	run->bins_size = a.bins_size;
	run->bins = mmap(NULL, a.bins_size, PROT_READ, MAP_SHARED, run->fd, 0);
	err = errno;
	if (run->bins == MAP_FAILED)
		goto fail;
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

/*
 * The attachment's struct profil_stats into run->stats: 0 or -1.  While it
 * polls, @size leaves out what the kernel reads each event for (cpu_ns).
 */
static int attach_stats(struct attach_run *run, uint32_t size)
{
	run->stats.size = size;
	return ioctl(run->fd, PROFIL_IOC_STATS, &run->stats);
}

/* Whether @b maps code that @a does not. */
static int attach_grew(const struct attach_target *a,
		       const struct attach_target *b)
{
	size_t i;

	for (i = 0; i < b->nr_segs; i++)
		if (!attach_known(a, &b->segs[i]))
			return 1;
	return 0;
}

/* @t's segments freed; @t empty, its pid kept. */
static void attach_target_free(struct attach_target *t)
{
	size_t i;

	for (i = 0; i < t->nr_segs; i++)
		free(t->segs[i].path);
	free(t->segs);
	t->segs = NULL;
	t->nr_segs = t->cap = 0;
}

/*
 * 0 while @t's process is not reaped, so that its PID is not another's
 * and what /proc/PID gave since its pidfd was opened was its own (or
 * there is no pidfd, or the check is refused, as by a seccomp filter:
 * the kernel's check of the mem fd alone); -1 and ESRCH once it is.
 */
static int attach_same(const struct attach_target *t)
{
	if (t->pidfd < 0 || !pidfd_send_signal(t->pidfd, 0, NULL, 0) ||
	    errno != ESRCH)
		return 0;
	return -1;
}

/* Seconds of CLOCK_MONOTONIC since @t0. */
static double attach_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t0->tv_sec) + (now.tv_nsec - t0->tv_nsec) / 1e9;
}

/*
 * Until *@stop, @duration seconds after @t0 (0: none), the attachment's
 * end (the target exited, exec'ed or changed credentials), or, when
 * @grow, code that @t does not know in the maps (then in @grown, and 1
 * returned); then counting stopped, the stats as they end, and the
 * target's CPU time then (as last read while it was attached, if the
 * kernel ended it: another program's, or another process's, after).
 * The target's exit, when its pidfd says so, is seen at once: the kernel
 * ended the attachment before (PROFIL_STOP_EXIT), and the next round
 * finds it so.
 */
static int attach_wait(struct attach_run *run, const struct attach_target *t,
		       struct attach_target *grown, int grow,
		       volatile sig_atomic_t *stop, const struct timespec *t0,
		       double duration)
{
	struct pollfd gone = { .fd = t->pidfd, .events = POLLIN };
	unsigned int polls = 0;
	int grew = 0, ended = 0;

	for (;;) {
		if (attach_stats(run, PROFIL_STATS_SIZE_VER3) ||
		    run->stats.state != PROFIL_STATE_ON) {
			ended = 1;
			break;
		}
		run->cpu_ns = attach_cpu_ns(run, run->cpu_ns);
		if (*stop || (duration > 0 && attach_since(t0) >= duration))
			break;
		if (grow && ++polls % (ATTACH_MAPS_MS / ATTACH_POLL_MS) == 0) {
			attach_target_free(grown);
			grew = !attach_read_maps(grown, t) &&
			       !attach_same(t) && attach_grew(t, grown);
			if (grew)
				break;
		}
		/* Readable once the process exited: polled no more. */
		if (poll(&gone, t->pidfd >= 0, ATTACH_POLL_MS) > 0)
			gone.fd = -1;
	}
	if (!ended) {
		ioctl(run->fd, PROFIL_IOC_OFF);
		run->cpu_ns = attach_cpu_ns(run, run->cpu_ns);
	}
	/*
	 * The CPU time sampled as the kernel counted it, where it says: the
	 * clock read after ATTACH is late by as much as this process was
	 * preempted since the events started, with the target running on.
	 */
	if (!attach_stats(run, sizeof(run->stats)) &&
	    run->stats.size >= PROFIL_STATS_SIZE_VER4 &&
	    run->stats.cpu_ns <= run->cpu_ns)
		run->cpu_start_ns = run->cpu_ns - run->stats.cpu_ns;
	return grew;
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

/* @s's region of the profile file, its bins at @bins_off in it. */
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

/*
 * The target's command line, its arguments joined by spaces, any other
 * control character '?'; NULL if it has none (a kernel thread, a zombie).
 */
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
	/*
	 * One line of text: a header line, a CSV comment (report.c).  The
	 * last NUL ends it; a line cut at 4095 bytes has none.
	 */
	if (!buf[n - 1])
		n--;
	for (i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	report_printable(buf, n);
	buf[n] = '\0';
	return buf;
}

/*
 * The process of thread @tid (its Tgid in /proc/TID/status, which a
 * thread that is not its process's first has too), or -1.
 */
static pid_t attach_tgid(pid_t tid)
{
	char path[64], line[256];
	int tgid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	if (f)
		fclose(f);
	return tgid;
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
	case ENOMEM:
		return "the bins do not fit in the memory the user may lock, even at 4 KiB of code a bin (RLIMIT_MEMLOCK: ulimit -l)";
	case ENOTTY:
		return "the profil module cannot attach (PROFIL_IOC_ATTACH): it is older than this profil";
	default:
		return strerror(err);
	}
}

/* The attachment @run over @t ended: its profile file appended to @r's. */
static int attach_keep(struct report *r, const struct attach_target *t,
		       struct attach_run *run, uint64_t *lost)
{
	struct profile_file_hdr *h;
	size_t size;

	/* The header's losses are the process's so far: the last file's. */
	lost[0] += run->stats.saturated;
	lost[1] += run->stats.missed;
	run->stats.saturated = lost[0];
	run->stats.missed = lost[1];
	h = attach_file(t, run, &size);
	munmap((void *)run->bins, run->bins_size);
	close(run->fd);
	if (h && !report_add_file(r, t->pid, 0, h, size))
		return 0;
	free(h);
	return -1;
}

/* Why the kernel ended the attachment, if it did. */
static void attach_ended(pid_t pid, const struct profil_stats *st)
{
	if (st->stop_reason == PROFIL_STOP_EXIT)
		fprintf(stderr, "profil: pid %d exited\n", (int)pid);
	else if (st->stop_reason == PROFIL_STOP_EXEC)
		fprintf(stderr, "profil: pid %d exec'ed another program: its profile ends there\n",
			(int)pid);
	else if (st->stop_reason == PROFIL_STOP_CRED)
		fprintf(stderr, "profil: pid %d changed its credentials: its profile ends there\n",
			(int)pid);
}

int attach_profile(const struct attach_opts *o, struct report *r)
{
	struct attach_target t = { .pid = o->pid, .pidfd = -1 };
	struct attach_target grown = { .pid = o->pid, .pidfd = -1 };
	struct attach_run run = { .fd = -1 }, next;
	uint64_t lost[2] = { 0, 0 };
	unsigned int again = 0;
	struct timespec t0;
	char path[64];
	int mem_fd = -1, ret = 0;
	pid_t tgid;

	tgid = attach_tgid(o->pid);
	if (tgid > 0 && tgid != o->pid) {
		fprintf(stderr, "profil: %d is a thread's ID, not a process's: -p takes its process's, %d\n",
			(int)o->pid, (int)tgid);
		return -1;
	}
	/* No pidfd but for a process gone: the kernel's check alone then. */
	t.pidfd = pidfd_open(o->pid, 0);
	if (t.pidfd < 0 && errno == ESRCH)
		goto fail;
	grown.pidfd = t.pidfd;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)o->pid);
	mem_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (mem_fd < 0 || attach_read_maps(&t, NULL) || attach_same(&t) ||
	    attach_start(&t, mem_fd, o->rate, &run))
		goto fail;
	r->main_pid = o->pid;
	r->rate = run.rate;
	r->exe = t.exe[0] ? strdup(t.exe) : NULL;
	r->command = attach_command(o->pid) ?: strdup(t.exe);
	fprintf(stderr, "profil: attached to pid %d (%s) at %u Hz\n",
		(int)o->pid, t.exe[0] ? t.exe : "?", run.rate);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/*
	 * Each time the process maps more code, an attachment over it all,
	 * ATTACH_MAX_AGAIN times at most (more code after that counts in the
	 * PC log); what it ran between two attachments is missed.
	 */
	while (attach_wait(&run, &t, &grown, again < ATTACH_MAX_AGAIN, o->stop,
			   &t0, o->duration)) {
		again++;
		memset(&next, 0, sizeof(next));
		if (attach_start(&grown, mem_fd, run.rate, &next)) {
			fprintf(stderr, "profil: pid %d: no attachment over the code it mapped since: %s\n",
				(int)o->pid, attach_why(errno));
			break;
		}
		if (next.cpu_start_ns > run.cpu_ns)
			lost[1] += (next.cpu_start_ns - run.cpu_ns) * run.rate /
				   1000000000ULL;
		ret |= attach_keep(r, &t, &run, lost);
		attach_target_free(&t);
		t = grown;
		grown = (struct attach_target){ .pid = o->pid, .pidfd = t.pidfd };
		run = next;
	}
	attach_ended(o->pid, &run.stats);
	ret |= attach_keep(r, &t, &run, lost);
	close(mem_fd);
	if (t.pidfd >= 0)
		close(t.pidfd);
	attach_target_free(&t);
	attach_target_free(&grown);
	if (ret)
		fprintf(stderr, "profil: %s\n", strerror(ENOMEM));
	report_objects(r);
	return r->nr_files ? 0 : -1;

fail:
	fprintf(stderr, "profil: pid %d: %s\n", (int)o->pid, attach_why(errno));
	if (mem_fd >= 0)
		close(mem_fd);
	if (t.pidfd >= 0)
		close(t.pidfd);
	attach_target_free(&t);
	return -1;
}
