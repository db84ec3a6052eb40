// SPDX-License-Identifier: GPL-2.0
/*
 * okcov's Linux ABI (/sys/kernel/debug/kcov), remote side: a common handle
 * records the work and timers the calling process defers, and, as Linux's
 * kcov passes its handle to children (syzkaller's executor enables it
 * before it forks the processes that run programs), those of every
 * process it forks afterwards, grandchildren included; not those of a
 * process forked before the enable. PCs are Linux's: less the KASLR
 * offset, added back here from /proc/kallsyms' _text. Needs okcov's
 * personality (SKIP on a kernel with its own kcov) and the test-target
 * module (OKCOV_TARGET_KO).
 */
#include <linux/kcov.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "okcov_test.h"
#include "okcov_linux.h"
#include "kallsyms.h"
#include "kmod_util.h"
#include "okcov_target.h"

#define LKCOV_PATH	"/sys/kernel/debug/kcov"
#define LNENT		(64 << 10)	/* a whole number of pages */
#define FORKS		1100		/* more than a descriptor's 1024 members */

static char no_run[256];	/* why these tests cannot run */
static uint64_t kaslr;		/* what okcov subtracted from every PC */

struct lcov {
	int fd;
	uint64_t *buf;
};

static int lcov_remote(struct lcov *c)
{
	struct kcov_remote_arg arg = {
		.trace_mode = KCOV_TRACE_PC,
		.area_size = LNENT,
		.common_handle = kcov_remote_handle(KCOV_SUBSYSTEM_COMMON, 1),
	};

	c->fd = open(LKCOV_PATH, O_RDWR);
	if (c->fd < 0)
		return errno;
	if (ioctl(c->fd, KCOV_INIT_TRACE, (unsigned long)LNENT))
		return errno;
	c->buf = mmap(NULL, LNENT * 8, PROT_READ | PROT_WRITE, MAP_SHARED,
		      c->fd, 0);
	if (c->buf == MAP_FAILED)
		return errno;
	return st_ret(ioctl(c->fd, KCOV_REMOTE_ENABLE, &arg));
}

static void lcov_free(struct lcov *c)
{
	munmap(c->buf, LNENT * 8);
	close(c->fd);
}

/* Records of @fn of the target module, after KCOV_DISABLE (okcov(4)). */
static size_t hits(const struct lcov *c, const char *fn)
{
	uint64_t i, n = c->buf[0];
	const struct ksym *s;
	size_t k = 0;

	if (n > LNENT - 1)
		n = LNENT - 1;
	if (getenv("OKCOV_DEBUG")) {
		char name[256];

		fprintf(stderr, "# %llu records, kaslr 0x%llx\n",
			(unsigned long long)n, (unsigned long long)kaslr);
		for (i = 0; i < n && i < 40; i++)
			fprintf(stderr, "#   %llx %s\n",
				(unsigned long long)c->buf[i + 1],
				ksyms_format(c->buf[i + 1] + kaslr - LK_PC_BACK, name,
					     sizeof(name)));
	}
	for (i = 0; i < n; i++) {
		/* Linux's PC: less the KASLR offset; pc - LK_PC_BACK is the call */
		s = ksyms_lookup(c->buf[i + 1] + kaslr - LK_PC_BACK, NULL);
		if (s && s->mod && !strcmp(s->mod, OKCOV_TARGET_NAME) &&
		    !strcmp(s->name, fn))
			k++;
	}
	return k;
}

/* In a new process: defer work and a timer through the target, wait. */
static int defer_in_child(int depth)
{
	pid_t pid = fork();
	int tfd, st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (depth > 1)
			_exit(defer_in_child(depth - 1) ? 1 : 0);
		tfd = open(OKCOV_TARGET_PATH, O_RDWR);
		if (tfd < 0 ||
		    ioctl(tfd, OKCOV_TARGET_DEFER,
			  OKCOV_DEFER_WORK | OKCOV_DEFER_TIMER) ||
		    ioctl(tfd, OKCOV_TARGET_WAIT, 0))
			_exit(1);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return -1;
	return 0;
}

static uint64_t dropped(void)
{
	FILE *f = fopen("/sys/kernel/debug/okcov/remote_dropped", "r");
	unsigned long long v = 0;

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

FIXTURE(inherit) {
	struct lcov c;
};

/* The 6.1 harness runs the body after a SKIP in the setup: each body checks. */
FIXTURE_SETUP(inherit)
{
	if (!no_run[0])
		ASSERT_EQ(0, lcov_remote(&self->c));
}

FIXTURE_TEARDOWN(inherit)
{
	if (!no_run[0])
		lcov_free(&self->c);
}

/* A child's deferred work: both sources, through the common handle. */
TEST_F(inherit, child)
{
	if (no_run[0])
		SKIP(return, "%s", no_run);
	ASSERT_EQ(0, defer_in_child(1));
	ASSERT_EQ(0, ioctl(self->c.fd, KCOV_DISABLE, 0));
	ASSERT_LT(0, hits(&self->c, "okcov_target_in_work"));
	ASSERT_LT(0, hits(&self->c, "okcov_target_in_timer"));
}

/* A grandchild's: the handle is passed on at every fork. */
TEST_F(inherit, grandchild)
{
	if (no_run[0])
		SKIP(return, "%s", no_run);
	ASSERT_EQ(0, defer_in_child(2));
	ASSERT_EQ(0, ioctl(self->c.fd, KCOV_DISABLE, 0));
	ASSERT_LT(0, hits(&self->c, "okcov_target_in_work"));
	ASSERT_LT(0, hits(&self->c, "okcov_target_in_timer"));
}

/*
 * Children come and go, more of them than a descriptor has member slots:
 * an exited child gives its slot back, so the last child still records
 * and nothing is dropped.
 */
TEST_F_TIMEOUT(inherit, exited_children_leave, 900)
{
	uint64_t before = dropped();
	pid_t pid;
	int i, st;

	if (no_run[0])
		SKIP(return, "%s", no_run);

	for (i = 0; i < FORKS; i++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0)
			_exit(0);
		ASSERT_EQ(pid, waitpid(pid, &st, 0));
	}
	ASSERT_EQ(0, defer_in_child(1));
	ASSERT_EQ(0, ioctl(self->c.fd, KCOV_DISABLE, 0));
	ASSERT_LT(0, hits(&self->c, "okcov_target_in_work"));
	ASSERT_EQ(before, dropped());
}

/*
 * A process forked before KCOV_REMOTE_ENABLE is not a member: its work is
 * not recorded, the enabling process's own is (the positive control).
 */
TEST(inherit_not_before)
{
	int go[2], tfd, st;
	struct lcov c;
	char b = 0;
	pid_t pid;

	if (no_run[0])
		SKIP(return, "%s", no_run);
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(go[1]);
		tfd = open(OKCOV_TARGET_PATH, O_RDWR);
		if (tfd < 0 || read(go[0], &b, 1) != 1 ||
		    ioctl(tfd, OKCOV_TARGET_DEFER, OKCOV_DEFER_TIMER) ||
		    ioctl(tfd, OKCOV_TARGET_WAIT, 0))
			_exit(1);
		_exit(0);
	}
	close(go[0]);
	ASSERT_EQ(0, lcov_remote(&c));
	ASSERT_EQ(1, write(go[1], &b, 1));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st));
	tfd = open(OKCOV_TARGET_PATH, O_RDWR);
	ASSERT_LE(0, tfd);
	ASSERT_EQ(0, ioctl(tfd, OKCOV_TARGET_DEFER, OKCOV_DEFER_WORK));
	ASSERT_EQ(0, ioctl(tfd, OKCOV_TARGET_WAIT, 0));
	close(tfd);
	ASSERT_EQ(0, ioctl(c.fd, KCOV_DISABLE, 0));
	EXPECT_LT(0, hits(&c, "okcov_target_in_work"));
	EXPECT_EQ(0, hits(&c, "okcov_target_in_timer"));
	lcov_free(&c);
	close(go[1]);
}

static void prepare(void)
{
	uint64_t text;

	if (access(OKCOV_PATH, F_OK) || access(LKCOV_PATH, F_OK)) {
		snprintf(no_run, sizeof(no_run), "no okcov or no %s", LKCOV_PATH);
		return;
	}
	text = ksyms_load() ? 0 : lk_text();
	if (!text) {
		snprintf(no_run, sizeof(no_run), "no _text in /proc/kallsyms");
		return;
	}
	/* The kernel's own kcov has no okcov symbol in its fops. */
	if (ksyms_addr("__sanitizer_cov_trace_pc", NULL) &&
	    !ksyms_addr("__sanitizer_cov_trace_pc", "okcov")) {
		snprintf(no_run, sizeof(no_run),
			 "CONFIG_KCOV kernel: %s is Linux's own", LKCOV_PATH);
		return;
	}
	kaslr = lk_kaslr_offset();
	if (st_target_load(no_run, sizeof(no_run)))
		return;
	/* The target's symbols, loaded after the first ksyms_load(). */
	ksyms_load();
}

OKCOV_HARNESS_MAIN(prepare);
