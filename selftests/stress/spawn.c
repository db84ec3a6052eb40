// SPDX-License-Identifier: GPL-2.0
/*
 * Fork and exec children, and the re-executed image that checks that an
 * attachment survives execve().
 */
#include "stress.h"

/* The child of fork: a few operations, then exit, often still enabled. */
void fork_child(struct ctx *parent)
{
	static struct pool child_pool;
	struct ctx *c = calloc(1, sizeof(*c));
	int i, j, k = 0, err;

	if (!c)
		_exit(3);
	c->kind = K_CHILD;
	c->rng = parent->rng ^ 0x5bd1e995;
	snprintf(c->tag, sizeof(c->tag), "fork child of %.40s", parent->tag);
	/* The pool as inherited: same fds, a lock of our own. */
	pthread_rwlock_init(&child_pool.lock, NULL);
	child_pool.cnt = parent->pool->cnt;
	for (i = 0; i < child_pool.cnt; i++) {
		child_pool.e[i].fd = parent->pool->e[i].fd;
		child_pool.e[i].id = parent->pool->e[i].id;
		atomic_store(&child_pool.e[i].n,
			     atomic_load(&parent->pool->e[i].n));
	}
	c->pool = &child_pool;
	for (i = 0; i < MAXD; i++)
		for (j = 0; parent->d[i].used && j < parent->d[i].nfds; j++)
			c->foreign[k++] = parent->d[i].fds[j];
	c->nforeign = k;

	/* A new process starts detached: the parent's descriptors are not ours. */
	for (i = 0; i < c->nforeign; i++)
		if (chance(c, 30))
			expect(c->tag, OP_DISABLE,
			       ioc(c->foreign[i], KIODISABLE, NULL), M(EBUSY),
			       "fork child disabling the parent thread's fd %d",
			       c->foreign[i]);
	run_child_ops(c, 1 + rn(c, 10));
	if (chance(c, 50)) {
		/* tidy exit; otherwise exit enabled with everything open */
		for (i = 0; i < MAXD; i++) {
			struct pdesc *d = &c->d[i];

			if (!d->used || !d->nfds)
				continue;
			if (d->state == S_TRACE) {
				err = ioc(d->fds[0], KIODISABLE, NULL);
				if (expect(c->tag, OP_DISABLE, err, M(OK),
					   "tidy exit, fd %d", d->fds[0]) &&
				    !err)
					d->state = S_READY;
				c->att_id = 0;
			}
		}
	}
	_exit(0);
}

/* Wait for a child of this thread; a crash or a hang is a failure. */
static void wait_child(struct ctx *c, enum op op_id, pid_t pid)
{
	double t0 = now();
	int status, r;

	for (;;) {
		r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			break;
		if (r < 0) {
			expect(c->tag, op_id, errno, M(OK), "waitpid(%d)", pid);
			return;
		}
		if (now() - t0 > hang_s) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			expect(c->tag, op_id, -1, M(OK), "child %d hung for %g s",
			       pid, hang_s);
			return;
		}
		usleep(1000);
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		count(op_id, RS_OK);
	else
		expect(c->tag, op_id, -1, M(OK), "child %d %s %d", pid,
		       WIFSIGNALED(status) ? "killed by signal" : "exited with",
		       WIFSIGNALED(status) ? WTERMSIG(status) :
		       WEXITSTATUS(status));
}

/* Fork a child that runs @child (which never returns) and wait for it. */
void spawn_child(struct ctx *c, enum op op_id, void (*child)(struct ctx *))
{
	pid_t pid;

	/* the pool must not change while the child copies it */
	pool_rdlock(c->pool);
	atomic_fetch_add(&c->pool->children, 1);
	pid = fork();
	if (pid == 0)
		child(c);
	pool_unlock(c->pool);
	if (pid < 0) {
		atomic_fetch_sub(&c->pool->children, 1);
		expect(c->tag, op_id, errno, M(OK), "fork");
		return;
	}
	atomic_fetch_add(&shm->procs_spawned, 1);
	wait_child(c, op_id, pid);
	/* reaped: its files, the remote fd among them, are released */
	atomic_fetch_sub(&c->pool->children, 1);
}

/* -------------------------------------------------------------- exec */

enum { EX_PLAIN, EX_KEPT, EX_CLOEXEC, EX_SHARED, EX_READY, EX_NR };

/* Child of fork, before execve: set up what the new image will check. */
void exec_child(struct ctx *parent)
{
	struct ctx c = { .kind = K_CHILD };
	unsigned long n = 16 + rn(parent, 4096), kn = 0;
	int variant, fd = -1, kfd = -1, kstate = S_NONE, attached = 0, err;
	int mode = KCOV_MODE_TRACE_PC;
	char a[7][32], *argv[10];
	struct pent *e;
	int i;

	c.rng = parent->rng ^ 0x27d4eb2f;
	c.pool = parent->pool;
	snprintf(c.tag, sizeof(c.tag), "exec child of %.40s", parent->tag);
	variant = rn(&c, EX_NR);
	switch (variant) {
	case EX_KEPT:
	case EX_CLOEXEC:
	case EX_READY:
		fd = dev_open(&c, variant == EX_CLOEXEC);
		if (fd < 0)
			break;
		err = ioc(fd, KIOSETBUFSIZE, &n);
		if (!expect(c.tag, OP_SETBUFSIZE, err, M(OK), "n %lu", n))
			break;
		kn = n;
		kstate = S_READY;
		if (variant != EX_READY) {
			err = ioc(fd, KIOENABLE, &mode);
			if (!expect(c.tag, OP_ENABLE, err, M(OK),
				    "fork child, fresh fd"))
				break;
			kstate = S_TRACE;
			attached = 1;
		}
		if (variant != EX_CLOEXEC)
			kfd = fd;
		break;
	case EX_SHARED:
		/* parent holds the pool read-locked across fork() */
		for (i = 0; i < parent->pool->cnt; i++) {
			e = &parent->pool->e[i];
			/* a handed-over fd's flag is not tracked: ask */
			if (fcntl(e->fd, F_GETFD) & FD_CLOEXEC)
				continue;
			err = ioc(e->fd, KIOENABLE, &mode);
			expect(c.tag, OP_ENABLE, err, M(OK) | M(EBUSY),
			       "fork child, shared fd %d", e->fd);
			if (!err) {
				attached = 1;
				kfd = e->fd;
				kstate = S_TRACE;
				/*
				 * kn stays 0: other threads write garbage
				 * into shared buffers, so no count check
				 */
			}
			break;
		}
		break;
	}
	snprintf(a[0], sizeof(a[0]), "%d", shm_fd);
	snprintf(a[1], sizeof(a[1]), "%" PRIu64, rnd(&c));
	snprintf(a[2], sizeof(a[2]), "%d", attached);
	snprintf(a[3], sizeof(a[3]), "%d", kfd);
	snprintf(a[4], sizeof(a[4]), "%d", kstate);
	snprintf(a[5], sizeof(a[5]), "%lu", kn);
	snprintf(a[6], sizeof(a[6]), "%lu", cur_gen());
	argv[0] = "okcov_stress";
	argv[1] = "--exec-child";
	for (i = 0; i < 7; i++)
		argv[i + 2] = a[i];
	argv[9] = NULL;
	execve("/proc/self/exe", argv, environ);
	fail(c.tag, "execve(/proc/self/exe): %s", strerror(errno));
	_exit(2);
}

/*
 * The re-executed image: execve() keeps the attachment (OpenBSD's exec
 * behaviour), so coverage continues and a new KIOENABLE is refused.
 */
int exec_image_main(char **argv)
{
	struct ctx c = { .kind = K_CHILD };
	int attached, kfd, kstate, fd, err, mode = KCOV_MODE_TRACE_PC;
	unsigned long kn, gen, n = 64;
	uint64_t *buf;
	uint64_t got;

	shm_fd = atoi(argv[0]);
	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE, MAP_SHARED,
		   shm_fd, 0);
	if (shm == MAP_FAILED)
		return 2;
	page = sysconf(_SC_PAGESIZE);
	c.rng = strtoull(argv[1], NULL, 0);
	attached = atoi(argv[2]);
	kfd = atoi(argv[3]);
	kstate = atoi(argv[4]);
	kn = strtoul(argv[5], NULL, 0);
	gen = strtoul(argv[6], NULL, 0);
	snprintf(c.tag, sizeof(c.tag), "exec'd image, variant %d/%d/%d",
		 attached, kfd >= 0, kstate);

	coverage_syscalls(&c, 3);
	if (kfd >= 0 && kstate == S_TRACE) {
		if (kn > 1) {
			buf = mmap(NULL, buf_bytes(kn), PROT_READ | PROT_WRITE,
				   MAP_SHARED, kfd, 0);
			if (expect(c.tag, OP_MMAP, buf == MAP_FAILED ? errno : 0,
				   M(OK), "kept fd %d, n %lu", kfd, kn)) {
				word_set(&buf[0], 0);
				syscall(SYS_getpid);
				got = word_get(&buf[0]);
				expect(c.tag, OP_EXECCHECK,
				       (got >= 1 || atomic_load(&shm->narrowed)) && got < kn ?
				       0 : -1, M(OK),
				       "enabled before execve: %" PRIu64 " records after getpid in the new image",
				       got);
				munmap((void *)buf, buf_bytes(kn));
			}
		}
		if (chance(&c, 60))
			expect(c.tag, OP_EXECCHECK, ioc(kfd, KIODISABLE, NULL),
			       M(OK), "KIODISABLE of the fd enabled before execve");
		return 0;
	}
	if (attached) {
		/* attached to a descriptor execve closed (now DYING) */
		fd = dev_open(&c, false);
		if (fd < 0)
			return 0;
		err = ioc(fd, KIOSETBUFSIZE, &n);
		expect(c.tag, OP_SETBUFSIZE, err, M(OK), "n %lu", n);
		/* unless an unload took the DYING descriptor meanwhile */
		expect(c.tag, OP_EXECCHECK, ioc(fd, KIOENABLE, &mode),
		       gen == cur_gen() ? M(EBUSY) : M(OK),
		       "KIOENABLE while still attached from before execve");
		if (chance(&c, 50))
			close(fd);
		return 0;
	}
	fd = kfd;
	if (fd < 0 || kstate != S_READY) {
		fd = dev_open(&c, false);
		if (fd < 0)
			return 0;
		kn = n;
		err = ioc(fd, KIOSETBUFSIZE, &n);
		if (!expect(c.tag, OP_SETBUFSIZE, err, M(OK), "n %lu", n))
			return 0;
	}
	err = ioc(fd, KIOENABLE, &mode);
	expect(c.tag, OP_EXECCHECK, err, M(OK), "KIOENABLE in the new image (fd %d)",
	       fd);
	if (!err) {
		buf = mmap(NULL, buf_bytes(kn), PROT_READ | PROT_WRITE,
			   MAP_SHARED, fd, 0);
		if (expect(c.tag, OP_MMAP, buf == MAP_FAILED ? errno : 0, M(OK),
			   "fd %d, n %lu", fd, kn)) {
			word_set(&buf[0], 0);
			syscall(SYS_getpid);
			got = word_get(&buf[0]);
			expect(c.tag, OP_EXECCHECK,
			       (got >= 1 || atomic_load(&shm->narrowed)) && got < kn ?
				       0 : -1, M(OK),
			       "%" PRIu64 " records after getpid", got);
		}
		if (chance(&c, 50))
			expect(c.tag, OP_DISABLE, ioc(fd, KIODISABLE, NULL),
			       M(OK), "fd %d", fd);
	}
	return 0;	/* exit() closes and unmaps, maybe still enabled */
}
