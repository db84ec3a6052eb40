// SPDX-License-Identifier: GPL-2.0
/*
 * Remote coverage (OpenBSD's KIOREMOTEATTACH, KCOV_REMOTE_COMMON): the work
 * a process defers records into that process's remote descriptor. The
 * descriptor's states are dev.c's; this file keeps the owner tags, the
 * sections and the probes, and gives dev.c start and stop.
 *
 * Sources. Work items it queues (recorded in the kworker while the work
 * function runs) and timer_list timers it arms (recorded while the callback
 * runs, in softirq). Nothing in work_struct or timer_list has room for us,
 * so the tracepoints that mark queueing and running carry the owner:
 *
 *	workqueue_queue_work, timer_start	tag the object with its owner
 *	workqueue_execute_start/_end		a kworker section: an entry of
 *						the task hash, as an attached
 *						thread has (task context only:
 *						BH work items, which run in
 *						softirq since 6.9, are ignored)
 *	timer_expire_entry/_exit		a softirq section (per-CPU
 *						okcov_soft, okcov_soft_entry())
 *	timer_cancel				a timer deleted before it ran
 *						gives its tag back
 *
 * The probes are registered only while some remote descriptor is TRACE: an
 * idle okcov costs nothing.
 *
 * Owner. A remote descriptor belongs to a process: its signal_struct,
 * which every thread shares and which survives execve(), pinned through a
 * reference on the attaching thread's task_struct (whose last put drops the
 * signal_struct), so no new process can reuse the address while we compare
 * with it: pid reuse cannot fool us. Work queued or a timer armed from
 * inside a section inherits that section's owner: delayed work is a timer
 * whose callback queues the work, and both halves record. Descendants do
 * not count for KIOREMOTEATTACH (OpenBSD's rule: task_add() and
 * timeout_add() note curproc->p_p); a child opens and attaches its own.
 * Linux's KCOV_REMOTE_ENABLE passes its common handle to children
 * (kcov_task_init()), and syzkaller's executor enables it before it forks
 * the processes that run programs: there (->inherit) every process forked
 * by a member while the descriptor is TRACE becomes a member too, until
 * its last thread exits. Members live in a hash of signal_structs
 * (okcov_members), so finding the owner of a queueing is one lockless
 * bucket walk whatever the number of members; a descendant is not
 * pinned, its exit takes it out before its signal_struct can be freed.
 *
 * Tag lifetime. Every queueing fires the queue tracepoint, so a tag is
 * re-decided at each queueing: a queueing by anyone else drops it (a work
 * item reused after its owner has gone is not recorded). Running a tagged
 * object consumes the tag. A timer deleted before it ran fires
 * timer_cancel; so does every expiring timer, just before its callback, in
 * softirq with interrupts off. A cancel there parks the tag on the CPU
 * (okcov_parked): the next softirq timer event of that CPU tells which it
 * was, the expiry of the same timer or anything else. Cancelled work fires
 * nothing: when a pool runs dry, work tags older than OKCOV_TAG_MIN_AGE
 * are reclaimed (at most every OKCOV_TAG_SCAN). Tags come from a pool per
 * descriptor (no allocation in tracepoint context, which on PREEMPT_RT
 * could not allocate at all). What cannot be attributed is counted:
 * remote_dropped and remote_reclaimed (main.c), per descriptor in the log
 * at close.
 *
 * Writers. Sections of one descriptor write its buffer from several CPUs:
 * their entries claim with cmpxchg (OKCOV_CLAIM_ATOMIC), so a slot is
 * claimed before its PC is stored, as on OpenBSD. A reader sees every PC
 * once KIODISABLE has returned; okcov(4) gives the rule for reading while
 * TRACE (a slot still 0 is not stored yet).
 *
 * Each enable gets a fresh sink (the entry timer sections record through),
 * and stop retires it with mode NONE for good: a section opened before
 * KIODISABLE never records after the next KIOENABLE.
 *
 * Locking, and which context may take what:
 *
 *	okcov_lock	(dev.c) task context only, never from softirq,
 *			hardirq or NMI: ioctls, release, the exit probe, and
 *			workqueue_execute_* in a kworker (in_task()).
 *	bucket->lock	[B] raw, irqsave, any context; leaf but for r->lock.
 *			Several are only ever taken by trylock.
 *	r->lock		[R] raw, irqsave, any context; leaf.
 *	okcov_members_lock [M] raw, task context only: attach, release,
 *			fork and exit of members.
 *
 * Order: okcov_lock -> okcov_members_lock -> bucket->lock -> r->lock. Nothing that can queue work
 * or arm a timer runs under any of them (the probe would recurse on it).
 * A bystander (no tag on its object, not an owner) takes none: its probes
 * read okcov_ntags, its process's okcov_members bucket and its object's bucket
 * locklessly, under RCU. Tags live as long as their descriptor, which is
 * freed after a grace period; a tag moved to another bucket while a reader
 * walks is caught by the nulls marker at the chain's end.
 */

#include <linux/jiffies.h>
#include <linux/list_nulls.h>
#include <linux/percpu.h>
#include <linux/rculist_nulls.h>
#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/timer.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

#include "okcov.h"

struct pool_workqueue;

#define OKCOV_TAG_BITS		12
#define OKCOV_REMOTE_TAGS	4096
#define OKCOV_REMOTE_SECTIONS	64
#define OKCOV_MEMBER_BITS	8
#define OKCOV_REMOTE_MEMBERS	1024	/* processes: the owner and descendants */
/* Work that has waited this long in its queue may have been cancelled. */
#define OKCOV_TAG_MIN_AGE	(2 * HZ)
#define OKCOV_TAG_SCAN		(HZ / 4)

enum okcov_tag_kind {
	OKCOV_TAG_WORK,
	OKCOV_TAG_TIMER,
};

/*
 * Locking: [B] the bucket lock of ->bucket while ->used (read locklessly
 * where READ_ONCE says so); [R] the owner's r->lock; [I] immutable.
 */
struct okcov_tag {
	struct hlist_nulls_node	node;	/* [B] okcov_tag_table[bucket] */
	struct hlist_node	free;	/* [R] owner->free_tags, while !used */
	const void		*obj;	/* [B] the work_struct or timer_list */
	struct okcov_remote	*owner;	/* [I] the pool it belongs to */
	unsigned long		stamp;	/* [B] jiffies when tagged */
	u32			gen;	/* [B] bumped at each (re)tagging */
	u16			bucket;	/* [B] */
	u8			kind;	/* [B] enum okcov_tag_kind */
	bool			used;	/* [B] hashed */
};

struct okcov_tag_bucket {
	raw_spinlock_t		lock;
	struct hlist_nulls_head	head;	/* [B], walked under RCU */
};

/*
 * A process whose deferred work records into @owner: the attaching one,
 * and (->inherit) its descendants. Locking: [M] okcov_members_lock,
 * walked under RCU (nulls: entries are reused at once); [I] immutable.
 */
struct okcov_member {
	struct hlist_nulls_node	node;	/* [M] okcov_members bucket */
	const struct signal_struct *signal; /* [M] */
	struct okcov_remote	*owner;	/* [M] set once, before it is hashed */
	bool			used;	/* [M] hashed */
};

/*
 * A kworker running a work item of the owner: a task-hash entry (task =
 * the kworker, OKCOV_SECTION) from a pool, reused only after a grace
 * period since it was unhashed (the hot path may still walk it). The
 * kworker is not pinned: its exit probe ends the section first.
 * Locking: [L] okcov_lock (the hash) and [R] r->lock (the pool).
 */
struct okcov_section {
	struct okcov_attach	a;
	unsigned long		gp;		/* [R] unhashed at this RCU state */
	bool			busy;		/* [L][R] hashed */
	bool			retired;	/* [R] was hashed: gp is valid */
};

/*
 * The remote side of a descriptor, from KIOREMOTEATTACH to its free.
 * Locking: [R] r->lock; [I] immutable; [L] okcov_lock.
 */
struct okcov_remote {
	struct okcov		*kd;		/* [I] */
	struct task_struct	*pin;		/* [I] keeps the attacher's signal_struct, its member key, alive */
	bool			inherit;	/* [I] descendants are members */
	u64			handle;		/* [I] Linux's common handle, or 0 */
	struct rcu_head		rcu;
	raw_spinlock_t		lock;
	bool			live;		/* [L][R] TRACE: may tag, may run */
	struct okcov_attach	*sink;		/* [L][R] this enable's, or NULL */
	unsigned long		dropped;	/* [R] events lost */
	unsigned long		reclaimed;	/* [R] tags of objects that never ran */
	unsigned long		scanned;	/* [R] jiffies of the last age scan */
	struct hlist_head	free_tags;	/* [R] */
	struct okcov_tag	tags[OKCOV_REMOTE_TAGS];
	struct okcov_section	sections[OKCOV_REMOTE_SECTIONS];
	struct okcov_member	members[OKCOV_REMOTE_MEMBERS];	/* [M] */
};

/* Processes of remote descriptors attached (READY or TRACE). [M], RCU */
static DEFINE_RAW_SPINLOCK(okcov_members_lock);
static struct hlist_nulls_head okcov_members[1 << OKCOV_MEMBER_BITS];
static atomic_t okcov_nmembers = ATOMIC_INIT(0);
static struct okcov_tag_bucket okcov_tag_table[1 << OKCOV_TAG_BITS];
static atomic_t okcov_ntags = ATOMIC_INIT(0);
static atomic_t okcov_nsections = ATOMIC_INIT(0);	/* kworker sections */

DEFINE_PER_CPU(struct okcov_soft, okcov_soft);

/*
 * A timer cancelled in softirq with a tag: its expiry, or a deletion
 * (okcov_park_resolve()). [s] this CPU's softirq context only.
 */
struct okcov_parked {
	const void		*timer;
	struct okcov_tag	*tag;	/* compared, never dereferenced */
	u32			gen;
};

static DEFINE_PER_CPU(struct okcov_parked, okcov_parked);

/* The probes are registered while okcov_probe_users > 0. [P] */
static DEFINE_MUTEX(okcov_probe_mutex);
static unsigned int okcov_probe_users;	/* [P] TRACE remote descriptors */

static bool okcov_in_softirq(void)
{
	return in_serving_softirq() && !in_hardirq() && !in_nmi();
}

static void okcov_count_drop(struct okcov_remote *r)
{
	lockdep_assert_held(&r->lock);
	r->dropped++;
	atomic_long_inc(&okcov_stats.remote_dropped);
}

static void okcov_count_reclaim(struct okcov_remote *r)
{
	lockdep_assert_held(&r->lock);
	r->reclaimed++;
	atomic_long_inc(&okcov_stats.remote_reclaimed);
}

/* ---- members ---- */

static unsigned int okcov_member_hash(const struct signal_struct *sig)
{
	return hash_ptr(sig, OKCOV_MEMBER_BITS);
}

/* The remote descriptor @sig's process defers to, or NULL. RCU. */
static struct okcov_remote *okcov_member_owner(const struct signal_struct *sig)
{
	unsigned int idx = okcov_member_hash(sig);
	struct hlist_nulls_node *pos;
	struct okcov_member *m;

	if (!atomic_read(&okcov_nmembers))
		return NULL;
again:
	hlist_nulls_for_each_entry_rcu(m, pos, &okcov_members[idx], node)
		if (READ_ONCE(m->signal) == sig)
			return m->owner;
	if (get_nulls_value(pos) != idx)
		goto again;
	return NULL;
}

static struct okcov_member *okcov_member_find(const struct signal_struct *sig)
{
	struct hlist_nulls_node *pos;
	struct okcov_member *m;

	lockdep_assert_held(&okcov_members_lock);
	hlist_nulls_for_each_entry(m, pos, &okcov_members[okcov_member_hash(sig)],
				   node)
		if (m->signal == sig)
			return m;
	return NULL;
}

/* @sig's process defers to @r from now on; false if @r has no room. */
static bool okcov_member_add(struct okcov_remote *r,
			     const struct signal_struct *sig)
{
	unsigned int i;

	lockdep_assert_held(&okcov_members_lock);
	for (i = 0; i < OKCOV_REMOTE_MEMBERS; i++) {
		struct okcov_member *m = &r->members[i];

		if (m->used)
			continue;
		m->owner = r;
		WRITE_ONCE(m->signal, sig);
		m->used = true;
		atomic_inc(&okcov_nmembers);
		/* Pairs with the lockless walk of okcov_member_owner(). */
		hlist_nulls_add_head_rcu(&m->node,
					 &okcov_members[okcov_member_hash(sig)]);
		return true;
	}
	return false;
}

static void okcov_member_del(struct okcov_member *m)
{
	lockdep_assert_held(&okcov_members_lock);
	hlist_nulls_del_rcu(&m->node);
	m->used = false;
	atomic_dec(&okcov_nmembers);
}

/*
 * A process forks. A member's child becomes a member of an inheriting
 * descriptor: before wake_up_new_task(), so before it can run, let alone
 * exit. Threads share the signal_struct: nothing to do.
 */
static void notrace okcov_probe_fork(void *data, struct task_struct *parent,
				     struct task_struct *child)
{
	struct okcov_remote *r;
	unsigned long flags;

	if (child->signal == parent->signal || !atomic_read(&okcov_nmembers))
		return;
	rcu_read_lock();
	r = okcov_member_owner(parent->signal);
	if (r && r->inherit) {
		raw_spin_lock(&okcov_members_lock);
		if (!okcov_member_find(child->signal) &&
		    !okcov_member_add(r, child->signal)) {
			raw_spin_lock_irqsave(&r->lock, flags);
			okcov_count_drop(r);
			raw_spin_unlock_irqrestore(&r->lock, flags);
		}
		raw_spin_unlock(&okcov_members_lock);
	}
	rcu_read_unlock();
}

/*
 * The last thread of @p's process exits (dev.c's exit probe): it is a
 * member no more, before its signal_struct can be freed and reused.
 */
void okcov_remote_group_exit(struct task_struct *p)
{
	struct okcov_member *m;

	if (!atomic_read(&okcov_nmembers) || atomic_read(&p->signal->live))
		return;
	raw_spin_lock(&okcov_members_lock);
	m = okcov_member_find(p->signal);
	if (m)
		okcov_member_del(m);
	raw_spin_unlock(&okcov_members_lock);
}

/* ---- tags ---- */

static unsigned int okcov_tag_hash(const void *obj)
{
	return hash_ptr(obj, OKCOV_TAG_BITS);
}

/* Lockless: is @obj tagged? Caller: rcu_read_lock(). */
static bool okcov_tag_seen(const void *obj, enum okcov_tag_kind kind)
{
	unsigned int idx = okcov_tag_hash(obj);
	struct hlist_nulls_node *pos;
	struct okcov_tag *tag;

again:
	hlist_nulls_for_each_entry_rcu(tag, pos, &okcov_tag_table[idx].head,
				       node)
		if (READ_ONCE(tag->obj) == obj && READ_ONCE(tag->kind) == kind)
			return true;
	/* Ended in another chain: the tag we were on moved. */
	if (get_nulls_value(pos) != idx)
		goto again;
	return false;
}

static struct okcov_tag *okcov_tag_find(struct okcov_tag_bucket *b,
					const void *obj,
					enum okcov_tag_kind kind)
{
	struct hlist_nulls_node *pos;
	struct okcov_tag *tag;

	lockdep_assert_held(&b->lock);
	hlist_nulls_for_each_entry(tag, pos, &b->head, node)
		if (tag->obj == obj && tag->kind == kind)
			return tag;
	return NULL;
}

/* Out of its bucket; okcov_tag_free() gives it back to its pool. */
static void okcov_tag_unhash(struct okcov_tag *tag)
{
	lockdep_assert_held(&okcov_tag_table[tag->bucket].lock);
	hlist_nulls_del_rcu(&tag->node);
	WRITE_ONCE(tag->used, false);
	atomic_dec(&okcov_ntags);
}

static void okcov_tag_free(struct okcov_tag *tag)
{
	lockdep_assert_held(&tag->owner->lock);
	hlist_add_head(&tag->free, &tag->owner->free_tags);
}

static void okcov_tag_put(struct okcov_tag *tag, bool reclaimed)
{
	struct okcov_remote *r = tag->owner;
	unsigned long flags;

	okcov_tag_unhash(tag);
	raw_spin_lock_irqsave(&r->lock, flags);
	okcov_tag_free(tag);
	if (reclaimed)
		okcov_count_reclaim(r);
	raw_spin_unlock_irqrestore(&r->lock, flags);
}

/*
 * @r's pool is dry: give back the work tags that have waited longer than
 * any queue should (their work was cancelled). Buckets other than @held
 * are only tried: we hold @held and r->lock, against the usual order.
 */
static void okcov_tag_reclaim_aged(struct okcov_remote *r,
				   struct okcov_tag_bucket *held)
{
	unsigned long now = jiffies;
	unsigned int i;

	lockdep_assert_held(&held->lock);
	lockdep_assert_held(&r->lock);
	if (time_before(now, r->scanned + OKCOV_TAG_SCAN))
		return;
	r->scanned = now;
	for (i = 0; i < OKCOV_REMOTE_TAGS; i++) {
		struct okcov_tag *tag = &r->tags[i];
		struct okcov_tag_bucket *b;

		if (!READ_ONCE(tag->used) || READ_ONCE(tag->kind) != OKCOV_TAG_WORK ||
		    time_before(now, READ_ONCE(tag->stamp) + OKCOV_TAG_MIN_AGE))
			continue;
		b = &okcov_tag_table[READ_ONCE(tag->bucket)];
		if (b != held && !raw_spin_trylock(&b->lock))
			continue;
		/* Re-checked under its lock: it may have run meanwhile. */
		if (tag->used && &okcov_tag_table[tag->bucket] == b &&
		    tag->kind == OKCOV_TAG_WORK &&
		    !time_before(now, tag->stamp + OKCOV_TAG_MIN_AGE)) {
			okcov_tag_unhash(tag);
			okcov_tag_free(tag);
			okcov_count_reclaim(r);
		}
		if (b != held)
			raw_spin_unlock(&b->lock);
	}
}

/* Tag @obj for @r, which is live. */
static void okcov_tag_set(struct okcov_remote *r, struct okcov_tag_bucket *b,
			  const void *obj, enum okcov_tag_kind kind)
{
	struct okcov_tag *tag = NULL;

	lockdep_assert_held(&b->lock);
	raw_spin_lock(&r->lock);
	if (hlist_empty(&r->free_tags))
		okcov_tag_reclaim_aged(r, b);
	if (r->live && !hlist_empty(&r->free_tags)) {
		tag = hlist_entry(r->free_tags.first, struct okcov_tag, free);
		hlist_del(&tag->free);
	} else if (r->live) {
		okcov_count_drop(r);
	}
	raw_spin_unlock(&r->lock);
	if (!tag)
		return;
	WRITE_ONCE(tag->obj, obj);
	WRITE_ONCE(tag->kind, kind);
	tag->stamp = jiffies;
	tag->gen++;
	tag->bucket = b - okcov_tag_table;
	WRITE_ONCE(tag->used, true);
	atomic_inc(&okcov_ntags);
	/* Pairs with the lockless walk of okcov_tag_seen(). */
	hlist_nulls_add_head_rcu(&tag->node, &b->head);
}

/*
 * Whom work queued (or a timer armed) right here belongs to, or NULL: the
 * section we are in, else the process of the current thread. Only task
 * context and softirq sections can own: an interrupt that arms a timer on
 * top of an owner's thread does it for nobody. The result is used only
 * under its lock, after checking ->live. Caller: rcu_read_lock().
 */
static struct okcov_remote *okcov_remote_here(void)
{
	struct okcov_attach *a;

	if (in_task()) {
		a = atomic_read(&okcov_nsections) ?
			okcov_task_find_rcu(current) : NULL;
		if (a && (a->flags & OKCOV_SECTION))
			return a->kd->remote;
		return okcov_member_owner(current->signal);
	} else if (okcov_in_softirq()) {
		struct okcov_soft *soft = this_cpu_ptr(&okcov_soft);

		a = READ_ONCE(soft->a);
		if (a && soft->task == current)
			return a->kd->remote;
	}
	return NULL;
}

/* Queueing or arming @obj: (re)decide its owner. Any context. */
static void okcov_remote_tag(const void *obj, enum okcov_tag_kind kind)
{
	struct okcov_tag_bucket *b;
	struct okcov_remote *owner;
	struct okcov_tag *tag;
	unsigned long flags;

	rcu_read_lock();
	owner = okcov_remote_here();
	/* A bystander's object, untagged: the common case, lockless. */
	if (!owner && (!atomic_read(&okcov_ntags) || !okcov_tag_seen(obj, kind)))
		goto out;
	b = &okcov_tag_table[okcov_tag_hash(obj)];
	raw_spin_lock_irqsave(&b->lock, flags);
	tag = okcov_tag_find(b, obj, kind);
	if (tag && tag->owner != owner) {
		okcov_tag_put(tag, false);
		tag = NULL;
	}
	if (tag) {
		/*
		 * Queued or armed again by its owner: a new tagging. A
		 * cancel parked before it (okcov_park_resolve()) must not
		 * reclaim this one.
		 */
		tag->stamp = jiffies;
		tag->gen++;
	} else if (owner)
		okcov_tag_set(owner, b, obj, kind);
	raw_spin_unlock_irqrestore(&b->lock, flags);
out:
	rcu_read_unlock();
}

/*
 * Running @obj: consume its tag; its owner if that may record, with its
 * lock held and irqs off (*flags), else NULL. The owner's sink then is
 * the enable the tag belongs to. Caller: rcu_read_lock().
 */
static struct okcov_remote *okcov_remote_take(const void *obj,
					      enum okcov_tag_kind kind,
					      unsigned long *flags)
{
	struct okcov_tag_bucket *b;
	struct okcov_remote *owner = NULL;
	struct okcov_tag *tag;

	if (!atomic_read(&okcov_ntags) || !okcov_tag_seen(obj, kind))
		return NULL;
	b = &okcov_tag_table[okcov_tag_hash(obj)];
	raw_spin_lock_irqsave(&b->lock, *flags);
	tag = okcov_tag_find(b, obj, kind);
	if (tag) {
		owner = tag->owner;
		okcov_tag_unhash(tag);
		raw_spin_lock(&owner->lock);
		okcov_tag_free(tag);
		if (!owner->live) {
			raw_spin_unlock(&owner->lock);
			owner = NULL;
		}
	}
	raw_spin_unlock(&b->lock);
	if (!owner)
		local_irq_restore(*flags);
	return owner;
}

/* ---- timers deleted before they ran ---- */

/* A softirq timer event on this CPU: was the parked tag a deletion? */
static void okcov_park_resolve(const void *timer)
{
	struct okcov_parked *pk = this_cpu_ptr(&okcov_parked);
	struct okcov_tag_bucket *b;
	struct okcov_tag *tag;
	unsigned long flags;

	if (likely(!pk->timer) || pk->timer == timer)
		return;
	b = &okcov_tag_table[okcov_tag_hash(pk->timer)];
	raw_spin_lock_irqsave(&b->lock, flags);
	tag = okcov_tag_find(b, pk->timer, OKCOV_TAG_TIMER);
	/* Still the tagging we parked: nobody re-armed it since. */
	if (tag && tag == pk->tag && tag->gen == pk->gen)
		okcov_tag_put(tag, true);
	raw_spin_unlock_irqrestore(&b->lock, flags);
	pk->timer = NULL;
}

static void notrace okcov_probe_timer_cancel(void *data,
					     struct timer_list *timer)
{
	struct okcov_parked *pk = this_cpu_ptr(&okcov_parked);
	bool soft = okcov_in_softirq();
	struct okcov_tag_bucket *b;
	struct okcov_tag *tag;
	unsigned long flags;

	if (soft)
		okcov_park_resolve(timer);
	if (!atomic_read(&okcov_ntags))
		return;
	rcu_read_lock();
	if (!okcov_tag_seen(timer, OKCOV_TAG_TIMER))
		goto out;
	b = &okcov_tag_table[okcov_tag_hash(timer)];
	raw_spin_lock_irqsave(&b->lock, flags);
	tag = okcov_tag_find(b, timer, OKCOV_TAG_TIMER);
	if (tag && soft) {
		/* Expiring right now, or deleted from softirq: see above. */
		pk->timer = timer;
		pk->tag = tag;
		pk->gen = tag->gen;
	} else if (tag) {
		/* Expiry runs in softirq: this is a deletion. */
		okcov_tag_put(tag, true);
	}
	raw_spin_unlock_irqrestore(&b->lock, flags);
out:
	rcu_read_unlock();
}

/* ---- sections ---- */

static struct okcov_section *okcov_section_get(struct okcov_remote *r)
{
	unsigned int i;

	lockdep_assert_held(&r->lock);
	for (i = 0; i < OKCOV_REMOTE_SECTIONS; i++) {
		struct okcov_section *s = &r->sections[i];

		if (!s->busy &&
		    (!s->retired || poll_state_synchronize_rcu(s->gp)))
			return s;
	}
	okcov_count_drop(r);
	return NULL;
}

static void okcov_section_put(struct okcov_section *s)
{
	lockdep_assert_held(&okcov_lock);
	lockdep_assert_held(&s->a.kd->remote->lock);
	okcov_task_unlink(&s->a);
	atomic_dec(&okcov_nsections);
	s->busy = false;
	s->retired = true;
	s->gp = get_state_synchronize_rcu();
}

/* A kworker with a section exits (its work function oopsed). */
void okcov_remote_section_exit(struct okcov_attach *a)
{
	struct okcov_remote *r = a->kd->remote;
	unsigned long flags;

	lockdep_assert_held(&okcov_lock);
	raw_spin_lock_irqsave(&r->lock, flags);
	okcov_section_put(container_of(a, struct okcov_section, a));
	raw_spin_unlock_irqrestore(&r->lock, flags);
}

static void notrace okcov_probe_queue_work(void *data, int req_cpu,
					   struct pool_workqueue *pwq,
					   struct work_struct *work)
{
	okcov_remote_tag(work, OKCOV_TAG_WORK);
}

/*
 * In the kworker, before the work function. A BH work item runs here in
 * softirq, on top of whatever task it interrupted (maybe one holding
 * okcov_lock): it neither records nor touches anything.
 */
static void notrace okcov_probe_execute_start(void *data,
					      struct work_struct *work)
{
	struct okcov_remote *owner;
	struct okcov_attach *sink;
	struct okcov_section *s;
	unsigned long flags;

	if (!in_task())
		return;
	rcu_read_lock();
	owner = okcov_remote_take(work, OKCOV_TAG_WORK, &flags);
	if (!owner)
		goto out;
	sink = owner->sink;
	raw_spin_unlock_irqrestore(&owner->lock, flags);

	raw_spin_lock(&okcov_lock);
	raw_spin_lock_irqsave(&owner->lock, flags);
	/*
	 * Re-checked: stop may have run between the two locks, and a new
	 * enable after it (a new sink: RCU keeps the old one's address
	 * from being reused meanwhile). Work queued before KIODISABLE never
	 * records after the next KIOENABLE.
	 */
	if (!owner->live || owner->sink != sink) {
		s = NULL;
	} else if (okcov_task_find(current)) {
		okcov_count_drop(owner);
		s = NULL;
	} else {
		s = okcov_section_get(owner);
	}
	if (s) {
		s->a.task = current;
		s->a.mode = owner->sink->mode;
		s->a.flags = owner->sink->flags;
		s->a.area = owner->sink->area;
		s->a.nentries = owner->sink->nentries;
		s->a.pc_delta = owner->sink->pc_delta;
		s->a.entry_delta = owner->sink->entry_delta;
		s->a.kd = owner->kd;
		s->busy = true;
		atomic_inc(&okcov_nsections);
		okcov_task_link(&s->a);
	}
	raw_spin_unlock_irqrestore(&owner->lock, flags);
	raw_spin_unlock(&okcov_lock);
out:
	rcu_read_unlock();
}

/* After the work function; @work may be freed: only current matters. */
static void notrace okcov_probe_execute_end(void *data,
					    struct work_struct *work,
					    work_func_t function)
{
	struct okcov_attach *a;

	if (!in_task() || !atomic_read(&okcov_nsections))
		return;
	raw_spin_lock(&okcov_lock);
	a = okcov_task_find(current);
	if (a && (a->flags & OKCOV_SECTION))
		okcov_remote_section_exit(a);
	raw_spin_unlock(&okcov_lock);
}

static void notrace okcov_probe_timer_start(OKCOV_TIMER_START_PROBE_PARAMS)
{
	if (okcov_in_softirq())
		okcov_park_resolve(timer);
	okcov_remote_tag(timer, OKCOV_TAG_TIMER);
}

/*
 * In softirq (or the timer thread on PREEMPT_RT), before the callback. The
 * whole callback runs with bottom halves off, an RCU read-side section, so
 * the sink in okcov_soft outlives it. Callbacks do not nest on one CPU;
 * if the slot is taken anyway, the event is dropped.
 */
static void notrace okcov_probe_expire_entry(void *data,
					     struct timer_list *timer,
					     unsigned long baseclk)
{
	struct okcov_soft *soft = this_cpu_ptr(&okcov_soft);
	struct okcov_parked *pk = this_cpu_ptr(&okcov_parked);
	struct okcov_remote *owner;
	unsigned long flags;

	/* The cancel just before was this expiry: the tag is consumed below. */
	okcov_park_resolve(timer);
	pk->timer = NULL;
	rcu_read_lock();
	owner = okcov_remote_take(timer, OKCOV_TAG_TIMER, &flags);
	if (!owner)
		goto out;
	if (!soft->a) {
		soft->timer = timer;
		soft->task = current;
		/* Counted as any attached entry is. */
		atomic_inc(&okcov_nattached);
		/* Last: okcov_soft_entry() looks at a. */
		WRITE_ONCE(soft->a, owner->sink);
		__this_cpu_write(okcov_hot.soft, 1);
	} else {
		okcov_count_drop(owner);
	}
	raw_spin_unlock_irqrestore(&owner->lock, flags);
out:
	rcu_read_unlock();
}

static void okcov_soft_clear(struct okcov_soft *soft, int cpu)
{
	WRITE_ONCE(per_cpu(okcov_hot, cpu).soft, 0);
	WRITE_ONCE(soft->a, NULL);
	soft->timer = NULL;
	soft->task = NULL;
	atomic_dec(&okcov_nattached);
}

static void notrace okcov_probe_expire_exit(void *data,
					    struct timer_list *timer)
{
	struct okcov_soft *soft = this_cpu_ptr(&okcov_soft);

	if (READ_ONCE(soft->a) && soft->timer == timer)
		okcov_soft_clear(soft, smp_processor_id());
}

/* ---- probe registration ---- */

struct okcov_probe {
	const char		*name;
	void			*func;
	struct tracepoint	*tp;
};

/* Unregistered in reverse: the tagging probes go first. */
static struct okcov_probe okcov_probes[] = {
	{ "workqueue_execute_start", okcov_probe_execute_start },
	{ "workqueue_execute_end", okcov_probe_execute_end },
	{ "timer_expire_entry", okcov_probe_expire_entry },
	{ "timer_expire_exit", okcov_probe_expire_exit },
	{ "timer_cancel", okcov_probe_timer_cancel },
	{ "workqueue_queue_work", okcov_probe_queue_work },
	{ "timer_start", okcov_probe_timer_start },
	{ "sched_process_fork", okcov_probe_fork },
};

static void okcov_find_tp(struct tracepoint *tp, void *priv)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(okcov_probes); i++)
		if (!strcmp(tp->name, okcov_probes[i].name))
			okcov_probes[i].tp = tp;
}

static void okcov_probes_unregister(unsigned int n)
{
	int cpu;

	while (n--)
		tracepoint_probe_unregister(okcov_probes[n].tp,
					    okcov_probes[n].func, NULL);
	/*
	 * No probe runs any more, and every softirq section has ended (its
	 * callback ran with bottom halves off: an RCU read-side section)...
	 */
	tracepoint_synchronize_unregister();
	/* ...but those whose exit probe we took away left their slot. */
	for_each_possible_cpu(cpu) {
		struct okcov_soft *soft = per_cpu_ptr(&okcov_soft, cpu);

		if (READ_ONCE(soft->a))
			okcov_soft_clear(soft, cpu);
		per_cpu_ptr(&okcov_parked, cpu)->timer = NULL;
	}
}

/* A remote descriptor goes TRACE. May sleep. */
static int okcov_probes_get(void)
{
	unsigned int i;
	int ret = 0;

	mutex_lock(&okcov_probe_mutex);
	for (i = 0; !okcov_probe_users && i < ARRAY_SIZE(okcov_probes); i++) {
		ret = tracepoint_probe_register(okcov_probes[i].tp,
						okcov_probes[i].func, NULL);
		if (ret) {
			pr_err("cannot attach to %s: %d\n",
			       okcov_probes[i].name, ret);
			okcov_probes_unregister(i);
			break;
		}
	}
	if (!ret)
		okcov_probe_users++;
	mutex_unlock(&okcov_probe_mutex);
	return ret;
}

/* A remote descriptor left TRACE, its sections cut off. May sleep. */
static void okcov_probes_put(void)
{
	mutex_lock(&okcov_probe_mutex);
	if (!--okcov_probe_users)
		okcov_probes_unregister(ARRAY_SIZE(okcov_probes));
	mutex_unlock(&okcov_probe_mutex);
}

/* ---- what dev.c calls ---- */

/* Before a remote descriptor goes TRACE: probes and hook. May sleep. */
int okcov_remote_hook(void)
{
	int ret = okcov_probes_get();

	if (ret)
		return ret;
	ret = okcov_hook_get();
	if (ret)
		okcov_probes_put();
	return ret;
}

/* After it left TRACE and the grace period passed. May sleep. */
void okcov_remote_unhook(void)
{
	okcov_probes_put();
	okcov_hook_put();
}

/* READY -> TRACE: tags and sections record into @sink, a fresh entry. */
void okcov_remote_start(struct okcov *kd, struct okcov_attach *sink, int mode)
{
	struct okcov_remote *r = kd->remote;

	lockdep_assert_held(&okcov_lock);
	sink->mode = mode;
	sink->flags = OKCOV_CLAIM_ATOMIC | OKCOV_SECTION | okcov_entry_flags();
	sink->area = kd->area;
	sink->nentries = kd->nentries;
	sink->pc_delta = kd->pers->pc_delta;
	sink->entry_delta = kd->pers->entry_delta;
	sink->kd = kd;
	raw_spin_lock_irq(&r->lock);
	r->sink = sink;
	r->live = true;
	raw_spin_unlock_irq(&r->lock);
}

static void okcov_sink_free_rcu(struct rcu_head *rcu)
{
	kfree(container_of(rcu, struct okcov_attach, rcu));
}

/*
 * TRACE -> READY or freed: no new tag, no new section, every tag given
 * back, every kworker section cut off (the work function may go on; it no
 * longer records), the sink retired: timer sections see mode NONE and end
 * with their callback, within the grace period the caller waits for.
 */
void okcov_remote_stop(struct okcov *kd)
{
	struct okcov_remote *r = kd->remote;
	struct okcov_attach *sink;
	unsigned long flags;
	unsigned int i;

	lockdep_assert_held(&okcov_lock);
	raw_spin_lock_irq(&r->lock);
	r->live = false;
	sink = r->sink;
	r->sink = NULL;
	/* Pairs with READ_ONCE() in okcov_soft_entry(). */
	WRITE_ONCE(sink->mode, OKCOV_MODE_NONE);
	for (i = 0; i < OKCOV_REMOTE_SECTIONS; i++)
		if (r->sections[i].busy)
			okcov_section_put(&r->sections[i]);
	raw_spin_unlock_irq(&r->lock);
	/* call_rcu(), not kfree_rcu(): no allocation under okcov_lock (RT). */
	call_rcu(&sink->rcu, okcov_sink_free_rcu);

	/* No tag is handed out any more (!live): take back the rest. */
	for (i = 0; i < OKCOV_REMOTE_TAGS; i++) {
		struct okcov_tag *tag = &r->tags[i];
		struct okcov_tag_bucket *b;

		if (!READ_ONCE(tag->used))
			continue;
		b = &okcov_tag_table[READ_ONCE(tag->bucket)];
		raw_spin_lock_irqsave(&b->lock, flags);
		if (tag->used)
			okcov_tag_put(tag, false);
		raw_spin_unlock_irqrestore(&b->lock, flags);
	}
}

/* A live remote descriptor has @handle: Linux's kcov_remote_add(). */
static bool okcov_handle_taken(u64 handle)
{
	struct hlist_nulls_node *pos;
	struct okcov_member *m;
	unsigned int i;

	lockdep_assert_held(&okcov_members_lock);
	for (i = 0; handle && i < ARRAY_SIZE(okcov_members); i++)
		hlist_nulls_for_each_entry(m, pos, &okcov_members[i], node)
			if (m->owner->handle == handle)
				return true;
	return false;
}

/*
 * @kd (READY) becomes the calling process's remote descriptor: EBUSY if
 * the process has one, its own or an inheriting ancestor's; EEXIST if
 * another has Linux's common @handle (0: none).
 */
long okcov_remote_attach_kd(struct okcov *kd, u64 handle)
{
	struct okcov_member *m;
	struct okcov_remote *r;
	unsigned int i;
	long ret = 0;

	r = kvzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	r->kd = kd;
	raw_spin_lock_init(&r->lock);
	INIT_HLIST_HEAD(&r->free_tags);
	for (i = 0; i < OKCOV_REMOTE_TAGS; i++) {
		r->tags[i].owner = r;
		hlist_add_head(&r->tags[i].free, &r->free_tags);
	}

	r->inherit = kd->pers->flags & OKCOV_PERS_REMOTE_INHERIT;
	r->handle = handle;

	raw_spin_lock(&okcov_lock);
	/* Re-checked: KIOENABLE or another KIOREMOTEATTACH may have won. */
	if (kd->state != OKCOV_READY || kd->remote) {
		ret = -EBUSY;
		goto unlock;
	}
	raw_spin_lock(&okcov_members_lock);
	/* The process, or an inheriting ancestor, has one already. */
	m = okcov_member_find(current->signal);
	/*
	 * Linux's order: EBUSY for the thread that holds one, then EEXIST
	 * for a handle in use; then okcov's one per process, EBUSY.
	 */
	if (m && m->owner->kd->enabler == current)
		ret = -EBUSY;
	else if (okcov_handle_taken(handle))
		ret = -EEXIST;
	else if (m)
		ret = -EBUSY;
	if (ret) {
		raw_spin_unlock(&okcov_members_lock);
		goto unlock;
	}
	okcov_member_add(r, current->signal);
	raw_spin_unlock(&okcov_members_lock);
	get_task_struct(current);
	r->pin = current;
	WRITE_ONCE(kd->remote, r);
	r = NULL;
unlock:
	raw_spin_unlock(&okcov_lock);
	kvfree(r);
	return ret;
}

long okcov_remote_attach(struct okcov *kd, struct kio_remote_attach __user *uarg)
{
	struct kio_remote_attach ra;

	if (copy_from_user(&ra, uarg, sizeof(ra)))
		return -EFAULT;
	if (READ_ONCE(kd->state) != OKCOV_READY)
		return -EBUSY;
	if (ra.subsystem != KCOV_REMOTE_COMMON)
		return -EINVAL;
	return okcov_remote_attach_kd(kd, 0);
}

/* No owner lookup finds @r from now on, and its pin goes. */
static void okcov_remote_unlink(struct okcov_remote *r)
{
	unsigned int i;

	raw_spin_lock(&okcov_members_lock);
	for (i = 0; i < OKCOV_REMOTE_MEMBERS; i++)
		if (r->members[i].used)
			okcov_member_del(&r->members[i]);
	raw_spin_unlock(&okcov_members_lock);

	if (r->dropped || r->reclaimed)
		pr_info("remote descriptor of pid %d: %lu events dropped, %lu tags reclaimed\n",
			task_tgid_nr(r->pin), r->dropped, r->reclaimed);
	/*
	 * The probes compare with r->signal, but check r->live under the
	 * lock before they use r: the pin may go now.
	 */
	put_task_struct(r->pin);
}

/* Last reference: stopped already (dev.c); okcov_free() follows. */
void okcov_remote_release(struct okcov *kd)
{
	okcov_remote_unlink(kd->remote);
}

static void okcov_remote_free_rcu(struct rcu_head *rcu)
{
	kvfree(container_of(rcu, struct okcov_remote, rcu));
}

/*
 * Linux's KCOV_DISABLE of a remote descriptor (or a failed
 * KCOV_REMOTE_ENABLE) makes it a plain READY descriptor again, as
 * kcov_reset() does: no longer the process's, and freed after a grace
 * period (a probe may still hold it).
 */
void okcov_remote_forget(struct okcov *kd)
{
	struct okcov_remote *r;

	raw_spin_lock(&okcov_lock);
	r = kd->remote;
	if (kd->state != OKCOV_READY)
		r = NULL;
	if (r)
		WRITE_ONCE(kd->remote, NULL);
	raw_spin_unlock(&okcov_lock);
	if (!r)
		return;
	okcov_remote_unlink(r);
	call_rcu(&r->rcu, okcov_remote_free_rcu);
}

/* From okcov_free()'s RCU callback: nothing can see @kd any more. */
void okcov_remote_free(struct okcov *kd)
{
	kvfree(kd->remote);
}

int okcov_remote_init(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(okcov_tag_table); i++) {
		raw_spin_lock_init(&okcov_tag_table[i].lock);
		INIT_HLIST_NULLS_HEAD(&okcov_tag_table[i].head, i);
	}
	for (i = 0; i < ARRAY_SIZE(okcov_members); i++)
		INIT_HLIST_NULLS_HEAD(&okcov_members[i], i);
	for_each_kernel_tracepoint(okcov_find_tp, NULL);
	for (i = 0; i < ARRAY_SIZE(okcov_probes); i++) {
		if (!okcov_probes[i].tp) {
			pr_err("tracepoint %s not found\n", okcov_probes[i].name);
			return -ENOENT;
		}
	}
	return 0;
}

/* Unload: no descriptor is open, so no probe is registered. */
void okcov_remote_cleanup(void)
{
	WARN_ON_ONCE(okcov_probe_users);
	WARN_ON_ONCE(atomic_read(&okcov_ntags));
	WARN_ON_ONCE(atomic_read(&okcov_nmembers));
}
