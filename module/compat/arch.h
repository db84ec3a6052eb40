/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What differs between the architectures okcov builds for (x86_64, arm64),
 * and nothing else. Included by compat.h.
 */
#ifndef _OKCOV_COMPAT_ARCH_H
#define _OKCOV_COMPAT_ARCH_H

/*
 * okcov_ftrace_set_tramp(ops): make okcov's trampoline the one ftrace.c's
 * ops calls, where the kernel lets a module's ops bring one. ftrace
 * patches a function's entry to call ops->trampoline wherever the ops is
 * the function's only tracer (ftrace_get_addr_new(), FTRACE_FL_TRAMP).
 *  x86_64: tramp.S.
 *  arm64 with DYNAMIC_FTRACE_WITH_CALL_OPS and WITH_DIRECT_CALLS (6.4
 *  on; Debian's 6.12 and 7.x): tramp-arm64.S, as ops->trampoline and as
 *  ops->direct_call. A site in BL range of it calls it; one out of range
 *  (ftrace_find_callable_addr(): "rely on the ftrace_caller trampoline
 *  which knows how to indirectly reach that trampoline through
 *  ops->direct_call") calls ftrace_caller, which loads the ops from the
 *  site's literal and branches to its direct_call before saving
 *  anything. Not register_ftrace_direct(): a direct ops owns each of its
 *  functions alone (a BPF trampoline or a second direct user gets EBUSY
 *  on all of them), and its function set is fixed while registered (a
 *  function added to it has no direct_functions entry: a WARN in
 *  ftrace_get_addr_new()), where okcov's follows modules.
 *  arm64 before that (Debian's 6.1: WITH_REGS only): none. ftrace would
 *  branch to ops->trampoline from every site, and a site out of BL range
 *  of it is an ftrace_bug() (its module PLT reaches ftrace's own code
 *  only); Debian's RANDOMIZE_MODULE_REGION_FULL puts okcov anywhere in a
 *  2 GiB window around the kernel. okcov_ftrace_func() then runs
 *  through ftrace's list function (a module's ops is always DYNAMIC).
 */
struct ftrace_ops;
void okcov_ftrace_tramp(void);

#if defined(CONFIG_X86_64)
static inline void okcov_ftrace_set_tramp(struct ftrace_ops *ops)
{
	ops->trampoline = (unsigned long)okcov_ftrace_tramp;
}
#elif defined(CONFIG_ARM64) && \
	defined(CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS) && \
	defined(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)
static inline void okcov_ftrace_set_tramp(struct ftrace_ops *ops)
{
	ops->trampoline = (unsigned long)okcov_ftrace_tramp;
	ops->direct_call = (unsigned long)okcov_ftrace_tramp;
}
#else
static inline void okcov_ftrace_set_tramp(struct ftrace_ops *ops)
{
}
#endif

/*
 * Where linux.c looks for _text, which kaslr_offset() reads and a module
 * cannot link against: at OKCOV_KERNEL_START plus a multiple of
 * OKCOV_KASLR_ALIGN. x86_64's offset is a multiple of
 * CONFIG_PHYSICAL_ALIGN (at least 2 MiB), arm64's of 64 KiB. (arm64's
 * kaslr_offset() read the exported kimage_vaddr on 6.1: Kbuild.include's
 * OKCOV_KASLR_OFFSET_EXPORTED; 6.1 also lists no _text in kallsyms.)
 */
/*
 * kallsyms resolves nothing below _stext, which is _text on x86_64 and
 * one segment above it on arm64 (.head.text): OKCOV_STEXT_GAP.
 */
#ifdef CONFIG_X86_64
#define OKCOV_KERNEL_START	__START_KERNEL
#define OKCOV_KASLR_ALIGN	SZ_2M
#define OKCOV_STEXT_GAP		0
#elif defined(CONFIG_ARM64)
#define OKCOV_KERNEL_START	KIMAGE_VADDR
#define OKCOV_KASLR_ALIGN	SZ_64K
#define OKCOV_STEXT_GAP		SEGMENT_ALIGN
#endif

/*
 * okcov_kprobe_trapped(regs), in a kprobe's pre handler: did the probe's
 * trap enter it, with an interrupt level of its own on top of the probed
 * code's? x86_64 enters it two ways. Through the int3: exc_int3() ->
 * irqentry_nmi_enter() adds NMI_OFFSET + HARDIRQ_OFFSET, so in_nmi() is
 * true even when the probed code ran in a syscall. Through the jump of an
 * optimised probe: optimized_callback(), in the probed code's own context.
 * The frames tell which: the detour builds pt_regs right below the probed
 * code's stack pointer (arch/x86/kernel/kprobes/opt.c: the template
 * pushes ss, sp and flags, then "regs->sp += sizeof(long)"), so
 * regs->sp == regs + 1; an int3 from kernel mode leaves a 6-word gap
 * between them (entry_64.S, "create a 6-word gap to allow the int3
 * handler to emulate a call"). Both 6.1 to 7.3. arm64's BRK handler runs
 * in the probed code's context: never.
 */
struct pt_regs;
#ifdef CONFIG_X86_64
static __always_inline bool okcov_kprobe_trapped(const struct pt_regs *regs)
{
	return regs->sp != (unsigned long)(regs + 1);
}
#else
static __always_inline bool okcov_kprobe_trapped(const struct pt_regs *regs)
{
	return false;
}
#endif

#endif /* _OKCOV_COMPAT_ARCH_H */
