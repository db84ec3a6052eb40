/* SPDX-License-Identifier: GPL-2.0 */
/*
 * okcov_stress: what its parts share (see main.c for what it does).
 *
 *   report.c    results: counting, "# FAIL" lines, the shared state
 *   args.c      coverage syscalls, bad pointers, random sizes, modes, ioctls
 *   desc.c      open, private descriptors and the shared pool, the ioctls
 *   remote.c    the process's remote descriptor, deferred work
 *   deep.c      deep probes installed and removed on the target's blocks
 *   mmap.c      mmap/munmap/mprotect/mremap, buf[0] and coverage checks
 *   spawn.c     fork and exec children, and the exec'd image
 *   worker.c    dispatch, worker threads, a worker process's supervisor
 *   engine.c    loading and unloading okcov, the cycler, the run
 *   memcheck.c  /proc/meminfo and settling before measuring it
 *   main.c      options, the run, the four test points
 */
#ifndef OKCOV_STRESS_H
#define OKCOV_STRESS_H

#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "okcov_test.h"		/* okcov.h, ARRAY_SIZE, st_max_entries() */
#include "okcov_scm.h"
#include "okcov_stats.h"

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE	0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC		0x80000
#endif

#define OKCOV_NAME		"okcov"
#define KMEMLEAK		"/sys/kernel/debug/kmemleak"

#define MAX_PROCS		32
#define MAX_THREADS		32
#define MAXD			4	/* private descriptors per thread */
#define MAXFD			3	/* fds per private descriptor */
#define MAXMAP			8	/* mappings per thread */
#define POOLMAX			8	/* shared pool entries per process */
#define MAX_FAIL_PRINT		200

/* Memory tolerances, KiB. */
#define TOL_SLAB		2048
#define TOL_VMALLOC		1024
#define TOL_MEMFREE		8192

#define KERNEL_TEXT		0xffffffff80000000UL
#define USER_TOP		((1UL << 47) - 4096)	/* x86_64 TASK_SIZE */

/* ------------------------------------------------------------ results */

enum res {
	RS_OK, RS_EFAULT, RS_EBUSY, RS_EINVAL, RS_ENOTTY, RS_ENOMEM, RS_EPERM,
	RS_EACCES, RS_ENOENT, RS_ENXIO, RS_ENODEV, RS_EAGAIN, RS_EOVERFLOW,
	RS_EEXIST, RS_EOPNOTSUPP, RS_EILSEQ, RS_BAD, RS_OTHER, NRES
};

#define M(r)		(1u << (RS_##r))

enum op {
	OP_OPEN, OP_DUP, OP_CLOSE, OP_PASS, OP_SETBUFSIZE, OP_ENABLE, OP_ENABLE_LEGACY,
	OP_DISABLE, OP_BADIOCTL, OP_MMAP, OP_MUNMAP, OP_MPROTECT, OP_MREMAP,
	OP_BUFWRITE, OP_BUFCHECK, OP_SYSCALLS, OP_FORK, OP_EXEC, OP_EXECCHECK,
	OP_THREAD_EXIT, OP_HANDOFF, OP_DRAIN, OP_RMMOD, OP_INSMOD, OP_NOISE,
	OP_RATTACH, OP_RENABLE, OP_RDISABLE, OP_RCLOSE, OP_RDEFER,
	OP_TDEFER, OP_TCHURN, OP_BHSTORM, OP_DEEP, NOPS
};

extern const char * const res_names[NRES];
extern const char * const op_names[NOPS];

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
	atomic_ulong rclose_trace;	/* remote descriptors closed while TRACE */
	atomic_ulong rdefer_trace;	/* deferred work made while one was TRACE */
	atomic_bool target;		/* okcov_target is loaded */
	bool bh_wq;			/* the kernel has BH workqueues (6.9+) */
	atomic_ulong churned;		/* timers deleted, work cancelled, tagged */
	atomic_ulong bh_runs;		/* BH storm work runs, of storms stopped */
	bool bpf;			/* the kernel has bpf(): stock deferred work */
};

extern struct shm *shm;		/* shared by every process of the run */
extern int shm_fd;
extern long page;
extern char *guard_rw;		/* one readable page, then guard_none */
extern char *guard_none;	/* a PROT_NONE page */
/*
 * A child that has not exited after hang_s seconds hung; a drain or the
 * final stop gets 1.5 times that (--hang; slow debug kernels need more).
 */
extern double hang_s;
extern const char *ko_path, *ko_args;	/* okcov.ko and its options */
extern const char *target_ko;		/* okcov_target.ko, or NULL */
extern double t_start;			/* of the measured run */

/* ---------------------------------------------------------------- rng */

static inline uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* ------------------------------------------------------------ context */

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

/*
 * The process's remote descriptor (KIOREMOTEATTACH), any thread's to
 * enable, disable or close, under lock. A fork child inherits its fd: until
 * every child forked before a close is gone, the kernel may still hold it
 * (stale), and a new attach may see EBUSY.
 */
struct remote {
	pthread_mutex_t lock;
	int fd;			/* -1: none */
	enum dstate state;	/* READY or TRACE */
	bool stale;
};

struct pool {
	pthread_rwlock_t lock;
	struct pent e[POOLMAX];
	int cnt;
	struct remote r;
	atomic_int children;	/* fork children alive */
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
	int tfd;			/* /dev/okcov_target, or -1 */
};

static inline uint64_t rnd(struct ctx *c)
{
	return splitmix(&c->rng);
}

static inline unsigned int rn(struct ctx *c, unsigned int n)
{
	return n ? rnd(c) % n : 0;
}

static inline bool chance(struct ctx *c, unsigned int pct)
{
	return rn(c, 100) < pct;
}

static inline unsigned long cur_gen(void)
{
	return atomic_load(&shm->gen);
}

/*
 * Forget an attachment okcov's unload took away. Call only with a
 * descriptor open (it pins the module, so the generation is stable).
 */
static inline void att_refresh(struct ctx *c)
{
	if (c->att_id && c->att_gen != cur_gen())
		c->att_id = 0;
}

static inline void att_set(struct ctx *c, unsigned long id)
{
	c->att_id = id;
	c->att_gen = cur_gen();
}

static inline unsigned long new_id(void)
{
	return atomic_fetch_add(&shm->next_id, 1) + 1;
}

static inline unsigned long max_entries(void)
{
	return atomic_load(&shm->max_entries);
}

static inline size_t buf_bytes(unsigned long n)
{
	return (n * 8 + page - 1) & ~(page - 1);
}

static inline unsigned long buf_pages(unsigned long n)
{
	return buf_bytes(n) / page;
}

/* Words of a coverage buffer: the kernel writes them concurrently. */
static inline uint64_t word_get(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline void word_set(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

static inline int ioc(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? errno : 0;
}

/* One descriptor to operate on: private, or a pool entry (read-locked). */
struct target {
	struct pdesc *d;	/* private */
	struct pent *e;		/* shared */
	int fd;
	unsigned long id;
};

#define MEMINFO_MAX	64

struct meminfo {
	long slab, vmalloc, memfree;	/* KiB */
	long pcp;			/* KiB on per-CPU free lists */
	int n;				/* every field, for the report */
	char name[MEMINFO_MAX][32];
	long kib[MEMINFO_MAX];
};

/* ---------------------------------------------------------- functions */

/* report.c */
enum res res_of(int err);
double now(void);
void say(const char *fmt, ...);
void fail(const char *tag, const char *fmt, ...);
bool expect(const char *tag, enum op op_id, int err,
		   unsigned int mask, const char *fmt, ...);
void count(enum op op, enum res r);

/* args.c */
void coverage_syscalls(struct ctx *c, int n);
void *bad_ptr(struct ctx *c, size_t size);
unsigned int random_cmd(struct ctx *c);
unsigned long pick_size(struct ctx *c);
int pick_mode(struct ctx *c);
bool mode_ok(int mode);

/* desc.c */
int dev_open(struct ctx *c, bool cloexec);
struct pdesc *pd_free_slot(struct ctx *c);
void pd_maybe_gone(struct pdesc *d);
void pool_rdlock(struct pool *p);
void pool_wrlock(struct pool *p);
void pool_unlock(struct pool *p);
struct pdesc *pd_pick_if(struct ctx *c, bool (*pred)(struct pdesc *));
bool pd_is_trace(struct pdesc *d);
bool pd_unmapped_buffer(struct pdesc *d);
bool target_get(struct ctx *c, struct target *t,
		       bool (*pred)(struct pdesc *));
void target_put(struct ctx *c, struct target *t);
void op_open(struct ctx *c);
void op_dup(struct ctx *c);
void pd_close_fd(struct ctx *c, struct pdesc *d, int i);
void op_close(struct ctx *c);
void op_pass(struct ctx *c);
void op_setbufsize(struct ctx *c);
void op_enable(struct ctx *c, bool legacy);
void op_disable(struct ctx *c);
void op_badioctl(struct ctx *c);

/* remote.c */
void remote_init(struct remote *r);
void remote_close(struct remote *r);
void op_rattach(struct ctx *c);
void op_renable(struct ctx *c);
void op_rdisable(struct ctx *c);
void op_rclose(struct ctx *c);
void op_rdefer(struct ctx *c);
void op_tdefer(struct ctx *c);
void op_tchurn(struct ctx *c);
void op_bhstorm(struct ctx *c);
bool target_open(struct ctx *c, enum op op);
void op_deep(struct ctx *c);
bool bpf_probe(void);
bool bh_wq_probe(void);
void target_close(struct ctx *c);

/* mmap.c */
void map_drop(struct pmap *m);
void op_mmap(struct ctx *c);
void op_munmap(struct ctx *c);
void op_mprotect(struct ctx *c);
void op_mremap(struct ctx *c);
void op_bufwrite(struct ctx *c);
void op_bufcheck(struct ctx *c);

/* spawn.c */
void fork_child(struct ctx *parent);
void spawn_child(struct ctx *c, enum op op_id, void (*child)(struct ctx *));
void exec_child(struct ctx *parent);
int exec_image_main(char **argv);

/* worker.c */
void run_child_ops(struct ctx *c, int nops);
int worker_main(int proc, int nthreads, uint64_t seed);

/* engine.c */
bool kmod_setup(void);
void kmod_teardown(void);
int do_insmod(void);
bool mod_loaded(void);
bool read_narrowed(void);
bool load(const char *why);
bool unload(const char *why);
bool run_engine(int nprocs, int nthreads, double secs, double cycle_s,
		       uint64_t seed);

/* memcheck.c */
bool read_meminfo(struct meminfo *m);
void meminfo_deltas(const struct meminfo *a, const struct meminfo *b);
void write_file(const char *path, const char *s);
void settle(void);

#endif /* OKCOV_STRESS_H */
