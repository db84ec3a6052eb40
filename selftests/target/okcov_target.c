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
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/timer.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

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

/* 6.2 renamed del_timer_sync(); 6.15 dropped the old name (see Kbuild). */
#ifdef OKCOV_TARGET_HAVE_TIMER_DELETE
#define okcov_target_timer_delete_sync timer_delete_sync
#else
#define okcov_target_timer_delete_sync del_timer_sync
#endif

/*
 * The remote sources: one work item, one timer and one delayed work item
 * per open file, so that two processes never share one.
 */
struct okcov_target_ctx {
	struct work_struct	work;
	struct timer_list	timer;
	struct delayed_work	dwork;
	bool			slow;
	atomic_t		pending;	/* deferred, not yet run */
	wait_queue_head_t	wait;
	u64			value;		/* [I] compared by the callbacks */
};

/* The known comparisons of each remote source (noipa: see above). */
static noinline __attribute__((__noipa__)) long okcov_target_in_work(u64 v)
{
	return v == OKCOV_TARGET_WORK_MAGIC ? 1 : 2;
}

static noinline __attribute__((__noipa__)) long okcov_target_in_timer(u64 v)
{
	return v == OKCOV_TARGET_TIMER_MAGIC ? 1 : 2;
}

static noinline __attribute__((__noipa__)) long okcov_target_in_dwork(u64 v)
{
	return v == OKCOV_TARGET_DWORK_MAGIC ? 1 : 2;
}

static void okcov_target_done(struct okcov_target_ctx *ctx)
{
	if (atomic_dec_and_test(&ctx->pending))
		wake_up(&ctx->wait);
}

static void okcov_target_work_fn(struct work_struct *work)
{
	struct okcov_target_ctx *ctx =
		container_of(work, struct okcov_target_ctx, work);

	if (READ_ONCE(ctx->slow))
		msleep(OKCOV_TARGET_SLOW_MS);
	okcov_target_in_work(READ_ONCE(ctx->value));
	okcov_target_done(ctx);
}

static void okcov_target_timer_fn(struct timer_list *t)
{
	struct okcov_target_ctx *ctx =
		container_of(t, struct okcov_target_ctx, timer);

	okcov_target_in_timer(READ_ONCE(ctx->value));
	okcov_target_done(ctx);
}

static void okcov_target_dwork_fn(struct work_struct *work)
{
	struct okcov_target_ctx *ctx =
		container_of(to_delayed_work(work), struct okcov_target_ctx,
			     dwork);

	okcov_target_in_dwork(READ_ONCE(ctx->value));
	okcov_target_done(ctx);
}

static long okcov_target_defer(struct okcov_target_ctx *ctx, unsigned long how)
{
	unsigned long delay = how & OKCOV_DEFER_LATE ?
		msecs_to_jiffies(OKCOV_TARGET_LATE_MS) : 1;

	if (how & ~(unsigned long)(OKCOV_DEFER_WORK | OKCOV_DEFER_TIMER |
				   OKCOV_DEFER_DELAYED | OKCOV_DEFER_SLOW |
				   OKCOV_DEFER_LATE))
		return -EINVAL;
	WRITE_ONCE(ctx->slow, !!(how & OKCOV_DEFER_SLOW));
	if (how & OKCOV_DEFER_WORK) {
		atomic_inc(&ctx->pending);
		if (!queue_work(system_wq, &ctx->work))
			okcov_target_done(ctx);
	}
	if (how & OKCOV_DEFER_TIMER) {
		atomic_inc(&ctx->pending);
		if (mod_timer(&ctx->timer, jiffies + delay))
			okcov_target_done(ctx);	/* was pending: one run */
	}
	if (how & OKCOV_DEFER_DELAYED) {
		atomic_inc(&ctx->pending);
		if (!queue_delayed_work(system_wq, &ctx->dwork, delay))
			okcov_target_done(ctx);
	}
	return 0;
}

static long okcov_target_ioctl(struct file *file, unsigned int cmd,
			       unsigned long arg)
{
	struct okcov_target_ctx *ctx = file->private_data;

	switch (cmd) {
	case OKCOV_TARGET_RUN:
		/* A non-negative result: the tests check the low bits. */
		return okcov_target_run(arg) & 0xffff;
	case OKCOV_TARGET_DEFER:
		return okcov_target_defer(ctx, arg);
	case OKCOV_TARGET_WAIT:
		if (!wait_event_timeout(ctx->wait, !atomic_read(&ctx->pending),
					10 * HZ))
			return -ETIMEDOUT;
		return 0;
	default:
		return -ENOTTY;
	}
}

static int okcov_target_open(struct inode *inode, struct file *file)
{
	struct okcov_target_ctx *ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);

	if (!ctx)
		return -ENOMEM;
	INIT_WORK(&ctx->work, okcov_target_work_fn);
	timer_setup(&ctx->timer, okcov_target_timer_fn, 0);
	INIT_DELAYED_WORK(&ctx->dwork, okcov_target_dwork_fn);
	init_waitqueue_head(&ctx->wait);
	ctx->value = OKCOV_TARGET_WORK_MAGIC;
	file->private_data = ctx;
	return nonseekable_open(inode, file);
}

static int okcov_target_release(struct inode *inode, struct file *file)
{
	struct okcov_target_ctx *ctx = file->private_data;

	cancel_work_sync(&ctx->work);
	okcov_target_timer_delete_sync(&ctx->timer);
	cancel_delayed_work_sync(&ctx->dwork);
	kfree(ctx);
	return 0;
}

static const struct file_operations okcov_target_fops = {
	.owner		= THIS_MODULE,
	.open		= okcov_target_open,
	.release	= okcov_target_release,
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
