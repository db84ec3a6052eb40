// SPDX-License-Identifier: GPL-2.0
/*
 * Coverage source 2: the -fsanitize-coverage=trace-pc,trace-cmp hooks, for
 * modules built against okcov's Module.symvers on kernels without
 * CONFIG_KCOV (Kbuild leaves this file out where the kernel owns them).
 * They run in any context from instrumented code: notrace, no locks, no
 * allocation, nothing traceable.
 *
 * Also the one count of who can call them (okcov_sancov_sources(), one
 * half of okcov_cmp_sources()), for Linux's ABI, which refuses
 * comparisons nothing can produce.
 */

#include <linux/export.h>
#include <linux/module.h>
#include <linux/notifier.h>

#include "okcov.h"

/*
 * Modules that resolved okcov's exports, from their MODULE_STATE_COMING
 * to their GOING: the instrumented modules, the only callers of the
 * comparison hooks (okcov exports nothing but these hooks). Such a module
 * loads after okcov is live (its symbols resolve only then) and unloads
 * before it (it holds a reference), so every one passes the notifier
 * both ways, and the loader sends GOING to whoever saw COMING. [a]
 */
static atomic_t okcov_sancov_users = ATOMIC_INIT(0);

/*
 * Does @mod use okcov's exports? The loader records each module whose
 * symbols it resolved for @mod (ref_module(), before COMING) in
 * mod->target_list and frees the record after GOING: stable in both
 * notifications, so no module_mutex (not exported) is needed. It names
 * the module, not the symbols: a module built with trace-pc alone counts
 * too. Without module unloading there is no such record: any module may
 * be instrumented.
 */
static bool okcov_sancov_user(struct module *mod)
{
#ifdef CONFIG_MODULE_UNLOAD
	struct module_use *use;

	list_for_each_entry(use, &mod->target_list, target_list)
		if (use->target == THIS_MODULE)
			return true;
	return false;
#else
	return true;
#endif
}

static int okcov_sancov_module(struct notifier_block *nb, unsigned long state,
			       void *data)
{
	if (state != MODULE_STATE_COMING && state != MODULE_STATE_GOING)
		return NOTIFY_DONE;
	if (okcov_sancov_user(data))
		atomic_add(state == MODULE_STATE_COMING ? 1 : -1,
			   &okcov_sancov_users);
	return NOTIFY_DONE;
}

static struct notifier_block okcov_sancov_nb = {
	.notifier_call	= okcov_sancov_module,
};

/*
 * Can comparisons arrive from an instrumented module: is one loaded?
 * Only a snapshot: a module may load or unload right after
 * (okcov-linux(4)). Copies are the other source (okcov_cmp_sources()).
 */
bool okcov_sancov_sources(void)
{
	return atomic_read(&okcov_sancov_users) > 0;
}

int okcov_sancov_init(void)
{
	return register_module_notifier(&okcov_sancov_nb);
}

void okcov_sancov_cleanup(void)
{
	unregister_module_notifier(&okcov_sancov_nb);
}

/*
 * okcov.h's reject order and lookup, okcov_get(), as OKCOV_REC_HOOK: the
 * hooks may run where nothing may reschedule.
 */
void notrace __sanitizer_cov_trace_pc(void)
{
	struct okcov_attach *a = okcov_get(OKCOV_MODE_TRACE_PC, OKCOV_REC_HOOK,
					   NULL);

	if (likely(!a))
		return;
	okcov_record_pc(a, _RET_IP_);
	okcov_put(OKCOV_REC_HOOK);
}
EXPORT_SYMBOL(__sanitizer_cov_trace_pc);

static __always_inline void okcov_cmp_record(const struct okcov_attach *a,
					     u64 type, u64 arg1, u64 arg2,
					     u64 ip)
{
	unsigned int got;
	u64 *rec = okcov_claim(a, 4, 1, &got);

	if (rec) {
		rec[0] = type;
		rec[1] = arg1;
		rec[2] = arg2;
		rec[3] = ip + a->pc_delta;
	}
}

static __always_inline void okcov_cmp(u64 type, u64 arg1, u64 arg2, u64 ip)
{
	struct okcov_attach *a = okcov_get(OKCOV_MODE_TRACE_CMP, OKCOV_REC_HOOK,
					   NULL);

	if (likely(!a))
		return;
	okcov_cmp_record(a, type, arg1, arg2, ip);
	okcov_put(OKCOV_REC_HOOK);
}

#define OKCOV_CMP_HOOK(name, type, bits)				\
void notrace __sanitizer_cov_trace_##name(type arg1, type arg2)	\
{									\
	okcov_cmp(bits, arg1, arg2, _RET_IP_);				\
}									\
EXPORT_SYMBOL(__sanitizer_cov_trace_##name)

OKCOV_CMP_HOOK(cmp1, u8, KCOV_CMP_SIZE(0));
OKCOV_CMP_HOOK(cmp2, u16, KCOV_CMP_SIZE(1));
OKCOV_CMP_HOOK(cmp4, u32, KCOV_CMP_SIZE(2));
OKCOV_CMP_HOOK(cmp8, unsigned long, KCOV_CMP_SIZE(3));
OKCOV_CMP_HOOK(const_cmp1, u8, KCOV_CMP_SIZE(0) | KCOV_CMP_CONST);
OKCOV_CMP_HOOK(const_cmp2, u16, KCOV_CMP_SIZE(1) | KCOV_CMP_CONST);
OKCOV_CMP_HOOK(const_cmp4, u32, KCOV_CMP_SIZE(2) | KCOV_CMP_CONST);
OKCOV_CMP_HOOK(const_cmp8, unsigned long, KCOV_CMP_SIZE(3) | KCOV_CMP_CONST);

/*
 * cases[0]: number of cases, cases[1]: operand width in bits, then cases.
 * One lookup for the whole switch: one record per case.
 */
void notrace __sanitizer_cov_trace_switch(unsigned long val, void *arg)
{
	u64 *cases = arg;
	unsigned long ip = _RET_IP_;
	u64 i, type = KCOV_CMP_CONST;
	struct okcov_attach *a = okcov_get(OKCOV_MODE_TRACE_CMP, OKCOV_REC_HOOK,
					   NULL);

	if (likely(!a))
		return;
	switch (cases[1]) {
	case 8:
		type |= KCOV_CMP_SIZE(0);
		break;
	case 16:
		type |= KCOV_CMP_SIZE(1);
		break;
	case 32:
		type |= KCOV_CMP_SIZE(2);
		break;
	case 64:
		type |= KCOV_CMP_SIZE(3);
		break;
	default:
		goto out;
	}
	for (i = 0; i < cases[0]; i++)
		okcov_cmp_record(a, type, cases[i + 2], val, ip);
out:
	okcov_put(OKCOV_REC_HOOK);
}
EXPORT_SYMBOL(__sanitizer_cov_trace_switch);
