// SPDX-License-Identifier: GPL-2.0
/*
 * Per-thread attachment: a hash keyed by task_struct pointer (task_struct
 * has no room for us). This file is the hash's only editor; the state
 * transitions that put entries in and take them out are dev.c's (a
 * thread's) and remote.c's (a kworker's section, through
 * okcov_task_link()/okcov_task_unlink()).
 */

#include <linux/module.h>
#include <linux/sched/task.h>
#include <linux/sched/task_stack.h>
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

/* @a is filled in (task, mode, buffer, descriptor): the hot path may see it. */
void okcov_task_link(struct okcov_attach *a)
{
	lockdep_assert_held(&okcov_lock);
	atomic_inc(&okcov_nattached);
	/* Pairs with rcu_dereference_raw() in okcov_entry(). */
	hlist_add_head_rcu(&a->node, okcov_bucket(a->task));
	okcov_hot_task(a, true);
}

/* Recording stops; walkers may still see @a until a grace period passed. */
void okcov_task_unlink(struct okcov_attach *a)
{
	lockdep_assert_held(&okcov_lock);
	/* Pairs with READ_ONCE() in okcov_lookup(). */
	WRITE_ONCE(a->mode, OKCOV_MODE_NONE);
	hlist_del_rcu(&a->node);
	atomic_dec(&okcov_nattached);
	okcov_hot_task(a, false);
	if (a->flags & OKCOV_CUR) {
		int cpu;

		/*
		 * Off every CPU that holds it (the sched_switch probe's
		 * comment says why this suffices), before call_rcu().
		 */
		smp_mb();
		for_each_possible_cpu(cpu)
			if (READ_ONCE(per_cpu(okcov_cur, cpu)) == a)
				cmpxchg(per_cpu_ptr(&okcov_cur, cpu), a, NULL);
	}
}

/*
 * A thread's entry. The task is pinned while the entry exists, so its
 * address cannot be reused by a new task that would match a stale entry.
 */
void okcov_task_attach(struct okcov_attach *a)
{
	get_task_struct(a->task);
	a->stack = (unsigned long)task_stack_page(a->task);
	a->cap = a->nentries - 1;
	if ((IS_ENABLED(CONFIG_X86_64) || IS_ENABLED(CONFIG_ARM64)) &&
	    IS_ALIGNED(a->stack, THREAD_SIZE) &&
	    !(a->flags & OKCOV_CLAIM_ATOMIC))
		a->flags |= OKCOV_CUR;
	atomic_long_inc(&okcov_stats.entries);
	okcov_task_link(a);
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
	okcov_task_unlink(a);
	call_rcu(&a->rcu, okcov_task_free_rcu);
}
