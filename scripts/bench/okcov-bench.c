// SPDX-License-Identifier: GPL-2.0
/*
 * okcov-bench PHASE: cost and quality of coverage, in one guest boot.
 *
 *   okcov-bench absent	okcov not loaded: the baseline
 *   okcov-bench native	Linux's own kcov (/sys/kernel/debug/kcov), okcov
 *			still absent: a bystander thread, then an enabled
 *			thread, determinism; says so and does nothing on a
 *			kernel without it
 *   okcov-bench loaded	okcov loaded, no descriptor: must equal absent
 *   okcov-bench okcov	okcov: a bystander thread, a remote bystander
 *			(another process's remote descriptor in TRACE),
 *			an enabled thread, determinism, and the latency
 *			of sizing and enabling a first and a second
 *			descriptor
 *   okcov-bench released	every okcov descriptor gone, the hook removed;
 *			then the latency of a KIOENABLE that installs
 *			it again
 *   okcov-bench ready	okcov just loaded with hook_at_load=1 (its hook
 *			being installed in the background): the latency
 *			of the first KIOENABLE and until its thread's
 *			first PC, of a KIOENABLE after hook_linger_ms,
 *			then no descriptor with the hook kept installed
 *   okcov-bench deep-record FILE	okcov enabled over one round of each
 *			workload (300 calls at most): the kernel functions
 *			its PCs (entries, call sites) lie in, one name a
 *			line, into FILE
 *   okcov-bench deep	run under okcov-cover deep -f FILE: the probes'
 *			count and how many kprobes optimised, once the
 *			optimiser is done (it turns it on), then a bystander
 *			thread and an enabled thread, as in okcov
 *   okcov-bench signal ...	the signal benchmark: what a fuzzer learns
 *			from each backend (bench-signal.c)
 *
 * Workloads (bench-work.c): getppid, open+read+close, a fuzzer-shaped
 * program of eleven syscalls whose coverage an enabled thread reads back
 * and deduplicates, as a fuzzer does (its instances vary with a seed), and
 * two that defer: a loopback TCP connection (timers armed and deleted)
 * and a BPF map's create and close (a work item), where the kernel has
 * them.
 *
 * Output lines, turned into one table by scripts/bench/run:
 *   t PHASE WORKLOAD NS		time per call or program, best round
 *   rich BACKEND WORKLOAD RAW DISTINCT FULL
 *				mean PCs and distinct PCs per program
 *				over the last timed round, and how many
 *				programs filled the buffer
 *   det BACKEND WORKLOAD RUNS SETS TOP RAW DISTINCT FULL
 *				one fixed instance run RUNS times: how
 *				many distinct PC sets, the share of the
 *				most common one, mean PCs and distinct PCs
 *   lat BACKEND WHAT NS	sizing and enabling latencies
 *   deepfn FUNCTIONS PCS	deep-record: functions written, distinct PCs
 *   kprobes PROBES OPTIMIZED	deep: lines of kprobes' list, [OPTIMIZED] ones
 *   vary...			with OKCOV_BENCH_VARY=1: the functions
 *				whose presence varies across the
 *				determinism runs (bench-vary.c)
 *
 * Run it under QEMU -icount so that guest time follows instructions
 * executed.  Before each phase the guest must be idle (a whole second
 * with the CPU 97% idle): work left over from boot or from an ftrace
 * hook install or removal would otherwise be charged to that phase.
 */
#include <err.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "kallsyms.h"
#include "okcov.h"

#define DET_RUNS	200

static struct pcset set;
static int vary;

/* Busy and total jiffies of all CPUs, from /proc/stat. */
static void cpu_jiffies(unsigned long long *busy, unsigned long long *total)
{
	unsigned long long v[10] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int i;

	if (!f || fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
			 &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
			 &v[7], &v[8], &v[9]) < 5)
		err(1, "/proc/stat");
	fclose(f);
	*total = 0;
	for (i = 0; i < 8; i++)	/* guest time is already in user */
		*total += v[i];
	*busy = *total - v[3] - v[4];	/* minus idle and iowait */
}

/* Wait (at most 120 s) for a one-second window with the CPU 97% idle. */
static void settle(const char *phase)
{
	unsigned long long b0, t0, b1, t1;
	double start = now_ns();

	for (;;) {
		cpu_jiffies(&b0, &t0);
		sleep(1);
		cpu_jiffies(&b1, &t1);
		if (t1 > t0 && (b1 - b0) * 100 <= (t1 - t0) * 3)
			break;
		if (now_ns() - start > 120e9) {
			printf("# %s: the guest never went idle; measuring anyway\n",
			       phase);
			return;
		}
	}
	printf("# %s: guest idle after %.1f s\n", phase,
	       (now_ns() - start) / 1e9);
}

/*
 * Best of the op's rounds: the least disturbed one.  With c (this thread
 * enabled) every call starts with a reset buffer; a readback op also
 * reads its PCs back into the set, and the last round's counts are
 * printed as the richness of c's coverage.
 */
static void measure(const char *phase, const struct op *op, const struct cov *c)
{
	double best = 0, raw = 0, distinct = 0;
	int r, k, full, nfull = 0;

	if (!op->iters)
		return;

	for (r = 0; r < op->rounds; r++) {
		double t0 = now_ns();

		for (k = 0; k < op->iters; k++) {
			if (c)
				__atomic_store_n(&c->buf[0], 0, __ATOMIC_RELAXED);
			op->fn(k);
			if (c && op->readback) {
				uint64_t n = pcset_read(&set, c, &full);

				if (r == op->rounds - 1) {
					raw += n;
					distinct += set.n;
					nfull += full;
				}
			}
		}
		t0 = (now_ns() - t0) / op->iters;
		if (!r || t0 < best)
			best = t0;
	}
	printf("t %s %s %.0f\n", phase, op->name, best);
	if (c && op->readback)
		printf("rich %s %s %.1f %.1f %d\n", c->name, op->name,
		       raw / op->iters, distinct / op->iters, nfull);
}

static void run_all(const char *phase, const struct cov *c)
{
	int i;

	settle(phase);
	for (i = 0; i < bench_nops; i++)
		measure(phase, &bench_ops[i], c);
	fflush(stdout);
}

/*
 * The same instance DET_RUNS times, after one warm-up run: how many
 * distinct PC sets (the set, not the sequence: a fuzzer's signal), and
 * how often the most common one came.
 */
static void determinism(const struct cov *c, const char *name,
			void (*fn)(unsigned int k))
{
	static struct pcsig sig[DET_RUNS];
	double raw = 0, distinct = 0;
	int i, nsig = 0, top = 0, full, nfull = 0;

	for (i = -1; i < DET_RUNS; i++) {
		__atomic_store_n(&c->buf[0], 0, __ATOMIC_RELAXED);
		fn(0);
		raw += i < 0 ? 0 : pcset_read(&set, c, &full);
		if (i < 0)
			continue;
		if (vary)
			vary_run(c, i);
		distinct += set.n;
		nfull += full;
		top = pcsig_tally(sig, &nsig, &set, top);
	}
	printf("det %s %s %d %d %.3f %.1f %.1f %d\n", c->name, name, DET_RUNS,
	       nsig, (double)top / DET_RUNS, raw / DET_RUNS,
	       distinct / DET_RUNS, nfull);
	fflush(stdout);
	if (vary)
		vary_report(c->name, name, DET_RUNS);
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int stage;
static double enable_ns;

static void set_stage(int s)
{
	pthread_mutex_lock(&mu);
	stage = s;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

static void wait_stage(int s)
{
	pthread_mutex_lock(&mu);
	while (stage != s)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
}

/* The enabled thread a bystander runs beside. */
static void *enabled_thread(void *arg)
{
	struct cov *c = arg;
	double t0 = now_ns();

	cov_enable(c);
	enable_ns = now_ns() - t0;
	set_stage(1);
	wait_stage(2);
	cov_disable(c);
	return NULL;
}

/*
 * Remote bystander: another process holds a remote descriptor in TRACE,
 * so every queue_work, mod_timer, timer expiry and work item of the
 * machine goes through okcov's probes; this process's own are not
 * recorded (it is not the owner) and must cost next to nothing.
 */
static void remote_bystander(void)
{
	int up[2], down[2];
	char ch = 'n';
	pid_t pid;

	if (pipe(up) || pipe(down))
		err(1, "pipe");
	pid = fork();
	if (pid < 0)
		err(1, "fork");
	if (pid == 0) {
		struct kio_remote_attach ra = { KCOV_REMOTE_COMMON, 0 };
		int mode = KCOV_MODE_TRACE_PC;
		struct cov r;
		double ns;

		close(up[0]);
		close(down[1]);
		cov_open(&r, 0, &ns);
		if (!ioctl(r.fd, KIOREMOTEATTACH, &ra) &&
		    !ioctl(r.fd, KIOENABLE, &mode))
			ch = 'y';
		if (write(up[1], &ch, 1) != 1 || read(down[0], &ch, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(up[1]);
	close(down[0]);
	if (read(up[0], &ch, 1) != 1 || ch != 'y')
		errx(1, "remote bystander: the remote descriptor did not enable");
	run_all("okcov-remote-bystander", NULL);
	close(down[1]);
	close(up[0]);
	waitpid(pid, NULL, 0);
}

/* deep: the phases' and rich lines' name instead of okcov's */
static void traced(int native, const char *deep)
{
	const char *name = deep ? deep : native ? "native" : "okcov";
	char phase[32];
	struct cov c, c2;
	double size_ns, t0;
	pthread_t t;

	if (!cov_present(native)) {
		printf("# %s: %s not present, not measured\n", name,
		       native ? NATIVE_PATH : "/dev/okcov");
		return;
	}
	cov_open(&c, native, &size_ns);
	c.name = name;
	if (!deep)
		printf("lat %s first-size %.0f\n", name, size_ns);

	/* Bystander: another thread is enabled, this one is not. */
	stage = 0;
	if (pthread_create(&t, NULL, enabled_thread, &c))
		errx(1, "pthread_create");
	wait_stage(1);
	if (!deep)
		printf("lat %s first-enable %.0f\n", name, enable_ns);
	snprintf(phase, sizeof(phase), "%s-bystander", name);
	run_all(phase, NULL);
	set_stage(2);
	pthread_join(t, NULL);
	if (!native && !deep)
		remote_bystander();

	/* Enabled: this thread records. */
	cov_enable(&c);
	snprintf(phase, sizeof(phase), "%s-enabled", name);
	run_all(phase, &c);
	if (deep) {
		cov_disable(&c);
		cov_close(&c);
		return;
	}
	determinism(&c, "open+read+close", op_open_read_close);
	determinism(&c, "fuzzer-program", fuzz_program);
	cov_disable(&c);

	/* A second descriptor while the first one holds the hook. */
	cov_open(&c2, native, &size_ns);
	printf("lat %s second-size %.0f\n", name, size_ns);
	t0 = now_ns();
	cov_enable(&c2);
	printf("lat %s second-enable %.0f\n", name, now_ns() - t0);
	cov_disable(&c2);
	cov_close(&c2);
	cov_close(&c);
	fflush(stdout);
}

/* okcov's hook_linger_ms, in ms (1000 if unreadable). */
static long linger_ms(void)
{
	FILE *f = fopen("/sys/module/okcov/parameters/hook_linger_ms", "r");
	long ms = 1000;

	if (f) {
		if (fscanf(f, "%ld", &ms) != 1)
			ms = 1000;
		fclose(f);
	}
	return ms;
}

/* A KIOENABLE once the hook's linger passed: lat okcov linger-enable. */
static void linger_enable(const char *name)
{
	struct cov c;
	double t0;

	cov_open(&c, 0, NULL);
	t0 = now_ns();
	cov_enable(&c);
	printf("lat %s linger-enable %.0f\n", name, now_ns() - t0);
	cov_disable(&c);
	cov_close(&c);
}

/*
 * Right after insmod hook_at_load=1: the first KIOENABLE, while the hook
 * is installed in the background, and the time until this thread's
 * getppid() records (polled every 10 ms: the install needs the CPU);
 * then the same after hook_linger_ms, and no descriptor with the hook
 * kept installed (ready-idle).
 */
static void ready(void)
{
	struct cov c;
	double t0;

	cov_open(&c, 0, NULL);
	t0 = now_ns();
	cov_enable(&c);
	printf("lat ready first-enable %.0f\n", now_ns() - t0);
	for (;;) {
		__atomic_store_n(&c.buf[0], 0, __ATOMIC_RELAXED);
		syscall(SYS_getppid);
		if (__atomic_load_n(&c.buf[0], __ATOMIC_RELAXED))
			break;
		if (now_ns() - t0 > 600e9)
			errx(1, "ready: no PC 600 s after KIOENABLE");
		usleep(10 * 1000);
	}
	printf("lat ready first-pc %.0f\n", now_ns() - t0);
	cov_disable(&c);
	cov_close(&c);
	usleep((linger_ms() + 1000) * 1000);
	settle("ready");
	linger_enable("ready");
	run_all("ready-idle", NULL);
}

#define KPROBES_LIST	"/sys/kernel/debug/kprobes/list"
#define KPROBES_OPT	"/proc/sys/debug/kprobes-optimization"
#define DEEP_RECORD_MAX	300

/* Lines of kprobes' list (-1: none), the [OPTIMIZED] ones in *@opt. */
static int kprobes_count(int *opt)
{
	char line[512];
	int n = 0;
	FILE *f = fopen(KPROBES_LIST, "r");

	*opt = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, "[OPTIMIZED]"))
			(*opt)++;
	}
	fclose(f);
	return n;
}

/*
 * The functions the workloads reach: okcov enabled over one round of each
 * (at most DEEP_RECORD_MAX calls), every recorded PC symbolized to the
 * text symbol at or below it (an entry, or a call site with call_sites=1).
 */
static void deep_record(const char *path)
{
	struct pcset fns;
	struct cov c;
	double ns;
	uint64_t n, i;
	size_t nfn = 0, j;
	int o, k, e;
	FILE *f;

	e = ksyms_load();
	if (e)
		errx(1, "/proc/kallsyms: %s", strerror(-e));
	pcset_init(&fns, 16);
	pcset_init(&set, 18);
	cov_open(&c, 0, &ns);
	cov_enable(&c);
	for (o = 0; o < bench_nops; o++) {
		const struct op *op = &bench_ops[o];

		for (k = 0; k < op->iters && k < DEEP_RECORD_MAX; k++) {
			__atomic_store_n(&c.buf[0], 0, __ATOMIC_RELAXED);
			op->fn(k);
			n = __atomic_load_n(&c.buf[0], __ATOMIC_RELAXED);
			if (n > c.entries - 1)
				n = c.entries - 1;
			for (i = 0; i < n; i++) {
				if (set.n > set.mask / 2)
					errx(1, "deep-record: too many PCs");
				pcset_add(&set, c.buf[i + 1]);
			}
		}
	}
	cov_disable(&c);
	cov_close(&c);
	f = fopen(path, "w");
	if (!f)
		err(1, "%s", path);
	for (j = 0; j <= set.mask; j++) {
		const struct ksym *s;

		if (set.gen[j] != set.cur)
			continue;
		s = ksyms_lookup(set.pc[j], NULL);
		if (!s)
			continue;
		n = fns.n;
		if (fns.n > fns.mask / 2)
			errx(1, "deep-record: too many functions");
		pcset_add(&fns, s->addr);
		if (fns.n != n) {
			fprintf(f, "%s\n", s->name);
			nfn++;
		}
	}
	if (fclose(f))
		err(1, "%s", path);
	printf("deepfn %zu %zu\n", nfn, set.n);
}

/*
 * Under okcov-cover deep: the optimiser on (the probes may have gone in
 * with it off, which installs faster), and done: the [OPTIMIZED] count
 * the same for 10 s running.
 */
static void deep_probes(void)
{
	int n = -1, opt = 0, last = -1, same = 0, s;
	FILE *f = fopen(KPROBES_OPT, "w");

	if (f) {
		fputs("1\n", f);
		fclose(f);
	}
	for (s = 0; s < 1800 && same < 10; s++) {
		n = kprobes_count(&opt);
		same = opt == last ? same + 1 : 0;
		last = opt;
		sleep(1);
	}
	printf("kprobes %d %d\n", n, opt);
	printf("# deep: the optimiser done after %d s\n", s);
	fflush(stdout);
	traced(0, "deep");
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "signal"))
		return signal_main(argc, argv);
	if (argc == 3 && !strcmp(argv[1], "deep-record")) {
		setvbuf(stdout, NULL, _IOLBF, 0);
		work_setup();
		deep_record(argv[2]);
		return 0;
	}
	if (argc != 2)
		errx(2, "usage: okcov-bench absent|native|loaded|okcov|released|ready|deep|absent-after|deep-record FILE|signal ...");
	setvbuf(stdout, NULL, _IOLBF, 0);
	work_setup();
	pcset_init(&set, 18);
	if (!strcmp(argv[1], "native") || !strcmp(argv[1], "okcov")) {
		vary = vary_init();
		traced(!strcmp(argv[1], "native"), NULL);
	} else if (!strcmp(argv[1], "deep")) {
		deep_probes();
	} else if (!strcmp(argv[1], "ready")) {
		ready();
	} else if (!strcmp(argv[1], "absent") || !strcmp(argv[1], "loaded") ||
		   !strcmp(argv[1], "released") ||
		   !strcmp(argv[1], "absent-after")) {
		run_all(argv[1], NULL);
		if (!strcmp(argv[1], "released"))
			linger_enable("okcov");
	} else {
		errx(2, "unknown phase %s", argv[1]);
	}
	return 0;
}
