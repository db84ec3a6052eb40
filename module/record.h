/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the assembly records read of a thread's entry, struct okcov_attach
 * (okcov.h, which checks every offset and value here against the
 * structure at build time): tramp.S's okcov_copy_record, a copy's leader
 * (x86_64), and tramp-arm64.S's function entry (arm64).
 */
#ifndef OKCOV_RECORD_H
#define OKCOV_RECORD_H

#define OKCOV_ATTACH_MODE	24	/* int mode */
#define OKCOV_ATTACH_FLAGS	28	/* unsigned int flags */
#define OKCOV_ATTACH_AREA	32	/* u64 *area */
#define OKCOV_ATTACH_PC_DELTA	48	/* long pc_delta */
#define OKCOV_ATTACH_ENTRY_DELTA 56	/* long entry_delta */
#define OKCOV_ATTACH_STACK	72	/* unsigned long stack */
#define OKCOV_ATTACH_CAP	80	/* u64 cap */

/* The mode the record records in: OKCOV_MODE_TRACE_PC. */
#define OKCOV_RECORD_MODE	1
/* The mode whose threads a copy's record skips: OKCOV_MODE_TRACE_CMP. */
#define OKCOV_RECORD_CMP_MODE	2
/* The flag of an entry record with its call site: OKCOV_CALL_SITES. */
#define OKCOV_RECORD_CALL_SITES_BIT 2
/* log2 of OKCOV_QUIET_GRANULE, the left-out functions' map's granule */
#define OKCOV_RECORD_QUIET_SHIFT 4

/* struct okcov_globals okcov_g (okcov.h): the pairs the record loads */
#define OKCOV_G_TEXT_START	0	/* text_start, text_size */
#define OKCOV_G_QUIET_BASE	16	/* quiet_base, quiet_bits */
#define OKCOV_G_QUIET_MAP	32	/* unsigned long *quiet_map */
#define OKCOV_G_TASK_CTX_MASK	40	/* u32 task_ctx_mask */
#endif
