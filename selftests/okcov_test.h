/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the okcov selftests: open/size/map/enable a descriptor,
 * errno-returning ioctl wrappers (so a test reads ASSERT_EQ(EBUSY, ...)),
 * run a function in a fresh thread, read the max_entries parameter.
 *
 * Include after kselftest_harness.h.
 */
#ifndef OKCOV_TEST_H
#define OKCOV_TEST_H

/*
 * The harness gives a test 30 s. Under emulation, on a KASAN kernel, the
 * first KIOENABLE of a module load (ftrace hook and function set) alone
 * can take longer; a hung test still ends, at the VM's timeout at worst.
 */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 120

#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "okcov.h"
#include "okcov_stats.h"
#include "kallsyms.h"
#include "okcov_target.h"

#define OKCOV_MAX_PARAM		"/sys/module/okcov/parameters/max_entries"
#define OKCOV_DEFAULT_MAX	OKCOV_DEFAULT_ENTRIES

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#endif

/* A value no ioctl returns: the call "succeeded" with a non-zero result. */
#define OKCOV_ODD_RETURN	(-1000)

static inline size_t st_page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

/* PAGE_ALIGN(n * 8): the size of the buffer as mmap sees it. */
static inline size_t st_map_len(uint64_t n)
{
	size_t ps = st_page_size();

	return (size_t)((n * 8 + ps - 1) & ~(uint64_t)(ps - 1));
}

/* 0 on success, errno on failure, OKCOV_ODD_RETURN for r > 0. */
static inline int st_ret(int r)
{
	if (r == 0)
		return 0;
	if (r == -1)
		return errno;
	return OKCOV_ODD_RETURN;
}

static inline int st_ioctl(int fd, unsigned long cmd, void *arg)
{
	return st_ret(ioctl(fd, cmd, arg));
}

static inline int st_setbufsize(int fd, uint64_t n)
{
	return st_ioctl(fd, KIOSETBUFSIZE, &n);
}

static inline int st_enable(int fd, int mode)
{
	return st_ioctl(fd, KIOENABLE, &mode);
}

static inline int st_enable_legacy(int fd)
{
	return st_ioctl(fd, KIOENABLE_LEGACY, NULL);
}

static inline int st_disable(int fd)
{
	return st_ioctl(fd, KIODISABLE, NULL);
}

/*
 * Make sure the ftrace hook is in place, and lingers, before a test starts
 * threads that keep a CPU busy: an enable (which waits for a removal in
 * flight, then installs) and a disable. Installing or removing the hook
 * rewrites every traced function's entry; on arm64 each rewrite is a
 * broadcast TLB invalidation (the text-patching fixmap), which QEMU's TCG
 * turns into a stop of every vCPU: with another vCPU busy, one removal
 * took 120 s instead of 1 to 3 (debian-7-arm64, okcov(4) CAVEATS). The
 * test then measures its own threads, not that.
 */
static inline int st_hook_warm(int fd, int mode)
{
	int ret = st_enable(fd, mode);

	return ret ? ret : st_disable(fd);
}

static inline int st_open(void)
{
	return open(OKCOV_PATH, O_RDWR);
}

/* mmap the whole buffer of n entries; MAP_FAILED on error. */
static inline uint64_t *st_map(int fd, uint64_t n)
{
	void *p = mmap(NULL, st_map_len(n), PROT_READ | PROT_WRITE,
		       MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? MAP_FAILED : (uint64_t *)p;
}

/* The mmap errno, or 0 (and the mapping undone) when it succeeded. */
static inline int st_mmap_err(int fd, size_t len, int prot, int flags,
				 off_t off)
{
	void *p = mmap(NULL, len, prot, flags, fd, off);

	if (p == MAP_FAILED)
		return errno;
	munmap(p, len);
	return 0;
}

/* A descriptor with its buffer sized and mapped (state READY). */
struct st_cov {
	int fd;
	uint64_t n;
	uint64_t *buf;
};

/* 0 or the errno of the step that failed. */
static inline int st_new(struct st_cov *c, uint64_t n)
{
	int err;

	c->n = n;
	c->buf = MAP_FAILED;
	c->fd = st_open();
	if (c->fd < 0)
		return errno;
	err = st_setbufsize(c->fd, n);
	if (err)
		return err;
	c->buf = st_map(c->fd, n);
	if (c->buf == MAP_FAILED)
		return errno;
	return 0;
}

static inline void st_free(struct st_cov *c)
{
	if (c->buf != MAP_FAILED && c->buf)
		munmap((void *)c->buf, st_map_len(c->n));
	if (c->fd >= 0)
		close(c->fd);
	c->buf = MAP_FAILED;
	c->fd = -1;
}

static inline uint64_t st_count(const struct st_cov *c)
{
	return __atomic_load_n(&c->buf[0], __ATOMIC_RELAXED);
}

static inline void st_reset(const struct st_cov *c)
{
	__atomic_store_n(&c->buf[0], 0, __ATOMIC_RELAXED);
}

/* Records actually present: buf[0] clamped to the buffer. */
static inline uint64_t st_pcs(const struct st_cov *c)
{
	uint64_t cnt = st_count(c);

	return cnt < c->n ? cnt : c->n - 1;
}

/* Was @pc recorded? */
static inline bool st_recorded(const struct st_cov *c, uint64_t pc)
{
	uint64_t i, n = st_pcs(c);

	for (i = 0; i < n; i++)
		if (c->buf[i + 1] == pc)
			return true;
	return false;
}

/* Syscalls through syscall(2), never a libc cache or the vDSO. */
static inline void sys_getpid_n(int times)
{
	while (times-- > 0)
		syscall(SYS_getpid);
}

static inline void sys_getppid_n(int times)
{
	while (times-- > 0)
		syscall(SYS_getppid);
}

/* The max_entries module parameter, or 0 if it cannot be read. */
static inline uint64_t st_max_entries(void)
{
	unsigned long long v = 0;
	FILE *f = fopen(OKCOV_MAX_PARAM, "r");

	if (!f)
		return 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

/* A /proc/meminfo field in KiB (VmallocUsed, Slab, ...), or -1. */
/*
 * Is @addr in the kernel's own text, _stext.._etext? Not init or exit
 * text (freed after boot, where kallsyms still names functions, some with
 * a traceable function's name, whose pages now hold anything), nor what
 * kallsyms lists past it (7.x names a second set_root, event_function...
 * there). Read from /proc/kallsyms itself, once.
 */
static inline bool st_kernel_text(uint64_t addr)
{
	static uint64_t lo, hi;
	char line[256], *name;
	uint64_t a;
	FILE *f;

	if (!lo) {
		lo = hi = 1;
		f = fopen("/proc/kallsyms", "r");
		while (f && fgets(line, sizeof(line), f)) {
			name = strrchr(line, ' ');
			if (!name || strchr(line, '['))
				continue;
			a = strtoull(line, NULL, 16);
			if (!strcmp(name, " _stext\n"))
				lo = a;
			else if (!strcmp(name, " _etext\n"))
				hi = a;
		}
		if (f)
			fclose(f);
		if (hi <= lo)
			lo = hi = 1;
	}
	return addr >= lo && addr < hi;
}

static inline long st_meminfo_kb(const char *key)
{
	char line[256];
	size_t kl = strlen(key);
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ':') {
			v = strtol(line + kl + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/*
 * A numeric parameter of /sys/module/okcov/parameters/ (hook_linger_ms),
 * or -1 if it cannot be read. The counters: okcov_stats.h.
 */
static inline long st_param(const char *name)
{
	char path[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/okcov/parameters/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* Parameter @name as its file reads ("Y", "N", "4096"), or "". */
static inline const char *st_param_text(const char *name, char *buf,
					size_t len)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/okcov/parameters/%s", name);
	buf[0] = 0;
	f = fopen(path, "r");
	if (!f)
		return buf;
	if (!fgets(buf, len, f))
		buf[0] = 0;
	buf[strcspn(buf, "\n")] = 0;
	fclose(f);
	return buf;
}

/* Write okcov's parameter @name: 0 or -errno. */
static inline int st_param_set(const char *name, const char *value)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/okcov/parameters/%s", name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	if (fputs(value, f) < 0) {
		fclose(f);
		return -EIO;
	}
	return fclose(f) ? -errno : 0;
}

/*
 * Set okcov's parameter @name to @value for a test, keeping its text
 * before in @saved (for st_param_restore()): 0 or -errno.
 */
static inline int st_param_swap(const char *name, const char *value,
				char *saved, size_t len)
{
	st_param_text(name, saved, len);
	return st_param_set(name, value);
}

/* @name back to what st_param_swap() kept, if it read anything. */
static inline void st_param_restore(const char *name, const char *saved)
{
	if (saved[0])
		st_param_set(name, saved);
}

#define ST_PLAN_FILE	"/sys/kernel/debug/okcov/plan"
#define ST_COPY_FILE	"/sys/kernel/debug/okcov/copy"
#define ST_COPIES_FILE	"/sys/kernel/debug/okcov/copies"
#define ST_KPROBES_LIST	"/sys/kernel/debug/kprobes/list"

/*
 * A counter of okcov's copies file ("refused ERRNO" names a refusal's),
 * the first number of its line; or -1.
 */
static inline long st_copies_stat(const char *key)
{
	char line[128], k[64], k2[64];
	long v, r = -1;
	FILE *f = fopen(ST_COPIES_FILE, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %ld", k, &v) == 2 && !strcmp(k, key))
			r = v;
		else if (sscanf(line, "refused %63s %ld", k2, &v) == 2 &&
			 !strncmp(key, "refused ", 8) && !strcmp(k2, key + 8))
			r = v;
	}
	fclose(f);
	return r;
}

/* Lines of kprobes' list that mention @what, optimised ones in *@opt. */
static inline int st_kprobes_listed(const char *what, int *opt)
{
	char line[512];
	int n = 0;
	FILE *f = fopen(ST_KPROBES_LIST, "r");

	if (opt)
		*opt = 0;
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, what))
			continue;
		n++;
		if (opt && strstr(line, "OPTIMIZED"))
			(*opt)++;
	}
	fclose(f);
	return n;
}

/*
 * Write @addr to okcov's debugfs inspect file @path (ST_PLAN_FILE,
 * ST_COPY_FILE): the text okcov made for it, to read and fclose(), or
 * NULL with errno (the open's or the write's: the file's verdict).
 */
static inline FILE *st_inspect(const char *path, uint64_t addr)
{
	char a[32];
	int fd, n, e;
	FILE *f;

	fd = open(path, O_RDWR);
	if (fd < 0)
		return NULL;
	n = snprintf(a, sizeof(a), "0x%llx\n", (unsigned long long)addr);
	f = write(fd, a, n) == n ? fdopen(fd, "r") : NULL;
	if (!f) {
		e = errno;
		close(fd);
		errno = e;
	}
	return f;
}

/*
 * The leaders okcov's plan of the function at @fn gives (at most @max,
 * in order) into @out, its end into *@end: how many, or -errno.
 */
static inline int st_plan_leaders(uint64_t fn, __u64 *out, int max,
				  uint64_t *end)
{
	unsigned long long x, s, e;
	char line[256], name[256];
	int n = 0;
	FILE *f;

	*end = 0;
	f = st_inspect(ST_PLAN_FILE, fn);
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "function %255s %llx %llx", name, &s, &e) == 3)
			*end = e;
		else if (sscanf(line, "leader %llx", &x) == 1 && n < max)
			out[n++] = x;
	}
	fclose(f);
	return n;
}

/*
 * The next core-kernel .cold part listed in /proc/kallsyms (@kallsyms,
 * open) whose parent is a loaded symbol: the parent's address, the
 * part's in *@cold, its parent's name in @name (@len); 0 at the end.
 */
static inline uint64_t st_next_cold(FILE *kallsyms, uint64_t *cold,
				    char *name, size_t len)
{
	char line[256], *sym;
	uint64_t parent;
	size_t sz;

	while (fgets(line, sizeof(line), kallsyms)) {
		sym = strchr(line, ' ');
		if (!sym || strchr(sym, '[') || (sym[1] != 't' && sym[1] != 'T'))
			continue;
		sym += 3;
		sym[strcspn(sym, "\n")] = 0;
		sz = strlen(sym);
		if (sz < 6 || strcmp(sym + sz - 5, ".cold"))
			continue;
		sym[sz - 5] = 0;
		parent = ksyms_addr(sym, NULL);
		if (!parent)
			continue;
		*cold = strtoull(line, NULL, 16);
		snprintf(name, len, "%s", sym);
		return parent;
	}
	return 0;
}

/*
 * A function with a .cold part that okcov's plan copies in two parts at
 * least (ST_PLAN_FILE), or 0.
 */
static inline uint64_t st_cold_function(void)
{
	uint64_t parent, cold, found = 0;
	char name[256], buf[4096];
	FILE *f = fopen("/proc/kallsyms", "r"), *p;
	int tried = 0;
	size_t got;

	while (f && !found && tried < 40 &&
	       (parent = st_next_cold(f, &cold, name, sizeof(name)))) {
		tried++;
		/* Copyable, in two parts at least? */
		p = st_inspect(ST_PLAN_FILE, parent);
		if (!p)
			continue;
		got = fread(buf, 1, sizeof(buf) - 1, p);
		buf[got] = 0;
		if (strstr(buf, "verdict 0 ") && strstr(buf, "region ") &&
		    strstr(strstr(buf, "region ") + 1, "region "))
			found = parent;
		fclose(p);
	}
	if (f)
		fclose(f);
	return found;
}

/*
 * task_structs allocated, or -1 where the kernel does not tell. Every
 * task-hash entry pins one, so a leaked entry or task reference is a
 * task_struct that is never freed, though its thread is long gone (it
 * left /proc at release_task()). The slab is shrunk first: objects free
 * in per-CPU slabs count as allocated in /proc/slabinfo otherwise.
 */
static inline long st_task_structs(void)
{
	char line[256];
	long active = -1;
	FILE *f = fopen("/sys/kernel/slab/task_struct/shrink", "w");

	if (f) {
		fputs("1", f);
		fclose(f);
	}
	f = fopen("/proc/slabinfo", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "task_struct %ld", &active) == 1)
			break;
	fclose(f);
	return active;
}

/* Poll st_task_structs() until at most @want; the last value read. */
static inline long st_task_structs_settle(long want)
{
	long v = st_task_structs();
	int i;

	for (i = 0; i < 100 && v > want; i++) {
		usleep(50 * 1000);
		v = st_task_structs();
	}
	return v;
}

/*
 * Wait until thread tid of this process has fully exited. pthread_join()
 * returns when the kernel clears the thread's tid (in exit_mm()), which is
 * before the sched_process_exit tracepoint where okcov detaches it; the
 * thread leaves /proc/self/task only after that. 0, or -ETIMEDOUT.
 */
static inline int st_wait_thread_gone(pid_t tid)
{
	char path[64];
	int i;

	snprintf(path, sizeof(path), "/proc/self/task/%d", tid);
	for (i = 0; i < 10000; i++) {
		if (access(path, F_OK))
			return 0;
		usleep(1000);
	}
	return -ETIMEDOUT;
}

/*
 * pthread_join() and wait until the thread has really exited; *tid is the
 * thread's gettid(), which it stored itself (read only after the join).
 */
static inline int st_join(pthread_t th, pid_t *tid)
{
	int err = pthread_join(th, NULL);

	return err ? -err : st_wait_thread_gone(*tid);
}

/*
 * Run fn(arg) in a new thread and wait for it: the new thread starts with
 * no descriptor attached, and has exited (detaching whatever it enabled)
 * when this returns. Returns fn's int result, or -1 if the thread failed.
 */
struct st_thread_call {
	int (*fn)(void *arg);
	void *arg;
	int ret;
	pid_t tid;
};

static inline void *st_thread_trampoline(void *p)
{
	struct st_thread_call *call = p;

	call->tid = gettid();
	call->ret = call->fn(call->arg);
	return NULL;
}

static inline int st_in_thread(int (*fn)(void *), void *arg)
{
	struct st_thread_call call = { .fn = fn, .arg = arg, .ret = -1 };
	pthread_t th;

	if (pthread_create(&th, NULL, st_thread_trampoline, &call))
		return -1;
	if (st_join(th, &call.tid))
		return -1;
	return call.ret;
}

/* Thread bodies for st_in_thread(): arg points to the fd. */
static inline int st_thread_disable(void *arg)
{
	return st_disable(*(int *)arg);
}

/* Enables and exits while attached: the exit detaches. */
static inline int st_thread_enable_pc(void *arg)
{
	return st_enable(*(int *)arg, KCOV_MODE_TRACE_PC);
}

/* A one-shot gate between threads (a pipe, so it needs no polling). */
struct st_gate {
	int p[2];
};

static inline int st_gate_init(struct st_gate *g)
{
	return pipe(g->p);
}

static inline void st_gate_open(struct st_gate *g)
{
	char c = 1;

	if (write(g->p[1], &c, 1) != 1)
		abort();
}

static inline void st_gate_wait(struct st_gate *g)
{
	char c;

	while (read(g->p[0], &c, 1) != 1 && errno == EINTR)
		;
}

static inline void st_gate_destroy(struct st_gate *g)
{
	close(g->p[0]);
	close(g->p[1]);
}

/* Whether a word looks like a kernel address (x86_64 upper half). */
static inline bool st_is_kaddr(uint64_t v)
{
	return v >= 0xffff800000000000ULL;
}

/*
 * A function entry (ksyms_load() first): the function's address, or + 4
 * after an endbr64 (IBT). okcov's other ftrace records, the call sites
 * (module parameter call_sites), lie further inside their caller.
 */
static inline bool st_is_entry(uint64_t pc)
{
	const struct ksym *s = ksyms_lookup(pc, NULL);

	return s && (pc - s->addr == 0 || pc - s->addr == 4);
}

static inline size_t st_count_where(const struct st_cov *c, bool entries,
		bool (*pred)(const struct ksym *s, const void *ctx),
		const void *ctx)
{
	uint64_t i, n = st_pcs(c);
	size_t hits = 0;

	for (i = 0; i < n; i++)
		if ((!entries || st_is_entry(c->buf[i + 1])) &&
		    ksyms_pc_matches(c->buf[i + 1], pred, ctx))
			hits++;
	return hits;
}

/*
 * TRACE_PC buffers through /proc/kallsyms (ksyms_load() first): the number
 * of recorded PCs satisfying pred.
 */
static inline size_t st_count_matching(const struct st_cov *c,
		bool (*pred)(const struct ksym *s, const void *ctx),
		const void *ctx)
{
	return st_count_where(c, false, pred, ctx);
}

/* As st_count_matching(), function entries only. */
static inline size_t st_count_entries_matching(const struct st_cov *c,
		bool (*pred)(const struct ksym *s, const void *ctx),
		const void *ctx)
{
	return st_count_where(c, true, pred, ctx);
}

static inline bool st_has_syscall(const struct st_cov *c, const char *sc)
{
	return st_count_matching(c, ksym_is_syscall, sc) > 0;
}

/* Print up to max resolved PCs as KTAP diagnostics. */
static inline void st_dump(const struct st_cov *c, uint64_t max)
{
	uint64_t i, n = st_pcs(c);
	char name[256];

	fprintf(stderr, "# buffer: %llu records (buf[0] = %llu)\n",
		(unsigned long long)n, (unsigned long long)st_count(c));
	for (i = 0; i < n && i < max; i++)
		fprintf(stderr, "#   %4llu: %s\n", (unsigned long long)i,
			ksyms_format(c->buf[i + 1], name, sizeof(name)));
}

/*
 * A BPF array map of @entries 8-byte values: its fd, or -1 and errno
 * (no CONFIG_BPF_SYSCALL). Closing its last reference queues
 * bpf_map_free_deferred on a workqueue (kernel/bpf/syscall.c): the stock
 * deferred work the remote tests use.
 */
static inline int st_bpf_array_map(unsigned int entries)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = 4;
	attr.value_size = 8;
	attr.max_entries = entries;
	return syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof(attr));
}

#define ST_ENABLED_FUNCTIONS	"/sys/kernel/tracing/enabled_functions"

static inline long long st_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/*
 * The functions copy.c's ops watch for text patches while copies are
 * cached (okcov_copy_follow()), after the last deep user too: not the hook.
 */
static const char *const st_follow_fns[] = {
	"arch_jump_label_transform_queue", "arch_jump_label_transform",
	"arch_static_call_transform",
};

/* Is @line of enabled_functions one of st_follow_fns[]? */
static inline bool st_follow_line(const char *line)
{
	size_t i, n = strcspn(line, " \t\n");

	for (i = 0; i < sizeof(st_follow_fns) / sizeof(*st_follow_fns); i++)
		if (n == strlen(st_follow_fns[i]) &&
		    !strncmp(line, st_follow_fns[i], n))
			return true;
	return false;
}

/*
 * 1 if ftrace hooks some function (okcov's hook, when nothing else
 * traces) other than st_follow_fns[], 0 if none, -errno. Reads up to the
 * first such line.
 */
static inline int st_hook_installed(void)
{
	FILE *f = fopen(ST_ENABLED_FUNCTIONS, "r");
	char line[512];
	int ret = 0;

	if (!f)
		return -errno;
	while (!ret && fgets(line, sizeof(line), f))
		ret = !st_follow_line(line);
	if (ferror(f))
		ret = -EIO;
	fclose(f);
	return ret;
}

/* Wait until st_hook_installed() == want: 0, or -ETIMEDOUT. */
static inline int st_wait_hook(int want, int timeout_ms)
{
	long long end = st_now_ms() + timeout_ms;

	do {
		if (st_hook_installed() == want)
			return 0;
		usleep(20 * 1000);
	} while (st_now_ms() < end);
	return -ETIMEDOUT;
}

/* The test-target module's deferred work (okcov_target.h): 0 or errno. */
static inline int st_defer(int tfd, unsigned long how)
{
	return st_ret(ioctl(tfd, OKCOV_TARGET_DEFER, how));
}

static inline int st_defer_wait(int tfd)
{
	return st_ret(ioctl(tfd, OKCOV_TARGET_WAIT, 0));
}

/* pred: the test-target module's function named ctx. */
static inline bool st_in_target(const struct ksym *s, const void *name)
{
	return s->mod && !strcmp(s->mod, OKCOV_TARGET_NAME) &&
	       !strcmp(s->name, name);
}

/* Records of the test-target module's function @fn in @c. */
static inline size_t st_target_hits(const struct st_cov *c, const char *fn)
{
	return st_count_matching(c, st_in_target, fn);
}

/*
 * The kselftest_harness.h of 6.1 runs a binary's tests in reverse unless
 * the constructor order is set: a binary with a main() of its own says
 * OKCOV_HARNESS_ORDER(); once at file scope.
 */
#define OKCOV_HARNESS_ORDER()						\
static void __attribute__((constructor)) __constructor_order_last(void) \
{									\
	if (!__constructor_order)					\
		__constructor_order = _CONSTRUCTOR_ORDER_BACKWARD;	\
}									\
extern int okcov_harness_order_set

/*
 * The main() of a binary that gets something ready before its tests (the
 * test-target module, kallsyms): the harness's order, @prepare(), then
 * the tests. Once at file scope: OKCOV_HARNESS_MAIN(prepare);
 */
#define OKCOV_HARNESS_MAIN(prepare)					\
OKCOV_HARNESS_ORDER();							\
int main(int argc, char **argv)						\
{									\
	prepare();							\
	exit(test_harness_run(argc, argv));				\
}									\
extern int okcov_harness_main_set

#endif /* OKCOV_TEST_H */
