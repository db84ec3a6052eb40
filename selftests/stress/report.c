// SPDX-License-Identifier: GPL-2.0
/*
 * Results: every operation's outcome counted by type, unexpected ones
 * printed as "# FAIL" lines; the state every process of the run shares.
 */
#include "stress.h"

const char * const res_names[NRES] = {
	"ok", "EFAULT", "EBUSY", "EINVAL", "ENOTTY", "ENOMEM", "EPERM",
	"EACCES", "ENOENT", "ENXIO", "ENODEV", "EAGAIN", "EOVERFLOW",
	"EEXIST", "EOPNOTSUPP", "EILSEQ", "mismatch", "other",
};

/* err: 0, an errno, or -1 for "the check did not hold" */
enum res res_of(int err)
{
	switch (err) {
	case 0:
		return RS_OK;
	case -1:
		return RS_BAD;
	case EFAULT:
		return RS_EFAULT;
	case EBUSY:
		return RS_EBUSY;
	case EINVAL:
		return RS_EINVAL;
	case ENOTTY:
		return RS_ENOTTY;
	case ENOMEM:
		return RS_ENOMEM;
	case EPERM:
		return RS_EPERM;
	case EACCES:
		return RS_EACCES;
	case ENOENT:
		return RS_ENOENT;
	case ENXIO:
		return RS_ENXIO;
	case ENODEV:
		return RS_ENODEV;
	case EAGAIN:
		return RS_EAGAIN;
	case EOVERFLOW:
		return RS_EOVERFLOW;
	case EEXIST:
		return RS_EEXIST;
	case EOPNOTSUPP:
		return RS_EOPNOTSUPP;
	case EILSEQ:
		return RS_EILSEQ;
	default:
		return RS_OTHER;
	}
}

const char * const op_names[NOPS] = {
	"open", "dup", "close", "SCM_RIGHTS pass", "KIOSETBUFSIZE", "KIOENABLE",
	"KIOENABLE(legacy)", "KIODISABLE", "ioctl(random cmd)", "mmap",
	"munmap", "mprotect", "mremap", "buf[0] garbage", "coverage check",
	"coverage syscalls", "fork", "exec", "exec'd image check",
	"thread exit", "handoff re-enable", "drain", "rmmod", "insmod",
	"bystander syscalls", "KIOREMOTEATTACH", "KIOENABLE(remote)",
	"KIODISABLE(remote)", "close(remote)", "deferred work",
	"OKCOV_TARGET_DEFER", "target timer/work churn", "BH storm",
	"KIODEEP",
};

/* ------------------------------------------------------- shared state */

struct shm *shm;
int shm_fd = -1;
long page;
char *guard_rw;		/* one readable page, then guard_none */
char *guard_none;	/* a PROT_NONE page */
double hang_s = 120;

double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void say(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(1, buf, n) < 0)
		return;
}

static void vfail(const char *tag, const char *fmt, va_list ap)
{
	char buf[768];
	unsigned long k = atomic_fetch_add(&shm->failures, 1);
	int n;

	if (k >= MAX_FAIL_PRINT)
		return;
	n = snprintf(buf, sizeof(buf), "# FAIL [pid %d tid %d %s] ",
		     getpid(), gettid(), tag);
	n += vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(1, buf, n) < 0)
		return;
}

void fail(const char *tag, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(tag, fmt, ap);
	va_end(ap);
}

static void mask_str(unsigned int mask, char *buf, size_t sz)
{
	size_t n = 0;
	int r;

	buf[0] = 0;
	for (r = 0; r < NRES; r++)
		if (mask & (1u << r))
			n += snprintf(buf + n, sz - n, "%s%s", n ? "|" : "",
				      res_names[r]);
}

/*
 * Count the result of one operation; a result outside @mask is a failure,
 * described by fmt. Returns whether it was expected.
 */
bool expect(const char *tag, enum op op_id, int err,
		   unsigned int mask, const char *fmt, ...)
{
	enum res r = res_of(err);
	char exp[128], what[384];
	va_list ap;

	atomic_fetch_add_explicit(&shm->cnt[op_id][r], 1, memory_order_relaxed);
	if (mask & (1u << r))
		return true;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	mask_str(mask, exp, sizeof(exp));
	if (r == RS_BAD)
		fail(tag, "%s: %s", op_names[op_id], what);
	else
		fail(tag, "%s: %s: got %s (%d), expected %s", op_names[op_id],
		     what, r == RS_OTHER ? strerror(err) : res_names[r], err,
		     exp);
	return false;
}

void count(enum op op, enum res r)
{
	atomic_fetch_add_explicit(&shm->cnt[op][r], 1, memory_order_relaxed);
}
