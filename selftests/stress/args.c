// SPDX-License-Identifier: GPL-2.0
/*
 * What the workers throw at okcov: coverage syscalls, pointers no ioctl
 * can read, random ioctl numbers, buffer sizes and modes.
 */
#include "stress.h"

void coverage_syscalls(struct ctx *c, int n)
{
	char buf[256];
	struct utsname u;
	int fd;

	while (n-- > 0) {
		switch (c ? rn(c, 6) : n % 6) {
		case 0:
			syscall(SYS_getpid);
			break;
		case 1:
			syscall(SYS_getppid);
			break;
		case 2:
			fd = open("/proc/self/stat", O_RDONLY);
			if (fd >= 0) {
				if (read(fd, buf, sizeof(buf)) < 0)
					buf[0] = 0;
				close(fd);
			}
			break;
		case 3:
			uname(&u);
			break;
		case 4:
			sched_yield();
			break;
		default:
			syscall(SYS_gettid);
			break;
		}
	}
}

/* ------------------------------------------------------ bad arguments */

/* An argument no ioctl can read @size bytes from. */
void *bad_ptr(struct ctx *c, size_t size)
{
	switch (rn(c, 7)) {
	case 0:
		return NULL;
	case 1:
		return (void *)1;
	case 2:
		return (void *)0xffffffff81000000UL;
	case 3:
		return (void *)0x0000800000000000UL;
		/* non-canonical */
	case 4:
		return guard_none;
	case 5:
		return guard_rw + page - size / 2;
		/* straddles */
	default:
		return (void *)0x1000UL;
		/* below mmap_min_addr */
	}
}

/* Types the VFS answers itself, before the driver sees the command. */
static bool vfs_ioctl_type(unsigned int type)
{
	return type == 0 || type == 0x15 || type == 'T' || type == 'X' ||
	       type == 'f' || type == 0x94;
}

/* A command /dev/okcov does not implement (dev.c's switch): ENOTTY. */
unsigned int random_cmd(struct ctx *c)
{
	static const unsigned int small[] = { 0, 1, 2, 4, 8, 16 };
	unsigned int dir, type, nr, size, cmd;

	do {
		dir = rn(c, 4);
		type = chance(c, 50) ? 'K' : rn(c, 256);
		nr = chance(c, 50) ? rn(c, 6) : rn(c, 256);
		size = chance(c, 50) ? small[rn(c, ARRAY_SIZE(small))] :
				       rn(c, 1 << 14);
		cmd = _IOC(dir, type, nr, size);
	} while (vfs_ioctl_type(type) || cmd == KIOSETBUFSIZE ||
		 cmd == KIOENABLE || cmd == KIOENABLE_LEGACY ||
		 cmd == KIODISABLE || cmd == KIOREMOTEATTACH ||
		 cmd == KIODEEP);
	return cmd;
}

unsigned long pick_size(struct ctx *c)
{
	unsigned long max = max_entries();
	static const unsigned long huge[] = {
		1UL << 40, ~0UL, (1UL << 61) + 1, 1UL << 63, 1UL << 29,
	};

	switch (rn(c, 20)) {
	case 0:
		return 0;
	case 1:
		return 1;
	case 2:
		return 2;
	case 3: case 4: case 5: case 6: case 7:
		return 3 + rn(c, 62);
	case 8: case 9: case 10: case 11: case 12:
		return 64 + rn(c, 4096);
	case 13:
		return max > 4096 ? 4096 + rnd(c) % (max - 4096 + 1) : max;
	case 14:
		return max;
	case 15:
		return max + 1;
	case 16: case 17:
		return huge[rn(c, ARRAY_SIZE(huge))];
	default:
		return 3 + rn(c, 1024);
	}
}

int pick_mode(struct ctx *c)
{
	switch (rn(c, 20)) {
	case 0:
		return -1;
	case 1:
		return KCOV_MODE_NONE;
	case 2:
		return 3;
	case 3:
		return (int)rnd(c);
	case 4:
	case 5:
	case 6:
		return KCOV_MODE_TRACE_CMP;
	default:
		return KCOV_MODE_TRACE_PC;
	}
}

bool mode_ok(int mode)
{
	return mode == KCOV_MODE_TRACE_PC || mode == KCOV_MODE_TRACE_CMP;
}
