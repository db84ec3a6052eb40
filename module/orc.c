// SPDX-License-Identifier: GPL-2.0
/*
 * Unwinding through copies (x86_64's ORC unwinder). The kernel finds the
 * ORC entry for an address in a copy the way it finds any module's: by
 * __module_address(), which names okcov (the pool is okcov's text), then
 * a binary search of mod->arch's table. So okcov's table is replaced, on
 * the first copy, by one of its own, as copy.c does with the exception
 * table: okcov's entries below the pool, then each copy's, appended as
 * copies are written (the pool grows upward: the table stays sorted, and
 * a reader sees the count only after the entries). okcov's entries above
 * the pool (its init text, freed by then, when the loader put it there)
 * are left out: those below are a prefix of the loader's table, so a
 * reader that mixes the two tables' fields finds the same entries.
 *
 * A copied instruction gets the entry the original's instruction has (a
 * copy keeps every stack operation in place), found in vmlinux's table
 * (its address from kallsyms) or its module's. A record sequence pushes
 * the leader for eight bytes: over its call and lea, a stack-pointer-
 * based frame gets 8 more, and one found through the stack (SP_INDIRECT)
 * an undefined entry, which stops the unwinder there. So does the int3
 * after each part. A stack trace through a copy goes on into its callers;
 * the copy's frame itself names okcov_pool, and /sys/kernel/debug/okcov/
 * frame maps it back to the original (copy.c).
 *
 * Locking: copy.c's okcov_copy_mutex ([C]).
 */

#include <linux/module.h>
#include <linux/string.h>
#include <asm/orc_types.h>

#include "okcov.h"

#define OKCOV_ORC_MAX	(128 << 10)	/* entries, okcov's own included */

/* Module memory: each ip entry reaches kernel text in 32 bits. */
static int okcov_orc_ip[OKCOV_ORC_MAX];
static struct orc_entry okcov_orc[OKCOV_ORC_MAX];
static unsigned int okcov_orc_n;	/* [C] published (mod->arch's count) */
static unsigned int okcov_orc_staged;	/* [C] written, past the count */
static int okcov_orc_state;		/* [C] 1 ready, 0 not tried, or errno */

/* The loader's table, given back at unload. */
static int *okcov_orc_ip_loader;
static struct orc_entry *okcov_orc_loader;
static unsigned int okcov_orc_own;	/* okcov's entries below the pool */
static unsigned int okcov_orc_n_loader;

/* vmlinux's table; a module's is found through __module_address(). */
static struct module *(*okcov_orc_module)(unsigned long addr);
static int *okcov_orc_kernel_ip;
static struct orc_entry *okcov_orc_kernel;
static unsigned int okcov_orc_kernel_n;

static unsigned long okcov_orc_addr(const int *p)
{
	return (unsigned long)p + *p;
}

/* @ip's entry in a table sorted by address (the unwinder's search). */
static const struct orc_entry *okcov_orc_search(const int *ips,
						const struct orc_entry *u,
						unsigned int n, unsigned long ip)
{
	unsigned int lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (okcov_orc_addr(&ips[mid]) <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &u[lo - 1] : NULL;
}

/* vmlinux's table, and okcov's own as mod->arch's. 0 or an errno. [C] */
static int okcov_orc_setup(void)
{
	struct module *mod = THIS_MODULE;
	unsigned long ip, start, stop, u;
	unsigned int i, n = 0;

	start = okcov_symbol("__start_orc_unwind_ip");
	stop = okcov_symbol("__stop_orc_unwind_ip");
	u = okcov_symbol("__start_orc_unwind");
	okcov_orc_module = (void *)okcov_symbol("__module_address");
	if (!start || stop <= start || !u || !okcov_orc_module) {
		pr_warn("copy: vmlinux's ORC table not found: no copies\n");
		return -EOPNOTSUPP;
	}
	okcov_orc_kernel_ip = (int *)start;
	okcov_orc_kernel = (struct orc_entry *)u;
	okcov_orc_kernel_n = (stop - start) / sizeof(int);
	if (!mod->arch.orc_unwind_ip || !mod->arch.orc_unwind)
		return -EOPNOTSUPP;
	for (i = 0; i < mod->arch.num_orcs; i++) {
		ip = okcov_orc_addr(&mod->arch.orc_unwind_ip[i]);
		/* Sorted: the rest lie above the pool too. */
		if (ip >= (unsigned long)okcov_pool)
			break;
		if (n == OKCOV_ORC_MAX / 2)
			return -EOPNOTSUPP;
		okcov_orc_ip[n] = ip - (unsigned long)&okcov_orc_ip[n];
		okcov_orc[n++] = mod->arch.orc_unwind[i];
	}
	okcov_orc_n = okcov_orc_staged = okcov_orc_own = n;
	okcov_orc_n_loader = mod->arch.num_orcs;
	okcov_orc_ip_loader = mod->arch.orc_unwind_ip;
	okcov_orc_loader = mod->arch.orc_unwind;
	/* The count first: both tables agree on their first n entries. */
	WRITE_ONCE(mod->arch.num_orcs, n);
	smp_wmb();	/* the count, then the tables */
	WRITE_ONCE(mod->arch.orc_unwind_ip, okcov_orc_ip);
	WRITE_ONCE(mod->arch.orc_unwind, okcov_orc);
	return 0;
}

/*
 * Before a copy's entries: okcov's table in place (once), and none
 * staged. 0, or EOPNOTSUPP (no table to take entries from). [C]
 */
int okcov_orc_begin(void)
{
	if (!okcov_orc_state)
		okcov_orc_state = okcov_orc_setup() ?: 1;
	if (okcov_orc_state < 0)
		return okcov_orc_state;
	okcov_orc_staged = okcov_orc_n;
	return 0;
}

/* The entry in effect at @orig, in vmlinux's table or its module's. */
static bool okcov_orc_of(unsigned long orig, struct orc_entry *out)
{
	unsigned long first = okcov_orc_addr(okcov_orc_kernel_ip);
	unsigned long last = okcov_orc_addr(&okcov_orc_kernel_ip[okcov_orc_kernel_n - 1]);
	const struct orc_entry *e = NULL;
	struct module *mod;

	preempt_disable();
	if (orig - first <= last - first) {
		e = okcov_orc_search(okcov_orc_kernel_ip, okcov_orc_kernel,
				     okcov_orc_kernel_n, orig);
	} else {
		mod = okcov_orc_module(orig);
		if (mod && mod != THIS_MODULE && mod->arch.orc_unwind_ip &&
		    mod->arch.orc_unwind)
			e = okcov_orc_search(mod->arch.orc_unwind_ip,
					     mod->arch.orc_unwind,
					     mod->arch.num_orcs, orig);
	}
	if (e)
		*out = *e;
	preempt_enable();
	return e;
}

/*
 * Stage the entry for copy address @ip: the one @orig has, with @pushed
 * bytes more on the stack; @orig 0: undefined (the unwinder stops).
 * Entries go in address order; one equal to the last is left out.
 * 0, or ENOSPC (the table is full), EPROTO (out of order). [C]
 */
int okcov_orc_add(unsigned long ip, unsigned long orig, unsigned int pushed)
{
	struct orc_entry e = { };
	unsigned int n = okcov_orc_staged;

	if (orig && okcov_orc_of(orig, &e) && pushed) {
		if (e.sp_reg == ORC_REG_SP)
			e.sp_offset += pushed;
		else if (e.sp_reg == ORC_REG_SP_INDIRECT)
			memset(&e, 0, sizeof(e));
	}
	if (n > okcov_orc_own) {
		if (ip <= okcov_orc_addr(&okcov_orc_ip[n - 1]))
			return -EPROTO;
		if (!memcmp(&e, &okcov_orc[n - 1], sizeof(e)))
			return 0;
	}
	if (n == OKCOV_ORC_MAX)
		return -ENOSPC;
	okcov_orc_ip[n] = ip - (unsigned long)&okcov_orc_ip[n];
	okcov_orc[n] = e;
	okcov_orc_staged = n + 1;
	return 0;
}

/* The staged entries, for the unwinder: the entries, then the count. [C] */
void okcov_orc_commit(void)
{
	smp_wmb();	/* the unwinder reads no entry past the count */
	WRITE_ONCE(THIS_MODULE->arch.num_orcs, okcov_orc_staged);
	okcov_orc_n = okcov_orc_staged;
}

/* Back to the loader's table (no copy can run now), before unload. */
void okcov_orc_exit(void)
{
	struct module *mod = THIS_MODULE;

	if (okcov_orc_state != 1)
		return;
	/* As at setup, through the count both tables agree on. */
	WRITE_ONCE(mod->arch.num_orcs, okcov_orc_own);
	smp_wmb();	/* the shared count, then the tables */
	WRITE_ONCE(mod->arch.orc_unwind_ip, okcov_orc_ip_loader);
	WRITE_ONCE(mod->arch.orc_unwind, okcov_orc_loader);
	smp_wmb();	/* the loader's tables, then their count */
	WRITE_ONCE(mod->arch.num_orcs, okcov_orc_n_loader);
	okcov_orc_state = 0;
}
