// SPDX-License-Identifier: GPL-2.0
/*
 * okcov's __sanitizer_cov_* exports (module/sancov.c), through the
 * instrumented test-target module (selftests/target): basic-block PCs in
 * TRACE_PC mode, comparison records in TRACE_CMP mode, the record layout
 * and bounds, per-thread isolation.
 *
 * The target module comes from OKCOV_TARGET_KO (loaded here through
 * libkmod if it is not loaded yet, and unloaded again at exit); without it,
 * or on a CONFIG_KCOV kernel where the hooks belong to the kernel, the
 * tests are skipped.
 */
#include "kselftest_harness.h"
#include "okcov_test.h"
#include "kmod_util.h"
#include "okcov_target.h"

#define TARGET_FN	"okcov_target_run"
#define PATTERN		0x5a5a5a5a5a5a5a5aULL

/* Why the tests cannot run here, or NULL. */
static char skip_reason[256];

static bool in_target_run(const struct ksym *s, const void *ctx)
{
	return s->mod && !strcmp(s->mod, OKCOV_TARGET_NAME) &&
	       !strncmp(s->name, TARGET_FN, strlen(TARGET_FN)) &&
	       (s->name[strlen(TARGET_FN)] == '\0' ||
		s->name[strlen(TARGET_FN)] == '.');
}

static bool in_target_module(uint64_t pc)
{
	return ksyms_pc_matches(pc, ksym_in_module, OKCOV_TARGET_NAME);
}

struct cmp_rec {
	uint64_t type, arg1, arg2, pc;
};

static uint64_t cmp_records(const struct st_cov *c)
{
	uint64_t cnt = st_count(c), room = (c->n - 1) / 4;

	return cnt < room ? cnt : room;
}

static struct cmp_rec cmp_record(const struct st_cov *c, uint64_t i)
{
	struct cmp_rec r = {
		c->buf[4 * i + 1], c->buf[4 * i + 2],
		c->buf[4 * i + 3], c->buf[4 * i + 4],
	};
	return r;
}

/* Whether a record (type, a, b) from okcov_target_run() is in the buffer;
 * with either_order, (type, b, a) counts too.
 */
static bool has_cmp(const struct st_cov *c, uint64_t type, uint64_t a,
		    uint64_t b, bool either_order)
{
	uint64_t i, n = cmp_records(c);

	for (i = 0; i < n; i++) {
		struct cmp_rec r = cmp_record(c, i);

		if (r.type != type)
			continue;
		if (!((r.arg1 == a && r.arg2 == b) ||
		      (either_order && r.arg1 == b && r.arg2 == a)))
			continue;
		if (ksyms_pc_matches(r.pc, in_target_run, NULL))
			return true;
	}
	return false;
}

static void dump_cmp(const struct st_cov *c)
{
	uint64_t i, n = cmp_records(c);
	char name[256];

	fprintf(stderr, "# %llu comparison records (buf[0] = %llu)\n",
		(unsigned long long)n, (unsigned long long)st_count(c));
	for (i = 0; i < n && i < 64; i++) {
		struct cmp_rec r = cmp_record(c, i);

		fprintf(stderr, "#   type %llu args %#llx %#llx at %s\n",
			(unsigned long long)r.type,
			(unsigned long long)r.arg1,
			(unsigned long long)r.arg2,
			ksyms_format(r.pc, name, sizeof(name)));
	}
}

static int run_target(int tfd, uint64_t v)
{
	return ioctl(tfd, OKCOV_TARGET_RUN, (unsigned long)v);
}

FIXTURE(sancov) {
	struct st_cov c;
	int tfd;
};

/*
 * A SKIP() here does not stop 6.1's harness from running the test: each
 * test starts with "if (_metadata->skip) return;".
 */
FIXTURE_SETUP(sancov)
{
	self->c.fd = -1;
	self->c.buf = MAP_FAILED;
	self->tfd = -1;
	if (skip_reason[0])
		SKIP(return, "%s", skip_reason);
	ASSERT_EQ(0, ksyms_load());
	self->tfd = open(OKCOV_TARGET_PATH, O_RDWR);
	ASSERT_LE(0, self->tfd);
	ASSERT_EQ(0, st_new(&self->c, 64 << 10));
}

FIXTURE_TEARDOWN(sancov)
{
	st_free(&self->c);
	if (self->tfd >= 0)
		close(self->tfd);
}

/* TRACE_PC: basic-block PCs inside okcov_target_run, and only PCs. */
TEST_F(sancov, trace_pc)
{
	if (_metadata->skip)
		return;
	uint64_t i, n, distinct = 0, inner = 0, prev = 0;
	const struct ksym *s;
	int ret;

	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	st_reset(&self->c);
	ret = run_target(self->tfd, OKCOV_TARGET_MAGIC64);
	ASSERT_EQ(0, st_disable(self->c.fd));
	ASSERT_LE(0, ret);
	ASSERT_EQ(1, ret & 1);	/* the == MAGIC64 branch was taken */

	n = st_pcs(&self->c);
	ASSERT_LT(0, n);
	for (i = 0; i < n; i++) {
		uint64_t pc = self->c.buf[i + 1];

		/* no comparison-shaped words: types, operands */
		ASSERT_TRUE(st_is_kaddr(pc)) {
			TH_LOG("record %llu = %#llx is not a PC",
			       (unsigned long long)i, (unsigned long long)pc);
		}
		if (!ksyms_pc_matches(pc, in_target_run, NULL))
			continue;
		s = ksyms_lookup(pc, NULL);
		if (pc != prev)
			distinct++;
		if (pc - s->addr > 4)
			inner++;
		prev = pc;
	}
	/* several blocks, beyond the function entry ftrace would give */
	ASSERT_LE(3, distinct) {
		st_dump(&self->c, 200);
	}
	ASSERT_LE(2, inner);
	ASSERT_LT(0, st_count_matching(&self->c, ksym_named,
					  "okcov_target_ioctl"));
}

/* Different values take different branches: different sets of PCs. */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The distinct PCs inside okcov_target_run, sorted; their number. */
static size_t run_pcs(const struct st_cov *c, uint64_t *out, size_t max)
{
	uint64_t i, n = st_pcs(c);
	size_t k = 0, j, u = 0;

	for (i = 0; i < n && k < max; i++)
		if (ksyms_pc_matches(c->buf[i + 1], in_target_run, NULL))
			out[k++] = c->buf[i + 1];
	qsort(out, k, sizeof(*out), cmp_u64);
	for (j = 0; j < k; j++)
		if (!u || out[u - 1] != out[j])
			out[u++] = out[j];
	return u;
}

TEST_F(sancov, trace_pc_follows_branches)
{
	if (_metadata->skip)
		return;
	static uint64_t pcs[2][256];
	size_t n[2];
	int k;

	for (k = 0; k < 2; k++) {
		ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
		st_reset(&self->c);
		run_target(self->tfd, k ? OKCOV_TARGET_MAGIC64 :
					  OKCOV_TARGET_MAGIC64 + 1);
		ASSERT_EQ(0, st_disable(self->c.fd));
		n[k] = run_pcs(&self->c, pcs[k], 256);
		ASSERT_LE(2, n[k]);
	}
	/* == MAGIC64 takes a branch that MAGIC64 + 1 does not, and back */
	ASSERT_FALSE(n[0] == n[1] &&
		     !memcmp(pcs[0], pcs[1], n[0] * sizeof(uint64_t)));
}

/* TRACE_CMP: the known comparisons, with their exact types and operands. */
TEST_F(sancov, trace_cmp)
{
	if (_metadata->skip)
		return;
	const uint64_t v = 0x005abeefdeadbeefULL;
	uint64_t i, n, thr = OKCOV_TARGET_THRESHOLD;
	FILE *f;

	f = fopen("/sys/module/okcov_target/parameters/threshold", "r");
	if (f) {
		unsigned long long t;

		if (fscanf(f, "%llu", &t) == 1)
			thr = t;
		fclose(f);
	}

	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_CMP));
	st_reset(&self->c);
	ASSERT_LE(0, run_target(self->tfd, v));
	ASSERT_EQ(0, st_disable(self->c.fd));

	n = cmp_records(&self->c);
	ASSERT_LT(0, n);
	ASSERT_GT((self->c.n - 1) / 4, st_count(&self->c));

	/* v == 0x1234: 8 bytes, constant first */
	ASSERT_TRUE(has_cmp(&self->c, KCOV_CMP_SIZE(3) | KCOV_CMP_CONST,
			    OKCOV_TARGET_MAGIC64, v, false)) {
		dump_cmp(&self->c);
	}
	/* v > threshold: 8 bytes, two variables */
	ASSERT_TRUE(has_cmp(&self->c, KCOV_CMP_SIZE(3), thr, v, true)) {
		dump_cmp(&self->c);
	}
	/* (u32)v == 0xdeadbeef, (u16)(v >> 32) == 0xbeef, (u8)(v >> 48) */
	ASSERT_TRUE(has_cmp(&self->c, KCOV_CMP_SIZE(2) | KCOV_CMP_CONST,
			    OKCOV_TARGET_MAGIC32, (uint32_t)v, false));
	ASSERT_TRUE(has_cmp(&self->c, KCOV_CMP_SIZE(1) | KCOV_CMP_CONST,
			    OKCOV_TARGET_MAGIC16, (uint16_t)(v >> 32), false));
	ASSERT_TRUE(has_cmp(&self->c, KCOV_CMP_SIZE(0) | KCOV_CMP_CONST,
			    OKCOV_TARGET_MAGIC8, (uint8_t)(v >> 48), false));
	/* switch (v & 7): one constant comparison per case */
	ASSERT_TRUE(has_cmp(&self->c, KCOV_CMP_SIZE(3) | KCOV_CMP_CONST,
			    6, v & 7, false)) {
		dump_cmp(&self->c);
	}

	/* every record is well formed and comes from the target module */
	for (i = 0; i < n; i++) {
		struct cmp_rec r = cmp_record(&self->c, i);

		ASSERT_EQ(0, r.type & ~(uint64_t)(KCOV_CMP_MASK |
						  KCOV_CMP_CONST));
		ASSERT_TRUE(st_is_kaddr(r.pc));
		ASSERT_TRUE(in_target_module(r.pc)) {
			dump_cmp(&self->c);
		}
	}
}

/* The same call records the same number of comparisons every time. */
TEST_F(sancov, trace_cmp_deterministic)
{
	if (_metadata->skip)
		return;
	uint64_t one, three;

	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_CMP));
	st_reset(&self->c);
	run_target(self->tfd, 42);
	one = st_count(&self->c);
	st_reset(&self->c);
	run_target(self->tfd, 42);
	run_target(self->tfd, 42);
	run_target(self->tfd, 42);
	three = st_count(&self->c);
	ASSERT_EQ(0, st_disable(self->c.fd));
	ASSERT_LT(0, one);
	ASSERT_EQ(3 * one, three);
}

/* Never enabled, or disabled: the target's hooks record nothing. */
TEST_F(sancov, not_enabled)
{
	if (_metadata->skip)
		return;
	run_target(self->tfd, OKCOV_TARGET_MAGIC64);
	ASSERT_EQ(0, st_count(&self->c));

	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_CMP));
	ASSERT_EQ(0, st_disable(self->c.fd));
	run_target(self->tfd, OKCOV_TARGET_MAGIC64);
	ASSERT_EQ(0, st_count(&self->c));
}

/* A bystander thread running the target never reaches this thread's
 * buffer: in TRACE_CMP mode only the target records, so it stays empty.
 */
struct bystander {
	int tfd;
	bool stop;		/* atomic */
	unsigned long calls;	/* atomic */
};

static void *bystander_fn(void *p)
{
	struct bystander *b = p;

	while (!__atomic_load_n(&b->stop, __ATOMIC_RELAXED)) {
		run_target(b->tfd, OKCOV_TARGET_MAGIC64);
		__atomic_fetch_add(&b->calls, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static unsigned long bystander_calls(struct bystander *b)
{
	return __atomic_load_n(&b->calls, __ATOMIC_RELAXED);
}

TEST_F(sancov, bystander)
{
	if (_metadata->skip)
		return;
	struct bystander b = { .tfd = self->tfd };
	unsigned long start;
	pthread_t th;
	time_t deadline;
	int mode, i;

	for (mode = KCOV_MODE_TRACE_PC; mode <= KCOV_MODE_TRACE_CMP; mode++) {
		__atomic_store_n(&b.stop, false, __ATOMIC_RELAXED);
		ASSERT_EQ(0, st_enable(self->c.fd, mode));
		st_reset(&self->c);
		ASSERT_EQ(0, pthread_create(&th, NULL, bystander_fn, &b));
		/* The bystander must be running before we look (slow on RT). */
		deadline = time(NULL) + 20;
		while (!bystander_calls(&b) && time(NULL) < deadline)
			sched_yield();
		start = bystander_calls(&b);
		st_reset(&self->c);
		deadline = time(NULL) + 20;
		for (i = 0; time(NULL) < deadline &&
			    (i < 20 || bystander_calls(&b) == start ||
			     (bystander_calls(&b) - start < 100 &&
			      st_count(&self->c) < self->c.n / 8)); i++)
			syscall(SYS_getpid);
		ASSERT_EQ(0, st_disable(self->c.fd));
		__atomic_store_n(&b.stop, true, __ATOMIC_RELAXED);
		pthread_join(th, NULL);
		ASSERT_LT(0, bystander_calls(&b) - start);

		if (mode == KCOV_MODE_TRACE_CMP) {
			ASSERT_EQ(0, st_count(&self->c)) {
				dump_cmp(&self->c);
			}
		} else {
			ASSERT_EQ(0, st_count_matching(&self->c,
					ksym_in_module, OKCOV_TARGET_NAME)) {
				st_dump(&self->c, 200);
			}
		}
	}
}

/*
 * Bounds in TRACE_CMP mode: room for (n - 1) / 4 records; a record is
 * never split; word 0 at or past capacity (or huge) writes nothing.
 */
static void cmp_bounds(struct __test_metadata *_metadata, int tfd,
		       uint64_t n, uint64_t start, uint64_t expect)
{
	struct st_cov c;
	uint64_t i, words;

	ASSERT_EQ(0, st_new(&c, n));
	words = st_map_len(n) / 8;
	for (i = 1; i < n; i++)
		c.buf[i] = PATTERN;
	c.buf[0] = start;
	ASSERT_EQ(0, st_enable(c.fd, KCOV_MODE_TRACE_CMP));
	for (i = 0; i < 10; i++)
		run_target(tfd, OKCOV_TARGET_MAGIC64);
	ASSERT_EQ(0, st_disable(c.fd));

	ASSERT_EQ(expect, st_count(&c)) {
		TH_LOG("n = %llu, buf[0] was %#llx",
		       (unsigned long long)n, (unsigned long long)start);
	}
	for (i = 1; i < n; i++) {
		uint64_t rec = (i - 1) / 4;

		if (start <= rec && rec < expect)
			continue;	/* written */
		ASSERT_EQ(PATTERN, c.buf[i]) {
			TH_LOG("n = %llu, buf[0] was %#llx: word %llu written",
			       (unsigned long long)n,
			       (unsigned long long)start,
			       (unsigned long long)i);
		}
	}
	for (i = n; i < words; i++)
		ASSERT_EQ(0, c.buf[i]);
	/* the records that were written are whole */
	for (i = start; i < expect; i++) {
		struct cmp_rec r = cmp_record(&c, i);

		ASSERT_NE(PATTERN, r.type);
		ASSERT_TRUE(in_target_module(r.pc));
	}
	st_free(&c);
}

TEST_F(sancov, cmp_capacity)
{
	if (_metadata->skip)
		return;
	cmp_bounds(_metadata, self->tfd, 4, 0, 0);	/* room for none */
	cmp_bounds(_metadata, self->tfd, 5, 0, 1);	/* exactly one */
	cmp_bounds(_metadata, self->tfd, 8, 0, 1);	/* one, 3 spare words */
	cmp_bounds(_metadata, self->tfd, 9, 0, 2);
	cmp_bounds(_metadata, self->tfd, 9, 1, 2);	/* one more */
	cmp_bounds(_metadata, self->tfd, 9, 2, 2);	/* full already */
}

TEST_F(sancov, cmp_bad_count)
{
	if (_metadata->skip)
		return;
	/*
	 * n = 65: room for 16 records. Past 1 << 59 records of 32 bytes, a
	 * 64-bit byte offset wraps around (to word 1 at 1 << 59 and 1 << 60).
	 */
	static const uint64_t starts[] = { 16, 17, 512, 1ULL << 32,
					   1ULL << 59, 1ULL << 60,
					   1ULL << 61, 1ULL << 62,
					   1ULL << 63, ~0ULL - 3, ~0ULL - 1,
					   ~0ULL };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(starts); i++)
		cmp_bounds(_metadata, self->tfd, 65, starts[i], starts[i]);
}

/* The same word-0 bounds through __sanitizer_cov_trace_pc. */
TEST_F(sancov, pc_bad_count)
{
	if (_metadata->skip)
		return;
	static const uint64_t starts[] = { 63, 64, 1ULL << 61, 1ULL << 62,
					   ~0ULL };
	struct st_cov c;
	size_t k;
	uint64_t i;

	for (k = 0; k < ARRAY_SIZE(starts); k++) {
		ASSERT_EQ(0, st_new(&c, 64));
		for (i = 1; i < 64; i++)
			c.buf[i] = PATTERN;
		c.buf[0] = starts[k];
		ASSERT_EQ(0, st_enable(c.fd, KCOV_MODE_TRACE_PC));
		for (i = 0; i < 10; i++)
			run_target(self->tfd, OKCOV_TARGET_MAGIC64);
		ASSERT_EQ(0, st_disable(c.fd));
		ASSERT_EQ(starts[k], st_count(&c));
		for (i = 1; i < 64; i++)
			ASSERT_EQ(PATTERN, c.buf[i]);
		st_free(&c);
	}
}

/* ---- setup: find or load the target module ---- */

static void prepare(void)
{
	char why[256];
	uint64_t hook;

	if (st_target_load(why, sizeof(why))) {
		if (st_target_ko())
			/* not a skip: the tests fail on the missing device */
			fprintf(stderr, "# %s\n", why);
		else
			snprintf(skip_reason, sizeof(skip_reason), "%s", why);
		return;
	}

	/* On a CONFIG_KCOV kernel the hooks are the kernel's, not okcov's. */
	if (ksyms_load() == 0) {
		hook = ksyms_addr("__sanitizer_cov_trace_pc", NULL);
		if (hook && !ksyms_addr("__sanitizer_cov_trace_pc", "okcov"))
			snprintf(skip_reason, sizeof(skip_reason),
				 "CONFIG_KCOV kernel: __sanitizer_cov_* belong to the kernel");
	}
}

OKCOV_HARNESS_MAIN(prepare);
