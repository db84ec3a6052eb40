// SPDX-License-Identifier: GPL-2.0
/*
 * Instrumented copies (x86_64), step two of deep coverage through copies:
 * from a plan (plan.c) okcov can copy, lay out and write a copy of the
 * function into okcov's pool (pool.S), with a record sequence at each
 * block leader. Nothing is sent into a copy yet (no redirect): KIODEEP
 * still installs kprobes, and /sys/kernel/debug/okcov/copy is the one way
 * in, for the tests.
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
 * okcov_copy_record() saves the flags and the caller-saved registers and
 * hands the leader to okcov_copy_hit(), which records it as the kprobe
 * backend's okcov_deep_hit() does.
 *
 * The pool is written through a writable alias (vmalloc_to_page() of each
 * pool page, vmap()), then every CPU serialises (an IPI, sync_core())
 * before anyone can jump there. Space is bump-allocated and never reused
 * while okcov is loaded: a copy stays, unchanged, until rmmod, so nothing
 * can run or return into reused space; a function is copied once and its
 * copy returned again. A full pool is ENOSPC.
 *
 * Locking: okcov_copy_mutex, task context only ([C]); a copy's contents
 * are immutable once published ([I]).
 */

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kallsyms.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/xarray.h>
#include <asm/sync_core.h>

#include "okcov.h"

#define OKCOV_POOL_SIZE		(2UL << 20)	/* pool.S's OKCOV_POOL_SIZE */
#define OKCOV_COPY_ALIGN	16

/* One instruction of a copy. */
struct okcov_copy_insn {
	unsigned long	orig;		/* its address in the original */
	u32		off;		/* its offset in the copy */
	u8		len;		/* its length in the copy */
	bool		record;		/* a leader: the record sequence precedes it */
};

struct okcov_copy {
	unsigned long		start, size;	/* [I] in the pool */
	unsigned long		fn_start, fn_end;	/* [I] the original's symbol */
	unsigned long		fentry;		/* [I] site made a nop, or 0 */
	char			*name;		/* [I] */
	unsigned int		ninsns;		/* [I] */
	struct okcov_copy_insn	insns[];	/* [I] in copy order */
};

static DEFINE_MUTEX(okcov_copy_mutex);
static DEFINE_XARRAY(okcov_copies);		/* [C] function start -> copy */
static struct okcov_copy **okcov_copy_list;	/* [C] by pool address */
static unsigned int okcov_ncopies, okcov_copy_cap;	/* [C] */
static unsigned long okcov_pool_used;		/* [C] bytes handed out */
static u8 *okcov_pool_rw;			/* [C] the writable alias */

/*
 * The record (tramp.S calls it with the leader the copy pushed). What
 * okcov_deep_hit() does for a kprobe, in the copy's own context: no trap
 * came in between.
 */
void notrace okcov_copy_hit(unsigned long pc)
{
	struct okcov_attach *a;

	if (likely(okcov_cpu_cold()))
		return;
	a = okcov_pc_get();
	if (a) {
		okcov_record_block(a, pc);
		okcov_pc_put();
	}
}

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
	u8			*len;		/* per plan insn: its copied length */
	u8			*buf;		/* the copy, written to the pool last */
	unsigned int		size;
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

/* The bytes plan.c decoded for @pi. */
static const u8 *okcov_copy_src(const struct okcov_plan *p,
				const struct okcov_plan_insn *pi)
{
	unsigned int r;

	for (r = 0; r < p->nregions; r++)
		if (pi->addr >= p->region[r].start && pi->addr < p->region[r].end)
			return p->text[r] + (pi->addr - p->region[r].start);
	return NULL;
}

static const u8 okcov_nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

/*
 * The fentry site: the first instruction past an endbr64 (or the 4-byte
 * nop IBT seals an unused one into: 66 0f 1f 00 on 6.12, 0f 1f 40 d6 on
 * 7.x), if ftrace has a record there. 0 and
 * ctx->fentry set (0 where ftrace has none), or -EAGAIN: ftrace has one,
 * but its bytes are neither its call nor its nop (being patched).
 */
static int okcov_copy_fentry(struct okcov_copy_ctx *ctx)
{
	const struct okcov_plan *p = ctx->p;
	const struct okcov_plan_insn *pi = okcov_plan_at(p, p->start);
	unsigned long site = p->entry;
	const u8 *b;

	ctx->fentry = 0;
	ctx->entry_end = p->entry + 1;
	if (pi && site == p->start && pi->insn.len == 4 &&
	    pi->insn.kind == OKCOV_KIND_NOP)
		site = p->start + 4;
	if (!okcov_ftrace_site(site))
		return 0;
	pi = okcov_plan_at(p, site);
	if (!pi || pi->insn.len != 5)
		return -EAGAIN;
	b = okcov_copy_src(p, pi);
	if (b[0] != 0xe8 && memcmp(b, okcov_nop5, 5))
		return -EAGAIN;
	ctx->fentry = site;
	ctx->entry_end = site + 5;
	return 0;
}

/* A short jmp/jcc, widened in the copy. */
static bool okcov_copy_short(const struct okcov_insn *in)
{
	return (in->kind == OKCOV_KIND_JMP || in->kind == OKCOV_KIND_JCC) &&
	       in->imm_size == 1;
}

/* Pass one: every instruction's and record's offset, and the size. */
static int okcov_copy_layout(struct okcov_copy_ctx *ctx)
{
	const struct okcov_plan *p = ctx->p;
	unsigned int r, i, k = 0, off = 0;
	const struct okcov_plan_insn *pi;

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
	/* What plan.c said a copy takes, exactly. */
	if (k != p->ninsns || off != p->copy_size)
		return -EPROTO;
	ctx->size = off;
	return 0;
}

/* Where a branch to @t goes in the copy: 0, or -EILSEQ. */
static int okcov_copy_dest(const struct okcov_copy_ctx *ctx, unsigned long t,
			   unsigned long *dest)
{
	const struct okcov_plan *p = ctx->p;
	const struct okcov_plan_insn *pi;
	unsigned int i;

	if ((t >= p->start && t < ctx->entry_end) || !okcov_plan_inside(p, t)) {
		*dest = t;
		return 0;
	}
	pi = okcov_plan_at(p, t);
	if (!pi)
		return -EILSEQ;
	i = pi - p->insns;
	*dest = ctx->base + (ctx->rec[i] != ~0U ? ctx->rec[i] : ctx->off[i]);
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

/* Store @to - @from_end as a rel32/disp32 at @at: 0, or -ERANGE. */
static int okcov_copy_rel32(u8 *at, unsigned long from_end, unsigned long to)
{
	long d = (long)(to - from_end);

	if (d != (s32)d)
		return -ERANGE;
	okcov_copy_put32(at, d);
	return 0;
}

/* Pass two: the copy's bytes, into ctx->buf. */
static int okcov_copy_emit(struct okcov_copy_ctx *ctx)
{
	const struct okcov_plan *p = ctx->p;
	const struct okcov_plan_insn *pi;
	unsigned long here, t, dest, abs, record;
	unsigned int k, i;
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
	memset(ctx->buf, 0xcc, round_up(ctx->size, OKCOV_COPY_ALIGN));
	for (k = 0; k < p->ninsns; k++) {
		i = ctx->order[k];
		pi = &p->insns[i];
		src = okcov_copy_src(p, pi);
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
			t = pi->addr + pi->insn.len + (long)pi->insn.rel;
			ret = okcov_copy_dest(ctx, t, &dest);
			if (ret)
				return ret;
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
	return 0;
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
	if (!c->name) {
		kvfree(c);
		return NULL;
	}
	c->start = ctx->base;
	c->size = ctx->size;
	c->fn_start = p->start;
	c->fn_end = p->end;
	c->fentry = ctx->fentry;
	c->ninsns = p->ninsns;
	for (k = 0; k < p->ninsns; k++) {
		i = ctx->order[k];
		c->insns[k].orig = p->insns[i].addr;
		c->insns[k].off = ctx->off[i];
		c->insns[k].len = ctx->len[i];
		c->insns[k].record = ctx->rec[i] != ~0U;
	}
	return c;
}

static void okcov_copy_free(struct okcov_copy *c)
{
	if (c)
		kfree(c->name);
	kvfree(c);
}

/*
 * Lay out, write and publish the copy of planned @p. [C] 0 and *@out, or
 * ENOSPC, ERANGE, EOPNOTSUPP, EILSEQ, EAGAIN (the fentry site is being
 * patched), EBUSY (an int3 in the code), ENOMEM, EPROTO (plan and layout
 * disagree: a bug).
 */
static int okcov_copy_make(const struct okcov_plan *p, struct okcov_copy **out)
{
	struct okcov_copy_ctx ctx = { .p = p };
	struct okcov_copy *c = NULL, **list;
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
	ret = okcov_copy_fentry(&ctx);
	if (ret)
		return ret;
	ret = -ENOMEM;
	ctx.order = kvmalloc_array(p->ninsns, sizeof(*ctx.order), GFP_KERNEL);
	ctx.off = kvmalloc_array(p->ninsns, sizeof(*ctx.off), GFP_KERNEL);
	ctx.rec = kvmalloc_array(p->ninsns, sizeof(*ctx.rec), GFP_KERNEL);
	ctx.len = kvmalloc(p->ninsns, GFP_KERNEL);
	if (!ctx.order || !ctx.off || !ctx.rec || !ctx.len)
		goto out;
	ret = okcov_copy_layout(&ctx);
	if (ret)
		goto out;
	room = round_up(ctx.size, OKCOV_COPY_ALIGN);
	ret = -ENOSPC;
	if (room > OKCOV_POOL_SIZE - okcov_pool_used)
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
	if (okcov_ncopies == okcov_copy_cap) {
		list = kvmalloc_array(max(2 * okcov_copy_cap, 64U),
				      sizeof(*list), GFP_KERNEL);
		if (!list)
			goto out;
		if (okcov_ncopies)
			memcpy(list, okcov_copy_list,
			       okcov_ncopies * sizeof(*list));
		kvfree(okcov_copy_list);
		okcov_copy_list = list;
		okcov_copy_cap = max(2 * okcov_copy_cap, 64U);
	}
	ret = xa_insert(&okcov_copies, p->start, c, GFP_KERNEL);
	if (ret)
		goto out;
	/* Space nobody ever ran: write it, then make every CPU see it. */
	memcpy(okcov_pool_rw + okcov_pool_used, ctx.buf, room);
	okcov_pool_used += room;
	on_each_cpu(okcov_copy_sync_cpu, NULL, 1);
	okcov_copy_list[okcov_ncopies++] = c;
	*out = c;
	c = NULL;
	ret = 0;
out:
	okcov_copy_free(c);
	kvfree(ctx.buf);
	kvfree(ctx.len);
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
	struct okcov_plan *p;
	int ret;

	lockdep_assert_held(&okcov_copy_mutex);
	p = kmalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	ret = okcov_plan_function(addr, p);
	if (!ret) {
		*out = xa_load(&okcov_copies, p->start);
		if (!*out)
			ret = okcov_copy_make(p, out);
	}
	okcov_plan_free(p);
	kfree(p);
	return ret;
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
					  c->start + ci->off - OKCOV_COPY_RECORD,
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

void okcov_copy_init(struct dentry *dir)
{
	okcov_inspect_file(dir, "copy", okcov_copy_show);
}

/*
 * @mod is going: its functions' copies are no longer found by address (a
 * module loaded there later has other code). They stay in the pool and
 * in the list, as every copy does until rmmod.
 */
void okcov_copy_module(struct module *mod)
{
	unsigned int i;

	mutex_lock(&okcov_copy_mutex);
	for (i = 0; i < okcov_ncopies; i++)
		if (within_module(okcov_copy_list[i]->fn_start, mod))
			xa_erase(&okcov_copies, okcov_copy_list[i]->fn_start);
	mutex_unlock(&okcov_copy_mutex);
}

/* Unload: the pool goes with okcov's text; the maps and the alias here. */
void okcov_copy_cleanup(void)
{
	unsigned int i;

	mutex_lock(&okcov_copy_mutex);
	for (i = 0; i < okcov_ncopies; i++)
		okcov_copy_free(okcov_copy_list[i]);
	kvfree(okcov_copy_list);
	okcov_copy_list = NULL;
	okcov_ncopies = okcov_copy_cap = 0;
	xa_destroy(&okcov_copies);
	if (okcov_pool_rw)
		vunmap(okcov_pool_rw);
	okcov_pool_rw = NULL;
	mutex_unlock(&okcov_copy_mutex);
}
