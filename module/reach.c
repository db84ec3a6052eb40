// SPDX-License-Identifier: GPL-2.0
/*
 * Deep on reach (deep_reach=1, x86_64): every function a traced thread
 * (or remote section) reaches gets block coverage in the background, as
 * if KIODEEP had named it with KIO_DEEP_FUNCTIONS | KIO_DEEP_PARTIAL
 * (deep.c: okcov's plan, a copy where it can, kprobes where not), so a
 * harness that never heard of KIODEEP gets basic blocks.
 *
 * The note, in the record path of a thread that records (ftrace.c; a
 * bystander never gets there), locks nothing and allocates nothing:
 *   - seen[], an open-addressed set of the functions noted so far (their
 *     fentry sites, as ftrace reports them), at most deep_reach_max of
 *     them: a lookup first, which is all a function noted before costs;
 *   - box[], a mailbox of OKCOV_REACH_BOX slots: the first empty one of
 *     a few by the address's hash takes it (cmpxchg), else the note is
 *     dropped (counted) and not added to seen[], so the next call of the
 *     function notes it again;
 *   - once in the box, the function joins seen[]: never noted again,
 *     whatever becomes of it (installed, or refused: remembered).
 * A kthread (okcov_reach) empties the box every OKCOV_REACH_MS, at most
 * deep_reach_batch functions a pass, into deep.c: the traced thread
 * never waits for an install.
 *
 * Ahead (deep_reach_ahead=1): a function is copied one call before it is
 * reached, so that its first run already records its blocks (else its
 * leaders come one program late, new to okcov and not to kcov). The
 * kthread takes the direct calls of each function it installs, as its
 * plan decodes them (deep.c), that the hook traces; each not noted yet
 * joins seen[] marked ahead (its site | 1: fentry sites are even) and
 * the kthread's own queue, installed when the box has less than a batch.
 * They count in deep_reach_max; a full queue drops them. The first note
 * of a function marked ahead unmarks it and posts it to the box marked
 * (its calls are ahead now), so the frontier stays a call ahead of what
 * is reached; the kthread installs it then if the queue still had it.
 *
 * Lifetime: a descriptor enabled (KIOENABLE, either ABI, thread or
 * remote) while deep_reach is set is a reach user until its last
 * reference goes. The first one starts it (allocates the set, starts the
 * kthread); the last one's close, or deep_reach=0, stops it: the note
 * stops, the kthread ends, after a grace period the set is freed, and
 * its installs go as a deep user's do (deep.c): with the last user.
 * The next KIOENABLE with deep_reach set starts again from an empty set.
 * Locking: okcov_reach_mutex ([R]), task context only; the kthread
 * takes deep.c's mutex, never this one.
 */

#include <linux/delay.h>
#include <linux/hash.h>
#include <linux/kthread.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "okcov.h"

#define OKCOV_REACH_BOX		256	/* the mailbox's slots */
#define OKCOV_REACH_BOX_BITS	8
#define OKCOV_REACH_PROBE	8	/* slots a note looks at, in each */
#define OKCOV_REACH_MS		20	/* the kthread's pass, when idle */
#define OKCOV_REACH_MAX		(1U << 20)	/* deep_reach_max's limit */
#define OKCOV_REACH_AHEAD	4096	/* the kthread's queue of calls ahead */
#define OKCOV_REACH_CALLS	1024	/* calls taken from one batch */

static int okcov_reach_set_param(const char *val, const struct kernel_param *kp);

static const struct kernel_param_ops okcov_reach_ops = {
	.set	= okcov_reach_set_param,
	.get	= param_get_bool,
};

static bool deep_reach;
module_param_cb(deep_reach, &okcov_reach_ops, &deep_reach, 0644);
MODULE_PARM_DESC(deep_reach,
		 "Deep coverage, in the background, of every function a traced thread reaches (x86_64; read at KIOENABLE; 0 stops it)");

static unsigned int deep_reach_max = 16384;
module_param(deep_reach_max, uint, 0644);
MODULE_PARM_DESC(deep_reach_max,
		 "Most functions deep_reach notes (read when it starts)");

static unsigned int deep_reach_batch = 16;
module_param(deep_reach_batch, uint, 0644);
MODULE_PARM_DESC(deep_reach_batch,
		 "Most functions deep_reach installs in one pass");

static bool deep_reach_ahead = true;
module_param(deep_reach_ahead, bool, 0644);
MODULE_PARM_DESC(deep_reach_ahead,
		 "deep_reach also copies the functions a copied one calls directly, a call ahead (default 1)");

/* The set and the mailbox, allocated together. */
struct okcov_reach {
	unsigned long	box[OKCOV_REACH_BOX];	/* [a] 0, or a function noted */
	atomic_t	nseen;			/* [a] seen[]'s functions */
	unsigned int	cap;			/* [I] deep_reach_max */
	unsigned int	mask;			/* [I] seen[]'s slots, less one */
	unsigned long	seen[];			/* [a] 0, a function noted, | 1 ahead */
};

/* The kthread's own: the calls ahead, and a batch's. */
struct okcov_reach_work {
	unsigned long	fns[OKCOV_REACH_BOX];
	int		ferr[OKCOV_REACH_BOX];
	unsigned long	ahead[OKCOV_REACH_AHEAD];	/* a ring */
	unsigned int	head, len;
	unsigned long	only[OKCOV_REACH_BOX];	/* installed ahead: calls only */
	unsigned long	ip[OKCOV_REACH_CALLS];
	struct okcov_calls calls;
};

/* [R] written; the record path reads it (okcov_reach_note()). */
struct okcov_reach *okcov_reach_on;

static DEFINE_MUTEX(okcov_reach_mutex);
static struct task_struct *okcov_reach_thread;	/* [R] */
static unsigned int okcov_reach_users;		/* [R] descriptors with ->reach */

/* Post @v to the box; false if full. */
static bool notrace okcov_reach_post(struct okcov_reach *r, unsigned int b,
				     unsigned long v)
{
	unsigned int i;

	/* A taken slot is passed over without writing its cache line. */
	for (i = 0; i < OKCOV_REACH_PROBE; i++) {
		unsigned long *slot = &r->box[(b + i) % OKCOV_REACH_BOX];

		if (!READ_ONCE(*slot) && !cmpxchg(slot, 0, v))
			return true;
	}
	return false;
}

/*
 * @ip, marked ahead in @slot, is reached: the first to unmark it posts
 * it marked, for its calls. A full box marks it again: the next call.
 */
static void notrace okcov_reach_reached(struct okcov_reach *r,
					unsigned long *slot, unsigned long ip)
{
	if (cmpxchg(slot, ip | 1, ip) != (ip | 1))
		return;
	if (okcov_reach_post(r, hash_long(ip, 32) >> (32 - OKCOV_REACH_BOX_BITS),
			     ip | 1)) {
		atomic_long_inc(&okcov_stats.reach_ahead_hit);
		return;
	}
	atomic_long_inc(&okcov_stats.reach_dropped);
	cmpxchg(slot, ip, ip | 1);
}

/*
 * @ip: a function's fentry site, reached by a thread that records. No
 * lock, no allocation, nothing traceable: called with preemption off (a
 * thread's record, or a timer section's softirq), an RCU-sched read
 * side that okcov_reach_stop() waits for before it frees @r.
 */
void notrace okcov_reach_note(struct okcov_reach *r, unsigned long ip)
{
	/* One multiply: the box's hash is the set's top bits. */
	unsigned int h = hash_long(ip, 32), b = h >> (32 - OKCOV_REACH_BOX_BITS);
	unsigned long v;
	unsigned int i;

	for (i = 0; i < OKCOV_REACH_PROBE; i++) {
		v = READ_ONCE(r->seen[(h + i) & r->mask]);
		if (v == ip)
			return;
		if (!v)
			break;
		if (v == (ip | 1) && !(ip & 1)) {
			okcov_reach_reached(r, &r->seen[(h + i) & r->mask], ip);
			return;
		}
	}
	/* A full run of seen[] (rare: it is twice the cap): as a full box. */
	if (i == OKCOV_REACH_PROBE) {
		atomic_long_inc(&okcov_stats.reach_dropped);
		return;
	}
	if (atomic_read(&r->nseen) >= r->cap) {
		atomic_long_inc(&okcov_stats.reach_capped);
		return;
	}
	if (!okcov_reach_post(r, b, ip)) {
		/* Not in seen[]: the next call notes it again. */
		atomic_long_inc(&okcov_stats.reach_dropped);
		return;
	}
	atomic_long_inc(&okcov_stats.reach_queued);
	for (i = 0; i < OKCOV_REACH_PROBE; i++) {
		v = cmpxchg(&r->seen[(h + i) & r->mask], 0, ip);
		if (!v)
			atomic_inc(&r->nseen);
		/*
		 * In, or noted at once by another CPU too: the installer
		 * takes a function again as the same (deep.c). Marked
		 * ahead meanwhile: the kthread has it queued.
		 */
		if (!v || v == ip)
			return;
		if (v == (ip | 1) &&
		    cmpxchg(&r->seen[(h + i) & r->mask], v, ip) == v) {
			atomic_long_inc(&okcov_stats.reach_ahead_hit);
			return;
		}
	}
}

/*
 * Empty the box of up to @max functions into @fns; how many. A slot
 * taken is free for the next note at once.
 */
static unsigned int okcov_reach_take(struct okcov_reach *r, unsigned long *fns,
				     unsigned int max)
{
	unsigned int i, n = 0;
	unsigned long v;

	for (i = 0; i < OKCOV_REACH_BOX && n < max; i++) {
		if (!READ_ONCE(r->box[i]))
			continue;
		v = xchg(&r->box[i], 0);
		if (v)
			fns[n++] = v;
	}
	return n;
}

/*
 * Install @fns (@n), the first @ncalls' direct calls into @calls; count
 * each function's outcome.
 */
static void okcov_reach_install(unsigned long *fns, int *ferr, unsigned int n,
				unsigned int ncalls, struct okcov_calls *calls)
{
	unsigned int i;
	int ret;

	ret = okcov_deep_reach_install(fns, n, ferr, ncalls, calls);
	/* Too many leaders for deep_max_probes at once: one by one. */
	if (ret == -ENOSPC && n > 1) {
		for (i = 0; i < n; i++)
			okcov_reach_install(fns + i, ferr + i, 1,
					    i < ncalls, calls);
		return;
	}
	for (i = 0; i < n; i++) {
		if (ret || ferr[i]) {
			atomic_long_inc(&okcov_stats.reach_refused);
			pr_debug("deep_reach: %pS refused: %d\n", (void *)fns[i],
				 ret ? ret : ferr[i]);
		} else {
			atomic_long_inc(&okcov_stats.reach_installed);
		}
	}
}

/* Take @ip out of @w's queue; was it there? */
static bool okcov_reach_unqueue(struct okcov_reach_work *w, unsigned long ip)
{
	unsigned int i, k;

	for (i = 0; i < w->len; i++) {
		k = (w->head + i) % OKCOV_REACH_AHEAD;
		if (w->ahead[k] == ip) {
			/* The queue's head takes its place. */
			w->ahead[k] = w->ahead[w->head];
			w->head = (w->head + 1) % OKCOV_REACH_AHEAD;
			w->len--;
			return true;
		}
	}
	return false;
}

/*
 * The calls a batch found, not noted yet: into seen[] marked ahead and
 * into the queue, while the cap and the queue have room.
 */
static void okcov_reach_ahead(struct okcov_reach *r, struct okcov_reach_work *w)
{
	unsigned int i, k, h;
	unsigned long ip, v, *slot;

	for (k = 0; k < w->calls.n; k++) {
		ip = w->calls.ip[k];
		if (ip & 1)
			continue;
		h = hash_long(ip, 32);
		for (i = 0; i < OKCOV_REACH_PROBE; i++) {
			slot = &r->seen[(h + i) & r->mask];
			v = READ_ONCE(*slot);
			if ((v & ~1UL) == ip)
				break;
			if (v)
				continue;
			if (atomic_read(&r->nseen) >= r->cap) {
				atomic_long_inc(&okcov_stats.reach_capped);
				return;
			}
			if (w->len == OKCOV_REACH_AHEAD)
				return;
			v = cmpxchg(slot, 0, ip | 1);
			if (v) {
				/* Noted meanwhile, or another function. */
				if ((v & ~1UL) == ip)
					break;
				continue;
			}
			atomic_inc(&r->nseen);
			atomic_long_inc(&okcov_stats.reach_ahead);
			w->ahead[(w->head + w->len++) % OKCOV_REACH_AHEAD] = ip;
			break;
		}
	}
}

/*
 * One pass: up to @max functions of the box, installed and their calls
 * looked ahead of (a function installed ahead: its calls only), then
 * what is left of @max from the queue. How many were taken.
 */
static unsigned int okcov_reach_pass(struct okcov_reach *r,
				     struct okcov_reach_work *w,
				     unsigned int max)
{
	unsigned int i, n, m = 0, k = 0;
	bool ahead = READ_ONCE(deep_reach_ahead);
	unsigned long v;

	n = okcov_reach_take(r, w->fns, max);
	if (!n && !(ahead && w->len))
		return 0;
	/* A marked one still queued is installed now. */
	for (i = 0; i < n; i++) {
		v = w->fns[i];
		if (!(v & 1) || okcov_reach_unqueue(w, v & ~1UL))
			w->fns[m++] = v & ~1UL;
		else
			w->only[k++] = v & ~1UL;
	}
	w->calls.n = 0;
	w->calls.max = ahead ? OKCOV_REACH_CALLS : 0;
	if (ahead && k)
		okcov_deep_reach_calls(w->only, k, &w->calls);
	i = m;
	while (ahead && i < max && w->len) {
		w->fns[i++] = w->ahead[w->head];
		w->head = (w->head + 1) % OKCOV_REACH_AHEAD;
		w->len--;
	}
	if (i)
		okcov_reach_install(w->fns, w->ferr, i, m, &w->calls);
	if (ahead)
		okcov_reach_ahead(r, w);
	return n + i - m;
}

static int okcov_reach_main(void *data)
{
	struct okcov_reach *r = data;
	struct okcov_reach_work *w;
	unsigned int max, n;

	w = kvzalloc(sizeof(*w), GFP_KERNEL);
	if (w)
		w->calls.ip = w->ip;
	while (!kthread_should_stop()) {
		max = clamp(READ_ONCE(deep_reach_batch), 1U, OKCOV_REACH_BOX);
		n = w ? okcov_reach_pass(r, w, max) : 0;
		/* A full batch: more may wait. */
		if (n < max)
			schedule_timeout_interruptible(msecs_to_jiffies(OKCOV_REACH_MS));
		else
			cond_resched();
	}
	kvfree(w);
	/* Its CPU time, to the last tick: what the installs cost. */
	atomic_long_add(div_u64(current->se.sum_exec_runtime, NSEC_PER_USEC),
			&okcov_stats.reach_us);
	return 0;
}

/* The first reach user came. [R] */
static void okcov_reach_start(void)
{
	unsigned int cap = clamp(READ_ONCE(deep_reach_max), 1U, OKCOV_REACH_MAX);
	unsigned int slots = roundup_pow_of_two(2 * cap);
	struct task_struct *t;
	struct okcov_reach *r;

	if (!IS_ENABLED(CONFIG_X86_64)) {
		pr_warn_once("deep_reach: x86_64 only\n");
		return;
	}
	r = vzalloc(struct_size(r, seen, slots));
	if (!r)
		goto fail;
	r->cap = cap;
	r->mask = slots - 1;
	t = kthread_run(okcov_reach_main, r, "okcov_reach");
	if (IS_ERR(t)) {
		vfree(r);
		goto fail;
	}
	okcov_reach_thread = t;
	/* Pairs with the READ_ONCE() of the record path: @r is ready. */
	smp_store_release(&okcov_reach_on, r);
	return;
fail:
	pr_warn("deep_reach: cannot start: no memory\n");
}

/* The last reach user went, or deep_reach=0. [R] */
static void okcov_reach_stop(void)
{
	struct okcov_reach *r = okcov_reach_on;

	if (!r)
		return;
	WRITE_ONCE(okcov_reach_on, NULL);
	kthread_stop(okcov_reach_thread);
	okcov_reach_thread = NULL;
	/* Every note in flight (an RCU-sched read side) is over. */
	synchronize_rcu();
	vfree(r);
	okcov_deep_reach_drop();
}

/* @kd goes TRACE: with deep_reach set, it is a reach user. May sleep. */
void okcov_reach_enable(struct okcov *kd)
{
	if (!READ_ONCE(deep_reach) ||
	    (READ_ONCE(kd->reach) && READ_ONCE(okcov_reach_on)))
		return;
	mutex_lock(&okcov_reach_mutex);
	if (!kd->reach) {
		kd->reach = true;
		okcov_reach_users++;
	}
	if (READ_ONCE(deep_reach) && !okcov_reach_on)
		okcov_reach_start();
	mutex_unlock(&okcov_reach_mutex);
}

/* @kd's last reference went (deep.c). */
void okcov_reach_release(struct okcov *kd)
{
	if (!READ_ONCE(kd->reach))
		return;
	mutex_lock(&okcov_reach_mutex);
	kd->reach = false;
	if (!--okcov_reach_users)
		okcov_reach_stop();
	mutex_unlock(&okcov_reach_mutex);
}

/* deep_reach=0 stops it at once; =1 waits for the next KIOENABLE. */
static int okcov_reach_set_param(const char *val, const struct kernel_param *kp)
{
	int ret = param_set_bool(val, kp);

	if (ret || READ_ONCE(deep_reach))
		return ret;
	mutex_lock(&okcov_reach_mutex);
	okcov_reach_stop();
	mutex_unlock(&okcov_reach_mutex);
	return 0;
}
