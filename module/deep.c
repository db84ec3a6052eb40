// SPDX-License-Identifier: GPL-2.0
/*
 * Deep coverage: the basic blocks of functions the user chose, through a
 * kprobe at each block leader (KIODEEP), or, with deep_copies set (the
 * default on x86_64), through instrumented copies of the functions
 * (copy.c), kprobes taking what a copy refuses. Userspace computes the
 * leaders from the live text (okcov-cover deep; no instruction decoder
 * is exported to modules), or with KIO_DEEP_FUNCTIONS okcov does
 * (plan.c, x86_64) from the functions named; okcov trusts none of them:
 * each must lie in a function the hook traces (the function set,
 * okcov_traced_function()), outside okcov, past the function's entry
 * (ftrace records that one), at an instruction boundary of okcov's own
 * decoding of the live text where it has one (x86_64: plan.c), and
 * kprobes must accept it (instruction boundaries, its blacklist,
 * jump-label, static-call and alternative sites).
 *
 * The probes have a pre handler only, so that x86 optimises them into
 * jumps; they are shared by every descriptor (one probe per address) and
 * all go, in one unregister_kprobes() batch (one grace period), when the
 * last descriptor that asked for any is closed (deep on reach, reach.c,
 * is such a user while it runs). A module's go when it unloads.
 * Locking: okcov_deep_mutex, task context only.
 *
 * The handler fires for every thread that runs a deep-traced function and
 * rejects one that is not attached first (okcov.h's order), with the
 * probed code's own context: an x86 int3 runs it in NMI context on top of
 * it (compat/arch.h, okcov_kprobe_trapped()).
 */

#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>

#include "okcov.h"

static unsigned int deep_max_probes = 4096;
module_param(deep_max_probes, uint, 0644);
MODULE_PARM_DESC(deep_max_probes, "Most deep probes installed at once (KIODEEP)");

static bool deep_copies = IS_ENABLED(CONFIG_X86_64);
module_param(deep_copies, bool, 0644);
MODULE_PARM_DESC(deep_copies,
		 "KIODEEP makes instrumented copies where it can, kprobes where not (x86_64, on by default; read when no deep leader is installed)");

static DEFINE_MUTEX(okcov_deep_mutex);
static DEFINE_XARRAY(okcov_deep_addrs);	/* [D] address -> its kprobe */
static struct kprobe **okcov_deep_kps;	/* [D] all of them, for the batch */
static unsigned int okcov_deep_n, okcov_deep_cap;	/* [D] */
static unsigned int okcov_deep_users;	/* [D] kd->deep descriptors, deep_reach */
static bool okcov_deep_copying;		/* [D] deep_copies, when users came */
static bool okcov_deep_reach_held;	/* [D] deep on reach is a deep user */

/*
 * Kprobes calls it with preemption disabled: an RCU-sched read side. The
 * recorded code's context is under the trap (OKCOV_REC_KPROBE).
 */
static int notrace okcov_deep_hit(struct kprobe *p, struct pt_regs *regs)
{
	struct okcov_attach *a = okcov_get(OKCOV_MODE_TRACE_PC,
					   OKCOV_REC_KPROBE, regs);

	if (a) {
		okcov_record_block(a, (unsigned long)p->addr);
		okcov_put(OKCOV_REC_KPROBE);
	}
	return 0;
}
NOKPROBE_SYMBOL(okcov_deep_hit);

/*
 * A .cold part (foo.cold, foo.cold.1) holds blocks of its parent, foo,
 * and has no ftrace entry: foo must be traced. The last answer is kept:
 * a part's leaders come together. [D]
 */
static char okcov_cold_parent[KSYM_NAME_LEN];
static int okcov_cold_answer;

/* The same for the last function's entry (okcov_traced_function()). [D] */
static unsigned long okcov_traced_start, okcov_traced_entry;
static int okcov_traced_answer;

/* The symbol the last leader lay in, [start, end) and name: one lookup. [D] */
static unsigned long okcov_sym_start, okcov_sym_end;
static char okcov_sym_name[KSYM_SYMBOL_LEN];
static size_t okcov_sym_len;

/*
 * okcov's own decoding of the last function a leader was in, or a .cold
 * part's parent (okcov_deep_check_cold()). [D]
 */
static struct okcov_plan okcov_deep_plan;

/*
 * Is a function named @name (@len long), the parent of the .cold part
 * @addr lies in, traced? @fn: okcov_deep_check()'s. [D]
 */
static int okcov_deep_check_cold(char *name, size_t len, unsigned long addr,
				 unsigned long fn)
{
	struct okcov_plan *p = &okcov_deep_plan;
	unsigned long entry;

	if (strcmp(name, okcov_cold_parent)) {
		/*
		 * The plan of the function KIODEEP found the part in holds
		 * it; so does the last plan where the body's leaders came
		 * first (a part may lie below its parent: 7.x). That parent
		 * traced, a function of its name is. Otherwise ask by name:
		 * a pass over every ftrace record with a symbol lookup each
		 * (0.3 s under TCG).
		 */
		if (fn && !okcov_plan_inside(p, addr))
			okcov_plan_boundary(p, fn);
		if (okcov_plan_inside(p, addr) && !strcmp(p->name, name) &&
		    !okcov_traced_function(p->start, NULL, 0, &entry))
			okcov_cold_answer = 0;
		else
			okcov_cold_answer = okcov_traced_function(0, name, len,
								  NULL);
		strscpy(okcov_cold_parent, name, sizeof(okcov_cold_parent));
	}
	return okcov_cold_answer;
}

/*
 * Can @addr carry a deep probe, before kprobes has its say? 0, or EACCES
 * (okcov's own text, a function the set leaves out), ENXIO (no function
 * okcov traces there), EINVAL (the function's entry), EILSEQ (okcov
 * decoded the function, plan.c, and no instruction starts there). @fn:
 * the start of the function KIODEEP planned @addr in, a leader of that
 * plan (KIO_DEEP_FUNCTIONS), or 0.
 */
static int okcov_deep_check(unsigned long addr, unsigned long fn)
{
	char name[KSYM_SYMBOL_LEN], *cold;
	unsigned long start, entry;
	size_t len;
	bool mod;
	int ret;

	if (addr - okcov_g.text_start < okcov_g.text_size)
		return -EACCES;
	if (addr - okcov_sym_start >= okcov_sym_end - okcov_sym_start &&
	    !okcov_symbol_bounds(addr, okcov_sym_name, &okcov_sym_len,
				 &okcov_sym_start, &okcov_sym_end, &mod)) {
		okcov_sym_start = okcov_sym_end = 0;
		return -ENXIO;
	}
	start = okcov_sym_start;
	len = okcov_sym_len;
	memcpy(name, okcov_sym_name, len + 1);
	cold = strstr(name, ".cold");
	if (cold && cold > name && (!cold[5] || cold[5] == '.')) {
		*cold = 0;
		ret = okcov_deep_check_cold(name, cold - name, addr, fn);
	} else {
		/* A function's leaders come together: ask once for them. */
		if (start != okcov_traced_start) {
			okcov_traced_answer = okcov_traced_function(start, NULL, 0,
								    &okcov_traced_entry);
			okcov_traced_start = start;
		}
		ret = okcov_traced_answer;
		entry = okcov_traced_entry;
		if (!ret && (addr == start || addr == entry))
			ret = -EINVAL;
	}
	if (ret || fn)
		return ret;
	/*
	 * Where okcov decodes the text itself, it alone says what is whole;
	 * a leader of its own plan is.
	 */
	ret = okcov_plan_boundary(&okcov_deep_plan, addr);
	return ret > 0 ? 0 : ret;
}

/* The probes okcov_deep_kps[from..] go, in one batch; freed after it. */
static void okcov_deep_remove(unsigned int from)
{
	unsigned int i;

	if (from == okcov_deep_n)
		return;
	unregister_kprobes(okcov_deep_kps + from, okcov_deep_n - from);
	for (i = from; i < okcov_deep_n; i++) {
		xa_erase(&okcov_deep_addrs, (unsigned long)okcov_deep_kps[i]->addr);
		kfree(okcov_deep_kps[i]);
	}
	okcov_deep_n = from;
}

/* Room for @more probes in okcov_deep_kps. */
static int okcov_deep_reserve(unsigned int more)
{
	unsigned int cap = okcov_deep_cap;
	struct kprobe **kps;

	if (okcov_deep_n + more <= cap)
		return 0;
	cap = max(okcov_deep_n + more, 2 * cap);
	kps = kvmalloc_array(cap, sizeof(*kps), GFP_KERNEL);
	if (!kps)
		return -ENOMEM;
	if (okcov_deep_n)
		memcpy(kps, okcov_deep_kps, okcov_deep_n * sizeof(*kps));
	kvfree(okcov_deep_kps);
	okcov_deep_kps = kps;
	okcov_deep_cap = cap;
	return 0;
}

/*
 * One address (@fn: okcov_deep_check()'s): 0 (installed now, or already),
 * or a negative errno.
 */
static int okcov_deep_add(unsigned long addr, unsigned long fn,
			  unsigned int *installed)
{
	struct kprobe *kp;
	int ret;

	if (xa_load(&okcov_deep_addrs, addr))
		return 0;
	if (okcov_deep_n >= READ_ONCE(deep_max_probes))
		return -ENOSPC;
	ret = okcov_deep_check(addr, fn);
	if (ret)
		goto refused;
	kp = kzalloc(sizeof(*kp), GFP_KERNEL);
	if (!kp)
		return -ENOMEM;
	kp->addr = (kprobe_opcode_t *)addr;
	kp->pre_handler = okcov_deep_hit;
	ret = xa_insert(&okcov_deep_addrs, addr, kp, GFP_KERNEL);
	if (!ret) {
		ret = register_kprobe(kp);
		if (ret)
			xa_erase(&okcov_deep_addrs, addr);
	}
	if (ret) {
		kfree(kp);
		goto refused;
	}
	okcov_deep_kps[okcov_deep_n++] = kp;
	(*installed)++;
	/* Never an ftrace-based probe: okcov_deep_check() keeps entries out. */
	WARN_ON_ONCE(kprobe_ftrace(kp));
	return 0;
refused:
	pr_info("deep probe refused at %pS (0x%lx): %d\n", (void *)addr, addr,
		ret);
	return ret;
}

/* The read keeps its plans for the copies in a request this small. */
#define OKCOV_DEEP_KEEP		32

/*
 * One KIODEEP call's leaders: the addresses given, or with
 * KIO_DEEP_FUNCTIONS the leaders of each function given, by okcov's own
 * decoding (plan.c, the rule okcov-cover deep applies to objdump's).
 * err[k]: leader k's errno, 1 while not tried; fn[k]: the index of the
 * address it came from; start[i], with KIO_DEEP_FUNCTIONS: the start of
 * the function address i was planned in; plans[], with few functions and
 * copies: the read's plans, which okcov_copy_stage() takes.
 */
struct okcov_deep_req {
	unsigned long	*addr;
	unsigned int	*fn;
	int		*err;
	unsigned int	n, cap;
	unsigned long	*start;
	struct okcov_plan *plans;	/* the read's, for copy.c to take */
	unsigned int	nplans;
};

static void okcov_deep_req_free(struct okcov_deep_req *r)
{
	unsigned int i;

	kvfree(r->addr);
	kvfree(r->fn);
	kvfree(r->err);
	kvfree(r->start);
	for (i = 0; i < r->nplans; i++)
		okcov_plan_free(&r->plans[i]);
	kvfree(r->plans);
}

/* Leader @k's function, as planned by KIODEEP, or 0. */
static unsigned long okcov_deep_req_fn(const struct okcov_deep_req *r,
				       unsigned int k)
{
	return r->start ? r->start[r->fn[k]] : 0;
}

/* Is @r's address @k a function's start: a copy of the whole function? */
static bool okcov_deep_req_whole(const struct okcov_deep_req *r,
				 unsigned int k)
{
	return r->start && r->addr[k] == r->start[r->fn[k]];
}

static int okcov_deep_req_grow(struct okcov_deep_req *r, unsigned int more)
{
	unsigned int cap = max(r->n + more, 2 * r->cap);
	unsigned long *addr;
	unsigned int *fn;

	if (r->n + more <= r->cap)
		return 0;
	addr = kvmalloc_array(cap, sizeof(*addr), GFP_KERNEL);
	fn = kvmalloc_array(cap, sizeof(*fn), GFP_KERNEL);
	if (!addr || !fn) {
		kvfree(addr);
		kvfree(fn);
		return -ENOMEM;
	}
	if (r->n) {
		memcpy(addr, r->addr, r->n * sizeof(*addr));
		memcpy(fn, r->fn, r->n * sizeof(*fn));
	}
	kvfree(r->addr);
	kvfree(r->fn);
	r->addr = addr;
	r->fn = fn;
	r->cap = cap;
	return 0;
}

/*
 * Deep on reach's look ahead (reach.c): the functions @p calls or jumps
 * to directly that the hook traces (the function set, an ftrace entry),
 * by their fentry sites, into @calls while it has room. Whether okcov
 * may copy one is for its own install to say. [D]
 */
static void okcov_deep_calls(const struct okcov_plan *p,
			     struct okcov_calls *calls)
{
	const struct okcov_plan_insn *pi;
	unsigned long t, site;
	unsigned int i;

	for (i = 0; i < p->ninsns && calls->n < calls->max; i++) {
		pi = &p->insns[i];
		/*
		 * Calls and tail jumps; the fentry site's call is ftrace's.
		 * Not a conditional tail call (jcc out): reach-ahead was
		 * measured without them.
		 */
		if (pi->insn.kind == OKCOV_KIND_JCC || pi->addr == p->entry ||
		    !okcov_plan_out(p, pi, &t) ||
		    t - okcov_g.text_start < okcov_g.text_size)
			continue;
		site = okcov_set_entry(t);
		if (site && site != p->entry)
			calls->ip[calls->n++] = site;
	}
}

/*
 * Read @d's addresses (@kaddrs', when not NULL) into @r; with
 * KIO_DEEP_FUNCTIONS, plan each one's function and take its leaders,
 * @ferr[i] getting the plan's verdict where there are none; and the
 * first @ncalls functions' direct calls into @calls (deep on reach). 0,
 * or EFAULT, EINTR, ENOMEM. [D]
 */
static int okcov_deep_read(const struct kio_deep *d, const unsigned long *kaddrs,
			   struct okcov_deep_req *r, int *ferr,
			   unsigned int ncalls, struct okcov_calls *calls)
{
	const u64 __user *addrs = u64_to_user_ptr(d->addrs);
	struct okcov_plan *p = NULL;
	unsigned int i, k;
	int ret = 0;
	u64 addr;

	if (d->flags & KIO_DEEP_FUNCTIONS) {
		p = kzalloc(sizeof(*p), GFP_KERNEL);
		r->start = kvcalloc(d->count, sizeof(*r->start), GFP_KERNEL);
		if (!p || !r->start) {
			kfree(p);
			return -ENOMEM;
		}
		/* A few functions (deep on reach's batches): planned once. */
		if (okcov_deep_copying && d->count <= OKCOV_DEEP_KEEP)
			r->plans = kvcalloc(d->count, sizeof(*r->plans),
					    GFP_KERNEL);
	} else {
		ret = okcov_deep_req_grow(r, d->count);
	}
	for (i = 0; !ret && i < d->count; i++) {
		ret = -EINTR;
		if (fatal_signal_pending(current))
			break;
		ret = -EFAULT;
		if (kaddrs)
			addr = kaddrs[i];
		else if (get_user(addr, addrs + i))
			break;
		ret = 0;
		if (!p) {
			r->addr[r->n] = addr;
			r->fn[r->n++] = i;
			continue;
		}
		ret = okcov_plan_function(addr, p);
		if (!ret)
			ret = okcov_deep_req_grow(r, p->nleaders + 1);
		if (!ret) {
			r->start[i] = p->start;
			if (i < ncalls && calls)
				okcov_deep_calls(p, calls);
			for (k = 0; k < p->nleaders; k++) {
				r->addr[r->n] = p->leaders[k];
				r->fn[r->n++] = i;
			}
			/*
			 * No leader, but calls of notrace functions: its start
			 * asks for a copy that records nothing itself and
			 * calls theirs (copy.c, deep_callees). Copies only.
			 */
			if (!p->nleaders && okcov_deep_copying &&
			    okcov_copy_calls_notrace(p)) {
				r->addr[r->n] = p->start;
				r->fn[r->n++] = i;
			}
			if (r->plans) {
				r->plans[r->nplans++] = *p;
				memset(p, 0, sizeof(*p));
			}
		} else if (ret != -ENOMEM) {
			ferr[i] = ret;
			ret = 0;
		}
		okcov_plan_free(p);
		cond_resched();
	}
	kfree(p);
	if (!ret && r->n) {
		r->err = kvmalloc_array(r->n, sizeof(*r->err), GFP_KERNEL);
		if (!r->err)
			return -ENOMEM;
		for (k = 0; k < r->n; k++)
			r->err[k] = 1;
	}
	return ret;
}

/*
 * The leaders of @r through copies (copy.c): each is checked as for a
 * probe; the copies are staged for the leaders they can record, and the
 * others get a probe (the kprobe backend is the fallback). 0, or EINTR,
 * ENOMEM. [D]
 */
static int okcov_deep_copy_batch(struct okcov_deep_req *r,
				 unsigned int *installed)
{
	unsigned int k, m = 0, *idx;
	unsigned long *want;
	int *res, ret = -ENOMEM;

	want = kvmalloc_array(r->n, sizeof(*want), GFP_KERNEL);
	idx = kvmalloc_array(r->n, sizeof(*idx), GFP_KERNEL);
	res = kvmalloc_array(r->n, sizeof(*res), GFP_KERNEL);
	if (!want || !idx || !res)
		goto out;
	for (k = 0; k < r->n; k++) {
		ret = -EINTR;
		if (fatal_signal_pending(current))
			goto out;
		/* Probed already (a copy refused its function): stays so. */
		if (xa_load(&okcov_deep_addrs, r->addr[k])) {
			r->err[k] = 0;
			continue;
		}
		if (okcov_deep_req_whole(r, k))
			r->err[k] = 0;
		else
			r->err[k] = okcov_deep_check(r->addr[k],
						     okcov_deep_req_fn(r, k));
		if (!r->err[k]) {
			want[m] = r->addr[k];
			idx[m++] = k;
		}
		cond_resched();
	}
	ret = okcov_copy_stage(want, m, res, installed, r->plans, r->nplans);
	if (ret)
		goto out;
	for (k = 0; k < m; k++) {
		/* A copy only for its callees: no copy, nothing to probe. */
		if (okcov_deep_req_whole(r, idx[k]))
			res[k] = 0;
		if (res[k]) {
			ret = -EINTR;
			if (fatal_signal_pending(current))
				goto out;
			res[k] = okcov_deep_add(want[k],
						okcov_deep_req_fn(r, idx[k]),
						installed);
		}
		r->err[idx[k]] = res[k];
	}
	ret = 0;
out:
	kvfree(res);
	kvfree(idx);
	kvfree(want);
	return ret;
}

/*
 * The leaders of @r through probes, in order; without KIO_DEEP_PARTIAL
 * the first refusal ends the loop. 0, or EINTR. [D]
 */
static int okcov_deep_probe_batch(const struct kio_deep *d,
				  struct okcov_deep_req *r,
				  unsigned int *installed)
{
	unsigned int k;

	for (k = 0; k < r->n; k++) {
		/* Each probe may wait for the optimiser: a kill ends it all. */
		if (fatal_signal_pending(current))
			return -EINTR;
		r->err[k] = okcov_deep_add(r->addr[k],
					   okcov_deep_req_fn(r, k), installed);
		if (r->err[k] && (!(d->flags & KIO_DEEP_PARTIAL) ||
				  r->err[k] == -ENOMEM))
			break;
		cond_resched();
	}
	return 0;
}

/*
 * Each address's errno into @ferr (1: not tried), and to userspace:
 * a function's is its plan's verdict or its first refused leader's. The
 * refused addresses in *@refused; the first that fails the call (any,
 * without KIO_DEEP_PARTIAL; ENOMEM always), or EFAULT.
 */
static int okcov_deep_report(const struct kio_deep *d,
			     const struct okcov_deep_req *r, int *ferr,
			     unsigned int *refused)
{
	s32 __user *errs = u64_to_user_ptr(d->errors);
	unsigned int i, k;
	int ret = 0;

	for (k = 0; k < r->n; k++) {
		i = r->fn[k];
		if (r->err[k] != 1 && (ferr[i] == 1 || !ferr[i]))
			ferr[i] = r->err[k];
	}
	for (i = 0; i < d->count; i++) {
		/* A function with no leader past its entry: nothing to do. */
		if (ferr[i] == 1 && (d->flags & KIO_DEEP_FUNCTIONS))
			ferr[i] = 0;
		if (ferr[i] == 1)
			continue;
		if (errs && put_user(ferr[i], errs + i))
			return -EFAULT;
		if (ferr[i]) {
			(*refused)++;
			if (!ret && (!(d->flags & KIO_DEEP_PARTIAL) ||
				     ferr[i] == -ENOMEM))
				ret = ferr[i];
		}
	}
	return ret;
}

/*
 * Is any leader of @r in place (installed now or before)? With
 * KIO_DEEP_PARTIAL a function counts as refused when one of its leaders
 * is, while the others are in place.
 */
static bool okcov_deep_any(const struct okcov_deep_req *r)
{
	unsigned int k;

	for (k = 0; k < r->n; k++)
		if (!r->err[k])
			return true;
	return false;
}

/*
 * Install @d's leaders (from @kaddrs when not NULL, else from userspace),
 * all or none: what the call added goes again on an error. @ferr: each
 * address's errno (okcov_deep_report()). *@any: a leader of the call is
 * in place. 0, or as KIODEEP. [D]
 */
static int okcov_deep_install(const struct kio_deep *d,
			      const unsigned long *kaddrs, int *ferr,
			      unsigned int *installed, unsigned int *refused,
			      bool *any, unsigned int ncalls,
			      struct okcov_calls *calls)
{
	struct okcov_deep_req r = { };
	unsigned int i, from, max;
	int ret;

	*any = false;
	okcov_cold_parent[0] = 0;	/* modules may have come or gone */
	okcov_traced_start = 0;
	okcov_sym_start = okcov_sym_end = 0;
	okcov_plan_free(&okcov_deep_plan);
	from = okcov_deep_n;
	max = READ_ONCE(deep_max_probes);
	ret = -ENOSPC;
	if (!(d->flags & KIO_DEEP_FUNCTIONS) &&
	    d->count > max - min(okcov_deep_n, max))
		goto out;
	for (i = 0; i < d->count; i++)
		ferr[i] = 1;
	/* The backend: chosen while nothing deep is installed. */
	if (!okcov_deep_users && !okcov_deep_n)
		okcov_deep_copying = IS_ENABLED(CONFIG_X86_64) &&
				     READ_ONCE(deep_copies);
	ret = okcov_deep_read(d, kaddrs, &r, ferr, ncalls, calls);
	if (!ret && r.n > max - min(okcov_deep_n, max))
		ret = -ENOSPC;
	if (!ret)
		ret = okcov_deep_reserve(r.n);
	if (ret)
		goto out;
	if (r.n && okcov_deep_copying)
		ret = okcov_deep_copy_batch(&r, installed);
	else if (r.n)
		ret = okcov_deep_probe_batch(d, &r, installed);
	if (!ret)
		ret = okcov_deep_report(d, &r, ferr, refused);
	if (!ret && okcov_deep_copying)
		ret = okcov_copy_commit();
	if (ret) {
		/* All or none: what this call added goes. */
		okcov_copy_abort();
		okcov_deep_remove(from);
		*installed = 0;
	} else {
		*any = okcov_deep_any(&r);
	}
out:
	okcov_deep_req_free(&r);
	return ret;
}

/*
 * KIODEEP: EPERM, EFAULT, EINVAL, EOPNOTSUPP, ENOSPC, ENOMEM, EINTR, or
 * an address's errno.
 */
long okcov_deep_ioctl(struct okcov *kd, struct kio_deep __user *uarg)
{
	unsigned int installed = 0, refused = 0;
	struct kio_deep d;
	int *ferr = NULL;
	bool any;
	long ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (copy_from_user(&d, uarg, sizeof(d)))
		return -EFAULT;
	if (!d.count || (d.flags & ~(KIO_DEEP_PARTIAL | KIO_DEEP_FUNCTIONS)))
		return -EINVAL;
	/* okcov decodes kernel text on x86_64 only (plan.c). */
	if ((d.flags & KIO_DEEP_FUNCTIONS) && !IS_ENABLED(CONFIG_X86_64))
		return -EOPNOTSUPP;

	mutex_lock(&okcov_deep_mutex);
	/* Before the allocation; okcov_deep_install() counts what is in place. */
	ret = -ENOSPC;
	if (!(d.flags & KIO_DEEP_FUNCTIONS) &&
	    d.count > READ_ONCE(deep_max_probes))
		goto out;
	ret = -ENOMEM;
	ferr = kvmalloc_array(d.count, sizeof(*ferr), GFP_KERNEL);
	if (!ferr)
		goto out;
	ret = okcov_deep_install(&d, NULL, ferr, &installed, &refused, &any,
				 0, NULL);
	/* It asked for probes that are there now: they stay for it. */
	if (!ret && !kd->deep && any) {
		kd->deep = true;
		okcov_deep_users++;
	}
out:
	mutex_unlock(&okcov_deep_mutex);
	kvfree(ferr);
	d.installed = installed;
	d.refused = refused;
	if (copy_to_user(&uarg->installed, &d.installed,
			 sizeof(d.installed) + sizeof(d.refused)) && !ret)
		ret = -EFAULT;
	return ret;
}

/* A deep user went: the last takes every probe and copy along. [D] */
static void okcov_deep_put_user(void)
{
	if (!--okcov_deep_users) {
		okcov_copy_unpublish();
		okcov_deep_remove(0);
	}
}

/* @kd's last reference went: the last installer takes every probe along. */
void okcov_deep_release(struct okcov *kd)
{
	okcov_reach_release(kd);
	if (!READ_ONCE(kd->deep))
		return;
	mutex_lock(&okcov_deep_mutex);
	kd->deep = false;
	okcov_deep_put_user();
	mutex_unlock(&okcov_deep_mutex);
}

/*
 * Deep on reach (reach.c): the functions at @fns (@n of them) as
 * KIO_DEEP_FUNCTIONS | KIO_DEEP_PARTIAL would, each one's errno in
 * @ferr; the first @ncalls ones' direct calls into @calls. What is in
 * place stays for deep on reach, a deep user as a descriptor that asked
 * is, until okcov_deep_reach_drop(). 0, or the whole call's errno
 * (ENOSPC, ENOMEM).
 */
int okcov_deep_reach_install(const unsigned long *fns, unsigned int n,
			     int *ferr, unsigned int ncalls,
			     struct okcov_calls *calls)
{
	struct kio_deep d = {
		.count = n,
		.flags = KIO_DEEP_FUNCTIONS | KIO_DEEP_PARTIAL,
	};
	unsigned int installed = 0, refused = 0;
	bool any;
	int ret;

	mutex_lock(&okcov_deep_mutex);
	ret = okcov_deep_install(&d, fns, ferr, &installed, &refused, &any,
				 ncalls, calls);
	if (!ret && any && !okcov_deep_reach_held) {
		okcov_deep_reach_held = true;
		okcov_deep_users++;
	}
	mutex_unlock(&okcov_deep_mutex);
	return ret;
}

/*
 * Deep on reach: the direct calls of the functions at @fns (@n), planned
 * again (installed or refused before), into @calls.
 */
void okcov_deep_reach_calls(const unsigned long *fns, unsigned int n,
			    struct okcov_calls *calls)
{
	struct okcov_plan *p = kzalloc(sizeof(*p), GFP_KERNEL);
	unsigned int i;

	if (!p)
		return;
	mutex_lock(&okcov_deep_mutex);
	for (i = 0; i < n && calls->n < calls->max; i++) {
		if (!okcov_plan_function(fns[i], p))
			okcov_deep_calls(p, calls);
		okcov_plan_free(p);
		cond_resched();
	}
	mutex_unlock(&okcov_deep_mutex);
	kfree(p);
}

/* Deep on reach stopped: its installs go with the last deep user. */
void okcov_deep_reach_drop(void)
{
	mutex_lock(&okcov_deep_mutex);
	if (okcov_deep_reach_held) {
		okcov_deep_reach_held = false;
		okcov_deep_put_user();
	}
	mutex_unlock(&okcov_deep_mutex);
}

/* @mod is going: its probes go with it (kprobes disarmed them already). */
void okcov_deep_module(struct module *mod)
{
	unsigned int i, k;
	struct kprobe *kp;

	mutex_lock(&okcov_deep_mutex);
	/* Move the module's probes to the end, then remove that tail. */
	for (i = 0, k = okcov_deep_n; i < k;) {
		kp = okcov_deep_kps[i];
		if (within_module((unsigned long)kp->addr, mod)) {
			okcov_deep_kps[i] = okcov_deep_kps[--k];
			okcov_deep_kps[k] = kp;
		} else {
			i++;
		}
	}
	okcov_deep_remove(k);
	mutex_unlock(&okcov_deep_mutex);
}

/* Unload: every descriptor is gone, and took its probes; make sure. */
void okcov_deep_cleanup(void)
{
	mutex_lock(&okcov_deep_mutex);
	WARN_ON_ONCE(okcov_deep_n);
	okcov_deep_remove(0);
	okcov_plan_free(&okcov_deep_plan);
	mutex_unlock(&okcov_deep_mutex);
	kvfree(okcov_deep_kps);
	xa_destroy(&okcov_deep_addrs);
}
