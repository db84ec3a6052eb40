/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reaping, seen from userspace, for the tests that claim something about
 * a thread reaped by KIOENABLE (okcov_hook, okcov_threads).
 *
 * A reap happens only where pthread_join() returns before the joined
 * thread's sched_process_exit tracepoint: before 6.16 the futex wake of
 * clear_child_tid is in exit_mm(), ahead of the tracepoint; from 6.16
 * (7.x) the tracepoint comes first and no reap can occur. Which order this
 * kernel has shows in the thread's own coverage (st_reap_possible()).
 *
 * Whether one round reaped shows in a tracefs instance that records
 * sched_process_exit next to trace_marker lines, on the global trace
 * clock: okcov's exit probe, registered at load, runs before the event's,
 * so an exit event after the joiner's "enable" mark means the thread had
 * not passed its exit probe when KIOENABLE started: that call reaped it.
 *
 * The joiner makes the window wide (st_joiner_start()): it runs SCHED_FIFO
 * on the exiting thread's CPU, so the futex wake in exit_mm() preempts the
 * exiting thread (on a voluntary-preemption kernel at exit_mm()'s next
 * might_sleep(), mmap_read_lock()'s), before sched_process_exit, and the
 * joiner's KIOENABLE runs while the exiting thread waits for the CPU.
 * Without it, the joiner waits for a CPU of its own: a third thread that
 * held the mmap lock used to stretch exit_mm() instead, and reaped in 9 of
 * 10 rounds on 6.1, 1 in 10 on 6.12 (EEVDF seldom preempts for the woken
 * joiner) and 0 of 150 once on 6.12-rt (an rtmutex spins on a running
 * owner).
 *
 * Include after okcov_test.h.
 */
#ifndef OKCOV_REAP_H
#define OKCOV_REAP_H

#include <sched.h>
#include <sys/stat.h>

#define ST_XTRACE_DIR	"/sys/kernel/tracing/instances/okcov_reap"

struct st_xtrace {
	int marker;	/* trace_marker, or -1 */
};

static inline int st_xtrace_write(const char *file, const char *val)
{
	char path[256];
	int fd, ret = 0;

	snprintf(path, sizeof(path), ST_XTRACE_DIR "/%s", file);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = errno;
	close(fd);
	return ret;
}

/* 0 or an errno (no tracefs, no instances, no sched_process_exit). */
static inline int st_xtrace_open(struct st_xtrace *x)
{
	int err;

	x->marker = -1;
	rmdir(ST_XTRACE_DIR);
	if (mkdir(ST_XTRACE_DIR, 0700))
		return errno;
	err = st_xtrace_write("trace_clock", "global");
	if (!err)
		err = st_xtrace_write("events/sched/sched_process_exit/enable",
				      "1");
	if (err)
		return err;
	x->marker = open(ST_XTRACE_DIR "/trace_marker", O_WRONLY);
	return x->marker < 0 ? errno : 0;
}

static inline void st_xtrace_close(struct st_xtrace *x)
{
	if (x->marker >= 0)
		close(x->marker);
	x->marker = -1;
	st_xtrace_write("events/sched/sched_process_exit/enable", "0");
	rmdir(ST_XTRACE_DIR);
}

static inline void st_xtrace_clear(struct st_xtrace *x)
{
	st_xtrace_write("trace", "");
}

static inline void st_xtrace_mark(struct st_xtrace *x, const char *what,
				  int round)
{
	char buf[64];
	int n = snprintf(buf, sizeof(buf), "okcov %s %d\n", what, round);

	if (write(x->marker, buf, n) != n)
		return;
}

enum { ST_EXIT_UNSEEN, ST_EXIT_BEFORE, ST_EXIT_AFTER };

/*
 * Where thread @tid's exit event lies against the mark (@what, @round):
 * ST_EXIT_BEFORE, ST_EXIT_AFTER, or ST_EXIT_UNSEEN (either is missing).
 */
static inline int st_xtrace_exit_vs_mark(struct st_xtrace *x, pid_t tid,
					 const char *what, int round)
{
	char line[512], mark[64], pid[32];
	long n = 0, at_mark = -1, at_exit = -1;
	FILE *f = fopen(ST_XTRACE_DIR "/trace", "r");

	if (!f)
		return ST_EXIT_UNSEEN;
	snprintf(mark, sizeof(mark), "okcov %s %d\n", what, round);
	snprintf(pid, sizeof(pid), " pid=%d ", (int)tid);
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (at_mark < 0 && strstr(line, "tracing_mark_write: ") &&
		    strstr(line, mark))
			at_mark = n;
		else if (at_exit < 0 && strstr(line, "sched_process_exit: ") &&
			 strstr(line, pid))
			at_exit = n;
	}
	fclose(f);
	if (at_mark < 0 || at_exit < 0)
		return ST_EXIT_UNSEEN;
	return at_exit < at_mark ? ST_EXIT_BEFORE : ST_EXIT_AFTER;
}

/* The joiner's side of the window: see above. */
struct st_joiner {
	cpu_set_t was_cpus;	/* the caller's affinity before start */
	int was_policy;
	struct sched_param was_param;
	pthread_attr_t attr;	/* for the exiting thread */
};

/*
 * Sets up the attributes the joiner creates each exiting thread with
 * (st_joiner_attr()): SCHED_OTHER on CPU 0. 0 or an errno.
 */
static inline int st_joiner_start(struct st_joiner *j)
{
	struct sched_param other = { .sched_priority = 0 };
	cpu_set_t cpu0;
	int err;

	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	if (sched_getaffinity(0, sizeof(j->was_cpus), &j->was_cpus))
		return errno;
	j->was_policy = sched_getscheduler(0);
	if (j->was_policy < 0 || sched_getparam(0, &j->was_param))
		return errno;
	err = pthread_attr_init(&j->attr);
	if (!err)
		err = pthread_attr_setinheritsched(&j->attr,
						   PTHREAD_EXPLICIT_SCHED);
	if (!err)
		err = pthread_attr_setschedpolicy(&j->attr, SCHED_OTHER);
	if (!err)
		err = pthread_attr_setschedparam(&j->attr, &other);
	if (!err)
		err = pthread_attr_setaffinity_np(&j->attr, sizeof(cpu0),
						  &cpu0);
	return err;
}

static inline const pthread_attr_t *st_joiner_attr(struct st_joiner *j)
{
	return &j->attr;
}

/* The caller becomes SCHED_FIFO on CPU 0, until st_joiner_release(). */
static inline int st_joiner_hold(struct st_joiner *j)
{
	struct sched_param fifo = { .sched_priority = 1 };
	cpu_set_t cpu0;

	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	if (sched_setaffinity(0, sizeof(cpu0), &cpu0) ||
	    sched_setscheduler(0, SCHED_FIFO, &fifo))
		return errno;
	return 0;
}

/* Back to what the caller was: the exiting thread may run again. */
static inline int st_joiner_release(struct st_joiner *j)
{
	if (sched_setscheduler(0, j->was_policy, &j->was_param) ||
	    sched_setaffinity(0, sizeof(j->was_cpus), &j->was_cpus))
		return errno;
	return 0;
}

static inline void st_joiner_stop(struct st_joiner *j)
{
	st_joiner_release(j);
	pthread_attr_destroy(&j->attr);
}

/*
 * exit_mm() and what it calls after the wake: recorded by an exiting
 * thread (whose records stop at its exit probe) only where exit_mm() runs
 * before sched_process_exit.
 */
static const char * const st_exit_mm_fns[] = {
	"exit_mm", "exit_mm_release", "mm_release", "mmput",
	"mm_update_next_owner",
};

static inline bool st_is_exit_mm(const struct ksym *s, const void *unused)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(st_exit_mm_fns); i++)
		if (!strcmp(s->name, st_exit_mm_fns[i]))
			return true;
	return false;
}

static inline int st_reap_probe_fn(void *arg)
{
	int err = st_enable(*(int *)arg, KCOV_MODE_TRACE_PC);

	if (!err)
		sys_getppid_n(1);
	return err;
}

/*
 * Whether a reap can happen here: 1 if a thread that enables and exits
 * records exit_mm() before its exit probe detaches it, 0 if not, or a
 * negative errno. ksyms_load() first.
 */
static inline int st_reap_possible(void)
{
	struct st_cov c;
	size_t hits;
	int err = st_new(&c, 64 << 10);

	if (err) {
		st_free(&c);
		return -err;
	}
	st_reset(&c);
	err = st_in_thread(st_reap_probe_fn, &c.fd);
	hits = st_count_matching(&c, st_is_exit_mm, NULL);
	st_free(&c);
	if (err)
		return err < 0 ? -EIO : -err;
	return hits > 0;
}

#endif /* OKCOV_REAP_H */
