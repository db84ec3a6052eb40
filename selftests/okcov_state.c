// SPDX-License-Identifier: GPL-2.0
/*
 * okcov descriptor states (the table in uapi/okcov.h), after OpenBSD's
 * regress/sys/dev/kcov: every operation from every state (table-driven),
 * then the close, dying, exec, fork and thread-exit scenarios, and a leak
 * check of every way a descriptor is freed.
 */
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>

#include "kselftest_harness.h"
#include "okcov_test.h"
#include "okcov_scm.h"

/* Descriptor states as an unattached thread can observe them. */
enum { S_NONE, S_READY, S_TRACE, S_UNKNOWN };

static const char * const state_names[] = { "NONE", "READY", "TRACE", "?" };

/*
 * Observe a descriptor's state from a fresh (unattached) thread without
 * changing it: KIOSETBUFSIZE(0) is EINVAL only in NONE; KIOENABLE(bad mode)
 * is EINVAL in READY and EBUSY in TRACE.
 */
static int probe_fn(void *arg)
{
	int fd = *(int *)arg, err;

	err = st_setbufsize(fd, 0);
	if (err == EINVAL)
		return S_NONE;
	if (err != EBUSY)
		return S_UNKNOWN;
	err = st_enable(fd, 3);
	if (err == EINVAL)
		return S_READY;
	if (err == EBUSY)
		return S_TRACE;
	return S_UNKNOWN;
}

static int probe_state(int fd)
{
	return st_in_thread(probe_fn, &fd);
}

/* ---- every operation from every state ---- */

enum {
	OP_SETBUFSIZE, OP_ENABLE_PC, OP_ENABLE_CMP, OP_ENABLE_BAD,
	OP_ENABLE_LEGACY, OP_DISABLE, OP_MMAP, NOPS
};

enum {
	ST_NONE,		/* fresh descriptor */
	ST_READY,		/* KIOSETBUFSIZE done */
	ST_TRACE_SELF,		/* enabled by the calling thread */
	ST_TRACE_OTHER,		/* enabled by another, live thread */
	ST_READY_DISABLED,	/* enabled, then disabled */
	ST_READY_EXITED,	/* enabled by a thread that exited */
	ST_SELF_ATTACHED_READY,	/* READY; caller attached to another fd */
	ST_SELF_ATTACHED_NONE,	/* NONE; caller attached to another fd */
	ST_SELF_DYING_READY,	/* READY; caller attached to a DYING fd */
	ST_SELF_DYING_NONE,	/* NONE; caller attached to a DYING fd */
};

struct expect {
	int err;	/* errno, or 0 */
	int after;	/* the state the descriptor is in afterwards */
};

/* A thread that enables fd, then holds it until the gate opens. */
struct holder {
	int fd;
	struct st_gate gate;
	int err;
};

FIXTURE(state) {
	int fd, other;
	pthread_t helper;
	bool helper_running;
	struct holder holder;
};

struct state_table {
	int start;
	struct expect op[NOPS];
};

FIXTURE_VARIANT(state) {
	struct state_table t;
};

#define ROW(set, pc, cmp, bad, legacy, dis, map) \
	.t.op = { set, pc, cmp, bad, legacy, dis, map }
#define X(e, s)		{ e, S_##s }

#define ROWS_NONE ROW(X(0, READY), X(EBUSY, NONE), X(EBUSY, NONE),	\
		      X(EBUSY, NONE), X(EBUSY, NONE), X(EBUSY, NONE),	\
		      X(EINVAL, NONE))
#define ROWS_READY ROW(X(EBUSY, READY), X(0, TRACE), X(0, TRACE),	\
		       X(EINVAL, READY), X(0, TRACE), X(EBUSY, READY),	\
		       X(0, READY))
/* the caller is attached elsewhere: every enable is EBUSY */
#define ROWS_ATTACHED_READY ROW(X(EBUSY, READY), X(EBUSY, READY),	\
				X(EBUSY, READY), X(EBUSY, READY),	\
				X(EBUSY, READY), X(EBUSY, READY),	\
				X(0, READY))

FIXTURE_VARIANT_ADD(state, none) { .t.start = ST_NONE, ROWS_NONE };
FIXTURE_VARIANT_ADD(state, ready) { .t.start = ST_READY, ROWS_READY };
FIXTURE_VARIANT_ADD(state, trace_self) {
	.t.start = ST_TRACE_SELF,
	ROW(X(EBUSY, TRACE), X(EBUSY, TRACE), X(EBUSY, TRACE),
	    X(EBUSY, TRACE), X(EBUSY, TRACE), X(0, READY), X(0, TRACE)) };
FIXTURE_VARIANT_ADD(state, trace_other) {
	.t.start = ST_TRACE_OTHER,
	ROW(X(EBUSY, TRACE), X(EBUSY, TRACE), X(EBUSY, TRACE),
	    X(EBUSY, TRACE), X(EBUSY, TRACE), X(EBUSY, TRACE), X(0, TRACE)) };
FIXTURE_VARIANT_ADD(state, ready_disabled) {
	.t.start = ST_READY_DISABLED, ROWS_READY };
FIXTURE_VARIANT_ADD(state, ready_exited) {
	.t.start = ST_READY_EXITED, ROWS_READY };
FIXTURE_VARIANT_ADD(state, self_attached_ready) {
	.t.start = ST_SELF_ATTACHED_READY, ROWS_ATTACHED_READY };
FIXTURE_VARIANT_ADD(state, self_attached_none) {
	.t.start = ST_SELF_ATTACHED_NONE, ROWS_NONE };
FIXTURE_VARIANT_ADD(state, self_dying_ready) {
	.t.start = ST_SELF_DYING_READY, ROWS_ATTACHED_READY };
FIXTURE_VARIANT_ADD(state, self_dying_none) {
	.t.start = ST_SELF_DYING_NONE, ROWS_NONE };

static void *holder_fn(void *p)
{
	struct holder *h = p;

	h->err = st_enable(h->fd, KCOV_MODE_TRACE_PC);
	st_gate_wait(&h->gate);
	return NULL;
}

FIXTURE_SETUP(state)
{
	int start = variant->t.start;

	self->other = -1;
	self->helper_running = false;
	ASSERT_EQ(0, st_gate_init(&self->holder.gate));
	self->fd = st_open();
	ASSERT_LE(0, self->fd);
	self->holder.fd = self->fd;

	if (start == ST_SELF_ATTACHED_READY || start == ST_SELF_ATTACHED_NONE ||
	    start == ST_SELF_DYING_READY || start == ST_SELF_DYING_NONE) {
		self->other = st_open();
		ASSERT_LE(0, self->other);
		ASSERT_EQ(0, st_setbufsize(self->other, 16));
		ASSERT_EQ(0, st_enable(self->other, KCOV_MODE_TRACE_PC));
		if (start == ST_SELF_DYING_READY ||
		    start == ST_SELF_DYING_NONE) {
			/* last reference, no mapping: DYING, still attached */
			ASSERT_EQ(0, close(self->other));
			self->other = -1;
		}
	}
	if (start == ST_NONE || start == ST_SELF_ATTACHED_NONE ||
	    start == ST_SELF_DYING_NONE) {
		ASSERT_EQ(S_NONE, probe_state(self->fd));
		return;
	}

	ASSERT_EQ(0, st_setbufsize(self->fd, 16));
	switch (start) {
	case ST_TRACE_SELF:
		ASSERT_EQ(0, st_enable(self->fd, KCOV_MODE_TRACE_PC));
		ASSERT_EQ(S_TRACE, probe_state(self->fd));
		return;
	case ST_TRACE_OTHER:
		ASSERT_EQ(0, pthread_create(&self->helper, NULL, holder_fn,
					    &self->holder));
		self->helper_running = true;
		/* wait for the holder's enable */
		while (probe_state(self->fd) != S_TRACE &&
		       !__atomic_load_n(&self->holder.err, __ATOMIC_RELAXED))
			usleep(1000);
		ASSERT_EQ(0, self->holder.err);
		return;
	case ST_READY_DISABLED:
		ASSERT_EQ(0, st_enable(self->fd, KCOV_MODE_TRACE_PC));
		ASSERT_EQ(0, st_disable(self->fd));
		break;
	case ST_READY_EXITED:
		ASSERT_EQ(0, st_in_thread(st_thread_enable_pc,
					     &self->fd));
		break;
	}
	ASSERT_EQ(S_READY, probe_state(self->fd));
}

FIXTURE_TEARDOWN(state)
{
	if (self->helper_running) {
		st_gate_open(&self->holder.gate);
		pthread_join(self->helper, NULL);
	}
	st_disable(self->fd);
	close(self->fd);
	if (self->other >= 0) {
		st_disable(self->other);
		close(self->other);
	}
	st_gate_destroy(&self->holder.gate);
}

static int do_op(int fd, int op)
{
	switch (op) {
	case OP_SETBUFSIZE:
		return st_setbufsize(fd, 16);
	case OP_ENABLE_PC:
		return st_enable(fd, KCOV_MODE_TRACE_PC);
	case OP_ENABLE_CMP:
		return st_enable(fd, KCOV_MODE_TRACE_CMP);
	case OP_ENABLE_BAD:
		return st_enable(fd, 3);
	case OP_ENABLE_LEGACY:
		return st_enable_legacy(fd);
	case OP_DISABLE:
		return st_disable(fd);
	case OP_MMAP:
		return st_mmap_err(fd, st_page_size(),
				      PROT_READ | PROT_WRITE, MAP_SHARED, 0);
	}
	return -1;
}

static void check_op(struct __test_metadata *_metadata, int fd,
		     const struct state_table *t, int op)
{
	const struct expect *e = &t->op[op];
	int after;

	ASSERT_EQ(e->err, do_op(fd, op));
	after = probe_state(fd);
	ASSERT_EQ(e->after, after) {
		TH_LOG("state after the operation: expected %s, got %s",
		       state_names[e->after], state_names[after]);
	}
}

TEST_F(state, setbufsize)
{
	check_op(_metadata, self->fd, &variant->t, OP_SETBUFSIZE);
}

TEST_F(state, enable_pc)
{
	check_op(_metadata, self->fd, &variant->t, OP_ENABLE_PC);
}

TEST_F(state, enable_cmp)
{
	check_op(_metadata, self->fd, &variant->t, OP_ENABLE_CMP);
}

TEST_F(state, enable_bad_mode)
{
	check_op(_metadata, self->fd, &variant->t, OP_ENABLE_BAD);
}

TEST_F(state, enable_legacy)
{
	check_op(_metadata, self->fd, &variant->t, OP_ENABLE_LEGACY);
}

TEST_F(state, disable)
{
	check_op(_metadata, self->fd, &variant->t, OP_DISABLE);
}

TEST_F(state, mmap)
{
	check_op(_metadata, self->fd, &variant->t, OP_MMAP);
}

/* ---- scenarios ---- */

/*
 * close: a descriptor closed while enabled (no mapping) is DYING and stays
 * attached: its thread can enable nothing else until it exits. Another
 * thread can.
 */
struct close_ctx {
	int fd2;
	int err_close, err_enable, err_disable;
};

static int close_while_enabled(void *arg)
{
	struct close_ctx *x = arg;
	int fd = st_open();

	if (fd < 0 || st_setbufsize(fd, 16) ||
	    st_enable(fd, KCOV_MODE_TRACE_PC))
		return -1;
	x->err_close = close(fd) ? errno : 0;
	x->err_enable = st_enable(x->fd2, KCOV_MODE_TRACE_PC);
	x->err_disable = st_disable(x->fd2);
	return 0;
}

TEST(close_enabled)
{
	struct close_ctx x = { 0 };

	x.fd2 = st_open();
	ASSERT_LE(0, x.fd2);
	ASSERT_EQ(0, st_setbufsize(x.fd2, 16));

	ASSERT_EQ(0, st_in_thread(close_while_enabled, &x));
	ASSERT_EQ(0, x.err_close);
	ASSERT_EQ(EBUSY, x.err_enable);
	ASSERT_EQ(EBUSY, x.err_disable);

	/* fd2 was untouched, and the exited thread's DYING one is gone */
	ASSERT_EQ(S_READY, probe_state(x.fd2));
	ASSERT_EQ(0, st_in_thread(st_thread_enable_pc, &x.fd2));
	ASSERT_EQ(0, st_enable(x.fd2, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(0, st_disable(x.fd2));
	close(x.fd2);
}

/* close of one of two references (dup) leaves the descriptor TRACE. */
TEST(close_dup)
{
	int fd, dupfd;

	fd = st_open();
	ASSERT_LE(0, fd);
	dupfd = dup(fd);
	ASSERT_LE(0, dupfd);
	ASSERT_EQ(0, st_setbufsize(fd, 16));
	/* dup shares the descriptor: already READY */
	ASSERT_EQ(EBUSY, st_setbufsize(dupfd, 16));
	ASSERT_EQ(0, st_enable(dupfd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(0, close(fd));
	ASSERT_EQ(S_TRACE, probe_state(dupfd));
	ASSERT_EQ(0, st_disable(dupfd));
	ASSERT_EQ(S_READY, probe_state(dupfd));
	close(dupfd);
}

/*
 * dying: thread A enables; thread B (main) drops the last reference
 * (close + munmap). A stays attached to the DYING descriptor: it cannot
 * enable or disable any other. After A exits, a new thread can.
 */
struct dying_ctx {
	struct st_cov c;
	int fd2;
	struct st_gate enabled, dropped;
	int err_new, err_enable, err_enable2, err_disable2, err_cmp2;
	pid_t tid;
};

static void *dying_thread(void *p)
{
	struct dying_ctx *x = p;

	x->tid = gettid();
	x->err_new = st_new(&x->c, 4096);
	if (!x->err_new)
		x->err_enable = st_enable(x->c.fd, KCOV_MODE_TRACE_PC);
	st_gate_open(&x->enabled);
	st_gate_wait(&x->dropped);
	sys_getpid_n(10);	/* nothing to record into, nothing to crash */
	x->err_enable2 = st_enable(x->fd2, KCOV_MODE_TRACE_PC);
	x->err_cmp2 = st_enable(x->fd2, KCOV_MODE_TRACE_CMP);
	x->err_disable2 = st_disable(x->fd2);
	return NULL;
}

TEST(dying)
{
	struct dying_ctx x = { 0 };
	pthread_t th;

	ASSERT_EQ(0, st_gate_init(&x.enabled));
	ASSERT_EQ(0, st_gate_init(&x.dropped));
	x.fd2 = st_open();
	ASSERT_LE(0, x.fd2);
	ASSERT_EQ(0, st_setbufsize(x.fd2, 16));

	ASSERT_EQ(0, pthread_create(&th, NULL, dying_thread, &x));
	st_gate_wait(&x.enabled);
	if (x.err_new || x.err_enable) {
		st_gate_open(&x.dropped);
		pthread_join(th, NULL);
		ASSERT_EQ(0, x.err_new);
		ASSERT_EQ(0, x.err_enable);
	}
	/* drop every reference from this thread */
	ASSERT_EQ(0, munmap((void *)x.c.buf, st_map_len(x.c.n)));
	ASSERT_EQ(0, close(x.c.fd));
	st_gate_open(&x.dropped);
	ASSERT_EQ(0, st_join(th, &x.tid));

	ASSERT_EQ(EBUSY, x.err_enable2);
	ASSERT_EQ(EBUSY, x.err_cmp2);
	ASSERT_EQ(EBUSY, x.err_disable2);
	/* A exited: a new thread can enable fd2 */
	ASSERT_EQ(S_READY, probe_state(x.fd2));
	ASSERT_EQ(0, st_in_thread(st_thread_enable_pc, &x.fd2));
	close(x.fd2);
	st_gate_destroy(&x.enabled);
	st_gate_destroy(&x.dropped);
}

/*
 * exec: a forked child enables the inherited descriptor and execs this
 * binary, which calls getppid() and checks it is still attached. The
 * getppid syscall and the exec appear in the parent's mapping; after the
 * child exits the parent can enable the descriptor.
 */
#define EXEC_CHILD	"--exec-child"
#define EXEC_DYING	"--exec-dying"

#define EXEC_N		(512 << 10)
#define EXEC_REFILLED	11

static int exec_child_main(int argc, char **argv)
{
	int fd = argc > 2 ? atoi(argv[2]) : -1;
	int ret = 0;
	uint64_t *buf;

	/* still attached after exec: enabling is EBUSY */
	if (st_enable(fd, KCOV_MODE_TRACE_PC) != EBUSY)
		return 3;
	/*
	 * A debug kernel (lockdep, KASAN) runs more than EXEC_N functions in
	 * execve(): if the buffer is full, empty it so that our own syscall
	 * still shows, and say so.
	 */
	buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (buf == MAP_FAILED)
		return 8;
	if (__atomic_load_n(&buf[0], __ATOMIC_RELAXED) >= EXEC_N - 1) {
		__atomic_store_n(&buf[0], 0, __ATOMIC_RELAXED);
		ret = EXEC_REFILLED;
	}
	sys_getppid_n(10);
	return ret;
}

/* After exec closed the (close-on-exec) descriptor: DYING, attached. */
static int exec_dying_main(void)
{
	struct st_cov c;

	if (st_new(&c, 16))
		return 4;
	if (st_enable(c.fd, KCOV_MODE_TRACE_PC) != EBUSY)
		return 5;
	if (st_disable(c.fd) != EBUSY)
		return 6;
	return 0;
}

/*
 * Fork a child that enables fd and execs this binary in mode. fd < 0: the
 * child opens a close-on-exec descriptor of its own, so that the exec
 * drops its last reference.
 */
static int run_exec_child(struct __test_metadata *_metadata,
			  const char *mode, int fd)
{
	static const char * const why[] = {
		"", "enable failed", "exec failed", "not attached after exec",
		"new descriptor failed", "DYING not attached after exec",
		"DYING: disable not EBUSY", "open failed", "mmap failed",
	};
	char fdstr[16];
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (fd < 0) {
			fd = open(OKCOV_PATH, O_RDWR | O_CLOEXEC);
			if (fd < 0 || st_setbufsize(fd, 16))
				_exit(7);
		}
		snprintf(fdstr, sizeof(fdstr), "%d", fd);
		if (st_enable(fd, KCOV_MODE_TRACE_PC))
			_exit(1);
		execl("/proc/self/exe", "okcov_state", mode, fdstr,
		      (char *)NULL);
		_exit(2);
	}
	EXPECT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) == EXEC_REFILLED)
		return EXEC_REFILLED;
	EXPECT_EQ(0, WEXITSTATUS(status)) {
		TH_LOG("child exit %d: %s", WEXITSTATUS(status),
		       WEXITSTATUS(status) < ARRAY_SIZE(why) ?
		       why[WEXITSTATUS(status)] : "?");
	}
	return WEXITSTATUS(status);
}

TEST(exec)
{
	struct st_cov c;
	int refilled;

	ASSERT_EQ(0, ksyms_load());
	ASSERT_EQ(0, st_new(&c, EXEC_N));
	refilled = run_exec_child(_metadata, EXEC_CHILD, c.fd);
	ASSERT_TRUE(!refilled || refilled == EXEC_REFILLED);

	TH_LOG("%llu records%s", (unsigned long long)st_count(&c),
	       refilled ? ", after the exec'd image emptied a full buffer" : "");
	ASSERT_GT(c.n, st_count(&c));
	if (!refilled)
		ASSERT_TRUE(st_has_syscall(&c, "execve"));
	ASSERT_TRUE(st_has_syscall(&c, "getppid")) {
		st_dump(&c, 100);
	}
	/* the child's exit detached it */
	ASSERT_EQ(S_READY, probe_state(c.fd));
	ASSERT_EQ(0, st_enable(c.fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(0, st_disable(c.fd));
	st_free(&c);
}

/*
 * exec drops the last reference of an enabled close-on-exec descriptor:
 * DYING, still attached in the new image.
 */
TEST(exec_dying)
{
	run_exec_child(_metadata, EXEC_DYING, -1);
}

/* fork: a child enables the shared descriptor and exits without disabling;
 * its exit detaches it and the parent enables the same descriptor.
 */
TEST(fork_child_exits_attached)
{
	struct st_cov c;
	int status;
	pid_t pid;

	ASSERT_EQ(0, ksyms_load());
	ASSERT_EQ(0, st_new(&c, 64 << 10));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (st_enable(c.fd, KCOV_MODE_TRACE_PC))
			_exit(1);
		st_reset(&c);
		sys_getppid_n(10);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_TRUE(st_has_syscall(&c, "getppid"));

	ASSERT_EQ(S_READY, probe_state(c.fd));
	ASSERT_EQ(0, st_enable(c.fd, KCOV_MODE_TRACE_PC));
	st_reset(&c);
	sys_getpid_n(5);
	ASSERT_EQ(0, st_disable(c.fd));
	ASSERT_TRUE(st_has_syscall(&c, "getpid"));
	ASSERT_FALSE(st_has_syscall(&c, "getppid"));
	st_free(&c);
}

/* fork: the child of an enabled thread starts detached. It cannot disable
 * or enable the parent's descriptor, can attach one of its own, and its
 * work does not reach the parent's buffer.
 */
TEST(fork_child_detached)
{
	struct st_cov c;
	int status;
	pid_t pid;

	ASSERT_EQ(0, ksyms_load());
	ASSERT_EQ(0, st_new(&c, 64 << 10));
	ASSERT_EQ(0, st_enable(c.fd, KCOV_MODE_TRACE_PC));
	st_reset(&c);
	pid = fork();
	if (pid == 0) {
		struct st_cov own;

		if (st_disable(c.fd) != EBUSY)
			_exit(1);
		if (st_enable(c.fd, KCOV_MODE_TRACE_PC) != EBUSY)
			_exit(2);
		sys_getppid_n(20);
		if (st_new(&own, 16) ||
		    st_enable(own.fd, KCOV_MODE_TRACE_PC))
			_exit(3);
		_exit(0);
	}
	ASSERT_LE(0, pid);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, st_disable(c.fd));

	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	/* the parent's fork was recorded, the child's work not */
	ASSERT_TRUE(st_has_syscall(&c, "clone") ||
		    st_has_syscall(&c, "fork") ||
		    st_has_syscall(&c, "clone3")) {
		st_dump(&c, 100);
	}
	ASSERT_FALSE(st_has_syscall(&c, "getppid")) {
		st_dump(&c, 200);
	}
	st_free(&c);
}

/* thread exit: TRACE goes back to READY; another thread may enable it. */
static int enable_getppid_exit(void *arg)
{
	struct st_cov *c = arg;
	int err = st_enable(c->fd, KCOV_MODE_TRACE_PC);

	st_reset(c);
	sys_getppid_n(5);
	return err;
}

TEST(thread_exit_detaches)
{
	struct st_cov c;

	ASSERT_EQ(0, ksyms_load());
	ASSERT_EQ(0, st_new(&c, 64 << 10));
	ASSERT_EQ(0, st_in_thread(enable_getppid_exit, &c));
	ASSERT_TRUE(st_has_syscall(&c, "getppid"));
	ASSERT_EQ(S_READY, probe_state(c.fd));

	ASSERT_EQ(0, st_enable(c.fd, KCOV_MODE_TRACE_PC));
	st_reset(&c);
	sys_getpid_n(5);
	ASSERT_EQ(0, st_disable(c.fd));
	ASSERT_TRUE(st_has_syscall(&c, "getpid"));
	ASSERT_FALSE(st_has_syscall(&c, "getppid"));
	st_free(&c);
}

/*
 * SCM_RIGHTS: OpenBSD refuses to pass a kcov descriptor; a Linux character
 * device cannot, and okcov allows it (okcov(4), CAVEATS). The
 * receiver shares the descriptor: it can enable it, and its coverage
 * arrives in the sender's mapping.
 */
TEST(scm_rights)
{
	int sv[2], status;
	struct st_cov c;
	pid_t pid;

	ASSERT_EQ(0, ksyms_load());
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* never had the descriptor: receives it */
		int fd = st_recv_fd(sv[1], 0);

		if (fd < 0)
			_exit(1);
		if (st_enable(fd, KCOV_MODE_TRACE_PC))
			_exit(2);
		sys_getppid_n(10);
		if (st_disable(fd))
			_exit(3);
		_exit(0);
	}
	ASSERT_EQ(0, st_new(&c, 64 << 10));
	ASSERT_EQ(0, st_send_fd(sv[0], c.fd, 0));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_TRUE(st_has_syscall(&c, "getppid"));
	st_free(&c);
	close(sv[0]);
	close(sv[1]);
}

/*
 * An fd in flight is a reference: enabled, sent, and closed by the sender,
 * the descriptor stays TRACE and records; received back, it is the same
 * descriptor, still attached to the sender.
 */
TEST(scm_rights_in_flight_keeps)
{
	int sv[2], fd, back;
	struct st_cov c = { .n = 64 << 10 };

	ASSERT_EQ(0, ksyms_load());
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	fd = st_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, st_setbufsize(fd, c.n));
	ASSERT_EQ(0, st_enable(fd, KCOV_MODE_TRACE_PC));
	ASSERT_EQ(0, st_send_fd(sv[0], fd, 0));
	ASSERT_EQ(0, close(fd));	/* only the message holds it now */
	sys_getppid_n(10);
	back = st_recv_fd(sv[1], 0);
	ASSERT_LE(0, back);
	ASSERT_EQ(S_TRACE, probe_state(back));
	ASSERT_EQ(0, st_disable(back));
	c.fd = back;
	c.buf = st_map(back, c.n);
	ASSERT_NE(MAP_FAILED, c.buf);
	ASSERT_TRUE(st_has_syscall(&c, "getppid"));
	st_free(&c);
	close(sv[0]);
	close(sv[1]);
}

/*
 * The last reference in flight, dropped by the sockets' close: the same
 * as close() while enabled. The descriptor is DYING, its thread cannot
 * enable or disable another until it exits, and then another can.
 */
struct scm_drop_ctx {
	int fd2;
	int err_send, err_close, err_sockets;
	int err_enable_flight, err_enable_dying, err_disable_dying;
};

static int scm_drop_enabled(void *arg)
{
	struct scm_drop_ctx *x = arg;
	int sv[2], fd = st_open();

	if (fd < 0 || st_setbufsize(fd, 16) ||
	    st_enable(fd, KCOV_MODE_TRACE_PC) ||
	    socketpair(AF_UNIX, SOCK_DGRAM, 0, sv))
		return -1;
	x->err_send = st_send_fd(sv[0], fd, 0) ? errno : 0;
	x->err_close = close(fd) ? errno : 0;
	x->err_enable_flight = st_enable(x->fd2, KCOV_MODE_TRACE_PC);
	x->err_sockets = close(sv[0]) || close(sv[1]) ? errno : 0;
	x->err_enable_dying = st_enable(x->fd2, KCOV_MODE_TRACE_PC);
	x->err_disable_dying = st_disable(x->fd2);
	return 0;
}

TEST(scm_rights_in_flight_dropped)
{
	struct scm_drop_ctx x = { 0 };

	x.fd2 = st_open();
	ASSERT_LE(0, x.fd2);
	ASSERT_EQ(0, st_setbufsize(x.fd2, 16));

	ASSERT_EQ(0, st_in_thread(scm_drop_enabled, &x));
	ASSERT_EQ(0, x.err_send);
	ASSERT_EQ(0, x.err_close);
	ASSERT_EQ(0, x.err_sockets);
	ASSERT_EQ(EBUSY, x.err_enable_flight);
	ASSERT_EQ(EBUSY, x.err_enable_dying);
	ASSERT_EQ(EBUSY, x.err_disable_dying);

	/* the thread exited: its DYING descriptor is gone, fd2 is free */
	ASSERT_EQ(S_READY, probe_state(x.fd2));
	ASSERT_EQ(0, st_in_thread(st_thread_enable_pc, &x.fd2));
	close(x.fd2);
}

/* ---- nothing leaks, whichever way a descriptor goes ---- */

#define LEAK_N		(512UL << 10)	/* 4 MiB buffers */

enum { LEAK_READY_CLOSE, LEAK_TRACE_DISABLE, LEAK_TRACE_EXIT, LEAK_DYING };

FIXTURE(leak) {
	int iterations;
};

FIXTURE_VARIANT(leak) {
	int how;
};

FIXTURE_VARIANT_ADD(leak, ready_close) { .how = LEAK_READY_CLOSE };
FIXTURE_VARIANT_ADD(leak, trace_disable) { .how = LEAK_TRACE_DISABLE };
FIXTURE_VARIANT_ADD(leak, trace_exit) { .how = LEAK_TRACE_EXIT };
FIXTURE_VARIANT_ADD(leak, dying) { .how = LEAK_DYING };

FIXTURE_SETUP(leak)
{
	const char *env = getenv("OKCOV_LEAK_ITERATIONS");

	/* 64 x 4 MiB: a leak of one buffer per iteration is 256 MiB */
	self->iterations = env ? atoi(env) : 64;
}

FIXTURE_TEARDOWN(leak)
{
}

struct leak_ctx {
	int how;
	struct st_cov c;
	struct st_gate enabled, dropped;
	int err;
	pid_t tid;
	long *alive;	/* the counters while enabled, if not NULL */
};

static void *leak_thread(void *p)
{
	struct leak_ctx *x = p;

	x->tid = gettid();
	x->err = st_new(&x->c, LEAK_N);
	if (!x->err) {
		x->c.buf[0] = 0;
		x->err = st_enable(x->c.fd, KCOV_MODE_TRACE_PC);
	}
	if (!x->err)
		sys_getpid_n(2);
	/* Before the disable: its entry is freed a grace period after. */
	if (!x->err && x->alive && x->how == LEAK_TRACE_DISABLE) {
		x->alive[0] = st_stat("descriptors");
		x->alive[1] = st_stat("entries");
	}
	if (!x->err && x->how == LEAK_TRACE_DISABLE)
		x->err = st_disable(x->c.fd);
	st_gate_open(&x->enabled);
	st_gate_wait(&x->dropped);
	return NULL;
}

/*
 * One descriptor's life; 0 or an errno. @alive, if not NULL, gets the
 * descriptors and entries counters while the thread is enabled (or its
 * descriptor DYING): the positive control that the counters see it.
 */
static int leak_once(int how, long alive[2])
{
	struct leak_ctx x = { .how = how, .alive = alive };
	pthread_t th;
	int err;

	if (how == LEAK_READY_CLOSE) {
		err = st_new(&x.c, LEAK_N);
		if (!err)
			x.c.buf[LEAK_N - 1] = 1;
		if (alive) {
			alive[0] = st_stat("descriptors");
			alive[1] = st_stat("entries");
		}
		st_free(&x.c);
		return err;
	}
	if (st_gate_init(&x.enabled) || st_gate_init(&x.dropped))
		return errno;
	err = pthread_create(&th, NULL, leak_thread, &x);
	if (err)
		return err;
	st_gate_wait(&x.enabled);
	if (how == LEAK_DYING)
		st_free(&x.c);	/* last reference: DYING */
	if (alive && how != LEAK_TRACE_DISABLE) {
		alive[0] = st_stat("descriptors");
		alive[1] = st_stat("entries");
	}
	st_gate_open(&x.dropped);
	st_join(th, &x.tid);		/* exit: detach, or free DYING */
	st_free(&x.c);
	st_gate_destroy(&x.enabled);
	st_gate_destroy(&x.dropped);
	return x.err;
}

/* VmallocUsed once it stops moving (frees wait for RCU grace periods). */
static long vmalloc_settled(void)
{
	long prev = st_meminfo_kb("VmallocUsed"), now;
	int i, stable = 0;

	for (i = 0; i < 200 && stable < 3; i++) {
		usleep(50 * 1000);
		now = st_meminfo_kb("VmallocUsed");
		stable = now == prev ? stable + 1 : 0;
		prev = now;
	}
	return prev;
}

/*
 * Everything a descriptor's life allocates goes back, whichever way it
 * ends: its buffer (VmallocUsed), the descriptor and its task-hash entry
 * (okcov's descriptors and entries counters, back to where they were),
 * and the task_struct reference each entry holds (the task_struct slab:
 * each iteration's thread has exited, so a reference left behind is one
 * task_struct more per iteration). A leaked descriptor, entry or task
 * reference is no vmalloc memory: VmallocUsed alone would miss all three.
 *
 * Red, tried on debian-6.1 (both at once): the exit probe's okcov_free()
 * of a DYING descriptor left out (dying: descriptors +64), and
 * put_task_struct() left out of the entry's free (trace_disable,
 * trace_exit: task_structs +64, while the entries counter is back to 0
 * and VmallocUsed too).
 */
TEST_F_TIMEOUT(leak, nothing_left, 180)
{
	const long buf_kb = LEAK_N * 8 / 1024;
	long base, peak, now = 0, one, alive[2] = { -1, -1 };
	long desc0, ent0, tasks0, desc, ent, tasks;
	struct st_cov hold;
	bool vmalloced;
	time_t deadline;
	int i;

	desc0 = st_stat_settle("descriptors", 0);
	ent0 = st_stat_settle("entries", 0);
	ASSERT_LE(0, desc0) {
		TH_LOG("no descriptors counter in /sys/module/okcov/parameters");
	}
	ASSERT_LE(0, ent0);
	tasks0 = st_task_structs();
	base = vmalloc_settled();
	ASSERT_LT(0, base);

	/* Are buffers vmalloc'ed? Then VmallocUsed is the measure. */
	ASSERT_EQ(0, st_new(&hold, LEAK_N));
	one = st_meminfo_kb("VmallocUsed") - base;
	st_free(&hold);
	st_stat_settle("descriptors", desc0);
	vmalloced = one >= buf_kb / 2;
	if (!vmalloced)
		TH_LOG("a %ld KiB buffer moved VmallocUsed by %ld KiB: not vmalloc-backed, not measured",
		       buf_kb, one);

	for (i = 0; i < self->iterations; i++) {
		int err = leak_once(variant->how, i ? NULL : alive);

		ASSERT_EQ(0, err) {
			TH_LOG("iteration %d: %s (VmallocUsed %ld kB, was %ld kB)",
			       i, strerror(err), st_meminfo_kb("VmallocUsed"),
			       base);
		}
	}
	peak = st_meminfo_kb("VmallocUsed");

	/* positive control: the counters saw the first iteration's */
	ASSERT_EQ(desc0 + 1, alive[0]);
	ASSERT_EQ(ent0 + (variant->how == LEAK_READY_CLOSE ? 0 : 1), alive[1]);

	/* buffers are freed after an RCU grace period: give them time */
	deadline = time(NULL) + 10;
	do {
		now = vmalloc_settled();
		if (!vmalloced || now - base < 2 * buf_kb)
			break;
	} while (time(NULL) < deadline);
	desc = st_stat_settle("descriptors", desc0);
	ent = st_stat_settle("entries", ent0);
	tasks = tasks0 < 0 ? -1 : st_task_structs_settle(tasks0 + 8);
	TH_LOG("%d x %ld KiB: VmallocUsed %ld kB before, %ld after the loop, %ld settled",
	       self->iterations, buf_kb, base, peak, now);
	TH_LOG("descriptors %ld -> %ld, entries %ld -> %ld, task_structs %ld -> %ld",
	       desc0, desc, ent0, ent, tasks0, tasks);
	if (vmalloced)
		ASSERT_GT(2 * buf_kb, now - base);
	ASSERT_EQ(desc0, desc);
	ASSERT_EQ(ent0, ent);
	/* a reference per iteration is 64; other threads come and go */
	if (tasks0 >= 0 && self->iterations >= 32)
		ASSERT_GE(tasks0 + 8, tasks);
}

/* The exec'd image of the exec tests, or the test harness. */
OKCOV_HARNESS_ORDER();

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], EXEC_CHILD))
		return exec_child_main(argc, argv);
	if (argc > 1 && !strcmp(argv[1], EXEC_DYING))
		return exec_dying_main();
	return test_harness_run(argc, argv);
}
