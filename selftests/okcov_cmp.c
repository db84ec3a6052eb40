// SPDX-License-Identifier: GPL-2.0
/*
 * Comparisons from the kernel's own code (deep_cmp=1, x86_64): a deep
 * copy made while deep_cmp is set reports the operands of its cmp and
 * test instructions to a thread enabled in KCOV_MODE_TRACE_CMP. The
 * function is okcov_target_magic(), built without the sanitizer's hooks
 * (so nothing but its copy reports its comparisons), copied through
 * KIODEEP with okcov's own leaders:
 *
 *  magic:    a value from userspace meets each comparison of the
 *            function, in order, with exact records: its low 32 bits on
 *            the stack against an immediate (KCOV_CMP_CONST, 4 bytes: a
 *            %rsp-based operand), the immediate (KCOV_CMP_CONST, 8
 *            bytes), the module global in memory (8 bytes, both
 *            operands), the low 16 bits' immediate (2 bytes,
 *            KCOV_CMP_CONST); each PC inside okcov_target_magic() by
 *            /proc/kallsyms, and the call returns what it should;
 *  off:      the same run through a copy made with deep_cmp=0 records no
 *            comparison there (the copy made with it set is not reused),
 *            then, set again, through a new copy it does;
 *  leaders:  a TRACE_PC thread records the same leaders, in the same
 *            order, and gets the same results, through a copy with
 *            comparison sequences as through one without;
 *  switch:   a sparse switch's compare chain (okcov_target_cases())
 *            records every case constant against the value at its first
 *            compare, whichever case the value takes, as kcov's
 *            trace_switch reports a switch;
 *  jump_table: a dense switch compiled into a jump table records each
 *            case against the value at its bound check (skipped where
 *            retpolines leave no jump table);
 *  linux_abi: Linux's ABI (KCOV_TRACE_CMP) gets the same records, PCs
 *            less the KASLR offset (skipped where the kernel has kcov).
 *
 * Needs the test-target module, x86_64 and debugfs; reloads okcov first
 * (a fresh pool).
 */
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "okcov_linux.h"
#include "kallsyms.h"
#include "kmod_util.h"
#include "okcov_target.h"

#define NENT		(64 << 10)
#define MAXL		64
#define FN		"okcov_target_magic"
#define VALUE		0x77ULL		/* equal to none of the three */

static char skip_reason[256];

/* Records of @buf (nent words) made in okcov_target_magic(). */
struct cmps {
	uint64_t r[16][4];
	int n;
};

/* The comparison records of @buf whose PC (plus @delta) lies in @fn. */
static void cmps_in(const uint64_t *buf, uint64_t nent, uint64_t delta,
		    const char *fn, struct cmps *out)
{
	uint64_t i, n = __atomic_load_n(&buf[0], __ATOMIC_RELAXED);
	const uint64_t *r;

	out->n = 0;
	if (n > (nent - 1) / 4)
		n = (nent - 1) / 4;
	for (i = 0; i < n && out->n < 16; i++) {
		r = &buf[4 * i + 1];
		if (!ksyms_pc_matches(r[3] + delta, st_in_target, fn))
			continue;
		memcpy(out->r[out->n++], r, 4 * sizeof(*r));
	}
}

/* ... in FN, okcov_target_magic(). */
static void cmps_of(const uint64_t *buf, uint64_t nent, uint64_t delta,
		    struct cmps *out)
{
	cmps_in(buf, nent, delta, FN, out);
}

static void cmps_dump(const struct cmps *c, uint64_t delta)
{
	char name[256];
	int i;

	fprintf(stderr, "# %d comparison records\n", c->n);
	for (i = 0; i < c->n; i++)
		fprintf(stderr, "#   type %llu args %#llx %#llx at %s\n",
			(unsigned long long)c->r[i][0],
			(unsigned long long)c->r[i][1],
			(unsigned long long)c->r[i][2],
			ksyms_format(c->r[i][3] + delta, name, sizeof(name)));
}

/* Is record @i (type, a, b)? */
static bool cmp_is(const struct cmps *c, int i, uint64_t type, uint64_t a,
		   uint64_t b)
{
	return i < c->n && c->r[i][0] == type && c->r[i][1] == a &&
	       c->r[i][2] == b;
}

/*
 * okcov_target_magic(@v)'s records, in order, as it compares: its low 32
 * bits on the stack ("cmpl $imm, off(%rsp)": the copy's %rsp is the
 * original's); the immediate; the global (cmp with memory: either
 * operand order, as the compiler encodes it); the low 16 bits (the
 * compiler may widen it to 4 bytes). @upto: how many of the last three
 * @v meets.
 */
static bool magic_records(const struct cmps *c, uint64_t v, int upto)
{
	const uint64_t c8 = KCOV_CMP_SIZE(3) | KCOV_CMP_CONST;
	uint64_t lo = v & 0xffff;

	if (c->n != upto + 1 ||
	    !cmp_is(c, 0, KCOV_CMP_SIZE(2) | KCOV_CMP_CONST,
		    OKCOV_TARGET_MAGIC_STACK, (uint32_t)v) ||
	    !cmp_is(c, 1, c8, OKCOV_TARGET_MAGIC_CMP, v))
		return false;
	if (upto > 1 &&
	    !cmp_is(c, 2, KCOV_CMP_SIZE(3), OKCOV_TARGET_MAGIC_VAR, v) &&
	    !cmp_is(c, 2, KCOV_CMP_SIZE(3), v, OKCOV_TARGET_MAGIC_VAR))
		return false;
	if (upto > 2 &&
	    !cmp_is(c, 3, KCOV_CMP_SIZE(1) | KCOV_CMP_CONST,
		    OKCOV_TARGET_MAGIC_LOW16, lo) &&
	    !cmp_is(c, 3, KCOV_CMP_SIZE(2) | KCOV_CMP_CONST,
		    OKCOV_TARGET_MAGIC_LOW16, lo))
		return false;
	return true;
}

FIXTURE(cmp) {
	struct st_cov c;
	int tfd, kd;
	uint64_t fn;
	char copies[8], cmp[8];	/* deep_copies, deep_cmp before */
};

FIXTURE_SETUP(cmp)
{
	struct okcov_target_funcs f;

	self->cmp[0] = self->copies[0] = 0;
	self->c.fd = -1;
	self->c.buf = MAP_FAILED;
	self->tfd = self->kd = -1;
	if (skip_reason[0])
		SKIP(return, "%s", skip_reason);
	ASSERT_EQ(0, st_new(&self->c, NENT));
	self->tfd = open(OKCOV_TARGET_PATH, O_RDWR);
	ASSERT_LE(0, self->tfd);
	ASSERT_EQ(0, st_ret(ioctl(self->tfd, OKCOV_TARGET_FUNCS, &f)));
	self->fn = f.magic;
	ASSERT_NE(0, self->fn);
	ASSERT_EQ(0, st_param_swap("deep_copies", "1", self->copies,
				   sizeof(self->copies)));
	ASSERT_EQ(0, st_param_swap("deep_cmp", "1", self->cmp,
				   sizeof(self->cmp)));
	ASSERT_EQ(0, ksyms_load());
}

FIXTURE_TEARDOWN(cmp)
{
	if (self->kd >= 0)
		close(self->kd);
	st_param_restore("deep_cmp", self->cmp);
	st_param_restore("deep_copies", self->copies);
	st_free(&self->c);
	if (self->tfd >= 0)
		close(self->tfd);
}

/*
 * A descriptor whose KIODEEP copies the function at @addr (@name) with
 * okcov's leaders, under deep_cmp=@on; it stays open (the copy
 * published) until closed. Its fd.
 */
static int deep_copy(struct __test_metadata *_metadata, __u64 addr,
		     const char *name, bool on)
{
	struct kio_deep d;
	int kd;

	EXPECT_EQ(0, st_param_set("deep_cmp", on ? "1" : "0"));
	kd = st_open();
	EXPECT_LE(0, kd);
	memset(&d, 0, sizeof(d));
	d.addrs = (uintptr_t)&addr;
	d.count = 1;
	d.flags = KIO_DEEP_FUNCTIONS | KIO_DEEP_PARTIAL;
	EXPECT_EQ(0, st_ioctl(kd, KIODEEP, &d));
	EXPECT_LT(0, d.installed);
	/* A copy, not kprobes: nothing else gives comparisons. */
	EXPECT_EQ(0, st_kprobes_listed(name, NULL));
	EXPECT_LT(0, st_copies_stat("published"));
	return kd;
}

/* ... of okcov_target_magic(). */
static int deep_magic(struct __test_metadata *_metadata,
		      struct _test_data_cmp *self, bool on)
{
	return deep_copy(_metadata, self->fn, FN, on);
}

/* okcov_target_magic(@v) in @mode on /dev/okcov: its result. */
static long magic_run(struct _test_data_cmp *self, int mode, uint64_t v)
{
	long ret;

	if (st_enable(self->c.fd, mode))
		return -1000;
	st_reset(&self->c);
	ret = ioctl(self->tfd, OKCOV_TARGET_MAGIC_RUN, (unsigned long)v);
	if (st_disable(self->c.fd))
		return -1001;
	return ret;
}

TEST_F(cmp, magic)
{
	static const struct {
		uint64_t v;
		long ret;
		int upto;	/* comparisons it meets */
	} runs[] = {
		{ VALUE, 0, 3 },
		{ OKCOV_TARGET_MAGIC_CMP, 1, 1 },
		{ OKCOV_TARGET_MAGIC_VAR, 2, 2 },
		{ 0xabcd0000ULL | OKCOV_TARGET_MAGIC_LOW16, 3, 3 },
	};
	long compares = st_copies_stat("compares");
	struct cmps c;
	unsigned int i;

	if (_metadata->skip)
		return;
	self->kd = deep_magic(_metadata, self, true);
	/* Its four cmp instructions at least have their sequence. */
	EXPECT_LE(compares + 4, st_copies_stat("compares"));
	for (i = 0; i < ARRAY_SIZE(runs); i++) {
		EXPECT_EQ(runs[i].ret, magic_run(self, KCOV_MODE_TRACE_CMP,
						 runs[i].v));
		cmps_of(self->c.buf, NENT, 0, &c);
		EXPECT_TRUE(magic_records(&c, runs[i].v, runs[i].upto)) {
			TH_LOG("value %#llx", (unsigned long long)runs[i].v);
			cmps_dump(&c, 0);
		}
	}
}

TEST_F(cmp, off)
{
	struct cmps c;

	if (_metadata->skip)
		return;
	/* A copy with comparisons first: the next one must not reuse it. */
	self->kd = deep_magic(_metadata, self, true);
	close(self->kd);
	self->kd = deep_magic(_metadata, self, false);
	EXPECT_EQ(0, magic_run(self, KCOV_MODE_TRACE_CMP, VALUE));
	cmps_of(self->c.buf, NENT, 0, &c);
	EXPECT_EQ(0, c.n) {
		cmps_dump(&c, 0);
	}
	close(self->kd);
	/* The positive control: set again, a new copy compares. */
	self->kd = deep_magic(_metadata, self, true);
	EXPECT_EQ(0, magic_run(self, KCOV_MODE_TRACE_CMP, VALUE));
	cmps_of(self->c.buf, NENT, 0, &c);
	EXPECT_TRUE(magic_records(&c, VALUE, 3)) {
		cmps_dump(&c, 0);
	}
}

/*
 * A switch's compare chain: okcov_target_cases(@v) records, at one PC
 * (the chain's first compare), every case constant against @v
 * (KCOV_CMP_CONST, 8 bytes), as Linux's trace_switch does, whatever case
 * @v takes; the compares on @v's path may record themselves too. Without
 * chains only those (about three of seven) would arrive.
 */
static bool cases_records(const struct cmps *c, uint64_t v)
{
	static const uint64_t consts[] = OKCOV_TARGET_CASES;
	const uint64_t c8 = KCOV_CMP_SIZE(3) | KCOV_CMP_CONST;
	unsigned int k, got = 0;
	int i, first = -1;

	for (i = 0; i < c->n; i++)
		if (c->r[i][0] == c8 && c->r[i][2] == v)
			first = first < 0 ? i : first;
	if (first < 0)
		return false;
	for (k = 0; k < ARRAY_SIZE(consts); k++)
		for (i = first; i < c->n; i++)
			if (c->r[i][3] == c->r[first][3] &&
			    cmp_is(c, i, c8, consts[k], v)) {
				got++;
				break;
			}
	return got == ARRAY_SIZE(consts);
}

TEST_F(cmp, switch)
{
	static const uint64_t consts[] = OKCOV_TARGET_CASES;
	long chains = st_copies_stat("switches");
	struct okcov_target_funcs f;
	struct cmps c;
	unsigned int k;
	uint64_t v;

	if (_metadata->skip)
		return;
	ASSERT_EQ(0, st_ret(ioctl(self->tfd, OKCOV_TARGET_FUNCS, &f)));
	ASSERT_NE(0, f.cases);
	self->kd = deep_copy(_metadata, f.cases, "okcov_target_cases", true);
	EXPECT_LT(chains, st_copies_stat("switches"));
	for (k = 0; k <= ARRAY_SIZE(consts); k++) {
		v = k < ARRAY_SIZE(consts) ? consts[k] : VALUE;
		ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_CMP));
		st_reset(&self->c);
		EXPECT_EQ(k < ARRAY_SIZE(consts) ? k + 1 : 0,
			  ioctl(self->tfd, OKCOV_TARGET_CASES_RUN,
				(unsigned long)v));
		ASSERT_EQ(0, st_disable(self->c.fd));
		cmps_in(self->c.buf, NENT, 0, "okcov_target_cases", &c);
		EXPECT_TRUE(cases_records(&c, v)) {
			TH_LOG("value %#llx", (unsigned long long)v);
			cmps_dump(&c, 0);
		}
	}
}

/*
 * A dense switch compiled into a jump table (kernels without retpolines):
 * okcov_target_switched(@v) records, at its bound check, each case 0 to 8
 * against @v, as trace_switch does. With retpolines the switch is
 * compares, which the switch test covers: skipped.
 */
TEST_F(cmp, jump_table)
{
	const uint64_t c8 = KCOV_CMP_SIZE(3) | KCOV_CMP_CONST;
	static const uint64_t vals[] = { 3, VALUE };
	long jumps = st_copies_stat("jumps");
	struct okcov_target_funcs f;
	unsigned int k, j, got;
	struct cmps c;
	int i, first;

	if (_metadata->skip)
		return;
	ASSERT_EQ(0, st_ret(ioctl(self->tfd, OKCOV_TARGET_FUNCS, &f)));
	self->kd = deep_copy(_metadata, f.switched, "okcov_target_switched",
			     true);
	if (st_copies_stat("jumps") == jumps)
		SKIP(return, "no jump table in okcov_target_switched (retpolines)");
	for (k = 0; k < ARRAY_SIZE(vals); k++) {
		ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_CMP));
		st_reset(&self->c);
		ioctl(self->tfd, OKCOV_TARGET_SWITCH_RUN, (unsigned long)vals[k]);
		ASSERT_EQ(0, st_disable(self->c.fd));
		cmps_in(self->c.buf, NENT, 0, "okcov_target_switched", &c);
		for (first = 0; first < c.n; first++)
			if (c.r[first][0] == c8 && c.r[first][1] == 0)
				break;
		got = 0;
		for (j = 0; j <= 8 && first < c.n; j++)
			for (i = 0; i < c.n; i++)
				if (c.r[i][3] == c.r[first][3] &&
				    cmp_is(&c, i, c8, j, vals[k])) {
					got++;
					break;
				}
		EXPECT_EQ(9, got) {
			TH_LOG("value %#llx: %u of the cases 0 to 8",
			       (unsigned long long)vals[k], got);
			cmps_dump(&c, 0);
		}
	}
}

/* TRACE_PC runs of @v: the PCs recorded past FN's entry, and results. */
static int leader_runs(struct __test_metadata *_metadata,
		       struct _test_data_cmp *self, const uint64_t *v, int nv,
		       uint64_t end, uint64_t (*seq)[MAXL], int *nseq,
		       long *ret)
{
	uint64_t i, n;
	int k, total = 0;

	for (k = 0; k < nv; k++) {
		ret[k] = magic_run(self, KCOV_MODE_TRACE_PC, v[k]);
		n = st_pcs(&self->c);
		nseq[k] = 0;
		for (i = 0; i < n && nseq[k] < MAXL; i++)
			if (self->c.buf[i + 1] > self->fn + 8 &&
			    self->c.buf[i + 1] < end)
				seq[k][nseq[k]++] = self->c.buf[i + 1];
		total += nseq[k];
	}
	return total;
}

TEST_F(cmp, leaders)
{
	static const uint64_t v[] = {
		VALUE, OKCOV_TARGET_MAGIC_CMP, OKCOV_TARGET_MAGIC_VAR,
		OKCOV_TARGET_MAGIC_LOW16,
	};
	uint64_t s0[4][MAXL], s1[4][MAXL], end;
	int n0[4], n1[4], t0, t1, k, j;
	__u64 leaders[MAXL];
	long r0[4], r1[4];

	if (_metadata->skip)
		return;
	ASSERT_LT(0, st_plan_leaders(self->fn, leaders, MAXL, &end));
	self->kd = deep_magic(_metadata, self, false);
	t0 = leader_runs(_metadata, self, v, 4, end, s0, n0, r0);
	close(self->kd);
	self->kd = deep_magic(_metadata, self, true);
	t1 = leader_runs(_metadata, self, v, 4, end, s1, n1, r1);
	/* The positive control: leaders were recorded at all. */
	EXPECT_LT(0, t0);
	for (k = 0; k < 4; k++) {
		EXPECT_EQ(r0[k], r1[k]);
		EXPECT_EQ(n0[k], n1[k]) {
			TH_LOG("value %#llx: %d leaders without, %d with comparisons",
			       (unsigned long long)v[k], n0[k], n1[k]);
		}
		for (j = 0; j < n0[k] && j < n1[k]; j++)
			EXPECT_EQ(s0[k][j], s1[k][j]);
	}
	TH_LOG("%d leader records, %d with comparisons", t0, t1);
}

TEST_F(cmp, linux_abi)
{
	uint64_t *buf, kaslr;
	struct cmps c;
	int fd, i;

	if (_metadata->skip)
		return;
	if (lk_native())
		SKIP(return, "CONFIG_KCOV kernel: %s is Linux's own", LK_PATH);
	if (access(LK_PATH, F_OK))
		SKIP(return, "no %s", LK_PATH);
	kaslr = lk_kaslr_offset();
	self->kd = deep_magic(_metadata, self, true);
	fd = lk_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, lk_init(fd, NENT));
	buf = lk_map(fd, NENT, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_EQ(0, lk_enable(fd, KCOV_TRACE_CMP));
	__atomic_store_n(&buf[0], 0, __ATOMIC_RELAXED);
	EXPECT_EQ(0, ioctl(self->tfd, OKCOV_TARGET_MAGIC_RUN,
			   (unsigned long)VALUE));
	ASSERT_EQ(0, lk_disable(fd));
	cmps_of(buf, NENT, kaslr, &c);
	EXPECT_TRUE(magic_records(&c, VALUE, 3)) {
		cmps_dump(&c, kaslr);
	}
	for (i = 0; i < c.n; i++)
		EXPECT_TRUE(lk_pc_canonical(c.r[i][3]));
	munmap(buf, NENT * 8);
	close(fd);
}

static void prepare(void)
{
	struct okcov_target_funcs f;
	int fd;

#ifndef __x86_64__
	snprintf(skip_reason, sizeof(skip_reason),
		 "instrumented copies are x86_64's");
	return;
#endif
	/* A fresh pool: copies stay until okcov's text goes. */
	fd = st_fresh_target(skip_reason, sizeof(skip_reason));
	if (fd < 0)
		return;
	if (ioctl(fd, OKCOV_TARGET_FUNCS, &f) || !f.magic)
		snprintf(skip_reason, sizeof(skip_reason),
			 "the test-target module has no okcov_target_magic()");
	close(fd);
	if (!skip_reason[0] && (access(ST_PLAN_FILE, W_OK) ||
				access(ST_COPIES_FILE, R_OK) ||
				access(ST_KPROBES_LIST, R_OK)))
		snprintf(skip_reason, sizeof(skip_reason),
			 "no okcov debugfs files or kprobes list");
	if (!skip_reason[0] &&
	    access("/sys/module/okcov/parameters/deep_cmp", W_OK))
		snprintf(skip_reason, sizeof(skip_reason),
			 "okcov has no deep_cmp parameter");
}

OKCOV_HARNESS_MAIN(prepare);
