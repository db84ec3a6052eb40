// SPDX-License-Identifier: GPL-2.0
/*
 * Call-site records (module parameter call_sites, default on): with each
 * traced function entry, the buffer gets the call site in the caller first
 * (the return address, right after the call instruction), then the entry.
 *
 *  target:  the test-target module's okcov_target_caller() calls
 *           okcov_target_entity_callee(), which reports its own return
 *           address: that exact address must come right before the
 *           callee's entry, and the caller's entry must come right after
 *           a call site in the target's ioctl handler. The target is
 *           loaded after okcov's function set was made (its functions
 *           join as the module comes), and the callee's name matches a
 *           glob of the default set, which leaves modules alone;
 *  off:     call_sites=0 (read at KIOENABLE): the same call records the
 *           callee's entry (the positive control) and no call site;
 *  pairs:   getppid's records are all (call site, entry) pairs: an entry
 *           at a function's fentry site, a call site inside a function,
 *           getppid's own among them (__x64_sys_getppid, or
 *           __do_sys_getppid where x64_sys_call() inlines the wrapper),
 *           called from the syscall dispatcher.
 *
 * Needs the test-target module (OKCOV_TARGET_KO, loaded here through
 * libkmod if needed) for the first two.
 */
#include "kselftest_harness.h"
#include "okcov_test.h"
#include "kmod_util.h"
#include "okcov_target.h"

#define NENT		(64 << 10)
#define CALLEE		"okcov_target_entity_callee"
#define CALLER		"okcov_target_caller"

static char skip_reason[256];

typedef bool (*ksym_pred)(const struct ksym *s, const void *ctx);

/* An entry (st_is_entry()) of a function satisfying @pred (any if NULL). */
static bool is_entry_of(uint64_t pc, ksym_pred pred, const void *ctx)
{
	return st_is_entry(pc) && (!pred || ksyms_pc_matches(pc, pred, ctx));
}

/* A PC past a function's fentry site, e.g. a call site; as above. */
static bool is_inside(uint64_t pc, ksym_pred pred, const void *ctx)
{
	const struct ksym *s = ksyms_lookup(pc, NULL);

	return s && pc - s->addr > 4 &&
	       (!pred || ksyms_pc_matches(pc, pred, ctx));
}

/* Index of the first record equal to @pc, or -1. */
static long find_pc(const struct st_cov *c, uint64_t pc)
{
	uint64_t i, n = st_pcs(c);

	for (i = 0; i < n; i++)
		if (c->buf[i + 1] == pc)
			return i;
	return -1;
}

/* Index of the first entry record of the target's function @fn, or -1. */
static long find_entry(const struct st_cov *c, const char *fn)
{
	uint64_t i, n = st_pcs(c);

	for (i = 0; i < n; i++)
		if (is_entry_of(c->buf[i + 1], st_in_target, fn))
			return i;
	return -1;
}

/* Set call_sites (read at the next KIOENABLE). */
static int set_call_sites(int on)
{
	return st_param_set("call_sites", on ? "1" : "0");
}

/* One OKCOV_TARGET_CALL recorded by @c; the callee's return address. */
static int record_call(struct st_cov *c, int tfd, uint64_t *ra)
{
	int err;

	*ra = 0;
	err = st_enable(c->fd, KCOV_MODE_TRACE_PC);
	if (err)
		return err;
	st_reset(c);
	err = st_ret(ioctl(tfd, OKCOV_TARGET_CALL, ra));
	st_disable(c->fd);
	return err;
}

FIXTURE(callsite) {
	struct st_cov c;
	int tfd;
};

FIXTURE_SETUP(callsite)
{
	self->c.fd = -1;
	self->c.buf = MAP_FAILED;
	self->tfd = -1;
	ASSERT_EQ(0, ksyms_load());
	ASSERT_EQ(0, st_new(&self->c, NENT));
	ASSERT_EQ(0, set_call_sites(1));
}

FIXTURE_TEARDOWN(callsite)
{
	set_call_sites(1);
	st_free(&self->c);
	if (self->tfd >= 0)
		close(self->tfd);
}

TEST_F(callsite, target)
{
	char b1[160], b2[160];
	uint64_t ra;
	long i, j;

	if (skip_reason[0])
		SKIP(return, "%s", skip_reason);
	self->tfd = open(OKCOV_TARGET_PATH, O_RDWR);
	ASSERT_LE(0, self->tfd);
	ASSERT_EQ(0, record_call(&self->c, self->tfd, &ra));
	ASSERT_TRUE(is_inside(ra, st_in_target, CALLER)) {
		TH_LOG("return address %s", ksyms_format(ra, b1, sizeof(b1)));
	}
	i = find_pc(&self->c, ra);
	ASSERT_LE(0, i) {
		TH_LOG("%s not recorded (%llu records)",
		       ksyms_format(ra, b1, sizeof(b1)),
		       (unsigned long long)st_pcs(&self->c));
		st_dump(&self->c, 64);
	}
	ASSERT_LT(i + 1, (long)st_pcs(&self->c));
	ASSERT_TRUE(is_entry_of(self->c.buf[i + 2], st_in_target, CALLEE)) {
		TH_LOG("after the call site: %s",
		       ksyms_format(self->c.buf[i + 2], b1, sizeof(b1)));
	}
	/* The caller's own entry, called from the ioctl handler. */
	j = find_entry(&self->c, CALLER);
	ASSERT_LT(0, j);
	ASSERT_LT(j, i);
	ASSERT_TRUE(is_inside(self->c.buf[j], st_in_target,
			      "okcov_target_ioctl")) {
		TH_LOG("before %s: %s",
		       ksyms_format(self->c.buf[j + 1], b1, sizeof(b1)),
		       ksyms_format(self->c.buf[j], b2, sizeof(b2)));
	}
}

TEST_F(callsite, off)
{
	uint64_t ra;
	long e;

	if (skip_reason[0])
		SKIP(return, "%s", skip_reason);
	self->tfd = open(OKCOV_TARGET_PATH, O_RDWR);
	ASSERT_LE(0, self->tfd);
	ASSERT_EQ(0, set_call_sites(0));
	ASSERT_EQ(0, record_call(&self->c, self->tfd, &ra));
	ASSERT_TRUE(is_inside(ra, st_in_target, CALLER));
	e = find_entry(&self->c, CALLEE);
	ASSERT_LE(0, e) {
		st_dump(&self->c, 64);
	}
	ASSERT_EQ(-1, find_pc(&self->c, ra));
}

TEST_F(callsite, pairs)
{
	char b1[160], b2[160];
	uint64_t i, n;
	bool getppid = false;

	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	st_reset(&self->c);
	sys_getppid_n(1);
	n = st_pcs(&self->c);
	ASSERT_EQ(0, st_disable(self->c.fd));
	ASSERT_LT(0, n);
	ASSERT_EQ(0, n % 2) {
		st_dump(&self->c, 64);
	}
	for (i = 0; i < n; i += 2) {
		uint64_t site = self->c.buf[i + 1], entry = self->c.buf[i + 2];

		ASSERT_TRUE(is_entry_of(entry, NULL, NULL) &&
			    is_inside(site, NULL, NULL)) {
			TH_LOG("pair %llu: %s, %s", (unsigned long long)i / 2,
			       ksyms_format(site, b1, sizeof(b1)),
			       ksyms_format(entry, b2, sizeof(b2)));
		}
		/* The first of getppid's functions: the dispatcher's callee. */
		if (!getppid && is_entry_of(entry, NULL, NULL) &&
		    ksyms_pc_matches(entry, ksym_is_syscall, "getppid")) {
			getppid = true;
			ASSERT_TRUE(is_inside(site, ksym_named, KSYM_SYS_CALLER) ||
				    is_inside(site, ksym_named, KSYM_SYS_CALLER2)) {
				TH_LOG("getppid called from %s",
				       ksyms_format(site, b1, sizeof(b1)));
			}
		}
	}
	ASSERT_TRUE(getppid) {
		st_dump(&self->c, 64);
	}
}

/*
 * The first KIOENABLE of a load makes the function set: make sure it is
 * made before the target module comes (it is not loaded between tests).
 */
static void prepare(void)
{
	char why[200];
	struct st_cov c;

	if (!st_new(&c, 64) && !st_enable(c.fd, KCOV_MODE_TRACE_PC))
		st_disable(c.fd);
	st_free(&c);
	if (access(OKCOV_TARGET_PATH, F_OK) == 0)
		fprintf(stderr, "# the test-target module was loaded already\n");
	if (st_target_load(why, sizeof(why)))
		snprintf(skip_reason, sizeof(skip_reason), "%s", why);
}

OKCOV_HARNESS_MAIN(prepare);
