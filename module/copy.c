// SPDX-License-Identifier: GPL-2.0
/*
 * Instrumented copies (x86_64): from a plan (plan.c) okcov can copy, lay
 * out and write a copy of the function into okcov's pool (pool.S), with
 * a record sequence at each block leader. /sys/kernel/debug/okcov/copy
 * makes one with the plan's leaders, for the tests; KIODEEP with
 * deep_copies set makes one with the leaders it was given, and traced
 * calls of the function run it (deep copies, below).
 *
 * The copy holds every instruction of every part of the function, body
 * first, then its .cold parts, each part in address order and followed
 * by an int3. What changes:
 *   - the fentry site (call __fentry__, or ftrace's call of a trampoline,
 *     or its 5-byte nop) becomes a 5-byte nop: ftrace decides at the
 *     original's entry, the copy never asks again;
 *   - a short jmp or jcc becomes a near one (e9, 0f 8x);
 *   - a direct branch or call into the function goes to the copy's
 *     position of its target (the record sequence of a leader: a branch
 *     to a leader records it); one to the function's entry (its start up
 *     to and including the fentry site: a recursive tail call) and one
 *     out of the function keep their absolute target, and so do return
 *     thunks and retpolines, which are such calls and jumps;
 *   - a RIP-relative operand keeps its absolute address (disp32 counts
 *     from the end of the instruction, immediates included).
 * A target out of rel32 reach refuses the function (ERANGE).
 *
 * The record sequence before each leader's instruction:
 *	push	$leader			68 imm32: the original address,
 *					sign-extended (kernel and module
 *					text lie in the top 2 GiB)
 *	call	okcov_copy_record	e8 rel32 (tramp.S)
 *	lea	8(%rsp), %rsp		48 8d 64 24 08: keeps the flags
 * okcov_copy_record() saves the flags and records the leader into the
 * thread's own buffer through okcov_cur (okcov.h) itself, or saves the
 * caller-saved registers and hands it to okcov_copy_hit(), which looks
 * the entry up and records it as the kprobe backend's okcov_deep_hit().
 * A copy made with deep_cmp set has, before each cmp or test cmp.c can
 * evaluate (after the record sequence where both are), a comparison
 * sequence of the same shape: push $desc (its descriptor, after the
 * copy's code and jump tables), call okcov_copy_cmp, lea 8(%rsp),%rsp.
 * A branch to the instruction goes to the first of its sequences.
 *
 * The pool is written through a writable alias (vmalloc_to_page() of each
 * pool page, vmap()), then every CPU serialises (an IPI, sync_core())
 * before anyone can jump there. Space is bump-allocated and never reused
 * while okcov is loaded: a copy stays, unchanged, until rmmod, so nothing
 * can run or return into reused space; a function is copied once and its
 * copy returned again. A full pool is ENOSPC.
 *
 * Faults: okcov's module exception table is replaced at load by a table
 * of its own (okcov_copy_ex): okcov's entries, then one for each copied
 * instruction that may fault with a fixup (a memory operand, a string
 * op, rdmsr/wrmsr, a segment load), appended as copies are written
 * (the pool grows upward: the table stays sorted, and a reader sees the
 * count only after the entries). Where the original instruction has an
 * entry of its own whose fixup lies in the copy, and whose handler only
 * sets registers and the ip (a uaccess, get_kernel_nofault(),
 * rdmsr_safe()...), the copy's entry is that entry with the fixup's
 * place in the copy: the fault is handled as the original's, and the
 * rest of the call runs (and records) in the copy. Any other sends the
 * fault back to the same instruction in the original (EX_TYPE_DEFAULT,
 * fixup: the original's address; the faulting instruction did nothing),
 * which faults again and finds its own entry, or none: an oops in the
 * original, as without the copy. The rest of that call runs the
 * original.
 *
 * Unwinding: each copy's instructions get their originals' ORC entries
 * in okcov's table, replaced the same way (orc.c), so a stack trace
 * through a copy goes on into its callers; /sys/kernel/debug/okcov/frame
 * maps a copy's address back to the original's.
 *
 * Locking: okcov_copy_mutex, task context only ([C]); a copy's contents
 * are immutable once published ([I]).
 */

#include <linux/bitfield.h>
#include <linux/bsearch.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/ftrace.h>
#include <linux/glob.h>
#include <linux/hash.h>
#include <linux/jump_label.h>
#include <linux/kallsyms.h>
#include <linux/kdebug.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/smp.h>
#include <linux/sort.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/xarray.h>
#include <asm/cpufeature.h>
#include <asm/extable.h>
#include <asm/sync_core.h>
#include <asm/traps.h>
#include <asm/unwind.h>

#include "okcov.h"

#define OKCOV_POOL_SIZE		(2UL << 20)	/* pool.S's OKCOV_POOL_SIZE */
#define OKCOV_COPY_ALIGN	16

/* One instruction of a copy. */
struct okcov_copy_insn {
	unsigned long	orig;		/* its address in the original */
	u32		off;		/* its offset in the copy */
	u8		len;		/* its length in the copy */
	bool		record;		/* a leader: the record sequence precedes it */
	bool		cmp;		/* the comparison sequence precedes it (cmp.c) */
};

struct okcov_copy {
	unsigned long		start, size;	/* [I] in the pool */
	unsigned long		fn_start, fn_end;	/* [I] the original's symbol */
	unsigned long		fentry;		/* [I] site made a nop, or 0 */
	unsigned long		resume;		/* [I] a redirected call's way in */
	unsigned long		region[OKCOV_PLAN_REGIONS][2];	/* [I] */
	unsigned int		nregions;	/* [I] */
	u8			*src;		/* [I] the parts' bytes it copied */
	unsigned long		*leaders;	/* [I] sorted: those it records */
	unsigned int		nleaders;	/* [I] */
	bool			published;	/* [C] redirected to (deep) */
	unsigned long		since;		/* [C] jiffies: last published */
	bool			doomed;		/* [A] its original is being patched */
	bool			callees;	/* [I] made with deep_callees */
	unsigned long		enter;		/* [I] a callee's: where calls go */
	struct okcov_copy	**callee;	/* [I] the callee copies it calls */
	unsigned int		ncallee;	/* [I] */
	bool			cmp;		/* [I] made with deep_cmp (cmp.c) */
	char			*name;		/* [I] */
	unsigned int		ninsns;		/* [I] */
	struct okcov_copy_insn	insns[];	/* [I] in copy order */
};

static bool okcov_copy_current(const struct okcov_copy *c);
static void okcov_copy_follow(void);

static DEFINE_MUTEX(okcov_copy_mutex);
static DEFINE_XARRAY(okcov_copies);		/* [C] function start -> copy */
static struct okcov_copy **okcov_copy_list;	/* [C] by pool address; RCU */
static bool okcov_copy_die_ready;		/* okcov_copy_die() registered */
static unsigned int okcov_ncopies, okcov_copy_cap;	/* [C] */
static unsigned long okcov_pool_used;		/* [C] bytes handed out */
static u8 *okcov_pool_rw;			/* [C] the writable alias */

/*
 * The record (tramp.S calls it with the leader the copy pushed, once its
 * step (a) let it in). What okcov_deep_hit() does for a kprobe, in the
 * copy's own context: no trap came in between.
 */
void notrace okcov_copy_hit(unsigned long pc)
{
	struct okcov_attach *a = okcov_pc_get();

	if (a) {
		okcov_record_block(a, pc);
		okcov_pc_put();
	}
}

/*
 * @addr, a byte of an instruction in a copy: the same byte of the
 * original's instruction, or 0 (no copy holds it, or a record sequence
 * does: then *@leader, if given, is its leader). Any context: copies are
 * never freed while okcov is loaded, and the list of them is freed after
 * a grace period (caller: preemption or softirqs off, an RCU read side,
 * or okcov_copy_mutex).
 */
static unsigned long notrace okcov_copy_map(unsigned long addr,
					    unsigned long *leader)
{
	const struct okcov_copy_insn *ci;
	unsigned int lo, hi, mid, n;
	struct okcov_copy **list;
	const struct okcov_copy *c;
	unsigned long off;

	if (addr - (unsigned long)okcov_pool >= OKCOV_POOL_SIZE)
		return 0;
	/* Pairs with okcov_copy_make()'s release: the count, then entries. */
	n = smp_load_acquire(&okcov_ncopies);
	list = rcu_dereference_raw(okcov_copy_list);
	/* The last copy starting at or below addr (bump allocation). */
	for (lo = 0, hi = n; lo < hi;) {
		mid = lo + (hi - lo) / 2;
		if (list[mid]->start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	c = list[lo - 1];
	off = addr - c->start;
	if (off >= c->size)
		return 0;
	for (lo = 0, hi = c->ninsns; lo < hi;) {
		mid = lo + (hi - lo) / 2;
		if (c->insns[mid].off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* In the record or comparison sequence before the next instruction? */
	ci = &c->insns[lo];
	if (lo < c->ninsns &&
	    off >= ci->off - ci->cmp * OKCOV_COPY_CMP -
		   ci->record * OKCOV_COPY_RECORD) {
		if (leader && off < ci->off - ci->cmp * OKCOV_COPY_CMP)
			*leader = ci->orig;
		return 0;
	}
	if (!lo)
		return 0;
	ci = &c->insns[lo - 1];
	if (off >= ci->off + ci->len)
		return 0;
	return ci->orig + (off - ci->off);
}

/*
 * What okcov_copy_orig() found, by return address: every function a
 * traced thread enters from a copy asks for its call site. Direct-mapped,
 * filled on a miss, never cleared: a copy's bytes neither change nor move
 * while okcov is loaded, so an answer stays true. One word an entry,
 * written and read whole: the address's pool offset with bit 31 set
 * (empty entries are 0) above the original's low 32 bits (kernel and
 * module text lie in the top 2 GiB, where they sign-extend back).
 */
#define OKCOV_ORIG_BITS		14
static u64 okcov_orig_cache[1 << OKCOV_ORIG_BITS];

/*
 * @addr, in okcov's text: for a return address into a copy (a call
 * instruction's end), the same return address in the original function;
 * 0 for any other. As okcov_copy_map().
 */
unsigned long notrace okcov_copy_orig(unsigned long addr)
{
	unsigned long off = addr - (unsigned long)okcov_pool, orig;
	u64 *e, v;

	if (off >= OKCOV_POOL_SIZE)
		return 0;
	e = &okcov_orig_cache[hash_32(off, OKCOV_ORIG_BITS)];
	v = READ_ONCE(*e);
	if (v >> 32 == (off | BIT(31)))
		return (unsigned long)(long)(s32)(u32)v;
	orig = okcov_copy_map(addr - 1, NULL);
	if (!orig)
		return 0;
	orig++;
	if ((unsigned long)(long)(s32)(u32)orig == orig)
		WRITE_ONCE(*e, (u64)(off | BIT(31)) << 32 | (u32)orig);
	return orig;
}

/*
 * A ud2 (BUG(), WARN()) or ud1 in a copy trapped, and the kernel found no
 * bug-table entry for it (the table knows the original): send the task
 * back to the same instruction in the original, which traps again and is
 * reported, and goes on, as the original's. The rest of that call runs
 * the original (no leaders recorded past it, but the kprobe backend's).
 */
static int okcov_copy_die(struct notifier_block *nb, unsigned long val,
			  void *data)
{
	struct die_args *args = data;
	unsigned long orig;

	if (val != DIE_TRAP || args->trapnr != X86_TRAP_UD ||
	    user_mode(args->regs))
		return NOTIFY_DONE;
	orig = okcov_copy_map(args->regs->ip, NULL);
	if (!orig)
		return NOTIFY_DONE;
	args->regs->ip = orig;
	return NOTIFY_STOP;
}

static struct notifier_block okcov_copy_die_nb = {
	.notifier_call	= okcov_copy_die,
};

/* The writable alias of the whole pool, made once. [C] */
static int okcov_pool_map(void)
{
	unsigned int i, n = OKCOV_POOL_SIZE >> PAGE_SHIFT;
	struct page **pages;
	int ret = 0;

	if (okcov_pool_rw)
		return 0;
	if (!PAGE_ALIGNED(okcov_pool))
		return -EINVAL;
	pages = kvmalloc_array(n, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		pages[i] = vmalloc_to_page(okcov_pool + i * PAGE_SIZE);
		if (!pages[i]) {
			ret = -EFAULT;
			goto out;
		}
	}
	okcov_pool_rw = vmap(pages, n, VM_MAP, PAGE_KERNEL);
	if (!okcov_pool_rw) {
		ret = -ENOMEM;
		goto out;
	}
	/* It is the pool: both read the same bytes. */
	if (memcmp(okcov_pool_rw, okcov_pool, OKCOV_POOL_SIZE)) {
		pr_err("copy: the pool's alias does not map it\n");
		vunmap(okcov_pool_rw);
		okcov_pool_rw = NULL;
		ret = -EFAULT;
	}
out:
	kvfree(pages);
	return ret;
}

static void okcov_copy_sync_cpu(void *unused)
{
	sync_core();
}

/* One copy being made. */
struct okcov_copy_ctx {
	const struct okcov_plan	*p;
	unsigned long		base;		/* where in the pool */
	unsigned long		fentry;		/* 0: none */
	unsigned long		entry_end;	/* targets below stay absolute */
	unsigned int		*order;		/* plan insn indices, copy order */
	u32			*off;		/* per plan insn: its offset */
	u32			*rec;		/* per plan insn: its record's, or ~0 */
	u32			*cmp;		/* per plan insn: its comparison's, or ~0 */
	u8			*len;		/* per plan insn: its copied length */
	u8			*buf;		/* the copy, written to the pool last */
	unsigned int		size;		/* code, jump tables, descriptors */
	u32			*jt_off;	/* per plan jt: the copy's table */
	bool			callee;		/* a callee's copy (no fentry) */
	struct okcov_copy_to	*to;		/* callee copies its calls go to */
	unsigned int		nto, sites;	/* those, and the calls that do */
	bool			cmp_on;		/* deep_cmp: comparison sequences */
	unsigned int		ncmp;		/* comparison sequences */
	u32			cmp_desc;	/* their descriptors' offset */
	unsigned long		*chain_child;	/* okcov_cmp_chain_map()'s */
	s64			*cases;		/* okcov_cmp_chain()'s scratch */
	unsigned int		nchains, ncases; /* compare chains' roots, constants */
	u32			cases_off;	/* the constants' offset */
};

/* A callee (deep_callees) and its copy. */
struct okcov_copy_to {
	unsigned long		fn;
	struct okcov_copy	*c;
};

static bool okcov_copy_leader(const struct okcov_plan *p, unsigned long addr)
{
	unsigned int lo = 0, hi = p->nleaders, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (p->leaders[mid] == addr)
			return true;
		if (p->leaders[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static const u8 okcov_nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

/*
 * The fentry site: the plan's entry (past an endbr64, or the 4-byte nop
 * IBT seals an unused one into: 66 0f 1f 00 on 6.12, 0f 1f 40 d6 on
 * 7.x), if ftrace has a record there. 0 and
 * ctx->fentry set (0 where ftrace has none), or -EAGAIN: ftrace has one,
 * but its bytes are neither its call nor its nop (being patched).
 */
static int okcov_copy_fentry(struct okcov_copy_ctx *ctx)
{
	const struct okcov_plan *p = ctx->p;
	const struct okcov_plan_insn *pi;
	unsigned long site = p->entry;
	const u8 *b;

	ctx->fentry = 0;
	/* A callee has no fentry: a branch to its entry stays in the copy. */
	ctx->entry_end = ctx->callee ? p->start : p->entry + 1;
	if (ctx->callee || !okcov_ftrace_site(site))
		return 0;
	pi = okcov_plan_at(p, site);
	if (!pi || pi->insn.len != 5)
		return -EAGAIN;
	b = okcov_plan_bytes(p, pi);
	if (b[0] != 0xe8 && memcmp(b, okcov_nop5, 5))
		return -EAGAIN;
	ctx->fentry = site;
	ctx->entry_end = site + 5;
	return 0;
}

/* x86 is little-endian: a 32-bit field of an instruction, as it is. */
static s32 okcov_copy_get32(const u8 *at)
{
	s32 v;

	memcpy(&v, at, sizeof(v));
	return v;
}

static void okcov_copy_put32(u8 *at, s32 v)
{
	memcpy(at, &v, sizeof(v));
}

/* [C] switches' jump tables retargeted into copies; indirect jumps not */
static unsigned int okcov_copy_jt_made, okcov_copy_jt_left;
/* [C] comparison sequences in the copies made (deep_cmp, cmp.c) */
static unsigned int okcov_copy_compares, okcov_copy_chains, okcov_copy_cases;

/* A short jmp/jcc, widened in the copy. */
static bool okcov_copy_short(const struct okcov_insn *in)
{
	return (in->kind == OKCOV_KIND_JMP || in->kind == OKCOV_KIND_JCC) &&
	       in->imm_size == 1;
}

/*
 * The copy's own jump tables, after its code, aligned: one for each of
 * the plan's switches (plan.c found them), of the copy's places of the
 * original table's entries; the copy's "jmp *table(,%reg,8)" reads it.
 * Another indirect jump goes on into the original function.
 */
static int okcov_copy_jt_layout(struct okcov_copy_ctx *ctx)
{
	const struct okcov_plan *p = ctx->p;
	unsigned int i;

	if (!p->njt)
		return 0;
	ctx->jt_off = kcalloc(p->njt, sizeof(*ctx->jt_off), GFP_KERNEL);
	if (!ctx->jt_off)
		return -ENOMEM;
	for (i = 0; i < p->njt; i++) {
		ctx->jt_off[i] = round_up(ctx->size, sizeof(u64));
		ctx->size = ctx->jt_off[i] + p->jt[i].n * sizeof(u64);
	}
	return 0;
}

/* Does @pi get a comparison sequence (a cmp or test cmp.c evaluates)? */
static bool okcov_copy_cmp_at(const struct okcov_plan *p,
			      const struct okcov_plan_insn *pi)
{
	struct okcov_cmp_desc d;

	return !okcov_cmp_describe(pi, okcov_plan_bytes(p, pi), &d);
}

/*
 * Where a branch to, or the way into, plan instruction @i goes in the
 * copy: its record sequence, else its comparison sequence, else itself.
 */
static u32 okcov_copy_way_in(const struct okcov_copy_ctx *ctx, unsigned int i)
{
	if (ctx->rec[i] != ~0U)
		return ctx->rec[i];
	return ctx->cmp[i] != ~0U ? ctx->cmp[i] : ctx->off[i];
}

/* Pass one: every instruction's, record's and comparison's offset, and the size. */
static int okcov_copy_layout(struct okcov_copy_ctx *ctx)
{
	const struct okcov_plan *p = ctx->p;
	unsigned int r, i, n, k = 0, off = 0;
	const struct okcov_plan_insn *pi;
	s64 bias;
	int ret;

	for (r = 0; r < p->nregions; r++) {
		for (i = 0; i < p->ninsns; i++) {
			pi = &p->insns[i];
			if (pi->addr < p->region[r].start ||
			    pi->addr >= p->region[r].end)
				continue;
			if (k == p->ninsns)
				return -EPROTO;
			ctx->order[k++] = i;
			ctx->rec[i] = ~0U;
			if (okcov_copy_leader(p, pi->addr)) {
				ctx->rec[i] = off;
				off += OKCOV_COPY_RECORD;
			}
			ctx->cmp[i] = ~0U;
			if (ctx->cmp_on && okcov_copy_cmp_at(p, pi)) {
				ctx->cmp[i] = off;
				off += OKCOV_COPY_CMP;
				ctx->ncmp++;
				n = okcov_cmp_chain(p, ctx->chain_child, i,
						    ctx->cases, &bias);
				ctx->nchains += n > 0;
				ctx->ncases += n;
			}
			ctx->len[i] = pi->insn.len;
			if (okcov_copy_short(&pi->insn)) {
				if (pi->insn.nprefix || pi->insn.rex)
					return -EOPNOTSUPP;
				ctx->len[i] = pi->insn.kind == OKCOV_KIND_JMP ?
					      5 : 6;
			}
			ctx->off[i] = off;
			off += ctx->len[i];
		}
		off++;		/* the part's int3 */
	}
	/* What plan.c said a copy takes, exactly (it plans no comparisons). */
	if (k != p->ninsns || off != p->copy_size + ctx->ncmp * OKCOV_COPY_CMP)
		return -EPROTO;
	ctx->size = off;
	ret = okcov_copy_jt_layout(ctx);
	if (ret)
		return ret;
	/* The comparisons' descriptors, after the jump tables; chains' constants. */
	ctx->cmp_desc = round_up(ctx->size, sizeof(u64));
	ctx->cases_off = ctx->cmp_desc +
			 ctx->ncmp * sizeof(struct okcov_cmp_desc);
	if (ctx->ncmp)
		ctx->size = ctx->cases_off + ctx->ncases * sizeof(s64);
	return 0;
}

/* Where a branch to @t goes in the copy: 0, or -EILSEQ. */
static int okcov_copy_dest(const struct okcov_copy_ctx *ctx, unsigned long t,
			   unsigned long *dest)
{
	const struct okcov_plan *p = ctx->p;
	const struct okcov_plan_insn *pi;

	if ((t >= p->start && t < ctx->entry_end) || !okcov_plan_inside(p, t)) {
		*dest = t;
		return 0;
	}
	pi = okcov_plan_at(p, t);
	if (!pi)
		return -EILSEQ;
	*dest = ctx->base + okcov_copy_way_in(ctx, pi - p->insns);
	return 0;
}

/* Store @to - @from_end as a rel32/disp32 at @at: 0, or -ERANGE. */
static int okcov_copy_rel32(u8 *at, unsigned long from_end, unsigned long to)
{
	long d = (long)(to - from_end);

	if (d != (s32)d)
		return -ERANGE;
	okcov_copy_put32(at, d);
	return 0;
}

/* The copy's jump tables, and its jumps reading them. */
static int okcov_copy_jt_emit(struct okcov_copy_ctx *ctx)
{
	const struct okcov_plan *p = ctx->p;
	const struct okcov_plan_insn *pi;
	const struct okcov_plan_jt *jt;
	unsigned long table, dest;
	unsigned int j, k;
	int ret;

	for (j = 0; j < p->njt; j++) {
		jt = &p->jt[j];
		pi = okcov_plan_at(p, jt->jmp);
		if (!pi)
			return -EPROTO;
		table = ctx->base + ctx->jt_off[j];
		/* An absolute disp32 sign-extends: the pool's top 2 GiB. */
		if ((long)(s32)table != (long)table)
			return -ERANGE;
		okcov_copy_put32(ctx->buf + ctx->off[pi - p->insns] +
				 pi->insn.disp_off, table);
		for (k = 0; k < jt->n; k++) {
			ret = okcov_copy_dest(ctx, jt->entry[k], &dest);
			if (ret)
				return ret;
			memcpy(ctx->buf + ctx->jt_off[j] + 8 * k, &dest,
			       sizeof(dest));
		}
	}
	return 0;
}

/* Where a call or jump out of the function to @t goes: @t, or its callee copy. */
static unsigned long okcov_copy_to(struct okcov_copy_ctx *ctx, unsigned long t)
{
	unsigned int i;

	for (i = 0; i < ctx->nto; i++) {
		if (ctx->to[i].fn == t) {
			ctx->sites++;
			return ctx->to[i].c->enter;
		}
	}
	return t;
}

/* Pass two: the copy's bytes, into ctx->buf. */
static int okcov_copy_emit(struct okcov_copy_ctx *ctx)
{
	const struct okcov_plan *p = ctx->p;
	const struct okcov_plan_insn *pi;
	unsigned long here, t, dest, abs, record, cmp, desc;
	unsigned int k, i, n, ncmp = 0, ncases = 0;
	struct okcov_cmp_desc *d;
	s64 bias;
	const u8 *src;
	u8 *out;
	int ret;

	/*
	 * Hidden from the compiler, which would otherwise fold "record -
	 * (here + 10)" into a relocation 10 bytes before it (objtool: no
	 * ENDBR there).
	 */
	record = (unsigned long)okcov_copy_record;
	OPTIMIZER_HIDE_VAR(record);
	cmp = (unsigned long)okcov_copy_cmp;
	OPTIMIZER_HIDE_VAR(cmp);
	memset(ctx->buf, 0xcc, round_up(ctx->size, OKCOV_COPY_ALIGN));
	for (k = 0; k < p->ninsns; k++) {
		i = ctx->order[k];
		pi = &p->insns[i];
		src = okcov_plan_bytes(p, pi);
		if (ctx->rec[i] != ~0U) {
			out = ctx->buf + ctx->rec[i];
			here = ctx->base + ctx->rec[i];
			/* push $imm32 sign-extends: kernel text's top 2 GiB */
			if ((long)(s32)pi->addr != (long)pi->addr)
				return -ERANGE;
			out[0] = 0x68;
			okcov_copy_put32(out + 1, (s32)pi->addr);
			out[5] = 0xe8;
			ret = okcov_copy_rel32(out + 6, here + 10, record);
			if (ret)
				return ret;
			memcpy(out + 10, "\x48\x8d\x64\x24\x08", 5);
		}
		if (ctx->cmp[i] != ~0U) {
			/* Its descriptor, in the pool: push $imm32 reaches it. */
			out = ctx->buf + ctx->cmp[i];
			here = ctx->base + ctx->cmp[i];
			desc = ctx->base + ctx->cmp_desc +
			       ncmp * sizeof(struct okcov_cmp_desc);
			if (ncmp == ctx->ncmp)
				return -EPROTO;
			if ((long)(s32)desc != (long)desc)
				return -ERANGE;
			d = (void *)(ctx->buf + desc - ctx->base);
			if (okcov_cmp_describe(pi, src, d))
				return -EPROTO;
			ncmp++;
			/* A compare chain's root: its constants after the descriptors. */
			n = okcov_cmp_chain(p, ctx->chain_child, i, ctx->cases,
					    &bias);
			if (n) {
				if (ncases + n > ctx->ncases)
					return -EPROTO;
				memcpy(ctx->buf + ctx->cases_off +
				       ncases * sizeof(s64), ctx->cases,
				       n * sizeof(s64));
				d->ncases = n;
				d->bias = bias;
				d->cases = ctx->base + ctx->cases_off +
					   ncases * sizeof(s64);
				ncases += n;
			}
			out[0] = 0x68;
			okcov_copy_put32(out + 1, (s32)desc);
			out[5] = 0xe8;
			ret = okcov_copy_rel32(out + 6, here + 10, cmp);
			if (ret)
				return ret;
			memcpy(out + 10, "\x48\x8d\x64\x24\x08", 5);
		}
		out = ctx->buf + ctx->off[i];
		here = ctx->base + ctx->off[i];
		if (pi->addr == ctx->fentry) {
			memcpy(out, okcov_nop5, sizeof(okcov_nop5));
			continue;
		}
		switch (pi->insn.kind) {
		case OKCOV_KIND_JMP:
		case OKCOV_KIND_JCC:
		case OKCOV_KIND_CALL:
			t = okcov_plan_target(pi);
			ret = okcov_copy_dest(ctx, t, &dest);
			if (ret)
				return ret;
			if (dest == t)
				dest = okcov_copy_to(ctx, t);
			if (okcov_copy_short(&pi->insn)) {
				if (pi->insn.kind == OKCOV_KIND_JMP) {
					out[0] = 0xe9;
				} else {
					out[0] = 0x0f;
					out[1] = 0x80 | (pi->insn.opcode & 0xf);
				}
				ret = okcov_copy_rel32(out + ctx->len[i] - 4,
						       here + ctx->len[i], dest);
			} else if (pi->insn.imm_size == 4) {
				memcpy(out, src, pi->insn.len);
				ret = okcov_copy_rel32(out + pi->insn.imm_off,
						       here + pi->insn.len, dest);
			} else {
				ret = -EOPNOTSUPP;
			}
			if (ret)
				return ret;
			break;
		default:
			memcpy(out, src, pi->insn.len);
			break;
		}
		if (pi->insn.flags & OKCOV_INSN_RIPREL) {
			if (pi->insn.disp_size != 4 || ctx->len[i] != pi->insn.len)
				return -EOPNOTSUPP;
			abs = pi->addr + pi->insn.len +
			      okcov_copy_get32(src + pi->insn.disp_off);
			ret = okcov_copy_rel32(out + pi->insn.disp_off,
					       here + pi->insn.len, abs);
			if (ret)
				return ret;
		}
	}
	if (ncases != ctx->ncases)
		return -EPROTO;
	return okcov_copy_jt_emit(ctx);
}

static void okcov_copy_free(struct okcov_copy *c)
{
	if (c) {
		kvfree(c->src);
		kfree(c->leaders);
		kfree(c->callee);
		kfree(c->name);
	}
	kvfree(c);
}

/* The copy's map, from the layout. */
static struct okcov_copy *okcov_copy_new(const struct okcov_copy_ctx *ctx)
{
	const struct okcov_plan *p = ctx->p;
	struct okcov_copy *c;
	unsigned int k, i;

	c = kvzalloc(struct_size(c, insns, p->ninsns), GFP_KERNEL);
	if (!c)
		return NULL;
	c->name = kstrdup(p->name, GFP_KERNEL);
	c->leaders = kmemdup(p->leaders, p->nleaders * sizeof(*p->leaders),
			     GFP_KERNEL);
	c->src = kvmalloc(p->bytes, GFP_KERNEL);
	c->callee = kmalloc_array(ctx->nto, sizeof(*c->callee), GFP_KERNEL);
	if (!c->name || (p->nleaders && !c->leaders) || !c->src ||
	    (ctx->nto && !c->callee)) {
		okcov_copy_free(c);
		return NULL;
	}
	for (k = 0; k < ctx->nto; k++)
		c->callee[k] = ctx->to[k].c;
	c->ncallee = ctx->nto;
	for (k = i = 0; k < p->nregions; k++) {
		memcpy(c->src + i, p->text[k],
		       p->region[k].end - p->region[k].start);
		i += p->region[k].end - p->region[k].start;
	}
	c->nleaders = p->nleaders;
	c->nregions = p->nregions;
	for (k = 0; k < p->nregions; k++) {
		c->region[k][0] = p->region[k].start;
		c->region[k][1] = p->region[k].end;
	}
	c->start = ctx->base;
	c->size = ctx->size;
	c->fn_start = p->start;
	c->fn_end = p->end;
	c->fentry = ctx->fentry;
	c->cmp = ctx->cmp_on;
	c->ninsns = p->ninsns;
	for (k = 0; k < p->ninsns; k++) {
		i = ctx->order[k];
		c->insns[k].orig = p->insns[i].addr;
		c->insns[k].off = ctx->off[i];
		c->insns[k].len = ctx->len[i];
		c->insns[k].record = ctx->rec[i] != ~0U;
		c->insns[k].cmp = ctx->cmp[i] != ~0U;
		/* The instruction after the fentry site, or its sequences. */
		if (ctx->fentry && p->insns[i].addr == ctx->fentry + 5)
			c->resume = ctx->base + okcov_copy_way_in(ctx, i);
		/* A callee's first instruction, or its sequences. */
		if (ctx->callee && p->insns[i].addr == p->start)
			c->enter = ctx->base + okcov_copy_way_in(ctx, i);
	}
	return c;
}

#define OKCOV_COPY_EX_MAX	(64 << 10)	/* entries, okcov's own included */

/* Module memory, so that each entry reaches kernel text in 32 bits. */
static struct exception_table_entry okcov_copy_ex[OKCOV_COPY_EX_MAX];
static unsigned int okcov_copy_ex_n;	/* [C] okcov_copy_ex[] in use */
static bool okcov_copy_ex_ready;	/* okcov's table is okcov_copy_ex */
/* [C] entries whose fault goes on at the fixup in the copy; in the original */
static unsigned int okcov_copy_ex_in, okcov_copy_ex_out;
static struct exception_table_entry *okcov_copy_ex_loader;
static unsigned int okcov_copy_ex_own;	/* the loader's table's size */

/* search_exception_tables(), not exported: the originals' entries. */
static const struct exception_table_entry *
(*okcov_copy_ex_search)(unsigned long addr);

/* Where a fault at @e's instruction continues. */
static unsigned long okcov_copy_ex_addr(const struct exception_table_entry *e)
{
	return (unsigned long)&e->fixup + e->fixup;
}

/* @e: a fault at @insn continues at @fixup; false if out of reach. */
static bool okcov_copy_ex_set(struct exception_table_entry *e,
			      unsigned long insn, unsigned long fixup, int data)
{
	long di = insn - (unsigned long)&e->insn;
	long df = fixup - (unsigned long)&e->fixup;

	if (di != (s32)di || df != (s32)df)
		return false;
	e->insn = di;
	e->fixup = df;
	e->data = data;
	return true;
}

/* May @in fault where the original has an exception-table entry? */
static bool okcov_copy_may_fault(const struct okcov_insn *in)
{
	if (in->kind == OKCOV_KIND_NOP)
		return false;
	if (in->map == OKCOV_MAP_1B) {
		switch (in->opcode) {
		case 0x8d:			/* lea: no access */
			return false;
		case 0x8e:			/* mov to a segment register */
		case 0xa0 ... 0xa7:		/* moffs mov, movs, cmps */
		case 0xaa ... 0xaf:		/* stos, lods, scas */
			return true;
		}
	} else if (in->map == OKCOV_MAP_0F) {
		switch (in->opcode) {
		case 0x01:			/* xsetbv, stac/clac... */
		case 0x30 ... 0x33:		/* wrmsr, rdtsc, rdmsr, rdpmc */
			return true;
		}
	}
	return (in->flags & OKCOV_INSN_MODRM) && (in->modrm >> 6) != 3;
}

/*
 * okcov's own entries into okcov_copy_ex, and okcov_copy_ex as okcov's
 * table. Refused (copies then take no function that could fault with a
 * fixup) when an entry of okcov's lies above the pool, where appending
 * would unsort the table.
 */
static void okcov_copy_ex_init(void)
{
	struct module *mod = THIS_MODULE;
	const struct exception_table_entry *e;
	unsigned long insn, fixup;
	unsigned int i, n = mod->num_exentries;

	if (n > OKCOV_COPY_EX_MAX / 2)
		goto refused;
	for (i = 0; i < n; i++) {
		e = &mod->extable[i];
		insn = (unsigned long)&e->insn + e->insn;
		fixup = okcov_copy_ex_addr(e);
		if (insn >= (unsigned long)okcov_pool ||
		    !okcov_copy_ex_set(&okcov_copy_ex[i], insn, fixup, e->data))
			goto refused;
	}
	okcov_copy_ex_n = n;
	okcov_copy_ex_own = n;
	okcov_copy_ex_loader = mod->extable;
	okcov_copy_ex_search = (void *)okcov_symbol("search_exception_tables");
	/* Either table answers the same until copies add entries. */
	WRITE_ONCE(mod->extable, okcov_copy_ex);
	okcov_copy_ex_ready = true;
	return;
refused:
	pr_warn("copy: okcov's exception table cannot take copies: functions that may fault go to kprobes\n");
}

/* Back to the loader's table (no copy can run now), before unload. */
static void okcov_copy_ex_exit(void)
{
	struct module *mod = THIS_MODULE;

	if (!okcov_copy_ex_ready)
		return;
	WRITE_ONCE(mod->num_exentries, okcov_copy_ex_own);
	/* The count before the table: either step leaves them agreeing. */
	smp_wmb();
	WRITE_ONCE(mod->extable, okcov_copy_ex_loader);
	okcov_copy_ex_ready = false;
}

/* Entries @ctx's copy needs: its instructions that may fault. */
static unsigned int okcov_copy_ex_need(const struct okcov_plan *p)
{
	unsigned int i, n = 0;

	for (i = 0; i < p->ninsns; i++)
		n += okcov_copy_may_fault(&p->insns[i].insn);
	return n;
}

/*
 * Where a fault at @orig, an instruction of @ctx's original, continues
 * in its copy, and the entry's data there; or 0. The original's own
 * entry, when its fixup is an instruction of the copy and its type's
 * handler only sets registers and the ip: the rest of the call then
 * stays in the copy, and records. The others (ZEROPAD decodes the
 * instruction at the ip, the MSR and FPU ones print it, MCE ones panic)
 * fault again in the original.
 */
static unsigned long okcov_copy_ex_follow(const struct okcov_copy_ctx *ctx,
					  unsigned long orig, int *data)
{
	const struct exception_table_entry *e;
	unsigned long fixup, dest;

	e = okcov_copy_ex_search ? okcov_copy_ex_search(orig) : NULL;
	if (!e)
		return 0;
	switch (FIELD_GET(EX_DATA_TYPE_MASK, e->data)) {
	case EX_TYPE_DEFAULT:
	case EX_TYPE_DEFAULT_MCE_SAFE:
	case EX_TYPE_FAULT:
	case EX_TYPE_FAULT_MCE_SAFE:
	case EX_TYPE_UACCESS:
	case EX_TYPE_CLEAR_FS:
	case EX_TYPE_WRMSR_SAFE:
	case EX_TYPE_RDMSR_SAFE:
	case EX_TYPE_IMM_REG:
	case EX_TYPE_UCOPY_LEN:
		break;
	default:
		return 0;
	}
	fixup = okcov_copy_ex_addr(e);
	/* As a branch there: a leader's record first, the block records. */
	if (okcov_copy_dest(ctx, fixup, &dest) || dest == fixup)
		return 0;
	*data = e->data;
	return dest;
}

/*
 * @c (about to be written at the pool's end) gets its entries: each
 * instruction that may fault sends the fault to its original's fixup in
 * the copy (okcov_copy_ex_follow()), or else back to the original
 * instruction. [C]
 */
static int okcov_copy_ex_add(const struct okcov_copy_ctx *ctx,
			     const struct okcov_copy *c)
{
	const struct okcov_plan *p = ctx->p;
	const struct okcov_plan_insn *pi;
	unsigned int k, n = okcov_copy_ex_n;
	unsigned long at, fixup;
	int data;

	for (k = 0; k < c->ninsns; k++) {
		pi = okcov_plan_at(p, c->insns[k].orig);
		if (!pi || !okcov_copy_may_fault(&pi->insn))
			continue;
		at = c->start + c->insns[k].off;
		fixup = okcov_copy_ex_follow(ctx, c->insns[k].orig, &data);
		if (!fixup) {
			fixup = c->insns[k].orig;
			data = EX_TYPE_DEFAULT;
		}
		/* The copy's instructions go in address order, after all. */
		if (n == OKCOV_COPY_EX_MAX ||
		    (n > okcov_copy_ex_n &&
		     at <= (unsigned long)&okcov_copy_ex[n - 1].insn +
			   okcov_copy_ex[n - 1].insn) ||
		    !okcov_copy_ex_set(&okcov_copy_ex[n], at, fixup, data))
			return -EPROTO;
		n++;
	}
	/* The entries, then the count: okcov_copy_ex[] is sorted throughout. */
	smp_wmb();
	WRITE_ONCE(THIS_MODULE->num_exentries, n);
	for (k = okcov_copy_ex_n; k < n; k++) {
		if (okcov_copy_ex_addr(&okcov_copy_ex[k]) - c->start < c->size)
			okcov_copy_ex_in++;
		else
			okcov_copy_ex_out++;
	}
	okcov_copy_ex_n = n;
	return 0;
}

/*
 * @c's entries for the unwinder (orc.c), staged: each instruction has its
 * original's; a record sequence's call and lea have the leader's with
 * the pushed leader on the stack; the int3 after each part has none.
 */
static int okcov_copy_orc(const struct okcov_copy *c)
{
	const struct okcov_copy_insn *ci;
	unsigned long at, end = c->start;
	unsigned int k;
	int ret = 0;

	for (k = 0; k < c->ninsns && !ret; k++) {
		ci = &c->insns[k];
		at = c->start + ci->off;
		if (ci->record)
			at -= OKCOV_COPY_RECORD;
		if (ci->cmp)
			at -= OKCOV_COPY_CMP;
		if (at != end)
			ret = okcov_orc_add(end, 0, 0);
		if (!ret && ci->record) {
			/* push $leader; then call and lea: 8 bytes more. */
			ret = okcov_orc_add(at, ci->orig, 0) ?:
			      okcov_orc_add(at + 5, ci->orig, 8);
			at += OKCOV_COPY_RECORD;
		}
		if (!ret && ci->cmp) {
			/* push $desc; call and lea: the same. */
			ret = okcov_orc_add(at, ci->orig, 0) ?:
			      okcov_orc_add(at + 5, ci->orig, 8);
			at += OKCOV_COPY_CMP;
		}
		ret = ret ?: okcov_orc_add(at, ci->orig, 0);
		end = at + ci->len;
	}
	return ret ?: okcov_orc_add(end, 0, 0);
}

/*
 * Callees (deep_callees): a deep copy's direct calls and jumps of a
 * function ftrace has no record of (notrace: an inline body the compiler
 * kept out of line, SYSCALL_DEFINE's __do_sys_*, a file built without
 * -pg) go to a copy of that function, with every leader the planner
 * finds and its entry (no fentry records that one), and so on to
 * OKCOV_CALLEE_DEPTH. Only a traced thread runs a deep copy, so only it
 * runs those; a bystander, an interrupt, the original caller run the
 * original. A callee's copy is found again for every caller (by address,
 * until its original changes or its module goes); like every copy it
 * stays in the pool until rmmod.
 *
 * Refused, each counted once per function in the copies file ("callee
 * REASON ERRNO COUNT"): a function in the noinstr, entry, irqentry,
 * softirqentry, cpuidle or kprobes text (EPERM); by name, ftrace,
 * kprobes, RCU, NMI, lockdep, context tracking, the sanitizers and the
 * thunks and prefixes the compiler and objtool emit (EACCES); what the
 * function set leaves out, kcov's uninstrumented files (ENOENT); not a
 * function's start, or another module's function (EXDEV); one whose
 * last instruction of a part falls through (EILSEQ), or that the planner
 * or copier refuse (their errno, counted as "uncopyable"). Deeper than
 * OKCOV_CALLEE_DEPTH, or a callee already being copied (recursion), the
 * call goes to the original.
 *
 * Staleness: a copy that calls a callee's copy is doomed with it
 * (okcov_copy_doom_callers()): a jump label switched in a callee
 * withdraws its callers' copies too.
 */
#define OKCOV_CALLEE_DEPTH	3

static bool deep_callees = true;
module_param(deep_callees, bool, 0644);
MODULE_PARM_DESC(deep_callees,
		 "Deep copies call copies of the notrace functions they call (x86_64, default 1; read when a copy is made)");

enum okcov_callee_why {
	OKCOV_CALLEE_OK,		/* copied */
	OKCOV_CALLEE_TRACED,		/* not a refusal: ftrace has it */
	OKCOV_CALLEE_SECTION,
	OKCOV_CALLEE_INTERNAL,
	OKCOV_CALLEE_LEFT_OUT,
	OKCOV_CALLEE_FOREIGN,
	OKCOV_CALLEE_FALLS,
	OKCOV_CALLEE_UNCOPYABLE,
	OKCOV_CALLEE_NR
};

static const struct {
	const char	*name;
	int		err;
} okcov_callee_why[OKCOV_CALLEE_NR] = {
	{ "copied", 0 }, { "traced", 0 }, { "section", EPERM }, { "internal", EACCES },
	{ "left-out", ENOENT }, { "foreign", EXDEV }, { "falls", EILSEQ },
	{ "uncopyable", EOPNOTSUPP },
};

/* [C] function start -> its callee copy, or xa_mk_value(why not) */
static DEFINE_XARRAY(okcov_callees);
static unsigned long okcov_callee_count[OKCOV_CALLEE_NR];	/* [C] */
static unsigned long okcov_callee_made, okcov_callee_sites;	/* [C] */
static unsigned long okcov_callee_making[OKCOV_CALLEE_DEPTH + 1];	/* [C] */

/* Kernel text no copy enters, by its section's bounds (kallsyms). */
static const char *const okcov_callee_sections[][2] = {
	{ "__noinstr_text_start", "__noinstr_text_end" },
	{ "__entry_text_start", "__entry_text_end" },
	{ "__irqentry_text_start", "__irqentry_text_end" },
	{ "__softirqentry_text_start", "__softirqentry_text_end" },
	{ "__cpuidle_text_start", "__cpuidle_text_end" },
	{ "__kprobes_text_start", "__kprobes_text_end" },
};
static unsigned long okcov_callee_bounds[ARRAY_SIZE(okcov_callee_sections)][2];
static int okcov_callee_bounds_ok;	/* [C] 0 unread, 1 read, -1 not found */

/* Names no copy enters: okcov_copy's record could run where it must not. */
static const char *const okcov_callee_internal[] = {
	"__pfx_*", "__cfi_*", "__x86_*", "__fentry__", "*ftrace*",
	"*kprobe*", "*rethook*", "*rcu*", "ct_*", "*context_tracking*",
	"*nmi*", "exc_*", "*irqentry*", "*lockdep*", "lock_*", "__lock_*",
	"*trace_hardirqs*", "kcov_*", "__kcov*", "*_kcov_*", "*kasan*",
	"*kmsan*", "*kcsan*", "*ubsan*", "__sanitizer_*", "__asan_*",
	"__tsan_*", "*stackleak*",
	"__stack_chk_*", "*text_poke*", "*static_call*", "*jump_label*",
	"*_thunk*", "__get_user_*", "__put_user_*", "*copy_user*",
	"*clear_user*", "memcpy*", "memset*", "memmove*", "__memcpy*",
	"__memset*", "__memmove*", "*csum*", "__sw_hweight*", "native_*",
	"xen_*", "pv_*", "paravirt_*", "__switch_to*", "ret_from_*",
	"entry_*", "*idle*", "__schedule", "schedule*", "preempt_schedule*",
	"*mwait*", "*halt*", "do_exit", "make_task_dead", "panic*",
	"*oops*", "*die*", "*bug*", "*warn*",
};
/* Those names in funcset.c's slots, on the first callee asked about. [C] */
static struct okcov_globset *okcov_callee_internal_set;

static bool okcov_callee_in_section(unsigned long t)
{
	unsigned int i;

	if (!okcov_callee_bounds_ok) {
		okcov_callee_bounds_ok = 1;
		for (i = 0; i < ARRAY_SIZE(okcov_callee_sections); i++) {
			okcov_callee_bounds[i][0] =
				okcov_symbol(okcov_callee_sections[i][0]);
			okcov_callee_bounds[i][1] =
				okcov_symbol(okcov_callee_sections[i][1]);
			/* noinstr and entry text: every kernel okcov knows */
			if (i < 2 && (!okcov_callee_bounds[i][0] ||
				      !okcov_callee_bounds[i][1]))
				okcov_callee_bounds_ok = -1;
		}
	}
	if (okcov_callee_bounds_ok < 0)
		return true;
	for (i = 0; i < ARRAY_SIZE(okcov_callee_sections); i++)
		if (t >= okcov_callee_bounds[i][0] &&
		    t < okcov_callee_bounds[i][1])
			return true;
	return false;
}

/* A module's noinstr text. */
static bool okcov_callee_in_module_section(unsigned long t)
{
	static struct module *(*lookup)(unsigned long addr);
	struct module *m;
	bool in = true;

	if (!lookup)
		lookup = (void *)okcov_symbol("__module_address");
	if (!lookup)
		return true;
	preempt_disable();
	m = lookup(t);
	if (m)
		in = t - (unsigned long)m->noinstr_text_start <
		     m->noinstr_text_size;
	preempt_enable();
	return in;
}

/* Why the function at @t is no callee @p's copy may call, or 0. [C] */
static int okcov_callee_check(const struct okcov_plan *p, unsigned long t)
{
	char *buf, *own, *mod;
	unsigned long start, end;
	size_t len;
	bool in_mod;
	int why = OKCOV_CALLEE_FOREIGN;

	if (t - okcov_g.text_start < okcov_g.text_size)
		return OKCOV_CALLEE_INTERNAL;
	if (!okcov_callee_internal_set)
		okcov_callee_internal_set =
			okcov_globs_new(okcov_callee_internal,
					ARRAY_SIZE(okcov_callee_internal));
	if (!okcov_callee_internal_set)
		return -ENOMEM;
	buf = kmalloc(3 * KSYM_SYMBOL_LEN, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	if (!okcov_symbol_bounds(t, buf, &len, &start, &end, &in_mod) ||
	    start != t)
		goto out;
	if (in_mod) {
		/* "name [module]": the same module's, or none. */
		own = buf + KSYM_SYMBOL_LEN;
		mod = own + KSYM_SYMBOL_LEN;
		sprint_symbol_no_offset(own, p->start);
		sprint_symbol_no_offset(mod, t);
		own = strrchr(own, '[');
		mod = strrchr(mod, '[');
		if (!own || !mod || strcmp(own, mod))
			goto out;
		why = OKCOV_CALLEE_SECTION;
		if (okcov_callee_in_module_section(t))
			goto out;
	} else {
		why = OKCOV_CALLEE_SECTION;
		if (okcov_callee_in_section(t))
			goto out;
	}
	why = OKCOV_CALLEE_INTERNAL;
	if (okcov_globs_match(okcov_callee_internal_set, buf, len))
		goto out;
	why = OKCOV_CALLEE_LEFT_OUT;
	if (!in_mod && okcov_funcset_left_out(buf, len))
		goto out;
	why = OKCOV_CALLEE_TRACED;
	if (okcov_ftrace_site(t))
		goto out;
	why = OKCOV_CALLEE_OK;
out:
	kfree(buf);
	return why;
}

/*
 * Does every part of @p end where nothing falls through? (kallsyms counts
 * the padding nops up to the next symbol in.)
 */
static bool okcov_callee_ends(const struct okcov_plan *p)
{
	const struct okcov_plan_insn *last;
	unsigned int r, i;

	for (r = 0; r < p->nregions; r++) {
		last = NULL;
		for (i = 0; i < p->ninsns; i++)
			if (p->insns[i].addr >= p->region[r].start &&
			    p->insns[i].addr < p->region[r].end &&
			    p->insns[i].insn.kind != OKCOV_KIND_NOP)
				last = &p->insns[i];
		if (!last)
			return false;
		switch (last->insn.kind) {
		case OKCOV_KIND_JMP:
		case OKCOV_KIND_JMP_IND:
		case OKCOV_KIND_RET:
		case OKCOV_KIND_INT3:
		case OKCOV_KIND_UD:
			break;
		default:
			return false;
		}
	}
	return true;
}

/* @p, planned: its entry leads too (no fentry records it). */
static int okcov_callee_lead_entry(struct okcov_plan *p)
{
	unsigned long *l;
	unsigned int i;

	for (i = 0; i < p->nleaders; i++)
		if (p->leaders[i] == p->entry)
			return 0;
	l = kvmalloc_array(p->nleaders + 1, sizeof(*l), GFP_KERNEL);
	if (!l)
		return -ENOMEM;
	for (i = 0; i < p->nleaders && p->leaders[i] < p->entry; i++)
		l[i] = p->leaders[i];
	l[i] = p->entry;
	memcpy(l + i + 1, p->leaders + i, (p->nleaders - i) * sizeof(*l));
	kvfree(p->leaders);
	p->leaders = l;
	p->nleaders++;
	p->leader_cap = p->nleaders;
	p->copy_size += OKCOV_COPY_RECORD;
	return 0;
}

static int okcov_copy_make(const struct okcov_plan *p, int depth, bool cmp,
			   struct okcov_copy **out);
static int okcov_copy_hazard(const struct okcov_plan *p);

/*
 * The callee copy of the function at @t for @caller's copy, made at
 * @depth, or NULL (why counted). [C]
 */
static struct okcov_copy *okcov_callee_get(const struct okcov_plan *caller,
					   unsigned long t, int depth, bool cmp)
{
	struct okcov_copy *c = NULL;
	struct okcov_plan *p;
	void *e = xa_load(&okcov_callees, t);
	int why, ret, i;

	if (xa_is_value(e))
		return NULL;
	/* Made under the other deep_cmp: made again (cmp.c). */
	if (e && !READ_ONCE(((struct okcov_copy *)e)->doomed) &&
	    ((struct okcov_copy *)e)->cmp == cmp)
		return e;
	if (depth > OKCOV_CALLEE_DEPTH)
		return NULL;
	for (i = 0; i < depth; i++)
		if (okcov_callee_making[i] == t)
			return NULL;
	if (!e) {
		why = okcov_callee_check(caller, t);
		if (why < 0)
			return NULL;
		if (why) {
			xa_store(&okcov_callees, t, xa_mk_value(why), GFP_KERNEL);
			okcov_callee_count[why]++;
			return NULL;
		}
	}
	p = kmalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return NULL;
	why = OKCOV_CALLEE_UNCOPYABLE;
	ret = okcov_plan_function(t, p);
	if (!ret && (p->start != t || !okcov_callee_ends(p)))
		why = OKCOV_CALLEE_FALLS;
	else if (!ret)
		ret = okcov_callee_lead_entry(p);
	if (!ret && why == OKCOV_CALLEE_UNCOPYABLE)
		ret = okcov_copy_die_ready ? okcov_copy_hazard(p) : -EOPNOTSUPP;
	if (!ret && why == OKCOV_CALLEE_UNCOPYABLE) {
		okcov_callee_making[depth - 1] = t;
		ret = okcov_copy_make(p, depth, cmp, &c);
		okcov_callee_making[depth - 1] = 0;
	}
	if (!ret && c) {
		c->since = jiffies;
		xa_store(&okcov_callees, t, c, GFP_KERNEL);
		okcov_callee_made++;
	} else if (why == OKCOV_CALLEE_FALLS ||
		   (ret != -EAGAIN && ret != -EBUSY && ret != -ENOMEM &&
		    ret != -ENOSPC)) {
		pr_info("copy: callee %s not copied: %s (%d)\n", p->name,
			okcov_callee_why[why].name, ret);
		xa_store(&okcov_callees, t, xa_mk_value(why), GFP_KERNEL);
		okcov_callee_count[why]++;
		c = NULL;
	}
	okcov_plan_free(p);
	kfree(p);
	return c;
}

/*
 * Before @ctx's copy is laid out: the callee copies its direct calls and
 * jumps out of the function go to (ctx->to), when @depth says it has
 * some: 0 for a deep copy, a callee's own depth for a callee's. [C]
 */
static int okcov_copy_callees(struct okcov_copy_ctx *ctx, int depth)
{
	const struct okcov_plan *p = ctx->p;
	const struct okcov_plan_insn *pi;
	struct okcov_copy_to *to;
	struct okcov_copy *c;
	unsigned int i, j, cap = 0;
	unsigned long t;

	for (i = 0; i < p->ninsns; i++) {
		pi = &p->insns[i];
		if (!okcov_plan_out(p, pi, &t))
			continue;
		for (j = 0; j < ctx->nto && ctx->to[j].fn != t; j++)
			;
		if (j < ctx->nto)
			continue;
		c = okcov_callee_get(p, t, depth + 1, ctx->cmp_on);
		if (!c)
			continue;
		if (ctx->nto == cap) {
			cap = max(2 * cap, 8U);
			to = krealloc_array(ctx->to, cap, sizeof(*to),
					    GFP_KERNEL);
			if (!to)
				return -ENOMEM;
			ctx->to = to;
		}
		ctx->to[ctx->nto].fn = t;
		ctx->to[ctx->nto++].c = c;
	}
	return 0;
}

/*
 * Has planned @p a callee that gets a copy (deep_callees)? KIODEEP then
 * copies a function with no leader of its own: a syscall's wrapper of
 * its notrace __do_sys_*(). The callees' copies are made here.
 */
bool okcov_copy_calls_notrace(const struct okcov_plan *p)
{
	const struct okcov_plan_insn *pi;
	bool yes = false;
	unsigned int i;
	unsigned long t;

	if (!READ_ONCE(deep_callees) || !okcov_copy_die_ready)
		return false;
	mutex_lock(&okcov_copy_mutex);
	for (i = 0; i < p->ninsns && !yes; i++) {
		pi = &p->insns[i];
		if (okcov_plan_out(p, pi, &t))
			yes = okcov_callee_get(p, t, 1,
						okcov_copy_cmp_wanted());
	}
	mutex_unlock(&okcov_copy_mutex);
	return yes;
}

/* Does @c call a callee copy that is doomed? (Any context.) */
static bool notrace okcov_copy_callee_doomed(const struct okcov_copy *c)
{
	unsigned int j;

	for (j = 0; j < c->ncallee; j++)
		if (READ_ONCE(c->callee[j]->doomed))
			return true;
	return false;
}

/*
 * Copies that call a doomed copy are doomed too, to a fixed point (a
 * callee's callee). True if any was. Caller: a read side of the list,
 * or okcov_copy_mutex.
 */
static bool notrace okcov_copy_doom_callers(struct okcov_copy **list,
					    unsigned int n)
{
	bool any = false, more = true;
	unsigned int k;

	while (more) {
		more = false;
		for (k = 0; k < n; k++) {
			if (READ_ONCE(list[k]->doomed) ||
			    !okcov_copy_callee_doomed(list[k]))
				continue;
			WRITE_ONCE(list[k]->doomed, true);
			more = any = true;
		}
	}
	return any;
}

/*
 * Lay out, write and publish the copy of planned @p, with comparison
 * sequences if @cmp (deep_cmp). [C] 0 and *@out, or
 * ENOSPC, ERANGE, EOPNOTSUPP, EILSEQ, EAGAIN (the fentry site is being
 * patched), EBUSY (an int3 in the code), ENOMEM, EPROTO (plan and layout
 * disagree: a bug).
 */
static int okcov_copy_make(const struct okcov_plan *p, int depth, bool cmp,
			   struct okcov_copy **out)
{
	struct okcov_copy_ctx ctx = { .p = p, .callee = depth > 0, .cmp_on = cmp };
	struct okcov_copy *c = NULL, **list, **old;
	unsigned long room;
	int ret;

	lockdep_assert_held(&okcov_copy_mutex);
	/*
	 * An int3 where the code falls through: a kprobe's, or a patch the
	 * planner's retries did not outlast. Copied, it would trap with no
	 * handler.
	 */
	if (okcov_plan_patching(p))
		return -EBUSY;
	ret = okcov_pool_map();
	if (ret)
		return ret;
	/* Callees first: each is a whole copy of its own. */
	if (depth >= 0) {
		ret = okcov_copy_callees(&ctx, depth);
		if (ret)
			goto out;
	}
	ret = okcov_orc_begin();
	if (ret)
		goto out;
	okcov_copy_follow();
	ret = okcov_copy_fentry(&ctx);
	if (ret)
		goto out;
	ret = -ENOMEM;
	ctx.order = kvmalloc_array(p->ninsns, sizeof(*ctx.order), GFP_KERNEL);
	ctx.off = kvmalloc_array(p->ninsns, sizeof(*ctx.off), GFP_KERNEL);
	ctx.rec = kvmalloc_array(p->ninsns, sizeof(*ctx.rec), GFP_KERNEL);
	ctx.cmp = kvmalloc_array(p->ninsns, sizeof(*ctx.cmp), GFP_KERNEL);
	ctx.len = kvmalloc(p->ninsns, GFP_KERNEL);
	if (!ctx.order || !ctx.off || !ctx.rec || !ctx.cmp || !ctx.len)
		goto out;
	if (cmp) {
		ctx.chain_child = okcov_cmp_chain_map(p);
		ctx.cases = kmalloc_array(OKCOV_CMP_CASES_MAX, sizeof(s64),
					  GFP_KERNEL);
		if (!ctx.chain_child || !ctx.cases)
			goto out;
	}
	ret = okcov_copy_layout(&ctx);
	if (ret)
		goto out;
	room = round_up(ctx.size, OKCOV_COPY_ALIGN);
	ret = -ENOSPC;
	if (room > OKCOV_POOL_SIZE - okcov_pool_used ||
	    (okcov_copy_ex_ready &&
	     okcov_copy_ex_need(p) > OKCOV_COPY_EX_MAX - okcov_copy_ex_n))
		goto out;
	ctx.base = (unsigned long)okcov_pool + okcov_pool_used;
	ret = -ENOMEM;
	ctx.buf = kvmalloc(room, GFP_KERNEL);
	if (!ctx.buf)
		goto out;
	ret = okcov_copy_emit(&ctx);
	if (ret)
		goto out;
	ret = -ENOMEM;
	c = okcov_copy_new(&ctx);
	if (!c)
		goto out;
	c->callees = depth >= 0;
	if (okcov_ncopies == okcov_copy_cap) {
		list = kvmalloc_array(max(2 * okcov_copy_cap, 64U),
				      sizeof(*list), GFP_KERNEL);
		if (!list)
			goto out;
		if (okcov_ncopies)
			memcpy(list, okcov_copy_list,
			       okcov_ncopies * sizeof(*list));
		old = okcov_copy_list;
		/* okcov_copy_orig() reads the list without the mutex. */
		rcu_assign_pointer(okcov_copy_list, list);
		synchronize_rcu();
		kvfree(old);
		okcov_copy_cap = max(2 * okcov_copy_cap, 64U);
	}
	/* Staged: published below, or dropped by the next copy's begin. */
	ret = okcov_copy_orc(c);
	if (ret)
		goto out;
	if (okcov_copy_ex_ready) {
		ret = okcov_copy_ex_add(&ctx, c);
		if (ret)
			goto out;
	}
	/* Space nobody ever ran: write it, then make every CPU see it. */
	memcpy(okcov_pool_rw + okcov_pool_used, ctx.buf, room);
	okcov_pool_used += room;
	okcov_copy_jt_made += p->njt;
	okcov_copy_jt_left += p->njmp - p->njt;
	okcov_copy_compares += ctx.ncmp;
	okcov_copy_chains += ctx.nchains;
	okcov_copy_cases += ctx.ncases;
	on_each_cpu(okcov_copy_sync_cpu, NULL, 1);
	okcov_orc_commit();
	okcov_copy_list[okcov_ncopies] = c;
	/* Pairs with okcov_copy_orig()'s acquire: the entry, then the count. */
	smp_store_release(&okcov_ncopies, okcov_ncopies + 1);
	/*
	 * From here a patch of the original dooms the copy (okcov_copy_doom()
	 * reads the list); one since the plan read the text refuses it.
	 */
	smp_mb();
	okcov_callee_sites += ctx.sites;
	ret = -EAGAIN;
	if (!okcov_copy_current(c) || okcov_copy_callee_doomed(c)) {
		WRITE_ONCE(c->doomed, true);
		c = NULL;
		goto out;
	}
	*out = c;
	c = NULL;
	ret = 0;
out:
	okcov_copy_free(c);
	kfree(ctx.cases);
	bitmap_free(ctx.chain_child);
	kfree(ctx.to);
	kvfree(ctx.buf);
	kfree(ctx.jt_off);
	kvfree(ctx.len);
	kvfree(ctx.cmp);
	kvfree(ctx.rec);
	kvfree(ctx.off);
	kvfree(ctx.order);
	return ret;
}

/*
 * The copy of the function around @addr, made now or before: 0 and *@out
 * (valid while okcov is loaded), or the plan's verdict, or
 * okcov_copy_make()'s errno. Task context; it may sleep. [C]
 */
static int okcov_copy_get(unsigned long addr, struct okcov_copy **out)
{
	bool cmp = okcov_copy_cmp_wanted();
	struct okcov_plan *p;
	int ret;

	lockdep_assert_held(&okcov_copy_mutex);
	p = kmalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	ret = okcov_plan_function(addr, p);
	if (!ret) {
		*out = xa_load(&okcov_copies, p->start);
		/*
		 * A copy whose original was patched since is made again, and
		 * so is one made under the other deep_cmp.
		 */
		if (!*out || READ_ONCE((*out)->doomed) ||
		    (*out)->cmp != cmp) {
			ret = okcov_copy_make(p, -1, cmp, out);
			if (!ret)
				ret = xa_err(xa_store(&okcov_copies, p->start,
						      *out, GFP_KERNEL));
		}
	}
	okcov_plan_free(p);
	kfree(p);
	return ret;
}

/*
 * Deep coverage through copies (deep.c's KIODEEP, with deep_copies set).
 *
 * A deep copy records exactly the leaders KIODEEP was given in its
 * function, as the kprobe backend's probes would: a later KIODEEP that
 * adds leaders makes a new copy with both sets, and the old one stays in
 * the pool (space is never reused). A copy is published once the whole
 * KIODEEP succeeded (staged until then): its function's fentry site goes
 * into the redirect table, which okcov_tramp_slow() reads for a traced
 * call. Each publication replaces the whole table, after a grace period
 * (readers run with preemption or softirqs off).
 *
 * Freeing: nothing in the pool is freed or reused while okcov is loaded,
 * and okcov holds a reference on itself from the first publication until
 * no copy is published and no task can run or return into one (a scan of
 * every task's stack, repeated until true: okcov_copy_unpin()). So rmmod
 * says EBUSY while a task sleeps inside a copy, and unloads once it left.
 */
struct okcov_redirect {
	unsigned long	site;		/* a function's fentry site */
	unsigned long	dest;		/* its copy's resume */
};

struct okcov_redirects {
	unsigned int		mask;
	struct okcov_redirect	slot[];
};

static struct okcov_redirects __rcu *okcov_redirects;
static DEFINE_PER_CPU(unsigned long, okcov_copy_entered);
static DEFINE_XARRAY(okcov_deep_copies);	/* [C] fn start -> latest deep copy */
static struct okcov_copy **okcov_staged;	/* [C] made by this KIODEEP */
static unsigned int okcov_nstaged, okcov_staged_cap;	/* [C] */
static unsigned int okcov_npublished;		/* [C] */
static bool okcov_copy_pinned;			/* [C] our module reference */
static unsigned long okcov_copy_refused[13];	/* [C] okcov_copy_count_refusal() */
static pid_t okcov_copy_busy;			/* [C] the last scan's busy task */
static int okcov_copy_busy_why;			/* [C] 1 on a CPU, 2 inside, 3 unreadable */

static __always_inline unsigned int okcov_redirect_hash(unsigned long site,
							 unsigned int mask)
{
	return (unsigned int)((site * 0x9e3779b97f4a7c15UL) >> 32) & mask;
}

/*
 * From okcov_tramp_slow(), for a call okcov_pc_get() said is traced: the
 * copy to run instead of the function at fentry site @site, or 0. Caller:
 * preemption or softirqs off, the table's read side.
 */
unsigned long notrace okcov_copy_redirect(unsigned long site)
{
	struct okcov_redirects *r = rcu_dereference_raw(okcov_redirects);
	unsigned int i;

	if (!r)
		return 0;
	for (i = okcov_redirect_hash(site, r->mask);; i = (i + 1) & r->mask) {
		if (r->slot[i].site == site) {
			this_cpu_inc(okcov_copy_entered);
			return r->slot[i].dest;
		}
		if (!r->slot[i].site)
			return 0;
	}
}

/*
 * @c's slot in table @r no longer matches any call (a tombstone). Under
 * okcov_copy_mutex, or from okcov_copy_doom() (a read side).
 */
static void notrace okcov_copy_tombstone_in(struct okcov_redirects *r,
					    const struct okcov_copy *c)
{
	unsigned int i;

	if (!r)
		return;
	for (i = okcov_redirect_hash(c->fentry, r->mask); r->slot[i].site;
	     i = (i + 1) & r->mask) {
		/* Its own: a later copy of the function has the same site. */
		if (r->slot[i].site == c->fentry &&
		    r->slot[i].dest == c->resume) {
			WRITE_ONCE(r->slot[i].site, 1);
			return;
		}
	}
}

/* @c's slot in the table no longer matches any call (a tombstone). [C] */
static void okcov_copy_tombstone(const struct okcov_copy *c)
{
	okcov_copy_tombstone_in(rcu_dereference_protected(okcov_redirects,
				lockdep_is_held(&okcov_copy_mutex)), c);
}

/*
 * Is @t (not running, or current) inside a copy (2), or can we not tell
 * (3), or neither (0)?
 */
static int okcov_copy_task_inside(struct task_struct *t)
{
	unsigned long addr, base = (unsigned long)okcov_pool;
	struct unwind_state state;

	for (unwind_start(&state, t, NULL, NULL); !unwind_done(&state);
	     unwind_next_frame(&state)) {
		addr = unwind_get_return_address(&state);
		if (addr - base < OKCOV_POOL_SIZE)
			return 2;
	}
	return unwind_error(&state) ? 3 : 0;
}

static bool okcov_task_on_cpu(struct task_struct *t)
{
#ifdef CONFIG_SMP
	return READ_ONCE(t->on_cpu);
#else
	return t == current;
#endif
}

/*
 * Can any task run or return into the pool? A task on a CPU cannot be
 * read (ask again later); one that ran while we read its stack neither.
 */
static bool okcov_copy_in_use(void)
{
	struct task_struct *g, *t;
	unsigned long switches;
	int busy = 0;

	rcu_read_lock();
	for_each_process_thread(g, t) {
		if (t->exit_state)
			continue;
		if (t == current) {
			busy = okcov_copy_task_inside(t);
		} else {
			switches = READ_ONCE(t->nvcsw) + READ_ONCE(t->nivcsw);
			if (okcov_task_on_cpu(t))
				busy = 1;
			else
				busy = okcov_copy_task_inside(t);
			if (!busy && (okcov_task_on_cpu(t) ||
				      switches != READ_ONCE(t->nvcsw) +
						  READ_ONCE(t->nivcsw)))
				busy = 1;
		}
		if (busy) {
			okcov_copy_busy = task_pid_nr(t);
			break;
		}
	}
	rcu_read_unlock();
	okcov_copy_busy_why = busy;
	if (!busy)
		okcov_copy_busy = 0;
	return busy;
}

static void okcov_copy_unpin(struct work_struct *work);
static DECLARE_DELAYED_WORK(okcov_copy_unpin_work, okcov_copy_unpin);

/* No copy is published: drop our reference once no task is in one. */
static void okcov_copy_unpin(struct work_struct *work)
{
	bool put = false;

	mutex_lock(&okcov_copy_mutex);
	if (okcov_copy_pinned && !okcov_npublished) {
		put = !okcov_copy_in_use();
		if (put)
			okcov_copy_pinned = false;
		else
			schedule_delayed_work(&okcov_copy_unpin_work,
					      msecs_to_jiffies(100));
	}
	mutex_unlock(&okcov_copy_mutex);
	/* okcov_copy_cleanup() waits for us to return. */
	if (put)
		module_put(THIS_MODULE);
}

static void okcov_copy_watch(struct work_struct *work);
static DECLARE_DELAYED_WORK(okcov_copy_watch_work, okcov_copy_watch);
#define OKCOV_COPY_WATCH_MS	250
/* ... and, where okcov follows jump labels and static calls, older ones. */
#define OKCOV_COPY_WATCH_ALL_MS	1000
static unsigned long okcov_copy_watched;	/* [C] jiffies: the last full look */
static unsigned int okcov_copy_stale;	/* [C] withdrawn: the original changed */

/* The redirect table from the published copies. [C] */
static int okcov_copy_publish(void)
{
	struct okcov_redirects *r = NULL, *old;
	unsigned int i, k, size;
	struct okcov_copy *c;

	lockdep_assert_held(&okcov_copy_mutex);
	okcov_copy_doom_callers(okcov_copy_list, okcov_ncopies);
	if (okcov_npublished) {
		size = roundup_pow_of_two(max(2 * okcov_npublished, 16U));
		r = kvzalloc(struct_size(r, slot, size), GFP_KERNEL);
		if (!r)
			return -ENOMEM;
		r->mask = size - 1;
		for (k = 0; k < okcov_ncopies; k++) {
			c = okcov_copy_list[k];
			if (!c->published || READ_ONCE(c->doomed))
				continue;
			i = okcov_redirect_hash(c->fentry, r->mask);
			while (r->slot[i].site)
				i = (i + 1) & r->mask;
			r->slot[i].site = c->fentry;
			r->slot[i].dest = c->resume;
		}
		if (!okcov_copy_pinned) {
			__module_get(THIS_MODULE);
			okcov_copy_pinned = true;
		}
		schedule_delayed_work(&okcov_copy_watch_work,
				      msecs_to_jiffies(OKCOV_COPY_WATCH_MS));
	}
	old = rcu_replace_pointer(okcov_redirects, r,
				  lockdep_is_held(&okcov_copy_mutex));
	/* Pairs with okcov_copy_doom(): a copy doomed meanwhile goes. */
	smp_mb();
	for (k = 0; r && k < okcov_ncopies; k++)
		if (READ_ONCE(okcov_copy_list[k]->doomed))
			okcov_copy_tombstone_in(r, okcov_copy_list[k]);
	synchronize_rcu();
	kvfree(old);
	if (!okcov_npublished && okcov_copy_pinned)
		schedule_delayed_work(&okcov_copy_unpin_work, 0);
	return 0;
}

/* The copy okcov published for @addr's .cold part, or NULL. [C] */
static struct okcov_copy *okcov_copy_published_at(unsigned long addr)
{
	struct okcov_copy *c;
	unsigned long idx;
	unsigned int r;

	xa_for_each(&okcov_deep_copies, idx, c) {
		if (!c->published)
			continue;
		for (r = 0; r < c->nregions; r++)
			if (addr >= c->region[r][0] && addr < c->region[r][1])
				return c;
	}
	return NULL;
}

/*
 * A direct branch out of @p into module space, not into okcov nor into
 * @p's own module: an inline static call of another module's function (a
 * tracepoint's one probe, say). Patched in the original when retargeted,
 * it would stay in the copy, where a task inside could still call it
 * after that module is gone: EXDEV. 0, or ENOMEM. [C]
 */
static int okcov_copy_foreign(const struct okcov_plan *p)
{
	const struct okcov_plan_insn *pi;
	char *buf = NULL, *own = "", *mod;
	unsigned long t;
	unsigned int i;
	int ret = 0;

	for (i = 0; i < p->ninsns && !ret; i++) {
		pi = &p->insns[i];
		if (!okcov_plan_out(p, pi, &t) ||
		    t < MODULES_VADDR || t >= MODULES_END ||
		    within_module(t, THIS_MODULE))
			continue;
		if (!buf) {
			buf = kmalloc(2 * KSYM_SYMBOL_LEN, GFP_KERNEL);
			if (!buf)
				return -ENOMEM;
			/* "name [module]": the module's name, or none. */
			sprint_symbol_no_offset(buf + KSYM_SYMBOL_LEN, p->start);
			own = strrchr(buf + KSYM_SYMBOL_LEN, '[') ?: "";
		}
		sprint_symbol_no_offset(buf, t);
		mod = strrchr(buf, '[');
		if (!*own || !mod || strcmp(mod, own))
			ret = -EXDEV;
	}
	kfree(buf);
	return ret;
}

/*
 * What deep copies cannot take, refused so that the kprobe backend takes
 * the function: where okcov's exception table could not become
 * okcov_copy_ex, any instruction that may fault with a fixup
 * (EOPNOTSUPP); a branch into another module (EXDEV). (A BUG()/WARN()
 * goes back to the original when it traps: okcov_copy_die(); a fault,
 * through okcov_copy_ex.)
 */
static int okcov_copy_hazard(const struct okcov_plan *p)
{
	if (!okcov_copy_ex_ready && okcov_copy_ex_need(p))
		return -EOPNOTSUPP;
	return okcov_copy_foreign(p);
}

static int okcov_copy_cmp_ulong(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a;
	unsigned long y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

/* Why deep copies were refused: the copies file's names, in its order. */
static const struct {
	int		err;
	const char	*name;
} okcov_copy_why[] = {
	{ -EOPNOTSUPP, "EOPNOTSUPP" }, { -ENOSPC, "ENOSPC" },
	{ -EBUSY, "EBUSY" }, { -EAGAIN, "EAGAIN" }, { -EILSEQ, "EILSEQ" },
	{ -ERANGE, "ERANGE" }, { -EFBIG, "EFBIG" }, { -E2BIG, "E2BIG" },
	{ -ENXIO, "ENXIO" }, { -EACCES, "EACCES" }, { -EPROTO, "EPROTO" },
	{ -EXDEV, "EXDEV" }, { 0, "other" },
};

static_assert(ARRAY_SIZE(okcov_copy_refused) == ARRAY_SIZE(okcov_copy_why));

/* One function refused, counted once a KIODEEP. [C] */
static void okcov_copy_count_refusal(int err)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(okcov_copy_why) - 1 &&
		    okcov_copy_why[i].err != err; i++)
		;
	okcov_copy_refused[i]++;
}

/* @c waits for okcov_copy_commit(). [C] */
static int okcov_copy_stage_one(struct okcov_copy *c)
{
	struct okcov_copy **s;
	unsigned int i, cap;

	for (i = 0; i < okcov_nstaged; i++)
		if (okcov_staged[i] == c)
			return 0;
	if (okcov_nstaged == okcov_staged_cap) {
		cap = max(2 * okcov_staged_cap, 16U);
		s = krealloc_array(okcov_staged, cap, sizeof(*s), GFP_KERNEL);
		if (!s)
			return -ENOMEM;
		okcov_staged = s;
		okcov_staged_cap = cap;
	}
	okcov_staged[okcov_nstaged++] = c;
	return 0;
}

/* An address KIODEEP asked for, and its index in the call. */
struct okcov_copy_want {
	unsigned long	addr;
	unsigned int	i;
};

static int okcov_copy_cmp_want(const void *a, const void *b)
{
	const struct okcov_copy_want *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The first of @w (@n, sorted) at or above @addr. */
static unsigned int okcov_copy_want_from(const struct okcov_copy_want *w,
					 unsigned int n, unsigned long addr)
{
	unsigned int lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (w[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The function planned in @p, for the pending addresses (res 1) it holds:
 * a copy that records them and what its published copy records. [C]
 */
static int okcov_copy_group(struct okcov_plan *p,
			    const struct okcov_copy_want *w, unsigned int n,
			    int *res, unsigned int *installed)
{
	bool cmp = okcov_copy_cmp_wanted();
	struct okcov_copy *pub, *c;
	unsigned int i, j, r, m = 0, k = 0, fresh = 0;
	unsigned long *l;
	int ret;

	pub = xa_load(&okcov_deep_copies, p->start);
	if (pub && (!pub->published || READ_ONCE(pub->doomed)))
		pub = NULL;
	for (r = 0; r < p->nregions; r++)
		for (j = okcov_copy_want_from(w, n, p->region[r].start);
		     j < n && w[j].addr < p->region[r].end; j++)
			m++;
	l = kvmalloc_array(m + (pub ? pub->nleaders : 0) + 1, sizeof(*l),
			   GFP_KERNEL);
	if (!l)
		return -ENOMEM;
	for (r = 0; r < p->nregions; r++) {
		for (j = okcov_copy_want_from(w, n, p->region[r].start);
		     j < n && w[j].addr < p->region[r].end; j++) {
			/* pending, or a .cold part waiting for its parent */
			if (res[w[j].i] != 1 && res[w[j].i] != 3)
				continue;
			res[w[j].i] = 2;	/* this group's */
			/* Its start: a copy for its callees, no leader. */
			if (w[j].addr == p->start)
				continue;
			l[k++] = w[j].addr;
		}
	}
	if (pub) {
		memcpy(l + k, pub->leaders, pub->nleaders * sizeof(*l));
		k += pub->nleaders;
	}
	sort(l, k, sizeof(*l), okcov_copy_cmp_ulong, NULL);
	for (i = m = 0; i < k; i++) {
		if (m && l[m - 1] == l[i])
			continue;
		/* deep.c checked each: an instruction, not the entry */
		ret = -EILSEQ;
		if (!okcov_plan_at(p, l[i]))
			goto out;
		if (!pub || !bsearch(&l[i], pub->leaders, pub->nleaders,
				     sizeof(*l), okcov_copy_cmp_ulong))
			fresh++;
		l[m++] = l[i];
	}
	c = xa_load(&okcov_deep_copies, p->start);
	/* The latest copy, if it records these leaders and compares so. */
	if (!c || READ_ONCE(c->doomed) || c->nleaders != m || c->cmp != cmp ||
	    c->callees != READ_ONCE(deep_callees) ||
	    memcmp(c->leaders, l, m * sizeof(*l))) {
		ret = okcov_copy_die_ready ? okcov_copy_hazard(p) : -EOPNOTSUPP;
		if (ret)
			goto out;
		/* The copy records these leaders and no other. */
		p->copy_size = p->copy_size - p->nleaders * OKCOV_COPY_RECORD +
			       m * OKCOV_COPY_RECORD;
		kvfree(p->leaders);
		p->leaders = l;
		p->leader_cap = k + 1;
		p->nleaders = m;
		l = NULL;
		ret = okcov_copy_make(p, READ_ONCE(deep_callees) ? 0 : -1, cmp,
				      &c);
		if (ret)
			goto out;
	}
	ret = -ENXIO;
	if (!c->resume)
		goto out;
	if (!c->published) {
		ret = okcov_copy_stage_one(c);
		if (ret)
			goto out;
	}
	*installed += fresh;
	ret = 0;
out:
	kvfree(l);
	for (j = 0; j < n; j++)
		if (res[w[j].i] == 2)
			res[w[j].i] = ret;
	return ret;
}

/*
 * The planner refused the function of @addrs[@i] (@ret): so much for
 * every pending address in its symbol, which is planned once.
 */
static void okcov_copy_refuse_fn(const struct okcov_plan *p,
				 const struct okcov_copy_want *w,
				 unsigned int n, int *res, unsigned int i,
				 int ret)
{
	unsigned int j;

	res[i] = ret;
	if (p->end <= p->start)
		return;
	for (j = okcov_copy_want_from(w, n, p->start);
	     j < n && w[j].addr < p->end; j++)
		if (res[w[j].i] == 1)
			res[w[j].i] = ret;
}

/* @addrs[@i] lies in a .cold part: its part's addresses wait (res 3). */
static void okcov_copy_defer_fn(const struct okcov_plan *p,
				const struct okcov_copy_want *w,
				unsigned int n, int *res, unsigned int i)
{
	unsigned int j;

	res[i] = 3;
	if (p->end <= p->start)
		return;
	for (j = okcov_copy_want_from(w, n, p->start);
	     j < n && w[j].addr < p->end; j++)
		if (res[w[j].i] == 1)
			res[w[j].i] = 3;
}

/*
 * The plan of @plans (@n) whose function's symbol holds @addr, moved into
 * @p (empty); false if none.
 */
static bool okcov_copy_take_plan(struct okcov_plan *plans, unsigned int n,
				 unsigned long addr, struct okcov_plan *p)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (!plans[i].nregions || addr < plans[i].start ||
		    addr >= plans[i].end)
			continue;
		*p = plans[i];
		memset(&plans[i], 0, sizeof(plans[i]));
		return true;
	}
	return false;
}

/*
 * KIODEEP's copies (deep.c, which checked each address as it does for a
 * probe): for each function among @addrs, a copy that records its
 * addresses and what its published copy records, staged until
 * okcov_copy_commit(). @res[i]: 0 when a copy will record @addrs[i], or
 * why none will (deep.c probes it instead); *@installed counts the
 * addresses no published copy recorded. @plans (@nplans): deep.c's plans
 * of some of those functions, taken (left empty) rather than made again.
 * 0, or -ENOMEM.
 */
int okcov_copy_stage(const unsigned long *addrs, unsigned int n, int *res,
		     unsigned int *installed, struct okcov_plan *plans,
		     unsigned int nplans)
{
	struct okcov_copy_want *w;
	struct okcov_copy *pub;
	struct okcov_plan *p;
	unsigned int i, j, pass;
	int ret = 0;

	p = kmalloc(sizeof(*p), GFP_KERNEL);
	w = kvmalloc_array(n, sizeof(*w), GFP_KERNEL);
	if (!p || !w) {
		kfree(p);
		kvfree(w);
		return -ENOMEM;
	}
	memset(p, 0, sizeof(*p));
	for (i = 0; i < n; i++) {
		res[i] = 1;
		w[i].addr = addrs[i];
		w[i].i = i;
	}
	sort(w, n, sizeof(*w), okcov_copy_cmp_want, NULL);
	mutex_lock(&okcov_copy_mutex);
	/* Parents first: .text.unlikely may lie below .text (7.x). */
	for (pass = 0; pass < 2 && !ret; pass++) {
		for (j = 0; j < n && !ret; j++) {
			i = w[j].i;
			if (res[i] != 1)
				continue;
			ret = okcov_copy_take_plan(plans, nplans, addrs[i], p) ?
			      0 : okcov_plan_function(addrs[i], p);
			if (!pass && ret != -ENOMEM &&
			    strstr(p->name, ".cold")) {
				okcov_copy_defer_fn(p, w, n, res, i);
				okcov_plan_free(p);
				ret = 0;
				continue;
			}
			/*
			 * A .cold part's leaders join its parent's published
			 * copy (a parent asked for here took them already).
			 */
			if (ret != -ENOMEM && strstr(p->name, ".cold")) {
				pub = okcov_copy_published_at(addrs[i]);
				if (pub) {
					okcov_plan_free(p);
					ret = okcov_plan_function(pub->fn_start,
								  p);
				}
			}
			if (!ret)
				ret = okcov_copy_group(p, w, n, res, installed);
			else
				okcov_copy_refuse_fn(p, w, n, res, i, ret);
			if (ret && ret != -ENOMEM) {
				okcov_copy_count_refusal(ret);
				ret = 0;
			}
			okcov_plan_free(p);
			cond_resched();
		}
		for (i = 0; i < n; i++)
			if (res[i] == 3)
				res[i] = 1;
	}
	mutex_unlock(&okcov_copy_mutex);
	kvfree(w);
	kfree(p);
	return ret;
}

/* The staged copies go live, replacing their functions' published ones. */
int okcov_copy_commit(void)
{
	struct okcov_copy *c, *old;
	unsigned int i;
	int ret = 0;

	mutex_lock(&okcov_copy_mutex);
	for (i = 0; i < okcov_nstaged && !ret; i++) {
		c = okcov_staged[i];
		old = xa_load(&okcov_deep_copies, c->fn_start);
		ret = xa_err(xa_store(&okcov_deep_copies, c->fn_start, c,
				      GFP_KERNEL));
		if (ret)
			break;
		if (old && old->published) {
			old->published = false;
			okcov_npublished--;
		}
		c->published = true;
		c->since = jiffies;
		okcov_npublished++;
	}
	okcov_nstaged = 0;
	if (!ret)
		ret = okcov_copy_publish();
	mutex_unlock(&okcov_copy_mutex);
	return ret;
}

/* The staged copies stay unpublished (in the pool, found again). */
void okcov_copy_abort(void)
{
	mutex_lock(&okcov_copy_mutex);
	okcov_nstaged = 0;
	mutex_unlock(&okcov_copy_mutex);
}

/*
 * Text patches okcov follows as they are made: a jump label's site
 * (arch_jump_label_transform_queue(), or arch_jump_label_transform()
 * unbatched) and an inline static call's (arch_static_call_transform()),
 * each seen at its entry, before the text changes. Every copy holding the
 * site is doomed there: its slot in the redirect table becomes a
 * tombstone, no traced call enters it any more and runs the patched
 * original instead, and the watcher withdraws it at once (stale). A copy
 * made from the old text while a batch is still being applied is the
 * watcher's, within OKCOV_COPY_WATCH_MS; every other patch (a kprobe's
 * int3, an optimised probe) too, within OKCOV_COPY_WATCH_ALL_MS.
 */
static void notrace okcov_copy_doom(unsigned long site)
{
	struct okcov_copy **list, *c;
	unsigned int k, r, n;
	bool doomed = false;

	/* Preemption is off (ftrace's recursion guard): a read side. */
	n = smp_load_acquire(&okcov_ncopies);
	list = rcu_dereference_raw(okcov_copy_list);
	for (k = 0; k < n; k++) {
		c = list[k];
		for (r = 0; r < c->nregions; r++)
			if (site - c->region[r][0] <
			    c->region[r][1] - c->region[r][0])
				break;
		if (r == c->nregions || READ_ONCE(c->doomed))
			continue;
		WRITE_ONCE(c->doomed, true);
		doomed = true;
	}
	if (!doomed)
		return;
	okcov_copy_doom_callers(list, n);
	/* Pairs with okcov_copy_publish(): it sees the flag, or we its table. */
	smp_mb();
	for (k = 0; k < n; k++)
		if (READ_ONCE(list[k]->doomed))
			okcov_copy_tombstone_in(rcu_dereference_raw(okcov_redirects),
						list[k]);
	mod_delayed_work(system_wq, &okcov_copy_watch_work, 0);
}

#ifdef CONFIG_JUMP_LABEL
static void notrace okcov_copy_jump_label(unsigned long ip,
					  unsigned long parent_ip,
					  struct ftrace_ops *op,
					  struct ftrace_regs *fregs)
{
	struct jump_entry *e = (void *)okcov_ftrace_arg(fregs, 0);

	okcov_copy_doom(jump_entry_code(e));
}
#else
/* Static keys are loads: nothing is patched. */
#define okcov_copy_jump_label	NULL
#endif

static void notrace okcov_copy_static_call(unsigned long ip,
					   unsigned long parent_ip,
					   struct ftrace_ops *op,
					   struct ftrace_regs *fregs)
{
	/* NULL: only the trampoline changes, which no copy holds. */
	okcov_copy_doom(okcov_ftrace_arg(fregs, 0));
}

static struct ftrace_ops okcov_copy_jump_ops = {
	.func	= okcov_copy_jump_label,
	.flags	= FTRACE_OPS_FL_RECURSION,
};

static struct ftrace_ops okcov_copy_call_ops = {
	.func	= okcov_copy_static_call,
	.flags	= FTRACE_OPS_FL_RECURSION,
};

static bool okcov_copy_jump_on, okcov_copy_call_on;	/* [C] */

/* @ops on the functions @names names (by spaces): true if registered. */
static bool okcov_copy_follow_one(struct ftrace_ops *ops, char *names)
{
	unsigned long addr;
	char *g;

	/*
	 * By address: ftrace_set_filter() names every ftrace record to
	 * match one, about 1.5 s a name under TCG.
	 */
	while ((g = strsep(&names, " "))) {
		addr = okcov_symbol(g);
		if (!addr || ftrace_set_filter_ip(ops, addr, 0, 0))
			return false;
	}
	return !register_ftrace_function(ops);
}

/*
 * Follow patches from the first copy on (okcov_copy_make() then compares
 * each copy with its original once it is listed). Where those functions
 * cannot be traced, the watcher alone follows, logged once.
 */
static void okcov_copy_follow(void)
{
	static bool tried;
	char jump[] = "arch_jump_label_transform_queue arch_jump_label_transform";
	char call[] = "arch_static_call_transform";

	lockdep_assert_held(&okcov_copy_mutex);
	if (tried)
		return;
	tried = true;
	okcov_copy_jump_on = !IS_ENABLED(CONFIG_JUMP_LABEL) ||
			     okcov_copy_follow_one(&okcov_copy_jump_ops, jump);
	okcov_copy_call_on = okcov_copy_follow_one(&okcov_copy_call_ops, call);
	if (!okcov_copy_jump_on || !okcov_copy_call_on)
		pr_warn("copy: jump label and static call patches not followed as made (jump %d, call %d): the watcher finds them within %u ms\n",
			okcov_copy_jump_on, okcov_copy_call_on,
			OKCOV_COPY_WATCH_MS);
}

/* Before unload, and before the watcher is stopped. */
static void okcov_copy_unfollow(void)
{
	if (okcov_copy_jump_on && IS_ENABLED(CONFIG_JUMP_LABEL))
		unregister_ftrace_function(&okcov_copy_jump_ops);
	if (okcov_copy_call_on)
		unregister_ftrace_function(&okcov_copy_call_ops);
	okcov_copy_jump_on = okcov_copy_call_on = false;
	ftrace_free_filter(&okcov_copy_jump_ops);
	ftrace_free_filter(&okcov_copy_call_ops);
}

/* @c's calls run the original once okcov_copy_withdrawn() returned. [C] */
static void okcov_copy_withdraw(struct okcov_copy *c)
{
	c->published = false;
	okcov_npublished--;
	okcov_copy_tombstone(c);
}

/*
 * After withdrawals: no reader of the table sends a call into them any
 * more. It cannot fail: no copy at all needs no table. [C]
 */
static void okcov_copy_withdrawn(void)
{
	if (!okcov_npublished)
		okcov_copy_publish();	/* no table: cannot fail */
	else
		synchronize_rcu();
}

/*
 * Unpublish the deep copies of @mod (going: they are forgotten too), or
 * all of them (@mod NULL). It cannot fail: a module's slots become
 * tombstones in place, and no copy at all needs no table. [C]
 */
static void okcov_copy_unpublish_locked(struct module *mod)
{
	struct okcov_copy *c;
	unsigned long idx;

	xa_for_each(&okcov_deep_copies, idx, c) {
		if (mod && !within_module(c->fn_start, mod))
			continue;
		if (c->published)
			okcov_copy_withdraw(c);
		if (mod)
			xa_erase(&okcov_deep_copies, idx);
	}
	okcov_copy_withdrawn();
}

/*
 * Is the original still the text @c copied, its fentry site aside (ftrace
 * switches that)? A jump label or an inline static call switched since,
 * or a probe put in it, and it is not. [C]
 */
static bool okcov_copy_current(const struct okcov_copy *c)
{
	const u8 *s = c->src;
	unsigned long a, end, f = c->fentry;
	unsigned int r;

	for (r = 0; r < c->nregions; r++, s += end - a) {
		a = c->region[r][0];
		end = c->region[r][1];
		if (f && f >= a && f + 5 <= end) {
			if (memcmp((void *)a, s, f - a) ||
			    memcmp((void *)(f + 5), s + (f + 5 - a), end - f - 5))
				return false;
		} else if (memcmp((void *)a, s, end - a)) {
			return false;
		}
	}
	return true;
}

/*
 * While copies are published, every OKCOV_COPY_WATCH_MS: a copy whose
 * original changed since (okcov_copy_current()) is withdrawn, its calls
 * run the original again. Its leaders are not recorded until a KIODEEP
 * asks for them again, which makes a new copy. Where okcov follows jump
 * labels and static calls as they are made, a copy published more than
 * OKCOV_COPY_WATCH_ALL_MS ago is compared at that pace (a kprobe's int3,
 * an optimised probe): the text compare costs every thread a share of
 * the CPU, and a batch of jump labels in flight when a copy was made is
 * applied within milliseconds.
 */
static void okcov_copy_watch(struct work_struct *work)
{
	unsigned long recent = msecs_to_jiffies(OKCOV_COPY_WATCH_ALL_MS);
	struct okcov_copy *c;
	bool changed = false, all;
	unsigned int k;

	mutex_lock(&okcov_copy_mutex);
	all = !okcov_copy_jump_on || !okcov_copy_call_on ||
	      time_after_eq(jiffies, okcov_copy_watched + recent);
	if (all)
		okcov_copy_watched = jiffies;
	/* Callees' copies first: their callers go with them. */
	for (k = 0; k < okcov_ncopies; k++) {
		c = okcov_copy_list[k];
		if (!c->enter || READ_ONCE(c->doomed) ||
		    (!all && time_after(jiffies, c->since + recent)) ||
		    okcov_copy_current(c))
			continue;
		pr_info("copy: callee %s changed since it was copied: its callers' copies are withdrawn\n",
			c->name);
		WRITE_ONCE(c->doomed, true);
		okcov_copy_stale++;
	}
	okcov_copy_doom_callers(okcov_copy_list, okcov_ncopies);
	for (k = 0; k < okcov_ncopies; k++) {
		c = okcov_copy_list[k];
		if (!c->published)
			continue;
		if (!all && !READ_ONCE(c->doomed) &&
		    time_after(jiffies, c->since + recent))
			continue;
		if (!READ_ONCE(c->doomed) && okcov_copy_current(c))
			continue;
		pr_info("copy: %s changed since it was copied (a jump label, a static call, a probe): its copy is withdrawn\n",
			c->name);
		okcov_copy_withdraw(c);
		okcov_copy_stale++;
		if (xa_load(&okcov_deep_copies, c->fn_start) == c)
			xa_erase(&okcov_deep_copies, c->fn_start);
		changed = true;
	}
	if (changed)
		okcov_copy_withdrawn();
	if (okcov_npublished)
		schedule_delayed_work(&okcov_copy_watch_work,
				      msecs_to_jiffies(OKCOV_COPY_WATCH_MS));
	mutex_unlock(&okcov_copy_mutex);
}

/* The last deep user went (deep.c): no call enters a copy any more. */
void okcov_copy_unpublish(void)
{
	mutex_lock(&okcov_copy_mutex);
	okcov_nstaged = 0;
	okcov_copy_unpublish_locked(NULL);
	mutex_unlock(&okcov_copy_mutex);
}

/*
 * /sys/kernel/debug/okcov/copy: write an address (0x..., from
 * /proc/kallsyms), read the copy of the function around it:
 *
 *	copy ADDR SIZE
 *	function NAME START END
 *	pool USED SIZE				(bytes of the pool in use)
 *	fentry ADDR				(the site made a nop; if any)
 *	record COPY_ADDR LEADER			(before the leader's map line)
 *	compare COPY_ADDR ORIG_ADDR		(deep_cmp: the comparison
 *						 sequence before a cmp/test)
 *	map COPY_ADDR ORIG_ADDR LEN		(each instruction, copy order;
 *						 LEN: its length in the copy)
 *
 * A function okcov will not copy: the write fails with the plan's errno.
 */
static void okcov_copy_format(const struct okcov_copy *c,
			      struct okcov_text *t)
{
	const struct okcov_copy_insn *ci;
	unsigned int k;

	okcov_text_printf(t, "copy 0x%lx %lu\n", c->start, c->size);
	okcov_text_printf(t, "function %s 0x%lx 0x%lx\n", c->name,
			  c->fn_start, c->fn_end);
	okcov_text_printf(t, "pool %lu %lu\n", okcov_pool_used,
			  OKCOV_POOL_SIZE);
	if (c->fentry)
		okcov_text_printf(t, "fentry 0x%lx\n", c->fentry);
	for (k = 0; k < c->ninsns; k++) {
		ci = &c->insns[k];
		if (ci->record)
			okcov_text_printf(t, "record 0x%lx 0x%lx\n",
					  c->start + ci->off - OKCOV_COPY_RECORD -
					  ci->cmp * OKCOV_COPY_CMP, ci->orig);
		if (ci->cmp)
			okcov_text_printf(t, "compare 0x%lx 0x%lx\n",
					  c->start + ci->off - OKCOV_COPY_CMP,
					  ci->orig);
		okcov_text_printf(t, "map 0x%lx 0x%lx %u\n", c->start + ci->off,
				  ci->orig, ci->len);
	}
}

/* The copy file's maker (inspect.c). */
static int okcov_copy_show(unsigned long addr, struct okcov_text *t)
{
	struct okcov_copy *c;
	int ret;

	mutex_lock(&okcov_copy_mutex);
	ret = okcov_copy_get(addr, &c);
	if (!ret)
		okcov_copy_format(c, t);
	mutex_unlock(&okcov_copy_mutex);
	return ret;
}

/*
 * /sys/kernel/debug/okcov/frame: write an address in a copy (a stack
 * trace's okcov_pool+OFF, plus okcov_pool's address in /proc/kallsyms),
 * read where it lies in the original:
 *
 *	at ORIG SYMBOL+OFF/SIZE		the same byte of the original's
 *					instruction; or, in a record sequence,
 *	record LEADER SYMBOL+OFF/SIZE	the leader it records
 *	return ORIG SYMBOL+OFF/SIZE	read as a return address (a trace's
 *					frames): the same one in the
 *					original (absent if none)
 *
 * A comparison sequence's first byte, after a call, has only the return
 * line. An address no copy holds: the write fails with ENOENT.
 */
static int okcov_copy_frame(unsigned long addr, struct okcov_text *t)
{
	unsigned long orig, leader = 0, ret;

	mutex_lock(&okcov_copy_mutex);
	orig = okcov_copy_map(addr, &leader);
	ret = okcov_copy_orig(addr);
	mutex_unlock(&okcov_copy_mutex);
	if (orig)
		okcov_text_printf(t, "at 0x%lx %pS\n", orig, (void *)orig);
	else if (leader)
		okcov_text_printf(t, "record 0x%lx %pS\n", leader,
				  (void *)leader);
	else if (!ret)
		return -ENOENT;
	if (ret)
		okcov_text_printf(t, "return 0x%lx %pB\n", ret, (void *)ret);
	return 0;
}

/*
 * /sys/kernel/debug/okcov/copies: the copier's counters, one per line:
 *	pool USED SIZE		bytes of the pool in use
 *	copies N		copies made (the copy file's and deep ones)
 *	published N		deep copies traced calls are sent into
 *	entered N		traced calls sent into a copy
 *	pinned 0|1		okcov holds itself loaded (a copy may run)
 *	stale N			copies withdrawn: their original changed
 *	faults COPY ORIGINAL	copied instructions with an exception-table
 *				entry whose fault goes on at the original's
 *				fixup in the copy; back in the original
 *	jumps COPY ORIGINAL	copied indirect jumps: switches' whose table
 *				the copy has its own of; into the original
 *	compares N		comparison sequences in the copies made
 *				(deep_cmp, cmp.c)
 *	switches N CASES	of those, compare chains' roots, and the
 *				constants they record (cmp.c)
 *	busy PID WHY		while pinned: the task the last look stopped
 *				at: running, inside (a copy), unreadable
 *	refused REASON N	deep copies refused, the kprobe backend took
 *				them, by errno (okcov_copy_why[])
 */
static int okcov_copies_show(struct seq_file *m, void *unused)
{
	unsigned long entered = 0;
	unsigned int i;
	int cpu;

	for_each_possible_cpu(cpu)
		entered += per_cpu(okcov_copy_entered, cpu);
	mutex_lock(&okcov_copy_mutex);
	seq_printf(m, "pool %lu %lu\ncopies %u\npublished %u\nentered %lu\npinned %d\nstale %u\n",
		   okcov_pool_used, OKCOV_POOL_SIZE, okcov_ncopies,
		   okcov_npublished, entered, okcov_copy_pinned,
		   okcov_copy_stale);
	seq_printf(m, "faults %u %u\njumps %u %u\ncompares %u\n",
		   okcov_copy_ex_in, okcov_copy_ex_out, okcov_copy_jt_made,
		   okcov_copy_jt_left, okcov_copy_compares);
	seq_printf(m, "switches %u %u\n", okcov_copy_chains, okcov_copy_cases);
	if (okcov_copy_busy)
		seq_printf(m, "busy %d %s\n", okcov_copy_busy,
			   okcov_copy_busy_why == 1 ? "running" :
			   okcov_copy_busy_why == 2 ? "inside" : "unreadable");
	for (i = 0; i < ARRAY_SIZE(okcov_copy_why); i++)
		seq_printf(m, "refused %s %lu\n", okcov_copy_why[i].name,
			   okcov_copy_refused[i]);
	seq_printf(m, "callees %lu %lu\n", okcov_callee_made,
		   okcov_callee_sites);
	for (i = OKCOV_CALLEE_TRACED; i < OKCOV_CALLEE_NR; i++)
		seq_printf(m, "callee %s %d %lu\n", okcov_callee_why[i].name,
			   okcov_callee_why[i].err, okcov_callee_count[i]);
	mutex_unlock(&okcov_copy_mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(okcov_copies);

void okcov_copy_init(struct dentry *dir)
{
	okcov_copy_ex_init();
	if (register_die_notifier(&okcov_copy_die_nb))
		pr_warn("copy: no die notifier: deep copies refused\n");
	else
		okcov_copy_die_ready = true;
	okcov_inspect_file(dir, "copy", okcov_copy_show);
	okcov_inspect_file(dir, "frame", okcov_copy_frame);
	debugfs_create_file("copies", 0400, dir, NULL, &okcov_copies_fops);
}

/*
 * @mod is going: its functions' copies are no longer found by address (a
 * module loaded there later has other code). They stay in the pool and
 * in the list, as every copy does until rmmod.
 */
void okcov_copy_module(struct module *mod)
{
	unsigned int i;
	unsigned long idx;
	void *e;

	mutex_lock(&okcov_copy_mutex);
	/*
	 * Its copies stay in the list (and the pool) but are doomed: the
	 * watch never reads their originals' text again (it is gone), and
	 * no caller's copy goes into one (okcov_copy_doom_callers()).
	 */
	for (i = 0; i < okcov_ncopies; i++) {
		if (!within_module(okcov_copy_list[i]->fn_start, mod))
			continue;
		WRITE_ONCE(okcov_copy_list[i]->doomed, true);
		xa_erase(&okcov_copies, okcov_copy_list[i]->fn_start);
	}
	okcov_copy_doom_callers(okcov_copy_list, okcov_ncopies);
	/* Its callees, copied or refused: a later module's code is other. */
	xa_for_each(&okcov_callees, idx, e)
		if (within_module(idx, mod))
			xa_erase(&okcov_callees, idx);
	/* No call of its functions is redirected once it is gone. */
	okcov_copy_unpublish_locked(mod);
	mutex_unlock(&okcov_copy_mutex);
}

/* Unload: the pool goes with okcov's text; the maps and the alias here. */
void okcov_copy_cleanup(void)
{
	unsigned int i;

	/* Our last reference may have been the unpin work's: let it return. */
	cancel_delayed_work_sync(&okcov_copy_unpin_work);
	okcov_copy_unfollow();
	cancel_delayed_work_sync(&okcov_copy_watch_work);
	if (okcov_copy_die_ready)
		unregister_die_notifier(&okcov_copy_die_nb);
	okcov_copy_die_ready = false;
	mutex_lock(&okcov_copy_mutex);
	/* Nothing is published while okcov can unload (okcov_copy_publish()). */
	WARN_ON_ONCE(okcov_npublished || okcov_copy_pinned);
	kfree(okcov_staged);
	okcov_staged = NULL;
	okcov_nstaged = okcov_staged_cap = 0;
	xa_destroy(&okcov_deep_copies);
	xa_destroy(&okcov_callees);
	okcov_globs_free(okcov_callee_internal_set);
	okcov_callee_internal_set = NULL;
	for (i = 0; i < okcov_ncopies; i++)
		okcov_copy_free(okcov_copy_list[i]);
	kvfree(okcov_copy_list);
	okcov_copy_list = NULL;
	okcov_ncopies = okcov_copy_cap = 0;
	xa_destroy(&okcov_copies);
	if (okcov_pool_rw)
		vunmap(okcov_pool_rw);
	okcov_pool_rw = NULL;
	okcov_copy_ex_exit();
	okcov_orc_exit();
	mutex_unlock(&okcov_copy_mutex);
}
