// SPDX-License-Identifier: GPL-2.0
/*
 * okcov_stress: a bounded, seeded stress of /dev/okcov and of loading and
 * unloading okcov, with every result checked against the errno table of
 * uapi/okcov.h wherever it is determinable.
 *
 *   okcov_stress [--seed N] [--duration S] [--procs M] [--threads K]
 *                [--cycle S] [--warmup S] [--ko PATH]
 *
 * The main process loads okcov through libkmod (--ko, default $OKCOV_KO;
 * options from $OKCOV_KO_ARGS) and runs the cycler. M worker processes each
 * run K worker threads, a bystander thread that only makes syscalls, and a
 * supervisor (the process's main thread) that joins exited workers, checks
 * what they handed over and respawns them.
 *
 * Workers issue random operations: open, dup, close, passing an fd through
 * an AF_UNIX socket (SCM_RIGHTS: received back, or left in flight while the
 * socket closes, so that the socket drops the last reference),
 * KIOSETBUFSIZE with sizes from 0 to far past max_entries, KIOENABLE in both forms with modes
 * -1..3 and garbage, KIODISABLE, ioctls with random _IOC() numbers, bad
 * pointers (NULL, 1, kernel, non-canonical, unmapped, straddling a page
 * edge) as arguments, mmap/munmap/mprotect/mremap of random ranges,
 * offsets, protections and flags, garbage written into buf[0], coverage
 * syscalls, fork (the child does a few random operations and exits, often
 * still enabled), exec (a child enables, re-executes this program, which
 * checks that the attachment survived, and exits) and thread exit, and on
 * the process's remote descriptor: KIOREMOTEATTACH (on fresh and on private
 * descriptors, good and bad subsystems and pointers), KIOENABLE and
 * KIODISABLE from any thread, close (mostly while TRACE), and deferred work
 * while it runs: a BPF map's free (a kworker) and, when $OKCOV_TARGET_KO
 * names the test-target module (loaded after okcov, unloaded before it),
 * its work items, timers and delayed work, maybe slow or late, timers it
 * deletes and work it cancels before they run (tags no tracepoint
 * consumes), and its BH storm (6.9+: work queued on system_bh_wq from an
 * hrtimer every 100 us, run in softirq on top of anything, okcov's ioctls
 * included).
 *
 * A descriptor is either private (one thread's, never touched by another:
 * its state is known exactly, so results and buffer contents are checked
 * exactly) or shared (a per-process pool any thread, and forked children,
 * may use: only the results possible in every state are accepted).
 *
 * Every --cycle seconds the cycler tries rmmod while descriptors are in use
 * (refused), insmod while loaded (EEXIST), then drains: every thread
 * unmaps and closes everything, many after enabling, so that only DYING
 * descriptors are left, attached to live threads; rmmod must then succeed,
 * the threads keep making syscalls while okcov is gone, and okcov is loaded
 * again. A module generation counter tells the threads their attachments
 * went with it.
 *
 * After the run: okcov must unload; kmemleak (when the kernel has it) must
 * report nothing after two scans; Slab (+2 MiB), VmallocUsed (+1 MiB) and
 * MemFree (-8 MiB, counting the free pages parked on per-CPU lists, which
 * alone swing by tens of MiB) must be back to what they were after loading
 * okcov and one warm-up round, each measured after drop_caches and after
 * shrinking every slab cache (which also empties KASAN's quarantine).
 *
 * The seed fixes every random choice a thread makes; what interleaves with
 * what is up to the scheduler, so a seed replays the same mix, not the same
 * run. --cycle 0 never unloads; --duration is the time of plain stress, and
 * a cycle started before its end runs to completion.
 *
 * Output is KTAP: the parameters, "# FAIL ..." for each unexpected result,
 * per-operation counts by result, four test points and a Totals line.
 * Exits non-zero on any failure.
 */
#include "stress.h"

struct opts {
	uint64_t seed;
	double duration, cycle_s, warmup;
	int nprocs, nthreads;
};

/* KTAP test points: what passed, failed, was skipped. */
struct tally {
	int pass, fail, skip;
};

static void usage_exit(void)
{
	fprintf(stderr,
		"usage: okcov_stress [--seed N] [--duration S] [--procs M] [--threads K]\n"
		"                    [--cycle S] [--warmup S] [--hang S] [--ko PATH]\n");
	exit(2);
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	bool seeded = false;
	int i;

	*o = (struct opts){ .duration = 60, .cycle_s = 10, .warmup = 5,
			    .nprocs = 4, .nthreads = 4 };
	ko_path = getenv("OKCOV_KO");
	ko_args = getenv("OKCOV_KO_ARGS");
	target_ko = getenv("OKCOV_TARGET_KO");
	if (target_ko && !*target_ko)
		target_ko = NULL;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			usage_exit();
		if (!strcmp(a, "--seed"))
			o->seed = strtoull(v, NULL, 0), seeded = true;
		else if (!strcmp(a, "--duration"))
			o->duration = atof(v);
		else if (!strcmp(a, "--procs"))
			o->nprocs = atoi(v);
		else if (!strcmp(a, "--threads"))
			o->nthreads = atoi(v);
		else if (!strcmp(a, "--cycle"))
			o->cycle_s = atof(v);
		else if (!strcmp(a, "--warmup"))
			o->warmup = atof(v);
		else if (!strcmp(a, "--ko"))
			ko_path = v;
		else if (!strcmp(a, "--hang"))
			hang_s = atof(v);
		else
			usage_exit();
		i++;
	}
	if (o->nprocs < 1 || o->nprocs > MAX_PROCS || o->nthreads < 1 ||
	    o->nthreads > MAX_THREADS || o->duration <= 0 || hang_s <= 0)
		usage_exit();
	if (!seeded) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		o->seed = (uint64_t)ts.tv_sec * 1000003 ^ ts.tv_nsec ^ getpid();
	}
	if (!ko_args)
		ko_args = "";
}

static void print_params(const struct opts *o)
{
	say("TAP version 13");
	say("1..4");
	say("# okcov_stress: seed=%" PRIu64 " duration=%g procs=%d threads=%d cycle=%g warmup=%g hang=%g",
	    o->seed, o->duration, o->nprocs, o->nthreads, o->cycle_s,
	    o->warmup, hang_s);
	say("# okcov_stress: ko=%s ko_args='%s' reproduce with: okcov_stress --seed %" PRIu64 " --duration %g --procs %d --threads %d --cycle %g --warmup %g --hang %g",
	    ko_path ? ko_path : "(none)", ko_args, o->seed, o->duration,
	    o->nprocs, o->nthreads, o->cycle_s, o->warmup, hang_s);
	say("# okcov_stress: target=%s", target_ko ? target_ko :
	    "(none: OKCOV_TARGET_KO unset, stock deferred work only)");
	say("# okcov_stress: tolerances: Slab +%d KiB, VmallocUsed +%d KiB, MemFree -%d KiB",
	    TOL_SLAB, TOL_VMALLOC, TOL_MEMFREE);
}

/* The state every process shares, exec'd children included. */
static void setup_shm(const struct opts *o)
{
	shm_fd = memfd_create("okcov_stress", 0);	/* no CLOEXEC: exec'd children map it */
	if (shm_fd < 0 || ftruncate(shm_fd, sizeof(*shm))) {
		perror("memfd_create");
		exit(1);
	}
	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE, MAP_SHARED,
		   shm_fd, 0);
	if (shm == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	shm->seed = o->seed;
	shm->procs = o->nprocs;
	shm->threads = o->nthreads;
}

static void setup_guard(void)
{
	char *g;

	page = sysconf(_SC_PAGESIZE);
	g = mmap(NULL, 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g == MAP_FAILED || mprotect(g, page, PROT_READ | PROT_WRITE)) {
		perror("mmap");
		exit(1);
	}
	memset(g, 0x5a, page);
	guard_rw = g;
	guard_none = g + page;
}

/*
 * Warm up, then load okcov afresh and measure the baseline; false if
 * okcov could not be (re)loaded. Returns how long the run took in *elapsed.
 */
static bool run(struct opts *o, bool preloaded, struct meminfo *before,
		double *elapsed)
{
	double t0;

	if (!preloaded && !load("initial load"))
		return false;
	if (preloaded && !ko_path) {
		say("# okcov was loaded by someone else and no okcov.ko is known: no rmmod/insmod cycles");
		o->cycle_s = 0;
	}
	atomic_store(&shm->max_entries, st_max_entries());
	atomic_store(&shm->narrowed, read_narrowed());
	say("# okcov_stress: max_entries=%lu%s", max_entries(),
	    atomic_load(&shm->narrowed) ?
	    ", function set narrowed: not requiring getpid to record" : "");

	t0 = now();
	run_engine(o->nprocs, o->nthreads, o->warmup, 0, o->seed ^ 0xa5a5a5a5);
	say("# warm-up: %.1f s", now() - t0);
	if (ko_path) {
		if (!unload("after warm-up") || !load("baseline"))
			return false;
	}
	settle();
	read_meminfo(before);
	say("# baseline (okcov loaded, after warm-up): Slab %ld KiB, VmallocUsed %ld KiB, MemFree %ld KiB (+%ld KiB on per-CPU lists)",
	    before->slab, before->vmalloc, before->memfree, before->pcp);

	t_start = now();
	run_engine(o->nprocs, o->nthreads, o->duration, o->cycle_s, o->seed);
	*elapsed = now() - t_start;
	return true;
}

/* Test point 1: per-operation counts, and no unexpected result. */
static void report_ops(struct tally *t, uint64_t seed, double elapsed)
{
	unsigned long total = 0, fails, noise, sum, c;
	char line[1024];
	size_t n;
	int i, r;

	say("# ops by type: executed (results)");
	for (i = 0; i < NOPS; i++) {
		sum = 0;
		n = 0;
		for (r = 0; r < NRES; r++) {
			c = atomic_load(&shm->cnt[i][r]);
			if (!c)
				continue;
			sum += c;
			n += snprintf(line + n, sizeof(line) - n, "%s%s %lu",
				      n ? ", " : "", res_names[r], c);
		}
		total += sum;
		c = atomic_load(&shm->timed[i]);
		if (c)
			n += snprintf(line + n, sizeof(line) - n,
				      "; %.1f ms each",
				      atomic_load(&shm->ns[i]) / 1e6 / c);
		say("#   %-22s %9lu  (%s)", op_names[i], sum, n ? line : "-");
	}
	fails = atomic_load(&shm->failures);
	noise = atomic_load(&shm->cnt[OP_NOISE][RS_OK]);
	say("# totals: %lu operations and checks + %lu bystander syscalls, %lu threads spawned, %lu processes spawned (workers, fork and exec children), %.1f s, seed %" PRIu64,
	    total - noise, noise, atomic_load(&shm->threads_spawned),
	    atomic_load(&shm->procs_spawned), elapsed, seed);
	say("# cycles: %lu, rmmod refused while in use %lu times, unloads %lu; descriptors re-enabled right after their thread exited enabled: %lu",
	    atomic_load(&shm->cycles), atomic_load(&shm->refusals),
	    atomic_load(&shm->unloads), atomic_load(&shm->handoff_trace));
	say("# remote: %lu closed while TRACE, %lu deferred-work sources run while TRACE",
	    atomic_load(&shm->rclose_trace), atomic_load(&shm->rdefer_trace));
	say("# remote: %lu timers deleted and work items cancelled while TRACE, %lu BH storm runs; okcov (since its last load): remote_dropped %lld, remote_reclaimed %lld",
	    atomic_load(&shm->churned), atomic_load(&shm->bh_runs),
	    st_stat("remote_dropped"), st_stat("remote_reclaimed"));
	if (fails) {
		say("not ok 1 stress: %lu unexpected results (seed %" PRIu64 ")",
		    fails, seed);
		t->fail++;
	} else {
		say("ok 1 stress: %lu operations and checks, no unexpected result",
		    total - noise);
		t->pass++;
	}
}

/* Test point 2: okcov unloads at the end. Whether it did. */
static bool test_unload(struct tally *t)
{
	if (!ko_path) {
		say("ok 2 okcov unloads at the end # SKIP no okcov.ko to load again");
		t->skip++;
		return false;
	}
	if (mod_loaded() && unload("end of run") && !mod_loaded()) {
		say("ok 2 okcov unloads at the end");
		t->pass++;
		return true;
	}
	say("not ok 2 okcov unloads at the end");
	t->fail++;
	return false;
}

/* Test point 3: kmemleak reports nothing after two scans. */
static void test_kmemleak(struct tally *t)
{
	char line[1024];
	size_t n = 0;
	FILE *f;

	if (access(KMEMLEAK, F_OK)) {
		say("ok 3 kmemleak # SKIP the kernel has no kmemleak (%s)",
		    KMEMLEAK);
		t->skip++;
		return;
	}
	write_file(KMEMLEAK, "scan");
	sleep(6);
	write_file(KMEMLEAK, "scan");
	f = fopen(KMEMLEAK, "r");
	if (!f) {
		say("not ok 3 kmemleak: cannot read %s", KMEMLEAK);
		t->fail++;
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		say("# kmemleak: %s", line);
		n++;
	}
	fclose(f);
	if (n) {
		say("not ok 3 kmemleak: %zu lines of report", n);
		t->fail++;
	} else {
		say("ok 3 kmemleak: no leak reported");
		t->pass++;
	}
}

/* Test point 4: Slab, VmallocUsed and MemFree back to the baseline. */
static void test_memory(struct tally *t, bool unloaded,
			const struct meminfo *before)
{
	static struct meminfo after;
	long dslab = 0, dvm = 0, dfree = 0;
	bool ok = false;
	int i;

	if (!ko_path) {
		say("ok 4 memory returned to baseline # SKIP okcov cannot be reloaded");
		t->skip++;
		return;
	}
	if (!unloaded || before->slab < 0) {
		say("not ok 4 memory returned to baseline: no baseline or okcov still loaded");
		t->fail++;
		return;
	}
	for (i = 0; i < 3 && !ok; i++) {
		settle();
		read_meminfo(&after);
		dslab = after.slab - before->slab;
		dvm = after.vmalloc - before->vmalloc;
		dfree = after.memfree + after.pcp -
			(before->memfree + before->pcp);
		say("# memory after (okcov unloaded): Slab %ld KiB (%+ld), VmallocUsed %ld KiB (%+ld), MemFree %ld KiB (%+ld; %+ld counting per-CPU free lists)",
		    after.slab, dslab, after.vmalloc, dvm, after.memfree,
		    after.memfree - before->memfree, dfree);
		meminfo_deltas(before, &after);
		ok = dslab <= TOL_SLAB && dvm <= TOL_VMALLOC &&
		     dfree >= -TOL_MEMFREE;
	}
	if (ok) {
		say("ok 4 memory returned to baseline: Slab %+ld KiB, VmallocUsed %+ld KiB, MemFree (with per-CPU free lists) %+ld KiB",
		    dslab, dvm, dfree);
		t->pass++;
	} else {
		say("not ok 4 memory returned to baseline: Slab %+ld KiB (max +%d), VmallocUsed %+ld KiB (max +%d), MemFree (with per-CPU free lists) %+ld KiB (min -%d)",
		    dslab, TOL_SLAB, dvm, TOL_VMALLOC, dfree, TOL_MEMFREE);
		t->fail++;
	}
}

int main(int argc, char **argv)
{
	static struct meminfo before = { .slab = -1 };
	struct tally t = { 0 };
	double elapsed = 0;
	unsigned long fails;
	struct opts o;
	bool preloaded, unloaded;

	if (argc >= 9 && !strcmp(argv[1], "--exec-child"))
		return exec_image_main(argv + 2);
	parse_args(argc, argv, &o);
	setvbuf(stdout, NULL, _IONBF, 0);
	print_params(&o);
	setup_shm(&o);
	setup_guard();
	shm->bpf = bpf_probe();
	say("# okcov_stress: stock deferred work (a BPF map's free): %s",
	    shm->bpf ? "yes" : "no, bpf(BPF_MAP_CREATE) fails on this kernel");
	shm->bh_wq = bh_wq_probe();
	say("# okcov_stress: BH workqueues (the target's BH storm): %s",
	    shm->bh_wq ? "yes" : "no (before 6.9): the storm ioctl says EOPNOTSUPP");
	if (!kmod_setup()) {
		say("not ok 1 stress # cannot create a libkmod context");
		return 1;
	}
	preloaded = mod_loaded();
	if (!preloaded && !ko_path) {
		say("# okcov is not loaded and neither --ko nor $OKCOV_KO says where it is");
		say("not ok 1 stress");
		say("# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0");
		return 1;
	}
	run(&o, preloaded, &before, &elapsed);
	report_ops(&t, o.seed, elapsed);
	fails = atomic_load(&shm->failures);
	unloaded = test_unload(&t);
	test_kmemleak(&t);
	test_memory(&t, unloaded, &before);
	if (preloaded && ko_path && !mod_loaded())
		do_insmod();	/* leave it as we found it */
	if (atomic_load(&shm->failures) > fails)
		say("# %lu more unexpected results during the final checks",
		    atomic_load(&shm->failures) - fails);
	say("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0",
	    t.pass, t.fail, t.skip);
	kmod_teardown();
	return t.fail ? 1 : 0;
}
