// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/okcov: the descriptor state machine of OpenBSD's kcov(4). This file
 * alone changes a descriptor's state, remote ones included (remote.c's
 * start and stop are called from here). See okcov.h for the transitions
 * and okcov(4), ERRORS, for the errnos and the order of the checks; where
 * Linux's ABI differs, its personality (linux.c) says so.
 */

#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "okcov.h"

/* Guards every descriptor's state and the per-task hash (task.c). */
DEFINE_RAW_SPINLOCK(okcov_lock);

static struct tracepoint *okcov_exit_tp;

static void okcov_free_rcu(struct rcu_head *rcu)
{
	struct okcov *kd = container_of(rcu, struct okcov, rcu);

	okcov_remote_free(kd);
	vfree(kd->area);
	kfree(kd);
	atomic_long_dec(&okcov_stats.descriptors);
}

/* After a grace period: the hot path may still be looking at @kd. */
static void okcov_free(struct okcov *kd)
{
	call_rcu(&kd->rcu, okcov_free_rcu);
}

/* OpenBSD's rules, okcov(4): raw PCs, EBUSY for misuse, one slot a thread. */
static const struct okcov_personality okcov_openbsd = {
	.disable_err	= -EBUSY,
};

/* A new descriptor for @file, opened through the file of @pers's ABI. */
int okcov_file_open(struct file *file, const struct okcov_personality *pers)
{
	struct okcov *kd;

	kd = kzalloc(sizeof(*kd), GFP_KERNEL);
	if (!kd)
		return -ENOMEM;
	atomic_long_inc(&okcov_stats.descriptors);
	kd->state = OKCOV_NONE;
	kd->pers = pers;
	kd->reap_gp = get_completed_synchronize_rcu();
	file->private_data = kd;
	return 0;
}

static int okcov_open(struct inode *inode, struct file *file)
{
	int ret = okcov_file_open(file, &okcov_openbsd);

	return ret ? ret : nonseekable_open(inode, file);
}

/* Last file reference gone; every mapping holds one, so none is left. */
int okcov_file_release(struct inode *inode, struct file *file)
{
	struct okcov *kd = file->private_data;
	u64 *area = NULL;
	bool dying;

	okcov_deep_release(kd);
	raw_spin_lock(&okcov_lock);
	/* Remote descriptors are never DYING: stopped, drained, freed. */
	if (kd->remote) {
		dying = kd->state == OKCOV_TRACE;
		if (dying)
			okcov_remote_stop(kd);
		raw_spin_unlock(&okcov_lock);
		okcov_remote_release(kd);
		/* okcov_free() waits for every section's writer. */
		okcov_free(kd);
		if (dying) {
			synchronize_rcu();
			okcov_remote_unhook();
		}
		return 0;
	}
	dying = kd->state == OKCOV_TRACE;
	if (dying) {
		/*
		 * Recording stops now and the buffer and the hook claim go;
		 * the small descriptor and its entry (mode NONE) stay for
		 * the EBUSY rule, and the thread's exit frees them.
		 */
		WRITE_ONCE(kd->attach->mode, OKCOV_MODE_NONE);
		kd->state = OKCOV_DYING;
		area = kd->area;
		kd->area = NULL;
	}
	raw_spin_unlock(&okcov_lock);

	if (!dying) {
		okcov_free(kd);
		return 0;
	}
	okcov_hook_put();
	/* A callback may still be writing: it saw the mode before NONE. */
	synchronize_rcu();
	vfree(area);
	return 0;
}

/* NONE -> READY with a buffer of @n words: EBUSY, ENOMEM. */
long okcov_buf_init(struct okcov *kd, u64 n)
{
	u64 *area;

	/*
	 * More than the machine's RAM: refused before vmalloc tries. A
	 * failed allocation is the harness's ENOMEM, not a kernel problem:
	 * no warning in the log (vmalloc_user() takes no __GFP_NOWARN, so
	 * okcov_mmap_area() inserts the pages itself, as Linux's kcov does).
	 */
	if (n > (u64)totalram_pages() * (PAGE_SIZE / sizeof(u64)))
		return -ENOMEM;
	area = __vmalloc(n * sizeof(u64), GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN);
	if (!area)
		return -ENOMEM;

	/* Allocated outside the lock: a racing KIOSETBUFSIZE may have won. */
	raw_spin_lock(&okcov_lock);
	if (kd->state == OKCOV_NONE) {
		kd->area = area;
		kd->nentries = n;
		kd->state = OKCOV_READY;
		area = NULL;
	}
	raw_spin_unlock(&okcov_lock);

	if (area) {
		vfree(area);
		return -EBUSY;
	}
	return 0;
}

static long okcov_setbufsize(struct okcov *kd, u64 __user *arg)
{
	u64 n;

	if (get_user(n, arg))
		return -EFAULT;
	if (READ_ONCE(kd->state) != OKCOV_NONE)
		return -EBUSY;
	if (n == 0 || n > READ_ONCE(okcov_max_entries))
		return -EINVAL;
	return okcov_buf_init(kd, n);
}

/*
 * The attached thread goes (TRACE -> READY, DYING -> freed). Returns true
 * if the descriptor was TRACE: its hook reference is the caller's to drop,
 * once out of the lock.
 */
static bool okcov_detach(struct okcov *kd)
{
	lockdep_assert_held(&okcov_lock);
	okcov_task_detach(kd->attach);
	kd->attach = NULL;
	return kd->state == OKCOV_TRACE;
}

/*
 * Before 6.16 a thread drops its mm, and so wakes pthread_join(), before
 * sched_process_exit runs. A joiner re-enabling the descriptor must not
 * see EBUSY for that window: a thread in do_exit() never runs user code
 * again, so detach it now as its exit probe would. Returns true if it did.
 */
static bool okcov_reap_exiting(struct okcov *kd)
{
	lockdep_assert_held(&okcov_lock);
	if (kd->state != OKCOV_TRACE || kd->remote ||
	    !(READ_ONCE(kd->attach->task->flags) & PF_EXITING))
		return false;
	okcov_detach(kd);
	kd->state = OKCOV_READY;
	/*
	 * The reaped thread may be inside its callback, past the mode check
	 * of its (old) entry, on another CPU: nobody attaches before it has
	 * left, so none of its records lands after a new thread attached.
	 */
	kd->reap_gp = get_state_synchronize_rcu();
	return true;
}

/*
 * The mode's check: EINVAL for one okcov does not have; the personality's
 * errno, if it has one, for comparisons while no instrumented module is
 * loaded to produce them (sancov.c).
 */
static long okcov_mode_check(const struct okcov *kd, int mode)
{
	if (mode != OKCOV_MODE_TRACE_PC && mode != OKCOV_MODE_TRACE_CMP)
		return -EINVAL;
	if (mode == OKCOV_MODE_TRACE_CMP && kd->pers->cmp_unsourced_err &&
	    !okcov_cmp_sources())
		return kd->pers->cmp_unsourced_err;
	return 0;
}

/*
 * KIOENABLE's checks, in the order of the errno tables (okcov(4),
 * okcov-linux(4)); -EAGAIN (never returned to userspace) when they pass
 * but the last reap's grace period has not.
 */
static long okcov_enable_check(struct okcov *kd, int mode, bool remote)
{
	const struct okcov_personality *pers = kd->pers;
	long ret;

	lockdep_assert_held(&okcov_lock);
	if (pers->enable_state_err &&
	    (kd->state != OKCOV_READY || !!kd->remote != remote))
		return pers->enable_state_err;
	/* One descriptor per thread: a remote one may keep out of its slot. */
	if ((!remote || !(pers->flags & OKCOV_PERS_REMOTE_SLOT)) &&
	    okcov_task_find(current))
		return -EBUSY;
	/* kd->remote != remote: made remote since okcov_enable() looked */
	if (kd->state != OKCOV_READY || !!kd->remote != remote)
		return -EBUSY;
	ret = okcov_mode_check(kd, mode);
	if (ret)
		return ret;
	if (!poll_state_synchronize_rcu(kd->reap_gp))
		return -EAGAIN;
	return 0;
}

/*
 * KIOENABLE on a remote descriptor: TRACE, and no thread attached. The
 * checks come first, so a refused enable registers and installs nothing.
 */
static long okcov_enable_remote(struct okcov *kd, int mode)
{
	struct okcov_attach *sink;
	unsigned long gp;
	long ret;

	/* A thread reaped before KIOREMOTEATTACH may still be writing. */
	do {
		raw_spin_lock(&okcov_lock);
		ret = okcov_enable_check(kd, mode, true);
		gp = kd->reap_gp;
		raw_spin_unlock(&okcov_lock);
		if (ret == -EAGAIN)
			cond_synchronize_rcu(gp);
	} while (ret == -EAGAIN);
	if (ret)
		return ret;

	sink = kzalloc(sizeof(*sink), GFP_KERNEL);
	if (!sink)
		return -ENOMEM;
	ret = okcov_remote_hook();
	if (ret)
		goto out;
	okcov_reach_enable(kd);
	raw_spin_lock(&okcov_lock);
	/* Nothing reaps a remote descriptor: -EAGAIN cannot come back. */
	ret = okcov_enable_check(kd, mode, true);
	if (!ret) {
		okcov_remote_start(kd, sink, mode);
		kd->state = OKCOV_TRACE;
		kd->enabler = current;
		sink = NULL;
	}
	raw_spin_unlock(&okcov_lock);
	if (ret)
		okcov_remote_unhook();
out:
	kfree(sink);
	return ret;
}

long okcov_enable(struct okcov *kd, int mode)
{
	struct okcov_attach *a;
	unsigned long gp;
	bool reaped;
	long ret;

	raw_spin_lock(&okcov_lock);
	if (kd->remote) {
		/* Read under the lock: a remote descriptor attaches no thread. */
		raw_spin_unlock(&okcov_lock);
		return okcov_enable_remote(kd, mode);
	}
	raw_spin_unlock(&okcov_lock);

	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return -ENOMEM;
again:
	raw_spin_lock(&okcov_lock);
	reaped = okcov_reap_exiting(kd);
	ret = okcov_enable_check(kd, mode, false);
	gp = kd->reap_gp;
	raw_spin_unlock(&okcov_lock);
	if (reaped)
		okcov_hook_put();
	if (ret == -EAGAIN) {
		cond_synchronize_rcu(gp);
		goto again;
	}
	if (ret)
		goto out;
	/* One hook reference per TRACE descriptor. May sleep (install). */
	ret = okcov_hook_get();
	if (ret)
		goto out;
	/* With deep_reach: a reach user, before this thread records. */
	okcov_reach_enable(kd);

	raw_spin_lock(&okcov_lock);
	ret = okcov_enable_check(kd, mode, false);
	if (!ret) {
		a->task = current;
		a->area = kd->area;
		a->nentries = kd->nentries;
		a->pc_delta = kd->pers->pc_delta;
		a->entry_delta = kd->pers->entry_delta;
		a->flags = okcov_entry_flags();
		a->kd = kd;
		/* The hot path records once it finds the entry. */
		a->mode = mode;
		okcov_task_attach(a);
		kd->attach = a;
		kd->state = OKCOV_TRACE;
		a = NULL;
	}
	raw_spin_unlock(&okcov_lock);
	if (ret)
		okcov_hook_put();
	/* Reaped and enabled again by others while we installed: retry. */
	if (ret == -EAGAIN)
		goto again;
out:
	kfree(a);
	return ret;
}

/*
 * Linux's KCOV_REMOTE_ENABLE: KIOREMOTEATTACH and KIOENABLE in one, with
 * Linux's checks first so that a refused call leaves the descriptor as
 * it was. @args_ok: the rest of the argument (area size, handles) passed
 * Linux's checks, which come after the mode's.
 */
long okcov_remote_enable_linux(struct okcov *kd, int mode, u64 handle,
			       bool args_ok)
{
	long ret;

	/*
	 * Linux: EINVAL unless INIT; a thread's own enable is no obstacle
	 * (7.x's separate remote slot); then the mode (EINVAL, ENOTSUPP);
	 * then the rest of the argument.
	 */
	raw_spin_lock(&okcov_lock);
	if (kd->state != OKCOV_READY || kd->remote)
		ret = -EINVAL;
	else
		ret = okcov_mode_check(kd, mode);
	raw_spin_unlock(&okcov_lock);
	if (!ret && !args_ok)
		ret = -EINVAL;
	if (ret)
		return ret;
	ret = okcov_remote_attach_kd(kd, handle);
	if (ret)
		return ret;
	ret = okcov_enable_remote(kd, mode);
	/* Refused after all: a plain READY descriptor again, as on Linux. */
	if (ret)
		okcov_remote_forget(kd);
	return ret;
}

/* KIODISABLE on a remote descriptor, from any thread. */
static long okcov_disable_remote(struct okcov *kd)
{
	raw_spin_lock(&okcov_lock);
	if (kd->state != OKCOV_TRACE) {
		raw_spin_unlock(&okcov_lock);
		return kd->pers->disable_err;
	}
	okcov_remote_stop(kd);
	kd->state = OKCOV_READY;
	raw_spin_unlock(&okcov_lock);

	/* Every writer that saw the old mode has left. */
	synchronize_rcu();
	okcov_remote_unhook();
	return 0;
}

long okcov_disable(struct okcov *kd)
{
	long ret = 0;

	/*
	 * kd->remote changes only while READY, when both paths refuse with
	 * the same errno: a stale read picks the right one either way.
	 */
	if (READ_ONCE(kd->remote))
		return okcov_disable_remote(kd);
	raw_spin_lock(&okcov_lock);
	if (kd->state != OKCOV_TRACE || kd->attach->task != current) {
		ret = kd->pers->disable_err;
	} else {
		okcov_detach(kd);
		kd->state = OKCOV_READY;
	}
	raw_spin_unlock(&okcov_lock);
	if (!ret)
		okcov_hook_put();
	return ret;
}

static long okcov_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct okcov *kd = file->private_data;
	void __user *uarg = (void __user *)arg;
	int mode;

	switch (cmd) {
	case KIOSETBUFSIZE:
		return okcov_setbufsize(kd, uarg);
	case KIOENABLE:
		if (get_user(mode, (int __user *)uarg))
			return -EFAULT;
		break;
	case KIOENABLE_LEGACY:
		mode = OKCOV_MODE_TRACE_PC;
		break;
	case KIODISABLE:
		return okcov_disable(kd);
	case KIOREMOTEATTACH:
		return okcov_remote_attach(kd, uarg);
	case KIODEEP:
		return okcov_deep_ioctl(kd, uarg);
	default:
		return -ENOTTY;
	}
	return okcov_enable(kd, mode);
}

/*
 * Map the buffer: EINVAL without one, or for a range outside it, or (@exact:
 * Linux's rule) unless the mapping is the whole buffer at offset 0, to the
 * byte, so a buffer that is not a whole number of pages cannot be mapped.
 * Never executable: EPERM.
 */
int okcov_mmap_area(struct okcov *kd, struct vm_area_struct *vma, bool exact)
{
	unsigned long pages, len, off;
	u64 *area;
	int ret;

	raw_spin_lock(&okcov_lock);
	area = kd->area;
	pages = PAGE_ALIGN(kd->nentries * sizeof(u64)) >> PAGE_SHIFT;
	len = kd->nentries * sizeof(u64);
	raw_spin_unlock(&okcov_lock);

	if (!area)
		return -EINVAL;
	if (vma->vm_pgoff > pages || vma_pages(vma) > pages - vma->vm_pgoff)
		return -EINVAL;
	if (exact && (vma->vm_pgoff || vma->vm_end - vma->vm_start != len))
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	/* Nor may a later mprotect() make kernel-written words executable. */
	vm_flags_clear(vma, VM_MAYEXEC);
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	for (off = 0; off < vma->vm_end - vma->vm_start; off += PAGE_SIZE) {
		ret = vm_insert_page(vma, vma->vm_start + off,
				     vmalloc_to_page((void *)area +
						     (vma->vm_pgoff << PAGE_SHIFT) + off));
		if (ret)
			return ret;
	}
	return 0;
}

static int okcov_mmap(struct file *file, struct vm_area_struct *vma)
{
	/* MAP_PRIVATE would hide the kernel's writes: OpenBSD refuses it. */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	return okcov_mmap_area(file->private_data, vma, false);
}

static const struct file_operations okcov_fops = {
	.owner		= THIS_MODULE,
	.open		= okcov_open,
	.release	= okcov_file_release,
	.unlocked_ioctl	= okcov_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.mmap		= okcov_mmap,
};

static struct miscdevice okcov_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "okcov",
	.fops	= &okcov_fops,
	/* PCs are kernel addresses: root only, or KASLR is gone. */
	.mode	= 0600,
};

/*
 * Runs for every exiting thread, as that thread (p == current), with
 * preemption disabled (tracepoint) or not (7.x): take the RCU read lock
 * for the lockless look-up ourselves. okcov_lock is taken only for an
 * attached thread, and the look-up redone under it; remote.c's members
 * lock only for the last thread of a remote descriptor's process.
 */
static void okcov_exit_probe(OKCOV_EXIT_PROBE_PARAMS)
{
	struct okcov_attach *a;
	struct okcov *kd, *dead = NULL;
	bool put = false;

	/* Its process's last thread: no longer a remote descriptor's member. */
	okcov_remote_group_exit(p);
	/* An attached thread attached itself, so it sees its own increment. */
	if (okcov_nobody_attached())
		return;
	rcu_read_lock();
	a = okcov_task_find_rcu(p);
	rcu_read_unlock();
	if (!a)
		return;

	raw_spin_lock(&okcov_lock);
	a = okcov_task_find(p);
	if (a && (a->flags & OKCOV_SECTION)) {
		/* A kworker that dies inside a work item (an oops). */
		okcov_remote_section_exit(a);
	} else if (a) {
		kd = a->kd;
		put = okcov_detach(kd);
		if (kd->state == OKCOV_DYING)
			dead = kd;
		else
			kd->state = OKCOV_READY;
	}
	raw_spin_unlock(&okcov_lock);

	if (put)
		okcov_hook_put();
	if (dead)
		okcov_free(dead);
}

static void okcov_find_exit_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_process_exit"))
		*(struct tracepoint **)priv = tp;
}

static int okcov_exit_probe_register(void)
{
	for_each_kernel_tracepoint(okcov_find_exit_tp, &okcov_exit_tp);
	if (!okcov_exit_tp) {
		pr_err("tracepoint sched_process_exit not found\n");
		return -ENOENT;
	}
	return tracepoint_probe_register(okcov_exit_tp, okcov_exit_probe, NULL);
}

/*
 * Module unload: no file is open (the module reference says so), so every
 * entry left belongs to a DYING descriptor whose thread is still alive.
 */
static void okcov_dev_sweep(void)
{
	struct okcov_attach *a;
	struct hlist_node *tmp;
	struct okcov *kd;
	int bkt;

	raw_spin_lock(&okcov_lock);
	for (bkt = 0; bkt < ARRAY_SIZE(okcov_tasks); bkt++) {
		hlist_for_each_entry_safe(a, tmp, &okcov_tasks[bkt], node) {
			kd = a->kd;
			/* DYING: its hook reference went with its file */
			WARN_ON_ONCE(okcov_detach(kd));
			okcov_free(kd);
		}
	}
	raw_spin_unlock(&okcov_lock);
}

/* OpenBSD's name: harnesses ported from OpenBSD open /dev/kcov. */
static bool kcov_device;
module_param(kcov_device, bool, 0444);
MODULE_PARM_DESC(kcov_device, "Also create /dev/kcov, OpenBSD's name for the device");

static struct miscdevice okcov_kcov_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "kcov",
	.fops	= &okcov_fops,
	.mode	= 0600,
};

int okcov_dev_init(void)
{
	int ret;

	ret = okcov_exit_probe_register();
	if (ret) {
		pr_err("cannot attach to sched_process_exit: %d\n", ret);
		goto err_probe;
	}
	ret = misc_register(&okcov_misc);
	if (ret)
		goto err_misc;
	if (kcov_device) {
		ret = misc_register(&okcov_kcov_misc);
		if (ret) {
			pr_err("cannot create /dev/kcov: %d\n", ret);
			goto err_kcov;
		}
	}
	return 0;

err_kcov:
	misc_deregister(&okcov_misc);
err_misc:
	tracepoint_probe_unregister(okcov_exit_tp, okcov_exit_probe, NULL);
	tracepoint_synchronize_unregister();
err_probe:
	return ret;
}

/* Module unload. Not a thread exit: see okcov_exit_probe() for that. */
void okcov_dev_cleanup(void)
{
	if (kcov_device)
		misc_deregister(&okcov_kcov_misc);
	misc_deregister(&okcov_misc);
	tracepoint_probe_unregister(okcov_exit_tp, okcov_exit_probe, NULL);
	tracepoint_synchronize_unregister();
	okcov_dev_sweep();
}
