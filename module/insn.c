// SPDX-License-Identifier: GPL-2.0
/*
 * okcov's x86_64 instruction decoder (insn.h), 64-bit mode only. The
 * tables follow the opcode maps of Intel's SDM (Vol. 2, Appendix A). What
 * they do not list, and what a CPU vendor decodes differently from the
 * other (66-prefixed near branches, AMD's XOP and SSE4a), is -EILSEQ
 * rather than a guessed length: a caller copies or steps over only
 * instructions whose length is certain.
 */

#include "insn.h"

/* What follows an opcode: ModRM, and an immediate of which kind. */
enum {
	XX,	/* invalid in 64-bit mode, or a prefix or escape (seen before) */
	NN,	/* nothing */
	MR,	/* ModRM */
	MB,	/* ModRM, imm8 */
	MZ,	/* ModRM, imm32 (66: imm16) */
	MT,	/* ModRM; imm8/imm32 for /0 and /1 only (f6, f7: test) */
	CR,	/* ModRM of registers only, whatever its mod: mov cr/dr */
	IB,	/* imm8 */
	IW,	/* imm16 */
	IZ,	/* imm32 (66: imm16) */
	IV,	/* imm32 (66: imm16, REX.W: imm64): mov r, imm */
	EN,	/* imm16, imm8: enter */
	MO,	/* moffs64 (67: moffs32) */
};

/* The one-byte map, a row of 16 opcodes a line. */
static const u8 map_1b[256] = {
	/* 00-0f: add, or (06 07 0e: push/pop es cs); 0f: escape */
	MR, MR, MR, MR, IB, IZ, XX, XX, MR, MR, MR, MR, IB, IZ, XX, XX,
	/* 10-1f: adc, sbb (16 17 1e 1f: push/pop ss ds) */
	MR, MR, MR, MR, IB, IZ, XX, XX, MR, MR, MR, MR, IB, IZ, XX, XX,
	/* 20-2f: and, sub (26 2e: prefixes; 27 2f: daa das) */
	MR, MR, MR, MR, IB, IZ, XX, XX, MR, MR, MR, MR, IB, IZ, XX, XX,
	/* 30-3f: xor, cmp (36 3e: prefixes; 37 3f: aaa aas) */
	MR, MR, MR, MR, IB, IZ, XX, XX, MR, MR, MR, MR, IB, IZ, XX, XX,
	/* 40-4f: REX */
	XX, XX, XX, XX, XX, XX, XX, XX, XX, XX, XX, XX, XX, XX, XX, XX,
	/* 50-5f: push, pop */
	NN, NN, NN, NN, NN, NN, NN, NN, NN, NN, NN, NN, NN, NN, NN, NN,
	/* 60-6f: (pusha popa; 62 EVEX) movsxd, (prefixes) push imul ins outs */
	XX, XX, XX, MR, XX, XX, XX, XX, IZ, MZ, IB, MB, NN, NN, NN, NN,
	/* 70-7f: jcc rel8 */
	IB, IB, IB, IB, IB, IB, IB, IB, IB, IB, IB, IB, IB, IB, IB, IB,
	/* 80-8f: group 1 (82 invalid), test xchg mov lea pop */
	MB, MZ, XX, MB, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR,
	/* 90-9f: xchg, cwde cdq (9a: call far) fwait pushf popf sahf lahf */
	NN, NN, NN, NN, NN, NN, NN, NN, NN, NN, XX, NN, NN, NN, NN, NN,
	/* a0-af: mov moffs, movs cmps, test imm, stos lods scas */
	MO, MO, MO, MO, NN, NN, NN, NN, IB, IZ, NN, NN, NN, NN, NN, NN,
	/* b0-bf: mov r8, imm8; mov r, imm */
	IB, IB, IB, IB, IB, IB, IB, IB, IV, IV, IV, IV, IV, IV, IV, IV,
	/*
	 * c0-cf: shifts, ret, (c4 c5: VEX), mov imm, enter leave lret int3
	 * int (ce: into) iret
	 */
	MB, MB, IW, NN, XX, XX, MB, MZ, EN, NN, IW, NN, NN, IB, XX, NN,
	/* d0-df: shifts, (aam aad salc) xlat, x87 */
	MR, MR, MR, MR, XX, XX, XX, NN, MR, MR, MR, MR, MR, MR, MR, MR,
	/* e0-ef: loop jrcxz, in out, call jmp (ea: jmp far), in out */
	IB, IB, IB, IB, IB, IB, IB, IB, IZ, IZ, XX, IB, NN, NN, NN, NN,
	/* f0-ff: (prefixes) int1 hlt cmc, group 3, clc..std, groups 4 5 */
	XX, NN, XX, XX, NN, NN, MT, MT, NN, NN, NN, NN, NN, NN, MR, MR,
};

/* The two-byte map, 0f xx. */
static const u8 map_0f[256] = {
	/*
	 * 00-0f: groups 6 7, lar lsl, syscall clts sysret invd wbinvd ud2,
	 * prefetch femms (0f: 3DNow!)
	 */
	MR, MR, MR, MR, XX, NN, NN, NN, NN, NN, XX, NN, XX, MR, NN, XX,
	/* 10-1f: SSE moves, prefetch and hint nops (1e: endbr, 1f: nop) */
	MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR,
	/* 20-2f: mov cr/dr, SSE converts and compares */
	CR, CR, CR, CR, XX, XX, XX, XX, MR, MR, MR, MR, MR, MR, MR, MR,
	/*
	 * 30-3f: wrmsr rdtsc rdmsr rdpmc sysenter sysexit getsec (38 3a:
	 * escapes)
	 */
	NN, NN, NN, NN, NN, NN, XX, NN, XX, XX, XX, XX, XX, XX, XX, XX,
	/* 40-4f: cmovcc */
	MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR,
	/* 50-5f: SSE arithmetic */
	MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR,
	/* 60-6f: MMX/SSE unpacks, packs, moves */
	MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR,
	/* 70-7f: pshuf, groups 12-14, pcmpeq, emms, vmread vmwrite, moves */
	MB, MB, MB, MB, MR, MR, MR, NN, MR, MR, XX, XX, MR, MR, MR, MR,
	/* 80-8f: jcc rel32 */
	IZ, IZ, IZ, IZ, IZ, IZ, IZ, IZ, IZ, IZ, IZ, IZ, IZ, IZ, IZ, IZ,
	/* 90-9f: setcc */
	MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR,
	/*
	 * a0-af: push/pop fs, cpuid bt shld, VIA PadLock, push/pop gs, rsm
	 * bts shrd, group 15, imul
	 */
	NN, NN, NN, MR, MB, MR, MR, MR, NN, NN, NN, MR, MB, MR, MR, MR,
	/* b0-bf: cmpxchg lss btr lfs lgs movzx popcnt ud1, group 8, btc bsf bsr movsx */
	MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MB, MR, MR, MR, MR, MR,
	/* c0-cf: xadd cmpps movnti pinsrw pextrw shufps, group 9, bswap */
	MR, MR, MB, MR, MB, MB, MB, MR, NN, NN, NN, NN, NN, NN, NN, NN,
	/* d0-df: MMX/SSE */
	MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR,
	/* e0-ef: MMX/SSE */
	MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR,
	/* f0-ff: MMX/SSE, ud0 */
	MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR,
};

struct okcov_range {
	u8 lo, hi;
};

/* 0f 38 xx without VEX: all ModRM, no immediate. */
static const struct okcov_range map_0f38[] = {
	{ 0x00, 0x0b },	/* SSSE3: pshufb .. pmulhrsw */
	{ 0x10, 0x10 },	/* pblendvb */
	{ 0x14, 0x15 },	/* blendvps blendvpd */
	{ 0x17, 0x17 },	/* ptest */
	{ 0x1c, 0x1e },	/* pabsb pabsw pabsd */
	{ 0x20, 0x25 },	/* pmovsx */
	{ 0x28, 0x2b },	/* pmuldq pcmpeqq movntdqa packusdw */
	{ 0x30, 0x35 },	/* pmovzx */
	{ 0x37, 0x41 },	/* pcmpgtq, pmin pmax, pmulld phminposuw */
	{ 0x80, 0x82 },	/* invept invvpid invpcid */
	{ 0xc8, 0xcd },	/* SHA */
	{ 0xcf, 0xcf },	/* gf2p8mulb */
	{ 0xdb, 0xdf },	/* AES-NI */
	{ 0xf0, 0xf1 },	/* movbe crc32 */
	{ 0xf5, 0xf6 },	/* wruss, adcx adox wrss */
	{ 0xf8, 0xfc },	/* movdir64b enqcmd movdiri, aadd... */
};

/* 0f 3a xx without VEX: all ModRM and imm8. */
static const struct okcov_range map_0f3a[] = {
	{ 0x08, 0x0f },	/* round, blend, palignr */
	{ 0x14, 0x17 },	/* pextr, extractps */
	{ 0x20, 0x22 },	/* pinsr, insertps */
	{ 0x40, 0x42 },	/* dpps dppd mpsadbw */
	{ 0x44, 0x44 },	/* pclmulqdq */
	{ 0x60, 0x63 },	/* pcmpestr pcmpistr */
	{ 0xcc, 0xcc },	/* sha1rnds4 */
	{ 0xce, 0xcf },	/* gf2p8affineqb gf2p8affineinvqb */
	{ 0xdf, 0xdf },	/* aeskeygenassist */
};

/* VEX map 0f: all ModRM but 77 (vzeroupper, vzeroall). */
static const struct okcov_range vex_0f[] = {
	{ 0x10, 0x17 },	/* moves, unpacks */
	{ 0x28, 0x2f },	/* moves, converts, compares */
	{ 0x41, 0x4b },	/* mask (k) logic */
	{ 0x50, 0x7f },	/* arithmetic, logic, shuffles, moves */
	{ 0x90, 0x93 },	/* kmov */
	{ 0x98, 0x99 },	/* kortest ktest */
	{ 0xae, 0xae },	/* vldmxcsr vstmxcsr */
	{ 0xc2, 0xc2 },	/* vcmpps */
	{ 0xc4, 0xc6 },	/* vpinsrw vpextrw vshufps */
	{ 0xd0, 0xff },	/* integer arithmetic */
};

static bool okcov_in(const struct okcov_range *r, unsigned int n, u8 op)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (op >= r[i].lo && op <= r[i].hi)
			return true;
	return false;
}

/* VEX/EVEX map 0f (1) opcodes that take an imm8: pshuf, shifts, cmp, shuf. */
static bool okcov_vex_0f_imm(u8 op)
{
	return (op >= 0x70 && op <= 0x73) || op == 0xc2 ||
	       (op >= 0xc4 && op <= 0xc6);
}

#define OKCOV_IN(r, op)	okcov_in(r, sizeof(r) / sizeof((r)[0]), op)

/* Byte @i of the instruction, if it may be read. */
static int okcov_byte(const u8 *p, unsigned int i, unsigned int avail)
{
	if (i >= OKCOV_INSN_MAX)
		return -EILSEQ;
	if (i >= avail)
		return -ENODATA;
	return p[i];
}

/*
 * ModRM at insn->modrm_off, then SIB and displacement. 64-bit and (67)
 * 32-bit addressing share the rules: rm 100 brings a SIB, mod 00 with rm
 * 101 is RIP-relative disp32, and SIB base 101 with mod 00 is disp32.
 * Returns the offset after them, or an error.
 */
static int okcov_modrm(struct okcov_insn *insn, const u8 *p,
		       unsigned int avail, bool reg_only)
{
	unsigned int i = insn->modrm_off;
	int b, mod, rm;

	b = okcov_byte(p, i++, avail);
	if (b < 0)
		return b;
	insn->modrm = b;
	insn->flags |= OKCOV_INSN_MODRM;
	mod = b >> 6;
	rm = b & 7;
	if (mod == 3 || reg_only)
		return i;
	if (rm == 4) {
		b = okcov_byte(p, i++, avail);
		if (b < 0)
			return b;
		insn->flags |= OKCOV_INSN_SIB;
		if (mod == 0 && (b & 7) == 5)
			insn->disp_size = 4;
	} else if (mod == 0 && rm == 5) {
		insn->flags |= OKCOV_INSN_RIPREL;
		insn->disp_size = 4;
	}
	if (mod == 1)
		insn->disp_size = 1;
	else if (mod == 2)
		insn->disp_size = 4;
	if (insn->disp_size)
		insn->disp_off = i;
	return i + insn->disp_size;
}

/* VEX (c4, c5) or EVEX (62) at @i: the map, opcode, ModRM and imm8. */
static int okcov_vex(struct okcov_insn *insn, const u8 *p,
		     unsigned int avail, unsigned int i)
{
	int b0 = p[i], b1, b2, op, map;

	b1 = okcov_byte(p, i + 1, avail);
	if (b1 < 0)
		return b1;
	if (b0 == 0xc5) {
		insn->flags |= OKCOV_INSN_VEX;
		map = 1;
		i += 2;
	} else {
		b2 = okcov_byte(p, i + 2, avail);
		if (b2 < 0)
			return b2;
		if (b0 == 0xc4) {
			insn->flags |= OKCOV_INSN_VEX;
			map = b1 & 0x1f;
			i += 3;
		} else {
			/* P0 bit 3 and P1 bit 2 are fixed (APX redefines them). */
			if ((b1 & 0x08) || !(b2 & 0x04))
				return -EILSEQ;
			insn->flags |= OKCOV_INSN_EVEX;
			map = b1 & 0x07;
			i += 4;
		}
	}
	op = okcov_byte(p, i, avail);
	if (op < 0)
		return op;
	insn->opcode = op;
	switch (map) {
	case 1:
		insn->map = OKCOV_MAP_0F;
		if ((insn->flags & OKCOV_INSN_VEX) && !OKCOV_IN(vex_0f, op))
			return -EILSEQ;
		if (op == 0x77) {
			if (insn->flags & OKCOV_INSN_EVEX)
				return -EILSEQ;
			return i + 1;
		}
		if (okcov_vex_0f_imm(op))
			insn->imm_size = 1;
		break;
	case 2:
		insn->map = OKCOV_MAP_0F38;
		break;
	case 3:
		insn->map = OKCOV_MAP_0F3A;
		insn->imm_size = 1;
		break;
	case 5:
	case 6:
		/* EVEX only: AVX512-FP16 */
		if (!(insn->flags & OKCOV_INSN_EVEX))
			return -EILSEQ;
		insn->map = OKCOV_MAP_OTHER;
		break;
	default:
		return -EILSEQ;
	}
	insn->modrm_off = i + 1;
	return okcov_modrm(insn, p, avail, false);
}

/* Legacy prefixes, as bits of the prefixes seen. */
#define OKCOV_P66	0x01
#define OKCOV_P67	0x02
#define OKCOV_PF2	0x04
#define OKCOV_PF3	0x08
#define OKCOV_PLOCK	0x10
#define OKCOV_PSEG	0x20

static int okcov_prefix(u8 b)
{
	switch (b) {
	case 0x66: return OKCOV_P66;
	case 0x67: return OKCOV_P67;
	case 0xf0: return OKCOV_PLOCK;
	case 0xf2: return OKCOV_PF2;
	case 0xf3: return OKCOV_PF3;
	case 0x26: case 0x2e: case 0x36: case 0x3e: case 0x64: case 0x65:
		return OKCOV_PSEG;
	}
	return 0;
}

/* The kind of a legacy-encoded instruction, once its ModRM is known. */
static u8 okcov_kind(const struct okcov_insn *insn, int pfx)
{
	u8 op = insn->opcode, reg = (insn->modrm >> 3) & 7;

	if (insn->map == OKCOV_MAP_0F) {
		if (op >= 0x80 && op <= 0x8f)
			return OKCOV_KIND_JCC;
		switch (op) {
		case 0x0b: case 0xb9: case 0xff:
			return OKCOV_KIND_UD;
		case 0x05: case 0x07: case 0x34: case 0x35:
			return OKCOV_KIND_STOP;
		case 0x1f:
			return reg == 0 ? OKCOV_KIND_NOP : OKCOV_KIND_OTHER;
		}
		return OKCOV_KIND_OTHER;
	}
	if (insn->map != OKCOV_MAP_1B)
		return OKCOV_KIND_OTHER;
	if (op >= 0x70 && op <= 0x7f)
		return OKCOV_KIND_JCC;
	if (op >= 0xe0 && op <= 0xe3)
		return OKCOV_KIND_LOOP;
	switch (op) {
	case 0xe9: case 0xeb:
		return OKCOV_KIND_JMP;
	case 0xe8:
		return OKCOV_KIND_CALL;
	case 0xc2: case 0xc3: case 0xca: case 0xcb: case 0xcf:
		return OKCOV_KIND_RET;
	case 0xcc:
		return OKCOV_KIND_INT3;
	case 0xcd: case 0xf1: case 0xf4:
		return OKCOV_KIND_STOP;
	case 0x90:
		/* 41 90 is xchg %eax, %r8d; f3 90 is pause. */
		if ((insn->rex & 1) || (pfx & OKCOV_PF3))
			return OKCOV_KIND_OTHER;
		return OKCOV_KIND_NOP;
	case 0xff:
		if (reg == 2 || reg == 3)
			return OKCOV_KIND_CALL_IND;
		if (reg == 4 || reg == 5)
			return OKCOV_KIND_JMP_IND;
		break;
	}
	return OKCOV_KIND_OTHER;
}

/* Invalid encodings within groups and mandatory-prefix rows. */
static bool okcov_invalid(const struct okcov_insn *insn, int pfx)
{
	u8 op = insn->opcode, mod = insn->modrm >> 6;
	u8 reg = (insn->modrm >> 3) & 7;

	if (insn->map == OKCOV_MAP_0F) {
		switch (op) {
		case 0xb8:	/* popcnt needs f3; jmpe is IA-64's */
			return !(pfx & OKCOV_PF3);
		case 0x78:	/* 66/f2: AMD's SSE4a extrq, insertq */
		case 0x79:
			return pfx & (OKCOV_P66 | OKCOV_PF2);
		case 0xa6:	/* PadLock: montmul xsha1 xsha256, xstore xcrypt */
		case 0xa7:
			return mod != 3;
		}
		return false;
	}
	switch (op) {
	case 0x8d:	/* lea of a register */
		return mod == 3;
	case 0x8f:	/* pop r/m is /0; the rest is AMD's XOP */
		return reg != 0;
	case 0xc6:	/* mov r/m, imm is /0; xabort, xbegin are f8 */
	case 0xc7:
		return reg != 0 && insn->modrm != 0xf8;
	case 0xfe:	/* inc, dec */
		return reg > 1;
	case 0xff:	/* far call and jmp take memory; /7 is undefined */
		return reg == 7 || (mod == 3 && (reg == 3 || reg == 5));
	}
	return false;
}

int okcov_insn_decode(struct okcov_insn *insn, const u8 *p, unsigned int avail)
{
	unsigned int i = 0, j;
	int b, pfx = 0, bit, attr, end;
	bool rexw;

	*insn = (struct okcov_insn){ 0 };
	for (;;) {
		b = okcov_byte(p, i, avail);
		if (b < 0)
			return b;
		bit = okcov_prefix(b);
		if (!bit)
			break;
		pfx |= bit;
		i++;
	}
	insn->nprefix = i;
	if ((b & 0xf0) == 0x40) {
		insn->rex = b;
		b = okcov_byte(p, ++i, avail);
		if (b < 0)
			return b;
		/* REX must come last, right before the opcode. */
		if (okcov_prefix(b) || (b & 0xf0) == 0x40)
			return -EILSEQ;
	}
	rexw = insn->rex & 0x08;

	if (b == 0xc4 || b == 0xc5 || b == 0x62) {
		/* In 64-bit mode these are always VEX and EVEX. */
		if (insn->rex ||
		    (pfx & (OKCOV_P66 | OKCOV_PF2 | OKCOV_PF3 | OKCOV_PLOCK)))
			return -EILSEQ;
		end = okcov_vex(insn, p, avail, i);
		if (end < 0)
			return end;
		goto imm;
	}

	if (b == 0x0f) {
		b = okcov_byte(p, ++i, avail);
		if (b < 0)
			return b;
		if (b == 0x38 || b == 0x3a) {
			insn->map = b == 0x38 ? OKCOV_MAP_0F38 : OKCOV_MAP_0F3A;
			b = okcov_byte(p, ++i, avail);
			if (b < 0)
				return b;
			if (insn->map == OKCOV_MAP_0F38 ?
			    !OKCOV_IN(map_0f38, b) : !OKCOV_IN(map_0f3a, b))
				return -EILSEQ;
			attr = insn->map == OKCOV_MAP_0F38 ? MR : MB;
		} else {
			insn->map = OKCOV_MAP_0F;
			attr = map_0f[b];
		}
	} else {
		insn->map = OKCOV_MAP_1B;
		attr = map_1b[b];
	}
	insn->opcode = b;
	end = ++i;
	if (attr == XX)
		return -EILSEQ;

	if (attr == MR || attr == MB || attr == MZ || attr == MT ||
	    attr == CR) {
		insn->modrm_off = i;
		end = okcov_modrm(insn, p, avail, attr == CR);
		if (end < 0)
			return end;
		if (okcov_invalid(insn, pfx))
			return -EILSEQ;
	}

	switch (attr) {
	case MB:
	case IB:
		insn->imm_size = 1;
		break;
	case MZ:
	case IZ:
		insn->imm_size = (pfx & OKCOV_P66) && !rexw ? 2 : 4;
		break;
	case MT:
		/* Only test (/0, /1) has one: f6 imm8, f7 like IZ. */
		if (((insn->modrm >> 3) & 7) > 1)
			break;
		if (insn->opcode == 0xf6)
			insn->imm_size = 1;
		else
			insn->imm_size = (pfx & OKCOV_P66) && !rexw ? 2 : 4;
		break;
	case IW:
		insn->imm_size = 2;
		break;
	case IV:
		insn->imm_size = rexw ? 8 : pfx & OKCOV_P66 ? 2 : 4;
		break;
	case EN:
		insn->imm_size = 3;
		break;
	case MO:
		insn->imm_size = pfx & OKCOV_P67 ? 4 : 8;
		break;
	}
	insn->kind = okcov_kind(insn, pfx);
	/* With 66, Intel keeps rel32 where AMD reads rel16: no length. */
	if ((pfx & OKCOV_P66) && insn->imm_size != 1 &&
	    (insn->kind == OKCOV_KIND_JMP || insn->kind == OKCOV_KIND_JCC ||
	     insn->kind == OKCOV_KIND_CALL))
		return -EILSEQ;
	if (insn->map == OKCOV_MAP_0F && insn->opcode == 0x1e &&
	    insn->modrm == 0xfa && (pfx & OKCOV_PF3)) {
		insn->kind = OKCOV_KIND_NOP;
		insn->flags |= OKCOV_INSN_ENDBR;
	}

imm:
	if (insn->imm_size)
		insn->imm_off = end;
	end += insn->imm_size;
	if (end > OKCOV_INSN_MAX)
		return -EILSEQ;
	if ((unsigned int)end > avail)
		return -ENODATA;
	insn->len = end;

	switch (insn->kind) {
	case OKCOV_KIND_JMP:
	case OKCOV_KIND_JCC:
	case OKCOV_KIND_LOOP:
	case OKCOV_KIND_CALL:
		j = insn->imm_off;
		if (insn->imm_size == 1)
			insn->rel = (s8)p[j];
		else
			insn->rel = (s32)((u32)p[j] | (u32)p[j + 1] << 8 |
					  (u32)p[j + 2] << 16 |
					  (u32)p[j + 3] << 24);
		break;
	}
	return 0;
}
