/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * OpenBSD's <sys/kcov.h> for okcov: a harness written for OpenBSD's
 * kcov(4) compiles unchanged against it. In the source tree:
 *
 *	cc -I uapi/openbsd -I uapi harness.c
 *
 * (`make install` puts this file and okcov.h under $(PREFIX)/include, where
 * the compiler looks without flags). The harness opens /dev/kcov, which
 * exists when okcov is loaded with kcov_device=1; /dev/okcov is the same
 * device. Every name and value is OpenBSD's (LP64: KIOSETBUFSIZE takes a
 * pointer to an unsigned long, which is okcov's __u64).
 */
#ifndef _OKCOV_OPENBSD_SYS_KCOV_H
#define _OKCOV_OPENBSD_SYS_KCOV_H

#include <okcov.h>

/* OpenBSD's kcov(4) device node; okcov's kcov_device=1 parameter. */
#define OKCOV_OPENBSD_PATH	"/dev/kcov"

#endif /* _OKCOV_OPENBSD_SYS_KCOV_H */
