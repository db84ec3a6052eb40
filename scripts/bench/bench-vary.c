// SPDX-License-Identifier: GPL-2.0
/*
 * Why one program's PC sets differ from run to run (OKCOV_BENCH_VARY=1):
 * over the determinism runs, which kernel functions come and go, in which
 * syscall, and in which runs.
 *
 * Each PC is symbolized through /proc/kallsyms (the guest runs as root
 * with kptr_restrict 0; libokcov's loader, scripts/libokcov/kallsyms.c) into
 * the text symbol at or below it: a function's
 * entry for okcov, a call site inside the function for native kcov. Its
 * context is the last syscall entry seen before it in the trace
 * (__x64_sys_*), with "/fault" once handle_mm_fault() was seen after that
 * entry: a page fault, in the syscall (a copy to or from user memory) or
 * after it returned, in user mode.
 *
 * Output, after each determinism line:
 *   vary BACKEND WORKLOAD RUNS FIRST LAST CTX FUNC
 *	FUNC came in CTX in RUNS of the runs (0 < RUNS < all), the first
 *	time in run FIRST and the last in run LAST (0-based)
 *   vary-pc BACKEND WORKLOAD VARYING PCS CTX FUNC
 *	FUNC came in CTX in every run, but VARYING of its PCS distinct PCs
 *	(call sites: native kcov) did not
 *   seen BACKEND WORKLOAD RUNS CTX FUNC
 *	with OKCOV_BENCH_VARY=all, every function, the stable ones too
 *   vary-sum BACKEND WORKLOAD STABLE VARYING VARYING-PC
 *	how many (function, context) pairs came in every run with the same
 *	PCs, came and went, or came with varying PCs
 */
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "kallsyms.h"

#define VARY_BITS	17
#define VARY_CTX	64

static const char *ctxs[VARY_CTX];
static unsigned int nctx;

/* (key, context) -> in how many runs, first and last run, last run seen */
struct vslot {
	uint64_t key;
	uint32_t ctx;
	int used;
	int runs, first, last;
};

struct vtab {
	struct vslot *s;
	size_t used;
};

static struct vtab pcs, funcs;
static size_t mask;
static int all;

int vary_init(void)
{
	const char *env = getenv("OKCOV_BENCH_VARY");
	int e;

	if (!env || !*env || !strcmp(env, "0"))
		return 0;
	all = !strcmp(env, "all");
	e = ksyms_load();
	if (e)
		errx(1, "/proc/kallsyms: %s (kptr_restrict?)", strerror(-e));
	mask = (1UL << VARY_BITS) - 1;
	pcs.s = calloc(mask + 1, sizeof(*pcs.s));
	funcs.s = calloc(mask + 1, sizeof(*funcs.s));
	if (!pcs.s || !funcs.s)
		err(1, "vary");
	return 1;
}

static unsigned int ctx_of(const char *name)
{
	unsigned int i;

	for (i = 0; i < nctx; i++)
		if (!strcmp(ctxs[i], name))
			return i;
	if (nctx == VARY_CTX)
		errx(1, "vary: more than %d contexts", VARY_CTX);
	ctxs[nctx] = strdup(name);
	if (!ctxs[nctx])
		err(1, "vary");
	return nctx++;
}

static void vslot_hit(struct vtab *vt, uint64_t key, uint32_t ctx, int run)
{
	size_t i = (key * 0x9e3779b97f4a7c15ULL + ctx) >> 20 & mask;
	struct vslot *t = vt->s;

	while (t[i].used && (t[i].key != key || t[i].ctx != ctx))
		i = (i + 1) & mask;
	if (!t[i].used) {
		if (++vt->used > mask / 2)
			errx(1, "vary: too many distinct PCs");
		t[i].used = 1;
		t[i].key = key;
		t[i].ctx = ctx;
		t[i].first = run;
		t[i].last = -1;
	}
	if (t[i].last != run) {
		t[i].runs++;
		t[i].last = run;
	}
}

void vary_run(const struct cov *c, int run)
{
	uint64_t n = __atomic_load_n(&c->buf[0], __ATOMIC_RELAXED), i;
	unsigned int ctx = ctx_of("-");
	char cname[300];
	int fault = 0;

	if (n > c->entries - 1)
		n = c->entries - 1;
	for (i = 0; i < n; i++) {
		uint64_t pc = c->buf[i + 1];
		size_t alias, na = 0;
		const struct ksym *s = ksyms_lookup(pc, &na);
		const char *name = s ? s->name : "?";

		/* the syscall's entry may share its address with __do_sys_* */
		for (alias = 0; alias < na; alias++)
			if (!strncmp(s[alias].name, "__x64_sys_", 10))
				name = s[alias].name;

		if (!strncmp(name, "__x64_sys_", 10)) {
			ctx = ctx_of(name + 6);
			fault = 0;
		} else if (!fault && !strcmp(name, "handle_mm_fault")) {
			snprintf(cname, sizeof(cname), "%s/fault", ctxs[ctx]);
			ctx = ctx_of(cname);
			fault = 1;
		}
		vslot_hit(&pcs, pc, ctx, run);
		vslot_hit(&funcs, (uintptr_t)s, ctx, run);
	}
}

struct vrow {
	const struct ksym *sym;		/* NULL: no symbol */
	uint32_t ctx;
	int runs, first, last, pcs, varying;
};

static int by_ctx_runs(const void *a, const void *b)
{
	const struct vrow *x = a, *y = b;

	if (x->ctx != y->ctx)
		return x->ctx < y->ctx ? -1 : 1;
	if (x->runs != y->runs)
		return x->runs > y->runs ? -1 : 1;
	return x->sym < y->sym ? -1 : x->sym > y->sym;
}

/* Print what varied, and forget it for the next determinism series. */
void vary_report(const char *backend, const char *workload, int runs)
{
	struct vrow *rows = NULL;
	size_t i, j, n = 0, cap = 0;
	int stable = 0, varying = 0, varying_pc = 0;

	for (i = 0; i <= mask; i++) {
		const struct vslot *f = &funcs.s[i];

		if (!f->used)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			rows = realloc(rows, cap * sizeof(*rows));
			if (!rows)
				err(1, "vary");
		}
		rows[n].sym = (const struct ksym *)(uintptr_t)f->key;
		rows[n].ctx = f->ctx;
		rows[n].runs = f->runs;
		rows[n].first = f->first;
		rows[n].last = f->last;
		rows[n].pcs = rows[n].varying = 0;
		n++;
	}
	/* Count each function's PCs, and those that missed a run. */
	for (i = 0; i <= mask; i++) {
		const struct vslot *p = &pcs.s[i];
		const struct ksym *s;

		if (!p->used)
			continue;
		s = ksyms_lookup(p->key, NULL);
		for (j = 0; j < n; j++)
			if (rows[j].sym == s && rows[j].ctx == p->ctx)
				break;
		if (j == n)
			errx(1, "vary: a PC without its function");
		rows[j].pcs++;
		rows[j].varying += p->runs < runs;
	}
	qsort(rows, n, sizeof(*rows), by_ctx_runs);
	for (i = 0; i < n; i++) {
		const char *name = rows[i].sym ? rows[i].sym->name : "?";

		if (rows[i].runs < runs) {
			varying++;
			printf("vary %s %s %d %d %d %s %s\n", backend, workload,
			       rows[i].runs, rows[i].first, rows[i].last,
			       ctxs[rows[i].ctx], name);
		} else if (rows[i].varying) {
			varying_pc++;
			printf("vary-pc %s %s %d %d %s %s\n", backend, workload,
			       rows[i].varying, rows[i].pcs, ctxs[rows[i].ctx],
			       name);
		} else {
			stable++;
		}
		if (all)
			printf("seen %s %s %d %s %s\n", backend, workload,
			       rows[i].runs, ctxs[rows[i].ctx], name);
	}
	printf("vary-sum %s %s %d %d %d\n", backend, workload, stable, varying,
	       varying_pc);
	fflush(stdout);
	free(rows);
	memset(pcs.s, 0, (mask + 1) * sizeof(*pcs.s));
	memset(funcs.s, 0, (mask + 1) * sizeof(*funcs.s));
	pcs.used = funcs.used = 0;
}
