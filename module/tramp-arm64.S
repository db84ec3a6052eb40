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
 * step (a)): return. That is all a thread that is not attached pays.
 *
 * The record, in assembly, for the thread okcov records, as tramp.S's
 * copy record does on x86_64 (okcov.h, okcov_cur): this CPU runs an
 * attached thread and no remote timer section (okcov_hot is exactly
 * .task), okcov_cur holds an entry (OKCOV_CUR, a thread's own, with a
 * claim of its own), that entry records TRACE_PC, the stack we run on
 * is its task's (not an IRQ, softirq or overflow stack, nor the
 * previous task's at the end of __schedule()), and current's preempt
 * count says task context (okcov_context(): no NMI, no hardirq, no
 * softirq being served). Preemption goes off for it where the kernel
 * has any (CONFIG_PREEMPTION: the count raised and dropped as
 * preempt_disable_notrace() and preempt_enable_notrace() do, C making
 * the schedule a drop to 0 owes; without it nothing preempts kernel code
 * here), so the entry read from okcov_cur stays (an RCU read side,
 * okcov_task_unlink()) and nothing migrates between the read and the
 * write. Interrupts stay on: no interrupt writes to a thread's own area
 * (task context only). It claims as okcov_claim() and records as
 * okcov_record_entry(): area[0] counts; with call sites (OKCOV_CALL_SITES)
 * first x9 plus pc_delta unless the caller is a function the set leaves
 * out (okcov_quiet_caller()); then the BL's address (ftrace's ip) plus
 * entry_delta, alone where one slot is left. No register but x10-x17
 * (the AAPCS's to clobber here; x9 holds the return address) is touched
 * and nothing is called but, rarely, okcov_tramp_resched().
 *
 * Anything else (a remote timer section on this CPU, a caller in
 * okcov's own text, a TRACE_CMP thread, a stack or context that does
 * not match, PREEMPT_RT's per-task softirq count): the C path
 * (okcov_call_c), okcov_tramp_slow(), which looks the thread up.
 * arm64 has no deep copies: its result is 0 and goes unused.
 *
 * No pointer authentication here: x30 and x9 are neither signed nor
 * authenticated (the function signs its own LR in its prologue). A BTI
 * landing pad where the kernel's text is guarded, as SYM_FUNC_START
 * puts one: "br x17" needs it.
 */

#include <linux/linkage.h>
#include <asm/asm-offsets.h>
#include <asm/assembler.h>
#include <asm/insn.h>
#include <asm/memory.h>

#include "record.h"

/* x0-x8, then our frame record, then the traced function's */
#define OKCOV_FRAME_OURS	80
#define OKCOV_FRAME_FUNC	96
#define OKCOV_FRAME_SIZE	112

/* thread_info.preempt.count, the low word of preempt_count on little-endian */
#ifdef CONFIG_CPU_BIG_ENDIAN
#define OKCOV_TI_COUNT		(TSK_TI_PREEMPT + 4)
#else
#define OKCOV_TI_COUNT		TSK_TI_PREEMPT
#endif

/*
 * The C path: the argument registers saved under two frame records (the
 * function's, then ours, as ftrace_caller makes them for the unwinder),
 * \fn called with ftrace's ip (the BL) and parent_ip (the function's LR),
 * then back into the function with its FP and LR as they came.
 */
	.macro	okcov_call_c, fn
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
	sub	x0, x30, #AARCH64_INSN_SIZE
	mov	x1, x9
	bl	\fn
	ldp	x0, x1, [sp]
	ldp	x2, x3, [sp, #16]
	ldp	x4, x5, [sp, #32]
	ldp	x6, x7, [sp, #48]
	ldr	x8, [sp, #64]
	ldr	x10, [sp, #OKCOV_FRAME_OURS + 8]
	ldp	x29, x30, [sp, #OKCOV_FRAME_FUNC]
	add	sp, sp, #OKCOV_FRAME_SIZE
	ret	x10
	.endm

/*
 * okcov_claim() for \n slots of the entry x12: x14 the count, x13 the
 * slot before the first claimed. Where count + \n is above the capacity
 * or wraps (adds sets C, and ccmp then leaves C set, Z clear: "hi"),
 * to \full with nothing written. The count first, then the records.
 */
	.macro	okcov_claim_slots, n, full
	ldr	x13, [x12, #OKCOV_ATTACH_AREA]
	ldr	x14, [x13]
	ldr	x17, [x12, #OKCOV_ATTACH_CAP]
	adds	x16, x14, #\n
	ccmp	x16, x17, #2, cc
	b.hi	\full
	str	x16, [x13]
	add	x13, x13, x14, lsl #3
	.endm

/* ftrace's ip (the BL's address) plus entry_delta, at x13 + \off */
	.macro	okcov_store_entry, off
	ldr	x17, [x12, #OKCOV_ATTACH_ENTRY_DELTA]
	add	x17, x17, x30
	sub	x17, x17, #AARCH64_INSN_SIZE
	str	x17, [x13, #\off]
	.endm

	.text

SYM_CODE_START(okcov_ftrace_tramp)
#ifdef CONFIG_ARM64_BTI_KERNEL
	bti	c
#endif
	adr_l	x10, okcov_hot
	get_this_cpu_offset x11
	ldrh	w10, [x10, x11]
	cbnz	w10, .Lokcov_warm
	mov	x10, x30
	mov	x30, x9
	ret	x10

.Lokcov_warm:
#ifndef CONFIG_PREEMPT_RT
	cmp	w10, #1
	b.ne	.Lokcov_slow
	/* current (sp_el0): its preempt count says task context (in_task()) */
	mrs	x15, sp_el0
	ldr	w10, [x15, #OKCOV_TI_COUNT]
	adr_l	x11, okcov_g
	ldr	w14, [x11, #OKCOV_G_TASK_CTX_MASK]
	tst	w10, w14
	b.ne	.Lokcov_slow
#ifdef CONFIG_PREEMPTION
	/*
	 * preempt_disable_notrace(): the CPU we stay on, the entry we read.
	 * w10 keeps the count as it was, for preempt_enable_notrace().
	 */
	add	w13, w10, #1
	str	w13, [x15, #OKCOV_TI_COUNT]
#endif
	get_this_cpu_offset x13
	adr_l	x12, okcov_cur
	ldr	x12, [x12, x13]
	cbz	x12, .Lokcov_miss
	/* sp within the entry's task's stack: [stack, stack + THREAD_SIZE) */
	ldr	x14, [x12, #OKCOV_ATTACH_STACK]
	sub	x13, sp, x14
	cmp	x13, #(1 << THREAD_SHIFT)
	b.hs	.Lokcov_miss
	ldr	w13, [x12, #OKCOV_ATTACH_MODE]
	cmp	w13, #OKCOV_RECORD_MODE
	b.ne	.Lokcov_miss
	/* With call sites (OKCOV_CALL_SITES) and a caller (x9): a pair. */
	ldr	w13, [x12, #OKCOV_ATTACH_FLAGS]
	tbz	w13, #OKCOV_RECORD_CALL_SITES_BIT, .Lokcov_one
	cbz	x9, .Lokcov_one
	/* A call from okcov's own text: the C path (okcov_record_entry()). */
	ldp	x13, x14, [x11, #OKCOV_G_TEXT_START]
	sub	x13, x9, x13
	cmp	x13, x14
	b.lo	.Lokcov_miss
	/* okcov_quiet_caller(): a left-out caller, the entry alone */
	ldp	x13, x14, [x11, #OKCOV_G_QUIET_BASE]
	sub	x13, x9, x13
	lsr	x13, x13, #OKCOV_RECORD_QUIET_SHIFT
	cmp	x13, x14
	b.hs	.Lokcov_pair
	ldr	x14, [x11, #OKCOV_G_QUIET_MAP]
	lsr	x17, x13, #6
	ldr	x17, [x14, x17, lsl #3]
	lsr	x17, x17, x13
	tbnz	x17, #0, .Lokcov_one
.Lokcov_pair:
	/*
	 * x9 plus pc_delta, then the entry. Fewer than two slots left: the
	 * entry alone if one is.
	 */
	okcov_claim_slots 2, .Lokcov_tight
	ldr	x17, [x12, #OKCOV_ATTACH_PC_DELTA]
	add	x17, x9, x17
	str	x17, [x13, #8]
	okcov_store_entry 16
.Lokcov_done:
#ifdef CONFIG_PREEMPTION
	/*
	 * preempt_enable_notrace(): the count as it was; the whole word 0 is
	 * a count of 0 with need_resched set (stored negated): C schedules.
	 */
	str	w10, [x15, #OKCOV_TI_COUNT]
	ldr	x13, [x15, #TSK_TI_PREEMPT]
	cbz	x13, .Lokcov_resched
#endif
	mov	x10, x30
	mov	x30, x9
	ret	x10

.Lokcov_tight:
	/* x14, x17: the count and the capacity the pair's claim read */
	cmp	x14, x17
	b.hs	.Lokcov_done
.Lokcov_one:
	/*
	 * The entry alone, where a slot is left: apart from the pair, the
	 * usual record, so that the pair takes no branch more.
	 */
	okcov_claim_slots 1, .Lokcov_done
	okcov_store_entry 8
	b	.Lokcov_done

.Lokcov_miss:
#ifdef CONFIG_PREEMPTION
	/* The C path's own preempt_enable_notrace() schedules if need be. */
	str	w10, [x15, #OKCOV_TI_COUNT]
#endif
	b	.Lokcov_slow
#ifdef CONFIG_PREEMPTION
.Lokcov_resched:
	okcov_call_c okcov_tramp_resched
#endif
#endif
.Lokcov_slow:
	okcov_call_c okcov_tramp_slow
SYM_CODE_END(okcov_ftrace_tramp)
