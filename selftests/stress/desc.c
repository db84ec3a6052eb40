// SPDX-License-Identifier: GPL-2.0
/*
 * Descriptors: open, dup, close, SCM_RIGHTS passing, the private
 * descriptors and the per-process pool, and the three ioctls checked
 * against the errno table.
 */
#include "stress.h"

/* Errors an open of /dev/okcov may give while okcov is (un)loading. */
static unsigned int open_mask(unsigned long s1)
{
	unsigned long s2 = atomic_load(&shm->seq);

	if ((s1 & 1) || s1 != s2)
		return M(OK) | M(ENOENT) | M(ENXIO) | M(ENODEV);
	return M(OK);
}

int dev_open(struct ctx *c, bool cloexec)
{
	unsigned long s1 = atomic_load(&shm->seq);
	int fd = open(OKCOV_PATH, O_RDWR | (cloexec ? O_CLOEXEC : 0));
	int err = fd < 0 ? errno : 0;

	expect(c->tag, OP_OPEN, err, open_mask(s1), "open(%s%s)", OKCOV_PATH,
	       cloexec ? ", O_CLOEXEC" : "");
	return fd;
}

/* ---------------------------------------------------- private descs */

struct pdesc *pd_free_slot(struct ctx *c)
{
	int i;

	for (i = 0; i < MAXD; i++)
		if (!c->d[i].used)
			return &c->d[i];
	return NULL;
}

static struct pdesc *pd_pick(struct ctx *c, bool need_fd)
{
	struct pdesc *cand[MAXD];
	int i, n = 0;

	for (i = 0; i < MAXD; i++)
		if (c->d[i].used && (!need_fd || c->d[i].nfds))
			cand[n++] = &c->d[i];
	return n ? cand[rn(c, n)] : NULL;
}

/* Forget a descriptor whose last fd and mapping are gone. */
void pd_maybe_gone(struct pdesc *d)
{
	if (d->nfds || d->nmaps)
		return;
	/* TRACE: now DYING, still attached to us (att_id stays). */
	d->used = false;
}

/* ------------------------------------------------------------ targets */

void pool_rdlock(struct pool *p)
{
	pthread_rwlock_rdlock(&p->lock);
}

void pool_wrlock(struct pool *p)
{
	pthread_rwlock_wrlock(&p->lock);
}

void pool_unlock(struct pool *p)
{
	pthread_rwlock_unlock(&p->lock);
}

/* A private descriptor with an fd for which @pred holds, or NULL. */
struct pdesc *pd_pick_if(struct ctx *c, bool (*pred)(struct pdesc *))
{
	struct pdesc *cand[MAXD];
	int i, n = 0;

	for (i = 0; i < MAXD; i++)
		if (c->d[i].used && c->d[i].nfds && pred(&c->d[i]))
			cand[n++] = &c->d[i];
	return n ? cand[rn(c, n)] : NULL;
}

static bool pd_is_none(struct pdesc *d)
{
	return d->state == S_NONE;
}

static bool pd_is_ready(struct pdesc *d)
{
	return d->state == S_READY;
}

bool pd_is_trace(struct pdesc *d)
{
	return d->state == S_TRACE;
}

bool pd_unmapped_buffer(struct pdesc *d)
{
	return d->state != S_NONE && !d->nmaps;
}

/*
 * Pick what to operate on: usually a private descriptor (one for which
 * @pred holds, if there is one and @pred is given), else a shared one.
 * Biasing towards the next step of open/size/map/enable lets sequences
 * get somewhere instead of mostly hitting EBUSY.
 */
bool target_get(struct ctx *c, struct target *t,
		       bool (*pred)(struct pdesc *))
{
	memset(t, 0, sizeof(*t));
	if (pred && chance(c, 60)) {
		t->d = pd_pick_if(c, pred);
		if (t->d) {
			t->fd = t->d->fds[rn(c, t->d->nfds)];
			t->id = t->d->id;
			return true;
		}
	}
	if (chance(c, 65)) {
		t->d = pd_pick(c, true);
		if (t->d) {
			t->fd = t->d->fds[rn(c, t->d->nfds)];
			t->id = t->d->id;
			return true;
		}
	}
	pool_rdlock(c->pool);
	if (c->pool->cnt) {
		t->e = &c->pool->e[rn(c, c->pool->cnt)];
		t->fd = t->e->fd;
		t->id = t->e->id;
		return true;
	}
	pool_unlock(c->pool);
	t->d = pd_pick(c, true);
	if (!t->d)
		return false;
	t->fd = t->d->fds[rn(c, t->d->nfds)];
	t->id = t->d->id;
	return true;
}

void target_put(struct ctx *c, struct target *t)
{
	if (t->e)
		pool_unlock(c->pool);
}

/* ---------------------------------------------------------------- ops */

void op_open(struct ctx *c)
{
	bool shared = chance(c, 35), cloexec = chance(c, 30);
	struct pdesc *d = NULL;
	struct pool *p = c->pool;
	int fd;

	if (!shared) {
		d = pd_free_slot(c);
		if (!d)
			shared = true;
	}
	if (shared && p->cnt >= POOLMAX)	/* racy peek: re-checked below */
		return;
	fd = dev_open(c, cloexec);
	if (fd < 0)
		return;
	if (d) {
		memset(d, 0, sizeof(*d));
		d->used = true;
		d->fds[0] = fd;
		d->nfds = 1;
		d->state = S_NONE;
		d->id = new_id();
		return;
	}
	pool_wrlock(p);
	if (p->cnt < POOLMAX) {
		struct pent *e = &p->e[p->cnt++];

		e->fd = fd;
		e->id = new_id();
		atomic_store(&e->n, 0);
		fd = -1;
	}
	pool_unlock(p);
	if (fd >= 0)
		close(fd);
}

void op_dup(struct ctx *c)
{
	struct pool *p = c->pool;
	struct pdesc *d;
	bool cloexec = chance(c, 30);
	int fd, src;

	d = pd_pick(c, true);
	if (d && d->nfds < MAXFD && chance(c, 60)) {
		src = d->fds[rn(c, d->nfds)];
		fd = cloexec ? fcntl(src, F_DUPFD_CLOEXEC, 0) : dup(src);
		if (!expect(c->tag, OP_DUP, fd < 0 ? errno : 0, M(OK),
			    "dup(private fd %d)", src) || fd < 0)
			return;
		d->fds[d->nfds++] = fd;
		return;
	}
	pool_wrlock(p);
	if (p->cnt && p->cnt < POOLMAX) {
		struct pent *s = &p->e[rn(c, p->cnt)], *e;

		fd = cloexec ? fcntl(s->fd, F_DUPFD_CLOEXEC, 0) : dup(s->fd);
		if (expect(c->tag, OP_DUP, fd < 0 ? errno : 0, M(OK),
			   "dup(shared fd %d)", s->fd) && fd >= 0) {
			e = &p->e[p->cnt++];
			e->fd = fd;
			e->id = s->id;
			atomic_store(&e->n, atomic_load(&s->n));
		}
	}
	pool_unlock(p);
}

void pd_close_fd(struct ctx *c, struct pdesc *d, int i)
{
	int fd = d->fds[i];

	expect(c->tag, OP_CLOSE, close(fd) ? errno : 0, M(OK),
	       "close(private fd %d)", fd);
	d->fds[i] = d->fds[--d->nfds];
	pd_maybe_gone(d);
}

void op_close(struct ctx *c)
{
	struct pool *p = c->pool;
	struct pdesc *d;
	struct pent *e;
	int i;

	d = pd_pick(c, true);
	if (d && chance(c, 60)) {
		pd_close_fd(c, d, rn(c, d->nfds));
		return;
	}
	pool_wrlock(p);
	if (p->cnt) {
		i = rn(c, p->cnt);
		e = &p->e[i];
		expect(c->tag, OP_CLOSE, close(e->fd) ? errno : 0, M(OK),
		       "close(shared fd %d)", e->fd);
		p->e[i].fd = p->e[p->cnt - 1].fd;
		p->e[i].id = p->e[p->cnt - 1].id;
		atomic_store(&p->e[i].n, atomic_load(&p->e[p->cnt - 1].n));
		p->cnt--;
	}
	pool_unlock(p);
}

/* Send @fd over sk[0] and, if @receive, take it from sk[1]: 0 or errno. */
static int scm_pass(int sk[2], int fd, bool receive, bool cloexec, int *got)
{
	if (st_send_fd(sk[0], fd, MSG_DONTWAIT))
		return errno;
	if (!receive)
		return 0;
	*got = st_recv_fd(sk[1], MSG_DONTWAIT |
			     (cloexec ? MSG_CMSG_CLOEXEC : 0));
	return *got < 0 ? errno : 0;
}

/*
 * Pass a descriptor's fd through an AF_UNIX socket (SCM_RIGHTS). Either
 * receive it back (one more fd of the same open file, as dup gives), or
 * leave it in flight and close both sockets: for a private fd, after
 * closing the fd itself, so that the socket's release drops what may be
 * the file's last reference (okcov's release then runs from the socket's
 * teardown, not from close()).
 */
void op_pass(struct ctx *c)
{
	struct pool *p = c->pool;
	bool receive = chance(c, 50), cloexec = chance(c, 30);
	struct pdesc *d = pd_pick(c, true);
	int sk[2], err, fd = -1, i;

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sk)) {
		expect(c->tag, OP_PASS, errno, M(OK), "socketpair");
		return;
	}
	if (d && chance(c, 60)) {
		i = rn(c, d->nfds);
		receive = receive && d->nfds < MAXFD;
		err = scm_pass(sk, d->fds[i], receive, cloexec, &fd);
		if (expect(c->tag, OP_PASS, err, M(OK), "%s private fd %d",
			   receive ? "pass back" : "leave in flight",
			   d->fds[i]) && !err) {
			if (receive)
				d->fds[d->nfds++] = fd;
			else
				pd_close_fd(c, d, i);
		}
		close(sk[0]);
		close(sk[1]);	/* drops an fd still in flight */
		return;
	}
	pool_wrlock(p);
	if (p->cnt) {
		struct pent *s = &p->e[rn(c, p->cnt)], *e;

		receive = receive && p->cnt < POOLMAX;
		err = scm_pass(sk, s->fd, receive, cloexec, &fd);
		if (expect(c->tag, OP_PASS, err, M(OK), "%s shared fd %d",
			   receive ? "pass back" : "leave in flight", s->fd) &&
		    !err && receive) {
			e = &p->e[p->cnt++];
			e->fd = fd;
			e->id = s->id;
			atomic_store(&e->n, atomic_load(&s->n));
		}
	}
	pool_unlock(p);
	close(sk[0]);
	close(sk[1]);
}

void op_setbufsize(struct ctx *c)
{
	unsigned long n = pick_size(c), max = max_entries(), known;
	bool bad = chance(c, 10);
	void *arg = bad ? bad_ptr(c, 8) : &n;
	bool valid = n && n <= max;
	struct target t;
	unsigned int mask;
	int err;

	if (!target_get(c, &t, pd_is_none))
		return;
	err = ioc(t.fd, KIOSETBUFSIZE, arg);
	if (t.d) {
		if (bad)
			mask = M(EFAULT);
		else if (t.d->state != S_NONE)
			mask = M(EBUSY);
		else if (!valid)
			mask = M(EINVAL);
		else
			mask = M(OK) | M(ENOMEM);
		if (expect(c->tag, OP_SETBUFSIZE, err, mask,
			   "private fd %d state %d, n %lu, arg %p", t.fd,
			   t.d->state, n, arg) && !err) {
			t.d->state = S_READY;
			t.d->n = n;
		}
	} else {
		known = atomic_load(&t.e->n);
		if (bad)
			mask = M(EFAULT);
		else if (known)
			mask = M(EBUSY);
		else if (!valid)
			mask = M(EBUSY) | M(EINVAL);
		else
			mask = M(OK) | M(EBUSY) | M(ENOMEM);
		if (expect(c->tag, OP_SETBUFSIZE, err, mask,
			   "shared fd %d (n %lu), n %lu, arg %p", t.fd, known,
			   n, arg) && !err)
			atomic_store(&t.e->n, n);
	}
	target_put(c, &t);
}

void op_enable(struct ctx *c, bool legacy)
{
	enum op op = legacy ? OP_ENABLE_LEGACY : OP_ENABLE;
	int mode = legacy ? KCOV_MODE_TRACE_PC : pick_mode(c);
	bool bad = !legacy && chance(c, 8);
	void *arg = bad ? bad_ptr(c, 4) : &mode;
	struct target t;
	unsigned int mask;
	int err;

	if (legacy)
		arg = chance(c, 50) ? NULL : bad_ptr(c, 4);	/* ignored */
	if (!target_get(c, &t, pd_is_ready))
		return;
	att_refresh(c);
	err = ioc(t.fd, legacy ? KIOENABLE_LEGACY : KIOENABLE, arg);
	if (t.d) {
		if (bad)
			mask = M(EFAULT);
		else if (c->att_id || t.d->state != S_READY)
			mask = M(EBUSY);
		else if (!mode_ok(mode))
			mask = M(EINVAL);
		else
			mask = M(OK);
		if (expect(c->tag, op, err, mask,
			   "private fd %d state %d, mode %d, attached to %lu, arg %p",
			   t.fd, t.d->state, mode, c->att_id, arg) && !err) {
			t.d->state = S_TRACE;
			t.d->mode = mode;
			att_set(c, t.d->id);
		}
	} else {
		if (bad)
			mask = M(EFAULT);
		else if (c->att_id)
			mask = M(EBUSY);
		else if (!mode_ok(mode))
			mask = M(EBUSY) | M(EINVAL);
		else
			mask = M(OK) | M(EBUSY);
		if (expect(c->tag, op, err, mask,
			   "shared fd %d, mode %d, attached to %lu, arg %p",
			   t.fd, mode, c->att_id, arg) && !err)
			att_set(c, t.id);
	}
	target_put(c, &t);
}

void op_disable(struct ctx *c)
{
	void *arg = chance(c, 50) ? NULL : bad_ptr(c, 8);	/* ignored */
	struct target t;
	unsigned int mask;
	int err;

	if (!target_get(c, &t, chance(c, 50) ? pd_is_trace : NULL))
		return;
	att_refresh(c);
	err = ioc(t.fd, KIODISABLE, arg);
	if (t.d) {
		mask = t.d->state == S_TRACE ? M(OK) : M(EBUSY);
		if (expect(c->tag, OP_DISABLE, err, mask,
			   "private fd %d state %d", t.fd, t.d->state) &&
		    !err) {
			t.d->state = S_READY;
			c->att_id = 0;
		}
	} else {
		mask = c->att_id == t.id ? M(OK) : M(EBUSY);
		if (expect(c->tag, OP_DISABLE, err, mask,
			   "shared fd %d (id %lu), attached to %lu", t.fd,
			   t.id, c->att_id) && !err)
			c->att_id = 0;
	}
	target_put(c, &t);
}

void op_badioctl(struct ctx *c)
{
	unsigned int cmd = random_cmd(c);
	void *arg = chance(c, 50) ? bad_ptr(c, 8) : (void *)(uintptr_t)rnd(c);
	struct target t;

	if (!target_get(c, &t, NULL))
		return;
	expect(c->tag, OP_BADIOCTL, ioc(t.fd, cmd, arg), M(ENOTTY),
	       "fd %d, cmd %#x (dir %u type %#x nr %u size %u), arg %p",
	       t.fd, cmd, _IOC_DIR(cmd), _IOC_TYPE(cmd), _IOC_NR(cmd),
	       _IOC_SIZE(cmd), arg);
	target_put(c, &t);
}
