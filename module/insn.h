/* SPDX-License-Identifier: GPL-2.0 */
/*
 * okcov's x86_64 instruction decoder: the length and the parts of one
 * 64-bit-mode instruction, for the instructions kernel text uses (legacy
 * one-, two- and three-byte maps, VEX and EVEX). The kernel exports no
 * decoder to modules (insn_decode() is not), so okcov has its own; it is
 * checked against binutils over every function of the test kernels'
 * vmlinux (selftests/decode/).
 *
 * insn.c includes nothing but this header, which takes its types from
 * the kernel or, built for the host test, from <stdint.h>: the same file
 * is the module's decoder and the one the test checks.
 */
#ifndef _OKCOV_INSN_H
#define _OKCOV_INSN_H

#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/types.h>
#else
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
typedef uint8_t u8;
typedef int8_t s8;
typedef uint32_t u32;
typedef int32_t s32;
typedef int64_t s64;
#endif

#define OKCOV_INSN_MAX		15	/* the architecture's longest */

/* okcov_insn.map: the opcode map the opcode byte is from. */
enum okcov_insn_map {
	OKCOV_MAP_1B,		/* one-byte opcodes */
	OKCOV_MAP_0F,		/* 0f xx */
	OKCOV_MAP_0F38,		/* 0f 38 xx */
	OKCOV_MAP_0F3A,		/* 0f 3a xx */
	OKCOV_MAP_OTHER,	/* EVEX maps 5 and 6 */
};

/* okcov_insn.kind: what the instruction does to control flow. */
enum okcov_insn_kind {
	OKCOV_KIND_OTHER,	/* falls through to the next instruction */
	OKCOV_KIND_JMP,		/* jmp rel8/rel32 */
	OKCOV_KIND_JCC,		/* jcc rel8/rel32 */
	OKCOV_KIND_LOOP,	/* loop, loope, loopne, jrcxz: rel8 only */
	OKCOV_KIND_CALL,	/* call rel32 */
	OKCOV_KIND_JMP_IND,	/* jmp r/m (ff /4, ff /5) */
	OKCOV_KIND_CALL_IND,	/* call r/m (ff /2, ff /3) */
	OKCOV_KIND_RET,		/* ret, ret imm16, lret, iret */
	OKCOV_KIND_INT3,	/* cc: int3 padding or a kprobe's breakpoint */
	OKCOV_KIND_UD,		/* ud2, ud1, ud0: BUG()/WARN() */
	OKCOV_KIND_NOP,		/* 90 (no REX.B), 0f 1f, endbr64 */
	OKCOV_KIND_STOP,	/* hlt, int, syscall, sysret...: never copied */
};

/* okcov_insn.flags */
#define OKCOV_INSN_MODRM	0x01	/* has a ModRM byte */
#define OKCOV_INSN_SIB		0x02	/* has a SIB byte */
#define OKCOV_INSN_RIPREL	0x04	/* disp32 is relative to the next insn */
#define OKCOV_INSN_VEX		0x08	/* VEX (c4, c5) encoded */
#define OKCOV_INSN_EVEX		0x10	/* EVEX (62) encoded */
#define OKCOV_INSN_ENDBR	0x20	/* endbr64 (f3 0f 1e fa) */

/*
 * One decoded instruction. Offsets count from its first byte; a size of
 * 0 means the part is absent. The branch of a JMP, JCC, LOOP or CALL is
 * its immediate: imm_off/imm_size, and rel its value sign-extended; the
 * target is the instruction's address + len + rel.
 */
struct okcov_insn {
	u8	len;		/* 1..OKCOV_INSN_MAX */
	u8	nprefix;	/* legacy prefixes (66 67 f0 f2 f3, segments) */
	u8	rex;		/* the REX byte, or 0 */
	u8	map;		/* enum okcov_insn_map */
	u8	opcode;		/* the opcode byte within its map */
	u8	modrm;		/* valid with OKCOV_INSN_MODRM */
	u8	flags;		/* OKCOV_INSN_* */
	u8	kind;		/* enum okcov_insn_kind */
	u8	modrm_off;	/* offset of ModRM */
	u8	disp_off, disp_size;	/* displacement: 0, 1 or 4 bytes */
	u8	imm_off, imm_size;	/* immediate(s): 0, 1, 2, 4 or 8 bytes */
	s32	rel;		/* a direct branch's displacement */
};

/*
 * Decode the instruction at @p, of which @avail bytes may be read. 0 and
 * @insn filled in, or -EILSEQ (no instruction okcov knows starts there:
 * an invalid or unsupported encoding) or -ENODATA (it runs past @avail).
 */
int okcov_insn_decode(struct okcov_insn *insn, const u8 *p, unsigned int avail);

#endif /* _OKCOV_INSN_H */
