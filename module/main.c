// SPDX-License-Identifier: GPL-2.0
/*
 * okcov: OpenBSD's kcov(4) for stock Linux kernels, as /dev/okcov.
 */

#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/rcupdate.h>

#include "okcov.h"

/* 2 GiB of buffer: keeps n * 8 far from overflow. */
#define OKCOV_LIMIT_MAX		(1UL << 28)

unsigned long okcov_max_entries = OKCOV_DEFAULT_ENTRIES;
module_param_named(max_entries, okcov_max_entries, ulong, 0444);
MODULE_PARM_DESC(max_entries, "Largest KIOSETBUFSIZE, in 8-byte entries");

/*
 * Counters, one read-only file each in /sys/kernel/debug/okcov/: what a
 * harness needs to know was lost, and what a test needs to see leaked.
 */
struct okcov_stats okcov_stats;

static int okcov_stat_get(void *data, u64 *val)
{
	*val = atomic_long_read(data);
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(okcov_stat_fops, okcov_stat_get, NULL, "%llu\n");

static void okcov_stats_init(struct dentry *dir)
{
	static const struct {
		const char	*name;
		atomic_long_t	*counter;
	} stats[] = {
		{ "descriptors", &okcov_stats.descriptors },
		{ "entries", &okcov_stats.entries },
		{ "hook_installs", &okcov_stats.hook_installs },
		{ "remote_dropped", &okcov_stats.remote_dropped },
		{ "remote_reclaimed", &okcov_stats.remote_reclaimed },
		{ "reach_queued", &okcov_stats.reach_queued },
		{ "reach_installed", &okcov_stats.reach_installed },
		{ "reach_refused", &okcov_stats.reach_refused },
		{ "reach_dropped", &okcov_stats.reach_dropped },
		{ "reach_capped", &okcov_stats.reach_capped },
		{ "reach_ahead", &okcov_stats.reach_ahead },
		{ "reach_ahead_hit", &okcov_stats.reach_ahead_hit },
		{ "reach_us", &okcov_stats.reach_us },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(stats); i++)
		debugfs_create_file_unsafe(stats[i].name, 0444, dir,
					   stats[i].counter, &okcov_stat_fops);
}

struct okcov_globals okcov_g __read_mostly = {
	.task_ctx_mask	= NMI_MASK | HARDIRQ_MASK | SOFTIRQ_OFFSET,
};

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
 * /sys/kernel/debug/okcov/, root's: the counters, and the planner's and
 * the copier's inspection files (plan.c, copy.c), where the architecture
 * has them.
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
	okcov_stats_init(okcov_debugfs_dir);
	okcov_plan_init(okcov_debugfs_dir);
	okcov_copy_init(okcov_debugfs_dir);
}

static int __init okcov_init(void)
{
	int ret;

	okcov_module_text(THIS_MODULE, &okcov_g.text_start, &okcov_g.text_size);

	if (!okcov_max_entries || okcov_max_entries > OKCOV_LIMIT_MAX) {
		pr_err("max_entries must be 1..%lu\n", OKCOV_LIMIT_MAX);
		return -EINVAL;
	}

	okcov_funcset_init();
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
	/* Everything is up: hook_at_load's install may start. */
	okcov_hook_preload();
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
