// SPDX-License-Identifier: GPL-2.0
/*
 * Deep coverage through instrumented copies (deep_copies=1, x86_64): a
 * traced call of a deep function runs okcov's copy of it, which records
 * the leaders KIODEEP was given; everyone else runs the function.
 *
 *  same:      for okcov_target_deep(), _flags(), _sleep(), _uaccess()
 *             (a load that reads, then one that faults: its fixup runs
 *             in the copy) and _switched() (a switch, with its jump
 *             table where the kernel makes them: the copy's own, counted
 *             in jumps), each value records the same leaders in the same
 *             order, and returns the same, through copies as through
 *             kprobes (the reference backend, deep_copies=0), with no
 *             kprobe installed and every call counted as entering a
 *             copy;
 *  bystander: a thread that is not attached runs the function, not the
 *             copy (the copies' entry count stays), beside an attached
 *             one whose call enters it and records;
 *  fallback:  a function the copier refuses (okcov_target_trap(): an
 *             int3, EBUSY) gets kprobes instead, which record its
 *             leaders;
 *  uaccess:   okcov_target_uaccess() (an inline user access) is copied,
 *             runs and records; a fault at its load returns EFAULT, its
 *             entry counted among those whose fixup is in the copy;
 *  keyed:     a jump label switched after the copy was made withdraws
 *             the copy (stale), and the next call, at once, takes the
 *             new branch; a KIODEEP for the new text's leaders copies
 *             it, and its calls record again;
 *  cold:      a function's .cold part, below it or above, goes into its
 *             copy with it, no kprobe;
 *  warn:      a copied function's WARN_ON() that fires (panic_on_warn off
 *             for it) is a warning at the original function, and the
 *             call returns what the original does;
 *  core:      the read, write, open, dup and pipe paths' core kernel
 *             functions (their leaders from okcov's plan): over three
 *             runs of a workload each, a leader one backend records every
 *             time the other records too (the kprobe backend taking what
 *             copies refuse); every call returns what it should, and a
 *             bad user pointer still gets EFAULT;
 *  foreign:   a function whose inline static call calls another
 *             module's function is refused (EXDEV) and gets kprobes;
 *             with that call retargeted, it is copied;
 *  unwind:    a stack trace of a thread asleep in a copy goes through
 *             the copy's frame to the syscall entry, and the frame file
 *             maps that frame back into the original function;
 *  blocked:   a thread sleeping inside a copy while its descriptor is
 *             closed (the copies unpublished) keeps okcov holding itself
 *             loaded ("pinned", rmmod EAGAIN), wakes and finishes in the
 *             copy with the right result; then the pin goes, the
 *             function's text read from /proc/kcore is what it was
 *             before the copy (past the fentry site, ftrace's), and
 *             okcov unloads.
 *
 * Needs the test-target module, x86_64 and debugfs; reloads okcov first
 * (a fresh pool) and in blocked.
 */
#include <elf.h>
#include <limits.h>
#include <pthread.h>
#include <sys/klog.h>

#include "kselftest_harness.h"
#include "okcov_test.h"
#include "kmod_util.h"
#include "okcov_target.h"

#define NENT		(64 << 10)
#define MAXL		64

static char skip_reason[256];

/* The switches' jump tables okcov's plan of the function at @fn follows, or -1. */
static int plan_tables(uint64_t fn)
{
	char line[256], *at;
	int n = -1;
	FILE *f;

	f = st_inspect(ST_PLAN_FILE, fn);
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		at = strstr(line, " tables ");
		if (!strncmp(line, "size ", 5) && at &&
		    sscanf(at, " tables %d", &n) != 1)
			n = -1;
	}
	fclose(f);
	return n;
}

static int deep(int fd, const __u64 *addrs, uint32_t n, struct kio_deep *d)
{
	memset(d, 0, sizeof(*d));
	d->addrs = (uintptr_t)addrs;
	d->count = n;
	return st_ioctl(fd, KIODEEP, d);
}

/*
 * KIODEEP of the function at @start, its leaders okcov's plan's, those
 * that can be (kprobes may refuse a leader the copy would take).
 */
static int deep_function(int fd, uint64_t start, struct kio_deep *d)
{
	__u64 addr = start;

	memset(d, 0, sizeof(*d));
	d->addrs = (uintptr_t)&addr;
	d->count = 1;
	d->flags = KIO_DEEP_FUNCTIONS | KIO_DEEP_PARTIAL;
	return st_ioctl(fd, KIODEEP, d);
}

/* One function under test, and what a run of it recorded. */
struct fn {
	const char *name;
	uint64_t start, end;
	__u64 leader[MAXL];
	int n;
};

/*
 * Run @cmd(@arg) on the target with @c enabled: its result in *@ret, and
 * the PCs recorded inside @f (leaders: the entry is ftrace's) in @seq.
 */
static int run(struct st_cov *c, int tfd, unsigned long cmd,
	       unsigned long arg, const struct fn *f, uint64_t *seq, long *ret)
{
	uint64_t i, n;
	int k = 0;

	if (st_enable(c->fd, KCOV_MODE_TRACE_PC))
		return -1;
	st_reset(c);
	*ret = ioctl(tfd, cmd, arg);
	if (st_disable(c->fd))
		return -1;
	n = st_pcs(c);
	for (i = 0; i < n && k < MAXL; i++)
		if (c->buf[i + 1] > f->start + 8 && c->buf[i + 1] < f->end)
			seq[k++] = c->buf[i + 1];
	return k;
}

FIXTURE(redirect) {
	struct st_cov c;
	int tfd;
	struct okcov_target_funcs funcs;
	char copies[8];		/* deep_copies before the test */
};

FIXTURE_SETUP(redirect)
{
	self->copies[0] = 0;
	self->c.fd = -1;
	self->c.buf = MAP_FAILED;
	self->tfd = -1;
	if (skip_reason[0])
		SKIP(return, "%s", skip_reason);
	ASSERT_EQ(0, st_new(&self->c, NENT));
	self->tfd = open(OKCOV_TARGET_PATH, O_RDWR);
	ASSERT_LE(0, self->tfd);
	ASSERT_EQ(0, st_ret(ioctl(self->tfd, OKCOV_TARGET_FUNCS,
				  &self->funcs)));
	ASSERT_EQ(0, st_param_swap("deep_copies", "1", self->copies,
				   sizeof(self->copies)));
}

FIXTURE_TEARDOWN(redirect)
{
	st_param_restore("deep_copies", self->copies);
	st_free(&self->c);
	if (self->tfd >= 0)
		close(self->tfd);
}

static void fn_init(struct __test_metadata *_metadata, struct fn *f,
		    const char *name, uint64_t start)
{
	f->name = name;
	f->start = start;
	f->n = st_plan_leaders(start, f->leader, MAXL, &f->end);
	ASSERT_LT(0, f->n) {
		TH_LOG("%s: no leaders in okcov's plan (%d)", name, f->n);
	}
	ASSERT_LT(start, f->end);
}

/* Each value's run through the backend deep_copies=@copies gives. */
static void backend_runs(struct __test_metadata *_metadata,
			 struct _test_data_redirect *self, const struct fn *f,
			 unsigned long cmd, const unsigned long *args, int nargs,
			 bool copies, uint64_t (*seq)[MAXL], int *nseq,
			 long *ret)
{
	struct kio_deep d;
	long entered;
	int kd, i;

	ASSERT_EQ(0, st_param_set("deep_copies", copies ? "1" : "0"));
	kd = st_open();
	ASSERT_LE(0, kd);
	ASSERT_EQ(0, deep(kd, f->leader, f->n, &d));
	EXPECT_EQ(f->n, d.installed);
	EXPECT_EQ(copies ? 0 : f->n, st_kprobes_listed(f->name, NULL));
	entered = st_copies_stat("entered");
	for (i = 0; i < nargs; i++) {
		nseq[i] = run(&self->c, self->tfd, cmd, args[i], f, seq[i],
			      &ret[i]);
		ASSERT_LE(0, nseq[i]);
	}
	/* Through copies, every run entered one; through kprobes none. */
	EXPECT_EQ(copies ? nargs : 0, st_copies_stat("entered") - entered);
	EXPECT_EQ(copies ? 1 : 0, st_copies_stat("published") > 0);
	close(kd);
	EXPECT_EQ(0, st_copies_stat("published"));
	EXPECT_EQ(0, st_kprobes_listed(f->name, NULL));
}

static void same(struct __test_metadata *_metadata,
		 struct _test_data_redirect *self, const char *name,
		 uint64_t start, unsigned long cmd, const unsigned long *args,
		 int nargs)
{
	uint64_t sc[4][MAXL], sk[4][MAXL];
	int nc[4], nk[4], i, j, recorded = 0;
	long rc[4], rk[4];
	struct fn f;

	fn_init(_metadata, &f, name, start);
	backend_runs(_metadata, self, &f, cmd, args, nargs, true, sc, nc, rc);
	backend_runs(_metadata, self, &f, cmd, args, nargs, false, sk, nk, rk);
	for (i = 0; i < nargs; i++) {
		EXPECT_EQ(rk[i], rc[i]) {
			TH_LOG("%s(%#lx): copy returned %ld, original %ld",
			       name, args[i], rc[i], rk[i]);
		}
		EXPECT_EQ(nk[i], nc[i]) {
			TH_LOG("%s(%#lx): copy recorded %d leaders, kprobes %d",
			       name, args[i], nc[i], nk[i]);
		}
		for (j = 0; j < nc[i] && j < nk[i]; j++)
			EXPECT_EQ(sk[i][j], sc[i][j]) {
				TH_LOG("%s(%#lx): record %d: copy %#llx, kprobe %#llx",
				       name, args[i], j,
				       (unsigned long long)sc[i][j],
				       (unsigned long long)sk[i][j]);
			}
		recorded += nc[i];
	}
	/* The positive control: the runs recorded leaders at all. */
	EXPECT_LT(0, recorded);
	TH_LOG("%s: %d leaders, %d records over %d runs", name, f.n, recorded,
	       nargs);
}

TEST_F(redirect, same)
{
	static const unsigned long deep_args[] = { 0, 1, 2 };
	static const unsigned long flag_args[] = { 0, 1, 2 };
	static const unsigned long sleep_args[] = { 1 << 16, 2 << 16, 7 << 16 };
	static const unsigned long switch_args[] = { 1, 4, 7, 100 };
	static uint64_t value = 41;
	unsigned long uaccess_args[2];
	void *gone;
	int tables;

	if (_metadata->skip)
		return;
	/* A user address that reads 41, then one with nothing mapped. */
	gone = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, gone);
	ASSERT_EQ(0, munmap(gone, 4096));
	uaccess_args[0] = (unsigned long)&value;
	uaccess_args[1] = (unsigned long)gone;
	same(_metadata, self, "okcov_target_deep", self->funcs.deep,
	     OKCOV_TARGET_DEEP_RUN, deep_args, 3);
	same(_metadata, self, "okcov_target_flags", self->funcs.flags,
	     OKCOV_TARGET_FLAGS_RUN, flag_args, 3);
	same(_metadata, self, "okcov_target_sleep", self->funcs.sleep,
	     OKCOV_TARGET_SLEEP_RUN, sleep_args, 3);
	/* The fault's fixup runs in the copy: the same leaders after it. */
	same(_metadata, self, "okcov_target_uaccess", self->funcs.uaccess,
	     OKCOV_TARGET_UACCESS_RUN, uaccess_args, 2);
	/* Its cases run in the copy: the copy's own jump table, if any. */
	same(_metadata, self, "okcov_target_switched", self->funcs.switched,
	     OKCOV_TARGET_SWITCH_RUN, switch_args, 4);
	tables = plan_tables(self->funcs.switched);
	ASSERT_LE(0, tables);
	if (tables)
		EXPECT_LE(1, st_copies_stat("jumps"));
	TH_LOG("okcov_target_switched: %d jump tables (none with retpolines)",
	       tables);
}

static int bystander_calls(void *arg)
{
	int tfd = *(int *)arg, i;

	for (i = 0; i < 100; i++)
		if (ioctl(tfd, OKCOV_TARGET_DEEP_RUN, 1UL) != 4)
			return -1;
	return 0;
}

TEST_F(redirect, bystander)
{
	uint64_t seq[MAXL];
	struct kio_deep d;
	long entered, ret;
	struct fn f;
	int kd;

	if (_metadata->skip)
		return;
	fn_init(_metadata, &f, "okcov_target_deep", self->funcs.deep);
	kd = st_open();
	ASSERT_LE(0, kd);
	ASSERT_EQ(0, deep(kd, f.leader, f.n, &d));
	/* Attached (enabled, then disabled, in this thread): not now. */
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(0, st_disable(self->c.fd));
	entered = st_copies_stat("entered");
	ASSERT_EQ(0, st_in_thread(bystander_calls, &self->tfd));
	EXPECT_EQ(entered, st_copies_stat("entered"));
	/* The positive control: an attached call enters and records. */
	EXPECT_LT(0, run(&self->c, self->tfd, OKCOV_TARGET_DEEP_RUN, 1, &f,
			 seq, &ret));
	EXPECT_EQ(4, ret);
	EXPECT_EQ(entered + 1, st_copies_stat("entered"));
	close(kd);
}

/* A function the copier refuses (an int3: EBUSY) is kprobes'. */
TEST_F(redirect, fallback)
{
	uint64_t seq[MAXL];
	struct kio_deep d;
	long refused, ret;
	struct fn f;
	int kd, n;

	if (_metadata->skip)
		return;
	fn_init(_metadata, &f, "okcov_target_trap", self->funcs.trap);
	refused = st_copies_stat("refused EBUSY");
	kd = st_open();
	ASSERT_LE(0, kd);
	ASSERT_EQ(0, deep(kd, f.leader, f.n, &d));
	EXPECT_EQ(f.n, d.installed);
	EXPECT_EQ(refused + 1, st_copies_stat("refused EBUSY"));
	EXPECT_EQ(f.n, st_kprobes_listed(f.name, NULL));
	n = run(&self->c, self->tfd, OKCOV_TARGET_TRAP_RUN, 40, &f, seq, &ret);
	EXPECT_EQ(42, ret);
	EXPECT_LT(0, n);
	close(kd);
	EXPECT_EQ(0, st_kprobes_listed(f.name, NULL));
}

/*
 * An inline user access in a copy (stac, a load with its
 * exception-table entry, clac): copied, and a fault there returns
 * -EFAULT, through okcov's entry for the copy's load, which goes on at
 * the fixup in the copy (counted: faults; same checks what it records).
 */
TEST_F(redirect, uaccess)
{
	uint64_t seq[MAXL], value = 41;
	long entered, refused, ret;
	struct kio_deep d;
	struct fn f;
	void *gone;
	int kd, n;

	if (_metadata->skip)
		return;
	fn_init(_metadata, &f, "okcov_target_uaccess", self->funcs.uaccess);
	/* A user address with nothing mapped: the load faults. */
	gone = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, gone);
	ASSERT_EQ(0, munmap(gone, 4096));
	refused = st_copies_stat("refused EOPNOTSUPP");
	kd = st_open();
	ASSERT_LE(0, kd);
	ASSERT_EQ(0, deep(kd, f.leader, f.n, &d));
	EXPECT_EQ(f.n, d.installed);
	EXPECT_EQ(refused, st_copies_stat("refused EOPNOTSUPP"));
	EXPECT_EQ(0, st_kprobes_listed(f.name, NULL));
	/* This copy's load at least, whichever test copied it first. */
	EXPECT_LE(1, st_copies_stat("faults"));
	entered = st_copies_stat("entered");
	/* The positive control: the copy runs, reads and records. */
	n = run(&self->c, self->tfd, OKCOV_TARGET_UACCESS_RUN,
		(unsigned long)&value, &f, seq, &ret);
	EXPECT_EQ(42, ret);
	EXPECT_LT(0, n);
	EXPECT_EQ(entered + 1, st_copies_stat("entered"));
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	errno = 0;
	ret = ioctl(self->tfd, OKCOV_TARGET_UACCESS_RUN, (unsigned long)gone);
	EXPECT_EQ(-1, ret);
	EXPECT_EQ(EFAULT, errno);
	ASSERT_EQ(0, st_disable(self->c.fd));
	EXPECT_EQ(entered + 2, st_copies_stat("entered"));
	close(kd);
}

/*
 * A jump label switched after the copy was made: okcov withdraws the
 * copy (the original is no longer what it copied) and calls run the
 * original, with the new branch.
 */
TEST_F(redirect, keyed)
{
	uint64_t seq[MAXL];
	long entered, stale, ret;
	struct kio_deep d;
	struct fn f;
	int kd, n, tries;

	if (_metadata->skip)
		return;
	ASSERT_EQ(0, ioctl(self->tfd, OKCOV_TARGET_KEY_SET, 0UL));
	fn_init(_metadata, &f, "okcov_target_keyed", self->funcs.keyed);
	kd = st_open();
	ASSERT_LE(0, kd);
	ASSERT_EQ(0, deep(kd, f.leader, f.n, &d));
	EXPECT_EQ(0, st_kprobes_listed(f.name, NULL));
	entered = st_copies_stat("entered");
	stale = st_copies_stat("stale");
	/* The positive control: the copy runs and records. */
	n = run(&self->c, self->tfd, OKCOV_TARGET_KEYED_RUN, 3, &f, seq, &ret);
	EXPECT_EQ(4, ret);
	EXPECT_LT(0, n);
	EXPECT_EQ(entered + 1, st_copies_stat("entered"));
	ASSERT_EQ(0, ioctl(self->tfd, OKCOV_TARGET_KEY_SET, 1UL));
	/*
	 * At once, with no wait for the watcher: the original's new branch,
	 * not the copy's old one (the patch doomed the copy as it was made).
	 */
	run(&self->c, self->tfd, OKCOV_TARGET_KEYED_RUN, 3, &f, seq, &ret);
	EXPECT_EQ(103, ret);
	for (tries = 0; tries < 100 && st_copies_stat("stale") == stale; tries++)
		usleep(50 * 1000);
	/*
	 * With jump labels the text changed: the copy is withdrawn, and the
	 * call above ran the original. A KIODEEP for the same leaders makes
	 * a copy of the new text, which records again. A kernel without
	 * them (debug-7) tests the key in a load, which the copy does too:
	 * it stays.
	 */
	if (st_copies_stat("stale") == stale + 1) {
		EXPECT_EQ(entered + 1, st_copies_stat("entered"));
		/* The new text's leaders: the jump's target is one now. */
		fn_init(_metadata, &f, "okcov_target_keyed", self->funcs.keyed);
		ASSERT_EQ(0, deep(kd, f.leader, f.n, &d));
		n = run(&self->c, self->tfd, OKCOV_TARGET_KEYED_RUN, 3, &f,
			seq, &ret);
		EXPECT_EQ(103, ret);
		EXPECT_LT(0, n);
		EXPECT_EQ(entered + 2, st_copies_stat("entered"));
	} else {
		EXPECT_EQ(stale, st_copies_stat("stale"));
		EXPECT_EQ(entered + 2, st_copies_stat("entered"));
		TH_LOG("the key is a load here (no jump labels): the copy stays");
	}
	ASSERT_EQ(0, ioctl(self->tfd, OKCOV_TARGET_KEY_SET, 0UL));
	close(kd);
}

/*
 * A function and its .cold part in one KIODEEP call: one copy records
 * them all, no kprobe takes the .cold part's leaders. On 7.x
 * .text.unlikely lies below .text, so the sorted call meets the part
 * first (it used to be planned alone: ENXIO, kprobes).
 */
TEST_F(redirect, cold)
{
	static __u64 l[1024];
	const struct ksym *sym;
	long enxio, published;
	struct kio_deep d;
	uint64_t fn, end;
	int kd, n, i, out = 0;
	char cold[264];
	const char *name;

	if (_metadata->skip)
		return;
	ASSERT_EQ(0, ksyms_load());
	fn = st_cold_function();
	if (!fn)
		SKIP(return, "no copyable function with a .cold part");
	sym = ksyms_lookup(fn, NULL);
	ASSERT_NE(NULL, sym);
	name = sym->name;
	snprintf(cold, sizeof(cold), "%s.cold", name);
	n = st_plan_leaders(fn, l, ARRAY_SIZE(l), &end);
	ASSERT_LT(0, n);
	for (i = 0; i < n; i++)
		out += l[i] < fn || l[i] >= end;
	/* The control: some leaders lie in the .cold part. */
	ASSERT_LT(0, out);
	enxio = st_copies_stat("refused ENXIO");
	published = st_copies_stat("published");
	kd = st_open();
	ASSERT_LE(0, kd);
	ASSERT_EQ(0, deep(kd, l, n, &d));
	EXPECT_EQ(n, d.installed);
	EXPECT_EQ(0, d.refused);
	EXPECT_EQ(enxio, st_copies_stat("refused ENXIO"));
	EXPECT_EQ(published + 1, st_copies_stat("published"));
	EXPECT_EQ(0, st_kprobes_listed(cold, NULL));
	EXPECT_EQ(0, st_kprobes_listed(name, NULL));
	TH_LOG("%s: %d leaders, %d in its .cold part, which lies %s it", name,
	       n, out, ksyms_addr(cold, NULL) < fn ? "below" : "above");
	close(kd);
}

/* Does the kernel log hold a WARNING line naming @fn+? */
static bool warned_in(const char *fn)
{
	int len = klogctl(10, NULL, 0);	/* SYSLOG_ACTION_SIZE_BUFFER */
	char *buf, *line, *save = NULL, pat[128];
	bool found = false;

	if (len <= 0)
		return false;
	buf = calloc(1, len + 1);
	if (!buf)
		return false;
	len = klogctl(3, buf, len);	/* SYSLOG_ACTION_READ_ALL */
	snprintf(pat, sizeof(pat), " %s+", fn);
	for (line = strtok_r(buf, "\n", &save); len > 0 && line;
	     line = strtok_r(NULL, "\n", &save))
		if (strstr(line, "WARNING:") && strstr(line, pat))
			found = true;
	free(buf);
	return found;
}

static int write_str(const char *path, const char *v)
{
	int fd = open(path, O_WRONLY), r;

	if (fd < 0)
		return -errno;
	r = write(fd, v, strlen(v)) == (ssize_t)strlen(v) ? 0 : -errno;
	close(fd);
	return r;
}

TEST_F(redirect, warn)
{
	uint64_t seq[MAXL];
	struct kio_deep d;
	long entered, refused, ret;
	struct fn f;
	int kd;

	if (_metadata->skip)
		return;
	fn_init(_metadata, &f, "okcov_target_warned", self->funcs.warned);
	refused = st_copies_stat("refused EOPNOTSUPP");
	kd = st_open();
	ASSERT_LE(0, kd);
	ASSERT_EQ(0, deep(kd, f.leader, f.n, &d));
	/* Copied: its ud2 goes back to the original when it traps. */
	EXPECT_EQ(refused, st_copies_stat("refused EOPNOTSUPP"));
	EXPECT_EQ(0, st_kprobes_listed(f.name, NULL));
	entered = st_copies_stat("entered");
	EXPECT_LT(0, run(&self->c, self->tfd, OKCOV_TARGET_WARNED_RUN, 5, &f,
			 seq, &ret));
	EXPECT_EQ(6, ret);
	ASSERT_FALSE(warned_in(f.name));
	/* The warning, on purpose: a warning, not a panic, at the original. */
	ASSERT_EQ(0, write_str("/proc/sys/kernel/panic_on_warn", "0"));
	ASSERT_EQ(0, write_str("/dev/kmsg",
			       "okcov-vm: expect warning in okcov_target_warned\n"));
	run(&self->c, self->tfd, OKCOV_TARGET_WARNED_RUN,
	    OKCOV_TARGET_WARN_VALUE, &f, seq, &ret);
	EXPECT_EQ(0, write_str("/proc/sys/kernel/panic_on_warn", "1"));
	EXPECT_EQ(-1, ret);
	EXPECT_EQ(entered + 2, st_copies_stat("entered"));
	EXPECT_TRUE(warned_in(f.name));
	close(kd);
}

/*
 * Core kernel functions of the read, write, open, dup and pipe paths:
 * deep through copies and through kprobes, the same workload records
 * the same leaders, and a bad user pointer is still EFAULT.
 */
static const char *const core_fns[] = {
	"ksys_read", "vfs_read", "ksys_write", "vfs_write", "do_sys_openat2",
	"do_filp_open", "ksys_dup3", "do_dup2", "filp_close", "__fdget_pos",
	"__x64_sys_dup", "pipe_read", "pipe_write", "__close_fd_get_file",
};

#define CORE_MAX	4096

/* The workload: 0, or -1 if a call's result is wrong. */
static int core_work(void)
{
	char buf[64] = "okcov", in[64];
	int p[2], fd, d, bad = 0;
	void *none;

	if (pipe(p))
		return -1;
	bad |= write(p[1], buf, 6) != 6;
	bad |= read(p[0], in, sizeof(in)) != 6 || strcmp(in, "okcov");
	d = dup(p[0]);
	bad |= d < 0 || dup2(p[1], d) != d;
	close(d);
	close(p[0]);
	close(p[1]);
	fd = open("/proc/self/stat", O_RDONLY);
	bad |= fd < 0 || read(fd, in, sizeof(in)) <= 0;
	/* A fault in the user copy: EFAULT, as without copies. */
	none = mmap(NULL, st_page_size(), PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	bad |= none == MAP_FAILED;
	bad |= read(fd, none, 16) != -1 || errno != EFAULT;
	munmap(none, st_page_size());
	close(fd);
	return bad ? -1 : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

#define CORE_RUNS	3

/* A sorted set of leaders. */
struct lset {
	uint64_t *a;
	int n;
};

static bool lset_has(const struct lset *s, uint64_t x)
{
	return bsearch(&x, s->a, s->n, sizeof(*s->a), cmp_u64);
}

/*
 * The leaders of @l (@n, sorted) the workload records, each of
 * CORE_RUNS runs through the backend deep_copies=@copies gives: the
 * leaders every run recorded in *@all, those any run did in *@any.
 */
static void core_runs(struct __test_metadata *_metadata, struct st_cov *c,
		      bool copies, const __u64 *l, int n, struct lset *all,
		      struct lset *any)
{
	int32_t *errs = calloc(n, sizeof(*errs));
	int *hits = calloc(n, sizeof(*hits));
	uint64_t i, k;
	struct kio_deep d;
	int kd, r, j;
	__u64 *at;

	ASSERT_TRUE(errs && hits);
	ASSERT_EQ(0, st_param_set("deep_copies", copies ? "1" : "0"));
	kd = st_open();
	ASSERT_LE(0, kd);
	memset(&d, 0, sizeof(d));
	d.addrs = (uintptr_t)l;
	d.errors = (uintptr_t)errs;
	d.count = n;
	d.flags = KIO_DEEP_PARTIAL;
	ASSERT_EQ(0, st_ioctl(kd, KIODEEP, &d));
	TH_LOG("%s: %u installed, %u refused", copies ? "copies" : "kprobes",
	       d.installed, d.refused);
	EXPECT_LT(0, d.installed);
	if (copies)
		EXPECT_LT(0, st_copies_stat("published"));
	for (r = 0; r < CORE_RUNS; r++) {
		bool *seen = calloc(n, sizeof(*seen));

		ASSERT_NE(NULL, seen);
		ASSERT_EQ(0, st_enable(c->fd, KCOV_MODE_TRACE_PC));
		st_reset(c);
		j = core_work();
		ASSERT_EQ(0, st_disable(c->fd));
		EXPECT_EQ(0, j);
		k = st_pcs(c);
		for (i = 0; i < k; i++) {
			at = bsearch(&c->buf[i + 1], l, n, sizeof(*l), cmp_u64);
			if (at)
				seen[at - l] = true;
		}
		for (j = 0; j < n; j++)
			hits[j] += seen[j];
		free(seen);
	}
	close(kd);
	all->a = calloc(n, sizeof(*all->a));
	any->a = calloc(n, sizeof(*any->a));
	ASSERT_TRUE(all->a && any->a);
	all->n = any->n = 0;
	for (j = 0; j < n; j++) {
		if (hits[j] == CORE_RUNS)
			all->a[all->n++] = l[j];
		if (hits[j])
			any->a[any->n++] = l[j];
	}
	free(hits);
	free(errs);
}

/* Every leader of @a (one backend's every run) in @b (the other's any). */
static int lset_missing(struct __test_metadata *_metadata, const char *what,
			const struct lset *a, const struct lset *b)
{
	char buf[160];
	int i, miss = 0;

	for (i = 0; i < a->n; i++) {
		if (lset_has(b, a->a[i]))
			continue;
		if (miss++ < 10)
			TH_LOG("%s: %s", what, ksyms_format(a->a[i], buf,
							    sizeof(buf)));
	}
	return miss;
}

TEST_F_TIMEOUT(redirect, core, 600)
{
	struct lset ca, cy, ka, ky;
	int i, n = 0, r, fns = 0;
	long entered;
	uint64_t end;
	__u64 *l;

	if (_metadata->skip)
		return;
	ASSERT_EQ(0, ksyms_load());
	l = calloc(CORE_MAX, sizeof(*l));
	ASSERT_NE(NULL, l);
	for (i = 0; i < (int)ARRAY_SIZE(core_fns); i++) {
		uint64_t a = ksyms_addr(core_fns[i], NULL);

		if (!a)
			continue;
		r = st_plan_leaders(a, l + n, CORE_MAX - n, &end);
		if (r > 0) {
			n += r;
			fns++;
		}
	}
	ASSERT_LE(5, fns);
	qsort(l, n, sizeof(*l), cmp_u64);
	/* Twice first: caches warm, the paths settle. */
	ASSERT_EQ(0, core_work());
	ASSERT_EQ(0, core_work());
	entered = st_copies_stat("entered");
	core_runs(_metadata, &self->c, true, l, n, &ca, &cy);
	EXPECT_LT(entered, st_copies_stat("entered"));
	core_runs(_metadata, &self->c, false, l, n, &ka, &ky);
	TH_LOG("%d functions, %d leaders: copies %d in every run, %d in any; kprobes %d, %d",
	       fns, n, ca.n, cy.n, ka.n, ky.n);
	/* The positive control: leaders were recorded at all. */
	EXPECT_LT(0, ka.n);
	EXPECT_LT(0, ca.n);
	/*
	 * What one backend recorded in every run, the other recorded in
	 * some run: a path that timing picks (a lock taken or not) may
	 * come and go, a leader a backend never records may not.
	 */
	EXPECT_EQ(0, lset_missing(_metadata, "kprobes always, copies never", &ka, &cy));
	EXPECT_EQ(0, lset_missing(_metadata, "copies always, kprobes never", &ca, &ky));
	free(ca.a);
	free(cy.a);
	free(ka.a);
	free(ky.a);
	free(l);
}

/* /proc/kcore's bytes at kernel address @addr. */
static int kcore_read(uint64_t addr, void *buf, size_t len)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd, i, ret = -ENOENT;

	fd = open("/proc/kcore", O_RDONLY);
	if (fd < 0)
		return -errno;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh))
		goto out;
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + i * sizeof(ph)) !=
		    sizeof(ph))
			break;
		if (ph.p_type != PT_LOAD || addr < ph.p_vaddr ||
		    addr + len > ph.p_vaddr + ph.p_memsz)
			continue;
		ret = pread(fd, buf, len, ph.p_offset + addr - ph.p_vaddr) ==
		      (ssize_t)len ? 0 : -EIO;
		break;
	}
out:
	close(fd);
	return ret;
}

struct sleeper {
	int fd, tfd;
	long ret;
	int enable;
	pid_t tid;
};

#define SLEEP_MS	3000

static void *sleeper(void *arg)
{
	struct sleeper *s = arg;

	__atomic_store_n(&s->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	s->enable = st_enable(s->fd, KCOV_MODE_TRACE_PC);
	s->ret = ioctl(s->tfd, OKCOV_TARGET_SLEEP_RUN,
		       (unsigned long)(21 << 16 | SLEEP_MS));
	return NULL;
}

/* Past the entry: ftrace owns the fentry site's 5 bytes (+4 after endbr64). */
#define PAST_ENTRY	9

/*
 * The core kernel function holding a direct call of @callee (an inline
 * static call site, patched to call it), among those whose name has
 * @part: its name and start, its plan's leaders in @f. 0, -ENOENT (none),
 * or -errno (no /proc/kcore to read the calls from).
 */
static int find_caller(const char *part, uint64_t callee, struct fn *f,
		       char *name, size_t len)
{
	unsigned long long x, l, e;
	const struct ksym *s;
	unsigned char b[5];
	char line[256];
	int32_t rel;
	size_t i;
	FILE *pf;
	int err;

	err = ksyms_load();
	if (err)
		return err;
	for (i = 0; i < ksyms_count(); i++) {
		s = ksyms_get(i);
		if (s->mod || !strstr(s->name, part))
			continue;
		pf = st_inspect(ST_PLAN_FILE, s->addr);
		if (!pf)
			continue;
		f->n = 0;
		x = 0;
		while (fgets(line, sizeof(line), pf)) {
			if (sscanf(line, "function %*s %llx %llx", &l, &e) == 2) {
				f->start = l;
				f->end = e;
			} else if (sscanf(line, "leader %llx", &l) == 1 &&
				   f->n < MAXL) {
				f->leader[f->n++] = l;
			} else if (!x && sscanf(line, "insn %llx %llu", &l, &e) == 2 &&
				   e == 5) {
				err = kcore_read(l, b, 5);
				if (err) {
					fclose(pf);
					return err;
				}
				memcpy(&rel, b + 1, 4);
				if (b[0] == 0xe8 && l + 5 + rel == callee)
					x = l;
			}
		}
		fclose(pf);
		if (x && f->n) {
			snprintf(name, len, "%s", s->name);
			f->name = name;
			return 0;
		}
	}
	return -ENOENT;
}

/*
 * foreign: a core kernel function whose inline static call calls another
 * module's function (signal_generate's only probe, the test target's)
 * is refused (EXDEV: retargeted and unloaded, the probe would stay
 * called from the copy) and gets kprobes; with the probe gone, the same
 * function is copied.
 */
TEST_F(redirect, foreign)
{
	struct fn f = { .name = NULL };
	long exdev, copies, callees;
	int kd, err, round;
	struct kio_deep d;
	char name[200];

	if (_metadata->skip)
		return;
	ASSERT_EQ(0, ioctl(self->tfd, OKCOV_TARGET_TP_PROBE, 1UL));
	err = find_caller("send_signal", self->funcs.tp_probe, &f, name,
			  sizeof(name));
	if (err == -ENOENT && kcore_read(self->funcs.tp_probe, name, 1)) {
		ioctl(self->tfd, OKCOV_TARGET_TP_PROBE, 0UL);
		SKIP(return, "no /proc/kcore: the calls cannot be read");
	}
	ASSERT_EQ(0, err) {
		TH_LOG("no call of the probe found in a *send_signal* function");
		ioctl(self->tfd, OKCOV_TARGET_TP_PROBE, 0UL);
	}
	TH_LOG("%s calls the probe: %d leaders", f.name, f.n);
	exdev = st_copies_stat("refused EXDEV");
	/*
	 * The whole function, as okcov plans it (KIO_DEEP_FUNCTIONS), with
	 * the probe called (refused, kprobes), then with it gone (copied).
	 */
	for (round = 0; round < 2; round++) {
		if (round)
			ASSERT_EQ(0, ioctl(self->tfd, OKCOV_TARGET_TP_PROBE, 0UL));
		copies = st_copies_stat("copies");
		callees = st_copies_stat("callees");
		kd = st_open();
		ASSERT_LE(0, kd);
		ASSERT_EQ(0, deep_function(kd, f.start, &d));
		EXPECT_LT(0, d.installed);
		EXPECT_EQ(exdev + 1, st_copies_stat("refused EXDEV"));
		if (round) {
			/* Its copy, and its notrace callees' (deep_callees) */
			EXPECT_EQ(copies + 1 + st_copies_stat("callees") -
				  callees, st_copies_stat("copies"));
			EXPECT_EQ(0, st_kprobes_listed(f.name, NULL));
		} else {
			EXPECT_LT(0, st_kprobes_listed(f.name, NULL));
		}
		close(kd);
	}
}

/* The state letter in /proc/self/task/TID/stat ("R", "S", "D"...), or 0. */
static char task_state(pid_t tid)
{
	char path[64], buf[256], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* "TID (comm) S ...": comm may hold spaces and parentheses. */
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/*
 * @s's thread asleep inside the copy of okcov_target_sleep() (@f), on a
 * descriptor of its own (@s->fd, its buffer *@buf) that deep-traced it.
 * A failed assertion ends the test, as in fn_init().
 */
static void sleeper_in_copy(struct __test_metadata *_metadata,
			    struct sleeper *s, const struct fn *f,
			    pthread_t *th, uint64_t **buf)
{
	struct kio_deep d;
	long entered;
	pid_t tid;
	int i;

	s->fd = st_open();
	ASSERT_LE(0, s->fd);
	ASSERT_EQ(0, st_setbufsize(s->fd, NENT));
	*buf = st_map(s->fd, NENT);
	ASSERT_NE(MAP_FAILED, *buf);
	ASSERT_EQ(0, deep(s->fd, f->leader, f->n, &d));
	entered = st_copies_stat("entered");
	ASSERT_EQ(0, pthread_create(th, NULL, sleeper, s));
	/* Ten seconds: a new thread's first run waits its turn under load. */
	for (i = 0; i < 500 && st_copies_stat("entered") == entered; i++)
		usleep(20 * 1000);
	ASSERT_EQ(entered + 1, st_copies_stat("entered"));
	/*
	 * Entered is not asleep: the unwinder gives no frames for a task
	 * running on another CPU. msleep() sleeps uninterruptibly ('D').
	 */
	tid = __atomic_load_n(&s->tid, __ATOMIC_ACQUIRE);
	for (i = 0; i < 200 && task_state(tid) != 'D'; i++)
		usleep(10 * 1000);
	ASSERT_EQ('D', task_state(tid));
}

/*
 * A stack trace through a copy: the sleeper, asleep inside the copy of
 * okcov_target_sleep(), as /proc/TID/stack shows it (the unwinder walks
 * a sleeping task's stack). The copy's frame names okcov_pool; past it
 * the unwinder needs the copy's ORC entries (without them it stops
 * there), and the frame file maps the frame back to the original's
 * return address after its msleep() call.
 */
TEST_F_TIMEOUT(redirect, unwind, 300)
{
	int nlines = 0, copy_line = -1, do_line = -1, entry_line = -1;
	struct sleeper s = { .tfd = self->tfd };
	unsigned long long off, pool, ret = 0;
	char path[64], line[256], sym[200];
	uint64_t *buf;
	pthread_t th;
	struct fn f;
	FILE *fp;

	if (_metadata->skip)
		return;
	fn_init(_metadata, &f, "okcov_target_sleep", self->funcs.sleep);
	sleeper_in_copy(_metadata, &s, &f, &th, &buf);
	snprintf(path, sizeof(path), "/proc/self/task/%d/stack",
		 __atomic_load_n(&s.tid, __ATOMIC_ACQUIRE));
	fp = fopen(path, "r");
	ASSERT_NE(NULL, fp);
	/* "[<0>] okcov_pool+0x1c4/0x200000 [okcov]", innermost first. */
	while (fgets(line, sizeof(line), fp)) {
		TH_LOG("%s", strtok(line, "\n"));
		if (copy_line < 0 &&
		    sscanf(line, "[<%*[^>]>] okcov_pool+%llx/", &off) == 1)
			copy_line = nlines;
		else if (copy_line >= 0 && strstr(line, KSYM_SYS_ENTRY "+"))
			do_line = nlines;
		else if (copy_line >= 0 && strstr(line, "entry_SYSCALL_64"))
			entry_line = nlines;
		nlines++;
	}
	fclose(fp);
	ASSERT_LE(0, copy_line) {
		TH_LOG("no frame in okcov_pool: the sleeper is not in the copy");
	}
	EXPECT_LT(copy_line, do_line) {
		TH_LOG("the unwinder stopped at the copy's frame");
	}
	EXPECT_LT(do_line, entry_line);
	/* The frame file, as the copy's frame maps back. */
	ASSERT_EQ(0, ksyms_load());
	pool = ksyms_addr("okcov_pool", "okcov");
	ASSERT_NE(0, pool);
	fp = st_inspect("/sys/kernel/debug/okcov/frame", pool + off);
	ASSERT_NE(NULL, fp);
	while (fgets(line, sizeof(line), fp)) {
		TH_LOG("frame: %s", strtok(line, "\n"));
		if (sscanf(line, "return %llx %199s", &ret, sym) == 2)
			break;
		ret = 0;
	}
	fclose(fp);
	EXPECT_LT(f.start, ret);
	EXPECT_GT(f.end, ret);
	EXPECT_EQ(0, strncmp(sym, "okcov_target_sleep+", 19));
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(0, s.enable);
	EXPECT_EQ(43, s.ret);
	EXPECT_EQ(0, munmap(buf, st_map_len(NENT)));
	EXPECT_EQ(0, close(s.fd));
	EXPECT_EQ(0, st_copies_stat("published"));
}

TEST_F_TIMEOUT(redirect, blocked, 300)
{
	unsigned char before[256], after[256];
	struct sleeper s = { .tfd = self->tfd };
	pthread_t th;
	struct fn f;
	uint64_t *buf;
	size_t len;
	int i, err, kcore;

	if (_metadata->skip)
		return;
	fn_init(_metadata, &f, "okcov_target_sleep", self->funcs.sleep);
	len = f.end - f.start < sizeof(before) ? f.end - f.start :
						 sizeof(before);
	ASSERT_LT(PAST_ENTRY, len);
	/* Without /proc/kcore (debug-7), the text is not compared. */
	kcore = kcore_read(f.start, before, len);
	ASSERT_TRUE(!kcore || kcore == -ENOENT);
	if (kcore)
		TH_LOG("no /proc/kcore: the text is not compared");
	sleeper_in_copy(_metadata, &s, &f, &th, &buf);
	/* Asleep in the copy: drop the descriptor, and with it the copies. */
	ASSERT_EQ(0, munmap(buf, st_map_len(NENT)));
	ASSERT_EQ(0, close(s.fd));
	EXPECT_EQ(0, st_copies_stat("published"));
	/* The unpin work has looked by now (every 100 ms): still inside. */
	usleep(500 * 1000);
	EXPECT_EQ(1, st_copies_stat("pinned"));
	err = st_kmod_remove("okcov");
	EXPECT_EQ(-EAGAIN, err) {
		TH_LOG("okcov unloaded under a thread in its copy: %s",
		       strerror(-err));
	}
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(0, s.enable);
	/* 21 is odd: 2 * 21 + 1, through the copy's odd block. */
	EXPECT_EQ(43, s.ret);
	for (i = 0; i < 100 && st_copies_stat("pinned") == 1; i++)
		usleep(50 * 1000);
	EXPECT_EQ(0, st_copies_stat("pinned")) {
		system("cat " ST_COPIES_FILE " >&2");
	}
	if (!kcore) {
		ASSERT_EQ(0, kcore_read(f.start, after, len));
		EXPECT_EQ(0, memcmp(before + PAST_ENTRY, after + PAST_ENTRY,
				    len - PAST_ENTRY));
	}
	/* The target goes first (it uses okcov), then okcov unloads. */
	close(self->tfd);
	self->tfd = -1;
	st_free(&self->c);
	st_target_remove();
	EXPECT_EQ(0, st_kmod_remove_wait("okcov", 100));
	ASSERT_EQ(0, st_okcov_reload(st_okcov_args()));
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
	/*
	 * A fresh pool: okcov_copy's fill, run before, leaves none, and the
	 * pool is only given back with okcov's text.
	 */
	fd = st_fresh_target(skip_reason, sizeof(skip_reason));
	if (fd < 0)
		return;
	if (ioctl(fd, OKCOV_TARGET_FUNCS, &f))
		snprintf(skip_reason, sizeof(skip_reason),
			 "the test-target module has no copy functions: %s",
			 strerror(errno));
	close(fd);
	if (!skip_reason[0] && (access(ST_PLAN_FILE, W_OK) ||
				access(ST_COPIES_FILE, R_OK) ||
				access(ST_KPROBES_LIST, R_OK)))
		snprintf(skip_reason, sizeof(skip_reason),
			 "no okcov debugfs files or kprobes list");
}

OKCOV_HARNESS_MAIN(prepare);
