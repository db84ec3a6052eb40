// SPDX-License-Identifier: GPL-2.0
/*
 * Linux's kcov ABI at /sys/kernel/debug/kcov, written against Linux's
 * kernel/kcov.c (6.1 and 7.3 read side by side) and not against okcov: the
 * same binary must pass on the `kcov` kernel, where the kernel's own kcov
 * answers, and on stock kernels, where okcov's Linux personality does.
 * Skipped when the file does not exist.
 *
 * Each group follows the order in which kcov.c checks its conditions:
 *   KCOV_INIT_TRACE  size (< 2 or > INT_MAX / 8: EINVAL), then state
 *                    (already initialised: EBUSY);
 *   KCOV_ENABLE      state (not exactly initialised: EINVAL), then the
 *                    thread (this fd or this thread already tracing:
 *                    EBUSY), then the mode (EINVAL; TRACE_CMP may be
 *                    ENOTSUPP without CONFIG_KCOV_ENABLE_COMPARISONS,
 *                    and is under okcov while no instrumented module is
 *                    loaded: okcov_linux_cmp tests both sides);
 *   KCOV_DISABLE     arg != 0 or not this thread's kcov: EINVAL;
 *   KCOV_REMOTE_ENABLE  num_handles unreadable (EFAULT), above
 *                    KCOV_REMOTE_MAX_HANDLES (EINVAL), the whole argument
 *                    unreadable (EFAULT), then as KCOV_ENABLE, then the
 *                    handles (kcov_check_handle(): EINVAL, and the fd goes
 *                    back to initialised);
 *   anything else    ENOTTY;
 *   mmap             no area, offset != 0 or a (page-rounded) length other
 *                    than size * 8: EINVAL.
 *
 * 6.1 and 7.x differ in one place: 6.1 (and 6.12) remote-enable takes the
 * thread's one kcov slot (t->kcov), 7.x has a separate t->kcov_remote. So
 * "a thread tracing with KCOV_ENABLE calls KCOV_REMOTE_ENABLE on another
 * fd" and the reverse are EBUSY on 6.1 and 0 on 7.3; see remote_and_local.
 */
#include <limits.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "okcov_linux.h"

#define NENT		(64UL << 10)
#define HANDLE_1	kcov_remote_handle(KCOV_SUBSYSTEM_COMMON, 1)
#define HANDLE_2	kcov_remote_handle(KCOV_SUBSYSTEM_COMMON, 2)

/* An fd initialised with n entries (mapping is optional in Linux). */
static int lk_new(unsigned long n)
{
	int fd = lk_open();

	if (fd < 0)
		return -1;
	if (lk_init(fd, n)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The mmap errno, or 0 (and the mapping undone). */
static int lk_mmap_err(int fd, size_t len, int prot, off_t off)
{
	void *p = mmap(NULL, len, prot, MAP_SHARED, fd, off);

	if (p == MAP_FAILED)
		return errno;
	munmap(p, len);
	return 0;
}

FIXTURE(lk) {
	int fd;
	int fd2;
};

FIXTURE_SETUP(lk)
{
	self->fd = -1;
	self->fd2 = -1;
	if (lk_unusable())
		LK_SKIP_ALL("%s", lk_unusable());
	self->fd = lk_open();
	if (self->fd < 0)
		TH_LOG("open %s: %s", LK_PATH, strerror(errno));
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(lk)
{
	if (self->fd2 >= 0)
		close(self->fd2);
	if (self->fd >= 0)
		close(self->fd);
}

/* ---- KCOV_INIT_TRACE: the size by value ---- */

/* Below 2 (word 0 and one PC) or above INT_MAX / 8: EINVAL. */
TEST_F(lk, init_bounds)
{
	ASSERT_EQ(EINVAL, lk_init(self->fd, 0));
	ASSERT_EQ(EINVAL, lk_init(self->fd, 1));
	ASSERT_EQ(EINVAL, lk_init(self->fd, INT_MAX / 8 + 1UL));
	ASSERT_EQ(EINVAL, lk_init(self->fd, (1UL << 32) + 2));
	ASSERT_EQ(EINVAL, lk_init(self->fd, ~0UL));
	/* the refusals left the fd uninitialised */
	ASSERT_EQ(EINVAL, lk_enable(self->fd, KCOV_TRACE_PC));
	ASSERT_EQ(0, lk_init(self->fd, 2));
}

/* syzkaller's extra and snapshot descriptors: 1 << 20 entries, mapped. */
TEST_F(lk, init_1m)
{
	uint64_t *buf;

	ASSERT_EQ(0, lk_init(self->fd, 1UL << 20));
	buf = lk_map(self->fd, 1UL << 20, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);
	buf[(1UL << 20) - 1] = 1;
	munmap(buf, 8UL << 20);
}

/* A second INIT: EBUSY, but the size is checked first (EINVAL). */
TEST_F(lk, init_twice)
{
	ASSERT_EQ(0, lk_init(self->fd, 16));
	ASSERT_EQ(EBUSY, lk_init(self->fd, 16));
	ASSERT_EQ(EBUSY, lk_init(self->fd, 1UL << 20));
	ASSERT_EQ(EINVAL, lk_init(self->fd, 0));
	ASSERT_EQ(EINVAL, lk_init(self->fd, 1));
	ASSERT_EQ(EINVAL, lk_init(self->fd, INT_MAX / 8 + 1UL));
}

/* Enabled, then disabled (initialised again): still EBUSY. */
TEST_F(lk, init_after_enable)
{
	ASSERT_EQ(0, lk_init(self->fd, 16));
	ASSERT_EQ(0, lk_enable(self->fd, KCOV_TRACE_PC));
	ASSERT_EQ(EBUSY, lk_init(self->fd, 16));
	ASSERT_EQ(EINVAL, lk_init(self->fd, 1));
	ASSERT_EQ(0, lk_disable(self->fd));
	ASSERT_EQ(EBUSY, lk_init(self->fd, 16));
}

/* ---- KCOV_ENABLE: the mode by value ---- */

/* Before INIT: EINVAL whatever the mode (the state is checked first). */
TEST_F(lk, enable_before_init)
{
	ASSERT_EQ(EINVAL, lk_enable(self->fd, KCOV_TRACE_PC));
	ASSERT_EQ(EINVAL, lk_enable(self->fd, KCOV_TRACE_CMP));
	ASSERT_EQ(EINVAL, lk_enable(self->fd, 2));
}

/* Modes other than 0 and 1: EINVAL, and the fd stays initialised. */
TEST_F(lk, enable_bad_mode)
{
	ASSERT_EQ(0, lk_init(self->fd, 16));
	ASSERT_EQ(EINVAL, lk_enable(self->fd, 2));
	ASSERT_EQ(EINVAL, lk_enable(self->fd, ~0UL));
	ASSERT_EQ(EINVAL, lk_enable(self->fd, 1UL << 32));
	ASSERT_EQ(0, lk_enable(self->fd, KCOV_TRACE_PC));
	ASSERT_EQ(0, lk_disable(self->fd));
}

/*
 * KCOV_TRACE_CMP: 0, or ENOTSUPP without comparison support (okcov: no
 * instrumented module loaded).
 */
TEST_F(lk, enable_cmp)
{
	int err;

	ASSERT_EQ(0, lk_init(self->fd, 64));
	err = lk_enable(self->fd, KCOV_TRACE_CMP);
	ASSERT_TRUE(err == 0 || err == ENOTSUPP) {
		TH_LOG("KCOV_ENABLE(KCOV_TRACE_CMP): %d", err);
	}
	if (!err)
		ASSERT_EQ(0, lk_disable(self->fd));
}

/* ENABLE needs no mapping: the area exists from INIT on. */
TEST_F(lk, enable_without_mmap)
{
	uint64_t *buf;

	ASSERT_EQ(0, lk_init(self->fd, NENT));
	ASSERT_EQ(0, lk_enable(self->fd, KCOV_TRACE_PC));
	sys_getpid_n(1);
	ASSERT_EQ(0, lk_disable(self->fd));
	/* and the records are there once mapped */
	buf = lk_map(self->fd, NENT, PROT_READ);
	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_LT(0, buf[0]);
	munmap(buf, NENT * 8);
}

/* An enabled fd again from the same thread: EINVAL (state first). */
TEST_F(lk, enable_twice)
{
	ASSERT_EQ(0, lk_init(self->fd, 16));
	ASSERT_EQ(0, lk_enable(self->fd, KCOV_TRACE_PC));
	ASSERT_EQ(EINVAL, lk_enable(self->fd, KCOV_TRACE_PC));
	ASSERT_EQ(EINVAL, lk_enable(self->fd, 2));
	ASSERT_EQ(0, lk_disable(self->fd));
	/* disabled: initialised again, enabled again */
	ASSERT_EQ(0, lk_enable(self->fd, KCOV_TRACE_PC));
	ASSERT_EQ(0, lk_disable(self->fd));
}

static int enable_pc(void *arg)
{
	return lk_enable(*(int *)arg, KCOV_TRACE_PC);
}

static int disable(void *arg)
{
	return lk_disable(*(int *)arg);
}

/* An fd enabled by this thread, from another thread: EINVAL, not EBUSY. */
TEST_F(lk, enable_enabled_other_thread)
{
	ASSERT_EQ(0, lk_init(self->fd, 16));
	ASSERT_EQ(0, lk_enable(self->fd, KCOV_TRACE_PC));
	ASSERT_EQ(EINVAL, st_in_thread(enable_pc, &self->fd));
	ASSERT_EQ(0, lk_disable(self->fd));
}

/* ... and from a forked child (which starts with no kcov): EINVAL. */
TEST_F(lk, enable_enabled_child)
{
	int status;
	pid_t pid;

	ASSERT_EQ(0, lk_init(self->fd, 16));
	ASSERT_EQ(0, lk_enable(self->fd, KCOV_TRACE_PC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(lk_enable(self->fd, KCOV_TRACE_PC));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(EINVAL, WEXITSTATUS(status));
	ASSERT_EQ(0, lk_disable(self->fd));
}

/* A thread that already traces into one fd enables another: EBUSY. */
TEST_F(lk, enable_thread_busy)
{
	self->fd2 = lk_new(16);
	ASSERT_LE(0, self->fd2);
	ASSERT_EQ(0, lk_init(self->fd, 16));
	ASSERT_EQ(0, lk_enable(self->fd, KCOV_TRACE_PC));
	ASSERT_EQ(EBUSY, lk_enable(self->fd2, KCOV_TRACE_PC));
	/* the thread is checked before the mode */
	ASSERT_EQ(EBUSY, lk_enable(self->fd2, 2));
	/* another thread may enable fd2 meanwhile */
	ASSERT_EQ(0, st_in_thread(enable_pc, &self->fd2));
	ASSERT_EQ(0, lk_disable(self->fd));
}

/* A thread that exits while enabled releases its fd (kcov_task_exit()). */
TEST_F(lk, enable_after_thread_exit)
{
	ASSERT_EQ(0, lk_init(self->fd, 16));
	ASSERT_EQ(0, st_in_thread(enable_pc, &self->fd));
	ASSERT_EQ(0, lk_enable(self->fd, KCOV_TRACE_PC));
	ASSERT_EQ(0, lk_disable(self->fd));
}

/*
 * Closing an enabled fd does not detach it: the thread keeps tracing into
 * the area (still mapped) until it disables or exits, and another fd
 * finds it busy.
 */
static int close_enabled(void *unused)
{
	uint64_t *buf, before;
	int fd = lk_new(NENT), fd2, err = 0;

	if (fd < 0)
		return -2;
	buf = lk_map(fd, NENT, PROT_READ | PROT_WRITE);
	if (buf == MAP_FAILED || lk_enable(fd, KCOV_TRACE_PC))
		return -3;
	close(fd);
	buf[0] = 0;
	sys_getpid_n(1);
	before = __atomic_load_n(&buf[0], __ATOMIC_RELAXED);
	if (!before)
		err = -4;
	fd2 = lk_new(16);
	if (fd2 < 0)
		return -5;
	if (!err)
		err = lk_enable(fd2, KCOV_TRACE_PC);
	close(fd2);
	munmap(buf, NENT * 8);
	return err;
}

TEST_F(lk, close_keeps_enabled)
{
	ASSERT_EQ(EBUSY, st_in_thread(close_enabled, NULL));
}

/* ---- KCOV_DISABLE ---- */

/* arg != 0: EINVAL, and the fd stays enabled. */
TEST_F(lk, disable_arg)
{
	ASSERT_EQ(0, lk_init(self->fd, 16));
	ASSERT_EQ(0, lk_enable(self->fd, KCOV_TRACE_PC));
	ASSERT_EQ(EINVAL, st_ret(ioctl(self->fd, KCOV_DISABLE, 1UL)));
	ASSERT_EQ(EINVAL, st_ret(ioctl(self->fd, KCOV_DISABLE, ~0UL)));
	ASSERT_EQ(EINVAL, lk_enable(self->fd, KCOV_TRACE_PC));
	ASSERT_EQ(0, lk_disable(self->fd));
}

/* Not enabled (fresh, or initialised): EINVAL. */
TEST_F(lk, disable_not_enabled)
{
	ASSERT_EQ(EINVAL, lk_disable(self->fd));
	ASSERT_EQ(0, lk_init(self->fd, 16));
	ASSERT_EQ(EINVAL, lk_disable(self->fd));
}

/* From a thread that did not enable it: EINVAL. */
TEST_F(lk, disable_other_thread)
{
	ASSERT_EQ(0, lk_init(self->fd, 16));
	ASSERT_EQ(0, lk_enable(self->fd, KCOV_TRACE_PC));
	ASSERT_EQ(EINVAL, st_in_thread(disable, &self->fd));
	ASSERT_EQ(0, lk_disable(self->fd));
}

/* Through another fd than the one this thread traces into: EINVAL. */
TEST_F(lk, disable_other_fd)
{
	self->fd2 = lk_new(16);
	ASSERT_LE(0, self->fd2);
	ASSERT_EQ(0, lk_init(self->fd, 16));
	ASSERT_EQ(0, lk_enable(self->fd, KCOV_TRACE_PC));
	ASSERT_EQ(EINVAL, lk_disable(self->fd2));
	ASSERT_EQ(0, lk_disable(self->fd));
}

/* Twice: EINVAL the second time. */
TEST_F(lk, disable_twice)
{
	ASSERT_EQ(0, lk_init(self->fd, 16));
	ASSERT_EQ(0, lk_enable(self->fd, KCOV_TRACE_PC));
	ASSERT_EQ(0, lk_disable(self->fd));
	ASSERT_EQ(EINVAL, lk_disable(self->fd));
}

/* ---- other commands ---- */

static const unsigned long unknown_cmds[] = {
	_IO('c', 0), _IO('c', 1), _IOR('c', 1, __u32), _IOW('c', 1, __u64),
	_IO('c', 2), _IOW('c', 100, int), _IO('c', 103), _IO('c', 105),
	_IO('c', 255), _IO('K', 1), _IOW('K', 1, __u64), _IOW('K', 2, __s32),
	_IO('K', 3),
};

/* Unknown commands (OpenBSD's too): ENOTTY in every state. */
TEST_F(lk, unknown_cmd)
{
	size_t i;
	int state;

	for (state = 0; state < 3; state++) {
		if (state == 1)
			ASSERT_EQ(0, lk_init(self->fd, 16));
		if (state == 2)
			ASSERT_EQ(0, lk_enable(self->fd, KCOV_TRACE_PC));
		for (i = 0; i < ARRAY_SIZE(unknown_cmds); i++) {
			ASSERT_EQ(ENOTTY, st_ret(ioctl(self->fd,
						       unknown_cmds[i], 0UL))) {
				TH_LOG("cmd 0x%lx, state %d", unknown_cmds[i],
				       state);
			}
		}
	}
	ASSERT_EQ(0, lk_disable(self->fd));
}

/*
 * KCOV_RESET_TRACE (syzkaller probes it; anything but 0 or ENOTTY is fatal
 * to its executor): ENOTTY, or 0 and word 0 really went back.
 */
TEST_F(lk, reset_trace)
{
	uint64_t *buf, before, after;
	int err;

	ASSERT_EQ(0, lk_init(self->fd, NENT));
	buf = lk_map(self->fd, NENT, PROT_READ);
	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_EQ(0, lk_enable(self->fd, KCOV_TRACE_PC));
	sys_getpid_n(200);
	before = __atomic_load_n(&buf[0], __ATOMIC_RELAXED);
	err = st_ret(ioctl(self->fd, KCOV_RESET_TRACE, 0UL));
	after = __atomic_load_n(&buf[0], __ATOMIC_RELAXED);
	ASSERT_EQ(0, lk_disable(self->fd));
	munmap(buf, NENT * 8);
	ASSERT_TRUE(err == 0 || err == ENOTTY) {
		TH_LOG("KCOV_RESET_TRACE: %d", err);
	}
	ASSERT_LE(200, before);
	if (!err)	/* a few records of the ioctl's own return at most */
		ASSERT_GT(before / 2, after);
}

/* ---- mmap ---- */

/* Before INIT there is no area: EINVAL. */
TEST_F(lk, mmap_before_init)
{
	size_t ps = st_page_size();

	ASSERT_EQ(EINVAL, lk_mmap_err(self->fd, ps, PROT_READ | PROT_WRITE, 0));
	ASSERT_EQ(EINVAL, lk_mmap_err(self->fd, ps, PROT_READ, 0));
}

/* Offset != 0: EINVAL, even inside the area. */
TEST_F(lk, mmap_offset)
{
	size_t ps = st_page_size();

	ASSERT_EQ(0, lk_init(self->fd, 2 * ps / 8));
	ASSERT_EQ(EINVAL, lk_mmap_err(self->fd, ps, PROT_READ, ps));
	ASSERT_EQ(EINVAL, lk_mmap_err(self->fd, 2 * ps, PROT_READ, ps));
	ASSERT_EQ(0, lk_mmap_err(self->fd, 2 * ps, PROT_READ, 0));
}

/*
 * The length, page-rounded by mmap itself, must be the area (size * 8):
 * shorter or longer is EINVAL, a length that rounds up to it is fine.
 */
TEST_F(lk, mmap_length)
{
	size_t ps = st_page_size();
	int rw = PROT_READ | PROT_WRITE;

	ASSERT_EQ(0, lk_init(self->fd, 2 * ps / 8));
	ASSERT_EQ(EINVAL, lk_mmap_err(self->fd, ps, rw, 0));
	ASSERT_EQ(EINVAL, lk_mmap_err(self->fd, 3 * ps, rw, 0));
	ASSERT_EQ(EINVAL, lk_mmap_err(self->fd, 2 * ps + 1, rw, 0));
	ASSERT_EQ(0, lk_mmap_err(self->fd, 2 * ps, rw, 0));
	ASSERT_EQ(0, lk_mmap_err(self->fd, 2 * ps - 1, rw, 0));
	ASSERT_EQ(0, lk_mmap_err(self->fd, ps + 1, rw, 0));
}

/*
 * A size that is not a multiple of PAGE_SIZE / 8: the area is not a whole
 * number of pages and no vma length equals it, so Linux never maps it.
 */
TEST_F(lk, mmap_unaligned_size)
{
	size_t ps = st_page_size();
	unsigned long n = ps / 8 + 1;

	ASSERT_EQ(0, lk_init(self->fd, n));
	ASSERT_EQ(EINVAL, lk_mmap_err(self->fd, n * 8, PROT_READ, 0));
	ASSERT_EQ(EINVAL, lk_mmap_err(self->fd, 2 * ps, PROT_READ, 0));
	ASSERT_EQ(EINVAL, lk_mmap_err(self->fd, ps, PROT_READ, 0));
	/* it still traces */
	ASSERT_EQ(0, lk_enable(self->fd, KCOV_TRACE_PC));
	ASSERT_EQ(0, lk_disable(self->fd));
}

/* PROT_READ mappings work and see the records. */
TEST_F(lk, mmap_read_only)
{
	uint64_t *buf;

	ASSERT_EQ(0, lk_init(self->fd, NENT));
	buf = lk_map(self->fd, NENT, PROT_READ);
	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_EQ(0, lk_enable(self->fd, KCOV_TRACE_PC));
	sys_getpid_n(1);
	ASSERT_EQ(0, lk_disable(self->fd));
	ASSERT_LT(0, buf[0]);
	munmap(buf, NENT * 8);
}

/* Two mappings of one fd (syzkaller's probe) share the area. */
TEST_F(lk, mmap_twice)
{
	uint64_t *a, *b;

	ASSERT_EQ(0, lk_init(self->fd, NENT));
	a = lk_map(self->fd, NENT, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, a);
	b = lk_map(self->fd, NENT, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, b);
	ASSERT_NE(a, b);
	ASSERT_EQ(0, lk_enable(self->fd, KCOV_TRACE_PC));
	a[0] = 0;
	sys_getpid_n(1);
	ASSERT_EQ(0, lk_disable(self->fd));
	ASSERT_LT(0, a[0]);
	ASSERT_EQ(a[0], b[0]);
	ASSERT_EQ(a[1], b[1]);
	b[NENT - 1] = 0x5eed;
	ASSERT_EQ(0x5eed, a[NENT - 1]);
	munmap(a, NENT * 8);
	munmap(b, NENT * 8);
}

/* Mapping while enabled and after disabling works too. */
TEST_F(lk, mmap_any_state)
{
	ASSERT_EQ(0, lk_init(self->fd, NENT));
	ASSERT_EQ(0, lk_enable(self->fd, KCOV_TRACE_PC));
	ASSERT_EQ(0, lk_mmap_err(self->fd, NENT * 8, PROT_READ, 0));
	ASSERT_EQ(0, lk_disable(self->fd));
	ASSERT_EQ(0, lk_mmap_err(self->fd, NENT * 8, PROT_READ, 0));
}

/* ---- coverage ---- */

FIXTURE(cov) {
	int fd;
	uint64_t *buf;
	uint64_t off;
};

FIXTURE_SETUP(cov)
{
	self->fd = -1;
	self->buf = MAP_FAILED;
	if (lk_unusable())
		LK_SKIP_ALL("%s", lk_unusable());
	ASSERT_EQ(0, ksyms_load());
	self->off = lk_kaslr_offset();
	self->fd = lk_new(NENT);
	ASSERT_LE(0, self->fd);
	self->buf = lk_map(self->fd, NENT, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, self->buf);
}

FIXTURE_TEARDOWN(cov)
{
	if (self->buf != MAP_FAILED)
		munmap(self->buf, NENT * 8);
	if (self->fd >= 0)
		close(self->fd);
}

static uint64_t nrec(const uint64_t *buf)
{
	uint64_t n = __atomic_load_n(&buf[0], __ATOMIC_RELAXED);

	return n < NENT ? n : NENT - 1;
}

static void dump(const uint64_t *buf, uint64_t off)
{
	uint64_t i, n = nrec(buf);
	char name[256];

	fprintf(stderr, "# %llu records (KASLR offset 0x%llx), pc - %d:\n",
		(unsigned long long)n, (unsigned long long)off, LK_PC_BACK);
	for (i = 0; i < n && i < 64; i++)
		fprintf(stderr, "#   0x%llx %s\n", (unsigned long long)buf[i + 1],
			ksyms_format(buf[i + 1] + off - LK_PC_BACK, name,
				     sizeof(name)));
}

static bool getpid_path(const struct ksym *s, const void *unused)
{
	return ksym_is_syscall(s, "getpid") ||
	       !strcmp(s->name, "__task_pid_nr_ns");
}

static bool getppid_fn(const struct ksym *s, const void *unused)
{
	return ksym_is_syscall(s, "getppid");
}

/* Records whose pc + off - 5 lies in a function satisfying pred. */
static size_t hits(const uint64_t *buf, uint64_t off,
		   bool (*pred)(const struct ksym *, const void *))
{
	uint64_t i, n = nrec(buf);
	size_t h = 0;

	for (i = 0; i < n; i++)
		if (ksyms_pc_matches(buf[i + 1] + off - LK_PC_BACK, pred, NULL))
			h++;
	return h;
}

/* Records of a getpid-path function whose pc - 5 falls before it. */
static size_t spills(const uint64_t *buf, uint64_t off)
{
	uint64_t i, n = nrec(buf), pc;
	size_t h = 0;

	for (i = 0; i < n; i++) {
		pc = buf[i + 1] + off;
		if (ksyms_pc_matches(pc, getpid_path, NULL) &&
		    ksyms_lookup(pc, NULL) != ksyms_lookup(pc - LK_PC_BACK, NULL))
			h++;
	}
	return h;
}

/*
 * getpid(): records, all inside syzkaller's kernel range, and once the
 * KASLR offset is added back, pc - 5 lands inside the getpid path, never
 * in the function before one of its functions.
 */
TEST_F(cov, getpid)
{
	uint64_t i, n;

	ASSERT_EQ(0, lk_enable(self->fd, KCOV_TRACE_PC));
	self->buf[0] = 0;
	sys_getpid_n(1);
	ASSERT_EQ(0, lk_disable(self->fd));
	n = nrec(self->buf);
	ASSERT_LT(0, n);
	for (i = 0; i < n; i++)
		ASSERT_TRUE(lk_pc_canonical(self->buf[i + 1])) {
			TH_LOG("record %llu: 0x%llx", (unsigned long long)i,
			       (unsigned long long)self->buf[i + 1]);
		}
	ASSERT_LT(0, hits(self->buf, self->off, getpid_path)) {
		dump(self->buf, self->off);
	}
	ASSERT_EQ(0, spills(self->buf, self->off)) {
		dump(self->buf, self->off);
	}
}

/* Without the offset added back, a KASLR kernel's PCs resolve wrongly:
 * make sure the offset is the one Linux uses (the records shift with it).
 */
TEST_F(cov, kaslr_offset)
{
	uint64_t text = lk_text();

	ASSERT_NE(0, text);
	ASSERT_EQ(0, (text - LK_START_KERNEL) & 0xfff);
	ASSERT_EQ(0, lk_enable(self->fd, KCOV_TRACE_PC));
	self->buf[0] = 0;
	sys_getpid_n(1);
	ASSERT_EQ(0, lk_disable(self->fd));
	if (self->off)
		ASSERT_EQ(0, hits(self->buf, 0, getpid_path)) {
			dump(self->buf, 0);
		}
	ASSERT_LT(0, hits(self->buf, self->off, getpid_path));
}

/*
 * Call sites (module parameter call_sites, on by default): the record
 * before the entry of getppid's first function (__x64_sys_getppid, or
 * __do_sys_getppid where x64_sys_call() inlines the wrapper) is its call
 * site in the syscall dispatcher, less the KASLR offset like every PC, so
 * that pc - 5 lands on the call.
 */
TEST_F(cov, call_site)
{
	uint64_t i, n, pc, site;
	const struct ksym *s;
	bool found = false;
	char name[256];

	if (lk_native())
		SKIP(return, "the kernel's own kcov answers: no call sites");
	ASSERT_EQ(0, lk_enable(self->fd, KCOV_TRACE_PC));
	self->buf[0] = 0;
	syscall(SYS_getppid);
	ASSERT_EQ(0, lk_disable(self->fd));
	n = nrec(self->buf);
	for (i = 1; i < n && !found; i++) {
		pc = self->buf[i + 1] + self->off - LK_PC_BACK;
		s = ksyms_lookup(pc, NULL);
		if (!s || !ksyms_pc_matches(pc, ksym_is_syscall, "getppid") ||
		    (pc - s->addr != 0 && pc - s->addr != 4))
			continue;
		found = true;
		site = self->buf[i] + self->off;
		ASSERT_TRUE(ksyms_pc_matches(site, ksym_named, KSYM_SYS_CALLER) ||
			    ksyms_pc_matches(site, ksym_named, KSYM_SYS_CALLER2)) {
			TH_LOG("before getppid's entry: %s",
			       ksyms_format(site, name, sizeof(name)));
		}
		ASSERT_EQ(ksyms_lookup(site, NULL),
			  ksyms_lookup(site - LK_PC_BACK, NULL));
	}
	ASSERT_TRUE(found) {
		dump(self->buf, self->off);
	}
}

struct bystander {
	int stop;
	struct st_gate started;
	long calls;
};

static void *bystander_fn(void *arg)
{
	struct bystander *b = arg;

	st_gate_open(&b->started);
	while (!__atomic_load_n(&b->stop, __ATOMIC_RELAXED)) {
		syscall(SYS_getppid);
		__atomic_fetch_add(&b->calls, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* A thread's getppid loop while this thread traces getpid: absent. */
TEST_F(cov, bystander_absent)
{
	struct bystander b = { 0 };
	pthread_t th;
	long start, end;
	int i;

	/*
	 * The hook in place before the busy bystander starts (st_hook_warm()
	 * in okcov_test.h says why).
	 */
	ASSERT_EQ(0, lk_enable(self->fd, KCOV_TRACE_PC));
	ASSERT_EQ(0, lk_disable(self->fd));
	ASSERT_EQ(0, st_gate_init(&b.started));
	ASSERT_EQ(0, pthread_create(&th, NULL, bystander_fn, &b));
	st_gate_wait(&b.started);
	ASSERT_EQ(0, lk_enable(self->fd, KCOV_TRACE_PC));
	self->buf[0] = 0;
	start = __atomic_load_n(&b.calls, __ATOMIC_RELAXED);
	for (i = 0; i < 100000 &&
	     __atomic_load_n(&b.calls, __ATOMIC_RELAXED) < start + 100; i++)
		sys_getpid_n(1);
	end = __atomic_load_n(&b.calls, __ATOMIC_RELAXED);
	ASSERT_EQ(0, lk_disable(self->fd));
	__atomic_store_n(&b.stop, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	st_gate_destroy(&b.started);
	TH_LOG("bystander: %ld getppid calls meanwhile", end - start);
	ASSERT_LT(0, hits(self->buf, self->off, getpid_path));
	ASSERT_EQ(0, hits(self->buf, self->off, getppid_fn)) {
		dump(self->buf, self->off);
	}
}

/* A forked child does not inherit the tracing (kcov_task_init()). */
TEST_F(cov, child_absent)
{
	int status;
	pid_t pid;

	ASSERT_EQ(0, lk_enable(self->fd, KCOV_TRACE_PC));
	self->buf[0] = 0;
	pid = fork();
	if (pid == 0) {
		sys_getppid_n(100);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	sys_getpid_n(1);
	ASSERT_EQ(0, lk_disable(self->fd));
	ASSERT_LE(0, pid);
	ASSERT_LT(0, hits(self->buf, self->off, getpid_path));
	ASSERT_EQ(0, hits(self->buf, self->off, getppid_fn)) {
		dump(self->buf, self->off);
	}
}

/*
 * KCOV_TRACE_CMP: word 0 counts records of 4 words (type, arg1, arg2, pc)
 * and never passes the area; each type is KCOV_CMP_SIZE(0..3), maybe
 * | KCOV_CMP_CONST (syzkaller's executor fails on any other), each pc
 * canonical. The kernel's own kcov records the core kernel's comparisons;
 * okcov only those of instrumented modules, and refuses the mode
 * (ENOTSUPP: a SKIP here) while none is loaded.
 */
TEST_F(cov, cmp_records)
{
	uint64_t i, n, type;
	int err, fd;
	char b[64];

	err = lk_enable(self->fd, KCOV_TRACE_CMP);
	if (err == ENOTSUPP)
		SKIP(return, "no KCOV_TRACE_CMP here");
	ASSERT_EQ(0, err);
	self->buf[0] = 0;
	sys_getpid_n(1);
	fd = open("/proc/self/stat", O_RDONLY);
	if (fd >= 0 && read(fd, b, sizeof(b)) < 0)
		b[0] = 0;
	ASSERT_EQ(0, lk_disable(self->fd));
	if (fd >= 0)
		close(fd);
	n = self->buf[0];
	TH_LOG("%llu comparison records", (unsigned long long)n);
	ASSERT_GE((NENT - 1) / 4, n);
	for (i = 0; i < n; i++) {
		type = self->buf[4 * i + 1];
		ASSERT_EQ(0, type & ~(uint64_t)(KCOV_CMP_MASK | KCOV_CMP_CONST)) {
			TH_LOG("record %llu: type 0x%llx", (unsigned long long)i,
			       (unsigned long long)type);
		}
		ASSERT_TRUE(lk_pc_canonical(self->buf[4 * i + 4])) {
			TH_LOG("record %llu: pc 0x%llx", (unsigned long long)i,
			       (unsigned long long)self->buf[4 * i + 4]);
		}
	}
}

/* ---- KCOV_REMOTE_ENABLE ---- */

/* num_handles above KCOV_REMOTE_MAX_HANDLES: EINVAL, before the state. */
TEST_F(lk, remote_too_many_handles)
{
	struct kcov_remote_arg arg = {
		.trace_mode = KCOV_TRACE_PC,
		.area_size = NENT,
		.num_handles = KCOV_REMOTE_MAX_HANDLES + 1,
		.common_handle = HANDLE_1,
	};

	ASSERT_EQ(EINVAL, st_ret(ioctl(self->fd, KCOV_REMOTE_ENABLE, &arg)));
	ASSERT_EQ(0, lk_init(self->fd, NENT));
	ASSERT_EQ(EINVAL, st_ret(ioctl(self->fd, KCOV_REMOTE_ENABLE, &arg)));
	arg.num_handles = ~0U;
	ASSERT_EQ(EINVAL, st_ret(ioctl(self->fd, KCOV_REMOTE_ENABLE, &arg)));
}

/* An unreadable argument (or handles array): EFAULT, before the state. */
TEST_F(lk, remote_efault)
{
	size_t ps = st_page_size();
	struct kcov_remote_arg *arg;
	char *two;
	int fresh;

	two = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, two);
	ASSERT_EQ(0, mprotect(two + ps, ps, PROT_NONE));
	/* the header readable, the one handle it announces not */
	arg = (struct kcov_remote_arg *)(two + ps - sizeof(*arg));
	arg->trace_mode = KCOV_TRACE_PC;
	arg->area_size = NENT;
	arg->num_handles = 1;
	arg->common_handle = 0;
	for (fresh = 1; fresh >= 0; fresh--) {
		if (!fresh)
			ASSERT_EQ(0, lk_init(self->fd, NENT));
		ASSERT_EQ(EFAULT, st_ret(ioctl(self->fd, KCOV_REMOTE_ENABLE,
					       NULL)));
		ASSERT_EQ(EFAULT, st_ret(ioctl(self->fd, KCOV_REMOTE_ENABLE,
					       two + ps)));
		ASSERT_EQ(EFAULT, st_ret(ioctl(self->fd, KCOV_REMOTE_ENABLE,
					       arg)));
	}
	munmap(two, 2 * ps);
	/* nothing changed: the fd is initialised, not remote */
	ASSERT_EQ(0, lk_enable(self->fd, KCOV_TRACE_PC));
	ASSERT_EQ(0, lk_disable(self->fd));
}

/* Before INIT: EINVAL. */
TEST_F(lk, remote_before_init)
{
	ASSERT_EQ(EINVAL, lk_remote_enable(self->fd, KCOV_TRACE_PC, NENT,
					   HANDLE_1, 0, NULL));
}

/* A bad trace_mode: EINVAL, and the fd stays initialised. */
TEST_F(lk, remote_bad_mode)
{
	ASSERT_EQ(0, lk_init(self->fd, NENT));
	ASSERT_EQ(EINVAL, lk_remote_enable(self->fd, 2, NENT, HANDLE_1, 0,
					   NULL));
	ASSERT_EQ(EINVAL, lk_remote_enable(self->fd, ~0U, NENT, HANDLE_1, 0,
					   NULL));
	ASSERT_EQ(0, lk_remote_enable(self->fd, KCOV_TRACE_PC, NENT,
				      HANDLE_1, 0, NULL));
	ASSERT_EQ(0, lk_disable(self->fd));
}

/* Common handles kcov_check_handle(h, true, false, false) refuses. */
static const __u64 bad_common[] = {
	KCOV_SUBSYSTEM_USB | 1,			/* not common */
	KCOV_SUBSYSTEM_USB,			/* USB, instance 0 */
	(0x02ULL << 56) | 1,			/* no such subsystem */
	(0xffULL << 56) | 1,
	(1ULL << 32) | 1,			/* bits outside both masks */
	1ULL << 40,
};

/* handles[] entries it refuses whatever the USB policy: common ones. */
static const __u64 bad_uncommon[] = {
	KCOV_SUBSYSTEM_COMMON | 1,
	0,					/* common, instance 0 */
	(0x02ULL << 56) | 1,
	(1ULL << 32) | KCOV_SUBSYSTEM_USB | 1,
};

/*
 * An invalid handle: EINVAL, and kcov_disable() put the fd (and the
 * thread) back, so a valid remote enable of the same fd then works.
 */
TEST_F(lk, remote_bad_handles)
{
	size_t i;

	ASSERT_EQ(0, lk_init(self->fd, NENT));
	for (i = 0; i < ARRAY_SIZE(bad_common); i++)
		ASSERT_EQ(EINVAL, lk_remote_enable(self->fd, KCOV_TRACE_PC,
						   NENT, bad_common[i], 0,
						   NULL)) {
			TH_LOG("common_handle 0x%llx",
			       (unsigned long long)bad_common[i]);
		}
	for (i = 0; i < ARRAY_SIZE(bad_uncommon); i++)
		ASSERT_EQ(EINVAL, lk_remote_enable(self->fd, KCOV_TRACE_PC,
						   NENT, HANDLE_1, 1,
						   &bad_uncommon[i])) {
			TH_LOG("handles[0] 0x%llx",
			       (unsigned long long)bad_uncommon[i]);
		}
	ASSERT_EQ(0, lk_remote_enable(self->fd, KCOV_TRACE_PC, NENT,
				      HANDLE_1, 0, NULL));
	ASSERT_EQ(0, lk_disable(self->fd));
}

/*
 * kcov_remote_handle(KCOV_SUBSYSTEM_COMMON, 1): 0; then the fd is no
 * longer initialised (ENABLE, INIT, a second REMOTE_ENABLE refused), and
 * KCOV_DISABLE by the same thread: 0, then EINVAL.
 */
TEST_F(lk, remote_common)
{
	ASSERT_EQ(0, lk_init(self->fd, NENT));
	ASSERT_EQ(0, lk_remote_enable(self->fd, KCOV_TRACE_PC, NENT,
				      HANDLE_1, 0, NULL));
	ASSERT_EQ(EINVAL, lk_enable(self->fd, KCOV_TRACE_PC));
	ASSERT_EQ(EBUSY, lk_init(self->fd, NENT));
	ASSERT_EQ(EINVAL, lk_remote_enable(self->fd, KCOV_TRACE_PC, NENT,
					   HANDLE_1, 0, NULL));
	ASSERT_EQ(0, lk_mmap_err(self->fd, NENT * 8, PROT_READ, 0));
	ASSERT_EQ(EINVAL, st_in_thread(disable, &self->fd));
	ASSERT_EQ(EINVAL, st_ret(ioctl(self->fd, KCOV_DISABLE, 1UL)));
	ASSERT_EQ(0, lk_disable(self->fd));
	ASSERT_EQ(EINVAL, lk_disable(self->fd));
	/* initialised again: both enables work */
	ASSERT_EQ(0, lk_enable(self->fd, KCOV_TRACE_PC));
	ASSERT_EQ(0, lk_disable(self->fd));
	ASSERT_EQ(0, lk_remote_enable(self->fd, KCOV_TRACE_PC, NENT,
				      HANDLE_1, 0, NULL));
	ASSERT_EQ(0, lk_disable(self->fd));
}

/* No handle at all (common 0, no handles): accepted, as in Linux. */
TEST_F(lk, remote_no_handle)
{
	ASSERT_EQ(0, lk_init(self->fd, NENT));
	ASSERT_EQ(0, lk_remote_enable(self->fd, KCOV_TRACE_PC, NENT, 0, 0,
				      NULL));
	ASSERT_EQ(0, lk_disable(self->fd));
}

static int remote_handle_1(void *arg)
{
	return lk_remote_enable(*(int *)arg, KCOV_TRACE_PC, NENT, HANDLE_1, 0,
				NULL);
}

/*
 * A common handle is unique (kcov_remote_add(): EEXIST) while another fd
 * holds it, and free again once that fd's thread has exited.
 */
TEST_F(lk, remote_handle_in_use)
{
	self->fd2 = lk_new(NENT);
	ASSERT_LE(0, self->fd2);
	ASSERT_EQ(0, lk_init(self->fd, NENT));
	ASSERT_EQ(0, lk_remote_enable(self->fd, KCOV_TRACE_PC, NENT,
				      HANDLE_1, 0, NULL));
	ASSERT_EQ(EEXIST, st_in_thread(remote_handle_1, &self->fd2));
	/* the failure reset fd2: it still works locally */
	ASSERT_EQ(0, st_in_thread(enable_pc, &self->fd2));
	ASSERT_EQ(0, lk_disable(self->fd));
	/*
	 * okcov keeps a remote descriptor enabled after its thread exits
	 * (okcov-linux(4)): the exit part is Linux's only.
	 */
	ASSERT_EQ(0, ksyms_load());
	if (!lk_native())
		return;
	/* fd's handle is free: a thread takes it and exits with it */
	ASSERT_EQ(0, st_in_thread(remote_handle_1, &self->fd2));
	/* ... which released fd2 and the handle (kcov_task_exit()) */
	ASSERT_EQ(0, lk_remote_enable(self->fd2, KCOV_TRACE_PC, NENT,
				      HANDLE_1, 0, NULL));
	ASSERT_EQ(0, lk_disable(self->fd2));
}

static int remote_handle_2(void *arg)
{
	int err = lk_remote_enable(*(int *)arg, KCOV_TRACE_PC, NENT, HANDLE_2,
				   0, NULL);

	return err ? err : lk_disable(*(int *)arg);
}

/*
 * Remote enables are per thread, not per process: while this thread
 * holds one, another thread of the process enables a second fd with its
 * own handle: 0.
 */
TEST_F(lk, remote_two_threads)
{
	ASSERT_EQ(0, ksyms_load());
	if (!lk_native())
		SKIP(return, "okcov: one remote descriptor per process (okcov-linux(4))");
	self->fd2 = lk_new(NENT);
	ASSERT_LE(0, self->fd2);
	ASSERT_EQ(0, lk_init(self->fd, NENT));
	ASSERT_EQ(0, lk_remote_enable(self->fd, KCOV_TRACE_PC, NENT,
				      HANDLE_1, 0, NULL));
	ASSERT_EQ(0, st_in_thread(remote_handle_2, &self->fd2));
	ASSERT_EQ(0, lk_disable(self->fd));
}

/* A remote-enabled fd, enabled again from another thread: EINVAL. */
TEST_F(lk, remote_enabled_other_thread)
{
	ASSERT_EQ(0, lk_init(self->fd, NENT));
	ASSERT_EQ(0, lk_remote_enable(self->fd, KCOV_TRACE_PC, NENT,
				      HANDLE_1, 0, NULL));
	ASSERT_EQ(EINVAL, st_in_thread(remote_handle_1, &self->fd));
	ASSERT_EQ(EINVAL, st_in_thread(enable_pc, &self->fd));
	ASSERT_EQ(0, lk_disable(self->fd));
}

/* A thread with a remote fd asks for a second one: EBUSY on 6.1 and 7.x. */
TEST_F(lk, remote_twice_in_thread)
{
	self->fd2 = lk_new(NENT);
	ASSERT_LE(0, self->fd2);
	ASSERT_EQ(0, lk_init(self->fd, NENT));
	ASSERT_EQ(0, lk_remote_enable(self->fd, KCOV_TRACE_PC, NENT,
				      HANDLE_1, 0, NULL));
	ASSERT_EQ(EBUSY, lk_remote_enable(self->fd2, KCOV_TRACE_PC, NENT,
					  HANDLE_2, 0, NULL));
	ASSERT_EQ(0, lk_disable(self->fd));
}

/*
 * Local and remote in one thread: where 6.1 and 7.x differ. 6.1 (and
 * 6.12) keep both in t->kcov, so each is EBUSY while the other is on; 7.3
 * has t->kcov_remote, so both work and KCOV_DISABLE on either fd disables
 * just that one. Native kcov must match its version (<= 6.12: one slot;
 * >= 7.3: two; in between: either); okcov may choose, but one way for both
 * directions.
 */
TEST_F(lk, remote_and_local)
{
	int version = lk_kernel_version(), a, b, want = -1;

	ASSERT_EQ(0, ksyms_load());
	if (lk_native()) {
		if (version <= 6012)
			want = EBUSY;
		else if (version >= 7003)
			want = 0;
	}
	self->fd2 = lk_new(NENT);
	ASSERT_LE(0, self->fd2);
	ASSERT_EQ(0, lk_init(self->fd, NENT));

	/* local, then remote */
	ASSERT_EQ(0, lk_enable(self->fd, KCOV_TRACE_PC));
	a = lk_remote_enable(self->fd2, KCOV_TRACE_PC, NENT, HANDLE_1, 0,
			     NULL);
	ASSERT_TRUE(a == 0 || a == EBUSY) {
		TH_LOG("KCOV_REMOTE_ENABLE while tracing: %d", a);
	}
	if (!a) {
		ASSERT_EQ(0, lk_disable(self->fd2));
		ASSERT_EQ(EINVAL, lk_disable(self->fd2));
	}
	ASSERT_EQ(0, lk_disable(self->fd));

	/* remote, then local */
	ASSERT_EQ(0, lk_remote_enable(self->fd2, KCOV_TRACE_PC, NENT,
				      HANDLE_1, 0, NULL));
	b = lk_enable(self->fd, KCOV_TRACE_PC);
	ASSERT_TRUE(b == 0 || b == EBUSY) {
		TH_LOG("KCOV_ENABLE while remote: %d", b);
	}
	if (!b) {
		ASSERT_EQ(0, lk_disable(self->fd));
		ASSERT_EQ(EINVAL, lk_disable(self->fd));
	}
	ASSERT_EQ(0, lk_disable(self->fd2));

	TH_LOG("kernel %d.%d, %s kcov: remote + local %s", version / 1000,
	       version % 1000, lk_native() ? "native" : "okcov's",
	       a ? "share one slot (6.1)" : "have two slots (7.x)");
	ASSERT_EQ(a, b);
	if (want >= 0)
		ASSERT_EQ(want, a);
}

TEST_HARNESS_MAIN
