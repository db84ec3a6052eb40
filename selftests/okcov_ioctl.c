// SPDX-License-Identifier: GPL-2.0
/*
 * okcov ioctl errno table (uapi/okcov.h): every row, with the order in
 * which the conditions are checked, plus the legacy KIOENABLE and the
 * device's permissions.
 */
#include <grp.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "okcov_test.h"

/* Addresses that copy_from_user() cannot read. */
struct bad_ptrs {
	void *ptr[5];
	const char *what[5];
	void *unmapped, *guard;
};

static void bad_ptrs_init(struct bad_ptrs *b)
{
	size_t ps = st_page_size();
	char *two;

	/* A page that was mapped, then unmapped. */
	b->unmapped = mmap(NULL, ps, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(b->unmapped, ps);

	/* A readable page followed by an inaccessible one: an int or a u64
	 * starting 2 bytes before the end straddles them.
	 */
	two = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mprotect(two + ps, ps, PROT_NONE);
	b->guard = two;

	b->ptr[0] = NULL;		b->what[0] = "NULL";
	b->ptr[1] = (void *)1;		b->what[1] = "(void *)1";
	b->ptr[2] = b->unmapped;	b->what[2] = "unmapped page";
	b->ptr[3] = two + ps;		b->what[3] = "PROT_NONE page";
	b->ptr[4] = two + ps - 2;	b->what[4] = "straddling a PROT_NONE page";
}

static void bad_ptrs_fini(struct bad_ptrs *b)
{
	munmap(b->guard, 2 * st_page_size());
}

FIXTURE(okcov) {
	int fd;
	int fd2;
	struct bad_ptrs bad;
};

FIXTURE_SETUP(okcov)
{
	self->fd2 = -1;
	self->fd = st_open();
	if (self->fd < 0)
		TH_LOG("open %s: %s", OKCOV_PATH, strerror(errno));
	ASSERT_LE(0, self->fd);
	bad_ptrs_init(&self->bad);
}

FIXTURE_TEARDOWN(okcov)
{
	bad_ptrs_fini(&self->bad);
	if (self->fd2 >= 0)
		close(self->fd2);
	close(self->fd);
}

/* KIOSETBUFSIZE, argument unreadable: EFAULT, and the state stays NONE. */
TEST_F(okcov, setbufsize_efault)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(self->bad.ptr); i++) {
		ASSERT_EQ(EFAULT, st_ioctl(self->fd, KIOSETBUFSIZE,
					      self->bad.ptr[i])) {
			TH_LOG("argument %s", self->bad.what[i]);
		}
	}
	ASSERT_EQ(0, st_setbufsize(self->fd, 16));
}

/* EFAULT is checked before the state: READY + bad pointer is EFAULT. */
TEST_F(okcov, setbufsize_efault_before_ebusy)
{
	size_t i;

	ASSERT_EQ(0, st_setbufsize(self->fd, 16));
	for (i = 0; i < ARRAY_SIZE(self->bad.ptr); i++) {
		ASSERT_EQ(EFAULT, st_ioctl(self->fd, KIOSETBUFSIZE,
					      self->bad.ptr[i])) {
			TH_LOG("argument %s", self->bad.what[i]);
		}
	}
}

/* A second KIOSETBUFSIZE: EBUSY, whatever the size (state before n). */
TEST_F(okcov, setbufsize_twice)
{
	ASSERT_EQ(0, st_setbufsize(self->fd, 16));
	ASSERT_EQ(EBUSY, st_setbufsize(self->fd, 16));
	ASSERT_EQ(EBUSY, st_setbufsize(self->fd, 32));
	ASSERT_EQ(EBUSY, st_setbufsize(self->fd, 0));
	ASSERT_EQ(EBUSY, st_setbufsize(self->fd, ~0ULL));
}

/* Still EBUSY once enabled, and after going back to READY. */
TEST_F(okcov, setbufsize_after_enable)
{
	ASSERT_EQ(0, st_setbufsize(self->fd, 16));
	ASSERT_EQ(0, st_enable(self->fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(EBUSY, st_setbufsize(self->fd, 16));
	ASSERT_EQ(0, st_disable(self->fd));
	ASSERT_EQ(EBUSY, st_setbufsize(self->fd, 16));
}

/* The default max_entries is 512K entries, as in OpenBSD and syzkaller. */
TEST(max_entries_default)
{
	ASSERT_EQ(0, access(OKCOV_MAX_PARAM, R_OK));
	ASSERT_EQ(OKCOV_DEFAULT_MAX, st_max_entries());
}

/* Buffer sizes: the bounds of "n == 0 or n > max_entries". */
enum size_kind { SZ_ABS, SZ_MAX, SZ_MAX_PLUS_ONE };

FIXTURE(bufsize) {
	int fd;
	uint64_t max;
};

FIXTURE_VARIANT(bufsize) {
	enum size_kind kind;
	uint64_t n;
	int err;
};

FIXTURE_VARIANT_ADD(bufsize, zero) { .kind = SZ_ABS, .n = 0, .err = EINVAL };
FIXTURE_VARIANT_ADD(bufsize, one) { .kind = SZ_ABS, .n = 1, .err = 0 };
FIXTURE_VARIANT_ADD(bufsize, two) { .kind = SZ_ABS, .n = 2, .err = 0 };
FIXTURE_VARIANT_ADD(bufsize, one_page) { .kind = SZ_ABS, .n = 512, .err = 0 };
FIXTURE_VARIANT_ADD(bufsize, page_plus_one) { .kind = SZ_ABS, .n = 513, .err = 0 };
FIXTURE_VARIANT_ADD(bufsize, n_512k) {
	.kind = SZ_ABS, .n = 512 << 10, .err = 0 };
FIXTURE_VARIANT_ADD(bufsize, max) { .kind = SZ_MAX, .err = 0 };
FIXTURE_VARIANT_ADD(bufsize, max_plus_one) {
	.kind = SZ_MAX_PLUS_ONE, .err = EINVAL };
/* n * 8 overflows 64 bits: must not wrap into a small allocation. */
FIXTURE_VARIANT_ADD(bufsize, n_2pow61) {
	.kind = SZ_ABS, .n = 1ULL << 61, .err = EINVAL };
FIXTURE_VARIANT_ADD(bufsize, n_2pow63) {
	.kind = SZ_ABS, .n = 1ULL << 63, .err = EINVAL };
FIXTURE_VARIANT_ADD(bufsize, all_ones) { .kind = SZ_ABS, .n = ~0ULL, .err = EINVAL };
/* Not sign-extended from 32 bits, not truncated to 32 bits. */
FIXTURE_VARIANT_ADD(bufsize, n_2pow32_plus_1) {
	.kind = SZ_ABS, .n = (1ULL << 32) + 1, .err = EINVAL };

FIXTURE_SETUP(bufsize)
{
	self->fd = st_open();
	ASSERT_LE(0, self->fd);
	self->max = st_max_entries();
	ASSERT_NE(0, self->max);
}

FIXTURE_TEARDOWN(bufsize)
{
	close(self->fd);
}

TEST_F(bufsize, setbufsize)
{
	uint64_t *buf;
	uint64_t n = variant->n, i;

	if (variant->kind == SZ_MAX)
		n = self->max;
	else if (variant->kind == SZ_MAX_PLUS_ONE)
		n = self->max + 1;
	if (variant->kind == SZ_ABS && n > self->max && !variant->err)
		SKIP(return, "max_entries is %llu, below %llu",
		     (unsigned long long)self->max, (unsigned long long)n);

	ASSERT_EQ(variant->err, st_setbufsize(self->fd, n)) {
		TH_LOG("n = %llu (max_entries %llu)", (unsigned long long)n,
	       (unsigned long long)self->max);
	}

	if (variant->err) {
		/* Refused: nothing changed, the descriptor is still NONE. */
		ASSERT_EQ(EBUSY, st_enable(self->fd, KCOV_MODE_TRACE_PC));
		ASSERT_EQ(EINVAL, st_mmap_err(self->fd, st_page_size(),
						 PROT_READ | PROT_WRITE,
						 MAP_SHARED, 0));
		ASSERT_EQ(0, st_setbufsize(self->fd, 1));
		return;
	}

	/* Accepted: READY, a zeroed buffer of PAGE_ALIGN(n * 8) bytes. */
	buf = st_map(self->fd, n);
	ASSERT_NE(MAP_FAILED, buf);
	for (i = 0; i < n; i++)
		if (buf[i])
			break;
	ASSERT_EQ(n, i);
	munmap((void *)buf, st_map_len(n));
	ASSERT_EQ(EINVAL, st_enable(self->fd, KCOV_MODE_NONE));
}

/* KIOENABLE on a NONE descriptor: EBUSY, for every mode. */
TEST_F(okcov, enable_before_setbufsize)
{
	ASSERT_EQ(EBUSY, st_enable(self->fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(EBUSY, st_enable(self->fd, KCOV_MODE_TRACE_CMP));
	ASSERT_EQ(EBUSY, st_enable_legacy(self->fd));
}

/* The state is checked before the mode: NONE + bad mode is EBUSY. */
TEST_F(okcov, enable_bad_mode_on_none)
{
	static const int modes[] = { 0, 3, -1, INT_MAX, INT_MIN };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(modes); i++) {
		ASSERT_EQ(EBUSY, st_enable(self->fd, modes[i])) {
			TH_LOG("mode %d", modes[i]);
		}
	}
}

/* KIOENABLE, argument unreadable: EFAULT, and the state stays READY. */
TEST_F(okcov, enable_efault)
{
	size_t i;

	ASSERT_EQ(0, st_setbufsize(self->fd, 16));
	for (i = 0; i < ARRAY_SIZE(self->bad.ptr); i++) {
		ASSERT_EQ(EFAULT, st_ioctl(self->fd, KIOENABLE,
					      self->bad.ptr[i])) {
			TH_LOG("argument %s", self->bad.what[i]);
		}
	}
	ASSERT_EQ(0, st_enable(self->fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(0, st_disable(self->fd));
}

/* EFAULT before EBUSY: on a NONE descriptor, on a TRACE descriptor. */
TEST_F(okcov, enable_efault_before_ebusy)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(self->bad.ptr); i++) {
		ASSERT_EQ(EFAULT, st_ioctl(self->fd, KIOENABLE,
					      self->bad.ptr[i])) {
			TH_LOG("NONE, argument %s", self->bad.what[i]);
		}
	}
	ASSERT_EQ(0, st_setbufsize(self->fd, 16));
	ASSERT_EQ(0, st_enable(self->fd, KCOV_MODE_TRACE_PC));
	for (i = 0; i < ARRAY_SIZE(self->bad.ptr); i++) {
		ASSERT_EQ(EFAULT, st_ioctl(self->fd, KIOENABLE,
					      self->bad.ptr[i])) {
			TH_LOG("TRACE, argument %s", self->bad.what[i]);
		}
	}
	/* ... and from a thread attached to another descriptor. */
	self->fd2 = st_open();
	ASSERT_LE(0, self->fd2);
	ASSERT_EQ(0, st_setbufsize(self->fd2, 16));
	ASSERT_EQ(EFAULT, st_ioctl(self->fd2, KIOENABLE, (void *)1));
	ASSERT_EQ(0, st_disable(self->fd));
}

/* Mode neither TRACE_PC nor TRACE_CMP: EINVAL, and still READY. */
TEST_F(okcov, enable_bad_mode)
{
	static const int modes[] = { KCOV_MODE_NONE, 3, 4, -1, INT_MAX,
				     INT_MIN, 0x101 };
	size_t i;

	ASSERT_EQ(0, st_setbufsize(self->fd, 16));
	for (i = 0; i < ARRAY_SIZE(modes); i++) {
		ASSERT_EQ(EINVAL, st_enable(self->fd, modes[i])) {
			TH_LOG("mode %d", modes[i]);
		}
	}
	ASSERT_EQ(EBUSY, st_disable(self->fd));
	ASSERT_EQ(0, st_enable(self->fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(0, st_disable(self->fd));
}

/* The mode argument is an int: the upper bytes of a long are not read. */
TEST_F(okcov, enable_mode_is_int)
{
	uint64_t mode = 0xffffffff00000000ULL | KCOV_MODE_TRACE_CMP;

	ASSERT_EQ(0, st_setbufsize(self->fd, 16));
	ASSERT_EQ(0, st_ioctl(self->fd, KIOENABLE, &mode));
	ASSERT_EQ(0, st_disable(self->fd));
}

/* Both modes are accepted on a READY descriptor. */
TEST_F(okcov, enable_modes)
{
	ASSERT_EQ(0, st_setbufsize(self->fd, 16));
	ASSERT_EQ(0, st_enable(self->fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(0, st_disable(self->fd));
	ASSERT_EQ(0, st_enable(self->fd, KCOV_MODE_TRACE_CMP));
	ASSERT_EQ(0, st_disable(self->fd));
}

/* Double enable on one descriptor: EBUSY (the thread is attached). */
TEST_F(okcov, enable_twice)
{
	ASSERT_EQ(0, st_setbufsize(self->fd, 16));
	ASSERT_EQ(0, st_enable(self->fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(EBUSY, st_enable(self->fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(EBUSY, st_enable(self->fd, KCOV_MODE_TRACE_CMP));
	ASSERT_EQ(EBUSY, st_enable_legacy(self->fd));
	ASSERT_EQ(EBUSY, st_enable(self->fd, 3));
	ASSERT_EQ(0, st_disable(self->fd));
}

/* A second descriptor in an attached thread: EBUSY, even with a bad mode
 * (the thread check comes before the mode check).
 */
TEST_F(okcov, enable_second_fd_same_thread)
{
	ASSERT_EQ(0, st_setbufsize(self->fd, 16));
	self->fd2 = st_open();
	ASSERT_LE(0, self->fd2);
	ASSERT_EQ(0, st_setbufsize(self->fd2, 16));

	ASSERT_EQ(0, st_enable(self->fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(EBUSY, st_enable(self->fd2, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(EBUSY, st_enable(self->fd2, KCOV_MODE_TRACE_CMP));
	ASSERT_EQ(EBUSY, st_enable_legacy(self->fd2));
	ASSERT_EQ(EBUSY, st_enable(self->fd2, 3));
	/* fd2 is untouched: READY, and usable once fd is disabled. */
	ASSERT_EQ(EBUSY, st_disable(self->fd2));
	ASSERT_EQ(0, st_disable(self->fd));
	ASSERT_EQ(0, st_enable(self->fd2, KCOV_MODE_TRACE_CMP));
	ASSERT_EQ(0, st_disable(self->fd2));
}

static int thread_enable_mode3(void *arg)
{
	return st_enable(*(int *)arg, 3);
}

/* A descriptor in TRACE cannot be enabled by another thread: EBUSY, also
 * with a bad mode (state before mode).
 */
TEST_F(okcov, enable_traced_fd_other_thread)
{
	ASSERT_EQ(0, st_setbufsize(self->fd, 16));
	ASSERT_EQ(0, st_enable(self->fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(EBUSY, st_in_thread(st_thread_enable_pc, &self->fd));
	ASSERT_EQ(EBUSY, st_in_thread(thread_enable_mode3, &self->fd));
	ASSERT_EQ(0, st_disable(self->fd));
	/* Once READY again, another thread may enable it. */
	ASSERT_EQ(0, st_in_thread(st_thread_enable_pc, &self->fd));
}

/* KIODISABLE when not enabled: EBUSY in NONE and in READY. */
TEST_F(okcov, disable_not_enabled)
{
	ASSERT_EQ(EBUSY, st_disable(self->fd));
	ASSERT_EQ(0, st_setbufsize(self->fd, 16));
	ASSERT_EQ(EBUSY, st_disable(self->fd));
	ASSERT_EQ(0, st_enable(self->fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(0, st_disable(self->fd));
	ASSERT_EQ(EBUSY, st_disable(self->fd));
}

/* KIODISABLE from a thread that is not the attached one: EBUSY. */
TEST_F(okcov, disable_other_thread)
{
	ASSERT_EQ(0, st_setbufsize(self->fd, 16));
	ASSERT_EQ(0, st_enable(self->fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(EBUSY, st_in_thread(st_thread_disable, &self->fd));
	/* Still attached to this thread. */
	ASSERT_EQ(EBUSY, st_enable(self->fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(0, st_disable(self->fd));
}

/* KIODISABLE of a READY descriptor by a thread attached to another. */
TEST_F(okcov, disable_wrong_fd)
{
	ASSERT_EQ(0, st_setbufsize(self->fd, 16));
	self->fd2 = st_open();
	ASSERT_LE(0, self->fd2);
	ASSERT_EQ(0, st_setbufsize(self->fd2, 16));
	ASSERT_EQ(0, st_enable(self->fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(EBUSY, st_disable(self->fd2));
	ASSERT_EQ(0, st_disable(self->fd));
}

/* Any other command: ENOTTY, in every state. */
static const struct {
	unsigned long cmd;
	const char *name;
} unknown_cmds[] = {
	{ 0, "0" },
	{ _IO('K', 0), "_IO('K', 0)" },
	{ _IO('K', 1), "_IO('K', 1)" },
	{ _IO('K', 4), "_IO('K', 4)" },
	{ _IOW('K', 1, int), "_IOW('K', 1, int)" },
	{ _IOW('K', 1, __u32), "_IOW('K', 1, __u32)" },
	{ _IOR('K', 1, __u64), "_IOR('K', 1, __u64)" },
	{ _IOWR('K', 1, __u64), "_IOWR('K', 1, __u64)" },
	{ _IOW('K', 2, __u64), "_IOW('K', 2, __u64)" },
	{ _IOR('K', 2, int), "_IOR('K', 2, int)" },
	{ _IOW('K', 3, int), "_IOW('K', 3, int)" },
	{ _IOW('K', 4, int), "_IOW('K', 4, int)" },
	{ _IO('k', 2), "_IO('k', 2)" },
	{ _IOW('k', 1, __u64), "_IOW('k', 1, __u64)" },
	{ 0x4b02 | 0x10000, "_IO('K', 2) | 0x10000" },
	{ 0xffffffffUL, "0xffffffff" },
};

static void check_unknown(struct __test_metadata *_metadata, int fd)
{
	uint64_t arg[2] = { 16, 16 };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(unknown_cmds); i++) {
		ASSERT_EQ(ENOTTY, st_ioctl(fd, unknown_cmds[i].cmd, arg)) {
			TH_LOG("cmd %s = %#lx", unknown_cmds[i].name,
		       unknown_cmds[i].cmd);
		}
	}
}

TEST_F(okcov, unknown_command)
{
	check_unknown(_metadata, self->fd);		/* NONE */
	ASSERT_EQ(EBUSY, st_enable(self->fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(0, st_setbufsize(self->fd, 16));
	check_unknown(_metadata, self->fd);		/* READY */
	ASSERT_EQ(0, st_enable(self->fd, KCOV_MODE_TRACE_PC));
	check_unknown(_metadata, self->fd);		/* TRACE */
	ASSERT_EQ(0, st_disable(self->fd));
}

/*
 * The legacy _IO('K', 2) enable: TRACE_PC, argument ignored, even when it
 * points to a valid mode of another kind (TRACE_CMP would record no PC).
 */
TEST_F(okcov, legacy_enable)
{
	struct st_cov c = { .fd = self->fd, .n = 1024 };
	int cmp = KCOV_MODE_TRACE_CMP;

	ASSERT_EQ(0, ksyms_load());
	ASSERT_EQ(0, st_setbufsize(self->fd, c.n));
	c.buf = st_map(self->fd, c.n);
	ASSERT_NE(MAP_FAILED, c.buf);
	ASSERT_EQ(0, st_ioctl(self->fd, KIOENABLE_LEGACY, (void *)1));
	ASSERT_EQ(EBUSY, st_enable_legacy(self->fd));
	ASSERT_EQ(EBUSY, st_enable(self->fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(0, st_disable(self->fd));
	ASSERT_EQ(0, st_ioctl(self->fd, KIOENABLE_LEGACY, &cmp));
	st_reset(&c);
	sys_getpid_n(5);
	ASSERT_EQ(0, st_disable(self->fd));
	ASSERT_TRUE(st_has_syscall(&c, "getpid")) {
		st_dump(&c, 64);
	}
	ASSERT_EQ(0, st_enable_legacy(self->fd));
	ASSERT_EQ(0, st_disable(self->fd));
	munmap(c.buf, st_map_len(c.n));
}

/* The device is 0600 root:root. */
TEST(device_node)
{
	struct stat st;

	ASSERT_EQ(0, stat(OKCOV_PATH, &st));
	ASSERT_TRUE(S_ISCHR(st.st_mode));
	ASSERT_EQ(0600, st.st_mode & 07777);
	ASSERT_EQ(0, st.st_uid);
	ASSERT_EQ(0, st.st_gid);
}

/* A non-root open: EACCES. */
TEST(non_root_open)
{
	int status, rw, ro;
	pid_t pid;

	if (geteuid() != 0)
		SKIP(return, "must run as root");

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(100);
		rw = open(OKCOV_PATH, O_RDWR);
		rw = rw < 0 ? errno : 0;
		ro = open(OKCOV_PATH, O_RDONLY);
		ro = ro < 0 ? errno : 0;
		_exit(rw == EACCES && ro == EACCES ? 0 : rw == EACCES ? 2 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status)) {
		TH_LOG("child: %s", WEXITSTATUS(status) == 100 ?
		       "could not drop privileges" :
		       WEXITSTATUS(status) == 1 ? "O_RDWR open was not EACCES" :
		       "O_RDONLY open was not EACCES");
	}
}

TEST_HARNESS_MAIN
