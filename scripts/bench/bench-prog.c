// SPDX-License-Identifier: GPL-2.0
/*
 * Seeded syscall programs for the signal benchmark (bench-signal.c): a
 * small, syzkaller-shaped program model, generated and mutated from a
 * seed.  The calls, and what keeps them from blocking or harming the
 * process, are bench-calls.c's.
 */
#include <string.h>

#include "bench.h"

/* xorshift64*: every choice of generation and mutation comes from here */
uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s ? *s : 0x9e3779b97f4a7c15ULL;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/* A call: a producer one time in three, so that descriptors exist. */
static void call_random(struct call *c, uint64_t *r)
{
	static int nprod = -1;
	int i;

	if (nprod < 0)
		for (nprod = 0; bench_sys[nprod].makes != MAKES_NONE; nprod++)
			;
	if (rng_next(r) % 3 == 0)
		c->sys = rng_next(r) % nprod;
	else
		c->sys = nprod + rng_next(r) % (bench_nsys - nprod);
	for (i = 0; i < PROG_ARGS; i++)
		c->a[i] = rng_next(r);
}

static void insert(struct prog *p, int i, const struct call *c)
{
	memmove(&p->c[i + 1], &p->c[i], (p->n - i) * sizeof(p->c[0]));
	p->c[i] = *c;
	p->n++;
}

/*
 * A random call at position i.  A call that wants a kind of descriptor
 * no earlier call makes comes after a call that makes one, as syzkaller
 * generates a resource's constructor on demand.
 */
static void insert_random(struct prog *p, int i, uint64_t *r)
{
	int need, j, k;
	struct call c, m;

	call_random(&c, r);
	need = bench_sys[c.sys].needs;
	if (need != K_ANY && p->n + 2 <= PROG_MAX) {
		for (j = 0; j < i; j++)
			if (bench_sys[p->c[j].sys].makes == need)
				break;
		for (k = 0; j == i && k < bench_nsys; k++) {
			if (bench_sys[k].makes != need)
				continue;
			call_random(&m, r);
			m.sys = k;
			insert(p, i++, &m);
			break;
		}
	}
	insert(p, i, &c);
}

void prog_random(struct prog *p, uint64_t *r)
{
	int n = 3 + rng_next(r) % (PROG_MAX - 3 + 1);

	p->n = 0;
	while (p->n < n)
		insert_random(p, p->n, r);
}

/*
 * One to three of: change an argument (a new number, a neighbour, a
 * flipped bit), insert a call, remove one, replace one.
 */
void prog_mutate(struct prog *p, uint64_t *r)
{
	int k = 1 + rng_next(r) % 3, i, j;
	struct call *c;

	while (k--) {
		unsigned int op = rng_next(r) % 100;

		if (op < 50 && p->n) {
			c = &p->c[rng_next(r) % p->n];
			j = rng_next(r) % bench_sys[c->sys].nargs;
			switch (rng_next(r) % 4) {
			case 0: case 1:
				c->a[j] = rng_next(r);
				break;
			case 2:
				c->a[j] += rng_next(r) & 1 ? 1 : -1;
				break;
			default:
				c->a[j] ^= 1ULL << (rng_next(r) % 64);
			}
		} else if (op < 70 && p->n < PROG_MAX) {
			insert_random(p, rng_next(r) % (p->n + 1), r);
		} else if (op < 85 && p->n > 1) {
			i = rng_next(r) % p->n;
			memmove(&p->c[i], &p->c[i + 1], (p->n - i - 1) * sizeof(p->c[0]));
			p->n--;
		} else if (p->n) {
			call_random(&p->c[rng_next(r) % p->n], r);
		}
	}
}

void prog_setup(void)
{
	calls_setup();
}

/*
 * Run p: cov(-1, arg) right before the first call, cov(i, arg) right
 * after call i (read the coverage, reset it), then close what it left.
 */
void prog_run(const struct prog *p, void (*cov)(int i, void *arg), void *arg)
{
	int i;

	calls_reset();
	if (cov)
		cov(-1, arg);
	for (i = 0; i < p->n; i++) {
		bench_sys[p->c[i].sys].fn(p->c[i].a);
		if (cov)
			cov(i, arg);
	}
	calls_cleanup();
}
