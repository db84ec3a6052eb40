// SPDX-License-Identifier: GPL-2.0
/*
 * Coverage source 1: the entry of every traceable function of the kernel
 * and its modules, through an ftrace_ops with a trampoline of its own.
 *
 * The hook is installed by the first KIOENABLE (each TRACE descriptor holds
 * a reference) and removed hook_linger_ms after the last reference went
 * (disable, thread exit, close while enabled): an idle okcov costs
 * nothing, and a harness that re-enables between runs does not pay the
 * (seconds long) install each time.
 *
 * With hook_at_load=1 a worker installs it right after load and holds a
 * reference of its own until unload, so that no KIOENABLE waits for an
 * install: one that comes while the worker installs takes a reference
 * without the mutex and returns at once; its thread records from the
 * moment ftrace has patched the functions it runs (hook_installs in
 * debugfs turns 1). The price is the bystander's, a load and a branch per
 * traced call, on every thread, from load to unload.
 *
 * The trampoline. Wherever okcov is a function's only tracer, ftrace makes
 * the function's fentry site call ops->trampoline; x86 leaves a trampoline
 * the ops brings alone (arch_ftrace_update_trampoline(): "The ftrace_ops
 * caller may set up its own trampoline"). ftrace's own saves the argument
 * registers and calls the callback, about forty instructions before the
 * callback can say "not me". Ours (tramp.S) first reads okcov_hot, this
 * CPU's "may anything here record" (okcov.h), and returns at once when
 * not: every thread but an attached one pays a load and a branch. Where
 * another tracer shares a function, ftrace calls okcov_ftrace_func()
 * through its list function instead, which runs the same checks.
 *
 * okcov_hot.task follows the scheduler: a sched_switch probe, registered
 * with the hook, sets it for the task switched in. It is registered before
 * the ftrace_ops and before any thread attaches (with hook_at_load, at
 * load), and removed after the ftrace_ops, when nothing records any more.
 */

#include <linux/ftrace.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <linux/workqueue.h>

#include "okcov.h"

DEFINE_PER_CPU(union okcov_hot, okcov_hot);
DEFINE_PER_CPU(struct okcov_attach *, okcov_cur);

static char *filter;
module_param(filter, charp, 0444);
MODULE_PARM_DESC(filter, "Comma-separated globs: trace only these functions");

static char *exclude;
module_param(exclude, charp, 0444);
MODULE_PARM_DESC(exclude, "Comma-separated globs: never trace these functions");

static bool call_sites = true;
module_param(call_sites, bool, 0644);
MODULE_PARM_DESC(call_sites,
		 "With each function entry, record its call site in the caller (read at KIOENABLE)");

static unsigned int hook_linger_ms = 5000;
module_param(hook_linger_ms, uint, 0644);
MODULE_PARM_DESC(hook_linger_ms,
		 "Keep the ftrace hook this long after the last descriptor left TRACE");

static bool hook_at_load;
module_param(hook_at_load, bool, 0444);
MODULE_PARM_DESC(hook_at_load,
		 "Install the ftrace hook in the background at load and keep it until unload");

static bool hook_installed;		/* [H] okcov_hook_mutex */
static bool funcset_applied;		/* [H] */
static bool switch_probed;		/* [H] */
static DEFINE_MUTEX(okcov_hook_mutex);
/* [a] TRACE descriptors, and hook_at_load's own while hook_preload_ref */
static atomic_t hook_users = ATOMIC_INIT(0);
/* [H] written, read without it by okcov_hook_get()'s fast path */
static bool hook_preload_ref;

/*
 * Steps (b) to (d) of the reject order (okcov.h), and the record. With
 * @redirect, where the traced call goes on: 0 for the function itself,
 * or its deep copy's (copy.c). Only a call that records goes into a
 * copy: a bystander, an interrupt, an NMI run the function. A TRACE_CMP
 * thread records no entry, but goes into copies too (their comparisons,
 * cmp.c), and deep_reach notes what it reaches.
 */
static __always_inline unsigned long okcov_trace_ip(unsigned long ip,
						    unsigned long parent_ip,
						    bool redirect)
{
	struct okcov_attach *a = okcov_call_get();
	unsigned long dest = 0;

	if (a) {
		if (READ_ONCE(a->mode) == OKCOV_MODE_TRACE_PC)
			okcov_record_entry(a, ip, parent_ip);
		okcov_reach_noted(ip);
		if (redirect)
			dest = okcov_copy_redirect(ip);
		okcov_pc_put();
	}
	return dest;
}

/*
 * From tramp.S, once step (a) let us in: @ip is the fentry site,
 * @parent_ip the traced function's return address. Returns 0, or the
 * deep copy tramp.S returns into instead of the function. Where ftrace
 * shares the function with another tracer (okcov_ftrace_func()), the
 * function runs.
 */
unsigned long notrace okcov_tramp_slow(unsigned long ip,
				       unsigned long parent_ip)
{
	return okcov_trace_ip(ip, parent_ip, true);
}

/*
 * From tramp-arm64.S's record, which raised the preempt count itself and
 * dropped it to 0 with need_resched set: the schedule its
 * preempt_enable_notrace() owes, as the kernel's own makes it.
 */
void notrace okcov_tramp_resched(unsigned long ip, unsigned long parent_ip)
{
	preempt_disable_notrace();
	preempt_enable_notrace();
}

/* ftrace's list function calls this where okcov shares a function. */
static void notrace okcov_ftrace_func(unsigned long ip, unsigned long parent_ip,
				      struct ftrace_ops *op,
				      struct ftrace_regs *fregs)
{
	if (likely(okcov_cpu_cold()))
		return;
	okcov_trace_ip(ip, parent_ip, false);
}

/*
 * No FTRACE_OPS_FL_RECURSION nor FTRACE_OPS_FL_RCU: either one makes ftrace
 * call us through ftrace_ops_assist_func() (a recursion lock, an
 * out-of-line rcu_is_watching() and an indirect call, for every traced
 * function of every thread). The callback bounds its own recursion and
 * checks RCU itself (okcov.h). No FTRACE_OPS_FL_SAVE_REGS either. No
 * FTRACE_OPS_FL_ALLOC_TRAMP: the trampoline is ours, and stays.
 */
static struct ftrace_ops okcov_ftrace_ops = {
	.func		= okcov_ftrace_func,
};

/* Never registered: okcov_funcset_module() asks it what ftrace can trace. */
static struct ftrace_ops okcov_probe_ops;

static struct tracepoint *okcov_switch_tp;

static void notrace okcov_probe_sched_switch(void *data, bool preempt,
					     struct task_struct *prev,
					     struct task_struct *next,
					     unsigned int prev_state)
{
	/* In __schedule(), interrupts off: an RCU-sched read side. */
	struct okcov_attach *a = okcov_task_hot(next);

	__this_cpu_write(okcov_hot.task, !!a);
	a = okcov_cur_of(a);
	__this_cpu_write(okcov_cur, a);
	if (a) {
		/*
		 * Against okcov_task_unlink() on another CPU: either it sees
		 * @a here and takes it off, or we see its mode NONE.
		 */
		smp_mb();
		if (READ_ONCE(a->mode) == OKCOV_MODE_NONE)
			__this_cpu_write(okcov_cur, NULL);
	}
}

/*
 * The sched_switch probe, before the ftrace_ops and gone after it;
 * hook_at_load registers it before its worker installs the ops.
 * Caller: okcov_hook_mutex.
 */
static int okcov_switch_probe(void)
{
	int ret = 0;

	if (!switch_probed) {
		ret = tracepoint_probe_register(okcov_switch_tp,
						okcov_probe_sched_switch, NULL);
		if (ret)
			pr_err("cannot register the sched_switch probe: %d\n",
			       ret);
		switch_probed = !ret;
	}
	return ret;
}

static void okcov_switch_unprobe(void)
{
	if (switch_probed)
		tracepoint_probe_unregister(okcov_switch_tp,
					    okcov_probe_sched_switch, NULL);
	switch_probed = false;
}

static int okcov_hook_install(void)
{
	int ret;

	ret = okcov_switch_probe();
	if (ret)
		return ret;
	ret = register_ftrace_function(&okcov_ftrace_ops);
	if (ret) {
		pr_err("cannot install the ftrace hook: %d\n", ret);
		okcov_switch_unprobe();
		return ret;
	}
	atomic_long_inc(&okcov_stats.hook_installs);
	return 0;
}

/*
 * Nothing records any more. unregister_ftrace_function() returns once no
 * task can be inside the trampoline (synchronize_rcu_tasks() for a
 * dynamic ops); a probe still running reads the hash under RCU. The
 * okcov_hot bytes it leaves behind are stale "yes" at worst.
 */
static void okcov_hook_remove(void)
{
	unregister_ftrace_function(&okcov_ftrace_ops);
	okcov_switch_unprobe();
}

static void okcov_hook_reap(struct work_struct *work)
{
	mutex_lock(&okcov_hook_mutex);
	if (hook_installed && !atomic_read(&hook_users)) {
		okcov_hook_remove();
		hook_installed = false;
	}
	mutex_unlock(&okcov_hook_mutex);
}

static DECLARE_DELAYED_WORK(okcov_hook_reaper, okcov_hook_reap);

/* The okcov_attach.flags of this source for a descriptor enabled now. */
unsigned int okcov_entry_flags(void)
{
	return READ_ONCE(call_sites) ? OKCOV_CALL_SITES : 0;
}

/*
 * Make the function set, once per load: the exclusions stay in the ops
 * across installs. Caller: okcov_hook_mutex.
 */
static int okcov_funcset_ready(void)
{
	int ret = 0;

	if (!funcset_applied) {
		ret = okcov_funcset_apply(&okcov_ftrace_ops, filter && *filter);
		funcset_applied = !ret;
	}
	return ret;
}

/* The function set made and the hook installed. Caller: okcov_hook_mutex. */
static int okcov_hook_ensure(void)
{
	int ret = okcov_funcset_ready();

	if (!ret && !hook_installed) {
		ret = okcov_hook_install();
		hook_installed = !ret;
	}
	return ret;
}

/*
 * A descriptor goes TRACE: make sure the hook is installed. May sleep,
 * but not while hook_at_load's worker installs: its reference makes the
 * hook stay, and the descriptor records once it is in.
 */
int okcov_hook_get(void)
{
	int ret = 0;

	if (READ_ONCE(hook_preload_ref) && atomic_inc_not_zero(&hook_users))
		return 0;
	mutex_lock(&okcov_hook_mutex);
	ret = okcov_hook_ensure();
	if (!ret)
		atomic_inc(&hook_users);
	mutex_unlock(&okcov_hook_mutex);
	return ret;
}

/*
 * Deep probes: is the function at @start one the hook traces, and where is
 * its entry (okcov_funcset_entry())? Or, for a .cold part, which has no
 * entry, is a function named @parent (@len long) traced
 * (okcov_funcset_named())? Makes the function set first if no KIOENABLE
 * did yet. May sleep.
 */
int okcov_traced_function(unsigned long start, char *parent, size_t len,
			  unsigned long *entry)
{
	int ret;

	mutex_lock(&okcov_hook_mutex);
	ret = okcov_funcset_ready();
	if (!ret && parent)
		ret = okcov_funcset_named(&okcov_ftrace_ops, &okcov_probe_ops,
					  parent, len);
	else if (!ret)
		ret = okcov_funcset_entry(&okcov_ftrace_ops, &okcov_probe_ops,
					  start, entry);
	mutex_unlock(&okcov_hook_mutex);
	return ret;
}

/*
 * Deep on reach's look ahead: the entry of the function at @start where
 * the set has it, else 0 (okcov_traced_function() without asking ftrace
 * why not). May sleep.
 */
unsigned long okcov_set_entry(unsigned long start)
{
	unsigned long entry = 0;

	mutex_lock(&okcov_hook_mutex);
	if (okcov_funcset_ready() ||
	    okcov_funcset_entry(&okcov_ftrace_ops, NULL, start, &entry))
		entry = 0;
	mutex_unlock(&okcov_hook_mutex);
	return entry;
}

/*
 * Has ftrace a record (an fentry site it patches) at @ip? For @ip a
 * function's start, anywhere in that function (ftrace maps sym+0 to its
 * fentry site). copy.c asks it to find the site it turns into a nop.
 */
bool okcov_ftrace_site(unsigned long ip)
{
	int ret;

	mutex_lock(&okcov_hook_mutex);
	ret = okcov_ftrace_has(&okcov_probe_ops, ip);
	mutex_unlock(&okcov_hook_mutex);
	return ret;
}

/* A descriptor left TRACE. Removal happens later, in a worker. */
void okcov_hook_put(void)
{
	if (atomic_dec_and_test(&hook_users))
		mod_delayed_work(system_percpu_wq, &okcov_hook_reaper,
				 msecs_to_jiffies(READ_ONCE(hook_linger_ms)));
}

/*
 * hook_at_load: install as the first KIOENABLE would, keeping the
 * reference okcov_hook_preload() took. If that fails (the log says why),
 * the reference goes, and the next KIOENABLE tries again, for the
 * descriptors enabled meanwhile too.
 */
static void okcov_hook_preload_work(struct work_struct *work)
{
	int ret;

	mutex_lock(&okcov_hook_mutex);
	ret = okcov_hook_ensure();
	if (ret) {
		okcov_switch_unprobe();
		WRITE_ONCE(hook_preload_ref, false);
	}
	mutex_unlock(&okcov_hook_mutex);
	if (ret) {
		pr_err("hook_at_load: no hook installed: %d\n", ret);
		okcov_hook_put();
	}
}

static DECLARE_WORK(okcov_hook_preloader, okcov_hook_preload_work);

/*
 * The end of module init: with hook_at_load, start the install. The
 * sched_switch probe first, at once: the sanitizer hooks of a thread
 * enabled during the install record wherever it runs.
 */
void okcov_hook_preload(void)
{
	if (!hook_at_load)
		return;
	mutex_lock(&okcov_hook_mutex);
	if (okcov_switch_probe()) {
		mutex_unlock(&okcov_hook_mutex);
		return;
	}
	atomic_inc(&hook_users);
	WRITE_ONCE(hook_preload_ref, true);
	mutex_unlock(&okcov_hook_mutex);
	queue_work(system_dfl_wq, &okcov_hook_preloader);
}

/* The filter= and exclude= parameters: a glob matching nothing is an error. */
static int okcov_set_globs(const char *globs, bool notrace_globs)
{
	char *copy, *cur, *glob;
	int ret = 0;

	if (!globs || !*globs)
		return 0;
	copy = kstrdup(globs, GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	cur = copy;
	while ((glob = strsep(&cur, ",")) && !ret) {
		glob = strim(glob);
		if (!*glob)
			continue;
		if (notrace_globs)
			ret = ftrace_set_notrace(&okcov_ftrace_ops, glob,
						 strlen(glob), 0);
		else
			ret = ftrace_set_filter(&okcov_ftrace_ops, glob,
						strlen(glob), 0);
		if (ret)
			pr_err("%s glob '%s' matches no function: %d\n",
			       notrace_globs ? "exclude" : "filter", glob, ret);
	}
	kfree(copy);
	return ret;
}

/*
 * @mod is coming or going (main.c's module notifier): the function set
 * follows modules loaded and unloaded after it was made.
 */
void okcov_ftrace_module(struct module *mod, bool coming)
{
	/* With filter= the user named the functions: none joins later. */
	if (coming && filter && *filter)
		return;
	mutex_lock(&okcov_hook_mutex);
	if (funcset_applied)
		okcov_funcset_module(&okcov_ftrace_ops, &okcov_probe_ops, mod,
				     coming);
	mutex_unlock(&okcov_hook_mutex);
}

static void okcov_find_switch_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_switch"))
		okcov_switch_tp = tp;
}

int okcov_ftrace_init(void)
{
	int ret;

	for_each_kernel_tracepoint(okcov_find_switch_tp, NULL);
	if (!okcov_switch_tp) {
		pr_err("tracepoint sched_switch not found\n");
		return -ENOENT;
	}
	okcov_ftrace_set_tramp(&okcov_ftrace_ops);
	ret = okcov_set_globs(filter, false);
	if (!ret)
		ret = okcov_set_globs(exclude, true);
	if (ret)
		ftrace_free_filter(&okcov_ftrace_ops);
	return ret;
}

/* Unload: no descriptor is TRACE any more. */
void okcov_ftrace_cleanup(void)
{
	/* An install in flight ends first; hook_at_load's reference goes. */
	cancel_work_sync(&okcov_hook_preloader);
	if (hook_preload_ref) {
		hook_preload_ref = false;
		atomic_dec(&hook_users);
	}
	cancel_delayed_work_sync(&okcov_hook_reaper);
	WARN_ON_ONCE(atomic_read(&hook_users));
	if (hook_installed) {
		okcov_hook_remove();
		hook_installed = false;
	}
	/* hook_at_load's, if its worker never ran */
	okcov_switch_unprobe();
	/* No probe may still run our code once the module is gone. */
	tracepoint_synchronize_unregister();
	ftrace_free_filter(&okcov_ftrace_ops);
	ftrace_free_filter(&okcov_probe_ops);
	okcov_funcset_cleanup();
}
