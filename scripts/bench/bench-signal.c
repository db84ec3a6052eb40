// SPDX-License-Identifier: GPL-2.0
/*
 * The signal benchmark: what a fuzzer learns from okcov, against Linux's
 * own kcov on the same kernel (the `kcov' test kernel), as scripts/bench/run
 * runs it.  Subcommands of okcov-bench:
 *
 *   okcov-bench signal recall LABEL
 *	Both recorders enabled on this one thread at once (native kcov
 *	KCOV_TRACE_PC, okcov KCOV_MODE_TRACE_PC), PROGS seeded random
 *	programs (bench-prog.c) for each of two seeds.  A program is new
 *	for a backend when its PCs (for the "pc" rows) or its edges (the
 *	"edge" rows: consecutive PC pairs within one call, as syzkaller
 *	hashes them) add anything to what that backend's earlier programs
 *	of the seed gave: a fuzzer's "new signal".  Taking kcov's new
 *	programs as the reference: recall (the share of them okcov also
 *	found new), precision (the share of okcov's new programs that kcov
 *	found new too), over all programs and over the tail (the second
 *	half, once the easy signal is found); and the distinct PCs and
 *	edges of each.  kcov's PCs count as kcov_pc() says: none from a
 *	kprobe's detour buffer (an optimised deep probe's, not a block
 *	of kcov's), and those of okcov's copies at the original's.
 *
 *   okcov-bench signal time LABEL
 *	recall's programs, the warm-up's included, with one recorder alone
 *	(LABEL "kcov": native, else okcov), a fresh descriptor (deep on
 *	reach grows from empty), each call's PCs taken as recall takes
 *	them: how long each part took; for okcov, how long its deep on
 *	reach installs went on after the programs (settle).
 *
 *   okcov-bench signal fuzz LABEL GUIDE...
 *	A mini-fuzzer, both recorders enabled: one seeded mutational loop
 *	(one time in ten a new random program, else a corpus program with
 *	one to three mutations: an argument changed, a call inserted,
 *	removed or replaced) for each GUIDE: "kcov" or "okcov" keep a
 *	program when that backend's edges of it are new, "blind" keeps
 *	one in ten, whatever it did.  Every run counts the distinct PCs
 *	(basic blocks) kcov saw in all its executions, at checkpoints.
 *
 *   okcov-bench signal det CLOCK LABEL
 *	Determinism: eleven workloads, RUNS runs each after a warm-up,
 *	with one backend enabled (LABEL "kcov": native, else okcov): how
 *	many distinct PC sets, the share of the most common one (the
 *	modal share), and which functions came in some runs and not in
 *	others (bench-vary.c's vary lines).  CLOCK names the boot
 *	("icount" or "noicount") in the output.
 *
 *   okcov-bench signal cmp LABEL
 *	Both recorders in comparison mode on this thread (native
 *	KCOV_TRACE_CMP, okcov KCOV_MODE_TRACE_CMP; deep copies made with
 *	deep_cmp=1), the recall programs of seed 1: the distinct
 *	(function, constant) pairs of each backend's KCOV_CMP_CONST
 *	records.  kcov's count only where the code ran in okcov's copies
 *	(its records' PCs lie in okcov's pool: the functions okcov copied,
 *	seen the same way), okcov's wherever they are.
 *
 *   okcov-bench signal calls N
 *	No coverage: N programs of the fuzzer's mix, and how each call of
 *	bench-calls.c fared (a check of the program model).
 *
 * LABEL names okcov's setting in the output (cs0, cs1: call_sites=0/1;
 * deep: with deep probes on the functions the earlier runs reached).
 * OKCOV_SIGNAL_PROGS (default 400), OKCOV_SIGNAL_EXECS (4000) and
 * OKCOV_SIGNAL_RUNS (200) scale it; OKCOV_SIGNAL_WARMUP=N runs N programs
 * of another seed before recall's (deep on reach grows its set there).  OKCOV_SIGNAL_WHY=1 (2) prints why
 * lines for the programs new for one backend only (for either).
 * OKCOV_SIGNAL_REACHED=FILE appends
 * the names of the core-kernel functions okcov's PCs lie in, after each
 * seed and fuzzer run; OKCOV_SIGNAL_DEEP=FILE (function names, one a
 * line: the ones given to deep mode) adds deep and deepfn lines, and
 * OKCOV_SIGNAL_REFUSED=FILE (okcov-cover deep --refused's) tells the ones
 * okcov refused apart.  Output lines:
 *
 *   recall LABEL SEED KIND N KNEW ONEW BOTH TAIL TKNEW TONEW TBOTH KDIST ODIST
 *	KIND pc or edge; KNEW/ONEW programs new for kcov/okcov, BOTH for
 *	both; the same from program TAIL on; distinct PCs or edges
 *   time LABEL SEED N SECONDS DISTINCT, time LABEL warm-up|settle N SECONDS
 *	one recorder alone: each part's time, and its distinct PCs
 *   fuzz LABEL GUIDE EXECS KPCS KEDGES OPCS OEDGES CORPUS
 *	after EXECS executions: kcov's and okcov's distinct PCs and edges
 *	over every execution so far, and the corpus size
 *   sdet CLOCK LABEL WORKLOAD RUNS SETS TOP PCS DISTINCT
 *	distinct PC sets, the modal share, mean PCs and distinct PCs
 *   ran CLOCK LABEL WORKLOAD NIVCSW COMM:N...
 *	during that series: how often this thread was preempted, and the
 *	(up to three) other tasks switched to most, N times each
 *   vary..., vary-sum...	bench-vary.c's, backend LABEL@CLOCK
 *   calls NAME RUNS OK	a call of the program model, how often it
 *			succeeded
 *   full KIND N	N reads filled a buffer (truncated coverage)
 *   deep LABEL WHAT FUNCS KFUNCS OFUNCS KPCS OPCS TFUNCS TKPCS TOPCS
 *	after a recall seed (WHAT seed1, seed2) or a fuzzer run (WHAT the
 *	guide): of the FUNCS functions given to deep mode, how many kcov
 *	and okcov reached and their distinct PCs in them; the same PCs in
 *	the TFUNCS okcov did not refuse
 *   deepfn LABEL WHAT FUNC KPCS OPCS	a function okcov fell behind in
 *   cmp LABEL PROGS FUNCS KPAIRS OPAIRS BOTH KPAIRS0 OPAIRS0 BOTH0
 *	the comparison pass: the functions kcov compared in inside copies,
 *	kcov's and okcov's distinct (function, constant) pairs and those
 *	both have; the same without the constant 0
 *   cmpfn LABEL FUNC KPAIRS BOTH	a function okcov's constants fell
 *	short of kcov's in (the ten with the most missing)
 *   why LABEL SEED I SIDE N PC...	OKCOV_SIGNAL_WHY's (why_report())
 */
#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "bench.h"
#include "kallsyms.h"
#include "kaslr.h"
#include "okcov.h"

#define DET_FILE	"/tmp/okcov-det-file"
#define BLIND_KEEP	10	/* percent */
#define WHY_MAX		64

static int env_int(const char *name, int def)
{
	const char *v = getenv(name);

	return v && *v ? atoi(v) : def;
}

static double elapsed(double t0)
{
	return (now_ns() - t0) / 1e9;
}

/* ---- a growing set of nonzero 64-bit values ---- */

struct u64set {
	uint64_t *v;
	size_t mask, n;
};


static void set_init(struct u64set *s)
{
	s->mask = (1UL << 16) - 1;
	s->n = 0;
	s->v = calloc(s->mask + 1, sizeof(*s->v));
	if (!s->v)
		err(1, "set");
}

static void set_free(struct u64set *s)
{
	free(s->v);
	s->v = NULL;
}

static int set_add(struct u64set *s, uint64_t k);

static void set_grow(struct u64set *s)
{
	struct u64set old = *s;
	size_t i;

	s->mask = 2 * s->mask + 1;
	s->n = 0;
	s->v = calloc(s->mask + 1, sizeof(*s->v));
	if (!s->v)
		err(1, "set");
	for (i = 0; i <= old.mask; i++)
		if (old.v[i])
			set_add(s, old.v[i]);
	free(old.v);
}

/* 1 if k was not in s yet */
static int set_add(struct u64set *s, uint64_t k)
{
	size_t i = bench_mix(k) & s->mask;

	while (s->v[i]) {
		if (s->v[i] == k)
			return 0;
		i = (i + 1) & s->mask;
	}
	s->v[i] = k;
	if (++s->n > s->mask / 2)
		set_grow(s);
	return 1;
}

/* ---- both recorders on one thread ---- */

/* What one backend saw: everything so far, and what the last program added. */
struct side {
	struct cov c;
	struct u64set pc, edge;
	long newpc, newedge;
	long full;
	uint64_t newl[WHY_MAX];	/* OKCOV_SIGNAL_WHY: the last program's new PCs */
	int nnewl;
};

enum { KCOV, OKCOV };
static struct side side[2];
static const char *const side_name[] = { "kcov", "okcov" };

static void sides_open(void)
{
	int b;

	for (b = 0; b < 2; b++) {
		if (!cov_present(b == KCOV))
			errx(1, "%s: not present", b == KCOV ? NATIVE_PATH : "/dev/okcov");
		cov_open(&side[b].c, b == KCOV, NULL);
		cov_enable(&side[b].c);
		set_init(&side[b].pc);
		set_init(&side[b].edge);
	}
	prog_setup();
}

static void reached_dump(void);

static void sides_forget(void)
{
	int b;

	reached_dump();
	for (b = 0; b < 2; b++) {
		set_free(&side[b].pc);
		set_free(&side[b].edge);
		set_init(&side[b].pc);
		set_init(&side[b].edge);
		side[b].full = 0;
	}
}

static void sides_close(void)
{
	int b;

	reached_dump();
	for (b = 0; b < 2; b++) {
		cov_disable(&side[b].c);
		cov_close(&side[b].c);
		if (side[b].full)
			printf("full %s %ld\n", side_name[b], side[b].full);
	}
}

/*
 * okcov/frame's text for @pc (debugfs: write an address, read back), into
 * @buf; 0, or -1 (no copy holds it, or no okcov).
 */
static int frame_text(uint64_t pc, char *buf, size_t len)
{
	int fd = open("/sys/kernel/debug/okcov/frame", O_RDWR);
	char a[32];
	ssize_t n = -1;

	if (fd < 0)
		return -1;
	snprintf(a, sizeof(a), "0x%llx", (unsigned long long)pc);
	if (write(fd, a, strlen(a)) > 0 && !lseek(fd, 0, SEEK_SET))
		n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return 0;
}

/* Where @pc, a return address in okcov's copies, lies in the original, or 0. */
static uint64_t frame_return(uint64_t pc)
{
	char buf[512], *r;

	if (frame_text(pc, buf, sizeof(buf)))
		return 0;
	r = strstr(buf, "return 0x");
	return r ? strtoull(r + 7, NULL, 16) : 0;
}

/*
 * Linux's kcov records the return address of each __sanitizer_cov_trace_pc
 * call, less the KASLR offset. Two kinds are not a block of kcov's own:
 *  - in a kprobe's detour buffer (kprobe_optinsn_page, "module"
 *    __builtin__kprobes): the optprobe template calls optimized_callback(),
 *    which ends in a tail call "jmp __sanitizer_cov_trace_pc", so each
 *    optimised probe fires a PC of its own into kcov, as if kcov had a
 *    block at the kprobe backend's leader. Dropped (0).
 *  - in okcov's copies (deep copies): the copied block's return address,
 *    counted at the original's (okcov/frame), so that a function kcov saw
 *    run both ways has one set of PCs.
 * The answer for each PC is kept (kcov_key, kcov_val).
 */
static struct u64set kcov_key;
static uint64_t *kcov_val;
static long kcov_frames, kcov_reloads;	/* frame_return(), ksyms_load() */
static long kcov_computed, kcov_next_reload;	/* kcov_pc_compute() calls */
static uint64_t kcov_bias;
static int kcov_maps = -1;

static uint64_t kcov_pc_compute(uint64_t pc)
{
	const struct ksym *k = ksyms_lookup(pc + kcov_bias, NULL);
	uint64_t orig;

	kcov_computed++;
	/*
	 * A detour buffer allocated since the last load: load again, but
	 * not for each PC in no symbol (a load is seconds of traced kernel
	 * time under TCG): once per 10000 PCs looked up.
	 */
	if (!k && kcov_computed >= kcov_next_reload) {
		kcov_next_reload = kcov_computed + 10000;
		if (!ksyms_load()) {
			kcov_reloads++;
			k = ksyms_lookup(pc + kcov_bias, NULL);
		}
		if (!k && kcov_reloads < 10)
			fprintf(stderr, "okcov-bench: kcov PC 0x%llx in no symbol\n",
				(unsigned long long)(pc + kcov_bias));
	}
	if (!k || !k->mod)
		return pc;
	if (!strcmp(k->mod, "__builtin__kprobes"))
		return 0;
	if (!strcmp(k->mod, "okcov")) {
		kcov_frames++;
		orig = frame_return(pc + kcov_bias);
		return orig ? orig - kcov_bias : pc;
	}
	return pc;
}

static uint64_t kcov_pc(uint64_t pc)
{
	size_t i;

	if (kcov_maps < 0) {
		kcov_maps = !ksyms_load();
		if (kcov_maps)
			kcov_bias = okcov_kaslr_offset(okcov_text(ksyms_addr("_text", NULL),
								  ksyms_addr("_stext", NULL)));
		set_init(&kcov_key);
		kcov_val = calloc(kcov_key.mask + 1, sizeof(*kcov_val));
		if (!kcov_val)
			err(1, "kcov_pc");
	}
	if (!kcov_maps || !pc)
		return pc;
	for (i = bench_mix(pc) & kcov_key.mask; kcov_key.v[i];
	     i = (i + 1) & kcov_key.mask)
		if (kcov_key.v[i] == pc)
			return kcov_val[i];
	if (kcov_key.n + 1 > kcov_key.mask / 2) {
		/* grown: start over, the answers are cheap to find again */
		set_free(&kcov_key);
		free(kcov_val);
		kcov_maps = -1;
		return kcov_pc(pc);
	}
	kcov_key.v[i] = pc;
	kcov_key.n++;
	kcov_val[i] = kcov_pc_compute(pc);
	return kcov_val[i];
}

/* One call's n PCs into the side's sets; an edge is (previous PC, PC). */
static void take(struct side *sd, uint64_t n)
{
	uint64_t prev = 0, pc, e, i;

	if (n >= sd->c.entries - 1) {
		n = sd->c.entries - 1;
		sd->full++;
	}
	for (i = 0; i < n; i++) {
		pc = sd->c.buf[i + 1];
		if (sd == &side[KCOV]) {
			pc = kcov_pc(pc);
			if (!pc)
				continue;
		}
		if (set_add(&sd->pc, pc)) {
			sd->newpc++;
			if (sd->nnewl < WHY_MAX)
				sd->newl[sd->nnewl++] = pc;
		}
		e = bench_mix(prev * 0x9e3779b97f4a7c15ULL ^ pc) | 1;
		sd->newedge += set_add(&sd->edge, e);
		prev = pc;
	}
}

/*
 * Between the calls of a program: both counts first, then both
 * buffers, then reset both.  What this readback makes the kernel do (a
 * page fault of a growing set) lands after the counts taken, in both
 * buffers, and is reset away: neither backend sees it as a call's.
 */
static void sides_read(int i, void (*take_fn)(int b, uint64_t n))
{
	uint64_t n[2];
	int b;

	for (b = 0; b < 2; b++)
		n[b] = __atomic_load_n(&side[b].c.buf[0], __ATOMIC_RELAXED);
	if (i >= 0)
		for (b = 0; b < 2; b++)
			take_fn(b, n[b]);
	for (b = 0; b < 2; b++)
		__atomic_store_n(&side[b].c.buf[0], 0, __ATOMIC_RELAXED);
}

static void take_side(int b, uint64_t n)
{
	take(&side[b], n);
}

static void both_cov(int i, void *arg)
{
	sides_read(i, take_side);
}

static void run_both(const struct prog *p)
{
	int b;

	for (b = 0; b < 2; b++)
		side[b].newpc = side[b].newedge = side[b].nnewl = 0;
	prog_run(p, both_cov, NULL);
}

/* ---- deep mode: the functions reached, and each backend's PCs in them ---- */

static void ksyms_once(void)
{
	static int loaded;
	int e;

	if (loaded)
		return;
	e = ksyms_load();
	if (e)
		errx(1, "/proc/kallsyms: %s (kptr_restrict?)", strerror(-e));
	loaded = 1;
}

/* The core-kernel function @pc lies in, or NULL (a module's, or none). */
static const struct ksym *core_sym(uint64_t pc)
{
	const struct ksym *k = pc ? ksyms_lookup(pc, NULL) : NULL;

	return k && !k->mod ? k : NULL;
}

/*
 * OKCOV_SIGNAL_REACHED=FILE: the core-kernel functions of okcov's PCs so
 * far, appended one a line (scripts/bench/run sorts them): the profile that
 * "the functions the workload reaches" of the deep phase come from.
 */
static void reached_dump(void)
{
	const char *path = getenv("OKCOV_SIGNAL_REACHED");
	const struct u64set *s = &side[OKCOV].pc;
	const struct ksym *k;
	size_t i;
	FILE *f;

	if (!path || !*path || !s->v || !s->n)
		return;
	ksyms_once();
	f = fopen(path, "a");
	if (!f)
		err(1, "%s", path);
	for (i = 0; i <= s->mask; i++) {
		k = core_sym(s->v[i]);
		if (k)
			fprintf(f, "%s\n", k->name);
	}
	if (fclose(f))
		err(1, "%s", path);
}

/* The deep-traced functions (OKCOV_SIGNAL_DEEP=FILE), by name hash. */
struct deepfn {
	uint64_t h;
	char *name;
	unsigned int n[2];	/* distinct PCs of kcov, okcov */
	int refused;		/* named in OKCOV_SIGNAL_REFUSED */
};

static struct deepfn *deepfns;
static size_t deep_mask, deep_count;

static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return h | 1;
}

static struct deepfn *deep_find(uint64_t h, int add)
{
	size_t i = bench_mix(h) & deep_mask;

	while (deepfns[i].h && deepfns[i].h != h)
		i = (i + 1) & deep_mask;
	if (!deepfns[i].h && !add)
		return NULL;
	return &deepfns[i];
}

static void deep_load(void)
{
	const char *path = getenv("OKCOV_SIGNAL_DEEP");
	char line[512];
	struct deepfn *d;
	FILE *f;

	if (!path || !*path || deepfns)
		return;
	f = fopen(path, "r");
	if (!f)
		err(1, "%s", path);
	deep_mask = (1UL << 16) - 1;
	deepfns = calloc(deep_mask + 1, sizeof(*deepfns));
	if (!deepfns)
		err(1, "deep");
	while (fgets(line, sizeof(line), f) && deep_count < deep_mask / 2) {
		line[strcspn(line, " \t\n")] = 0;
		if (!*line)
			continue;
		d = deep_find(name_hash(line), 1);
		if (d->h)
			continue;
		d->h = name_hash(line);
		d->name = strdup(line);
		deep_count++;
	}
	fclose(f);
	ksyms_once();
	/* okcov-cover deep --refused's file: what okcov does not trace deep */
	path = getenv("OKCOV_SIGNAL_REFUSED");
	f = path && *path ? fopen(path, "r") : NULL;
	if (path && *path && !f)
		err(1, "%s", path);
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, " \t\n")] = 0;
		d = *line ? deep_find(name_hash(line), 0) : NULL;
		if (d)
			d->refused = 1;
	}
	if (f)
		fclose(f);
}

static int by_deficit(const void *a, const void *b)
{
	const struct deepfn *x = *(struct deepfn *const *)a;
	const struct deepfn *y = *(struct deepfn *const *)b;
	long dx = (long)x->n[KCOV] - x->n[OKCOV], dy = (long)y->n[KCOV] - y->n[OKCOV];

	return dx < dy ? 1 : dx > dy ? -1 : strcmp(x->name, y->name);
}

/*
 * deep LABEL WHAT FUNCS KFUNCS OFUNCS KPCS OPCS TFUNCS TKPCS TOPCS: of
 * the functions given to deep mode, how many each backend reached and
 * its distinct PCs in them (kcov: its basic blocks; okcov: entries,
 * leaders and, with call_sites, call sites); then the same PCs in the
 * ones okcov did not refuse (OKCOV_SIGNAL_REFUSED), the functions deep
 * mode traces; then deepfn lines, the eight functions okcov fell
 * furthest behind in.
 */
static void deep_report(const char *label, const char *what)
{
	unsigned int nf[2] = { 0 }, np[2] = { 0 }, tp[2] = { 0 }, nt = 0;
	struct deepfn **worst;
	const struct ksym *k;
	struct deepfn *d;
	size_t i, nw = 0;
	int b;

	deep_load();
	if (!deepfns)
		return;
	for (i = 0; i <= deep_mask; i++)
		deepfns[i].n[0] = deepfns[i].n[1] = 0;
	for (b = 0; b < 2; b++) {
		const struct u64set *s = &side[b].pc;

		for (i = 0; i <= s->mask; i++) {
			k = core_sym(s->v[i]);
			if (!k)
				continue;
			d = deep_find(name_hash(k->name), 0);
			if (!d)
				continue;
			nf[b] += !d->n[b]++;
			np[b]++;
			tp[b] += !d->refused;
		}
	}
	for (i = 0; i <= deep_mask; i++)
		nt += deepfns[i].h && !deepfns[i].refused;
	printf("deep %s %s %zu %u %u %u %u %u %u %u\n", label, what, deep_count,
	       nf[KCOV], nf[OKCOV], np[KCOV], np[OKCOV], nt, tp[KCOV],
	       tp[OKCOV]);
	worst = calloc(deep_count + 1, sizeof(*worst));
	if (!worst)
		err(1, "deep");
	for (i = 0; i <= deep_mask; i++)
		if (deepfns[i].h && deepfns[i].n[KCOV] > deepfns[i].n[OKCOV])
			worst[nw++] = &deepfns[i];
	qsort(worst, nw, sizeof(*worst), by_deficit);
	for (i = 0; i < nw && i < 8; i++)
		printf("deepfn %s %s %s %u %u\n", label, what, worst[i]->name,
		       worst[i]->n[KCOV], worst[i]->n[OKCOV]);
	free(worst);
}

/* ---- OKCOV_SIGNAL_WHY: what made a program new for one backend only ---- */

/* okcov/frame's first line for @pc, a PC of okcov's copies, or -1. */
static int why_frame(uint64_t pc, char *out, size_t len)
{
	if (frame_text(pc, out, len))
		return -1;
	out[strcspn(out, "\n")] = 0;
	return 0;
}

static void why_sym(char *buf, size_t len, uint64_t pc)
{
	const struct ksym *k = ksyms_lookup(pc, NULL);
	char f[256];

	if (!k) {
		snprintf(buf, len, "0x%llx", (unsigned long long)pc);
		return;
	}
	snprintf(buf, len, "%s%s%s+0x%llx", k->mod ? k->mod : "",
		 k->mod ? ":" : "", k->name, (unsigned long long)(pc - k->addr));
	if (k->mod && !strcmp(k->mod, "okcov") && !why_frame(pc, f, sizeof(f)))
		snprintf(buf + strlen(buf), len - strlen(buf), "=[%s]", f);
}

/*
 * why LABEL SEED I SIDE N PC...: program I was new for SIDE only (for
 * either, with OKCOV_SIGNAL_WHY=2); its N new PCs (the first WHY_MAX),
 * each as symbol+offset (kcov's as counted, kcov_pc(), with the KASLR
 * offset added back; one in okcov's pool also as okcov/frame maps it).
 */
static void why_report(const char *label, unsigned int seed, int i)
{
	static int on = -1;
	char sym[512];
	int b, j;

	if (on < 0) {
		on = env_int("OKCOV_SIGNAL_WHY", 0);
		if (on)
			ksyms_once();
	}
	if (!on)
		return;
	for (b = 0; b < 2; b++) {
		if (!side[b].newpc || (on < 2 && side[!b].newpc))
			continue;
		printf("why %s %u %d %s %ld", label, seed, i, side_name[b],
		       side[b].newpc);
		for (j = 0; j < side[b].nnewl; j++) {
			why_sym(sym, sizeof(sym),
				side[b].newl[j] + (b == KCOV ? kcov_bias : 0));
			printf(" %s", sym);
		}
		printf("\n");
	}
}

/* ---- recall and precision ---- */

static void recall_report(const char *label, unsigned int seed,
			  const char *kind, int n, const unsigned char *kn,
			  const unsigned char *on, size_t kdist, size_t odist)
{
	int i, tail = n / 2, c[2][3] = { { 0 } };

	for (i = 0; i < n; i++) {
		int t = i >= tail;

		c[t][0] += kn[i];
		c[t][1] += on[i];
		c[t][2] += kn[i] && on[i];
	}
	printf("recall %s %u %s %d %d %d %d %d %d %d %d %zu %zu\n", label, seed,
	       kind, n, c[0][0] + c[1][0], c[0][1] + c[1][1],
	       c[0][2] + c[1][2], tail, c[1][0], c[1][1], c[1][2], kdist, odist);
}

static void recall(const char *label)
{
	static const unsigned int seeds[] = { 1, 2 };
	int n = env_int("OKCOV_SIGNAL_PROGS", 400), i;
	int warm = env_int("OKCOV_SIGNAL_WARMUP", 0);
	unsigned char *f = calloc(4 * n, 1);
	char what[16];
	unsigned int s;
	struct prog p;
	double t0;

	if (!f)
		err(1, "recall");
	sides_open();
	if (warm > 0) {
		uint64_t rng = 0x3a11ULL * 0x9e3779b97f4a7c15ULL;

		t0 = now_ns();
		for (i = 0; i < warm; i++) {
			prog_random(&p, &rng);
			run_both(&p);
		}
		printf("# signal recall %s warm-up: %d programs (another seed) in %.1f s\n",
		       label, warm, elapsed(t0));
	}
	for (s = 0; s < ARRAY_SIZE(seeds); s++) {
		uint64_t rng = seeds[s] * 0x9e3779b97f4a7c15ULL;

		t0 = now_ns();
		sides_forget();
		for (i = 0; i < n; i++) {
			prog_random(&p, &rng);
			run_both(&p);
			f[i] = side[KCOV].newpc > 0;
			f[n + i] = side[OKCOV].newpc > 0;
			f[2 * n + i] = side[KCOV].newedge > 0;
			f[3 * n + i] = side[OKCOV].newedge > 0;
			why_report(label, seeds[s], i);
		}
		recall_report(label, seeds[s], "pc", n, f, f + n,
			      side[KCOV].pc.n, side[OKCOV].pc.n);
		recall_report(label, seeds[s], "edge", n, f + 2 * n, f + 3 * n,
			      side[KCOV].edge.n, side[OKCOV].edge.n);
		snprintf(what, sizeof(what), "seed%u", seeds[s]);
		deep_report(label, what);
		printf("# signal recall %s seed %u: %d programs in %.1f s (kcov PCs: %ld in copies looked up, %ld kallsyms reloads)\n",
		       label, seeds[s], n, elapsed(t0), kcov_frames, kcov_reloads);
	}
	sides_close();
	free(f);
}

/* ---- time: one recorder alone over the recall programs ---- */

static void one_cov(int i, void *arg)
{
	struct side *sd = arg;
	uint64_t n = __atomic_load_n(&sd->c.buf[0], __ATOMIC_RELAXED);

	if (i >= 0)
		take(sd, n);
	__atomic_store_n(&sd->c.buf[0], 0, __ATOMIC_RELAXED);
}

/* okcov's reach counter @name (debugfs), or -1. */
static long reach_stat(const char *name)
{
	char path[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/okcov/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/*
 * Deep on reach's installs still running after the programs, the thread
 * idle and still enabled: until every function noted (queued, or ahead)
 * is installed or refused, for ten minutes at most; how long.
 */
static double reach_settle(void)
{
	double t0 = now_ns();
	long done, noted, ahead;

	do {
		done = reach_stat("reach_installed") + reach_stat("reach_refused");
		ahead = reach_stat("reach_ahead");	/* none before ahead */
		noted = reach_stat("reach_queued") + (ahead > 0 ? ahead : 0);
		if (done < 0 || noted < 0 || done >= noted)
			break;
		usleep(100 * 1000);
	} while (elapsed(t0) < 600);
	return elapsed(t0);
}

/*
 * recall's programs (the warm-up, then each seed's) with one recorder
 * alone on this thread, read back after each call into its sets as
 * recall does: what a fuzzer's time is with it.  A fresh descriptor, so
 * deep on reach grows its set from empty here (growth included).
 */
static void time_run(const char *label)
{
	static const unsigned int seeds[] = { 1, 2 };
	int n = env_int("OKCOV_SIGNAL_PROGS", 400), i;
	int warm = env_int("OKCOV_SIGNAL_WARMUP", 0);
	int b = strcmp(label, "kcov") ? OKCOV : KCOV;
	struct side *sd = &side[b];
	uint64_t rng;
	unsigned int s;
	struct prog p;
	double t0;

	if (!cov_present(b == KCOV))
		errx(1, "%s: not present", b == KCOV ? NATIVE_PATH : "/dev/okcov");
	cov_open(&sd->c, b == KCOV, NULL);
	cov_enable(&sd->c);
	set_init(&sd->pc);
	set_init(&sd->edge);
	prog_setup();
	t0 = now_ns();
	rng = 0x3a11ULL * 0x9e3779b97f4a7c15ULL;
	for (i = 0; i < warm; i++) {
		prog_random(&p, &rng);
		prog_run(&p, one_cov, sd);
	}
	printf("time %s warm-up %d %.2f\n", label, warm, elapsed(t0));
	for (s = 0; s < ARRAY_SIZE(seeds); s++) {
		rng = seeds[s] * 0x9e3779b97f4a7c15ULL;
		set_free(&sd->pc);
		set_free(&sd->edge);
		set_init(&sd->pc);
		set_init(&sd->edge);
		t0 = now_ns();
		for (i = 0; i < n; i++) {
			prog_random(&p, &rng);
			prog_run(&p, one_cov, sd);
		}
		printf("time %s %u %d %.2f %zu\n", label, seeds[s], n,
		       elapsed(t0), sd->pc.n);
	}
	if (b == OKCOV && reach_stat("reach_installed") >= 0)
		printf("time %s settle 0 %.2f\n", label, reach_settle());
	cov_disable(&sd->c);
	cov_close(&sd->c);
	if (sd->full)
		printf("full %s %ld\n", side_name[b], sd->full);
}

/* ---- comparisons: okcov's copies' constants against kcov's ---- */

static int set_has(const struct u64set *s, uint64_t k)
{
	size_t i;

	for (i = bench_mix(k) & s->mask; s->v[i]; i = (i + 1) & s->mask)
		if (s->v[i] == k)
			return 1;
	return 0;
}

/* A (function, constant) pair, and kcov's pairs' functions. */
struct cmp_pair {
	uint64_t fn, v;
	const char *name;
};

static struct u64set cmp_set[2];
static struct cmp_pair *cmp_kpairs;
static size_t cmp_nk, cmp_capk;
static long cmp_onz;		/* okcov's pairs but those of 0 */

static uint64_t cmp_key(uint64_t fn, uint64_t v)
{
	return bench_mix(fn ^ bench_mix(v + 0x51ed)) | 1;
}

/* One call's comparison records of side @b (@n of them). */
static void cmp_take(int b, uint64_t n)
{
	const uint64_t *r = side[b].c.buf + 1;
	const struct ksym *k;
	uint64_t i, pc, fn;

	if (n > (side[b].c.entries - 1) / 4) {
		n = (side[b].c.entries - 1) / 4;
		side[b].full++;
	}
	for (i = 0; i < n; i++, r += 4) {
		if (!(r[0] & KCOV_CMP_CONST))
			continue;
		pc = r[3];
		if (b == KCOV) {
			/* only code that ran in a copy: okcov's pool */
			k = ksyms_lookup(pc + kcov_bias, NULL);
			if (!k || !k->mod || strcmp(k->mod, "okcov"))
				continue;
			pc = kcov_pc(pc);
			if (!pc)
				continue;
			pc += kcov_bias;
		}
		k = ksyms_lookup(pc, NULL);
		if (!k)
			continue;
		fn = name_hash(k->name);
		if (!set_add(&cmp_set[b], cmp_key(fn, r[1])))
			continue;
		if (b == OKCOV) {
			cmp_onz += r[1] != 0;
			continue;
		}
		if (cmp_nk == cmp_capk) {
			cmp_capk = cmp_capk ? 2 * cmp_capk : 4096;
			cmp_kpairs = realloc(cmp_kpairs,
					     cmp_capk * sizeof(*cmp_kpairs));
			if (!cmp_kpairs)
				err(1, "cmp");
		}
		cmp_kpairs[cmp_nk++] = (struct cmp_pair){ fn, r[1], k->name };
	}
}

static void cmp_cov(int i, void *arg)
{
	sides_read(i, cmp_take);
}

static int cmp_by_fn(const void *a, const void *b)
{
	const struct cmp_pair *x = a, *y = b;

	return x->fn < y->fn ? -1 : x->fn > y->fn;
}

static void cmp_run(const char *label)
{
	int n = env_int("OKCOV_SIGNAL_PROGS", 400), i, b;
	uint64_t rng = 1 * 0x9e3779b97f4a7c15ULL;
	struct { const char *name; long k, both; } worst[10] = { { 0 } };
	long c[6] = { 0 }, fns = 0, fk = 0, fb = 0;
	double t0 = now_ns();
	struct prog p;
	size_t j, w;

	ksyms_once();
	kcov_pc(0);		/* the KASLR offset */
	for (b = 0; b < 2; b++) {
		if (!cov_present(b == KCOV))
			errx(1, "%s: not present", b == KCOV ? NATIVE_PATH : "/dev/okcov");
		cov_open(&side[b].c, b == KCOV, NULL);
		side[b].c.cmp = 1;
		cov_enable(&side[b].c);
		set_init(&cmp_set[b]);
	}
	prog_setup();
	for (i = 0; i < n; i++) {
		prog_random(&p, &rng);
		prog_run(&p, cmp_cov, NULL);
	}
	for (b = 0; b < 2; b++) {
		cov_disable(&side[b].c);
		cov_close(&side[b].c);
		if (side[b].full)
			printf("full %s-cmp %ld\n", side_name[b], side[b].full);
	}
	c[1] = cmp_set[OKCOV].n;
	for (j = 0; j < cmp_nk; j++) {
		int has = set_has(&cmp_set[OKCOV],
				  cmp_key(cmp_kpairs[j].fn, cmp_kpairs[j].v));

		c[0]++;
		c[2] += has;
		c[3] += cmp_kpairs[j].v != 0;
		c[5] += has && cmp_kpairs[j].v != 0;
	}
	qsort(cmp_kpairs, cmp_nk, sizeof(*cmp_kpairs), cmp_by_fn);
	for (j = 0; j < cmp_nk; j++) {
		fk++;
		fb += set_has(&cmp_set[OKCOV],
			      cmp_key(cmp_kpairs[j].fn, cmp_kpairs[j].v));
		if (j + 1 < cmp_nk && cmp_kpairs[j + 1].fn == cmp_kpairs[j].fn)
			continue;
		fns++;
		for (w = 0; w < ARRAY_SIZE(worst); w++)
			if (fk - fb > worst[w].k - worst[w].both)
				break;
		if (w < ARRAY_SIZE(worst)) {
			memmove(&worst[w + 1], &worst[w],
				(ARRAY_SIZE(worst) - w - 1) * sizeof(worst[0]));
			worst[w].name = cmp_kpairs[j].name;
			worst[w].k = fk;
			worst[w].both = fb;
		}
		fk = fb = 0;
	}
	c[4] = cmp_onz;
	printf("cmp %s %d %ld %ld %ld %ld %ld %ld %ld\n", label, n, fns, c[0],
	       c[1], c[2], c[3], c[4], c[5]);
	for (w = 0; w < ARRAY_SIZE(worst) && worst[w].name; w++)
		if (worst[w].k > worst[w].both)
			printf("cmpfn %s %s %ld %ld\n", label, worst[w].name,
			       worst[w].k, worst[w].both);
	printf("# signal cmp %s: %d programs in %.1f s\n", label, n, elapsed(t0));
	for (b = 0; b < 2; b++)
		set_free(&cmp_set[b]);
	free(cmp_kpairs);
}

/* ---- the mini-fuzzer ---- */

static void fuzz_one(const char *label, const char *guide, int execs)
{
	int g = !strcmp(guide, "kcov") ? KCOV : !strcmp(guide, "okcov") ? OKCOV : -1;
	uint64_t rng = 0x5eed5eed5eedULL;
	struct prog *corpus = calloc(execs, sizeof(*corpus)), p;
	int n = 0, e, keep, cp = 8;
	double t0 = now_ns();

	if (g < 0 && strcmp(guide, "blind"))
		errx(2, "fuzz: guide kcov, okcov or blind, not %s", guide);
	if (!corpus)
		err(1, "corpus");
	sides_forget();
	for (e = 1; e <= execs; e++) {
		if (!n || rng_next(&rng) % 10 == 0) {
			prog_random(&p, &rng);
		} else {
			p = corpus[rng_next(&rng) % n];
			prog_mutate(&p, &rng);
		}
		run_both(&p);
		if (g >= 0)
			keep = side[g].newedge > 0;
		else
			keep = rng_next(&rng) % 100 < BLIND_KEEP;
		if (keep)
			corpus[n++] = p;
		/* checkpoints: an eighth, a quarter, half, all */
		if (e == execs / cp || e == execs) {
			printf("fuzz %s %s %d %zu %zu %zu %zu %d\n", label, guide, e,
			       side[KCOV].pc.n, side[KCOV].edge.n,
			       side[OKCOV].pc.n, side[OKCOV].edge.n, n);
			cp = cp > 1 ? cp / 2 : 1;
		}
	}
	printf("# signal fuzz %s %s: %d executions in %.1f s\n", label, guide,
	       execs, elapsed(t0));
	deep_report(label, guide);
	free(corpus);
}

static void fuzz(const char *label, int nguide, char **guides)
{
	int execs = env_int("OKCOV_SIGNAL_EXECS", 4000), i;

	sides_open();
	for (i = 0; i < nguide; i++)
		fuzz_one(label, guides[i], execs);
	sides_close();
}

/* ---- determinism ---- */

static char wbuf[4096];
static struct prog det_prog;

static void ck(int bad, const char *what)
{
	if (bad)
		err(1, "det: %s", what);
}

static void w_getppid(void)
{
	syscall(SYS_getppid);
}

static void w_read(const char *path)
{
	int fd = open(path, O_RDONLY);

	ck(fd < 0 || read(fd, wbuf, sizeof(wbuf)) < 0, path);
	close(fd);
}

static void w_proc(void)
{
	w_read("/proc/self/stat");
}

static void w_file(void)
{
	w_read(DET_FILE);
}

static void w_pipe(void)
{
	int p[2];

	ck(pipe(p) || write(p[1], wbuf, 64) != 64 || read(p[0], wbuf, 64) != 64,
	   "pipe");
	close(p[0]);
	close(p[1]);
}

static void w_socketpair(void)
{
	int s[2];

	ck(socketpair(AF_UNIX, SOCK_STREAM, 0, s) ||
	   send(s[0], wbuf, 64, 0) != 64 || recv(s[1], wbuf, 64, 0) != 64,
	   "socketpair");
	close(s[0]);
	close(s[1]);
}

static void w_mmap(void)
{
	char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ck(m == MAP_FAILED, "mmap");
	m[0] = 1;
	ck(munmap(m, 4096), "munmap");
}

static void w_epoll(void)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int ep = epoll_create1(0), e = eventfd(1, EFD_NONBLOCK);

	ck(ep < 0 || e < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, e, &ev) ||
	   epoll_wait(ep, &ev, 1, 0) != 1, "epoll");
	close(e);
	close(ep);
}

static void w_timerfd(void)
{
	struct itimerspec its = { .it_value = { 1, 0 } }, old;
	int t = timerfd_create(CLOCK_MONOTONIC, 0);

	ck(t < 0 || timerfd_settime(t, 0, &its, NULL) ||
	   timerfd_gettime(t, &old), "timerfd");
	close(t);
}

static void w_stat(void)
{
	struct stat sb;

	ck(stat("/tmp", &sb), "stat");
}

/* mmap of length 0: EINVAL, after the syscall took the mm's lock */
static void w_einval(void)
{
	errno = 0;
	if (mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) !=
	    MAP_FAILED || errno != EINVAL)
		errx(1, "det: mmap(len 0) did not fail with EINVAL");
}

/*
 * Who else ran during a series: every task's context switches
 * (/proc/PID/status) before and after it.  A task that was switched to
 * while the workload ran preempted it, or woke in its place.
 */
struct tsw {
	int pid;
	long sw;
	char comm[32];
};

#define NTSW	1024

static int tsw_snap(struct tsw *t)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char path[300], line[128];
	int n = 0;
	long v;
	FILE *f;

	if (!d)
		err(1, "/proc");
	while ((e = readdir(d)) && n < NTSW) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/status", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		t[n].pid = atoi(e->d_name);
		t[n].sw = 0;
		t[n].comm[0] = 0;
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "Name: %31s", t[n].comm) == 1)
				continue;
			if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1 ||
			    sscanf(line, "nonvoluntary_ctxt_switches: %ld", &v) == 1)
				t[n].sw += v;
		}
		fclose(f);
		n++;
	}
	closedir(d);
	return n;
}

/* "ran" line: this thread's preemptions, the three tasks that ran most */
static void tsw_report(const char *clock, const char *label, const char *work,
		       const struct tsw *a, int na, const struct tsw *b, int nb,
		       long nivcsw)
{
	long best[3] = { 0 };
	int who[3] = { -1, -1, -1 }, i, j, k;

	for (i = 0; i < nb; i++) {
		long d = b[i].sw;

		if (b[i].pid == getpid())
			continue;
		for (j = 0; j < na; j++)
			if (a[j].pid == b[i].pid) {
				d -= a[j].sw;
				break;
			}
		for (k = 0; k < 3; k++) {
			if (d <= best[k])
				continue;
			memmove(&best[k + 1], &best[k], (2 - k) * sizeof(best[0]));
			memmove(&who[k + 1], &who[k], (2 - k) * sizeof(who[0]));
			best[k] = d;
			who[k] = i;
			break;
		}
	}
	printf("ran %s %s %s %ld", clock, label, work, nivcsw);
	for (k = 0; k < 3 && who[k] >= 0; k++)
		printf(" %s:%ld", b[who[k]].comm, best[k]);
	printf("\n");
}

static struct cov *det_cov;

static void det_reset(int i, void *arg)
{
	if (i < 0)
		__atomic_store_n(&det_cov->buf[0], 0, __ATOMIC_RELAXED);
}

/* One of the recall part's programs (seed 1's first), cleanup included */
static void w_program(void)
{
	prog_run(&det_prog, det_reset, NULL);
}

static const struct {
	const char *name;
	void (*fn)(void);
} det_work[] = {
	{ "getppid", w_getppid },
	{ "read-proc-self", w_proc },
	{ "read-file", w_file },
	{ "pipe", w_pipe },
	{ "socketpair", w_socketpair },
	{ "mmap-munmap", w_mmap },
	{ "epoll", w_epoll },
	{ "timerfd", w_timerfd },
	{ "stat", w_stat },
	{ "einval", w_einval },
	{ "program", w_program },
};

static void det(const char *clock, const char *label)
{
	static struct pcsig *sig;
	int runs = env_int("OKCOV_SIGNAL_RUNS", 200), native = !strcmp(label, "kcov");
	uint64_t rng = 1 * 0x9e3779b97f4a7c15ULL;
	char backend[64];
	struct pcset set;
	unsigned int w;
	struct cov c;
	int fd, vary;
	double t0 = now_ns();

	sig = calloc(runs, sizeof(*sig));
	fd = open(DET_FILE, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (!sig || fd < 0 || write(fd, wbuf, sizeof(wbuf)) != sizeof(wbuf))
		err(1, DET_FILE);
	close(fd);
	if (!getenv("OKCOV_BENCH_VARY") || !strcmp(getenv("OKCOV_BENCH_VARY"), "0"))
		setenv("OKCOV_BENCH_VARY", "1", 1);
	vary = vary_init();
	snprintf(backend, sizeof(backend), "%s@%s", label, clock);
	pcset_init(&set, 18);
	prog_random(&det_prog, &rng);
	if (!cov_present(native))
		errx(1, "det: %s not present", native ? NATIVE_PATH : "/dev/okcov");
	cov_open(&c, native, NULL);
	det_cov = &c;
	prog_setup();
	cov_enable(&c);
	for (w = 0; w < ARRAY_SIZE(det_work); w++) {
		static struct tsw before[NTSW], after[NTSW];
		double raw = 0, distinct = 0;
		int i, nsig = 0, top = 0, full, nbefore, nafter;
		struct rusage ru0, ru1;
		uint64_t n;

		nbefore = tsw_snap(before);
		getrusage(RUSAGE_THREAD, &ru0);

		for (i = -1; i < runs; i++) {
			__atomic_store_n(&c.buf[0], 0, __ATOMIC_RELAXED);
			det_work[w].fn();
			n = pcset_read(&set, &c, &full);
			if (full)
				printf("full %s 1\n", backend);
			if (i < 0)
				continue;
			raw += n;
			/*
			 * vary_run() reads the buffer again: what reading it
			 * made the kernel record (a page fault of the set)
			 * is not the workload's.
			 */
			__atomic_store_n(&c.buf[0], n, __ATOMIC_RELAXED);
			if (vary)
				vary_run(&c, i);
			distinct += set.n;
			top = pcsig_tally(sig, &nsig, &set, top);
		}
		getrusage(RUSAGE_THREAD, &ru1);
		nafter = tsw_snap(after);
		printf("sdet %s %s %s %d %d %.3f %.1f %.1f\n", clock, label,
		       det_work[w].name, runs, nsig, (double)top / runs,
		       raw / runs, distinct / runs);
		tsw_report(clock, label, det_work[w].name, before, nbefore,
			   after, nafter, ru1.ru_nivcsw - ru0.ru_nivcsw);
		if (vary)
			vary_report(backend, det_work[w].name, runs);
	}
	cov_disable(&c);
	cov_close(&c);
	printf("# signal det %s %s: %.1f s\n", clock, label, elapsed(t0));
	free(sig);
}

/* ---- the program model alone ---- */

static long calls_runs[256], calls_ok[256];

static void calls(int n)
{
	uint64_t rng = 7;
	struct prog p, corpus[64];
	int i, j, nc = 0;

	prog_setup();
	for (i = 0; i < n; i++) {
		if (!nc || i % 4 == 0) {
			prog_random(&p, &rng);
			if (nc < 64)
				corpus[nc++] = p;
		} else {
			p = corpus[rng_next(&rng) % nc];
			prog_mutate(&p, &rng);
		}
		calls_reset();
		for (j = 0; j < p.n; j++) {
			calls_runs[p.c[j].sys]++;
			calls_ok[p.c[j].sys] += bench_sys[p.c[j].sys].fn(p.c[j].a) >= 0;
		}
		calls_cleanup();
	}
	for (i = 0; i < bench_nsys; i++)
		printf("calls %s %ld %ld\n", bench_sys[i].name, calls_runs[i],
		       calls_ok[i]);
}

int signal_main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 4 && !strcmp(argv[2], "recall"))
		recall(argv[3]);
	else if (argc == 4 && !strcmp(argv[2], "time"))
		time_run(argv[3]);
	else if (argc >= 5 && !strcmp(argv[2], "fuzz"))
		fuzz(argv[3], argc - 4, argv + 4);
	else if (argc == 5 && !strcmp(argv[2], "det"))
		det(argv[3], argv[4]);
	else if (argc == 4 && !strcmp(argv[2], "calls"))
		calls(atoi(argv[3]));
	else if (argc == 4 && !strcmp(argv[2], "cmp"))
		cmp_run(argv[3]);
	else
		errx(2, "usage: okcov-bench signal recall LABEL | time LABEL | fuzz LABEL GUIDE... | det CLOCK LABEL | calls N | cmp LABEL");
	return 0;
}
