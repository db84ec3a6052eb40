/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every kernel-version difference okcov cares about (and, in arch.h, every
 * architecture difference), nothing else.
 * Force-included before each file (see Kbuild); the core files are written
 * against today's upstream names. Where a version number would lie (stable
 * backports), module/compat/Kbuild.include probes the header tree and
 * passes OKCOV_HAVE_* / OKCOV_* defines instead.
 */
#ifndef _OKCOV_COMPAT_H
#define _OKCOV_COMPAT_H

#include <linux/ftrace.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched.h>

/* 6.3: vm_flags became read-only; vm_flags_{set,clear}() write them. */
#ifndef OKCOV_HAVE_VM_FLAGS_SET
static inline void vm_flags_clear(struct vm_area_struct *vma,
				  unsigned long flags)
{
	vma->vm_flags &= ~flags;
}

static inline void vm_flags_set(struct vm_area_struct *vma,
				unsigned long flags)
{
	vma->vm_flags |= flags;
}
#endif

/* 6.2: timer_start's (expires, flags) became (bucket_expiry). */
#ifdef OKCOV_TIMER_START_BUCKET
#define OKCOV_TIMER_START_PROBE_PARAMS \
	void *data, struct timer_list *timer, unsigned long bucket_expiry
#else
#define OKCOV_TIMER_START_PROBE_PARAMS \
	void *data, struct timer_list *timer, unsigned long expires, \
	unsigned int flags
#endif

/* 6.16: sched_process_exit gained the group_dead argument. */
#ifdef OKCOV_EXIT_HAS_GROUP_DEAD
#define OKCOV_EXIT_PROBE_PARAMS void *data, struct task_struct *p, bool group_dead
#else
#define OKCOV_EXIT_PROBE_PARAMS void *data, struct task_struct *p
#endif

/*
 * May the hot path, which runs without ftrace's FTRACE_OPS_FL_RCU assist,
 * treat preemption-disabled code as an RCU read-side section here? Only
 * where RCU is watching this CPU. In task context, the traceable code that
 * runs where RCU is not watching is the idle task's: x86 entry code up to
 * the point RCU watches is noinstr (objtool checks that it calls nothing
 * traceable outside instrumentation_begin/end, which come after
 * ct_user_exit/ct_irq_enter), but the idle loop calls traceable code after
 * ct_idle_enter() (6.1: cpuidle_enter_state() -> the driver's ->enter(),
 * e.g. acpi_idle_enter(); play_dead() on CPU offline), always as the idle
 * task (PF_IDLE, also set by play_idle_precise()). Interrupts and NMIs,
 * where RCU may be entering or leaving, are rejected by in_task() first.
 * A flag test, where rcu_is_watching() is an out-of-line call.
 */
static __always_inline bool okcov_rcu_usable(void)
{
	return !is_idle_task(current);
}

/* 6.4: a module's memory became mod->mem[]; before, its core_layout. */
static inline void okcov_module_text(const struct module *mod,
				     unsigned long *start, unsigned long *size)
{
#ifdef OKCOV_HAVE_MODULE_MEMORY
	*start = (unsigned long)mod->mem[MOD_TEXT].base;
	*size = mod->mem[MOD_TEXT].size;
#else
	*start = (unsigned long)mod->core_layout.base;
	*size = mod->core_layout.text_size;
#endif
}

/*
 * The loader's record that one module uses another's symbols (sancov.c
 * reads a module's target_list): <linux/module.h>'s up to 6.12, private
 * to kernel/module/internal.h in 7.x, with the same fields since 2.6.35.
 */
#if defined(CONFIG_MODULE_UNLOAD) && !defined(OKCOV_HAVE_MODULE_USE)
struct module_use {
	struct list_head source_list;
	struct list_head target_list;
	struct module *source, *target;
};
#endif

/*
 * An ftrace callback's argument @n: ftrace_regs became opaque in 6.8
 * (<linux/ftrace_regs.h>); on 6.1's x86_64 it is the pt_regs ftrace
 * saved (with the argument registers: DYNAMIC_FTRACE_WITH_ARGS).
 */
#ifdef OKCOV_HAVE_FTRACE_REGS_H
#define okcov_ftrace_arg(fregs, n)	ftrace_regs_get_argument(fregs, n)
#else
#define okcov_ftrace_arg(fregs, n)	regs_get_kernel_argument(&(fregs)->regs, n)
#endif

/*
 * system_percpu_wq is system_wq's new name, and system_dfl_wq
 * system_unbound_wq's (Debian's 6.12 has them too); 7.x logs a
 * deprecation notice for work queued on the old ones.
 */
#ifndef OKCOV_HAVE_SYSTEM_PERCPU_WQ
#define system_percpu_wq system_wq
#endif
#ifndef OKCOV_HAVE_SYSTEM_DFL_WQ
#define system_dfl_wq system_unbound_wq
#endif

/*
 * ftrace's hash of an ops' filter, kernel/trace/trace.h's struct
 * ftrace_hash, which no header exports (its entries, struct
 * ftrace_func_entry, are in <linux/ftrace.h>). Unchanged from 3.x to 7.3.
 * funcset.c reads the filter of its own ops to learn ftrace's list of
 * traceable functions in one pass; only it changes that filter, under
 * okcov_hook_mutex, which it holds while it reads.
 */
struct okcov_ftrace_hash {
	unsigned long		size_bits;
	struct hlist_head	*buckets;
	unsigned long		count;
	unsigned long		flags;
	struct rcu_head		rcu;
};

static inline struct okcov_ftrace_hash *
okcov_filter_hash(struct ftrace_ops *ops)
{
	return (struct okcov_ftrace_hash *)
		rcu_dereference_raw(ops->func_hash->filter_hash);
}

#include "arch.h"

#endif /* _OKCOV_COMPAT_H */
