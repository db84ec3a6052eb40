/* SPDX-License-Identifier: GPL-2.0 */
/*
 * okcov internals. The user ABI is uapi/okcov.h.
 *
 * Descriptor state transitions (all under okcov_lock):
 *
 *	NONE  -> READY	KIOSETBUFSIZE (buffer allocated outside the lock)
 *	READY -> TRACE	KIOENABLE: the calling thread is attached
 *	TRACE -> READY	KIODISABLE, or exit of the attached thread
 *	TRACE -> DYING	last file reference (and so last mapping) dropped
 *	DYING -> freed	exit of the attached thread, or module unload
 *	NONE, READY -> freed	last file reference dropped
 *
 * The hot path (ftrace callback, sanitizer hooks) never takes a lock: it
 * finds the current thread's descriptor in an RCU hash, checks its mode and
 * writes through okcov_claim(). Descriptors and hash entries are freed only
 * after a grace period.
 */
#ifndef _OKCOV_H
#define _OKCOV_H

#include <linux/types.h>
#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/hash.h>
#include <linux/preempt.h>
#include <linux/rculist.h>
#include <linux/sched.h>
#include <linux/spinlock.h>

#include "../uapi/okcov.h"

enum okcov_state {
	OKCOV_NONE,
	OKCOV_READY,
	OKCOV_TRACE,
	OKCOV_DYING,
};

struct okcov_attach;

/*
 * One open() of /dev/okcov (OpenBSD's struct kcov_dev).
 * Locking: [L] okcov_lock; [I] immutable once the state left NONE;
 * [a] written under okcov_lock, read locklessly by the hot path.
 */
struct okcov {
	enum okcov_state	state;		/* [L] */
	int			mode;		/* [L][a] KCOV_MODE_*, NONE unless TRACE */
	u64			nentries;	/* [I] buffer size in words */
	u64			*area;		/* [I] vmalloc_user() buffer */
	struct okcov_attach	*attach;	/* [L] set while TRACE or DYING */
	struct rcu_head		rcu;
};

/*
 * Entry of the per-task hash: task_struct has no room for us.
 * Locking: [L] okcov_lock for writers; RCU for the hot path; [I] immutable.
 */
struct okcov_attach {
	struct hlist_node	node;		/* [L] okcov_tasks bucket */
	struct task_struct	*task;		/* [I] the attached thread */
	struct okcov		*kd;		/* [I] its descriptor */
	struct rcu_head		rcu;
};

#define OKCOV_HASH_BITS		10

extern raw_spinlock_t okcov_lock;
extern struct hlist_head okcov_tasks[1 << OKCOV_HASH_BITS];
extern atomic_t okcov_nattached;
extern unsigned long okcov_max_entries;

/* task.c: the per-task hash, nothing else */
struct okcov_attach *okcov_task_find(struct task_struct *t);
void okcov_task_attach(struct okcov_attach *a, struct task_struct *t,
		       struct okcov *kd);
void okcov_task_detach(struct okcov *kd);

/* dev.c */
int okcov_dev_init(void);
void okcov_dev_cleanup(void);

/*
 * sancov.c: the compiler emits the calls, nothing declares them. With
 * CONFIG_KCOV they are the kernel's (and the compiler's built-ins).
 */
#ifndef CONFIG_KCOV
void __sanitizer_cov_trace_pc(void);
void __sanitizer_cov_trace_cmp1(u8 arg1, u8 arg2);
void __sanitizer_cov_trace_cmp2(u16 arg1, u16 arg2);
void __sanitizer_cov_trace_cmp4(u32 arg1, u32 arg2);
void __sanitizer_cov_trace_cmp8(u64 arg1, u64 arg2);
void __sanitizer_cov_trace_const_cmp1(u8 arg1, u8 arg2);
void __sanitizer_cov_trace_const_cmp2(u16 arg1, u16 arg2);
void __sanitizer_cov_trace_const_cmp4(u32 arg1, u32 arg2);
void __sanitizer_cov_trace_const_cmp8(u64 arg1, u64 arg2);
void __sanitizer_cov_trace_switch(u64 val, u64 *cases);
#endif

/* ftrace.c */
int okcov_ftrace_init(void);
void okcov_ftrace_cleanup(void);
int okcov_hook_get(void);
void okcov_hook_put(void);

/*
 * The descriptor the current thread records into in @mode, or NULL.
 * Hot path: the caller has preemption disabled, which is an RCU read-side
 * critical section; nothing here is traceable or takes a lock.
 */
static __always_inline struct okcov *okcov_current(int mode)
{
	struct hlist_head *head;
	struct hlist_node *pos;
	struct okcov_attach *a;
	struct task_struct *t = current;

	if (!atomic_read(&okcov_nattached))
		return NULL;
	head = &okcov_tasks[hash_ptr(t, OKCOV_HASH_BITS)];
	/* Pairs with hlist_add_head_rcu() in okcov_task_attach(). */
	for (pos = rcu_dereference_raw(hlist_first_rcu(head)); pos;
	     pos = rcu_dereference_raw(hlist_next_rcu(pos))) {
		a = hlist_entry(pos, struct okcov_attach, node);
		if (a->task != t)
			continue;
		if (READ_ONCE(a->kd->mode) != mode)
			return NULL;
		return a->kd;
	}
	return NULL;
}

/*
 * Claim room for one record of @words words; the one helper every writer
 * of a buffer goes through. area[0] belongs to userspace too: read it once,
 * and a value at or past capacity (huge, "negative") records nothing.
 */
static __always_inline u64 *okcov_claim(struct okcov *kd, unsigned int words)
{
	u64 *area = kd->area;
	u64 pos = READ_ONCE(area[0]);

	if (pos >= (kd->nentries - 1) / words)
		return NULL;
	/*
	 * Publish the count before the record, as kernel/kcov.c does: a
	 * writer nesting after this point takes the next slot instead of
	 * overwriting ours. Pairs with the READ_ONCE(area[0]) above.
	 */
	WRITE_ONCE(area[0], pos + 1);
	barrier();
	return &area[pos * words + 1];
}

/* Record @ip if the current thread traces PCs. Caller: task context, preemption off. */
static __always_inline void okcov_write_pc(unsigned long ip)
{
	struct okcov *kd = okcov_current(KCOV_MODE_TRACE_PC);
	u64 *slot;

	if (!kd)
		return;
	slot = okcov_claim(kd, 1);
	if (slot)
		*slot = ip;
}

#endif /* _OKCOV_H */
