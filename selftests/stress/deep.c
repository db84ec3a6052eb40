// SPDX-License-Identifier: GPL-2.0
/*
 * okcov_stress: deep probes (KIODEEP) on the test-target module's
 * hand-placed blocks, installed on a descriptor of their own, hit by the
 * target's deep function, and removed when that descriptor is closed, all
 * while the other threads enable, disable, close and unload around them.
 * Strict requests with a mid-instruction address must fail whole
 * (EILSEQ); the same as a partial request installs the rest. Half the
 * requests ask for instrumented copies (deep_copies=1, x86_64), which
 * the next request that finds no deep leader installed takes: the
 * target's calls then run okcov's copies. What is left behind at rmmod
 * would be a kernel warning (okcov_deep_cleanup(), okcov_copy_cleanup()),
 * or okcov would not unload (a copy in use keeps it loaded).
 *
 * Half the ops deep-trace the core kernel's syscall paths instead (the
 * functions coverage_syscalls() runs through, KIO_DEEP_FUNCTIONS, partial:
 * okcov's function set may leave some out), copies first: the workers'
 * enabled threads then run those copies, and this one does too, enabled
 * on the same descriptor, with a pipe round trip whose bytes must come
 * back unchanged.
 */
#include "stress.h"
#include "okcov_target.h"

static const char *const syscall_fns[] = {
	"ksys_read", "vfs_read", "ksys_write", "vfs_write", "do_sys_openat2",
	"seq_read_iter", "__x64_sys_getppid", "__x64_sys_getpid",
	"__x64_sys_gettid", "do_sched_yield", "__x64_sys_newuname",
	"__do_sys_newuname", "__x64_sys_close", "pipe_read", "pipe_write",
};
#define NFNS	ARRAY_SIZE(syscall_fns)

/* syscall_fns' addresses from /proc/kallsyms, read once a process. */
static int syscall_addrs(__u64 *out)
{
	static __u64 addr[NFNS];
	static int n = -1;
	unsigned long long a;
	char line[256], name[128];
	unsigned int i;
	FILE *f;

	if (n < 0) {
		n = 0;
		f = fopen("/proc/kallsyms", "r");
		while (f && fgets(line, sizeof(line), f)) {
			if (strchr(line, '[') ||
			    sscanf(line, "%llx %*c %127s", &a, name) != 2)
				continue;
			for (i = 0; i < NFNS; i++)
				if (!strcmp(name, syscall_fns[i]) && n < (int)NFNS)
					addr[n++] = a;
		}
		if (f)
			fclose(f);
	}
	memcpy(out, addr, n * sizeof(*out));
	return n;
}

/* Once a process: how many calls have run okcov's copies so far. */
static void copies_said(struct ctx *c)
{
	static bool said;
	char line[128];
	long entered = -1;
	FILE *f;

	if (said)
		return;
	f = fopen("/sys/kernel/debug/okcov/copies", "r");
	while (f && fgets(line, sizeof(line), f))
		sscanf(line, "entered %ld", &entered);
	if (f)
		fclose(f);
	if (entered > 0) {
		said = true;
		say("%s: deep syscall paths: %ld calls entered okcov's copies",
		    c->tag, entered);
	}
}

static void op_deep_syscalls(struct ctx *c)
{
	struct kio_deep d = { 0 };
	char out[8] = "okcovxyz", in[8];
	__u64 addrs[NFNS];
	int fd, p[2], n, mode = KCOV_MODE_TRACE_PC, on;
	unsigned long long size = 4096;

	n = syscall_addrs(addrs);
	if (!n)
		return;
	fd = dev_open(c, true);
	if (fd < 0)
		return;
	write_file("/sys/module/okcov/parameters/deep_copies", "1");
	d.addrs = (uintptr_t)addrs;
	d.count = n;
	d.flags = KIO_DEEP_FUNCTIONS | KIO_DEEP_PARTIAL;
	expect(c->tag, OP_DEEP, ioctl(fd, KIODEEP, &d) ? errno : 0, M(OK),
	       "KIODEEP of %d syscall-path functions", n);
	/* This thread may have a descriptor enabled already: EBUSY. */
	on = !ioctl(fd, KIOSETBUFSIZE, &size) && !ioctl(fd, KIOENABLE, &mode);
	coverage_syscalls(c, 20);
	if (!pipe(p)) {
		if (write(p[1], out, sizeof(out)) != sizeof(out) ||
		    read(p[0], in, sizeof(in)) != sizeof(in) ||
		    memcmp(in, out, sizeof(in)))
			fail(c->tag, "a pipe round trip through deep copies lost its bytes");
		close(p[0]);
		close(p[1]);
	}
	if (on)
		expect(c->tag, OP_DEEP, ioctl(fd, KIODISABLE) ? errno : 0,
		       M(OK), "KIODISABLE after deep syscalls");
	close(fd);
	copies_said(c);
}

void op_deep(struct ctx *c)
{
	__u64 addrs[OKCOV_DEEP_NLEADERS + 1];
	bool bad = chance(c, 20), partial = chance(c, 50);
	struct okcov_target_deep t;
	struct kio_deep d = { 0 };
	int fd, i, n = OKCOV_DEEP_NLEADERS, runs = 1 + rn(c, 4);

	if (!target_open(c, OP_DEEP) ||
	    ioctl(c->tfd, OKCOV_TARGET_DEEP_LEADERS, &t))
		return;		/* no target, or not x86_64 */
	if (chance(c, 50)) {
		op_deep_syscalls(c);
		return;
	}
	fd = dev_open(c, true);
	if (fd < 0)
		return;
	write_file("/sys/module/okcov/parameters/deep_copies",
		   chance(c, 50) ? "1" : "0");
	memcpy(addrs, t.leaders, sizeof(t.leaders));
	if (bad)
		addrs[n++] = t.leaders[OKCOV_DEEP_ELSE] + 1;
	d.addrs = (uintptr_t)addrs;
	d.count = n;
	d.flags = partial ? KIO_DEEP_PARTIAL : 0;
	/* A narrowed function set (filter=) may leave the target out. */
	expect(c->tag, OP_DEEP, ioctl(fd, KIODEEP, &d) ? errno : 0,
	       (bad && !partial ? M(EILSEQ) : M(OK)) |
	       (atomic_load(&shm->narrowed) && !partial ? M(EACCES) : 0),
	       "KIODEEP of %d%s%s", n,
	       bad ? ", one mid-instruction" : "", partial ? ", partial" : "");
	for (i = 0; i < runs; i++)
		expect(c->tag, OP_DEEP,
		       ioctl(c->tfd, OKCOV_TARGET_DEEP_RUN, (unsigned long)(i & 1)) < 0 ?
		       errno : 0, M(OK), "OKCOV_TARGET_DEEP_RUN");
	close(fd);
}
