// SPDX-License-Identifier: GPL-2.0
/*
 * okcov_stress: a bounded, seeded stress of /dev/okcov and of loading and
 * unloading okcov, with every result checked against the errno table of
 * SPEC.md section 2 wherever it is determinable.
 *
 *   okcov_stress [--seed N] [--duration S] [--procs M] [--threads K]
 *                [--cycle S] [--warmup S] [--ko PATH]
 *
 * The main process loads okcov through libkmod (--ko, default $OKCOV_KO;
 * options from $OKCOV_KO_ARGS) and runs the cycler. M worker processes each
 * run K worker threads, a bystander thread that only makes syscalls, and a
 * supervisor (the process's main thread) that joins exited workers, checks
 * what they handed over and respawns them.
 *
 * Workers issue random operations: open, dup, close, passing an fd through
 * an AF_UNIX socket (SCM_RIGHTS: received back, or left in flight while the
 * socket closes, so that the socket drops the last reference),
 * KIOSETBUFSIZE with sizes from 0 to far past max_entries, KIOENABLE in both forms with modes
 * -1..3 and garbage, KIODISABLE, ioctls with random _IOC() numbers, bad
 * pointers (NULL, 1, kernel, non-canonical, unmapped, straddling a page
 * edge) as arguments, mmap/munmap/mprotect/mremap of random ranges,
 * offsets, protections and flags, garbage written into buf[0], coverage
 * syscalls, fork (the child does a few random operations and exits, often
 * still enabled), exec (a child enables, re-executes this program, which
 * checks that the attachment survived, and exits) and thread exit.
 *
 * A descriptor is either private (one thread's, never touched by another:
 * its state is known exactly, so results and buffer contents are checked
 * exactly) or shared (a per-process pool any thread, and forked children,
 * may use: only the results possible in every state are accepted).
 *
 * Every --cycle seconds the cycler tries rmmod while descriptors are in use
 * (refused), insmod while loaded (EEXIST), then drains: every thread
 * unmaps and closes everything, many after enabling, so that only DYING
 * descriptors are left, attached to live threads; rmmod must then succeed,
 * the threads keep making syscalls while okcov is gone, and okcov is loaded
 * again. A module generation counter tells the threads their attachments
 * went with it.
 *
 * After the run: okcov must unload; kmemleak (when the kernel has it) must
 * report nothing after two scans; Slab (+2 MiB), VmallocUsed (+1 MiB) and
 * MemFree (-8 MiB, counting the free pages parked on per-CPU lists, which
 * alone swing by tens of MiB) must be back to what they were after loading
 * okcov and one warm-up round, each measured after drop_caches and after
 * shrinking every slab cache (which also empties KASAN's quarantine).
 *
 * The seed fixes every random choice a thread makes; what interleaves with
 * what is up to the scheduler, so a seed replays the same mix, not the same
 * run. --cycle 0 never unloads; --duration is the time of plain stress, and
 * a cycle started before its end runs to completion.
 *
 * Output is KTAP: the parameters, "# FAIL ..." for each unexpected result,
 * per-operation counts by result, four test points and a Totals line.
 * Exits non-zero on any failure.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libkmod.h>

#include "okcov.h"
#include "okcov_scm.h"

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE	0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC		0x80000
#endif

#define OKCOV_NAME		"okcov"
#define OKCOV_MAX_PARAM		"/sys/module/okcov/parameters/max_entries"
#define KMEMLEAK		"/sys/kernel/debug/kmemleak"

#define MAX_PROCS		32
#define MAX_THREADS		32
#define MAXD			4	/* private descriptors per thread */
#define MAXFD			3	/* fds per private descriptor */
#define MAXMAP			8	/* mappings per thread */
#define POOLMAX			8	/* shared pool entries per process */
#define MAX_FAIL_PRINT		200

/*
 * A child that has not exited after hang_s seconds hung; a drain or the
 * final stop gets 1.5 times that (--hang; slow debug kernels need more).
 */
static double hang_s = 120;

/* Memory tolerances, KiB. */
#define TOL_SLAB		2048
#define TOL_VMALLOC		1024
#define TOL_MEMFREE		8192

#define KERNEL_TEXT		0xffffffff80000000UL
#define USER_TOP		((1UL << 47) - 4096)	/* x86_64 TASK_SIZE */

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------ results */

enum res {
	RS_OK, RS_EFAULT, RS_EBUSY, RS_EINVAL, RS_ENOTTY, RS_ENOMEM, RS_EPERM,
	RS_EACCES, RS_ENOENT, RS_ENXIO, RS_ENODEV, RS_EAGAIN, RS_EOVERFLOW,
	RS_EEXIST, RS_EOPNOTSUPP, RS_BAD, RS_OTHER, NRES
};

static const char * const res_names[NRES] = {
	"ok", "EFAULT", "EBUSY", "EINVAL", "ENOTTY", "ENOMEM", "EPERM",
	"EACCES", "ENOENT", "ENXIO", "ENODEV", "EAGAIN", "EOVERFLOW",
	"EEXIST", "EOPNOTSUPP", "mismatch", "other",
};

#define M(r)		(1u << (RS_##r))

/* err: 0, an errno, or -1 for "the check did not hold" */
static enum res res_of(int err)
{
	switch (err) {
	case 0:
		return RS_OK;
	case -1:
		return RS_BAD;
	case EFAULT:
		return RS_EFAULT;
	case EBUSY:
		return RS_EBUSY;
	case EINVAL:
		return RS_EINVAL;
	case ENOTTY:
		return RS_ENOTTY;
	case ENOMEM:
		return RS_ENOMEM;
	case EPERM:
		return RS_EPERM;
	case EACCES:
		return RS_EACCES;
	case ENOENT:
		return RS_ENOENT;
	case ENXIO:
		return RS_ENXIO;
	case ENODEV:
		return RS_ENODEV;
	case EAGAIN:
		return RS_EAGAIN;
	case EOVERFLOW:
		return RS_EOVERFLOW;
	case EEXIST:
		return RS_EEXIST;
	case EOPNOTSUPP:
		return RS_EOPNOTSUPP;
	default:
		return RS_OTHER;
	}
}

enum op {
	OP_OPEN, OP_DUP, OP_CLOSE, OP_PASS, OP_SETBUFSIZE, OP_ENABLE, OP_ENABLE_LEGACY,
	OP_DISABLE, OP_BADIOCTL, OP_MMAP, OP_MUNMAP, OP_MPROTECT, OP_MREMAP,
	OP_BUFWRITE, OP_BUFCHECK, OP_SYSCALLS, OP_FORK, OP_EXEC, OP_EXECCHECK,
	OP_THREAD_EXIT, OP_HANDOFF, OP_DRAIN, OP_RMMOD, OP_INSMOD, OP_NOISE,
	NOPS
};

static const char * const op_names[NOPS] = {
	"open", "dup", "close", "SCM_RIGHTS pass", "KIOSETBUFSIZE", "KIOENABLE",
	"KIOENABLE(legacy)", "KIODISABLE", "ioctl(random cmd)", "mmap",
	"munmap", "mprotect", "mremap", "buf[0] garbage", "coverage check",
	"coverage syscalls", "fork", "exec", "exec'd image check",
	"thread exit", "handoff re-enable", "drain", "rmmod", "insmod",
	"bystander syscalls",
};

/* ------------------------------------------------------- shared state */

enum phase { PH_RUN, PH_DRAIN, PH_UNLOADED, PH_STOP };

struct shm {
	uint64_t seed;
	int procs, threads;
	atomic_int phase;
	atomic_uint epoch;
	atomic_int drained;
	atomic_int dying_at_drain;
	atomic_ulong gen;	/* successful unloads */
	atomic_ulong seq;	/* odd while (un)loading */
	atomic_ulong max_entries;
	atomic_bool narrowed;		/* filter/exclude given: getpid may not record */
	atomic_ulong next_id;
	atomic_ulong cnt[NOPS][NRES];
	atomic_ulong ns[NOPS], timed[NOPS];	/* worker op latency */
	atomic_ulong failures;
	atomic_ulong threads_spawned;
	atomic_ulong procs_spawned;
	atomic_ulong handoff_trace;
	atomic_ulong cycles, unloads, refusals;
};

static struct shm *shm;
static int shm_fd = -1;
static long page;
static char *guard_rw;		/* one readable page, then guard_none */
static char *guard_none;	/* a PROT_NONE page */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void say(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(1, buf, n) < 0)
		return;
}

static void vfail(const char *tag, const char *fmt, va_list ap)
{
	char buf[768];
	unsigned long k = atomic_fetch_add(&shm->failures, 1);
	int n;

	if (k >= MAX_FAIL_PRINT)
		return;
	n = snprintf(buf, sizeof(buf), "# FAIL [pid %d tid %d %s] ",
		     getpid(), gettid(), tag);
	n += vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(1, buf, n) < 0)
		return;
}

static void fail(const char *tag, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(tag, fmt, ap);
	va_end(ap);
}

static void mask_str(unsigned int mask, char *buf, size_t sz)
{
	size_t n = 0;
	int r;

	buf[0] = 0;
	for (r = 0; r < NRES; r++)
		if (mask & (1u << r))
			n += snprintf(buf + n, sz - n, "%s%s", n ? "|" : "",
				      res_names[r]);
}

/*
 * Count the result of one operation; a result outside @mask is a failure,
 * described by fmt. Returns whether it was expected.
 */
static bool expect(const char *tag, enum op op_id, int err,
		   unsigned int mask, const char *fmt, ...)
{
	enum res r = res_of(err);
	char exp[128], what[384];
	va_list ap;

	atomic_fetch_add_explicit(&shm->cnt[op_id][r], 1, memory_order_relaxed);
	if (mask & (1u << r))
		return true;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	mask_str(mask, exp, sizeof(exp));
	if (r == RS_BAD)
		fail(tag, "%s: %s", op_names[op_id], what);
	else
		fail(tag, "%s: %s: got %s (%d), expected %s", op_names[op_id],
		     what, r == RS_OTHER ? strerror(err) : res_names[r], err,
		     exp);
	return false;
}

static void count(enum op op, enum res r)
{
	atomic_fetch_add_explicit(&shm->cnt[op][r], 1, memory_order_relaxed);
}

/* ---------------------------------------------------------------- rng */

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* ------------------------------------------------------------ context */

enum dstate { S_NONE, S_READY, S_TRACE };

struct pdesc {
	bool used;
	int fds[MAXFD];
	int nfds;
	enum dstate state;
	unsigned long n;	/* words, once READY */
	int mode;
	unsigned long id;
	int nmaps;
};

struct pmap {
	bool used;
	char *addr;
	size_t len;
	unsigned long pgoff;	/* buffer page at addr */
	int prot;
	struct pdesc *d;	/* private descriptor, or NULL (shared) */
	unsigned long id;
};

struct pent {
	int fd;
	unsigned long id;
	atomic_ulong n;	/* words, 0 while unknown */
};

struct pool {
	pthread_rwlock_t lock;
	struct pent e[POOLMAX];
	int cnt;
};

enum kind { K_THREAD, K_CHILD, K_SUPERVISOR };

struct ctx {
	enum kind kind;
	struct pool *pool;
	uint64_t rng;
	char tag[64];
	struct pdesc d[MAXD];
	struct pmap m[MAXMAP];
	unsigned long att_id;		/* descriptor this thread is attached to */
	unsigned long att_gen;
	int foreign[MAXD * MAXFD];	/* fork child: the parent thread's fds */
	int nforeign;
	bool exiting;
	unsigned int ops;
};

static uint64_t rnd(struct ctx *c)
{
	return splitmix(&c->rng);
}

static unsigned int rn(struct ctx *c, unsigned int n)
{
	return n ? rnd(c) % n : 0;
}

static bool chance(struct ctx *c, unsigned int pct)
{
	return rn(c, 100) < pct;
}

static unsigned long cur_gen(void)
{
	return atomic_load(&shm->gen);
}

/*
 * Forget an attachment okcov's unload took away. Call only with a
 * descriptor open (it pins the module, so the generation is stable).
 */
static void att_refresh(struct ctx *c)
{
	if (c->att_id && c->att_gen != cur_gen())
		c->att_id = 0;
}

static void att_set(struct ctx *c, unsigned long id)
{
	c->att_id = id;
	c->att_gen = cur_gen();
}

static unsigned long new_id(void)
{
	return atomic_fetch_add(&shm->next_id, 1) + 1;
}

static unsigned long max_entries(void)
{
	return atomic_load(&shm->max_entries);
}

static size_t buf_bytes(unsigned long n)
{
	return (n * 8 + page - 1) & ~(page - 1);
}

static unsigned long buf_pages(unsigned long n)
{
	return buf_bytes(n) / page;
}

/* Words of a coverage buffer: the kernel writes them concurrently. */
static uint64_t word_get(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static void word_set(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

static int ioc(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? errno : 0;
}

/* ----------------------------------------------------------- syscalls */

static void coverage_syscalls(struct ctx *c, int n)
{
	char buf[256];
	struct utsname u;
	int fd;

	while (n-- > 0) {
		switch (c ? rn(c, 6) : n % 6) {
		case 0:
			syscall(SYS_getpid);
			break;
		case 1:
			syscall(SYS_getppid);
			break;
		case 2:
			fd = open("/proc/self/stat", O_RDONLY);
			if (fd >= 0) {
				if (read(fd, buf, sizeof(buf)) < 0)
					buf[0] = 0;
				close(fd);
			}
			break;
		case 3:
			uname(&u);
			break;
		case 4:
			sched_yield();
			break;
		default:
			syscall(SYS_gettid);
			break;
		}
	}
}

/* ------------------------------------------------------ bad arguments */

/* An argument no ioctl can read @size bytes from. */
static void *bad_ptr(struct ctx *c, size_t size)
{
	switch (rn(c, 7)) {
	case 0:
		return NULL;
	case 1:
		return (void *)1;
	case 2:
		return (void *)0xffffffff81000000UL;
	case 3:
		return (void *)0x0000800000000000UL;
		/* non-canonical */
	case 4:
		return guard_none;
	case 5:
		return guard_rw + page - size / 2;
		/* straddles */
	default:
		return (void *)0x1000UL;
		/* below mmap_min_addr */
	}
}

/* Types the VFS answers itself, before the driver sees the command. */
static bool vfs_ioctl_type(unsigned int type)
{
	return type == 0 || type == 0x15 || type == 'T' || type == 'X' ||
	       type == 'f' || type == 0x94;
}

static unsigned int random_cmd(struct ctx *c)
{
	static const unsigned int small[] = { 0, 1, 2, 4, 8, 16 };
	unsigned int dir, type, nr, size, cmd;

	do {
		dir = rn(c, 4);
		type = chance(c, 50) ? 'K' : rn(c, 256);
		nr = chance(c, 50) ? rn(c, 6) : rn(c, 256);
		size = chance(c, 50) ? small[rn(c, ARRAY_SIZE(small))] :
				       rn(c, 1 << 14);
		cmd = _IOC(dir, type, nr, size);
	} while (vfs_ioctl_type(type) || cmd == KIOSETBUFSIZE ||
		 cmd == KIOENABLE || cmd == KIOENABLE_LEGACY ||
		 cmd == KIODISABLE);
	return cmd;
}

static unsigned long pick_size(struct ctx *c)
{
	unsigned long max = max_entries();
	static const unsigned long huge[] = {
		1UL << 40, ~0UL, (1UL << 61) + 1, 1UL << 63, 1UL << 29,
	};

	switch (rn(c, 20)) {
	case 0:
		return 0;
	case 1:
		return 1;
	case 2:
		return 2;
	case 3: case 4: case 5: case 6: case 7:
		return 3 + rn(c, 62);
	case 8: case 9: case 10: case 11: case 12:
		return 64 + rn(c, 4096);
	case 13:
		return max > 4096 ? 4096 + rnd(c) % (max - 4096 + 1) : max;
	case 14:
		return max;
	case 15:
		return max + 1;
	case 16: case 17:
		return huge[rn(c, ARRAY_SIZE(huge))];
	default:
		return 3 + rn(c, 1024);
	}
}

static int pick_mode(struct ctx *c)
{
	switch (rn(c, 20)) {
	case 0:
		return -1;
	case 1:
		return KCOV_MODE_NONE;
	case 2:
		return 3;
	case 3:
		return (int)rnd(c);
	case 4:
	case 5:
	case 6:
		return KCOV_MODE_TRACE_CMP;
	default:
		return KCOV_MODE_TRACE_PC;
	}
}

static bool mode_ok(int mode)
{
	return mode == KCOV_MODE_TRACE_PC || mode == KCOV_MODE_TRACE_CMP;
}

/* --------------------------------------------------------------- open */

/* Errors an open of /dev/okcov may give while okcov is (un)loading. */
static unsigned int open_mask(unsigned long s1)
{
	unsigned long s2 = atomic_load(&shm->seq);

	if ((s1 & 1) || s1 != s2)
		return M(OK) | M(ENOENT) | M(ENXIO) | M(ENODEV);
	return M(OK);
}

static int okcov_open(struct ctx *c, bool cloexec)
{
	unsigned long s1 = atomic_load(&shm->seq);
	int fd = open(OKCOV_PATH, O_RDWR | (cloexec ? O_CLOEXEC : 0));
	int err = fd < 0 ? errno : 0;

	expect(c->tag, OP_OPEN, err, open_mask(s1), "open(%s%s)", OKCOV_PATH,
	       cloexec ? ", O_CLOEXEC" : "");
	return fd;
}

/* ---------------------------------------------------- private descs */

static struct pdesc *pd_free_slot(struct ctx *c)
{
	int i;

	for (i = 0; i < MAXD; i++)
		if (!c->d[i].used)
			return &c->d[i];
	return NULL;
}

static struct pdesc *pd_pick(struct ctx *c, bool need_fd)
{
	struct pdesc *cand[MAXD];
	int i, n = 0;

	for (i = 0; i < MAXD; i++)
		if (c->d[i].used && (!need_fd || c->d[i].nfds))
			cand[n++] = &c->d[i];
	return n ? cand[rn(c, n)] : NULL;
}

/* Forget a descriptor whose last fd and mapping are gone. */
static void pd_maybe_gone(struct pdesc *d)
{
	if (d->nfds || d->nmaps)
		return;
	/* TRACE: now DYING, still attached to us (att_id stays). */
	d->used = false;
}

/* ------------------------------------------------------------ targets */

/* One descriptor to operate on: private, or a pool entry (read-locked). */
struct target {
	struct pdesc *d;	/* private */
	struct pent *e;		/* shared */
	int fd;
	unsigned long id;
};

static void pool_rdlock(struct pool *p)
{
	pthread_rwlock_rdlock(&p->lock);
}

static void pool_wrlock(struct pool *p)
{
	pthread_rwlock_wrlock(&p->lock);
}

static void pool_unlock(struct pool *p)
{
	pthread_rwlock_unlock(&p->lock);
}

/* A private descriptor with an fd for which @pred holds, or NULL. */
static struct pdesc *pd_pick_if(struct ctx *c, bool (*pred)(struct pdesc *))
{
	struct pdesc *cand[MAXD];
	int i, n = 0;

	for (i = 0; i < MAXD; i++)
		if (c->d[i].used && c->d[i].nfds && pred(&c->d[i]))
			cand[n++] = &c->d[i];
	return n ? cand[rn(c, n)] : NULL;
}

static bool pd_is_none(struct pdesc *d)
{
	return d->state == S_NONE;
}

static bool pd_is_ready(struct pdesc *d)
{
	return d->state == S_READY;
}

static bool pd_is_trace(struct pdesc *d)
{
	return d->state == S_TRACE;
}

static bool pd_unmapped_buffer(struct pdesc *d)
{
	return d->state != S_NONE && !d->nmaps;
}

/*
 * Pick what to operate on: usually a private descriptor (one for which
 * @pred holds, if there is one and @pred is given), else a shared one.
 * Biasing towards the next step of open/size/map/enable lets sequences
 * get somewhere instead of mostly hitting EBUSY.
 */
static bool target_get(struct ctx *c, struct target *t,
		       bool (*pred)(struct pdesc *))
{
	memset(t, 0, sizeof(*t));
	if (pred && chance(c, 60)) {
		t->d = pd_pick_if(c, pred);
		if (t->d) {
			t->fd = t->d->fds[rn(c, t->d->nfds)];
			t->id = t->d->id;
			return true;
		}
	}
	if (chance(c, 65)) {
		t->d = pd_pick(c, true);
		if (t->d) {
			t->fd = t->d->fds[rn(c, t->d->nfds)];
			t->id = t->d->id;
			return true;
		}
	}
	pool_rdlock(c->pool);
	if (c->pool->cnt) {
		t->e = &c->pool->e[rn(c, c->pool->cnt)];
		t->fd = t->e->fd;
		t->id = t->e->id;
		return true;
	}
	pool_unlock(c->pool);
	t->d = pd_pick(c, true);
	if (!t->d)
		return false;
	t->fd = t->d->fds[rn(c, t->d->nfds)];
	t->id = t->d->id;
	return true;
}

static void target_put(struct ctx *c, struct target *t)
{
	if (t->e)
		pool_unlock(c->pool);
}

/* ---------------------------------------------------------------- ops */

static void op_open(struct ctx *c)
{
	bool shared = chance(c, 35), cloexec = chance(c, 30);
	struct pdesc *d = NULL;
	struct pool *p = c->pool;
	int fd;

	if (!shared) {
		d = pd_free_slot(c);
		if (!d)
			shared = true;
	}
	if (shared && p->cnt >= POOLMAX)	/* racy peek: re-checked below */
		return;
	fd = okcov_open(c, cloexec);
	if (fd < 0)
		return;
	if (d) {
		memset(d, 0, sizeof(*d));
		d->used = true;
		d->fds[0] = fd;
		d->nfds = 1;
		d->state = S_NONE;
		d->id = new_id();
		return;
	}
	pool_wrlock(p);
	if (p->cnt < POOLMAX) {
		struct pent *e = &p->e[p->cnt++];

		e->fd = fd;
		e->id = new_id();
		atomic_store(&e->n, 0);
		fd = -1;
	}
	pool_unlock(p);
	if (fd >= 0)
		close(fd);
}

static void op_dup(struct ctx *c)
{
	struct pool *p = c->pool;
	struct pdesc *d;
	bool cloexec = chance(c, 30);
	int fd, src;

	d = pd_pick(c, true);
	if (d && d->nfds < MAXFD && chance(c, 60)) {
		src = d->fds[rn(c, d->nfds)];
		fd = cloexec ? fcntl(src, F_DUPFD_CLOEXEC, 0) : dup(src);
		if (!expect(c->tag, OP_DUP, fd < 0 ? errno : 0, M(OK),
			    "dup(private fd %d)", src) || fd < 0)
			return;
		d->fds[d->nfds++] = fd;
		return;
	}
	pool_wrlock(p);
	if (p->cnt && p->cnt < POOLMAX) {
		struct pent *s = &p->e[rn(c, p->cnt)], *e;

		fd = cloexec ? fcntl(s->fd, F_DUPFD_CLOEXEC, 0) : dup(s->fd);
		if (expect(c->tag, OP_DUP, fd < 0 ? errno : 0, M(OK),
			   "dup(shared fd %d)", s->fd) && fd >= 0) {
			e = &p->e[p->cnt++];
			e->fd = fd;
			e->id = s->id;
			atomic_store(&e->n, atomic_load(&s->n));
		}
	}
	pool_unlock(p);
}

static void pd_close_fd(struct ctx *c, struct pdesc *d, int i)
{
	int fd = d->fds[i];

	expect(c->tag, OP_CLOSE, close(fd) ? errno : 0, M(OK),
	       "close(private fd %d)", fd);
	d->fds[i] = d->fds[--d->nfds];
	pd_maybe_gone(d);
}

static void op_close(struct ctx *c)
{
	struct pool *p = c->pool;
	struct pdesc *d;
	struct pent *e;
	int i;

	d = pd_pick(c, true);
	if (d && chance(c, 60)) {
		pd_close_fd(c, d, rn(c, d->nfds));
		return;
	}
	pool_wrlock(p);
	if (p->cnt) {
		i = rn(c, p->cnt);
		e = &p->e[i];
		expect(c->tag, OP_CLOSE, close(e->fd) ? errno : 0, M(OK),
		       "close(shared fd %d)", e->fd);
		p->e[i].fd = p->e[p->cnt - 1].fd;
		p->e[i].id = p->e[p->cnt - 1].id;
		atomic_store(&p->e[i].n, atomic_load(&p->e[p->cnt - 1].n));
		p->cnt--;
	}
	pool_unlock(p);
}

/* Send @fd over sk[0] and, if @receive, take it from sk[1]: 0 or errno. */
static int scm_pass(int sk[2], int fd, bool receive, bool cloexec, int *got)
{
	if (st_send_fd(sk[0], fd, MSG_DONTWAIT))
		return errno;
	if (!receive)
		return 0;
	*got = st_recv_fd(sk[1], MSG_DONTWAIT |
			     (cloexec ? MSG_CMSG_CLOEXEC : 0));
	return *got < 0 ? errno : 0;
}

/*
 * Pass a descriptor's fd through an AF_UNIX socket (SCM_RIGHTS). Either
 * receive it back (one more fd of the same open file, as dup gives), or
 * leave it in flight and close both sockets: for a private fd, after
 * closing the fd itself, so that the socket's release drops what may be
 * the file's last reference (okcov's release then runs from the socket's
 * teardown, not from close()).
 */
static void op_pass(struct ctx *c)
{
	struct pool *p = c->pool;
	bool receive = chance(c, 50), cloexec = chance(c, 30);
	struct pdesc *d = pd_pick(c, true);
	int sk[2], err, fd = -1, i;

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sk)) {
		expect(c->tag, OP_PASS, errno, M(OK), "socketpair");
		return;
	}
	if (d && chance(c, 60)) {
		i = rn(c, d->nfds);
		receive = receive && d->nfds < MAXFD;
		err = scm_pass(sk, d->fds[i], receive, cloexec, &fd);
		if (expect(c->tag, OP_PASS, err, M(OK), "%s private fd %d",
			   receive ? "pass back" : "leave in flight",
			   d->fds[i]) && !err) {
			if (receive)
				d->fds[d->nfds++] = fd;
			else
				pd_close_fd(c, d, i);
		}
		close(sk[0]);
		close(sk[1]);	/* drops an fd still in flight */
		return;
	}
	pool_wrlock(p);
	if (p->cnt) {
		struct pent *s = &p->e[rn(c, p->cnt)], *e;

		receive = receive && p->cnt < POOLMAX;
		err = scm_pass(sk, s->fd, receive, cloexec, &fd);
		if (expect(c->tag, OP_PASS, err, M(OK), "%s shared fd %d",
			   receive ? "pass back" : "leave in flight", s->fd) &&
		    !err && receive) {
			e = &p->e[p->cnt++];
			e->fd = fd;
			e->id = s->id;
			atomic_store(&e->n, atomic_load(&s->n));
		}
	}
	pool_unlock(p);
	close(sk[0]);
	close(sk[1]);
}

static void op_setbufsize(struct ctx *c)
{
	unsigned long n = pick_size(c), max = max_entries(), known;
	bool bad = chance(c, 10);
	void *arg = bad ? bad_ptr(c, 8) : &n;
	bool valid = n && n <= max;
	struct target t;
	unsigned int mask;
	int err;

	if (!target_get(c, &t, pd_is_none))
		return;
	err = ioc(t.fd, KIOSETBUFSIZE, arg);
	if (t.d) {
		if (bad)
			mask = M(EFAULT);
		else if (t.d->state != S_NONE)
			mask = M(EBUSY);
		else if (!valid)
			mask = M(EINVAL);
		else
			mask = M(OK) | M(ENOMEM);
		if (expect(c->tag, OP_SETBUFSIZE, err, mask,
			   "private fd %d state %d, n %lu, arg %p", t.fd,
			   t.d->state, n, arg) && !err) {
			t.d->state = S_READY;
			t.d->n = n;
		}
	} else {
		known = atomic_load(&t.e->n);
		if (bad)
			mask = M(EFAULT);
		else if (known)
			mask = M(EBUSY);
		else if (!valid)
			mask = M(EBUSY) | M(EINVAL);
		else
			mask = M(OK) | M(EBUSY) | M(ENOMEM);
		if (expect(c->tag, OP_SETBUFSIZE, err, mask,
			   "shared fd %d (n %lu), n %lu, arg %p", t.fd, known,
			   n, arg) && !err)
			atomic_store(&t.e->n, n);
	}
	target_put(c, &t);
}

static void op_enable(struct ctx *c, bool legacy)
{
	enum op op = legacy ? OP_ENABLE_LEGACY : OP_ENABLE;
	int mode = legacy ? KCOV_MODE_TRACE_PC : pick_mode(c);
	bool bad = !legacy && chance(c, 8);
	void *arg = bad ? bad_ptr(c, 4) : &mode;
	struct target t;
	unsigned int mask;
	int err;

	if (legacy)
		arg = chance(c, 50) ? NULL : bad_ptr(c, 4);	/* ignored */
	if (!target_get(c, &t, pd_is_ready))
		return;
	att_refresh(c);
	err = ioc(t.fd, legacy ? KIOENABLE_LEGACY : KIOENABLE, arg);
	if (t.d) {
		if (bad)
			mask = M(EFAULT);
		else if (c->att_id || t.d->state != S_READY)
			mask = M(EBUSY);
		else if (!mode_ok(mode))
			mask = M(EINVAL);
		else
			mask = M(OK);
		if (expect(c->tag, op, err, mask,
			   "private fd %d state %d, mode %d, attached to %lu, arg %p",
			   t.fd, t.d->state, mode, c->att_id, arg) && !err) {
			t.d->state = S_TRACE;
			t.d->mode = mode;
			att_set(c, t.d->id);
		}
	} else {
		if (bad)
			mask = M(EFAULT);
		else if (c->att_id)
			mask = M(EBUSY);
		else if (!mode_ok(mode))
			mask = M(EBUSY) | M(EINVAL);
		else
			mask = M(OK) | M(EBUSY);
		if (expect(c->tag, op, err, mask,
			   "shared fd %d, mode %d, attached to %lu, arg %p",
			   t.fd, mode, c->att_id, arg) && !err)
			att_set(c, t.id);
	}
	target_put(c, &t);
}

static void op_disable(struct ctx *c)
{
	void *arg = chance(c, 50) ? NULL : bad_ptr(c, 8);	/* ignored */
	struct target t;
	unsigned int mask;
	int err;

	if (!target_get(c, &t, chance(c, 50) ? pd_is_trace : NULL))
		return;
	att_refresh(c);
	err = ioc(t.fd, KIODISABLE, arg);
	if (t.d) {
		mask = t.d->state == S_TRACE ? M(OK) : M(EBUSY);
		if (expect(c->tag, OP_DISABLE, err, mask,
			   "private fd %d state %d", t.fd, t.d->state) &&
		    !err) {
			t.d->state = S_READY;
			c->att_id = 0;
		}
	} else {
		mask = c->att_id == t.id ? M(OK) : M(EBUSY);
		if (expect(c->tag, OP_DISABLE, err, mask,
			   "shared fd %d (id %lu), attached to %lu", t.fd,
			   t.id, c->att_id) && !err)
			c->att_id = 0;
	}
	target_put(c, &t);
}

static void op_badioctl(struct ctx *c)
{
	unsigned int cmd = random_cmd(c);
	void *arg = chance(c, 50) ? bad_ptr(c, 8) : (void *)(uintptr_t)rnd(c);
	struct target t;

	if (!target_get(c, &t, NULL))
		return;
	expect(c->tag, OP_BADIOCTL, ioc(t.fd, cmd, arg), M(ENOTTY),
	       "fd %d, cmd %#x (dir %u type %#x nr %u size %u), arg %p",
	       t.fd, cmd, _IOC_DIR(cmd), _IOC_TYPE(cmd), _IOC_NR(cmd),
	       _IOC_SIZE(cmd), arg);
	target_put(c, &t);
}

/* ------------------------------------------------------------- mmap */

static struct pmap *map_free_slot(struct ctx *c)
{
	int i;

	for (i = 0; i < MAXMAP; i++)
		if (!c->m[i].used)
			return &c->m[i];
	return NULL;
}

static struct pmap *map_pick(struct ctx *c)
{
	struct pmap *cand[MAXMAP];
	int i, n = 0;

	for (i = 0; i < MAXMAP; i++)
		if (c->m[i].used)
			cand[n++] = &c->m[i];
	return n ? cand[rn(c, n)] : NULL;
}

static void map_drop(struct pmap *m)
{
	m->used = false;
	if (m->d) {
		m->d->nmaps--;
		pd_maybe_gone(m->d);
	}
}

/*
 * What mmap(len, off, prot, flags) of a descriptor may return: buf 1 if it
 * has a buffer of n words, 0 if it has none, -1 if unknown.
 */
static unsigned int mmap_mask(int buf, unsigned long n, size_t len,
			      unsigned long off, int prot, int flags)
{
	unsigned long alen, pgoff = off / page, pages;
	unsigned int ex = (prot & PROT_EXEC) ? M(EPERM) : 0;

	if (!len || off % page)
		return M(EINVAL);
	alen = (len + page - 1) & ~(page - 1);
	if (alen > USER_TOP)
		return M(ENOMEM);
	if ((ULONG_MAX - alen) / page < pgoff)
		return M(EOVERFLOW);
	if ((flags & MAP_TYPE) == MAP_SHARED_VALIDATE && (flags & MAP_SYNC))
		return M(EOPNOTSUPP);
	if (buf == 0)
		return M(EINVAL) | ex;
	if (buf < 0)
		return M(OK) | M(EINVAL) | ex;
	pages = buf_pages(n);
	if (pgoff > pages || alen / page > pages - pgoff)
		return M(EINVAL) | ex;
	if ((flags & MAP_TYPE) == MAP_PRIVATE)
		return M(EINVAL) | ex;
	if (prot & PROT_EXEC)
		return M(EPERM);
	return M(OK);
}

static void op_mmap(struct ctx *c)
{
	static const int prots[] = {
		PROT_READ | PROT_WRITE, PROT_READ | PROT_WRITE,
		PROT_READ | PROT_WRITE, PROT_READ | PROT_WRITE,
		PROT_READ | PROT_WRITE, PROT_READ | PROT_WRITE,
		PROT_READ, PROT_NONE, PROT_WRITE,
		PROT_READ | PROT_EXEC, PROT_READ | PROT_WRITE | PROT_EXEC,
	};
	static const int flagss[] = {
		MAP_SHARED, MAP_SHARED, MAP_SHARED, MAP_SHARED, MAP_SHARED,
		MAP_SHARED | MAP_POPULATE, MAP_SHARED_VALIDATE,
		MAP_SHARED_VALIDATE | MAP_SYNC, MAP_PRIVATE,
		MAP_PRIVATE | MAP_POPULATE,
	};
	unsigned long n = 0, known, pages, off = 0;
	int prot = prots[rn(c, ARRAY_SIZE(prots))];
	int flags = flagss[rn(c, ARRAY_SIZE(flagss))];
	struct target t;
	struct pmap *m;
	unsigned int mask;
	size_t len;
	long r;
	int buf, err;

	if (!target_get(c, &t, pd_unmapped_buffer))
		return;
	if (t.d) {
		buf = t.d->state != S_NONE;
		n = t.d->n;
	} else {
		known = atomic_load(&t.e->n);
		buf = known ? 1 : -1;
		n = known;
	}
	pages = n ? buf_pages(n) : 1 + rn(c, 4);
	switch (rn(c, 20)) {
	case 0:
		len = 0;
		break;
	case 1:
		len = 1UL << 48;
		break;
	case 2:
	case 3:
	case 4:
		len = page;
		break;
	case 5:
	case 6:
	case 7:
		len = (1 + rn(c, pages + 2)) * page;
		break;
	case 8:
		len = 1 + rn(c, pages * page);
		break;
		/* unaligned */
	default:
		len = pages * page;
		break;
	}
	switch (rn(c, 20)) {
	case 0: case 1: case 2: case 3:
		off = rn(c, pages + 2) * page;
		break;
	case 4:
		off = (pages + rn(c, 4)) * page;
		break;
		/* past the end */
	case 5:
		off = 1UL << 44;
		break;
	case 6:
		off = ~0UL & ~(page - 1);
		break;
		/* overflows */
	case 7:
		off = 100;
		break;
		/* unaligned */
	default:
		off = 0;
		break;
	}
	if (len > USER_TOP)
		off = 0;
	if (t.d && buf == 1 && chance(c, 50)) {
		/* what a harness does: the whole buffer, shared, read-write */
		len = buf_bytes(n);
		off = 0;
		prot = PROT_READ | PROT_WRITE;
		flags = MAP_SHARED;
	}
	r = syscall(SYS_mmap, NULL, len, prot, flags, t.fd, off);
	err = r == -1 ? errno : 0;
	mask = mmap_mask(buf, n, len, off, prot, flags);
	if (expect(c->tag, OP_MMAP, err, mask,
		   "%s fd %d (buffer %d, n %lu), len %zu, off %#lx, prot %#x, flags %#x",
		   t.d ? "private" : "shared", t.fd, buf, n, len, off, prot,
		   flags) && !err) {
		m = map_free_slot(c);
		if (!m || buf != 1) {
			/* no slot, or we did not know the size: let it go */
			munmap((void *)r, len);
		} else {
			m->used = true;
			m->addr = (char *)r;
			m->len = (len + page - 1) & ~(page - 1);
			m->pgoff = off / page;
			m->prot = prot;
			m->d = t.d;
			m->id = t.id;
			if (t.d)
				t.d->nmaps++;
		}
	} else if (!err) {
		munmap((void *)r, len);
	}
	target_put(c, &t);
}

static void op_munmap(struct ctx *c)
{
	struct pmap *m = map_pick(c), *r;
	unsigned long pages, a, b;
	int err;

	if (!m)
		return;
	pages = m->len / page;
	a = 0;
	b = pages;
	if (pages > 1 && chance(c, 50)) {
		a = rn(c, pages);
		b = a + 1 + rn(c, pages - a);
		if (a == 0 && b == pages)
			b--;
	}
	err = munmap(m->addr + a * page, (b - a) * page) ? errno : 0;
	if (!expect(c->tag, OP_MUNMAP, err, M(OK), "munmap(%p + %lu pages of %lu)",
		    m->addr, a, pages))
		return;
	if (a == 0 && b == pages) {
		map_drop(m);
	} else if (a == 0) {
		m->addr += b * page;
		m->pgoff += b;
		m->len -= b * page;
	} else if (b == pages) {
		m->len = a * page;
	} else {
		/* a hole: the tail becomes a mapping of its own */
		r = map_free_slot(c);
		if (!r) {
			munmap(m->addr + b * page, (pages - b) * page);
			m->len = a * page;
			return;
		}
		*r = *m;
		r->addr = m->addr + b * page;
		r->pgoff = m->pgoff + b;
		r->len = (pages - b) * page;
		m->len = a * page;
		if (m->d)
			m->d->nmaps++;
	}
}

static void op_mprotect(struct ctx *c)
{
	static const int prots[] = {
		PROT_READ, PROT_READ | PROT_WRITE, PROT_NONE, PROT_WRITE,
		PROT_READ | PROT_EXEC, PROT_EXEC,
	};
	struct pmap *m = map_pick(c);
	int prot = prots[rn(c, ARRAY_SIZE(prots))], err;

	if (!m)
		return;
	err = mprotect(m->addr, m->len, prot) ? errno : 0;
	/* okcov clears VM_MAYEXEC: kernel-written words never run */
	if (expect(c->tag, OP_MPROTECT, err,
		   (prot & PROT_EXEC) ? M(EACCES) : M(OK),
		   "mprotect(%p, %zu, %#x)", m->addr, m->len, prot) && !err)
		m->prot = prot;
}

static void op_mremap(struct ctx *c)
{
	struct pmap *m = map_pick(c);
	unsigned long pages;
	size_t nlen;
	void *r;
	int err;

	if (!m)
		return;
	pages = m->len / page;
	if (pages > 1 && chance(c, 50)) {
		nlen = (1 + rn(c, pages - 1)) * page;
		r = mremap(m->addr, m->len, nlen, 0);
		err = r == MAP_FAILED ? errno : 0;
		if (!err && r != m->addr)
			err = -1;
		if (expect(c->tag, OP_MREMAP, err, M(OK),
			   "shrink %p from %zu to %zu bytes", m->addr, m->len,
			   nlen) && !err)
			m->len = nlen;
		return;
	}
	/* VM_DONTEXPAND: growing is refused, moving or not */
	nlen = m->len + page * (1 + rn(c, 4));
	r = mremap(m->addr, m->len, nlen, chance(c, 50) ? MREMAP_MAYMOVE : 0);
	err = r == MAP_FAILED ? errno : 0;
	if (!err) {
		/* it grew: keep the bookkeeping honest, then complain */
		m->addr = r;
		m->len = nlen;
		err = -1;
	}
	expect(c->tag, OP_MREMAP, err, M(EFAULT), "grow %p from %zu to %zu bytes",
	       m->addr, m->len, nlen);
}

/* A mapping of a private descriptor holding buf[0], readable and writable. */
static struct pmap *map_with_word0(struct ctx *c, bool private_only)
{
	struct pmap *cand[MAXMAP];
	int i, n = 0;

	for (i = 0; i < MAXMAP; i++) {
		struct pmap *m = &c->m[i];

		if (m->used && m->pgoff == 0 &&
		    (m->prot & (PROT_READ | PROT_WRITE)) ==
		    (PROT_READ | PROT_WRITE) && (!private_only || m->d))
			cand[n++] = m;
	}
	return n ? cand[rn(c, n)] : NULL;
}

static unsigned long capacity(struct pdesc *d)
{
	return d->state == S_TRACE && d->mode == KCOV_MODE_TRACE_CMP ?
	       (d->n - 1) / 4 : d->n - 1;
}

/*
 * buf[0] is user-writable: the kernel must read it once, bounds-check it
 * and record nothing for a value at or past capacity.
 */
static void op_bufwrite(struct ctx *c)
{
	struct pmap *m = map_with_word0(c, false);
	uint64_t *buf;
	uint64_t v, got, cap;
	struct pdesc *d;
	bool pc;

	if (!m)
		return;
	buf = (uint64_t *)m->addr;
	d = m->d;
	cap = d ? capacity(d) : 0;
	switch (rn(c, 7)) {
	case 0:
		v = ~0ULL;
		break;
	case 1:
		v = 1ULL << 62;
		break;
	case 2:
		v = cap;
		break;
	case 3:
		v = cap ? cap - 1 : 0;
		break;
	case 4:
		v = d ? d->n : rnd(c) % 1024;
		break;
	case 5:
		v = 0;
		break;
	default:
		v = rnd(c);
		break;
	}
	word_set(&buf[0], v);
	syscall(SYS_getpid);
	got = word_get(&buf[0]);
	if (!d) {
		count(OP_BUFWRITE, RS_OK);	/* a shared buffer: no telling */
		return;
	}
	pc = d->state == S_TRACE && d->mode == KCOV_MODE_TRACE_PC &&
	     c->att_id == d->id;
	if (!pc || v >= cap)
		expect(c->tag, OP_BUFWRITE, got == v ? 0 : -1, M(OK),
		       "buf[0] = %#" PRIx64 " (capacity %" PRIu64 ", state %d mode %d) became %#" PRIx64 ": recorded past capacity or while not tracing",
		       v, cap, d->state, d->mode, got);
	else
		expect(c->tag, OP_BUFWRITE,
		       (got > v || (got == v && atomic_load(&shm->narrowed))) &&
		       got <= cap ? 0 : -1,
		       M(OK),
		       "buf[0] = %" PRIu64 " (capacity %" PRIu64 ") became %" PRIu64 " after getpid while tracing PCs",
		       v, cap, got);
}

/*
 * What a fuzzing harness does, every step of which must work: open, size,
 * map the whole buffer, enable (unless this thread is attached already).
 * Returns the mapping, or NULL.
 */
static struct pmap *harness_setup(struct ctx *c)
{
	unsigned long n = 64 + rn(c, 8192);
	int mode = KCOV_MODE_TRACE_PC, fd, err;
	struct pdesc *d = pd_free_slot(c);
	struct pmap *m = map_free_slot(c);
	void *p;

	if (!d || !m)
		return NULL;
	fd = okcov_open(c, false);
	if (fd < 0)
		return NULL;
	memset(d, 0, sizeof(*d));
	d->used = true;
	d->fds[0] = fd;
	d->nfds = 1;
	d->id = new_id();
	att_refresh(c);
	err = ioc(fd, KIOSETBUFSIZE, &n);
	if (!expect(c->tag, OP_SETBUFSIZE, err, M(OK) | M(ENOMEM),
		    "harness: fd %d, n %lu", fd, n) || err)
		return NULL;
	d->state = S_READY;
	d->n = n;
	p = mmap(NULL, buf_bytes(n), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (!expect(c->tag, OP_MMAP, p == MAP_FAILED ? errno : 0, M(OK),
		    "harness: fd %d, n %lu", fd, n) || p == MAP_FAILED)
		return NULL;
	m->used = true;
	m->addr = p;
	m->len = buf_bytes(n);
	m->pgoff = 0;
	m->prot = PROT_READ | PROT_WRITE;
	m->d = d;
	m->id = d->id;
	d->nmaps++;
	if (c->att_id)
		return m;
	err = ioc(fd, KIOENABLE, &mode);
	if (expect(c->tag, OP_ENABLE, err, M(OK), "harness: fd %d", fd) &&
	    !err) {
		d->state = S_TRACE;
		d->mode = mode;
		att_set(c, d->id);
	}
	return m;
}

/* Reset, getpid, and check what a private buffer recorded. */
static void op_bufcheck(struct ctx *c)
{
	struct pmap *m = map_with_word0(c, true);
	uint64_t *buf;
	uint64_t got, cap, i, words, pc;
	struct pdesc *d;

	if (!m && chance(c, 50))
		m = harness_setup(c);
	if (!m)
		return;
	d = m->d;
	buf = (uint64_t *)m->addr;
	cap = capacity(d);
	word_set(&buf[0], 0);
	syscall(SYS_getpid);
	got = word_get(&buf[0]);
	if (d->state != S_TRACE || d->mode != KCOV_MODE_TRACE_PC) {
		/* READY records nothing; nothing here emits comparisons */
		expect(c->tag, OP_BUFCHECK, got ? -1 : 0, M(OK),
		       "state %d mode %d: %" PRIu64 " records after getpid",
		       d->state, d->mode, got);
		return;
	}
	if (!expect(c->tag, OP_BUFCHECK,
		    (cap && !atomic_load(&shm->narrowed) ? got >= 1 : 1) &&
		    got <= cap ? 0 : -1, M(OK),
		    "tracing PCs (n %lu, fd %s): %" PRIu64 " records after getpid",
		    d->n, d->nfds ? "open" : "closed, still mapped", got))
		return;
	words = m->len / 8;
	for (i = 1; i <= got && i < words; i++) {
		pc = word_get(&buf[i]);
		if (pc < KERNEL_TEXT) {
			expect(c->tag, OP_BUFCHECK, -1, M(OK),
			       "record %" PRIu64 " of %" PRIu64 " is %#" PRIx64 ", not a kernel PC",
			       i, got, pc);
			return;
		}
	}
}

/* -------------------------------------------------------------- fork */

static void run_child_ops(struct ctx *c, int nops);

/* The child of fork: a few operations, then exit, often still enabled. */
static void fork_child(struct ctx *parent)
{
	static struct pool child_pool;
	struct ctx *c = calloc(1, sizeof(*c));
	int i, j, k = 0, err;

	if (!c)
		_exit(3);
	c->kind = K_CHILD;
	c->rng = parent->rng ^ 0x5bd1e995;
	snprintf(c->tag, sizeof(c->tag), "fork child of %.40s", parent->tag);
	/* The pool as inherited: same fds, a lock of our own. */
	pthread_rwlock_init(&child_pool.lock, NULL);
	child_pool.cnt = parent->pool->cnt;
	for (i = 0; i < child_pool.cnt; i++) {
		child_pool.e[i].fd = parent->pool->e[i].fd;
		child_pool.e[i].id = parent->pool->e[i].id;
		atomic_store(&child_pool.e[i].n,
			     atomic_load(&parent->pool->e[i].n));
	}
	c->pool = &child_pool;
	for (i = 0; i < MAXD; i++)
		for (j = 0; parent->d[i].used && j < parent->d[i].nfds; j++)
			c->foreign[k++] = parent->d[i].fds[j];
	c->nforeign = k;

	/* A new process starts detached: the parent's descriptors are not ours. */
	for (i = 0; i < c->nforeign; i++)
		if (chance(c, 30))
			expect(c->tag, OP_DISABLE,
			       ioc(c->foreign[i], KIODISABLE, NULL), M(EBUSY),
			       "fork child disabling the parent thread's fd %d",
			       c->foreign[i]);
	run_child_ops(c, 1 + rn(c, 10));
	if (chance(c, 50)) {
		/* tidy exit; otherwise exit enabled with everything open */
		for (i = 0; i < MAXD; i++) {
			struct pdesc *d = &c->d[i];

			if (!d->used || !d->nfds)
				continue;
			if (d->state == S_TRACE) {
				err = ioc(d->fds[0], KIODISABLE, NULL);
				if (expect(c->tag, OP_DISABLE, err, M(OK),
					   "tidy exit, fd %d", d->fds[0]) &&
				    !err)
					d->state = S_READY;
				c->att_id = 0;
			}
		}
	}
	_exit(0);
}

/* Wait for a child of this thread; a crash or a hang is a failure. */
static void wait_child(struct ctx *c, enum op op_id, pid_t pid)
{
	double t0 = now();
	int status, r;

	for (;;) {
		r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			break;
		if (r < 0) {
			expect(c->tag, op_id, errno, M(OK), "waitpid(%d)", pid);
			return;
		}
		if (now() - t0 > hang_s) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			expect(c->tag, op_id, -1, M(OK), "child %d hung for %g s",
			       pid, hang_s);
			return;
		}
		usleep(1000);
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		count(op_id, RS_OK);
	else
		expect(c->tag, op_id, -1, M(OK), "child %d %s %d", pid,
		       WIFSIGNALED(status) ? "killed by signal" : "exited with",
		       WIFSIGNALED(status) ? WTERMSIG(status) :
		       WEXITSTATUS(status));
}

/* Fork a child that runs @child (which never returns) and wait for it. */
static void spawn_child(struct ctx *c, enum op op_id, void (*child)(struct ctx *))
{
	pid_t pid;

	/* the pool must not change while the child copies it */
	pool_rdlock(c->pool);
	pid = fork();
	if (pid == 0)
		child(c);
	pool_unlock(c->pool);
	if (pid < 0) {
		expect(c->tag, op_id, errno, M(OK), "fork");
		return;
	}
	atomic_fetch_add(&shm->procs_spawned, 1);
	wait_child(c, op_id, pid);
}

/* -------------------------------------------------------------- exec */

enum { EX_PLAIN, EX_KEPT, EX_CLOEXEC, EX_SHARED, EX_READY, EX_NR };

/* Child of fork, before execve: set up what the new image will check. */
static void exec_child(struct ctx *parent)
{
	struct ctx c = { .kind = K_CHILD };
	unsigned long n = 16 + rn(parent, 4096), kn = 0;
	int variant, fd = -1, kfd = -1, kstate = S_NONE, attached = 0, err;
	int mode = KCOV_MODE_TRACE_PC;
	char a[7][32], *argv[10];
	struct pent *e;
	int i;

	c.rng = parent->rng ^ 0x27d4eb2f;
	c.pool = parent->pool;
	snprintf(c.tag, sizeof(c.tag), "exec child of %.40s", parent->tag);
	variant = rn(&c, EX_NR);
	switch (variant) {
	case EX_KEPT:
	case EX_CLOEXEC:
	case EX_READY:
		fd = okcov_open(&c, variant == EX_CLOEXEC);
		if (fd < 0)
			break;
		err = ioc(fd, KIOSETBUFSIZE, &n);
		if (!expect(c.tag, OP_SETBUFSIZE, err, M(OK), "n %lu", n))
			break;
		kn = n;
		kstate = S_READY;
		if (variant != EX_READY) {
			err = ioc(fd, KIOENABLE, &mode);
			if (!expect(c.tag, OP_ENABLE, err, M(OK),
				    "fork child, fresh fd"))
				break;
			kstate = S_TRACE;
			attached = 1;
		}
		if (variant != EX_CLOEXEC)
			kfd = fd;
		break;
	case EX_SHARED:
		/* parent holds the pool read-locked across fork() */
		for (i = 0; i < parent->pool->cnt; i++) {
			e = &parent->pool->e[i];
			/* a handed-over fd's flag is not tracked: ask */
			if (fcntl(e->fd, F_GETFD) & FD_CLOEXEC)
				continue;
			err = ioc(e->fd, KIOENABLE, &mode);
			expect(c.tag, OP_ENABLE, err, M(OK) | M(EBUSY),
			       "fork child, shared fd %d", e->fd);
			if (!err) {
				attached = 1;
				kfd = e->fd;
				kstate = S_TRACE;
				/*
				 * kn stays 0: other threads write garbage
				 * into shared buffers, so no count check
				 */
			}
			break;
		}
		break;
	}
	snprintf(a[0], sizeof(a[0]), "%d", shm_fd);
	snprintf(a[1], sizeof(a[1]), "%" PRIu64, rnd(&c));
	snprintf(a[2], sizeof(a[2]), "%d", attached);
	snprintf(a[3], sizeof(a[3]), "%d", kfd);
	snprintf(a[4], sizeof(a[4]), "%d", kstate);
	snprintf(a[5], sizeof(a[5]), "%lu", kn);
	snprintf(a[6], sizeof(a[6]), "%lu", cur_gen());
	argv[0] = "okcov_stress";
	argv[1] = "--exec-child";
	for (i = 0; i < 7; i++)
		argv[i + 2] = a[i];
	argv[9] = NULL;
	execve("/proc/self/exe", argv, environ);
	fail(c.tag, "execve(/proc/self/exe): %s", strerror(errno));
	_exit(2);
}

/*
 * The re-executed image: execve() keeps the attachment (OpenBSD's exec
 * behaviour), so coverage continues and a new KIOENABLE is refused.
 */
static int exec_image_main(char **argv)
{
	struct ctx c = { .kind = K_CHILD };
	int attached, kfd, kstate, fd, err, mode = KCOV_MODE_TRACE_PC;
	unsigned long kn, gen, n = 64;
	uint64_t *buf;
	uint64_t got;

	shm_fd = atoi(argv[0]);
	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE, MAP_SHARED,
		   shm_fd, 0);
	if (shm == MAP_FAILED)
		return 2;
	page = sysconf(_SC_PAGESIZE);
	c.rng = strtoull(argv[1], NULL, 0);
	attached = atoi(argv[2]);
	kfd = atoi(argv[3]);
	kstate = atoi(argv[4]);
	kn = strtoul(argv[5], NULL, 0);
	gen = strtoul(argv[6], NULL, 0);
	snprintf(c.tag, sizeof(c.tag), "exec'd image, variant %d/%d/%d",
		 attached, kfd >= 0, kstate);

	coverage_syscalls(&c, 3);
	if (kfd >= 0 && kstate == S_TRACE) {
		if (kn > 1) {
			buf = mmap(NULL, buf_bytes(kn), PROT_READ | PROT_WRITE,
				   MAP_SHARED, kfd, 0);
			if (expect(c.tag, OP_MMAP, buf == MAP_FAILED ? errno : 0,
				   M(OK), "kept fd %d, n %lu", kfd, kn)) {
				word_set(&buf[0], 0);
				syscall(SYS_getpid);
				got = word_get(&buf[0]);
				expect(c.tag, OP_EXECCHECK,
				       (got >= 1 || atomic_load(&shm->narrowed)) && got < kn ?
				       0 : -1, M(OK),
				       "enabled before execve: %" PRIu64 " records after getpid in the new image",
				       got);
				munmap((void *)buf, buf_bytes(kn));
			}
		}
		if (chance(&c, 60))
			expect(c.tag, OP_EXECCHECK, ioc(kfd, KIODISABLE, NULL),
			       M(OK), "KIODISABLE of the fd enabled before execve");
		return 0;
	}
	if (attached) {
		/* attached to a descriptor execve closed (now DYING) */
		fd = okcov_open(&c, false);
		if (fd < 0)
			return 0;
		err = ioc(fd, KIOSETBUFSIZE, &n);
		expect(c.tag, OP_SETBUFSIZE, err, M(OK), "n %lu", n);
		/* unless an unload took the DYING descriptor meanwhile */
		expect(c.tag, OP_EXECCHECK, ioc(fd, KIOENABLE, &mode),
		       gen == cur_gen() ? M(EBUSY) : M(OK),
		       "KIOENABLE while still attached from before execve");
		if (chance(&c, 50))
			close(fd);
		return 0;
	}
	fd = kfd;
	if (fd < 0 || kstate != S_READY) {
		fd = okcov_open(&c, false);
		if (fd < 0)
			return 0;
		kn = n;
		err = ioc(fd, KIOSETBUFSIZE, &n);
		if (!expect(c.tag, OP_SETBUFSIZE, err, M(OK), "n %lu", n))
			return 0;
	}
	err = ioc(fd, KIOENABLE, &mode);
	expect(c.tag, OP_EXECCHECK, err, M(OK), "KIOENABLE in the new image (fd %d)",
	       fd);
	if (!err) {
		buf = mmap(NULL, buf_bytes(kn), PROT_READ | PROT_WRITE,
			   MAP_SHARED, fd, 0);
		if (expect(c.tag, OP_MMAP, buf == MAP_FAILED ? errno : 0, M(OK),
			   "fd %d, n %lu", fd, kn)) {
			word_set(&buf[0], 0);
			syscall(SYS_getpid);
			got = word_get(&buf[0]);
			expect(c.tag, OP_EXECCHECK,
			       (got >= 1 || atomic_load(&shm->narrowed)) && got < kn ?
				       0 : -1, M(OK),
			       "%" PRIu64 " records after getpid", got);
		}
		if (chance(&c, 50))
			expect(c.tag, OP_DISABLE, ioc(fd, KIODISABLE, NULL),
			       M(OK), "fd %d", fd);
	}
	return 0;	/* exit() closes and unmaps, maybe still enabled */
}

/* ---------------------------------------------------------- dispatch */

static void op_syscalls(struct ctx *c)
{
	coverage_syscalls(c, 1 + rn(c, 8));
	count(OP_SYSCALLS, RS_OK);
}

/* Operations a fork child may do: no fork, exec or thread exit. */
static void run_child_ops(struct ctx *c, int nops)
{
	while (nops-- > 0) {
		switch (rn(c, 14)) {
		case 0:
			op_open(c);
			break;
		case 1:
			op_dup(c);
			break;
		case 2:
			op_close(c);
			break;
		case 3:
		case 4:
			op_setbufsize(c);
			break;
		case 5:
		case 6:
			op_enable(c, chance(c, 20));
			break;
		case 7:
			op_disable(c);
			break;
		case 8:
			op_badioctl(c);
			break;
		case 9:
			op_mmap(c);
			break;
		case 10:
			op_munmap(c);
			break;
		case 11:
			op_bufcheck(c);
			break;
		case 12:
			op_bufwrite(c);
			break;
		default:
			op_syscalls(c);
			break;
		}
	}
}

/* Relative weights of the operations of a worker thread (per mille). */
static const struct {
	enum op op;
	unsigned int w;
} op_weights[] = {
	{ OP_SYSCALLS, 105 }, { OP_OPEN, 70 }, { OP_DUP, 30 },
	{ OP_CLOSE, 55 }, { OP_PASS, 25 }, { OP_SETBUFSIZE, 100 }, { OP_ENABLE, 80 },
	{ OP_ENABLE_LEGACY, 30 }, { OP_DISABLE, 65 }, { OP_BADIOCTL, 50 },
	{ OP_MMAP, 100 }, { OP_MUNMAP, 40 }, { OP_MPROTECT, 20 },
	{ OP_MREMAP, 20 }, { OP_BUFWRITE, 70 }, { OP_BUFCHECK, 110 },
	{ OP_FORK, 15 }, { OP_EXEC, 7 }, { OP_THREAD_EXIT, 8 },
};

static void do_op(struct ctx *c)
{
	unsigned int r = rn(c, 1000), i;
	enum op op = OP_SYSCALLS;
	double t0;

	for (i = 0; i < ARRAY_SIZE(op_weights); i++) {
		if (r < op_weights[i].w) {
			op = op_weights[i].op;
			break;
		}
		r -= op_weights[i].w;
	}
	/* stuck attached to a DYING descriptor: exiting is the way out */
	if (c->att_id && !pd_pick_if(c, pd_is_trace) && chance(c, 2))
		op = OP_THREAD_EXIT;
	c->ops++;
	t0 = now();
	switch (op) {
	case OP_OPEN:
		op_open(c);
		break;
	case OP_DUP:
		op_dup(c);
		break;
	case OP_CLOSE:
		op_close(c);
		break;
	case OP_PASS:
		op_pass(c);
		break;
	case OP_SETBUFSIZE:
		op_setbufsize(c);
		break;
	case OP_ENABLE:
		op_enable(c, false);
		break;
	case OP_ENABLE_LEGACY:
		op_enable(c, true);
		break;
	case OP_DISABLE:
		op_disable(c);
		break;
	case OP_BADIOCTL:
		op_badioctl(c);
		break;
	case OP_MMAP:
		op_mmap(c);
		break;
	case OP_MUNMAP:
		op_munmap(c);
		break;
	case OP_MPROTECT:
		op_mprotect(c);
		break;
	case OP_MREMAP:
		op_mremap(c);
		break;
	case OP_BUFWRITE:
		op_bufwrite(c);
		break;
	case OP_BUFCHECK:
		op_bufcheck(c);
		break;
	case OP_FORK:
		spawn_child(c, OP_FORK, fork_child);
		break;
	case OP_EXEC:
		spawn_child(c, OP_EXEC, exec_child);
		break;
	case OP_THREAD_EXIT:
		c->exiting = true;
		break;
	default:
		op_syscalls(c);
		break;
	}
	atomic_fetch_add_explicit(&shm->ns[op], (unsigned long)((now() - t0) * 1e9),
				  memory_order_relaxed);
	atomic_fetch_add_explicit(&shm->timed[op], 1, memory_order_relaxed);
}

/* --------------------------------------------------- worker threads */

struct slot {
	pthread_t th;
	bool running;
	atomic_bool done;
	atomic_uint acked;	/* drain epoch this thread finished */
	int spawns;
	/* what an exiting thread hands to the supervisor */
	int h_fd;
	enum dstate h_state;
	unsigned long h_n, h_id;
	int proc, idx;
	struct pool *pool;
	uint64_t seed;
};

static void unmap_all(struct ctx *c)
{
	int i;

	for (i = 0; i < MAXMAP; i++) {
		struct pmap *m = &c->m[i];

		if (!m->used)
			continue;
		expect(c->tag, OP_MUNMAP, munmap(m->addr, m->len) ? errno : 0,
		       M(OK), "munmap(%p, %zu)", m->addr, m->len);
		map_drop(m);
	}
}

/* Close every private descriptor, some after disabling, some not. */
static void close_all(struct ctx *c, struct slot *handoff)
{
	struct pdesc *d;
	int i, err;

	for (i = 0; i < MAXD; i++) {
		d = &c->d[i];
		if (!d->used || !d->nfds)
			continue;
		if (handoff && handoff->h_fd < 0 && chance(c, 60)) {
			/* keep one fd for the supervisor */
			handoff->h_fd = d->fds[--d->nfds];
			handoff->h_state = d->state;
			handoff->h_n = d->n;
			handoff->h_id = d->id;
		} else if (d->state == S_TRACE && chance(c, 40)) {
			err = ioc(d->fds[0], KIODISABLE, NULL);
			if (expect(c->tag, OP_DISABLE, err, M(OK),
				   "fd %d before close", d->fds[0]) && !err) {
				d->state = S_READY;
				c->att_id = 0;
			}
		}
		while (d->nfds)
			pd_close_fd(c, d, d->nfds - 1);
	}
}

/* Leave only DYING descriptors behind, attached to this live thread. */
static void drain_self(struct ctx *c, struct slot *s, unsigned int epoch)
{
	unsigned long n = 1 + rn(c, 4096);
	int mode = KCOV_MODE_TRACE_PC, fd, err, i;

	unmap_all(c);
	/* the attachment is valid: rmmod waits for every thread's ack */
	if (c->att_id && c->att_gen != cur_gen())
		c->att_id = 0;
	for (i = 0; i < MAXD; i++) {
		struct pdesc *d = &c->d[i];

		if (d->used && d->nfds && d->state == S_READY && !c->att_id &&
		    chance(c, 60)) {
			err = ioc(d->fds[0], KIOENABLE, &mode);
			if (expect(c->tag, OP_ENABLE, err, M(OK),
				   "drain: fd %d", d->fds[0]) && !err) {
				d->state = S_TRACE;
				d->mode = mode;
				att_set(c, d->id);
			}
		}
	}
	close_all(c, NULL);
	if (!c->att_id && chance(c, 70)) {
		fd = okcov_open(c, false);
		if (fd >= 0) {
			err = ioc(fd, KIOSETBUFSIZE, &n);
			expect(c->tag, OP_SETBUFSIZE, err, M(OK) | M(ENOMEM),
			       "drain: n %lu", n);
			if (!err) {
				err = ioc(fd, KIOENABLE, &mode);
				if (expect(c->tag, OP_ENABLE, err, M(OK),
					   "drain: fresh fd %d", fd) && !err)
					att_set(c, new_id());
			}
			coverage_syscalls(c, 3);
			expect(c->tag, OP_CLOSE, close(fd) ? errno : 0, M(OK),
			       "drain: fd %d", fd);
		}
	}
	if (c->att_id)
		atomic_fetch_add(&shm->dying_at_drain, 1);
	count(OP_DRAIN, RS_OK);
	atomic_store(&s->acked, epoch);
}

static void *worker_fn(void *arg)
{
	struct slot *s = arg;
	struct ctx *c = calloc(1, sizeof(*c));
	unsigned int epoch, done_epoch = 0;
	int phase;

	if (!c)
		abort();
	c->kind = K_THREAD;
	c->pool = s->pool;
	c->rng = s->seed;
	snprintf(c->tag, sizeof(c->tag), "proc %d thread %d.%d", s->proc,
		 s->idx, s->spawns);
	atomic_fetch_add(&shm->threads_spawned, 1);
	for (;;) {
		phase = atomic_load(&shm->phase);
		if (phase == PH_STOP)
			break;
		if (phase != PH_RUN) {
			epoch = atomic_load(&shm->epoch);
			if (done_epoch != epoch) {
				drain_self(c, s, epoch);
				done_epoch = epoch;
			}
			/* alive, maybe attached to a DYING descriptor */
			coverage_syscalls(c, 2);
			usleep(2000);
			continue;
		}
		if (c->exiting)
			break;
		do_op(c);
	}
	unmap_all(c);
	close_all(c, c->exiting && atomic_load(&shm->phase) == PH_RUN ?
		  s : NULL);
	if (c->exiting)
		count(OP_THREAD_EXIT, RS_OK);
	free(c);
	atomic_store(&s->done, true);
	return NULL;	/* maybe still attached: the exit probe detaches */
}

static atomic_bool noise_stop;

static void *noise_fn(void *arg)
{
	unsigned long n = 0;

	while (!atomic_load(&noise_stop)) {
		coverage_syscalls(NULL, 4);
		if (++n % 64 == 0)	/* counted in syscalls */
			atomic_fetch_add_explicit(&shm->cnt[OP_NOISE][RS_OK],
						  64 * 4, memory_order_relaxed);
		usleep(5000);
	}
	return NULL;
}

/*
 * A thread that exited handed over one of its descriptors. Its exit makes
 * a TRACE descriptor READY, so another thread may enable it, right after
 * pthread_join() (which returns before sched_process_exit on kernels
 * before 6.16: okcov detaches a PF_EXITING thread itself).
 */
static void check_handoff(struct ctx *sup, struct slot *s)
{
	int mode = KCOV_MODE_TRACE_PC, err;
	struct pool *p = s->pool;
	unsigned int mask;

	if (s->h_fd < 0)
		return;
	err = ioc(s->h_fd, KIOENABLE, &mode);
	if (s->h_state == S_TRACE)
		atomic_fetch_add(&shm->handoff_trace, 1);
	mask = s->h_state == S_NONE ? M(EBUSY) : M(OK);
	if (expect(sup->tag, OP_HANDOFF, err, mask,
		   "fd %d of a thread just joined, state %d%s", s->h_fd,
		   s->h_state, s->h_state == S_TRACE ?
		   " (it exited enabled)" : "") && !err)
		expect(sup->tag, OP_DISABLE, ioc(s->h_fd, KIODISABLE, NULL),
		       M(OK), "handed-over fd %d", s->h_fd);
	pool_wrlock(p);
	if (!err && atomic_load(&shm->phase) == PH_RUN && p->cnt < POOLMAX) {
		p->e[p->cnt].fd = s->h_fd;
		p->e[p->cnt].id = s->h_id;
		atomic_store(&p->e[p->cnt].n, s->h_n);
		p->cnt++;
		s->h_fd = -1;
	}
	pool_unlock(p);
	if (s->h_fd >= 0)
		close(s->h_fd);
	s->h_fd = -1;
}

static void pool_close_all(struct pool *p)
{
	int i;

	pool_wrlock(p);
	for (i = 0; i < p->cnt; i++)
		close(p->e[i].fd);
	p->cnt = 0;
	pool_unlock(p);
}

static void spawn(struct slot *s, uint64_t base)
{
	pthread_attr_t attr;

	s->seed = splitmix(&base) ^ ((uint64_t)s->spawns << 32);
	s->h_fd = -1;
	atomic_store(&s->done, false);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 << 10);
	if (pthread_create(&s->th, &attr, worker_fn, s)) {
		fail("supervisor", "pthread_create: %s", strerror(errno));
		s->running = false;
	} else {
		s->running = true;
	}
	pthread_attr_destroy(&attr);
	s->spawns++;
}

static int worker_main(int proc, int nthreads, uint64_t seed)
{
	struct slot slots[MAX_THREADS];
	struct ctx sup = { .kind = K_SUPERVISOR };
	pthread_rwlockattr_t ra;
	unsigned int epoch, acked_epoch = 0;
	struct pool pool;
	pthread_t noise;
	bool stopping = false, all;
	uint64_t base = seed;
	int i, phase;

	snprintf(sup.tag, sizeof(sup.tag), "proc %d supervisor", proc);
	pthread_rwlockattr_init(&ra);
	pthread_rwlockattr_setkind_np(&ra,
		PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&pool.lock, &ra);
	pool.cnt = 0;
	memset(slots, 0, sizeof(slots));
	pthread_create(&noise, NULL, noise_fn, NULL);
	for (i = 0; i < nthreads; i++) {
		slots[i].proc = proc;
		slots[i].idx = i;
		slots[i].pool = &pool;
		slots[i].h_fd = -1;
		spawn(&slots[i], splitmix(&base));
	}
	for (;;) {
		phase = atomic_load(&shm->phase);
		if (phase == PH_STOP)
			stopping = true;
		all = true;
		for (i = 0; i < nthreads; i++) {
			struct slot *s = &slots[i];

			if (s->running && atomic_load(&s->done)) {
				pthread_join(s->th, NULL);
				s->running = false;
				check_handoff(&sup, s);
			}
			if (!s->running && !stopping)
				spawn(s, splitmix(&base));
			if (s->running)
				all = false;
		}
		if (stopping && all)
			break;
		epoch = atomic_load(&shm->epoch);
		if ((phase == PH_DRAIN || phase == PH_UNLOADED) &&
		    acked_epoch != epoch) {
			bool acked = true;

			for (i = 0; i < nthreads; i++)
				if (slots[i].running &&
				    atomic_load(&slots[i].acked) != epoch)
					acked = false;
			if (acked) {
				pool_close_all(&pool);
				acked_epoch = epoch;
				atomic_fetch_add(&shm->drained, 1);
			}
		}
		usleep(2000);
	}
	pool_close_all(&pool);
	atomic_store(&noise_stop, true);
	pthread_join(noise, NULL);
	return 0;
}

/* ------------------------------------------------------------ libkmod */

static struct kmod_ctx *kctx;
static const char *ko_path, *ko_args;

static void kmod_log(void *data, int priority, const char *file, int line,
		     const char *fn, const char *format, va_list args)
{
	char buf[512];

	vsnprintf(buf, sizeof(buf), format, args);
	buf[strcspn(buf, "\n")] = 0;
	say("# libkmod: %s", buf);
}

static int do_insmod(void)
{
	struct kmod_module *mod;
	int err;

	err = kmod_module_new_from_path(kctx, ko_path, &mod);
	if (err < 0)
		return -err;
	err = kmod_module_insert_module(mod, 0, ko_args);
	kmod_module_unref(mod);
	return err < 0 ? -err : 0;
}

static int do_rmmod(void)
{
	struct kmod_module *mod;
	int err;

	err = kmod_module_new_from_name(kctx, OKCOV_NAME, &mod);
	if (err < 0)
		return -err;
	err = kmod_module_remove_module(mod, 0);	/* O_NONBLOCK */
	kmod_module_unref(mod);
	return err < 0 ? -err : 0;
}

static bool okcov_loaded(void)
{
	return access("/sys/module/" OKCOV_NAME "/initstate", F_OK) == 0;
}

static unsigned long read_max_entries(void)
{
	unsigned long v = 0;
	FILE *f = fopen(OKCOV_MAX_PARAM, "r");

	if (!f)
		return 0;
	if (fscanf(f, "%lu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

/* okcov's filter or exclude parameter is set: a syscall may record nothing. */
static bool read_narrowed(void)
{
	static const char * const params[] = { "filter", "exclude" };
	char path[128], val[256];
	unsigned int i;
	bool narrowed = false;
	FILE *f;

	for (i = 0; i < ARRAY_SIZE(params); i++) {
		snprintf(path, sizeof(path), "/sys/module/okcov/parameters/%s",
			 params[i]);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(val, sizeof(val), f)) {
			val[strcspn(val, "\n")] = 0;
			if (*val && strcmp(val, "(null)"))
				narrowed = true;
		}
		fclose(f);
	}
	return narrowed;
}

static bool load(const char *why)
{
	double t0 = now();
	int err = do_insmod();

	if (!expect("cycler", OP_INSMOD, err, M(OK), "insmod %s %s (%s)",
		    ko_path, ko_args, why))
		return false;
	atomic_store(&shm->max_entries, read_max_entries());
	atomic_store(&shm->narrowed, read_narrowed());
	if (!max_entries()) {
		fail("cycler", "cannot read %s", OKCOV_MAX_PARAM);
		atomic_store(&shm->max_entries, 512UL << 10);
	}
	say("# %s: insmod ok (%.2f s)", why, now() - t0);
	return true;
}

/* okcov is gone: its device too. */
static void check_unloaded(void)
{
	int fd = open(OKCOV_PATH, O_RDWR);

	expect("cycler", OP_OPEN, fd < 0 ? errno : 0, M(ENOENT) | M(ENXIO) |
	       M(ENODEV), "open(%s) with okcov unloaded", OKCOV_PATH);
	if (fd >= 0)
		close(fd);
}

/* rmmod that must succeed: nothing is open or mapped any more. */
static bool unload(const char *why)
{
	double t0 = now();
	int err, tries = 0;

	while ((err = do_rmmod()) == EAGAIN && tries++ < 20)
		usleep(100 * 1000);
	if (!expect("cycler", OP_RMMOD, err, M(OK),
		    "%s: rmmod with no descriptor open or mapped (%d retries)",
		    why, tries))
		return false;
	if (tries)
		fail("cycler", "%s: rmmod refused %d times (EAGAIN) with no descriptor open or mapped",
		     why, tries);
	atomic_fetch_add(&shm->gen, 1);
	atomic_fetch_add(&shm->unloads, 1);
	check_unloaded();
	say("# %s: rmmod ok (%.2f s)", why, now() - t0);
	return true;
}

/* --------------------------------------------------------------- engine */

static pid_t workers[MAX_PROCS];
static bool worker_dead[MAX_PROCS];

/* Reap exited workers; an early or abnormal exit is a failure. */
static int reap_workers(int nprocs, bool expected)
{
	int i, status, alive = 0;

	for (i = 0; i < nprocs; i++) {
		if (worker_dead[i])
			continue;
		if (waitpid(workers[i], &status, WNOHANG) != workers[i]) {
			alive++;
			continue;
		}
		worker_dead[i] = true;
		if (!expected || !WIFEXITED(status) || WEXITSTATUS(status))
			fail("main", "worker %d (pid %d) %s %d%s", i, workers[i],
			     WIFSIGNALED(status) ? "killed by signal" :
			     "exited with", WIFSIGNALED(status) ?
			     WTERMSIG(status) : WEXITSTATUS(status),
			     expected ? "" : " before the end");
	}
	return alive;
}

static int dead_workers(int nprocs)
{
	int i, n = 0;

	for (i = 0; i < nprocs; i++)
		n += worker_dead[i];
	return n;
}

static double t_start;

/* One rmmod/insmod cycle around a drain; false if the run must stop. */
static bool run_cycle(int nprocs)
{
	int n = atomic_fetch_add(&shm->cycles, 1) + 1;
	double t0 = now(), t1;
	int err, dying;

	/* in use: refused (or, if every descriptor happens to be closed, not) */
	atomic_fetch_add(&shm->seq, 1);
	err = do_rmmod();
	expect("cycler", OP_RMMOD, err, M(OK) | M(EAGAIN) | M(EBUSY),
	       "cycle %d: rmmod while in use", n);
	if (!err) {
		atomic_fetch_add(&shm->gen, 1);
		atomic_fetch_add(&shm->unloads, 1);
		if (!load("reload after an idle moment"))
			return false;
	} else {
		atomic_fetch_add(&shm->refusals, 1);
	}
	atomic_fetch_add(&shm->seq, 1);
	expect("cycler", OP_INSMOD, do_insmod(), M(EEXIST),
	       "cycle %d: insmod while loaded", n);

	atomic_store(&shm->drained, 0);
	atomic_store(&shm->dying_at_drain, 0);
	atomic_fetch_add(&shm->epoch, 1);
	atomic_store(&shm->phase, PH_DRAIN);
	while (atomic_load(&shm->drained) + dead_workers(nprocs) < nprocs) {
		reap_workers(nprocs, false);
		if (now() - t0 > 1.5 * hang_s) {
			fail("cycler", "cycle %d: drain not done after %g s (%d of %d processes)",
			     n, 1.5 * hang_s, atomic_load(&shm->drained),
			     nprocs);
			return false;
		}
		usleep(10 * 1000);
	}
	t1 = now();
	dying = atomic_load(&shm->dying_at_drain);
	atomic_fetch_add(&shm->seq, 1);
	if (!unload("drained"))
		return false;
	atomic_store(&shm->phase, PH_UNLOADED);
	usleep(500 * 1000);	/* threads run on, their descriptors freed */
	if (!load("drained"))
		return false;
	atomic_fetch_add(&shm->seq, 1);
	atomic_store(&shm->phase, PH_RUN);
	say("# t=%.1fs cycle %d: rmmod in use -> %s; drain %.1f s, %d threads attached to DYING descriptors at unload; cycle %.1f s",
	    t0 - t_start, n, err ? res_names[res_of(err)] : "ok (idle)",
	    t1 - t0, dying, now() - t0);
	return true;
}

static bool run_engine(int nprocs, int nthreads, double secs, double cycle_s,
		       uint64_t seed)
{
	double t0 = now(), next = t0 + cycle_s, tc;
	bool ok = true;
	int i;

	memset(worker_dead, 0, sizeof(worker_dead));
	atomic_store(&shm->phase, PH_RUN);
	for (i = 0; i < nprocs; i++) {
		uint64_t s = seed + 0x1000003ULL * (i + 1);

		workers[i] = fork();
		if (workers[i] == 0)
			_exit(worker_main(i, nthreads, splitmix(&s)));
		if (workers[i] < 0) {
			fail("main", "fork: %s", strerror(errno));
			worker_dead[i] = true;
		}
		atomic_fetch_add(&shm->procs_spawned, 1);
	}
	while (now() - t0 < secs) {
		if (!reap_workers(nprocs, false))
			break;
		/*
		 * A cycle every cycle_s seconds, with at least cycle_s / 2 of
		 * plain stress in between: under emulation a cycle (drain,
		 * ftrace hook removal and reinstall) takes longer than that.
		 * A cycle started may run past the end.
		 */
		if (cycle_s > 0 && now() >= next &&
		    now() - t0 < secs - cycle_s / 2) {
			tc = now();
			if (!run_cycle(nprocs)) {
				ok = false;
				break;
			}
			next = tc + cycle_s;
			if (next < now() + cycle_s / 2)
				next = now() + cycle_s / 2;
		}
		usleep(50 * 1000);
	}
	atomic_store(&shm->phase, PH_STOP);
	t0 = now();
	while (reap_workers(nprocs, true)) {
		if (now() - t0 > 1.5 * hang_s) {
			fail("main", "workers still running %g s after the stop",
			     1.5 * hang_s);
			for (i = 0; i < nprocs; i++)
				if (!worker_dead[i])
					kill(workers[i], SIGKILL);
			reap_workers(nprocs, true);
			return false;
		}
		usleep(20 * 1000);
	}
	return ok;
}

/* --------------------------------------------------------- after checks */

#define MEMINFO_MAX	64

struct meminfo {
	long slab, vmalloc, memfree;	/* KiB */
	long pcp;			/* KiB on per-CPU free lists */
	int n;				/* every field, for the report */
	char name[MEMINFO_MAX][32];
	long kib[MEMINFO_MAX];
};

static bool read_meminfo(struct meminfo *m)
{
	char line[256], name[32];
	FILE *f = fopen("/proc/meminfo", "r");
	long v;

	m->slab = m->vmalloc = m->memfree = -1;
	m->n = 0;
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%31[^:]: %ld", name, &v) != 2)
			continue;
		if (!strcmp(name, "Slab"))
			m->slab = v;
		else if (!strcmp(name, "VmallocUsed"))
			m->vmalloc = v;
		else if (!strcmp(name, "MemFree"))
			m->memfree = v;
		if (m->n < MEMINFO_MAX) {
			strcpy(m->name[m->n], name);
			m->kib[m->n++] = v;
		}
	}
	fclose(f);
	/*
	 * Free pages parked on per-CPU lists are not in MemFree, and how
	 * many there are depends on the last few frees: count them back.
	 */
	m->pcp = 0;
	f = fopen("/proc/zoneinfo", "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, " count: %ld", &v) == 1)
			m->pcp += v * (page / 1024);
	if (f)
		fclose(f);
	return m->slab >= 0 && m->vmalloc >= 0 && m->memfree >= 0;
}

/* Every /proc/meminfo field that moved by 256 KiB or more. */
static void meminfo_deltas(const struct meminfo *a, const struct meminfo *b)
{
	char line[1024];
	size_t n = 0;
	int i;

	for (i = 0; i < a->n && i < b->n; i++) {
		long d = b->kib[i] - a->kib[i];

		if (strcmp(a->name[i], b->name[i]) || (d < 256 && d > -256))
			continue;
		n += snprintf(line + n, sizeof(line) - n, "%s%s %+ld",
			      n ? ", " : "", a->name[i], d);
		if (n >= sizeof(line))
			break;
	}
	say("# meminfo fields that moved (KiB): %s", n ? line : "none");
}

static void write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0)
		return;
	if (write(fd, s, strlen(s)) < 0)
		say("# write %s to %s: %s", s, path, strerror(errno));
	close(fd);
}

/*
 * Shrink every slab cache (aliases are symlinks: each cache once).  This
 * frees empty slabs and, on KASAN kernels, empties the cache's share of
 * KASAN's quarantine, where freed objects otherwise wait (up to 1/32 of RAM)
 * still counted in Slab.
 */
static void shrink_slabs(void)
{
	DIR *d = opendir("/sys/kernel/slab");
	struct dirent *e;
	char path[PATH_MAX];

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink",
			 e->d_name);
		write_file(path, "1");
	}
	closedir(d);
}

static void settle(void)
{
	sync();
	write_file("/proc/sys/vm/drop_caches", "3");
	sleep(2);	/* RCU callbacks, deferred vfree */
	write_file("/proc/sys/vm/drop_caches", "3");
	shrink_slabs();
	sleep(1);
}

/* ----------------------------------------------------------------- main */

static void usage_exit(void)
{
	fprintf(stderr,
		"usage: okcov_stress [--seed N] [--duration S] [--procs M] [--threads K]\n"
		"                    [--cycle S] [--warmup S] [--hang S] [--ko PATH]\n");
	exit(2);
}

static void setup_guard(void)
{
	char *g;

	page = sysconf(_SC_PAGESIZE);
	g = mmap(NULL, 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g == MAP_FAILED || mprotect(g, page, PROT_READ | PROT_WRITE)) {
		perror("mmap");
		exit(1);
	}
	memset(g, 0x5a, page);
	guard_rw = g;
	guard_none = g + page;
}

int main(int argc, char **argv)
{
	uint64_t seed = 0;
	double duration = 60, cycle_s = 10, warmup = 5, t0, elapsed = 0;
	int nprocs = 4, nthreads = 4, i, r, pass = 0, nfail = 0, skip = 0;
	bool seeded = false, preloaded, ok = false, unloaded;
	static struct meminfo before = { .slab = -1 }, after;
	unsigned long total, fails;
	long dslab = 0, dvm = 0, dfree = 0;
	char line[1024];
	size_t n;

	if (argc >= 9 && !strcmp(argv[1], "--exec-child"))
		return exec_image_main(argv + 2);

	ko_path = getenv("OKCOV_KO");
	ko_args = getenv("OKCOV_KO_ARGS");
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			usage_exit();
		if (!strcmp(a, "--seed"))
			seed = strtoull(v, NULL, 0), seeded = true;
		else if (!strcmp(a, "--duration"))
			duration = atof(v);
		else if (!strcmp(a, "--procs"))
			nprocs = atoi(v);
		else if (!strcmp(a, "--threads"))
			nthreads = atoi(v);
		else if (!strcmp(a, "--cycle"))
			cycle_s = atof(v);
		else if (!strcmp(a, "--warmup"))
			warmup = atof(v);
		else if (!strcmp(a, "--ko"))
			ko_path = v;
		else if (!strcmp(a, "--hang"))
			hang_s = atof(v);
		else
			usage_exit();
		i++;
	}
	if (nprocs < 1 || nprocs > MAX_PROCS || nthreads < 1 ||
	    nthreads > MAX_THREADS || duration <= 0 || hang_s <= 0)
		usage_exit();
	if (!seeded) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		seed = (uint64_t)ts.tv_sec * 1000003 ^ ts.tv_nsec ^ getpid();
	}
	if (!ko_args)
		ko_args = "";
	setvbuf(stdout, NULL, _IONBF, 0);

	say("TAP version 13");
	say("1..4");
	say("# okcov_stress: seed=%" PRIu64 " duration=%g procs=%d threads=%d cycle=%g warmup=%g hang=%g",
	    seed, duration, nprocs, nthreads, cycle_s, warmup, hang_s);
	say("# okcov_stress: ko=%s ko_args='%s' reproduce with: okcov_stress --seed %" PRIu64 " --duration %g --procs %d --threads %d --cycle %g --warmup %g --hang %g",
	    ko_path ? ko_path : "(none)", ko_args, seed, duration, nprocs,
	    nthreads, cycle_s, warmup, hang_s);
	say("# okcov_stress: tolerances: Slab +%d KiB, VmallocUsed +%d KiB, MemFree -%d KiB",
	    TOL_SLAB, TOL_VMALLOC, TOL_MEMFREE);

	shm_fd = memfd_create("okcov_stress", 0);	/* no CLOEXEC: exec'd children map it */
	if (shm_fd < 0 || ftruncate(shm_fd, sizeof(*shm))) {
		perror("memfd_create");
		return 1;
	}
	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE, MAP_SHARED,
		   shm_fd, 0);
	if (shm == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	shm->seed = seed;
	shm->procs = nprocs;
	shm->threads = nthreads;
	setup_guard();

	kctx = kmod_new(NULL, NULL);
	if (!kctx) {
		say("not ok 1 stress # cannot create a libkmod context");
		return 1;
	}
	kmod_set_log_fn(kctx, kmod_log, NULL);

	preloaded = okcov_loaded();
	if (!preloaded && !ko_path) {
		say("# okcov is not loaded and neither --ko nor $OKCOV_KO says where it is");
		say("not ok 1 stress");
		say("# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0");
		return 1;
	}
	if (!preloaded && !load("initial load"))
		goto report;
	if (preloaded && !ko_path) {
		say("# okcov was loaded by someone else and no okcov.ko is known: no rmmod/insmod cycles");
		cycle_s = 0;
	}
	atomic_store(&shm->max_entries, read_max_entries());
	atomic_store(&shm->narrowed, read_narrowed());
	say("# okcov_stress: max_entries=%lu%s", max_entries(),
	    atomic_load(&shm->narrowed) ?
	    ", function set narrowed: not requiring getpid to record" : "");

	/* warm-up, then a fresh load: the baseline */
	t0 = now();
	run_engine(nprocs, nthreads, warmup, 0, seed ^ 0xa5a5a5a5);
	say("# warm-up: %.1f s", now() - t0);
	if (ko_path) {
		if (!unload("after warm-up") || !load("baseline"))
			goto report;
	}
	settle();
	read_meminfo(&before);
	say("# baseline (okcov loaded, after warm-up): Slab %ld KiB, VmallocUsed %ld KiB, MemFree %ld KiB (+%ld KiB on per-CPU lists)",
	    before.slab, before.vmalloc, before.memfree, before.pcp);

	t_start = now();
	run_engine(nprocs, nthreads, duration, cycle_s, seed);
	elapsed = now() - t_start;

report:
	total = 0;
	say("# ops by type: executed (results)");
	for (i = 0; i < NOPS; i++) {
		unsigned long sum = 0, c;

		n = 0;
		for (r = 0; r < NRES; r++) {
			c = atomic_load(&shm->cnt[i][r]);
			if (!c)
				continue;
			sum += c;
			n += snprintf(line + n, sizeof(line) - n, "%s%s %lu",
				      n ? ", " : "", res_names[r], c);
		}
		total += sum;
		c = atomic_load(&shm->timed[i]);
		if (c)
			n += snprintf(line + n, sizeof(line) - n,
				      "; %.1f ms each",
				      atomic_load(&shm->ns[i]) / 1e6 / c);
		say("#   %-22s %9lu  (%s)", op_names[i], sum, n ? line : "-");
	}
	fails = atomic_load(&shm->failures);
	say("# totals: %lu operations and checks + %lu bystander syscalls, %lu threads spawned, %lu processes spawned (workers, fork and exec children), %.1f s, seed %" PRIu64,
	    total - atomic_load(&shm->cnt[OP_NOISE][RS_OK]),
	    atomic_load(&shm->cnt[OP_NOISE][RS_OK]),
	    atomic_load(&shm->threads_spawned),
	    atomic_load(&shm->procs_spawned), elapsed, seed);
	say("# cycles: %lu, rmmod refused while in use %lu times, unloads %lu; descriptors re-enabled right after their thread exited enabled: %lu",
	    atomic_load(&shm->cycles), atomic_load(&shm->refusals),
	    atomic_load(&shm->unloads), atomic_load(&shm->handoff_trace));
	if (fails) {
		say("not ok 1 stress: %lu unexpected results (seed %" PRIu64 ")",
		    fails, seed);
		nfail++;
	} else {
		say("ok 1 stress: %lu operations and checks, no unexpected result",
		    total - atomic_load(&shm->cnt[OP_NOISE][RS_OK]));
		pass++;
	}

	/* 2: okcov unloads at the end */
	fails = atomic_load(&shm->failures);
	unloaded = false;
	if (!ko_path) {
		say("ok 2 okcov unloads at the end # SKIP no okcov.ko to load again");
		skip++;
	} else if (okcov_loaded() && unload("end of run") && !okcov_loaded()) {
		unloaded = true;
	}
	if (!ko_path) {
		;
	} else if (unloaded) {
		say("ok 2 okcov unloads at the end");
		pass++;
	} else {
		say("not ok 2 okcov unloads at the end");
		nfail++;
	}

	/* 3: kmemleak */
	if (access(KMEMLEAK, F_OK)) {
		say("ok 3 kmemleak # SKIP the kernel has no kmemleak (%s)",
		    KMEMLEAK);
		skip++;
	} else {
		FILE *f;

		write_file(KMEMLEAK, "scan");
		sleep(6);
		write_file(KMEMLEAK, "scan");
		f = fopen(KMEMLEAK, "r");
		n = 0;
		while (f && fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = 0;
			say("# kmemleak: %s", line);
			n++;
		}
		if (f)
			fclose(f);
		if (!f) {
			say("not ok 3 kmemleak: cannot read %s", KMEMLEAK);
			nfail++;
		} else if (n) {
			say("not ok 3 kmemleak: %zu lines of report", n);
			nfail++;
		} else {
			say("ok 3 kmemleak: no leak reported");
			pass++;
		}
	}

	/* 4: memory back to the baseline */
	if (!ko_path) {
		say("ok 4 memory returned to baseline # SKIP okcov cannot be reloaded");
		skip++;
	} else if (!unloaded || before.slab < 0) {
		say("not ok 4 memory returned to baseline: no baseline or okcov still loaded");
		nfail++;
	} else {
		for (i = 0; i < 3; i++) {
			settle();
			read_meminfo(&after);
			dslab = after.slab - before.slab;
			dvm = after.vmalloc - before.vmalloc;
			dfree = after.memfree + after.pcp -
				(before.memfree + before.pcp);
			say("# memory after (okcov unloaded): Slab %ld KiB (%+ld), VmallocUsed %ld KiB (%+ld), MemFree %ld KiB (%+ld; %+ld counting per-CPU free lists)",
			    after.slab, dslab, after.vmalloc, dvm,
			    after.memfree, after.memfree - before.memfree,
			    dfree);
			meminfo_deltas(&before, &after);
			ok = dslab <= TOL_SLAB && dvm <= TOL_VMALLOC &&
			     dfree >= -TOL_MEMFREE;
			if (ok)
				break;
		}
		if (ok) {
			say("ok 4 memory returned to baseline: Slab %+ld KiB, VmallocUsed %+ld KiB, MemFree (with per-CPU free lists) %+ld KiB",
			    dslab, dvm, dfree);
			pass++;
		} else {
			say("not ok 4 memory returned to baseline: Slab %+ld KiB (max +%d), VmallocUsed %+ld KiB (max +%d), MemFree (with per-CPU free lists) %+ld KiB (min -%d)",
			    dslab, TOL_SLAB, dvm, TOL_VMALLOC, dfree,
			    TOL_MEMFREE);
			nfail++;
		}
	}

	if (preloaded && ko_path && !okcov_loaded())
		do_insmod();	/* leave it as we found it */
	if (atomic_load(&shm->failures) > fails)
		say("# %lu more unexpected results during the final checks",
		    atomic_load(&shm->failures) - fails);
	say("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0", pass,
	    nfail, skip);
	kmod_unref(kctx);
	return nfail ? 1 : 0;
}
