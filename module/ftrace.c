// SPDX-License-Identifier: GPL-2.0
/*
 * Coverage source 1: the entry of every traceable function of the kernel
 * and its modules, through an ftrace_ops callback.
 *
 * The hook is installed by the first KIOSETBUFSIZE and removed hook_linger_ms
 * after the last buffer is freed: an idle okcov costs nothing, and a harness
 * that reopens its descriptor between runs does not pay the (seconds long)
 * install each time.
 */

#include <linux/ftrace.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "okcov.h"

static char *filter;
module_param(filter, charp, 0444);
MODULE_PARM_DESC(filter, "Comma-separated globs: trace only these functions");

static char *exclude;
module_param(exclude, charp, 0444);
MODULE_PARM_DESC(exclude, "Comma-separated globs: never trace these functions");

static unsigned int hook_linger_ms = 5000;
module_param(hook_linger_ms, uint, 0644);
MODULE_PARM_DESC(hook_linger_ms,
		 "Keep the ftrace hook this long after the last buffer is freed");

static bool hook_installed;		/* [H] okcov_hook_mutex */
static DEFINE_MUTEX(okcov_hook_mutex);
static atomic_t hook_users = ATOMIC_INIT(0);	/* [a] live buffers */

static void notrace okcov_ftrace_func(unsigned long ip, unsigned long parent_ip,
				      struct ftrace_ops *op,
				      struct ftrace_regs *fregs)
{
	struct hlist_head *head;
	struct okcov_attach *a;

	/* The reject order and the recursion bound: see okcov.h. */
	if (likely(okcov_nobody_attached()))
		return;
	if (!in_task()) {
		/* Interrupts, softirqs and NMIs never record a thread's work. */
		return;
	}
	head = okcov_current_bucket();
	if (likely(!head))
		return;

	preempt_disable_notrace();
	a = okcov_lookup(head, current, KCOV_MODE_TRACE_PC);
	if (a)
		okcov_record_pc(a, ip);
	preempt_enable_notrace();
}

/*
 * No FTRACE_OPS_FL_RECURSION nor FTRACE_OPS_FL_RCU: either one makes ftrace
 * call us through ftrace_ops_assist_func() (a recursion lock, an
 * out-of-line rcu_is_watching() and an indirect call, for every traced
 * function of every thread). The callback bounds its own recursion and
 * checks RCU itself (okcov.h). No FTRACE_OPS_FL_SAVE_REGS either: x86's
 * per-ops trampoline then saves only the argument registers, and calls
 * the callback directly wherever okcov is a function's only tracer.
 */
static struct ftrace_ops okcov_ftrace_ops = {
	.func	= okcov_ftrace_func,
};

static void okcov_hook_reap(struct work_struct *work)
{
	mutex_lock(&okcov_hook_mutex);
	if (hook_installed && !atomic_read(&hook_users)) {
		unregister_ftrace_function(&okcov_ftrace_ops);
		hook_installed = false;
	}
	mutex_unlock(&okcov_hook_mutex);
}

static DECLARE_DELAYED_WORK(okcov_hook_reaper, okcov_hook_reap);

/* A buffer exists: make sure the hook is installed. May sleep. */
int okcov_hook_get(void)
{
	int ret = 0;

	mutex_lock(&okcov_hook_mutex);
	if (!hook_installed) {
		ret = register_ftrace_function(&okcov_ftrace_ops);
		if (ret)
			pr_err("cannot install the ftrace hook: %d\n", ret);
		else
			hook_installed = true;
	}
	if (!ret)
		atomic_inc(&hook_users);
	mutex_unlock(&okcov_hook_mutex);
	return ret;
}

/* A buffer is gone. Any context: removal happens later, in a worker. */
void okcov_hook_put(void)
{
	if (atomic_dec_and_test(&hook_users))
		mod_delayed_work(system_wq, &okcov_hook_reaper,
				 msecs_to_jiffies(READ_ONCE(hook_linger_ms)));
}

/*
 * Interrupt glue ftrace sees while the preempt count does not (yet, or any
 * more) say hardirq or softirq, and the return-to-user path every interrupt
 * from user mode takes: in_task() cannot tell these from the thread's own
 * work, so they are never traced. Linux's kcov leaves kernel/entry/ and
 * kernel/softirq.c uninstrumented for the same reason. Names a kernel
 * lacks are skipped.
 */
static const char * const okcov_irq_glue[] = {
	"irq_enter", "irq_enter_rcu", "irq_exit", "irq_exit_rcu",
	"__do_softirq", "handle_softirqs", "idle_cpu",
	"exit_to_user_mode_prepare", "fpregs_assert_state_consistent",
};

static int okcov_set_globs(const char *globs, bool notrace_globs,
			   bool strict)
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
		if (ret == -EINVAL && !strict)
			ret = 0;	/* no such function here */
		else if (ret)
			pr_err("%s glob '%s' matches no function: %d\n",
			       notrace_globs ? "exclude" : "filter", glob, ret);
	}
	kfree(copy);
	return ret;
}

int okcov_ftrace_init(void)
{
	unsigned int i;
	int ret;

	ret = okcov_set_globs(filter, false, true);
	if (!ret)
		ret = okcov_set_globs(exclude, true, true);
	for (i = 0; i < ARRAY_SIZE(okcov_irq_glue) && !ret; i++)
		ret = okcov_set_globs(okcov_irq_glue[i], true, false);
	if (ret)
		ftrace_free_filter(&okcov_ftrace_ops);
	return ret;
}

/* Unload: every buffer has been freed (the caller waited for RCU). */
void okcov_ftrace_cleanup(void)
{
	cancel_delayed_work_sync(&okcov_hook_reaper);
	WARN_ON_ONCE(atomic_read(&hook_users));
	if (hook_installed) {
		unregister_ftrace_function(&okcov_ftrace_ops);
		hook_installed = false;
	}
	ftrace_free_filter(&okcov_ftrace_ops);
}
