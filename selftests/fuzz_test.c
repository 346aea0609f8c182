// SPDX-License-Identifier: GPL-2.0
/*
 * A deterministic, seeded random-ioctl fuzzer for /dev/profil.
 *
 * Four threads make FUZZ_CALLS calls each, mixing valid and corrupted
 * setups (sizes, flags, modes, rates, reserved fields, region counts and
 * sizes, overlapping and wrapping ranges, bad, read-only and half-mapped
 * pointers, profile outputs), OFF with and without an argument, STATS of
 * every size, and unknown numbers, while the same threads unmap, remap,
 * write-protect, move and zap the buffers, fork children that fuzz on and
 * exit, vfork and exec, and come and go.  Every call must return 0 or a
 * documented errno; the process must survive; afterwards no pin and no
 * VmPin is left.  The seed is printed; PROFIL_FUZZ_SEED replays one
 * (make fuzz SEED=n).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/wait.h>

#include "common.h"
#include "kselftest_harness.h"

#define FUZZ_THREADS	4
#define FUZZ_CALLS	2600	/* per thread: more than 10,000 in all */
#define POOL		8	/* buffers the threads share */
#define POOL_PAGES	4

static unsigned char *pool[POOL];
static int dirfd_ok;
static unsigned long long seed;

/* xorshift64*: each thread its own stream, from the seed. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
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

struct fuzz {
	uint64_t s;
	int fd;
	long bad;		/* undocumented results */
	long calls;
	long armed;		/* setups that succeeded */
	char what[160];		/* the first bad one */
};

static void note_bad(struct fuzz *f, const char *op, int e)
{
	if (!f->bad++)
		snprintf(f->what, sizeof(f->what), "%s: errno %d (%s)", op, e,
			 strerror(e));
}

static void fuzz_setup(struct fuzz *f)
{
	static __thread struct profil_region r[8];
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
	int e, valid = rnd(&f->s) % 3 == 0;

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
	if (!ioctl(f->fd, PROFIL_IOC_SETUP, st))
		f->armed++;
	else if (!setup_errno_ok(e = errno))
		note_bad(f, "SETUP", e);
}

static void fuzz_other(struct fuzz *f)
{
	unsigned char mem[200];
	struct profil_stats *st = (void *)mem;
	unsigned long cmd;
	int e;

	switch (rnd(&f->s) % 4) {
	case 0:
		if (ioctl(f->fd, PROFIL_IOC_OFF, PICK(&f->s, 0, 0, 1)) &&
		    (e = errno) != EINVAL)
			note_bad(f, "OFF", e);
		break;
	case 1:
		memset(mem, 0, sizeof(mem));
		st->size = PICK(&f->s, 88, 64, 0, 8, 200, 5000);
		if (ioctl(f->fd, PROFIL_IOC_STATS,
			  PICK(&f->s, (uintptr_t)st, (uintptr_t)st, 0,
			       addr(&f->s))) &&
		    (e = errno) != EINVAL && e != EFAULT)
			note_bad(f, "STATS", e);
		break;
	default:
		cmd = _IOC(rnd(&f->s) % 4, PICK(&f->s, PROFIL_IOC_MAGIC, 0x42),
			   rnd(&f->s) % 16, rnd(&f->s) % 256);
		if (cmd == PROFIL_IOC_OFF ||
		    _IOC_NR(cmd) == 1 || _IOC_NR(cmd) == 3)
			break;	/* real ones, with any size: done above */
		if (!ioctl(f->fd, cmd, 0)) {
			if (_IOC_TYPE(cmd) == PROFIL_IOC_MAGIC && _IOC_NR(cmd) == 2)
				break;
			note_bad(f, "unknown ioctl succeeded", 0);
		} else if ((e = errno) != ENOTTY && e != EINVAL) {
			note_bad(f, "unknown ioctl", e);
		}
	}
}

/* Change a buffer under everybody's feet. */
static void fuzz_memory(struct fuzz *f)
{
	int i = rnd(&f->s) % POOL;
	size_t len = POOL_PAGES * 4096;
	void *b = pool[i], *n;

	switch (rnd(&f->s) % 5) {
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
	pid_t pid;

	switch (rnd(&f->s) % 3) {
	case 0:
		pid = fork();
		if (!pid) {
			fuzz_calls(f, 20);
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
			note_bad(f, "child", WIFSIGNALED(status) ?
				 WTERMSIG(status) : 3);
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
	const char *env = getenv("PROFIL_FUZZ_SEED");
	struct fuzz f[FUZZ_THREADS] = {};
	pthread_t t[FUZZ_THREADS];
	char dir[] = "/tmp/fuzzXXXXXX";
	long long pins0;
	long calls = 0, armed = 0;
	int i;

	REQUIRE_MODULE();
	seed = env ? strtoull(env, NULL, 0) : 1;
	TH_LOG("seed %llu (replay: make fuzz SEED=%llu)", seed, seed);
	pins0 = pins_held();
	ASSERT_NE(NULL, mkdtemp(dir));
	dirfd_ok = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (i = 0; i < POOL; i++) {
		pool[i] = mmap(NULL, POOL_PAGES * 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(MAP_FAILED, pool[i]);
	}
	for (i = 0; i < FUZZ_THREADS; i++) {
		f[i].s = seed * 0x9e3779b97f4a7c15ULL + i + 1;
		ASSERT_EQ(0, pthread_create(&t[i], NULL, fuzz_thread, &f[i]));
	}
	for (i = 0; i < FUZZ_THREADS; i++) {
		pthread_join(t[i], NULL);
		calls += f[i].calls;
		armed += f[i].armed;
		EXPECT_EQ(0, f[i].bad) {
			TH_LOG("thread %d: %ld undocumented results, first %s",
			       i, f[i].bad, f[i].what);
		}
	}
	TH_LOG("%ld calls, %ld successful setups", calls, armed);
	EXPECT_LE(10000, calls);
	EXPECT_LT(100, armed);	/* the valid ones get through */
	ASSERT_EQ(0, dev_ioctl(PROFIL_IOC_OFF, NULL));
	EXPECT_EQ(0, vmpin_kb());
	EXPECT_PINS(pins0);
	close(dirfd_ok);
	if (system("rm -rf /tmp/fuzz??????"))
		TH_LOG("could not remove %s", dir);
}

TEST_HARNESS_MAIN
