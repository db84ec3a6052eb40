// SPDX-License-Identifier: GPL-2.0
/*
 * The default function set: every traceable function except what Linux's
 * kcov leaves uninstrumented (KCOV_INSTRUMENT := n in kernel/sched/,
 * kernel/locking/, kernel/rcu/, kernel/entry/, kernel/softirq.c, mm/ slab,
 * slub, page_alloc, memcontrol, vmstat, failslab, kmemleak, lib/ string,
 * rbtree, find_bit, list_debug, debugobjects, arch/x86/kernel/apic/,
 * stack unwinding and dumpstack): code whose coverage is "not a function
 * of syscall inputs", and that makes two runs of one program differ.
 *
 * ftrace excludes by name, not by file, so each group is a list of globs
 * derived from the function names of those files (linux 6.1), checked
 * against the available_filter_functions of the supported kernels so that
 * they match nothing outside the group's subsystem that a syscall would
 * reach. A glob that matches nothing on a kernel is skipped. Several of
 * those files are not traceable at all on Debian's kernels (lib/string.c,
 * rbtree.c, lockdep.c...): they need no glob.
 *
 * The groups are files of the kernel proper: a module's function is traced
 * whatever its name (kvm_lapic_*, media_entity_*, drm_sched_entity_*), as
 * kcov instruments modules. The set is resolved in one pass at the first
 * hook install, and follows modules as they come and go
 * (okcov_funcset_module()). scripts/bench/README has what each group removes
 * on each kernel.
 */

#include <linux/ftrace.h>
#include <linux/bitmap.h>
#include <linux/glob.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "okcov.h"

static bool whole_kernel;
module_param(whole_kernel, bool, 0444);
MODULE_PARM_DESC(whole_kernel,
		 "Trace the whole kernel: do not leave out what Linux's kcov leaves uninstrumented");

struct okcov_funcset_group {
	const char		*name;
	const char * const	*globs;
};

static const char * const okcov_noise_sched[] = {
	"__schedule", "schedule", "preempt_schedule*", "__cond_resched",
	"update_rq_clock", "clear_buddies", "__update_load_avg_*", "*cfs_rq*",
	"check_spread*", "*eevdf*", "*vruntime*", "update_deadline",
	"update_se", "dl_server_*", "*resched_curr*", "*_mm_cid*", "hrtick*",
	"migrate_disable_switch*",
	"sched_*", "*fair*", "*entity*", "psi_*", "*cpuacct*", "*_task_dl",
	"*_task_rt", "update_curr*", "try_to_wake_up", "ttwu_*",
	"__wake_up*", "finish_task_switch*", "vtime_*",
	"*migrate_*able",
	/* 7.x (pelt.c, core.c, fair.c) */
	"decay_load", "__balance_callbacks", "account_llc_*",
	"choose_idle_cpu", "wakeup_preempt*",
	/* core.c's wakeups: PREEMPT_RT's interrupt exit wakes ksoftirqd */
	"wake_up_process", "wake_up_state", "wake_up_q", "wake_q_add*", NULL
};

static const char * const okcov_noise_locking[] = {
	"_raw_*", "*mutex*", "*rwsem*", "down_*", "up_*", "queued_*", NULL
};

/*
 * PREEMPT_RT's sleeping spinlocks and rwlocks (spinlock_rt.c, rwbase_rt.c;
 * its rt_mutex and ww_rt_mutex functions are "*mutex*" above). Only RT
 * kernels have them: elsewhere these passes would find nothing.
 */
static const char * const okcov_noise_locking_rt[] = {
	"rt_spin_*", "rt_read_*", "rt_write_*", "rtlock_*", "*rwbase*", NULL
};

static const char * const okcov_noise_rcu[] = {
	"rcu_*", "__rcu_*", "*srcu*", "*synchronize_rcu*", "*call_rcu*", NULL
};

static const char * const okcov_noise_entry[] = {
	"*_user_mode*", "irqentry_*", NULL
};

static const char * const okcov_noise_softirq[] = {
	"*softirq*", "irq_enter*", "irq_exit*", "*tasklet*", "*local_bh*",
	NULL
};

static const char * const okcov_noise_mm[] = {
	"kmem_cache_*", "__kmalloc*", "kmalloc_*", "kfree", "*slab_*",
	"*_page_state*", "*mem_cgroup*", "*memcg*", "*obj_cgroup*",
	"*lruvec*", "*vmstat*", "*vm_event*", "__alloc_pages*",
	"get_page_from_freelist", "rmqueue*", "free_unref_page*", "*_stock",
	"__kmem_cache_*", "put_cpu_partial", "uncharge_*", "__folio_alloc*",
	"__free_pages", "free_pcp_prepare", "should_failslab",
	"should_fail_alloc_page", "*sheaf*", "__pcs_*", "*kmemleak*",
	/* 7.x (page_alloc.c, slub.c) */
	"__alloc_frozen_pages*", "prep_compound_page", "__zone_watermark_ok",
	"refill_objects", NULL
};

/*
 * The return-to-user work a context switch leaves behind: the switch sets
 * TIF_NEED_FPU_LOAD and (rseq, which glibc registers for every thread)
 * TIF_NOTIFY_RESUME, so a thread scheduled out anywhere in a syscall (a
 * tick, a woken kworker or RCU thread) returns through these, and two runs
 * of one program differ by whether it was. Not a function of the syscall:
 * the scheduler's, which okcov(4) leaves out of a thread's coverage.
 */
static const char * const okcov_noise_resume[] = {
	"switch_fpu_return", "__rseq_handle_notify_resume",
	"__rseq_handle_slowpath", "rseq_slowpath_update_usr",
	"blkcg_maybe_throttle_current", NULL
};

static const char * const okcov_noise_apic[] = {
	"*apic*", NULL
};

/*
 * The unwinders, dumpstack and stacktrace, and kernel/extable.c's
 * text-address checks they make per frame. A debug kernel (KASAN,
 * kmemleak, lockdep) saves a stack trace at most allocations and lock
 * acquisitions: hundreds of thousands of records a command otherwise.
 */
static const char * const okcov_noise_unwind[] = {
	"*unwind*", "*stack_trace*", "arch_stack_walk*", "show_*stack*",
	"*orc_find*", "stack_access_ok", "get_stack_info*",
	"*kernel_text_address", "filter_irq_stacks", NULL
};

/*
 * What the kernel's debug options turn into functions of their own in
 * kernel/sched/core.c (DEBUG_PREEMPT, DEBUG_ATOMIC_SLEEP) and
 * kernel/locking/spinlock_debug.c (DEBUG_SPINLOCK), and the register
 * reader ORC's unwinder keeps out of line under KASAN. Stock kernels
 * inline them all.
 */
#if defined(CONFIG_DEBUG_PREEMPT) || defined(CONFIG_TRACE_PREEMPT_TOGGLE) || \
	defined(CONFIG_DEBUG_ATOMIC_SLEEP)
static const char * const okcov_noise_sched_debug[] = {
	"preempt_count_*", "__might_resched", "__might_sleep", NULL
};
#endif

#ifdef CONFIG_DEBUG_SPINLOCK
static const char * const okcov_noise_locking_debug[] = {
	"do_raw_*", NULL
};
#endif

/*
 * mm/slub.c's slab refill and release (allocate_slab, deactivate_slab,
 * discard_slab, __free_slab...: whether they run depends on what earlier
 * allocations left in the per-CPU slab, not on the syscall).
 */
static const char * const okcov_noise_mm_slub[] = {
	"*_slab", NULL
};

/*
 * mm/slub.c's object checks (slub_debug, on in debug kernels) and KASAN's
 * quarantine release, which frees a batch of objects in whichever thread
 * allocates when the quarantine is full.
 */
#if defined(CONFIG_SLUB_DEBUG_ON) || defined(CONFIG_KASAN)
static const char * const okcov_noise_mm_debug[] = {
	"check_bytes*", "*_debug_processing", "set_track*", "*red_left",
	"on_freelist", "check_object", "init_object", "___cache_free", NULL
};
#endif

#ifdef CONFIG_KASAN
static const char * const okcov_noise_unwind_debug[] = {
	"get_reg", NULL
};
#endif

static const struct okcov_funcset_group okcov_noise[] = {
	{ "sched",	okcov_noise_sched },
#if defined(CONFIG_DEBUG_PREEMPT) || defined(CONFIG_TRACE_PREEMPT_TOGGLE) || \
	defined(CONFIG_DEBUG_ATOMIC_SLEEP)
	{ "sched",	okcov_noise_sched_debug },
#endif
	{ "locking",	okcov_noise_locking },
#ifdef CONFIG_PREEMPT_RT
	{ "locking",	okcov_noise_locking_rt },
#endif
#ifdef CONFIG_DEBUG_SPINLOCK
	{ "locking",	okcov_noise_locking_debug },
#endif
	{ "rcu",	okcov_noise_rcu },
	{ "entry",	okcov_noise_entry },
	{ "softirq",	okcov_noise_softirq },
	{ "mm",		okcov_noise_mm },
	{ "mm",		okcov_noise_mm_slub },
#if defined(CONFIG_SLUB_DEBUG_ON) || defined(CONFIG_KASAN)
	{ "mm",		okcov_noise_mm_debug },
#endif
	{ "resume",	okcov_noise_resume },
	{ "apic",	okcov_noise_apic },
	{ "unwind",	okcov_noise_unwind },
#ifdef CONFIG_KASAN
	{ "unwind",	okcov_noise_unwind_debug },
#endif
};

/*
 * Left out even with whole_kernel=1: interrupt glue that ftrace sees while
 * the preempt count does not (yet, or any more) say hardirq or softirq,
 * and the return-to-user path every interrupt from user mode takes.
 * in_task() cannot tell these from the thread's own work: an interrupt's
 * exit into preemption, and (7.x) the timer rearm the hrtimer interrupt
 * defers to its exit, with the clock event programming it calls.
 */
static const char * const okcov_irq_glue[] = {
	"*irq_enter*", "*irq_exit*", "__do_softirq", "handle_softirqs",
	"idle_cpu", "exit_to_user_mode_prepare",
	"fpregs_assert_state_consistent", "raw_irqentry_exit_cond_resched",
	"__hrtimer_rearm_deferred", "tick_program_event",
	"clockevents_program_event", NULL
};

/*
 * The globs, compiled: most are a name, a prefix, a suffix or an infix,
 * which okcov_glob_match() tests without glob_match()'s backtracking.
 */
enum okcov_glob_kind { OKCOV_EXACT, OKCOV_PREFIX, OKCOV_SUFFIX, OKCOV_INFIX,
		       OKCOV_GLOB };

struct okcov_glob {
	const char	*s;		/* the glob less its outer '*'s: len bytes */
	const char	*glob;		/* the whole glob, for OKCOV_GLOB */
	unsigned short	len;
	unsigned char	kind;
};

/*
 * The globs of a load, by the bytes that select them: the set's first
 * make tests some 37,000 names against about 120 globs (debian-6.1 under
 * -icount: naming each with sprint_symbol() and testing every glob took
 * 6.3 s; a 26-byte name tested 37,655 times this way takes 0.67 s). A
 * name's first byte selects the names and prefixes to test, its last
 * byte the suffixes, and each pair of bytes in it the infixes that start
 * with that pair. What no byte selects (a
 * glob that starts and ends with '*' and has another inside, an infix of
 * one byte, an empty name) is tried on every name.
 */
#define OKCOV_SLOT_FIRST	0		/* + the first byte */
#define OKCOV_SLOT_LAST		256		/* + the last byte */
#define OKCOV_SLOT_INFIX	512		/* + okcov_pair() */
#define OKCOV_PAIRS		1024
#define OKCOV_SLOT_NONE		(OKCOV_SLOT_INFIX + OKCOV_PAIRS)
#define OKCOV_SLOTS		(OKCOV_SLOT_NONE + 1)

struct okcov_globset {
	struct okcov_glob	*g;	/* by slot */
	unsigned int		n;
	bool			any;	/* a glob that matches every name */
	/* g[at[slot]] up to g[at[slot + 1]]: the globs of the slot */
	unsigned short		at[OKCOV_SLOTS + 1];
};

static void okcov_glob_compile(struct okcov_glob *g, const char *glob)
{
	size_t len = strlen(glob);
	bool lead = len && glob[0] == '*';
	bool trail = len > 1 && glob[len - 1] == '*';
	const char *body = glob + lead;
	size_t blen = len - lead - trail;

	g->glob = glob;
	g->s = body;
	g->len = blen;
	if (strpbrk(body, "?[\\") || memchr(body, '*', blen))
		g->kind = OKCOV_GLOB;
	else if (lead && trail)
		g->kind = OKCOV_INFIX;
	else if (lead)
		g->kind = OKCOV_SUFFIX;
	else if (trail)
		g->kind = OKCOV_PREFIX;
	else
		g->kind = OKCOV_EXACT;
}

static __always_inline unsigned int okcov_pair(unsigned char a,
					       unsigned char b)
{
	return (a * 37 + b) & (OKCOV_PAIRS - 1);
}

/* Is @c itself in a glob, not '*', '?', a class or an escape? */
static bool okcov_glob_plain(char c)
{
	return c && !strchr("*?[]\\", c);
}

/*
 * The slot of @g. A glob with '?', a class or an inner '*' goes by its
 * first byte, or its last one, where that is a plain byte: glob_match()
 * is tried only on the names that byte selects.
 */
static unsigned int okcov_glob_slot(const struct okcov_glob *g)
{
	size_t len = strlen(g->glob);

	if (g->kind == OKCOV_GLOB) {
		if (okcov_glob_plain(g->glob[0]))
			return OKCOV_SLOT_FIRST + (unsigned char)g->glob[0];
		if (len && okcov_glob_plain(g->glob[len - 1]) &&
		    (len < 2 || g->glob[len - 2] != '\\'))
			return OKCOV_SLOT_LAST +
			       (unsigned char)g->glob[len - 1];
		return OKCOV_SLOT_NONE;
	}
	if (!g->len)
		return OKCOV_SLOT_NONE;
	switch (g->kind) {
	case OKCOV_SUFFIX:
		return OKCOV_SLOT_LAST + (unsigned char)g->s[g->len - 1];
	case OKCOV_INFIX:
		if (g->len < 2)
			return OKCOV_SLOT_NONE;
		return OKCOV_SLOT_INFIX + okcov_pair(g->s[0], g->s[1]);
	default:
		return OKCOV_SLOT_FIRST + (unsigned char)g->s[0];
	}
}

/*
 * @a and @b agree on @len bytes: inline, since a name and a glob its
 * bytes selected mostly part at once.
 */
static __always_inline bool okcov_same(const char *a, const char *b,
				       size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/* Does @g match @name (@nlen bytes, NUL-terminated)? */
static __always_inline bool okcov_glob_match(const struct okcov_glob *g,
					     const char *name, size_t nlen)
{
	size_t i;

	switch (g->kind) {
	case OKCOV_EXACT:
		return nlen == g->len && okcov_same(name, g->s, nlen);
	case OKCOV_PREFIX:
		return nlen >= g->len && okcov_same(name, g->s, g->len);
	case OKCOV_SUFFIX:
		return nlen >= g->len &&
		       okcov_same(name + nlen - g->len, g->s, g->len);
	case OKCOV_INFIX:
		for (i = 0; i + g->len <= nlen; i++)
			if (okcov_same(name + i, g->s, g->len))
				return true;
		return false;
	default:
		return glob_match(g->glob, name);
	}
}

/* Does a glob of @gs's @slot match @name (@nlen bytes, NUL-terminated)? */
static bool okcov_slot_match(const struct okcov_globset *gs,
			     unsigned int slot, const char *name, size_t nlen)
{
	unsigned int i;

	for (i = gs->at[slot]; i < gs->at[slot + 1]; i++)
		if (okcov_glob_match(&gs->g[i], name, nlen))
			return true;
	return false;
}

/* Does a glob of @gs match @name (@nlen bytes, NUL-terminated)? */
static bool okcov_globset_match(const struct okcov_globset *gs,
				const char *name, size_t nlen)
{
	const struct okcov_glob *g;
	unsigned int i, j, slot;

	if (gs->any)
		return true;
	if (nlen &&
	    (okcov_slot_match(gs, OKCOV_SLOT_FIRST + (unsigned char)name[0],
			      name, nlen) ||
	     okcov_slot_match(gs, OKCOV_SLOT_LAST +
			      (unsigned char)name[nlen - 1], name, nlen)))
		return true;
	/* An infix's slot holds its first two bytes: test it there alone. */
	for (j = 0; j + 1 < nlen; j++) {
		slot = OKCOV_SLOT_INFIX + okcov_pair(name[j], name[j + 1]);
		for (i = gs->at[slot]; i < gs->at[slot + 1]; i++) {
			g = &gs->g[i];
			if (j + g->len <= nlen && okcov_same(name + j, g->s, g->len))
				return true;
		}
	}
	return okcov_slot_match(gs, OKCOV_SLOT_NONE, name, nlen);
}

static int okcov_glob_cmp(const void *a, const void *b)
{
	return okcov_glob_slot(a) - okcov_glob_slot(b);
}

/* @gs's @gs->n globs, compiled, sorted into its slots. */
static void okcov_globset_index(struct okcov_globset *gs)
{
	unsigned int i, slot;

	sort(gs->g, gs->n, sizeof(*gs->g), okcov_glob_cmp, NULL);
	for (slot = 0, i = 0; slot <= OKCOV_SLOTS; slot++) {
		while (i < gs->n && okcov_glob_slot(&gs->g[i]) < slot)
			i++;
		gs->at[slot] = i;
	}
	/* "*", "**": every name */
	for (i = 0; i < gs->n; i++)
		if (!gs->g[i].len && gs->g[i].kind != OKCOV_EXACT &&
		    gs->g[i].kind != OKCOV_GLOB)
			gs->any = true;
}

/*
 * The globs of this load: the interrupt glue, and the groups unless @all,
 * sorted into @gs's slots.
 */
static int okcov_globset_compile(struct okcov_globset *gs, bool all)
{
	const char * const *gl;
	unsigned int i, k = 0, max = 0;

	memset(gs, 0, sizeof(*gs));
	for (gl = okcov_irq_glue; *gl; gl++)
		max++;
	for (i = 0; i < ARRAY_SIZE(okcov_noise) && !all; i++)
		for (gl = okcov_noise[i].globs; *gl; gl++)
			max++;
	gs->g = kcalloc(max, sizeof(*gs->g), GFP_KERNEL);
	if (!gs->g)
		return -ENOMEM;
	for (gl = okcov_irq_glue; *gl; gl++)
		okcov_glob_compile(&gs->g[k++], *gl);
	for (i = 0; i < ARRAY_SIZE(okcov_noise) && !all; i++)
		for (gl = okcov_noise[i].globs; *gl; gl++)
			okcov_glob_compile(&gs->g[k++], *gl);
	gs->n = k;
	okcov_globset_index(gs);
	return 0;
}

static void okcov_globset_free(struct okcov_globset *gs)
{
	kfree(gs->g);
	gs->g = NULL;
}

/*
 * Another file's names to match: @n globs at @globs (kept, not copied),
 * matched as glob_match() would, through the slots. NULL: no memory.
 */
struct okcov_globset *okcov_globs_new(const char *const *globs, unsigned int n)
{
	struct okcov_globset *gs = kzalloc(sizeof(*gs), GFP_KERNEL);
	unsigned int i;

	if (!gs)
		return NULL;
	gs->g = kcalloc(n, sizeof(*gs->g), GFP_KERNEL);
	if (!gs->g) {
		kfree(gs);
		return NULL;
	}
	for (i = 0; i < n; i++)
		okcov_glob_compile(&gs->g[i], globs[i]);
	gs->n = n;
	okcov_globset_index(gs);
	return gs;
}

bool okcov_globs_match(const struct okcov_globset *gs, const char *name,
		       size_t len)
{
	return okcov_globset_match(gs, name, len);
}

void okcov_globs_free(struct okcov_globset *gs)
{
	if (gs)
		okcov_globset_free(gs);
	kfree(gs);
}

/* kallsyms_lookup(), not exported; or NULL: sprint_symbol() then. */
static typeof(&kallsyms_lookup) okcov_ksym_lookup;

/*
 * The symbol @ip lies in: its name in @name (KSYM_SYMBOL_LEN bytes), *@len
 * long, its bounds in *@start and *@end, *@mod whether a module's. Through
 * kallsyms_lookup() where okcov found it: the set's first make names every
 * traceable function, and sprint_symbol() formats what is parsed back.
 */
bool okcov_symbol_bounds(unsigned long ip, char *name, size_t *len,
			 unsigned long *start, unsigned long *end, bool *mod)
{
	unsigned long off, size;
	char *plus, *slash, *modname = NULL;
	const char *sym;

	if (okcov_ksym_lookup) {
		sym = okcov_ksym_lookup(ip, &size, &off, &modname, name);
		if (!sym)
			return false;
		if (sym != name)
			strscpy(name, sym, KSYM_SYMBOL_LEN);
		*mod = modname;
		*len = strlen(name);
		*start = ip - off;
		*end = ip - off + size;
		return true;
	}
	/* "name+0xoff/0xsize", and " [module]" for a module's */
	if (!sprint_symbol(name, ip))
		return false;
	plus = strchr(name, ' ');
	*mod = plus;
	if (plus)
		*plus = 0;
	plus = strrchr(name, '+');
	slash = plus ? strchr(plus, '/') : NULL;
	if (!slash)
		return false;
	*slash = 0;
	if (kstrtoul(plus + 1, 16, &off) || kstrtoul(slash + 1, 16, &size))
		return false;
	*plus = 0;
	*len = plus - name;
	*start = ip - off;
	*end = ip - off + size;
	return true;
}

/*
 * A symbol's address, or 0; kallsyms_lookup_name() is not exported, and
 * a kprobe registered disabled resolves a name without patching anything.
 */
unsigned long okcov_symbol(const char *name)
{
	static unsigned long (*lookup)(const char *name);
	struct kprobe kp = {
		.symbol_name	= "kallsyms_lookup_name",
		.flags		= KPROBE_FLAG_DISABLED,
	};

	if (!lookup) {
		if (register_kprobe(&kp))
			return 0;
		lookup = (void *)kp.addr;
		unregister_kprobe(&kp);
	}
	return lookup ? lookup(name) : 0;
}

/*
 * Whether the function at @ip leaves the set: a function of the kernel
 * proper (the groups are files of the kernel's own tree; a module's
 * function is traced whatever its name, as kcov instruments modules)
 * that a glob names. Its bounds go to *@start and *@end.
 */
static bool okcov_ip_excluded(unsigned long ip,
			      const struct okcov_globset *gs,
			      unsigned long *start, unsigned long *end)
{
	char name[KSYM_SYMBOL_LEN];
	size_t len;
	bool mod;

	if (!okcov_symbol_bounds(ip, name, &len, start, end, &mod) || mod)
		return false;
	return okcov_globset_match(gs, name, len);
}

/*
 * The functions left out, as a bitmap of 16-byte granules of the kernel's
 * text (a granule any of them overlaps): the hot path records no call site
 * in them, so that what they call does not bring them back as call sites.
 * Made with the set, before the hook is first installed, and read-only
 * until the unload frees it.
 */
static void okcov_quiet_build(const unsigned long *start,
			      const unsigned long *end, unsigned long k)
{
	unsigned long i, lo = ULONG_MAX, hi = 0, bits;
	unsigned long *map;

	for (i = 0; i < k; i++) {
		lo = min(lo, start[i]);
		hi = max(hi, end[i]);
	}
	if (!k || hi <= lo)
		return;
	bits = (hi - lo + OKCOV_QUIET_GRANULE - 1) / OKCOV_QUIET_GRANULE;
	map = vzalloc(BITS_TO_LONGS(bits) * sizeof(long));
	if (!map) {
		pr_warn("no memory for the call-site map: call sites in left-out functions are recorded\n");
		return;
	}
	for (i = 0; i < k; i++)
		bitmap_set(map, (start[i] - lo) / OKCOV_QUIET_GRANULE,
			   (end[i] - 1 - lo) / OKCOV_QUIET_GRANULE -
			   (start[i] - lo) / OKCOV_QUIET_GRANULE + 1);
	okcov_g.quiet_base = lo;
	okcov_g.quiet_map = map;
	/* Last: the hot path tests bits only below it. */
	WRITE_ONCE(okcov_g.quiet_bits, bits);
}

static struct okcov_globset okcov_left_out;	/* [C] copy.c's mutex */

/*
 * Would the set leave out a function of the kernel proper named @name
 * (@len bytes): the interrupt glue, and the groups unless whole_kernel?
 * For copy.c's callees, which ftrace has no record of: the groups name
 * what kcov leaves uninstrumented whether ftrace traces it or not. The
 * globs are compiled at the first call; copy.c's mutex serialises. True
 * where they cannot be (no memory): refused rather than guessed.
 */
bool okcov_funcset_left_out(const char *name, size_t len)
{
	if (!okcov_left_out.g && okcov_globset_compile(&okcov_left_out,
						       whole_kernel))
		return true;
	return okcov_globset_match(&okcov_left_out, name, len);
}

/* Unload, the hook removed. */
void okcov_funcset_cleanup(void)
{
	okcov_g.quiet_bits = 0;
	vfree(okcov_g.quiet_map);
	okcov_g.quiet_map = NULL;
	okcov_globset_free(&okcov_left_out);
}

/*
 * Leave the default exclusions out of @ops (not registered), in one pass:
 * ftrace selects every traceable function into the ops' filter (one walk
 * of its records; or the user's filter= globs did already), okcov reads
 * that filter, names each function once and tests it against the globs,
 * and removes the ones that go, by address. Where one ftrace_set_notrace()
 * per glob walked all records with a symbol lookup each, this costs two
 * lookups a function. The left-out functions' bounds, from the same
 * lookup, make the call-site map (okcov_quiet_build()). With a filter
 * the user named what to trace: only the interrupt glue goes then.
 */
int okcov_funcset_apply(struct ftrace_ops *ops, bool filtered)
{
	ktime_t t0 = ktime_get();
	struct okcov_ftrace_hash *hash;
	struct ftrace_func_entry *e;
	unsigned long *ips = NULL, *start = NULL, *end = NULL, k = 0, total;
	struct okcov_globset *gs;
	unsigned int i;
	char all[] = "*";
	int ret = 0;

	if (!filtered) {
		ret = ftrace_set_filter(ops, all, 1, 1);
		if (ret) {
			pr_err("cannot select the traceable functions: %d\n",
			       ret);
			return ret;
		}
	}
	gs = kmalloc(sizeof(*gs), GFP_KERNEL);
	if (!gs)
		return -ENOMEM;
	ret = okcov_globset_compile(gs, whole_kernel || filtered);
	if (ret)
		goto out_gs;
	hash = okcov_filter_hash(ops);
	total = hash ? hash->count : 0;
	if (total) {
		ips = kvmalloc_array(total, sizeof(*ips), GFP_KERNEL);
		start = kvmalloc_array(total, sizeof(*start), GFP_KERNEL);
		end = kvmalloc_array(total, sizeof(*end), GFP_KERNEL);
		if (!ips || !start || !end) {
			ret = -ENOMEM;
			goto out;
		}
	}
	for (i = 0; total && i < (1U << hash->size_bits); i++) {
		hlist_for_each_entry(e, &hash->buckets[i], hlist) {
			if (k < total && okcov_ip_excluded(e->ip, gs, &start[k],
							   &end[k]))
				ips[k++] = e->ip;
		}
		cond_resched();
	}
	if (k)
		ret = ftrace_set_filter_ips(ops, ips, k, 1, 0);
	if (ret) {
		pr_err("cannot leave out %lu functions: %d\n", k, ret);
		goto out;
	}
	okcov_quiet_build(start, end, k);
	pr_info("function set: %lu of %lu functions left out, in %lld ms\n",
		k, total, ktime_ms_delta(ktime_get(), t0));
out:
	kvfree(start);
	kvfree(end);
	kvfree(ips);
	okcov_globset_free(gs);
out_gs:
	kfree(gs);
	return ret;
}

/* ftrace_location(), not exported; or NULL: a probe's filter then. */
static typeof(&ftrace_location) okcov_ftrace_loc;

/* Load: find what the set's make and its questions use. */
void okcov_funcset_init(void)
{
	okcov_ksym_lookup = (void *)okcov_symbol("kallsyms_lookup");
	okcov_ftrace_loc = (void *)okcov_symbol("ftrace_location");
}

/*
 * Has ftrace a record (an fentry site) at @ip, or, for @ip a function's
 * start, anywhere in that function (ftrace maps sym+0 to its site)? What
 * ftrace_set_filter_ip() asks before it takes an address, through
 * ftrace_location(), without the two hash allocations and ftrace_lock of
 * setting @probe's filter (an ops never registered) to @ip alone, which
 * is where okcov did not find it. Caller: okcov_hook_mutex.
 */
bool okcov_ftrace_has(struct ftrace_ops *probe, unsigned long ip)
{
	if (okcov_ftrace_loc)
		return okcov_ftrace_loc(ip);
	return !ftrace_set_filter_ip(probe, ip, 0, 1);
}

/*
 * A module comes (its ftrace records are in, not yet its init's end) or
 * goes (its records are still in): the filter follows. Coming, each of its
 * text functions (not the init ones, freed later) that ftrace can trace
 * joins the filter; @probe, an ops never registered (its filter freed at
 * unload), tells which, one address at a time. Going, its addresses
 * leave, so that a module loaded there later does not inherit them.
 */
void okcov_funcset_module(struct ftrace_ops *ops, struct ftrace_ops *probe,
			  struct module *mod, bool coming)
{
	struct okcov_ftrace_hash *hash = okcov_filter_hash(ops);
	unsigned long *ips, k = 0, max, addr;
	struct mod_kallsyms *ks;
	struct ftrace_func_entry *e;
	unsigned int i;
	int ret = 0;

	if (coming) {
		rcu_read_lock();
		ks = rcu_dereference(mod->kallsyms);
		max = ks ? ks->num_symtab : 0;
		rcu_read_unlock();
	} else {
		max = hash ? hash->count : 0;
	}
	if (!max)
		return;
	ips = kvmalloc_array(max, sizeof(*ips), GFP_KERNEL);
	if (!ips) {
		pr_err("module %s: no memory to update the function set\n",
		       mod->name);
		return;
	}
	if (coming) {
		/* COMING: the symbol table is the module's own, stable. */
		ks = rcu_dereference_raw(mod->kallsyms);
		for (i = 0; i < ks->num_symtab && k < max; i++) {
			addr = ks->symtab[i].st_value;
			if ((ks->typetab[i] != 't' && ks->typetab[i] != 'T') ||
			    !within_module_core(addr, mod))
				continue;
			if (okcov_ftrace_has(probe, addr))
				ips[k++] = addr;
		}
		/*
		 * @probe may keep a one-entry filter (the next reset frees
		 * it): ftrace_free_filter() leaves the ops pointing to what it
		 * freed, so it is for the unload only.
		 */
		if (k)
			ret = ftrace_set_filter_ips(ops, ips, k, 0, 0);
	} else {
		for (i = 0; i < (1U << hash->size_bits); i++)
			hlist_for_each_entry(e, &hash->buckets[i], hlist)
				if (k < max && within_module(e->ip, mod))
					ips[k++] = e->ip;
		if (k)
			ret = ftrace_set_filter_ips(ops, ips, k, 1, 0);
	}
	if (ret)
		pr_err("module %s: cannot update the function set: %d\n",
		       mod->name, ret);
	kvfree(ips);
}

/*
 * Deep probes (deep.c): is the function at @start in the set? Its entry,
 * the fentry site ftrace records (the function's address, or a few bytes
 * on, after an endbr64 or BTI landing pad), goes to *@entry. -EACCES: ftrace
 * can trace it but the set leaves it out; -ENXIO: ftrace cannot trace it.
 * @probe: as okcov_funcset_module()'s; NULL: -ENXIO for both, without
 * asking ftrace. Caller: okcov_hook_mutex.
 */
#define OKCOV_ENTRY_SLACK	8

static bool okcov_hash_has(const struct okcov_ftrace_hash *hash,
			   unsigned long ip)
{
	struct ftrace_func_entry *e;
	unsigned long key;

	if (!hash || !hash->count)
		return false;
	key = hash->size_bits ? hash_long(ip, hash->size_bits) : 0;
	hlist_for_each_entry(e, &hash->buckets[key], hlist)
		if (e->ip == ip)
			return true;
	return false;
}

int okcov_funcset_entry(struct ftrace_ops *ops, struct ftrace_ops *probe,
			unsigned long start, unsigned long *entry)
{
	struct okcov_ftrace_hash *hash = okcov_filter_hash(ops);
	unsigned long ip;

	for (ip = start; ip <= start + OKCOV_ENTRY_SLACK; ip++) {
		if (okcov_hash_has(hash, ip)) {
			*entry = ip;
			return 0;
		}
	}
	if (!probe)
		return -ENXIO;
	return okcov_ftrace_has(probe, start) ? -EACCES : -ENXIO;
}

/*
 * Deep probes in a .cold part, which has no entry of its own: is a
 * function named @name (@len long; static functions may share it) in the
 * set? 0, -EACCES or -ENXIO as okcov_funcset_entry(). One pass over
 * ftrace's records, by name. Caller: okcov_hook_mutex.
 */
int okcov_funcset_named(struct ftrace_ops *ops, struct ftrace_ops *probe,
			char *name, size_t len)
{
	struct okcov_ftrace_hash *hash = okcov_filter_hash(ops), *ph;
	struct ftrace_func_entry *e;
	unsigned int i;

	if (ftrace_set_filter(probe, name, len, 1))
		return -ENXIO;
	ph = okcov_filter_hash(probe);
	for (i = 0; ph && i < (1U << ph->size_bits); i++)
		hlist_for_each_entry(e, &ph->buckets[i], hlist)
			if (okcov_hash_has(hash, e->ip))
				return 0;
	return -EACCES;
}
