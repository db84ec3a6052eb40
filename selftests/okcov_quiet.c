// SPDX-License-Identifier: GPL-2.0
/*
 * Quiet coverage: identical runs of one program give identical PC sets.
 * Each workload runs RUNS times after a warm-up on one enabled thread; the
 * most common PC set must cover at least MIN_SHARE of the runs. What used
 * to differ between runs was the thread being scheduled out (a tick, a
 * woken RCU thread) somewhere in a syscall: it then returns to user mode
 * through switch_fpu_return() and rseq's notify-resume, which the default
 * function set now leaves out; read of /proc/self/stat, whose close wakes
 * the RCU thread, varied in about a third of the runs before. The
 * functions that did vary are logged.
 *
 * Positive control: every run records the workload's own syscall.
 *
 * Not on a debug kernel (KASAN, lockdep: the debug-7 build): there these
 * syscalls allocate pages, wake threads and send IPIs in some runs and not
 * in others, through functions the default set does not name; the test
 * SKIPs where kallsyms has kasan_save_stack() or lock_acquire().
 *
 * Not here: a syscall that sleeps. The scheduler's own functions are left
 * out, but the call sites in them of the traced functions they call are
 * still recorded, and which those are depends on the scheduler's state.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>

#include "kselftest_harness.h"
#include "okcov_test.h"

#define NENT		(64 << 10)
#define RUNS		20
#define WARMUP		3
#define MIN_SHARE	0.8

struct pcset {
	uint64_t *pc;
	size_t n;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The distinct PCs among the first @n of @c, sorted. Taken while enabled:
 * what malloc() or a fault records now comes after the first @n.
 */
static int pcset_take(const struct st_cov *c, uint64_t n, struct pcset *s)
{
	size_t i, k = 0;

	if (n > c->n - 1)
		n = c->n - 1;
	s->pc = malloc((n ? n : 1) * sizeof(*s->pc));
	if (!s->pc)
		return -1;
	memcpy(s->pc, &c->buf[1], n * sizeof(*s->pc));
	qsort(s->pc, n, sizeof(*s->pc), cmp_u64);
	for (i = 0; i < n; i++)
		if (!k || s->pc[k - 1] != s->pc[i])
			s->pc[k++] = s->pc[i];
	s->n = k;
	return 0;
}

static bool pcset_eq(const struct pcset *a, const struct pcset *b)
{
	return a->n == b->n && !memcmp(a->pc, b->pc, a->n * sizeof(*a->pc));
}

static bool pcset_has(const struct pcset *s, uint64_t pc)
{
	return bsearch(&pc, s->pc, s->n, sizeof(pc), cmp_u64) != NULL;
}

static bool pcset_has_syscall(const struct pcset *s, const char *sc)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (ksyms_pc_matches(s->pc[i], ksym_is_syscall, sc))
			return true;
	return false;
}

static void w_getppid(void)
{
	syscall(SYS_getppid);
}

static void w_proc_stat(void)
{
	char buf[1024];
	int fd = open("/proc/self/stat", O_RDONLY);

	if (fd >= 0) {
		if (read(fd, buf, sizeof(buf)) < 0)
			buf[0] = 0;
		close(fd);
	}
}

static void w_stat(void)
{
	struct stat st;

	syscall(SYS_newfstatat, AT_FDCWD, "/", &st, 0);
}

static void w_einval(void)
{
	lseek(0, 0, 12345);	/* bad whence: EINVAL */
}

FIXTURE(quiet) {
	struct st_cov c;
	struct pcset set[RUNS];
};

FIXTURE_VARIANT(quiet) {
	void (*fn)(void);
	const char *syscall;	/* recorded in every run */
};

FIXTURE_VARIANT_ADD(quiet, getppid) { w_getppid, "getppid" };
FIXTURE_VARIANT_ADD(quiet, read_proc_self_stat) { w_proc_stat, "read" };
FIXTURE_VARIANT_ADD(quiet, stat) { w_stat, "newfstatat" };
FIXTURE_VARIANT_ADD(quiet, einval) { w_einval, "lseek" };

FIXTURE_SETUP(quiet)
{
	memset(self->set, 0, sizeof(self->set));
	self->c.fd = -1;
	self->c.buf = MAP_FAILED;
	ASSERT_EQ(0, ksyms_load());
	if (ksyms_addr("kasan_save_stack", NULL) ||
	    ksyms_addr("lock_acquire", NULL))
		SKIP(return, "a debug kernel (KASAN or lockdep)");
	ASSERT_EQ(0, st_new(&self->c, NENT));
}

FIXTURE_TEARDOWN(quiet)
{
	int i;

	for (i = 0; i < RUNS; i++)
		free(self->set[i].pc);
	st_free(&self->c);
}

TEST_F(quiet, identical_runs)
{
	int i, j, best = 0, same[RUNS] = { 0 }, nsets = 0;
	char name[256];
	size_t k;

	if (_metadata->skip)	/* 6.1's harness runs the body after SKIP */
		return;
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	for (i = 0; i < WARMUP + RUNS; i++) {
		uint64_t n;

		st_reset(&self->c);
		variant->fn();
		n = st_count(&self->c);
		if (i < WARMUP)
			continue;
		ASSERT_EQ(0, pcset_take(&self->c, n, &self->set[i - WARMUP]));
		ASSERT_TRUE(pcset_has_syscall(&self->set[i - WARMUP],
					      variant->syscall)) {
			st_dump(&self->c, 64);
		}
	}
	ASSERT_EQ(0, st_disable(self->c.fd));

	for (i = 0; i < RUNS; i++) {
		for (j = 0; j < i && !pcset_eq(&self->set[i], &self->set[j]);
		     j++)
			;
		if (j == i)
			nsets++;
		same[j]++;
		if (same[j] > same[best])
			best = j;
	}
	TH_LOG("%s: %d runs, %d distinct PC sets, the most common in %d",
	       variant->syscall, RUNS, nsets, same[best]);
	/* What the other sets have that the most common lacks, and back. */
	for (i = 0; i < RUNS; i++) {
		if (pcset_eq(&self->set[i], &self->set[best]))
			continue;
		for (k = 0; k < self->set[i].n; k++)
			if (!pcset_has(&self->set[best], self->set[i].pc[k]))
				TH_LOG("run %d: + %s", i,
				       ksyms_format(self->set[i].pc[k], name,
						    sizeof(name)));
		for (k = 0; k < self->set[best].n; k++)
			if (!pcset_has(&self->set[i], self->set[best].pc[k]))
				TH_LOG("run %d: - %s", i,
				       ksyms_format(self->set[best].pc[k], name,
						    sizeof(name)));
	}
	ASSERT_LE(MIN_SHARE * RUNS, same[best]);
}

TEST_HARNESS_MAIN
