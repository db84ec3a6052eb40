/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The copy pool (copy.c): executable memory okcov owns, inside its own
 * module text, so that what the kernel looks up by module for an address
 * in a copy (__module_address(): exception tables, ORC, the bug table)
 * finds okcov. The loader maps it read-only and executable with the rest
 * of okcov's text; copy.c writes it through a writable alias.
 *
 * Why PROGBITS filled with long nops, not a zero-filled SHT_NOBITS
 * section: objtool decodes every executable section, and on kernels where
 * it runs on the linked module (IBT, LTO: "delay-objtool", 6.12, 7.x),
 * no per-file OBJECT_FILES_NON_STANDARD can keep it out; given an
 * executable SHT_NOBITS section it segfaults (6.12's and 6.1's objtool:
 * no section data). Eight-byte nops decode quickly (about 1 s and 80 MB
 * for 4 MiB under 6.12's objtool), and objtool ignores nops that no code
 * reaches. The cost is the pool's size in okcov.ko.
 */
#include <linux/linkage.h>
#include <linux/objtool.h>

#define OKCOV_POOL_SIZE	(2 << 20)	/* copy.c's OKCOV_POOL_SIZE */

	.section .okcov_pool, "ax"
	.balign 4096
SYM_DATA_START(okcov_pool)
	/* copy.c takes its address; nothing ever branches to it. */
	ANNOTATE_NOENDBR
	.rept	OKCOV_POOL_SIZE / 8
	.byte	0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00	/* nopl 0(%rax,%rax) */
	.endr
SYM_DATA_END(okcov_pool)
