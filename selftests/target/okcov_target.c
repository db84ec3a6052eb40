// SPDX-License-Identifier: GPL-2.0
/*
 * okcov_target: a module built with -fsanitize-coverage=trace-pc,trace-cmp,
 * so that it reports basic blocks and comparisons to okcov's exported
 * __sanitizer_cov_* hooks. /dev/okcov_target's ioctl runs okcov_target_run()
 * on the caller's value: the selftests then look in the caller's okcov
 * buffer for the PCs of this function (TRACE_PC) and for the comparisons of
 * the value with the constants of okcov_target.h (TRACE_CMP).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/compiler.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>

#include "okcov_target.h"

/* A writable parameter: the compiler cannot fold comparisons with it. */
static ulong threshold = OKCOV_TARGET_THRESHOLD;
module_param(threshold, ulong, 0644);
MODULE_PARM_DESC(threshold, "compared with the ioctl value as a variable");

/*
 * Known comparisons: v == MAGIC64 is an 8-byte compare with a constant
 * (type KCOV_CMP_SIZE(3) | KCOV_CMP_CONST, args MAGIC64 and v), v against
 * threshold an 8-byte compare of two variables (KCOV_CMP_SIZE(3)), and the
 * narrower ones sizes 2, 1 and 0 with a constant. The switch reports its
 * cases through __sanitizer_cov_trace_switch. noipa keeps the function
 * whole and under its own name (no .isra/.constprop clone) for kallsyms.
 */
static noinline __attribute__((__noipa__)) long okcov_target_run(u64 v)
{
	u64 limit = READ_ONCE(threshold);
	long r = 0;

	if (v == OKCOV_TARGET_MAGIC64)
		r |= 1;
	if (v > limit)
		r |= 2;
	if ((u32)v == OKCOV_TARGET_MAGIC32)
		r |= 4;
	if ((u16)(v >> 32) == OKCOV_TARGET_MAGIC16)
		r |= 8;
	if ((u8)(v >> 48) == OKCOV_TARGET_MAGIC8)
		r |= 16;

	switch (v & 7) {
	case 0:
		r += 0x100;
		break;
	case 1:
		r += 0x300;
		break;
	case 3:
		r ^= 0x500;
		break;
	case 6:
		r -= 0x700;
		break;
	default:
		r += 0x1100;
		break;
	}
	return r;
}

static long okcov_target_ioctl(struct file *file, unsigned int cmd,
			       unsigned long arg)
{
	if (cmd != OKCOV_TARGET_RUN)
		return -ENOTTY;
	/* A non-negative result: the tests check the low bits. */
	return okcov_target_run(arg) & 0xffff;
}

static const struct file_operations okcov_target_fops = {
	.owner		= THIS_MODULE,
	.unlocked_ioctl	= okcov_target_ioctl,
	.llseek		= noop_llseek,
};

static struct miscdevice okcov_target_dev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= OKCOV_TARGET_NAME,
	.fops	= &okcov_target_fops,
	.mode	= 0600,
};

static int __init okcov_target_init(void)
{
	return misc_register(&okcov_target_dev);
}

static void __exit okcov_target_exit(void)
{
	misc_deregister(&okcov_target_dev);
}

module_init(okcov_target_init);
module_exit(okcov_target_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("okcov selftest target, built with -fsanitize-coverage");
