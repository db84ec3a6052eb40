/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What tramp.S's record (okcov_copy_record) reads of a thread's entry,
 * struct okcov_attach (okcov.h, which checks every offset here against
 * the structure at build time), to record a copy's leader itself: x86_64.
 */
#ifndef OKCOV_RECORD_H
#define OKCOV_RECORD_H

#define OKCOV_ATTACH_MODE	24	/* int mode */
#define OKCOV_ATTACH_AREA	32	/* u64 *area */
#define OKCOV_ATTACH_ENTRY_DELTA 56	/* long entry_delta */
#define OKCOV_ATTACH_STACK	72	/* unsigned long stack */
#define OKCOV_ATTACH_CAP	80	/* u64 cap */

/* The mode the record records in: OKCOV_MODE_TRACE_PC. */
#define OKCOV_RECORD_MODE	1
/* The mode whose threads a copy's record skips: OKCOV_MODE_TRACE_CMP. */
#define OKCOV_RECORD_CMP_MODE	2

#endif
