// SPDX-License-Identifier: GPL-2.0
/*
 * The two coverage backends okcov-bench compares, driven the way a fuzzer
 * drives them: open, size, mmap once, then enable on the thread that runs
 * the code under test.
 *
 *   okcov   /dev/okcov: KIOSETBUFSIZE(&n), mmap, KIOENABLE(&KCOV_MODE_TRACE_PC)
 *   native  Linux's kcov, /sys/kernel/debug/kcov (CONFIG_KCOV kernels):
 *           KCOV_INIT_TRACE(n), mmap, KCOV_ENABLE(KCOV_TRACE_PC)
 *
 * Both map n 8-byte words, word 0 counting the PCs that follow.
 */
#include <err.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/kcov.h>
#include "okcov.h"

#include "bench.h"

double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int cov_present(int native)
{
	return access(native ? NATIVE_PATH : OKCOV_PATH, R_OK | W_OK) == 0;
}

void cov_open(struct cov *c, int native, double *size_ns)
{
	const char *path = native ? NATIVE_PATH : OKCOV_PATH;
	uint64_t n = BENCH_ENTRIES;
	double t0;
	int r;

	c->name = native ? "native" : "okcov";
	c->native = native;
	c->cmp = 0;
	c->entries = n;
	c->fd = open(path, O_RDWR);
	if (c->fd < 0)
		err(1, "open %s", path);
	t0 = now_ns();
	if (native)
		r = ioctl(c->fd, KCOV_INIT_TRACE, (unsigned long)n);
	else
		r = ioctl(c->fd, KIOSETBUFSIZE, &n);
	if (r)
		err(1, "%s: %s", path, native ? "KCOV_INIT_TRACE" : "KIOSETBUFSIZE");
	if (size_ns)
		*size_ns = now_ns() - t0;
	c->buf = mmap(NULL, n * 8, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
	if (c->buf == MAP_FAILED)
		err(1, "mmap %s", path);
}

void cov_enable(struct cov *c)
{
	int mode = c->cmp ? KCOV_MODE_TRACE_CMP : KCOV_MODE_TRACE_PC;

	if (c->native ? ioctl(c->fd, KCOV_ENABLE,
			      c->cmp ? KCOV_TRACE_CMP : KCOV_TRACE_PC) :
			ioctl(c->fd, KIOENABLE, &mode))
		err(1, "%s: enable", c->name);
}

void cov_disable(struct cov *c)
{
	if (ioctl(c->fd, c->native ? KCOV_DISABLE : KIODISABLE, 0))
		err(1, "%s: disable", c->name);
}

void cov_close(struct cov *c)
{
	munmap(c->buf, c->entries * 8);
	close(c->fd);
	c->fd = -1;
	c->buf = NULL;
}
