// SPDX-License-Identifier: GPL-2.0
/*
 * The planner (x86_64): okcov's own reading of one function's live text,
 * the first step of deep coverage through instrumented copies. It reads
 * the function's bytes as they run (alternatives, static calls and jump
 * labels as patched), decodes every instruction with okcov's decoder
 * (insn.c), follows the direct branches that leave the function into its
 * .cold parts, and works out:
 *   - the block leaders, by the rule okcov-cover deep applies to objdump's
 *     reading of the same bytes (okcov-cover(1)): every direct branch
 *     target inside the function and its .cold parts, and the instruction
 *     after each conditional branch; moved off endbr64 and nops, dropped
 *     on int3 and ud2, never the entry (ftrace records that one), nor an
 *     edge's block (register settings, then a jmp within the function or
 *     the next leader: okcov_plan_edge_block()); and
 *     beyond that rule, a switch's jump table (kernels built without
 *     retpolines): its entries lead, its jump does not, and a copy gets
 *     a table of its own;
 *   - what a copy would take (copy.c): its size, with each short branch
 *     widened to a near one and a record sequence at each leader;
 *   - whether the function can be copied exactly, and if not why: an
 *     instruction the decoder does not know, or a branch into the middle
 *     of one (EILSEQ); loop/jrcxz or an instruction that never belongs in
 *     a copy (EOPNOTSUPP); too large (EFBIG); too many parts (E2BIG);
 *     okcov's own text (EACCES); no function there (ENXIO).
 * Nothing a caller passes is trusted: an address is only a way to name
 * the function around it.
 *
 * KIODEEP asks it whether an address is an instruction boundary
 * (okcov_plan_boundary()); /sys/kernel/debug/okcov/plan shows a whole
 * plan, for the tests that hold it against binutils and okcov-cover.
 * Task context only; it may sleep.
 */

#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/kallsyms.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/bsearch.h>
#include <linux/sort.h>
#include <linux/uaccess.h>

#include "insn.h"
#include "okcov.h"

/* The planner's verdicts, with the reason the plan file prints. */
static const char *okcov_plan_reason(int err)
{
	switch (err) {
	case 0:			return "copyable";
	case -EILSEQ:		return "undecodable";
	case -EOPNOTSUPP:	return "unsupported instruction";
	case -EFBIG:		return "too large";
	case -E2BIG:		return "too many parts";
	case -EACCES:		return "okcov's own text";
	case -ENXIO:		return "no function";
	case -EFAULT:		return "unreadable text";
	case -ENOMEM:		return "out of memory";
	default:		return "refused";
	}
}

static void okcov_plan_reset(struct okcov_plan *p)
{
	unsigned int i;

	for (i = 0; i < OKCOV_PLAN_REGIONS; i++)
		kvfree(p->text[i]);
	for (i = 0; i < p->njt; i++)
		kvfree(p->jt[i].entry);
	kfree(p->jt);
	kvfree(p->insns);
	kvfree(p->leaders);
	memset(p, 0, sizeof(*p));
}

void okcov_plan_free(struct okcov_plan *p)
{
	okcov_plan_reset(p);
}

/* Room for @more instructions on p->insns. */
static int okcov_plan_reserve(struct okcov_plan *p, unsigned int more)
{
	struct okcov_plan_insn *insns;

	if (p->ninsns + more <= p->cap)
		return 0;
	insns = kvmalloc_array(p->ninsns + more, sizeof(*insns), GFP_KERNEL);
	if (!insns)
		return -ENOMEM;
	if (p->ninsns)
		memcpy(insns, p->insns, p->ninsns * sizeof(*insns));
	kvfree(p->insns);
	p->insns = insns;
	p->cap = p->ninsns + more;
	return 0;
}

/*
 * The part [@start, @end) (@buf its bytes) did not decode to its end:
 * does it end with an instruction nothing falls through, then zeros
 * alone? A module's sections lie apart with zeros between them, and
 * kallsyms sizes a symbol up to the next one (a .cold part followed by
 * another section's text). Then the part ends there, its instructions
 * from @n0 on the plan's: true.
 */
static bool okcov_plan_zero_tail(struct okcov_plan *p, unsigned int n0,
				 const u8 *buf, unsigned long start,
				 unsigned long end)
{
	const struct okcov_plan_insn *pi;
	unsigned long a, zero = end;
	unsigned int i;

	while (zero > start && !buf[zero - 1 - start])
		zero--;
	for (i = p->ninsns; i-- > n0;) {
		pi = &p->insns[i];
		a = pi->addr + pi->insn.len;
		if (a < zero)
			return false;
		switch (pi->insn.kind) {
		case OKCOV_KIND_JMP:
		case OKCOV_KIND_JMP_IND:
		case OKCOV_KIND_RET:
		case OKCOV_KIND_UD:
			p->ninsns = i + 1;
			p->region[p->nregions - 1].end = a;
			p->bytes -= end - a;
			return true;
		default:
			break;	/* zeros decoded, or its own last bytes */
		}
	}
	return false;
}

/*
 * Decode [start, end), the last region added, onto p->insns: 0, or the
 * verdict. Its bytes stay in p->text[] for the copy (copy.c): what is
 * copied is what was decoded.
 */
static int okcov_plan_decode(struct okcov_plan *p, unsigned long start,
			     unsigned long end)
{
	unsigned long addr = start;
	size_t len = end - start;
	unsigned int n0 = p->ninsns;
	struct okcov_plan_insn *pi;
	u8 *buf;
	int ret;

	/* At most one instruction a byte. */
	ret = okcov_plan_reserve(p, len);
	if (ret)
		return ret;
	buf = kvmalloc(len, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	ret = -EFAULT;
	if (copy_from_kernel_nofault(buf, (void *)start, len))
		goto out;
	p->text[p->nregions - 1] = buf;
	ret = 0;
	while (addr < end) {
		pi = &p->insns[p->ninsns];
		ret = okcov_insn_decode(&pi->insn, buf + (addr - start),
					end - addr);
		if (ret && okcov_plan_zero_tail(p, n0, buf, start, end))
			return 0;
		if (ret == -ENODATA)
			ret = -EILSEQ;	/* the last one runs past the end */
		if (ret) {
			p->bad = addr;
			break;
		}
		pi->addr = addr;
		addr += pi->insn.len;
		p->ninsns++;
	}
	return ret;
out:
	kvfree(buf);
	return ret;
}

static int okcov_plan_cmp_insn(const void *a, const void *b)
{
	const struct okcov_plan_insn *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int okcov_plan_cmp_ulong(const void *a, const void *b)
{
	const unsigned long *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/* The instruction at @addr, or NULL (not a boundary). p->insns is sorted. */
const struct okcov_plan_insn *okcov_plan_at(const struct okcov_plan *p,
					    unsigned long addr)
{
	unsigned int lo = 0, hi = p->ninsns, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (p->insns[mid].addr == addr)
			return &p->insns[mid];
		if (p->insns[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

bool okcov_plan_inside(const struct okcov_plan *p, unsigned long addr)
{
	unsigned int i;

	for (i = 0; i < p->nregions; i++)
		if (addr >= p->region[i].start && addr < p->region[i].end)
			return true;
	return false;
}

/* Is @pi a direct call or jump (jcc too) out of @p? Its target into *@t. */
bool okcov_plan_out(const struct okcov_plan *p,
		    const struct okcov_plan_insn *pi, unsigned long *t)
{
	if (pi->insn.kind != OKCOV_KIND_CALL &&
	    pi->insn.kind != OKCOV_KIND_JMP &&
	    pi->insn.kind != OKCOV_KIND_JCC)
		return false;
	*t = okcov_plan_target(pi);
	return !okcov_plan_inside(p, *t);
}

static bool okcov_plan_branch(const struct okcov_insn *in)
{
	return in->kind == OKCOV_KIND_JMP || in->kind == OKCOV_KIND_JCC ||
	       in->kind == OKCOV_KIND_LOOP;
}

/*
 * Is @addr the start of a .cold part of the function @name (@len
 * characters)? Its bounds to *@start and *@end.
 */
static bool okcov_plan_cold(unsigned long addr, const char *name, size_t len,
			    unsigned long *start, unsigned long *end)
{
	char sym[KSYM_SYMBOL_LEN];
	size_t symlen;
	bool mod;

	if (!okcov_symbol_bounds(addr, sym, &symlen, start, end, &mod))
		return false;
	return *start == addr && symlen > len && !strncmp(sym, name, len) &&
	       !strncmp(sym + len, ".cold", 5) &&
	       (!sym[len + 5] || sym[len + 5] == '.');
}

/* The direct branches that leave the regions for a .cold part add it. */
static int okcov_plan_find_cold(struct okcov_plan *p)
{
	unsigned long start, end, t;
	unsigned int i, j;
	int ret;

	for (i = 0; i < p->ninsns; i++) {
		if (!okcov_plan_branch(&p->insns[i].insn))
			continue;
		t = okcov_plan_target(&p->insns[i]);
		if (okcov_plan_inside(p, t))
			continue;
		if (!okcov_plan_cold(t, p->name, strlen(p->name), &start, &end))
			continue;
		if (p->nregions == OKCOV_PLAN_REGIONS)
			return -E2BIG;
		if (end - start > OKCOV_PLAN_MAX_SIZE - p->bytes)
			return -EFBIG;
		j = p->nregions++;
		p->region[j].start = start;
		p->region[j].end = end;
		p->bytes += end - start;
		ret = okcov_plan_decode(p, start, end);
		if (ret)
			return ret;
	}
	return 0;
}

static bool okcov_plan_filler(const struct okcov_insn *in)
{
	return in->kind == OKCOV_KIND_NOP &&
	       (in->opcode != 0x90 || (!in->nprefix && !in->rex));
}

/* The bytes the planner decoded for @pi. */
const u8 *okcov_plan_bytes(const struct okcov_plan *p,
			   const struct okcov_plan_insn *pi)
{
	unsigned int r;

	for (r = 0; r < p->nregions; r++)
		if (pi->addr >= p->region[r].start && pi->addr < p->region[r].end)
			return p->text[r] + (pi->addr - p->region[r].start);
	return NULL;
}

/* A switch's table longer than this is not followed. */
#define OKCOV_PLAN_JT_MAX	1024

/* x86 is little-endian: a field of an instruction, as it is. */
static s64 okcov_plan_imm(const u8 *b, unsigned int size, bool sign)
{
	s32 v32;

	if (size == 1)
		return sign ? (s8)b[0] : b[0];
	if (size == 2)
		return (s16)(b[0] | b[1] << 8);
	memcpy(&v32, b, sizeof(v32));
	return v32;
}

/*
 * The bound check right before a switch's indirect jump at insn @i,
 * "cmp $max, reg; ja default", with at most a mov or movz (the index's
 * zero extension) between: the table's entries, max + 1; or 0.
 */
static unsigned int okcov_plan_jt_bound(const struct okcov_plan *p,
					unsigned int i)
{
	const struct okcov_plan_insn *q = &p->insns[i];
	const struct okcov_insn *in;
	unsigned int k;
	s64 max;

	for (k = 0;; k++, q--) {
		if (q == p->insns || q[-1].addr + q[-1].insn.len != q->addr)
			return 0;
		in = &q[-1].insn;
		if (in->kind == OKCOV_KIND_JCC && (in->opcode & 0xf) == 0x7)
			break;				/* ja */
		if (k || in->kind != OKCOV_KIND_OTHER ||
		    !(in->map == OKCOV_MAP_1B ?
		      in->opcode == 0x89 || in->opcode == 0x8b :
		      in->map == OKCOV_MAP_0F &&
		      (in->opcode == 0xb6 || in->opcode == 0xb7)))
			return 0;
	}
	q--;
	if (q == p->insns || q[-1].addr + q[-1].insn.len != q->addr)
		return 0;
	in = &q[-1].insn;
	/* cmp $imm, reg (80/81/83 /7, mod 3), or cmp $imm, al/ax/eax/rax */
	if (in->map != OKCOV_MAP_1B || !in->imm_size ||
	    !(in->opcode == 0x3c || in->opcode == 0x3d ||
	      ((in->opcode == 0x80 || in->opcode == 0x81 ||
		in->opcode == 0x83) && (in->modrm & 0xf8) == 0xf8)))
		return 0;
	max = okcov_plan_imm(okcov_plan_bytes(p, &q[-1]) + in->imm_off,
			     in->imm_size, in->opcode == 0x83);
	return max >= 0 && max < OKCOV_PLAN_JT_MAX ? max + 1 : 0;
}

/*
 * Is insn @i a switch's "jmp *table(,%reg,8)" (ff /4, a SIB with no
 * base: an absolute table) after its bound check, whose every entry is
 * an instruction of the plan (not its entry)? Then its table into @jt:
 * 0. Else -ENOENT (such a jump goes on into the original from a copy),
 * or -ENOMEM.
 */
static int okcov_plan_jt_find(const struct okcov_plan *p, unsigned int i,
			      struct okcov_plan_jt *jt)
{
	const struct okcov_insn *in = &p->insns[i].insn;
	const u8 *b = okcov_plan_bytes(p, &p->insns[i]);
	unsigned long e;
	unsigned int k;
	u8 sib;

	if (in->kind != OKCOV_KIND_JMP_IND || !(in->flags & OKCOV_INSN_SIB) ||
	    in->modrm != 0x24 || in->disp_size != 4)
		return -ENOENT;
	sib = b[in->modrm_off + 1];
	/* scale 8, an index (100 is none without REX.X), no base */
	if ((sib & 0xc7) != 0xc5 || ((sib & 0x38) == 0x20 && !(in->rex & 2)))
		return -ENOENT;
	jt->n = okcov_plan_jt_bound(p, i);
	if (!jt->n)
		return -ENOENT;
	jt->jmp = p->insns[i].addr;
	jt->table = (long)okcov_plan_imm(b + in->disp_off, 4, true);
	jt->entry = kvmalloc_array(jt->n, sizeof(*jt->entry), GFP_KERNEL);
	if (!jt->entry)
		return -ENOMEM;
	if (copy_from_kernel_nofault(jt->entry, (void *)jt->table,
				     jt->n * sizeof(*jt->entry)))
		goto none;
	for (k = 0; k < jt->n; k++) {
		e = jt->entry[k];
		if (!okcov_plan_inside(p, e) || !okcov_plan_at(p, e) ||
		    (e >= p->start && e <= p->entry))
			goto none;
	}
	return 0;
none:
	kvfree(jt->entry);
	jt->entry = NULL;
	return -ENOENT;
}

/* The plan's indirect jumps, and its switches' tables: p->jt. 0 or -ENOMEM. */
static int okcov_plan_jts(struct okcov_plan *p)
{
	unsigned int i;
	int ret;

	for (i = 0; i < p->ninsns; i++)
		p->njmp += p->insns[i].insn.kind == OKCOV_KIND_JMP_IND;
	if (!p->njmp)
		return 0;
	p->jt = kcalloc(p->njmp, sizeof(*p->jt), GFP_KERNEL);
	if (!p->jt)
		return -ENOMEM;
	for (i = 0; i < p->ninsns; i++) {
		ret = okcov_plan_jt_find(p, i, &p->jt[p->njt]);
		if (ret == -ENOMEM)
			return ret;
		if (!ret)
			p->njt++;
	}
	return 0;
}

static void okcov_plan_add_leader(struct okcov_plan *p, unsigned long addr)
{
	if (p->nleaders < p->leader_cap)
		p->leaders[p->nleaders++] = addr;
}

/*
 * Is @a a switch's jump? Its block only dispatches to its table's
 * entries, each a leader: no record of its own (nor can kprobes probe
 * an indirect jump through memory).
 */
static bool okcov_plan_is_jt(const struct okcov_plan *p, unsigned long a)
{
	unsigned int j;

	for (j = 0; j < p->njt; j++)
		if (p->jt[j].jmp == a)
			return true;
	return false;
}

/*
 * Does @pi only set a register to a constant or another register's value
 * (mov $imm or mov %reg to a register, xor of a register with itself)?
 * A value on its way to a join: what a compiler puts on an edge.
 */
static bool okcov_plan_sets(const struct okcov_plan_insn *pi)
{
	const struct okcov_insn *in = &pi->insn;
	u8 mod = in->modrm >> 6, reg, rm;

	if (in->kind != OKCOV_KIND_OTHER || in->map != OKCOV_MAP_1B ||
	    in->nprefix)
		return false;
	reg = ((in->modrm >> 3) & 7) | (in->rex & 4) << 1;
	rm = (in->modrm & 7) | (in->rex & 1) << 3;
	switch (in->opcode) {
	case 0xb8 ... 0xbf:		/* mov $imm, %reg */
		return true;
	case 0xc7:			/* mov $imm32, %reg */
		return (in->modrm & 0xf8) == 0xc0;
	case 0x89: case 0x8b:		/* mov %reg, %reg */
		return mod == 3;
	case 0x31: case 0x33:		/* xor %reg, %reg: 0 */
		return mod == 3 && reg == rm;
	default:
		return false;
	}
}

/* Register settings an edge block may hold, at most. */
#define OKCOV_PLAN_EDGE_SETS	4

/*
 * Is the block at leader @a an edge's: nothing but register settings
 * (okcov_plan_sets()), then a jmp within the function or the next
 * leader (@later: the leaders above @a, sorted)? A compiler makes such
 * a block for a value that a join takes from one of its ways in
 * ("ret = -EINVAL; goto out"); Linux's kcov
 * instruments none of them (its sanitizer call sits in the blocks of
 * the compiler's middle end, and such a block is empty there), and
 * recording them would make a program new that takes one more way to a
 * block already seen. Not leaders.
 */
static bool okcov_plan_edge_block(const struct okcov_plan *p, unsigned long a,
				  const unsigned long *later, unsigned int n)
{
	const struct okcov_plan_insn *q = okcov_plan_at(p, a);
	unsigned int k;

	for (k = 0; q && k <= OKCOV_PLAN_EDGE_SETS; k++) {
		if (q->insn.kind == OKCOV_KIND_JMP)
			return okcov_plan_inside(p, okcov_plan_target(q));
		if (k && bsearch(&q->addr, later, n, sizeof(*later),
				 okcov_plan_cmp_ulong))
			return true;
		if (!okcov_plan_sets(q) || q + 1 == p->insns + p->ninsns ||
		    q[1].addr != q->addr + q->insn.len)
			return false;
		q++;
	}
	return false;
}

/*
 * The leaders, by okcov-cover deep's rule (the file's header), and a
 * switch's: its jump table's entries lead, its jump does not.
 */
static int okcov_plan_leaders(struct okcov_plan *p)
{
	const struct okcov_plan_insn *pi, *at;
	unsigned long a;
	unsigned int i, j, k;
	int ret;

	ret = okcov_plan_jts(p);
	if (ret)
		return ret;
	/* A conditional branch brings two; a switch, its table's entries. */
	p->leader_cap = 2 * p->ninsns;
	for (j = 0; j < p->njt; j++)
		p->leader_cap += p->jt[j].n;
	p->leaders = kvmalloc_array(p->leader_cap, sizeof(*p->leaders),
				    GFP_KERNEL);
	if (!p->leaders)
		return -ENOMEM;
	for (j = 0; j < p->njt; j++)
		for (k = 0; k < p->jt[j].n; k++)
			okcov_plan_add_leader(p, p->jt[j].entry[k]);
	for (i = 0; i < p->ninsns; i++) {
		pi = &p->insns[i];
		switch (pi->insn.kind) {
		case OKCOV_KIND_LOOP:
		case OKCOV_KIND_STOP:
			p->bad = pi->addr;
			return -EOPNOTSUPP;
		case OKCOV_KIND_JMP:
		case OKCOV_KIND_JCC:
			if (pi->insn.imm_size == 1)
				p->widen += pi->insn.kind == OKCOV_KIND_JMP ?
					    3 : 4;
			a = okcov_plan_target(pi);
			if (okcov_plan_inside(p, a)) {
				if (!okcov_plan_at(p, a)) {
					p->bad = pi->addr;
					return -EILSEQ;
				}
				okcov_plan_add_leader(p, a);
			}
			if (pi->insn.kind == OKCOV_KIND_JCC)
				okcov_plan_add_leader(p, pi->addr + pi->insn.len);
			break;
		case OKCOV_KIND_CALL:
			p->calls++;
			break;
		case OKCOV_KIND_JMP_IND:
		case OKCOV_KIND_CALL_IND:
			p->indirect++;
			break;
		default:
			break;
		}
		if (pi->insn.flags & OKCOV_INSN_RIPREL)
			p->riprel++;
	}
	/* Off fillers; drop what cannot or need not be recorded. */
	for (i = k = 0; i < p->nleaders; i++) {
		a = p->leaders[i];
		while ((at = okcov_plan_at(p, a)) && okcov_plan_filler(&at->insn))
			a += at->insn.len;
		if (!at || (a >= p->start && a <= p->entry) ||
		    at->insn.kind == OKCOV_KIND_INT3 ||
		    at->insn.kind == OKCOV_KIND_UD || okcov_plan_is_jt(p, a))
			continue;
		p->leaders[k++] = a;
	}
	sort(p->leaders, k, sizeof(*p->leaders), okcov_plan_cmp_ulong, NULL);
	for (i = p->nleaders = 0; i < k; i++)
		if (!i || p->leaders[i] != p->leaders[i - 1])
			p->leaders[p->nleaders++] = p->leaders[i];
	/* Edge blocks: judged against the leaders above, not yet moved. */
	k = p->nleaders;
	for (i = j = 0; i < k; i++) {
		if (okcov_plan_edge_block(p, p->leaders[i], p->leaders + i + 1,
					  k - i - 1)) {
			p->edges++;
			continue;
		}
		p->leaders[j++] = p->leaders[i];
	}
	p->nleaders = j;
	return 0;
}

/*
 * Each part decodes in address order onto p->insns: only parts found out
 * of order (a .cold part below its parent) need the sort, which costs a
 * large function more than decoding it does.
 */
static bool okcov_plan_sorted(const struct okcov_plan *p)
{
	unsigned int i;

	for (i = 1; i < p->ninsns; i++)
		if (p->insns[i - 1].addr >= p->insns[i].addr)
			return false;
	return true;
}

/* One reading of the function around @addr: okcov_plan_function(). */
static int okcov_plan_once(unsigned long addr, struct okcov_plan *p)
{
	const struct okcov_plan_insn *first;
	unsigned long start, end;
	size_t len;
	bool mod;
	int ret;

	memset(p, 0, sizeof(*p));
	ret = -EACCES;
	if (addr - okcov_g.text_start < okcov_g.text_size)
		goto out;
	ret = -ENXIO;
	if (!okcov_symbol_bounds(addr, p->name, &len, &start, &end, &mod))
		goto out;
	p->start = start;
	p->end = end;
	p->entry = start;
	ret = -EFBIG;
	if (end - start > OKCOV_PLAN_MAX_SIZE)
		goto out;
	p->region[0].start = start;
	p->region[0].end = end;
	p->nregions = 1;
	p->bytes = end - start;
	ret = okcov_plan_decode(p, start, end);
	if (!ret)
		ret = okcov_plan_find_cold(p);
	if (ret)
		goto out;
	if (!okcov_plan_sorted(p))
		sort(p->insns, p->ninsns, sizeof(*p->insns),
		     okcov_plan_cmp_insn, NULL);
	/* An endbr64, or the 4-byte nop IBT seals an unused one into. */
	first = okcov_plan_at(p, start);
	if (first && ((first->insn.flags & OKCOV_INSN_ENDBR) ||
		      (first->insn.kind == OKCOV_KIND_NOP &&
		       first->insn.len == 4)))
		p->entry = start + first->insn.len;
	ret = okcov_plan_leaders(p);
	/* copy.c's layout: a record per leader, an int3 after each part. */
	if (!ret)
		p->copy_size = p->bytes + p->widen +
			       p->nleaders * OKCOV_COPY_RECORD + p->nregions;
out:
	p->verdict = ret;
	return ret;
}

/* Calls that never return, after which compilers leave int3 padding. */
static const char *const okcov_noreturns[] = {
	"__stack_chk_fail", "fortify_panic", "__fortify_panic", "panic",
	"do_exit", "make_task_dead", "kthread_exit", "usercopy_abort",
	"__ubsan_handle_builtin_unreachable",
};

/*
 * Is the int3 at @p->insns[@i], after a call, padding that nothing
 * reaches? The call's target is a function that never returns (by name,
 * its start), int3s alone follow to the end of the part, and no direct
 * branch of the function lands on them (nor an indirect one can: the
 * function has none). A kprobe's int3 there would have the rest of its
 * instruction after it, or be a branch's target.
 */
static bool okcov_plan_noreturn_pad(const struct okcov_plan *p,
				    unsigned int i)
{
	const struct okcov_plan_insn *call = &p->insns[i - 1];
	unsigned long start, end, first = p->insns[i].addr, last;
	char name[KSYM_SYMBOL_LEN];
	unsigned int j, k;
	size_t len;
	bool mod;

	if (p->indirect)
		return false;
	for (j = i + 1; j < p->ninsns; j++)
		if (p->insns[j].addr != p->insns[j - 1].addr + 1 ||
		    p->insns[j].insn.kind != OKCOV_KIND_INT3)
			break;
	last = p->insns[j - 1].addr;
	/* The next instruction, if any, is another part's. */
	if (j < p->ninsns && p->insns[j].addr == last + 1)
		return false;
	for (k = 0; k < p->ninsns; k++) {
		const struct okcov_plan_insn *b = &p->insns[k];

		if (okcov_plan_branch(&b->insn) &&
		    okcov_plan_target(b) >= first && okcov_plan_target(b) <= last)
			return false;
	}
	if (!okcov_symbol_bounds(okcov_plan_target(call), name, &len, &start,
				 &end, &mod) ||
	    start != okcov_plan_target(call) || mod)
		return false;
	for (k = 0; k < ARRAY_SIZE(okcov_noreturns); k++)
		if (!strcmp(name, okcov_noreturns[k]))
			return true;
	return false;
}

/*
 * Was the text caught being patched? text_poke_bp() (ftrace turning an
 * fentry call into its nop and back, a jump label, a static call) puts an
 * int3 on an instruction's first byte while it rewrites the rest: the
 * decoder then sees an int3 where the code falls through, followed by
 * the tail of some instruction (often undecodable). Padding int3s follow
 * a jmp, a ret, another int3, or a call that never returns
 * (okcov_plan_noreturn_pad()).
 */
bool okcov_plan_patching(const struct okcov_plan *p)
{
	const struct okcov_plan_insn *pi, *prev;
	unsigned int i;

	for (i = 1; i < p->ninsns; i++) {
		pi = &p->insns[i];
		prev = pi - 1;
		if (pi->insn.kind != OKCOV_KIND_INT3 ||
		    prev->addr + prev->insn.len != pi->addr)
			continue;
		switch (prev->insn.kind) {
		case OKCOV_KIND_JMP:
		case OKCOV_KIND_JMP_IND:
		case OKCOV_KIND_RET:
		case OKCOV_KIND_INT3:
		case OKCOV_KIND_UD:
			continue;
		case OKCOV_KIND_CALL:
			if (okcov_plan_noreturn_pad(p, i))
				continue;
			return true;
		default:
			return true;
		}
	}
	return false;
}

/*
 * Plan the function around @addr into @p (zeroed first; free it with
 * okcov_plan_free()). 0 when it can be copied, else the verdict; @p says
 * as much as was found either way (name and bounds once there is a
 * function). -ENOMEM is the only error that is not a verdict. A reading
 * that looks caught in the middle of a text patch (undecodable, or an
 * int3 where code falls through) is read again, a few times, a few
 * milliseconds apart: the patch is over by then. What stays so (a
 * kprobe's int3, an int3 after a call that does not return) is planned
 * as it reads. May sleep.
 */
int okcov_plan_function(unsigned long addr, struct okcov_plan *p)
{
	unsigned int tries;
	int ret;

	for (tries = 0;; tries++) {
		ret = okcov_plan_once(addr, p);
		if (tries == 3 || ret == -ENOMEM ||
		    (ret != -EILSEQ && !okcov_plan_patching(p)))
			return ret;
		okcov_plan_reset(p);
		usleep_range(2000, 4000);
	}
}

/*
 * KIODEEP's check of a proposed leader, with @p the caller's last plan
 * (zeroed at first; kept while the leaders stay in its function): 0 when
 * okcov decoded the function around @addr and an instruction starts at
 * @addr; -EILSEQ when it decoded it and none does; 1 when it could not
 * tell (kprobes then judges alone); -ENOMEM. May sleep.
 */
int okcov_plan_boundary(struct okcov_plan *p, unsigned long addr)
{
	/* A .cold part is a function of its own to kallsyms: so be it. */
	if (!p->nregions || !okcov_plan_inside(p, addr)) {
		okcov_plan_free(p);
		if (okcov_plan_function(addr, p) == -ENOMEM)
			return -ENOMEM;
	}
	/* A function okcov will not copy may still be decoded in full. */
	if (!p->ninsns || !okcov_plan_inside(p, addr) ||
	    (p->verdict && p->verdict != -EOPNOTSUPP))
		return 1;
	return okcov_plan_at(p, addr) ? 0 : -EILSEQ;
}

/*
 * /sys/kernel/debug/okcov/plan: write an address (0x..., from
 * /proc/kallsyms), read the plan of the function around it:
 *
 *	function NAME START END
 *	verdict ERRNO REASON [at ADDR]
 *	region START END			(one per part, body first)
 *	size BYTES insns N leaders N widen N copy N riprel N calls N indirect N
 *	     tables N edges N			(one line: tables, switches'
 *						followed; edge blocks, not
 *						leaders)
 *	insn ADDR LEN				(every instruction, in order)
 *	leader ADDR				(in order)
 */
static void okcov_plan_format(const struct okcov_plan *p, struct okcov_text *t)
{
	unsigned int i;

	okcov_text_printf(t, "function %s 0x%lx 0x%lx\n",
			  p->name[0] ? p->name : "-", p->start, p->end);
	okcov_text_printf(t, "verdict %d %s", p->verdict,
			  okcov_plan_reason(p->verdict));
	if (p->bad)
		okcov_text_printf(t, " at 0x%lx", p->bad);
	okcov_text_printf(t, "\n");
	for (i = 0; i < p->nregions; i++)
		okcov_text_printf(t, "region 0x%lx 0x%lx\n", p->region[i].start,
				  p->region[i].end);
	okcov_text_printf(t, "size %u insns %u leaders %u widen %u copy %u riprel %u calls %u indirect %u tables %u edges %u\n",
			  p->bytes, p->ninsns, p->nleaders, p->widen,
			  p->copy_size, p->riprel, p->calls, p->indirect,
			  p->njt, p->edges);
	for (i = 0; i < p->ninsns; i++)
		okcov_text_printf(t, "insn 0x%lx %u\n", p->insns[i].addr,
				  p->insns[i].insn.len);
	for (i = 0; i < p->nleaders; i++)
		okcov_text_printf(t, "leader 0x%lx\n", p->leaders[i]);
}

/* The plan file's maker (inspect.c): a verdict is text, not an error. */
static int okcov_plan_show(unsigned long addr, struct okcov_text *t)
{
	struct okcov_plan *p;
	int ret;

	p = kmalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	ret = okcov_plan_function(addr, p);
	if (ret != -ENOMEM) {
		okcov_plan_format(p, t);
		ret = 0;
	}
	okcov_plan_free(p);
	kfree(p);
	return ret;
}

void okcov_plan_init(struct dentry *dir)
{
	okcov_inspect_file(dir, "plan", okcov_plan_show);
}
