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
 * OKCOV_HAVE_KASLR_OFFSET: kaslr_offset() works in a module. arm64's
 * reads kimage_vaddr, which is exported; x86_64's reads _text, which is
 * not (linux.c finds it another way).
 */
#ifdef CONFIG_ARM64
#define OKCOV_HAVE_KASLR_OFFSET
#endif

#endif /* _OKCOV_COMPAT_ARCH_H */
