/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Passing one fd over an AF_UNIX socket (SCM_RIGHTS), for the selftests
 * and the stress program. OpenBSD refuses to pass a kcov descriptor; a
 * Linux character device cannot, so okcov's is passed like any file.
 */
#ifndef OKCOV_SCM_H
#define OKCOV_SCM_H

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

union st_scm_buf {
	char buf[CMSG_SPACE(sizeof(int))];
	struct cmsghdr align;
};

/* Send @fd with one data byte: 0, or -1 with errno set. */
static inline int st_send_fd(int sock, int fd, int flags)
{
	union st_scm_buf u;
	char byte = 0;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *cmsg;

	memset(&u, 0, sizeof(u));
	cmsg = CMSG_FIRSTHDR(&msg);
	cmsg->cmsg_level = SOL_SOCKET;
	cmsg->cmsg_type = SCM_RIGHTS;
	cmsg->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
	return sendmsg(sock, &msg, flags) == 1 ? 0 : -1;
}

/* Receive one fd: the new fd, or -1 with errno set (EPROTO: none came). */
static inline int st_recv_fd(int sock, int flags)
{
	union st_scm_buf u;
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *cmsg;
	int fd;

	if (recvmsg(sock, &msg, flags) != 1)
		return -1;
	cmsg = CMSG_FIRSTHDR(&msg);
	if (!cmsg || cmsg->cmsg_level != SOL_SOCKET ||
	    cmsg->cmsg_type != SCM_RIGHTS ||
	    cmsg->cmsg_len != CMSG_LEN(sizeof(int))) {
		errno = EPROTO;
		return -1;
	}
	memcpy(&fd, CMSG_DATA(cmsg), sizeof(int));
	return fd;
}

#endif /* OKCOV_SCM_H */
