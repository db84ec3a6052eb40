// SPDX-License-Identifier: GPL-2.0
/*
 * The process's remote descriptor (KIOREMOTEATTACH): attached on fresh or
 * private descriptors with the errno of okcov(4) checked exactly, enabled,
 * disabled and closed by any thread, while some threads keep deferring
 * work to a kworker (a BPF map's free, kernel/bpf/syscall.c) and, with
 * the test-target module, its work, timers, tag churn (timers deleted and
 * work cancelled before they run) and BH storm (work on system_bh_wq,
 * run in softirq, from an hrtimer every 100 us).
 */
#include "stress.h"
#include "okcov_target.h"

#include <sys/syscall.h>

void remote_init(struct remote *r)
{
	pthread_mutex_init(&r->lock, NULL);
	r->fd = -1;
	r->state = S_NONE;
	r->stale = false;
}

/* Drain and stop: no thread of the process runs an operation. */
void remote_close(struct remote *r)
{
	pthread_mutex_lock(&r->lock);
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	r->state = S_NONE;
	r->stale = false;
	pthread_mutex_unlock(&r->lock);
}

/*
 * Whether the process may still have a remote descriptor the kernel
 * knows of although r->fd is closed: a fork child forked before the
 * close may hold it until it is reaped. Called under r->lock.
 */
static bool remote_stale(struct ctx *c, struct remote *r)
{
	if (r->stale && !atomic_load(&c->pool->children))
		r->stale = false;
	return r->stale;
}

static bool any_desc(struct pdesc *d)
{
	return true;
}

static int pick_subsystem(struct ctx *c)
{
	static const int bad[] = { 1, 2, -1, 7, INT_MAX, INT_MIN };

	return chance(c, 15) ? bad[rn(c, ARRAY_SIZE(bad))] :
	       KCOV_REMOTE_COMMON;
}

/*
 * A private descriptor where the attach must fail: not READY, or READY
 * with a bad subsystem, or while the process has a remote descriptor
 * (a success would turn a thread's descriptor into the process's).
 */
static void rattach_private(struct ctx *c, struct pdesc *d, bool busy,
			    bool stale)
{
	struct kio_remote_attach ra = { pick_subsystem(c), (int)rnd(c) };
	bool bad = chance(c, 5);
	void *arg = bad ? bad_ptr(c, sizeof(ra)) : &ra;
	unsigned int mask;

	if (!bad && d->state == S_READY && ra.subsystem == KCOV_REMOTE_COMMON &&
	    (!busy || stale))
		ra.subsystem = 1;
	if (bad)
		mask = M(EFAULT);
	else if (d->state != S_READY)
		mask = M(EBUSY);
	else if (ra.subsystem != KCOV_REMOTE_COMMON)
		mask = M(EINVAL);
	else
		mask = M(EBUSY);	/* the process has one */
	expect(c->tag, OP_RATTACH, ioc(d->fds[0], KIOREMOTEATTACH, arg), mask,
	       "private fd %d state %d, subsystem %d, remote fd %d, arg %p",
	       d->fds[0], d->state, ra.subsystem, c->pool->r.fd, arg);
}

/*
 * Attach a fresh descriptor (its own open file, so no other thread or
 * child holds it); @valid: a READY one, subsystem COMMON, a good pointer.
 * Called under r->lock.
 */
static void rattach_fresh(struct ctx *c, struct remote *r, bool valid)
{
	struct kio_remote_attach ra = { pick_subsystem(c), (int)rnd(c) };
	unsigned long n = 1 + rn(c, 64 << 10);
	bool bad = !valid && chance(c, 5), sized = valid || chance(c, 90);
	bool busy = r->fd >= 0, stale = !busy && remote_stale(c, r);
	void *arg = bad ? bad_ptr(c, sizeof(ra)) : &ra;
	unsigned int mask;
	int fd, err;

	if (valid)
		ra.subsystem = KCOV_REMOTE_COMMON;
	fd = dev_open(c, true);
	if (fd < 0)
		return;
	if (n > max_entries())
		n = max_entries();
	if (sized) {
		err = ioc(fd, KIOSETBUFSIZE, &n);
		expect(c->tag, OP_SETBUFSIZE, err, M(OK) | M(ENOMEM),
		       "remote: fresh fd %d, n %lu", fd, n);
		sized = !err;
	}
	err = ioc(fd, KIOREMOTEATTACH, arg);
	if (bad)
		mask = M(EFAULT);
	else if (!sized)
		mask = M(EBUSY);
	else if (ra.subsystem != KCOV_REMOTE_COMMON)
		mask = M(EINVAL);
	else if (busy)
		mask = M(EBUSY);
	else if (stale)
		mask = M(OK) | M(EBUSY);
	else
		mask = M(OK);
	if (expect(c->tag, OP_RATTACH, err, mask,
		   "fresh fd %d %s, subsystem %d, remote fd %d%s, arg %p", fd,
		   sized ? "READY" : "NONE", ra.subsystem, r->fd,
		   stale ? " (an old one maybe held by a fork child)" : "",
		   arg) && !err) {
		r->fd = fd;
		r->state = S_READY;
		r->stale = false;
	} else {
		close(fd);
	}
}

/* KIOENABLE on the remote descriptor. Called under r->lock. */
static void renable(struct ctx *c, struct remote *r)
{
	bool legacy = chance(c, 20), bad = !legacy && chance(c, 5);
	int mode = legacy ? KCOV_MODE_TRACE_PC : pick_mode(c);
	void *arg = bad ? bad_ptr(c, 4) : &mode;
	unsigned int mask;
	int err;

	att_refresh(c);
	err = ioc(r->fd, legacy ? KIOENABLE_LEGACY : KIOENABLE, arg);
	if (bad)
		mask = M(EFAULT);
	else if (c->att_id || r->state != S_READY)
		mask = M(EBUSY);
	else if (!mode_ok(mode))
		mask = M(EINVAL);
	else
		mask = M(OK);
	if (expect(c->tag, OP_RENABLE, err, mask,
		   "remote fd %d state %d, mode %d%s, thread attached to %lu, arg %p",
		   r->fd, r->state, mode, legacy ? " (legacy)" : "",
		   c->att_id, arg) && !err)
		r->state = S_TRACE;	/* attaches no thread */
}

void op_rattach(struct ctx *c)
{
	struct remote *r = &c->pool->r;
	struct pdesc *d = NULL;
	bool busy, stale;

	pthread_mutex_lock(&r->lock);
	busy = r->fd >= 0;
	stale = !busy && remote_stale(c, r);
	if (chance(c, 40))
		d = pd_pick_if(c, any_desc);
	if (d)
		rattach_private(c, d, busy, stale);
	else
		rattach_fresh(c, r, false);
	pthread_mutex_unlock(&r->lock);
}

/* With no remote descriptor, attach one first: sequences get to TRACE. */
void op_renable(struct ctx *c)
{
	struct remote *r = &c->pool->r;

	pthread_mutex_lock(&r->lock);
	if (r->fd < 0)
		rattach_fresh(c, r, true);
	if (r->fd >= 0)
		renable(c, r);
	pthread_mutex_unlock(&r->lock);
}

void op_rdisable(struct ctx *c)
{
	struct remote *r = &c->pool->r;
	int err;

	pthread_mutex_lock(&r->lock);
	if (r->fd < 0)
		goto out;
	err = ioc(r->fd, KIODISABLE, NULL);
	if (expect(c->tag, OP_RDISABLE, err,
		   r->state == S_TRACE ? M(OK) : M(EBUSY),
		   "remote fd %d state %d", r->fd, r->state) && !err)
		r->state = S_READY;
out:
	pthread_mutex_unlock(&r->lock);
}

/* Mostly while TRACE: the kernel stops it and frees it at once. */
void op_rclose(struct ctx *c)
{
	struct remote *r = &c->pool->r;

	pthread_mutex_lock(&r->lock);
	if (r->fd < 0 || (r->state != S_TRACE && chance(c, 70)))
		goto out;
	if (r->state == S_TRACE)
		atomic_fetch_add(&shm->rclose_trace, 1);
	expect(c->tag, OP_RCLOSE, close(r->fd) ? errno : 0, M(OK),
	       "remote fd %d state %d", r->fd, r->state);
	r->fd = -1;
	r->state = S_NONE;
	r->stale = atomic_load(&c->pool->children) > 0;
out:
	pthread_mutex_unlock(&r->lock);
}

/*
 * Work this process defers, whatever the remote descriptor's state: the
 * close of a BPF map's last reference queues bpf_map_free_deferred on
 * system_unbound_wq (okcov_remote.c's stock test checks it is recorded).
 */
void op_rdefer(struct ctx *c)
{
	struct remote *r = &c->pool->r;
	unsigned int entries;
	int fd, i, n = 1 + rn(c, 3);

	if (chance(c, 30))
		op_renable(c);
	if (!shm->bpf)
		return;
	/* a racy peek, for the report only */
	if (r->state == S_TRACE)
		atomic_fetch_add(&shm->rdefer_trace, 1);
	for (i = 0; i < n; i++) {
		entries = 1 + rn(c, 64);
		fd = st_bpf_array_map(entries);
		if (!expect(c->tag, OP_RDEFER, fd < 0 ? errno : 0, M(OK),
			    "bpf(BPF_MAP_CREATE, array of %u)", entries) ||
		    fd < 0)
			return;
		close(fd);
	}
}

/* Whether bpf() works here (not on a kernel without CONFIG_BPF_SYSCALL). */
bool bpf_probe(void)
{
	int fd = st_bpf_array_map(1);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

void target_close(struct ctx *c)
{
	if (c->tfd < 0)
		return;
	/* waits for a slow work item; cancels what has not run */
	expect(c->tag, OP_TDEFER, close(c->tfd) ? errno : 0, M(OK),
	       "close(%s fd %d)", OKCOV_TARGET_PATH, c->tfd);
	c->tfd = -1;
}

/*
 * The instrumented target module's work item, timer and delayed work,
 * maybe slow or late, queued on this thread's open file: they record into
 * the process's remote descriptor if it is TRACE by the time they run,
 * and may still be pending when it is disabled or closed.
 */
/* This thread's /dev/okcov_target file, opened if needed: whether it has one. */
bool target_open(struct ctx *c, enum op op)
{
	if (!atomic_load(&shm->target))
		return false;
	if (c->tfd < 0) {
		c->tfd = open(OKCOV_TARGET_PATH, O_RDWR | O_CLOEXEC);
		if (!expect(c->tag, op, c->tfd < 0 ? errno : 0, M(OK),
			    "open(%s)", OKCOV_TARGET_PATH) || c->tfd < 0) {
			c->tfd = -1;
			return false;
		}
	}
	return true;
}

void op_tdefer(struct ctx *c)
{
	unsigned long how = rn(c, 32);
	bool bad = chance(c, 5);

	if (!target_open(c, OP_TDEFER))
		return;
	if (bad)
		how |= 1UL << (6 + rn(c, 26));	/* past OKCOV_DEFER_DEEP */
	if (chance(c, 30))
		op_renable(c);
	if (c->pool->r.state == S_TRACE)	/* racy peek, for the report */
		atomic_fetch_add(&shm->rdefer_trace, 1);
	expect(c->tag, OP_TDEFER,
	       ioctl(c->tfd, OKCOV_TARGET_DEFER, how) ? errno : 0,
	       bad ? M(EINVAL) : M(OK), "OKCOV_TARGET_DEFER %#lx", how);
}

/*
 * Tags that no tracepoint consumes: timers armed and deleted, work queued
 * behind a gate and cancelled, all on this thread's behalf (so tagged when
 * the remote descriptor is TRACE). Each returns how many were pending.
 */
void op_tchurn(struct ctx *c)
{
	bool work = chance(c, 50);
	unsigned long n = 1 + rn(c, 64);
	long ret;

	if (!target_open(c, OP_TCHURN))
		return;
	if (chance(c, 30))
		op_renable(c);
	ret = ioctl(c->tfd, work ? OKCOV_TARGET_WORK_CHURN :
			    OKCOV_TARGET_TIMER_CHURN, n);
	if (expect(c->tag, OP_TCHURN,
		   ret < 0 ? errno : ret == (long)n ? 0 : EOVERFLOW,
		   M(OK) | M(ENOMEM), "OKCOV_TARGET_%s_CHURN %lu: %ld",
		   work ? "WORK" : "TIMER", n, ret) && ret > 0 &&
	    c->pool->r.state == S_TRACE)	/* racy peek, for the report */
		atomic_fetch_add(&shm->churned, ret);
}

/*
 * The target's BH storm (one per machine, stopped when its starter's file
 * closes): mostly started, sometimes stopped, by any thread. Without BH
 * workqueues the ioctl says EOPNOTSUPP.
 */
void op_bhstorm(struct ctx *c)
{
	bool start = chance(c, 75);
	long ret;

	if (!target_open(c, OP_BHSTORM))
		return;
	ret = ioctl(c->tfd, OKCOV_TARGET_BH_STORM, start ? 1 : 0);
	if (!shm->bh_wq) {
		expect(c->tag, OP_BHSTORM, ret < 0 ? errno : 0, M(EOPNOTSUPP),
		       "OKCOV_TARGET_BH_STORM %d on a kernel without BH workqueues",
		       start);
		return;
	}
	if (expect(c->tag, OP_BHSTORM, ret < 0 ? errno : 0,
		   start ? M(OK) | M(EBUSY) : M(OK), "OKCOV_TARGET_BH_STORM %d",
		   start) && !start)
		atomic_fetch_add(&shm->bh_runs, ret);
}

/* BH workqueues (system_bh_wq, WQ_BH) came in Linux 6.9. */
bool bh_wq_probe(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return false;
	return major > 6 || (major == 6 && minor >= 9);
}
