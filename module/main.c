// SPDX-License-Identifier: GPL-2.0
/*
 * okcov: OpenBSD's kcov(4) for stock Linux kernels, as /dev/okcov.
 */

#include <linux/module.h>
#include <linux/rcupdate.h>

#include "okcov.h"

/* OpenBSD's limit, and what syzkaller's executor asks for. */
#define OKCOV_DEFAULT_MAX	(512UL << 10)
/* 2 GiB of buffer: keeps n * 8 far from overflow. */
#define OKCOV_LIMIT_MAX		(1UL << 28)

unsigned long okcov_max_entries = OKCOV_DEFAULT_MAX;
module_param_named(max_entries, okcov_max_entries, ulong, 0444);
MODULE_PARM_DESC(max_entries, "Largest KIOSETBUFSIZE, in 8-byte entries");

static int __init okcov_init(void)
{
	int ret;

	if (!okcov_max_entries || okcov_max_entries > OKCOV_LIMIT_MAX) {
		pr_err("max_entries must be 1..%lu\n", OKCOV_LIMIT_MAX);
		return -EINVAL;
	}

	ret = okcov_ftrace_init();
	if (ret)
		goto err_ftrace;
	ret = okcov_dev_init();
	if (ret)
		goto err_dev;
	return 0;

err_dev:
	okcov_ftrace_cleanup();
err_ftrace:
	return ret;
}

static void __exit okcov_unload(void)
{
	okcov_dev_cleanup();
	/* Every okcov_free() callback has run, and dropped its hook user. */
	rcu_barrier();
	okcov_ftrace_cleanup();
}

module_init(okcov_init);
module_exit(okcov_unload);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("OpenBSD kcov(4) coverage device for Linux");
MODULE_AUTHOR("okcov developers");
