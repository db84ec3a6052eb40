/* SPDX-License-Identifier: GPL-2.0 */
/*
 * okcov's ftrace trampoline on arm64 (see ftrace.c and compat/arch.h),
 * tramp.S's counterpart.
 *
 * ftrace patches the entry of every function okcov alone traces into
 *
 *	mov	x9, x30
 *	bl	okcov_ftrace_tramp	(in BL range of the site)
 *
 * or, where the module is out of the BL's 128 MiB range (Debian's
 * RANDOMIZE_MODULE_REGION_FULL places modules anywhere in a 2 GiB
 * window), into "bl ftrace_caller", whose CALL_OPS path finds okcov's ops
 * in the site's literal and branches to its direct_call, this code, with
 * "br x17" before it saved anything. Either way it runs before the
 * function's prologue with the function's arguments live in x0-x8, x9 the
 * function's own return address (into its caller: ftrace's parent_ip),
 * x30 the function past the BL. The AAPCS lets it clobber x9-x17. It
 * returns into the function with x30 = x9, as ftrace_caller does
 * (arch/arm64/kernel/entry-ftrace.S).
 *
 * Fast path: this CPU's okcov_hot says nothing here records (okcov.h,
 * step (a)): return. Slow path: save the argument registers under two
 * frame records (the function's, then ours, as ftrace_caller makes them
 * for the unwinder), and hand the BL's address (ftrace's ip) and x9 to
 * okcov_tramp_slow(). arm64 has no deep copies: its result is 0 and goes
 * unused.
 *
 * No pointer authentication here: x30 and x9 are neither signed nor
 * authenticated (the function signs its own LR in its prologue). A BTI
 * landing pad where the kernel's text is guarded, as SYM_FUNC_START
 * puts one: "br x17" needs it.
 */

#include <linux/linkage.h>
#include <asm/assembler.h>
#include <asm/insn.h>

/* x0-x8, then our frame record, then the traced function's */
#define OKCOV_FRAME_OURS	80
#define OKCOV_FRAME_FUNC	96
#define OKCOV_FRAME_SIZE	112

	.text

SYM_CODE_START(okcov_ftrace_tramp)
#ifdef CONFIG_ARM64_BTI_KERNEL
	bti	c
#endif
	adr_l	x10, okcov_hot
	get_this_cpu_offset x11
	ldrh	w10, [x10, x11]
	cbnz	w10, .Lokcov_slow
	mov	x10, x30
	mov	x30, x9
	ret	x10

.Lokcov_slow:
	sub	sp, sp, #OKCOV_FRAME_SIZE
	stp	x29, x9, [sp, #OKCOV_FRAME_FUNC]
	add	x29, sp, #OKCOV_FRAME_FUNC
	stp	x29, x30, [sp, #OKCOV_FRAME_OURS]
	add	x29, sp, #OKCOV_FRAME_OURS
	stp	x0, x1, [sp]
	stp	x2, x3, [sp, #16]
	stp	x4, x5, [sp, #32]
	stp	x6, x7, [sp, #48]
	str	x8, [sp, #64]
	/* ftrace's ip: the BL; its parent_ip: the function's LR */
	sub	x0, x30, #AARCH64_INSN_SIZE
	mov	x1, x9
	bl	okcov_tramp_slow
	ldp	x0, x1, [sp]
	ldp	x2, x3, [sp, #16]
	ldp	x4, x5, [sp, #32]
	ldp	x6, x7, [sp, #48]
	ldr	x8, [sp, #64]
	/* Back into the function, with its FP and LR as they came. */
	ldr	x10, [sp, #OKCOV_FRAME_OURS + 8]
	ldp	x29, x30, [sp, #OKCOV_FRAME_FUNC]
	add	sp, sp, #OKCOV_FRAME_SIZE
	ret	x10
SYM_CODE_END(okcov_ftrace_tramp)
