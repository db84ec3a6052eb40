/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What differs between the architectures okcov builds for (x86_64, arm64),
 * and nothing else. Included by compat.h.
 */
#ifndef _OKCOV_COMPAT_ARCH_H
#define _OKCOV_COMPAT_ARCH_H

/*
 * OKCOV_FTRACE_TRAMPOLINE: ftrace.c's ops->trampoline. x86_64 brings its
 * own (tramp.S). arm64 has none and must not set one: ftrace calls
 * okcov_ftrace_func() directly from the call site's literal pool where the
 * kernel has DYNAMIC_FTRACE_WITH_CALL_OPS (6.12, 7.x), through its list
 * function where it has only WITH_REGS (6.1), and a custom trampoline out
 * of a BL's range (a module may sit anywhere in 2 GiB) is an ftrace bug
 * on 6.1.
 */
#ifdef CONFIG_X86_64
#define OKCOV_FTRACE_TRAMPOLINE ((unsigned long)okcov_ftrace_tramp)
#else
#define OKCOV_FTRACE_TRAMPOLINE 0UL
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
