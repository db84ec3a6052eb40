// SPDX-License-Identifier: GPL-2.0
/*
 * okcov: OpenBSD's kcov(4) for stock Linux kernels, as /dev/okcov.
 */

#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/sysfs.h>

#include "okcov.h"

/* 2 GiB of buffer: keeps n * 8 far from overflow. */
#define OKCOV_LIMIT_MAX		(1UL << 28)

unsigned long okcov_max_entries = OKCOV_DEFAULT_ENTRIES;
module_param_named(max_entries, okcov_max_entries, ulong, 0444);
MODULE_PARM_DESC(max_entries, "Largest KIOSETBUFSIZE, in 8-byte entries");

/*
 * Counters userspace reads in /sys/module/okcov/parameters/: what a
 * harness needs to know was lost, and what a test needs to see leaked.
 */
struct okcov_stats okcov_stats;

static int okcov_stat_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%ld\n", atomic_long_read(kp->arg));
}

static int okcov_stat_set(const char *val, const struct kernel_param *kp)
{
	return -EPERM;
}

static const struct kernel_param_ops okcov_stat_ops = {
	.set	= okcov_stat_set,
	.get	= okcov_stat_get,
};

module_param_cb(descriptors, &okcov_stat_ops, &okcov_stats.descriptors, 0444);
MODULE_PARM_DESC(descriptors, "Descriptors alive (open, DYING, or awaiting their grace period)");
module_param_cb(entries, &okcov_stat_ops, &okcov_stats.entries, 0444);
MODULE_PARM_DESC(entries, "Task-hash entries alive; each pins a task_struct");
module_param_cb(remote_dropped, &okcov_stat_ops, &okcov_stats.remote_dropped, 0444);
MODULE_PARM_DESC(remote_dropped, "Remote events not recorded: no owner tag or section slot left");
module_param_cb(remote_reclaimed, &okcov_stat_ops, &okcov_stats.remote_reclaimed, 0444);
MODULE_PARM_DESC(remote_reclaimed, "Owner tags reclaimed from timers deleted or work cancelled before they ran");

unsigned long okcov_text_start, okcov_text_size;

/*
 * Modules loaded and unloaded while okcov is: the function set follows
 * them (ftrace.c), and their deep probes and copies go with them (deep.c,
 * copy.c). Here, above them all, so that none calls another.
 */
static int okcov_module_event(struct notifier_block *nb, unsigned long state,
			      void *data)
{
	if (state != MODULE_STATE_COMING && state != MODULE_STATE_GOING)
		return NOTIFY_DONE;
	if (state == MODULE_STATE_GOING) {
		okcov_deep_module(data);
		okcov_copy_module(data);
	}
	okcov_ftrace_module(data, state == MODULE_STATE_COMING);
	return NOTIFY_DONE;
}

static struct notifier_block okcov_module_nb = {
	.notifier_call	= okcov_module_event,
};

/*
 * /sys/kernel/debug/okcov/, root's: the planner's and the copier's
 * inspection files (plan.c, copy.c), where the architecture has them.
 */
static struct dentry *okcov_debugfs_dir;

static void okcov_debugfs_init(void)
{
	if (!debugfs_initialized())
		return;
	okcov_debugfs_dir = debugfs_create_dir("okcov", NULL);
	if (IS_ERR(okcov_debugfs_dir)) {
		okcov_debugfs_dir = NULL;
		return;
	}
	okcov_plan_init(okcov_debugfs_dir);
	okcov_copy_init(okcov_debugfs_dir);
}

static int __init okcov_init(void)
{
	int ret;

	okcov_module_text(THIS_MODULE, &okcov_text_start, &okcov_text_size);

	if (!okcov_max_entries || okcov_max_entries > OKCOV_LIMIT_MAX) {
		pr_err("max_entries must be 1..%lu\n", OKCOV_LIMIT_MAX);
		return -EINVAL;
	}

	ret = okcov_ftrace_init();
	if (ret)
		goto err_ftrace;
	ret = register_module_notifier(&okcov_module_nb);
	if (ret)
		goto err_notifier;
	ret = okcov_remote_init();
	if (ret)
		goto err_remote;
	/* Before anything can enable: it counts the comparisons' sources. */
	ret = okcov_sancov_init();
	if (ret)
		goto err_sancov;
	ret = okcov_dev_init();
	if (ret)
		goto err_dev;
	/* Last: they say so and go on where they cannot serve. */
	okcov_linux_init();
	okcov_debugfs_init();
	return 0;

err_dev:
	okcov_sancov_cleanup();
err_sancov:
	okcov_remote_cleanup();
err_remote:
	unregister_module_notifier(&okcov_module_nb);
err_notifier:
	okcov_ftrace_cleanup();
err_ftrace:
	return ret;
}

static void __exit okcov_unload(void)
{
	debugfs_remove(okcov_debugfs_dir);
	okcov_copy_cleanup();
	okcov_linux_cleanup();
	okcov_dev_cleanup();
	okcov_sancov_cleanup();
	okcov_remote_cleanup();
	/* Every okcov_free() callback has run, and dropped its hook user. */
	rcu_barrier();
	unregister_module_notifier(&okcov_module_nb);
	okcov_deep_cleanup();
	okcov_ftrace_cleanup();
}

module_init(okcov_init);
module_exit(okcov_unload);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("OpenBSD kcov(4) coverage device for Linux");
MODULE_AUTHOR("okcov developers");
