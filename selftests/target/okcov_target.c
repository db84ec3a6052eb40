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
#include <linux/file.h>
#include <linux/completion.h>
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/kprobes.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/objtool.h>
#include <linux/slab.h>
#include <linux/timer.h>
#include <linux/tracepoint.h>
#include <linux/jump_label.h>
#include <linux/uaccess.h>
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

/*
 * The call-site pair: the callee stores where it returns to, the caller
 * uses the value after the call (no tail call). noipa, as above. The
 * callee's name matches the default function set's "*entity*" glob, which
 * is about the kernel's scheduler: a module's function is traced whatever
 * its name.
 */
static noinline __attribute__((__noipa__)) void okcov_target_entity_callee(u64 *ra)
{
	*ra = (unsigned long)__builtin_return_address(0);
}

static noinline __attribute__((__noipa__)) u64 okcov_target_caller(void)
{
	u64 ra = 0;

	okcov_target_entity_callee(&ra);
	return READ_ONCE(ra);
}

/* 6.2 renamed del_timer_sync(); 6.15 dropped the old name (see Kbuild). */
#ifdef OKCOV_TARGET_HAVE_TIMER_DELETE
#define okcov_target_timer_delete_sync timer_delete_sync
#else
#define okcov_target_timer_delete_sync del_timer_sync
#endif

/* system_wq is becoming system_percpu_wq (in 6.12.y and 7.x; 7.x warns on system_wq). */
#ifdef OKCOV_TARGET_HAVE_PERCPU_WQ
#define okcov_target_wq system_percpu_wq
#else
#define okcov_target_wq system_wq
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
	bool			deep;		/* OKCOV_DEFER_DEEP */
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

static long okcov_target_deep(u64 v);

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
	if (READ_ONCE(ctx->deep))
		okcov_target_deep(1);
	okcov_target_done(ctx);
}

static void okcov_target_timer_fn(struct timer_list *t)
{
	struct okcov_target_ctx *ctx =
		container_of(t, struct okcov_target_ctx, timer);

	okcov_target_in_timer(READ_ONCE(ctx->value));
	if (READ_ONCE(ctx->deep))
		okcov_target_deep(1);
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
				   OKCOV_DEFER_LATE | OKCOV_DEFER_DEEP))
		return -EINVAL;
	WRITE_ONCE(ctx->slow, !!(how & OKCOV_DEFER_SLOW));
	WRITE_ONCE(ctx->deep, !!(how & OKCOV_DEFER_DEEP));
	if (how & OKCOV_DEFER_WORK) {
		atomic_inc(&ctx->pending);
		if (!queue_work(okcov_target_wq, &ctx->work))
			okcov_target_done(ctx);
	}
	if (how & OKCOV_DEFER_TIMER) {
		atomic_inc(&ctx->pending);
		if (mod_timer(&ctx->timer, jiffies + delay))
			okcov_target_done(ctx);	/* was pending: one run */
	}
	if (how & OKCOV_DEFER_DELAYED) {
		atomic_inc(&ctx->pending);
		if (!queue_delayed_work(okcov_target_wq, &ctx->dwork, delay))
			okcov_target_done(ctx);
	}
	return 0;
}

/*
 * The BH storm: a module-global hrtimer, every OKCOV_TARGET_BH_STORM_US,
 * queues one work item on system_bh_wq (WQ_BH, 6.9+), whose function runs
 * in softirq on top of whatever the CPU was doing: the workqueue
 * tracepoints then fire in softirq, possibly over a thread inside okcov's
 * ioctls. Queued from hardirq, the work belongs to no process. One storm
 * at a time, owned by the file that started it: its release stops it.
 */
#ifdef OKCOV_TARGET_HAVE_BH_WQ
static struct hrtimer okcov_target_storm_timer;
static struct work_struct okcov_target_storm_work;
static atomic_long_t okcov_target_storm_runs;
#endif
static DEFINE_MUTEX(okcov_target_storm_lock);
static struct file *okcov_target_storm_owner;	/* [okcov_target_storm_lock] */

#ifdef OKCOV_TARGET_HAVE_BH_WQ
static ktime_t okcov_target_storm_period(void)
{
	return ns_to_ktime(OKCOV_TARGET_BH_STORM_US * NSEC_PER_USEC);
}

static noinline __attribute__((__noipa__)) long okcov_target_in_bh(long n)
{
	return n & 1 ? 1 : 2;
}

static void okcov_target_storm_fn(struct work_struct *work)
{
	okcov_target_in_bh(atomic_long_inc_return(&okcov_target_storm_runs));
}

static enum hrtimer_restart okcov_target_storm_tick(struct hrtimer *t)
{
	queue_work(system_bh_wq, &okcov_target_storm_work);
	hrtimer_forward_now(t, okcov_target_storm_period());
	return HRTIMER_RESTART;
}

static void okcov_target_storm_init(void)
{
	INIT_WORK(&okcov_target_storm_work, okcov_target_storm_fn);
#ifdef OKCOV_TARGET_HAVE_HRTIMER_SETUP
	hrtimer_setup(&okcov_target_storm_timer, okcov_target_storm_tick,
		      CLOCK_MONOTONIC, HRTIMER_MODE_REL);
#else
	hrtimer_init(&okcov_target_storm_timer, CLOCK_MONOTONIC,
		     HRTIMER_MODE_REL);
	okcov_target_storm_timer.function = okcov_target_storm_tick;
#endif
}

static void okcov_target_storm_stop_locked(void)
{
	lockdep_assert_held(&okcov_target_storm_lock);
	if (!okcov_target_storm_owner)
		return;
	hrtimer_cancel(&okcov_target_storm_timer);
	cancel_work_sync(&okcov_target_storm_work);
	okcov_target_storm_owner = NULL;
}

/* Start (arg 1): 0 or EBUSY. Stop (arg 0): the BH runs of this storm. */
static long okcov_target_storm(struct file *file, unsigned long on)
{
	long ret = 0;

	if (on > 1)
		return -EINVAL;
	mutex_lock(&okcov_target_storm_lock);
	if (on && okcov_target_storm_owner) {
		ret = -EBUSY;
	} else if (on) {
		okcov_target_storm_owner = file;
		atomic_long_set(&okcov_target_storm_runs, 0);
		hrtimer_start(&okcov_target_storm_timer,
			      okcov_target_storm_period(), HRTIMER_MODE_REL);
	} else if (okcov_target_storm_owner) {
		okcov_target_storm_stop_locked();
		ret = min_t(long, atomic_long_read(&okcov_target_storm_runs),
			    INT_MAX);
	}
	mutex_unlock(&okcov_target_storm_lock);
	return ret;
}
#else
static void okcov_target_storm_init(void)
{
}

static void okcov_target_storm_stop_locked(void)
{
}

static long okcov_target_storm(struct file *file, unsigned long on)
{
	return -EOPNOTSUPP;	/* no BH workqueues before 6.9 */
}
#endif

/* The storm's owner is going: stop it (module exit: file NULL, any owner). */
static void okcov_target_storm_release(struct file *file)
{
	mutex_lock(&okcov_target_storm_lock);
	if (!file || okcov_target_storm_owner == file)
		okcov_target_storm_stop_locked();
	mutex_unlock(&okcov_target_storm_lock);
}

/*
 * Tag churn, on the caller's behalf: objects that okcov tags when they are
 * armed or queued and that never run, so no tracepoint ever tells okcov
 * their tag is stale. Neither callback may run: they count if they do.
 */
static atomic_t okcov_target_churn_ran;

static void okcov_target_churn_timer_fn(struct timer_list *t)
{
	atomic_inc(&okcov_target_churn_ran);
}

static void okcov_target_churn_work_fn(struct work_struct *work)
{
	atomic_inc(&okcov_target_churn_ran);
}

/* Arm @n timers far in the future, delete them: how many were pending. */
static long okcov_target_timer_churn(unsigned long n)
{
	struct timer_list *timers;
	unsigned long i;
	long deleted = 0;

	if (!n || n > OKCOV_TARGET_CHURN_MAX)
		return -EINVAL;
	timers = kmalloc_array(n, sizeof(*timers), GFP_KERNEL);
	if (!timers)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		timer_setup(&timers[i], okcov_target_churn_timer_fn, 0);
		mod_timer(&timers[i], jiffies + 600 * HZ);
	}
	for (i = 0; i < n; i++)
		deleted += okcov_target_timer_delete_sync(&timers[i]);
	kfree(timers);
	return deleted;
}

struct okcov_target_gate {
	struct work_struct	work;
	struct completion	open;
};

static void okcov_target_gate_fn(struct work_struct *work)
{
	struct okcov_target_gate *gate =
		container_of(work, struct okcov_target_gate, work);

	wait_for_completion(&gate->open);
}

/*
 * Churn work items wait here behind a gate: ordered, so one item at a
 * time, and a caller's items queued after its gate cannot start before
 * the gate opens (another caller's gate may hold them up longer).
 */
static struct workqueue_struct *okcov_target_churn_wq;

/*
 * Queue @n work items behind a gate on the ordered workqueue, so they are
 * all pending, cancel them, then open the gate: how many were cancelled
 * while pending.
 */
static long okcov_target_work_churn(unsigned long n)
{
	struct okcov_target_gate gate;
	struct work_struct *works;
	unsigned long i;
	long cancelled = 0;

	if (!n || n > OKCOV_TARGET_CHURN_MAX)
		return -EINVAL;
	works = kmalloc_array(n, sizeof(*works), GFP_KERNEL);
	if (!works)
		return -ENOMEM;
	INIT_WORK_ONSTACK(&gate.work, okcov_target_gate_fn);
	init_completion(&gate.open);
	queue_work(okcov_target_churn_wq, &gate.work);
	for (i = 0; i < n; i++) {
		INIT_WORK(&works[i], okcov_target_churn_work_fn);
		queue_work(okcov_target_churn_wq, &works[i]);
	}
	for (i = 0; i < n; i++)
		cancelled += cancel_work_sync(&works[i]);
	complete(&gate.open);
	flush_work(&gate.work);		/* it is on this stack */
	destroy_work_on_stack(&gate.work);
	kfree(works);
	return cancelled;
}

/*
 * Deep coverage: okcov_target_deep()'s blocks are placed by hand, so the
 * tests know its leaders exactly (OKCOV_TARGET_DEEP_LEADERS, in the order
 * of enum OKCOV_DEEP_*). Not instrumented: no sanitizer record among the
 * deep ones. okcov_target_noprobe() is on kprobes' blacklist.
 */
#if defined(CONFIG_X86_64) && __has_attribute(__no_sanitize_coverage__)
/*
 * The labels are the assembler's own (.L): the ioctl takes their
 * addresses with a lea. Objtool (IBT kernels) wants an ENDBR where code
 * takes an address, unless the target says ANNOTATE_NOENDBR.
 */
static noinline __attribute__((__noipa__, __no_sanitize_coverage__))
long okcov_target_deep(u64 v)
{
	long r;

	asm volatile("	cmpq	$1, %[v]\n"
		     "	je	.Lokcov_deep_then\n"
		     ".Lokcov_deep_else:\n" ANNOTATE_NOENDBR
		     "	movq	$1, %[r]\n"
		     /* not only a setting: a block of its own (no edge's) */
		     "	addq	$1, %[r]\n"
		     "	jmp	.Lokcov_deep_join\n"
		     ".Lokcov_deep_then:\n" ANNOTATE_NOENDBR
		     "	movq	$3, %[r]\n"
		     "	nop\n"
		     ".Lokcov_deep_join:\n" ANNOTATE_NOENDBR
		     "	addq	$1, %[r]\n"
		     : [r] "=&r" (r) : [v] "r" (v) : "cc");
	return r;
}

/*
 * Edge blocks (okcov's planner leaves them out): the instruction after
 * the branch only sets the result and jumps to the join, the branch's
 * target only sets it and falls into the join. Only the join leads.
 */
static noinline __used __attribute__((__noipa__, __no_sanitize_coverage__))
long okcov_target_edges(u64 v)
{
	long r;

	asm volatile("	cmpq	$1, %[v]\n"
		     "	je	.Lokcov_edges_then\n"
		     "	movq	$2, %[r]\n"
		     "	jmp	.Lokcov_edges_join\n"
		     ".Lokcov_edges_then:\n" ANNOTATE_NOENDBR
		     "	movq	$7, %[r]\n"
		     ".Lokcov_edges_join:\n" ANNOTATE_NOENDBR
		     "	addq	$1, %[r]\n"
		     : [r] "=&r" (r) : [v] "r" (v) : "cc");
	return r;
}

/*
 * Flags across block leaders: each jmp to the next instruction makes a
 * leader of it, so an instrumented copy records between the cmp and the
 * setz and setc that read its ZF and CF.
 */
static noinline __attribute__((__noipa__, __no_sanitize_coverage__))
long okcov_target_flags(u64 v)
{
	long r, t;

	asm volatile("	xorl	%k[r], %k[r]\n"
		     "	xorl	%k[t], %k[t]\n"
		     "	cmpq	$1, %[v]\n"
		     "	jmp	1f\n"
		     "1:	setz	%b[r]\n"
		     "	jmp	2f\n"
		     "2:	setc	%b[t]\n"
		     "	leaq	0x10(%[r], %[t], 2), %[r]\n"
		     : [r] "=&r" (r), [t] "=&r" (t) : [v] "r" (v) : "cc");
	return r;
}

static noinline int okcov_target_noprobe(int v)
{
	return READ_ONCE(v) + 1;
}
NOKPROBE_SYMBOL(okcov_target_noprobe);

static long okcov_target_deep_leaders_get(void __user *arg)
{
	struct okcov_target_deep d = {};
	unsigned long a[OKCOV_DEEP_NLEADERS];
	int i;

	asm("lea .Lokcov_deep_else(%%rip), %0\n"
	    "lea .Lokcov_deep_then(%%rip), %1\n"
	    "lea .Lokcov_deep_join(%%rip), %2\n"
	    : "=r" (a[OKCOV_DEEP_ELSE]), "=r" (a[OKCOV_DEEP_THEN]),
	      "=r" (a[OKCOV_DEEP_JOIN]));
	for (i = 0; i < OKCOV_DEEP_NLEADERS; i++)
		d.leaders[i] = a[i];
	d.noprobe = (unsigned long)okcov_target_noprobe;
	return copy_to_user(arg, &d, sizeof(d)) ? -EFAULT : 0;
}
#else
static long okcov_target_deep(u64 v)
{
	return -EOPNOTSUPP;
}

static long okcov_target_flags(u64 v)
{
	return -EOPNOTSUPP;
}

static long okcov_target_deep_leaders_get(void __user *arg)
{
	return -EOPNOTSUPP;
}
#endif

static noinline long okcov_target_odd(long v)
{
	return READ_ONCE(v) + 1;
}

/* OKCOV_TARGET_SLEEP_RUN: a sleep inside a function a copy may run. */
static noinline __attribute__((__no_sanitize_coverage__))
long okcov_target_sleep(u64 arg)
{
	u64 v = arg >> 16;

	msleep(arg & 0xffff);
	if (READ_ONCE(v) & 1)
		return okcov_target_odd(2 * v);
	return 2 * v;
}

/* OKCOV_TARGET_WARNED_RUN: a WARN (a ud2 and its bug table entry). */
static noinline __attribute__((__no_sanitize_coverage__))
long okcov_target_warned(u64 v)
{
	if (WARN_ON(READ_ONCE(v) == OKCOV_TARGET_WARN_VALUE))
		return -EINVAL;
	return v + 1;
}

/* OKCOV_TARGET_SWITCH_RUN: a dense switch (okcov_target.h). */
static noinline __attribute__((__noipa__, __no_sanitize_coverage__))
long okcov_target_switched(u64 v)
{
	long r = READ_ONCE(v);

	switch (v) {
	case 0:
		r = r * 3 + 1;
		break;
	case 1:
		r ^= 0x55;
		break;
	case 2:
		r += 0x700;
		break;
	case 3:
		r = -r;
		break;
	case 4:
		r <<= 3;
		break;
	case 5:
		r |= 0x8000;
		break;
	case 6:
		r -= 99;
		break;
	case 7:
		r *= 7;
		break;
	case 8:
		r = r / 3 + 5;
		break;
	default:
		r = 0x1234;
		break;
	}
	return r + 1;
}

/*
 * What okcov_target_magic() compares with in memory (okcov_target.h): a
 * parameter, so that the compiler cannot fold it into an immediate.
 */
static unsigned long long okcov_target_magic_var = OKCOV_TARGET_MAGIC_VAR;
module_param_named(magic_var, okcov_target_magic_var, ullong, 0444);
MODULE_PARM_DESC(magic_var, "What okcov_target_magic() compares in memory");

/* OKCOV_TARGET_MAGIC_RUN: comparisons a copy reports (okcov_target.h). */
static noinline __attribute__((__noipa__, __no_sanitize_coverage__))
long okcov_target_magic(u64 x)
{
	u32 local = x;

#ifdef CONFIG_X86_64
	/* A compare with a stack operand, whatever the compiler would do. */
	asm volatile("cmpl %1, %0" : : "m" (local),
		     "i" (OKCOV_TARGET_MAGIC_STACK) : "cc");
#endif
	if (x == OKCOV_TARGET_MAGIC_CMP)
		return 1;
	if (x == okcov_target_magic_var)
		return 2;
	if ((u16)x == OKCOV_TARGET_MAGIC_LOW16)
		return 3;
	return 0;
}

/* OKCOV_TARGET_CASES_RUN: a sparse switch, compares (okcov_target.h). */
static noinline __attribute__((__noipa__, __no_sanitize_coverage__))
long okcov_target_cases(u64 x)
{
	switch (x) {
	case 0x11:
		return 1;
	case 0x2345:
		return 2;
	case 0x61000:
		return 3;
	case 0x7a7a7a:
		return 4;
	case 0x1d0c0ffe:
		return 5;
	case 0x5500:
		return 6;
	case 0x3:
		return 7;
	}
	return 0;
}

/* OKCOV_TARGET_UACCESS_RUN: an inline user access, stac and clac. */
static noinline __attribute__((__no_sanitize_coverage__))
long okcov_target_uaccess(unsigned long uaddr)
{
	u64 __user *p = (u64 __user *)uaddr;
	u64 v;

	if (!user_access_begin(p, sizeof(*p)))
		return -EFAULT;
	unsafe_get_user(v, p, fault);
	user_access_end();
	return v + 1;
fault:
	user_access_end();
	return -EFAULT;
}

/*
 * OKCOV_TARGET_TRAP_RUN: an int3 on a path no caller takes (v never has
 * all bits set). To okcov's planner an int3 where code falls through is
 * a text patch under way: the copier refuses the function (EBUSY).
 */
static noinline __attribute__((__no_sanitize_coverage__))
long okcov_target_trap(u64 v)
{
#ifdef CONFIG_X86
	if (unlikely(READ_ONCE(v) == ~0ULL))
		asm volatile("nop\n\tint3");	/* after code that falls through */
#endif
	if (READ_ONCE(v) & 1)
		return okcov_target_odd(v);
	return v + 2;
}

static DEFINE_STATIC_KEY_FALSE(okcov_target_key);

/*
 * OKCOV_TARGET_CALLEE_RUN: okcov_target_callee() calls three functions
 * ftrace has no record of (notrace): okcov_target_hidden(), which calls
 * okcov_target_inner() for an odd value and holds a jump label; for a
 * value with bit 1 set, okcov_target_noinstr() in the noinstr text; and
 * for one with bit 2 set, okcov_target_nmi_like(), whose name okcov's
 * deep_callees refuses (as NMI code's).
 */
static noinline notrace __attribute__((__noipa__, __no_sanitize_coverage__))
long okcov_target_inner(u64 v)
{
	if (READ_ONCE(v) > 100)
		return okcov_target_odd(v - 101);
	return v + 7;
}

static noinline notrace __attribute__((__noipa__, __no_sanitize_coverage__))
long okcov_target_hidden(u64 v)
{
	if (static_branch_unlikely(&okcov_target_key))
		return v + 1000;
	if (READ_ONCE(v) & 1)
		return okcov_target_inner(3 * v);
	return v + 5;
}

static noinline noinstr __attribute__((__noipa__))
long okcov_target_noinstr(u64 v)
{
	return (v ^ 0x55) + 11;
}

static noinline notrace __attribute__((__noipa__, __no_sanitize_coverage__))
long okcov_target_nmi_like(u64 v)
{
	if (READ_ONCE(v) & 8)
		return v * 5;
	return v + 3;
}

/*
 * OKCOV_TARGET_AHEAD_RUN: a traced function, called for odd values only;
 * the store keeps its branch a branch (no cmov): it has leaders.
 */
static u64 okcov_target_ahead_last;

static noinline __attribute__((__noipa__, __no_sanitize_coverage__))
long okcov_target_ahead_callee(u64 v)
{
	if (READ_ONCE(v) & 2) {
		WRITE_ONCE(okcov_target_ahead_last, v);
		return v * 3;
	}
	return v + 5;
}

static noinline __attribute__((__noipa__, __no_sanitize_coverage__))
long okcov_target_ahead(u64 v)
{
	if (READ_ONCE(v) & 1)
		return okcov_target_ahead_callee(v) + 1;
	return v;
}

/* OKCOV_TARGET_WRAPPER_RUN: no branch of its own, a notrace callee. */
static noinline __attribute__((__noipa__, __no_sanitize_coverage__))
long okcov_target_wrapper(u64 v)
{
	return okcov_target_hidden(v + 2);
}

static noinline __attribute__((__noipa__, __no_sanitize_coverage__))
long okcov_target_callee(u64 v)
{
	long r = okcov_target_hidden(v);

	if (READ_ONCE(v) & 2)
		r += okcov_target_noinstr(v);
	if (READ_ONCE(v) & 4)
		r += okcov_target_nmi_like(v);
	return r;
}

/* OKCOV_TARGET_KEYED_RUN: a jump label, switched by OKCOV_TARGET_KEY_SET. */
static noinline __attribute__((__no_sanitize_coverage__))
long okcov_target_keyed(u64 v)
{
	if (static_branch_unlikely(&okcov_target_key))
		return okcov_target_odd(v + 99);
	if (READ_ONCE(v) & 1)
		return okcov_target_odd(v);
	return v + 1;
}

static long okcov_target_key_set(unsigned long on)
{
	if (on)
		static_branch_enable(&okcov_target_key);
	else
		static_branch_disable(&okcov_target_key);
	return 0;
}

/* OKCOV_TARGET_TP_PROBE: signal_generate's one probe, doing nothing. */
static noinline void okcov_target_tp_probe(void *data)
{
}

static DEFINE_MUTEX(okcov_target_tp_lock);
static struct tracepoint *okcov_target_tp;	/* [okcov_target_tp_lock] */

static void okcov_target_find_tp(struct tracepoint *tp, void *found)
{
	if (!strcmp(tp->name, "signal_generate"))
		*(struct tracepoint **)found = tp;
}

static long okcov_target_tp_set(unsigned long on)
{
	struct tracepoint *tp = NULL;
	long ret = 0;

	mutex_lock(&okcov_target_tp_lock);
	if (on && !okcov_target_tp) {
		for_each_kernel_tracepoint(okcov_target_find_tp, &tp);
		ret = tp ? tracepoint_probe_register(tp, okcov_target_tp_probe,
						     NULL) : -ENOENT;
		if (!ret)
			okcov_target_tp = tp;
	} else if (!on && okcov_target_tp) {
		ret = tracepoint_probe_unregister(okcov_target_tp,
						  okcov_target_tp_probe, NULL);
		okcov_target_tp = NULL;
		tracepoint_synchronize_unregister();
	}
	mutex_unlock(&okcov_target_tp_lock);
	return ret;
}

static long okcov_target_funcs_get(void __user *arg)
{
	struct okcov_target_funcs f = {
		.sleep	= (unsigned long)okcov_target_sleep,
		.warned	= (unsigned long)okcov_target_warned,
		.deep	= (unsigned long)okcov_target_deep,
		.flags	= (unsigned long)okcov_target_flags,
		.uaccess = (unsigned long)okcov_target_uaccess,
		.trap	= (unsigned long)okcov_target_trap,
		.keyed	= (unsigned long)okcov_target_keyed,
		.tp_probe = (unsigned long)okcov_target_tp_probe,
		.switched = (unsigned long)okcov_target_switched,
		.callee	= (unsigned long)okcov_target_callee,
		.magic	= (unsigned long)okcov_target_magic,
		.cases	= (unsigned long)okcov_target_cases,
	};

	return copy_to_user(arg, &f, sizeof(f)) ? -EFAULT : 0;
}

/*
 * OKCOV_TARGET_CALL_COPY: call a function in okcov's module, an
 * instrumented copy, with one argument. A test hook, nothing more: only
 * okcov's memory is called, and the caller's okcov descriptor (whose
 * file operations pin their module) keeps okcov loaded during the call.
 * No module address lookup is exported to modules (__module_address()
 * and __module_text_address() are not).
 */
static long okcov_target_call_copy(void __user *arg)
{
	struct okcov_target_call c;
	struct module *mod;
	long (*fn)(u64 v);
	struct file *f;

	if (copy_from_user(&c, arg, sizeof(c)))
		return -EFAULT;
	f = fget(c.okcov_fd);
	if (!f)
		return -EBADF;
	mod = f->f_op->owner;
	if (!mod || strcmp(mod->name, "okcov") ||
	    !within_module_core(c.fn, mod)) {
		fput(f);
		return -EPERM;
	}
	fn = (long (*)(u64 v))(unsigned long)c.fn;
	c.ret = fn(c.arg);
	fput(f);
	return copy_to_user(arg, &c, sizeof(c)) ? -EFAULT : 0;
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
	case OKCOV_TARGET_BH_STORM:
		return okcov_target_storm(file, arg);
	case OKCOV_TARGET_TIMER_CHURN:
		return okcov_target_timer_churn(arg);
	case OKCOV_TARGET_WORK_CHURN:
		return okcov_target_work_churn(arg);
	case OKCOV_TARGET_CHURN_RAN:
		return atomic_read(&okcov_target_churn_ran);
	case OKCOV_TARGET_DEEP_LEADERS:
		return okcov_target_deep_leaders_get((void __user *)arg);
	case OKCOV_TARGET_DEEP_RUN:
		return okcov_target_deep(arg);
	case OKCOV_TARGET_FLAGS_RUN:
		return okcov_target_flags(arg);
	case OKCOV_TARGET_CALL_COPY:
		return okcov_target_call_copy((void __user *)arg);
	case OKCOV_TARGET_SLEEP_RUN:
		return okcov_target_sleep(arg);
	case OKCOV_TARGET_WARNED_RUN:
		return okcov_target_warned(arg);
	case OKCOV_TARGET_FUNCS:
		return okcov_target_funcs_get((void __user *)arg);
	case OKCOV_TARGET_UACCESS_RUN:
		return okcov_target_uaccess(arg);
	case OKCOV_TARGET_SWITCH_RUN:
		return okcov_target_switched(arg);
	case OKCOV_TARGET_CALLEE_RUN:
		return okcov_target_callee(arg);
	case OKCOV_TARGET_WRAPPER_RUN:
		return okcov_target_wrapper(arg);
	case OKCOV_TARGET_MAGIC_RUN:
		return okcov_target_magic(arg);
	case OKCOV_TARGET_CASES_RUN:
		return okcov_target_cases(arg);
	case OKCOV_TARGET_AHEAD_RUN:
		return okcov_target_ahead(arg);
	case OKCOV_TARGET_TRAP_RUN:
		return okcov_target_trap(arg);
	case OKCOV_TARGET_KEYED_RUN:
		return okcov_target_keyed(arg);
	case OKCOV_TARGET_KEY_SET:
		return okcov_target_key_set(arg);
	case OKCOV_TARGET_TP_PROBE:
		return okcov_target_tp_set(arg);
	case OKCOV_TARGET_CALL: {
		u64 ra = okcov_target_caller();

		return put_user(ra, (u64 __user *)arg) ? -EFAULT : 0;
	}
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

	okcov_target_storm_release(file);
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
	int ret;

	okcov_target_churn_wq = alloc_ordered_workqueue("okcov_target_churn", 0);
	if (!okcov_target_churn_wq)
		return -ENOMEM;
	okcov_target_storm_init();
	ret = misc_register(&okcov_target_dev);
	if (ret)
		destroy_workqueue(okcov_target_churn_wq);
	return ret;
}

static void __exit okcov_target_exit(void)
{
	misc_deregister(&okcov_target_dev);
	okcov_target_tp_set(0);
	/* no file is open: release stopped it already; be sure */
	okcov_target_storm_release(NULL);
	destroy_workqueue(okcov_target_churn_wq);
}

module_init(okcov_target_init);
module_exit(okcov_target_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("okcov selftest target, built with -fsanitize-coverage");
