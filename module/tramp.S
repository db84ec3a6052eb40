/* SPDX-License-Identifier: GPL-2.0 */
/*
 * okcov's ftrace trampoline (see ftrace.c), and, at the end, the record
 * its instrumented copies call (copy.c) and their comparison hook (cmp.c).
 *
 * The trampoline: ftrace patches the fentry site of every function
 * okcov alone traces into "call okcov_ftrace_tramp", so it runs before the function's prologue, with the function's arguments
 * live in %rdi, %rsi, %rdx, %rcx, %r8, %r9 (and %rax for variadic ones),
 * and returns into the function. As ftrace's own trampolines, it may
 * clobber %r10 and %r11 and the flags, nothing else.
 *
 * Fast path: this CPU's okcov_hot says nothing here records: return. That
 * is all a thread that is not attached pays, whoever else is traced.
 * Slow path: save the argument registers, and hand the fentry site's
 * address (the return address less the call) and the traced function's
 * own return address (into its caller: ftrace's parent_ip) to
 * okcov_tramp_slow(), the C code of ftrace's callback. If it returns an
 * address (the function's deep copy, copy.c), return there instead of
 * into the function: the copy goes on from the fentry site's place with
 * the same registers and stack.
 */

#include <linux/linkage.h>
#include <linux/objtool.h>
#include <asm/frame.h>
#include <asm/ftrace.h>
#include <asm/nospec-branch.h>
#include <asm/percpu.h>
#include <asm/thread_info.h>

#include "record.h"

	.code64
	.section .text, "ax"

/* The C argument and return registers: what a call may clobber but %r10/%r11. */
.macro OKCOV_PUSH_ARGS
	pushq	%rax
	pushq	%rcx
	pushq	%rdx
	pushq	%rsi
	pushq	%rdi
	pushq	%r8
	pushq	%r9
.endm

.macro OKCOV_POP_ARGS
	popq	%r9
	popq	%r8
	popq	%rdi
	popq	%rsi
	popq	%rdx
	popq	%rcx
	popq	%rax
.endm

SYM_FUNC_START(okcov_ftrace_tramp)
	/* Its address is taken, but it is only ever called directly. */
	ANNOTATE_NOENDBR
#ifdef OKCOV_HAVE_CALL_DEPTH_ACCOUNT
	/* The fentry site's call skipped the callee's depth accounting. */
	CALL_DEPTH_ACCOUNT
#endif
	cmpw	$0, PER_CPU_VAR(okcov_hot)
	jnz	.Lokcov_slow
	RET

.Lokcov_slow:
	FRAME_BEGIN
	OKCOV_PUSH_ARGS
	/* The return address into the traced function, less the call. */
	movq	7*8+FRAME_OFFSET(%rsp), %rdi
	subq	$MCOUNT_INSN_SIZE, %rdi
	/* The traced function's return address, above ours. */
	movq	8*8+FRAME_OFFSET(%rsp), %rsi
	call	okcov_tramp_slow
	/* A deep copy (copy.c): return into it, past its fentry site. */
	testq	%rax, %rax
	jz	.Lokcov_pop
	movq	%rax, 7*8+FRAME_OFFSET(%rsp)
.Lokcov_pop:
	OKCOV_POP_ARGS
	FRAME_END
	RET
SYM_FUNC_END(okcov_ftrace_tramp)

/*
 * The record of an instrumented copy (copy.c), reached from the sequence
 * at each block leader of a copy:
 *
 *	push	$leader			the original leader's address
 *	call	okcov_copy_record
 *	lea	8(%rsp), %rsp		drops it, flags untouched
 *
 * It runs between any two instructions of the copied function, so it
 * preserves everything: the flags (pushfq first, popfq last) and every
 * register it or okcov_copy_hit() clobbers.
 *
 * Only a thread okcov records enters a copy, so the first case is the
 * record itself, in a few instructions: this CPU runs an attached thread
 * and no remote timer section (okcov_hot is exactly .task), okcov_cur
 * holds an entry (OKCOV_CUR: a thread's, with a claim of its own), that
 * entry records TRACE_PC, and the stack we run on is its task's
 * (okcov_cur is the next task's already at the end of __schedule()).
 * Interrupts go off for it: no preemption nor migration between reading
 * okcov_cur and writing, and an RCU read side for the entry. It claims
 * as okcov_claim() and records as okcov_record_block(). A TRACE_CMP
 * thread's entry (a thread in a copy for its comparisons, cmp.c) records
 * nothing, at the same cost. Then: nothing
 * on this CPU records (okcov.h, step (a): a thread that left TRACE while
 * inside a copy), or okcov_copy_hit() looks the entry up.
 */
SYM_FUNC_START(okcov_copy_record)
	/* Only ever called directly, from a copy. */
	ANNOTATE_NOENDBR
#ifdef OKCOV_HAVE_CALL_DEPTH_ACCOUNT
	/* The copy's call skipped the callee's depth accounting. */
	CALL_DEPTH_ACCOUNT
#endif
	pushfq
	cmpw	$1, PER_CPU_VAR(okcov_hot)
	jne	.Lokcov_copy_other
	cli
	pushq	%rax
	pushq	%rcx
	pushq	%rdx
	movq	PER_CPU_VAR(okcov_cur), %rax
	testq	%rax, %rax
	jz	.Lokcov_copy_miss
	movq	%rsp, %rcx
	xorq	OKCOV_ATTACH_STACK(%rax), %rcx
	cmpq	$THREAD_SIZE, %rcx
	jae	.Lokcov_copy_miss
	cmpl	$OKCOV_RECORD_MODE, OKCOV_ATTACH_MODE(%rax)
	jne	.Lokcov_copy_cmp_thread
	/* area[0] counts; at or past the capacity: full. */
	movq	OKCOV_ATTACH_AREA(%rax), %rcx
	movq	(%rcx), %rdx
	cmpq	OKCOV_ATTACH_CAP(%rax), %rdx
	jae	.Lokcov_copy_done
	/* The count first, then the record at area[count]. */
	incq	%rdx
	movq	%rdx, (%rcx)
	movq	OKCOV_ATTACH_ENTRY_DELTA(%rax), %rax
	/* Above the three: the flags, our return address, the leader. */
	addq	5*8(%rsp), %rax
	movq	%rax, (%rcx,%rdx,8)
.Lokcov_copy_done:
	popq	%rdx
	popq	%rcx
	popq	%rax
	/* The flags, interrupts included, as they were. */
	popfq
	RET

	/* A TRACE_CMP thread (deep_cmp, cmp.c): leaders are not its records. */
.Lokcov_copy_cmp_thread:
	cmpl	$OKCOV_RECORD_CMP_MODE, OKCOV_ATTACH_MODE(%rax)
	je	.Lokcov_copy_done
	jmp	.Lokcov_copy_miss

.Lokcov_copy_other:
	cmpw	$0, PER_CPU_VAR(okcov_hot)
	jnz	.Lokcov_copy_slow
	popfq
	RET

.Lokcov_copy_miss:
	popq	%rdx
	popq	%rcx
	popq	%rax
	/* Interrupts as they were, and the saved flags stay for popfq. */
	pushq	(%rsp)
	popfq
.Lokcov_copy_slow:
	FRAME_BEGIN
	OKCOV_PUSH_ARGS
	pushq	%r10
	pushq	%r11
	/* Above them: the flags, our return address, the pushed leader. */
	movq	11*8+FRAME_OFFSET(%rsp), %rdi
	call	okcov_copy_hit
	popq	%r11
	popq	%r10
	OKCOV_POP_ARGS
	FRAME_END
	popfq
	RET
SYM_FUNC_END(okcov_copy_record)

/*
 * The comparison hook of a copy made with deep_cmp (cmp.c), reached from
 * the sequence before each cmp or test the copy evaluates:
 *
 *	push	$desc			its okcov_cmp_desc, in the pool
 *	call	okcov_copy_cmp
 *	lea	8(%rsp), %rsp
 *
 * It preserves everything, as the record does. Nothing on this CPU
 * records (okcov.h, step (a)): return. A thread's own entry (okcov_cur,
 * as the record checks it) that records TRACE_PC: return, in a few
 * instructions; that thread runs the copy for its leaders. Else save
 * every general register, in an array indexed by their encoding
 * (%rax 0 .. %r15 15; %rsp's slot is filled in by the C code, %rbp's is
 * the copy's even where FRAME_BEGIN moved it), and hand it, the
 * descriptor and the copy's %rsp at the cmp to okcov_copy_cmp_hit(),
 * which looks the entry up (TRACE_CMP only) and records.
 */
SYM_FUNC_START(okcov_copy_cmp)
	/* Only ever called directly, from a copy. */
	ANNOTATE_NOENDBR
#ifdef OKCOV_HAVE_CALL_DEPTH_ACCOUNT
	/* The copy's call skipped the callee's depth accounting. */
	CALL_DEPTH_ACCOUNT
#endif
	pushfq
	cmpw	$0, PER_CPU_VAR(okcov_hot)
	jnz	.Lokcov_cmp_warm
	popfq
	RET

.Lokcov_cmp_warm:
	cmpw	$1, PER_CPU_VAR(okcov_hot)
	jne	.Lokcov_cmp_slow
	cli
	pushq	%rax
	pushq	%rcx
	movq	PER_CPU_VAR(okcov_cur), %rax
	testq	%rax, %rax
	jz	.Lokcov_cmp_look
	movq	%rsp, %rcx
	xorq	OKCOV_ATTACH_STACK(%rax), %rcx
	cmpq	$THREAD_SIZE, %rcx
	jae	.Lokcov_cmp_look
	cmpl	$OKCOV_RECORD_MODE, OKCOV_ATTACH_MODE(%rax)
	jne	.Lokcov_cmp_look
	popq	%rcx
	popq	%rax
	popfq
	RET

.Lokcov_cmp_look:
	popq	%rcx
	popq	%rax
	/* Interrupts as they were, and the saved flags stay for popfq. */
	pushq	(%rsp)
	popfq
.Lokcov_cmp_slow:
	FRAME_BEGIN
	pushq	%r15
	pushq	%r14
	pushq	%r13
	pushq	%r12
	pushq	%r11
	pushq	%r10
	pushq	%r9
	pushq	%r8
	pushq	%rdi
	pushq	%rsi
#ifdef CONFIG_FRAME_POINTER
	/* The copy's %rbp, which FRAME_BEGIN saved. */
	pushq	(%rbp)
#else
	pushq	%rbp
#endif
	/* %rsp's slot: okcov_copy_cmp_hit() writes the copy's. */
	pushq	%rax
	pushq	%rbx
	pushq	%rdx
	pushq	%rcx
	pushq	%rax
	movq	%rsp, %rdi
	/* Above the 16: our frame, the flags, our return address, desc. */
	movq	16*8+FRAME_OFFSET+2*8(%rsp), %rsi
	leaq	16*8+FRAME_OFFSET+3*8(%rsp), %rdx
	call	okcov_copy_cmp_hit
	popq	%rax
	popq	%rcx
	popq	%rdx
	popq	%rbx
	/* %rsp's slot */
	addq	$8, %rsp
#ifdef CONFIG_FRAME_POINTER
	/* %rbp's: the copy's stays where FRAME_BEGIN saved it. */
	addq	$8, %rsp
#else
	popq	%rbp
#endif
	popq	%rsi
	popq	%rdi
	popq	%r8
	popq	%r9
	popq	%r10
	popq	%r11
	popq	%r12
	popq	%r13
	popq	%r14
	popq	%r15
	FRAME_END
	popfq
	RET
SYM_FUNC_END(okcov_copy_cmp)
