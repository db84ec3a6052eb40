// SPDX-License-Identifier: GPL-2.0
/*
 * Per-thread attachment: a hash keyed by task_struct pointer, and the
 * sched_process_exit probe that detaches every exiting thread. A stale
 * entry would match the next task allocated at the same address, so the
 * probe must run for every attached thread, and unload removes the rest.
 */

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

#include "okcov.h"

DEFINE_RAW_SPINLOCK(okcov_lock);
struct hlist_head okcov_tasks[1 << OKCOV_HASH_BITS];
atomic_t okcov_nattached = ATOMIC_INIT(0);

static struct tracepoint *okcov_exit_tp;

struct okcov_attach *okcov_task_find(struct task_struct *t)
{
	struct okcov_attach *a;

	lockdep_assert_held(&okcov_lock);
	hlist_for_each_entry(a, &okcov_tasks[hash_ptr(t, OKCOV_HASH_BITS)],
			     node)
		if (a->task == t)
			return a;
	return NULL;
}

void okcov_task_attach(struct okcov_attach *a, struct task_struct *t,
		       struct okcov *kd)
{
	lockdep_assert_held(&okcov_lock);
	a->task = t;
	a->kd = kd;
	kd->attach = a;
	atomic_inc(&okcov_nattached);
	/* Pairs with rcu_dereference_raw() in okcov_current(). */
	hlist_add_head_rcu(&a->node,
			   &okcov_tasks[hash_ptr(t, OKCOV_HASH_BITS)]);
}

/* Recording stops, then the thread's entry goes (freed after RCU). */
void okcov_task_detach(struct okcov *kd)
{
	struct okcov_attach *a = kd->attach;

	lockdep_assert_held(&okcov_lock);
	WRITE_ONCE(kd->mode, KCOV_MODE_NONE);
	hlist_del_rcu(&a->node);
	kd->attach = NULL;
	atomic_dec(&okcov_nattached);
	kfree_rcu(a, rcu);
}

/*
 * Runs for every exiting thread, as that thread (p == current), possibly
 * with preemption disabled (tracepoint) or not (newer kernels): the raw
 * spinlock is right in both, and freeing is deferred to RCU.
 */
static void notrace okcov_exit_probe(OKCOV_EXIT_PROBE_PARAMS)
{
	struct okcov_attach *a;
	struct okcov *dead = NULL;

	/* An attached thread attached itself, so it sees its own increment. */
	if (!atomic_read(&okcov_nattached))
		return;

	raw_spin_lock(&okcov_lock);
	a = okcov_task_find(p);
	if (a) {
		struct okcov *kd = a->kd;

		okcov_task_detach(kd);
		if (kd->state == OKCOV_DYING)
			dead = kd;
		else
			kd->state = OKCOV_READY;
	}
	raw_spin_unlock(&okcov_lock);

	if (dead)
		okcov_free(dead);
}

static void okcov_find_exit_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_process_exit"))
		*(struct tracepoint **)priv = tp;
}

int okcov_task_init(void)
{
	int ret;

	for_each_kernel_tracepoint(okcov_find_exit_tp, &okcov_exit_tp);
	if (!okcov_exit_tp) {
		pr_err("tracepoint sched_process_exit not found\n");
		return -ENOENT;
	}
	ret = tracepoint_probe_register(okcov_exit_tp, okcov_exit_probe, NULL);
	if (ret)
		pr_err("cannot attach to sched_process_exit: %d\n", ret);
	return ret;
}

/*
 * Module unload: no file is open (the module reference says so), so every
 * entry left belongs to a DYING descriptor whose thread is still alive.
 */
void okcov_task_exit(void)
{
	struct okcov_attach *a;
	struct hlist_node *tmp;
	struct okcov *kd;
	int bkt;

	tracepoint_probe_unregister(okcov_exit_tp, okcov_exit_probe, NULL);
	tracepoint_synchronize_unregister();

	raw_spin_lock(&okcov_lock);
	for (bkt = 0; bkt < ARRAY_SIZE(okcov_tasks); bkt++) {
		hlist_for_each_entry_safe(a, tmp, &okcov_tasks[bkt], node) {
			kd = a->kd;
			WARN_ON_ONCE(kd->state != OKCOV_DYING);
			okcov_task_detach(kd);
			okcov_free(kd);
		}
	}
	raw_spin_unlock(&okcov_lock);
}
