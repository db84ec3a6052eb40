// SPDX-License-Identifier: GPL-2.0
/*
 * okcov's Linux ABI and KCOV_TRACE_CMP (okcov-linux(4), Comparisons):
 * ENOTSUPP, as on a Linux without CONFIG_KCOV_ENABLE_COMPARISONS, while
 * no instrumented module is loaded; enabled, with the comparisons of the
 * test-target module arriving, while it is. In order:
 *
 *   no source       KCOV_ENABLE(KCOV_TRACE_CMP) is ENOTSUPP, after the
 *                   state's EINVAL and the thread's EBUSY; the fd stays
 *                   initialised (KCOV_TRACE_PC then works);
 *                   KCOV_REMOTE_ENABLE alike, its mode checked before its
 *                   handles; /dev/okcov's KIOENABLE takes the mode (OpenBSD);
 *                   with deep_cmp set (copies' comparisons) it is enabled;
 *   source loaded   the test target (OKCOV_TARGET_KO) is loaded here:
 *                   enabled, and its comparisons arrive with their operands
 *                   and a canonical PC inside okcov_target_run(), locally
 *                   and from its deferred work (remote);
 *   source gone     unloaded under an enabled descriptor: that one stays
 *                   enabled, the next enable is ENOTSUPP again.
 *
 * Needs okcov's personality at /sys/kernel/debug/kcov (SKIP on a kernel
 * with its own kcov) and no instrumented module loaded before it starts
 * (else the "no source" tests SKIP).
 */
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "okcov_linux.h"
#include "kallsyms.h"
#include "kmod_util.h"
#include "okcov_target.h"

#define NENT		(64UL << 10)	/* a whole number of pages */
#define RUN_FN		"okcov_target_run"
#define WORK_FN		"okcov_target_in_work"
/* A common handle of this binary's own. */
#define HANDLE		kcov_remote_handle(KCOV_SUBSYSTEM_COMMON, 0x3c)
/* Not a USB handle: EINVAL among KCOV_REMOTE_ENABLE's handles. */
#define BAD_HANDLE	kcov_remote_handle(KCOV_SUBSYSTEM_COMMON, 7)

static char no_run[256];	/* why none of the tests can run */
static char no_target[256];	/* why the target cannot be loaded here */
static bool target_at_start;	/* an instrumented module was there already */
static uint64_t kaslr;		/* what okcov subtracts from every PC */

/* An fd of LK_PATH, initialised with NENT entries and mapped. */
struct lc {
	int fd;
	uint64_t *buf;
};

static int lc_new(struct lc *c)
{
	c->buf = MAP_FAILED;
	c->fd = lk_open();
	if (c->fd < 0)
		return errno;
	if (lk_init(c->fd, NENT))
		return errno;
	c->buf = lk_map(c->fd, NENT, PROT_READ | PROT_WRITE);
	return c->buf == MAP_FAILED ? errno : 0;
}

static void lc_free(struct lc *c)
{
	if (c->buf != MAP_FAILED)
		munmap(c->buf, NENT * 8);
	if (c->fd >= 0)
		close(c->fd);
}

static bool in_fn(const struct ksym *s, const void *fn)
{
	return s->mod && !strcmp(s->mod, OKCOV_TARGET_NAME) &&
	       !strcmp(s->name, fn);
}

/*
 * Whether @c holds the record (type, a, b), either operand order, made in
 * the target's function @fn. Linux's PCs: less the KASLR offset, and the
 * return address of the hook's call, inside the function that compared.
 * Not lk_pc_canonical(): that is syzkaller's filter, and on 6.1-arm64 a
 * module's PC less the offset falls below its floor when the module lies
 * less than the offset above MODULES_VADDR, where 6.1's randomized 2 GiB
 * module window may reach (Linux's kcov gives the same PC there).
 */
static bool has_cmp(const struct lc *c, uint64_t type, uint64_t a,
		    uint64_t b, const char *fn)
{
	uint64_t i, n = __atomic_load_n(&c->buf[0], __ATOMIC_RELAXED);
	const uint64_t *r;

	if (n > (NENT - 1) / 4)
		n = (NENT - 1) / 4;
	for (i = 0; i < n; i++) {
		r = &c->buf[4 * i + 1];
		if (r[0] != type ||
		    !((r[1] == a && r[2] == b) || (r[1] == b && r[2] == a)))
			continue;
		if (ksyms_pc_matches(r[3] + kaslr, in_fn, fn))
			return true;
	}
	return false;
}

static void dump_cmp(const struct lc *c)
{
	uint64_t i, n = c->buf[0];
	char name[256];

	fprintf(stderr, "# %llu comparison records, kaslr 0x%llx\n",
		(unsigned long long)n, (unsigned long long)kaslr);
	for (i = 0; i < n && i < 32; i++)
		fprintf(stderr, "#   type %llu args %#llx %#llx pc %#llx: %s\n",
			(unsigned long long)c->buf[4 * i + 1],
			(unsigned long long)c->buf[4 * i + 2],
			(unsigned long long)c->buf[4 * i + 3],
			(unsigned long long)c->buf[4 * i + 4],
			ksyms_format(c->buf[4 * i + 4] + kaslr, name,
				     sizeof(name)));
}

/* ---- no source: no instrumented module loaded ---- */

/* Why the "no source" side cannot be tested here, or NULL. */
static const char *no_source_skip(void)
{
	if (no_run[0])
		return no_run;
	if (target_at_start)
		return "an instrumented module (" OKCOV_TARGET_NAME ") is loaded";
	return NULL;
}

/* INIT, mmap, ENABLE(TRACE_CMP): ENOTSUPP; the fd stays usable. */
TEST(no_source_enable)
{
	struct lc c;

	if (no_source_skip())
		SKIP(return, "%s", no_source_skip());
	ASSERT_EQ(0, lc_new(&c));
	ASSERT_EQ(ENOTSUPP, lk_enable(c.fd, KCOV_TRACE_CMP));
	ASSERT_EQ(ENOTSUPP, lk_enable(c.fd, KCOV_TRACE_CMP));
	/* still initialised: another mode enables it, and it records */
	ASSERT_EQ(0, lk_enable(c.fd, KCOV_TRACE_PC));
	c.buf[0] = 0;
	sys_getpid_n(1);
	ASSERT_EQ(0, lk_disable(c.fd));
	ASSERT_LT(0, c.buf[0]);
	/* and refused again once disabled */
	ASSERT_EQ(ENOTSUPP, lk_enable(c.fd, KCOV_TRACE_CMP));
	lc_free(&c);
}

/* Linux's order: the state's EINVAL, then the thread's EBUSY, then the mode. */
TEST(no_source_order)
{
	struct lc c, d;
	int fd;

	if (no_source_skip())
		SKIP(return, "%s", no_source_skip());
	fd = lk_open();
	ASSERT_LE(0, fd);
	/* not initialised */
	ASSERT_EQ(EINVAL, lk_enable(fd, KCOV_TRACE_CMP));
	close(fd);

	ASSERT_EQ(0, lc_new(&c));
	ASSERT_EQ(0, lc_new(&d));
	ASSERT_EQ(0, lk_enable(c.fd, KCOV_TRACE_PC));
	/* already enabled: EINVAL */
	ASSERT_EQ(EINVAL, lk_enable(c.fd, KCOV_TRACE_CMP));
	/* this thread traces with another fd: EBUSY */
	ASSERT_EQ(EBUSY, lk_enable(d.fd, KCOV_TRACE_CMP));
	ASSERT_EQ(0, lk_disable(c.fd));
	/* a mode that does not exist is still EINVAL */
	ASSERT_EQ(EINVAL, lk_enable(d.fd, 2));
	ASSERT_EQ(ENOTSUPP, lk_enable(d.fd, KCOV_TRACE_CMP));
	lc_free(&d);
	lc_free(&c);
}

/*
 * KCOV_REMOTE_ENABLE: EINVAL before INIT; then ENOTSUPP for TRACE_CMP,
 * before a bad handle's EINVAL; the fd stays initialised.
 */
TEST(no_source_remote)
{
	__u64 bad = BAD_HANDLE;
	struct lc c;
	int fd;

	if (no_source_skip())
		SKIP(return, "%s", no_source_skip());
	fd = lk_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(EINVAL, lk_remote_enable(fd, KCOV_TRACE_CMP, NENT, HANDLE,
					   0, NULL));
	close(fd);

	ASSERT_EQ(0, lc_new(&c));
	ASSERT_EQ(ENOTSUPP, lk_remote_enable(c.fd, KCOV_TRACE_CMP, NENT,
					     HANDLE, 0, NULL));
	ASSERT_EQ(ENOTSUPP, lk_remote_enable(c.fd, KCOV_TRACE_CMP, NENT,
					     HANDLE, 1, &bad));
	ASSERT_EQ(EINVAL, lk_remote_enable(c.fd, KCOV_TRACE_PC, NENT,
					   HANDLE, 1, &bad));
	ASSERT_EQ(0, lk_remote_enable(c.fd, KCOV_TRACE_PC, NENT, HANDLE,
				      0, NULL));
	ASSERT_EQ(0, lk_disable(c.fd));
	/* KCOV_DISABLE made it plain initialised again */
	ASSERT_EQ(ENOTSUPP, lk_enable(c.fd, KCOV_TRACE_CMP));
	lc_free(&c);
}

/* /dev/okcov keeps OpenBSD's rule: KIOENABLE takes TRACE_CMP regardless. */
TEST(no_source_openbsd)
{
	struct st_cov c;

	if (no_source_skip())
		SKIP(return, "%s", no_source_skip());
	ASSERT_EQ(0, st_new(&c, 64));
	ASSERT_EQ(0, st_enable(c.fd, KCOV_MODE_TRACE_CMP));
	sys_getpid_n(1);
	ASSERT_EQ(0, st_disable(c.fd));
	/* nothing produces comparisons */
	ASSERT_EQ(0, st_count(&c));
	st_free(&c);
}

/*
 * deep_cmp (x86_64): copies' comparisons are a source, whatever copies
 * exist, while it is set: enabled; once it is not, ENOTSUPP again.
 */
TEST(no_source_deep_cmp)
{
	char saved[8];
	struct lc c;

	if (no_source_skip())
		SKIP(return, "%s", no_source_skip());
	if (access("/sys/module/okcov/parameters/deep_cmp", W_OK))
		SKIP(return, "okcov has no deep_cmp parameter (x86_64's)");
	ASSERT_EQ(0, lc_new(&c));
	ASSERT_EQ(0, st_param_swap("deep_cmp", "1", saved, sizeof(saved)));
	EXPECT_EQ(0, lk_enable(c.fd, KCOV_TRACE_CMP));
	EXPECT_EQ(0, lk_disable(c.fd));
	EXPECT_EQ(0, st_param_set("deep_cmp", "0"));
	EXPECT_EQ(ENOTSUPP, lk_enable(c.fd, KCOV_TRACE_CMP));
	st_param_restore("deep_cmp", saved);
	lc_free(&c);
}

/* ---- source loaded: the test target ---- */

/* The target's threshold parameter, as it compares it. */
static uint64_t threshold(void)
{
	FILE *f = fopen("/sys/module/" OKCOV_TARGET_NAME "/parameters/threshold",
			"r");
	unsigned long long t = OKCOV_TARGET_THRESHOLD;

	if (f) {
		if (fscanf(f, "%llu", &t) != 1)
			t = OKCOV_TARGET_THRESHOLD;
		fclose(f);
	}
	return t;
}

/*
 * Load the target (kept loaded for the tests after this one: the harness
 * runs each test in a child of its own). Its comparisons with the value
 * arrive: v == MAGIC64 (8 bytes, a constant), v > threshold (8 bytes, two
 * variables), (u32)v == MAGIC32 (4 bytes, a constant), as okcov_sancov
 * finds them through /dev/okcov.
 */
TEST(source_loaded)
{
	/* okcov_sancov's value: each comparison is made, none folded */
	const uint64_t v = 0x005abeefdeadbeefULL;
	struct lc c;
	int tfd, err;

	if (no_run[0])
		SKIP(return, "%s", no_run);
	if (no_target[0])
		SKIP(return, "%s", no_target);
	if (!st_module_loaded(OKCOV_TARGET_NAME)) {
		err = st_kmod_insert(st_target_ko(), "");
		ASSERT_EQ(0, err) {
			TH_LOG("loading %s: %s", st_target_ko(),
			       strerror(-err));
		}
	}
	/* the target's symbols */
	ASSERT_EQ(0, ksyms_load());
	tfd = open(OKCOV_TARGET_PATH, O_RDWR);
	ASSERT_LE(0, tfd);

	ASSERT_EQ(0, lc_new(&c));
	ASSERT_EQ(0, lk_enable(c.fd, KCOV_TRACE_CMP));
	c.buf[0] = 0;
	ASSERT_LE(0, ioctl(tfd, OKCOV_TARGET_RUN, (unsigned long)v));
	ASSERT_EQ(0, lk_disable(c.fd));
	ASSERT_TRUE(has_cmp(&c, KCOV_CMP_SIZE(3) | KCOV_CMP_CONST,
			    OKCOV_TARGET_MAGIC64, v, RUN_FN)) {
		dump_cmp(&c);
	}
	ASSERT_TRUE(has_cmp(&c, KCOV_CMP_SIZE(3), threshold(), v, RUN_FN)) {
		dump_cmp(&c);
	}
	ASSERT_TRUE(has_cmp(&c, KCOV_CMP_SIZE(2) | KCOV_CMP_CONST,
			    OKCOV_TARGET_MAGIC32, (uint32_t)v, RUN_FN)) {
		dump_cmp(&c);
	}
	lc_free(&c);
	close(tfd);
}

/*
 * Remote: enabled too, and the deferred work's comparison arrives (the
 * work compares the file's value, WORK_MAGIC, with WORK_MAGIC).
 */
TEST(source_loaded_remote)
{
	struct lc c;
	int tfd;

	if (no_run[0])
		SKIP(return, "%s", no_run);
	if (!st_module_loaded(OKCOV_TARGET_NAME))
		SKIP(return, "no test target loaded: %s",
		     no_target[0] ? no_target : "source_loaded failed");
	ASSERT_EQ(0, ksyms_load());
	ASSERT_EQ(0, lc_new(&c));
	ASSERT_EQ(0, lk_remote_enable(c.fd, KCOV_TRACE_CMP, NENT, HANDLE,
				      0, NULL));
	tfd = open(OKCOV_TARGET_PATH, O_RDWR);
	ASSERT_LE(0, tfd);
	ASSERT_EQ(0, st_defer(tfd, OKCOV_DEFER_WORK));
	ASSERT_EQ(0, st_defer_wait(tfd));
	close(tfd);
	/* remote records are read after KCOV_DISABLE (okcov-linux(4)) */
	ASSERT_EQ(0, lk_disable(c.fd));
	ASSERT_TRUE(has_cmp(&c, KCOV_CMP_SIZE(3) | KCOV_CMP_CONST,
			    OKCOV_TARGET_WORK_MAGIC, OKCOV_TARGET_WORK_MAGIC,
			    WORK_FN)) {
		dump_cmp(&c);
	}
	lc_free(&c);
}

/* ---- source gone ---- */

/*
 * The target unloaded under an enabled descriptor (the race the man page
 * states): that one stays enabled until disabled; the next enable is
 * ENOTSUPP again, TRACE_PC still works.
 */
TEST(source_gone)
{
	struct lc c;
	int err;

	if (no_run[0])
		SKIP(return, "%s", no_run);
	if (target_at_start)
		SKIP(return, "%s was loaded before this test: not unloading it",
		     OKCOV_TARGET_NAME);
	if (!st_module_loaded(OKCOV_TARGET_NAME))
		SKIP(return, "no test target loaded: %s",
		     no_target[0] ? no_target : "source_loaded failed");
	ASSERT_EQ(0, lc_new(&c));
	ASSERT_EQ(0, lk_enable(c.fd, KCOV_TRACE_CMP));
	err = st_kmod_remove_wait(OKCOV_TARGET_NAME, 50);
	ASSERT_EQ(0, err) {
		TH_LOG("unloading %s: %s", OKCOV_TARGET_NAME, strerror(-err));
	}
	/* still enabled: a second enable is EINVAL, the disable works */
	ASSERT_EQ(EINVAL, lk_enable(c.fd, KCOV_TRACE_CMP));
	ASSERT_EQ(0, lk_disable(c.fd));
	ASSERT_EQ(ENOTSUPP, lk_enable(c.fd, KCOV_TRACE_CMP));
	ASSERT_EQ(0, lk_enable(c.fd, KCOV_TRACE_PC));
	ASSERT_EQ(0, lk_disable(c.fd));
	lc_free(&c);
}

/* ---- setup ---- */

/* A target this binary loaded and a failed test left behind goes. */
static void cleanup(void)
{
	if (!target_at_start && st_module_loaded(OKCOV_TARGET_NAME))
		st_kmod_remove_wait(OKCOV_TARGET_NAME, 50);
}

static void prepare(void)
{
	if (access(OKCOV_PATH, F_OK) || access(LK_PATH, F_OK)) {
		snprintf(no_run, sizeof(no_run), "no okcov or no %s", LK_PATH);
		return;
	}
	if (ksyms_load() || !lk_text()) {
		snprintf(no_run, sizeof(no_run), "no _text in /proc/kallsyms");
		return;
	}
	if (lk_native()) {
		snprintf(no_run, sizeof(no_run),
			 "CONFIG_KCOV kernel: %s is Linux's own", LK_PATH);
		return;
	}
	kaslr = lk_kaslr_offset();
	target_at_start = st_module_loaded(OKCOV_TARGET_NAME);
	if (!target_at_start && !st_target_ko())
		snprintf(no_target, sizeof(no_target),
			 "no test-target module (OKCOV_TARGET_KO unset)");
	atexit(cleanup);
}

OKCOV_HARNESS_MAIN(prepare);
