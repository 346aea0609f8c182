// SPDX-License-Identifier: GPL-2.0
/*
 * The /dev/profil fuzzer, in two parts.
 *
 * fuzzer: four threads make FUZZ_CALLS random calls each, mixing valid
 * and corrupted setups, OFF with and without an argument, STATS of every
 * size and unknown numbers, while the same threads unmap, remap,
 * write-protect, move and zap the buffers, fork children that fuzz on and
 * exit, vfork and exec.  Every call must return 0 or a documented errno;
 * the process must survive; afterwards nothing is pinned.  It finds races,
 * which no replay repeats: each thread keeps its last calls, printed when
 * it finds something.
 *
 * mutate: structure-aware and deterministic.  A valid setup of one mode
 * (a FIXTURE_VARIANT: profil, 32-bit bins, sprofil, AIX, a profile file, a
 * file kept across a re-arm, pcsample) is changed in one field at a time
 * (boundary values, sizes and tails of every struct, unknown flags,
 * pointers into guard pages and read-only pages, shared file mappings,
 * overlapping regions, too many regions, rates, names, RLIMIT_MEMLOCK, a
 * vfork child, a re-arm), and the call must give what the reference
 * (fuzz_ref.h, written from the uapi header and profil(4)) says.  Every
 * buffer, struct and image lies in an arena between PROT_NONE guard pages,
 * filled with a known pattern; after each case nothing but the bins and
 * the rate may have changed.  A setup that succeeds is checked in STATS
 * (state, rate, period, counters, VmPin), runs a loop of known PCs whose
 * samples must land in the bin the reference names, and ends with OFF:
 * the bins must hold as many samples as STATS counted, a profile file
 * must hold its image, nothing must stay pinned.  Each mode must have
 * setups that succeed.
 *
 * cmd: every request with every wrong direction (ENOTTY, nothing done)
 * and with any size bits (ignored: profil(4), Requests); unknown numbers;
 * STATS and OFF arguments; a vfork child's requests.
 *
 * The seed is new at each run unless PROFIL_FUZZ_SEED is set, and printed:
 * make fuzz SEED=n replays a run.  A mismatch prints the case, the calls
 * that led to it, and the seed.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdarg.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "common.h"
#include "fuzz_ref.h"
#include "kselftest_harness.h"

#define FZ_LOG(fmt, ...)	fprintf(stderr, "# " fmt "\n", ##__VA_ARGS__)

/* The seed of this run: PROFIL_FUZZ_SEED, or a new one. */
static unsigned long long fz_seed(void)
{
	const char *env = getenv("PROFIL_FUZZ_SEED");
	unsigned int s;

	if (env && *env)
		return strtoull(env, NULL, 0);
	if (getrandom(&s, sizeof(s), 0) != sizeof(s))
		s = time(NULL) ^ getpid() << 16;
	return s;
}

/* xorshift64*: each thread and each case its own stream. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

/* The last calls made, to print with a failure. */
#define RING		24
struct ring {
	char rec[RING][320];
	unsigned long n;
};

static void __attribute__((format(printf, 2, 3)))
ring_add(struct ring *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->rec[r->n++ % RING], sizeof(r->rec[0]), fmt, ap);
	va_end(ap);
}

static void ring_dump(const struct ring *r, const char *who)
{
	unsigned long i = r->n > RING ? r->n - RING : 0;

	FZ_LOG("%s: the last %lu calls, oldest first:", who, r->n - i);
	for (; i < r->n; i++)
		FZ_LOG("  %s", r->rec[i % RING]);
}

/* ------------------------------------------------------------------------
 * fuzzer: four threads of random calls while the memory changes.
 */

#define FUZZ_THREADS	4
#define FUZZ_CALLS	2600	/* per thread: more than 10,000 in all */
#define POOL		8	/* buffers the threads share */
#define POOL_PAGES	4

static unsigned char *pool[POOL];
static int dirfd_ok;
static unsigned int race_hz, race_max_rate;

/* The errnos a SETUP may give (profil(4), ERRORS). */
static int setup_errno_ok(int e)
{
	switch (e) {
	case EINVAL: case E2BIG: case EFAULT: case ENOMEM: case EINTR:
	case EAGAIN: case EBADF: case ENOTDIR: case ENAMETOOLONG: case EACCES:
	case ENOENT:
		return 1;
	}
	return 0;
}

/*
 * The reference, where other threads change the pool under the call:
 * each pool page mapped read-write, or not at all (race_none); every
 * other address the calls use is this thread's own, mapped, or below
 * 4096 or in the kernel.
 */
static __thread bool race_none;

static bool in_pool(uint64_t a)
{
	for (int i = 0; i < POOL; i++)
		if (a >= (uintptr_t)pool[i] &&
		    a < (uintptr_t)pool[i] + POOL_PAGES * 4096)
			return true;
	return false;
}

/*
 * The PROT_NONE pages either side of each pool buffer, so that a region
 * or an image that runs past a buffer's end is refused (EFAULT), not
 * counted into the fuzzer's own memory beyond it.
 */
static bool in_guard(uint64_t a)
{
	return !in_pool(a) && (in_pool(a - 4096) || in_pool(a + 4096));
}

static enum fz_page race_page(uint64_t a)
{
	if (in_pool(a))
		return race_none ? FZ_PG_NONE : FZ_PG_RW;
	return a < 4096 || in_guard(a) ? FZ_PG_NONE : FZ_PG_RW;
}

/*
 * What the reference allows, the pool either way, a file kept or not;
 * when a struct itself lies in the pool (where the kernel counts and
 * other threads unmap), anything profil(4) documents.
 */
static fz_set race_ref(const struct profil_setup *st, struct fz_want *w)
{
	struct fz_env env = {
		.page = race_page, .hz = race_hz, .max_rate = race_max_rate,
		.memlock_bound = true, .memlock_pages = ~0ULL,
		.kept_image = (uintptr_t)pool[0], .kept_image_size = 4096,
		.pid = getpid(), .perfmon_capable = true,
	};
	struct rlimit rl;
	fz_set set = 0;
	int e;

	if (in_pool(st->regions) || in_pool(st->output)) {
		for (e = 1; e < 64; e++)
			set |= setup_errno_ok(e) ? FZ_E(e) : 0;
		return set | FZ_OK;
	}
	if (!getrlimit(RLIMIT_MEMLOCK, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    geteuid())
		env.memlock_pages = rl.rlim_cur / 4096;
	for (int i = 0; i < 4; i++) {
		race_none = i & 1;
		env.file_running = i & 2;
		set |= fz_ref_setup(&env, (uintptr_t)st, w);
	}
	race_none = false;
	/* The buffers may keep changing while they are pinned. */
	if (set & FZ_OK || set & FZ_E(EFAULT))
		set |= FZ_E(EAGAIN);
	return set;
}

static uint64_t pick(uint64_t *s, const uint64_t *v, size_t n)
{
	return v[rnd(s) % n];
}

#define PICK(s, ...) ({							\
	const uint64_t __v[] = { __VA_ARGS__ };				\
	pick(s, __v, sizeof(__v) / sizeof(__v[0]));			\
})

/* A user address: mostly good, sometimes not. */
static uint64_t addr(uint64_t *s)
{
	unsigned char *b = pool[rnd(s) % POOL];

	switch (rnd(s) % 8) {
	case 0:
		return 0;
	case 1:
		return 0xffffffff81000000ULL;		/* the kernel */
	case 2:
		return (uintptr_t)b + POOL_PAGES * 4096 - 2; /* the edge */
	case 3:
		return (uintptr_t)b + (rnd(s) % (POOL_PAGES * 4096)) + 1;
	default:
		return (uintptr_t)b + (rnd(s) % POOL_PAGES) * 4096;
	}
}

static void fuzz_region(uint64_t *s, struct profil_region *r)
{
	r->buf = addr(s);
	r->bufsize = PICK(s, 0, 1, 2, 4, 64, 4096, 3 * 4096, 1ULL << 31,
			  (1ULL << 31) + 2, ~0ULL, rnd(s) % 20000);
	r->offset = PICK(s, 0, (uintptr_t)spin_a, (uintptr_t)spin_a - 256,
			 ~0ULL - 100, rnd(s));
	r->scale = PICK(s, 0, 1, 2, 0x8000, 0x10000, 0x10001, rnd(s));
	r->flags = PICK(s, 0, 0, PROFIL_REGION_U32, PROFIL_REGION_OVERFLOW,
			PROFIL_REGION_U32 | PROFIL_REGION_OVERFLOW, rnd(s));
	if (r->flags & PROFIL_REGION_OVERFLOW && rnd(s) % 2)
		r->offset = r->scale = 0;
}

struct fuzz {
	uint64_t s;
	int fd;
	long bad;		/* undocumented results */
	long calls;
	long armed;		/* setups that succeeded */
	char what[160];		/* the first bad one */
	struct ring ring;
	struct ring bad_ring;	/* the ring at the first bad one */
	struct fz_want *want;	/* the reference's */
};

static void note_bad(struct fuzz *f, const char *op, int e)
{
	if (!f->bad++) {
		snprintf(f->what, sizeof(f->what), "%s: errno %d (%s)", op, e,
			 strerror(e));
		f->bad_ring = f->ring;
	}
}

/* A child's end that was not a clean exit: its signal, or its status. */
static void note_child(struct fuzz *f, int status)
{
	if (!f->bad++) {
		if (WIFSIGNALED(status))
			snprintf(f->what, sizeof(f->what),
				 "child: killed by signal %d (%s)",
				 WTERMSIG(status), strsignal(WTERMSIG(status)));
		else
			snprintf(f->what, sizeof(f->what),
				 "child: exit status %d", WEXITSTATUS(status));
		f->bad_ring = f->ring;
	}
}

static void fuzz_setup(struct fuzz *f)
{
	/* 16: region_size 40 reads past the 8 in use, zeros. */
	static __thread struct profil_region r[16];
	unsigned char mem[4200];
	struct profil_setup *st = (void *)mem;
	struct profil_output o = {
		.size = sizeof(o), .dirfd = dirfd_ok, .rec_size = 24,
		.image = addr(&f->s), .image_size = 4096 * (1 + rnd(&f->s) % 3),
		.head_size = PICK(&f->s, 0, 64, 4096), .nr_recs_max = 10,
		.ctl_offset = PICK(&f->s, 512, 4096 - 16, 4), .name = (uintptr_t)"f.%p",
		.child_name = (uintptr_t)PICK(&f->s, (uintptr_t)"c.%p",
					      (uintptr_t)"bad/", 0),
	};
	uint32_t nr = PICK(&f->s, 0, 1, 1, 2, 3, 8, 1025, rnd(&f->s));
	int e = 0, valid = rnd(&f->s) % 3 == 0;
	fz_set set;
	char sets[64];

	for (uint32_t i = 0; i < 8; i++)
		fuzz_region(&f->s, &r[i]);
	memset(mem, 0, sizeof(mem));
	*st = (struct profil_setup){
		.size = PICK(&f->s, 40, 40, 40, 32, 0, 8, 31, 48, 4096, 4097),
		.flags = PICK(&f->s, 0, 0, PROFIL_F_NOINHERIT, rnd(&f->s)),
		.mode = PICK(&f->s, 0, 0, 0, PROFIL_MODE_PCSAMPLE, 7),
		.rate = PICK(&f->s, 0, 0, 100, 1000, 10000, 10001, 100001,
			     rnd(&f->s)),
		.nr_regions = nr,
		.region_size = PICK(&f->s, 32, 32, 32, 0, 16, 40, 4097),
		.regions = PICK(&f->s, (uintptr_t)r, (uintptr_t)r, (uintptr_t)r,
				0, addr(&f->s)),
		.output = PICK(&f->s, 0, 0, 0, (uintptr_t)&o, addr(&f->s)),
	};
	if (rnd(&f->s) % 8 == 0)
		mem[40 + rnd(&f->s) % 8] = 1;	/* a tail the kernel knows not */
	if (valid) {
		/* A good setup, on buffers that other threads may change. */
		*st = (struct profil_setup){
			.size = sizeof(*st), .rate = PICK(&f->s, 0, 1000, 10000),
			.mode = PROFIL_MODE_HIST, .nr_regions = 1 + rnd(&f->s) % 3,
			.region_size = sizeof(r[0]), .regions = (uintptr_t)r,
			.flags = PICK(&f->s, 0, PROFIL_F_NOINHERIT),
		};
		for (uint32_t i = 0; i < st->nr_regions; i++)
			r[i] = (struct profil_region){
				.buf = (uintptr_t)pool[rnd(&f->s) % POOL],
				.bufsize = 2 + rnd(&f->s) % 4096 * 2,
				.offset = (uintptr_t)spin_a - rnd(&f->s) % 4096,
				.scale = 2 + rnd(&f->s) % 0x10000 };
		mem[sizeof(*st)] = 0;
	}
	set = race_ref(st, f->want);
	if (!ioctl(f->fd, PROFIL_IOC_SETUP, st))
		f->armed++;
	else
		e = errno;
	ring_add(&f->ring, "SETUP%s size %u flags %#x mode %u rate %u nr %u rsize %u regions %#llx output %#llx, r[0] buf %#llx size %#llx off %#llx scale %#x flags %#x: %s",
		 valid ? " (valid)" : "", st->size, st->flags, st->mode,
		 st->rate, st->nr_regions, st->region_size,
		 (unsigned long long)st->regions, (unsigned long long)st->output,
		 (unsigned long long)r[0].buf, (unsigned long long)r[0].bufsize,
		 (unsigned long long)r[0].offset, r[0].scale, r[0].flags,
		 e ? strerrorname_np(e) : "0");
	ring_add(&f->ring, "  the reference: %s", fz_set_str(set, sets, sizeof(sets)));
	if (e && !setup_errno_ok(e))
		note_bad(f, "SETUP", e);
	else if (!(set >> e & 1))
		note_bad(f, "SETUP, not what the reference says", e);
}

static void fuzz_other(struct fuzz *f)
{
	unsigned char mem[200];
	struct profil_stats *st = (void *)mem;
	unsigned long cmd, arg;
	int e;

	switch (rnd(&f->s) % 4) {
	case 0:
		arg = PICK(&f->s, 0, 0, 1);
		e = ioctl(f->fd, PROFIL_IOC_OFF, arg) ? errno : 0;
		ring_add(&f->ring, "OFF %lu: %s", arg, e ? strerrorname_np(e) : "0");
		if (e && e != EINVAL)
			note_bad(f, "OFF", e);
		break;
	case 1:
		memset(mem, 0, sizeof(mem));
		st->size = PICK(&f->s, 88, 64, 0, 8, 200, 5000);
		arg = PICK(&f->s, (uintptr_t)st, (uintptr_t)st, 0, addr(&f->s));
		e = ioctl(f->fd, PROFIL_IOC_STATS, arg) ? errno : 0;
		ring_add(&f->ring, "STATS %#lx%s: %s", arg,
			 arg == (uintptr_t)st ? " (good)" : "",
			 e ? strerrorname_np(e) : "0");
		if (e && e != EINVAL && e != EFAULT)
			note_bad(f, "STATS", e);
		break;
	default:
		cmd = _IOC(rnd(&f->s) % 4, PICK(&f->s, PROFIL_IOC_MAGIC, 0x42),
			   rnd(&f->s) % 16, rnd(&f->s) % 256);
		if (cmd == PROFIL_IOC_OFF || _IOC_NR(cmd) == 1 ||
		    _IOC_NR(cmd) == 3 || _IOC_NR(cmd) == 4)
			break;	/* real ones, with any size: done above, */
				/* or ATTACH's (attach_test) */
		e = ioctl(f->fd, cmd, 0) ? errno : 0;
		ring_add(&f->ring, "ioctl %#lx 0: %s", cmd,
			 e ? strerrorname_np(e) : "0");
		if (!e) {
			if (_IOC_TYPE(cmd) == PROFIL_IOC_MAGIC && _IOC_NR(cmd) == 2)
				break;
			note_bad(f, "unknown ioctl succeeded", 0);
		} else if (e != ENOTTY && e != EINVAL) {
			note_bad(f, "unknown ioctl", e);
		}
	}
}

/* Change a buffer under everybody's feet. */
static void fuzz_memory(struct fuzz *f)
{
	int i = rnd(&f->s) % POOL, how = rnd(&f->s) % 5;
	size_t len = POOL_PAGES * 4096;
	void *b = pool[i], *n;
	static const char *const hows[] = {
		"munmap+mmap", "mprotect RO+RW", "MADV_DONTNEED", "mremap away and back",
		"mprotect NONE+RW",
	};

	ring_add(&f->ring, "pool[%d] %p: %s", i, b, hows[how]);
	switch (how) {
	case 0:
		munmap(b, len);
		mmap(b, len, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		break;
	case 1:
		mprotect(b, 4096, PROT_READ);
		mprotect(b, 4096, PROT_READ | PROT_WRITE);
		break;
	case 2:
		madvise(b, len, MADV_DONTNEED);
		break;
	case 3:
		n = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
		if (n != MAP_FAILED &&
		    mremap(b, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, n) !=
		    MAP_FAILED)
			mremap(n, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, b);
		break;
	default:
		/* Only the kernel touches the pool: any write here could fault. */
		mprotect(b, len, PROT_NONE);
		mprotect(b, len, PROT_READ | PROT_WRITE);
	}
}

static void fuzz_calls(struct fuzz *f, long n);

/* A child: fuzzes a little in its inherited session, then ends. */
static void fuzz_process(struct fuzz *f)
{
	int how = rnd(&f->s) % 3;
	pid_t pid;

	ring_add(&f->ring, "%s", how == 0 ? "fork: 20 calls in the child" :
		 how == 1 ? "vfork, _exit" : "vfork, exec /bin/true");
	switch (how) {
	case 0:
		pid = fork();
		if (!pid) {
			f->bad = 0;	/* its own results */
			fuzz_calls(f, 20);
			if (f->bad)
				ring_dump(&f->bad_ring, "forked child");
			_exit(f->bad ? 3 : 0);
		}
		break;
	case 1:
		pid = vfork();
		if (!pid)
			_exit(0);
		break;
	default:
		pid = vfork();
		if (!pid) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(0);
		}
	}
	if (pid > 0) {
		int status;

		waitpid(pid, &status, 0);
		if (WIFSIGNALED(status) || WEXITSTATUS(status) == 3)
			note_child(f, status);
	}
}

static void fuzz_calls(struct fuzz *f, long n)
{
	for (long i = 0; i < n; i++, f->calls++) {
		switch (rnd(&f->s) % 16) {
		case 0 ... 7:
			fuzz_setup(f);
			break;
		case 8 ... 12:
			fuzz_other(f);
			break;
		case 13 ... 14:
			fuzz_memory(f);
			break;
		default:
			if (rnd(&f->s) % 8 == 0)
				fuzz_process(f);
			else
				fuzz_setup(f);
		}
	}
}

static void *fuzz_thread(void *arg)
{
	struct fuzz *f = arg;

	f->fd = open("/dev/profil", O_RDWR | O_CLOEXEC);
	if (f->fd < 0) {
		note_bad(f, "open", errno);
		return NULL;
	}
	fuzz_calls(f, FUZZ_CALLS);
	close(f->fd);
	return NULL;
}

/*
 * TEST() has a fixed 30 s timeout: the debug kernel takes 22-31 s for the
 * 10,400 calls in TCG.  An empty fixture, for a timeout of our own.
 */
FIXTURE(fuzzer) {
	int unused;
};

FIXTURE_SETUP(fuzzer)
{
}

FIXTURE_TEARDOWN(fuzzer)
{
}

TEST_F_TIMEOUT(fuzzer, ioctls_get_documented_errnos_and_leave_nothing, 300)
{
	unsigned long long seed = fz_seed();
	struct fuzz *f = calloc(FUZZ_THREADS, sizeof(*f));
	pthread_t t[FUZZ_THREADS];
	char dir[] = "/tmp/fuzzXXXXXX", who[32];
	FILE *mr;
	long long pins0;
	long calls = 0, armed = 0;
	int i;

	REQUIRE_MODULE();
	ASSERT_NE(NULL, f);
	TH_LOG("seed %llu (replay: make fuzz SEED=%llu)", seed, seed);
	pins0 = pins_held();
	ASSERT_NE(NULL, mkdtemp(dir));
	dirfd_ok = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (i = 0; i < POOL; i++) {
		pool[i] = mmap(NULL, (POOL_PAGES + 2) * 4096, PROT_NONE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(MAP_FAILED, pool[i]);
		pool[i] += 4096;
		ASSERT_EQ(0, mprotect(pool[i], POOL_PAGES * 4096,
				      PROT_READ | PROT_WRITE));
	}
	race_hz = kernel_hz();
	ASSERT_NE(0, race_hz);
	race_max_rate = 10000;
	if ((mr = fopen("/sys/module/profil/parameters/max_rate", "r"))) {
		if (fscanf(mr, "%u", &race_max_rate) != 1)
			race_max_rate = 10000;
		fclose(mr);
	}
	for (i = 0; i < FUZZ_THREADS; i++) {
		f[i].want = malloc(sizeof(*f[i].want));
		ASSERT_NE(NULL, f[i].want);
		f[i].s = seed * 0x9e3779b97f4a7c15ULL + i + 1;
		ASSERT_EQ(0, pthread_create(&t[i], NULL, fuzz_thread, &f[i]));
	}
	for (i = 0; i < FUZZ_THREADS; i++) {
		pthread_join(t[i], NULL);
		calls += f[i].calls;
		armed += f[i].armed;
		EXPECT_EQ(0, f[i].bad) {
			TH_LOG("thread %d: %ld undocumented results, first %s (call %lu; seed %llu)",
			       i, f[i].bad, f[i].what, f[i].bad_ring.n, seed);
			snprintf(who, sizeof(who), "thread %d", i);
			ring_dump(&f[i].bad_ring, who);
		}
	}
	TH_LOG("%ld calls, %ld successful setups", calls, armed);
	EXPECT_LE(10000, calls);
	EXPECT_LT(100, armed);	/* the valid ones get through */
	ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_OFF, NULL));
	EXPECT_EQ(0, vmpin_kb());
	EXPECT_PINS(pins0);
	EXPECT_EQ(0, memlock_balanced());
	close(dirfd_ok);
	if (system("rm -rf /tmp/fuzz??????"))
		TH_LOG("could not remove %s", dir);
	for (i = 0; i < FUZZ_THREADS; i++)
		free(f[i].want);
	free(f);
}

/* ------------------------------------------------------------------------
 * mutate: one field at a time, against the reference.
 */

#define PG		4096UL
#define KADDR		0xffff888000000000ULL	/* kernel memory */
#define KTEXT		0xffffffff81000000ULL

/* The arenas: pages between two PROT_NONE guard pages. */
enum {
	AR_SETUP,	/* the setup, alone at the start of its page */
	AR_REGS,	/* the region array: 1024 regions fill it */
	AR_OUT,		/* the struct profil_output */
	AR_NAMES,	/* the pre-arm's structs, then the name templates */
	AR_ARGS_RO,	/* read-only copies of structs */
	AR_BUF0,	/* bins */
	AR_BUF1,
	AR_IMG,		/* a profile image */
	AR_PRE,		/* the pre-arm's image and bins */
	AR_RO,		/* read-only */
	AR_SHM,		/* memfd, MAP_SHARED */
	AR_PFILE,	/* MAP_PRIVATE of a file */
	AR_SFILE,	/* MAP_SHARED of a file on ext2 or ramfs */
	AR_MIXED,	/* read-write, read-only, read-write */
	AR_N
};

static const struct {
	const char *name;
	unsigned int pages;
} arena_spec[AR_N] = {
	[AR_SETUP] = { "SETUP", 1 }, [AR_REGS] = { "REGS", 8 },
	[AR_OUT] = { "OUT", 1 }, [AR_NAMES] = { "NAMES", 1 },
	[AR_ARGS_RO] = { "ARGS_RO", 1 }, [AR_BUF0] = { "BUF0", 4 },
	[AR_BUF1] = { "BUF1", 4 }, [AR_IMG] = { "IMG", 4 },
	[AR_PRE] = { "PRE", 3 }, [AR_RO] = { "RO", 2 },
	[AR_SHM] = { "SHM", 2 }, [AR_PFILE] = { "PFILE", 2 },
	[AR_SFILE] = { "SFILE", 2 }, [AR_MIXED] = { "MIXED", 3 },
};

struct arena {
	unsigned char *base;	/* the guard page before; NULL: none */
	unsigned char *p;	/* the first page of use */
	unsigned int pages;
	enum fz_page pg[8];
	unsigned char *shadow;	/* what the pages must hold */
};

enum { T_PROFIL, T_U32, T_SPROFIL, T_AIX, T_FILE, T_KEEP, T_PCSAMPLE };
enum { PRE_NONE, PRE_PLAIN, PRE_FILE };

struct fcase {
	int tmpl;
	const char *mut;
	int v;
	uint64_t rng;
	uint64_t arg;			/* the setup as given to the call */
	struct profil_setup *s;		/* the setup the template made */
	struct profil_region *r;	/* its regions */
	uint32_t nr;
	struct profil_output *o;	/* its output, or NULL */
	char *name, *child;
	uint32_t enable;		/* the image's ctl */
	uint32_t reserved;
	uint64_t nr_recs;
	int pre;			/* a session armed before the call */
	bool pre_off;			/* and turned off again */
	int memlock;			/* RLIMIT_MEMLOCK at pages - 1 + this */
	bool memlock_cap;		/* root keeps CAP_IPC_LOCK */
	bool vfork;
	bool prefill;			/* bins at their maximum - 1 */
};

/* Per mode: what the fuzzer got. */
struct tally {
	long tried, ok, failed, mismatched;
};

static struct {
	struct arena ar[AR_N];
	unsigned char pattern[PG];
	char dir[64], sfile[128], pfile[128];
	int dirfd, dirfd_rd, regfd, regpath, nullfd, closedfd, fd;
	struct fz_env env;
	unsigned long long seed;
	struct ring ring;
	unsigned long ncase;
	int mismatches;
	int landings;		/* spins whose samples were looked for */
	bool had_ipc_lock;
	struct fz_want want, pre_want, dry;
	struct profil_setup *pre_s;
	struct tally tally;
} G;

static enum fz_page g_page(uint64_t addr)
{
	for (int i = 0; i < AR_N; i++) {
		struct arena *a = &G.ar[i];
		uint64_t lo = (uintptr_t)a->base, idx;

		if (!a->base || addr < lo || addr >= lo + (a->pages + 2) * PG)
			continue;
		idx = (addr - lo) / PG;
		if (!idx || idx > a->pages)
			return FZ_PG_NONE;
		return a->pg[idx - 1];
	}
	/* Nothing else the cases point at is mapped. */
	return FZ_PG_NONE;
}

static unsigned char *ap(int ar, size_t off)
{
	return G.ar[ar].p + off;
}

static uint64_t ap_u(int ar, size_t off)
{
	return (uintptr_t)ap(ar, off);
}

static uint64_t ar_end(int ar)
{
	return ap_u(ar, G.ar[ar].pages * PG);
}

/* The arena that holds @a, or -1. */
static int ar_of(uint64_t a)
{
	for (int i = 0; i < AR_N; i++)
		if (G.ar[i].base && a >= ap_u(i, 0) && a < ar_end(i))
			return i;
	return -1;
}

/* "BUF0+0x40", "guard after REGS", or the number. */
static const char *astr(uint64_t a, char *buf)
{
	for (int i = 0; i < AR_N; i++) {
		uint64_t lo = (uintptr_t)G.ar[i].base;

		if (!G.ar[i].base || a < lo || a >= lo + (G.ar[i].pages + 2) * PG)
			continue;
		if (a < lo + PG)
			sprintf(buf, "guard before %s+%#llx", arena_spec[i].name,
				(unsigned long long)(a - lo));
		else if (a >= ar_end(i))
			sprintf(buf, "guard after %s+%#llx", arena_spec[i].name,
				(unsigned long long)(a - ar_end(i)));
		else
			sprintf(buf, "%s+%#llx", arena_spec[i].name,
				(unsigned long long)(a - ap_u(i, 0)));
		return buf;
	}
	sprintf(buf, "%#llx", (unsigned long long)a);
	return buf;
}

enum { K_ANON, K_RO, K_SHM, K_PFILE, K_SFILE, K_MIXED };

static int arena_make(int i, int kind, const char *path)
{
	struct arena *a = &G.ar[i];
	size_t len;
	int fd = -1, flags = MAP_PRIVATE;
	unsigned int j;

	a->pages = arena_spec[i].pages;
	len = a->pages * PG;
	a->base = mmap(NULL, len + 2 * PG, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a->base == MAP_FAILED)
		return -1;
	a->p = a->base + PG;
	for (j = 0; j < a->pages; j++)
		a->pg[j] = kind == K_SFILE ? FZ_PG_SHFILE : FZ_PG_RW;
	switch (kind) {
	case K_SHM:
		fd = memfd_create("fuzz", MFD_CLOEXEC);
		flags = MAP_SHARED;
		break;
	case K_PFILE:
	case K_SFILE:
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		flags = kind == K_SFILE ? MAP_SHARED : MAP_PRIVATE;
		break;
	}
	if (kind == K_SHM || kind == K_PFILE || kind == K_SFILE) {
		if (fd < 0 || ftruncate(fd, len) ||
		    mmap(a->p, len, PROT_READ | PROT_WRITE, flags | MAP_FIXED,
			 fd, 0) == MAP_FAILED) {
			if (fd >= 0)
				close(fd);
			munmap(a->base, len + 2 * PG);
			a->base = NULL;
			return -1;
		}
		close(fd);
	} else if (mprotect(a->p, len, PROT_READ | PROT_WRITE)) {
		return -1;
	}
	/* Read-only pages hold the pattern for good. */
	for (j = 0; j < a->pages; j++)
		memcpy(a->p + j * PG, G.pattern, PG);
	if (kind == K_RO) {
		mprotect(a->p, len, PROT_READ);
		for (j = 0; j < a->pages; j++)
			a->pg[j] = FZ_PG_RO;
	}
	if (kind == K_MIXED) {
		mprotect(a->p + PG, PG, PROT_READ);
		a->pg[1] = FZ_PG_RO;
	}
	if (i == AR_ARGS_RO) {
		mprotect(a->p, len, PROT_READ);
		a->pg[0] = FZ_PG_RO;
	}
	a->shadow = malloc(len);
	return a->shadow ? 0 : -1;
}

/* Write @len bytes into a read-only arena. */
static void ro_write(int ar, size_t off, const void *src, size_t len)
{
	struct arena *a = &G.ar[ar];

	mprotect(a->p, a->pages * PG, PROT_READ | PROT_WRITE);
	memcpy(a->p + off, src, len);
	mprotect(a->p, a->pages * PG, PROT_READ);
}

/* The pattern on every writable page. */
static void arenas_reset(void)
{
	for (int i = 0; i < AR_N; i++) {
		struct arena *a = &G.ar[i];

		if (!a->base || i == AR_ARGS_RO)
			continue;
		for (unsigned int j = 0; j < a->pages; j++)
			if (a->pg[j] != FZ_PG_RO)
				memcpy(a->p + j * PG, G.pattern, PG);
	}
}

static void arenas_snapshot(void)
{
	for (int i = 0; i < AR_N; i++)
		if (G.ar[i].base)
			memcpy(G.ar[i].shadow, G.ar[i].p, G.ar[i].pages * PG);
}

static void shadow_sync(uint64_t a, uint64_t len)
{
	int i = ar_of(a);

	if (i >= 0 && a + len <= ar_end(i))
		memcpy(G.ar[i].shadow + (a - ap_u(i, 0)), (void *)(uintptr_t)a,
		       len);
}

static uint64_t shadow_u64(uint64_t a, unsigned int shift)
{
	int i = ar_of(a);
	const unsigned char *p = G.ar[i].shadow + (a - ap_u(i, 0));

	switch (shift) {
	case 1:
		return *(const uint16_t *)p;
	case 2:
		return *(const uint32_t *)p;
	default:
		return *(const uint64_t *)p;
	}
}

static uint64_t mem_u64(uint64_t a, unsigned int shift)
{
	switch (shift) {
	case 1:
		return *(volatile uint16_t *)(uintptr_t)a;
	case 2:
		return *(volatile uint32_t *)(uintptr_t)a;
	default:
		return *(volatile uint64_t *)(uintptr_t)a;
	}
}

/* The capabilities in effect: CAP_IPC_LOCK on or off (root only). */
static void cap_ipc_lock(bool on)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (!G.had_ipc_lock || syscall(SYS_capget, &h, d))
		return;
	if (on)
		d[0].effective |= 1U << CAP_IPC_LOCK;
	else
		d[0].effective &= ~(1U << CAP_IPC_LOCK);
	syscall(SYS_capset, &h, d);
}

/* What the reference needs to know of the world, as it is now. */
static void env_read(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2] = {};
	struct rlimit rl;
	char buf[32] = "";
	FILE *f;

	syscall(SYS_capget, &h, d);
	G.env.perfmon_capable = d[CAP_PERFMON / 32].effective >> (CAP_PERFMON % 32) & 1 ||
				d[0].effective >> CAP_SYS_ADMIN & 1;
	G.env.memlock_bound = !(d[0].effective >> CAP_IPC_LOCK & 1);
	getrlimit(RLIMIT_MEMLOCK, &rl);
	G.env.memlock_pages = rl.rlim_cur == RLIM_INFINITY ? ~0ULL :
			      rl.rlim_cur / PG;
	f = fopen("/sys/module/profil/parameters/max_rate", "r");
	G.env.max_rate = f && fgets(buf, sizeof(buf), f) ? atoi(buf) : 10000;
	if (f)
		fclose(f);
	f = fopen("/sys/module/profil/parameters/perfmon_only", "r");
	G.env.perfmon_only = f && fgets(buf, sizeof(buf), f) && buf[0] == 'Y';
	if (f)
		fclose(f);
	G.env.pid = getpid();
	G.env.page = g_page;
}

static int fz_init(void)
{
	char path[128];
	int i;

	memset(&G, 0, sizeof(G));
	G.seed = fz_seed();
	for (i = 0; i < (int)PG; i++)
		G.pattern[i] = 0xa5 ^ (i * 7) ^ (i >> 8);
	strcpy(G.dir, "/tmp/mutXXXXXX");
	if (!mkdtemp(G.dir))
		return -1;
	G.dirfd = open(G.dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	G.dirfd_rd = open(G.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	snprintf(path, sizeof(path), "%s/regular", G.dir);
	G.regfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	G.regpath = open(path, O_PATH | O_CLOEXEC);
	G.nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	G.closedfd = dup(G.nullfd);
	close(G.closedfd);
	G.fd = open("/dev/profil", O_RDWR | O_CLOEXEC);
	if (G.dirfd < 0 || G.dirfd_rd < 0 || G.regfd < 0 || G.regpath < 0 ||
	    G.nullfd < 0 || G.fd < 0)
		return -1;
	/* A private file mapping: on ext2 if the guest has it, else tmpfs. */
	snprintf(G.pfile, sizeof(G.pfile), "/mnt/ext/mut-p.%d", getpid());
	if (access("/mnt/ext", W_OK))
		snprintf(G.pfile, sizeof(G.pfile), "%s/pfile", G.dir);
	/* A shared one that is not shared memory. */
	snprintf(G.sfile, sizeof(G.sfile), "/mnt/ext/mut-s.%d", getpid());
	if (access("/mnt/ext", W_OK))
		snprintf(G.sfile, sizeof(G.sfile), "/mnt/ramfs/mut-s.%d", getpid());
	for (i = 0; i < AR_N; i++) {
		int kind = i == AR_RO ? K_RO : i == AR_SHM ? K_SHM :
			   i == AR_PFILE ? K_PFILE : i == AR_SFILE ? K_SFILE :
			   i == AR_MIXED ? K_MIXED : K_ANON;

		if (arena_make(i, kind, i == AR_PFILE ? G.pfile : G.sfile) &&
		    i != AR_SFILE)
			return -1;
	}
	if (!G.ar[AR_SFILE].base)
		FZ_LOG("no ext2 or ramfs file system: no shared file mapping in the cases");
	env_read();
	G.had_ipc_lock = !G.env.memlock_bound;
	G.env.hz = kernel_hz();
	return G.env.hz ? 0 : -1;
}

static void fz_fini(void)
{
	char cmd[128];

	dev_ioctl(PROFIL_IOC_OFF, NULL);
	unlink(G.sfile);
	unlink(G.pfile);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", G.dir);
	if (G.dir[0] && system(cmd))
		FZ_LOG("could not remove %s", G.dir);
}

static uint64_t crnd(struct fcase *c)
{
	return rnd(&c->rng);
}

static struct profil_region *reg(struct fcase *c, uint32_t i)
{
	return (struct profil_region *)((char *)c->r + i * c->s->region_size);
}

static void region(struct profil_region *r, uint64_t buf, uint64_t size,
		   uint64_t off, uint32_t scale, uint32_t flags)
{
	*r = (struct profil_region){ .buf = buf, .bufsize = size,
				     .offset = off, .scale = scale,
				     .flags = flags };
}

static uint32_t pick_rate(struct fcase *c)
{
	static const uint32_t rates[] = { 0, 100, 1000, 4000, 10000 };
	uint32_t r = rates[crnd(c) % 5];

	return r > G.env.max_rate ? G.env.max_rate : r;
}

/* A profile image of 2 pages at @img: head 576, 100 records of 16, ctl. */
static void output(struct profil_output *o, uint64_t img, const char *name,
		   const char *child, char *names)
{
	strcpy(names, name);
	strcpy(names + 64, child);
	*o = (struct profil_output){
		.size = sizeof(*o), .dirfd = G.dirfd, .rec_size = 16,
		.image = img, .image_size = 2 * PG, .head_size = 576,
		.nr_recs_max = 100, .ctl_offset = 576 + 1600,
		.name = (uintptr_t)names, .child_name = (uintptr_t)names + 64,
	};
}

#define SPIN_A		((uintptr_t)spin_a)
#define SPIN_B		((uintptr_t)spin_b)
#define SPIN16		((uintptr_t)spin16)

/* The pre-arm: a session the call replaces (or keeps the file of). */
static void pre_build(int pre, uint64_t *arg)
{
	struct profil_setup *s = (void *)ap(AR_NAMES, 0);
	struct profil_region *r = (void *)ap(AR_NAMES, 64);
	struct profil_output *o = (void *)ap(AR_NAMES, 128);
	uint64_t img = ap_u(AR_PRE, 0);

	*s = (struct profil_setup){
		.size = sizeof(*s), .rate = 1000, .nr_regions = 1,
		.region_size = sizeof(*r), .regions = (uintptr_t)r,
	};
	if (pre == PRE_FILE) {
		region(r, img + 64, 128, SPIN_A - 64, PROFIL_SCALE_ONE, 0);
		output(o, img, "pre.%p", "prec.%p", (char *)ap(AR_NAMES, 256));
		s->output = (uintptr_t)o;
	} else {
		region(r, ap_u(AR_PRE, 2 * PG + 64), 128, SPIN_A - 64,
		       PROFIL_SCALE_ONE, 0);
	}
	G.pre_s = s;
	*arg = (uintptr_t)s;
}

/* The valid setup of each mode. */
static void build(struct fcase *c)
{
	struct profil_region *r;
	uint64_t img;
	uint32_t i, k, order[3];

	memset(ap(AR_SETUP, 0), 0, PG);
	memset(ap(AR_REGS, 0), 0, 8 * PG);
	memset(ap(AR_OUT, 0), 0, PG);
	memset(ap(AR_NAMES, 0), 0, PG);
	c->s = (void *)ap(AR_SETUP, 0);
	c->arg = (uintptr_t)c->s;
	c->r = r = (void *)ap(AR_REGS, 0);
	c->name = (char *)ap(AR_NAMES, 1024);
	c->child = (char *)ap(AR_NAMES, 2048);
	c->enable = 1;
	c->nr_recs = 3;
	*c->s = (struct profil_setup){
		.size = sizeof(*c->s), .rate = pick_rate(c),
		.region_size = sizeof(*r), .regions = (uintptr_t)r,
	};
	switch (c->tmpl) {
	case T_PROFIL:
		c->nr = 1;
		region(&r[0], ap_u(AR_BUF0, 2 * (crnd(c) % 64)),
		       512 + crnd(c) % 2, SPIN_A - 256, PROFIL_SCALE_ONE, 0);
		break;
	case T_U32:
		c->nr = 1;
		region(&r[0], ap_u(AR_BUF1, 4 * (crnd(c) % 32)), 4 * 128,
		       SPIN_A - 256, 0x8000, PROFIL_REGION_U32);
		break;
	case T_SPROFIL:
		c->nr = 3;
		for (i = 0; i < 3; i++)
			order[i] = i;
		for (i = 2; i > 0; i--) {
			uint32_t j = crnd(c) % (i + 1), t = order[i];

			order[i] = order[j];
			order[j] = t;
		}
		region(&r[order[0]], ap_u(AR_BUF0, 0x100 + 2 * (crnd(c) % 32)),
		       128, SPIN_A - 64, PROFIL_SCALE_ONE, 0);
		region(&r[order[1]], ap_u(AR_BUF1, 0x200 + 4 * (crnd(c) % 32)),
		       4 * 64, SPIN16, 0x2000, PROFIL_REGION_U32);
		/* The overflow bin: 16 or 32 bits, or a log of 7 PCs. */
		k = crnd(c) % 3;
		region(&r[order[2]], ap_u(AR_BUF0, 0x800),
		       k == 2 ? 64 : crnd(c) % 2 ? 2 : 4, 0, 0,
		       PROFIL_REGION_OVERFLOW |
		       (k == 1 ? PROFIL_REGION_U32 : 0) |
		       (k == 2 ? PROFIL_REGION_PCLOG : 0));
		break;
	case T_AIX: {
		/* AIX's form: ascending disjoint PC ranges, each onto bytes. */
		uint64_t lo[3] = { SPIN16, SPIN_A - 128, SPIN_B - 64 };
		uint64_t hi[3] = { SPIN16 + 16 * 64, SPIN_A + 128, SPIN_B + 64 };
		uint64_t bytes[3] = { 256, 128, 128 };

		for (i = 0; i < 3; i++)
			order[i] = i;
		for (i = 0; i < 2; i++)	/* by address */
			for (uint32_t j = 0; j < 2 - i; j++)
				if (lo[order[j]] > lo[order[j + 1]]) {
					uint32_t t = order[j];

					order[j] = order[j + 1];
					order[j + 1] = t;
				}
		c->nr = 3;
		c->s->rate = 0;
		for (i = 0; i < 3; i++) {
			uint32_t k = order[i];

			region(&r[i], ap_u(AR_BUF0, 512 * k + 2 * (crnd(c) % 8)),
			       bytes[k], lo[k], (uint32_t)(bytes[k] * PROFIL_SCALE_ONE /
							   (hi[k] - lo[k])), 0);
		}
		break;
	}
	case T_FILE:
		img = ap_u(AR_IMG, 8 * (crnd(c) % 64));
		c->nr = 1 + crnd(c) % 2;
		region(&r[0], img + 64, 512, SPIN_A - 256, PROFIL_SCALE_ONE, 0);
		if (c->nr == 2)
			region(&r[1], img + 60, 4, 0, 0, PROFIL_REGION_OVERFLOW |
			       (crnd(c) % 2 ? PROFIL_REGION_U32 : 0));
		c->o = (void *)ap(AR_OUT, 0);
		output(c->o, img, "f.%p", "c.%p", c->name);
		c->o->child_name = (uintptr_t)c->child;
		strcpy(c->child, "c.%p");
		c->s->output = (uintptr_t)c->o;
		break;
	case T_KEEP:
		/* Bins the running arm's image keeps in reserve. */
		img = ap_u(AR_PRE, 0);
		c->pre = PRE_FILE;
		c->nr = 2;
		c->s->flags = PROFIL_F_KEEP_FILE;
		region(&r[0], img + 192, 128, SPIN_A - 64, PROFIL_SCALE_ONE, 0);
		region(&r[1], img + 320, 64, SPIN16, 0x4000, PROFIL_REGION_U32);
		break;
	case T_PCSAMPLE:
		c->nr = 1;
		c->s->mode = PROFIL_MODE_PCSAMPLE;
		c->s->flags = crnd(c) % 2 ? PROFIL_F_NOINHERIT : 0;
		region(&r[0], ap_u(AR_BUF1, 8 * (crnd(c) % 64)), 8 * 512, 0,
		       0, 0);
		break;
	}
	c->s->nr_regions = c->nr;
}

/* ---- the mutations: each returns 1 done, 0 no such variant, -1 skip. ---- */

#define NEXT(v, n)	do { if ((v) >= (n)) return 0; } while (0)

static int m_base(struct fcase *c, int v)
{
	NEXT(v, 3);
	/*
	 * The first base case's spin is one the landing check can look at:
	 * 60 ms at 10 kHz is more PCs than half a pcsample array holds.
	 */
	if (!v && c->tmpl == T_PCSAMPLE && c->s->rate > 4000)
		c->s->rate = 4000;
	return 1;
}

static int m_setup_size(struct fcase *c, int v)
{
	static const uint32_t sizes[] = { 0, 8, 31, 32, 33, 36, 39, 41, 48,
					  48, 4096, 4096, 4097, ~0U };

	NEXT(v, 14);
	c->s->size = sizes[v];
	if (v == 9 || v == 11)	/* a tail the kernel does not know */
		((char *)c->s)[sizes[v] - 1] = 1;
	return 1;
}

/* Move the setup to @to (within AR_SETUP or anywhere readable). */
static void setup_move(struct fcase *c, uint64_t to, size_t len)
{
	unsigned char tmp[64];

	memcpy(tmp, c->s, sizeof(*c->s));
	memset(c->s, 0, sizeof(*c->s));
	memcpy((void *)(uintptr_t)to, tmp, len);
	c->s = (void *)(uintptr_t)to;
	c->arg = to;
}

static int m_setup_place(struct fcase *c, int v)
{
	uint64_t end = ar_end(AR_SETUP);

	NEXT(v, 9);
	switch (v) {
	case 0:		/* ends at the guard */
		setup_move(c, end - 40, 40);
		break;
	case 1:		/* version 0 at the guard: 'output' is not read */
		c->s->size = 32;
		setup_move(c, end - 32, 32);
		break;
	case 2:		/* crosses into the guard */
		setup_move(c, end - 36, 36);
		break;
	case 3:		/* read-only: the rate cannot go back */
		ro_write(AR_ARGS_RO, 0, c->s, sizeof(*c->s));
		c->arg = ap_u(AR_ARGS_RO, 0);
		break;
	case 4:
		c->arg = 0;
		break;
	case 5:
		c->arg = end;
		break;
	case 6:
		c->arg = KTEXT;
		break;
	case 7:		/* misaligned */
		setup_move(c, ap_u(AR_SETUP, 1), 40);
		break;
	case 8:		/* even the size field crosses */
		setup_move(c, end - 2, 2);
		break;
	}
	return 1;
}

static int m_flags(struct fcase *c, int v)
{
	static const uint32_t f[] = {
		PROFIL_F_NOINHERIT, PROFIL_F_KEEP_FILE,
		PROFIL_F_KEEP_FILE | PROFIL_F_NOINHERIT, 0x4, 0x8,
		0x80000000, ~0U, 0,
	};

	NEXT(v, 8);
	/* (Without keep, the old file is written before the new bins in it count.) */
	if (c->tmpl == T_KEEP && v == 7)
		return -1;
	if (c->tmpl == T_KEEP)	/* keep stays */
		c->s->flags = f[v] | (v == 7 ? 0 : PROFIL_F_KEEP_FILE);
	else
		c->s->flags |= f[v];
	return 1;
}

static int m_mode(struct fcase *c, int v)
{
	static const uint32_t m[] = { 2, 7, 0x80000000, ~0U };

	NEXT(v, 5);
	c->s->mode = v == 4 ? !c->s->mode : m[v];
	return 1;
}

static int m_rate(struct fcase *c, int v)
{
	uint32_t max = G.env.max_rate;
	const uint32_t r[] = { 0, 1, 2, 1 + crnd(c) % max, max, max + 1,
			       100000, 100001, ~0U };

	NEXT(v, 9);
	c->s->rate = r[v];
	return 1;
}

/* A region of the setup that is not the overflow one, or -1. */
static int plain_region(struct fcase *c)
{
	for (uint32_t i = 0; i < c->nr; i++)
		if (!(reg(c, i)->flags & PROFIL_REGION_OVERFLOW))
			return i;
	return -1;
}

static int m_nr(struct fcase *c, int v)
{
	int k = plain_region(c);
	uint32_t i, n;

	NEXT(v, 7);
	switch (v) {
	case 0:
		c->s->nr_regions = 0;
		break;
	case 1:
		if (c->nr < 2)
			return -1;
		c->s->nr_regions = c->nr - 1;
		break;
	case 2:		/* the next entry is all zero */
		c->s->nr_regions = c->nr + 1;
		break;
	case 3:		/* one region more, a copy */
	case 4:		/* 1024: the array ends at the guard */
	case 5:		/* 1025 */
		n = v == 3 ? c->nr + 1 : v == 4 ? PROFIL_MAX_REGIONS : 1025;
		for (i = c->nr; i < n && i < PROFIL_MAX_REGIONS; i++)
			*reg(c, i) = *reg(c, k);
		c->s->nr_regions = n;
		break;
	case 6:
		c->s->nr_regions = ~0U;
		break;
	}
	return 1;
}

/* Lay the regions out again, @size bytes each, tails zero. */
static void relayout(struct fcase *c, uint32_t size)
{
	struct profil_region tmp[8];

	for (uint32_t i = 0; i < c->nr; i++)
		tmp[i] = *reg(c, i);
	memset(c->r, 0, 8 * PG);
	c->s->region_size = size;
	for (uint32_t i = 0; i < c->nr; i++)
		memcpy(reg(c, i), &tmp[i], sizeof(tmp[i]));
}

static int m_region_size(struct fcase *c, int v)
{
	static const uint32_t sz[] = { 0, 16, 31, 33, 40, 64, 40, 4096, 4097,
				       ~0U };

	NEXT(v, 10);
	if (sz[v] <= PG && sz[v] >= sizeof(struct profil_region))
		relayout(c, sz[v]);
	else
		c->s->region_size = sz[v];
	if (v == 6)	/* a tail the kernel does not know, in the last */
		((char *)reg(c, c->nr - 1))[39] = 1;
	return 1;
}

/* The regions to @to, of which the first @len bytes are writable. */
static void regions_move(struct fcase *c, uint64_t to, size_t len)
{
	unsigned char tmp[8 * sizeof(struct profil_region)];

	memcpy(tmp, c->r, c->nr * c->s->region_size);
	memset(c->r, 0, c->nr * c->s->region_size);
	memcpy((void *)(uintptr_t)to, tmp, len);
	c->r = (void *)(uintptr_t)to;
	c->s->regions = to;
}

static int m_regions_ptr(struct fcase *c, int v)
{
	uint64_t end = ar_end(AR_REGS), len = c->nr * sizeof(*c->r);

	NEXT(v, 8);
	switch (v) {
	case 0:
		c->s->regions = 0;
		break;
	case 1:
		c->s->regions = KADDR;
		break;
	case 2:
		c->s->regions = end;
		break;
	case 3:		/* ends at the guard */
		regions_move(c, end - len, len);
		break;
	case 4:		/* its last byte in the guard */
		regions_move(c, end - len + 1, len - 1);
		break;
	case 5:		/* read-only: only read */
		ro_write(AR_ARGS_RO, 0, c->r, len);
		c->s->regions = ap_u(AR_ARGS_RO, 0);
		break;
	case 6:		/* misaligned */
		regions_move(c, ap_u(AR_REGS, 1), len);
		break;
	case 7:
		c->s->regions = (uintptr_t)G.ar[AR_REGS].base;
		break;
	}
	return 1;
}

/* An output for a mode that has none: an image in IMG, no bins in it. */
static void add_output(struct fcase *c)
{
	c->o = (void *)ap(AR_OUT, 0);
	output(c->o, ap_u(AR_IMG, 0), "f.%p", "c.%p", c->name);
	c->o->child_name = (uintptr_t)c->child;
	strcpy(c->child, "c.%p");
	c->s->output = (uintptr_t)c->o;
}

static void output_move(struct fcase *c, uint64_t to, size_t len)
{
	unsigned char tmp[sizeof(*c->o)];

	memcpy(tmp, c->o, sizeof(tmp));
	memset(c->o, 0, sizeof(tmp));
	memcpy((void *)(uintptr_t)to, tmp, len);
	c->o = (void *)(uintptr_t)to;
	c->s->output = to;
}

static int m_output_ptr(struct fcase *c, int v)
{
	uint64_t end = ar_end(AR_OUT);

	NEXT(v, 9);
	if (!c->o) {	/* a profile file where the mode has none */
		if (v)
			return 0;
		add_output(c);
		return 1;
	}
	switch (v) {
	case 0:
		c->s->output = 0;
		break;
	case 1:
		c->s->output = KADDR;
		break;
	case 2:
		c->s->output = end;
		break;
	case 3:		/* read-only: only read */
		ro_write(AR_ARGS_RO, 0, c->o, sizeof(*c->o));
		c->s->output = ap_u(AR_ARGS_RO, 0);
		break;
	case 4:
		output_move(c, end - sizeof(*c->o), sizeof(*c->o));
		break;
	case 5:
		output_move(c, end - sizeof(*c->o) + 4, sizeof(*c->o) - 4);
		break;
	case 6:
		output_move(c, ap_u(AR_OUT, 4), sizeof(*c->o));
		break;
	case 7:
		c->s->output = 1;
		break;
	case 8:		/* version 0 of the setup: no output read */
		c->s->size = PROFIL_SETUP_SIZE_VER0;
		break;
	}
	return 1;
}

static int m_vfork(struct fcase *c, int v)
{
	NEXT(v, 1);
	c->vfork = true;
	return 1;
}

static int m_rearm(struct fcase *c, int v)
{
	NEXT(v, 6);
	if (c->tmpl == T_KEEP)
		return 0;
	switch (v) {
	case 0:
		c->pre = PRE_PLAIN;
		break;
	case 1:
		c->pre = PRE_FILE;
		break;
	case 2:		/* a setup that fails leaves the session as it was */
		c->pre = PRE_FILE;
		c->s->rate = G.env.max_rate + 1;
		break;
	case 3:
		c->pre = PRE_PLAIN;
		c->s->nr_regions = 0;
		break;
	case 4:		/* carry the running file on */
		c->pre = PRE_FILE;
		c->s->flags |= PROFIL_F_KEEP_FILE;
		break;
	case 5:		/* without one */
		c->pre = PRE_PLAIN;
		c->s->flags |= PROFIL_F_KEEP_FILE;
		break;
	}
	return 1;
}

/* T_KEEP: the running session has no file to keep. */
static int m_keep_state(struct fcase *c, int v)
{
	NEXT(v, 3);
	if (c->tmpl != T_KEEP)
		return 0;
	if (v == 0)
		c->pre = PRE_NONE;
	else if (v == 1)
		c->pre = PRE_PLAIN;
	else
		c->pre_off = true;
	return 1;
}

static int m_memlock(struct fcase *c, int v)
{
	NEXT(v, 3);
	if (v == 2 && !G.had_ipc_lock)
		return -1;
	c->memlock = v == 1 ? 1 : 0;
	c->memlock_cap = v == 2;
	c->memlock |= 0x100;	/* on */
	return 1;
}

static int m_prefill(struct fcase *c, int v)
{
	NEXT(v, 1);
	if (c->tmpl == T_PCSAMPLE)
		return 0;
	c->prefill = true;
	return 1;
}

/* The region a region mutation changes. */
static struct profil_region *some_region(struct fcase *c)
{
	return reg(c, crnd(c) % c->nr);
}

static unsigned int bin_shift(struct fcase *c, const struct profil_region *r)
{
	if (c->s->mode == PROFIL_MODE_PCSAMPLE)
		return 3;
	return r->flags & PROFIL_REGION_U32 ? 2 : 1;
}

/* @r's bins moved to arena @ar, at the same offset within a page. */
static int move_bins(struct profil_region *r, int ar)
{
	int from = ar_of(r->buf);

	if (!G.ar[ar].base || from < 0)
		return -1;
	r->buf = ap_u(ar, (r->buf - ap_u(from, 0)) % PG);
	return 1;
}

static int m_r_buf(struct fcase *c, int v)
{
	struct profil_region *r = some_region(c);
	int ar = ar_of(r->buf);
	uint64_t len = r->bufsize >> bin_shift(c, r) << bin_shift(c, r);

	NEXT(v, 15);
	switch (v) {
	case 0:
		r->buf += 1;
		break;
	case 1:
		r->buf += 2;
		break;
	case 2:
		r->buf += 4;
		break;
	case 3:
		r->buf = ar_end(ar);
		break;
	case 4:
		r->buf = (uintptr_t)G.ar[ar].base;
		break;
	case 5:
		return move_bins(r, AR_RO);
	case 6:		/* across a read-only page */
		r->buf = ap_u(AR_MIXED, PG - 8);
		break;
	case 7:
		return move_bins(r, AR_SHM);
	case 8:
		return move_bins(r, AR_PFILE);
	case 9:
		return move_bins(r, AR_SFILE);
	case 10:
		r->buf = 0;
		break;
	case 11:
		r->buf = KADDR;
		break;
	case 12:	/* wraps */
		r->buf = ~0ULL - 7;
		break;
	case 13:	/* ends at the guard */
		r->buf = ar_end(ar) - len;
		break;
	case 14:	/* past a read-only page */
		r->buf = ap_u(AR_MIXED, 2 * PG);
		break;
	}
	return 1;
}

static int m_r_bufsize(struct fcase *c, int v)
{
	struct profil_region *r = some_region(c);
	uint64_t bin = 1ULL << bin_shift(c, r);
	uint64_t left = ar_end(ar_of(r->buf)) - r->buf;
	const uint64_t sz[] = { 0, 1, bin - 1, bin, r->bufsize + 1, left,
				left + bin, PROFIL_MAX_BUFSIZE,
				PROFIL_MAX_BUFSIZE + 1, ~0ULL };

	NEXT(v, 10);
	r->bufsize = sz[v];
	return 1;
}

static int m_r_offset(struct fcase *c, int v)
{
	const uint64_t off[] = { 0, 1, SPIN_A, SPIN_A + 1, ~0ULL,
				 ~0ULL - 100, crnd(c) };

	NEXT(v, 7);
	some_region(c)->offset = off[v];
	return 1;
}

static int m_r_scale(struct fcase *c, int v)
{
	static const uint32_t sc[] = { 0, 1, 2, 0x8000, 0xffff, 0x10000,
				       0x10001, 0x80000000, ~0U };

	NEXT(v, 9);
	some_region(c)->scale = sc[v];
	return 1;
}

static int m_r_flags(struct fcase *c, int v)
{
	struct profil_region *r = some_region(c);
	int k = plain_region(c);

	NEXT(v, 7);
	switch (v) {
	case 0:
		r->flags ^= PROFIL_REGION_U32;
		break;
	case 1:
		r->flags ^= PROFIL_REGION_OVERFLOW;
		break;
	case 2:
		r->flags |= 0x4;
		break;
	case 3:
		r->flags |= 0x80000000;
		break;
	case 4:
		r->flags = ~0U;
		break;
	case 5:		/* one more overflow region, as it should be */
	case 6:		/* and one with an offset */
		if (k < 0)
			return -1;
		r = reg(c, k);
		r->flags |= PROFIL_REGION_OVERFLOW;
		r->scale = 0;
		r->offset = v == 6 ? SPIN_A : 0;
		break;
	}
	return 1;
}

/* Regions over the same bins, the same PCs, half of each. */
static int m_r_overlap(struct fcase *c, int v)
{
	struct profil_region *a, *b;
	int k = plain_region(c);

	NEXT(v, 3);
	if (k < 0 || c->s->mode == PROFIL_MODE_PCSAMPLE)
		return -1;
	a = reg(c, k);
	if (c->nr < 2 || reg(c, (k + 1) % c->nr)->flags & PROFIL_REGION_OVERFLOW) {
		/* A second region first, where it changes nothing. */
		*reg(c, c->nr) = *a;
		c->s->nr_regions = ++c->nr;
		b = reg(c, c->nr - 1);
	} else {
		b = reg(c, (k + 1) % c->nr);
	}
	switch (v) {
	case 0:
		b->buf = a->buf;
		break;
	case 1:
		b->offset = a->offset;
		break;
	case 2:
		b->buf = a->buf + (a->bufsize / 2 & ~3ULL);
		b->offset = a->offset + 64;
		break;
	}
	return 1;
}

/* ---- the output: only where the mode has one ---- */

static int m_o_size(struct fcase *c, int v)
{
	static const uint32_t sz[] = { 0, 8, 71, 73, 80, 80, 4096, 4096, 4097,
				       ~0U };

	NEXT(v, 10);
	if (!c->o)
		return 0;
	c->o->size = sz[v];
	if (v == 5 || v == 7)
		((char *)c->o)[sz[v] - 1] = 1;
	return 1;
}

static int m_o_flags(struct fcase *c, int v)
{
	static const uint32_t f[] = { 1, 2, 0x80000000 };

	NEXT(v, 3);
	if (!c->o)
		return 0;
	c->o->flags = f[v];
	return 1;
}

static int m_o_dirfd(struct fcase *c, int v)
{
	const int fd[] = { -1, AT_FDCWD, G.closedfd, 1000, G.regfd, G.nullfd,
			   G.regpath, G.dirfd_rd };

	NEXT(v, 8);
	if (!c->o)
		return 0;
	c->o->dirfd = fd[v];
	return 1;
}

static int m_o_rec_size(struct fcase *c, int v)
{
	static const uint32_t rs[] = { 0, 1, 8, 4096, 4097, ~0U };

	NEXT(v, 6);
	if (!c->o)
		return 0;
	c->o->rec_size = rs[v];
	return 1;
}

/* The image, and the bins in it, to @to. */
static int image_move(struct fcase *c, int ar, uint64_t off)
{
	uint64_t from = c->o->image, to;

	if (!G.ar[ar].base)
		return -1;
	to = ap_u(ar, off);
	for (uint32_t i = 0; i < c->nr; i++) {
		struct profil_region *r = reg(c, i);

		if (r->buf >= from && r->buf < from + c->o->image_size)
			r->buf += to - from;
	}
	c->o->image = to;
	return 1;
}

static int m_o_image(struct fcase *c, int v)
{
	NEXT(v, 10);
	if (!c->o)
		return 0;
	switch (v) {
	case 0:
		c->o->image += 4;
		break;
	case 1:
		return image_move(c, ar_of(c->o->image),
				  G.ar[ar_of(c->o->image)].pages * PG - 2 * PG + 8);
	case 2:
		c->o->image = ar_end(ar_of(c->o->image));
		break;
	case 3:
		return image_move(c, AR_RO, 0);
	case 4:
		return image_move(c, AR_SHM, 0);
	case 5:
		return image_move(c, AR_PFILE, 0);
	case 6:
		return image_move(c, AR_SFILE, 0);
	case 7:
		c->o->image = 0;
		break;
	case 8:
		c->o->image = KADDR;
		break;
	case 9:
		c->o->image = ~7ULL;
		break;
	}
	return 1;
}

static int m_o_image_size(struct fcase *c, int v)
{
	struct profil_output *o = c->o;
	uint64_t left;

	NEXT(v, 12);
	if (!o)
		return 0;
	left = ar_end(ar_of(o->image)) - o->image;
	const uint64_t sz[] = { 0, 4, 8, o->ctl_offset + 16, o->ctl_offset + 8,
				o->image_size - 8, o->image_size + 8, left,
				left + 8, PROFIL_MAX_BUFSIZE,
				PROFIL_MAX_BUFSIZE + 8, ~7ULL };

	o->image_size = sz[v];
	return 1;
}

static int m_o_layout(struct fcase *c, int v)
{
	struct profil_output *o = c->o;
	uint64_t recs;

	NEXT(v, 16);
	if (!o)
		return 0;
	recs = o->nr_recs_max * o->rec_size;
	switch (v) {
	case 0:
		o->head_size = 0;
		break;
	case 1:
		o->head_size = o->ctl_offset - recs;
		break;
	case 2:
		o->head_size = o->ctl_offset - recs + 1;
		break;
	case 3:
		o->head_size = ~0ULL;
		break;
	case 4:
		o->nr_recs_max = 0;
		break;
	case 5:
		o->nr_recs_max = (o->ctl_offset - o->head_size) / o->rec_size;
		break;
	case 6:
		o->nr_recs_max = (o->ctl_offset - o->head_size) / o->rec_size + 1;
		break;
	case 7:
		o->nr_recs_max = ~0ULL;
		break;
	case 8:
		o->nr_recs_max = 1ULL << 60;
		break;
	case 9:
		o->ctl_offset += 4;
		break;
	case 10:
		o->ctl_offset = o->image_size - 16;
		break;
	case 11:
		o->ctl_offset = o->image_size - 8;
		break;
	case 12:
		o->ctl_offset = o->image_size;
		break;
	case 13:
		o->ctl_offset = o->head_size + recs - 8;
		break;
	case 14:
		o->ctl_offset = ~7ULL;
		break;
	case 15:
		o->ctl_offset = o->head_size + recs;
		break;
	}
	return 1;
}

static const char *const names[] = {
	"", ".", "..", "a/b", "/", "%", "%x", "a%", "%%", "%p%p%%", "...",
	"-", "%%p", "%p/",
};

/* Name templates: @child picks the forked children's. */
static int name_variant(struct fcase *c, int v, bool child)
{
	char *t = child ? c->child : c->name;
	int nv = sizeof(names) / sizeof(names[0]), n;
	char buf[700];
	__u64 *field;

	NEXT(v, nv + 11);
	if (!c->o)
		return 0;
	field = child ? &c->o->child_name : &c->o->name;
	if (v < nv) {
		strcpy(t, names[v]);
		return 1;
	}
	memset(buf, 0, sizeof(buf));
	switch (v - nv) {
	case 0:		/* 255 bytes */
	case 1:		/* 256 */
		memset(buf, 'x', 255 + v - nv);
		break;
	case 2:		/* 255 once %p is the longest process ID (7 digits) */
	case 3:		/* and one more */
		n = child ? 7 : snprintf(NULL, 0, "%d", (int)getpid());
		strcpy(buf, "%p");
		memset(buf + 2, 'y', 255 - n + (v - nv - 2));
		break;
	case 4:		/* a template of 300 bytes, a name of 150 */
		for (n = 0; n < 150; n++)
			strcat(buf, "%%");
		break;
	case 5:
		*field = 0;
		return 1;
	case 6:		/* runs into the guard */
		*field = ar_end(AR_NAMES) - 4;
		memcpy(ap(AR_NAMES, PG - 4), "abcd", 4);
		return 1;
	case 7:		/* ends at the guard */
		*field = ar_end(AR_NAMES) - 4;
		memcpy(ap(AR_NAMES, PG - 4), "abc", 4);
		return 1;
	case 8:		/* read-only */
		ro_write(AR_ARGS_RO, 512, "ro.%p", 6);
		*field = ap_u(AR_ARGS_RO, 512);
		return 1;
	case 9:
		*field = KADDR;
		return 1;
	case 10:	/* no end within 256 bytes, then the guard */
		*field = ar_end(AR_NAMES) - 300;
		memset(ap(AR_NAMES, PG - 300), 'z', 300);
		return 1;
	}
	strcpy(t, buf);
	return 1;
}

static int m_o_name(struct fcase *c, int v)
{
	return name_variant(c, v, false);
}

static int m_o_child(struct fcase *c, int v)
{
	return name_variant(c, v, true);
}

static int m_o_ctl(struct fcase *c, int v)
{
	NEXT(v, 6);
	if (!c->o && c->tmpl != T_KEEP)
		return 0;
	switch (v) {
	case 0:
		c->enable = 0;
		break;
	case 1:
		c->nr_recs = 0;
		break;
	case 2:
		c->nr_recs = 100;
		break;
	case 3:
		c->nr_recs = 101;
		break;
	case 4:
		c->nr_recs = ~0ULL;
		break;
	case 5:		/* never interpreted */
		c->reserved = ~0U;
		break;
	}
	return 1;
}

struct mut {
	const char *name;
	int (*fn)(struct fcase *c, int v);
};

static const struct mut muts[] = {
	{ "base", m_base },
	{ "setup.size", m_setup_size },
	{ "setup@", m_setup_place },
	{ "setup.flags", m_flags },
	{ "setup.mode", m_mode },
	{ "setup.rate", m_rate },
	{ "setup.nr_regions", m_nr },
	{ "setup.region_size", m_region_size },
	{ "setup.regions", m_regions_ptr },
	{ "setup.output", m_output_ptr },
	{ "vfork child", m_vfork },
	{ "re-arm", m_rearm },
	{ "keep without a file", m_keep_state },
	{ "RLIMIT_MEMLOCK", m_memlock },
	{ "bins near their max", m_prefill },
	{ "region.buf", m_r_buf },
	{ "region.bufsize", m_r_bufsize },
	{ "region.offset", m_r_offset },
	{ "region.scale", m_r_scale },
	{ "region.flags", m_r_flags },
	{ "regions overlap", m_r_overlap },
	{ "output.size", m_o_size },
	{ "output.flags", m_o_flags },
	{ "output.dirfd", m_o_dirfd },
	{ "output.rec_size", m_o_rec_size },
	{ "output.image", m_o_image },
	{ "output.image_size", m_o_image_size },
	{ "output layout", m_o_layout },
	{ "output.name", m_o_name },
	{ "output.child_name", m_o_child },
	{ "image ctl", m_o_ctl },
};

/* ---- running a case ---- */

static void dump_setup(uint64_t arg)
{
	struct profil_setup s = {};
	char a[64], b[64], d[64];
	uint32_t i;

	if (!fz_mem(&G.env, arg, PROFIL_SETUP_SIZE_VER0, FZ_READABLE)) {
		FZ_LOG("  setup at %s (unreadable)", astr(arg, a));
		return;
	}
	memcpy(&s, (void *)(uintptr_t)arg,
	       fz_mem(&G.env, arg, sizeof(s), FZ_READABLE) ? sizeof(s) :
	       PROFIL_SETUP_SIZE_VER0);
	FZ_LOG("  setup at %s: size %u flags %#x mode %u rate %u nr_regions %u region_size %u regions %s output %s",
	       astr(arg, a), s.size, s.flags, s.mode, s.rate,
	       s.nr_regions, s.region_size, astr(s.regions, b),
	       astr(s.output, d));
	for (i = 0; i < s.nr_regions && i < 8 && s.region_size <= PG; i++) {
		uint64_t ra = s.regions + (uint64_t)i * s.region_size;
		const struct profil_region *r = (const void *)(uintptr_t)ra;

		if (!fz_mem(&G.env, ra, sizeof(*r), FZ_READABLE)) {
			FZ_LOG("  region %u at %s: unreadable", i, astr(ra, a));
			break;
		}
		FZ_LOG("  region %u: buf %s bufsize %#llx offset %#llx (spin_a%+lld) scale %#x flags %#x",
		       i, astr(r->buf, a), (unsigned long long)r->bufsize,
		       (unsigned long long)r->offset,
		       (long long)(r->offset - SPIN_A), r->scale, r->flags);
	}
	if (s.nr_regions > 8 && s.nr_regions <= PROFIL_MAX_REGIONS)
		FZ_LOG("  ... %u regions", s.nr_regions);
	if (s.size >= 40 && s.output &&
	    fz_mem(&G.env, s.output, sizeof(struct profil_output), FZ_READABLE)) {
		const struct profil_output *o = (const void *)(uintptr_t)s.output;

		FZ_LOG("  output: size %u flags %#x dirfd %d rec_size %u image %s image_size %#llx head_size %#llx nr_recs_max %#llx ctl_offset %#llx",
		       o->size, o->flags, o->dirfd, o->rec_size,
		       astr(o->image, a), (unsigned long long)o->image_size,
		       (unsigned long long)o->head_size,
		       (unsigned long long)o->nr_recs_max,
		       (unsigned long long)o->ctl_offset);
		FZ_LOG("  names: %s, %s", astr(o->name, a), astr(o->child_name, b));
		if (fz_mem(&G.env, o->name, 1, FZ_READABLE))
			FZ_LOG("  name \"%.60s\"%s", (char *)(uintptr_t)o->name,
			       strnlen((char *)(uintptr_t)o->name, 61) > 60 ? "..." : "");
		if (fz_mem(&G.env, o->child_name, 1, FZ_READABLE))
			FZ_LOG("  child_name \"%.60s\"%s",
			       (char *)(uintptr_t)o->child_name,
			       strnlen((char *)(uintptr_t)o->child_name, 61) > 60 ? "..." : "");
	}
}

static const char *const tmpl_names[] = {
	"profil", "u32", "sprofil", "aix", "file", "keep", "pcsample",
};

/* A check of a case failed: say which, with the case and the calls. */
static void __attribute__((format(printf, 2, 3)))
mismatch(struct fcase *c, const char *fmt, ...)
{
	char what[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	ring_add(&G.ring, "  MISMATCH: %s", what);
	if (G.mismatches++ < 4) {
		FZ_LOG("MISMATCH in case %lu, %s: %s#%d: %s", G.ncase,
		       tmpl_names[c->tmpl], c->mut, c->v, what);
		dump_setup(c->arg);
		ring_dump(&G.ring, "mutate");
		FZ_LOG("replay: make fuzz SEED=%llu (PROFIL_FUZZ_SEED=%llu)",
		       G.seed, G.seed);
	}
}

static struct profil_stats stats(void)
{
	struct profil_stats st;

	memset(&st, 0xcc, sizeof(st));
	st.size = sizeof(st);
	if (ioctl(G.fd, PROFIL_IOC_STATS, &st))
		memset(&st, 0xff, sizeof(st));
	return st;
}

/* The ioctl, as the process or from a vfork child: 0 or an errno. */
static int call(unsigned long cmd, uint64_t arg, bool from_vfork)
{
	static volatile int res;
	pid_t pid;

	if (!from_vfork)
		return ioctl(G.fd, cmd, (unsigned long)arg) ? errno : 0;
	res = -1;
	pid = vfork();
	if (!pid) {
		res = ioctl(G.fd, cmd, (unsigned long)arg) ? errno : 0;
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	return res;
}

/* A __u32 at @a, however aligned. */
static uint32_t get_u32(uint64_t a)
{
	uint32_t v;

	memcpy(&v, (void *)(uintptr_t)a, sizeof(v));
	return v;
}

static bool in_set(fz_set set, int e)
{
	return set >> e & 1;
}

/* Prepare the image of @w's file and zero (or prefill) @w's bins. */
static void prep_bins(const struct fz_want *w, const struct profil_output *o,
		      uint32_t enable, uint64_t nr_recs, uint32_t reserved,
		      bool prefill)
{
	if (o) {
		unsigned char *img = (void *)(uintptr_t)o->image;
		struct profil_output_ctl *ctl = (void *)(img + o->ctl_offset);
		uint64_t i, recs = o->nr_recs_max * o->rec_size;

		for (i = 0; i < o->head_size; i++)
			img[i] = i * 13 + 1;
		for (i = 0; i < recs; i++)
			img[o->head_size + i] = i * 29 + 3;
		ctl->nr_recs = nr_recs;
		ctl->enable = enable;
		ctl->reserved = reserved;
	}
	for (uint32_t i = 0; i < w->nr; i++) {
		const struct fz_bins *b = &w->bins[i];
		uint64_t n = b->nbins;

		if (w->mode == PROFIL_MODE_PCSAMPLE || !prefill || b->pclog) {
			memset((void *)(uintptr_t)b->addr, 0, n << b->shift);
			/* A log's count wraps past 64 bits, its slots do not. */
			if (prefill && b->pclog)
				*(uint64_t *)(uintptr_t)b->addr = ~0ULL - 1;
			continue;
		}
		for (uint64_t j = 0; j < n; j++) {
			if (b->shift == 2)
				((uint32_t *)(uintptr_t)b->addr)[j] = 0xfffffffe;
			else
				((uint16_t *)(uintptr_t)b->addr)[j] = 0xfffe;
		}
	}
}

/* Do two bins ranges of @w (and @p) share bytes? */
static bool aliased(const struct fz_want *w, const struct fz_want *p)
{
	const struct fz_want *ws[2] = { w, p };

	for (int x = 0; x < 2; x++)
		for (int y = x; y < 2; y++) {
			if (!ws[x] || !ws[y])
				continue;
			for (uint32_t i = 0; i < ws[x]->nr; i++)
				for (uint32_t j = x == y ? i + 1 : 0; j < ws[y]->nr; j++) {
					const struct fz_bins *a = &ws[x]->bins[i];
					const struct fz_bins *b = &ws[y]->bins[j];
					uint64_t ae = a->addr + (a->nbins << a->shift);
					uint64_t be = b->addr + (b->nbins << b->shift);

					if (a->nbins && b->nbins &&
					    a->addr < be && b->addr < ae)
						return true;
				}
		}
	return false;
}

/* Sum of what @w's bins gained since the snapshot; PCs stored, for pcsample. */
static uint64_t bins_gain(const struct fz_want *w, uint64_t *at_spin)
{
	uint64_t sum = 0;

	*at_spin = 0;
	for (uint32_t i = 0; i < w->nr; i++) {
		const struct fz_bins *b = &w->bins[i];

		for (uint64_t j = 0; j < b->nbins; j++) {
			uint64_t a = b->addr + (j << b->shift);
			uint64_t now = mem_u64(a, b->shift);

			if (w->mode == PROFIL_MODE_PCSAMPLE) {
				sum += now != 0;
				*at_spin += now == SPIN_A || now == SPIN_A + 3 ||
					    now == SPIN_A + 5;
			} else if (b->pclog) {
				/* The count; its PCs: pclog_check(). */
				sum += now - shadow_u64(a, b->shift);
				break;
			} else {
				sum += now - shadow_u64(a, b->shift);
			}
		}
	}
	return sum;
}

/* After the bins are counted: they may differ from the snapshot. */
static void bins_sync(const struct fz_want *w)
{
	for (uint32_t i = 0; i < w->nr; i++)
		shadow_sync(w->bins[i].addr, w->bins[i].nbins << w->bins[i].shift);
}

/* Every arena as the snapshot says, but what was allowed to change. */
static void arenas_check(struct fcase *c)
{
	for (int i = 0; i < AR_N; i++) {
		struct arena *a = &G.ar[i];
		size_t len = a->pages * PG;

		if (!a->base || !memcmp(a->p, a->shadow, len))
			continue;
		for (size_t j = 0; j < len; j++)
			if (a->p[j] != a->shadow[j]) {
				mismatch(c, "%s+%#zx changed: %#x, was %#x (a write outside the bins)",
					 arena_spec[i].name, j, a->p[j],
					 a->shadow[j]);
				break;
			}
		memcpy(a->shadow, a->p, len);
	}
}

/* The file @name in the directory: @img's head and records; removed. */
static void file_check(struct fcase *c, const char *name,
		       const struct profil_output *o)
{
	const unsigned char *img = (const void *)(uintptr_t)o->image;
	const struct profil_output_ctl *ctl = (const void *)(img + o->ctl_offset);
	uint64_t n = ctl->nr_recs < o->nr_recs_max ? ctl->nr_recs : o->nr_recs_max;
	uint64_t want = o->head_size + n * o->rec_size;
	unsigned char *buf;
	struct stat st;
	int fd = openat(G.dirfd, name, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st)) {
		mismatch(c, "no profile file %s: %s", name, strerror(errno));
		return;
	}
	buf = malloc(want + 1);
	if ((uint64_t)st.st_size != want)
		mismatch(c, "profile file %s: %lld bytes, not %llu", name,
			 (long long)st.st_size, (unsigned long long)want);
	else if (buf && (pread(fd, buf, want, 0) != (ssize_t)want ||
			 memcmp(buf, img, want)))
		mismatch(c, "profile file %s: not the image", name);
	free(buf);
	close(fd);
	unlinkat(G.dirfd, name, 0);
}

/* Nothing in the directory but what was checked (and "regular", "pfile"). */
static void dir_check(struct fcase *c)
{
	DIR *d = opendir(G.dir);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    !strcmp(e->d_name, "regular") || !strcmp(e->d_name, "pfile"))
			continue;
		mismatch(c, "a file nobody asked for: %s", e->d_name);
		unlinkat(G.dirfd, e->d_name, 0);
	}
	if (d)
		closedir(d);
}

#define CHECK(c, cond, fmt, ...) do {					\
	if (!(cond))							\
		mismatch(c, "%s: " fmt, #cond, ##__VA_ARGS__);		\
} while (0)

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC + ts.tv_nsec;
}

/* Every sample a session took, wherever it went. */
static uint64_t total(const struct profil_stats *s)
{
	return s->samples + s->out_of_range + s->saturated + s->missed +
	       s->paused;
}

/* The pre-arm, armed (and turned off again if asked). */
static bool pre_arm(struct fcase *c)
{
	uint64_t arg;
	int e;

	pre_build(c->pre, &arg);
	G.env.file_running = false;
	fz_ref_setup(&G.env, arg, &G.pre_want);
	if (G.pre_want.set != FZ_OK) {
		mismatch(c, "the reference refuses the pre-arm");
		return false;
	}
	prep_bins(&G.pre_want, G.pre_want.file ? &G.pre_want.out : NULL, 0, 2,
		  0, false);
	arenas_snapshot();
	e = call(PROFIL_IOC_SETUP, arg, false);
	ring_add(&G.ring, "#%lu pre-arm (%s): %s", G.ncase,
		 c->pre == PRE_FILE ? "with a file" : "no file",
		 e ? strerrorname_np(e) : "0");
	if (e) {
		mismatch(c, "the pre-arm failed: %s", strerror(e));
		return false;
	}
	if (c->pre_off) {
		e = call(PROFIL_IOC_OFF, 0, false);
		ring_add(&G.ring, "#%lu OFF: %s", G.ncase,
			 e ? strerrorname_np(e) : "0");
		return !e;
	}
	G.env.file_running = G.pre_want.file;
	G.env.kept_image = G.pre_want.out.image;
	G.env.kept_image_size = G.pre_want.out.image_size;
	return true;
}

#define SPIN_SHORT	(3 * 1000000ULL)

/* CPU time for 40 samples at @rate, 60 to 200 ms. */
static uint64_t spin_long(uint32_t rate)
{
	uint64_t ns = 40 * NSEC / rate;

	return ns < 60000000 ? 60000000 : ns > 200000000 ? 200000000 : ns;
}

/*
 * A PROFIL_REGION_PCLOG region: of its slots after the count, exactly those
 * of the samples it counted since the snapshot changed, each to a PC (the
 * kernel fills slot 1 + i for its i-th sample while there is one).
 */
static void pclog_check(struct fcase *c, const struct fz_want *w)
{
	for (uint32_t i = 0; i < w->nr; i++) {
		const struct fz_bins *b = &w->bins[i];
		uint64_t old, n;

		if (!b->pclog)
			continue;
		old = shadow_u64(b->addr, 3);
		n = mem_u64(b->addr, 3) - old;
		for (uint64_t s = 1; s < b->nbins; s++) {
			uint64_t a = b->addr + 8 * s, v = mem_u64(a, 3);

			/* Slot c for the sample that found the count at c. */
			if (s - 1 - old < n)
				CHECK(c, v, "PC log slot %llu empty after %llu samples from %llu",
				      (unsigned long long)s,
				      (unsigned long long)n,
				      (unsigned long long)old);
			else
				CHECK(c, v == shadow_u64(a, 3),
				      "PC log slot %llu changed to %#llx: %llu samples from %llu",
				      (unsigned long long)s,
				      (unsigned long long)v,
				      (unsigned long long)n,
				      (unsigned long long)old);
		}
	}
}

/* The spin's samples: where the reference says they go. */
static void landing_check(struct fcase *c, const struct fz_want *run,
			  const struct profil_stats *a,
			  const struct profil_stats *b, uint64_t spin_ns,
			  uint64_t at_spin, bool paused)
{
	double want = (double)spin_ns * run->rate / NSEC;
	uint64_t got = 0, b0, b3;
	bool tie0, tie3;

	if (want < 20 || spin_ns < 60000000 || c->prefill)
		return;
	if (paused) {
		got = b->paused - a->paused;
	} else if (run->mode == PROFIL_MODE_PCSAMPLE) {
		if (run->bins[0].nbins < 2 * want)
			return;
		got = at_spin;
	} else {
		b0 = fz_ref_bin(run, SPIN_A, &tie0);
		b3 = fz_ref_bin(run, SPIN_A + 3, &tie3);
		if (tie0 || tie3 || !b0 != !b3)
			return;
		if (!b0) {
			got = b->out_of_range - a->out_of_range;
		} else {
			/* The bins' width: the region that holds each. */
			for (uint32_t i = 0; i < run->nr; i++) {
				const struct fz_bins *r = &run->bins[i];
				uint64_t e = r->addr + (r->nbins << r->shift);

				if (b0 >= r->addr && b0 < e && !got)
					got = mem_u64(b0, r->shift) -
					      shadow_u64(b0, r->shift);
				if (b3 != b0 && b3 >= r->addr && b3 < e) {
					got += mem_u64(b3, r->shift) -
					       shadow_u64(b3, r->shift);
					b3 = b0;
				}
			}
		}
	}
	G.landings++;
	CHECK(c, got >= want / 2 - 2,
	      "%llu of the spin's %.0f samples where the reference puts them",
	      (unsigned long long)got, want);
}

static void run_case(struct fcase *c, struct tally *t)
{
	struct fz_want *w = &G.want, *run = NULL;
	struct profil_stats sa, s0 = {}, s1 = {}, s2 = {}, s3;
	const struct profil_output *img = NULL;
	uint64_t ta, t1, spin_ns = 0, at_spin = 0, gain = 0, dummy, rate0;
	struct rlimit rl0, rl;
	char set[80];
	int e, res = -1, files = 0, werr;
	bool ok = false, paused = false, full, cred;

	G.ncase++;
	memset(w, 0, offsetof(struct fz_want, bins));
	arenas_snapshot();
	sa = stats();
	ta = wall_ns();
	if (c->pre && !pre_arm(c))
		goto off;
	if (!c->pre || c->pre_off)
		G.env.file_running = false;

	/* RLIMIT_MEMLOCK around the pages the setup needs. */
	if (c->memlock) {
		fz_ref_setup(&G.env, c->arg, &G.dry);
		if (G.dry.set != FZ_OK || !G.dry.pages) {
			mismatch(c, "the reference refuses the setup RLIMIT_MEMLOCK is tried on");
			goto off;
		}
		getrlimit(RLIMIT_MEMLOCK, &rl0);
		rl = rl0;
		rl.rlim_cur = (G.dry.pages - 1 + (c->memlock & 1)) * PG;
		setrlimit(RLIMIT_MEMLOCK, &rl);
		if (!c->memlock_cap)
			cap_ipc_lock(false);
		env_read();
	}
	G.env.vfork_child = c->vfork;
	fz_ref_setup(&G.env, c->arg, w);
	G.env.vfork_child = false;
	ok = w->set == FZ_OK;
	if (ok)
		prep_bins(w, w->file ? &w->out : NULL, c->enable, c->nr_recs,
			  c->reserved, c->prefill);
	arenas_snapshot();
	rate0 = fz_mem(&G.env, c->arg, 16, FZ_READABLE) ? get_u32(c->arg + 12) : 0;
	s0 = stats();
	if (c->pre == PRE_FILE && !c->pre_off) {
		/* The running arm counts from now on (it was paused). */
		struct profil_output_ctl *ctl = (void *)(uintptr_t)
			(G.pre_want.out.image + G.pre_want.out.ctl_offset);

		ctl->enable = c->tmpl == T_KEEP ? c->enable : 1;
		if (c->tmpl == T_KEEP) {
			ctl->nr_recs = c->nr_recs;
			ctl->reserved = c->reserved;
		}
		shadow_sync((uintptr_t)ctl, sizeof(*ctl));
	}
	e = res = call(PROFIL_IOC_SETUP, c->arg, c->vfork);
	ring_add(&G.ring, "#%lu %s %s#%d: SETUP: %s (reference: %s)", G.ncase,
		 tmpl_names[c->tmpl], c->mut, c->v,
		 e ? strerrorname_np(e) : "0", fz_set_str(w->set, set, sizeof(set)));
	if (c->memlock) {
		/*
		 * Root gets CAP_IPC_LOCK back: new credentials, so no file
		 * armed before is written (profil(4), SECURITY: EPERM).
		 */
		setrlimit(RLIMIT_MEMLOCK, &rl0);
		if (!c->memlock_cap)
			cap_ipc_lock(true);
		env_read();
	}
	t->tried++;
	if (!in_set(w->set, e)) {
		t->mismatched++;
		mismatch(c, "SETUP gave %s, the reference says %s",
			 e ? strerrorname_np(e) : "0", set);
	} else if (e) {
		t->failed++;
	} else {
		t->ok++;
	}

	/* The setup's rate, and only it, may have changed. */
	if (fz_mem(&G.env, c->arg, 16, FZ_WRITABLE)) {
		uint32_t r = get_u32(c->arg + 12);

		if (!e)
			CHECK(c, r == w->rate, "rate written back %u, not %u", r,
			      w->rate);
		else
			CHECK(c, r == rate0 || r == w->rate,
			      "rate written back %u after a failure", r);
		shadow_sync(c->arg + 12, 4);
	}
	if (c->pre)
		shadow_sync((uintptr_t)G.pre_s + 12, 4);

	/* What runs now. */
	s1 = stats();
	if (!e)
		run = w;
	else if (c->pre && !c->pre_off)
		run = &G.pre_want;
	full = run && run->mode == PROFIL_MODE_PCSAMPLE &&
	       s1.state == PROFIL_STATE_OFF && s1.stop_reason == PROFIL_STOP_FULL;
	if (!e) {
		CHECK(c, s1.state == PROFIL_STATE_ON || full, "state %u", s1.state);
		CHECK(c, s1.stop_reason == PROFIL_STOP_NONE || full,
		      "stop_reason %u", s1.stop_reason);
		CHECK(c, s1.rate == w->rate, "rate %u, armed with %u", s1.rate,
		      w->rate);
		CHECK(c, s1.period_ns == NSEC / w->rate, "period %llu ns at %u Hz",
		      (unsigned long long)s1.period_ns, w->rate);
		CHECK(c, s1.armed == s0.armed + 1, "armed %llu, was %llu",
		      (unsigned long long)s1.armed, (unsigned long long)s0.armed);
		CHECK(c, s1.written == s0.written +
		      (c->pre == PRE_FILE && !c->pre_off && !w->keep),
		      "written %llu, was %llu", (unsigned long long)s1.written,
		      (unsigned long long)s0.written);
	} else {
		CHECK(c, s1.state == s0.state, "state %u, was %u", s1.state,
		      s0.state);
		CHECK(c, s1.rate == s0.rate, "rate %u, was %u", s1.rate, s0.rate);
		CHECK(c, s1.armed == s0.armed, "armed %llu after a failure",
		      (unsigned long long)s1.armed);
		CHECK(c, s1.stop_reason == s0.stop_reason, "stop_reason %u, was %u",
		      s1.stop_reason, s0.stop_reason);
		CHECK(c, s1.written == s0.written, "written %llu after a failure",
		      (unsigned long long)s1.written);
	}
	werr = c->pre == PRE_FILE && !c->pre_off && !e && !w->keep ? 0 :
	       s0.write_error;
	CHECK(c, s1.writing == 0 && s1.write_error == werr,
	      "writing %u write_error %d, not %d", s1.writing, s1.write_error,
	      werr);
	if (run && !full && run->mode != PROFIL_MODE_PCSAMPLE)
		CHECK(c, vmpin_kb() == (long)run->pages * 4,
		      "VmPin %ld kB, %llu pages pinned", vmpin_kb(),
		      (unsigned long long)run->pages);
	else if (!run)
		CHECK(c, vmpin_kb() == 0, "VmPin %ld kB with nothing armed",
		      vmpin_kb());

	/*
	 * Samples: a loop of known PCs.  Where they land is checked after
	 * a long loop only (the base cases): under TCG a tick can come
	 * milliseconds late, and charge the time owed to a PC past the loop.
	 */
	if (run && s1.state == PROFIL_STATE_ON) {
		spin_ns = SPIN_SHORT;
		if (c->mut == muts[0].name)
			spin_ns = spin_long(run->rate);
		spin_ns = spin_cpu(spin_a, spin_ns);
		img = run->file ? &run->out : run->keep ? &G.pre_want.out : NULL;
		if (img)
			paused = !((struct profil_output_ctl *)(uintptr_t)
				   (img->image + img->ctl_offset))->enable;
	}
	s2 = stats();
	t1 = wall_ns();
	CHECK(c, s2.samples >= s1.samples && s2.out_of_range >= s1.out_of_range &&
	      s2.saturated >= s1.saturated && s2.missed >= s1.missed &&
	      s2.paused >= s1.paused && s1.samples >= s0.samples,
	      "a counter went back");
	if (run) {
		uint32_t r = run->rate > G.pre_want.rate || !c->pre ?
			     run->rate : G.pre_want.rate;

		/*
		 * One thread's task clock runs no faster than the wall, from
		 * the first arm on; but TCG's clocks are not that exact: a
		 * bound for a sample counted twice, or a rate in other units.
		 */
		CHECK(c, total(&s2) - total(&sa) <= 2 * (t1 - ta) * r / NSEC + 8,
		      "%llu samples in %llu ns at %u Hz",
		      (unsigned long long)(total(&s2) - total(&sa)),
		      (unsigned long long)(t1 - ta), r);
	}
	if (run && run->mode == PROFIL_MODE_PCSAMPLE &&
	    s2.state == PROFIL_STATE_OFF)
		CHECK(c, s2.stop_reason == PROFIL_STOP_FULL &&
		      s2.samples - s0.samples == run->bins[0].nbins,
		      "pcsample off: stop_reason %u, %llu samples for %llu PCs",
		      s2.stop_reason, (unsigned long long)(s2.samples - s0.samples),
		      (unsigned long long)run->bins[0].nbins);

off:
	e = call(PROFIL_IOC_OFF, 0, false);
	ring_add(&G.ring, "#%lu OFF: %s", G.ncase, e ? strerrorname_np(e) : "0");
	CHECK(c, e == 0, "OFF: %s", strerror(e));
	s3 = stats();
	CHECK(c, s3.state == PROFIL_STATE_OFF, "state %u after OFF", s3.state);
	/*
	 * OFF stops what ran, and only that says USER; FULL if a tick found
	 * a pcsample array full before it (its sample went to missed).
	 */
	if (res >= 0) {
		uint32_t why = s2.stop_reason;

		if (s2.state == PROFIL_STATE_ON)
			why = run && run->mode == PROFIL_MODE_PCSAMPLE &&
			      s3.missed > s2.missed &&
			      s3.samples - s0.samples == run->bins[0].nbins ?
			      PROFIL_STOP_FULL : PROFIL_STOP_USER;
		CHECK(c, s3.stop_reason == why,
		      "stop_reason %u after OFF, %u before, not %u",
		      s3.stop_reason, s2.stop_reason, why);
	}
	CHECK(c, s3.writing == 0, "after OFF: writing %u", s3.writing);
	CHECK(c, vmpin_kb() == 0, "VmPin %ld kB after OFF", vmpin_kb());
	if (!run)
		goto files;

	/* The bins hold what STATS counted, and the spin is where it should be. */
	if (!res && ok)
		gain += bins_gain(w, &at_spin);
	if (c->pre && !c->pre_off)
		gain += bins_gain(&G.pre_want, &dummy);
	if (!aliased(ok ? w : NULL, c->pre ? &G.pre_want : NULL)) {
		CHECK(c, gain == s3.samples - s0.samples,
		      "the bins gained %llu, STATS counted %llu samples",
		      (unsigned long long)gain,
		      (unsigned long long)(s3.samples - s0.samples));
		if (!res && ok)
			pclog_check(c, w);
	}
	landing_check(c, run, &s1, &s2, spin_ns, at_spin, paused);
	if (ok)
		bins_sync(w);
	if (c->pre)
		bins_sync(&G.pre_want);

files:
	/*
	 * Each file armed is written once, as its image says; none when
	 * the credentials changed since (RLIMIT_MEMLOCK's cases as root).
	 */
	if (c->pre == PRE_FILE)
		files++;
	if (!res && ok && w->file)
		files++;
	cred = c->memlock && !c->memlock_cap && G.had_ipc_lock;
	if (files && !cred) {
		char n[32];

		snprintf(n, sizeof(n), "pre.%d", getpid());
		if (c->pre == PRE_FILE)
			file_check(c, n, &G.pre_want.out);
		if (!res && ok && w->file)
			file_check(c, w->name, &w->out);
	}
	werr = !files ? sa.write_error : cred ? -EPERM : 0;
	CHECK(c, s3.write_error == werr, "write_error %d, not %d",
	      s3.write_error, werr);
	CHECK(c, s3.written == sa.written + (cred ? 0 : files),
	      "%llu files written, %d armed%s",
	      (unsigned long long)(s3.written - sa.written), files,
	      cred ? " before the credentials changed" : "");
	dir_check(c);
	arenas_check(c);
}

static void run_mode(struct __test_metadata *_metadata, int tmpl)
{
	struct tally t = {};
	long long pins0 = pins_held();
	unsigned int m;

	TH_LOG("seed %llu (replay: make fuzz SEED=%llu)", G.seed, G.seed);
	for (m = 0; m < sizeof(muts) / sizeof(muts[0]); m++) {
		for (int v = 0;; v++) {
			struct fcase c = { .tmpl = tmpl, .mut = muts[m].name,
					   .v = v };
			int r;

			c.rng = G.seed * 0x9e3779b97f4a7c15ULL ^
				(uint64_t)tmpl << 48 ^ (uint64_t)m << 32 ^ v;
			rnd(&c.rng);
			arenas_reset();
			build(&c);
			r = muts[m].fn(&c, v);
			if (!r)
				break;
			if (r > 0)
				run_case(&c, &t);
		}
	}
	TH_LOG("mode %s: %ld setups, %ld succeeded, %ld failed as the reference said, %ld mismatched; %d checks failed in all; %d spins' samples looked for where the reference puts them",
	       tmpl_names[tmpl], t.tried, t.ok, t.failed, t.mismatched,
	       G.mismatches, G.landings);
	EXPECT_EQ(0, G.mismatches);
	EXPECT_LT(0, t.ok) TH_LOG("no setup of mode %s succeeded", tmpl_names[tmpl]);
	EXPECT_LT(0, t.failed);
	EXPECT_LT(0, G.landings);
	EXPECT_EQ(0, vmpin_kb());
	EXPECT_PINS(pins0);
	EXPECT_EQ(0, memlock_balanced());
}

FIXTURE(mutate) {
	int unused;
};

FIXTURE_VARIANT(mutate) {
	int tmpl;
};

FIXTURE_VARIANT_ADD(mutate, profil) { .tmpl = T_PROFIL };
FIXTURE_VARIANT_ADD(mutate, u32) { .tmpl = T_U32 };
FIXTURE_VARIANT_ADD(mutate, sprofil) { .tmpl = T_SPROFIL };
FIXTURE_VARIANT_ADD(mutate, aix) { .tmpl = T_AIX };
FIXTURE_VARIANT_ADD(mutate, file) { .tmpl = T_FILE };
FIXTURE_VARIANT_ADD(mutate, keep) { .tmpl = T_KEEP };
FIXTURE_VARIANT_ADD(mutate, pcsample) { .tmpl = T_PCSAMPLE };

FIXTURE_SETUP(mutate)
{
	REQUIRE_MODULE();
	ASSERT_EQ(0, fz_init());
}

FIXTURE_TEARDOWN(mutate)
{
	fz_fini();
}

TEST_F_TIMEOUT(mutate, one_field_at_a_time_gives_what_the_reference_says, 300)
{
	run_mode(_metadata, variant->tmpl);
}

/* ------------------------------------------------------------------------
 * cmd: the request numbers, STATS and OFF arguments, a vfork child.
 */

/* Arm the profil mode's base setup; 0 or an errno. */
static int arm_base(struct fcase *c)
{
	*c = (struct fcase){ .tmpl = T_PROFIL, .mut = "base", .rng = G.seed };
	rnd(&c->rng);
	arenas_reset();
	build(c);
	fz_ref_setup(&G.env, c->arg, &G.want);
	if (G.want.set != FZ_OK)
		return EINVAL;
	prep_bins(&G.want, NULL, 1, 0, 0, false);
	return call(PROFIL_IOC_SETUP, c->arg, false);
}

/* STATS, but for the counters the tick moves, as @a says. */
static bool same_session(const struct profil_stats *a,
			 const struct profil_stats *b)
{
	return a->state == b->state && a->stop_reason == b->stop_reason &&
	       a->rate == b->rate && a->period_ns == b->period_ns &&
	       a->armed == b->armed && a->written == b->written &&
	       a->write_error == b->write_error && b->samples >= a->samples &&
	       b->out_of_range >= a->out_of_range && b->missed >= a->missed;
}

/* One request number with the argument its command takes. */
static void one_cmd(struct fcase *c, unsigned int cmd, unsigned long base)
{
	struct profil_stats before, after, *st = (void *)ap(AR_OUT, 0);
	unsigned long real = fz_ref_cmd(cmd);
	uint64_t arg = 0;
	int e, want;

	/* SETUP is tried on an idle session, OFF and STATS on a running one. */
	e = arm_base(c);
	if (!e && base == PROFIL_IOC_SETUP)
		e = call(PROFIL_IOC_OFF, 0, false);
	if (e)
		mismatch(c, "the base setup, before %#x: %s", cmd, strerror(e));
	memset(st, 0xcc, 200);
	st->size = sizeof(*st);
	if (base == PROFIL_IOC_SETUP)
		arg = c->arg;
	else if (base == PROFIL_IOC_STATS)
		arg = (uintptr_t)st;
	before = stats();
	arenas_snapshot();
	e = call(cmd, arg, false);
	/* ATTACH (attach_test's) is recognised: its NULL argument faults. */
	want = !real ? ENOTTY : real == PROFIL_IOC_ATTACH ? EFAULT : 0;
	ring_add(&G.ring, "ioctl %#x (dir %u size %u nr %u) %s: %s", cmd,
		 _IOC_DIR(cmd), _IOC_SIZE(cmd), _IOC_NR(cmd),
		 real == PROFIL_IOC_SETUP ? "as SETUP" : real == PROFIL_IOC_OFF ?
		 "as OFF" : real == PROFIL_IOC_STATS ? "as STATS" :
		 real == PROFIL_IOC_ATTACH ? "as ATTACH" : "unknown",
		 e ? strerrorname_np(e) : "0");
	G.tally.tried++;
	if (e != want) {
		G.tally.mismatched++;
		mismatch(c, "ioctl %#x gave %s, not %s", cmd,
			 e ? strerrorname_np(e) : "0",
			 want ? strerrorname_np(want) : "0");
	}
	after = stats();
	if (!real || real == PROFIL_IOC_ATTACH) {
		CHECK(c, same_session(&before, &after),
		      "an unknown request or ATTACH changed the session");
	} else if (real == PROFIL_IOC_SETUP) {
		CHECK(c, after.state == PROFIL_STATE_ON &&
		      after.armed == before.armed + 1, "not armed by %#x", cmd);
		shadow_sync(arg + 12, 4);
		bins_sync(&G.want);
	} else if (real == PROFIL_IOC_OFF) {
		CHECK(c, after.state == PROFIL_STATE_OFF &&
		      after.stop_reason == PROFIL_STOP_USER, "not off after %#x",
		      cmd);
	} else {
		CHECK(c, st->size == sizeof(*st) && st->state == PROFIL_STATE_ON,
		      "STATS by %#x: size %u state %u", cmd, st->size, st->state);
		shadow_sync(arg, sizeof(*st));
	}
	if (before.state == PROFIL_STATE_ON)
		bins_sync(&G.want);
	arenas_check(c);
	call(PROFIL_IOC_OFF, 0, false);
}

static void cmd_numbers(struct __test_metadata *_metadata)
{
	static const unsigned long bases[] = {
		PROFIL_IOC_SETUP, PROFIL_IOC_OFF, PROFIL_IOC_STATS,
		PROFIL_IOC_ATTACH,
	};
	static const unsigned int sizes[] = { 0, 1, 8, 31, 32, 40, 64, 72, 88,
					      0x3fff };
	struct fcase c = { .tmpl = T_PROFIL, .mut = "request number" };
	unsigned int b, dir, i, nr;
	uint64_t rng = G.seed;

	TH_LOG("seed %llu (replay: make fuzz SEED=%llu)", G.seed, G.seed);
	for (b = 0; b < 4; b++)
		for (dir = 0; dir < 4; dir++) {
			for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
				one_cmd(&c, _IOC(dir, PROFIL_IOC_MAGIC,
						 _IOC_NR(bases[b]), sizes[i]),
					bases[b]);
			one_cmd(&c, _IOC(dir, PROFIL_IOC_MAGIC,
					 _IOC_NR(bases[b]),
					 _IOC_SIZE(bases[b])), bases[b]);
		}
	/* Numbers no command has, in every direction; other types. */
	for (nr = 0; nr < 256; nr++) {
		if (nr >= 1 && nr <= 4)
			continue;
		rnd(&rng);
		one_cmd(&c, _IOC(rng % 4, PROFIL_IOC_MAGIC, nr,
				 rng >> 8 & _IOC_SIZEMASK), PROFIL_IOC_OFF);
	}
	for (nr = 1; nr <= 4; nr++) {
		one_cmd(&c, _IOC(_IOC_DIR(bases[nr - 1]), PROFIL_IOC_MAGIC - 1,
				 nr, _IOC_SIZE(bases[nr - 1])), PROFIL_IOC_OFF);
		one_cmd(&c, _IOC(_IOC_DIR(bases[nr - 1]), PROFIL_IOC_MAGIC + 1,
				 nr, _IOC_SIZE(bases[nr - 1])), PROFIL_IOC_OFF);
	}
	TH_LOG("%ld request numbers, %ld mismatched", G.tally.tried,
	       G.tally.mismatched);
	EXPECT_EQ(0, G.mismatches);
	EXPECT_LT(300, G.tally.tried);
	EXPECT_EQ(0, vmpin_kb());
	EXPECT_EQ(0, memlock_balanced());
}

/* STATS at @arg as the reference says; the session stays as it was. */
static void one_stats(struct fcase *c, uint64_t arg, const char *what)
{
	struct profil_stats ref = stats(), got;
	uint32_t wrote;
	fz_set set = fz_ref_stats(&G.env, arg, &wrote);
	char s[64];
	int e;

	arenas_snapshot();
	e = call(PROFIL_IOC_STATS, arg, false);
	ring_add(&G.ring, "STATS %s: %s (reference: %s)", what,
		 e ? strerrorname_np(e) : "0", fz_set_str(set, s, sizeof(s)));
	G.tally.tried++;
	if (!in_set(set, e)) {
		G.tally.mismatched++;
		mismatch(c, "STATS %s gave %s, the reference says %s", what,
			 e ? strerrorname_np(e) : "0", s);
	}
	if (!e && wrote) {
		memset(&got, 0, sizeof(got));
		memcpy(&got, (void *)(uintptr_t)arg, wrote);
		CHECK(c, got.size == wrote, "STATS %s: size %u, %u written", what,
		      got.size, wrote);
		got.size = ref.size;
		if (wrote >= PROFIL_STATS_SIZE_VER1)
			CHECK(c, same_session(&ref, &got), "STATS %s: another session",
			      what);
		else
			CHECK(c, got.state == ref.state && got.armed == ref.armed &&
			      got.rate == ref.rate, "STATS %s: another session", what);
		shadow_sync(arg, wrote);
	} else if (e == EFAULT && fz_mem(&G.env, arg, 1, FZ_WRITABLE)) {
		/* Written in part, maybe, up to the fault. */
		for (uint64_t a = arg; a < arg + sizeof(got) &&
		     fz_mem(&G.env, a, 1, FZ_WRITABLE); a++)
			shadow_sync(a, 1);
	}
	bins_sync(&G.want);
	arenas_check(c);
}

static void cmd_args(struct __test_metadata *_metadata)
{
	static const uint32_t sizes[] = { 0, 8, 63, 64, 65, 87, 88, 89, 200,
					  4096, 4097, ~0U };
	struct fcase c;
	struct profil_stats *st = (void *)ap(AR_OUT, 0), child;
	uint64_t end = ar_end(AR_OUT), off_args[] = { 1, ~0ULL, ap_u(AR_OUT, 0) };
	static volatile int res;
	char what[64];
	unsigned int i;
	pid_t pid;
	int e;

	TH_LOG("seed %llu (replay: make fuzz SEED=%llu)", G.seed, G.seed);
	ASSERT_EQ(0, arm_base(&c));
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		memset(st, 0xcc, PG);
		st->size = sizes[i];
		snprintf(what, sizeof(what), "size %u", sizes[i]);
		one_stats(&c, (uintptr_t)st, what);
	}
	memset(st, 0xcc, PG);
	*(uint32_t *)(end - 64) = 64;
	one_stats(&c, end - 64, "64 at the guard");
	*(uint32_t *)(end - 64) = 88;
	one_stats(&c, end - 64, "88, 64 before the guard");
	*(uint16_t *)(end - 2) = 88;
	one_stats(&c, end - 2, "its size across the guard");
	ro_write(AR_ARGS_RO, 0, &(uint32_t){ 88 }, 4);
	one_stats(&c, ap_u(AR_ARGS_RO, 0), "read-only");
	one_stats(&c, 0, "NULL");
	one_stats(&c, KADDR, "in the kernel");
	one_stats(&c, end, "in the guard");
	if (G.ar[AR_SFILE].base) {
		*(uint32_t *)ap(AR_SFILE, 0) = 88;
		one_stats(&c, ap_u(AR_SFILE, 0), "in a shared file mapping");
	}

	/* OFF takes 0 and nothing else. */
	for (i = 0; i < 3; i++) {
		e = call(PROFIL_IOC_OFF, off_args[i], false);
		ring_add(&G.ring, "OFF %#llx: %s", (unsigned long long)off_args[i],
			 e ? strerrorname_np(e) : "0");
		CHECK(&c, (fz_ref_off(off_args[i]) == FZ_OK ? 0 : EINVAL) == e,
		      "OFF %#llx: %s", (unsigned long long)off_args[i],
		      strerror(e));
		CHECK(&c, stats().state == PROFIL_STATE_ON,
		      "OFF %#llx turned the session off",
		      (unsigned long long)off_args[i]);
	}

	/* A vfork child: an empty session of its own, and no OFF. */
	memset(&child, 0xcc, sizeof(child));
	child.size = sizeof(child);
	pid = vfork();
	if (!pid) {
		res = ioctl(G.fd, PROFIL_IOC_STATS, &child) ? errno : 0;
		if (!res)
			res = ioctl(G.fd, PROFIL_IOC_OFF, 0) ? 1000 + errno : 0;
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	ring_add(&G.ring, "vfork child: STATS, OFF: %d", res);
	CHECK(&c, res == 0, "a vfork child's STATS or OFF: %d", res);
	CHECK(&c, child.state == PROFIL_STATE_OFF && child.armed == 0 &&
	      child.samples == 0 && child.rate == 0 && child.size == sizeof(child),
	      "a vfork child's STATS: state %u armed %llu samples %llu",
	      child.state, (unsigned long long)child.armed,
	      (unsigned long long)child.samples);
	CHECK(&c, stats().state == PROFIL_STATE_ON,
	      "a vfork child's OFF turned its parent's session off");
	EXPECT_EQ(0, call(PROFIL_IOC_OFF, 0, false));
	TH_LOG("%ld STATS, %ld mismatched", G.tally.tried, G.tally.mismatched);
	EXPECT_EQ(0, G.mismatches);
	EXPECT_EQ(0, vmpin_kb());
	EXPECT_EQ(0, memlock_balanced());
}

FIXTURE(cmd) {
	int unused;
};

FIXTURE_SETUP(cmd)
{
	REQUIRE_MODULE();
	ASSERT_EQ(0, fz_init());
}

FIXTURE_TEARDOWN(cmd)
{
	fz_fini();
}

TEST_F_TIMEOUT(cmd, a_wrong_direction_is_enotty_and_size_bits_are_ignored, 300)
{
	cmd_numbers(_metadata);
}

TEST_F_TIMEOUT(cmd, stats_and_off_arguments_as_the_reference_says, 120)
{
	cmd_args(_metadata);
}

TEST_HARNESS_MAIN
