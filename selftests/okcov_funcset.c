// SPDX-License-Identifier: GPL-2.0
/*
 * The default function set leaves out what Linux's kcov leaves
 * uninstrumented (scheduler, locking, RCU, slab, ...), and whole_kernel=1
 * brings it back. Each variant reloads okcov with its parameters, runs the
 * same syscalls, and checks which functions were recorded: the syscall's
 * own functions always; lock, RCU, slab and scheduler helpers only with
 * whole_kernel=1 (that variant is the positive control of the other).
 * On PREEMPT_RT kernels, the same for the sleeping spinlocks and
 * migrate_disable(), which every spin_lock() of the syscall takes there.
 * Also reports the first-enable time (the hook install, with the
 * exclusions applied on first use) and how many functions are hooked.
 *
 * Reloads okcov (through libkmod): runs after the other tests, before
 * okcov_lifecycle, and leaves okcov loaded as the runner had it.
 */
#include <time.h>

#include "kselftest_harness.h"
#include "okcov_test.h"
#include "kmod_util.h"
#include "okcov_target.h"

#define ENABLED_FUNCTIONS	"/sys/kernel/tracing/enabled_functions"

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Lines of enabled_functions: the functions some ftrace_ops hooks. */
static long hooked_functions(void)
{
	FILE *f = fopen(ENABLED_FUNCTIONS, "r");
	char line[512];
	long n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	return n;
}

/* pred: the symbol's name starts with ctx (6.12 adds _noprof suffixes). */
static bool ksym_starts_with(const struct ksym *s, const void *prefix)
{
	return !s->mod && !strncmp(s->name, prefix, strlen(prefix));
}

/*
 * Helpers this workload reaches on every supported kernel, from the
 * groups the default set leaves out. "must" ones are the positive
 * control: whole_kernel=1 records them.
 */
static const struct {
	const char *name;
	bool exact;	/* else a prefix */
	bool must;
} noise[] = {
	{ "kmem_cache_alloc", false, true },	/* mm/slub.c */
	{ "kfree", true, true },		/* mm/slub.c */
#ifdef __aarch64__
	/* arm64 inlines the spinlocks (ARCH_INLINE_SPIN_*) */
	{ "_raw_spin_lock", false, false },	/* kernel/locking/ */
#else
	{ "_raw_spin_lock", false, true },	/* kernel/locking/ */
#endif
	{ "__rcu_read_lock", true, false },	/* kernel/rcu/ (PREEMPT_RCU) */
	{ "mutex_lock", false, false },		/* kernel/locking/ */
	{ "__cond_resched", true, false },	/* kernel/sched/ */
	{ "__mod_memcg", false, false },	/* mm/memcontrol.c */
	{ "migrate_disable", true, false },	/* kernel/sched/core.c */
	/* what the sleep's context switch leaves for the return to user */
#ifdef __x86_64__
	{ "switch_fpu_return", true, true },	/* TIF_NEED_FPU_LOAD */
#else
	{ "switch_fpu_return", true, false },	/* x86's alone */
#endif
	{ "__rseq_handle_notify_resume", true, false },	/* glibc's rseq */
	{ "__rseq_handle_slowpath", true, false },	/* 7.x's name */
};

/*
 * open + read + close of a proc file, and getpid: allocation, locks; a
 * 1 ms sleep: a context switch inside a syscall.
 */
static void workload(void)
{
	struct timespec ms = { 0, 1000 * 1000 };
	char buf[4096];
	int i, fd;

	for (i = 0; i < 3; i++) {
		fd = open("/proc/self/status", O_RDONLY);
		if (fd >= 0) {
			while (read(fd, buf, sizeof(buf)) > 0)
				;
			close(fd);
		}
	}
	sys_getpid_n(3);
	nanosleep(&ms, NULL);
}

FIXTURE(funcset) {
	struct st_cov c;
};

FIXTURE_VARIANT(funcset) {
	const char *args;
	bool whole;
};

FIXTURE_VARIANT_ADD(funcset, by_default) { .args = "", .whole = false };
/* Entries only: a debug kernel's whole kernel fills the buffer otherwise. */
FIXTURE_VARIANT_ADD(funcset, whole_kernel) {
	.args = "whole_kernel=1 call_sites=0", .whole = true
};

FIXTURE_SETUP(funcset)
{
	self->c.fd = -1;
	self->c.buf = MAP_FAILED;
	if (!st_okcov_ko())
		SKIP(return, "OKCOV_KO unset: no okcov.ko to reload");
	if (strstr(st_okcov_args(), "filter="))
		SKIP(return, "okcov runs with filter=: no default set");
	ASSERT_EQ(0, st_okcov_reload(variant->args));
	ASSERT_EQ(0, ksyms_load());
	ASSERT_EQ(0, st_new(&self->c, OKCOV_DEFAULT_MAX));
}

FIXTURE_TEARDOWN(funcset)
{
	st_free(&self->c);
	if (st_okcov_ko())
		st_okcov_reload(st_okcov_args());
}

TEST_F_TIMEOUT(funcset, noise, 300)
{
	long long t0, first;
	size_t i, hits;
	uint64_t n;
	long hooked;

	if (_metadata->skip)	/* this harness runs the body after SKIP */
		return;
	t0 = now_ms();
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	first = now_ms() - t0;
	st_reset(&self->c);
	workload();
	/* counted while enabled; what the count itself records is dropped */
	n = st_count(&self->c);
	hooked = hooked_functions();
	__atomic_store_n(&self->c.buf[0], n, __ATOMIC_RELAXED);
	ASSERT_EQ(0, st_disable(self->c.fd));
	TH_LOG("%s: first KIOENABLE %lld ms, %ld functions hooked, %llu PCs",
	       variant->whole ? "whole_kernel=1" : "default", first, hooked,
	       (unsigned long long)st_pcs(&self->c));

	/* the syscalls' own functions, in both */
	ASSERT_TRUE(st_has_syscall(&self->c, "getpid")) {
		st_dump(&self->c, 200);
	}
	ASSERT_TRUE(st_has_syscall(&self->c, "openat"));
	ASSERT_TRUE(st_has_syscall(&self->c, "read"));

	for (i = 0; i < ARRAY_SIZE(noise); i++) {
		hits = st_count_matching(&self->c, noise[i].exact ?
					    ksym_named : ksym_starts_with,
					    noise[i].name);
		TH_LOG("%s%s: %zu", noise[i].name, noise[i].exact ? "" : "*",
		       hits);
		if (variant->whole) {
			if (noise[i].must)
				ASSERT_LT(0, hits);
		} else {
			ASSERT_EQ(0, hits) {
				st_dump(&self->c, 300);
			}
		}
	}
}

/*
 * PREEMPT_RT: spin_lock() is rt_spin_lock() (kernel/locking/spinlock_rt.c),
 * a sleeping lock that also calls migrate_disable() (kernel/sched/core.c),
 * so every spinlock the syscall takes records four functions more than on
 * other kernels unless the default set leaves them out. "must" ones are the
 * positive control (whole_kernel=1 records them); the others are RT lock
 * functions this workload may reach.
 */
static const struct {
	const char *name;
	bool must;
} rt_noise[] = {
	{ "rt_spin_lock", true },	/* kernel/locking/spinlock_rt.c */
	{ "rt_spin_unlock", true },
	{ "migrate_disable", true },	/* kernel/sched/core.c */
	{ "migrate_enable", true },
	{ "rt_read_lock", false },
	{ "rt_write_lock", false },
	{ "rtlock_slowlock_locked", false },
	{ "__rwbase_read_lock", false },	/* kernel/locking/rwbase_rt.c */
	{ "rt_mutex_slowunlock", false },	/* kernel/locking/rtmutex.c */
};

FIXTURE(funcset_rt) {
	struct st_cov c;
	bool reloaded;
};

FIXTURE_VARIANT(funcset_rt) {
	const char *args;
	bool whole;
};

FIXTURE_VARIANT_ADD(funcset_rt, by_default) { .args = "", .whole = false };
FIXTURE_VARIANT_ADD(funcset_rt, whole_kernel) {
	.args = "whole_kernel=1", .whole = true
};

FIXTURE_SETUP(funcset_rt)
{
	self->c.fd = -1;
	self->c.buf = MAP_FAILED;
	self->reloaded = false;
	if (!st_okcov_ko())
		SKIP(return, "OKCOV_KO unset: no okcov.ko to reload");
	if (strstr(st_okcov_args(), "filter="))
		SKIP(return, "okcov runs with filter=: no default set");
	ASSERT_EQ(0, ksyms_load());
	if (!ksyms_addr("rt_spin_lock", NULL))
		SKIP(return,
		     "no rt_spin_lock in /proc/kallsyms: not a PREEMPT_RT kernel, its spinlocks do not sleep");
	self->reloaded = true;
	ASSERT_EQ(0, st_okcov_reload(variant->args));
	ASSERT_EQ(0, ksyms_load());
	ASSERT_EQ(0, st_new(&self->c, OKCOV_DEFAULT_MAX));
}

FIXTURE_TEARDOWN(funcset_rt)
{
	st_free(&self->c);
	if (self->reloaded)
		st_okcov_reload(st_okcov_args());
}

TEST_F_TIMEOUT(funcset_rt, sleeping_locks, 300)
{
	size_t i, hits;
	uint64_t n;

	if (_metadata->skip)
		return;
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	st_reset(&self->c);
	workload();
	n = st_count(&self->c);
	__atomic_store_n(&self->c.buf[0], n, __ATOMIC_RELAXED);
	ASSERT_EQ(0, st_disable(self->c.fd));
	TH_LOG("%s: %llu PCs", variant->whole ? "whole_kernel=1" : "default",
	       (unsigned long long)st_pcs(&self->c));

	ASSERT_TRUE(st_has_syscall(&self->c, "openat")) {
		st_dump(&self->c, 200);
	}
	ASSERT_TRUE(st_has_syscall(&self->c, "read"));
	ASSERT_TRUE(st_has_syscall(&self->c, "close"));

	for (i = 0; i < ARRAY_SIZE(rt_noise); i++) {
		hits = st_count_matching(&self->c, ksym_named,
					 rt_noise[i].name);
		TH_LOG("%s: %zu", rt_noise[i].name, hits);
		if (variant->whole) {
			if (rt_noise[i].must)
				ASSERT_LT(0, hits);
		} else {
			ASSERT_EQ(0, hits) {
				st_dump(&self->c, 400);
			}
		}
	}
}

int main(int argc, char **argv)
{
	st_target_remove();
	return test_harness_run(argc, argv);
}
