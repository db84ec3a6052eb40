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

#define OKCOV_TARGET_PATH	"/dev/okcov_target"
#define OKCOV_TARGET_NAME	"okcov_target"

/* Argument: the value itself (not a pointer). */
#define OKCOV_TARGET_RUN	_IO('O', 1)

/* Constants okcov_target_run() compares its value with. */
#define OKCOV_TARGET_MAGIC64	0x1234ULL		/* 8-byte, const */
#define OKCOV_TARGET_MAGIC32	0xdeadbeefU		/* 4-byte, const */
#define OKCOV_TARGET_MAGIC16	0xbeefU			/* 2-byte, const */
#define OKCOV_TARGET_MAGIC8	0x5aU			/* 1-byte, const */
/* Default of the threshold parameter: compared as a non-constant. */
#define OKCOV_TARGET_THRESHOLD	0x777ULL

#endif /* _OKCOV_TARGET_H */
