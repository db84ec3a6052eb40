/* SPDX-License-Identifier: GPL-2.0 */
/*
 * okcov-bench internals: the coverage backends (bench-cov.c), the
 * workloads and the PC set (bench-work.c), the seeded syscall programs
 * (bench-prog.c, their calls in bench-calls.c) and the signal benchmark
 * (bench-signal.c).  Only the C files of scripts/bench/ include it.
 */
#ifndef OKCOV_BENCH_H
#define OKCOV_BENCH_H

#include <stddef.h>
#include <stdint.h>

#define BENCH_ENTRIES	OKCOV_DEFAULT_ENTRIES
#define NATIVE_PATH	"/sys/kernel/debug/kcov"
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

double now_ns(void);

/* A descriptor of okcov or of Linux's own kcov, sized and mapped. */
struct cov {
	const char *name;	/* "okcov" or "native" */
	int native;
	int fd;
	uint64_t *buf;		/* word 0 counts PCs in both ABIs */
	size_t entries;
	int cmp;		/* cov_enable(): comparisons, not PCs */
};

int cov_present(int native);
/* open + size (*size_ns: the sizing ioctl's latency) + mmap */
void cov_open(struct cov *c, int native, double *size_ns);
void cov_enable(struct cov *c);	/* attaches the calling thread */
void cov_disable(struct cov *c);	/* the thread that enabled it */
void cov_close(struct cov *c);

/*
 * Distinct PCs of one program: open addressing, cleared in O(1) by
 * bumping a generation.  sum and xor of a mixed PC make an order-free
 * signature of the set, for the determinism count.
 */
struct pcset {
	uint64_t *pc;
	uint32_t *gen;
	uint32_t cur;
	size_t mask;
	size_t n;
	uint64_t sum, xor;
};

/* A 64-bit mixer (splitmix64's finaliser), for hashing PCs. */
static inline uint64_t bench_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* The distinct PC sets of a determinism series, by signature. */
struct pcsig {
	uint64_t n, sum, xor;
	int count;
};

/* Count @s among the @*nsig signatures of @sig; the top count so far. */
int pcsig_tally(struct pcsig *sig, int *nsig, const struct pcset *s, int top);

void pcset_init(struct pcset *s, unsigned int bits);
void pcset_clear(struct pcset *s);
void pcset_add(struct pcset *s, uint64_t pc);
/* Clear s and fill it from c's buffer; returns the raw count. */
uint64_t pcset_read(struct pcset *s, const struct cov *c, int *full);

/* A workload: fn(k) runs instance k of it (a seed for the fuzzer). */
struct op {
	const char *name;
	void (*fn)(unsigned int k);
	int iters;	/* per round; 0: not available on this kernel */
	int rounds;	/* best of */
	int readback;	/* when enabled: read back and deduplicate */
};

extern struct op bench_ops[];
extern const int bench_nops;
void work_setup(void);
void op_open_read_close(unsigned int k);
void fuzz_program(unsigned int seed);

/* OKCOV_BENCH_VARY=1 (bench-vary.c): what varies across determinism runs */
int vary_init(void);	/* 0: not asked for */
void vary_run(const struct cov *c, int run);
void vary_report(const char *backend, const char *workload, int runs);

/*
 * Seeded syscall programs (bench-prog.c): up to PROG_MAX calls of the
 * table bench_sys[] (bench-calls.c), each argument a raw number its call
 * turns into a valid or invalid descriptor, buffer, length or flag.
 */
#define PROG_MAX	12
#define PROG_ARGS	6

struct call {
	uint16_t sys;
	uint64_t a[PROG_ARGS];
};

struct prog {
	int n;
	struct call c[PROG_MAX];
};

/* Descriptor kinds, for the arguments and calls that want one. */
enum { K_ANY, K_FILE, K_PIPE, K_SOCK, K_EVENT, K_EPOLL, K_TIMER, K_MEMFD,
	K_SIGNAL, K_PIDFD, MAKES_NONE = -1 };

struct sysdef {
	const char *name;
	long (*fn)(const uint64_t *a);
	int nargs;	/* how many of a[] it reads: what a mutation may change */
	int makes;	/* the kind of descriptor it makes; these come first */
	int needs;	/* the kind it wants, K_ANY: none in particular */
};

extern const struct sysdef bench_sys[];
extern const int bench_nsys;
void calls_setup(void);		/* keeps the descriptors open now */
void calls_reset(void);		/* before a program */
void calls_cleanup(void);	/* after it */

uint64_t rng_next(uint64_t *s);
void prog_setup(void);
void prog_random(struct prog *p, uint64_t *rng);
void prog_mutate(struct prog *p, uint64_t *rng);
/* cov(-1, arg) right before the first call, cov(i, arg) right after call i */
void prog_run(const struct prog *p, void (*cov)(int i, void *arg), void *arg);

/* okcov-bench signal ... (bench-signal.c) */
int signal_main(int argc, char **argv);

#endif
