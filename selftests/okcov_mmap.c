// SPDX-License-Identifier: GPL-2.0
/*
 * okcov mmap: the errno table (no buffer, out of range, MAP_PRIVATE,
 * PROT_EXEC), what a good mapping is (aliasing, outliving close(), shared
 * across fork()), and mprotect() never granting exec.
 */
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "okcov_test.h"

#define MAGIC	0x6f6b636f76ULL	/* "okcov" */

/* Mapping range checks, for buffers of one page, just over, and more. */
FIXTURE(range) {
	int fd;
	size_t ps, len;
};

FIXTURE_VARIANT(range) {
	uint64_t n;
};

FIXTURE_VARIANT_ADD(range, n1) { .n = 1 };
FIXTURE_VARIANT_ADD(range, n511) { .n = 511 };
FIXTURE_VARIANT_ADD(range, n512) { .n = 512 };
FIXTURE_VARIANT_ADD(range, n513) { .n = 513 };
FIXTURE_VARIANT_ADD(range, n4096) { .n = 4096 };

FIXTURE_SETUP(range)
{
	self->ps = st_page_size();
	self->len = st_map_len(variant->n);
	self->fd = st_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, st_setbufsize(self->fd, variant->n));
}

FIXTURE_TEARDOWN(range)
{
	close(self->fd);
}

/* The whole PAGE_ALIGN(n * 8) is mappable, zeroed, and writable. */
TEST_F(range, whole)
{
	uint64_t *buf;
	size_t i;

	buf = mmap(NULL, self->len, PROT_READ | PROT_WRITE, MAP_SHARED,
		   self->fd, 0);
	ASSERT_NE(MAP_FAILED, buf);
	for (i = 0; i < self->len / 8; i++)
		ASSERT_EQ(0, buf[i]);
	buf[self->len / 8 - 1] = MAGIC;
	ASSERT_EQ(MAGIC, buf[self->len / 8 - 1]);
	ASSERT_EQ(0, munmap((void *)buf, self->len));
}

/* A read-only shared mapping is a mapping too. */
TEST_F(range, read_only)
{
	ASSERT_EQ(0, st_mmap_err(self->fd, self->len, PROT_READ,
				    MAP_SHARED, 0));
}

/* One page more than the buffer: EINVAL. */
TEST_F(range, len_past_end)
{
	ASSERT_EQ(EINVAL, st_mmap_err(self->fd, self->len + self->ps,
					 PROT_READ | PROT_WRITE,
					 MAP_SHARED, 0));
	ASSERT_EQ(EINVAL, st_mmap_err(self->fd, self->len + 1,
					 PROT_READ | PROT_WRITE,
					 MAP_SHARED, 0));
	ASSERT_EQ(EINVAL, st_mmap_err(self->fd, 64 * self->len,
					 PROT_READ | PROT_WRITE,
					 MAP_SHARED, 0));
}

/* An offset at or beyond the end: EINVAL. */
TEST_F(range, offset_past_end)
{
	ASSERT_EQ(EINVAL, st_mmap_err(self->fd, self->ps,
					 PROT_READ | PROT_WRITE,
					 MAP_SHARED, self->len));
	ASSERT_EQ(EINVAL, st_mmap_err(self->fd, self->ps,
					 PROT_READ | PROT_WRITE,
					 MAP_SHARED, self->len + self->ps));
	ASSERT_EQ(EINVAL, st_mmap_err(self->fd, self->ps,
					 PROT_READ | PROT_WRITE,
					 MAP_SHARED, (off_t)1 << 40));
}

/* A range starting inside but ending outside: EINVAL. */
TEST_F(range, offset_straddles_end)
{
	if (self->len < 2 * self->ps)
		SKIP(return, "a one-page buffer has no inner offset");
	ASSERT_EQ(EINVAL, st_mmap_err(self->fd, self->len,
					 PROT_READ | PROT_WRITE,
					 MAP_SHARED, self->ps));
}

/* A range inside the buffer at an offset maps those pages. */
TEST_F(range, offset_inside)
{
	uint64_t *all, *tail;
	size_t off;

	if (self->len < 2 * self->ps)
		SKIP(return, "a one-page buffer has no inner offset");
	off = self->len - self->ps;
	all = st_map(self->fd, variant->n);
	ASSERT_NE(MAP_FAILED, all);
	tail = mmap(NULL, self->ps, PROT_READ | PROT_WRITE, MAP_SHARED,
		    self->fd, off);
	ASSERT_NE(MAP_FAILED, tail);
	all[off / 8] = MAGIC;
	ASSERT_EQ(MAGIC, tail[0]);
	tail[1] = MAGIC + 1;
	ASSERT_EQ(MAGIC + 1, all[off / 8 + 1]);
	munmap((void *)tail, self->ps);
	munmap((void *)all, self->len);
}

/* MAP_PRIVATE: EINVAL (a private copy would never see coverage). */
TEST_F(range, map_private)
{
	ASSERT_EQ(EINVAL, st_mmap_err(self->fd, self->len,
					 PROT_READ | PROT_WRITE,
					 MAP_PRIVATE, 0));
	ASSERT_EQ(EINVAL, st_mmap_err(self->fd, self->len, PROT_READ,
					 MAP_PRIVATE, 0));
}

/*
 * A descriptor of /dev/okcov whose mount allows exec: if /dev is mounted
 * noexec, the VFS itself refuses PROT_EXEC and the module's own check would
 * go untested, so make a node for the same device on an exec-capable mount.
 */
static int open_exec_capable(char *node, size_t len)
{
	const char * const dirs[] = { getenv("TMPDIR"), "/tmp", "/run",
				      "/var/tmp", "/root", "/" };
	struct statvfs vfs;
	struct stat st;
	size_t i;
	int fd;

	node[0] = '\0';
	if (statvfs(OKCOV_PATH, &vfs) == 0 && !(vfs.f_flag & ST_NOEXEC))
		return st_open();
	if (stat(OKCOV_PATH, &st))
		return -1;
	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		const char *d = dirs[i];

		if (!d || statvfs(d, &vfs) || (vfs.f_flag & ST_NOEXEC))
			continue;
		snprintf(node, len, "%s/okcov-exec-test.%d", d, getpid());
		unlink(node);
		if (mknod(node, S_IFCHR | 0600, st.st_rdev))
			continue;
		fd = open(node, O_RDWR);
		unlink(node);
		if (fd >= 0)
			return fd;
	}
	node[0] = '\0';
	return -1;
}

/* PROT_EXEC: EPERM. */
TEST_F(range, prot_exec)
{
	char node[256];
	int fd = open_exec_capable(node, sizeof(node));

	if (fd < 0)
		SKIP(return, "no exec-capable mount for a device node");
	if (node[0])
		TH_LOG("/dev is noexec: testing through %s", node);
	ASSERT_EQ(0, st_setbufsize(fd, variant->n));
	ASSERT_EQ(0, st_mmap_err(fd, self->len, PROT_READ, MAP_SHARED, 0));
	ASSERT_EQ(EPERM, st_mmap_err(fd, self->len, PROT_READ | PROT_EXEC,
					MAP_SHARED, 0));
	ASSERT_EQ(EPERM, st_mmap_err(fd, self->len,
					PROT_READ | PROT_WRITE | PROT_EXEC,
					MAP_SHARED, 0));
	ASSERT_EQ(EPERM, st_mmap_err(fd, self->len, PROT_EXEC,
					MAP_SHARED, 0));
	close(fd);
}

/* mprotect() cannot add exec to a good mapping (no VM_MAYEXEC). */
TEST_F(range, mprotect_exec)
{
	char node[256];
	void *p;
	int fd = open_exec_capable(node, sizeof(node));

	if (fd < 0)
		SKIP(return, "no exec-capable mount for a device node");
	ASSERT_EQ(0, st_setbufsize(fd, variant->n));
	p = mmap(NULL, self->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(-1, mprotect(p, self->len, PROT_READ | PROT_EXEC));
	ASSERT_EQ(EACCES, errno);
	ASSERT_EQ(-1, mprotect(p, self->len, PROT_EXEC));
	ASSERT_EQ(EACCES, errno);
	/* Dropping and regaining write is fine. */
	ASSERT_EQ(0, mprotect(p, self->len, PROT_READ));
	ASSERT_EQ(0, mprotect(p, self->len, PROT_READ | PROT_WRITE));
	munmap(p, self->len);
	close(fd);
}

/* Descriptors with a buffer of n = 8192 (16 pages). */
#define N	8192

FIXTURE(map) {
	struct st_cov c;
};

FIXTURE_SETUP(map)
{
	memset(&self->c, 0, sizeof(self->c));
	self->c.fd = -1;
	ASSERT_EQ(0, st_new(&self->c, N));
}

FIXTURE_TEARDOWN(map)
{
	st_free(&self->c);
}

/* mmap before KIOSETBUFSIZE: EINVAL. */
TEST(before_setbufsize)
{
	size_t ps = st_page_size();
	int fd = st_open();

	ASSERT_LE(0, fd);
	ASSERT_EQ(EINVAL, st_mmap_err(fd, ps, PROT_READ | PROT_WRITE,
					 MAP_SHARED, 0));
	ASSERT_EQ(EINVAL, st_mmap_err(fd, ps, PROT_READ, MAP_SHARED, 0));
	/* and a refused KIOSETBUFSIZE creates no buffer either */
	ASSERT_EQ(EINVAL, st_setbufsize(fd, 0));
	ASSERT_EQ(EINVAL, st_mmap_err(fd, ps, PROT_READ | PROT_WRITE,
					 MAP_SHARED, 0));
	close(fd);
}

/* Two mappings alias the same pages, for user and kernel writes alike. */
TEST_F(map, two_mappings_alias)
{
	uint64_t *other;
	uint64_t i;

	other = st_map(self->c.fd, N);
	ASSERT_NE(MAP_FAILED, other);
	ASSERT_NE(self->c.buf, other);

	self->c.buf[N - 1] = MAGIC;
	ASSERT_EQ(MAGIC, other[N - 1]);
	other[1] = MAGIC + 1;
	ASSERT_EQ(MAGIC + 1, self->c.buf[1]);

	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	st_reset(&self->c);
	sys_getpid_n(10);
	ASSERT_EQ(0, st_disable(self->c.fd));
	ASSERT_LT(0, st_count(&self->c));
	ASSERT_EQ(st_count(&self->c), other[0]);
	for (i = 0; i < N; i++)
		ASSERT_EQ(self->c.buf[i], other[i]);
	munmap((void *)other, st_map_len(N));
}

/* Mapping while TRACE is allowed, and the new mapping sees the records. */
TEST_F(map, map_while_tracing)
{
	uint64_t *late;

	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	late = st_map(self->c.fd, N);
	ASSERT_NE(MAP_FAILED, late);
	late[0] = 0;
	sys_getpid_n(10);
	ASSERT_EQ(0, st_disable(self->c.fd));
	ASSERT_LT(0, late[0]);
	ASSERT_EQ(late[0], st_count(&self->c));
	munmap((void *)late, st_map_len(N));
}

/* The buffer keeps its contents across munmap and a new mmap. */
TEST_F(map, remap_keeps_contents)
{
	self->c.buf[7] = MAGIC;
	munmap((void *)self->c.buf, st_map_len(N));
	self->c.buf = st_map(self->c.fd, N);
	ASSERT_NE(MAP_FAILED, self->c.buf);
	ASSERT_EQ(MAGIC, self->c.buf[7]);
}

/*
 * The descriptor lives while a mapping exists: enable, close the only fd,
 * and coverage keeps arriving in the mapping. Then munmap drops the last
 * reference: the descriptor is DYING and stays attached to this thread,
 * so it cannot enable another one.
 */
TEST_F(map, outlives_close)
{
	struct st_cov other;
	uint64_t before;

	ASSERT_EQ(0, ksyms_load());
	ASSERT_EQ(0, st_enable(self->c.fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(0, close(self->c.fd));
	self->c.fd = -1;

	st_reset(&self->c);
	sys_getpid_n(10);
	before = st_count(&self->c);
	ASSERT_LT(0, before);
	sys_getpid_n(10);
	ASSERT_LT(before, st_count(&self->c));
	ASSERT_TRUE(st_has_syscall(&self->c, "getpid")) {
		st_dump(&self->c, 64);
	}

	munmap((void *)self->c.buf, st_map_len(N));
	self->c.buf = MAP_FAILED;
	ASSERT_EQ(0, st_new(&other, 16));
	ASSERT_EQ(EBUSY, st_enable(other.fd, KCOV_MODE_TRACE_PC));
	st_free(&other);
}

/*
 * A READY descriptor's mapping outlives close() too, with its contents,
 * and so does the descriptor: the mapping holds the last file reference.
 * The contents alone cannot tell: a buffer vfree()d at close stays
 * readable and writable through the mapping, whose pages keep their own
 * references. What tells: the buffer is still vmalloc memory (VmallocUsed)
 * and the descriptor still counted until the munmap, and both go then.
 *
 * Red, tried on debian-6.1: a .flush (run at every close()) that frees a
 * READY descriptor's buffer as release would (VmallocUsed down by the
 * buffer at close).
 */
#define BIG_N	(512UL << 10)	/* 4 MiB */

TEST_F(map, ready_outlives_close)
{
	const long big_kb = BIG_N * 8 / 1024;
	long desc, vm, desc_closed, vm_closed, desc_gone, vm_gone = -1;
	struct st_cov big;
	int i;

	self->c.buf[N - 1] = MAGIC;
	ASSERT_EQ(0, close(self->c.fd));
	self->c.fd = -1;
	ASSERT_EQ(MAGIC, self->c.buf[N - 1]);
	self->c.buf[1] = MAGIC;
	ASSERT_EQ(MAGIC, self->c.buf[1]);

	/* earlier tests' descriptors may still await their grace period */
	ASSERT_EQ(1, st_stat_settle("descriptors", 1));
	ASSERT_EQ(0, st_new(&big, BIG_N));
	big.buf[BIG_N - 1] = MAGIC;
	desc = st_stat("descriptors");
	vm = st_meminfo_kb("VmallocUsed");
	ASSERT_EQ(2, desc);
	ASSERT_LT(0, vm);
	ASSERT_EQ(0, close(big.fd));
	big.fd = -1;
	/* a descriptor freed at close goes after a grace period: wait */
	usleep(500 * 1000);
	desc_closed = st_stat("descriptors");
	vm_closed = st_meminfo_kb("VmallocUsed");
	ASSERT_EQ(MAGIC, big.buf[BIG_N - 1]);

	st_free(&big);
	desc_gone = st_stat_settle("descriptors", desc - 1);
	for (i = 0; i < 50; i++) {
		vm_gone = st_meminfo_kb("VmallocUsed");
		if (vm_gone <= vm - big_kb / 2)
			break;
		usleep(100 * 1000);
	}
	TH_LOG("descriptors %ld open, %ld closed, %ld unmapped; VmallocUsed %ld, %ld, %ld kB",
	       desc, desc_closed, desc_gone, vm, vm_closed, vm_gone);
	ASSERT_EQ(desc, desc_closed);
	ASSERT_LE(vm - big_kb / 2, vm_closed);
	/* positive control: the munmap frees it, and both measures see it */
	ASSERT_EQ(desc - 1, desc_gone);
	ASSERT_GE(vm - big_kb / 2, vm_gone);
}

/*
 * fork() shares the MAP_SHARED mapping: the child writes through it and
 * enables the inherited descriptor; the parent sees both the write and
 * the child's coverage.
 */
TEST_F(map, fork_shares_mapping)
{
	int status;
	pid_t pid;

	ASSERT_EQ(0, ksyms_load());
	st_reset(&self->c);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		self->c.buf[N - 1] = MAGIC;
		if (st_enable(self->c.fd, KCOV_MODE_TRACE_PC))
			_exit(1);
		st_reset(&self->c);
		sys_getpid_n(10);
		if (st_disable(self->c.fd))
			_exit(2);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(MAGIC, self->c.buf[N - 1]);
	ASSERT_LT(0, st_count(&self->c));
	ASSERT_TRUE(st_has_syscall(&self->c, "getpid")) {
		st_dump(&self->c, 64);
	}
}

TEST_HARNESS_MAIN
