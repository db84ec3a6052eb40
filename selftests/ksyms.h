/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /proc/kallsyms as a sorted table of text symbols, to turn the raw PCs of
 * an okcov buffer into function names. A PC belongs to the symbol with the
 * greatest address at or below it, so this works whether the PC is the
 * function's address (6.1) or its address + 4 after an endbr64 (IBT).
 */
#ifndef OKCOV_KSYMS_H
#define OKCOV_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ksym {
	uint64_t addr;
	const char *name;
	const char *mod;	/* "okcov_target" for [okcov_target], or NULL */
};

/* Load (or reload) /proc/kallsyms: 0, or a negative errno. */
int ksyms_load(void);

/* Number of text symbols loaded. */
size_t ksyms_count(void);

/*
 * The symbol containing pc (the first of its aliases), or NULL if pc is
 * below every symbol or implausibly far (> 1 MiB) past the nearest one.
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

#endif /* OKCOV_KSYMS_H */
