/* SPDX-License-Identifier: GPL-2.0 */
/*
 * okcov internals. The user ABI is uapi/okcov.h.
 *
 * Descriptor state transitions (all under okcov_lock):
 *
 *	NONE  -> READY	KIOSETBUFSIZE (buffer allocated outside the lock)
 *	READY -> TRACE	KIOENABLE: the calling thread is attached, and the
 *			descriptor holds a hook reference (ftrace.c) while TRACE
 *	TRACE -> READY	KIODISABLE, or exit of the attached thread
 *	TRACE -> DYING	last file reference (and so last mapping) dropped:
 *			the buffer and the hook reference go at once
 *	DYING -> freed	exit of the attached thread, or module unload
 *	NONE, READY -> freed	last file reference dropped
 *	remote descriptors (KIOREMOTEATTACH, remote.c): READY <-> TRACE
 *	without attaching a thread; last reference dropped -> stopped,
 *	drained and freed, never DYING
 *
 * A thread reaped by another's KIOENABLE (dev.c, okcov_reap_exiting())
 * may still be inside a record on its CPU: nobody attaches to the
 * descriptor until the grace period after the reap (->reap_gp) passed.
 *
 * Contexts: okcov_lock is taken in task context only (ioctls, release,
 * the exit probe, a kworker's workqueue probes), never from softirq,
 * hardirq or NMI, so it needs no irq or BH disabling; what the remote
 * probes take in other contexts is remote.c's (its header).
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
#include <linux/kallsyms.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/rculist.h>
#include <linux/sched.h>
#include <linux/spinlock.h>

#include "../uapi/okcov.h"
#include "insn.h"
#include "record.h"

enum okcov_state {
	OKCOV_NONE,
	OKCOV_READY,
	OKCOV_TRACE,
	OKCOV_DYING,
};

/*
 * The rules of the ABI a descriptor was opened through, where they are
 * not the state machine's own: dev.c's okcov_openbsd (/dev/okcov,
 * /dev/kcov) and linux.c's (/sys/kernel/debug/kcov). dev.c and remote.c
 * consult them; each errno is the one okcov(4) and okcov-linux(4) give,
 * and their ERRORS say in which order. [I] before the ABI's file exists.
 */
struct okcov_personality {
	long		pc_delta;	/* added to a recorded PC... */
	long		entry_delta;	/* ...and to a function entry */
	/* checked before all else, when nonzero: KIOENABLE while not READY */
	int		enable_state_err;
	/* nonzero: KCOV_MODE_TRACE_CMP while nothing produces comparisons */
	int		cmp_unsourced_err;
	int		disable_err;	/* KIODISABLE's misuse */
	unsigned int	flags;		/* OKCOV_PERS_* */
};

/* okcov_personality.flags */
#define OKCOV_PERS_REMOTE_SLOT		0x1	/* a remote enable leaves the thread's slot */
#define OKCOV_PERS_REMOTE_INHERIT	0x2	/* a remote descriptor follows forks */

struct okcov_attach;
struct okcov_remote;
struct file;
struct inode;
struct vm_area_struct;

/*
 * One open() of /dev/okcov (OpenBSD's struct kcov_dev). The hot path never
 * reads it: what it needs is copied into the attach entry.
 * Locking: [L] okcov_lock; [I] immutable once the state left NONE;
 * [D] okcov_deep_mutex (deep.c); [R] okcov_reach_mutex (reach.c).
 */
struct okcov {
	enum okcov_state	state;		/* [L] */
	const struct okcov_personality *pers;	/* [I] */
	const void		*enabler;	/* [L] Linux ABI: who enabled remote */
	u64			nentries;	/* [I] buffer size in words */
	u64			*area;		/* [L] vmalloc'ed buffer; freed at DYING */
	struct okcov_attach	*attach;	/* [L] set while TRACE or DYING */
	/*
	 * [L] set while READY by KIOREMOTEATTACH or KCOV_REMOTE_ENABLE;
	 * cleared, while READY, only by the Linux ABI (okcov_remote_forget())
	 */
	struct okcov_remote	*remote;
	unsigned long		reap_gp;	/* [L] RCU state of the last reap */
	bool			deep;		/* [D] deep.c's mutex: installed probes */
	bool			reach;		/* [R] reach.c's mutex: deep_reach user */
	struct rcu_head		rcu;
};

/* okcov_attach.flags */
#define OKCOV_CLAIM_ATOMIC	0x1	/* several CPUs may write: cmpxchg claim */
#define OKCOV_SECTION		0x2	/* a remote section (remote.c), no thread's */
#define OKCOV_CALL_SITES	0x4	/* ftrace: the call site with each entry */
/*
 * A thread's own entry, on a THREAD_SIZE-aligned stack, with a claim of
 * its own (not OKCOV_CLAIM_ATOMIC): okcov_cur may hold it, and the
 * assembly records (tramp.S's copy record, tramp-arm64.S's entry record)
 * use it without a lookup.
 */
#define OKCOV_CUR		0x8

/*
 * Entry of the per-task hash (task_struct has no room for us), and all the
 * hot path needs. Every KIOENABLE allocates a new one, so a thread can
 * only ever see the entry it was attached with: re-enabling a descriptor
 * never re-arms an entry an exiting thread may still be looking at.
 * Locking: [L] okcov_lock for writers, RCU for the hot path; [I] immutable
 * while hashed; [a] written under okcov_lock, read locklessly.
 */
struct okcov_attach {
	struct hlist_node	node;		/* [L] okcov_tasks bucket */
	struct task_struct	*task;		/* [I] pinned: get_task_struct() */
	int			mode;		/* [a] OKCOV_MODE_*, NONE once detached or DYING */
	unsigned int		flags;		/* [I] OKCOV_CLAIM_* */
	u64			*area;		/* [I] the buffer... */
	u64			nentries;	/* [I] ...and its size in words */
	long			pc_delta;	/* [I] the personality's, copied */
	long			entry_delta;	/* [I] */
	struct okcov		*kd;		/* [I] its descriptor */
	unsigned long		stack;		/* [I] OKCOV_CUR: the task's stack */
	u64			cap;		/* [I] OKCOV_CUR: nentries - 1 */
	struct rcu_head		rcu;
};

/* What the assembly records read (record.h). */
static_assert(offsetof(struct okcov_attach, mode) == OKCOV_ATTACH_MODE);
static_assert(offsetof(struct okcov_attach, flags) == OKCOV_ATTACH_FLAGS);
static_assert(offsetof(struct okcov_attach, area) == OKCOV_ATTACH_AREA);
static_assert(offsetof(struct okcov_attach, pc_delta) == OKCOV_ATTACH_PC_DELTA);
static_assert(offsetof(struct okcov_attach, entry_delta) ==
	      OKCOV_ATTACH_ENTRY_DELTA);
static_assert(offsetof(struct okcov_attach, stack) == OKCOV_ATTACH_STACK);
static_assert(offsetof(struct okcov_attach, cap) == OKCOV_ATTACH_CAP);
static_assert(OKCOV_RECORD_MODE == OKCOV_MODE_TRACE_PC);
static_assert(OKCOV_RECORD_CMP_MODE == OKCOV_MODE_TRACE_CMP);
static_assert(BIT(OKCOV_RECORD_CALL_SITES_BIT) == OKCOV_CALL_SITES);

/*
 * What a record reads on every call besides the thread's entry, in one
 * place (main.c), so that tramp-arm64.S's record loads it in pairs
 * (record.h). [I] once set, before the hook is first installed.
 */
struct okcov_globals {
	/* okcov's own text (main.c): no call site in it is recorded */
	unsigned long	text_start;
	unsigned long	text_size;
	/*
	 * funcset.c's map of the functions the set leaves out, 16-byte
	 * granules from quiet_base: quiet_bits (0 until it is made, written
	 * last) bits at quiet_map; freed at unload, the hook removed
	 */
	unsigned long	quiet_base;
	unsigned long	quiet_bits;
	unsigned long	*quiet_map;
	/* in_task()'s mask of the preempt count (its bits moved in 7.x) */
	u32		task_ctx_mask;
};

extern struct okcov_globals okcov_g;
static_assert(offsetof(struct okcov_globals, text_size) ==
	      OKCOV_G_TEXT_START + sizeof(long));
static_assert(offsetof(struct okcov_globals, text_start) == OKCOV_G_TEXT_START);
static_assert(offsetof(struct okcov_globals, quiet_base) == OKCOV_G_QUIET_BASE);
static_assert(offsetof(struct okcov_globals, quiet_bits) ==
	      OKCOV_G_QUIET_BASE + sizeof(long));
static_assert(offsetof(struct okcov_globals, quiet_map) == OKCOV_G_QUIET_MAP);
static_assert(offsetof(struct okcov_globals, task_ctx_mask) ==
	      OKCOV_G_TASK_CTX_MASK);

#define OKCOV_HASH_BITS		10

extern raw_spinlock_t okcov_lock;
extern struct hlist_head okcov_tasks[1 << OKCOV_HASH_BITS];
extern atomic_t okcov_nattached;
extern unsigned long okcov_max_entries;

/* Counters, read-only in /sys/kernel/debug/okcov/ (main.c). [a] */
struct okcov_stats {
	atomic_long_t	descriptors;		/* allocated, not yet freed */
	atomic_long_t	entries;		/* task-hash entries, ditto */
	atomic_long_t	remote_dropped;		/* remote events lost */
	atomic_long_t	remote_reclaimed;	/* tags of objects that never ran */
	atomic_long_t	hook_installs;		/* ftrace hook installs since load */
	/* deep_reach (reach.c), since load: functions... */
	atomic_long_t	reach_queued;		/* ...noted for an install */
	atomic_long_t	reach_installed;	/* ...given block coverage */
	atomic_long_t	reach_refused;		/* ...refused (never again) */
	atomic_long_t	reach_dropped;		/* notes the full mailbox lost */
	atomic_long_t	reach_capped;		/* notes past deep_reach_max */
	atomic_long_t	reach_ahead;		/* ...noted a call ahead */
	atomic_long_t	reach_ahead_hit;	/* ...of those, reached since */
	atomic_long_t	reach_us;		/* the kthreads' CPU time, ended */
};

extern struct okcov_stats okcov_stats;

/* task.c: the per-task hash, nothing else */
struct okcov_attach *okcov_task_find(struct task_struct *t);
struct okcov_attach *okcov_task_find_rcu(struct task_struct *t);
void okcov_task_attach(struct okcov_attach *a);
void okcov_task_detach(struct okcov_attach *a);
void okcov_task_link(struct okcov_attach *a);
void okcov_task_unlink(struct okcov_attach *a);

/* dev.c: the state machine, for either ABI's boundary */
int okcov_dev_init(void);
void okcov_dev_cleanup(void);
int okcov_file_open(struct file *file, const struct okcov_personality *pers);
int okcov_file_release(struct inode *inode, struct file *file);
long okcov_buf_init(struct okcov *kd, u64 n);
long okcov_enable(struct okcov *kd, int mode);
long okcov_disable(struct okcov *kd);
long okcov_remote_enable_linux(struct okcov *kd, int mode, u64 handle,
			       bool args_ok);
int okcov_mmap_area(struct okcov *kd, struct vm_area_struct *vma, bool exact);

/*
 * plan.c (x86_64): okcov's reading of a function's live text, for deep
 * coverage. Owned by its caller; free with okcov_plan_free().
 */
/*
 * inspect.c: root's files under /sys/kernel/debug/okcov/ (main.c makes
 * the folder): a write of an address makes a text, a read returns it.
 */
struct dentry;

struct okcov_text {
	char	*buf;
	size_t	len, cap;
	int	err;		/* -ENOMEM once a write did not fit */
};

typedef int (*okcov_inspect_fn)(unsigned long addr, struct okcov_text *t);
__printf(2, 3) void okcov_text_printf(struct okcov_text *t, const char *fmt, ...);
void okcov_inspect_file(struct dentry *dir, const char *name,
			okcov_inspect_fn make);

#define OKCOV_PLAN_REGIONS	8		/* the body and its .cold parts */
#define OKCOV_PLAN_MAX_SIZE	(64U << 10)	/* bytes, all parts together */

/* One decoded instruction, at its address. */
struct okcov_plan_insn {
	unsigned long		addr;
	struct okcov_insn	insn;
};

/*
 * A switch's jump table (plan.c): "jmp *table(,%reg,8)" after its bound
 * check, and the table's entries as the planner read them, each an
 * instruction of the plan (and a leader).
 */
struct okcov_plan_jt {
	unsigned long		jmp;		/* the jump's address */
	unsigned long		table;
	unsigned long		*entry;
	unsigned int		n;
};

/* Where a direct branch or call at @pi goes. */
static inline unsigned long okcov_plan_target(const struct okcov_plan_insn *pi)
{
	return pi->addr + pi->insn.len + (long)pi->insn.rel;
}

struct okcov_plan {
	char			name[KSYM_SYMBOL_LEN];
	unsigned long		start, end;	/* the function's symbol */
	unsigned long		entry;		/* past its endbr64 */
	struct {
		unsigned long	start, end;
	}			region[OKCOV_PLAN_REGIONS];
	unsigned int		nregions;
	const u8		*text[OKCOV_PLAN_REGIONS];	/* each part's bytes, as decoded */
	struct okcov_plan_insn	*insns;		/* sorted by address */
	unsigned int		ninsns, cap;
	unsigned long		*leaders;	/* sorted, unique */
	unsigned int		nleaders, leader_cap;
	unsigned int		bytes;		/* of all regions */
	unsigned int		widen;		/* short branches made near */
	unsigned int		edges;		/* edge blocks, not leaders */
	unsigned int		copy_size;	/* what a copy would take */
	unsigned int		riprel, calls, indirect;
	struct okcov_plan_jt	*jt;		/* switches' tables, njt of them */
	unsigned int		njt;
	unsigned int		njmp;		/* indirect jumps, switches' or not */
	unsigned long		bad;		/* where the verdict was found */
	int			verdict;	/* 0: copyable, or an errno */
};

/*
 * copy.c's record sequence at a leader, 15 bytes: push $leader (68 imm32),
 * call okcov_copy_record (e8 rel32), lea 8(%rsp),%rsp (48 8d 64 24 08).
 */
#define OKCOV_COPY_RECORD	15
/*
 * Its comparison sequence before a cmp or test (deep_cmp, cmp.c), after
 * the record sequence where both are: push $desc, call okcov_copy_cmp,
 * lea 8(%rsp),%rsp; 15 bytes too.
 */
#define OKCOV_COPY_CMP		15

/*
 * What the comparison sequence pushes (cmp.c): one cmp or test of the
 * original and how to read its operands, kept in the pool after the
 * copy's code (it sign-extends from 32 bits, as the pool does).
 */
struct okcov_cmp_desc {
	u64	pc;		/* the original instruction */
	s64	imm;		/* an immediate operand, sign-extended */
	s64	disp;		/* memory: displacement (absolute if no registers) */
	u8	size;		/* log2 of the operands' size in bytes */
	u8	op[2];		/* arg1, arg2: OKCOV_CMP_OP_* (cmp.c) */
	u8	base, index;	/* memory: register numbers, or OKCOV_CMP_NOREG */
	u8	scale;		/* memory: log2 of the index's factor */
	u8	flags;		/* OKCOV_CMP_F_* (cmp.c) */
	u8	ncases;		/* a compare chain's root: its constants */
	u64	cases;		/* ... in the pool, as s64 (cmp.c) */
	s64	bias;		/* ... and what to add to the register */
};

/* A compare chain's constants a root records, at most; its depth. */
#define OKCOV_CMP_CASES_MAX	255
#define OKCOV_CMP_CHAIN_DEPTH	64

#ifdef CONFIG_X86_64
int okcov_plan_function(unsigned long addr, struct okcov_plan *p);
int okcov_plan_boundary(struct okcov_plan *p, unsigned long addr);
const struct okcov_plan_insn *okcov_plan_at(const struct okcov_plan *p,
					    unsigned long addr);
bool okcov_plan_inside(const struct okcov_plan *p, unsigned long addr);
bool okcov_plan_out(const struct okcov_plan *p,
		    const struct okcov_plan_insn *pi, unsigned long *t);
bool okcov_plan_patching(const struct okcov_plan *p);
const u8 *okcov_plan_bytes(const struct okcov_plan *p,
			   const struct okcov_plan_insn *pi);
void okcov_plan_free(struct okcov_plan *p);
void okcov_plan_init(struct dentry *dir);
/* copy.c: instrumented copies; tramp.S's record calls okcov_copy_hit(). */
void okcov_copy_init(struct dentry *dir);
void okcov_copy_module(struct module *mod);
void okcov_copy_cleanup(void);
void okcov_copy_hit(unsigned long pc);
unsigned long okcov_copy_redirect(unsigned long site);
unsigned long okcov_copy_orig(unsigned long addr);
int okcov_copy_stage(const unsigned long *addrs, unsigned int n, int *res,
		     unsigned int *installed, struct okcov_plan *plans,
		     unsigned int nplans);
int okcov_copy_commit(void);
void okcov_copy_abort(void);
void okcov_copy_unpublish(void);
bool okcov_copy_calls_notrace(const struct okcov_plan *p);
extern u8 okcov_pool[];			/* pool.S */
void okcov_copy_record(void);		/* tramp.S: only copies call it */
/* cmp.c: comparisons from copies (deep_cmp); tramp.S calls the hit. */
bool okcov_copy_cmp_wanted(void);
bool okcov_copy_cmp_sources(void);
int okcov_cmp_describe(const struct okcov_plan_insn *pi, const u8 *bytes,
		       struct okcov_cmp_desc *d);
unsigned long *okcov_cmp_chain_map(const struct okcov_plan *p);
unsigned int okcov_cmp_chain(const struct okcov_plan *p,
			     const unsigned long *child, unsigned int i,
			     s64 *cases, s64 *bias);
void okcov_copy_cmp_hit(unsigned long *regs, const struct okcov_cmp_desc *d,
			unsigned long sp);
void okcov_copy_cmp(void);		/* tramp.S: only copies call it */
#ifdef CONFIG_UNWINDER_ORC
/* orc.c: the unwinder's entries for copies, staged by copy.c. */
int okcov_orc_begin(void);
int okcov_orc_add(unsigned long ip, unsigned long orig, unsigned int pushed);
void okcov_orc_commit(void);
void okcov_orc_exit(void);
#else
/* The frame-pointer unwinder follows a copy's frames unaided. */
static inline int okcov_orc_begin(void) { return 0; }
static inline int okcov_orc_add(unsigned long ip, unsigned long orig,
				unsigned int pushed)
{
	return 0;
}

static inline void okcov_orc_commit(void) { }
static inline void okcov_orc_exit(void) { }
#endif
#else
static inline int okcov_plan_function(unsigned long addr, struct okcov_plan *p)
{
	return -EOPNOTSUPP;
}

static inline int okcov_plan_boundary(struct okcov_plan *p, unsigned long addr)
{
	return 1;
}

static inline bool okcov_plan_inside(const struct okcov_plan *p,
				     unsigned long addr)
{
	return false;
}

static inline bool okcov_plan_out(const struct okcov_plan *p,
				  const struct okcov_plan_insn *pi,
				  unsigned long *t)
{
	return false;
}

static inline void okcov_plan_free(struct okcov_plan *p) { }
static inline void okcov_plan_init(struct dentry *dir) { }
static inline void okcov_copy_init(struct dentry *dir) { }
static inline void okcov_copy_module(struct module *mod) { }
static inline void okcov_copy_cleanup(void) { }
static inline bool okcov_copy_calls_notrace(const struct okcov_plan *p)
{
	return false;
}

static inline unsigned long okcov_copy_redirect(unsigned long site)
{
	return 0;
}

static inline unsigned long okcov_copy_orig(unsigned long addr)
{
	return 0;
}

static inline int okcov_copy_stage(const unsigned long *addrs,
				   unsigned int n, int *res,
				   unsigned int *installed,
				   struct okcov_plan *plans,
				   unsigned int nplans)
{
	return -EOPNOTSUPP;
}

static inline int okcov_copy_commit(void) { return 0; }
static inline void okcov_copy_abort(void) { }
static inline void okcov_copy_unpublish(void) { }
static inline bool okcov_copy_cmp_sources(void) { return false; }
#endif

/* linux.c: Linux's kcov ABI at /sys/kernel/debug/kcov */
int okcov_linux_init(void);
void okcov_linux_cleanup(void);

/*
 * sancov.c: the compiler emits the calls, nothing declares them. With
 * CONFIG_KCOV they are the kernel's (and the compiler's built-ins).
 */
#ifndef CONFIG_KCOV
/*
 * The compiler's own prototypes of the 8-byte hooks take unsigned long,
 * not u64 (unsigned long long), on the 64-bit kernels okcov builds for,
 * and the switch hook's cases a void *: GCC warns of a builtin mismatch
 * otherwise (kernel/kcov.c's kcov_u64).
 */
void __sanitizer_cov_trace_pc(void);
void __sanitizer_cov_trace_cmp1(u8 arg1, u8 arg2);
void __sanitizer_cov_trace_cmp2(u16 arg1, u16 arg2);
void __sanitizer_cov_trace_cmp4(u32 arg1, u32 arg2);
void __sanitizer_cov_trace_cmp8(unsigned long arg1, unsigned long arg2);
void __sanitizer_cov_trace_const_cmp1(u8 arg1, u8 arg2);
void __sanitizer_cov_trace_const_cmp2(u16 arg1, u16 arg2);
void __sanitizer_cov_trace_const_cmp4(u32 arg1, u32 arg2);
void __sanitizer_cov_trace_const_cmp8(unsigned long arg1, unsigned long arg2);
void __sanitizer_cov_trace_switch(unsigned long val, void *cases);

int okcov_sancov_init(void);
void okcov_sancov_cleanup(void);
bool okcov_sancov_sources(void);
#else
/* The kernel's kcov serves every instrumented module: none reports here. */
static inline int okcov_sancov_init(void)
{
	return 0;
}

static inline void okcov_sancov_cleanup(void)
{
}

static inline bool okcov_sancov_sources(void)
{
	return false;
}
#endif

/*
 * Can comparisons arrive: from an instrumented module (sancov.c), or
 * from deep copies (cmp.c)? Linux's ABI refuses KCOV_TRACE_CMP when not.
 */
static inline bool okcov_cmp_sources(void)
{
	return okcov_sancov_sources() || okcov_copy_cmp_sources();
}

/* funcset.c */
struct ftrace_ops;
int okcov_funcset_apply(struct ftrace_ops *ops, bool filtered);
void okcov_funcset_module(struct ftrace_ops *ops, struct ftrace_ops *probe,
			  struct module *mod, bool coming);
void okcov_funcset_cleanup(void);
bool okcov_funcset_left_out(const char *name, size_t len);
struct okcov_globset;
struct okcov_globset *okcov_globs_new(const char *const *globs, unsigned int n);
bool okcov_globs_match(const struct okcov_globset *gs, const char *name,
		       size_t len);
void okcov_globs_free(struct okcov_globset *gs);

/* funcset.c: the left-out functions' text (okcov_g.quiet_*), 16-byte granules. */
#define OKCOV_QUIET_GRANULE	16
static_assert(OKCOV_QUIET_GRANULE == 1 << OKCOV_RECORD_QUIET_SHIFT);

int okcov_funcset_entry(struct ftrace_ops *ops, struct ftrace_ops *probe,
			unsigned long start, unsigned long *entry);
int okcov_funcset_named(struct ftrace_ops *ops, struct ftrace_ops *probe,
			char *name, size_t len);
bool okcov_symbol_bounds(unsigned long ip, char *name, size_t *len,
			 unsigned long *start, unsigned long *end, bool *mod);
unsigned long okcov_symbol(const char *name);
void okcov_funcset_init(void);
bool okcov_ftrace_has(struct ftrace_ops *probe, unsigned long ip);

/* Is @ip in a function the set leaves out? (Modules: never.) */
static __always_inline bool okcov_quiet_caller(unsigned long ip)
{
	unsigned long g = (ip - okcov_g.quiet_base) / OKCOV_QUIET_GRANULE;

	return g < READ_ONCE(okcov_g.quiet_bits) &&
	       test_bit(g, okcov_g.quiet_map);
}

/* remote.c */
int okcov_remote_init(void);
void okcov_remote_cleanup(void);
long okcov_remote_attach(struct okcov *kd,
			 struct kio_remote_attach __user *uarg);
long okcov_remote_attach_kd(struct okcov *kd, u64 handle);
void okcov_remote_forget(struct okcov *kd);
int okcov_remote_hook(void);
void okcov_remote_unhook(void);
void okcov_remote_start(struct okcov *kd, struct okcov_attach *sink, int mode);
void okcov_remote_stop(struct okcov *kd);
void okcov_remote_section_exit(struct okcov_attach *a);
void okcov_remote_group_exit(struct task_struct *p);
void okcov_remote_release(struct okcov *kd);
void okcov_remote_free(struct okcov *kd);

/*
 * The timer callback running on this CPU for a remote descriptor
 * (remote.c): the one case where !in_task() code records. [s] written by
 * this CPU's timer probes only.
 */
struct okcov_soft {
	struct okcov_attach	*a;		/* [s] written last, cleared first */
	struct task_struct	*task;		/* [s] current when it started */
	const void		*timer;		/* [s] */
};

DECLARE_PER_CPU(struct okcov_soft, okcov_soft);

/* deep.c: kprobes at the block leaders of chosen functions */
long okcov_deep_ioctl(struct okcov *kd, struct kio_deep __user *uarg);
void okcov_deep_release(struct okcov *kd);
void okcov_deep_module(struct module *mod);
void okcov_deep_cleanup(void);
/* Functions the planned ones call (deep_reach_ahead): fentry sites. */
struct okcov_calls {
	unsigned long	*ip;
	unsigned int	n, max;
};

int okcov_deep_reach_install(const unsigned long *fns, unsigned int n,
			     int *ferr, unsigned int ncalls,
			     struct okcov_calls *calls);
void okcov_deep_reach_calls(const unsigned long *fns, unsigned int n,
			    struct okcov_calls *calls);
void okcov_deep_reach_drop(void);

/* reach.c: deep coverage of what traced threads reach (deep_reach) */
struct okcov_reach;
extern struct okcov_reach *okcov_reach_on;
void okcov_reach_note(struct okcov_reach *r, unsigned long ip);
void okcov_reach_enable(struct okcov *kd);
void okcov_reach_release(struct okcov *kd);

/*
 * @ip: a function entry a thread that records reached (ftrace.c), in
 * its record's RCU-sched read side.
 */
static __always_inline void okcov_reach_noted(unsigned long ip)
{
	/* Pairs with smp_store_release() in okcov_reach_start(). */
	struct okcov_reach *r = READ_ONCE(okcov_reach_on);

	if (unlikely(r))
		okcov_reach_note(r, ip);
}

/* ftrace.c */
unsigned long okcov_set_entry(unsigned long start);
int okcov_traced_function(unsigned long start, char *parent, size_t len,
			  unsigned long *entry);
bool okcov_ftrace_site(unsigned long ip);
int okcov_ftrace_init(void);
void okcov_ftrace_cleanup(void);
void okcov_ftrace_module(struct module *mod, bool coming);
unsigned int okcov_entry_flags(void);
int okcov_hook_get(void);
void okcov_hook_put(void);
void okcov_hook_preload(void);
/*
 * tramp.S, tramp-arm64.S: called by fentry sites only (compat/arch.h);
 * they call okcov_tramp_slow(), and tramp-arm64.S's record
 * okcov_tramp_resched() where its preempt_enable_notrace() would
 * schedule.
 */
void okcov_ftrace_tramp(void);
unsigned long okcov_tramp_slow(unsigned long ip, unsigned long parent_ip);
void okcov_tramp_resched(unsigned long ip, unsigned long parent_ip);

/*
 * Per CPU: may the code running on this CPU record? Kept a superset of the
 * truth while the hook is installed (ftrace.c), so that "no" is one load,
 * the first test of the trampoline (tramp.S) and of the sanitizer hooks.
 *  .task	current is attached (set by the thread's own attach, and by
 *		the sched_switch probe for the task switched in; cleared by
 *		its own detach and by the probe). Only the running task can
 *		attach itself, so it is never clear while current records; a
 *		stale "yes" after another CPU detached it costs one lookup.
 *  .soft	a remote timer section is open (remote.c's probes).
 * Separate bytes: task context writes one, softirq the other.
 */
union okcov_hot {
	struct {
		u8	task;
		u8	soft;
	};
	u16	any;
};

DECLARE_PER_CPU(union okcov_hot, okcov_hot);

/*
 * Per CPU: the entry of the task it runs, if that entry is OKCOV_CUR (a
 * thread's own), for tramp.S's record of a copy's leader and
 * tramp-arm64.S's record of a function's entry; or NULL. Set
 * with okcov_hot.task; between the sched_switch probe and the switch
 * itself it is the next task's already, so the record checks that the
 * stack it runs on is the entry's. An entry unlinked while a CPU holds
 * it (okcov_task_unlink(): another CPU reaped an exiting thread) is
 * taken off every CPU before its grace period: the record reads it
 * within an RCU read side (tramp.S: interrupts off; tramp-arm64.S:
 * preemption off) and finds its mode NONE meanwhile.
 */
DECLARE_PER_CPU(struct okcov_attach *, okcov_cur);

/*
 * Every recorder (trampoline, ftrace callback, copies' record, sanitizer
 * hooks, deep probes) rejects a thread that is not attached, cheapest
 * test first; okcov_get() below codes the order, tramp.S step (a) alone
 * (and the copies' record, for the thread okcov_cur names, its own
 * shortcut past (b) to (d): okcov_hot exactly .task, no interrupt
 * context enters a copy but a timer section's):
 *  (a) okcov_cpu_cold(): one per-CPU load says nothing on this CPU may
 *      record (the whole cost for every thread but an attached one);
 *  (b) okcov_context(): interrupts never record, nor softirqs but for a
 *      remote timer section's callback;
 *  (c) okcov_current_bucket(): current's hash bucket is empty (one load,
 *      nothing dereferenced, so safe without RCU);
 *  (d) okcov_rcu_usable() (compat.h): RCU is watching this CPU;
 * and only then holds off preemption (an RCU-sched read-side section,
 * which is what every writer waits for), walks the bucket, checks the
 * mode and claims a slot.
 *
 * Recursion: everything called from here on is inline or notrace, so a
 * traced function is never entered from the callback, with one exception:
 * preempt_enable_notrace() may reschedule (preempt_schedule_notrace()),
 * and __schedule() is traceable. It runs with preemption disabled, so the
 * callback it re-enters cannot reschedule again: depth 2 at most. The
 * sanitizer hooks never reschedule (OKCOV_REC_HOOK).
 */
static __always_inline bool okcov_cpu_cold(void)
{
	return !this_cpu_read(okcov_hot.any);
}

/* Not one thread nor remote section attached anywhere (the exit probe). */
static __always_inline bool okcov_nobody_attached(void)
{
	return !atomic_read(&okcov_nattached);
}

static __always_inline struct hlist_head *okcov_bucket(const struct task_struct *t)
{
	return &okcov_tasks[hash_ptr(t, OKCOV_HASH_BITS)];
}

/* Steps (c) and (d): current's bucket if it is worth walking, or NULL. */
static __always_inline struct hlist_head *okcov_current_bucket(void)
{
	struct hlist_head *head = okcov_bucket(current);

	if (likely(!READ_ONCE(head->first)))
		return NULL;
	if (unlikely(!okcov_rcu_usable()))
		return NULL;
	return head;
}

/*
 * @t's entry in @head, or NULL. Caller: preemption disabled (RCU-sched
 * read side); nothing here is traceable.
 */
static __always_inline struct okcov_attach *
okcov_entry(struct hlist_head *head, const struct task_struct *t)
{
	struct hlist_node *pos;
	struct okcov_attach *a;

	/* Pairs with hlist_add_head_rcu() in okcov_task_attach(). */
	for (pos = rcu_dereference_raw(hlist_first_rcu(head)); pos;
	     pos = rcu_dereference_raw(hlist_next_rcu(pos))) {
		a = hlist_entry(pos, struct okcov_attach, node);
		if (a->task == t)
			return a;
	}
	return NULL;
}

/*
 * okcov_get()'s @mode for a recorder that serves either mode: the ftrace
 * callback sends a TRACE_CMP thread into deep copies too (their
 * comparisons, cmp.c), recording no entry for it.
 */
#define OKCOV_MODE_ANY		(-1)

/* Does an entry in @m record in @mode (OKCOV_MODE_ANY: in any)? */
static __always_inline bool okcov_mode_is(int m, int mode)
{
	return mode == OKCOV_MODE_ANY ? m != OKCOV_MODE_NONE : m == mode;
}

/* @t's entry in @head if it records in @mode, or NULL. As okcov_entry(). */
static __always_inline struct okcov_attach *
okcov_lookup(struct hlist_head *head, const struct task_struct *t, int mode)
{
	struct okcov_attach *a = okcov_entry(head, t);

	/* Pairs with WRITE_ONCE()s of the mode in dev.c and task.c. */
	return a && okcov_mode_is(READ_ONCE(a->mode), mode) ? a : NULL;
}

/* @t's entry if @t records, or NULL. For the sched_switch probe. As okcov_entry(). */
static __always_inline struct okcov_attach *
okcov_task_hot(const struct task_struct *t)
{
	struct hlist_head *head = okcov_bucket(t);
	struct okcov_attach *a;

	if (likely(!READ_ONCE(head->first)))
		return NULL;
	a = okcov_entry(head, t);
	return a && READ_ONCE(a->mode) != OKCOV_MODE_NONE ? a : NULL;
}

/* okcov_cur's value for @a, the entry of the task this CPU runs, or NULL. */
static __always_inline struct okcov_attach *
okcov_cur_of(struct okcov_attach *a)
{
	return a && (a->flags & OKCOV_CUR) ? a : NULL;
}

/* @a's task was just attached (@hot) or detached. Caller: preemption disabled. */
static __always_inline void okcov_hot_task(struct okcov_attach *a, bool hot)
{
	struct okcov_attach *cur = hot ? okcov_cur_of(a) : NULL;

	if (a->task == current) {
		__this_cpu_write(okcov_hot.task, hot);
		__this_cpu_write(okcov_cur, cur);
	}
}

/*
 * Step (b)'s exception: a tagged timer's callback, in softirq on this CPU
 * (not a hardirq or NMI nested in it), records into its remote
 * descriptor. A kworker's remote section needs nothing here: it is an
 * entry of the task hash like an attached thread's. Caller: preemption
 * (softirq) off, so the entry, freed after a grace period, stays.
 */
static __always_inline struct okcov_attach *okcov_soft_entry(int mode)
{
	struct okcov_soft *soft;
	struct okcov_attach *a;

	/*
	 * raw_: softirq is not preempted here (RT: not migrated), and
	 * DEBUG_PREEMPT's check is a call the sanitizer hooks may not make
	 * inside user_access_begin() regions (objtool).
	 */
	soft = raw_cpu_ptr(&okcov_soft);
	a = READ_ONCE(soft->a);
	if (!a || soft->task != current ||
	    !okcov_mode_is(READ_ONCE(a->mode), mode))
		return NULL;
	return a;
}

/*
 * Who records, which decides how: where it learns the recorded code's
 * context, and how it holds the RCU-sched read side that keeps a
 * thread's entry while it records.
 */
enum okcov_recorder {
	/*
	 * The ftrace callback, a copy's record: in the recorded code's own
	 * context; preempt_disable_notrace().
	 */
	OKCOV_REC_CALL,
	/*
	 * The sanitizer hooks (sancov.c): in their own context too, but
	 * never a reschedule: they may run inside user_access_begin()
	 * regions, where nothing may call into the scheduler (objtool
	 * checks it), and modules do not get
	 * preempt_enable_no_resched_notrace(), so the preempt count alone.
	 * A reschedule requested meanwhile waits for the next preemption
	 * point.
	 */
	OKCOV_REC_HOOK,
	/*
	 * A kprobe's pre handler (deep.c): the recorded code's context is
	 * under the trap that entered it (compat/arch.h,
	 * okcov_kprobe_trapped(): an x86 int3 runs it in NMI context on top
	 * of a syscall); preemption is off already.
	 */
	OKCOV_REC_KPROBE,
};

/* Step (b): where the recorded code runs. */
enum okcov_ctx {
	OKCOV_CTX_NONE,		/* hardirq, NMI, a softirq's own work */
	OKCOV_CTX_TASK,		/* a thread, or a kworker's remote section */
	OKCOV_CTX_SOFTIRQ,	/* serving a softirq: a timer section may record */
};

/* The recorded code's context; @regs: OKCOV_REC_KPROBE's. */
static __always_inline enum okcov_ctx
okcov_context(enum okcov_recorder rec, const struct pt_regs *regs)
{
	unsigned long irq;

	if (rec != OKCOV_REC_KPROBE) {
		if (likely(in_task()))
			return OKCOV_CTX_TASK;
		if (!in_serving_softirq() || in_hardirq() || in_nmi())
			return OKCOV_CTX_NONE;
		return OKCOV_CTX_SOFTIRQ;
	}
	irq = hardirq_count();
	/* The int3's own level; a real NMI under it adds one more. */
	if (okcov_kprobe_trapped(regs))
		irq -= HARDIRQ_OFFSET;
	else if (in_nmi())
		return OKCOV_CTX_NONE;
	if (irq)
		return OKCOV_CTX_NONE;
	return in_serving_softirq() ? OKCOV_CTX_SOFTIRQ : OKCOV_CTX_TASK;
}

static __always_inline void okcov_hold(enum okcov_recorder rec)
{
	if (rec == OKCOV_REC_CALL) {
		preempt_disable_notrace();
	} else if (rec == OKCOV_REC_HOOK) {
		__preempt_count_inc();
		barrier();
	}
}

static __always_inline void okcov_unhold(enum okcov_recorder rec)
{
	if (rec == OKCOV_REC_CALL) {
		preempt_enable_notrace();
	} else if (rec == OKCOV_REC_HOOK) {
		barrier();
		__preempt_count_dec();
	}
}

/*
 * Steps (b) to (d) of the reject order and the lookup, once step (a) let
 * @rec in (tramp.S, or okcov_get()): the entry to record into in @mode,
 * or NULL. A thread's entry comes held; okcov_put() lets go after the
 * record.
 */
static __always_inline struct okcov_attach *
okcov_get_warm(int mode, enum okcov_recorder rec, const struct pt_regs *regs)
{
	enum okcov_ctx ctx = okcov_context(rec, regs);
	struct hlist_head *head;
	struct okcov_attach *a;

	if (unlikely(ctx != OKCOV_CTX_TASK))
		return ctx == OKCOV_CTX_SOFTIRQ ? okcov_soft_entry(mode) : NULL;
	head = okcov_current_bucket();
	if (likely(!head))
		return NULL;
	okcov_hold(rec);
	a = okcov_lookup(head, current, mode);
	if (!a)
		okcov_unhold(rec);
	return a;
}

/* The whole reject order, (a) to (d), and the lookup: a recorder's way in. */
static __always_inline struct okcov_attach *
okcov_get(int mode, enum okcov_recorder rec, const struct pt_regs *regs)
{
	if (likely(okcov_cpu_cold()))
		return NULL;
	return okcov_get_warm(mode, rec, regs);
}

/* After a record into okcov_get()'s entry. */
static __always_inline void okcov_put(enum okcov_recorder rec)
{
	/* A timer section's entry is held by its softirq, not by @rec. */
	if (rec != OKCOV_REC_KPROBE && in_task())
		okcov_unhold(rec);
}

/*
 * okcov_get_warm() for the ftrace callback and a copy's record (TRACE_PC,
 * in the recorded code's own context), once step (a) let them in.
 */
static __always_inline struct okcov_attach *okcov_pc_get(void)
{
	return okcov_get_warm(OKCOV_MODE_TRACE_PC, OKCOV_REC_CALL, NULL);
}

/* After a record into okcov_pc_get()'s entry. */
static __always_inline void okcov_pc_put(void)
{
	okcov_put(OKCOV_REC_CALL);
}

/*
 * okcov_pc_get() for the ftrace callback's redirect: the entry of a
 * thread that records in either mode (its mode tells what to record).
 * okcov_pc_put() after.
 */
static __always_inline struct okcov_attach *okcov_call_get(void)
{
	return okcov_get_warm(OKCOV_MODE_ANY, OKCOV_REC_CALL, NULL);
}

/*
 * Claim room for up to @n records of @words words each; the one helper
 * every writer of a buffer goes through (OpenBSD's kd_claim). area[0]
 * counts records, and belongs to userspace too: read it once, and a value
 * at or past capacity (huge, "negative") records nothing. Returns the
 * first slot and sets *@got to the records claimed (1..@n: what fits), or
 * NULL.
 *
 * A thread's own buffer has one writer, which nothing can interrupt with
 * a record between the read and the write of area[0] (interrupts never
 * record, the callback calls nothing traceable there). A sink that
 * several CPUs write at once sets OKCOV_CLAIM_ATOMIC and claims by cmpxchg.
 */
static __always_inline u64 *okcov_claim(const struct okcov_attach *a,
					unsigned int words, unsigned int n,
					unsigned int *got)
{
	u64 *area = a->area;
	u64 cap = (a->nentries - 1) / words;
	u64 pos = READ_ONCE(area[0]), old;

	if (unlikely(a->flags & OKCOV_CLAIM_ATOMIC)) {
		for (;;) {
			if (pos >= cap)
				return NULL;
			*got = min_t(u64, n, cap - pos);
			old = cmpxchg64(&area[0], pos, pos + *got);
			if (old == pos)
				break;
			pos = old;
		}
	} else {
		if (pos >= cap)
			return NULL;
		*got = min_t(u64, n, cap - pos);
		/*
		 * Publish the count before the record, as kernel/kcov.c
		 * does: a writer nesting after this point takes the next
		 * slot instead of overwriting ours.
		 */
		WRITE_ONCE(area[0], pos + *got);
		barrier();
	}
	return &area[pos * words + 1];
}

/*
 * @addr: a block leader a deep probe (deep.c) sits on. Recorded as a
 * function entry is (entry_delta): the Linux ABI's reader takes the
 * instruction before, and lands on the leader.
 */
static __always_inline void okcov_record_block(const struct okcov_attach *a,
					       unsigned long addr)
{
	unsigned int got;
	u64 *slot = okcov_claim(a, 1, 1, &got);

	if (slot)
		*slot = addr + a->entry_delta;
}

/* @ip: a return address into instrumented code, or a call site. */
static __always_inline void okcov_record_pc(const struct okcov_attach *a,
					    unsigned long ip)
{
	unsigned int got;
	u64 *slot;

	/*
	 * Not okcov's own, nor a deep copy's: the sanitizer hooks run in
	 * user-access regions, where nothing may be called to map it.
	 */
	if (unlikely(ip - okcov_g.text_start < okcov_g.text_size))
		return;
	slot = okcov_claim(a, 1, 1, &got);
	if (slot)
		*slot = ip + a->pc_delta;
}

/*
 * @ip: a function entry, as ftrace reports it; @parent_ip: the return
 * address into its caller. With OKCOV_CALL_SITES the call site comes
 * first, as it executed first: the caller's PC right after its call
 * instruction, which is what kcov records for a block too (the return
 * address of its __sanitizer_cov_trace_pc() call); where one slot is
 * left, the entry takes it. A call from okcov's own code (its ioctls
 * call the kernel while enabled) records the entry alone: okcov never
 * records itself. So does a call from a function the set leaves out
 * (okcov_quiet_caller()). A call from a deep copy (copy.c) has its call
 * site in the original: okcov_copy_orig() maps it there. The Linux ABI records the address after the
 * fentry call for the entry (entry_delta), so that a reader that takes
 * "the instruction before" (syzkaller: pc - 5 on amd64) lands inside the
 * function.
 */
static __always_inline void okcov_record_entry(const struct okcov_attach *a,
					       unsigned long ip,
					       unsigned long parent_ip)
{
	unsigned int got;
	u64 *slot;

	/* In okcov's text: a deep copy's call site is its original's, or 0. */
	if (unlikely(parent_ip - okcov_g.text_start < okcov_g.text_size))
		parent_ip = okcov_copy_orig(parent_ip);
	if ((a->flags & OKCOV_CALL_SITES) && parent_ip &&
	    !okcov_quiet_caller(parent_ip)) {
		slot = okcov_claim(a, 1, 2, &got);
		if (slot && got == 2) {
			slot[0] = parent_ip + a->pc_delta;
			slot[1] = ip + a->entry_delta;
		} else if (slot) {
			slot[0] = ip + a->entry_delta;
		}
		return;
	}
	slot = okcov_claim(a, 1, 1, &got);
	if (slot)
		*slot = ip + a->entry_delta;
}

#endif /* _OKCOV_H */
