// SPDX-License-Identifier: GPL-2.0
/*
 * Comparisons from copies (x86_64, deep_cmp=1): a deep copy made while
 * deep_cmp is set (copy.c) carries, before each cmp and test of the
 * original it can evaluate, a sequence that calls okcov_copy_cmp
 * (tramp.S) with a descriptor of the instruction (struct okcov_cmp_desc,
 * okcov.h, kept in the pool after the copy's code). For a thread that
 * records in KCOV_MODE_TRACE_CMP, the hook reads both operands from the
 * registers the copy holds there, the immediate, or memory, and records
 * Linux's comparison record: KCOV_CMP_SIZE(log2 of the operand size),
 * KCOV_CMP_CONST when one operand is an immediate (then arg1), both
 * operands zero-extended, and the original instruction's address (less
 * the KASLR offset for Linux's ABI). Every other thread pays the call,
 * a few loads and the flags' save.
 *
 * Which instructions (the one-byte map, no VEX): cmp 38-3d, 80/81/83 /7;
 * test 84/85, a8/a9, f6/f7 /0. Each size (66 and REX.W prefixes; the
 * byte registers, %ah to %bh without REX). "test %r,%r" of one register
 * compares it with 0, as the compiler's "x != 0" is (CONST, 0); test with
 * an immediate gives the mask as the constant; test of two operands,
 * both. Left out, no sequence: lock/rep prefixes, 32-bit addressing
 * (67), %fs; at run time, a memory operand okcov will not read.
 *
 * Memory operands are read before the instruction reads them, once more,
 * with the fault handled (no fault, no record): only where a second read
 * cannot do anything, the current task's stack, the direct map past its
 * first MiB (the ISA hole's device memory), the kernel image and module
 * space, and a %gs operand (per-CPU memory); never vmalloc space, where
 * ioremap()'s device registers lie, nor the fixmap, nor user memory.
 *
 * Switches (compare chains): without jump tables (the kernel's
 * -fno-jump-tables) GCC lowers a switch into a tree or chain of
 * "cmp $case, %reg; jcc", and a value meets only the few compares on its
 * path, where kcov's __sanitizer_cov_trace_switch() reports every case
 * against the value at once. So the first compare of such a chain (its
 * root: okcov_cmp_chain()) records every constant the chain compares the
 * register with, as trace_switch does: KCOV_CMP_CONST, arg1 the
 * constant, arg2 the value, the root's PC; each other compare of the
 * chain still records itself when it runs.
 *
 * The copies' comparisons are a source for Linux's ABI (its
 * KCOV_TRACE_CMP is ENOTSUPP while nothing can produce comparisons): from
 * the moment deep_cmp is set, whatever copies exist then, so that the
 * answer does not depend on which process made which copy when.
 */

#include <linux/bitmap.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/sched/task_stack.h>
#include <linux/sizes.h>
#include <linux/uaccess.h>

#include "okcov.h"

static bool deep_cmp;
module_param(deep_cmp, bool, 0644);
MODULE_PARM_DESC(deep_cmp,
		 "Deep copies made while set record their cmp/test operands for TRACE_CMP threads (x86_64)");

/* okcov_cmp_desc.op[]: where an operand is. */
#define OKCOV_CMP_OP_REG	0x00	/* | 0..15: a register's low bytes */
#define OKCOV_CMP_OP_HIGH	0x10	/* | 0..3: %ah %ch %dh %bh */
#define OKCOV_CMP_OP_IMM	0x20	/* okcov_cmp_desc.imm */
#define OKCOV_CMP_OP_MEM	0x30	/* base + index * scale + disp */
#define OKCOV_CMP_OP_KIND	0xf0

#define OKCOV_CMP_NOREG		0xff

/* okcov_cmp_desc.flags */
#define OKCOV_CMP_F_CONST	0x1	/* arg1 is an immediate */
#define OKCOV_CMP_F_GS		0x2	/* the memory operand is %gs: (per CPU) */

static_assert(sizeof(struct okcov_cmp_desc) == 48);

bool okcov_copy_cmp_wanted(void)
{
	return READ_ONCE(deep_cmp);
}

/* A source of comparisons for Linux's ABI (this file's header). */
bool okcov_copy_cmp_sources(void)
{
	return READ_ONCE(deep_cmp);
}

/* x86 is little-endian: an instruction's field, as it is. */
static s32 okcov_cmp_s32(const u8 *at)
{
	s32 v;

	memcpy(&v, at, sizeof(v));
	return v;
}

static s16 okcov_cmp_s16(const u8 *at)
{
	s16 v;

	memcpy(&v, at, sizeof(v));
	return v;
}

/* The r/m operand of @in into @d->op[@k] (and the memory fields). */
static void okcov_cmp_rm(const struct okcov_plan_insn *pi, const u8 *b,
			 struct okcov_cmp_desc *d, unsigned int k, bool byte)
{
	const struct okcov_insn *in = &pi->insn;
	u8 mod = in->modrm >> 6, rm = in->modrm & 7, sib;
	s64 disp = 0;

	if (mod == 3) {
		rm |= (in->rex & 1) << 3;
		if (byte && !in->rex && rm >= 4)
			d->op[k] = OKCOV_CMP_OP_HIGH | (rm - 4);
		else
			d->op[k] = OKCOV_CMP_OP_REG | rm;
		return;
	}
	d->op[k] = OKCOV_CMP_OP_MEM;
	if (in->disp_size == 1)
		disp = (s8)b[in->disp_off];
	else if (in->disp_size == 4)
		disp = okcov_cmp_s32(b + in->disp_off);
	d->base = OKCOV_CMP_NOREG;
	d->index = OKCOV_CMP_NOREG;
	if (in->flags & OKCOV_INSN_RIPREL) {
		/* The original's address: the copy's disp32 counts from elsewhere. */
		d->disp = pi->addr + in->len + disp;
		return;
	}
	d->disp = disp;
	if (!(in->flags & OKCOV_INSN_SIB)) {
		d->base = rm | (in->rex & 1) << 3;
		return;
	}
	sib = b[in->modrm_off + 1];
	d->scale = sib >> 6;
	d->index = ((sib >> 3) & 7) | (in->rex & 2) << 2;
	if (d->index == 4)		/* %rsp: no index (%r12 is one) */
		d->index = OKCOV_CMP_NOREG;
	if ((sib & 7) != 5 || mod)	/* base 101 with mod 00: none */
		d->base = (sib & 7) | (in->rex & 1) << 3;
}

/* The reg operand of @in (ModRM.reg) into @d->op[@k]. */
static void okcov_cmp_reg(const struct okcov_insn *in,
			  struct okcov_cmp_desc *d, unsigned int k, bool byte)
{
	u8 reg = ((in->modrm >> 3) & 7) | (in->rex & 4) << 1;

	if (byte && !in->rex && reg >= 4)
		d->op[k] = OKCOV_CMP_OP_HIGH | (reg - 4);
	else
		d->op[k] = OKCOV_CMP_OP_REG | reg;
}

/*
 * Describe the instruction @pi (its bytes @b) into @d if it is a cmp or
 * test okcov evaluates: 0, or -EOPNOTSUPP (no sequence for it). [I]
 */
int okcov_cmp_describe(const struct okcov_plan_insn *pi, const u8 *b,
		       struct okcov_cmp_desc *d)
{
	const struct okcov_insn *in = &pi->insn;
	u8 op = in->opcode, ext = (in->modrm >> 3) & 7;
	bool p66 = false, byte, rm_imm = false;
	unsigned int i;

	if (in->map != OKCOV_MAP_1B ||
	    (in->flags & (OKCOV_INSN_VEX | OKCOV_INSN_EVEX)))
		return -EOPNOTSUPP;
	memset(d, 0, sizeof(*d));
	for (i = 0; i < in->nprefix; i++) {
		switch (b[i]) {
		case 0x66:
			p66 = true;
			break;
		case 0x65:
			d->flags |= OKCOV_CMP_F_GS;
			break;
		case 0x26: case 0x2e: case 0x36: case 0x3e:
			break;		/* no segment in 64-bit mode */
		default:		/* 67, %fs, lock, rep */
			return -EOPNOTSUPP;
		}
	}
	switch (op) {
	case 0x38: case 0x39:	/* cmp r/m, r */
	case 0x84: case 0x85:	/* test r/m, r */
		byte = !(op & 1);
		okcov_cmp_rm(pi, b, d, 0, byte);
		okcov_cmp_reg(in, d, 1, byte);
		/* test %r, %r: the compiler's "x != 0" */
		if ((op == 0x84 || op == 0x85) && d->op[0] == d->op[1]) {
			d->op[0] = OKCOV_CMP_OP_IMM;
			d->flags |= OKCOV_CMP_F_CONST;
		}
		break;
	case 0x3a: case 0x3b:	/* cmp r, r/m */
		byte = !(op & 1);
		okcov_cmp_reg(in, d, 0, byte);
		okcov_cmp_rm(pi, b, d, 1, byte);
		break;
	case 0x3c: case 0x3d:	/* cmp %al/%eax, imm */
	case 0xa8: case 0xa9:	/* test %al/%eax, imm */
		byte = !(op & 1);
		d->op[1] = OKCOV_CMP_OP_REG | 0;
		rm_imm = true;
		break;
	case 0x80: case 0x81: case 0x83:	/* cmp r/m, imm */
		if (ext != 7)
			return -EOPNOTSUPP;
		byte = op == 0x80;
		okcov_cmp_rm(pi, b, d, 1, byte);
		rm_imm = true;
		break;
	case 0xf6: case 0xf7:	/* test r/m, imm */
		if (ext != 0)
			return -EOPNOTSUPP;
		byte = op == 0xf6;
		okcov_cmp_rm(pi, b, d, 1, byte);
		rm_imm = true;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (rm_imm) {
		switch (in->imm_size) {
		case 1:
			d->imm = (s8)b[in->imm_off];
			break;
		case 2:
			d->imm = okcov_cmp_s16(b + in->imm_off);
			break;
		case 4:
			d->imm = okcov_cmp_s32(b + in->imm_off);
			break;
		default:
			return -EOPNOTSUPP;
		}
		d->op[0] = OKCOV_CMP_OP_IMM;
		d->flags |= OKCOV_CMP_F_CONST;
	}
	/* %gs with no memory operand changes nothing */
	if (d->op[0] != OKCOV_CMP_OP_MEM && d->op[1] != OKCOV_CMP_OP_MEM)
		d->flags &= ~OKCOV_CMP_F_GS;
	d->size = byte ? 0 : (in->rex & 8) ? 3 : p66 ? 1 : 2;
	d->pc = pi->addr;
	return 0;
}

/*
 * Is plan instruction @i a node of a compare chain, "cmp $imm, %reg" (or
 * "test %reg, %reg", with 0)? Its descriptor into @d.
 */
static bool okcov_cmp_node(const struct okcov_plan *p, unsigned int i,
			   struct okcov_cmp_desc *d)
{
	const struct okcov_plan_insn *pi = &p->insns[i];
	u8 op = pi->insn.opcode;

	/* cmp, and test of a register with itself (with 0); not a mask */
	if (pi->insn.map != OKCOV_MAP_1B ||
	    !(op == 0x3c || op == 0x3d || op == 0x80 || op == 0x81 ||
	      op == 0x83 || op == 0x84 || op == 0x85))
		return false;
	if (okcov_cmp_describe(pi, okcov_plan_bytes(p, pi), d))
		return false;
	return d->op[0] == OKCOV_CMP_OP_IMM &&
	       (d->op[1] & OKCOV_CMP_OP_KIND) == OKCOV_CMP_OP_REG;
}

/*
 * Where node @i goes on when conditional jumps follow it: their targets,
 * then a direct jmp's target or the next instruction. Into @to (at most
 * @max): how many; 0 when no jcc follows (a cmov's or setcc's compare: a
 * leaf).
 */
static unsigned int okcov_cmp_next(const struct okcov_plan *p, unsigned int i,
				   unsigned long *to, unsigned int max)
{
	const struct okcov_plan_insn *q;
	unsigned int n = 0, j;

	for (j = i + 1; j < p->ninsns && n < max; j++) {
		q = &p->insns[j];
		if (q->addr != q[-1].addr + q[-1].insn.len)
			break;		/* the part ends */
		if (q->insn.kind == OKCOV_KIND_JCC) {
			to[n++] = okcov_plan_target(q);
			continue;
		}
		if (n)
			to[n++] = q->insn.kind == OKCOV_KIND_JMP ?
				  okcov_plan_target(q) : q->addr;
		break;
	}
	return n;
}

/*
 * Does @pi leave register @reg alone and go on to the next instruction:
 * a mov of an immediate or a register, an xor, a load or a lea, into
 * another register? (What GCC puts between a switch's compares: the
 * result's value.)
 */
static bool okcov_cmp_aside(const struct okcov_plan_insn *pi, u8 reg)
{
	const struct okcov_insn *in = &pi->insn;
	u8 dst;

	if (in->kind != OKCOV_KIND_OTHER || in->map != OKCOV_MAP_1B ||
	    in->nprefix)
		return false;
	switch (in->opcode) {
	case 0xb8 ... 0xbf:		/* mov $imm, r */
		dst = (in->opcode & 7) | (in->rex & 1) << 3;
		break;
	case 0xc7:			/* mov $imm32, r/m: a register */
		if ((in->modrm & 0xf8) != 0xc0)
			return false;
		fallthrough;
	case 0x89: case 0x31:		/* mov, xor r, r/m: a register */
		if (in->modrm >> 6 != 3)
			return false;
		dst = (in->modrm & 7) | (in->rex & 1) << 3;
		break;
	case 0x8b: case 0x33: case 0x8d:	/* mov, xor r/m, r; lea */
		dst = ((in->modrm >> 3) & 7) | (in->rex & 4) << 1;
		break;
	default:
		return false;
	}
	return dst != reg;
}

/* Instructions okcov_cmp_aside() lets a chain pass, at most. */
#define OKCOV_CMP_ASIDE		4

/*
 * The node a branch to @t reaches past at most OKCOV_CMP_ASIDE
 * instructions aside, comparing the same register, of the same size, as
 * @root (a chain's next compare: on the way nothing wrote the register,
 * which still holds the root's value): its index, or -1.
 */
static int okcov_cmp_child(const struct okcov_plan *p, unsigned long t,
			   const struct okcov_cmp_desc *root)
{
	const struct okcov_plan_insn *q = okcov_plan_at(p, t);
	u8 reg = root->op[1] & 15;
	struct okcov_cmp_desc d;
	unsigned int k;

	for (k = 0; q && k < OKCOV_CMP_ASIDE && okcov_cmp_aside(q, reg); k++) {
		if (q + 1 == p->insns + p->ninsns ||
		    q[1].addr != q->addr + q->insn.len)
			return -1;
		q++;
	}
	if (!q || !okcov_cmp_node(p, q - p->insns, &d) ||
	    d.op[1] != root->op[1] || d.size != root->size ||
	    d.flags != root->flags)
		return -1;
	return q - p->insns;
}

/*
 * The plan's compare chains (this file's header): a bitmap of the plan's
 * instructions that are a chain's node other than its root, for
 * okcov_cmp_chain(); kfree() it. NULL: no memory.
 */
unsigned long *okcov_cmp_chain_map(const struct okcov_plan *p)
{
	unsigned long *child = bitmap_zalloc(p->ninsns, GFP_KERNEL), to[4];
	struct okcov_cmp_desc d;
	unsigned int i, k, n;
	int c;

	if (!child)
		return NULL;
	for (i = 0; i < p->ninsns; i++) {
		if (!okcov_cmp_node(p, i, &d))
			continue;
		n = okcov_cmp_next(p, i, to, ARRAY_SIZE(to));
		for (k = 0; k < n; k++) {
			c = okcov_cmp_child(p, to[k], &d);
			if (c >= 0 && c != i)
				__set_bit(c, child);
		}
	}
	return child;
}

/*
 * A jump table's bound check at node @i, "cmp $max, %reg; ja default",
 * with the switch's jump next or a mov after (plan.c's
 * okcov_plan_jt_bound()): its table, *@dflt the ja's target; or NULL.
 */
static const struct okcov_plan_jt *okcov_cmp_jt(const struct okcov_plan *p,
						unsigned int i,
						unsigned long *dflt)
{
	const struct okcov_plan_insn *q = &p->insns[i];
	unsigned int j, k;

	if (i + 2 >= p->ninsns || q[1].insn.kind != OKCOV_KIND_JCC ||
	    (q[1].insn.opcode & 0xf) != 0x7 ||
	    q[1].addr != q->addr + q->insn.len)
		return NULL;
	*dflt = okcov_plan_target(&q[1]);
	for (k = i + 2; k < i + 4 && k < p->ninsns; k++)
		for (j = 0; j < p->njt; j++)
			if (p->jt[j].jmp == p->insns[k].addr)
				return &p->jt[j];
	return NULL;
}

/*
 * What the instruction right before node @i subtracted from the register
 * @reg it compares (a switch's lowest case, so that its compares count
 * from 0): "sub $lo, %reg", "add $-lo, %reg" or "lea -lo(%r), %reg";
 * else 0.
 */
static s64 okcov_cmp_bias(const struct okcov_plan *p, unsigned int i, u8 reg)
{
	const struct okcov_plan_insn *q = &p->insns[i];
	const struct okcov_insn *in;
	const u8 *b;
	u8 mod, ext;
	s64 v;

	if (!i)
		return 0;
	in = &q[-1].insn;
	if (q[-1].addr + in->len != q->addr || in->map != OKCOV_MAP_1B ||
	    in->nprefix)
		return 0;
	b = okcov_plan_bytes(p, &q[-1]);
	mod = in->modrm >> 6;
	ext = (in->modrm >> 3) & 7;
	if ((in->opcode == 0x81 || in->opcode == 0x83) && mod == 3 &&
	    (ext == 0 || ext == 5) &&
	    ((in->modrm & 7) | (in->rex & 1) << 3) == reg) {
		v = in->imm_size == 1 ? (s8)b[in->imm_off] :
					okcov_cmp_s32(b + in->imm_off);
		return ext == 5 ? v : -v;
	}
	if (in->opcode == 0x8d && (mod == 1 || mod == 2) &&
	    !(in->flags & (OKCOV_INSN_SIB | OKCOV_INSN_RIPREL)) &&
	    (ext | (in->rex & 4) << 1) == reg) {
		v = in->disp_size == 1 ? (s8)b[in->disp_off] :
					 okcov_cmp_s32(b + in->disp_off);
		return -v;
	}
	return 0;
}

/* Add @v to the @n constants of @cases, once: false when full. */
static bool okcov_cmp_case(s64 *cases, unsigned int *n, s64 v)
{
	unsigned int m;

	for (m = 0; m < *n; m++)
		if (cases[m] == v)
			return true;
	if (*n == OKCOV_CMP_CASES_MAX)
		return false;
	cases[(*n)++] = v;
	return true;
}

/*
 * The constants of the chain whose root is plan instruction @i (@child
 * from okcov_cmp_chain_map()), the root's first, each once, at most
 * OKCOV_CMP_CASES_MAX: into @cases, a scratch of that many; how many. 0:
 * @i is no chain's root (or a chain of one constant). A jump table's
 * bound check in the chain adds each index with an entry of its own
 * (not the default's). When an instruction right before the root
 * subtracted a constant from the register (okcov_cmp_bias()), the
 * constants are the switch's cases, that constant added back, and so is
 * the register's value at run time: *@bias.
 */
unsigned int okcov_cmp_chain(const struct okcov_plan *p,
			     const unsigned long *child, unsigned int i,
			     s64 *cases, s64 *bias)
{
	unsigned int stack[OKCOV_CMP_CHAIN_DEPTH], sp = 0, n = 0, visits = 0;
	const struct okcov_plan_jt *jt;
	struct okcov_cmp_desc root, d;
	unsigned int k, j, nto;
	unsigned long to[4], dflt;
	bool room = true;
	int c;

	if (test_bit(i, child) || !okcov_cmp_node(p, i, &root))
		return 0;
	*bias = okcov_cmp_bias(p, i, root.op[1] & 15);
	stack[sp++] = i;
	/* A cycle of nothing but cmp and jcc would spin: bounded anyway. */
	while (sp && room && visits++ < 4 * OKCOV_CMP_CASES_MAX) {
		k = stack[--sp];
		okcov_cmp_node(p, k, &d);
		room = okcov_cmp_case(cases, &n, d.imm + *bias);
		jt = okcov_cmp_jt(p, k, &dflt);
		for (j = 0; jt && room && j < jt->n; j++)
			if (jt->entry[j] != dflt)
				room = okcov_cmp_case(cases, &n, j + *bias);
		nto = okcov_cmp_next(p, k, to, ARRAY_SIZE(to));
		for (j = 0; j < nto && sp < ARRAY_SIZE(stack); j++) {
			c = okcov_cmp_child(p, to[j], &root);
			if (c >= 0 && c != k)
				stack[sp++] = c;
		}
	}
	return n > 1 ? n : 0;
}

/*
 * May @addr's @n bytes be read a second time, as the instruction about
 * to run reads them (this file's header)? Any context: no lock, nothing
 * traceable.
 */
static __always_inline bool okcov_cmp_readable(unsigned long addr,
						unsigned int n, bool percpu)
{
	unsigned long stack = (unsigned long)task_stack_page(current);

	if (addr - stack <= THREAD_SIZE - n)
		return true;
	if (percpu)
		return addr >= PAGE_OFFSET && addr <= MODULES_END - n;
	if (addr >= __START_KERNEL_map)
		return addr <= MODULES_END - n;
	return addr >= PAGE_OFFSET + SZ_1M && addr <= VMALLOC_START - n;
}

/* @d's memory operand, or false: not read (okcov_cmp_readable()). */
static __always_inline bool okcov_cmp_load(const struct okcov_cmp_desc *d,
					   const unsigned long *regs, u64 *v)
{
	unsigned long addr = d->disp;
	bool ok = true;

	if (d->base != OKCOV_CMP_NOREG)
		addr += regs[d->base];
	if (d->index != OKCOV_CMP_NOREG)
		addr += regs[d->index] << d->scale;
	if (d->flags & OKCOV_CMP_F_GS)
		addr = (unsigned long)raw_cpu_ptr((unsigned long __percpu *)addr);
	if (!okcov_cmp_readable(addr, 1U << d->size, d->flags & OKCOV_CMP_F_GS))
		return false;
	pagefault_disable();
	switch (d->size) {
	case 0:
		__get_kernel_nofault(v, addr, u8, fault);
		break;
	case 1:
		__get_kernel_nofault(v, addr, u16, fault);
		break;
	case 2:
		__get_kernel_nofault(v, addr, u32, fault);
		break;
	default:
		__get_kernel_nofault(v, addr, u64, fault);
		break;
	}
	goto out;
fault:
	ok = false;
out:
	pagefault_enable();
	return ok;
}

/* Operand @op of @d, zero-extended from its size; or false. */
static __always_inline bool okcov_cmp_arg(const struct okcov_cmp_desc *d,
					  u8 op, const unsigned long *regs,
					  u64 *v)
{
	*v = 0;
	switch (op & OKCOV_CMP_OP_KIND) {
	case OKCOV_CMP_OP_REG:
		*v = regs[op & 15];
		break;
	case OKCOV_CMP_OP_HIGH:
		*v = regs[op & 3] >> 8;
		break;
	case OKCOV_CMP_OP_IMM:
		*v = d->imm;
		break;
	default:
		if (!okcov_cmp_load(d, regs, v))
			return false;
		break;
	}
	if (d->size < 3)
		*v &= (1ULL << (8U << d->size)) - 1;
	return true;
}

/* A chain's root: each of its constants against the register. */
static __always_inline void okcov_cmp_cases(const struct okcov_attach *a,
					    const struct okcov_cmp_desc *d,
					    const unsigned long *regs)
{
	const s64 *cases = (const s64 *)(unsigned long)d->cases;
	u64 v, mask = ~0ULL, *rec;
	unsigned int got, k;

	if (!okcov_cmp_arg(d, d->op[1], regs, &v))
		return;
	rec = okcov_claim(a, 4, d->ncases, &got);
	if (!rec)
		return;
	if (d->size < 3)
		mask = (1ULL << (8U << d->size)) - 1;
	for (k = 0; k < got; k++, rec += 4) {
		rec[0] = KCOV_CMP_SIZE(d->size) | KCOV_CMP_CONST;
		rec[1] = cases[k] & mask;
		rec[2] = (v + d->bias) & mask;
		rec[3] = d->pc + a->pc_delta;
	}
}

/*
 * From tramp.S's okcov_copy_cmp, once its step (a) let it in: @regs, the
 * copy's general registers by their number (the %rsp slot ours to
 * fill: @sp, the copy's at the instruction), @d the descriptor its
 * sequence pushed. Records for a TRACE_CMP thread only; its reject
 * order and hold are okcov_copy_hit()'s.
 */
void notrace okcov_copy_cmp_hit(unsigned long *regs,
				const struct okcov_cmp_desc *d,
				unsigned long sp)
{
	struct okcov_attach *a;
	unsigned int got;
	u64 arg1, arg2, *rec;

	a = okcov_get_warm(OKCOV_MODE_TRACE_CMP, OKCOV_REC_CALL, NULL);
	if (!a)
		return;
	regs[4] = sp;
	if (d->ncases) {
		okcov_cmp_cases(a, d, regs);
	} else if (okcov_cmp_arg(d, d->op[0], regs, &arg1) &&
		   okcov_cmp_arg(d, d->op[1], regs, &arg2)) {
		rec = okcov_claim(a, 4, 1, &got);
		if (rec) {
			rec[0] = KCOV_CMP_SIZE(d->size) |
				 (d->flags & OKCOV_CMP_F_CONST ?
				  KCOV_CMP_CONST : 0);
			rec[1] = arg1;
			rec[2] = arg2;
			rec[3] = d->pc + a->pc_delta;
		}
	}
	okcov_put(OKCOV_REC_CALL);
}
