// SPDX-License-Identifier: GPL-2.0
/*
 * Remote coverage (OpenBSD's KIOREMOTEATTACH, KCOV_REMOTE_COMMON): the work
 * a process defers records into that process's remote descriptor.
 *
 * Sources. Work items it queues (recorded in the kworker while the work
 * function runs) and timer_list timers it arms (recorded while the callback
 * runs, in softirq). Nothing in work_struct or timer_list has room for us,
 * so the tracepoints that mark queueing and running carry the owner:
 *
 *	workqueue_queue_work, timer_start	tag the object with its owner
 *	workqueue_execute_start/_end		a kworker section: an entry of
 *						the task hash, as an attached
 *						thread has
 *	timer_expire_entry/_exit		a softirq section (per-CPU
 *						okcov_soft, okcov_soft_lookup())
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
 * whose callback queues the work, and both halves record.
 *
 * Descendants do not count. SPEC 2b says "the attaching process", and that
 * is OpenBSD's rule (task_add() and timeout_add() note curproc->p_p, the
 * process). Linux's kcov inherits its common handle across fork() because
 * its handle lives in task_struct and its executor enables coverage before
 * forking; okcov's descriptor is per process, one per process, and a child
 * that wants remote coverage opens and attaches its own (syzkaller's
 * OpenBSD executor attaches in the process that runs the program). Walking
 * the parent chain on every queue_work() of the system would also cost
 * every process, not only the fuzzer.
 *
 * Tag lifetime. Every queueing fires the queue tracepoint, so a tag is
 * re-decided at each queueing: a queueing by anyone else clears it (a work
 * item reused after its owner has gone is not recorded). Running a tagged
 * object consumes the tag. Cancellation fires nothing: the tag stays until
 * the object is queued again or its owner's descriptor is disabled or
 * closed, which drops every tag it owns. Tags come from a pool preallocated
 * per descriptor (no allocation in tracepoint context, which on PREEMPT_RT
 * could not allocate at all); when it runs out the event is dropped and
 * counted (remote_dropped in the kernel log at close).
 *
 * Both write one buffer from several CPUs: their entries claim with
 * cmpxchg (OKCOV_CLAIM_ATOMIC).
 *
 * Locking: okcov_remote_lock (raw, irqsave: the queue and arm tracepoints
 * fire in any context) is a leaf, nested inside okcov_lock; nothing that
 * can queue work or arm a timer runs under it (the probe would recurse on
 * it). The hot path reads the task hash and okcov_soft locklessly, under
 * its preempt-disabled RCU section; section entries are reused only after
 * a grace period, and descriptors are freed after one.
 */

#include <linux/percpu.h>
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

#define OKCOV_TAG_BITS		8
#define OKCOV_REMOTE_TAGS	512
#define OKCOV_REMOTE_SECTIONS	64

enum okcov_tag_kind {
	OKCOV_TAG_WORK,
	OKCOV_TAG_TIMER,
};

/* Locking: [R] okcov_remote_lock; [I] immutable. */
struct okcov_tag {
	struct hlist_node	node;	/* [R] okcov_tags bucket, or free list */
	const void		*obj;	/* [R] the work_struct or timer_list */
	struct okcov_remote	*owner;	/* [I] the pool it belongs to */
	enum okcov_tag_kind	kind;	/* [R] */
	bool			used;	/* [R] in okcov_tags */
};

/*
 * A kworker running a work item of the owner: a task-hash entry (task =
 * the kworker, OKCOV_SECTION) from a pool, reused only after a grace
 * period since it was unhashed (the hot path may still walk it).
 * Locking: [L] okcov_lock (the hash) and [R] okcov_remote_lock (the pool).
 */
struct okcov_section {
	struct okcov_attach	a;
	unsigned long		gp;		/* [R] unhashed at this RCU state */
	bool			busy;		/* [L][R] hashed */
	bool			retired;	/* [R] was hashed: gp is valid */
};

/*
 * The remote side of a descriptor, from KIOREMOTEATTACH to its free.
 * Locking: [R] okcov_remote_lock; [I] immutable; [L] okcov_lock.
 */
struct okcov_remote {
	struct okcov		*kd;		/* [I] */
	struct signal_struct	*signal;	/* [I] the owner process */
	struct task_struct	*pin;		/* [I] keeps signal alive */
	struct list_head	node;		/* [R] okcov_remotes, RCU */
	bool			live;		/* [R] TRACE: may tag, may run */
	bool			hooked;		/* [L] holds probe and hook refs */
	unsigned long		dropped;	/* [R] pool exhausted, events lost */
	struct okcov_attach	sink;		/* timer sections record here */
	struct hlist_head	free_tags;	/* [R] */
	struct okcov_tag	tags[OKCOV_REMOTE_TAGS];
	struct okcov_section	sections[OKCOV_REMOTE_SECTIONS];
};

static DEFINE_RAW_SPINLOCK(okcov_remote_lock);
/* Remote descriptors attached (READY or TRACE), RCU for the probes. [R] */
static LIST_HEAD(okcov_remotes);
static struct hlist_head okcov_tags[1 << OKCOV_TAG_BITS];	/* [R] */
static atomic_t okcov_ntags = ATOMIC_INIT(0);
static atomic_t okcov_nsections = ATOMIC_INIT(0);	/* kworker sections */

DEFINE_PER_CPU(struct okcov_soft, okcov_soft);

/* The probes are registered while okcov_probe_users > 0. [P] */
static DEFINE_MUTEX(okcov_probe_mutex);
static unsigned int okcov_probe_users;	/* [P] TRACE remote descriptors */

/* ---- tags ---- */

static struct okcov_tag *okcov_tag_find(const void *obj,
					enum okcov_tag_kind kind)
{
	struct okcov_tag *tag;

	lockdep_assert_held(&okcov_remote_lock);
	hlist_for_each_entry(tag, &okcov_tags[hash_ptr(obj, OKCOV_TAG_BITS)],
			     node)
		if (tag->obj == obj && tag->kind == kind)
			return tag;
	return NULL;
}

static void okcov_tag_put(struct okcov_tag *tag)
{
	lockdep_assert_held(&okcov_remote_lock);
	hlist_del(&tag->node);
	tag->used = false;
	tag->obj = NULL;
	hlist_add_head(&tag->node, &tag->owner->free_tags);
	atomic_dec(&okcov_ntags);
}

static void okcov_tag_set(struct okcov_remote *r, const void *obj,
			  enum okcov_tag_kind kind)
{
	struct okcov_tag *tag;

	lockdep_assert_held(&okcov_remote_lock);
	if (hlist_empty(&r->free_tags)) {
		r->dropped++;
		atomic_long_inc(&okcov_stats.remote_dropped);
		return;
	}
	tag = hlist_entry(r->free_tags.first, struct okcov_tag, node);
	hlist_del(&tag->node);
	tag->obj = obj;
	tag->kind = kind;
	tag->used = true;
	hlist_add_head(&tag->node, &okcov_tags[hash_ptr(obj, OKCOV_TAG_BITS)]);
	atomic_inc(&okcov_ntags);
}

/*
 * Whom work queued (or a timer armed) right here belongs to, or NULL: the
 * section we are in, else the process of the current thread. Only task
 * context and softirq sections can own: an interrupt that arms a timer on
 * top of an owner's thread does it for nobody. The result is used only
 * under okcov_remote_lock, after checking ->live: remote descriptors are
 * freed after a grace period, and this runs in an RCU read-side section
 * (the tracepoint's, or ours on kernels whose tracepoints are preemptible).
 */
static struct okcov_remote *okcov_remote_here(void)
{
	struct okcov_remote *r, *owner = NULL;
	struct okcov_attach *a;

	rcu_read_lock();
	if (in_task()) {
		a = atomic_read(&okcov_nsections) ?
			okcov_task_find_rcu(current) : NULL;
		if (a && (a->flags & OKCOV_SECTION)) {
			owner = a->kd->remote;
		} else {
			list_for_each_entry_rcu(r, &okcov_remotes, node) {
				if (r->signal == current->signal) {
					owner = r;
					break;
				}
			}
		}
	} else if (in_serving_softirq() && !in_hardirq() && !in_nmi()) {
		struct okcov_soft *soft = this_cpu_ptr(&okcov_soft);

		a = READ_ONCE(soft->a);
		if (a && soft->task == current)
			owner = a->kd->remote;
	}
	rcu_read_unlock();
	return owner;
}

/* Queueing or arming @obj: (re)decide its owner. Any context. */
static void okcov_remote_tag(const void *obj, enum okcov_tag_kind kind)
{
	struct okcov_remote *owner = okcov_remote_here();
	struct okcov_tag *tag;
	unsigned long flags;

	if (!owner && !atomic_read(&okcov_ntags))
		return;
	raw_spin_lock_irqsave(&okcov_remote_lock, flags);
	tag = okcov_tag_find(obj, kind);
	if (tag && tag->owner != owner) {
		okcov_tag_put(tag);
		tag = NULL;
	}
	if (!tag && owner && owner->live)
		okcov_tag_set(owner, obj, kind);
	raw_spin_unlock_irqrestore(&okcov_remote_lock, flags);
}

/* Running @obj: consume its tag; its owner if that may record. */
static struct okcov_remote *okcov_remote_take(const void *obj,
					      enum okcov_tag_kind kind)
{
	struct okcov_remote *owner = NULL;
	struct okcov_tag *tag;

	lockdep_assert_held(&okcov_remote_lock);
	tag = okcov_tag_find(obj, kind);
	if (!tag)
		return NULL;
	if (tag->owner->live)
		owner = tag->owner;
	okcov_tag_put(tag);
	return owner;
}

/* ---- sections ---- */

static struct okcov_section *okcov_section_get(struct okcov_remote *r)
{
	unsigned int i;

	lockdep_assert_held(&okcov_remote_lock);
	for (i = 0; i < OKCOV_REMOTE_SECTIONS; i++) {
		struct okcov_section *s = &r->sections[i];

		if (!s->busy &&
		    (!s->retired || poll_state_synchronize_rcu(s->gp)))
			return s;
	}
	r->dropped++;
	atomic_long_inc(&okcov_stats.remote_dropped);
	return NULL;
}

static void okcov_section_put(struct okcov_section *s)
{
	lockdep_assert_held(&okcov_lock);
	lockdep_assert_held(&okcov_remote_lock);
	/* Pairs with READ_ONCE() in okcov_lookup(). */
	WRITE_ONCE(s->a.mode, KCOV_MODE_NONE);
	hlist_del_rcu(&s->a.node);
	okcov_hot_task(s->a.task, false);
	atomic_dec(&okcov_nattached);
	atomic_dec(&okcov_nsections);
	s->busy = false;
	s->retired = true;
	s->gp = get_state_synchronize_rcu();
}

static void notrace okcov_probe_queue_work(void *data, int req_cpu,
					   struct pool_workqueue *pwq,
					   struct work_struct *work)
{
	okcov_remote_tag(work, OKCOV_TAG_WORK);
}

/* In the kworker, before the work function. */
static void notrace okcov_probe_execute_start(void *data,
					      struct work_struct *work)
{
	struct okcov_remote *owner;
	struct okcov_section *s;
	unsigned long flags;

	if (!atomic_read(&okcov_ntags))
		return;
	raw_spin_lock(&okcov_lock);
	raw_spin_lock_irqsave(&okcov_remote_lock, flags);
	owner = okcov_remote_take(work, OKCOV_TAG_WORK);
	if (owner && !okcov_task_find(current)) {
		s = okcov_section_get(owner);
		if (s) {
			s->a.task = current;
			s->a.mode = owner->sink.mode;
			s->a.flags = OKCOV_CLAIM_ATOMIC | OKCOV_SECTION;
			s->a.area = owner->sink.area;
			s->a.nentries = owner->sink.nentries;
			s->a.kd = owner->kd;
			s->busy = true;
			atomic_inc(&okcov_nsections);
			atomic_inc(&okcov_nattached);
			/* Pairs with rcu_dereference_raw() in okcov_lookup(). */
			hlist_add_head_rcu(&s->a.node, okcov_bucket(current));
			okcov_hot_task(current, true);
		}
	}
	raw_spin_unlock_irqrestore(&okcov_remote_lock, flags);
	raw_spin_unlock(&okcov_lock);
}

/* After the work function; @work may be freed: only current matters. */
static void notrace okcov_probe_execute_end(void *data,
					    struct work_struct *work,
					    work_func_t function)
{
	struct okcov_attach *a;
	unsigned long flags;

	if (!atomic_read(&okcov_nsections))
		return;
	raw_spin_lock(&okcov_lock);
	a = okcov_task_find(current);
	if (a && (a->flags & OKCOV_SECTION)) {
		raw_spin_lock_irqsave(&okcov_remote_lock, flags);
		okcov_section_put(container_of(a, struct okcov_section, a));
		raw_spin_unlock_irqrestore(&okcov_remote_lock, flags);
	}
	raw_spin_unlock(&okcov_lock);
}

static void notrace okcov_probe_timer_start(OKCOV_TIMER_START_PROBE_PARAMS)
{
	okcov_remote_tag(timer, OKCOV_TAG_TIMER);
}

/*
 * In softirq (or the timer thread on PREEMPT_RT), before the callback. The
 * whole callback runs with bottom halves off, an RCU read-side section, so
 * the entry in okcov_soft outlives it. Callbacks do not nest on one CPU;
 * if the slot is taken anyway, the event is dropped.
 */
static void notrace okcov_probe_expire_entry(void *data,
					     struct timer_list *timer,
					     unsigned long baseclk)
{
	struct okcov_soft *soft = this_cpu_ptr(&okcov_soft);
	struct okcov_remote *owner;
	unsigned long flags;

	if (!atomic_read(&okcov_ntags))
		return;
	raw_spin_lock_irqsave(&okcov_remote_lock, flags);
	owner = okcov_remote_take(timer, OKCOV_TAG_TIMER);
	if (owner) {
		if (!soft->a) {
			soft->timer = timer;
			soft->task = current;
			/* Counted as any attached entry is. */
			atomic_inc(&okcov_nattached);
			/* Last: okcov_soft_lookup() looks at a. */
			WRITE_ONCE(soft->a, &owner->sink);
			__this_cpu_write(okcov_hot.soft, 1);
		} else {
			owner->dropped++;
			atomic_long_inc(&okcov_stats.remote_dropped);
		}
	}
	raw_spin_unlock_irqrestore(&okcov_remote_lock, flags);
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

static struct okcov_probe okcov_probes[] = {
	{ "workqueue_queue_work", okcov_probe_queue_work },
	{ "workqueue_execute_start", okcov_probe_execute_start },
	{ "workqueue_execute_end", okcov_probe_execute_end },
	{ "timer_start", okcov_probe_timer_start },
	{ "timer_expire_entry", okcov_probe_expire_entry },
	{ "timer_expire_exit", okcov_probe_expire_exit },
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

/* ---- the descriptor side (dev.c) ---- */

/*
 * Stop recording: no new tag, no new section, every tag dropped, every
 * kworker section cut off (the work function may go on; it no longer
 * records). Timer sections see mode NONE and end with their callback,
 * within the grace period the caller waits for. Returns whether the
 * descriptor held the probe and hook references, which the caller drops
 * outside the locks.
 */
static bool okcov_remote_stop(struct okcov_remote *r)
{
	bool hooked = r->hooked;
	unsigned int i;

	lockdep_assert_held(&okcov_lock);
	raw_spin_lock_irq(&okcov_remote_lock);
	r->live = false;
	WRITE_ONCE(r->sink.mode, KCOV_MODE_NONE);
	for (i = 0; i < OKCOV_REMOTE_TAGS; i++)
		if (r->tags[i].used)
			okcov_tag_put(&r->tags[i]);
	for (i = 0; i < OKCOV_REMOTE_SECTIONS; i++)
		if (r->sections[i].busy)
			okcov_section_put(&r->sections[i]);
	raw_spin_unlock_irq(&okcov_remote_lock);
	r->hooked = false;
	return hooked;
}

static void okcov_remote_unhook(void)
{
	okcov_probes_put();
	okcov_hook_put();
}

long okcov_remote_attach(struct okcov *kd, struct kio_remote_attach __user *uarg)
{
	struct kio_remote_attach ra;
	struct okcov_remote *r, *other;
	unsigned int i;
	long ret = 0;

	if (copy_from_user(&ra, uarg, sizeof(ra)))
		return -EFAULT;
	if (READ_ONCE(kd->state) != OKCOV_READY)
		return -EBUSY;
	if (ra.subsystem != KCOV_REMOTE_COMMON)
		return -EINVAL;

	r = kvzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	r->kd = kd;
	r->signal = current->signal;
	INIT_HLIST_HEAD(&r->free_tags);
	for (i = 0; i < OKCOV_REMOTE_TAGS; i++) {
		r->tags[i].owner = r;
		hlist_add_head(&r->tags[i].node, &r->free_tags);
	}

	raw_spin_lock(&okcov_lock);
	/* Re-checked: KIOENABLE or another KIOREMOTEATTACH may have won. */
	if (kd->state != OKCOV_READY || kd->remote) {
		ret = -EBUSY;
		goto unlock;
	}
	r->sink.mode = KCOV_MODE_NONE;
	r->sink.flags = OKCOV_CLAIM_ATOMIC | OKCOV_SECTION;
	r->sink.area = kd->area;
	r->sink.nentries = kd->nentries;
	r->sink.kd = kd;
	raw_spin_lock_irq(&okcov_remote_lock);
	list_for_each_entry(other, &okcov_remotes, node) {
		if (other->signal == current->signal) {
			ret = -EBUSY;
			break;
		}
	}
	if (!ret) {
		get_task_struct(current);
		r->pin = current;
		kd->remote = r;
		list_add_tail_rcu(&r->node, &okcov_remotes);
		r = NULL;
	}
	raw_spin_unlock_irq(&okcov_remote_lock);
unlock:
	raw_spin_unlock(&okcov_lock);
	kvfree(r);
	return ret;
}

/* KIOENABLE on a remote descriptor: TRACE, and no thread attached. */
long okcov_remote_enable(struct okcov *kd, int mode)
{
	struct okcov_remote *r = kd->remote;
	long ret;

	ret = okcov_probes_get();
	if (ret)
		return ret;
	ret = okcov_hook_get();
	if (ret) {
		okcov_probes_put();
		return ret;
	}

	raw_spin_lock(&okcov_lock);
	if (okcov_task_find(current) || kd->state != OKCOV_READY) {
		ret = -EBUSY;
	} else if (mode != KCOV_MODE_TRACE_PC && mode != KCOV_MODE_TRACE_CMP) {
		ret = -EINVAL;
	} else {
		kd->state = OKCOV_TRACE;
		r->hooked = true;
		raw_spin_lock_irq(&okcov_remote_lock);
		r->live = true;
		WRITE_ONCE(r->sink.mode, mode);
		raw_spin_unlock_irq(&okcov_remote_lock);
	}
	raw_spin_unlock(&okcov_lock);

	if (ret)
		okcov_remote_unhook();
	return ret;
}

/* KIODISABLE on a remote descriptor, from any thread. */
long okcov_remote_disable(struct okcov *kd)
{
	bool hooked;

	raw_spin_lock(&okcov_lock);
	if (kd->state != OKCOV_TRACE) {
		raw_spin_unlock(&okcov_lock);
		return -EBUSY;
	}
	hooked = okcov_remote_stop(kd->remote);
	kd->state = OKCOV_READY;
	raw_spin_unlock(&okcov_lock);

	/* Every writer that saw the old mode has left. */
	synchronize_rcu();
	if (hooked)
		okcov_remote_unhook();
	return 0;
}

/* Last reference to a remote descriptor: stop; okcov_free() follows. */
void okcov_remote_release(struct okcov *kd)
{
	struct okcov_remote *r = kd->remote;
	bool hooked;

	raw_spin_lock(&okcov_lock);
	hooked = okcov_remote_stop(r);
	raw_spin_lock_irq(&okcov_remote_lock);
	list_del_rcu(&r->node);
	raw_spin_unlock_irq(&okcov_remote_lock);
	raw_spin_unlock(&okcov_lock);

	if (r->dropped)
		pr_info("remote descriptor of pid %d: %lu events dropped (pool full)\n",
			task_tgid_nr(r->pin), r->dropped);
	/*
	 * The probes compare with r->signal, but check r->live under the
	 * lock before they use r: the pin may go now.
	 */
	put_task_struct(r->pin);
	if (hooked)
		okcov_remote_unhook();
}

/* From okcov_free()'s RCU callback: nothing can see @kd any more. */
void okcov_remote_free(struct okcov *kd)
{
	kvfree(kd->remote);
}

int okcov_remote_init(void)
{
	unsigned int i;

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
}
