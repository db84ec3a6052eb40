// SPDX-License-Identifier: GPL-2.0
/*
 * okcov per-thread isolation: coverage belongs to the attached thread only.
 * A bystander thread's syscalls never reach the enabled thread's buffer, a
 * new thread starts detached, and 32 threads with a descriptor each see
 * exactly their own syscall.
 */
#include <sched.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/times.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <linux/capability.h>
#include <time.h>

#include "kselftest_harness.h"
#include "okcov_test.h"
#include "okcov_reap.h"

#define NTHREADS	32
#define NCALLS		20

/* Cheap syscalls, each with a kernel function of its own. */
static void sc_getpid(void) { syscall(SYS_getpid); }
static void sc_getppid(void) { syscall(SYS_getppid); }
static void sc_getuid(void) { syscall(SYS_getuid); }
static void sc_getgid(void) { syscall(SYS_getgid); }
static void sc_geteuid(void) { syscall(SYS_geteuid); }
static void sc_getegid(void) { syscall(SYS_getegid); }
static void sc_gettid(void) { syscall(SYS_gettid); }
#ifdef SYS_getpgrp
static void sc_getpgrp(void) { syscall(SYS_getpgrp); }
#else
/* arm64 has no getpgrp: another getter nobody else here calls. */
static void sc_sched_getattr(void)
{
	uint32_t attr[14];

	syscall(SYS_sched_getattr, 0, attr, sizeof(attr), 0);
}
#endif
static void sc_getpgid(void) { syscall(SYS_getpgid, 0); }
static void sc_getsid(void) { syscall(SYS_getsid, 0); }
static void sc_getresuid(void)
{
	uid_t r, e, s;

	syscall(SYS_getresuid, &r, &e, &s);
}
static void sc_getresgid(void)
{
	gid_t r, e, s;

	syscall(SYS_getresgid, &r, &e, &s);
}
static void sc_getpriority(void) { syscall(SYS_getpriority, PRIO_PROCESS, 0); }
static void sc_sched_yield(void) { syscall(SYS_sched_yield); }
static void sc_sched_getscheduler(void) { syscall(SYS_sched_getscheduler, 0); }
static void sc_sched_getparam(void)
{
	struct sched_param p;

	syscall(SYS_sched_getparam, 0, &p);
}
static void sc_sched_get_priority_max(void)
{
	syscall(SYS_sched_get_priority_max, SCHED_OTHER);
}
static void sc_sched_get_priority_min(void)
{
	syscall(SYS_sched_get_priority_min, SCHED_OTHER);
}
static void sc_sched_rr_get_interval(void)
{
	struct timespec ts;

	syscall(SYS_sched_rr_get_interval, 0, &ts);
}
static void sc_getrlimit(void)
{
	struct rlimit rl;

	syscall(SYS_getrlimit, RLIMIT_NOFILE, &rl);
}
static void sc_prlimit64(void)
{
	struct rlimit rl;

	syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &rl);
}
static void sc_getcwd(void)
{
	char buf[256];

	syscall(SYS_getcwd, buf, sizeof(buf));
}
static void sc_newuname(void)
{
	struct utsname u;

	syscall(SYS_uname, &u);
}
static void sc_sysinfo(void)
{
	struct sysinfo si;

	syscall(SYS_sysinfo, &si);
}
static void sc_times(void)
{
	struct tms t;

	syscall(SYS_times, &t);
}
static void sc_getrusage(void)
{
	struct rusage ru;

	syscall(SYS_getrusage, RUSAGE_SELF, &ru);
}
static void sc_getgroups(void) { syscall(SYS_getgroups, 0, NULL); }
static void sc_getitimer(void)
{
	struct itimerval it;

	syscall(SYS_getitimer, ITIMER_REAL, &it);
}
static void sc_personality(void) { syscall(SYS_personality, 0xffffffff); }
static void sc_sched_getaffinity(void)
{
	unsigned long mask[16];

	syscall(SYS_sched_getaffinity, 0, sizeof(mask), mask);
}
static void sc_getcpu(void)
{
	unsigned int cpu, node;

	syscall(SYS_getcpu, &cpu, &node, NULL);
}
static void sc_clock_getres(void)
{
	struct timespec ts;

	syscall(SYS_clock_getres, CLOCK_MONOTONIC, &ts);
}

static const struct {
	const char *name;	/* kernel name: KSYM_SYS_PREFIX <name> */
	void (*call)(void);
} calls[NTHREADS] = {
	{ "getpid", sc_getpid },
	{ "getppid", sc_getppid },
	{ "getuid", sc_getuid },
	{ "getgid", sc_getgid },
	{ "geteuid", sc_geteuid },
	{ "getegid", sc_getegid },
	{ "gettid", sc_gettid },
#ifdef SYS_getpgrp
	{ "getpgrp", sc_getpgrp },
#else
	{ "sched_getattr", sc_sched_getattr },
#endif
	{ "getpgid", sc_getpgid },
	{ "getsid", sc_getsid },
	{ "getresuid", sc_getresuid },
	{ "getresgid", sc_getresgid },
	{ "getpriority", sc_getpriority },
	{ "sched_yield", sc_sched_yield },
	{ "sched_getscheduler", sc_sched_getscheduler },
	{ "sched_getparam", sc_sched_getparam },
	{ "sched_get_priority_max", sc_sched_get_priority_max },
	{ "sched_get_priority_min", sc_sched_get_priority_min },
	{ "sched_rr_get_interval", sc_sched_rr_get_interval },
	{ "getrlimit", sc_getrlimit },
	{ "prlimit64", sc_prlimit64 },
	{ "getcwd", sc_getcwd },
	{ "newuname", sc_newuname },
	{ "sysinfo", sc_sysinfo },
	{ "times", sc_times },
	{ "getrusage", sc_getrusage },
	{ "getgroups", sc_getgroups },
	{ "getitimer", sc_getitimer },
#ifdef __aarch64__
	{ "arm64_personality", sc_personality },
#else
	{ "personality", sc_personality },
#endif
	{ "sched_getaffinity", sc_sched_getaffinity },
	{ "getcpu", sc_getcpu },
	{ "clock_getres", sc_clock_getres },
};

/* The calls[] entries whose syscall function appears in c's buffer. */
static void seen_calls(const struct st_cov *c, bool seen[NTHREADS])
{
	uint64_t i, n = st_pcs(c);
	const struct ksym *last = NULL;
	size_t j, k, nalias;

	memset(seen, 0, NTHREADS * sizeof(bool));
	for (i = 0; i < n; i++) {
		const struct ksym *s = ksyms_lookup(c->buf[i + 1], &nalias);

		if (!s || s == last)
			continue;
		last = s;
		for (k = 0; k < nalias; k++)
			for (j = 0; j < NTHREADS; j++)
				if (ksym_is_syscall(&s[k], calls[j].name))
					seen[j] = true;
	}
}

/* The kernel functions exist under the expected names. */
TEST(syscall_symbols)
{
	size_t j;
	char name[64];

	ASSERT_EQ(0, ksyms_load());
	for (j = 0; j < NTHREADS; j++) {
		snprintf(name, sizeof(name), KSYM_SYS_PREFIX "%s", calls[j].name);
		ASSERT_NE(0, ksyms_addr(name, NULL)) {
			TH_LOG("%s not in /proc/kallsyms", name);
		}
	}
}

struct worker {
	int idx;
	pthread_barrier_t *start, *stop;
	struct st_cov c;
	int err_new, err_enable, err_disable;
};

static void *worker_fn(void *p)
{
	struct worker *w = p;
	int i;

	w->err_new = st_new(&w->c, 16 << 10);
	if (!w->err_new)
		w->err_enable = st_enable(w->c.fd, KCOV_MODE_TRACE_PC);
	/* everyone is attached before anyone starts */
	pthread_barrier_wait(w->start);
	if (!w->err_new) {
		st_reset(&w->c);
		for (i = 0; i < NCALLS; i++)
			calls[w->idx].call();
	}
	/* ... and stays attached until everyone is done */
	pthread_barrier_wait(w->stop);
	if (!w->err_new)
		w->err_disable = st_disable(w->c.fd);
	return NULL;
}

/* 32 threads, each with its own descriptor and its own syscall: each sees
 * its syscall and none of the 31 others.
 */
TEST(threads_32)
{
	static struct worker w[NTHREADS];
	pthread_barrier_t start, stop;
	pthread_t th[NTHREADS];
	bool seen[NTHREADS];
	int i, j;

	ASSERT_EQ(0, ksyms_load());
	pthread_barrier_init(&start, NULL, NTHREADS);
	pthread_barrier_init(&stop, NULL, NTHREADS);
	for (i = 0; i < NTHREADS; i++) {
		w[i].idx = i;
		w[i].start = &start;
		w[i].stop = &stop;
		w[i].c.fd = -1;
		w[i].c.buf = MAP_FAILED;
		ASSERT_EQ(0, pthread_create(&th[i], NULL, worker_fn, &w[i]));
	}
	for (i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);

	for (i = 0; i < NTHREADS; i++) {
		ASSERT_EQ(0, w[i].err_new);
		ASSERT_EQ(0, w[i].err_enable);
		ASSERT_EQ(0, w[i].err_disable);
		ASSERT_GT(w[i].c.n, st_count(&w[i].c)) {
			TH_LOG("thread %d (%s): buffer full", i, calls[i].name);
		}
		seen_calls(&w[i].c, seen);
		for (j = 0; j < NTHREADS; j++) {
			ASSERT_EQ(i == j, seen[j]) {
				TH_LOG("thread %d (%s): sys_%s %s", i,
				       calls[i].name, calls[j].name,
				       seen[j] ? "recorded, not its own" :
						 "missing");
				st_dump(&w[i].c, 100);
			}
		}
	}
	for (i = 0; i < NTHREADS; i++)
		st_free(&w[i].c);
}

/*
 * A bystander thread hammers getppid() while the enabled thread calls
 * getpid(): the enabled thread's buffer holds sys_getpid and never
 * sys_getppid.
 */
struct bystander {
	bool stop;			/* atomic */
	unsigned long iterations;	/* atomic */
	int disable_err;
	int fd;
};

static void *bystander_fn(void *p)
{
	struct bystander *b = p;

	/* it is not attached, even though the process has an enabled fd */
	b->disable_err = st_disable(b->fd);
	while (!__atomic_load_n(&b->stop, __ATOMIC_RELAXED)) {
		syscall(SYS_getppid);
		__atomic_fetch_add(&b->iterations, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static unsigned long bystander_iterations(struct bystander *b)
{
	return __atomic_load_n(&b->iterations, __ATOMIC_RELAXED);
}

TEST(bystander)
{
	struct bystander b = { 0 };
	unsigned long seen_start, during;
	struct st_cov c;
	pthread_t th;
	time_t deadline;
	int rounds = 0;

	ASSERT_EQ(0, ksyms_load());
	ASSERT_EQ(0, st_new(&c, 64 << 10));
	b.fd = c.fd;
	ASSERT_EQ(0, st_enable(c.fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(0, pthread_create(&th, NULL, bystander_fn, &b));
	/* the bystander must be running before we look (one vCPU, RT) */
	deadline = time(NULL) + 20;
	while (!bystander_iterations(&b) && time(NULL) < deadline)
		sched_yield();
	st_reset(&c);

	/*
	 * overlap: at least 20 calls and one bystander call, then until the
	 * bystander made 200 or half the buffer is used
	 */
	seen_start = bystander_iterations(&b);
	deadline = time(NULL) + 20;
	while (time(NULL) < deadline &&
	       (rounds < 20 || bystander_iterations(&b) == seen_start ||
		(bystander_iterations(&b) - seen_start < 200 &&
		 st_count(&c) < c.n / 2))) {
		syscall(SYS_getpid);
		rounds++;
	}
	ASSERT_EQ(0, st_disable(c.fd));
	during = bystander_iterations(&b) - seen_start;
	__atomic_store_n(&b.stop, true, __ATOMIC_RELAXED);
	pthread_join(th, NULL);

	TH_LOG("%d getpid calls, %lu bystander getppid calls, %llu records",
	       rounds, during, (unsigned long long)st_count(&c));
	ASSERT_EQ(EBUSY, b.disable_err);
	ASSERT_LT(0, during);
	ASSERT_TRUE(st_has_syscall(&c, "getpid"));
	ASSERT_FALSE(st_has_syscall(&c, "getppid")) {
		st_dump(&c, 200);
	}
	st_free(&c);
}

/* A new thread of an enabled thread starts detached: it cannot disable
 * the parent's descriptor and its syscalls are not recorded.
 */
static int child_thread(void *arg)
{
	int err = st_disable(*(int *)arg);

	sys_getppid_n(50);
	return err;
}

TEST(new_thread_detached)
{
	struct st_cov c;

	ASSERT_EQ(0, ksyms_load());
	ASSERT_EQ(0, st_new(&c, 64 << 10));
	ASSERT_EQ(0, st_enable(c.fd, KCOV_MODE_TRACE_PC));
	st_reset(&c);
	ASSERT_EQ(EBUSY, st_in_thread(child_thread, &c.fd));
	sys_getpid_n(5);
	ASSERT_EQ(0, st_disable(c.fd));

	ASSERT_TRUE(st_has_syscall(&c, "getpid"));
	/* thread creation and join were recorded, the thread's work not */
	ASSERT_TRUE(st_has_syscall(&c, "clone") ||
		    st_has_syscall(&c, "clone3"));
	ASSERT_FALSE(st_has_syscall(&c, "getppid")) {
		st_dump(&c, 200);
	}
	st_free(&c);
}

/*
 * The same descriptor moves between threads: enabled by one, disabled,
 * enabled by the next; each time only the current thread's work lands.
 * While a mover is enabled, this thread (its last owner's joiner, detached)
 * calls getpid: that must not land in the buffer the mover owns.
 */
struct mover {
	struct st_cov *c;
	struct st_gate enabled, go;
	int err;
	pid_t tid;
};

static void *mover_fn(void *arg)
{
	struct mover *m = arg;

	m->tid = gettid();
	m->err = st_enable(m->c->fd, KCOV_MODE_TRACE_PC);
	if (!m->err)
		st_reset(m->c);
	st_gate_open(&m->enabled);
	st_gate_wait(&m->go);
	if (!m->err) {
		sys_getppid_n(5);
		m->err = st_disable(m->c->fd);
	}
	return NULL;
}

TEST(descriptor_moves_between_threads)
{
	struct st_cov c;
	struct mover m;
	pthread_t th;
	int i;

	ASSERT_EQ(0, ksyms_load());
	ASSERT_EQ(0, st_new(&c, 64 << 10));
	for (i = 0; i < 3; i++) {
		m = (struct mover){ .c = &c };
		ASSERT_EQ(0, st_gate_init(&m.enabled));
		ASSERT_EQ(0, st_gate_init(&m.go));
		ASSERT_EQ(0, pthread_create(&th, NULL, mover_fn, &m));
		st_gate_wait(&m.enabled);
		sys_getpid_n(5);	/* detached: while the mover is enabled */
		st_gate_open(&m.go);
		ASSERT_EQ(0, st_join(th, &m.tid));
		st_gate_destroy(&m.enabled);
		st_gate_destroy(&m.go);
		ASSERT_EQ(0, m.err);
		ASSERT_TRUE(st_has_syscall(&c, "getppid"));
		ASSERT_FALSE(st_has_syscall(&c, "getpid")) {
			TH_LOG("round %d: this thread's getpid landed in the mover's buffer",
			       i);
			st_dump(&c, 200);
		}
	}
	st_free(&c);
}

/*
 * A thread enables and exits without disabling; the joiner re-enables the
 * descriptor right after pthread_join(), with no wait: before 6.16 the
 * kernel wakes the joiner before the exit tracepoint, and okcov must not
 * say EBUSY then (it reaps the exiting thread). The joiner preempts the
 * exiting thread at the wake (okcov_reap.h), and the rounds that did reap
 * are counted: at least one must have, or the EBUSY rule was
 * never met. Where no reap can happen (7.x) it SKIPs.
 *
 * Red, tried on debian-6.1: okcov_reap_exiting() never reaping (EBUSY at
 * the first round that would have).
 */
struct exiter {
	struct st_cov *c;
	int err;
	pid_t tid;
};

static void *enable_and_exit(void *arg)
{
	struct exiter *e = arg;

	e->tid = gettid();
	e->err = st_enable(e->c->fd, KCOV_MODE_TRACE_PC);
	if (!e->err)
		sys_getppid_n(1);
	return NULL;
}

/* At least JOIN_ROUNDS, and on until JOIN_REAPS reaped (6.12: 1 in 10). */
#define JOIN_ROUNDS	50
#define JOIN_REAPS	5
#define JOIN_MAX	150

TEST(enable_right_after_join)
{
	int i, k, err, reaped = 0, unseen = 0;
	struct st_joiner jn;
	struct st_xtrace x;
	struct exiter e;
	struct st_cov c;
	pthread_t th;

	ASSERT_EQ(0, ksyms_load());
	err = st_xtrace_open(&x);
	if (err) {
		st_xtrace_close(&x);
		SKIP(return, "tracefs instance with sched_process_exit: %s",
		     strerror(err));
	}
	ASSERT_EQ(0, st_new(&c, 64 << 10));
	/* the observation's own control: a thread gone before the mark */
	e = (struct exiter){ .c = &c };
	st_xtrace_clear(&x);
	ASSERT_EQ(0, pthread_create(&th, NULL, enable_and_exit, &e));
	ASSERT_EQ(0, st_join(th, &e.tid));
	st_xtrace_mark(&x, "enable", -1);
	ASSERT_EQ(ST_EXIT_BEFORE, st_xtrace_exit_vs_mark(&x, e.tid, "enable",
							 -1));
	err = st_reap_possible();
	ASSERT_LE(0, err);
	if (!err) {
		st_xtrace_close(&x);
		st_free(&c);
		SKIP(return, "sched_process_exit runs before exit_mm() here: pthread_join() returns after the exit probe, nothing to reap");
	}
	ASSERT_EQ(0, st_joiner_start(&jn));
	for (i = 0; i < JOIN_MAX && (i < JOIN_ROUNDS || reaped < JOIN_REAPS);
	     i++) {
		e = (struct exiter){ .c = &c };
		st_xtrace_clear(&x);
		ASSERT_EQ(0, st_joiner_hold(&jn));
		ASSERT_EQ(0, pthread_create(&th, st_joiner_attr(&jn),
					    enable_and_exit, &e));
		ASSERT_EQ(0, pthread_join(th, NULL));
		st_xtrace_mark(&x, "enable", i);
		err = st_enable(c.fd, KCOV_MODE_TRACE_PC);
		ASSERT_EQ(0, st_joiner_release(&jn));
		ASSERT_EQ(0, e.err);
		ASSERT_EQ(0, err) {
			TH_LOG("round %d: %s for a thread in do_exit()", i,
			       strerror(err));
		}
		ASSERT_EQ(0, st_disable(c.fd));
		ASSERT_EQ(0, st_wait_thread_gone(e.tid));
		k = st_xtrace_exit_vs_mark(&x, e.tid, "enable", i);
		reaped += k == ST_EXIT_AFTER;
		unseen += k == ST_EXIT_UNSEEN;
	}
	st_joiner_stop(&jn);
	st_xtrace_close(&x);
	st_free(&c);
	TH_LOG("%d rounds: %d reaped, %d not, %d unseen", i, reaped,
	       i - reaped - unseen, unseen);
	ASSERT_LT(0, reaped) {
		TH_LOG("no round reaped: the EBUSY rule was never met");
	}
}

TEST_HARNESS_MAIN
