// SPDX-License-Identifier: GPL-2.0
/*
 * The ftrace hook's lifetime and the descriptor memory around it:
 *  - the hook is installed by the first KIOENABLE, not by KIOSETBUFSIZE,
 *    and removed hook_linger_ms after the last descriptor left TRACE;
 *  - every function it hooks calls okcov's own trampoline;
 *  - closing an enabled descriptor (DYING) frees its buffer at once and
 *    drops its hook reference, while its thread lives on and stays
 *    attached (EBUSY);
 *  - a thread reaped by KIOENABLE on another thread (it is inside
 *    do_exit(), pthread_join() has returned) never writes into the new
 *    owner's buffer.
 *
 * The hook is observed through /sys/kernel/tracing/enabled_functions,
 * which lists every function some ftrace_ops traces: nothing else in the
 * test VM uses ftrace. Buffer memory is observed through VmallocUsed.
 */
#include <time.h>

#include "kselftest_harness.h"
#include "okcov_test.h"
#include "okcov_reap.h"

#define TEST_LINGER_MS		1000
#define TRACING			"/sys/kernel/tracing/"

/* hook_linger_ms, writable at run time. */
static int write_linger(long ms)
{
	char v[32];

	snprintf(v, sizeof(v), "%ld\n", ms);
	return st_param_set("hook_linger_ms", v);
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -EIO;
}

FIXTURE(hook) {
	long linger;
};

FIXTURE_SETUP(hook)
{
	self->linger = st_param("hook_linger_ms");
	ASSERT_LE(0, self->linger);
	ASSERT_LE(0, st_hook_installed()) {
		TH_LOG("%s unreadable: no tracefs?", ST_ENABLED_FUNCTIONS);
	}
	ASSERT_EQ(0, write_linger(TEST_LINGER_MS));
	/* An earlier test's hook may linger (its timer runs on) */
	ASSERT_EQ(0, st_wait_hook(0, 30000)) {
		TH_LOG("the hook stays installed with no descriptor enabled");
	}
}

FIXTURE_TEARDOWN(hook)
{
	/* shared_function_records' function tracer, even if it failed */
	write_str(TRACING "current_tracer", "nop");
	write_str(TRACING "set_ftrace_filter", "");
	if (self->linger >= 0)
		write_linger(self->linger);
}

/*
 * KIOSETBUFSIZE and mmap install nothing; KIOENABLE installs the hook
 * before it returns; KIODISABLE lets it go after hook_linger_ms.
 */
TEST_F_TIMEOUT(hook, installed_at_first_enable, 120)
{
	struct st_cov c;
	long long t0;

	ASSERT_EQ(0, st_new(&c, 4096));
	usleep(200 * 1000);
	ASSERT_EQ(0, st_hook_installed());

	t0 = st_now_ms();
	ASSERT_EQ(0, st_enable(c.fd, KCOV_MODE_TRACE_PC));
	TH_LOG("first KIOENABLE (hook install): %lld ms", st_now_ms() - t0);
	ASSERT_EQ(1, st_hook_installed());
	st_reset(&c);
	sys_getpid_n(3);
	ASSERT_LT(0, st_count(&c));

	ASSERT_EQ(0, st_disable(c.fd));
	t0 = st_now_ms();
	ASSERT_EQ(0, st_wait_hook(0, 30000));
	/* not before the linger time */
	ASSERT_LE(TEST_LINGER_MS - 50, st_now_ms() - t0);

	/* a READY descriptor, mapped and open, holds no hook */
	usleep(200 * 1000);
	ASSERT_EQ(0, st_hook_installed());
	st_free(&c);
}

/* The enabled_functions line of the first function named *@name*. */
static char *enabled_line(const char *name)
{
	char *line = NULL, *found = NULL;
	size_t cap = 0;
	FILE *f = fopen(ST_ENABLED_FUNCTIONS, "r");

	if (!f)
		return NULL;
	while (!found && getline(&line, &cap, f) > 0)
		if (strstr(line, name) && strstr(line, name) < strchr(line, ' '))
			found = strdup(line);
	fclose(f);
	free(line);
	return found;
}

/*
 * How a function okcov alone traces is called (module/compat/arch.h):
 * through okcov's own trampoline, which enabled_functions names ("tramp:
 * <symbol> (<callback>)"), on x86_64 and on arm64 kernels with direct
 * calls (6.4 on: their ftrace_caller has ftrace_caller_direct, the branch
 * to an ops' direct_call); on 6.1 arm64 through none at all (the list
 * function). Caller: ksyms_load().
 */
static bool okcov_path(const char *line)
{
#ifndef __x86_64__
	/* once: ksyms_addr() walks every symbol, and this runs per line */
	static int direct = -1;

	if (direct < 0)
		direct = !!ksyms_addr("ftrace_caller_direct", NULL);
	if (!direct)
		return !strstr(line, "tramp:");
#endif
	return strstr(line, "\ttramp: okcov_ftrace_tramp+0x0/");
}

/*
 * ftrace calls okcov_ftrace_tramp (module/tramp.S, tramp-arm64.S) from
 * every function okcov alone traces, where okcov has one: red if ftrace
 * used its own trampoline, or none (the list function) there.
 */
TEST_F_TIMEOUT(hook, own_trampoline, 120)
{
	size_t nlines = 0, nours = 0, cap = 0;
	char *line = NULL, *getppid;
	struct st_cov c;
	FILE *f;

	ASSERT_EQ(0, ksyms_load());
	ASSERT_EQ(0, st_new(&c, 4096));
	ASSERT_EQ(0, st_enable(c.fd, KCOV_MODE_TRACE_PC));
	f = fopen(ST_ENABLED_FUNCTIONS, "r");
	ASSERT_NE(NULL, f);
	while (getline(&line, &cap, f) > 0) {
		/*
		 * An earlier test's copies, cached, follow patches there with
		 * ops of their own (the list function); alone, okcov's path.
		 */
		if (st_follow_line(line) && !okcov_path(line))
			continue;
		nlines++;
		if (okcov_path(line))
			nours++;
		else if (nlines - nours <= 3)
			TH_LOG("not okcov's trampoline: %s", line);
	}
	fclose(f);
	free(line);
	TH_LOG("%zu functions hooked, %zu through okcov's path",
	       nlines, nours);
	/* __x64_sys_getppid, __do_sys_getppid, ... */
	getppid = enabled_line("sys_getppid");
	ASSERT_NE(NULL, getppid);
	TH_LOG("%s", getppid);
	EXPECT_TRUE(okcov_path(getppid));
	free(getppid);
	/* Nothing else in the guest uses ftrace. */
	EXPECT_LT(1000, nlines);
	EXPECT_EQ(nlines, nours);

	/* ...and the trampoline records: the positive control. */
	st_reset(&c);
	syscall(SYS_getppid);
	EXPECT_TRUE(st_has_syscall(&c, "getppid"));
	ASSERT_EQ(0, st_disable(c.fd));
	st_free(&c);
}

static int getppid_fn(void *arg)
{
	return syscall(SYS_getppid) > 0 ? 0 : -1;
}

/*
 * A function another tracer also hooks goes through ftrace's list
 * function, which calls okcov_ftrace_func(): it still records, and only
 * for the attached thread. Here the function tracer shares getppid.
 */
TEST_F_TIMEOUT(hook, shared_function_records, 120)
{
	struct st_cov c;
	char *line;

	ASSERT_EQ(0, ksyms_load());
	ASSERT_EQ(0, st_new(&c, 4096));
	ASSERT_EQ(0, st_enable(c.fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(0, write_str(TRACING "set_ftrace_filter", "*sys_getppid"));
	ASSERT_EQ(0, write_str(TRACING "current_tracer", "function"));

	line = enabled_line("sys_getppid");
	ASSERT_NE(NULL, line);
	TH_LOG("%s", line);
	/* two users: no trampoline of anyone's, the list function */
	EXPECT_NE(NULL, strstr(line, "(2)"));
	EXPECT_EQ(NULL, strstr(line, "okcov_ftrace_tramp"));
	free(line);

	st_reset(&c);
	syscall(SYS_getppid);
	EXPECT_TRUE(st_has_syscall(&c, "getppid"));
	/* a bystander thread on the shared function records nothing */
	ASSERT_EQ(0, st_in_thread(getppid_fn, NULL));
	EXPECT_EQ(1, st_count_entries_matching(&c, ksym_is_syscall, "getppid"));

	ASSERT_EQ(0, write_str(TRACING "current_tracer", "nop"));
	ASSERT_EQ(0, write_str(TRACING "set_ftrace_filter", ""));
	line = enabled_line("sys_getppid");
	ASSERT_NE(NULL, line);
	EXPECT_TRUE(okcov_path(line));
	free(line);
	ASSERT_EQ(0, st_disable(c.fd));
	st_free(&c);
}

struct dying_thread {
	struct st_cov c;
	struct st_gate enabled, closed, checked;
	int err, busy;
};

static void *dying_fn(void *p)
{
	struct dying_thread *t = p;
	int fd;

	t->err = st_new(&t->c, 512 << 10);
	if (!t->err)
		t->err = st_enable(t->c.fd, KCOV_MODE_TRACE_PC);
	if (!t->err)
		sys_getpid_n(10);
	st_gate_open(&t->enabled);
	st_gate_wait(&t->closed);
	/* DYING: still attached, so another descriptor is refused */
	fd = st_open();
	if (fd >= 0) {
		t->busy = st_setbufsize(fd, 16);
		if (!t->busy)
			t->busy = st_enable(fd, KCOV_MODE_TRACE_PC);
		close(fd);
	}
	sys_getpid_n(10);
	st_gate_open(&t->checked);
	return NULL;
}

/*
 * Close (and unmap) an enabled 4 MiB descriptor from another thread: its
 * buffer goes at once and the hook after hook_linger_ms, while the thread
 * that enabled it keeps running, attached (EBUSY for a new enable).
 */
TEST_F_TIMEOUT(hook, dying_releases_buffer_and_hook, 120)
{
	long before, enabled, closed, size_kb = (512 << 10) * 8 / 1024;
	struct dying_thread t;
	pthread_t th;

	memset(&t, 0, sizeof(t));
	ASSERT_EQ(0, st_gate_init(&t.enabled));
	ASSERT_EQ(0, st_gate_init(&t.closed));
	ASSERT_EQ(0, st_gate_init(&t.checked));
	before = st_meminfo_kb("VmallocUsed");
	ASSERT_LE(0, before);

	ASSERT_EQ(0, pthread_create(&th, NULL, dying_fn, &t));
	st_gate_wait(&t.enabled);
	ASSERT_EQ(0, t.err);
	ASSERT_LT(0, st_count(&t.c));
	ASSERT_EQ(1, st_hook_installed());
	enabled = st_meminfo_kb("VmallocUsed");
	TH_LOG("VmallocUsed: %ld kB before, %ld kB enabled", before, enabled);
	ASSERT_LE(size_kb, enabled - before + 64);

	/* last file reference and mapping: TRACE -> DYING */
	st_free(&t.c);
	closed = st_meminfo_kb("VmallocUsed");
	TH_LOG("VmallocUsed: %ld kB after close", closed);
	ASSERT_LE(size_kb - 64, enabled - closed) {
		TH_LOG("the DYING descriptor's buffer was not freed");
	}
	/* the thread is alive, and only it held the hook */
	ASSERT_EQ(0, st_wait_hook(0, 30000)) {
		TH_LOG("the DYING descriptor still holds the hook");
	}

	st_gate_open(&t.closed);
	st_gate_wait(&t.checked);
	ASSERT_EQ(EBUSY, t.busy);
	ASSERT_EQ(0, pthread_join(th, NULL));
}

/*
 * The reaping race. Thread A enables the shared descriptor, runs
 * syscalls, and exits; pthread_join() returns while A is still in
 * do_exit(), before its exit probe, and B enables the same descriptor
 * right away (okcov detaches A then: "reaping"), resets the buffer and
 * spins in userspace. Nothing A does after the reset may land in B's
 * buffer.
 *
 * The functions that tell A's exit path apart: those of exit_path[] that
 * A records after its last getppid when it exits undisturbed (measured on
 * this kernel first, as the positive control), minus any B records alone.
 * The tail of exit_mm() (mmput, mm_update_next_owner) runs after the
 * futex wake that returns pthread_join(), before sched_process_exit.
 *
 * To make sure B enables while A is still in that tail (so that okcov
 * reaps A), a third thread keeps the mmap lock busy with mprotect() of a
 * populated region: A waits for it in exit_mm()'s mmap_read_lock().
 * Each round's reap is observed (okcov_reap.h: A's exit event after B's
 * mark), and at least one round must have reaped: a test of reaped
 * threads in which none was reaped proves nothing. Where no reap can
 * happen (7.x: sched_process_exit before exit_mm), it SKIPs.
 *
 * What turns it red (tried on debian-6.1, okcov_reap_exiting() patched):
 * a reaped entry left armed (the descriptor READY, A's entry still
 * recording until its exit probe) with no grace period before B attaches:
 * A's mm_update_next_owner in B's buffer at round 2 (at round 0 when
 * tried again with the reap count in place). Not caught: the entry left
 * armed but the grace period kept (A's tail ends within it: 100 rounds
 * reaped, all green), nor the grace period alone removed (a callback in
 * flight past its mode check is a few instructions: 98 rounds reaped,
 * all green).
 */
static const char * const exit_path[] = {
	"do_exit", "exit_mm", "exit_mm_release", "mm_release", "mmput",
	"mm_update_next_owner", "futex_exit_release", "exit_signals",
	"taskstats_exit", "exit_itimers", "exit_sem", "exit_shm",
	"exit_files", "exit_fs", "exit_task_namespaces", "exit_task_work",
	"exit_thread", "perf_event_exit_task", "cgroup_exit", "exit_notify",
	"acct_collect", "sync_mm_rss", "exit_rcu", "do_task_dead",
};

static bool is_exit_path(const struct ksym *s)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(exit_path); i++)
		if (!strcmp(s->name, exit_path[i]))
			return true;
	return false;
}
#define RACE_ROUNDS	100
#define RACER_MAX	4096	/* getppid calls: well under 64K records */
#define MAX_DISC	256

struct racer {
	int fd;
	int stop;		/* __atomic */
	struct st_gate ready;
	int err;
	pid_t tid;
};

static void *racer_fn(void *p)
{
	struct racer *r = p;

	int i;

	r->tid = gettid();
	r->err = st_enable(r->fd, KCOV_MODE_TRACE_PC);
	st_gate_open(&r->ready);
	/*
	 * Bounded: a getppid is about three records, and a joiner slow to
	 * wake on a loaded host must not find the buffer full before A's
	 * exit path (the positive control below needs it).
	 */
	for (i = 0; i < RACER_MAX && !__atomic_load_n(&r->stop, __ATOMIC_RELAXED);
	     i++)
		syscall(SYS_getppid);
	return NULL;
}

/*
 * Burn CPU in userspace without a syscall (under emulation there is no
 * usable vDSO clock: clock_gettime() would fill the buffer).
 */
static void spin(unsigned long iterations)
{
	unsigned long i, x = 0;

	for (i = 0; i < iterations; i++)
		__atomic_store_n(&x, x + i, __ATOMIC_RELAXED);
}

/*
 * What B does while attached: reset, spin, and nothing else. With @x,
 * mark the trace just before the KIOENABLE that may reap; with @jn, hand
 * A its CPU back right after it.
 */
static int b_window(struct st_cov *c, struct st_xtrace *x,
		    struct st_joiner *jn, int round)
{
	int err;

	if (x)
		st_xtrace_mark(x, "enable", round);
	err = st_enable(c->fd, KCOV_MODE_TRACE_PC);
	/* from here on A runs its exit path beside B's window */
	if (jn && st_joiner_release(jn))
		err = err ? err : errno;
	if (err)
		return err;
	st_reset(c);
	spin(5UL << 20);
	return st_disable(c->fd);
}

static bool in_set(const struct ksym *s, const struct ksym **set, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (set[i] == s)
			return true;
	return false;
}

TEST_F_TIMEOUT(hook, reaped_thread_never_writes, 600)
{
	const struct ksym *disc[MAX_DISC], *own[MAX_DISC], *s;
	size_t ndisc = 0, nown = 0, nalias;
	uint64_t i, n, last_getppid = 0;
	int round, k, err, reaped = 0, unseen = 0;
	struct st_joiner jn;
	struct st_xtrace x;
	struct st_cov c;
	struct racer r;
	pthread_t th;

	ASSERT_EQ(0, ksyms_load());
	err = st_reap_possible();
	ASSERT_LE(0, err);
	if (!err)
		SKIP(return, "sched_process_exit runs before exit_mm() here: pthread_join() returns after the exit probe, nothing is ever reaped");
	err = st_xtrace_open(&x);
	if (err) {
		st_xtrace_close(&x);
		SKIP(return, "tracefs instance with sched_process_exit: %s",
		     strerror(err));
	}
	ASSERT_EQ(0, st_new(&c, 64 << 10));
	memset(&r, 0, sizeof(r));
	r.fd = c.fd;

	/* B alone, a few times: what its own window records */
	for (k = 0; k < 5; k++) {
		ASSERT_EQ(0, b_window(&c, NULL, NULL, 0));
		n = st_pcs(&c);
		for (i = 0; i < n; i++) {
			s = ksyms_lookup(c.buf[i + 1], &nalias);
			if (s && !in_set(s, own, nown) && nown < MAX_DISC)
				own[nown++] = s;
		}
	}

	/* A undisturbed: its exit path, recorded until its exit probe */
	st_xtrace_clear(&x);
	st_reset(&c);
	ASSERT_EQ(0, st_gate_init(&r.ready));
	ASSERT_EQ(0, pthread_create(&th, NULL, racer_fn, &r));
	st_gate_wait(&r.ready);
	ASSERT_EQ(0, r.err);
	usleep(10 * 1000);
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	ASSERT_EQ(0, st_join(th, &r.tid));
	/* the reap observation's own control: A is gone before the mark */
	st_xtrace_mark(&x, "enable", -1);
	ASSERT_EQ(ST_EXIT_BEFORE, st_xtrace_exit_vs_mark(&x, r.tid, "enable",
							 -1));
	n = st_pcs(&c);
	for (i = 0; i < n; i++)
		if (ksyms_pc_matches(c.buf[i + 1], ksym_is_syscall, "getppid"))
			last_getppid = i + 1;
	ASSERT_LT(0, last_getppid);
	for (i = last_getppid; i < n; i++) {
		s = ksyms_lookup(c.buf[i + 1], &nalias);
		if (s && is_exit_path(s) && !in_set(s, own, nown) &&
		    !in_set(s, disc, ndisc) && ndisc < MAX_DISC)
			disc[ndisc++] = s;
	}
	for (i = 0; i < ndisc; i++)
		TH_LOG("A's exit path: %s", disc[i]->name);
	ASSERT_LT(0, ndisc) {
		st_dump(&c, 200);
	}
	st_gate_destroy(&r.ready);

	ASSERT_EQ(0, st_joiner_start(&jn));

	for (round = 0; round < RACE_ROUNDS; round++) {
		st_xtrace_clear(&x);
		__atomic_store_n(&r.stop, 0, __ATOMIC_RELAXED);
		ASSERT_EQ(0, st_gate_init(&r.ready));
		ASSERT_EQ(0, st_joiner_hold(&jn));
		ASSERT_EQ(0, pthread_create(&th, st_joiner_attr(&jn),
					    racer_fn, &r));
		st_gate_wait(&r.ready);
		ASSERT_EQ(0, r.err);
		sys_getpid_n(5);
		__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
		ASSERT_EQ(0, pthread_join(th, NULL));
		/* A is in do_exit(): never EBUSY */
		ASSERT_EQ(0, b_window(&c, &x, &jn, round));
		n = st_pcs(&c);
		for (i = 0; i < n; i++) {
			s = ksyms_lookup(c.buf[i + 1], &nalias);
			ASSERT_FALSE(s && in_set(s, disc, ndisc)) {
				TH_LOG("round %d: A's %s in B's buffer", round,
				       s->name);
				st_dump(&c, 100);
			}
		}
		ASSERT_EQ(0, st_wait_thread_gone(r.tid));
		st_gate_destroy(&r.ready);
		k = st_xtrace_exit_vs_mark(&x, r.tid, "enable", round);
		reaped += k == ST_EXIT_AFTER;
		unseen += k == ST_EXIT_UNSEEN;
	}
	st_joiner_stop(&jn);
	st_xtrace_close(&x);
	st_free(&c);
	TH_LOG("%d rounds: %d reaped, %d not, %d unseen", RACE_ROUNDS,
	       reaped, RACE_ROUNDS - reaped - unseen, unseen);
	ASSERT_LT(0, reaped) {
		TH_LOG("no round reaped A: nothing was tested");
	}
}

TEST_HARNESS_MAIN
