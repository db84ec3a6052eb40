// SPDX-License-Identifier: GPL-2.0
/*
 * Deep copies' notrace callees (deep_callees=1, x86_64): a deep copy's
 * calls of a function ftrace has no record of go to a copy of it, which
 * records its entry and its leaders.
 *
 *  on:    KIODEEP of okcov_target_callee() (traced); for values taking
 *         each path, its call of okcov_target_hidden() (notrace) records
 *         hidden's entry once and only leaders of okcov's plan of it, its
 *         tail call of okcov_target_inner() (notrace) inner's entry for
 *         an odd value and nothing for an even one, its call of
 *         okcov_target_noinstr() (the noinstr text) and of
 *         okcov_target_nmi_like() (a name okcov refuses) nothing; every
 *         call returns what the original does; two runs of one value
 *         record the same; the copies file counts two callees made, one
 *         refused for its section and one by name;
 *  off:   with deep_callees=0 the same calls record the caller's leaders
 *         (the positive control) and nothing in the callees;
 *  wrapper: okcov_target_wrapper() has no leader, and calls hidden:
 *         KIODEEP with KIO_DEEP_FUNCTIONS copies it (installing no
 *         leader) with deep_callees, and hidden's entry and leaders
 *         arrive; without, KIODEEP does nothing and nothing arrives;
 *  keyed: a jump label switched in hidden withdraws the caller's copy
 *         with hidden's (stale): the next call takes the new branch and
 *         records no leader; a KIODEEP copies both again, and records
 *         (without jump labels the key is a load: the copies stay, and
 *         take the new branch);
 *  gone:  the test-target module unloads while a descriptor's copies of
 *         okcov_target_callee() and its callees are published beside a
 *         core kernel function's: the caller's copy is unpublished, and
 *         through twice the watch's full round (which compares copies
 *         with their originals) no copy is found changed, no complaint
 *         (their text is freed: the watch must not read it); the core
 *         function's copy still records (the positive control: the
 *         watch kept running); the module loads again.
 *
 * Needs the test-target module, x86_64 and debugfs; reloads okcov first
 * (a fresh pool).
 */
#include <limits.h>

#include "kselftest_harness.h"
#include "okcov_test.h"
#include "kmod_util.h"
#include "okcov_target.h"

#define NENT		(64 << 10)
#define MAXL		64

static char skip_reason[256];

struct fn {
	uint64_t start, end;
	__u64 plan[MAXL];
	int nplan;
};

FIXTURE(callee) {
	struct st_cov c;
	int tfd;
	struct okcov_target_funcs funcs;
	struct fn caller, hidden, inner, noinstr, nmi;
	char copies[8], callees[8], sites[8];
};

static void fn_init(struct __test_metadata *_metadata, struct fn *f,
		    const char *name, bool leaders)
{
	f->start = ksyms_addr(name, OKCOV_TARGET_NAME);
	ASSERT_NE(0, f->start) {
		TH_LOG("%s not in /proc/kallsyms", name);
	}
	f->nplan = st_plan_leaders(f->start, f->plan, MAXL, &f->end);
	ASSERT_LE(leaders ? 1 : 0, f->nplan) {
		TH_LOG("%s: no leaders in okcov's plan (%d)", name, f->nplan);
	}
	ASSERT_LT(f->start, f->end);
}

FIXTURE_SETUP(callee)
{
	self->copies[0] = self->callees[0] = self->sites[0] = 0;
	self->c.fd = -1;
	self->c.buf = MAP_FAILED;
	self->tfd = -1;
	if (skip_reason[0])
		SKIP(return, "%s", skip_reason);
	ASSERT_EQ(0, ksyms_load());
	ASSERT_EQ(0, st_new(&self->c, NENT));
	self->tfd = open(OKCOV_TARGET_PATH, O_RDWR);
	ASSERT_LE(0, self->tfd);
	ASSERT_EQ(0, st_ret(ioctl(self->tfd, OKCOV_TARGET_FUNCS,
				  &self->funcs)));
	ASSERT_EQ(0, st_param_swap("deep_copies", "1", self->copies,
				   sizeof(self->copies)));
	ASSERT_EQ(0, st_param_swap("deep_callees", "1", self->callees,
				   sizeof(self->callees)));
	/* Entries and leaders only: no call site in the functions. */
	ASSERT_EQ(0, st_param_swap("call_sites", "0", self->sites,
				   sizeof(self->sites)));
	fn_init(_metadata, &self->caller, "okcov_target_callee", true);
	ASSERT_EQ(self->funcs.callee, self->caller.start);
	fn_init(_metadata, &self->hidden, "okcov_target_hidden", true);
	fn_init(_metadata, &self->inner, "okcov_target_inner", true);
	fn_init(_metadata, &self->noinstr, "okcov_target_noinstr", false);
	fn_init(_metadata, &self->nmi, "okcov_target_nmi_like", false);
	ASSERT_EQ(0, st_ret(ioctl(self->tfd, OKCOV_TARGET_KEY_SET, 0UL)));
}

FIXTURE_TEARDOWN(callee)
{
	if (self->tfd >= 0)
		ioctl(self->tfd, OKCOV_TARGET_KEY_SET, 0UL);
	st_param_restore("call_sites", self->sites);
	st_param_restore("deep_callees", self->callees);
	st_param_restore("deep_copies", self->copies);
	st_free(&self->c);
	if (self->tfd >= 0)
		close(self->tfd);
}

static long inner_ref(uint64_t v)
{
	/* okcov_target_odd(v - 101) is v - 100 */
	return v > 100 ? v - 100 : v + 7;
}

/* What okcov_target_callee(@v) returns, with the key @keyed. */
static long callee_ref(uint64_t v, bool keyed)
{
	long r;

	if (keyed)
		r = v + 1000;
	else if (v & 1)
		r = inner_ref(3 * v);
	else
		r = v + 5;
	if (v & 2)
		r += (v ^ 0x55) + 11;
	if (v & 4)
		r += v & 8 ? v * 5 : v + 3;
	return r;
}

/* KIODEEP of the caller's plan leaders: 0, or -1. */
static int deep_caller(int kd, const struct fn *f, struct kio_deep *d)
{
	memset(d, 0, sizeof(*d));
	d->addrs = (uintptr_t)f->plan;
	d->count = f->nplan;
	return st_ioctl(kd, KIODEEP, d);
}

/* What one run recorded in @f: PCs in its plan, its entry, others. */
struct hits {
	int plan, entry, other;
	uint64_t seq[MAXL];
	int n;
};

static void hits_in(const struct st_cov *c, const struct fn *f,
		    struct hits *h)
{
	uint64_t i, n = st_pcs(c), pc;
	int j;

	memset(h, 0, sizeof(*h));
	for (i = 0; i < n; i++) {
		pc = c->buf[i + 1];
		if (pc < f->start || pc >= f->end)
			continue;
		if (h->n < MAXL)
			h->seq[h->n++] = pc;
		/* sym+0, or past the endbr64 */
		if (pc <= f->start + 4) {
			h->entry++;
			continue;
		}
		for (j = 0; j < f->nplan && f->plan[j] != pc; j++)
			;
		if (j < f->nplan)
			h->plan++;
		else
			h->other++;
	}
}

/* The PCs of @h in @f that are neither its entry nor a plan leader. */
static void log_other(struct __test_metadata *_metadata, const struct fn *f,
		      const struct hits *h)
{
	char b[160];
	int i, j;

	for (i = 0; i < h->n; i++) {
		for (j = 0; j < f->nplan && f->plan[j] != h->seq[i]; j++)
			;
		if (j == f->nplan && h->seq[i] > f->start + 4)
			TH_LOG("not a leader of okcov's plan: %s",
			       ksyms_format(h->seq[i], b, sizeof(b)));
	}
}

/* okcov_target_callee(@v) traced: its result, or LONG_MIN. */
static long run(struct _test_data_callee *self, uint64_t v)
{
	long r;

	if (st_enable(self->c.fd, KCOV_MODE_TRACE_PC))
		return LONG_MIN;
	st_reset(&self->c);
	r = ioctl(self->tfd, OKCOV_TARGET_CALLEE_RUN, (unsigned long)v);
	if (st_disable(self->c.fd))
		return LONG_MIN;
	return r;
}

/* The callee's line of the copies file: "callee NAME ERRNO COUNT". */
static long callee_refused(const char *why)
{
	char line[128], k[64];
	long v, r = -1;
	int e;
	FILE *f = fopen(ST_COPIES_FILE, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "callee %63s %d %ld", k, &e, &v) == 3 &&
		    !strcmp(k, why))
			r = v;
	fclose(f);
	return r;
}

TEST_F(callee, on)
{
	static const uint64_t vals[] = { 0, 1, 2, 3, 12, 200, 201 };
	struct hits hc, hh, hi, hn, hm, again;
	long made, section, internal, r;
	struct kio_deep d;
	unsigned int k;
	int kd;

	if (_metadata->skip)
		return;

	made = st_copies_stat("callees");
	section = callee_refused("section");
	internal = callee_refused("internal");
	ASSERT_LE(0, made);
	ASSERT_LE(0, section);
	ASSERT_LE(0, internal);
	kd = st_open();
	ASSERT_LE(0, kd);
	ASSERT_EQ(0, deep_caller(kd, &self->caller, &d));
	EXPECT_EQ(self->caller.nplan, d.installed);
	EXPECT_EQ(0, st_kprobes_listed("okcov_target", NULL));
	for (k = 0; k < ARRAY_SIZE(vals); k++) {
		r = run(self, vals[k]);
		EXPECT_EQ(callee_ref(vals[k], false), r);
		hits_in(&self->c, &self->caller, &hc);
		hits_in(&self->c, &self->hidden, &hh);
		hits_in(&self->c, &self->inner, &hi);
		hits_in(&self->c, &self->noinstr, &hn);
		hits_in(&self->c, &self->nmi, &hm);
		EXPECT_LT(0, hc.plan);
		EXPECT_EQ(1, hh.entry);
		EXPECT_LT(0, hh.plan);
		EXPECT_EQ(0, hh.other) {
			log_other(_metadata, &self->hidden, &hh);
		}
		/* inner's leaders: one branch, more where KASAN checks */
		EXPECT_EQ(vals[k] & 1 ? 1 : 0, hi.entry);
		EXPECT_EQ(vals[k] & 1 ? 1 : 0, hi.plan > 0);
		EXPECT_EQ(0, hi.other) {
			log_other(_metadata, &self->inner, &hi);
		}
		EXPECT_EQ(0, hn.n);
		EXPECT_EQ(0, hm.n);
		TH_LOG("value %llu: caller %d, hidden %d+%d, inner %d+%d",
		       (unsigned long long)vals[k], hc.plan, hh.entry, hh.plan,
		       hi.entry, hi.plan);
	}
	/* The same value, the same records. */
	ASSERT_EQ(callee_ref(201, false), run(self, 201));
	hits_in(&self->c, &self->hidden, &again);
	EXPECT_EQ(hh.n, again.n);
	EXPECT_EQ(0, memcmp(hh.seq, again.seq, hh.n * sizeof(hh.seq[0])));
	EXPECT_EQ(made + 2, st_copies_stat("callees"));
	EXPECT_EQ(section + 1, callee_refused("section"));
	/* and what the kernel's instrumentation calls, where it does */
	EXPECT_LE(internal + 1, callee_refused("internal"));
	close(kd);
	EXPECT_EQ(0, st_copies_stat("published"));
}

TEST_F(callee, off)
{
	struct hits hc, hh, hi;
	struct kio_deep d;
	int kd, v;

	if (_metadata->skip)
		return;

	ASSERT_EQ(0, st_param_set("deep_callees", "0"));
	kd = st_open();
	ASSERT_LE(0, kd);
	ASSERT_EQ(0, deep_caller(kd, &self->caller, &d));
	for (v = 0; v < 4; v++) {
		EXPECT_EQ(callee_ref(v, false), run(self, v));
		hits_in(&self->c, &self->caller, &hc);
		hits_in(&self->c, &self->hidden, &hh);
		hits_in(&self->c, &self->inner, &hi);
		EXPECT_LT(0, hc.plan);
		EXPECT_EQ(0, hh.n);
		EXPECT_EQ(0, hi.n);
	}
	close(kd);
}

/* okcov_target_wrapper(@v) traced, @deep_callees: hidden's records. */
static void wrapper_run(struct __test_metadata *_metadata,
			struct _test_data_callee *self, bool callees,
			struct hits *hh)
{
	struct kio_deep d;
	uint64_t end;
	__u64 fn, none[1];
	int kd;
	long r;

	fn = ksyms_addr("okcov_target_wrapper", OKCOV_TARGET_NAME);
	ASSERT_NE(0, fn);
	/* No leader past its entry: nothing for kprobes, nor for copies. */
	ASSERT_EQ(0, st_plan_leaders(fn, none, 1, &end));
	ASSERT_EQ(0, st_param_set("deep_callees", callees ? "1" : "0"));
	kd = st_open();
	ASSERT_LE(0, kd);
	memset(&d, 0, sizeof(d));
	d.addrs = (uintptr_t)&fn;
	d.count = 1;
	d.flags = KIO_DEEP_FUNCTIONS | KIO_DEEP_PARTIAL;
	ASSERT_EQ(0, st_ioctl(kd, KIODEEP, &d));
	EXPECT_EQ(0, d.installed);
	EXPECT_EQ(0, d.refused);
	EXPECT_EQ(callees ? 1 : 0, st_copies_stat("published"));
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	st_reset(&self->c);
	r = ioctl(self->tfd, OKCOV_TARGET_WRAPPER_RUN, 1UL);
	ASSERT_EQ(0, st_disable(self->c.fd));
	EXPECT_EQ(callee_ref(3, false) - ((3 ^ 0x55) + 11), r);
	hits_in(&self->c, &self->hidden, hh);
	close(kd);
	EXPECT_EQ(0, st_copies_stat("published"));
}

TEST_F(callee, wrapper)
{
	struct hits hh;

	if (_metadata->skip)
		return;

	wrapper_run(_metadata, self, false, &hh);
	EXPECT_EQ(0, hh.n);
	wrapper_run(_metadata, self, true, &hh);
	EXPECT_EQ(1, hh.entry);
	EXPECT_LT(0, hh.plan);
	EXPECT_EQ(0, hh.other);
}

TEST_F(callee, keyed)
{
	struct hits hc, hh;
	struct kio_deep d;
	long stale;
	int kd, tries;

	if (_metadata->skip)
		return;

	kd = st_open();
	ASSERT_LE(0, kd);
	ASSERT_EQ(0, deep_caller(kd, &self->caller, &d));
	ASSERT_EQ(callee_ref(1, false), run(self, 1));
	hits_in(&self->c, &self->hidden, &hh);
	ASSERT_LT(0, hh.plan);
	stale = st_copies_stat("stale");
	ASSERT_EQ(0, st_ret(ioctl(self->tfd, OKCOV_TARGET_KEY_SET, 1UL)));
	/* At once, the new branch. */
	EXPECT_EQ(callee_ref(1, true), run(self, 1));
	hits_in(&self->c, &self->caller, &hc);
	hits_in(&self->c, &self->hidden, &hh);
	for (tries = 0; tries < 100 && st_copies_stat("stale") == stale;
	     tries++)
		usleep(50 * 1000);
	if (st_copies_stat("stale") == stale) {
		/* A kernel without jump labels (debug-7): a load, copied. */
		EXPECT_LT(0, hc.plan);
		EXPECT_EQ(1, hh.entry);
		EXPECT_EQ(1, st_copies_stat("published"));
		TH_LOG("the key is a load here (no jump labels): the copies stay");
		close(kd);
		return;
	}
	/* The caller's copy went with hidden's: that call ran the original. */
	EXPECT_EQ(0, hc.plan);
	EXPECT_EQ(0, hh.n);
	EXPECT_EQ(callee_ref(5, true), run(self, 5));
	hits_in(&self->c, &self->hidden, &hh);
	EXPECT_EQ(0, hh.n);
	EXPECT_EQ(0, st_copies_stat("published"));
	/* Copied again from the new text, and recorded. */
	ASSERT_EQ(0, deep_caller(kd, &self->caller, &d));
	EXPECT_EQ(callee_ref(1, true), run(self, 1));
	hits_in(&self->c, &self->caller, &hc);
	hits_in(&self->c, &self->hidden, &hh);
	EXPECT_LT(0, hc.plan);
	EXPECT_EQ(1, hh.entry);
	close(kd);
}

/* A traced core kernel function read() reaches, with leaders. */
static uint64_t core_fn(__u64 *l, int max, int *n)
{
	static const char *const names[] = { "ksys_read", "vfs_read" };
	uint64_t a, end;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		a = ksyms_addr(names[i], NULL);
		*n = a ? st_plan_leaders(a, l, max, &end) : 0;
		if (*n > 0)
			return a;
	}
	return 0;
}

TEST_F_TIMEOUT(callee, gone, 300)
{
	const char *ko = st_target_ko();
	__u64 l[2 * MAXL];
	struct kio_deep d;
	struct hits hh;
	long stale, published;
	int kd, n, i, got = 0, fd;
	char buf[8];

	if (_metadata->skip)
		return;

	if (!ko)
		SKIP(return, "OKCOV_TARGET_KO unset: cannot load the target again");
	memcpy(l, self->caller.plan, self->caller.nplan * sizeof(l[0]));
	ASSERT_NE(0, core_fn(l + self->caller.nplan, MAXL, &n));
	kd = st_open();
	ASSERT_LE(0, kd);
	memset(&d, 0, sizeof(d));
	d.addrs = (uintptr_t)l;
	d.count = self->caller.nplan + n;
	ASSERT_EQ(0, st_ioctl(kd, KIODEEP, &d));
	ASSERT_EQ(callee_ref(1, false), run(self, 1));
	hits_in(&self->c, &self->hidden, &hh);
	ASSERT_LT(0, hh.plan);		/* hidden's copy is in use */
	published = st_copies_stat("published");
	ASSERT_LE(2, published);
	stale = st_copies_stat("stale");

	close(self->tfd);
	self->tfd = -1;
	ASSERT_EQ(0, st_kmod_remove_wait(OKCOV_TARGET_NAME, 50));
	EXPECT_EQ(published - 1, st_copies_stat("published"));
	/* OKCOV_COPY_WATCH_ALL_MS is a second: two full rounds and more. */
	usleep(2500 * 1000);
	EXPECT_EQ(stale, st_copies_stat("stale"));

	fd = open("/proc/self/stat", O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	st_reset(&self->c);
	ASSERT_EQ((ssize_t)sizeof(buf), read(fd, buf, sizeof(buf)));
	ASSERT_EQ(0, st_disable(self->c.fd));
	close(fd);
	for (i = 0; i < n; i++)
		got += st_recorded(&self->c, l[self->caller.nplan + i]);
	EXPECT_LT(0, got);
	TH_LOG("after the unload: %d of the core function's %d leaders recorded, %ld copies published",
	       got, n, st_copies_stat("published"));

	ASSERT_EQ(0, st_kmod_insert(ko, ""));
	close(kd);
	EXPECT_EQ(0, st_copies_stat("published"));
}

static void prepare(void)
{
	int fd;

#ifndef __x86_64__
	snprintf(skip_reason, sizeof(skip_reason),
		 "deep copies are x86_64's");
	return;
#endif
	/* A fresh pool: the copies of earlier tests stay until unload. */
	fd = st_fresh_target(skip_reason, sizeof(skip_reason));
	if (fd < 0)
		return;
	close(fd);
	if (!skip_reason[0] &&
	    access("/sys/module/okcov/parameters/deep_callees", W_OK))
		snprintf(skip_reason, sizeof(skip_reason),
			 "okcov has no deep_callees parameter");
	if (!skip_reason[0] && (access(ST_PLAN_FILE, W_OK) ||
				access(ST_COPIES_FILE, R_OK) ||
				access(ST_KPROBES_LIST, R_OK)))
		snprintf(skip_reason, sizeof(skip_reason),
			 "no okcov debugfs files or kprobes list");
}

OKCOV_HARNESS_MAIN(prepare);
