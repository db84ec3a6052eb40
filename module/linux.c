// SPDX-License-Identifier: GPL-2.0
/*
 * Linux's own kcov ABI (include/uapi/linux/kcov.h, kernel/kcov.c) at
 * /sys/kernel/debug/kcov, where the kernel has no kcov: unmodified Linux
 * kcov users (syzkaller's Linux executor first) on stock kernels.
 *
 * Only the boundary lives here: a descriptor opened through this file is
 * an okcov descriptor with dev.c's states, recorders, remote coverage and
 * hot path. What differs: sizes and modes by value, Linux's mode numbers
 * (KCOV_TRACE_PC 0, KCOV_TRACE_CMP 1), Linux's errnos in Linux's order of
 * checks (KCOV_TRACE_CMP is ENOTSUPP, as on a Linux without comparisons,
 * while no instrumented module can produce any), Linux's mmap rule
 * (offset 0, exactly the whole buffer; shared or private, read-only or
 * not, as often as wanted), and PCs canonicalised as Linux does (less
 * the KASLR offset; function entries are recorded as the address after
 * the fentry call, so that "the instruction before", which syzkaller maps
 * a PC to, lies inside the function that ran).
 *
 * KCOV_REMOTE_ENABLE with a common handle is KIOREMOTEATTACH plus
 * KIOENABLE: the work and timers the calling process defers. USB handles
 * are checked as Linux checks them and ignored: a stock kernel has no
 * annotated USB sections to feed them. okcov(4) lists the differences.
 */

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/ftrace.h>
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sizes.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "okcov.h"

/* Linux's uapi, by its own names: this file speaks its ABI. */
#include <uapi/linux/kcov.h>

static bool linux_abi = true;
module_param(linux_abi, bool, 0444);
MODULE_PARM_DESC(linux_abi,
		 "Serve Linux's kcov ABI at /sys/kernel/debug/kcov where the kernel has none");

/* What Linux's kcov subtracts from every PC: kaslr_offset(). [I] */
static unsigned long okcov_kaslr_offset;

/*
 * Linux's rules, where dev.c's state machine consults them (okcov-linux(4)
 * has the errnos and their order): PCs less the KASLR offset, and function
 * entries as the address after the fentry call (set once the offset is
 * known); KCOV_ENABLE checks the state first and says EINVAL;
 * KCOV_TRACE_CMP is ENOTSUPP, as Linux's kcov_get_mode() without
 * CONFIG_KCOV_ENABLE_COMPARISONS, while no instrumented module can produce
 * comparisons; every misuse of KCOV_DISABLE is EINVAL; a remote enable
 * keeps out of the thread's slot (as 7.x's separate one), and its common
 * handle passes to children (kcov_task_init()).
 */
static struct okcov_personality okcov_linux __ro_after_init = {
	.enable_state_err	= -EINVAL,
	.cmp_unsourced_err	= -ENOTSUPP,
	.disable_err		= -EINVAL,
	.flags			= OKCOV_PERS_REMOTE_SLOT | OKCOV_PERS_REMOTE_INHERIT,
};

static struct dentry *okcov_linux_file;

#ifdef OKCOV_KASLR_OFFSET_EXPORTED
/* arm64 before 6.12: kaslr_offset() reads kimage_vaddr, which is exported. */
static int okcov_find_kaslr_offset(void)
{
	okcov_kaslr_offset = kaslr_offset();
	return 0;
}
#elif defined(OKCOV_KERNEL_START)
/*
 * kaslr_offset() reads _text, which a module cannot link against. _text is
 * aligned to OKCOV_KASLR_ALIGN at or above OKCOV_KERNEL_START (compat/arch.h),
 * and OKCOV_STEXT_GAP below where the kernel's symbols start: walk down
 * from a core kernel function in such steps to the address that starts a
 * symbol while the byte before it belongs to none. Names are no help:
 * the first alias kallsyms gives there is _text on 6.1, _stext or a
 * __pfx_ padding symbol on 6.12, __pi__text on 7.x.
 */
static int okcov_find_kaslr_offset(void)
{
	unsigned long addr = ALIGN_DOWN((unsigned long)sprint_symbol,
					OKCOV_KASLR_ALIGN);
	char sym[KSYM_SYMBOL_LEN];

	for (; addr >= OKCOV_KERNEL_START; addr -= OKCOV_KASLR_ALIGN) {
		sprint_symbol(sym, addr);
		if (!strstr(sym, "+0x0/"))
			continue;
		/* No symbol: sprint_symbol() prints the bare address. */
		sprint_symbol(sym, addr - 1);
		if (str_has_prefix(sym, "0x")) {
			okcov_kaslr_offset = addr - OKCOV_STEXT_GAP -
					     OKCOV_KERNEL_START;
			return 0;
		}
	}
	return -ENOENT;
}
#else
static int okcov_find_kaslr_offset(void)
{
	return -EOPNOTSUPP;
}
#endif

static int okcov_linux_open(struct inode *inode, struct file *file)
{
	int ret = okcov_file_open(file, &okcov_linux);

	return ret ? ret : nonseekable_open(inode, file);
}

/* Linux's kcov_get_mode(), into okcov's modes; 0 is refused later. */
static int okcov_linux_mode(unsigned long mode)
{
	if (mode == KCOV_TRACE_PC)
		return OKCOV_MODE_TRACE_PC;
	if (mode == KCOV_TRACE_CMP)
		return OKCOV_MODE_TRACE_CMP;
	return OKCOV_MODE_NONE;
}

/* Linux's kcov_check_handle(). */
static bool okcov_linux_handle_ok(u64 handle, bool common_valid,
				  bool uncommon_valid, bool zero_valid)
{
	if (handle & ~(KCOV_SUBSYSTEM_MASK | KCOV_INSTANCE_MASK))
		return false;
	switch (handle & KCOV_SUBSYSTEM_MASK) {
	case KCOV_SUBSYSTEM_COMMON:
		return (handle & KCOV_INSTANCE_MASK) ? common_valid : zero_valid;
	case KCOV_SUBSYSTEM_USB:
		return uncommon_valid;
	default:
		return false;
	}
}

static long okcov_linux_remote_enable(struct okcov *kd, unsigned long uarg)
{
	struct kcov_remote_arg *ra;
	unsigned int n, i;
	bool args_ok;
	long ret;

	if (get_user(n, (unsigned int __user *)(uarg +
			offsetof(struct kcov_remote_arg, num_handles))))
		return -EFAULT;
	if (n > KCOV_REMOTE_MAX_HANDLES)
		return -EINVAL;
	ra = memdup_user((void __user *)uarg, struct_size(ra, handles, n));
	if (IS_ERR(ra))
		return PTR_ERR(ra);
	ret = -EINVAL;
	if (ra->num_handles != n)
		goto out;
	/* Checked after the state and the mode, as Linux does: dev.c. */
	args_ok = (unsigned long)ra->area_size <=
		  LONG_MAX / sizeof(unsigned long);
	/* USB handles: valid, and nothing on a stock kernel feeds them. */
	for (i = 0; i < n; i++)
		if (!okcov_linux_handle_ok(ra->handles[i], false, true, false))
			args_ok = false;
	if (ra->common_handle &&
	    !okcov_linux_handle_ok(ra->common_handle, true, false, false))
		args_ok = false;
	ret = okcov_remote_enable_linux(kd, okcov_linux_mode(ra->trace_mode),
					ra->common_handle, args_ok);
out:
	kfree(ra);
	return ret;
}

static long okcov_linux_ioctl(struct file *file, unsigned int cmd,
			      unsigned long arg)
{
	struct okcov *kd = file->private_data;
	long ret;

	switch (cmd) {
	case KCOV_INIT_TRACE:
		/* Linux checks the size first: then ENOMEM, then EBUSY. */
		if (arg < 2 || arg > INT_MAX / sizeof(unsigned long))
			return -EINVAL;
		return okcov_buf_init(kd, arg);
	case KCOV_ENABLE:
		/* A remote descriptor is enabled (KCOV_DISABLE forgets it). */
		if (READ_ONCE(kd->remote))
			return -EINVAL;
		return okcov_enable(kd, okcov_linux_mode(arg));
	case KCOV_DISABLE:
		if (arg)
			return -EINVAL;
		/* Linux: only the thread that enabled it, remote or not. */
		if (READ_ONCE(kd->remote) && READ_ONCE(kd->enabler) != current)
			return -EINVAL;
		ret = okcov_disable(kd);
		/* Linux's kcov_reset(): INIT again, for either kind of enable. */
		if (!ret)
			okcov_remote_forget(kd);
		return ret;
	case KCOV_REMOTE_ENABLE:
		return okcov_linux_remote_enable(kd, arg);
	default:
		return -ENOTTY;
	}
}

static int okcov_linux_mmap(struct file *file, struct vm_area_struct *vma)
{
	return okcov_mmap_area(file->private_data, vma, true);
}

static const struct file_operations okcov_linux_fops = {
	.owner		= THIS_MODULE,
	.open		= okcov_linux_open,
	.release	= okcov_file_release,
	.unlocked_ioctl	= okcov_linux_ioctl,
	.compat_ioctl	= okcov_linux_ioctl,
	.mmap		= okcov_linux_mmap,
};

/* Never fails the load: /dev/okcov works without it. */
int okcov_linux_init(void)
{
	struct dentry *d;
	int ret;

	if (!linux_abi)
		return 0;
	ret = okcov_find_kaslr_offset();
	if (ret) {
		pr_warn("no KASLR offset found (%d): Linux's kcov ABI is off\n",
			ret);
		return 0;
	}
	okcov_linux.pc_delta = -(long)okcov_kaslr_offset;
	okcov_linux.entry_delta = MCOUNT_INSN_SIZE - (long)okcov_kaslr_offset;
	if (!debugfs_initialized()) {
		pr_info("debugfs is not available: no /sys/kernel/debug/kcov\n");
		return 0;
	}
	d = debugfs_lookup("kcov", NULL);
	if (d) {
		dput(d);
		pr_info("the kernel has its own kcov: /sys/kernel/debug/kcov left alone\n");
		return 0;
	}
	/*
	 * _unsafe: no proxy, as Linux's own; an open file holds a module
	 * reference (.owner), so the file outlives no user at unload.
	 */
	d = debugfs_create_file_unsafe("kcov", 0600, NULL, NULL,
				       &okcov_linux_fops);
	if (IS_ERR_OR_NULL(d)) {
		pr_info("cannot create /sys/kernel/debug/kcov: %ld\n",
			PTR_ERR(d));
		return 0;
	}
	okcov_linux_file = d;
	return 0;
}

void okcov_linux_cleanup(void)
{
	debugfs_remove(okcov_linux_file);
	okcov_linux_file = NULL;
}
