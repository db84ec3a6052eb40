// SPDX-License-Identifier: GPL-2.0
/*
 * An OpenBSD-style kcov harness, running on Linux against /dev/okcov.
 * The only okcov-specific lines are the include and OKCOV_PATH (symbols
 * come from okcov's userspace library, scripts/libokcov/kallsyms.h).
 *
 * For each syscall it prints the kernel functions the syscall executed,
 * symbolized through /proc/kallsyms, with how often each was entered.
 * Then remote coverage (KIOREMOTEATTACH): the work that closing a BPF map
 * defers to a kworker, recorded into the process's remote descriptor.
 */
#include <err.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/bpf.h>

#include "okcov.h"		/* OpenBSD: <sys/kcov.h> */
#include "kallsyms.h"		/* scripts/libokcov/: PC -> function name */

#define COVER_SIZE	(256 << 10)	/* entries */

/* Print each distinct PC once, in first-seen order, with its count. */
static void report(const char *what, const uint64_t *cover)
{
	uint64_t n = __atomic_load_n(&cover[0], __ATOMIC_RELAXED);
	uint64_t *pcs = malloc(n * sizeof(*pcs) + 1);
	uint64_t i, j;
	char name[200];

	if (!pcs)
		err(1, "malloc");
	/* Copy first: printing makes syscalls, which add records. */
	memcpy(pcs, &cover[1], n * sizeof(*pcs));
	printf("%s: %llu kernel function entries\n", what,
	       (unsigned long long)n);
	for (i = 0; i < n; i++) {
		unsigned int count = 0;

		for (j = 0; j < i && pcs[j] != pcs[i]; j++)
			;
		if (j < i)
			continue;	/* already printed */
		for (j = i; j < n; j++)
			count += pcs[j] == pcs[i];
		ksyms_format(pcs[i], name, sizeof(name));
		printf("  %4u  %s\n", count, name);
	}
	printf("\n");
	free(pcs);
}

/*
 * The last close() of a BPF map queues its freeing on a workqueue: the
 * kworker's functions land in the remote buffer, not the caller's.
 */
static void remote_demo(void)
{
	struct kio_remote_attach ra = { KCOV_REMOTE_COMMON, 0 };
	unsigned long size = COVER_SIZE;
	int fd, map, mode = KCOV_MODE_TRACE_PC;
	union bpf_attr attr;
	uint64_t *cover;

	fd = open(OKCOV_PATH, O_RDWR);
	if (fd == -1)
		err(1, "open %s", OKCOV_PATH);
	if (ioctl(fd, KIOSETBUFSIZE, &size) == -1)
		err(1, "KIOSETBUFSIZE");
	cover = mmap(NULL, size * sizeof(uint64_t), PROT_READ | PROT_WRITE,
		     MAP_SHARED, fd, 0);
	if (cover == MAP_FAILED)
		err(1, "mmap");
	if (ioctl(fd, KIOREMOTEATTACH, &ra) == -1)
		err(1, "KIOREMOTEATTACH");
	if (ioctl(fd, KIOENABLE, &mode) == -1)	/* attaches no thread */
		err(1, "KIOENABLE");

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = 4;
	attr.value_size = 8;
	attr.max_entries = 1;
	__atomic_store_n(&cover[0], 0, __ATOMIC_RELAXED);
	map = syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof(attr));
	if (map == -1) {
		warn("bpf(BPF_MAP_CREATE): no remote demo");
	} else {
		close(map);
		usleep(200 * 1000);	/* the kworker runs meanwhile */
	}
	/* Waits for the writers: every claimed slot holds its PC (okcov(4)). */
	if (ioctl(fd, KIODISABLE, 0) == -1)
		err(1, "KIODISABLE");
	if (map != -1)
		report("remote: the work close(bpf map) deferred", cover);
	munmap(cover, size * sizeof(uint64_t));
	close(fd);
}

int main(void)
{
	unsigned long size = COVER_SIZE;
	int fd, mode = KCOV_MODE_TRACE_PC;
	uint64_t *cover;
	char buf[64];
	int file, e;

	e = ksyms_load();
	if (e)
		errx(1, "%s: %s (kptr_restrict?)", KSYMS_PROC, strerror(-e));

	fd = open(OKCOV_PATH, O_RDWR);
	if (fd == -1)
		err(1, "open %s", OKCOV_PATH);
	if (ioctl(fd, KIOSETBUFSIZE, &size) == -1)
		err(1, "KIOSETBUFSIZE");
	cover = mmap(NULL, size * sizeof(uint64_t), PROT_READ | PROT_WRITE,
		     MAP_SHARED, fd, 0);
	if (cover == MAP_FAILED)
		err(1, "mmap");
	if (ioctl(fd, KIOENABLE, &mode) == -1)
		err(1, "KIOENABLE");

	__atomic_store_n(&cover[0], 0, __ATOMIC_RELAXED);
	syscall(SYS_getpid);
	report("getpid()", cover);

	__atomic_store_n(&cover[0], 0, __ATOMIC_RELAXED);
	file = open("/proc/version", O_RDONLY);
	if (file != -1) {
		if (read(file, buf, sizeof(buf)) < 0)
			warn("read");
		close(file);
	}
	report("open+read+close(\"/proc/version\")", cover);

	if (ioctl(fd, KIODISABLE, 0) == -1)
		err(1, "KIODISABLE");
	munmap(cover, size * sizeof(uint64_t));
	close(fd);

	remote_demo();
	return 0;
}
