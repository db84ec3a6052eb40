// SPDX-License-Identifier: GPL-2.0
/*
 * Fault injection (issue 17): every allocation and user copy of open,
 * KIOSETBUFSIZE, mmap, KIOENABLE (thread and remote), KIOREMOTEATTACH and
 * close fails in turn, through /proc/thread-self/fail-nth (see the
 * kernel's Documentation/fault-injection/fault-injection.rst, "Systematic
 * faults using fail-nth"): for n = 1, 2, ... write n, make the call, read
 * it back ("0": the nth fault site was hit and failed), until a call no
 * longer reaches an nth site. Each call must succeed or fail with ENOMEM
 * or EFAULT; a failed call leaves the descriptor as it was (the next
 * ioctl's exact result says so); and nothing leaks: okcov's descriptor
 * and entry counters come back to their baseline, and kmemleak (where the
 * kernel has it) reports nothing.
 *
 * fail-nth overrides each fault type's probability, interval and times
 * (which stay at probability 0: nothing else fails), but not its filters:
 * failslab and fail_page_alloc skip sleeping allocations and
 * fail_page_alloc highmem and order-0 ones unless told otherwise, which
 * would leave vmalloc_user() unfailable. SKIP without fail-nth (no
 * CONFIG_FAULT_INJECTION: every stock Debian kernel).
 */
#include "kselftest_harness.h"
#include "okcov_test.h"
#include "okcov_stats.h"

/*
 * Each sweep makes a few hundred calls, the first KIOENABLE installs the
 * ftrace hook, and the kernels that have fault injection are debug
 * kernels (KASAN, lockdep) under emulation: more than okcov_test.h's 120 s.
 */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 900

#define FAIL_NTH	"/proc/thread-self/fail-nth"
#define DEBUGFS		"/sys/kernel/debug/"
#define KMEMLEAK	DEBUGFS "kmemleak"

#define NENT		(8 << 10)	/* 64 KiB: 16 pages to fail */
#define MAX_NTH		5000		/* a call with more sites is a bug */

static char no_fault[128];
static bool filters_off;	/* sleeping and order-0 allocations may fail */

/* Write a debugfs knob; 0 or errno. */
static int knob(const char *name, const char *val)
{
	char path[128];
	int fd, err = 0;
	ssize_t len = strlen(val);

	snprintf(path, sizeof(path), DEBUGFS "%s", name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return errno;
	if (write(fd, val, len) != len)
		err = errno;
	close(fd);
	return err;
}

/* Set the fault-injection filters once (global knobs). */
static void prepare(void)
{
	static const char * const knobs[][2] = {
		{ "failslab/ignore-gfp-wait", "N" },
		{ "failslab/probability", "0" },
		{ "failslab/verbose", "0" },
		{ "fail_page_alloc/ignore-gfp-wait", "N" },
		{ "fail_page_alloc/ignore-gfp-highmem", "N" },
		{ "fail_page_alloc/min-order", "0" },
		{ "fail_page_alloc/probability", "0" },
		{ "fail_page_alloc/verbose", "0" },
		{ "fail_usercopy/probability", "0" },
		{ "fail_usercopy/verbose", "0" },
	};
	unsigned int i;
	int err;

	if (access(FAIL_NTH, F_OK)) {
		snprintf(no_fault, sizeof(no_fault),
			 "%s: %s (no CONFIG_FAULT_INJECTION)", FAIL_NTH,
			 strerror(errno));
		return;
	}
	filters_off = true;
	for (i = 0; i < ARRAY_SIZE(knobs); i++) {
		err = knob(knobs[i][0], knobs[i][1]);
		if (err) {
			fprintf(stderr, "# %s: %s (that fault type stays off)\n",
				knobs[i][0], strerror(err));
			filters_off = false;
		}
	}
	/* reports of before this test are not ours */
	if (!access(KMEMLEAK, F_OK))
		knob("kmemleak", "clear");
}

/* ---- one faulted call ---- */

static void nth_write(int nth, unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	/* its own copy_from_user may eat a leftover fault: then it is 0 */
	if (pwrite(nth, buf, len, 0) != len && n)
		abort();
}

/*
 * Whether the armed fault is still pending (not consumed), then disarm.
 * The read's own copy_to_user may consume a fault left pending at 1:
 * EFAULT then means it was still pending.
 */
static bool nth_pending(int nth)
{
	char buf[16] = "";
	bool pending;

	if (pread(nth, buf, sizeof(buf) - 1, 0) < 0)
		pending = errno == EFAULT;
	else
		pending = atoi(buf) != 0;
	nth_write(nth, 0);
	return pending;
}

/* The nth fault armed around op(arg); op returns 0 or an errno. */
static int faulted(int nth, unsigned int n, bool *consumed,
		   int (*op)(void *), void *arg)
{
	int err;

	nth_write(nth, n);
	err = op(arg);
	*consumed = !nth_pending(nth);
	return err;
}

/* What a sweep saw, for the log. */
struct sweep {
	const char *what;
	unsigned int n, ok, enomem, efault;
};

static void sweep_print(const struct sweep *w)
{
	/* the last call hit no site: not counted */
	fprintf(stderr, "# %s: %u faults injected: the call succeeded anyway %u times, ENOMEM %u, EFAULT %u\n",
		w->what, w->n - 1, w->ok - 1, w->enomem, w->efault);
}

/* Account one result: false if it is neither success, ENOMEM nor EFAULT. */
static bool sweep_add(struct sweep *w, int err)
{
	switch (err) {
	case 0:
		w->ok++;
		return true;
	case ENOMEM:
		w->enomem++;
		return true;
	case EFAULT:
		w->efault++;
		return true;
	default:
		fprintf(stderr, "# %s, fault %u: %s\n", w->what, w->n,
			strerror(err));
		return false;
	}
}

/* ---- the calls ---- */

struct call {
	struct st_cov c;
	int mode;
	void *map;
};

static int op_open(void *arg)
{
	struct call *k = arg;

	k->c.fd = open(OKCOV_PATH, O_RDWR);
	return k->c.fd < 0 ? errno : 0;
}

static int op_setbufsize(void *arg)
{
	struct call *k = arg;

	return st_setbufsize(k->c.fd, k->c.n);
}

static int op_mmap(void *arg)
{
	struct call *k = arg;

	k->map = mmap(NULL, st_map_len(k->c.n), PROT_READ | PROT_WRITE,
		      MAP_SHARED, k->c.fd, 0);
	return k->map == MAP_FAILED ? errno : 0;
}

static int op_enable(void *arg)
{
	struct call *k = arg;

	return st_enable(k->c.fd, k->mode);
}

static int op_rattach(void *arg)
{
	struct call *k = arg;
	struct kio_remote_attach ra = { .subsystem = KCOV_REMOTE_COMMON };

	return st_ioctl(k->c.fd, KIOREMOTEATTACH, &ra);
}

static int op_close(void *arg)
{
	struct call *k = arg;
	int fd = k->c.fd;

	k->c.fd = -1;
	return close(fd) ? errno : 0;
}

static int remote_attach(int fd)
{
	struct kio_remote_attach ra = { .subsystem = KCOV_REMOTE_COMMON };

	return st_ioctl(fd, KIOREMOTEATTACH, &ra);
}

static void call_free(struct call *k)
{
	if (k->map && k->map != MAP_FAILED)
		munmap(k->map, st_map_len(k->c.n));
	k->map = NULL;
	st_free(&k->c);
}

FIXTURE(fault) {
	int nth;
	struct st_stats base;
	struct sweep w;
	struct call k;
};

FIXTURE_SETUP(fault)
{
	self->nth = -1;
	memset(&self->k, 0, sizeof(self->k));
	self->k.c.fd = -1;
	self->k.c.n = NENT;
	self->k.mode = KCOV_MODE_TRACE_PC;
	memset(&self->w, 0, sizeof(self->w));
	if (no_fault[0])
		SKIP(return, "%s", no_fault);
	self->nth = open(FAIL_NTH, O_RDWR);
	ASSERT_LE(0, self->nth);
	self->base = st_stats_now();
	ASSERT_LE(0, self->base.descriptors);
	ASSERT_LE(0, self->base.entries);
}

FIXTURE_TEARDOWN(fault)
{
	call_free(&self->k);
	if (self->nth >= 0)
		close(self->nth);
}

/*
 * for (n = 1; the nth site was hit; n++): the loop of every test. Each
 * iteration sets the call up (outside the fault), runs it under fault n
 * (the body starts with SWEEP_STEP), checks, and frees the call. It
 * ends at the first call that hit no site, which must have succeeded.
 */
#define SWEEP(self, name)						\
	for ((self)->w = (struct sweep){ .what = (name), .n = 1 }; ;	\
	     (self)->w.n++, call_free(&(self)->k))

#define SWEEP_STEP(self) ASSERT_GT(MAX_NTH, (self)->w.n)

/* Counters back at baseline once everything is closed. */
static bool no_leak(const struct st_stats *base)
{
	struct st_stats now;

	if (st_stats_settle(base, &now, 5000))
		return true;
	fprintf(stderr, "# descriptors %lld -> %lld, entries %lld -> %lld\n",
		base->descriptors, now.descriptors, base->entries,
		now.entries);
	return false;
}

TEST_F(fault, open)
{
	bool consumed;
	int err;

	if (_metadata->skip)
		return;
	SWEEP(self, "open") {
		SWEEP_STEP(self);
		err = faulted(self->nth, self->w.n, &consumed, op_open,
			      &self->k);
		ASSERT_TRUE(sweep_add(&self->w, err));
		if (!err) {	/* a whole descriptor, NONE */
			ASSERT_EQ(EINVAL, st_mmap_err(self->k.c.fd, 4096,
						      PROT_READ, MAP_SHARED, 0));
			ASSERT_EQ(0, st_setbufsize(self->k.c.fd, NENT));
		}
		if (!consumed) {	/* no site left: it succeeded */
			ASSERT_EQ(0, err);
			call_free(&self->k);
			break;
		}
	}
	sweep_print(&self->w);
	ASSERT_TRUE(no_leak(&self->base));
}

TEST_F(fault, setbufsize)
{
	bool consumed;
	int err;

	if (_metadata->skip)
		return;
	SWEEP(self, "KIOSETBUFSIZE") {
		SWEEP_STEP(self);
		self->k.c.fd = st_open();
		ASSERT_LE(0, self->k.c.fd);
		err = faulted(self->nth, self->w.n, &consumed, op_setbufsize,
			      &self->k);
		ASSERT_TRUE(sweep_add(&self->w, err));
		if (err) {	/* still NONE: no buffer, not READY */
			ASSERT_EQ(EINVAL, st_mmap_err(self->k.c.fd,
						      st_map_len(NENT),
						      PROT_READ, MAP_SHARED, 0));
			ASSERT_EQ(EBUSY, st_enable(self->k.c.fd,
						   KCOV_MODE_TRACE_PC));
		}
		ASSERT_EQ(err ? 0 : EBUSY, st_setbufsize(self->k.c.fd, NENT));
		ASSERT_EQ(0, st_mmap_err(self->k.c.fd, st_map_len(NENT),
					 PROT_READ, MAP_SHARED, 0));
		if (!consumed) {	/* no site left: it succeeded */
			ASSERT_EQ(0, err);
			call_free(&self->k);
			break;
		}
	}
	sweep_print(&self->w);
	/* positive control: with the filters off, vmalloc_user() fails */
	if (filters_off)
		ASSERT_LT(0, self->w.enomem);
	ASSERT_TRUE(no_leak(&self->base));
}

TEST_F(fault, mmap)
{
	bool consumed;
	int err;

	if (_metadata->skip)
		return;
	SWEEP(self, "mmap") {
		SWEEP_STEP(self);
		self->k.c.fd = st_open();
		ASSERT_LE(0, self->k.c.fd);
		ASSERT_EQ(0, st_setbufsize(self->k.c.fd, NENT));
		err = faulted(self->nth, self->w.n, &consumed, op_mmap,
			      &self->k);
		ASSERT_TRUE(sweep_add(&self->w, err));
		if (err) {	/* still READY, and it maps now */
			ASSERT_EQ(EBUSY, st_setbufsize(self->k.c.fd, NENT));
			ASSERT_EQ(0, op_mmap(&self->k));
		}
		/* the mapping is the buffer: it records */
		ASSERT_EQ(0, st_enable(self->k.c.fd, KCOV_MODE_TRACE_PC));
		((uint64_t *)self->k.map)[0] = 0;
		sys_getpid_n(1);
		ASSERT_EQ(0, st_disable(self->k.c.fd));
		ASSERT_LT(0, ((uint64_t *)self->k.map)[0]);
		if (!consumed) {	/* no site left: it succeeded */
			ASSERT_EQ(0, err);
			call_free(&self->k);
			break;
		}
	}
	sweep_print(&self->w);
	ASSERT_TRUE(no_leak(&self->base));
}

static void enable_sweep(struct __test_metadata *_metadata,
			 struct _test_data_fault *self, int mode)
{
	bool consumed;
	int err;

	self->k.mode = mode;
	SWEEP(self, mode == KCOV_MODE_TRACE_PC ? "KIOENABLE TRACE_PC" :
						 "KIOENABLE TRACE_CMP") {
		SWEEP_STEP(self);
		ASSERT_EQ(0, st_new(&self->k.c, NENT));
		err = faulted(self->nth, self->w.n, &consumed, op_enable,
			      &self->k);
		ASSERT_TRUE(sweep_add(&self->w, err));
		if (err) {	/* still READY, this thread not attached */
			ASSERT_EQ(EBUSY, st_disable(self->k.c.fd));
			ASSERT_EQ(0, st_enable(self->k.c.fd, mode));
		}
		ASSERT_EQ(0, st_disable(self->k.c.fd));
		ASSERT_EQ(EBUSY, st_disable(self->k.c.fd));
		if (!consumed) {	/* no site left: it succeeded */
			ASSERT_EQ(0, err);
			call_free(&self->k);
			break;
		}
	}
	sweep_print(&self->w);
	ASSERT_TRUE(no_leak(&self->base));
}

TEST_F(fault, enable_pc)
{
	if (_metadata->skip)
		return;
	enable_sweep(_metadata, self, KCOV_MODE_TRACE_PC);
}

TEST_F(fault, enable_cmp)
{
	if (_metadata->skip)
		return;
	enable_sweep(_metadata, self, KCOV_MODE_TRACE_CMP);
}

TEST_F(fault, remote_attach)
{
	bool consumed;
	int err;

	if (_metadata->skip)
		return;
	SWEEP(self, "KIOREMOTEATTACH") {
		SWEEP_STEP(self);
		ASSERT_EQ(0, st_new(&self->k.c, NENT));
		err = faulted(self->nth, self->w.n, &consumed, op_rattach,
			      &self->k);
		ASSERT_TRUE(sweep_add(&self->w, err));
		/* failed: neither this fd nor the process has one yet */
		ASSERT_EQ(err ? 0 : EBUSY, remote_attach(self->k.c.fd));
		ASSERT_EQ(0, st_enable(self->k.c.fd, KCOV_MODE_TRACE_PC));
		ASSERT_EQ(0, st_disable(self->k.c.fd));
		if (!consumed) {	/* no site left: it succeeded */
			ASSERT_EQ(0, err);
			call_free(&self->k);
			break;
		}
	}
	sweep_print(&self->w);
	/* positive control: the argument's copy_from_user() fails */
	if (!access(DEBUGFS "fail_usercopy", F_OK))
		ASSERT_LT(0, self->w.efault);
	ASSERT_TRUE(no_leak(&self->base));
}

TEST_F(fault, remote_enable)
{
	struct st_cov d;
	bool consumed;
	int err;

	if (_metadata->skip)
		return;
	SWEEP(self, "remote KIOENABLE") {
		SWEEP_STEP(self);
		ASSERT_EQ(0, st_new(&self->k.c, NENT));
		ASSERT_EQ(0, remote_attach(self->k.c.fd));
		err = faulted(self->nth, self->w.n, &consumed, op_enable,
			      &self->k);
		ASSERT_TRUE(sweep_add(&self->w, err));
		if (err) {	/* still READY */
			ASSERT_EQ(EBUSY, st_disable(self->k.c.fd));
			ASSERT_EQ(0, st_enable(self->k.c.fd,
					       KCOV_MODE_TRACE_PC));
		}
		/* TRACE, and no thread attached: this one may enable */
		ASSERT_EQ(EBUSY, st_enable(self->k.c.fd, KCOV_MODE_TRACE_PC));
		ASSERT_EQ(0, st_new(&d, 64));
		ASSERT_EQ(0, st_enable(d.fd, KCOV_MODE_TRACE_PC));
		ASSERT_EQ(0, st_disable(d.fd));
		st_free(&d);
		ASSERT_EQ(0, st_disable(self->k.c.fd));
		if (!consumed) {	/* no site left: it succeeded */
			ASSERT_EQ(0, err);
			call_free(&self->k);
			break;
		}
	}
	sweep_print(&self->w);
	ASSERT_TRUE(no_leak(&self->base));
}

/* The states a close may find, set up outside the fault. */
enum close_state {
	CLOSE_NONE,
	CLOSE_READY,
	CLOSE_TRACE,		/* closed while enabled: DYING, thread exits */
	CLOSE_REMOTE_TRACE,
};

struct close_case {
	enum close_state state;
	unsigned int n;
	bool consumed;
	int err, setup;
};

/* In a thread of its own: a close while TRACE leaves it DYING. */
static int close_in_thread(void *arg)
{
	struct close_case *cc = arg;
	struct call k = { .c = { .fd = -1, .n = NENT } };
	int nth = open(FAIL_NTH, O_RDWR);

	if (nth < 0)
		return errno;
	cc->setup = 0;
	if (cc->state != CLOSE_NONE) {
		cc->setup = st_new(&k.c, NENT);
	} else {
		k.c.fd = st_open();
		if (k.c.fd < 0)
			cc->setup = errno;
	}
	if (!cc->setup && cc->state == CLOSE_REMOTE_TRACE)
		cc->setup = remote_attach(k.c.fd);
	if (!cc->setup && (cc->state == CLOSE_TRACE ||
			   cc->state == CLOSE_REMOTE_TRACE))
		cc->setup = st_enable(k.c.fd, KCOV_MODE_TRACE_PC);
	if (!cc->setup && k.c.buf && k.c.buf != MAP_FAILED) {
		munmap(k.c.buf, st_map_len(NENT));
		k.c.buf = MAP_FAILED;
	}
	if (!cc->setup)
		cc->err = faulted(nth, cc->n, &cc->consumed, op_close, &k);
	st_free(&k.c);
	close(nth);
	return 0;
}

TEST_F(fault, close)
{
	static const char * const names[] = {
		"close NONE", "close READY", "close TRACE (DYING)",
		"close remote TRACE",
	};
	struct close_case cc;
	unsigned int s;

	if (_metadata->skip)
		return;
	for (s = CLOSE_NONE; s <= CLOSE_REMOTE_TRACE; s++) {
		SWEEP(self, names[s]) {
			SWEEP_STEP(self);
			cc = (struct close_case){ .state = s, .n = self->w.n };
			ASSERT_EQ(0, st_in_thread(close_in_thread, &cc));
			ASSERT_EQ(0, cc.setup);
			/* close() itself cannot fail */
			ASSERT_EQ(0, cc.err);
			ASSERT_TRUE(sweep_add(&self->w, cc.err));
			if (!cc.consumed) {	/* no site left: it succeeded */
				ASSERT_EQ(0, cc.err);
				call_free(&self->k);
				break;
			}
		}
		sweep_print(&self->w);
		ASSERT_TRUE(no_leak(&self->base));
	}
}

/*
 * Last (a fixture declared after the others: the harness runs plain TEST()s
 * first): kmemleak finds nothing unreferenced. Objects younger than its
 * minimum age (5 s) are not reported, hence two scans apart.
 */
FIXTURE(leak) {
};

FIXTURE_SETUP(leak)
{
}

FIXTURE_TEARDOWN(leak)
{
}

TEST_F(leak, kmemleak_clean)
{
	char line[512];
	int lines = 0;
	FILE *f;

	if (no_fault[0])
		SKIP(return, "%s", no_fault);
	if (access(KMEMLEAK, F_OK))
		SKIP(return, "no %s (no CONFIG_DEBUG_KMEMLEAK)", KMEMLEAK);
	ASSERT_EQ(0, knob("kmemleak", "scan"));
	sleep(6);
	ASSERT_EQ(0, knob("kmemleak", "scan"));
	f = fopen(KMEMLEAK, "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		fprintf(stderr, "# kmemleak: %s", line);
		lines++;
	}
	fclose(f);
	ASSERT_EQ(0, lines);
}

OKCOV_HARNESS_MAIN(prepare);
