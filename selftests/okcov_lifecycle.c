// SPDX-License-Identifier: GPL-2.0
/*
 * okcov module lifecycle, through libkmod only: unloading is refused while
 * a descriptor is open or mapped and allowed with only DYING descriptors
 * left; load/unload cycles; the max_entries parameter.
 *
 * Reloads okcov: run it last (run_tests.sh does). It leaves okcov loaded
 * as the VM runner loaded it ($OKCOV_KO with $OKCOV_KO_ARGS), and unloads
 * the test-target module first, since that one holds okcov.
 *
 * delete_module() is called the way libkmod always calls it, with
 * O_NONBLOCK: a module in use is refused with EWOULDBLOCK (== EAGAIN), the
 * "in use" answer of kernel/module/main.c; EBUSY is for a module that is
 * still initialising or already going away.
 */
#include <sys/stat.h>
#include <time.h>

#include "kselftest_harness.h"
#include "okcov_test.h"
#include "kmod_util.h"
#include "okcov_target.h"

#define OKCOV_NAME	"okcov"
#define CYCLES		20

static bool st_loaded(void)
{
	return st_module_loaded(OKCOV_NAME);
}

/* Load okcov if it is not loaded; 0 or -errno. */
static int ensure_loaded(void)
{
	if (st_loaded())
		return 0;
	return st_kmod_insert(st_okcov_ko(), st_okcov_args());
}

/* A quick check that the freshly loaded module works end to end. */
static int smoke(void)
{
	struct st_cov c;
	int err = st_new(&c, 1024);

	if (!err)
		err = st_enable(c.fd, KCOV_MODE_TRACE_PC);
	if (!err) {
		st_reset(&c);
		sys_getpid_n(3);
		err = st_disable(c.fd);
		if (!err && !st_count(&c))
			err = ENODATA;
	}
	st_free(&c);
	return err;
}

FIXTURE(lifecycle) {
};

FIXTURE_SETUP(lifecycle)
{
	if (!st_okcov_ko())
		SKIP(return, "OKCOV_KO unset: no okcov.ko to reload");
	ASSERT_EQ(0, ensure_loaded());
}

FIXTURE_TEARDOWN(lifecycle)
{
	if (st_okcov_ko())
		ensure_loaded();
}

/* An open descriptor, in any state, keeps the module: refused. */
TEST_F(lifecycle, unload_refused_fd_open)
{
	if (_metadata->skip)
		return;
	int fd = st_open();

	ASSERT_LE(0, fd);
	ASSERT_EQ(-EAGAIN, st_kmod_remove(OKCOV_NAME));	/* NONE */
	ASSERT_EQ(0, st_setbufsize(fd, 16));
	ASSERT_EQ(-EAGAIN, st_kmod_remove(OKCOV_NAME));	/* READY */
	ASSERT_EQ(0, st_enable(fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(-EAGAIN, st_kmod_remove(OKCOV_NAME));	/* TRACE */
	ASSERT_EQ(0, st_disable(fd));
	ASSERT_TRUE(st_loaded());
	ASSERT_EQ(0, close(fd));
}

/* An enabled descriptor whose fd is closed but still mapped: refused. */
TEST_F(lifecycle, unload_refused_trace_mapped)
{
	if (_metadata->skip)
		return;
	struct st_cov c;

	ASSERT_EQ(0, st_new(&c, 4096));
	ASSERT_EQ(0, st_enable(c.fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(0, close(c.fd));
	c.fd = -1;
	st_reset(&c);
	sys_getpid_n(3);
	ASSERT_EQ(-EAGAIN, st_kmod_remove(OKCOV_NAME));
	ASSERT_LT(0, st_count(&c));
	/* munmap: DYING, attached to this thread until the test exits */
	st_free(&c);
}

/* A mapping alone (fd closed) keeps the module too; its munmap frees it. */
TEST_F(lifecycle, unload_refused_mapping_only)
{
	if (_metadata->skip)
		return;
	struct st_cov c;

	ASSERT_EQ(0, st_new(&c, 4096));
	ASSERT_EQ(0, close(c.fd));
	c.fd = -1;
	ASSERT_EQ(-EAGAIN, st_kmod_remove(OKCOV_NAME));
	ASSERT_TRUE(st_loaded());
	st_free(&c);
	ASSERT_EQ(0, st_kmod_remove(OKCOV_NAME));
	ASSERT_FALSE(st_loaded());
	ASSERT_NE(0, access(OKCOV_PATH, F_OK));
	ASSERT_EQ(0, st_kmod_insert(st_okcov_ko(), st_okcov_args()));
}

/*
 * Only DYING descriptors left (threads enabled them, their fds were closed
 * and unmapped, the threads are alive): unloading succeeds and frees them.
 * The threads then keep running syscalls and exit cleanly (the VM runner
 * fails the run on any kernel complaint).
 *
 * Freed: what a DYING descriptor still holds once its buffer went at the
 * close is small: the descriptor, its task-hash entry and the reference
 * that entry holds on its thread's task_struct. The module's counters go
 * with the module, so the test counts task_structs instead: the threads
 * alive at the unload have all exited when okcov is loaded again, and a
 * task_struct still pinned by an entry the unload forgot is one more than
 * before the threads started (NALIVE of them, twice the tolerance). Before
 * the unload, okcov's own counters say it has NALIVE DYING descriptors and
 * entries to sweep. (A kmemleak kernel, which the VM runner scans at the
 * end, should also see the objects themselves: not tried.) The buffers were
 * vmalloc memory, back once the descriptors went DYING: VmallocUsed is
 * back where it was before the threads allocated theirs.
 *
 * Red, tried on debian-6.1: okcov_dev_sweep() emptied (task_structs
 * NALIVE up after the reload).
 */
struct dying_thread {
	struct st_cov c;
	struct st_gate enabled, unloaded;
	int err;
	pid_t tid;
};

#define DYING_N		(256 << 10)	/* entries: 2 MiB per buffer */
#define VMALLOC_TOL	1024		/* KiB */

static void *dying_fn(void *p)
{
	struct dying_thread *t = p;

	t->tid = gettid();
	t->err = st_new(&t->c, DYING_N);
	if (!t->err)
		t->err = st_enable(t->c.fd, KCOV_MODE_TRACE_PC);
	if (!t->err)
		sys_getpid_n(10);
	st_gate_open(&t->enabled);
	st_gate_wait(&t->unloaded);
	/* okcov is gone: these run with no hook and no exit probe */
	sys_getpid_n(100);
	sys_getppid_n(100);
	return NULL;
}

/*
 * Several threads with DYING descriptors: a quarter of them exit before
 * the unload (freeing theirs), the others after it.
 */
#define NDYING	16
#define NEARLY	(NDYING / 4)
#define NALIVE	(NDYING - NEARLY)

TEST_F_TIMEOUT(lifecycle, unload_with_dying, 120)
{
	if (_metadata->skip)
		return;
	struct dying_thread t[NDYING];
	const long buf_kib = DYING_N * 8 / 1024;
	long before, traced, after = -1;
	long desc0, ent0, desc, ent, tasks0, tasks = -1;
	pthread_t th[NDYING];
	int i, err;

	memset(t, 0, sizeof(t));
	desc0 = st_stat_settle("descriptors", 0);
	ent0 = st_stat_settle("entries", 0);
	ASSERT_LE(0, desc0) {
		TH_LOG("no descriptors counter in /sys/module/okcov/parameters");
	}
	ASSERT_LE(0, ent0);
	tasks0 = st_task_structs();
	before = st_meminfo_kb("VmallocUsed");
	ASSERT_LT(0, before);
	for (i = 0; i < NDYING; i++) {
		ASSERT_EQ(0, st_gate_init(&t[i].enabled));
		ASSERT_EQ(0, st_gate_init(&t[i].unloaded));
		ASSERT_EQ(0, pthread_create(&th[i], NULL, dying_fn, &t[i]));
	}
	for (i = 0; i < NDYING; i++)
		st_gate_wait(&t[i].enabled);
	/* positive control: VmallocUsed sees the buffers */
	traced = st_meminfo_kb("VmallocUsed");
	TH_LOG("VmallocUsed %ld KiB before, %ld KiB with %d buffers of %ld KiB",
	       before, traced, NDYING, buf_kib);
	ASSERT_LE(before + NDYING * buf_kib - VMALLOC_TOL, traced);
	for (i = 0; i < NDYING; i++) {
		ASSERT_EQ(0, t[i].err);
		ASSERT_LT(0, st_count(&t[i].c));
		/* drop the last file reference and mapping: DYING */
		st_free(&t[i].c);
	}
	/* some of them exit first: their DYING descriptors go then */
	for (i = 0; i < NEARLY; i++) {
		st_gate_open(&t[i].unloaded);
		ASSERT_EQ(0, st_join(th[i], &t[i].tid));
	}
	/* what the unload has to sweep: NALIVE DYING descriptors */
	desc = st_stat_settle("descriptors", desc0 + NALIVE);
	ent = st_stat_settle("entries", ent0 + NALIVE);
	TH_LOG("before the unload: descriptors %ld (was %ld), entries %ld (was %ld), task_structs %ld before the threads",
	       desc, desc0, ent, ent0, tasks0);
	err = st_kmod_remove(OKCOV_NAME);
	for (i = NEARLY; i < NDYING; i++) {
		st_gate_open(&t[i].unloaded);
		st_join(th[i], &t[i].tid);
	}
	ASSERT_EQ(desc0 + NALIVE, desc);
	ASSERT_EQ(ent0 + NALIVE, ent);
	ASSERT_EQ(0, err);
	ASSERT_FALSE(st_loaded());
	ASSERT_EQ(0, st_kmod_insert(st_okcov_ko(), st_okcov_args()));
	/* vfree() from an RCU callback may be deferred to a worker */
	for (i = 0; i < 50; i++) {
		after = st_meminfo_kb("VmallocUsed");
		if (after <= before + VMALLOC_TOL)
			break;
		usleep(100 * 1000);
	}
	if (tasks0 >= 0)
		tasks = st_task_structs_settle(tasks0 + NALIVE / 2);
	TH_LOG("after the unload and a reload: VmallocUsed %ld KiB, task_structs %ld (%ld before)",
	       after, tasks, tasks0);
	ASSERT_GE(before + VMALLOC_TOL, after);
	/* the entries the unload swept held the last references */
	if (tasks0 < 0)
		SKIP(return, "no task_struct count (/proc/slabinfo): the sweep itself unchecked");
	ASSERT_GE(tasks0 + NALIVE / 2, tasks);
}

/* Load and unload in a row. (unload_with_dying unloads with the ftrace
 * hook installed, max_entries_param uses the reloaded module.)
 */
TEST_F_TIMEOUT(lifecycle, load_unload_cycles, 300)
{
	if (_metadata->skip)
		return;
	int i;

	for (i = 0; i < CYCLES; i++) {
		time_t t0 = time(NULL);

		ASSERT_TRUE(st_loaded());
		ASSERT_EQ(0, access(OKCOV_PATH, F_OK)) {
			TH_LOG("round %d: %s missing after load", i,
			       OKCOV_PATH);
		}
		ASSERT_EQ(0, st_kmod_remove_wait(OKCOV_NAME, 50)) {
			TH_LOG("round %d: unload failed", i);
		}
		ASSERT_FALSE(st_loaded());
		ASSERT_NE(0, access(OKCOV_PATH, F_OK));
		ASSERT_EQ(0, st_kmod_insert(st_okcov_ko(), st_okcov_args())) {
			TH_LOG("round %d: load failed", i);
		}
		if (getenv("OKCOV_DEBUG") || time(NULL) - t0 > 10)
			TH_LOG("round %d took %ld s", i, (long)(time(NULL) - t0));
	}
}

/* max_entries: a smaller limit takes effect on reload. Two reloads and
 * an ftrace hook install: slow under emulation.
 */
TEST_F_TIMEOUT(lifecycle, max_entries_param, 120)
{
	if (_metadata->skip)
		return;
	int fd;

	ASSERT_EQ(0, st_okcov_reload("max_entries=1024"));
	ASSERT_EQ(1024, st_max_entries());
	fd = st_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(EINVAL, st_setbufsize(fd, 1025));
	ASSERT_EQ(EINVAL, st_setbufsize(fd, 512 << 10));
	ASSERT_EQ(0, st_setbufsize(fd, 1024));
	ASSERT_EQ(0, st_mmap_err(fd, st_map_len(1024),
				    PROT_READ | PROT_WRITE, MAP_SHARED, 0));
	close(fd);
	/* a module loaded after 20 cycles and a reload records coverage */
	ASSERT_EQ(0, smoke());

	/* back to the defaults: 512K entries (st_ioctl checks that the
	 * default maximum is accepted)
	 */
	ASSERT_EQ(0, st_okcov_reload(""));
	ASSERT_EQ(OKCOV_DEFAULT_MAX, st_max_entries());
	fd = st_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(EINVAL, st_setbufsize(fd, OKCOV_DEFAULT_MAX + 1));
	close(fd);

	/* and as the runner had it */
	if (*st_okcov_args())
		ASSERT_EQ(0, st_okcov_reload(st_okcov_args()));
}

/*
 * ENOMEM: a KIOSETBUFSIZE that vmalloc cannot serve. The stock kernels have
 * no fault injection (CONFIG_FAULT_INJECTION is off on Debian's), and a
 * memory cgroup cannot refuse the buffer: vmalloc_user() allocates without
 * __GFP_ACCOUNT, so nothing charges it. What is real: vmalloc refuses
 * outright a size past the machine's total RAM (mm/vmalloc.c, "exceeds
 * total pages"), without reclaim or the OOM killer. max_entries allows up
 * to 1 << 28 entries (2 GiB) when loaded so; the guest has less RAM than
 * that. The descriptor stays NONE after the failure and can be sized again.
 *
 * okcov refuses such a size itself, before vmalloc_user() would report it
 * with a stack dump (warn_alloc(), which the VM runner takes for a kernel
 * complaint: so a missing check turns this test red too).
 */
#define HUGE_N		(1UL << 28)

TEST_F_TIMEOUT(lifecycle, setbufsize_enomem, 120)
{
	if (_metadata->skip)
		return;
	long total = st_meminfo_kb("MemTotal");
	int fd, enomem[2];
	char args[64];

	ASSERT_LT(0, total);
	if ((unsigned long)total >= HUGE_N * 8 / 1024)
		SKIP(return, "MemTotal %ld KiB: a %lu-entry buffer would fit",
		     total, HUGE_N);
	snprintf(args, sizeof(args), "max_entries=%lu", HUGE_N);
	ASSERT_EQ(0, st_okcov_reload(args));
	ASSERT_EQ(HUGE_N, st_max_entries());
	fd = st_open();
	ASSERT_LE(0, fd);
	enomem[0] = st_setbufsize(fd, HUGE_N);
	/* two pages past MemTotal */
	enomem[1] = st_setbufsize(fd, total * 1024 / 8 + 1024);
	ASSERT_EQ(ENOMEM, enomem[0]);
	ASSERT_EQ(ENOMEM, enomem[1]);
	/* nothing changed: the descriptor is still NONE */
	ASSERT_EQ(EINVAL, st_mmap_err(fd, st_page_size(),
				      PROT_READ | PROT_WRITE, MAP_SHARED, 0));
	ASSERT_EQ(0, st_setbufsize(fd, 1024));
	ASSERT_EQ(EBUSY, st_setbufsize(fd, 1024));
	close(fd);
	ASSERT_EQ(0, st_okcov_reload(st_okcov_args()));
}

/* The runner's okcov is loaded at the end, whatever happened. */
static void restore(void)
{
	int err;

	if (!st_okcov_ko() || st_loaded())
		return;
	err = st_kmod_insert(st_okcov_ko(), st_okcov_args());
	if (err)
		fprintf(stderr, "# reloading %s: %s\n", st_okcov_ko(),
			strerror(-err));
}

OKCOV_HARNESS_ORDER();

int main(int argc, char **argv)
{
	st_target_remove();
	atexit(restore);
	return test_harness_run(argc, argv);
}
