/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where the kernel links _text, and so the KASLR offset Linux's kcov
 * subtracts from every PC it records (kernel/kcov.c canonicalize_ip()):
 * _text minus that address. The userspace home of these constants, for
 * the selftests (okcov_linux.h) and okcov-cover (scripts/cover/run.c),
 * which pass in the _text and _stext that kallsyms.h found; the module's
 * own are in module/compat/arch.h.
 */
#ifndef OKCOV_KASLR_H
#define OKCOV_KASLR_H

#include <stdint.h>
#include <stdio.h>
#include <sys/utsname.h>

#ifdef __aarch64__
/*
 * KIMAGE_VADDR: _text when KASLR did not move the kernel, the end of the
 * module area: 128 MiB above _PAGE_END(48) until 6.5, 2 GiB since.
 */
static inline uint64_t okcov_kimage_vaddr(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (!uname(&u))
		sscanf(u.release, "%d.%d", &major, &minor);
	return 0xffff800000000000ULL +
	       (major * 1000 + minor < 6005 ? 128ULL << 20 : 2048ULL << 20);
}

/*
 * _stext minus _text: .head.text, one 64 KiB segment (SEGMENT_ALIGN).
 * Without KALLSYMS_ALL (Debian's 6.1) kallsyms lists no _text.
 */
#define OKCOV_STEXT_GAP		(64ULL << 10)
#else
/* __START_KERNEL on x86_64. */
static inline uint64_t okcov_kimage_vaddr(void)
{
	return 0xffffffff81000000ULL;
}

/* x86_64's _stext is _text. */
#define OKCOV_STEXT_GAP		0ULL
#endif

/* _text from kallsyms' _text and _stext (each 0 when not listed), or 0. */
static inline uint64_t okcov_text(uint64_t text, uint64_t stext)
{
	if (!text && stext)
		text = stext - OKCOV_STEXT_GAP;
	return text;
}

/* The KASLR offset of a kernel whose _text is text; 0 if text is 0. */
static inline uint64_t okcov_kaslr_offset(uint64_t text)
{
	return text ? text - okcov_kimage_vaddr() : 0;
}

#endif /* OKCOV_KASLR_H */
