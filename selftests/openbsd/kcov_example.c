// SPDX-License-Identifier: GPL-2.0
/*
 * A harness written for OpenBSD, as OpenBSD's kcov(4) manual shows one:
 * nothing okcov-specific, not even the device path. It must build on Linux
 * with flags only (-I uapi/openbsd -I uapi, or nothing after `make
 * install-headers`) and run against /dev/kcov (okcov kcov_device=1).
 *
 * Prints the number of PCs of one read(2), then of the remote buffer, and
 * exits 0 when the thread buffer has PCs and every ioctl worked.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/kcov.h>
#include <sys/mman.h>

#include <err.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static unsigned long *
kcov_open(int *fdp, unsigned long size)
{
	unsigned long *cover;
	int fd;

	fd = open("/dev/kcov", O_RDWR);
	if (fd == -1)
		err(1, "open");
	if (ioctl(fd, KIOSETBUFSIZE, &size) == -1)
		err(1, "ioctl: KIOSETBUFSIZE");
	cover = mmap(NULL, size * sizeof(unsigned long),
	    PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (cover == MAP_FAILED)
		err(1, "mmap");
	*fdp = fd;
	return cover;
}

int
main(void)
{
	struct kio_remote_attach remote;
	unsigned long *cover, *rcover, i, n;
	unsigned long size = 1024;
	int fd, rfd, mode = KCOV_MODE_TRACE_PC;
	char c;

	cover = kcov_open(&fd, size);
	if (ioctl(fd, KIOENABLE, &mode) == -1)
		err(1, "ioctl: KIOENABLE");
	cover[0] = 0;
	(void)read(-1, &c, 1);
	n = cover[0];
	if (ioctl(fd, KIODISABLE) == -1)
		err(1, "ioctl: KIODISABLE");
	printf("thread: %lu PCs\n", n);
	for (i = 0; i < n && i < size - 1; i++)
		if (cover[i + 1] < 0xffff800000000000UL)
			errx(1, "%#lx is not a kernel PC", cover[i + 1]);

	/* What syzkaller's OpenBSD executor does on its extra descriptor. */
	rcover = kcov_open(&rfd, size);
	remote.subsystem = KCOV_REMOTE_COMMON;
	remote.id = 0;
	if (ioctl(rfd, KIOREMOTEATTACH, &remote) == -1)
		err(1, "ioctl: KIOREMOTEATTACH");
	if (ioctl(rfd, KIOENABLE, &mode) == -1)
		err(1, "ioctl: KIOENABLE remote");
	rcover[0] = 0;
	(void)read(-1, &c, 1);
	if (ioctl(rfd, KIODISABLE) == -1)
		err(1, "ioctl: KIODISABLE remote");
	printf("remote: %lu PCs\n", rcover[0]);

	if (munmap(cover, size * sizeof(unsigned long)) == -1 ||
	    munmap(rcover, size * sizeof(unsigned long)) == -1)
		err(1, "munmap");
	close(rfd);
	close(fd);
	return n == 0;
}
