// SPDX-License-Identifier: GPL-2.0
/*
 * What okcov-bench runs: two single syscalls and a fuzzer-shaped program,
 * and the PC set a fuzzer deduplicates a program's coverage into.
 */
#include <err.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bench.h"

#define SCRATCH		"/tmp/okcov-bench"
#define SCRATCH_W	"/tmp/okcov-bench-w"

static void op_getppid(unsigned int k)
{
	syscall(SYS_getppid);
}

void op_open_read_close(unsigned int k)
{
	char buf[64];
	int fd = open("/proc/version", O_RDONLY);

	if (fd < 0)
		err(1, "/proc/version");
	if (read(fd, buf, sizeof(buf)) < 0)
		err(1, "read");
	close(fd);
}

/*
 * One short program of eleven different syscalls, in six blocks whose
 * order and arguments follow the seed: the same seed is the same program,
 * in every phase and for both backends.  Every call is checked, so a
 * program that stopped working cannot look fast.
 */
void fuzz_program(unsigned int seed)
{
	static const char *const files[] = { "/proc/version", SCRATCH, "/dev/zero" };
	static const char *const paths[] = { "/", "/tmp", SCRATCH };
	uint32_t r = seed * 2654435761u + 0x9e3779b9u;
	char buf[512];
	struct utsname u;
	struct stat st;
	int b, fd, p[2];
	size_t len;
	char *m;

	memset(buf, 'o', sizeof(buf));
	for (b = 0; b < 6; b++) {
		r ^= r << 13, r ^= r >> 17, r ^= r << 5;
		switch ((b + seed) % 6) {
		case 0:	/* open, read, fstat, close */
			fd = open(files[r % 3], O_RDONLY);
			if (fd < 0)
				err(1, "open %s", files[r % 3]);
			if (read(fd, buf, 1 + (r >> 8) % sizeof(buf)) < 0 ||
			    fstat(fd, &st))
				err(1, "read/fstat %s", files[r % 3]);
			close(fd);
			break;
		case 1:	/* write a fresh file */
			fd = open(SCRATCH_W, O_WRONLY | O_CREAT | O_TRUNC, 0600);
			len = 1 + (r >> 8) % sizeof(buf);
			if (fd < 0 || write(fd, buf, len) != (ssize_t)len)
				err(1, SCRATCH_W);
			close(fd);
			break;
		case 2:	/* through a pipe */
			len = 1 + (r >> 8) % 64;
			if (pipe(p) || write(p[1], buf, len) != (ssize_t)len ||
			    read(p[0], buf, len) != (ssize_t)len)
				err(1, "pipe");
			close(p[0]);
			close(p[1]);
			break;
		case 3:	/* map, fault in, unmap */
			len = (1 + (r >> 8) % 4) * 4096;
			m = mmap(NULL, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (m == MAP_FAILED)
				err(1, "mmap");
			m[0] = 1;
			if (munmap(m, len))
				err(1, "munmap");
			break;
		case 4:
			if (stat(paths[r % 3], &st))
				err(1, "stat %s", paths[r % 3]);
			break;
		case 5:
			syscall(SYS_getpid);
			if (uname(&u))
				err(1, "uname");
			break;
		}
	}
}

/* The loopback listener of op_tcp, or -1 where there is no loopback TCP. */
static int tcp_listener = -1;
static struct sockaddr_in tcp_addr;

/*
 * A TCP connection over loopback: connect, accept, one exchange, close.
 * TCP arms and deletes timer_list timers on the way (retransmit, delayed
 * ack, TIME_WAIT): what remote coverage's timer probes see machine-wide.
 */
static void op_tcp(unsigned int k)
{
	char buf[64] = "okcov";
	int c, a;

	c = socket(AF_INET, SOCK_STREAM, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&tcp_addr, sizeof(tcp_addr)))
		err(1, "tcp connect");
	a = accept(tcp_listener, NULL, NULL);
	if (a < 0 || write(c, buf, sizeof(buf)) != sizeof(buf) ||
	    read(a, buf, sizeof(buf)) != sizeof(buf))
		err(1, "tcp exchange");
	close(a);
	close(c);
}

/*
 * Create and close a BPF array map: the close frees the map from a work
 * item (bpf_map_free_deferred), what the workqueue probes see. The yield
 * lets that work run inside the call (the VM has one CPU): else how many
 * frees land in a phase's window moves its time by up to a fifth.
 */
static int bpf_array_map(void)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = 4;
	attr.value_size = 8;
	attr.max_entries = 1;
	return syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof(attr));
}

static void op_bpf_map(unsigned int k)
{
	int fd = bpf_array_map();

	if (fd < 0)
		err(1, "bpf(BPF_MAP_CREATE)");
	close(fd);
	sched_yield();
}

struct op bench_ops[] = {
	{ "getppid", op_getppid, 20000, 5, 0 },
	{ "open+read+close", op_open_read_close, 2000, 5, 0 },
	{ "fuzzer-program", fuzz_program, 200, 3, 1 },
	{ "tcp-loopback", op_tcp, 300, 3, 0 },
	{ "bpf-map", op_bpf_map, 300, 3, 0 },
};
const int bench_nops = ARRAY_SIZE(bench_ops);

/* Loopback up and a listener; where the kernel cannot, op_tcp is off. */
static int tcp_setup(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	socklen_t len = sizeof(tcp_addr);
	int s = socket(AF_INET, SOCK_DGRAM, 0), one = 1;

	if (s < 0)
		return -1;
	if (!ioctl(s, SIOCGIFFLAGS, &ifr)) {
		ifr.ifr_flags |= IFF_UP;
		(void)!ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	close(s);
	tcp_listener = socket(AF_INET, SOCK_STREAM, 0);
	if (tcp_listener < 0)
		return -1;
	tcp_addr.sin_family = AF_INET;
	tcp_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(tcp_listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(tcp_listener, (struct sockaddr *)&tcp_addr, sizeof(tcp_addr)) ||
	    listen(tcp_listener, 16) ||
	    getsockname(tcp_listener, (struct sockaddr *)&tcp_addr, &len)) {
		close(tcp_listener);
		tcp_listener = -1;
		return -1;
	}
	return 0;
}

/*
 * Map IDs come from idr_alloc_cyclic(): past ID 4096 the IDR is a level
 * deeper, and every later map costs more. Move past it before anything
 * is measured, or the phases after the crossing pay up to a tenth more
 * than the ones before for no fault of theirs.
 */
#define BPF_ID_SETTLED	(4096 + 64)

static int bpf_setup(void)
{
	struct bpf_map_info info;
	union bpf_attr attr;
	int fd;

	do {
		fd = bpf_array_map();
		if (fd < 0)
			return -1;
		memset(&info, 0, sizeof(info));
		memset(&attr, 0, sizeof(attr));
		attr.info.bpf_fd = fd;
		attr.info.info_len = sizeof(info);
		attr.info.info = (unsigned long)&info;
		if (syscall(SYS_bpf, BPF_OBJ_GET_INFO_BY_FD, &attr, sizeof(attr)))
			err(1, "bpf(BPF_OBJ_GET_INFO_BY_FD)");
		close(fd);
		sched_yield();
	} while (info.id < BPF_ID_SETTLED);
	return 0;
}

void work_setup(void)
{
	char buf[4096];
	int fd = open(SCRATCH, O_WRONLY | O_CREAT | O_TRUNC, 0600), i;

	memset(buf, 'k', sizeof(buf));
	if (fd < 0 || write(fd, buf, sizeof(buf)) != sizeof(buf))
		err(1, SCRATCH);
	close(fd);
	for (i = 0; i < bench_nops; i++) {
		if ((bench_ops[i].fn == op_tcp && tcp_setup()) ||
		    (bench_ops[i].fn == op_bpf_map && bpf_setup())) {
			printf("# %s: not available on this kernel, not measured\n",
			       bench_ops[i].name);
			bench_ops[i].iters = 0;
		}
	}
}

int pcsig_tally(struct pcsig *sig, int *nsig, const struct pcset *s, int top)
{
	int j;

	for (j = 0; j < *nsig; j++)
		if (sig[j].n == s->n && sig[j].sum == s->sum &&
		    sig[j].xor == s->xor)
			break;
	if (j == *nsig) {
		sig[j].n = s->n;
		sig[j].sum = s->sum;
		sig[j].xor = s->xor;
		sig[j].count = 0;
		(*nsig)++;
	}
	return ++sig[j].count > top ? sig[j].count : top;
}

void pcset_init(struct pcset *s, unsigned int bits)
{
	memset(s, 0, sizeof(*s));
	s->cur = 1;	/* calloc's generation 0 is "empty" */
	s->mask = (1UL << bits) - 1;
	s->pc = calloc(s->mask + 1, sizeof(*s->pc));
	s->gen = calloc(s->mask + 1, sizeof(*s->gen));
	if (!s->pc || !s->gen)
		err(1, "pcset");
}

void pcset_clear(struct pcset *s)
{
	s->cur++;
	s->n = 0;
	s->sum = 0;
	s->xor = 0;
}

void pcset_add(struct pcset *s, uint64_t pc)
{
	uint64_t h = bench_mix(pc);
	size_t i = h & s->mask;

	/* Kept at most half full by pcset_read(): the probe ends. */
	while (s->gen[i] == s->cur) {
		if (s->pc[i] == pc)
			return;
		i = (i + 1) & s->mask;
	}
	s->gen[i] = s->cur;
	s->pc[i] = pc;
	s->n++;
	s->sum += h;
	s->xor ^= h;
}

uint64_t pcset_read(struct pcset *s, const struct cov *c, int *full)
{
	uint64_t n = __atomic_load_n(&c->buf[0], __ATOMIC_RELAXED), i;

	*full = n >= c->entries - 1;
	if (*full)
		n = c->entries - 1;
	pcset_clear(s);
	for (i = 0; i < n; i++) {
		if (s->n > s->mask / 2)
			errx(1, "pcset: more than %zu distinct PCs", s->mask / 2);
		pcset_add(s, c->buf[i + 1]);
	}
	return n;
}
