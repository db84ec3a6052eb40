// SPDX-License-Identifier: GPL-2.0
/*
 * Per-thread attachment: a hash keyed by task_struct pointer (task_struct
 * has no room for us). Only the hash lives here: every descriptor
 * transition, including the ones a thread's exit and module unload make,
 * is in dev.c.
 */

#include <linux/module.h>
#include <linux/sched/task.h>
#include <linux/slab.h>

#include "okcov.h"

struct hlist_head okcov_tasks[1 << OKCOV_HASH_BITS];
atomic_t okcov_nattached = ATOMIC_INIT(0);

struct okcov_attach *okcov_task_find(struct task_struct *t)
{
	struct okcov_attach *a;

	lockdep_assert_held(&okcov_lock);
	hlist_for_each_entry(a, okcov_bucket(t), node)
		if (a->task == t)
			return a;
	return NULL;
}

/* Lockless: the caller holds rcu_read_lock() and re-checks under the lock. */
struct okcov_attach *okcov_task_find_rcu(struct task_struct *t)
{
	struct okcov_attach *a;

	hlist_for_each_entry_rcu(a, okcov_bucket(t), node)
		if (a->task == t)
			return a;
	return NULL;
}

/*
 * @a is filled in (task, mode, buffer, descriptor). The task is pinned
 * while the entry exists, so its address cannot be reused by a new task
 * that would match a stale entry.
 */
void okcov_task_attach(struct okcov_attach *a)
{
	lockdep_assert_held(&okcov_lock);
	get_task_struct(a->task);
	atomic_long_inc(&okcov_stats.entries);
	atomic_inc(&okcov_nattached);
	/* Pairs with rcu_dereference_raw() in okcov_lookup(). */
	hlist_add_head_rcu(&a->node, okcov_bucket(a->task));
	okcov_hot_task(a->task, true);
}

static void okcov_task_free_rcu(struct rcu_head *rcu)
{
	struct okcov_attach *a = container_of(rcu, struct okcov_attach, rcu);

	put_task_struct(a->task);
	kfree(a);
	atomic_long_dec(&okcov_stats.entries);
}

/* Recording stops, then the entry goes (freed after a grace period). */
void okcov_task_detach(struct okcov_attach *a)
{
	lockdep_assert_held(&okcov_lock);
	/* Pairs with READ_ONCE() in okcov_lookup(). */
	WRITE_ONCE(a->mode, KCOV_MODE_NONE);
	hlist_del_rcu(&a->node);
	atomic_dec(&okcov_nattached);
	okcov_hot_task(a->task, false);
	call_rcu(&a->rcu, okcov_task_free_rcu);
}
