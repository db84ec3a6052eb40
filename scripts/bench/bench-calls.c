// SPDX-License-Identifier: GPL-2.0
/*
 * The calls of the signal benchmark's programs (bench-prog.c), and the
 * environment each program starts from: calls that never block and never
 * harm the process that runs them.
 *
 * A program is up to PROG_MAX calls of the table below, each with up to
 * PROG_ARGS arguments.  Every argument is a raw 64-bit number that the
 * call's executor turns into something the call takes: a descriptor the
 * program made earlier (preferring one of the right kind), a buffer, a
 * length, a path, flags.  So any number is a valid argument, a random one
 * as much as a mutated one, and mutating a number moves to a neighbouring
 * choice.
 *
 * What keeps it safe and nonblocking:
 *  - descriptors are only those the program made (or -1 / a closed
 *    number): never the recorders' or stdio.  Every descriptor it makes
 *    is nonblocking (O_NONBLOCK forced, F_SETFL and FIONBIO keep it),
 *    waits have a zero timeout, locks are LOCK_NB / F_SETLK;
 *  - memory calls work inside a reserve of NREGION regions the process
 *    owns, which prog_run() maps PROT_NONE again before each program;
 *  - buffers are a static buffer with room for the longest length, or an
 *    address the kernel must refuse (NULL, a kernel address, the reserve);
 *  - paths that can be created or removed are scratch names under /tmp,
 *    put back before each program, and SIGPIPE and SIGIO are ignored;
 *  - after each program every descriptor it left open is closed.
 */
#include <err.h>
#include <ftw.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/times.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <linux/fs.h>

#include "bench.h"

/*
 * The reserve lies far below where mmap(NULL) places anything (top down
 * from below the stack), so that no allocation of this process lands in
 * a hole a program made in it.
 */
#define RESERVE		((char *)0x100000000000UL)
#define NREGION		4
#define REGION		(4UL << 20)
#define MAXLEN		65536
#define NFD		16

#define S_FILE		"/tmp/okcov-sig-file"
#define S_NEW		"/tmp/okcov-sig-new"
#define S_DIR		"/tmp/okcov-sig-dir"
#define S_LINK		"/tmp/okcov-sig-link"

#define PICK(tab, v)	((tab)[(v) % ARRAY_SIZE(tab)])

static struct {
	int fd[NFD], kind[NFD], n;
} st;

static char *reserve;
static char ubuf[2 * MAXLEN + 4096] __attribute__((aligned(4096)));
static int futex_word;
/* Descriptors open before the first program: never closed by one. */
static unsigned char keep[1024];

static void put_fd(long fd, int kind)
{
	if (fd < 0 || st.n == NFD)
		return;
	st.fd[st.n] = fd;
	st.kind[st.n++] = kind;
}

/*
 * A descriptor argument: with v's two low bits nonzero, one of the
 * program's descriptors of that kind if it has any; else any of them, or
 * an invalid number (-1 or one never open).
 */
static int fdk(uint64_t v, int kind)
{
	int i, c = 0, pick;

	if (kind != K_ANY && (v & 3)) {
		for (i = 0; i < st.n; i++)
			c += st.kind[i] == kind;
		if (c) {
			pick = (v >> 2) % c;
			for (i = 0; i < st.n; i++)
				if (st.kind[i] == kind && !pick--)
					return st.fd[i];
		}
	}
	v >>= 2;
	pick = v % (st.n + 1);
	if (pick < st.n)
		return st.fd[pick];
	return (v >> 8) & 1 ? -1 : 999;
}

#define FD(v)		fdk(v, K_ANY)

static size_t len_of(uint64_t v)
{
	static const size_t lens[] = { 0, 1, 7, 8, 64, 512, 4096, 4097, MAXLEN };

	return PICK(lens, v);
}

/* A buffer with room for MAXLEN bytes, or (one time in four) one the kernel refuses. */
static void *buf_of(uint64_t v)
{
	switch (v % 16) {
	case 0 ... 9:
		return ubuf;
	case 10:
		return ubuf + 1;
	case 11:
		return ubuf + 4095;
	case 12:
		return NULL;
	case 13:
		return (void *)0xffffffff81000000UL;
	default:
		return reserve + ((v >> 4) % NREGION) * REGION;
	}
}

/* An address in the reserve, page aligned or (rarely) not. */
static char *addr_of(uint64_t v)
{
	return reserve + (v % NREGION) * REGION + ((v >> 4) % 4) * 4096 +
	       ((v >> 8) % 16 == 0);
}

static size_t maplen_of(uint64_t v)
{
	static const size_t lens[] = { 4096, 8192, 3 * 4096, 65536, 1 << 20, 0, 100 };

	return PICK(lens, v);
}

/* Each flag one time in four: most calls get one or two. */
static long subset(const long *bits, int n, uint64_t v)
{
	long r = 0;
	int i;

	v &= v >> 32;
	for (i = 0; i < n; i++)
		if (v >> i & 1)
			r |= bits[i];
	return r;
}

#define SUBSET(tab, v)	subset(tab, ARRAY_SIZE(tab), v)

static const char *const paths[] = {
	"/proc/self/stat", "/proc/self/status", "/proc/self/maps",
	"/proc/version", "/proc/self/fd", S_FILE, S_NEW, S_DIR, S_DIR "/f",
	S_LINK, "/tmp", "/dev/null", "/dev/zero", "/", "/proc/self/exe",
	"/nonexistent/x", "",
};

/* The names a program may create, remove or rename. */
static const char *const scratch[] = {
	S_FILE, S_NEW, S_DIR, S_DIR "/f", S_LINK, S_NEW "/f",
};

#define PATH(v)		PICK(paths, v)
#define SCRATCH(v)	PICK(scratch, v)

static long off_of(uint64_t v)
{
	static const long offs[] = { 0, 1, 4096, 1 << 20, -1 };

	return PICK(offs, v);
}

static void ts_of(struct timespec *ts, uint64_t v)
{
	static const long ns[] = { 0, 1, 1000000, 1000000000, 100000000000L };

	ts->tv_sec = PICK(ns, v) / 1000000000;
	ts->tv_nsec = PICK(ns, v) % 1000000000;
}

/* ---- producers ---- */

static long c_open(const uint64_t *a)
{
	static const long acc[] = { O_RDONLY, O_RDWR, O_WRONLY, O_RDWR | O_WRONLY };
	static const long fl[] = { O_CREAT, O_TRUNC, O_APPEND, O_DIRECTORY,
		O_EXCL, O_NOFOLLOW, O_CLOEXEC, O_PATH, O_NOATIME, O_SYNC,
		O_DIRECT, O_TMPFILE };
	long r = open(PATH(a[0]), PICK(acc, a[1] % 7 % 4) |
		      SUBSET(fl, a[2] & (a[2] >> 16)) | O_NONBLOCK, 0600);

	put_fd(r, K_FILE);
	return r;
}

static long c_pipe2(const uint64_t *a)
{
	static const long fl[] = { O_CLOEXEC, O_DIRECT };
	int p[2];
	long r = pipe2(p, SUBSET(fl, a[0]) | O_NONBLOCK);

	if (!r) {
		put_fd(p[0], K_PIPE);
		put_fd(p[1], K_PIPE);
	}
	return r;
}

static long c_socketpair(const uint64_t *a)
{
	static const int types[] = { SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET, SOCK_RAW };
	int s[2];
	long r = socketpair(AF_UNIX, PICK(types, a[0]) | SOCK_NONBLOCK |
			    (a[1] & 1 ? SOCK_CLOEXEC : 0), 0, s);

	if (!r) {
		put_fd(s[0], K_SOCK);
		put_fd(s[1], K_SOCK);
	}
	return r;
}

static long c_eventfd(const uint64_t *a)
{
	static const unsigned int init[] = { 0, 1, 2, 0xfffffffe };
	static const long fl[] = { EFD_CLOEXEC, EFD_SEMAPHORE };
	long r = eventfd(PICK(init, a[0]), SUBSET(fl, a[1]) | EFD_NONBLOCK);

	put_fd(r, K_EVENT);
	return r;
}

static long c_epoll_create(const uint64_t *a)
{
	static const int fl[] = { 0, EPOLL_CLOEXEC, 1 };
	long r = epoll_create1(PICK(fl, a[0]));

	put_fd(r, K_EPOLL);
	return r;
}

static long c_timerfd_create(const uint64_t *a)
{
	static const int clk[] = { CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME,
		CLOCK_REALTIME_ALARM, -1 };
	long r = timerfd_create(PICK(clk, a[0]), TFD_NONBLOCK |
				(a[1] & 1 ? TFD_CLOEXEC : 0));

	put_fd(r, K_TIMER);
	return r;
}

static long c_memfd(const uint64_t *a)
{
	static const long fl[] = { MFD_CLOEXEC, MFD_ALLOW_SEALING, MFD_HUGETLB };
	long r = memfd_create("okcov-sig", SUBSET(fl, a[0] & a[1]));

	put_fd(r, K_MEMFD);
	return r;
}

static long c_signalfd(const uint64_t *a)
{
	static const int sigs[] = { SIGUSR1, SIGUSR2, SIGCHLD, SIGALRM, SIGIO };
	sigset_t set;
	unsigned int i;
	long r;

	sigemptyset(&set);
	for (i = 0; i < ARRAY_SIZE(sigs); i++)
		if (a[1] >> i & 1)
			sigaddset(&set, sigs[i]);
	r = signalfd(a[0] & 1 ? fdk(a[0] >> 1, K_SIGNAL) : -1, &set,
		     SFD_NONBLOCK | (a[2] & 1 ? SFD_CLOEXEC : 0));
	put_fd(r, K_SIGNAL);
	return r;
}

static long c_pidfd(const uint64_t *a)
{
	long r = syscall(SYS_pidfd_open, a[0] & 1 ? getpid() : 0x7ffffff0,
			 a[1] % 4 == 0 ? 1 : 0);

	put_fd(r, K_PIDFD);
	return r;
}

static long c_dup(const uint64_t *a)
{
	int fd = FD(a[0]), k = K_ANY, i;
	long r;

	for (i = 0; i < st.n; i++)
		if (st.fd[i] == fd)
			k = st.kind[i];
	/* dup3 into a number no descriptor has yet: never one kept */
	if (a[1] & 1)
		r = dup3(fd, 900 + a[2] % 8, a[2] & 8 ? O_CLOEXEC : 0);
	else
		r = dup(fd);
	put_fd(r, k);
	return r;
}

/* ---- descriptors ---- */

static long c_close(const uint64_t *a)
{
	return close(FD(a[0]));
}

static long c_read(const uint64_t *a)
{
	return read(FD(a[0]), buf_of(a[1]), len_of(a[2]));
}

static long c_write(const uint64_t *a)
{
	return write(FD(a[0]), buf_of(a[1]), len_of(a[2]));
}

static long c_pread(const uint64_t *a)
{
	return pread(FD(a[0]), buf_of(a[1]), len_of(a[2]), off_of(a[3]));
}

static long c_pwrite(const uint64_t *a)
{
	return pwrite(FD(a[0]), buf_of(a[1]), len_of(a[2]), off_of(a[3]));
}

static long c_readv(const uint64_t *a)
{
	struct iovec iov[2] = {
		{ buf_of(a[1]), len_of(a[2]) },
		{ ubuf + MAXLEN, len_of(a[3]) },
	};
	static const int cnt[] = { 1, 2, 0, -1 };

	if (a[4] & 1)
		return writev(FD(a[0]), iov, PICK(cnt, a[4] >> 1));
	return readv(FD(a[0]), iov, PICK(cnt, a[4] >> 1));
}

static long c_lseek(const uint64_t *a)
{
	static const int wh[] = { SEEK_SET, SEEK_CUR, SEEK_END, SEEK_DATA,
		SEEK_HOLE, 5 };

	return lseek(FD(a[0]), off_of(a[1]), PICK(wh, a[2]));
}

static long c_fstat(const uint64_t *a)
{
	struct statfs sf;
	struct stat sb;

	if (a[1] & 1)
		return fstatfs(FD(a[0]), &sf);
	return fstat(FD(a[0]), a[1] & 2 ? buf_of(a[2]) : (void *)&sb);
}

static long c_fcntl(const uint64_t *a)
{
	static const long fl[] = { O_APPEND, O_NOATIME, O_DIRECT };
	static const long seals[] = { F_SEAL_SEAL, F_SEAL_SHRINK, F_SEAL_GROW,
		F_SEAL_WRITE, F_SEAL_FUTURE_WRITE };
	static const long psz[] = { 4096, 65536, 1 << 20, 0 };
	struct flock lk = {
		.l_type = a[2] % 3 == 0 ? F_RDLCK : a[2] % 3 == 1 ? F_WRLCK : F_UNLCK,
		.l_whence = SEEK_SET,
		.l_start = off_of(a[2] >> 2),
		.l_len = off_of(a[2] >> 5),
	};
	int fd = FD(a[0]);
	long r;

	switch (a[1] % 13) {
	case 0: return fcntl(fd, F_GETFL);
	case 1: return fcntl(fd, F_SETFL, SUBSET(fl, a[2]) | O_NONBLOCK);
	case 2: return fcntl(fd, F_GETFD);
	case 3: return fcntl(fd, F_SETFD, (int)(a[2] & 1));
	case 4:
		r = fcntl(fd, F_DUPFD_CLOEXEC, (int)(a[2] % 32));
		put_fd(r, K_ANY);
		return r;
	case 5: return fcntl(fd, F_GETPIPE_SZ);
	case 6: return fcntl(fd, F_SETPIPE_SZ, PICK(psz, a[2]));
	case 7: return fcntl(fd, F_GET_SEALS);
	case 8: return fcntl(fd, F_ADD_SEALS, SUBSET(seals, a[2]));
	case 9: return fcntl(fd, F_SETLK, &lk);
	case 10: return fcntl(fd, F_GETLK, &lk);
	case 11:
		lk.l_pid = 0;
		return fcntl(fd, F_OFD_SETLK, &lk);
	default: return fcntl(fd, 0x7fff);
	}
}

static long c_ioctl(const uint64_t *a)
{
	static const unsigned long cmd[] = { FIONREAD, TCGETS, FIOCLEX, FIONCLEX,
		FIGETBSZ, FS_IOC_GETFLAGS, FIOQSIZE, FIONBIO, 0xdeadbeef };
	static int one = 1;
	unsigned long c = PICK(cmd, a[1]);

	/* FIONBIO only ever sets O_NONBLOCK */
	return ioctl(FD(a[0]), c, c == FIONBIO ? (void *)&one : buf_of(a[2]));
}

static long c_ftruncate(const uint64_t *a)
{
	static const long len[] = { 0, 1, 4096, 1 << 20, -1 };

	return ftruncate(FD(a[0]), PICK(len, a[1]));
}

static long c_fallocate(const uint64_t *a)
{
	static const int mode[] = { 0, FALLOC_FL_KEEP_SIZE,
		FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, FALLOC_FL_ZERO_RANGE,
		FALLOC_FL_COLLAPSE_RANGE, 0x100 };
	static const long len[] = { 4096, 1 << 20, 0, 1 };

	return fallocate(FD(a[0]), PICK(mode, a[1]), a[2] & 1 ? 4096 : 0,
			 PICK(len, a[3]));
}

static long c_fsync(const uint64_t *a)
{
	switch (a[1] % 3) {
	case 0: return fsync(FD(a[0]));
	case 1: return fdatasync(FD(a[0]));
	default: return syncfs(FD(a[0]));
	}
}

static long c_getdents(const uint64_t *a)
{
	return syscall(SYS_getdents64, fdk(a[0], K_FILE), buf_of(a[1]),
		       len_of(a[2]));
}

static long c_flock(const uint64_t *a)
{
	static const int op[] = { LOCK_SH, LOCK_EX, LOCK_UN, 0 };

	return flock(fdk(a[0], K_FILE), PICK(op, a[1]) | LOCK_NB);
}

/* ---- waiting, never blocking ---- */

static long c_epoll_ctl(const uint64_t *a)
{
	static const long ev[] = { EPOLLIN, EPOLLOUT, EPOLLET, EPOLLONESHOT,
		EPOLLRDHUP, EPOLLPRI, EPOLLEXCLUSIVE, EPOLLWAKEUP };
	static const int op[] = { EPOLL_CTL_ADD, EPOLL_CTL_MOD, EPOLL_CTL_DEL, 99 };
	struct epoll_event e = { .events = SUBSET(ev, a[3]) };

	return epoll_ctl(fdk(a[0], K_EPOLL), PICK(op, a[1]), FD(a[2]),
			 a[4] % 8 ? &e : NULL);
}

static long c_epoll_wait(const uint64_t *a)
{
	static const int max[] = { 1, 8, 0, -1 };

	return epoll_wait(fdk(a[0], K_EPOLL), (void *)ubuf, PICK(max, a[1]), 0);
}

static long c_poll(const uint64_t *a)
{
	static const short ev[] = { POLLIN, POLLOUT, POLLPRI, POLLRDHUP };
	struct pollfd p[2] = {
		{ FD(a[0]), PICK(ev, a[2]), 0 },
		{ FD(a[1]), PICK(ev, a[2] >> 2), 0 },
	};
	struct timespec zero = { 0, 0 };

	if (a[3] & 4)
		return ppoll(p, a[3] % 3, &zero, NULL);
	return poll(p, a[3] % 3, 0);
}

static long c_timerfd_settime(const uint64_t *a)
{
	static const int fl[] = { 0, TFD_TIMER_ABSTIME,
		TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, 4 };
	struct itimerspec its, old;

	ts_of(&its.it_value, a[2]);
	ts_of(&its.it_interval, a[3] % 3);
	if (a[1] & 4)
		return timerfd_gettime(fdk(a[0], K_TIMER), &old);
	return timerfd_settime(fdk(a[0], K_TIMER), PICK(fl, a[1]), &its,
			       a[4] & 1 ? &old : NULL);
}

static long c_futex(const uint64_t *a)
{
	static const int op[] = { FUTEX_WAKE, FUTEX_WAIT, FUTEX_WAKE_PRIVATE,
		FUTEX_WAIT_PRIVATE, FUTEX_WAIT_BITSET, FUTEX_CMP_REQUEUE, 99 };
	struct timespec zero = { 0, 0 };

	return syscall(SYS_futex, &futex_word, PICK(op, a[0]), (int)(a[1] % 2),
		       &zero, &futex_word, 0, ~0U);
}

/* ---- sockets ---- */

static long c_send(const uint64_t *a)
{
	static const long fl[] = { MSG_NOSIGNAL, MSG_OOB, MSG_EOR, MSG_MORE };

	return send(fdk(a[0], K_SOCK), buf_of(a[1]), len_of(a[2]),
		    SUBSET(fl, a[3]) | MSG_DONTWAIT);
}

static long c_recv(const uint64_t *a)
{
	static const long fl[] = { MSG_PEEK, MSG_TRUNC, MSG_WAITALL, MSG_OOB,
		MSG_CMSG_CLOEXEC };

	return recv(fdk(a[0], K_SOCK), buf_of(a[1]), len_of(a[2]),
		    SUBSET(fl, a[3]) | MSG_DONTWAIT);
}

/* sendmsg with a descriptor (SCM_RIGHTS) or credentials, or recvmsg */
static long c_msg(const uint64_t *a)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(8)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { buf_of(a[1]), len_of(a[2]) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;
	int fd;

	memset(&u, 0, sizeof(u));
	if (a[3] % 3 == 0) {
		m.msg_control = u.buf;
		m.msg_controllen = sizeof(u.buf);
		return recvmsg(fdk(a[0], K_SOCK), &m, MSG_DONTWAIT |
			       (a[3] & 8 ? MSG_CMSG_CLOEXEC : 0));
	}
	if (a[3] % 3 == 1) {
		m.msg_control = u.buf;
		m.msg_controllen = CMSG_SPACE(sizeof(int));
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		fd = FD(a[4]);
		memcpy(CMSG_DATA(c), &fd, sizeof(fd));
	} else {
		struct ucred cr = { getpid(), getuid(), getgid() };

		m.msg_control = u.buf;
		m.msg_controllen = CMSG_SPACE(sizeof(cr));
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_CREDENTIALS;
		c->cmsg_len = CMSG_LEN(sizeof(cr));
		memcpy(CMSG_DATA(c), &cr, sizeof(cr));
	}
	return sendmsg(fdk(a[0], K_SOCK), &m, MSG_DONTWAIT | MSG_NOSIGNAL);
}

static long c_shutdown(const uint64_t *a)
{
	return shutdown(fdk(a[0], K_SOCK), a[1] % 4);
}

static long c_sockopt(const uint64_t *a)
{
	static const int get[] = { SO_TYPE, SO_RCVBUF, SO_SNDBUF, SO_PEERCRED,
		SO_ERROR, SO_PASSCRED, SO_ACCEPTCONN, SO_PEEK_OFF, SO_DOMAIN,
		SO_LINGER, 9999 };
	static const int set[] = { SO_RCVBUF, SO_SNDBUF, SO_PASSCRED,
		SO_PEEK_OFF, SO_RCVLOWAT, SO_LINGER, SO_SNDBUFFORCE, 9999 };
	static const int val[] = { 0, 1, 4096, -1 };
	socklen_t len = a[3] & 1 ? 4 : 64;
	int v[16] = { PICK(val, a[3] >> 1), 1 };

	if (a[1] & 1)
		return setsockopt(fdk(a[0], K_SOCK), SOL_SOCKET, PICK(set, a[2]),
				  v, a[3] & 4 ? 8 : 4);
	return getsockopt(fdk(a[0], K_SOCK), SOL_SOCKET, PICK(get, a[2]), v, &len);
}

static long c_sockname(const uint64_t *a)
{
	socklen_t len = a[1] & 2 ? 2 : 128;

	if (a[1] & 1)
		return getpeername(fdk(a[0], K_SOCK), (void *)ubuf, &len);
	return getsockname(fdk(a[0], K_SOCK), (void *)ubuf, &len);
}

/* ---- splice and friends ---- */

static long c_splice(const uint64_t *a)
{
	static const long fl[] = { SPLICE_F_MORE, SPLICE_F_MOVE };
	int fl2 = SUBSET(fl, a[3]) | SPLICE_F_NONBLOCK;

	switch (a[4] % 3) {
	case 0:
		return splice(FD(a[0]), NULL, FD(a[1]), NULL, len_of(a[2]), fl2);
	case 1:
		return tee(fdk(a[0], K_PIPE), fdk(a[1], K_PIPE), len_of(a[2]), fl2);
	default:
		return sendfile(FD(a[1]), FD(a[0]), NULL, len_of(a[2]));
	}
}

/* ---- memory, in the reserve ---- */

static long c_mmap(const uint64_t *a)
{
	static const int kind[] = { MAP_PRIVATE | MAP_ANONYMOUS,
		MAP_SHARED | MAP_ANONYMOUS, MAP_PRIVATE, MAP_SHARED,
		MAP_SHARED_VALIDATE | MAP_ANONYMOUS };
	static const long fl[] = { MAP_POPULATE, MAP_NORESERVE, MAP_LOCKED,
		MAP_STACK };
	static const int prot[] = { PROT_READ | PROT_WRITE, PROT_READ,
		PROT_NONE, PROT_READ | PROT_WRITE | PROT_EXEC, PROT_WRITE };
	int k = PICK(kind, a[2]);
	void *p = mmap(addr_of(a[0]), maplen_of(a[1]), PICK(prot, a[3]),
		       k | SUBSET(fl, a[2] >> 3 & a[4]) | MAP_FIXED,
		       k & MAP_ANONYMOUS ? -1 : fdk(a[4], K_MEMFD),
		       a[4] & 16 ? 4096 : 0);

	return p == MAP_FAILED ? -1 : 0;
}

static long c_munmap(const uint64_t *a)
{
	return munmap(addr_of(a[0]), maplen_of(a[1]));
}

static long c_mprotect(const uint64_t *a)
{
	static const long prot[] = { PROT_READ, PROT_WRITE, PROT_EXEC, PROT_GROWSUP };

	return mprotect(addr_of(a[0]), maplen_of(a[1]), SUBSET(prot, a[2]));
}

static long c_madvise(const uint64_t *a)
{
	static const int adv[] = { MADV_NORMAL, MADV_RANDOM, MADV_SEQUENTIAL,
		MADV_WILLNEED, MADV_DONTNEED, MADV_FREE, MADV_REMOVE,
		MADV_DONTFORK, MADV_DOFORK, MADV_COLD, MADV_PAGEOUT,
		MADV_POPULATE_READ, MADV_POPULATE_WRITE, MADV_DONTDUMP, 9999 };

	return madvise(addr_of(a[0]), maplen_of(a[1]), PICK(adv, a[2]));
}

static long c_mremap(const uint64_t *a)
{
	static const int fl[] = { 0, MREMAP_MAYMOVE | MREMAP_FIXED,
		MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP };
	int f = PICK(fl, a[3]);
	/* never MREMAP_MAYMOVE alone: the mapping must stay in the reserve */
	void *p = mremap(addr_of(a[0]), maplen_of(a[1]), maplen_of(a[2]), f,
			 addr_of(a[4]));

	return p == MAP_FAILED ? -1 : 0;
}

static long c_mem_query(const uint64_t *a)
{
	static const int ms[] = { MS_ASYNC, MS_SYNC, MS_INVALIDATE, 7 };

	if (a[2] & 1)
		return msync(addr_of(a[0]), maplen_of(a[1]), PICK(ms, a[2] >> 1));
	return mincore(addr_of(a[0]), maplen_of(a[1]), (void *)ubuf);
}

/* ---- paths ---- */

static long c_stat(const uint64_t *a)
{
	static const long fl[] = { AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH,
		AT_NO_AUTOMOUNT };
	static const unsigned int mask[] = { STATX_BASIC_STATS, STATX_ALL, 0,
		STATX_BTIME };
	int dir = a[3] & 1 ? FD(a[3] >> 1) : AT_FDCWD;
	struct statfs sf;

	switch (a[4] % 4) {
	case 0:
		return fstatat(dir, PATH(a[0]), buf_of(a[1]), SUBSET(fl, a[2]));
	case 1:
		return statx(dir, PATH(a[0]), SUBSET(fl, a[2]), PICK(mask, a[1]),
			     (void *)ubuf);
	case 2:
		return statfs(PATH(a[0]), &sf);
	default:
		return syscall(SYS_faccessat, dir, PATH(a[0]), (int)(a[1] % 8));
	}
}

static long c_readlink(const uint64_t *a)
{
	return readlinkat(a[3] & 1 ? FD(a[3] >> 1) : AT_FDCWD, PATH(a[0]),
			  buf_of(a[1]), len_of(a[2]) % 4097);
}

/* create, remove, rename and link the scratch names */
static long c_fsop(const uint64_t *a)
{
	static const struct timespec now[2] = { { 0, UTIME_NOW }, { 0, UTIME_OMIT } };

	switch (a[0] % 9) {
	case 0: return unlink(SCRATCH(a[1]));
	case 1: return rename(SCRATCH(a[1]), SCRATCH(a[2]));
	case 2: return mkdir(SCRATCH(a[1]), 0700);
	case 3: return rmdir(SCRATCH(a[1]));
	case 4: return symlink(SCRATCH(a[1]), SCRATCH(a[2]));
	case 5: return link(SCRATCH(a[1]), SCRATCH(a[2]));
	case 6: return truncate(SCRATCH(a[1]), off_of(a[2]));
	case 7:
		return utimensat(AT_FDCWD, SCRATCH(a[1]), a[2] & 1 ? now : NULL,
				 a[2] & 2 ? AT_SYMLINK_NOFOLLOW : 0);
	default: return renameat2(AT_FDCWD, SCRATCH(a[1]), AT_FDCWD,
				  SCRATCH(a[2]), a[3] % 4);
	}
}

/* ---- the process's own state, read only ---- */

static long c_info(const uint64_t *a)
{
	static const int clk[] = { CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME,
		CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID,
		CLOCK_MONOTONIC_RAW, CLOCK_REALTIME_COARSE, -1, 99 };
	static const int who[] = { RUSAGE_SELF, RUSAGE_CHILDREN, RUSAGE_THREAD, 9 };
	static const int pr[] = { PR_GET_NAME, PR_GET_DUMPABLE, PR_GET_TIMERSLACK,
		PR_GET_NO_NEW_PRIVS, PR_GET_CHILD_SUBREAPER, 999 };
	void *b = a[2] & 1 ? buf_of(a[2] >> 1) : ubuf;

	switch (a[0] % 20) {
	case 0: return syscall(SYS_getpid);
	case 1: return syscall(SYS_getppid);
	case 2: return syscall(SYS_gettid);
	case 3: return syscall(SYS_getuid);
	case 4: return uname(b);
	case 5: return syscall(SYS_sysinfo, b);
	case 6: return getrusage(PICK(who, a[1]), b);
	case 7: return syscall(SYS_times, b);
	case 8: return getpriority(PRIO_PROCESS, 0);
	case 9: return syscall(SYS_sched_getaffinity, 0, len_of(a[1]) % 256, b);
	case 10: return syscall(SYS_getcwd, b, len_of(a[1]) % 4097);
	case 11: return syscall(SYS_clock_gettime, PICK(clk, a[1]), b);
	case 12: return syscall(SYS_clock_getres, PICK(clk, a[1]), b);
	case 13: return syscall(SYS_getrandom, b, len_of(a[1]) % 4097,
				GRND_NONBLOCK | (a[1] & 64 ? GRND_INSECURE : 0));
	case 14: return sched_yield();
	case 15: return prctl(PICK(pr, a[1]), (unsigned long)ubuf, 0, 0, 0);
	case 16: return syscall(SYS_getitimer, (int)(a[1] % 4), b);
	case 17: return syscall(SYS_getgroups, (int)(a[1] % 65), b);
	case 18: return syscall(SYS_sched_getparam, 0, b);
	default: return syscall(SYS_membarrier, (int)(a[1] % 2), 0, 0);
	}
}

/*
 * name, executor, arguments it reads, the kind of descriptor it makes
 * (MAKES_NONE: none) and the kind it wants (K_ANY: any or none).
 * Producers first: prog_random() counts them from the start.
 */
const struct sysdef bench_sys[] = {
	{ "open", c_open, 3, K_FILE, K_ANY },
	{ "pipe2", c_pipe2, 1, K_PIPE, K_ANY },
	{ "socketpair", c_socketpair, 2, K_SOCK, K_ANY },
	{ "eventfd", c_eventfd, 2, K_EVENT, K_ANY },
	{ "epoll_create", c_epoll_create, 1, K_EPOLL, K_ANY },
	{ "timerfd_create", c_timerfd_create, 2, K_TIMER, K_ANY },
	{ "memfd_create", c_memfd, 2, K_MEMFD, K_ANY },
	{ "signalfd", c_signalfd, 3, K_SIGNAL, K_ANY },
	{ "pidfd_open", c_pidfd, 2, K_PIDFD, K_ANY },
	{ "dup", c_dup, 3, K_ANY, K_ANY },
	{ "close", c_close, 1, MAKES_NONE, K_ANY },
	{ "read", c_read, 3, MAKES_NONE, K_ANY },
	{ "write", c_write, 3, MAKES_NONE, K_ANY },
	{ "pread", c_pread, 4, MAKES_NONE, K_ANY },
	{ "pwrite", c_pwrite, 4, MAKES_NONE, K_ANY },
	{ "readv", c_readv, 5, MAKES_NONE, K_ANY },
	{ "lseek", c_lseek, 3, MAKES_NONE, K_ANY },
	{ "fstat", c_fstat, 3, MAKES_NONE, K_ANY },
	{ "fcntl", c_fcntl, 3, MAKES_NONE, K_ANY },
	{ "ioctl", c_ioctl, 3, MAKES_NONE, K_ANY },
	{ "ftruncate", c_ftruncate, 2, MAKES_NONE, K_ANY },
	{ "fallocate", c_fallocate, 4, MAKES_NONE, K_ANY },
	{ "fsync", c_fsync, 2, MAKES_NONE, K_ANY },
	{ "getdents", c_getdents, 3, MAKES_NONE, K_FILE },
	{ "flock", c_flock, 2, MAKES_NONE, K_FILE },
	{ "epoll_ctl", c_epoll_ctl, 5, MAKES_NONE, K_EPOLL },
	{ "epoll_wait", c_epoll_wait, 2, MAKES_NONE, K_EPOLL },
	{ "poll", c_poll, 4, MAKES_NONE, K_ANY },
	{ "timerfd_settime", c_timerfd_settime, 5, MAKES_NONE, K_TIMER },
	{ "futex", c_futex, 2, MAKES_NONE, K_ANY },
	{ "send", c_send, 4, MAKES_NONE, K_SOCK },
	{ "recv", c_recv, 4, MAKES_NONE, K_SOCK },
	{ "sendmsg", c_msg, 5, MAKES_NONE, K_SOCK },
	{ "shutdown", c_shutdown, 2, MAKES_NONE, K_SOCK },
	{ "sockopt", c_sockopt, 4, MAKES_NONE, K_SOCK },
	{ "sockname", c_sockname, 2, MAKES_NONE, K_SOCK },
	{ "splice", c_splice, 5, MAKES_NONE, K_ANY },
	{ "mmap", c_mmap, 5, MAKES_NONE, K_ANY },
	{ "munmap", c_munmap, 2, MAKES_NONE, K_ANY },
	{ "mprotect", c_mprotect, 3, MAKES_NONE, K_ANY },
	{ "madvise", c_madvise, 3, MAKES_NONE, K_ANY },
	{ "mremap", c_mremap, 5, MAKES_NONE, K_ANY },
	{ "msync", c_mem_query, 3, MAKES_NONE, K_ANY },
	{ "stat", c_stat, 5, MAKES_NONE, K_ANY },
	{ "readlink", c_readlink, 4, MAKES_NONE, K_ANY },
	{ "fsop", c_fsop, 4, MAKES_NONE, K_ANY },
	{ "info", c_info, 3, MAKES_NONE, K_ANY },
};

const int bench_nsys = ARRAY_SIZE(bench_sys);

static int rm_one(const char *path, const struct stat *sb, int flag,
		  struct FTW *ftw)
{
	remove(path);
	return 0;
}

/* The scratch files and the reserve as every program finds them. */
void calls_reset(void)
{
	static const char *const gone[] = { S_FILE, S_NEW, S_DIR, S_LINK };
	unsigned int i;
	int fd;

	for (i = 0; i < ARRAY_SIZE(gone); i++)
		nftw(gone[i], rm_one, 8, FTW_DEPTH | FTW_PHYS);
	fd = open(S_FILE, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, ubuf, 4096) != 4096)
		err(1, S_FILE);
	close(fd);
	futex_word = 0;
	st.n = 0;
}

/* Nothing of the last program left in the reserve: no hole in it either. */
static void reserve_map(int flag)
{
	if (mmap(reserve, NREGION * REGION, PROT_NONE, MAP_PRIVATE |
		 MAP_ANONYMOUS | MAP_NORESERVE | flag, -1, 0) != reserve)
		err(1, "reserve at %p", reserve);
}

/* Close every descriptor a program left, none of those kept. */
void calls_cleanup(void)
{
	unsigned int i = 0, j;

	while (i < sizeof(keep)) {
		if (keep[i]) {
			i++;
			continue;
		}
		for (j = i; j < sizeof(keep) && !keep[j]; j++)
			;
		close_range(i, j == sizeof(keep) ? ~0U : j - 1, 0);
		i = j;
	}
	reserve_map(MAP_FIXED);
}

void calls_setup(void)
{
	struct sigaction ign = { .sa_handler = SIG_IGN };
	unsigned int i;

	sigaction(SIGPIPE, &ign, NULL);
	sigaction(SIGIO, &ign, NULL);
	sigaction(SIGURG, &ign, NULL);
	sigaction(SIGXFSZ, &ign, NULL);
	for (i = 0; i < sizeof(keep); i++)
		keep[i] = fcntl(i, F_GETFD) >= 0;
	if (!reserve) {
		reserve = RESERVE;
		reserve_map(MAP_FIXED_NOREPLACE);
	}
	memset(ubuf, 'o', sizeof(ubuf));
}
