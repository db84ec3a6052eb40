// SPDX-License-Identifier: GPL-2.0
/*
 * Per-thread attachment: a hash keyed by task_struct pointer (task_struct
 * has no room for us). Only the hash lives here: every descriptor
 * transition, including the ones a thread's exit and module unload make,
 * is in dev.c.
 */

#include <linux/module.h>
#include <linux/slab.h>

#include "okcov.h"

struct hlist_head okcov_tasks[1 << OKCOV_HASH_BITS];
atomic_t okcov_nattached = ATOMIC_INIT(0);

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
