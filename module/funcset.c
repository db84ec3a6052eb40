// SPDX-License-Identifier: GPL-2.0
/*
 * The default function set: every traceable function except what Linux's
 * kcov leaves uninstrumented (KCOV_INSTRUMENT := n in kernel/sched/,
 * kernel/locking/, kernel/rcu/, kernel/entry/, kernel/softirq.c, mm/ slab,
 * slub, page_alloc, memcontrol, vmstat, failslab, kmemleak, lib/ string,
 * rbtree, find_bit, list_debug, debugobjects, arch/x86/kernel/apic/,
 * stack unwinding and dumpstack): code whose coverage is "not a function
 * of syscall inputs", and that makes two runs of one program differ.
 *
 * ftrace excludes by name, not by file, so each group is a list of globs
 * derived from the function names of those files (linux 6.1), checked
 * against the available_filter_functions of the supported kernels so that
 * they match nothing outside the group's subsystem that a syscall would
 * reach. A glob that matches nothing on a kernel is skipped. Several of
 * those files are not traceable at all on Debian's kernels (lib/string.c,
 * rbtree.c, lockdep.c...): they need no glob.
 *
 * Every glob costs one pass of ftrace over all its records, with a symbol
 * lookup per record: the list is short on purpose, and applied once per
 * module load, at the first hook install. scripts/BENCH.md has what each
 * group removes on each kernel.
 */

#include <linux/ftrace.h>
#include <linux/kallsyms.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/string.h>

#include "okcov.h"

static bool whole_kernel;
module_param(whole_kernel, bool, 0444);
MODULE_PARM_DESC(whole_kernel,
		 "Trace the whole kernel: do not leave out what Linux's kcov leaves uninstrumented");

struct okcov_funcset_group {
	const char		*name;
	const char * const	*globs;
};

static const char * const okcov_noise_sched[] = {
	"__schedule", "schedule", "preempt_schedule*", "__cond_resched",
	"update_rq_clock", "clear_buddies", "__update_load_avg_*", "*cfs_rq*",
	"check_spread*", "*eevdf*", "*vruntime*", "update_deadline",
	"update_se", "dl_server_*", "*resched_curr*", "*_mm_cid*", "hrtick*",
	"migrate_disable_switch*",
	"sched_*", "*fair*", "*entity*", "psi_*", "*cpuacct*", "*_task_dl",
	"*_task_rt", "update_curr*", "try_to_wake_up", "ttwu_*",
	"__wake_up*", "finish_task_switch*", "vtime_*",
	"*migrate_*able", NULL
};

static const char * const okcov_noise_locking[] = {
	"_raw_*", "*mutex*", "*rwsem*", "down_*", "up_*", "queued_*", NULL
};

/*
 * PREEMPT_RT's sleeping spinlocks and rwlocks (spinlock_rt.c, rwbase_rt.c;
 * its rt_mutex and ww_rt_mutex functions are "*mutex*" above). Only RT
 * kernels have them: elsewhere these passes would find nothing.
 */
static const char * const okcov_noise_locking_rt[] = {
	"rt_spin_*", "rt_read_*", "rt_write_*", "rtlock_*", "*rwbase*", NULL
};

static const char * const okcov_noise_rcu[] = {
	"rcu_*", "__rcu_*", "*srcu*", "*synchronize_rcu*", "*call_rcu*", NULL
};

static const char * const okcov_noise_entry[] = {
	"*_user_mode*", "irqentry_*", NULL
};

static const char * const okcov_noise_softirq[] = {
	"*softirq*", "irq_enter*", "irq_exit*", "*tasklet*", "*local_bh*",
	NULL
};

static const char * const okcov_noise_mm[] = {
	"kmem_cache_*", "__kmalloc*", "kmalloc_*", "kfree", "*slab_*",
	"*_page_state*", "*mem_cgroup*", "*memcg*", "*obj_cgroup*",
	"*lruvec*", "*vmstat*", "*vm_event*", "__alloc_pages*",
	"get_page_from_freelist", "rmqueue*", "free_unref_page*", "*_stock",
	"__kmem_cache_*", "put_cpu_partial", "uncharge_*", "__folio_alloc*",
	"__free_pages", "free_pcp_prepare", "should_failslab",
	"should_fail_alloc_page", "*sheaf*", "__pcs_*", "*kmemleak*", NULL
};

static const char * const okcov_noise_apic[] = {
	"*apic*", NULL
};

/*
 * The unwinders, dumpstack and stacktrace, and kernel/extable.c's
 * text-address checks they make per frame. A debug kernel (KASAN,
 * kmemleak, lockdep) saves a stack trace at most allocations and lock
 * acquisitions: hundreds of thousands of records a command otherwise.
 */
static const char * const okcov_noise_unwind[] = {
	"*unwind*", "*stack_trace*", "arch_stack_walk*", "show_*stack*",
	"*orc_find*", "stack_access_ok", "get_stack_info*",
	"*kernel_text_address", "filter_irq_stacks", NULL
};

/*
 * What the kernel's debug options turn into functions of their own in
 * kernel/sched/core.c (DEBUG_PREEMPT, DEBUG_ATOMIC_SLEEP) and
 * kernel/locking/spinlock_debug.c (DEBUG_SPINLOCK), and the register
 * reader ORC's unwinder keeps out of line under KASAN. Stock kernels
 * inline them all.
 */
#if defined(CONFIG_DEBUG_PREEMPT) || defined(CONFIG_TRACE_PREEMPT_TOGGLE) || \
	defined(CONFIG_DEBUG_ATOMIC_SLEEP)
static const char * const okcov_noise_sched_debug[] = {
	"preempt_count_*", "__might_resched", "__might_sleep", NULL
};
#endif

#ifdef CONFIG_DEBUG_SPINLOCK
static const char * const okcov_noise_locking_debug[] = {
	"do_raw_*", NULL
};
#endif

/*
 * mm/slub.c's slab refill and release (allocate_slab, deactivate_slab,
 * discard_slab, __free_slab...: whether they run depends on what earlier
 * allocations left in the per-CPU slab, not on the syscall).
 */
static const char * const okcov_noise_mm_slub[] = {
	"*_slab", NULL
};

/*
 * mm/slub.c's object checks (slub_debug, on in debug kernels) and KASAN's
 * quarantine release, which frees a batch of objects in whichever thread
 * allocates when the quarantine is full.
 */
#if defined(CONFIG_SLUB_DEBUG_ON) || defined(CONFIG_KASAN)
static const char * const okcov_noise_mm_debug[] = {
	"check_bytes*", "*_debug_processing", "set_track*", "*red_left",
	"on_freelist", "check_object", "init_object", "___cache_free", NULL
};
#endif

#ifdef CONFIG_KASAN
static const char * const okcov_noise_unwind_debug[] = {
	"get_reg", NULL
};
#endif

static const struct okcov_funcset_group okcov_noise[] = {
	{ "sched",	okcov_noise_sched },
#if defined(CONFIG_DEBUG_PREEMPT) || defined(CONFIG_TRACE_PREEMPT_TOGGLE) || \
	defined(CONFIG_DEBUG_ATOMIC_SLEEP)
	{ "sched",	okcov_noise_sched_debug },
#endif
	{ "locking",	okcov_noise_locking },
#ifdef CONFIG_PREEMPT_RT
	{ "locking",	okcov_noise_locking_rt },
#endif
#ifdef CONFIG_DEBUG_SPINLOCK
	{ "locking",	okcov_noise_locking_debug },
#endif
	{ "rcu",	okcov_noise_rcu },
	{ "entry",	okcov_noise_entry },
	{ "softirq",	okcov_noise_softirq },
	{ "mm",		okcov_noise_mm },
	{ "mm",		okcov_noise_mm_slub },
#if defined(CONFIG_SLUB_DEBUG_ON) || defined(CONFIG_KASAN)
	{ "mm",		okcov_noise_mm_debug },
#endif
	{ "apic",	okcov_noise_apic },
	{ "unwind",	okcov_noise_unwind },
#ifdef CONFIG_KASAN
	{ "unwind",	okcov_noise_unwind_debug },
#endif
};

/*
 * Left out even with whole_kernel=1: interrupt glue that ftrace sees while
 * the preempt count does not (yet, or any more) say hardirq or softirq,
 * and the return-to-user path every interrupt from user mode takes.
 * in_task() cannot tell these from the thread's own work: an interrupt's
 * exit into preemption, and (7.x) the timer rearm the hrtimer interrupt
 * defers to its exit, with the clock event programming it calls.
 */
static const char * const okcov_irq_glue[] = {
	"irq_enter*", "irq_exit*", "__do_softirq", "handle_softirqs",
	"idle_cpu", "exit_to_user_mode_prepare",
	"fpregs_assert_state_consistent", "raw_irqentry_exit_cond_resched",
	"__hrtimer_rearm_deferred", "tick_program_event",
	"clockevents_program_event", NULL
};

/* Returns the number of globs that matched, or a negative errno. */
static int okcov_notrace_globs(struct ftrace_ops *ops,
			       const char * const *globs)
{
	char glob[KSYM_NAME_LEN];
	int ret, n = 0;

	for (; *globs; globs++) {
		/* ftrace parses the glob in place */
		strscpy(glob, *globs, sizeof(glob));
		ret = ftrace_set_notrace(ops, glob, strlen(glob), 0);
		if (ret == -EINVAL)
			continue;	/* matches nothing on this kernel */
		if (ret)
			return ret;
		n++;
	}
	return n;
}

/*
 * Leave the default exclusions out of @ops (not registered). With a filter
 * the user named what to trace: only the interrupt glue goes then.
 */
int okcov_funcset_apply(struct ftrace_ops *ops, bool filtered)
{
	ktime_t t0 = ktime_get();
	unsigned int i;
	int ret, n;

	n = okcov_notrace_globs(ops, okcov_irq_glue);
	if (n < 0)
		return n;
	for (i = 0; i < ARRAY_SIZE(okcov_noise) && !whole_kernel &&
	     !filtered; i++) {
		ret = okcov_notrace_globs(ops, okcov_noise[i].globs);
		if (ret < 0) {
			pr_err("cannot exclude the %s functions: %d\n",
			       okcov_noise[i].name, ret);
			return ret;
		}
		n += ret;
	}
	pr_info("function set: %d exclusion globs matched, in %lld ms\n",
		n, ktime_ms_delta(ktime_get(), t0));
	return 0;
}
