/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * okcov_target: the instrumented test-target module of the okcov selftests.
 * ioctl(fd, OKCOV_TARGET_RUN, value) runs okcov_target_run(value), a
 * function built with -fsanitize-coverage=trace-pc,trace-cmp whose branches
 * and comparisons are known to the tests (see okcov_target.c).
 */
#ifndef _OKCOV_TARGET_H
#define _OKCOV_TARGET_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define OKCOV_TARGET_PATH	"/dev/okcov_target"
#define OKCOV_TARGET_NAME	"okcov_target"

/* Argument: the value itself (not a pointer). */
#define OKCOV_TARGET_RUN	_IO('O', 1)

/*
 * Remote coverage sources. OKCOV_TARGET_DEFER (argument: OKCOV_DEFER_*
 * bits) queues this open file's work item and/or arms its timer on the
 * caller's behalf; they run okcov_target_in_work() in a kworker and
 * okcov_target_in_timer() in softirq, which compare with the magics below.
 * A delayed work item (OKCOV_DEFER_DELAYED) is a timer whose callback
 * queues the work: okcov_target_in_dwork(). OKCOV_TARGET_WAIT waits (up
 * to 10 s) until everything deferred so far has run: 0 or ETIMEDOUT.
 */
#define OKCOV_TARGET_DEFER	_IO('O', 2)
#define OKCOV_TARGET_WAIT	_IO('O', 3)

#define OKCOV_DEFER_WORK	0x1
#define OKCOV_DEFER_TIMER	0x2
#define OKCOV_DEFER_DELAYED	0x4
/* The work item sleeps OKCOV_TARGET_SLOW_MS before it compares. */
#define OKCOV_DEFER_SLOW	0x8
/* The timer (and delayed work) fire after OKCOV_TARGET_LATE_MS, not at once. */
#define OKCOV_DEFER_LATE	0x10
/* The work item and the timer also run okcov_target_deep(1) (deep coverage). */
#define OKCOV_DEFER_DEEP	0x20

/*
 * The BH storm (6.9+): OKCOV_TARGET_BH_STORM with argument 1 starts a
 * module-global hrtimer that every OKCOV_TARGET_BH_STORM_US queues a work
 * item on system_bh_wq (WQ_BH: the work function, okcov_target_storm_fn(),
 * runs in softirq); it belongs to no process (queued from hardirq).
 * Argument 1: 0, or EBUSY while a storm runs. Argument 0 stops it and
 * returns how many times the BH work ran since the start (0 if none ran).
 * Closing the file that started it stops it too. EOPNOTSUPP on kernels
 * without system_bh_wq (6.1), EINVAL for another argument.
 */
#define OKCOV_TARGET_BH_STORM		_IO('O', 4)
#define OKCOV_TARGET_BH_STORM_US	100

/*
 * Tag churn, on the caller's behalf (argument: n, 1..OKCOV_TARGET_CHURN_MAX,
 * else EINVAL). OKCOV_TARGET_TIMER_CHURN arms n timer_list timers 600 s
 * ahead and deletes them; it returns how many were pending when deleted
 * (n). OKCOV_TARGET_WORK_CHURN queues n work items on the module's ordered
 * workqueue behind a gate work item that blocks it, cancels all n
 * (cancel_work_sync) while they are pending, then opens the gate; it
 * returns how many were cancelled pending (n). The gate itself runs. None
 * of the n ever runs: OKCOV_TARGET_CHURN_RAN returns how many did since
 * load (0). ENOMEM if the arrays cannot be allocated.
 */
#define OKCOV_TARGET_TIMER_CHURN	_IO('O', 5)
#define OKCOV_TARGET_WORK_CHURN		_IO('O', 6)
#define OKCOV_TARGET_CHURN_RAN		_IO('O', 7)
#define OKCOV_TARGET_CHURN_MAX		(1UL << 16)

/*
 * A call site: OKCOV_TARGET_CALL (argument: a pointer to a __u64) runs
 * okcov_target_caller(), which calls okcov_target_entity_callee(), which stores
 * its own return address (the call site in okcov_target_caller(), right
 * after the call instruction) at the pointer: 0, or EFAULT.
 */
#define OKCOV_TARGET_CALL		_IOR('O', 8, __u64)

/*
 * Deep coverage (okcov's KIODEEP). OKCOV_TARGET_DEEP_LEADERS (argument: a
 * pointer to struct okcov_target_deep) fills in the block leaders of
 * okcov_target_deep(), placed by hand (x86_64 only: EOPNOTSUPP
 * elsewhere): OKCOV_DEEP_ELSE, reached when the value is not 1 (the
 * instruction after the conditional branch), OKCOV_DEEP_THEN, when it is
 * (the branch target), and OKCOV_DEEP_JOIN, where both meet (the target of
 * the else block's jump). OKCOV_TARGET_DEEP_RUN (argument: the value)
 * runs okcov_target_deep(value): 4 for 1, 3 otherwise. The address of
 * okcov_target_noprobe(), a traceable function on kprobes' blacklist
 * (NOKPROBE_SYMBOL), goes to .noprobe.
 */
enum { OKCOV_DEEP_ELSE, OKCOV_DEEP_THEN, OKCOV_DEEP_JOIN, OKCOV_DEEP_NLEADERS };

struct okcov_target_deep {
	__u64	leaders[OKCOV_DEEP_NLEADERS];
	__u64	noprobe;
};

#define OKCOV_TARGET_DEEP_LEADERS	_IOR('O', 9, struct okcov_target_deep)
#define OKCOV_TARGET_DEEP_RUN		_IO('O', 10)

/*
 * Instrumented copies (okcov's /sys/kernel/debug/okcov/copy), run without
 * any redirect: a test module's hook, nothing a kernel should offer.
 * OKCOV_TARGET_CALL_COPY calls .fn(.arg) and stores its return value in
 * .ret, only if .okcov_fd is an open okcov descriptor (/dev/okcov: it
 * keeps okcov loaded through the call) and .fn lies in okcov's module
 * (where okcov's copies are): else EBADF or EPERM. OKCOV_TARGET_FLAGS_RUN (argument: the value) runs
 * okcov_target_flags(value), whose block leaders sit between the
 * instruction that sets the flags and the ones that read them: 0x11 for
 * 1, 0x12 for 0, 0x10 otherwise, unless something between them changed
 * the flags (x86_64 only: EOPNOTSUPP elsewhere).
 */
struct okcov_target_call {
	__u64	fn;
	__u64	arg;
	__s64	ret;
	__s32	okcov_fd;
	__u32	pad;
};

#define OKCOV_TARGET_CALL_COPY		_IOWR('O', 11, struct okcov_target_call)
#define OKCOV_TARGET_FLAGS_RUN		_IO('O', 12)

/*
 * Deep copies' redirect (okcov's deep_copies): OKCOV_TARGET_SLEEP_RUN
 * (argument: milliseconds in the low 16 bits, a value above) runs
 * okcov_target_sleep(), which sleeps that long and then returns 2 * value
 * + 1 when the value is odd, 2 * value when even, through a block of its
 * own each. OKCOV_TARGET_WARNED_RUN (argument: a value) runs
 * okcov_target_warned(), which holds a WARN_ON() that fires for
 * OKCOV_TARGET_WARN_VALUE (and then returns -EINVAL) and returns value +
 * 1 for any other. OKCOV_TARGET_UACCESS_RUN (argument: a user address)
 * runs okcov_target_uaccess(), which reads the u64 there with an inline
 * user access (user_access_begin(), unsafe_get_user()): value + 1, or
 * -EFAULT. OKCOV_TARGET_TRAP_RUN (argument: a value) runs
 * okcov_target_trap(), which holds an int3 on a path no value takes (so
 * that okcov's copier refuses it, EBUSY, and kprobes take it): value + 1
 * when odd, value + 2 when even. OKCOV_TARGET_KEYED_RUN (argument: a
 * value) runs okcov_target_keyed(): value + 1 while the static key
 * OKCOV_TARGET_KEY_SET (argument: 0 or 1) last set is off, value + 100
 * while it is on. Their addresses: OKCOV_TARGET_FUNCS.
 */
struct okcov_target_funcs {
	__u64	sleep;
	__u64	warned;
	__u64	deep;
	__u64	flags;
	__u64	uaccess;
	__u64	trap;
	__u64	keyed;
	__u64	tp_probe;
	__u64	switched;
	__u64	callee;
	__u64	magic;
	__u64	cases;
};

#define OKCOV_TARGET_SLEEP_RUN		_IO('O', 13)
#define OKCOV_TARGET_WARNED_RUN		_IO('O', 14)
#define OKCOV_TARGET_FUNCS		_IOR('O', 15, struct okcov_target_funcs)
#define OKCOV_TARGET_UACCESS_RUN	_IO('O', 16)
#define OKCOV_TARGET_TRAP_RUN		_IO('O', 17)
#define OKCOV_TARGET_KEYED_RUN		_IO('O', 18)
#define OKCOV_TARGET_KEY_SET		_IO('O', 19)
/*
 * arg 1: a probe of this module's on the signal_generate tracepoint (its
 * only one: the tracepoint's inline static call sites then call it
 * directly), 0: gone again. The probe's address: OKCOV_TARGET_FUNCS'
 * tp_probe.
 */
#define OKCOV_TARGET_TP_PROBE		_IO('O', 20)
/*
 * arg: a value; okcov_target_switched() returns what its case (0 to 8,
 * any other) makes of it (okcov_target_switch_ref() in the test): a
 * dense switch, which a kernel built without retpolines compiles into
 * an indirect jump through a table (with them, -fno-jump-tables makes
 * compares of it).
 */
#define OKCOV_TARGET_SWITCH_RUN		_IO('O', 21)
/*
 * arg: a value; okcov_target_callee() returns okcov_target_callee_ref()
 * (the test's) of it: it calls notrace functions (okcov_target.c), for
 * okcov's deep_callees.
 */
#define OKCOV_TARGET_CALLEE_RUN		_IO('O', 23)
/* arg: a value; okcov_target_wrapper() returns the same of value + 2. */
#define OKCOV_TARGET_WRAPPER_RUN	_IO('O', 24)
/*
 * Comparisons of a copy (okcov's deep_cmp): OKCOV_TARGET_MAGIC_RUN
 * (argument: a value) runs okcov_target_magic(), built without the
 * sanitizer's hooks, which first compares its low 32 bits, kept on the
 * stack, with OKCOV_TARGET_MAGIC_STACK (x86_64: "cmpl $imm, mem"), then
 * the value with
 * OKCOV_TARGET_MAGIC_CMP (an immediate), with the module global
 * okcov_target_magic_var, which holds OKCOV_TARGET_MAGIC_VAR (in
 * memory), and its low 16 bits with OKCOV_TARGET_MAGIC_LOW16, in that
 * order, and returns 1, 2 or 3 for the first that is equal, 0 for none.
 * Its address: OKCOV_TARGET_FUNCS' magic.
 */
#define OKCOV_TARGET_MAGIC_RUN		_IO('O', 22)
/*
 * A switch of a copy (deep_cmp's compare chains): OKCOV_TARGET_CASES_RUN
 * (argument: a value) runs okcov_target_cases(), built without the
 * sanitizer's hooks: a switch on the value with the OKCOV_TARGET_CASES
 * constants, too sparse for a jump table or a bit test, which returns
 * the case's index plus one, 0 for none. Its address: OKCOV_TARGET_FUNCS'
 * cases.
 */
#define OKCOV_TARGET_CASES_RUN		_IO('O', 25)
/*
 * Deep on reach's look ahead (okcov's deep_reach_ahead): with an odd
 * argument OKCOV_TARGET_AHEAD_RUN runs okcov_target_ahead(), which calls
 * okcov_target_ahead_callee() (two blocks by bit 1 of the value) only
 * for an odd value; it returns the callee's answer plus one, or the
 * value.
 */
#define OKCOV_TARGET_AHEAD_RUN		_IO('O', 26)
#define OKCOV_TARGET_CASES		{ 0x11ULL, 0x2345ULL, 0x61000ULL, \
					  0x7a7a7aULL, 0x1d0c0ffeULL, \
					  0x5500ULL, 0x3ULL }
#define OKCOV_TARGET_MAGIC_CMP		0x1234abcdULL
#define OKCOV_TARGET_MAGIC_VAR		0x5eedcafe77ULL
#define OKCOV_TARGET_MAGIC_LOW16	0x4b1dU
#define OKCOV_TARGET_MAGIC_STACK	0x600dd00dU
#define OKCOV_TARGET_WARN_VALUE		0x5741524eUL

#define OKCOV_TARGET_SLOW_MS	2000
#define OKCOV_TARGET_LATE_MS	1000

#define OKCOV_TARGET_WORK_MAGIC		0x5eed0001ULL	/* 8-byte, const */
#define OKCOV_TARGET_TIMER_MAGIC	0x5eed0002ULL
#define OKCOV_TARGET_DWORK_MAGIC	0x5eed0003ULL

/* Constants okcov_target_run() compares its value with. */
#define OKCOV_TARGET_MAGIC64	0x1234ULL		/* 8-byte, const */
#define OKCOV_TARGET_MAGIC32	0xdeadbeefU		/* 4-byte, const */
#define OKCOV_TARGET_MAGIC16	0xbeefU			/* 2-byte, const */
#define OKCOV_TARGET_MAGIC8	0x5aU			/* 1-byte, const */
/* Default of the threshold parameter: compared as a non-constant. */
#define OKCOV_TARGET_THRESHOLD	0x777ULL

#endif /* _OKCOV_TARGET_H */
