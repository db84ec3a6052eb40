// SPDX-License-Identifier: GPL-2.0
/*
 * Deep coverage (KIODEEP): kprobes at the block leaders of chosen
 * functions record those leaders into the attached thread's buffer.
 *
 *  target:   the test-target module's okcov_target_deep() has three
 *            blocks placed by hand (else, then, join); with a probe on
 *            each, a run with 1 records then and join and not else, a run
 *            with 0 else and join and not then: first through the int3s,
 *            then again once kprobes optimised what it can into jumps
 *            (each path tests the context its own way);
 *  refused:  a mid-instruction address (EILSEQ), a kprobe-blacklisted
 *            function (EINVAL), the function's entry (EINVAL), okcov's own
 *            text and a function the set leaves out (EACCES), an address
 *            in no function (ENXIO), a bad pointer (EFAULT), no address or
 *            an unknown flag (EINVAL), a caller without CAP_SYS_ADMIN
 *            (EPERM); all or none without KIO_DEEP_PARTIAL, each
 *            address's errno with it;
 *  cycles:   install and close, many times: the probes go with the last
 *            descriptor that installed any, none is left in kprobes'
 *            list, and one descriptor's close leaves another's (one that
 *            only asked for probes already there holds them too);
 *  unload:   the probes of a module go when it unloads;
 *  linux_abi: a Linux-ABI descriptor records leader + 5 less the KASLR
 *            offset, as Linux's kcov does a block;
 *  remote:   the process's remote descriptor records the leaders its
 *            work item (kworker) and timer (softirq) run, and none when
 *            they do not run them;
 *  leaders:  okcov-cover deep --list finds exactly the three leaders;
 *  cold:     leaders in a .cold part install when its parent is traced;
 *  optimiser_resumed: okcov-cover deep turns kprobe optimisation back
 *            on after pausing it for a large install;
 *  rate:     figures (probes installed and removed per second, cost of
 *            a hit), logged, not checked;
 *  buckets:  with OKCOV_DEEP_BUCKETS=N only (minutes under TCG): the cost
 *            of a hit, int3 and optimised, with about 100 other deep
 *            probes in kprobes' 64-bucket table and with N (the leaders
 *            of networking functions, or of the quoted globs of
 *            $OKCOV_DEEP_BUCKET_GLOBS), and how full the buckets of the
 *            leaders hit are; figures, logged, checked only for the
 *            probes going in and out;
 *  core:     dup()'s function in the core kernel, its leaders from
 *            okcov-cover: a good descriptor records a leader a bad one
 *            does not, and only leaders are recorded inside it (and its
 *            entry: call sites are off).
 *
 * Needs the test-target module (OKCOV_TARGET_KO) and x86_64; leaders and
 * core need okcov-cover next to this binary and objdump in the guest
 * (scripts/check adds the host's).
 */
#include <limits.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "okcov_test.h"
#include "kmod_util.h"
#include "okcov_target.h"
#include "okcov_tool.h"
#include "okcov_linux.h"

#define NENT		(64 << 10)

static char skip_reason[256];

static const char *const leader_name[] = { "else", "then", "join" };

/* KIODEEP of @n addresses: 0 or the errno; the out fields in @d. */
static int deep(int fd, const __u64 *addrs, uint32_t n, uint32_t flags,
		int32_t *errs, struct kio_deep *d)
{
	struct kio_deep tmp;

	if (!d)
		d = &tmp;
	memset(d, 0, sizeof(*d));
	d->addrs = (uintptr_t)addrs;
	d->errors = (uintptr_t)errs;
	d->count = n;
	d->flags = flags;
	return st_ioctl(fd, KIODEEP, d);
}

/*
 * The instruction after @fn's fentry call, where kprobes itself judges:
 * @fn + 5, or + 9 past a 4-byte endbr64 (or the nop IBT seals an unused
 * one into), as okcov's plan of @fn (/sys/kernel/debug/okcov/plan) says.
 */
static __u64 past_fentry(__u64 fn)
{
	unsigned long long x;
	unsigned int len, n = 0;
	__u64 first = 5;
	char line[128];
	FILE *f;

	f = st_inspect(ST_PLAN_FILE, fn);
	if (!f)
		return fn + 5;
	while (n < 1 && fgets(line, sizeof(line), f))
		if (sscanf(line, "insn %llx %u", &x, &len) == 2 && x == fn) {
			n++;
			if (len == 4)
				first = 9;
		}
	fclose(f);
	return fn + first;
}

static int deep1(int fd, __u64 addr)
{
	return deep(fd, &addr, 1, 0, NULL, NULL);
}

FIXTURE(deep) {
	struct st_cov c;
	int tfd;
	struct okcov_target_deep t;
	char copies[8];		/* deep_copies before the test */
};

FIXTURE_SETUP(deep)
{
	self->copies[0] = 0;
	self->c.fd = -1;
	self->c.buf = MAP_FAILED;
	self->tfd = -1;
	if (skip_reason[0])
		SKIP(return, "%s", skip_reason);
	/* The kprobe backend's tests: copies are okcov_redirect's. */
	ASSERT_EQ(0, st_param_swap("deep_copies", "0", self->copies,
				   sizeof(self->copies)));
	ASSERT_EQ(0, ksyms_load());
	ASSERT_EQ(0, st_new(&self->c, NENT));
	self->tfd = open(OKCOV_TARGET_PATH, O_RDWR);
	ASSERT_LE(0, self->tfd);
	ASSERT_EQ(0, st_ret(ioctl(self->tfd, OKCOV_TARGET_DEEP_LEADERS,
				  &self->t)));
}

FIXTURE_TEARDOWN(deep)
{
	st_param_restore("deep_copies", self->copies);
	st_free(&self->c);
	if (self->tfd >= 0)
		close(self->tfd);
}

/*
 * Run okcov_target_deep(@v) recorded by @c; check that exactly the
 * leaders in @want (bits of OKCOV_DEEP_*) were recorded, and the entry.
 */
static void run_check(struct __test_metadata *_metadata,
		      struct _test_data_deep *self, int v, unsigned int want)
{
	char b[160];
	uint64_t fn;
	int i;

	fn = ksyms_addr("okcov_target_deep", OKCOV_TARGET_NAME);
	ASSERT_NE(0, fn);
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	st_reset(&self->c);
	ASSERT_EQ(v == 1 ? 4 : 3,
		  ioctl(self->tfd, OKCOV_TARGET_DEEP_RUN, (unsigned long)v));
	ASSERT_EQ(0, st_disable(self->c.fd));
	/* The positive control: ftrace's entry record of the same call. */
	ASSERT_TRUE(st_recorded(&self->c, fn) || st_recorded(&self->c, fn + 4)) {
		TH_LOG("no entry of okcov_target_deep at %s",
		       ksyms_format(fn, b, sizeof(b)));
	}
	for (i = 0; i < OKCOV_DEEP_NLEADERS; i++) {
		EXPECT_EQ(!!(want & (1U << i)),
			  st_recorded(&self->c, self->t.leaders[i])) {
			TH_LOG("value %d: %s leader %s %s", v, leader_name[i],
			       ksyms_format(self->t.leaders[i], b, sizeof(b)),
			       want & (1U << i) ? "missing" : "recorded");
		}
	}
}

#define B(x)	(1U << OKCOV_DEEP_##x)

TEST_F(deep, target)
{
	struct kio_deep d;
	int kd, opt = 0, n, tries;

	/* 6.1's harness runs the test after a SKIP() in the setup. */
	if (_metadata->skip)
		return;
	kd = st_open();
	ASSERT_LE(0, kd);
	ASSERT_EQ(0, deep(kd, self->t.leaders, OKCOV_DEEP_NLEADERS, 0, NULL,
			  &d));
	EXPECT_EQ(OKCOV_DEEP_NLEADERS, d.installed);
	EXPECT_EQ(0, d.refused);
	ASSERT_EQ(OKCOV_DEEP_NLEADERS, st_kprobes_listed("okcov_target_deep", NULL));

	/* At once: most hits go through the int3 (optimising takes a while). */
	run_check(_metadata, self, 1, B(THEN) | B(JOIN));
	run_check(_metadata, self, 0, B(ELSE) | B(JOIN));
	/* A second install of the same addresses adds nothing. */
	ASSERT_EQ(0, deep(kd, self->t.leaders, 1, 0, NULL, &d));
	EXPECT_EQ(0, d.installed);

	for (tries = 0; tries < 50; tries++) {
		n = st_kprobes_listed("okcov_target_deep", &opt);
		if (opt == n)
			break;
		usleep(100 * 1000);
	}
	TH_LOG("%d of %d probes optimised", opt, n);
	EXPECT_LT(0, opt);
	run_check(_metadata, self, 1, B(THEN) | B(JOIN));
	run_check(_metadata, self, 0, B(ELSE) | B(JOIN));

	/* Not attached: nothing lands in the buffer. */
	st_reset(&self->c);
	ASSERT_EQ(4, ioctl(self->tfd, OKCOV_TARGET_DEEP_RUN, 1UL));
	EXPECT_EQ(0, st_count(&self->c));

	close(kd);
	EXPECT_EQ(0, st_kprobes_listed("okcov_target", NULL));
}

/*
 * KIO_DEEP_FUNCTIONS: okcov decodes the function itself (x86_64) and
 * installs exactly its leaders; okcov's own text and an address in no
 * function are refused per function, and all or none without
 * KIO_DEEP_PARTIAL.
 */
TEST_F(deep, functions)
{
	__u64 a[3];
	int32_t errs[3];
	struct kio_deep d;
	int kd, kd2;

	if (_metadata->skip)
		return;
	a[0] = ksyms_addr("okcov_target_deep", OKCOV_TARGET_NAME);
	a[1] = ksyms_addr("okcov_deep_ioctl", "okcov");
	a[2] = 1;
	ASSERT_NE(0, a[0]);
	ASSERT_NE(0, a[1]);
	kd = st_open();
	ASSERT_LE(0, kd);
#ifndef __x86_64__
	EXPECT_EQ(EOPNOTSUPP, deep(kd, a, 1, KIO_DEEP_FUNCTIONS, NULL, &d));
	close(kd);
	SKIP(return, "okcov decodes kernel text on x86_64 only");
#endif
	memset(errs, 0x55, sizeof(errs));
	ASSERT_EQ(0, deep(kd, a, 3, KIO_DEEP_FUNCTIONS | KIO_DEEP_PARTIAL,
			  errs, &d));
	EXPECT_EQ(0, errs[0]);
	EXPECT_EQ(-EACCES, errs[1]);
	EXPECT_EQ(-ENXIO, errs[2]);
	EXPECT_EQ(2, d.refused);
	/* Exactly the hand-placed leaders: no entry, nothing else. */
	EXPECT_EQ(OKCOV_DEEP_NLEADERS, d.installed);
	ASSERT_EQ(OKCOV_DEEP_NLEADERS, st_kprobes_listed("okcov_target_deep", NULL));
	run_check(_metadata, self, 1, B(THEN) | B(JOIN));
	run_check(_metadata, self, 0, B(ELSE) | B(JOIN));
	/* Again: nothing new. */
	ASSERT_EQ(0, deep(kd, a, 1, KIO_DEEP_FUNCTIONS, NULL, &d));
	EXPECT_EQ(0, d.installed);

	/* All or none: okcov's own text fails the call, nothing stays. */
	kd2 = st_open();
	ASSERT_LE(0, kd2);
	a[0] = ksyms_addr("okcov_target_flags", OKCOV_TARGET_NAME);
	ASSERT_NE(0, a[0]);
	EXPECT_EQ(EACCES, deep(kd2, a, 2, KIO_DEEP_FUNCTIONS, errs, &d));
	EXPECT_EQ(0, d.installed);
	EXPECT_EQ(0, st_kprobes_listed("okcov_target_flags", NULL));
	/* The control: the function alone has leaders to install. */
	ASSERT_EQ(0, deep(kd2, a, 1, KIO_DEEP_FUNCTIONS, NULL, &d));
	EXPECT_LT(0, d.installed);
	EXPECT_EQ(d.installed, st_kprobes_listed("okcov_target_flags", NULL));
	close(kd2);
	close(kd);
	EXPECT_EQ(0, st_kprobes_listed("okcov_target", NULL));
}

/* @fn() as a process without CAP_SYS_ADMIN: its exit status. */
static int unprivileged(int (*fn)(int), int arg)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		if (setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(100);
		_exit(fn(arg));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static int deep_leader_errno(int fd)
{
	uint64_t addr = 0xffffffff81000000ULL;

	return deep1(fd, addr);
}

TEST_F(deep, refused)
{
	static const char *const left_out[] = {
		"tick_program_event", "idle_cpu", "clockevents_program_event",
	};
	__u64 el = self->t.leaders[OKCOV_DEEP_ELSE];
	uint64_t own, fn, quiet = 0;
	__u64 three[3];
	int32_t errs[3];
	struct kio_deep d;
	unsigned int i;
	int kd;

	if (_metadata->skip)
		return;
	kd = st_open();
	ASSERT_LE(0, kd);
	fn = ksyms_addr("okcov_target_deep", OKCOV_TARGET_NAME);
	own = ksyms_addr("okcov_deep_hit", "okcov");
	ASSERT_NE(0, fn);
	ASSERT_NE(0, own);
	for (i = 0; i < ARRAY_SIZE(left_out) && !quiet; i++)
		quiet = ksyms_addr(left_out[i], NULL);
	ASSERT_NE(0, quiet);

	EXPECT_EQ(EILSEQ, deep1(kd, el + 1));
	EXPECT_EQ(EINVAL, deep1(kd, past_fentry(self->t.noprobe)));
	EXPECT_EQ(EINVAL, deep1(kd, fn));
	EXPECT_EQ(EACCES, deep1(kd, own + 1));
	EXPECT_EQ(EACCES, deep1(kd, quiet + 5));
	EXPECT_EQ(ENXIO, deep1(kd, 0x1000));
	EXPECT_EQ(EFAULT, deep(kd, (__u64 *)8, 1, 0, NULL, NULL));
	EXPECT_EQ(EINVAL, deep(kd, &el, 0, 0, NULL, NULL));
	EXPECT_EQ(EINVAL, deep(kd, &el, 1, 0x80, NULL, NULL));
	EXPECT_EQ(EPERM, unprivileged(deep_leader_errno, kd));
	EXPECT_EQ(0, st_kprobes_listed("okcov_target", NULL));

	/* All or none: the good address goes with the bad one. */
	three[0] = el;
	three[1] = el + 1;
	three[2] = 0x1000;
	EXPECT_EQ(EILSEQ, deep(kd, three, 3, 0, errs, &d));
	EXPECT_EQ(0, d.installed);
	EXPECT_EQ(0, errs[0]);
	EXPECT_EQ(-EILSEQ, errs[1]);
	EXPECT_EQ(0, st_kprobes_listed("okcov_target", NULL));

	/* Partial: what passes stays, each address says why. */
	memset(errs, 0x55, sizeof(errs));
	EXPECT_EQ(0, deep(kd, three, 3, KIO_DEEP_PARTIAL, errs, &d));
	EXPECT_EQ(1, d.installed);
	EXPECT_EQ(2, d.refused);
	EXPECT_EQ(0, errs[0]);
	EXPECT_EQ(-EILSEQ, errs[1]);
	EXPECT_EQ(-ENXIO, errs[2]);
	EXPECT_EQ(1, st_kprobes_listed("okcov_target_deep", NULL));
	close(kd);
	EXPECT_EQ(0, st_kprobes_listed("okcov_target", NULL));
}

TEST_F(deep, cycles)
{
	struct kio_deep d;
	int i, a, b;

	if (_metadata->skip)
		return;
	for (i = 0; i < 20; i++) {
		a = st_open();
		ASSERT_LE(0, a);
		ASSERT_EQ(0, deep(a, self->t.leaders, OKCOV_DEEP_NLEADERS, 0,
				  NULL, &d));
		ASSERT_EQ(OKCOV_DEEP_NLEADERS, d.installed);
		close(a);
		ASSERT_EQ(0, st_kprobes_listed("okcov_target", NULL));
	}
	/* Two installers: the probes stay until both are closed. */
	a = st_open();
	b = st_open();
	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	ASSERT_EQ(0, deep(a, self->t.leaders, 2, 0, NULL, NULL));
	ASSERT_EQ(0, deep(b, self->t.leaders + 1, 2, 0, NULL, &d));
	EXPECT_EQ(1, d.installed);
	close(a);
	EXPECT_EQ(3, st_kprobes_listed("okcov_target_deep", NULL));
	run_check(_metadata, self, 1, B(THEN) | B(JOIN));
	/* One that added nothing new holds them as well. */
	a = st_open();
	ASSERT_LE(0, a);
	ASSERT_EQ(0, deep(a, self->t.leaders, 1, 0, NULL, &d));
	EXPECT_EQ(0, d.installed);
	close(b);
	EXPECT_EQ(3, st_kprobes_listed("okcov_target_deep", NULL));
	close(a);
	EXPECT_EQ(0, st_kprobes_listed("okcov_target", NULL));
}

TEST_F(deep, unload)
{
	const char *ko = st_target_ko();
	int kd;

	if (_metadata->skip)
		return;
	if (!ko)
		SKIP(return, "OKCOV_TARGET_KO unset");
	kd = st_open();
	ASSERT_LE(0, kd);
	ASSERT_EQ(0, deep(kd, self->t.leaders, OKCOV_DEEP_NLEADERS, 0, NULL,
			  NULL));
	close(self->tfd);
	self->tfd = -1;
	ASSERT_EQ(0, st_kmod_remove_wait(OKCOV_TARGET_NAME, 50));
	EXPECT_EQ(0, st_kprobes_listed("okcov_target", NULL));
	ASSERT_EQ(0, st_kmod_insert(ko, ""));
	/* The descriptor that installed them closes without trouble. */
	close(kd);
	EXPECT_EQ(0, st_kprobes_listed("okcov_target", NULL));
}

/*
 * A Linux-ABI descriptor (okcov's /sys/kernel/debug/kcov) records a
 * leader as Linux's kcov would the block: leader + LK_PC_BACK less the
 * KASLR offset, so that syzkaller's pc - 5 lands on the leader.
 */
TEST_F(deep, linux_abi)
{
	bool got[OKCOV_DEEP_NLEADERS] = { false }, entry = false;
	uint64_t off, fn, *buf, i, n, pc;
	char b[160];
	int kd, lfd, j;

	if (_metadata->skip)
		return;
	if (lk_unusable())
		SKIP(return, "%s", lk_unusable());
	if (lk_native())
		SKIP(return, "the kernel's own kcov answers at " LK_PATH);
	off = lk_kaslr_offset();
	fn = ksyms_addr("okcov_target_deep", OKCOV_TARGET_NAME);
	ASSERT_NE(0, fn);
	kd = st_open();
	ASSERT_LE(0, kd);
	ASSERT_EQ(0, deep(kd, self->t.leaders, OKCOV_DEEP_NLEADERS, 0, NULL,
			  NULL));
	lfd = lk_open();
	ASSERT_LE(0, lfd);
	ASSERT_EQ(0, lk_init(lfd, NENT));
	buf = lk_map(lfd, NENT, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_EQ(0, lk_enable(lfd, KCOV_TRACE_PC));
	__atomic_store_n(&buf[0], 0, __ATOMIC_RELAXED);
	ASSERT_EQ(4, ioctl(self->tfd, OKCOV_TARGET_DEEP_RUN, 1UL));
	n = __atomic_load_n(&buf[0], __ATOMIC_RELAXED);
	ASSERT_EQ(0, lk_disable(lfd));
	ASSERT_GT(NENT - 1, n);
	for (i = 0; i < n; i++) {
		pc = buf[i + 1] + off - LK_PC_BACK;
		entry |= pc == fn || pc == fn + 4;
		for (j = 0; j < OKCOV_DEEP_NLEADERS; j++) {
			got[j] |= pc == self->t.leaders[j];
			/* never the raw address, as okcov's own ABI has it */
			EXPECT_NE(self->t.leaders[j], buf[i + 1]);
		}
	}
	/* The positive control: the entry, in the same form. */
	EXPECT_TRUE(entry);
	for (j = 0; j < OKCOV_DEEP_NLEADERS; j++) {
		bool want = j != OKCOV_DEEP_ELSE, g = got[j];
		__u64 l = self->t.leaders[j];

		EXPECT_EQ(want, g) {
			TH_LOG("%s leader %s %s", leader_name[j],
			       ksyms_format(l, b, sizeof(b)),
			       g ? "recorded" : "missing");
		}
	}
	munmap(buf, NENT * 8);
	close(lfd);
	close(kd);
	EXPECT_EQ(0, st_kprobes_listed("okcov_target", NULL));
}

/*
 * The process's remote descriptor records the leaders its deferred work
 * runs: in the work item (a kworker, through the int3's task path) and
 * in the timer (softirq); the same work without okcov_target_deep()
 * records none.
 */
TEST_F(deep, remote)
{
	static const unsigned long how[] = { OKCOV_DEFER_WORK, OKCOV_DEFER_TIMER };
	static const char *const src[] = {
		"okcov_target_in_work", "okcov_target_in_timer",
	};
	struct kio_remote_attach ra = { .subsystem = KCOV_REMOTE_COMMON };
	struct st_cov r;
	unsigned int k, d;
	int kd, j;

	if (_metadata->skip)
		return;
	kd = st_open();
	ASSERT_LE(0, kd);
	ASSERT_EQ(0, deep(kd, self->t.leaders, OKCOV_DEEP_NLEADERS, 0, NULL,
			  NULL));
	ASSERT_EQ(0, st_new(&r, NENT));
	ASSERT_EQ(0, st_ioctl(r.fd, KIOREMOTEATTACH, &ra));
	for (k = 0; k < ARRAY_SIZE(how); k++) {
		for (d = 0; d < 2; d++) {
			ASSERT_EQ(0, st_enable(r.fd, KCOV_MODE_TRACE_PC));
			st_reset(&r);
			ASSERT_EQ(0, st_defer(self->tfd,
					      how[k] | (d ? OKCOV_DEFER_DEEP : 0)));
			ASSERT_EQ(0, st_defer_wait(self->tfd));
			ASSERT_EQ(0, st_disable(r.fd));
			/* The positive control: the source's own function. */
			ASSERT_LT(0, st_target_hits(&r, src[k]));
			for (j = 0; j < OKCOV_DEEP_NLEADERS; j++) {
				bool want = d && j != OKCOV_DEEP_ELSE;

				EXPECT_EQ(want, st_recorded(&r, self->t.leaders[j])) {
					TH_LOG("%s%s: %s leader", src[k],
					       d ? " with the deep run" : "",
					       leader_name[j]);
					st_dump(&r, 40);
				}
			}
		}
	}
	st_free(&r);
	close(kd);
	EXPECT_EQ(0, st_kprobes_listed("okcov_target", NULL));
}

/*
 * The leaders okcov-cover deep --list computes for @fn: how many (at most
 * @max into @out), or -1.
 */
static int tool_leaders_args(const char *args, __u64 *out, int max)
{
	char cmd[PATH_MAX + 512], line[256];
	int n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s deep --list %s", tool, args);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p))
		if (n < max)
			out[n++] = strtoull(line, NULL, 16);
	if (pclose(p))
		return -1;
	return n;
}

static int tool_leaders(const char *fn, __u64 *out, int max)
{
	char q[256];

	snprintf(q, sizeof(q), "'%s'", fn);
	return tool_leaders_args(q, out, max);
}

/* okcov-cover deep finds exactly the hand-placed leaders. */
TEST_F(deep, leaders)
{
	__u64 got[16];
	char b[160];
	int n, i, j;

	if (_metadata->skip)
		return;
	if (tool_missing())
		SKIP(return, "%s", tool_missing());
	n = tool_leaders("okcov_target_deep", got, 16);
	ASSERT_EQ(OKCOV_DEEP_NLEADERS, n) {
		for (i = 0; i < n && i < 16; i++)
			TH_LOG("leader %s", ksyms_format(got[i], b, sizeof(b)));
	}
	for (i = 0; i < OKCOV_DEEP_NLEADERS; i++) {
		for (j = 0; j < n; j++)
			if (got[j] == self->t.leaders[i])
				break;
		EXPECT_LT(j, n) {
			TH_LOG("%s leader %s not found", leader_name[i],
			       ksyms_format(self->t.leaders[i], b, sizeof(b)));
		}
	}
}

/* Records of @c that are among @l (@n of them), as bits of @l's index. */
static uint64_t recorded_set(const struct st_cov *c, const __u64 *l, int n)
{
	uint64_t bits = 0;
	int i;

	for (i = 0; i < n && i < 64; i++)
		if (st_recorded(c, l[i]))
			bits |= 1ULL << i;
	return bits;
}

/*
 * A core-kernel function: dup()'s. A bad descriptor returns before
 * fget_raw()'s file is used; a good one goes on to get_unused_fd_flags()
 * and fd_install(): some leader records for the good one only, and every
 * record inside the function is one of its leaders.
 */
#define OPT_SYSCTL	"/proc/sys/debug/kprobes-optimization"

/* The sysctl's first character, or 0. */
static char opt_state(void)
{
	char v = 0;
	int fd = open(OPT_SYSCTL, O_RDONLY);

	if (fd >= 0) {
		if (read(fd, &v, 1) != 1)
			v = 0;
		close(fd);
	}
	return v;
}

/*
 * okcov-cover deep pauses kprobe optimisation while it installs more
 * than 64 leaders: it is on again by the time the command runs, with
 * the probes in place, and after.
 */
TEST_F(deep, optimiser_resumed)
{
	char cmd[PATH_MAX + 256], state = 0;
	int n, listed = -1;
	__u64 l[256];
	FILE *p;

	if (_metadata->skip)
		return;
	if (tool_missing())
		SKIP(return, "%s", tool_missing());
	if (opt_state() != '1')
		SKIP(return, OPT_SYSCTL " is not 1 here");
	/* The positive control: enough leaders for the pause. */
	n = tool_leaders("path_openat", l, 256) +
	    tool_leaders("link_path_walk", l, 256);
	ASSERT_LT(64, n);
	snprintf(cmd, sizeof(cmd),
		 "%s deep path_openat link_path_walk -- sh -c 'cat %s; grep -c path_openat %s'",
		 tool, OPT_SYSCTL, ST_KPROBES_LIST);
	p = popen(cmd, "r");
	ASSERT_NE(NULL, p);
	EXPECT_EQ(2, fscanf(p, " %c %d", &state, &listed));
	EXPECT_EQ(0, pclose(p));
	EXPECT_EQ('1', state);
	EXPECT_LT(0, listed);
	EXPECT_EQ('1', opt_state());
	EXPECT_EQ(0, st_kprobes_listed("path_openat", NULL));
}

TEST_F(deep, core)
{
	static const char *const names[] = { "__do_sys_dup", "__x64_sys_dup" };
	uint64_t bad, good, fn = 0;
	__u64 l[64];
	int32_t errs[64];
	struct kio_deep d;
	const struct ksym *s;
	const char *name = NULL;
	char b[160];
	uint64_t i;
	int n = 0, kd, fd;

	if (_metadata->skip)
		return;
	if (tool_missing())
		SKIP(return, "%s", tool_missing());
	for (i = 0; i < ARRAY_SIZE(names) && !fn; i++) {
		fn = ksyms_addr(names[i], NULL);
		name = names[i];
	}
	if (!fn)
		SKIP(return, "no dup() function of its own on this kernel");
	n = tool_leaders(name, l, 64);
	ASSERT_LT(1, n);
	ASSERT_GE(64, n);
	kd = st_open();
	ASSERT_LE(0, kd);
	ASSERT_EQ(0, deep(kd, l, n, KIO_DEEP_PARTIAL, errs, &d));
	TH_LOG("%s: %d leaders, %u installed, %u refused", name, n,
	       d.installed, d.refused);
	ASSERT_LT(1, d.installed);

	/* No call sites (read at KIOENABLE): only entries and leaders. */
	ASSERT_EQ(0, st_param_set("call_sites", "0"));
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	st_param_set("call_sites", "1");
	st_reset(&self->c);
	EXPECT_EQ(-1, dup(-1));
	bad = recorded_set(&self->c, l, n);
	st_reset(&self->c);
	fd = dup(0);
	good = recorded_set(&self->c, l, n);
	/* Inside the function, only leaders are recorded (and the entry). */
	for (i = 0; i < st_pcs(&self->c); i++) {
		uint64_t pc = self->c.buf[i + 1];
		int j;

		s = ksyms_lookup(pc, NULL);
		if (!s || s->addr != fn || pc <= fn + 4)
			continue;
		for (j = 0; j < n && l[j] != pc; j++)
			;
		EXPECT_LT(j, n) {
			TH_LOG("%s is no leader", ksyms_format(pc, b, sizeof(b)));
		}
	}
	ASSERT_EQ(0, st_disable(self->c.fd));
	ASSERT_LE(0, fd);
	close(fd);
	TH_LOG("leaders hit: bad fd 0x%llx, good fd 0x%llx",
	       (unsigned long long)bad, (unsigned long long)good);
	EXPECT_NE(0, good & ~bad);
	close(kd);
	EXPECT_EQ(0, st_kprobes_listed(name, NULL));
}

/* Is @fn in ftrace's list of traceable functions? */
static bool traceable(const char *fn)
{
	static const char *const lists[] = {
		"/sys/kernel/tracing/available_filter_functions",
		"/sys/kernel/debug/tracing/available_filter_functions",
	};
	char line[256];
	bool found = false;
	size_t len = strlen(fn);
	unsigned int i;
	FILE *f = NULL;

	for (i = 0; i < ARRAY_SIZE(lists) && !f; i++)
		f = fopen(lists[i], "r");
	while (f && !found && fgets(line, sizeof(line), f))
		found = !strncmp(line, fn, len) &&
			(line[len] == '\n' || line[len] == ' ');
	if (f)
		fclose(f);
	return found;
}

/*
 * A .cold part holds blocks of its parent: its leaders (okcov-cover finds
 * them with the parent's) install when the parent is traced. Of the first
 * core-kernel parts whose parent ftrace can trace, one at least must take
 * all its leaders (a parent the function set leaves out gives EACCES).
 */
TEST_F(deep, cold)
{
	char name[256], b[160];
	int tried = 0, took = 0, n, i, k, kd, err;
	__u64 l[256], cold[256];
	uint64_t addr, end;
	size_t j, sz;

	if (_metadata->skip)
		return;
	if (tool_missing())
		SKIP(return, "%s", tool_missing());
	kd = st_open();
	ASSERT_LE(0, kd);
	for (j = 0; tried < 8 && !took && j < ksyms_count(); j++) {
		const struct ksym *s = ksyms_get(j);

		sz = strlen(s->name);
		if (s->mod || sz < 6 || sz - 5 >= sizeof(name) ||
		    strcmp(s->name + sz - 5, ".cold"))
			continue;
		addr = s->addr;
		snprintf(name, sizeof(name), "%.*s", (int)(sz - 5), s->name);
		if (!traceable(name))
			continue;
		tried++;
		n = tool_leaders(name, l, 256);
		/* The part ends at the next symbol: ksyms knows it. */
		for (i = k = 0; i < n && i < 256; i++) {
			const struct ksym *p = ksyms_lookup(l[i], NULL);

			if (p && p->addr == addr)
				cold[k++] = l[i];
		}
		if (!k)
			continue;
		err = deep(kd, cold, k, 0, NULL, NULL);
		end = cold[0];
		TH_LOG("%s.cold: %d of %d leaders: %s", name, k, n,
		       err ? strerror(err) : "installed");
		EXPECT_TRUE(!err || err == EACCES) {
			TH_LOG("%s", ksyms_format(end, b, sizeof(b)));
		}
		took += !err;
	}
	close(kd);
	if (!tried)
		SKIP(return, "no .cold part of a traceable function");
	EXPECT_LT(0, took);
	EXPECT_EQ(0, st_kprobes_listed(".cold", NULL));
}

#define OPT_SYSCTL	"/proc/sys/debug/kprobes-optimization"

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int write_str(const char *path, const char *v)
{
	int fd = open(path, O_WRONLY), ok;

	if (fd < 0)
		return -errno;
	ok = write(fd, v, strlen(v)) == (ssize_t)strlen(v);
	close(fd);
	return ok ? 0 : -EIO;
}

/* Microseconds per OKCOV_TARGET_DEEP_RUN(1), the best of three rounds. */
static double per_call(int tfd, int n)
{
	double best = 1e30, t;
	int r, i;

	for (r = 0; r < 3; r++) {
		t = now_us();
		for (i = 0; i < n; i++)
			ioctl(tfd, OKCOV_TARGET_DEEP_RUN, 1UL);
		t = (now_us() - t) / n;
		if (t < best)
			best = t;
	}
	return best;
}

/* Install @n leaders, close, and log the rates: 0 or the errno. */
static int timed_install(struct __test_metadata *_metadata, const char *what,
			 const __u64 *l, int n, int32_t *errs)
{
	struct kio_deep d;
	double t, t2;
	int kd = st_open(), err;

	if (kd < 0)
		return errno;
	t = now_us();
	err = deep(kd, l, n, KIO_DEEP_PARTIAL, errs, &d);
	t = now_us() - t;
	t2 = now_us();
	close(kd);
	t2 = now_us() - t2;
	TH_LOG("%s: %d leaders, %u installed, %u refused: %.0f probes/s installed",
	       what, n, d.installed, d.refused, d.installed / (t / 1e6));
	TH_LOG("%s: %.0f probes/s removed (one batch, %.1f ms)", what,
	       d.installed / (t2 / 1e6), t2 / 1e3);
	return err;
}

/*
 * Figures, not limits (an emulated guest is slow and noisy): probes
 * installed and removed per second, for the leaders of vfs_* (or
 * $OKCOV_DEEP_RATE_GLOB), optimiser on and off; the cost of
 * a call of okcov_target_deep() (two of its leaders hit) with no probe,
 * with int3 probes and with optimised ones, for a thread that is not
 * attached and for one that records.
 */
TEST_F_TIMEOUT(deep, rate, 1200)
{
	static __u64 l[4096];
	int32_t *errs = calloc(4096, sizeof(*errs));
	double base, rec0, by3, rec3, byj, recj;
	int n, kd, opt, tries, i;
	char b[160];
	const char *glob = getenv("OKCOV_DEEP_RATE_GLOB");
	const int calls = 5000;

	if (_metadata->skip)
		return;
	if (tool_missing())
		SKIP(return, "%s", tool_missing());
	ASSERT_NE(NULL, errs);
	if (!glob || !*glob)
		glob = "vfs_*";
	n = tool_leaders(glob, l, 4096);
	ASSERT_LT(0, n);
	ASSERT_EQ(0, timed_install(_metadata, glob, l, n, errs));
	for (i = 0; i < n; i++) {
		if (errs[i])
			TH_LOG("refused %s: %s",
			       ksyms_format(l[i], b, sizeof(b)),
			       strerror(-errs[i]));
	}
	EXPECT_EQ(0, st_kprobes_listed("vfs_", NULL));
	/* The same with the optimiser off (it holds kprobes' mutex a while). */
	if (!write_str(OPT_SYSCTL, "0")) {
		EXPECT_EQ(0, timed_install(_metadata, "optimiser off", l, n,
					   errs));
		ASSERT_EQ(0, write_str(OPT_SYSCTL, "1"));
	}
	free(errs);

	base = per_call(self->tfd, calls);
	/* Recording costs the whole ioctl's entries too: its own baseline. */
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	rec0 = per_call(self->tfd, calls / 10);
	ASSERT_EQ(0, st_disable(self->c.fd));
	if (write_str(OPT_SYSCTL, "0"))
		SKIP(return, "no %s", OPT_SYSCTL);
	kd = st_open();
	ASSERT_LE(0, kd);
	ASSERT_EQ(0, deep(kd, self->t.leaders, OKCOV_DEEP_NLEADERS, 0, NULL,
			  NULL));
	by3 = per_call(self->tfd, calls);
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	rec3 = per_call(self->tfd, calls / 10);
	ASSERT_EQ(0, st_disable(self->c.fd));
	ASSERT_EQ(0, write_str(OPT_SYSCTL, "1"));
	for (tries = 0; tries < 50; tries++) {
		n = st_kprobes_listed("okcov_target_deep", &opt);
		if (opt == n)
			break;
		usleep(100 * 1000);
	}
	byj = per_call(self->tfd, calls);
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	recj = per_call(self->tfd, calls / 10);
	ASSERT_EQ(0, st_disable(self->c.fd));
	close(kd);
	TH_LOG("per call (2 leaders hit), no probe: %.2f us, %.2f us recording",
	       base, rec0);
	TH_LOG("int3: bystander +%.2f us, recording +%.2f us", by3 - base,
	       rec3 - rec0);
	TH_LOG("%d of %d optimised: bystander +%.2f us, recording +%.2f us",
	       opt, n, byj - base, recj - rec0);
}

/* kprobes' bucket of @addr: hash_ptr(addr, KPROBE_HASH_BITS), 6.1 to 7.x */
#define KPROBE_BUCKETS	64
static unsigned int kprobe_bucket(__u64 addr)
{
	return (addr * 0x61C8864680B583EBull) >> 58;
}

/* Wait (at most 900 s) until kprobes optimised what it will of @what. */
static int wait_optimised(const char *what, int *n)
{
	int opt = 0, last = -1, same = 0, tries;

	for (tries = 0; tries < 900 && same < 10; tries++) {
		*n = st_kprobes_listed(what, &opt);
		if (opt == *n)
			break;
		same = opt == last ? same + 1 : 0;
		last = opt;
		sleep(1);
	}
	return opt;
}

/*
 * The cost of a hit on okcov_target_deep()'s leaders (RUN(1) hits two),
 * all probes installed on @kd: int3s (optimiser off), then jumps, each in
 * microseconds per hit over @base, the call without probes.
 */
static void hit_cost(struct __test_metadata *_metadata, int tfd,
		     double base, double *c3, double *cj, int *opt)
{
	const int calls = 5000;
	int n, all;

	ASSERT_EQ(0, write_str(OPT_SYSCTL, "0"));
	for (n = 0; n < 900; n++) {	/* the unoptimiser done */
		st_kprobes_listed("", &all);
		if (!all)
			break;
		sleep(1);
	}
	*c3 = (per_call(tfd, calls) - base) / 2;
	ASSERT_EQ(0, write_str(OPT_SYSCTL, "1"));
	/* All of them: the optimiser's work would land in the timing. */
	wait_optimised("", &n);
	*opt = wait_optimised("okcov_target_deep", &n);
	*cj = (per_call(tfd, calls) - base) / 2;
}

#define MAX_PROBES	"/sys/module/okcov/parameters/deep_max_probes"

/* Leaders of functions the measurement does not run: networking. */
#define BUCKET_GLOBS	"'tcp_*' 'udp*' 'ip6*' 'inet6_*' 'xfrm*' 'ipv6_*' " \
			"'ip_*' 'inet_*' 'nf_*' 'netlink_*' 'sock_*' 'neigh_*'"

/*
 * A hit's cost against the kprobe table's fill. The int3 path looks its
 * probe up in a 64-bucket hash table (get_kprobe()) whose buckets take
 * new probes at their head: the target's leaders go in first, so that a
 * hit walks every other probe of its bucket, the worst case. An optimised
 * probe's jump reaches its handler without the table.
 */
TEST_F_TIMEOUT(deep, buckets, 3600)
{
	static __u64 l[65536];
	static int32_t errs[65536];
	unsigned int fill[KPROBE_BUCKETS], nb, few = 100;
	double c3[2], cj[2], base, t;
	const char *env = getenv("OKCOV_DEEP_BUCKETS");
	const char *globs = getenv("OKCOV_DEEP_BUCKET_GLOBS");
	int n, many, kd, opt[2], i, k, in[2];
	struct kio_deep d;
	char was[32];
	FILE *f;

	if (_metadata->skip)
		return;
	if (!env || !*env)
		SKIP(return, "OKCOV_DEEP_BUCKETS=N not set (a figure, minutes under TCG)");
	if (tool_missing())
		SKIP(return, "%s", tool_missing());
	many = atoi(env);
	ASSERT_LT(few, many);
	ASSERT_GE(65536 - 8, many);
	if (!globs || !*globs)
		globs = BUCKET_GLOBS;
	n = tool_leaders_args(globs, l, 65536);
	ASSERT_LT(few, n);
	if (n < many) {
		TH_LOG("only %d leaders in %s", n, globs);
		many = n;
	}
	f = fopen(MAX_PROBES, "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(was, sizeof(was), f));
	fclose(f);
	ASSERT_EQ(0, write_str(MAX_PROBES, "65536"));
	ASSERT_EQ(0, st_kprobes_listed("", NULL));
	base = per_call(self->tfd, 5000);
	for (k = 0; k < 2; k++) {
		int want = k ? many : few;

		memset(fill, 0, sizeof(fill));
		kd = st_open();
		ASSERT_LE(0, kd);
		/* Installing with the optimiser off is faster under TCG. */
		ASSERT_EQ(0, write_str(OPT_SYSCTL, "0"));
		ASSERT_EQ(0, deep(kd, self->t.leaders, OKCOV_DEEP_NLEADERS, 0,
				  NULL, NULL));
		t = now_us();
		ASSERT_EQ(0, deep(kd, l, want, KIO_DEEP_PARTIAL, errs, &d));
		t = now_us() - t;
		in[k] = d.installed;
		for (i = 0; i < want; i++)
			if (!errs[i])
				fill[kprobe_bucket(l[i])]++;
		TH_LOG("%u other probes installed (%u refused) in %.1f s",
		       d.installed, d.refused, t / 1e6);
		hit_cost(_metadata, self->tfd, base, &c3[k], &cj[k], &opt[k]);
		nb = fill[kprobe_bucket(self->t.leaders[1])] +
		     fill[kprobe_bucket(self->t.leaders[2])];
		TH_LOG("%d other probes (%.1f a bucket): a hit costs %.3f us as an int3, %.3f us optimised (%d of %d); the two hit walk %u others",
		       in[k], in[k] / 64.0, c3[k], cj[k], opt[k],
		       OKCOV_DEEP_NLEADERS, nb);
		for (i = 0, nb = 0; i < KPROBE_BUCKETS; i++)
			nb = fill[i] > nb ? fill[i] : nb;
		t = now_us();
		close(kd);
		TH_LOG("fullest bucket %u; %d probes removed in %.1f s", nb,
		       in[k] + OKCOV_DEEP_NLEADERS, (now_us() - t) / 1e6);
		EXPECT_EQ(0, st_kprobes_listed("", NULL));
	}
	TH_LOG("per call without probes %.3f us; from %d to %d other probes: int3 hit %+.3f us (%.2fx), optimised %+.3f us (%.2fx)",
	       base, in[0], in[1], c3[1] - c3[0],
	       c3[0] > 0 ? c3[1] / c3[0] : 0, cj[1] - cj[0],
	       cj[0] > 0 ? cj[1] / cj[0] : 0);
	ASSERT_EQ(0, write_str(MAX_PROBES, was));
}

static void prepare(void)
{
	struct okcov_target_deep t;
	char why[200];
	int fd;

	find_tool();
	if (st_target_load(why, sizeof(why))) {
		snprintf(skip_reason, sizeof(skip_reason), "%s", why);
		return;
	}
	fd = open(OKCOV_TARGET_PATH, O_RDWR);
	if (fd < 0 || ioctl(fd, OKCOV_TARGET_DEEP_LEADERS, &t))
		snprintf(skip_reason, sizeof(skip_reason),
			 "the test-target module has no deep function: %s",
			 strerror(errno));
	if (fd >= 0)
		close(fd);
	if (access(ST_KPROBES_LIST, R_OK) && !skip_reason[0])
		snprintf(skip_reason, sizeof(skip_reason), "no %s",
			 ST_KPROBES_LIST);
}

OKCOV_HARNESS_MAIN(prepare);
