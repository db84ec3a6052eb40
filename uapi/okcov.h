/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * okcov: OpenBSD's kcov(4) coverage device for Linux, as /dev/okcov.
 *
 * A harness written for OpenBSD's <sys/kcov.h> compiles against this header
 * unchanged apart from the include line and the device path (OKCOV_PATH).
 * This comment is the summary; okcov(4) (scripts/man/okcov.4) has every
 * rule in full.
 *
 * Usage:
 *
 *	fd = open(OKCOV_PATH, O_RDWR);
 *	n = OKCOV_DEFAULT_ENTRIES;
 *	ioctl(fd, KIOSETBUFSIZE, &n);		 n words of 8 bytes
 *	buf = mmap(NULL, n * 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
 *	mode = KCOV_MODE_TRACE_PC;
 *	ioctl(fd, KIOENABLE, &mode);		 attaches the calling thread
 *	__atomic_store_n(&buf[0], 0, __ATOMIC_RELAXED);
 *	... syscalls ...
 *	for (i = 0; i < buf[0]; i++)
 *		pc = buf[i + 1];
 *	ioctl(fd, KIODISABLE);
 *
 * Buffer layout (n words of 64 bits, shared with the kernel):
 *
 *	word 0		number of records; userspace resets it by writing 0.
 *			The kernel reads it once per event and bounds-checks it:
 *			any value at or past capacity records nothing.
 *	KCOV_MODE_TRACE_PC
 *		record i is word i + 1: a raw kernel PC (resolve it with
 *		/proc/kallsyms). Room for n - 1 records.
 *	KCOV_MODE_TRACE_CMP
 *		record i is words 4i+1 .. 4i+4: type, arg1, arg2, PC, where
 *		type is KCOV_CMP_SIZE(log2 of the operand size in bytes),
 *		or'ed with KCOV_CMP_CONST when one operand is a compile-time
 *		constant. Room for (n - 1) / 4 records.
 *	When the buffer is full further events are dropped.
 *
 * Descriptor states (one descriptor per open(); dup, fork and mmap share it):
 *
 *	NONE  --KIOSETBUFSIZE-->  READY  --KIOENABLE-->  TRACE
 *	TRACE --KIODISABLE or exit of the attached thread-->  READY
 *	TRACE --last file reference and mapping dropped-->  DYING
 *	DYING --exit of the attached thread-->  freed
 *	NONE, READY --last reference dropped-->  freed
 *
 * Coverage is per thread: KIOENABLE attaches the calling thread only; new
 * threads and forked children start detached; execve keeps the attachment.
 * A thread has at most one attached descriptor. Only the attached thread, in
 * task context (never interrupts), records into a thread's descriptor.
 *
 * Remote coverage (OpenBSD 6.8's KIOREMOTEATTACH):
 *
 *	struct kio_remote_attach ra = { KCOV_REMOTE_COMMON, 0 };
 *	ioctl(fd, KIOREMOTEATTACH, &ra);	 on a READY descriptor
 *	ioctl(fd, KIOENABLE, &mode);		 TRACE; attaches no thread
 *
 * makes fd the calling process's remote descriptor: the work items its
 * threads queue on workqueues (recorded in the kworker while the work
 * function runs) and the timer_list timers they arm (recorded while the
 * callback runs, in softirq) record into it, and so does work queued or
 * armed from inside such a section. The owner is the process (thread
 * group), taken when the work is queued or the timer armed; children are
 * not included; BH work items (WQ_BH) are not recorded. ra.id is
 * ignored. One remote descriptor per process; any thread may KIODISABLE
 * it, and once KIODISABLE returns nothing more is written, and nothing
 * that started before records after the next KIOENABLE. Closing it
 * stops and frees it at once (never DYING).
 *
 * Several CPUs may write a remote buffer at once: a writer claims its
 * slot (advances word 0) before it stores the PC, as on OpenBSD. Once
 * KIODISABLE has returned every claimed slot holds its PC; a reader that
 * does not disable first zeroes the slots it consumed when it resets
 * word 0, and takes a slot still 0 as not written yet. Events that found
 * no owner tag or section are counted in
 * /sys/module/okcov/parameters/remote_dropped.
 *
 *	READY --KIOREMOTEATTACH--> READY (remote) --KIOENABLE--> TRACE (remote)
 *	TRACE (remote) --KIODISABLE (any thread)--> READY (remote)
 *	remote, any state --last reference dropped--> freed
 *
 * Errors: KIOSETBUFSIZE: EFAULT, EBUSY (not NONE), EINVAL (0 or more than the
 * max_entries module parameter), ENOMEM. KIOENABLE: EFAULT, EBUSY (thread
 * already attached, or descriptor not READY), EINVAL (bad mode). KIODISABLE:
 * EBUSY (not attached to the calling thread; for a remote descriptor: not
 * TRACE). KIOREMOTEATTACH: EFAULT, EBUSY (not READY), EINVAL (subsystem is
 * not KCOV_REMOTE_COMMON), EBUSY (the descriptor is already remote, or the
 * process already has a remote descriptor). Other commands: ENOTTY.
 * mmap: EINVAL (no buffer, out of range, MAP_PRIVATE), EPERM (PROT_EXEC).
 */
#ifndef _UAPI_OKCOV_H
#define _UAPI_OKCOV_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define OKCOV_PATH		"/dev/okcov"

/*
 * The default largest buffer (module parameter max_entries), in 8-byte
 * words: OpenBSD's limit, and what syzkaller's executor asks for.
 */
#define OKCOV_DEFAULT_ENTRIES	(512UL << 10)

/*
 * Argument: pointer to the number of 8-byte entries (a __u64: OpenBSD's
 * unsigned long on LP64).
 */
#define KIOSETBUFSIZE		_IOW('K', 1, __u64)
/* Argument: pointer to the mode (int). */
#define KIOENABLE		_IOW('K', 2, __s32)
/* The 2018 ABI: no argument, means KCOV_MODE_TRACE_PC. */
#define KIOENABLE_LEGACY	_IO('K', 2)
#define KIODISABLE		_IO('K', 3)

/* Argument: pointer to a struct kio_remote_attach. */
struct kio_remote_attach {
	__s32	subsystem;	/* KCOV_REMOTE_COMMON */
	__s32	id;		/* ignored */
};

#define KIOREMOTEATTACH		_IOW('K', 4, struct kio_remote_attach)

/*
 * KIODEEP (root only): record the basic blocks of chosen functions. Each
 * address is a block leader inside a function okcov traces (okcov-cover
 * deep computes them), or with KIO_DEEP_FUNCTIONS a function whose
 * leaders okcov computes; okcov puts a kprobe on it whose hit records the
 * address itself, for the attached thread, in KCOV_MODE_TRACE_PC, as it
 * records a function entry. The probes are shared by every descriptor
 * and stay until the last descriptor that asked for any is closed, or
 * until the module they lie in is unloaded. okcov(4) lists the errnos.
 */
struct kio_deep {
	__u64	addrs;		/* user address of count __u64 addresses */
	__u64	errors;		/* 0, or user address of count __s32: 0 or -errno each */
	__u32	count;		/* 1 .. deep_max_probes */
	__u32	flags;		/* KIO_DEEP_* */
	__u32	installed;	/* out: probes this call added */
	__u32	refused;	/* out: addresses refused */
};

/* Install the addresses that pass; without it, all or none. */
#define KIO_DEEP_PARTIAL	(1U << 0)
/*
 * Each address names the function around it: okcov installs every block
 * leader of that function by its own decoding of the live text (x86_64;
 * EOPNOTSUPP elsewhere), the leaders okcov-cover deep would compute;
 * errors[i] is that function's (its first refused leader's errno), and
 * count, refused too count functions; installed counts leaders.
 */
#define KIO_DEEP_FUNCTIONS	(1U << 1)

#define KIODEEP			_IOWR('K', 16, struct kio_deep)

/* The one remote subsystem: work a process defers. */
#define KCOV_REMOTE_COMMON	0

/* Modes, KIOENABLE's argument: okcov's names. */
#define OKCOV_MODE_NONE		0
#define OKCOV_MODE_TRACE_PC	1
#define OKCOV_MODE_TRACE_CMP	2

#ifndef __KERNEL__
/*
 * OpenBSD's names for them, with OpenBSD's values: what a harness ported
 * from <sys/kcov.h> writes. Not in the kernel, where <linux/kcov.h> has
 * an enum kcov_mode with these names and other values (TRACE_PC is 2
 * there), so that a module file may include both headers.
 */
#define KCOV_MODE_NONE		OKCOV_MODE_NONE
#define KCOV_MODE_TRACE_PC	OKCOV_MODE_TRACE_PC
#define KCOV_MODE_TRACE_CMP	OKCOV_MODE_TRACE_CMP
#endif

/*
 * Type bits of a KCOV_MODE_TRACE_CMP record: the values, and the spelling,
 * of <linux/kcov.h>, so that both headers can be included together.
 */
#define KCOV_CMP_CONST		(1 << 0)
#define KCOV_CMP_SIZE(n)	((n) << 1)
#define KCOV_CMP_MASK		KCOV_CMP_SIZE(3)

#endif /* _UAPI_OKCOV_H */
