// SPDX-License-Identifier: GPL-2.0
/*
 * What syzkaller's Linux executor does with /sys/kernel/debug/kcov
 * (executor/executor.cc, executor_linux.h, common_linux.h at HEAD, read,
 * not copied):
 *
 * - cover_open(): open, dup2() to a fixed fd (kCoverFd = 216 + thread,
 *   kExtraCoverFd = 215), KCOV_INIT_TRACE of kCoverSize = 512 << 10
 *   entries per thread (kCoverDefaultCount = 6 threads) and
 *   kExtraCoverSize = 1 << 20 for the extra descriptor;
 * - cover_mmap(): a PROT_NONE reservation of the area plus a guard page
 *   on each side, then the area mapped MAP_SHARED | MAP_FIXED over it, at
 *   the address the executor chose;
 * - the extra descriptor, in the main thread before any worker exists:
 *   KCOV_REMOTE_ENABLE { KCOV_TRACE_PC, area_size kExtraCoverSize,
 *   common_handle kcov_remote_handle(KCOV_SUBSYSTEM_COMMON, procid + 1),
 *   handles[0] = kcov_remote_handle(KCOV_SUBSYSTEM_USB, procid + 1) }; a
 *   failure ends the executor (the "extra coverage" feature is then off);
 * - programs run in a grandchild (do_sandbox_none() forks, loop() forks
 *   once per program), which inherits the fds, the mappings and the common
 *   handle; its worker threads are new and exit with it;
 * - each worker thread: KCOV_ENABLE(KCOV_TRACE_PC) by value on its first
 *   call (never KCOV_DISABLE: its exit releases the descriptor), then per
 *   call word 0 = 0, the syscall, and collect: size =
 *   word 0, overflow when (size + 2) * 8 passes the area; every PC must lie
 *   in [0xffffffff80000000, 0xffffffffff000000) or the call's coverage is
 *   dropped; PCs hashed into edge signal;
 * - feature probes: setup_delay_kcov() maps one 512K descriptor twice and
 *   uses the second mapping; setup_kcov_reset_ioctl() calls
 *   KCOV_RESET_TRACE on an enabled descriptor and treats anything but 0
 *   or ENOTTY as fatal; the coverage feature needs a test program's call
 *   (an mmap) to yield coverage and signal.
 *
 * Against the kernel's own kcov and against okcov alike. With okcov
 * (/dev/okcov, and LK_PATH is not the kernel's), remote coverage must also
 * arrive: work and timers that a worker thread queues through the
 * test-target module (OKCOV_TARGET_DEFER) land in the extra descriptor,
 * through the common handle the worker inherited from the main thread.
 * Native kcov records remote coverage only in annotated kernel sections,
 * so there the extra descriptor is only checked for sanity.
 */
#include <stdarg.h>
#include <sys/wait.h>
#include <time.h>

#include "kselftest_harness.h"
#include "okcov_linux.h"
#include "kmod_util.h"
#include "okcov_target.h"

#define SYZ_THREADS		6		/* kCoverDefaultCount */
#define SYZ_COVER_SIZE		(512UL << 10)	/* kCoverSize */
#define SYZ_EXTRA_COVER_SIZE	(1UL << 20)	/* kExtraCoverSize */
#define SYZ_COVER_FD		(250 - 2 - 32)	/* kCoverFd */
#define SYZ_EXTRA_COVER_FD	(SYZ_COVER_FD - 1)
#define ROUNDS			3	/* rounds of calls per program */
#define PROGRAMS		2

static bool okcov_side;		/* okcov serves LK_PATH */
static char no_target[256];	/* why the deferred-work part cannot run */

struct cover {
	int fd;
	size_t data_size;
	char *alloc;
	size_t alloc_size;
	uint64_t *data;
};

/* cover_open(): 0 or errno. */
static int cover_open(struct cover *c, int fdnum, bool extra)
{
	unsigned long n = extra ? SYZ_EXTRA_COVER_SIZE : SYZ_COVER_SIZE;
	int fd = open(LK_PATH, O_RDWR);

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	if (fd < 0)
		return errno;
	if (dup2(fd, fdnum) < 0) {
		close(fd);
		return errno;
	}
	close(fd);
	c->fd = fdnum;
	if (ioctl(c->fd, KCOV_INIT_TRACE, n))
		return errno;
	c->data_size = n * 8;
	return 0;
}

/* cover_mmap(): the area over a reservation, at the address chosen. */
static int cover_mmap(struct cover *c, int prot)
{
	size_t ps = st_page_size();
	void *want, *p;

	c->alloc_size = c->data_size + 2 * ps;
	c->alloc = mmap(NULL, c->alloc_size, PROT_NONE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c->alloc == MAP_FAILED) {
		c->alloc = NULL;
		return errno;
	}
	want = c->alloc + ps;
	p = mmap(want, c->data_size, prot, MAP_SHARED | MAP_FIXED, c->fd, 0);
	if (p == MAP_FAILED)
		return errno;
	if (p != want) {
		int err = EADDRNOTAVAIL;

		munmap(p, c->data_size);
		return err;
	}
	c->data = p;
	return 0;
}

static void cover_munmap(struct cover *c)
{
	if (c->alloc)
		munmap(c->alloc, c->alloc_size);
	c->alloc = NULL;
	c->data = NULL;
}

static void cover_close(struct cover *c)
{
	cover_munmap(c);
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

/* The extra descriptor's KCOV_REMOTE_ENABLE, as the executor sends it. */
static int cover_enable_extra(struct cover *c, int procid, bool usb)
{
	__u64 h = kcov_remote_handle(KCOV_SUBSYSTEM_USB, procid + 1);

	return lk_remote_enable(c->fd, KCOV_TRACE_PC, SYZ_EXTRA_COVER_SIZE,
				kcov_remote_handle(KCOV_SUBSYSTEM_COMMON,
						   procid + 1),
				usb ? 1 : 0, &h);
}

static void cover_reset(struct cover *c)
{
	__atomic_store_n(&c->data[0], 0, __ATOMIC_RELAXED);
}

/* cover_collect(): the size, and whether the executor sees an overflow. */
static uint64_t cover_collect(const struct cover *c, bool *overflow)
{
	uint64_t size = __atomic_load_n(&c->data[0], __ATOMIC_RELAXED);

	*overflow = (size + 2) * 8 > c->data_size;
	return size;
}

/* The executor's signal: a hash of each PC with its predecessor. */
static uint64_t signal_count(const struct cover *c, uint64_t size)
{
	static __thread uint32_t seen[1 << 14];
	uint64_t i, prev = 0, n = 0;

	memset(seen, 0, sizeof(seen));
	for (i = 0; i < size; i++) {
		uint64_t pc = c->data[i + 1];
		uint32_t h = (uint32_t)(pc ^ (prev * 0x9e3779b97f4a7c15ULL));
		uint32_t k = (h * 0x9e3779b1u) >> 18;

		if (seen[k] != h + 1) {
			seen[k] = h + 1;
			n++;
		}
		prev = pc;
	}
	return n;
}

/* ---- the calls of a program, and what each must cover ---- */

static bool getpid_path(const struct ksym *s, const void *unused)
{
	return ksym_is_syscall(s, "getpid") ||
	       !strcmp(s->name, "__task_pid_nr_ns");
}

static bool mmap_path(const struct ksym *s, const void *unused)
{
	static const char * const fns[] = {
		"ksys_mmap_pgoff", "vm_mmap_pgoff", "do_mmap", "mmap_region",
		"get_unmapped_area",
	};
	size_t i;

	if (s->mod)
		return false;
	if (ksym_is_syscall(s, "mmap"))
		return true;
	for (i = 0; i < ARRAY_SIZE(fns); i++)
		if (!strcmp(s->name, fns[i]))
			return true;
	return false;
}

static bool read_path(const struct ksym *s, const void *unused)
{
	return !s->mod && (ksym_is_syscall(s, "read") ||
			   !strcmp(s->name, "ksys_read") ||
			   !strcmp(s->name, "vfs_read"));
}

static bool is_sys(const struct ksym *s, const void *unused)
{
	return !s->mod && (!strncmp(s->name, KSYM_SYS_PREFIX,
				    strlen(KSYM_SYS_PREFIX)) ||
			   !strncmp(s->name, "__do_sys_", 9) ||
			   !strncmp(s->name, "__se_sys_", 9));
}

static void call_getpid(int arg)
{
	syscall(SYS_getpid);
}

/* The coverage feature's test call: an anonymous mmap. */
static void call_mmap(int arg)
{
	void *p = (void *)syscall(SYS_mmap, NULL, st_page_size(),
				  PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p != MAP_FAILED)
		munmap(p, st_page_size());
}

static void call_read(int fd)
{
	char b[64];

	if (pread(fd, b, sizeof(b), 0) < 0)
		b[0] = 0;
}

static const struct syz_call {
	const char *name;
	void (*run)(int arg);
	bool (*path)(const struct ksym *s, const void *ctx);
} calls[] = {
	{ "getpid", call_getpid, getpid_path },
	{ "mmap", call_mmap, mmap_path },
	{ "read", call_read, read_path },
};

/*
 * A call's coverage, as the executor and syzkaller's host side check it:
 * records, no overflow, every PC canonical, pc - 5 (KASLR offset added
 * back) in the call's path, and some signal. NULL, or what failed.
 */
static const char *check_call(const struct cover *c, const struct syz_call *sc,
			      uint64_t off, uint64_t *sig)
{
	static __thread char why[160];
	uint64_t size, i, path = 0;
	bool overflow;

	size = cover_collect(c, &overflow);
	if (!size)
		return "no coverage";
	if (overflow) {
		snprintf(why, sizeof(why), "overflow: %llu records",
			 (unsigned long long)size);
		return why;
	}
	for (i = 0; i < size; i++) {
		uint64_t pc = c->data[i + 1];

		if (!lk_pc_canonical(pc)) {
			snprintf(why, sizeof(why),
				 "record %llu: 0x%llx not canonical",
				 (unsigned long long)i, (unsigned long long)pc);
			return why;
		}
		if (ksyms_pc_matches(pc + off - LK_PC_BACK, sc->path, NULL))
			path++;
	}
	if (!path) {
		snprintf(why, sizeof(why), "%llu records, none in %s's path",
			 (unsigned long long)size, sc->name);
		return why;
	}
	*sig = signal_count(c, size);
	return *sig ? NULL : "no signal";
}

/* ---- one executor process ---- */

struct proc;

struct worker {
	struct proc *proc;
	int id;
	struct cover cov;
	pthread_t th;
	pid_t tid;
	char err[200];
	uint64_t signal[ROUNDS][ARRAY_SIZE(calls)];
};

struct proc {
	int procid;
	uint64_t off;
	pthread_barrier_t round;	/* workers + main */
	struct worker w[SYZ_THREADS];
	int tfd;			/* the target module, or -1 */
	char defer_err[200];
};

static void *worker_thread(void *arg)
{
	struct worker *w = arg;
	struct proc *p = w->proc;
	const char *why;
	size_t k;
	int r, fd, err;

	w->tid = gettid();
	err = lk_enable(w->cov.fd, KCOV_TRACE_PC);
	if (err)
		snprintf(w->err, sizeof(w->err), "KCOV_ENABLE: %s",
			 strerror(err));
	fd = open("/proc/self/stat", O_RDONLY);
	for (r = 0; r < ROUNDS; r++) {
		pthread_barrier_wait(&p->round);
		for (k = 0; !w->err[0] && k < ARRAY_SIZE(calls); k++) {
			cover_reset(&w->cov);
			calls[k].run(fd);
			why = check_call(&w->cov, &calls[k], p->off,
					 &w->signal[r][k]);
			if (why)
				snprintf(w->err, sizeof(w->err),
					 "round %d, %s: %s", r, calls[k].name,
					 why);
		}
		/* worker 0 then queues the target's work and timer */
		if (!r && !w->id && p->tfd >= 0) {
			err = st_ret(ioctl(p->tfd, OKCOV_TARGET_DEFER,
					   OKCOV_DEFER_WORK | OKCOV_DEFER_TIMER));
			if (!err)
				err = st_ret(ioctl(p->tfd, OKCOV_TARGET_WAIT, 0));
			if (err)
				snprintf(p->defer_err, sizeof(p->defer_err),
					 "OKCOV_TARGET_DEFER/WAIT: %s",
					 strerror(err));
		}
		pthread_barrier_wait(&p->round);
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

static bool in_target_fn(const struct ksym *s, const void *name)
{
	return s->mod && !strcmp(s->mod, OKCOV_TARGET_NAME) &&
	       !strcmp(s->name, name);
}

/* Records of fn (module function) in the extra area, PCs canonicalised. */
static uint64_t extra_hits(const struct cover *c, uint64_t off,
			   const void *fn,
			   bool (*pred)(const struct ksym *, const void *))
{
	uint64_t i, n, h = 0;
	bool overflow;

	n = cover_collect(c, &overflow);
	if (overflow)
		n = c->data_size / 8 - 1;
	for (i = 0; i < n; i++)
		if (ksyms_pc_matches(c->data[i + 1] + off, pred, fn))
			h++;
	return h;
}

/* Print why an executor failed, as a KTAP diagnostic: returns 1. */
static int fail(int procid, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "# proc %d: ", procid);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

/*
 * One program: fresh worker threads (each enables its descriptor on its
 * first call and, as in the executor, never disables it: its exit does),
 * ROUNDS rounds of calls, worker 0 queueing the target's work and timer;
 * then the extra descriptor, reset when the program started, is
 * collected. 0, or 1 after printing why.
 */
static int run_program(struct proc *p, struct cover *extra, int prog)
{
	uint64_t work = 0, timer = 0, sys;
	int i, r, procid = p->procid;
	bool overflow;

	memset(p->defer_err, 0, sizeof(p->defer_err));
	for (i = 0; i < SYZ_THREADS; i++)
		memset(p->w[i].err, 0, sizeof(p->w[i].err));
	cover_reset(extra);
	p->tfd = -1;
	if (okcov_side && !no_target[0]) {
		p->tfd = open(OKCOV_TARGET_PATH, O_RDWR);
		if (p->tfd < 0)
			return fail(procid, "open %s: %s", OKCOV_TARGET_PATH,
				    strerror(errno));
	}
	if (pthread_barrier_init(&p->round, NULL, SYZ_THREADS + 1))
		return fail(procid, "pthread_barrier_init");
	for (i = 0; i < SYZ_THREADS; i++)
		if (pthread_create(&p->w[i].th, NULL, worker_thread, &p->w[i]))
			return fail(procid, "pthread_create");
	for (r = 0; r < ROUNDS; r++) {
		pthread_barrier_wait(&p->round);
		pthread_barrier_wait(&p->round);
	}
	for (i = 0; i < SYZ_THREADS; i++)
		if (st_join(p->w[i].th, &p->w[i].tid))
			return fail(procid, "program %d, thread %d: no exit",
				    prog, i);
	pthread_barrier_destroy(&p->round);
	for (i = 0; i < SYZ_THREADS; i++)
		if (p->w[i].err[0])
			return fail(procid, "program %d, thread %d: %s", prog, i,
				    p->w[i].err);
	if (p->defer_err[0])
		return fail(procid, "program %d: %s", prog, p->defer_err);

	/* the extra descriptor: no thread's own syscalls */
	cover_collect(extra, &overflow);
	if (overflow)
		return fail(procid, "program %d: extra: overflow", prog);
	sys = extra_hits(extra, p->off, NULL, is_sys);
	if (sys)
		return fail(procid, "program %d: extra: %llu syscall records",
			    prog, (unsigned long long)sys);
	if (p->tfd < 0)
		return 0;
	/* remote records may trail the work by a little */
	for (i = 0; i < 200; i++) {
		work = extra_hits(extra, p->off, "okcov_target_in_work",
				  in_target_fn);
		timer = extra_hits(extra, p->off, "okcov_target_in_timer",
				   in_target_fn);
		if (work && timer)
			break;
		usleep(10000);
	}
	close(p->tfd);
	fprintf(stderr, "# proc %d, program %d (pid %d): extra: %llu records, %llu in okcov_target_in_work, %llu in okcov_target_in_timer\n",
		procid, prog, getpid(), (unsigned long long)extra->data[0],
		(unsigned long long)work, (unsigned long long)timer);
	if (!work || !timer)
		return fail(procid, "program %d: extra: the deferred work (%llu) or timer (%llu) is missing",
			    prog, (unsigned long long)work,
			    (unsigned long long)timer);
	return 0;
}

/* Wait for a child that ran fn: 0, or 1. */
static int wait_child(pid_t pid)
{
	int status;

	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 1;
	return !WIFEXITED(status) || WEXITSTATUS(status);
}

/*
 * One executor, in its own process: every descriptor opened and mapped,
 * the extra one remote-enabled, by the main thread; then the programs,
 * either in this process or (fork_server) as the executor runs them: a
 * sandbox child forks one grandchild per program, which inherit the fds,
 * the mappings and the common handle. 0, or 1 after printing why.
 */
static int executor(int procid, bool fork_server)
{
	struct proc *p = calloc(1, sizeof(*p));
	struct cover extra;
	bool usb = true;
	int i, prog, err;
	pid_t sandbox;

	if (!p)
		return fail(procid, "calloc");
	p->procid = procid;
	if (ksyms_load())
		return fail(procid, "ksyms_load");
	p->off = lk_kaslr_offset();

	for (i = 0; i < SYZ_THREADS; i++) {
		p->w[i].proc = p;
		p->w[i].id = i;
		err = cover_open(&p->w[i].cov, SYZ_COVER_FD + i, false);
		if (!err)
			err = cover_mmap(&p->w[i].cov, PROT_READ | PROT_WRITE);
		if (err)
			return fail(procid, "thread %d: cover_open/cover_mmap: %s",
				    i, strerror(err));
	}
	err = cover_open(&extra, SYZ_EXTRA_COVER_FD, true);
	if (!err)
		err = cover_mmap(&extra, PROT_READ | PROT_WRITE);
	if (err)
		return fail(procid, "extra: cover_open/cover_mmap: %s",
			    strerror(err));
	err = cover_enable_extra(&extra, procid, true);
	if (err == EINVAL && okcov_side) {
		/* okcov may refuse USB handles: syzkaller loses "extra" */
		fprintf(stderr, "# proc %d: USB handle refused (EINVAL), common handle alone\n",
			procid);
		usb = false;
		err = cover_enable_extra(&extra, procid, false);
	}
	if (err)
		return fail(procid, "extra: KCOV_REMOTE_ENABLE (usb %d): %s",
			    usb, strerror(err));

	if (!fork_server) {
		/* the workers start after the remote enable: they inherit it */
		for (prog = 0; prog < PROGRAMS; prog++)
			if (run_program(p, &extra, prog))
				return 1;
	} else {
		sandbox = fork();
		if (sandbox == 0) {
			for (prog = 0; prog < PROGRAMS; prog++) {
				pid_t pid = fork();

				if (pid == 0)
					_exit(run_program(p, &extra, prog));
				if (wait_child(pid))
					_exit(fail(procid, "program %d failed",
						   prog));
			}
			_exit(0);
		}
		if (wait_child(sandbox))
			return fail(procid, "the sandbox process failed");
	}
	err = lk_disable(extra.fd);
	if (err)
		return fail(procid, "extra: KCOV_DISABLE: %s", strerror(err));
	/* the workers' exits released their descriptors, in any process */
	for (i = 0; i < SYZ_THREADS; i++) {
		err = lk_enable(p->w[i].cov.fd, KCOV_TRACE_PC);
		if (!err)
			err = lk_disable(p->w[i].cov.fd);
		if (err)
			return fail(procid, "thread %d's fd after the programs: %s",
				    i, strerror(err));
		cover_close(&p->w[i].cov);
	}
	cover_close(&extra);
	free(p);
	return 0;
}

/* ---- the tests ---- */

FIXTURE(syz) {
};

FIXTURE_VARIANT(syz) {
	int procs;
	bool fork_server;
};

/* The programs' threads in the process that remote-enabled. */
FIXTURE_VARIANT_ADD(syz, one_proc) { .procs = 1, .fork_server = false };
/* The executor's own shape: each program in a grandchild. */
FIXTURE_VARIANT_ADD(syz, one_proc_forked) { .procs = 1, .fork_server = true };
/* Two executors at once: two common handles, procid + 1 each. */
FIXTURE_VARIANT_ADD(syz, two_procs_forked) { .procs = 2, .fork_server = true };

FIXTURE_SETUP(syz)
{
	if (lk_unusable())
		LK_SKIP_ALL("%s", lk_unusable());
}

FIXTURE_TEARDOWN(syz)
{
}

TEST_F_TIMEOUT(syz, executor, 300)
{
	pid_t pids[2];
	int i, status;

	if (!okcov_side)
		TH_LOG("native kcov: remote coverage not asserted");
	else if (no_target[0])
		TH_LOG("deferred work not checked: %s", no_target);
	for (i = 0; i < variant->procs; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (pids[i] == 0)
			_exit(executor(i, variant->fork_server));
	}
	for (i = 0; i < variant->procs; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		ASSERT_EQ(0, WEXITSTATUS(status)) {
			TH_LOG("proc %d failed", i);
		}
	}
}

FIXTURE(probe) {
	struct cover cov;
};

FIXTURE_SETUP(probe)
{
	self->cov.fd = -1;
	if (lk_unusable())
		LK_SKIP_ALL("%s", lk_unusable());
	ASSERT_EQ(0, ksyms_load());
	ASSERT_EQ(0, cover_open(&self->cov, SYZ_COVER_FD, false));
}

FIXTURE_TEARDOWN(probe)
{
	cover_close(&self->cov);
}

/*
 * setup_delay_kcov(): the descriptor mapped twice, and the second mapping
 * usable (the executor lets clock_gettime() write into it).
 */
TEST_F(probe, delay_kcov_mmap)
{
	struct cover second;

	ASSERT_EQ(0, cover_mmap(&self->cov, PROT_READ | PROT_WRITE));
	second = self->cov;
	second.alloc = NULL;
	ASSERT_EQ(0, cover_mmap(&second, PROT_READ | PROT_WRITE));
	ASSERT_EQ(0, clock_gettime(CLOCK_MONOTONIC,
				   (struct timespec *)&second.data[8]));
	ASSERT_EQ(self->cov.data[8], second.data[8]);
	cover_munmap(&second);
}

/*
 * setup_kcov_reset_ioctl(): on an enabled descriptor, KCOV_RESET_TRACE is
 * 0 (and then a PROT_READ mapping is enough: flag_read_only_coverage) or
 * ENOTTY; anything else is fatal to the executor.
 */
TEST_F(probe, reset_ioctl)
{
	uint64_t sig;
	int err;

	ASSERT_EQ(0, cover_mmap(&self->cov, PROT_READ));
	ASSERT_EQ(0, lk_enable(self->cov.fd, KCOV_TRACE_PC));
	err = st_ret(ioctl(self->cov.fd, KCOV_RESET_TRACE, 0UL));
	ASSERT_TRUE(err == 0 || err == ENOTTY) {
		TH_LOG("KCOV_RESET_TRACE: %d", err);
	}
	if (!err) {
		const char *why;

		ASSERT_EQ(0, st_ret(ioctl(self->cov.fd, KCOV_RESET_TRACE, 0UL)));
		call_getpid(0);
		why = check_call(&self->cov, &calls[0], lk_kaslr_offset(), &sig);
		ASSERT_EQ(NULL, why) {
			TH_LOG("%s", why);
		}
	}
	ASSERT_EQ(0, lk_disable(self->cov.fd));
}

/* The coverage feature: the test program's mmap call yields coverage. */
static int coverage_thread(void *arg)
{
	struct cover *c = arg;
	const char *why;
	uint64_t sig = 0;
	int err = lk_enable(c->fd, KCOV_TRACE_PC);

	if (err)
		return err;
	cover_reset(c);
	call_mmap(0);
	why = check_call(c, &calls[1], lk_kaslr_offset(), &sig);
	if (why)
		fprintf(stderr, "# %s\n", why);
	err = lk_disable(c->fd);
	return why ? -1 : err;
}

TEST_F(probe, coverage)
{
	ASSERT_EQ(0, cover_mmap(&self->cov, PROT_READ | PROT_WRITE));
	ASSERT_EQ(0, st_in_thread(coverage_thread, &self->cov));
}

/*
 * The extra-coverage feature: the executor's KCOV_REMOTE_ENABLE with a
 * USB handle. Native kcov takes it; okcov may refuse USB handles
 * (EINVAL), which only turns the feature off, but must take the common
 * handle alone.
 */
TEST_F(probe, extra_coverage)
{
	int err;

	ASSERT_EQ(0, cover_mmap(&self->cov, PROT_READ | PROT_WRITE));
	err = cover_enable_extra(&self->cov, 0, true);
	if (okcov_side && err == EINVAL) {
		TH_LOG("okcov refuses USB handles: no extra coverage");
		err = cover_enable_extra(&self->cov, 0, false);
	}
	ASSERT_EQ(0, err);
	ASSERT_EQ(0, lk_disable(self->cov.fd));
}

/* ---- setup ---- */

static void prepare(void)
{
	if (access(LK_PATH, F_OK) || ksyms_load())
		return;
	okcov_side = !lk_native() && !access(OKCOV_PATH, F_OK);
	if (okcov_side)
		st_target_load(no_target, sizeof(no_target));
}

OKCOV_HARNESS_MAIN(prepare);
