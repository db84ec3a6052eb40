// SPDX-License-Identifier: GPL-2.0
/*
 * Remote coverage left on the way a fuzzer leaves it (issue 17): a remote
 * descriptor in TRACE for the whole test, while
 *
 *  storm:  the test-target module queues work on system_bh_wq from an
 *          hrtimer every 100 us (WQ_BH, 6.9+: the work runs in softirq, on
 *          top of whatever the CPU was doing, okcov's ioctls included), the
 *          process keeps owner tags alive (its work items and timers), its
 *          threads enable, disable, close while enabled and exit on their
 *          own descriptors, and the remote descriptor is disabled and
 *          re-enabled. It must finish, with no complaint in the kernel log,
 *          and remote coverage must still arrive at the end. On a kernel
 *          whose probes take a lock in softirq that task context holds
 *          with bottom halves on, a CPU deadlocks on itself within seconds
 *          (RCU stall, soft lockup): the VM runner fails the run.
 *  churn:  thousands of tagged timers deleted and work items cancelled
 *          before they ran (no tracepoint tells okcov): their tags must be
 *          reclaimed, nothing dropped, and coverage must still arrive.
 *
 * Needs the test-target module (OKCOV_TARGET_KO, loaded here through
 * libkmod if needed); the storm SKIPs where the kernel has no BH
 * workqueues (the target's ioctl says EOPNOTSUPP).
 */
#include "kselftest_harness.h"
#include "okcov_test.h"
#include "okcov_stats.h"
#include "kmod_util.h"
#include "okcov_target.h"

#include <stdatomic.h>
#include <time.h>

#define NENT		(64 << 10)

/* The storm's churn: fixed, so a run's work does not depend on speed. */
#define BH_ROUNDS	40	/* of BH_THREADS threads each */
#define BH_THREADS	4
#define BH_CYCLES	12	/* enable/disable cycles per thread */
#define BH_RCYCLES	150	/* remote KIODISABLE/KIOENABLE cycles */
#define BH_TFDS		4	/* target files: one timer, one work each */
#define BH_THREAD_NENT	256

/*
 * The churn: CHURN_ROUNDS x CHURN_N timers, and as many work items, and
 * more rounds (up to CHURN_MAX_ROUNDS) until okcov says it reclaimed tags:
 * a pool larger than 16000 tags may only reclaim when it runs low.
 */
#define CHURN_ROUNDS		4
#define CHURN_MAX_ROUNDS	16
#define CHURN_N			2000
/*
 * Between rounds: okcov reclaims a cancelled work item's tag once it is
 * 2 s old (OKCOV_TAG_MIN_AGE, module/remote.c), so a round waits for the
 * last one's tags to age; churning faster than that runs the 4096-tag
 * pool dry, and what cannot be tagged is counted in remote_dropped.
 */
#define CHURN_PAUSE_US		2500000

static char no_target[256];	/* why the tests cannot run */

static int remote_attach(int fd)
{
	struct kio_remote_attach ra = { .subsystem = KCOV_REMOTE_COMMON };

	return st_ioctl(fd, KIOREMOTEATTACH, &ra);
}

/* A READY descriptor made the process's remote descriptor, TRACE_PC. */
static int remote_trace(struct st_cov *c, uint64_t n)
{
	int err = st_new(c, n);

	if (!err)
		err = remote_attach(c->fd);
	if (!err)
		err = st_enable(c->fd, KCOV_MODE_TRACE_PC);
	return err;
}

/*
 * The positive control: work and a timer deferred now, while the remote
 * descriptor is TRACE, arrive in its buffer (0), or an errno / -1.
 */
static int remote_arrives(struct __test_metadata *_metadata,
			  struct st_cov *c, int tfd)
{
	int err;

	st_reset(c);
	err = st_defer(tfd, OKCOV_DEFER_WORK | OKCOV_DEFER_TIMER);
	if (!err)
		err = st_defer_wait(tfd);
	if (err)
		return err;
	if (!st_target_hits(c, "okcov_target_in_work") ||
	    !st_target_hits(c, "okcov_target_in_timer")) {
		st_dump(c, 60);
		return -1;
	}
	return 0;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* ---- the BH storm ---- */

struct storm {
	struct st_cov r;		/* the remote descriptor */
	int tfds[BH_TFDS];
	atomic_bool stop;		/* for the tagger */
	atomic_uint errors;
	atomic_uint cycles, dying, exits, rcycles, tags;
	pthread_mutex_t msg_lock;
	char msg[256];			/* the first error */
};

static void storm_fail(struct storm *s, const char *what, int err)
{
	if (atomic_fetch_add(&s->errors, 1))
		return;
	pthread_mutex_lock(&s->msg_lock);
	snprintf(s->msg, sizeof(s->msg), "%s: %d (%s)", what, err,
		 err > 0 ? strerror(err) : "unexpected result");
	pthread_mutex_unlock(&s->msg_lock);
}

#define STORM_CHECK(s, what, call) ({				\
	int __e = (call);					\
	if (__e)						\
		storm_fail(s, what, __e);			\
	__e;							\
})

/* How a churn thread ends. */
enum bh_end {
	BH_END_CLEAN,		/* every descriptor closed, READY */
	BH_END_DYING,		/* closed while enabled, then exits */
	BH_END_TRACE,		/* exits while enabled: exit detaches */
	BH_END_KINDS,
};

struct churner {
	struct storm *s;
	enum bh_end end;
	int trace_fd;		/* BH_END_TRACE: closed by the joiner */
	pid_t tid;
};

/* One open..close cycle; leaves it TRACE if @keep. 0 or the errno. */
static int cycle(struct storm *s, struct st_cov *c, bool keep)
{
	int err = STORM_CHECK(s, "thread st_new", st_new(c, BH_THREAD_NENT));

	if (err)
		return err;
	err = STORM_CHECK(s, "thread KIOENABLE",
			  st_enable(c->fd, KCOV_MODE_TRACE_PC));
	if (err)
		return err;
	sys_getppid_n(1);
	if (keep)
		return 0;
	err = STORM_CHECK(s, "thread KIODISABLE", st_disable(c->fd));
	st_free(c);
	return err;
}

static void *churn_thread(void *arg)
{
	struct churner *ch = arg;
	struct storm *s = ch->s;
	struct st_cov c;
	int i;

	ch->tid = gettid();
	for (i = 0; i < BH_CYCLES; i++) {
		if (cycle(s, &c, false)) {
			st_free(&c);
			return NULL;
		}
		atomic_fetch_add(&s->cycles, 1);
	}
	if (ch->end == BH_END_CLEAN)
		return NULL;
	if (cycle(s, &c, true)) {
		st_free(&c);
		return NULL;
	}
	if (ch->end == BH_END_DYING) {
		struct st_cov d;
		int err;

		st_free(&c);	/* TRACE -> DYING; the exit frees it */
		/* a DYING descriptor is still attached: EBUSY */
		if (!STORM_CHECK(s, "st_new", st_new(&d, BH_THREAD_NENT))) {
			err = st_enable(d.fd, KCOV_MODE_TRACE_PC);
			if (err != EBUSY)
				storm_fail(s, "KIOENABLE while DYING", err);
		}
		st_free(&d);
		atomic_fetch_add(&s->dying, 1);
	} else {
		munmap((void *)c.buf, st_map_len(c.n));
		ch->trace_fd = c.fd;
		atomic_fetch_add(&s->exits, 1);
	}
	return NULL;
}

/* BH_ROUNDS rounds of BH_THREADS threads, each joined until gone. */
static void *churn_rounds(void *arg)
{
	struct churner ch[BH_THREADS];
	pthread_t th[BH_THREADS];
	struct storm *s = arg;
	int round, i;

	for (round = 0; round < BH_ROUNDS; round++) {
		for (i = 0; i < BH_THREADS; i++) {
			ch[i] = (struct churner){
				.s = s, .trace_fd = -1,
				.end = (enum bh_end)((round + i) % BH_END_KINDS),
			};
			if (pthread_create(&th[i], NULL, churn_thread, &ch[i])) {
				storm_fail(s, "pthread_create", EAGAIN);
				return NULL;
			}
		}
		for (i = 0; i < BH_THREADS; i++) {
			if (st_join(th[i], &ch[i].tid))
				storm_fail(s, "join", -1);
			if (ch[i].trace_fd < 0)
				continue;
			/* READY since its thread exited: enable it here */
			if (!STORM_CHECK(s, "KIOENABLE after the exit",
					 st_enable(ch[i].trace_fd,
						   KCOV_MODE_TRACE_PC)))
				STORM_CHECK(s, "KIODISABLE after the exit",
					    st_disable(ch[i].trace_fd));
			close(ch[i].trace_fd);
		}
	}
	return NULL;
}

/* The remote descriptor: disabled and re-enabled, TRACE in between. */
static void *remote_cycler(void *arg)
{
	struct storm *s = arg;
	int i;

	for (i = 0; i < BH_RCYCLES; i++) {
		usleep(20 * 1000);
		if (STORM_CHECK(s, "remote KIODISABLE", st_disable(s->r.fd)))
			return NULL;
		if (STORM_CHECK(s, "remote KIOENABLE",
				st_enable(s->r.fd, KCOV_MODE_TRACE_PC)))
			return NULL;
		atomic_fetch_add(&s->rcycles, 1);
	}
	return NULL;
}

/*
 * Owner tags alive all the time: each target file's timer, 1 s ahead, and
 * its work item, queued again and again on the process's behalf.
 */
static void *tagger(void *arg)
{
	struct storm *s = arg;
	int i;

	while (!atomic_load(&s->stop)) {
		for (i = 0; i < BH_TFDS; i++) {
			if (STORM_CHECK(s, "OKCOV_TARGET_DEFER",
					st_defer(s->tfds[i], OKCOV_DEFER_WORK |
					      OKCOV_DEFER_TIMER |
					      OKCOV_DEFER_LATE)))
				return NULL;
			atomic_fetch_add(&s->tags, 1);
		}
		usleep(5 * 1000);
	}
	return NULL;
}

FIXTURE(bh) {
	struct storm s;
	struct st_stats base;
};

FIXTURE_SETUP(bh)
{
	int i;

	memset(&self->s, 0, sizeof(self->s));
	self->s.r.fd = -1;
	self->s.r.buf = MAP_FAILED;
	for (i = 0; i < BH_TFDS; i++)
		self->s.tfds[i] = -1;
	pthread_mutex_init(&self->s.msg_lock, NULL);
	if (no_target[0])
		SKIP(return, "%s", no_target);
	ASSERT_EQ(0, ksyms_load());
	self->base = st_stats_now();
	ASSERT_LE(0, self->base.descriptors);
	for (i = 0; i < BH_TFDS; i++) {
		self->s.tfds[i] = open(OKCOV_TARGET_PATH, O_RDWR);
		ASSERT_LE(0, self->s.tfds[i]);
	}
}

FIXTURE_TEARDOWN(bh)
{
	int i;

	st_free(&self->s.r);
	for (i = 0; i < BH_TFDS; i++)
		if (self->s.tfds[i] >= 0)
			close(self->s.tfds[i]);
}

/* The storm ioctl's own rules, and a storm that runs at all. */
TEST_F(bh, storm_ioctl)
{
	int t = self->s.tfds[0];
	long runs;

	if (_metadata->skip)
		return;
	if (ioctl(t, OKCOV_TARGET_BH_STORM, 1) && errno == EOPNOTSUPP)
		SKIP(return, "no BH workqueues (system_bh_wq) on this kernel");
	ASSERT_EQ(EBUSY, st_ret(ioctl(t, OKCOV_TARGET_BH_STORM, 1)));
	ASSERT_EQ(EBUSY, st_ret(ioctl(self->s.tfds[1], OKCOV_TARGET_BH_STORM,
				      1)));
	ASSERT_EQ(EINVAL, st_ret(ioctl(t, OKCOV_TARGET_BH_STORM, 2)));
	usleep(200 * 1000);
	runs = ioctl(t, OKCOV_TARGET_BH_STORM, 0);
	ASSERT_LT(0, runs);
	ASSERT_EQ(0, ioctl(t, OKCOV_TARGET_BH_STORM, 0));	/* stopped */
	/* closing the starter stops it: another file may start one */
	ASSERT_EQ(0, ioctl(t, OKCOV_TARGET_BH_STORM, 1));
	close(t);
	self->s.tfds[0] = -1;
	ASSERT_EQ(0, ioctl(self->s.tfds[1], OKCOV_TARGET_BH_STORM, 1));
	usleep(200 * 1000);
	ASSERT_LT(0, ioctl(self->s.tfds[1], OKCOV_TARGET_BH_STORM, 0));
}

/*
 * The storm itself: every operation gives its exact result, the storm
 * ran, remote coverage still arrives at the end, and nothing leaks.
 */
TEST_F(bh, churn_under_storm)
{
	struct storm *s = &self->s;
	pthread_t churn, cyc, tag;
	struct st_stats now;
	double t0;
	long runs;

	if (_metadata->skip)
		return;
	if (ioctl(s->tfds[0], OKCOV_TARGET_BH_STORM, 1)) {
		if (errno == EOPNOTSUPP)
			SKIP(return, "no BH workqueues (system_bh_wq) on this kernel");
		ASSERT_EQ(0, errno);
	}
	ASSERT_EQ(0, remote_trace(&s->r, NENT));
	/* positive control first: the remote descriptor records at all */
	ASSERT_EQ(0, remote_arrives(_metadata, &s->r, s->tfds[1]));

	t0 = now_s();
	ASSERT_EQ(0, pthread_create(&tag, NULL, tagger, s));
	ASSERT_EQ(0, pthread_create(&cyc, NULL, remote_cycler, s));
	ASSERT_EQ(0, pthread_create(&churn, NULL, churn_rounds, s));
	ASSERT_EQ(0, pthread_join(churn, NULL));
	ASSERT_EQ(0, pthread_join(cyc, NULL));
	atomic_store(&s->stop, true);
	ASSERT_EQ(0, pthread_join(tag, NULL));
	runs = ioctl(s->tfds[0], OKCOV_TARGET_BH_STORM, 0);
	fprintf(stderr,
		"# %.1f s: %u cycles, %u dying, %u exits while enabled, %u remote cycles, %u defers, %ld BH runs\n",
		now_s() - t0, atomic_load(&s->cycles), atomic_load(&s->dying),
		atomic_load(&s->exits), atomic_load(&s->rcycles),
		atomic_load(&s->tags), runs);
	ASSERT_EQ(0, atomic_load(&s->errors)) {
		fprintf(stderr, "# first error: %s\n", s->msg);
	}
	ASSERT_EQ(BH_ROUNDS * BH_THREADS * BH_CYCLES, atomic_load(&s->cycles));
	ASSERT_EQ(BH_RCYCLES, atomic_load(&s->rcycles));
	ASSERT_LT(0, runs);	/* the storm did run */

	/* still recording, and BH work never recorded (nobody's anyway) */
	ASSERT_EQ(0, st_defer_wait(s->tfds[1]));
	ASSERT_EQ(0, remote_arrives(_metadata, &s->r, s->tfds[1]));
	ASSERT_EQ(0, st_target_hits(&s->r, "okcov_target_storm_fn"));
	ASSERT_EQ(0, st_target_hits(&s->r, "okcov_target_in_bh"));

	/* every descriptor and entry of the churn is gone */
	st_free(&s->r);
	ASSERT_TRUE(st_stats_settle(&self->base, &now, 5000)) {
		fprintf(stderr, "# descriptors %lld -> %lld, entries %lld -> %lld\n",
			self->base.descriptors, now.descriptors,
			self->base.entries, now.entries);
	}
}

/* ---- tag churn: deleted timers, cancelled work ---- */

/*
 * Each armed timer and queued work item gets an owner tag; deleted or
 * cancelled, it fires nothing okcov sees. The tags must come back (the
 * count of reclaimed ones grows), no event may be dropped, and coverage
 * deferred afterwards must arrive. Today's 512-tag pool fills: every
 * later event is dropped, and the final work and timer record nothing.
 */
TEST_F(bh, churn_tags_reclaimed)
{
	long long dropped0, reclaimed0, dropped, reclaimed;
	int t = self->s.tfds[0], i, arrived;
	struct st_cov *r = &self->s.r;
	long ran0;

	if (_metadata->skip)
		return;
	dropped0 = st_stat("remote_dropped");
	reclaimed0 = st_stat("remote_reclaimed");
	ASSERT_LE(0, dropped0);
	ASSERT_LE(0, reclaimed0);
	ran0 = ioctl(t, OKCOV_TARGET_CHURN_RAN, 0);
	ASSERT_LE(0, ran0);
	ASSERT_EQ(EINVAL, st_ret(ioctl(t, OKCOV_TARGET_TIMER_CHURN, 0)));
	ASSERT_EQ(EINVAL, st_ret(ioctl(t, OKCOV_TARGET_WORK_CHURN,
				       OKCOV_TARGET_CHURN_MAX + 1)));

	ASSERT_EQ(0, remote_trace(r, NENT));
	ASSERT_EQ(0, remote_arrives(_metadata, r, self->s.tfds[1]));
	for (i = 0; i < CHURN_ROUNDS || (i < CHURN_MAX_ROUNDS &&
			st_stat("remote_reclaimed") == reclaimed0); i++) {
		ASSERT_EQ(CHURN_N, ioctl(t, OKCOV_TARGET_TIMER_CHURN, CHURN_N));
		ASSERT_EQ(CHURN_N, ioctl(t, OKCOV_TARGET_WORK_CHURN, CHURN_N));
		usleep(CHURN_PAUSE_US);
	}
	/* none of them ran: no tracepoint consumed their tags */
	ASSERT_EQ(ran0, ioctl(t, OKCOV_TARGET_CHURN_RAN, 0));
	arrived = remote_arrives(_metadata, r, self->s.tfds[1]);
	dropped = st_stat("remote_dropped");
	reclaimed = st_stat("remote_reclaimed");
	fprintf(stderr, "# %d rounds of %d timers and %d work items: remote_dropped %lld -> %lld, remote_reclaimed %lld -> %lld\n",
		i, CHURN_N, CHURN_N, dropped0, dropped, reclaimed0, reclaimed);
	ASSERT_EQ(0, arrived);
	ASSERT_EQ(dropped0, dropped);
	ASSERT_LT(reclaimed0, reclaimed);
}

/* ---- setup ---- */

static void prepare(void)
{
	st_target_load(no_target, sizeof(no_target));
}

OKCOV_HARNESS_MAIN(prepare);
