// SPDX-License-Identifier: GPL-2.0
/*
 * Remote coverage (KIOREMOTEATTACH, KCOV_REMOTE_COMMON): every row of the
 * state table of okcov(4), "Remote coverage", with its exact errno, and
 * what records: the work
 * items and timers of the test-target module queued on the caller's
 * behalf (exactly those functions, nothing of the caller's own syscalls:
 * OpenBSD regress "remote"), a stock kernel path (a BPF map freed in a
 * kworker), close and disable while work is in flight (OpenBSD regress
 * "remote-close"), tags re-decided by a non-owner's queueing, two
 * processes with their own remote descriptors, and rmmod with remote
 * descriptors and pending work.
 *
 * The target-module tests need OKCOV_TARGET_KO (loaded here through
 * libkmod if needed); TRACE_CMP ones also need okcov's own sanitizer hooks
 * (not a CONFIG_KCOV kernel). TRACE_PC ones go through ftrace and run on
 * every kernel.
 */
#include "kselftest_harness.h"
#include "okcov_test.h"
#include "kmod_util.h"
#include "okcov_target.h"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#define NENT		(64 << 10)

static char no_target[256];	/* why the target tests cannot run */
static char no_sancov[256];	/* why the TRACE_CMP ones cannot */

static int remote_attach(int fd, int subsystem)
{
	struct kio_remote_attach ra = { .subsystem = subsystem, .id = 0 };

	return st_ioctl(fd, KIOREMOTEATTACH, &ra);
}

/* A READY descriptor made the process's remote descriptor; 0 or errno. */
static int remote_new(struct st_cov *c, uint64_t n)
{
	int err = st_new(c, n);

	return err ? err : remote_attach(c->fd, KCOV_REMOTE_COMMON);
}

/* A syscall entry point: the caller's own work, never deferred work. */
static bool ksym_is_sys(const struct ksym *s, const void *unused)
{
	return !strncmp(s->name, KSYM_SYS_PREFIX, strlen(KSYM_SYS_PREFIX)) ||
	       !strncmp(s->name, "__do_sys_", 9) ||
	       !strncmp(s->name, "__se_sys_", 9) ||
	       !strncmp(s->name, KSYM_SYS_ENTRY, strlen(KSYM_SYS_ENTRY));
}

/* The target functions a remote buffer may contain, by source. */
static const char * const work_fns[] = {
	"okcov_target_work_fn", "okcov_target_in_work",
};
static const char * const timer_fns[] = {
	"okcov_target_timer_fn", "okcov_target_in_timer",
};
static const char * const dwork_fns[] = {
	"okcov_target_dwork_fn", "okcov_target_in_dwork",
};

/*
 * Every target PC in the buffer is one of the allowed sources'
 * functions, and (TRACE_PC) every function of those sources is there.
 */
static bool only_sources(const struct st_cov *c, unsigned long how)
{
	uint64_t i, n = st_pcs(c);
	const struct ksym *s;
	char name[256];
	bool ok = true;
	size_t j;

	for (i = 0; i < n; i++) {
		bool allowed = false;

		s = ksyms_lookup(c->buf[i + 1], NULL);
		if (!s || !s->mod || strcmp(s->mod, OKCOV_TARGET_NAME))
			continue;
		/* every callback's helper (inlined on stock kernels) */
		if (how && !strcmp(s->name, "okcov_target_done"))
			continue;
		for (j = 0; j < 2; j++) {
			if ((how & OKCOV_DEFER_WORK) && !strcmp(s->name, work_fns[j]))
				allowed = true;
			if ((how & OKCOV_DEFER_TIMER) && !strcmp(s->name, timer_fns[j]))
				allowed = true;
			if ((how & OKCOV_DEFER_DELAYED) && !strcmp(s->name, dwork_fns[j]))
				allowed = true;
		}
		if (!allowed) {
			fprintf(stderr, "# unexpected %s\n",
				ksyms_format(c->buf[i + 1], name, sizeof(name)));
			ok = false;
		}
	}
	for (j = 0; j < 2; j++) {
		if ((how & OKCOV_DEFER_WORK) && !st_target_hits(c, work_fns[j]))
			ok = false;
		if ((how & OKCOV_DEFER_TIMER) && !st_target_hits(c, timer_fns[j]))
			ok = false;
		if ((how & OKCOV_DEFER_DELAYED) && !st_target_hits(c, dwork_fns[j]))
			ok = false;
	}
	if (!ok)
		st_dump(c, 100);
	return ok;
}

/* ---- the state table: no target module needed ---- */

FIXTURE(state) {
	struct st_cov c;
};

FIXTURE_SETUP(state)
{
	ASSERT_EQ(0, st_new(&self->c, NENT));
}

FIXTURE_TEARDOWN(state)
{
	st_free(&self->c);
}

/* EFAULT comes first, even before the state check. */
TEST_F(state, attach_efault)
{
	int fd = st_open();

	ASSERT_LE(0, fd);
	ASSERT_EQ(EFAULT, st_ioctl(fd, KIOREMOTEATTACH, NULL));	/* NONE */
	ASSERT_EQ(EFAULT, st_ioctl(self->c.fd, KIOREMOTEATTACH, NULL));
	ASSERT_EQ(EFAULT, st_ioctl(self->c.fd, KIOREMOTEATTACH,
				      (void *)16));
	close(fd);
	/* nothing changed: it still attaches */
	ASSERT_EQ(0, remote_attach(self->c.fd, KCOV_REMOTE_COMMON));
}

/* Not READY: EBUSY, checked before the subsystem. */
TEST_F(state, attach_not_ready)
{
	int fd = st_open();

	ASSERT_LE(0, fd);
	ASSERT_EQ(EBUSY, remote_attach(fd, KCOV_REMOTE_COMMON));	/* NONE */
	ASSERT_EQ(EBUSY, remote_attach(fd, 1));
	close(fd);
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(EBUSY, remote_attach(self->c.fd, KCOV_REMOTE_COMMON));
	ASSERT_EQ(EBUSY, remote_attach(self->c.fd, 7));
	ASSERT_EQ(0, st_disable(self->c.fd));
	ASSERT_EQ(0, remote_attach(self->c.fd, KCOV_REMOTE_COMMON));
}

TEST_F(state, attach_bad_subsystem)
{
	ASSERT_EQ(EINVAL, remote_attach(self->c.fd, 1));
	ASSERT_EQ(EINVAL, remote_attach(self->c.fd, -1));
	ASSERT_EQ(0, remote_attach(self->c.fd, KCOV_REMOTE_COMMON));
}

/* ra.id is ignored, as on OpenBSD. */
TEST_F(state, attach_id_ignored)
{
	struct kio_remote_attach ra = { KCOV_REMOTE_COMMON, 12345 };

	ASSERT_EQ(0, st_ioctl(self->c.fd, KIOREMOTEATTACH, &ra));
}

/* One live remote descriptor per process; closing it frees the slot. */
TEST_F(state, one_per_process)
{
	struct st_cov d;

	ASSERT_EQ(0, remote_attach(self->c.fd, KCOV_REMOTE_COMMON));
	ASSERT_EQ(EBUSY, remote_attach(self->c.fd, KCOV_REMOTE_COMMON));
	ASSERT_EQ(0, st_new(&d, NENT));
	ASSERT_EQ(EBUSY, remote_attach(d.fd, KCOV_REMOTE_COMMON));
	/* state before subsystem before the process rule */
	ASSERT_EQ(EINVAL, remote_attach(d.fd, 1));
	st_free(&self->c);
	ASSERT_EQ(0, remote_attach(d.fd, KCOV_REMOTE_COMMON));
	st_free(&d);
}

/* Another process (and another thread of this one) counts separately. */
TEST_F(state, per_process_not_per_thread)
{
	int status;
	pid_t pid;

	ASSERT_EQ(0, remote_attach(self->c.fd, KCOV_REMOTE_COMMON));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct st_cov d;
		int err = st_new(&d, NENT);

		/* the inherited fd is the parent's remote descriptor */
		if (!err && remote_attach(self->c.fd, KCOV_REMOTE_COMMON) != EBUSY)
			err = 100;
		if (!err)
			err = remote_attach(d.fd, KCOV_REMOTE_COMMON);
		_exit(err);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
}

static int thread_attach(void *arg)
{
	return remote_attach(*(int *)arg, KCOV_REMOTE_COMMON);
}

TEST_F(state, other_thread_same_process)
{
	struct st_cov d;

	ASSERT_EQ(0, remote_attach(self->c.fd, KCOV_REMOTE_COMMON));
	ASSERT_EQ(0, st_new(&d, NENT));
	ASSERT_EQ(EBUSY, st_in_thread(thread_attach, &d.fd));
	st_free(&d);
}

/* KIOENABLE: the checks of section 2, and no thread is attached. */
/*
 * A refused remote KIOENABLE registers no probe and installs no hook: its
 * checks come first. With the hook gone beforehand, enabled_functions
 * stays empty after EINVAL; the positive control installs it.
 */
TEST_F_TIMEOUT(state, refused_enable_installs_nothing, 120)
{
	int mode = 3;

	if (st_wait_hook(0, 30000))
		SKIP(return, "the ftrace hook never went away (another tracer?)");
	ASSERT_EQ(0, remote_attach(self->c.fd, KCOV_REMOTE_COMMON));
	ASSERT_EQ(EINVAL, st_ioctl(self->c.fd, KIOENABLE, &mode));
	ASSERT_EQ(0, st_hook_installed());
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(1, st_hook_installed());
	ASSERT_EQ(0, st_disable(self->c.fd));
}

TEST_F(state, enable_attaches_nobody)
{
	struct st_cov d;
	int mode = 3;

	ASSERT_EQ(0, remote_attach(self->c.fd, KCOV_REMOTE_COMMON));
	ASSERT_EQ(EFAULT, st_ioctl(self->c.fd, KIOENABLE, NULL));
	ASSERT_EQ(EINVAL, st_ioctl(self->c.fd, KIOENABLE, &mode));
	ASSERT_EQ(EINVAL, st_enable(self->c.fd, KCOV_MODE_NONE));
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(EBUSY, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	/* the caller is free: it enables a thread descriptor */
	ASSERT_EQ(0, st_new(&d, NENT));
	ASSERT_EQ(0, st_enable(d.fd, KCOV_MODE_TRACE_PC));
	st_reset(&d);
	st_reset(&self->c);
	sys_getpid_n(10);
	ASSERT_TRUE(st_has_syscall(&d, "getpid"));
	ASSERT_FALSE(st_has_syscall(&self->c, "getpid"));
	/* the remote descriptor is not the caller's: disable it anyway */
	ASSERT_EQ(0, st_disable(self->c.fd));
	ASSERT_EQ(0, st_disable(d.fd));
	st_free(&d);
}

/* A thread that has a descriptor attached: EBUSY, as in section 2. */
TEST_F(state, enable_thread_attached)
{
	struct st_cov d;

	ASSERT_EQ(0, st_new(&d, NENT));
	ASSERT_EQ(0, st_enable(d.fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(0, remote_attach(self->c.fd, KCOV_REMOTE_COMMON));
	ASSERT_EQ(EBUSY, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(0, st_disable(d.fd));
	ASSERT_EQ(0, st_enable_legacy(self->c.fd));
	ASSERT_EQ(0, st_disable(self->c.fd));
	st_free(&d);
}

static int thread_disable(void *arg)
{
	return st_disable(*(int *)arg);
}

/* KIODISABLE: not TRACE is EBUSY; any thread may disable TRACE. */
TEST_F(state, disable_any_thread)
{
	ASSERT_EQ(0, remote_attach(self->c.fd, KCOV_REMOTE_COMMON));
	ASSERT_EQ(EBUSY, st_disable(self->c.fd));
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_CMP));
	ASSERT_EQ(0, st_in_thread(thread_disable, &self->c.fd));
	ASSERT_EQ(EBUSY, st_disable(self->c.fd));
	ASSERT_EQ(EBUSY, st_in_thread(thread_disable, &self->c.fd));
	/* READY again: enable once more */
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(0, st_disable(self->c.fd));
}

/* Closed while TRACE: freed at once, never DYING (the caller is free). */
TEST_F(state, close_trace_frees)
{
	struct st_cov d;

	ASSERT_EQ(0, remote_attach(self->c.fd, KCOV_REMOTE_COMMON));
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	st_free(&self->c);
	/* not DYING: the process may attach a new remote descriptor */
	ASSERT_EQ(0, remote_new(&d, NENT));
	ASSERT_EQ(0, st_enable(d.fd, KCOV_MODE_TRACE_PC));
	st_free(&d);
}

/*
 * OpenBSD regress "remote": the thread that enabled the remote descriptor
 * records nothing of its own syscalls there.
 */
TEST_F(state, own_syscalls_not_recorded)
{
	int fd, i;

	ASSERT_EQ(0, ksyms_load());
	fd = st_bpf_array_map(4);
	if (fd < 0)
		SKIP(return, "bpf(BPF_MAP_CREATE): %s: no kworker to record as the positive control",
		     strerror(errno));
	close(fd);
	ASSERT_EQ(0, remote_attach(self->c.fd, KCOV_REMOTE_COMMON));
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	st_reset(&self->c);
	sys_getpid_n(100);
	sys_getppid_n(100);
	ASSERT_EQ(0, st_count(&self->c)) {
		st_dump(&self->c, 50);
	}
	/*
	 * Positive control: the same descriptor, still TRACE, records the
	 * process's deferred work (stock_bpf_map_free's path): a remote
	 * side that records nothing at all fails here.
	 */
	fd = st_bpf_array_map(4);
	ASSERT_LE(0, fd);
	close(fd);
	for (i = 0; i < 100 && !st_count_matching(&self->c, ksym_named,
						     "bpf_map_free_deferred"); i++)
		usleep(20 * 1000);
	ASSERT_EQ(0, st_disable(self->c.fd));
	ASSERT_LT(0, st_count_matching(&self->c, ksym_named,
					  "bpf_map_free_deferred")) {
		st_dump(&self->c, 50);
	}
	ASSERT_FALSE(st_has_syscall(&self->c, "getpid"));
	ASSERT_FALSE(st_has_syscall(&self->c, "getppid"));
}

/* ---- the target module's work items and timers ---- */

FIXTURE(target) {
	struct st_cov c;
	int tfd;
};

FIXTURE_SETUP(target)
{
	self->c.fd = -1;
	self->c.buf = MAP_FAILED;
	self->tfd = -1;
	if (no_target[0])
		SKIP(return, "%s", no_target);
	ASSERT_EQ(0, ksyms_load());
	self->tfd = open(OKCOV_TARGET_PATH, O_RDWR);
	ASSERT_LE(0, self->tfd);
	ASSERT_EQ(0, remote_new(&self->c, NENT));
}

FIXTURE_TEARDOWN(target)
{
	st_free(&self->c);
	if (self->tfd >= 0)
		close(self->tfd);
}

/* Defer @how, wait for it, and disable; the caller's own ioctl ran too. */
static int run_deferred(struct st_cov *c, int tfd, int mode, unsigned long how)
{
	int err = st_enable(c->fd, mode);

	if (err)
		return err;
	st_reset(c);
	err = st_defer(tfd, how);
	/* the caller's own instrumented ioctl: never remote */
	if (!err && ioctl(tfd, OKCOV_TARGET_RUN, OKCOV_TARGET_MAGIC64) < 0)
		err = errno;
	if (!err)
		err = st_defer_wait(tfd);
	if (!err)
		err = st_disable(c->fd);
	return err;
}

static void check_pc(struct __test_metadata *_metadata, struct st_cov *c,
		     unsigned long how)
{
	ASSERT_TRUE(only_sources(c, how));
	ASSERT_EQ(0, st_target_hits(c, "okcov_target_run"));
	ASSERT_EQ(0, st_target_hits(c, "okcov_target_ioctl"));
	ASSERT_EQ(0, st_count_matching(c, ksym_is_sys, NULL));
}

TEST_F(target, work_pc)
{
	if (_metadata->skip)
		return;
	ASSERT_EQ(0, run_deferred(&self->c, self->tfd, KCOV_MODE_TRACE_PC,
				  OKCOV_DEFER_WORK));
	check_pc(_metadata, &self->c, OKCOV_DEFER_WORK);
}

TEST_F(target, timer_pc)
{
	if (_metadata->skip)
		return;
	ASSERT_EQ(0, run_deferred(&self->c, self->tfd, KCOV_MODE_TRACE_PC,
				  OKCOV_DEFER_TIMER));
	check_pc(_metadata, &self->c, OKCOV_DEFER_TIMER);
}

/* A delayed work item: its timer half and its work half both record. */
TEST_F(target, delayed_work_pc)
{
	if (_metadata->skip)
		return;
	ASSERT_EQ(0, run_deferred(&self->c, self->tfd, KCOV_MODE_TRACE_PC,
				  OKCOV_DEFER_DELAYED));
	check_pc(_metadata, &self->c, OKCOV_DEFER_DELAYED);
	ASSERT_LT(0, st_count_matching(&self->c, ksym_named,
					  "delayed_work_timer_fn"));
}

TEST_F(target, all_pc)
{
	unsigned long all = OKCOV_DEFER_WORK | OKCOV_DEFER_TIMER |
			    OKCOV_DEFER_DELAYED;

	if (_metadata->skip)
		return;
	ASSERT_EQ(0, run_deferred(&self->c, self->tfd, KCOV_MODE_TRACE_PC,
				  all));
	check_pc(_metadata, &self->c, all);
}

struct cmp_rec {
	uint64_t type, arg1, arg2, pc;
};

/* Comparison records of (type, a, *) in function fn of the target. */
static size_t cmp_hits(const struct st_cov *c, uint64_t type, uint64_t a,
		       const char *fn)
{
	uint64_t i, cnt = st_count(c), room = (c->n - 1) / 4;
	size_t hits = 0;

	for (i = 0; i < cnt && i < room; i++) {
		struct cmp_rec r = {
			c->buf[4 * i + 1], c->buf[4 * i + 2],
			c->buf[4 * i + 3], c->buf[4 * i + 4],
		};

		if (r.type != type || (r.arg1 != a && r.arg2 != a))
			continue;
		if (!fn || ksyms_pc_matches(r.pc, st_in_target, fn))
			hits++;
	}
	return hits;
}

TEST_F(target, all_cmp)
{
	unsigned long all = OKCOV_DEFER_WORK | OKCOV_DEFER_TIMER |
			    OKCOV_DEFER_DELAYED;
	uint64_t t = KCOV_CMP_SIZE(3) | KCOV_CMP_CONST;

	if (_metadata->skip)
		return;
	if (no_sancov[0])
		SKIP(return, "%s", no_sancov);
	ASSERT_EQ(0, run_deferred(&self->c, self->tfd, KCOV_MODE_TRACE_CMP,
				  all));
	ASSERT_EQ(1, cmp_hits(&self->c, t, OKCOV_TARGET_WORK_MAGIC,
			      "okcov_target_in_work"));
	ASSERT_EQ(1, cmp_hits(&self->c, t, OKCOV_TARGET_TIMER_MAGIC,
			      "okcov_target_in_timer"));
	ASSERT_EQ(1, cmp_hits(&self->c, t, OKCOV_TARGET_DWORK_MAGIC,
			      "okcov_target_in_dwork"));
	/* the caller's own OKCOV_TARGET_RUN compared with MAGIC64 */
	ASSERT_EQ(0, cmp_hits(&self->c, t, OKCOV_TARGET_MAGIC64, NULL));
}

/* Work deferred while READY, or after KIODISABLE, records nothing. */
TEST_F(target, not_trace_not_recorded)
{
	if (_metadata->skip)
		return;
	st_reset(&self->c);
	ASSERT_EQ(0, st_defer(self->tfd, OKCOV_DEFER_WORK | OKCOV_DEFER_TIMER));
	ASSERT_EQ(0, st_defer_wait(self->tfd));
	ASSERT_EQ(0, st_count(&self->c));
	/* positive control: the same work and timer, deferred while TRACE */
	ASSERT_EQ(0, run_deferred(&self->c, self->tfd, KCOV_MODE_TRACE_PC,
				  OKCOV_DEFER_WORK | OKCOV_DEFER_TIMER));
	ASSERT_TRUE(only_sources(&self->c,
				 OKCOV_DEFER_WORK | OKCOV_DEFER_TIMER));
	st_reset(&self->c);
	ASSERT_EQ(0, st_defer(self->tfd, OKCOV_DEFER_WORK | OKCOV_DEFER_TIMER));
	ASSERT_EQ(0, st_defer_wait(self->tfd));
	ASSERT_EQ(0, st_count(&self->c));
}

/* Tags die with KIODISABLE: a timer armed before it stays unrecorded. */
TEST_F(target, disable_drops_tags)
{
	if (_metadata->skip)
		return;
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(0, st_defer(self->tfd, OKCOV_DEFER_TIMER | OKCOV_DEFER_LATE));
	ASSERT_EQ(0, st_disable(self->c.fd));
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	st_reset(&self->c);
	ASSERT_EQ(0, st_defer_wait(self->tfd));
	ASSERT_EQ(0, st_disable(self->c.fd));
	ASSERT_EQ(0, st_target_hits(&self->c, "okcov_target_timer_fn"));
	/* positive control: armed while TRACE, it does record */
	ASSERT_EQ(0, run_deferred(&self->c, self->tfd, KCOV_MODE_TRACE_PC,
				  OKCOV_DEFER_TIMER | OKCOV_DEFER_LATE));
	ASSERT_LT(0, st_target_hits(&self->c, "okcov_target_timer_fn"));
}

/*
 * A re-arm by another process clears the tag: the owner is whoever queued
 * last, never whoever queued first. The child re-arms it to fire at once:
 * a mod_timer() that leaves a pending timer in its wheel bucket returns
 * early, without the timer_start tracepoint (a known blind spot).
 */
TEST_F(target, requeue_by_other_clears)
{
	int status;
	pid_t pid;

	if (_metadata->skip)
		return;
	/* positive control: the same timer, left to its owner, records */
	ASSERT_EQ(0, run_deferred(&self->c, self->tfd, KCOV_MODE_TRACE_PC,
				  OKCOV_DEFER_TIMER | OKCOV_DEFER_LATE));
	ASSERT_LT(0, st_target_hits(&self->c, "okcov_target_timer_fn"));

	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	st_reset(&self->c);
	ASSERT_EQ(0, st_defer(self->tfd, OKCOV_DEFER_TIMER | OKCOV_DEFER_LATE));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)	/* the same timer, re-armed by a non-owner */
		_exit(st_defer(self->tfd, OKCOV_DEFER_TIMER));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(0, st_defer_wait(self->tfd));
	ASSERT_EQ(0, st_disable(self->c.fd));
	ASSERT_EQ(0, st_target_hits(&self->c, "okcov_target_timer_fn"));
}

/* Descendants do not count: a forked child's deferred work is its own. */
TEST_F(target, child_not_recorded)
{
	int status, tfd;
	pid_t pid;

	if (_metadata->skip)
		return;
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	st_reset(&self->c);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		tfd = open(OKCOV_TARGET_PATH, O_RDWR);
		if (tfd < 0 || st_defer(tfd, OKCOV_DEFER_WORK | OKCOV_DEFER_TIMER))
			_exit(1);
		_exit(st_defer_wait(tfd));
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(0, st_disable(self->c.fd));
	ASSERT_TRUE(only_sources(&self->c, 0));
	/* positive control: the parent's own, in the same setup, record */
	ASSERT_EQ(0, run_deferred(&self->c, self->tfd, KCOV_MODE_TRACE_PC,
				  OKCOV_DEFER_WORK | OKCOV_DEFER_TIMER));
	ASSERT_TRUE(only_sources(&self->c,
				 OKCOV_DEFER_WORK | OKCOV_DEFER_TIMER));
}

/* Two processes, each with its own remote descriptor: no crossover. */
TEST_F(target, two_processes)
{
	struct st_cov d;
	int status, err;
	pid_t pid;

	if (_metadata->skip)
		return;
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int tfd = open(OKCOV_TARGET_PATH, O_RDWR);

		err = tfd < 0 ? 1 : remote_new(&d, NENT);
		if (!err)
			err = run_deferred(&d, tfd, KCOV_MODE_TRACE_PC,
					   OKCOV_DEFER_WORK);
		if (!err && !only_sources(&d, OKCOV_DEFER_WORK))
			err = 101;
		_exit(err);
	}
	ASSERT_EQ(0, run_deferred(&self->c, self->tfd, KCOV_MODE_TRACE_PC,
				  OKCOV_DEFER_TIMER));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_TRUE(only_sources(&self->c, OKCOV_DEFER_TIMER));
}

struct disabler {
	int fd;
	int ret;
};

/* Wait up to @tries x 50 ms for the work function's entry; its records. */
static size_t wait_work_fn(const struct st_cov *c, int tries)
{
	size_t hits = st_target_hits(c, "okcov_target_work_fn");

	for (; !hits && tries > 0; tries--) {
		usleep(50 * 1000);
		hits = st_target_hits(c, "okcov_target_work_fn");
	}
	return hits;
}

/*
 * OpenBSD regress "remote-close" and the drain rule: KIODISABLE (from
 * another thread) and close while a work item is in flight return at once,
 * and nothing lands in the buffer once KIODISABLE has returned.
 */
TEST_F(target, disable_in_flight)
{
	struct timespec t0, t1;
	uint64_t after;
	double ms;

	if (_metadata->skip)
		return;
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	st_reset(&self->c);
	ASSERT_EQ(0, st_defer(self->tfd, OKCOV_DEFER_WORK | OKCOV_DEFER_SLOW));
	usleep(100 * 1000);	/* the work function sleeps now */
	/*
	 * Positive control: the section in flight records (the work
	 * function's entry, before its sleep): a remote side that records
	 * nothing would pass every absence check below.
	 */
	ASSERT_LT(0, wait_work_fn(&self->c, 20)) {
		st_dump(&self->c, 50);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(0, st_in_thread(thread_disable, &self->c.fd));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	after = st_count(&self->c);
	ASSERT_EQ(0, st_defer_wait(self->tfd));
	ASSERT_EQ(after, st_count(&self->c));
	ASSERT_EQ(0, st_target_hits(&self->c, "okcov_target_in_work"));
	ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
	ASSERT_GT(OKCOV_TARGET_SLOW_MS, ms);
}

/*
 * The same, enabled again at once: the work function in flight, which
 * opened its section before KIODISABLE, still records nothing (each
 * enable has a sink of its own), while new work does (the control).
 */
TEST_F(target, reenable_in_flight)
{
	if (_metadata->skip)
		return;
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	st_reset(&self->c);
	ASSERT_EQ(0, st_defer(self->tfd, OKCOV_DEFER_WORK | OKCOV_DEFER_SLOW));
	ASSERT_LT(0, wait_work_fn(&self->c, 40));
	ASSERT_EQ(0, st_disable(self->c.fd));
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	st_reset(&self->c);
	ASSERT_EQ(0, st_defer_wait(self->tfd));
	ASSERT_EQ(0, st_disable(self->c.fd));
	ASSERT_EQ(0, st_target_hits(&self->c, "okcov_target_in_work")) {
		st_dump(&self->c, 50);
	}
	/* the control: work queued after the enable records */
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	st_reset(&self->c);
	ASSERT_EQ(0, st_defer(self->tfd, OKCOV_DEFER_WORK));
	ASSERT_EQ(0, st_defer_wait(self->tfd));
	ASSERT_EQ(0, st_disable(self->c.fd));
	ASSERT_LT(0, st_target_hits(&self->c, "okcov_target_in_work"));
}

TEST_F(target, close_in_flight)
{
	struct timespec t0, t1;
	struct st_cov d;
	double ms;

	if (_metadata->skip)
		return;
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(0, st_defer(self->tfd, OKCOV_DEFER_WORK | OKCOV_DEFER_SLOW |
			   OKCOV_DEFER_TIMER | OKCOV_DEFER_DELAYED |
			   OKCOV_DEFER_LATE));
	usleep(100 * 1000);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	st_free(&self->c);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
	ASSERT_GT(OKCOV_TARGET_SLOW_MS, ms);
	/* the work and the timers run after the free, into nothing */
	ASSERT_EQ(0, st_defer_wait(self->tfd));
	/* and the process is free to attach again, which works */
	ASSERT_EQ(0, remote_new(&d, NENT));
	ASSERT_EQ(0, run_deferred(&d, self->tfd, KCOV_MODE_TRACE_PC,
				  OKCOV_DEFER_WORK));
	ASSERT_TRUE(only_sources(&d, OKCOV_DEFER_WORK));
	st_free(&d);
}

/* ---- a stock kernel path: a BPF map is freed by a kworker ---- */

/*
 * close() of the last reference to a BPF map queues bpf_map_free_deferred
 * on system_unbound_wq (kernel/bpf/syscall.c), which calls the map's
 * free (array_map_free): both arrive remotely, the caller's bpf() and
 * close() do not.
 */
TEST_F(state, stock_bpf_map_free)
{
	int i, fd;

	ASSERT_EQ(0, ksyms_load());
	fd = st_bpf_array_map(4);
	if (fd < 0)
		SKIP(return, "bpf(BPF_MAP_CREATE): %s", strerror(errno));
	close(fd);
	ASSERT_EQ(0, remote_attach(self->c.fd, KCOV_REMOTE_COMMON));
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	st_reset(&self->c);
	for (i = 0; i < 5; i++) {
		fd = st_bpf_array_map(4);
		ASSERT_LE(0, fd);
		close(fd);
	}
	/* the kworker runs soon after; give it time under emulation */
	for (i = 0; i < 100 && !st_count_matching(&self->c, ksym_named,
						     "array_map_free"); i++)
		usleep(20 * 1000);
	ASSERT_EQ(0, st_disable(self->c.fd));
	ASSERT_LT(0, st_count_matching(&self->c, ksym_named,
					  "bpf_map_free_deferred")) {
		st_dump(&self->c, 100);
	}
	ASSERT_LT(0, st_count_matching(&self->c, ksym_named,
					  "array_map_free"));
	ASSERT_EQ(0, st_count_matching(&self->c, ksym_is_sys, NULL));
	ASSERT_EQ(0, st_count_matching(&self->c, ksym_named,
					  "map_create"));
}

/* ---- rmmod: refused while remote descriptors exist ---- */

FIXTURE(unload) {
};

FIXTURE_SETUP(unload)
{
}

FIXTURE_TEARDOWN(unload)
{
}

/*
 * Runs last: it reloads okcov, which the target module (linked against
 * okcov's hooks) pins, so it unloads the target first. A child keeps
 * queueing stock work into its own TRACE remote descriptor meanwhile.
 * Unloading and reloading reinstall the ftrace hook: seconds under TCG.
 */
TEST_F_TIMEOUT(unload, rmmod_with_remote, 240)
{
	const char *ko = st_okcov_ko();
	const char *args = st_okcov_args();
	struct st_cov c;
	int status, p[2];
	pid_t pid;
	char x;

	if (!ko)
		SKIP(return, "OKCOV_KO unset: no okcov.ko to reload");
	if (st_target_loaded_here) {
		ASSERT_EQ(0, st_kmod_remove_wait(OKCOV_TARGET_NAME, 50));
		st_target_loaded_here = false;
	}
	if (st_module_loaded(OKCOV_TARGET_NAME))
		SKIP(return, "okcov_target loaded by someone else pins okcov");

	ASSERT_EQ(0, remote_new(&c, NENT));
	ASSERT_EQ(-EAGAIN, st_kmod_remove("okcov"));		/* READY */
	ASSERT_EQ(0, st_enable(c.fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(-EAGAIN, st_kmod_remove("okcov"));		/* TRACE */
	st_free(&c);

	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct st_cov d;
		int fd;

		if (remote_new(&d, NENT) || st_enable(d.fd, KCOV_MODE_TRACE_PC))
			_exit(1);
		if (write(p[1], "x", 1) != 1)
			_exit(2);
		for (;;) {	/* work queued and freed until killed */
			fd = st_bpf_array_map(4);
			if (fd >= 0)
				close(fd);
			else
				usleep(1000);
		}
	}
	close(p[1]);
	ASSERT_EQ(1, read(p[0], &x, 1));
	close(p[0]);
	usleep(200 * 1000);
	ASSERT_EQ(-EAGAIN, st_kmod_remove("okcov"));
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, st_kmod_remove_wait("okcov", 50));
	ASSERT_EQ(0, st_kmod_insert(ko, args));
	/* the fresh module's remote side works */
	ASSERT_EQ(0, remote_new(&c, NENT));
	ASSERT_EQ(0, st_enable(c.fd, KCOV_MODE_TRACE_PC));
	st_free(&c);
}

/* ---- setup ---- */

static void prepare(void)
{
	char why[256];
	uint64_t hook;

	if (st_target_load(why, sizeof(why))) {
		if (st_target_ko()) {
			/* not a skip: the tests fail on the missing device */
			fprintf(stderr, "# %s\n", why);
			return;
		}
		snprintf(no_target, sizeof(no_target), "%s", why);
		snprintf(no_sancov, sizeof(no_sancov), "%s", why);
		return;
	}
	if (ksyms_load() == 0) {
		hook = ksyms_addr("__sanitizer_cov_trace_pc", NULL);
		if (hook && !ksyms_addr("__sanitizer_cov_trace_pc", "okcov"))
			snprintf(no_sancov, sizeof(no_sancov),
				 "CONFIG_KCOV kernel: __sanitizer_cov_* belong to the kernel");
	}
}

OKCOV_HARNESS_MAIN(prepare);
