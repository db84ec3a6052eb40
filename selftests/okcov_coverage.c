// SPDX-License-Identifier: GPL-2.0
/*
 * okcov coverage: which PCs arrive (resolved through /proc/kallsyms), when
 * nothing may arrive, and the buffer's bounds: word 0 is read once and
 * bounds-checked, a full buffer drops events, TRACE_CMP gets nothing from
 * the ftrace source. (The TRACE_CMP bounds need a source of comparisons:
 * okcov_sancov.c tests them through the instrumented target module.)
 */
#include <sched.h>
#include <time.h>

#include "kselftest_harness.h"
#include "okcov_test.h"

#define PATTERN	0x5a5a5a5a5a5a5a5aULL

/* Every recorded word is the entry of a traced kernel function (the
 * function's address, or + 4 after an endbr64) or the call site of the
 * entry that follows it (call_sites), never okcov's own code.
 */
static void check_function_entries(struct __test_metadata *_metadata,
				   const struct st_cov *c)
{
	uint64_t i, n = st_pcs(c);
	char name[256];

	for (i = 0; i < n; i++) {
		uint64_t pc = c->buf[i + 1];
		const struct ksym *s = ksyms_lookup(pc, NULL);

		ASSERT_TRUE(st_is_kaddr(pc)) {
			TH_LOG("record %llu = %#llx is not a kernel address",
			       (unsigned long long)i, (unsigned long long)pc);
		}
		ASSERT_NE(NULL, s) {
			TH_LOG("record %llu = %#llx is in no kallsyms symbol",
			       (unsigned long long)i, (unsigned long long)pc);
		}
		/* An entry, or a call site right before its callee's. */
		ASSERT_TRUE(pc - s->addr == 0 || pc - s->addr == 4 ||
			    (pc - s->addr > 4 &&
			     (i + 1 == n || st_is_entry(c->buf[i + 2])))) {
			TH_LOG("record %llu = %s is not a function entry",
			       (unsigned long long)i,
			       ksyms_format(pc, name, sizeof(name)));
		}
		ASSERT_FALSE(s->mod && !strcmp(s->mod, "okcov")) {
			TH_LOG("record %llu = %s is okcov's own code",
			       (unsigned long long)i,
			       ksyms_format(pc, name, sizeof(name)));
		}
	}
}

FIXTURE(cov) {
	struct st_cov c;
};

FIXTURE_VARIANT(cov) {
	uint64_t n;
};

FIXTURE_VARIANT_ADD(cov, n64k) { .n = 64 << 10 };
FIXTURE_VARIANT_ADD(cov, n512k) { .n = 512 << 10 };

FIXTURE_SETUP(cov)
{
	self->c.fd = -1;
	self->c.buf = MAP_FAILED;
	ASSERT_EQ(0, ksyms_load());
	ASSERT_EQ(0, st_new(&self->c, variant->n));
}

FIXTURE_TEARDOWN(cov)
{
	st_free(&self->c);
}

/* After getpid(), the buffer holds the getpid syscall's function. */
TEST_F(cov, getpid)
{
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	st_reset(&self->c);
	sys_getpid_n(5);
	ASSERT_EQ(0, st_disable(self->c.fd));

	ASSERT_LT(0, st_count(&self->c));
	ASSERT_GT(self->c.n, st_count(&self->c));
	ASSERT_TRUE(st_has_syscall(&self->c, "getpid")) {
		st_dump(&self->c, 64);
	}
	/* getppid was never called while enabled */
	ASSERT_FALSE(st_has_syscall(&self->c, "getppid"));
	check_function_entries(_metadata, &self->c);
}

/* One PC per call: 50 getpid calls give (about) 50 sys_getpid entries. */
TEST_F(cov, one_pc_per_call)
{
	size_t hits;

	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	st_reset(&self->c);
	sys_getpid_n(50);
	ASSERT_EQ(0, st_disable(self->c.fd));

	hits = st_count_matching(&self->c, ksym_is_syscall, "getpid");
	/* each call enters __x64_sys_getpid, maybe __do_sys_getpid too */
	ASSERT_LE(50, hits);
	ASSERT_GE(150, hits);
}

/* Writing 0 to word 0 restarts recording at record 0. */
TEST_F(cov, reset)
{
	uint64_t first;

	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	st_reset(&self->c);
	sys_getpid_n(20);
	first = st_count(&self->c);
	st_reset(&self->c);
	sys_getppid_n(1);
	ASSERT_EQ(0, st_disable(self->c.fd));

	ASSERT_LT(0, st_count(&self->c));
	ASSERT_GT(first, st_count(&self->c));
	ASSERT_TRUE(st_has_syscall(&self->c, "getppid")) {
		st_dump(&self->c, 64);
	}
}

/* The legacy _IO('K', 2) enable records PCs, as TRACE_PC. */
TEST_F(cov, legacy_enable)
{
	ASSERT_EQ(0, st_enable_legacy(self->c.fd));
	st_reset(&self->c);
	sys_getpid_n(5);
	ASSERT_EQ(0, st_disable(self->c.fd));

	ASSERT_TRUE(st_has_syscall(&self->c, "getpid")) {
		st_dump(&self->c, 64);
	}
	check_function_entries(_metadata, &self->c);
}

/* A descriptor never enabled records nothing. */
TEST_F(cov, never_enabled)
{
	sys_getpid_n(20);
	ASSERT_EQ(0, st_count(&self->c));
}

/* After KIODISABLE nothing is recorded. */
TEST_F(cov, disabled)
{
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(0, st_disable(self->c.fd));
	st_reset(&self->c);
	sys_getpid_n(20);
	ASSERT_EQ(0, st_count(&self->c));

	/* ... and recording resumes after a new enable. */
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	sys_getpid_n(5);
	ASSERT_EQ(0, st_disable(self->c.fd));
	ASSERT_TRUE(st_has_syscall(&self->c, "getpid"));
}

/* TRACE_CMP is accepted; ftrace never produces comparison records. */
TEST_F(cov, cmp_mode_ftrace_silent)
{
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_CMP));
	st_reset(&self->c);
	sys_getpid_n(20);
	sys_getppid_n(20);
	ASSERT_EQ(0, st_disable(self->c.fd));
	ASSERT_EQ(0, st_count(&self->c));
}

/* Two descriptors in one thread: only the enabled one records. */
TEST_F(cov, two_fds_one_thread)
{
	struct st_cov idle;

	ASSERT_EQ(0, st_new(&idle, 4096));
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	st_reset(&self->c);
	sys_getpid_n(20);
	ASSERT_EQ(0, st_disable(self->c.fd));

	ASSERT_TRUE(st_has_syscall(&self->c, "getpid"));
	ASSERT_EQ(0, st_count(&idle));

	/* and the other way round */
	ASSERT_EQ(0, st_enable(idle.fd, KCOV_MODE_TRACE_PC));
	st_reset(&self->c);
	sys_getppid_n(5);
	ASSERT_EQ(0, st_disable(idle.fd));
	ASSERT_EQ(0, st_count(&self->c));
	ASSERT_TRUE(st_has_syscall(&idle, "getppid"));
	st_free(&idle);
}

/*
 * Interrupts never record: while the enabled thread spins in userspace,
 * timer interrupts (and the softirqs on their way out) run on its CPU in
 * its context; none of their functions may appear in its buffer.
 */
static const char * const irq_functions[] = {
	"hrtimer_interrupt", "__hrtimer_run_queues", "tick_sched_timer",
	"tick_sched_handle", "update_process_times", "scheduler_tick",
	"account_process_tick", "rcu_sched_clock_irq", "run_local_timers",
	"__sysvec_apic_timer_interrupt", "run_timer_softirq", "rcu_core",
	"irq_enter_rcu", "irq_exit_rcu", "__irq_exit_rcu",
};

static double elapsed_s(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) + (b->tv_nsec - a->tv_nsec) / 1e9;
}

/* A loop that makes no syscall and touches no memory. */
static void spin(unsigned long iterations)
{
	unsigned long i;

	for (i = 0; i < iterations; i++)
		__asm__ __volatile__("" : : : "memory");
}

/*
 * A competitor pinned to the enabled thread's CPU: the scheduler must
 * preempt the spinning thread (ticks, wakeups, context switches on its
 * CPU) during the measurement. It makes getppid calls, which must not
 * land either: coverage follows the thread, not the CPU.
 */
#define MIN_PREEMPTIONS	20

struct competitor {
	int cpu;
	bool stop, started;
	int err;
	unsigned long calls;
};

static void *competitor_fn(void *p)
{
	struct competitor *k = p;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(k->cpu, &set);
	k->err = sched_setaffinity(0, sizeof(set), &set) ? errno : 0;
	__atomic_store_n(&k->started, true, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&k->stop, __ATOMIC_RELAXED)) {
		syscall(SYS_getppid);
		__atomic_fetch_add(&k->calls, 1, __ATOMIC_RELAXED);
		spin(1000);
	}
	return NULL;
}

/* This thread's involuntary context switches (preemptions) so far. */
static long nonvoluntary_switches(void)
{
	char path[64], line[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", gettid());
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "nonvoluntary_ctxt_switches: %ld", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* Local timer interrupts taken so far on one CPU (/proc/interrupts LOC). */
static long timer_interrupts(int cpu)
{
	char line[4096], *p;
	long v = -1;
	int i;
	FILE *f = fopen("/proc/interrupts", "r");

	if (!f)
		return -1;
	/* x86's local APIC timer, arm64's architected timer (its PPI) */
	while (fgets(line, sizeof(line), f)) {
		p = line + strspn(line, " ");
		if (strncmp(p, "LOC:", 4) && !strstr(p, "arch_timer"))
			continue;
		p = strchr(p, ':') + 1;
		for (i = 0; i <= cpu; i++)
			v = strtol(p, &p, 10);
		break;
	}
	fclose(f);
	return v;
}

TEST_F(cov, interrupts_not_recorded)
{
	unsigned long iterations = 1UL << 20;
	struct competitor k = { 0 };
	long ticks, switches, calls;
	struct timespec t0, t1;
	size_t i, known = 0;
	cpu_set_t set;
	pthread_t th;
	uint64_t n;
	char name[256];

	for (i = 0; i < ARRAY_SIZE(irq_functions); i++)
		if (ksyms_addr(irq_functions[i], NULL))
			known++;
	ASSERT_LE(3, known);

	/* this thread and the competitor share one CPU */
	k.cpu = sched_getcpu();
	ASSERT_LE(0, k.cpu);
	CPU_ZERO(&set);
	CPU_SET(k.cpu, &set);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(set), &set));

	/* calibrate ~1 s of spinning alone (clock_gettime may be a syscall) */
	do {
		iterations *= 2;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		spin(iterations);
		clock_gettime(CLOCK_MONOTONIC, &t1);
	} while (elapsed_s(&t0, &t1) < 0.25);
	iterations = iterations / elapsed_s(&t0, &t1);

	/* no hook install or removal beside the busy competitor */
	ASSERT_EQ(0, st_hook_warm(self->c.fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(0, pthread_create(&th, NULL, competitor_fn, &k));
	while (!__atomic_load_n(&k.started, __ATOMIC_ACQUIRE))
		sched_yield();
	ASSERT_EQ(0, k.err);
	ticks = timer_interrupts(k.cpu);
	switches = nonvoluntary_switches();
	calls = __atomic_load_n(&k.calls, __ATOMIC_RELAXED);
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	st_reset(&self->c);
	spin(iterations);
	/* positive control: recording was live all along */
	syscall(SYS_getpid);
	ASSERT_EQ(0, st_disable(self->c.fd));
	calls = __atomic_load_n(&k.calls, __ATOMIC_RELAXED) - calls;
	switches = nonvoluntary_switches() - switches;
	ticks = timer_interrupts(k.cpu) - ticks;
	__atomic_store_n(&k.stop, true, __ATOMIC_RELAXED);
	pthread_join(th, NULL);

	n = st_pcs(&self->c);
	if (getenv("OKCOV_DEBUG"))
		st_dump(&self->c, 300);
	TH_LOG("%llu records in ~1 s of userspace spinning on CPU %d: %ld preemptions, %ld timer interrupts there, %ld competitor calls",
	       (unsigned long long)n, k.cpu, switches, ticks, calls);
	/*
	 * The conditions happened: interrupts on its CPU, and the competitor
	 * ran there, preempting it. Alone on an idle guest the thread sees
	 * a handful of preemptions in such a second (4 or 5 on debian-6.1
	 * under TCG), with the competitor 70 to 110.
	 */
	ASSERT_LT(0, ticks);
	ASSERT_LT(0, calls);
	ASSERT_LE(MIN_PREEMPTIONS, switches);
	ASSERT_GT(self->c.n - 1, n) {
		st_dump(&self->c, 100);
	}
	ASSERT_TRUE(st_has_syscall(&self->c, "getpid")) {
		st_dump(&self->c, 100);
	}
	ASSERT_FALSE(st_has_syscall(&self->c, "getppid")) {
		st_dump(&self->c, 100);
	}
	for (i = 0; i < n; i++) {
		size_t f;

		for (f = 0; f < ARRAY_SIZE(irq_functions); f++) {
			ASSERT_FALSE(ksyms_pc_matches(self->c.buf[i + 1],
						      ksym_named,
						      irq_functions[f])) {
				TH_LOG("record %zu: %s, interrupt code", i,
				       ksyms_format(self->c.buf[i + 1], name,
						    sizeof(name)));
			}
		}
	}
}

/* A full buffer: exactly n - 1 records, nothing written past word n - 1. */
TEST(full_buffer)
{
	const uint64_t n = 16;
	struct st_cov c;
	uint64_t i, words = st_map_len(n) / 8;

	ASSERT_EQ(0, st_new(&c, n));
	ASSERT_EQ(0, st_enable(c.fd, KCOV_MODE_TRACE_PC));
	st_reset(&c);
	sys_getpid_n(100);
	ASSERT_EQ(0, st_disable(c.fd));

	ASSERT_EQ(n - 1, st_count(&c));
	for (i = 1; i < n; i++)
		ASSERT_TRUE(st_is_kaddr(c.buf[i]));
	/* the rest of the page belongs to nobody */
	for (i = n; i < words; i++)
		ASSERT_EQ(0, c.buf[i]);
	st_free(&c);
}

/* A 2-entry buffer records exactly one PC, then stops. */
TEST(two_entries)
{
	struct st_cov c;
	uint64_t i;

	ASSERT_EQ(0, st_new(&c, 2));
	ASSERT_EQ(0, st_enable(c.fd, KCOV_MODE_TRACE_PC));
	st_reset(&c);
	sys_getpid_n(100);
	ASSERT_EQ(0, st_disable(c.fd));

	ASSERT_EQ(1, st_count(&c));
	ASSERT_TRUE(st_is_kaddr(c.buf[1]));
	for (i = 2; i < st_map_len(2) / 8; i++)
		ASSERT_EQ(0, c.buf[i]);
	st_free(&c);
}

/* A 1-entry buffer has room for nothing. */
TEST(one_entry)
{
	struct st_cov c;
	uint64_t i;

	ASSERT_EQ(0, st_new(&c, 1));
	ASSERT_EQ(0, st_enable(c.fd, KCOV_MODE_TRACE_PC));
	st_reset(&c);
	sys_getpid_n(100);
	ASSERT_EQ(0, st_disable(c.fd));

	for (i = 0; i < st_map_len(1) / 8; i++)
		ASSERT_EQ(0, c.buf[i]);
	st_free(&c);
}

/*
 * Word 0 is user-writable: a value at or past capacity (n - 1 records)
 * records nothing and crashes nothing; one below records exactly one.
 */
#define CNT_N	64

FIXTURE(count) {
	struct st_cov c;
};

FIXTURE_VARIANT(count) {
	uint64_t start;
	bool one_record;
};

FIXTURE_VARIANT_ADD(count, all_ones) { .start = ~0ULL };
FIXTURE_VARIANT_ADD(count, minus_two) { .start = ~0ULL - 1 };
FIXTURE_VARIANT_ADD(count, two_pow_63) { .start = 1ULL << 63 };
FIXTURE_VARIANT_ADD(count, two_pow_62) { .start = 1ULL << 62 };
/* would index word 1 if truncated to 32 bits */
FIXTURE_VARIANT_ADD(count, two_pow_32_plus_0) { .start = 1ULL << 32 };
/* (1 << 61) + 1 words of 8 bytes wrap around to byte 8 */
FIXTURE_VARIANT_ADD(count, wraps_to_word_1) { .start = 1ULL << 61 };
FIXTURE_VARIANT_ADD(count, page_past_end) { .start = 512 };
FIXTURE_VARIANT_ADD(count, capacity_plus_one) { .start = CNT_N };
FIXTURE_VARIANT_ADD(count, capacity) { .start = CNT_N - 1 };
FIXTURE_VARIANT_ADD(count, capacity_minus_one) {
	.start = CNT_N - 2, .one_record = true };

FIXTURE_SETUP(count)
{
	uint64_t i;

	self->c.fd = -1;
	self->c.buf = MAP_FAILED;
	ASSERT_EQ(0, st_new(&self->c, CNT_N));
	for (i = 1; i < CNT_N; i++)
		self->c.buf[i] = PATTERN;
}

FIXTURE_TEARDOWN(count)
{
	st_free(&self->c);
}

static void run_with_count(struct __test_metadata *_metadata,
			   struct st_cov *c, uint64_t start, int mode)
{
	__atomic_store_n(&c->buf[0], start, __ATOMIC_RELAXED);
	ASSERT_EQ(0, st_enable(c->fd, mode));
	sys_getpid_n(20);
	sys_getppid_n(20);
	ASSERT_EQ(0, st_disable(c->fd));
}

TEST_F(count, trace_pc)
{
	uint64_t i, last = CNT_N - 1;

	run_with_count(_metadata, &self->c, variant->start,
		       KCOV_MODE_TRACE_PC);
	if (variant->one_record) {
		ASSERT_EQ(variant->start + 1, st_count(&self->c));
		ASSERT_TRUE(st_is_kaddr(self->c.buf[last]));
		last--;
	} else {
		ASSERT_EQ(variant->start, st_count(&self->c));
	}
	for (i = 1; i <= last; i++)
		ASSERT_EQ(PATTERN, self->c.buf[i]);
	for (i = CNT_N; i < st_map_len(CNT_N) / 8; i++)
		ASSERT_EQ(0, self->c.buf[i]);
}

TEST_HARNESS_MAIN
