/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the tests of Linux's kcov ABI (/sys/kernel/debug/kcov), as
 * Linux's kernel/kcov.c and include/uapi/linux/kcov.h define it: served by
 * the kernel itself on a CONFIG_KCOV kernel, by okcov's Linux personality
 * elsewhere. Nothing here knows which one answers, except lk_native().
 *
 * Include after kselftest_harness.h.
 */
#ifndef OKCOV_LINUX_H
#define OKCOV_LINUX_H

#include <sys/utsname.h>

#include <linux/kcov.h>

#include "kaslr.h"
#include "okcov_test.h"

#define LK_PATH			"/sys/kernel/debug/kcov"

/* syzkaller probes it; Linux (6.1 .. 7.3) does not have it: ENOTTY. */
#ifndef KCOV_RESET_TRACE
#define KCOV_RESET_TRACE	_IO('c', 104)
#endif

/* include/linux/errno.h, never in the uapi headers. */
#ifndef ENOTSUPP
#define ENOTSUPP		524
#endif

#ifdef __aarch64__
/*
 * arm64 (48-bit, or 52-bit with a 48-bit minimum, VA): the kernel image
 * and the modules live in the upper half of the kernel's VA space, above
 * _PAGE_END(48), below the vmemmap.
 */
#define LK_PC_MIN		0xffff800000000000ULL
#define LK_PC_END		0xfffffc0000000000ULL
/* syzkaller maps a PC to the instruction before it: pc - 4 on arm64. */
#define LK_PC_BACK		4
#else
/* What syzkaller (pkg/signal, executor) accepts as a kernel PC on amd64. */
#define LK_PC_MIN		0xffffffff80000000ULL
#define LK_PC_END		0xffffffffff000000ULL
/* syzkaller maps a PC to the instruction before it: pc - 5 on amd64. */
#define LK_PC_BACK		5
#endif
/* _text when KASLR did not move the kernel (libokcov/kaslr.h). */
#define LK_START_KERNEL		okcov_kimage_vaddr()

/*
 * SKIP from a FIXTURE_SETUP without running the test body: the 6.1
 * harness (HARNESS_DIR) runs the body after a plain SKIP(return) in the
 * setup; jumping back to its setjmp() reports the test as skipped and
 * runs neither the body nor the teardown.
 */
#define LK_SKIP_ALL(fmt, ...) \
	SKIP(longjmp(_metadata->env, 1), fmt, ##__VA_ARGS__)

static inline int lk_open(void)
{
	return open(LK_PATH, O_RDWR);
}

static inline int lk_init(int fd, unsigned long n)
{
	return st_ret(ioctl(fd, KCOV_INIT_TRACE, n));
}

static inline int lk_enable(int fd, unsigned long mode)
{
	return st_ret(ioctl(fd, KCOV_ENABLE, mode));
}

static inline int lk_disable(int fd)
{
	return st_ret(ioctl(fd, KCOV_DISABLE, 0UL));
}

/* mmap the whole area of n entries, Linux's only accepted length. */
static inline uint64_t *lk_map(int fd, unsigned long n, int prot)
{
	void *p = mmap(NULL, n * 8, prot, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? MAP_FAILED : (uint64_t *)p;
}

/*
 * Why the kcov at LK_PATH cannot be tested here, or NULL: absent, or a
 * kernel's own kcov that instruments nothing (CONFIG_KCOV without
 * KCOV_INSTRUMENT_ALL, as on the `debug` kernel): getpid() recorded no
 * PC. Probed once per process.
 */
static inline const char *lk_unusable(void)
{
	static const char *why;
	static bool probed;
	uint64_t *buf, n = 0;
	int fd;

	if (probed)
		return why;
	probed = true;
	if (access(LK_PATH, F_OK))
		return why = LK_PATH " absent";
	fd = open(LK_PATH, O_RDWR);
	if (fd < 0)
		return why = LK_PATH " cannot be opened";
	buf = ioctl(fd, KCOV_INIT_TRACE, 512UL) ? MAP_FAILED :
	      lk_map(fd, 512, PROT_READ | PROT_WRITE);
	if (buf != MAP_FAILED && !lk_enable(fd, KCOV_TRACE_PC)) {
		__atomic_store_n(&buf[0], 0, __ATOMIC_RELAXED);
		syscall(SYS_getpid);
		n = __atomic_load_n(&buf[0], __ATOMIC_RELAXED);
		lk_disable(fd);
	}
	if (buf != MAP_FAILED)
		munmap(buf, 512 * 8);
	close(fd);
	if (!n)
		why = "the kcov at " LK_PATH " records nothing (CONFIG_KCOV without KCOV_INSTRUMENT_ALL)";
	return why;
}

/* KCOV_REMOTE_ENABLE's argument with room for a few handles. */
struct lk_remote {
	struct kcov_remote_arg arg;
	__u64 handles[4];
};

static inline int lk_remote_enable(int fd, __u32 mode, __u32 area_size,
				   __u64 common, __u32 nh, const __u64 *h)
{
	struct lk_remote r;
	__u32 i;

	memset(&r, 0, sizeof(r));
	r.arg.trace_mode = mode;
	r.arg.area_size = area_size;
	r.arg.num_handles = nh;
	r.arg.common_handle = common;
	for (i = 0; i < nh && i < ARRAY_SIZE(r.handles); i++)
		r.arg.handles[i] = h[i];
	return st_ret(ioctl(fd, KCOV_REMOTE_ENABLE, &r));
}

/*
 * The KASLR offset Linux subtracts from every PC (canonicalize_ip()):
 * _text minus LK_START_KERNEL, from /proc/kallsyms (ksyms_load() first).
 * 0 if _text cannot be found.
 */
static inline uint64_t lk_text(void)
{
	return okcov_text(ksyms_addr("_text", NULL),
			  ksyms_addr("_stext", NULL));
}

static inline uint64_t lk_kaslr_offset(void)
{
	return okcov_kaslr_offset(lk_text());
}

/* Whether syzkaller keeps a call whose coverage has this PC. */
static inline bool lk_pc_canonical(uint64_t pc)
{
	return pc >= LK_PC_MIN && pc < LK_PC_END;
}

/*
 * Whether the kernel's own kcov answers at LK_PATH: the kernel, not a
 * module, defines the sanitizer hooks (ksyms_load() first).
 */
static inline bool lk_native(void)
{
	uint64_t hook = ksyms_addr("__sanitizer_cov_trace_pc", NULL);
	const struct ksym *s = hook ? ksyms_lookup(hook, NULL) : NULL;

	return s && !s->mod && ksyms_addr("kcov_ioctl", NULL);
}

/* The running kernel's "major.minor" as major * 1000 + minor. */
static inline int lk_kernel_version(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) < 1)
		return 0;
	return major * 1000 + minor;
}

#endif /* OKCOV_LINUX_H */
