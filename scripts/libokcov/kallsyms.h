/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /proc/kallsyms (or a copy of it) as a sorted table of text symbols, to
 * turn the raw PCs of a coverage buffer into function names: the one
 * loader of okcov-cover, the selftests, the benchmarks and the demo.
 *
 * A PC belongs to the symbol with the greatest address at or below it, so
 * this works whether the PC is the function's address (6.1) or its
 * address + 4 after an endbr64 (IBT). Padding and CFI preambles
 * (__pfx_*, __cfi_*) are left out: they belong to the function after
 * them. Aliases (symbols at one address) are sorted by name, so the
 * first is the same on every kernel.
 */
#ifndef OKCOV_KALLSYMS_H
#define OKCOV_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KSYMS_PROC		"/proc/kallsyms"

/* How far past its symbol a PC may lie and still be in it. */
#define KSYMS_MAX_OFFSET	(1UL << 20)

struct ksym {
	uint64_t addr;
	const char *name;	/* as in kallsyms */
	const char *mod;	/* "okcov_target" for [okcov_target]; NULL: the core kernel */
};

/*
 * Load (or reload) the text symbols of a file in /proc/kallsyms' format:
 * 0, -ENOENT when it lists none, -EPERM when their addresses are hidden
 * (for KSYMS_PROC, root lowers kernel.kptr_restrict to 1 and reads again
 * first), or another negative errno.
 */
int ksyms_load_file(const char *path);

/* ksyms_load_file(KSYMS_PROC). */
int ksyms_load(void);

/* The text symbols loaded, by address: ksyms_get(0 .. ksyms_count() - 1). */
size_t ksyms_count(void);
const struct ksym *ksyms_get(size_t i);

/* Where symbol i's function ends: the next greater address, within max. */
uint64_t ksyms_end(size_t i, uint64_t max);

/*
 * The symbol containing pc (the first of its aliases), or NULL if pc is
 * below every symbol or more than KSYMS_MAX_OFFSET past the nearest one.
 * *nalias receives the number of symbols at that same address.
 */
const struct ksym *ksyms_lookup(uint64_t pc, size_t *nalias);

/* Whether pc lies in a function whose name (any alias) satisfies pred. */
bool ksyms_pc_matches(uint64_t pc,
		      bool (*pred)(const struct ksym *s, const void *ctx),
		      const void *ctx);

/*
 * On this architecture: the prefix of the kernel's syscall entry points,
 * the entry code above them, and the two functions one of which calls
 * them (the dispatcher, or the entry code where it is inlined).
 */
#ifdef __aarch64__
#define KSYM_SYS_PREFIX "__arm64_sys_"
#define KSYM_SYS_ENTRY "el0_svc_common"
#define KSYM_SYS_CALLER "invoke_syscall"
#define KSYM_SYS_CALLER2 "invoke_syscall"
#else
#define KSYM_SYS_PREFIX "__x64_sys_"
#define KSYM_SYS_ENTRY "do_syscall_64"
#define KSYM_SYS_CALLER "do_syscall_64"
#define KSYM_SYS_CALLER2 "x64_sys_call"
#endif

/* pred for ksyms_pc_matches: the syscall ctx ("getpid" matches
 * __x64_sys_getpid, __do_sys_getpid, sys_getpid; not sys_getppid).
 */
bool ksym_is_syscall(const struct ksym *s, const void *sc);

/* pred: the symbol's name contains ctx. */
bool ksym_name_contains(const struct ksym *s, const void *substr);

/* pred: the symbol belongs to module ctx. */
bool ksym_in_module(const struct ksym *s, const void *mod);

/* pred: a function named exactly ctx. */
bool ksym_named(const struct ksym *s, const void *name);

/* The address of the first symbol named name (in mod, or anywhere if mod
 * is NULL), or 0.
 */
uint64_t ksyms_addr(const char *name, const char *mod);

/* "name+0xoff [mod]" into buf, for diagnostics. */
const char *ksyms_format(uint64_t pc, char *buf, size_t len);

#endif /* OKCOV_KALLSYMS_H */
