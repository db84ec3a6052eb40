// SPDX-License-Identifier: GPL-2.0
/*
 * OpenBSD sources port unmodified: with okcov reloaded as kcov_device=1,
 * /dev/kcov is the same device as /dev/okcov, and openbsd_kcov_example (a
 * program written against OpenBSD's <sys/kcov.h>, built by the selftests
 * Makefile with -I flags only) runs against it. Reloads okcov through
 * libkmod (OKCOV_KO, as okcov_lifecycle does) and restores it at the end.
 */
#include "kselftest_harness.h"
#include "okcov_test.h"
#include "kmod_util.h"

#include <libgen.h>
#include <sys/wait.h>

#define KCOV_PATH	"/dev/kcov"

static char example[4096];

FIXTURE(openbsd) {
	const char *ko;
};

FIXTURE_SETUP(openbsd)
{
	self->ko = st_okcov_ko();
	if (!self->ko)
		SKIP(return, "OKCOV_KO unset: no okcov.ko to reload");
	if (st_module_loaded("okcov_target"))
		SKIP(return, "okcov_target is loaded and pins okcov");
}

FIXTURE_TEARDOWN(openbsd)
{
	if (!self->ko || !*self->ko)
		return;
	if (access(KCOV_PATH, F_OK) == 0 || !st_module_loaded("okcov")) {
		st_kmod_remove_wait("okcov", 100);
		st_kmod_insert(self->ko, st_okcov_args());
	}
}

/*
 * Without the parameter there is no /dev/kcov; with it, both nodes are one
 * device (one remote descriptor per process across both names), and the
 * OpenBSD program runs against /dev/kcov and sees PCs. Unloading removes
 * both. One test: every reload costs seconds under TCG.
 */
TEST_F_TIMEOUT(openbsd, kcov_device, 300)
{
	struct kio_remote_attach ra = { KCOV_REMOTE_COMMON, 0 };
	char args[512], out[512];
	int fd, p[2], status;
	uint64_t n = 1024;
	struct st_cov c;
	ssize_t len;
	pid_t pid;

	if (_metadata->skip)
		return;
	ASSERT_EQ(0, access(example, X_OK));
	ASSERT_NE(0, access(KCOV_PATH, F_OK));
	snprintf(args, sizeof(args), "%s kcov_device=1", st_okcov_args());
	ASSERT_EQ(0, st_kmod_remove_wait("okcov", 100));
	ASSERT_EQ(0, st_kmod_insert(self->ko, args));
	ASSERT_EQ(0, access(KCOV_PATH, F_OK));
	ASSERT_EQ(0, access(OKCOV_PATH, F_OK));

	fd = open(KCOV_PATH, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, st_ioctl(fd, KIOSETBUFSIZE, &n));
	ASSERT_EQ(0, st_ioctl(fd, KIOREMOTEATTACH, &ra));
	ASSERT_EQ(0, st_new(&c, 1024));
	ASSERT_EQ(EBUSY, st_ioctl(c.fd, KIOREMOTEATTACH, &ra));
	st_free(&c);
	close(fd);

	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		dup2(p[1], 1);
		execl(example, example, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	len = read(p[0], out, sizeof(out) - 1);
	close(p[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_LT(0, len);
	out[len] = '\0';
	fprintf(stderr, "# %s", out);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_NE(NULL, strstr(out, "thread: "));
	ASSERT_NE(NULL, strstr(out, "remote: 0 PCs"));

	ASSERT_EQ(0, st_kmod_remove_wait("okcov", 100));
	ASSERT_NE(0, access(KCOV_PATH, F_OK));
	ASSERT_EQ(0, st_kmod_insert(self->ko, st_okcov_args()));
	ASSERT_NE(0, access(KCOV_PATH, F_OK));
}

OKCOV_HARNESS_ORDER();

int main(int argc, char **argv)
{
	char self_path[4096];
	ssize_t n = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);

	if (n > 0) {
		self_path[n] = '\0';
		snprintf(example, sizeof(example), "%s/openbsd_kcov_example",
			 dirname(self_path));
	}
	return test_harness_run(argc, argv);
}
