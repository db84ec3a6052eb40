/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every kernel-version difference okcov cares about, and nothing else.
 * Force-included before each file (see Kbuild); the core files are written
 * against today's upstream names. Where a version number would lie (stable
 * backports), module/compat/Kbuild.include probes the header tree and
 * passes OKCOV_HAVE_* / OKCOV_* defines instead.
 */
#ifndef _OKCOV_COMPAT_H
#define _OKCOV_COMPAT_H

#include <linux/mm.h>

/* 6.3: vm_flags became read-only; vm_flags_{set,clear}() write them. */
#ifndef OKCOV_HAVE_VM_FLAGS_SET
static inline void vm_flags_clear(struct vm_area_struct *vma,
				  unsigned long flags)
{
	vma->vm_flags &= ~flags;
}
#endif

/* 6.16: sched_process_exit gained the group_dead argument. */
#ifdef OKCOV_EXIT_HAS_GROUP_DEAD
#define OKCOV_EXIT_PROBE_PARAMS void *data, struct task_struct *p, bool group_dead
#else
#define OKCOV_EXIT_PROBE_PARAMS void *data, struct task_struct *p
#endif

#endif /* _OKCOV_COMPAT_H */
