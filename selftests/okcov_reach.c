// SPDX-License-Identifier: GPL-2.0
/*
 * Deep on reach (deep_reach=1, x86_64): a function a traced thread
 * reaches gets block coverage in the background, with no KIODEEP.
 *
 *  on:        a thread enabled with deep_reach set calls
 *             okcov_target_deep() until its leaders arrive (the install
 *             is the background's: a timeout, not an order); then a run
 *             with 1 records exactly then and join, a run with 0 exactly
 *             else and join, each recorded PC inside the function is a
 *             leader of okcov's plan of it (symbolized through
 *             /proc/kallsyms), through a copy (no kprobe on it); the
 *             counters say queued and installed; closing the descriptor
 *             takes the copies away and descriptors are back at baseline;
 *  off:       with deep_reach unset the same calls record no leader and
 *             nothing is noted (reach_queued stays);
 *  param_off: deep_reach=0 while the descriptor is open takes the
 *             installs away at once: the next run records no leader;
 *  capped:    with deep_reach_max=1 one function is noted (the first the
 *             thread reaches, before the target), the rest is counted as
 *             capped, and the target's leaders never arrive;
 *  ahead:     with deep_reach_ahead=1, once okcov_target_ahead() has its
 *             leaders (called with an even value: its callee not called)
 *             and the installs settled, the first call ever of its
 *             callee records the callee's leaders (copied a call ahead,
 *             counted in reach_ahead, then reach_ahead_hit);
 *  ahead_off: with deep_reach_ahead=0 the same first call records none
 *             of the callee's leaders (noted only then).
 *
 * Needs the test-target module, x86_64 and debugfs; reloads okcov first
 * (a fresh pool, no deep user left by an earlier test).
 */
#include <limits.h>

#include "kselftest_harness.h"
#include "okcov_test.h"
#include "okcov_stats.h"
#include "kmod_util.h"
#include "okcov_target.h"

#define NENT		(64 << 10)
#define MAXL		64
/* How long the background install may take under TCG. */
#define WAIT_MS		60000
#define STEP_MS		100

static char skip_reason[256];

static const char *const leader_name[] = { "else", "then", "join" };

#define B(x)	(1U << OKCOV_DEEP_##x)

FIXTURE(reach) {
	struct st_cov c;
	int tfd;
	struct okcov_target_deep t;
	uint64_t fn, end;
	__u64 plan[MAXL];
	int nplan;
	char reach[8], copies[8], max[16], ahead[8];
};

FIXTURE_SETUP(reach)
{
	self->reach[0] = self->copies[0] = self->max[0] = self->ahead[0] = 0;
	self->c.fd = -1;
	self->c.buf = MAP_FAILED;
	self->tfd = -1;
	if (skip_reason[0])
		SKIP(return, "%s", skip_reason);
	ASSERT_EQ(0, st_param_swap("deep_copies", "1", self->copies,
				   sizeof(self->copies)));
	ASSERT_EQ(0, st_param_swap("deep_reach", "0", self->reach,
				   sizeof(self->reach)));
	ASSERT_EQ(0, st_param_swap("deep_reach_max", "16384", self->max,
				   sizeof(self->max)));
	ASSERT_EQ(0, ksyms_load());
	self->tfd = open(OKCOV_TARGET_PATH, O_RDWR);
	ASSERT_LE(0, self->tfd);
	ASSERT_EQ(0, st_ret(ioctl(self->tfd, OKCOV_TARGET_DEEP_LEADERS,
				  &self->t)));
	self->fn = ksyms_addr("okcov_target_deep", OKCOV_TARGET_NAME);
	ASSERT_NE(0, self->fn);
	self->nplan = st_plan_leaders(self->fn, self->plan, MAXL, &self->end);
	ASSERT_LE(OKCOV_DEEP_NLEADERS, self->nplan);
	ASSERT_LT(self->fn, self->end);
}

FIXTURE_TEARDOWN(reach)
{
	st_free(&self->c);
	st_param_restore("deep_reach", self->reach);
	st_param_restore("deep_copies", self->copies);
	st_param_restore("deep_reach_max", self->max);
	st_param_restore("deep_reach_ahead", self->ahead);
	if (self->tfd >= 0)
		close(self->tfd);
}

/* Is @pc a leader of okcov's plan of okcov_target_deep()? */
static bool in_plan(const struct _test_data_reach *self, uint64_t pc)
{
	int j;

	for (j = 0; j < self->nplan; j++)
		if (self->plan[j] == pc)
			return true;
	return false;
}

/*
 * One run of okcov_target_deep(@v) recorded by the fixture's descriptor
 * (enabled, then disabled): which of its leaders arrived, as OKCOV_DEEP_*
 * bits; -1 on an error. *@stray: PCs inside the function, past its
 * fentry, that are not leaders of okcov's plan.
 */
static int run(struct _test_data_reach *self, int v, int *stray)
{
	uint64_t i, n, pc;
	unsigned int got = 0;
	int k;

	if (st_enable(self->c.fd, KCOV_MODE_TRACE_PC))
		return -1;
	st_reset(&self->c);
	if (ioctl(self->tfd, OKCOV_TARGET_DEEP_RUN, (unsigned long)v) !=
	    (v == 1 ? 4 : 3))
		return -1;
	if (st_disable(self->c.fd))
		return -1;
	for (k = 0; k < OKCOV_DEEP_NLEADERS; k++)
		if (st_recorded(&self->c, self->t.leaders[k]))
			got |= 1U << k;
	*stray = 0;
	n = st_pcs(&self->c);
	for (i = 0; i < n; i++) {
		pc = self->c.buf[i + 1];
		if (pc > self->fn + 8 && pc < self->end && !in_plan(self, pc))
			(*stray)++;
	}
	return got;
}

/* Exactly the leaders @want arrive for @v, nothing else in the function. */
static void run_check(struct __test_metadata *_metadata,
		      struct _test_data_reach *self, int v, unsigned int want)
{
	char b[160];
	int got, stray, i;

	got = run(self, v, &stray);
	ASSERT_LE(0, got);
	EXPECT_EQ(0, stray);
	for (i = 0; i < OKCOV_DEEP_NLEADERS; i++) {
		EXPECT_EQ(!!(want & (1U << i)), !!(got & (1U << i))) {
			TH_LOG("value %d: %s leader %s %s", v, leader_name[i],
			       ksyms_format(self->t.leaders[i], b, sizeof(b)),
			       want & (1U << i) ? "missing" : "recorded");
		}
	}
}

/*
 * Call the target until a run with 1 records its leaders, for up to
 * @ms; how long it took, or -1.
 */
static int wait_leaders(struct _test_data_reach *self, int ms)
{
	int t, got, stray;

	for (t = 0; t < ms; t += STEP_MS) {
		got = run(self, 1, &stray);
		if (got < 0)
			return -1;
		if (got == (B(THEN) | B(JOIN)))
			return t;
		usleep(STEP_MS * 1000);
	}
	return -1;
}

/* The leaders, each a plan leader, symbolized into okcov_target_deep. */
static void check_plan(struct __test_metadata *_metadata,
		       struct _test_data_reach *self)
{
	const struct ksym *s;
	size_t nalias;
	int i;

	for (i = 0; i < OKCOV_DEEP_NLEADERS; i++) {
		s = ksyms_lookup(self->t.leaders[i], &nalias);
		ASSERT_NE(NULL, s);
		EXPECT_STREQ("okcov_target_deep", s->name);
		EXPECT_TRUE(in_plan(self, self->t.leaders[i])) {
			TH_LOG("%s leader not in okcov's plan", leader_name[i]);
		}
	}
}

/* Twenty runs, 100 ms apart: none records a leader or a stray PC. */
static void runs_record_nothing(struct __test_metadata *_metadata,
				struct _test_data_reach *self)
{
	int i, got, stray;

	for (i = 0; i < 20; i++) {
		got = run(self, 1, &stray);
		ASSERT_EQ(0, got);
		ASSERT_EQ(0, stray);
		usleep(STEP_MS * 1000);
	}
}

/*
 * Wait (up to @ms) until counter @name is past @old: the kthread counts
 * a batch once it is published, after the calls may already record.
 */
static long long stat_past(const char *name, long long old, int ms)
{
	long long v;
	int t;

	for (t = 0;; t += STEP_MS) {
		v = st_stat(name);
		if (v > old || t >= ms)
			return v;
		usleep(STEP_MS * 1000);
	}
}

TEST_F(reach, on)
{
	long long queued, installed;
	struct st_stats base, now;
	int ms;

	if (_metadata->skip)
		return;
	check_plan(_metadata, self);
	base = st_stats_now();
	queued = st_stat("reach_queued");
	installed = st_stat("reach_installed");
	ASSERT_LE(0, queued);
	ASSERT_EQ(0, st_param_set("deep_reach", "1"));
	ASSERT_EQ(0, st_new(&self->c, NENT));
	ms = wait_leaders(self, WAIT_MS);
	ASSERT_LE(0, ms) {
		TH_LOG("no leader of okcov_target_deep within %d ms", WAIT_MS);
	}
	EXPECT_LT(queued, st_stat("reach_queued"));
	EXPECT_LT(installed, stat_past("reach_installed", installed, 10000));
	TH_LOG("leaders after %d ms; %lld functions queued, %lld installed",
	       ms, st_stat("reach_queued") - queued,
	       st_stat("reach_installed") - installed);
	run_check(_metadata, self, 1, B(THEN) | B(JOIN));
	run_check(_metadata, self, 0, B(ELSE) | B(JOIN));
	/* Through a copy: no kprobe on the function. */
	EXPECT_EQ(0, st_kprobes_listed("okcov_target_deep", NULL));
	EXPECT_LT(0, st_copies_stat("published"));
	/* The last reach user's close takes the installs along. */
	st_free(&self->c);
	EXPECT_EQ(0, st_copies_stat("published"));
	EXPECT_EQ(0, st_kprobes_listed("okcov_target", NULL));
	EXPECT_TRUE(st_stats_settle(&base, &now, 5000)) {
		TH_LOG("descriptors %lld (was %lld), entries %lld (was %lld)",
		       now.descriptors, base.descriptors, now.entries,
		       base.entries);
	}
}

TEST_F(reach, off)
{
	long long queued;

	if (_metadata->skip)
		return;
	queued = st_stat("reach_queued");
	ASSERT_LE(0, queued);
	ASSERT_EQ(0, st_new(&self->c, NENT));
	runs_record_nothing(_metadata, self);
	EXPECT_EQ(queued, st_stat("reach_queued"));
	EXPECT_EQ(0, st_copies_stat("published"));
}

TEST_F(reach, param_off)
{
	int got, stray;

	if (_metadata->skip)
		return;
	ASSERT_EQ(0, st_param_set("deep_reach", "1"));
	ASSERT_EQ(0, st_new(&self->c, NENT));
	ASSERT_LE(0, wait_leaders(self, WAIT_MS));
	ASSERT_EQ(0, st_param_set("deep_reach", "0"));
	EXPECT_EQ(0, st_copies_stat("published"));
	got = run(self, 1, &stray);
	EXPECT_EQ(0, got);
	EXPECT_EQ(0, stray);
}

TEST_F(reach, capped)
{
	long long queued, capped;

	if (_metadata->skip)
		return;
	queued = st_stat("reach_queued");
	capped = st_stat("reach_capped");
	ASSERT_LE(0, capped);
	ASSERT_EQ(0, st_param_set("deep_reach_max", "1"));
	ASSERT_EQ(0, st_param_set("deep_reach", "1"));
	ASSERT_EQ(0, st_new(&self->c, NENT));
	runs_record_nothing(_metadata, self);
	/* One function noted, by whichever CPU's note came first. */
	EXPECT_EQ(queued + 1, st_stat("reach_queued"));
	EXPECT_LT(capped, st_stat("reach_capped"));
}

/* The leaders of okcov's plan of @fn (past its fentry) recorded, or -1. */
static int plan_hits(struct st_cov *c, uint64_t fn)
{
	__u64 plan[MAXL];
	uint64_t end;
	int n, j, hits = 0;

	n = st_plan_leaders(fn, plan, MAXL, &end);
	if (n <= 0)
		return -1;
	for (j = 0; j < n; j++)
		if (plan[j] > fn + 8 && st_recorded(c, plan[j]))
			hits++;
	return hits;
}

/* One recorded okcov_target_ahead(@v): its own and its callee's leaders. */
static int ahead_run(struct _test_data_reach *self, int v, uint64_t caller,
		     uint64_t callee, int *own, int *theirs)
{
	if (st_enable(self->c.fd, KCOV_MODE_TRACE_PC))
		return -1;
	st_reset(&self->c);
	if (ioctl(self->tfd, OKCOV_TARGET_AHEAD_RUN, (unsigned long)v) < 0)
		return -1;
	if (st_disable(self->c.fd))
		return -1;
	*own = plan_hits(&self->c, caller);
	*theirs = plan_hits(&self->c, callee);
	return *own < 0 || *theirs < 0 ? -1 : 0;
}

/*
 * The caller's leaders arrive (even values: the callee never runs), the
 * installs settle (no count moves for a second), then the callee's first
 * call: how many of its leaders it recorded, or -1.
 */
static int ahead_first_call(struct __test_metadata *_metadata,
			    struct _test_data_reach *self, const char *ahead)
{
	uint64_t caller, callee;
	long long done, last = -1;
	int t, own = 0, theirs = 0, still = 0;

	caller = ksyms_addr("okcov_target_ahead", OKCOV_TARGET_NAME);
	callee = ksyms_addr("okcov_target_ahead_callee", OKCOV_TARGET_NAME);
	if (!caller || !callee) {
		TH_LOG("okcov_target_ahead or its callee not in kallsyms");
		return -1;
	}
	if (st_param_swap("deep_reach_ahead", ahead, self->ahead,
			  sizeof(self->ahead)) ||
	    st_param_set("deep_reach", "1") || st_new(&self->c, NENT))
		return -1;
	for (t = 0; t < WAIT_MS && !own; t += STEP_MS) {
		if (ahead_run(self, 0, caller, callee, &own, &theirs)) {
			TH_LOG("a run failed, or a plan has no leader (caller %d, callee %d)",
			       own, theirs);
			return -1;
		}
		if (theirs) {
			TH_LOG("the callee ran for an even value");
			return -1;
		}
		usleep(STEP_MS * 1000);
	}
	if (!own) {
		TH_LOG("no leader of okcov_target_ahead within %d ms", WAIT_MS);
		return -1;
	}
	for (t = 0; t < WAIT_MS && still < 10; t += STEP_MS) {
		done = st_stat("reach_installed") + st_stat("reach_refused");
		still = done == last ? still + 1 : 0;
		last = done;
		usleep(STEP_MS * 1000);
	}
	if (ahead_run(self, 1, caller, callee, &own, &theirs)) {
		TH_LOG("the callee's first run failed");
		return -1;
	}
	TH_LOG("deep_reach_ahead=%s: the callee's first call recorded %d leaders; reach_ahead %lld, reach_ahead_hit %lld, installed %lld",
	       ahead, theirs, st_stat("reach_ahead"),
	       st_stat("reach_ahead_hit"), st_stat("reach_installed"));
	return theirs;
}

TEST_F(reach, ahead)
{
	long long ahead, hit;

	if (_metadata->skip)
		return;
	if (access("/sys/module/okcov/parameters/deep_reach_ahead", W_OK))
		SKIP(return, "okcov has no deep_reach_ahead parameter");
	ahead = st_stat("reach_ahead");
	hit = st_stat("reach_ahead_hit");
	EXPECT_LT(0, ahead_first_call(_metadata, self, "1"));
	EXPECT_LT(ahead, st_stat("reach_ahead"));
	EXPECT_LT(hit, st_stat("reach_ahead_hit"));
}

TEST_F(reach, ahead_off)
{
	long long ahead;

	if (_metadata->skip)
		return;
	if (access("/sys/module/okcov/parameters/deep_reach_ahead", W_OK))
		SKIP(return, "okcov has no deep_reach_ahead parameter");
	ahead = st_stat("reach_ahead");
	EXPECT_EQ(0, ahead_first_call(_metadata, self, "0"));
	EXPECT_EQ(ahead, st_stat("reach_ahead"));
}

static void prepare(void)
{
	int fd;

#ifndef __x86_64__
	snprintf(skip_reason, sizeof(skip_reason),
		 "deep on reach is x86_64's");
	return;
#endif
	/* A fresh pool: the copies of earlier tests stay until unload. */
	fd = st_fresh_target(skip_reason, sizeof(skip_reason));
	if (fd < 0)
		return;
	close(fd);
	if (!skip_reason[0] &&
	    access("/sys/module/okcov/parameters/deep_reach", W_OK))
		snprintf(skip_reason, sizeof(skip_reason),
			 "okcov has no deep_reach parameter");
	if (!skip_reason[0] && (access(ST_PLAN_FILE, W_OK) ||
				access(ST_COPIES_FILE, R_OK) ||
				access(ST_KPROBES_LIST, R_OK)))
		snprintf(skip_reason, sizeof(skip_reason),
			 "no okcov debugfs files or kprobes list");
}

OKCOV_HARNESS_MAIN(prepare);
