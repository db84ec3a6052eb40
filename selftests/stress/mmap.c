// SPDX-License-Identifier: GPL-2.0
/*
 * Mappings of a coverage buffer (mmap, munmap, mprotect, mremap), and
 * what the buffer records: buf[0] garbage, a fuzzing harness's setup,
 * coverage checks.
 */
#include "stress.h"

static struct pmap *map_free_slot(struct ctx *c)
{
	int i;

	for (i = 0; i < MAXMAP; i++)
		if (!c->m[i].used)
			return &c->m[i];
	return NULL;
}

static struct pmap *map_pick(struct ctx *c)
{
	struct pmap *cand[MAXMAP];
	int i, n = 0;

	for (i = 0; i < MAXMAP; i++)
		if (c->m[i].used)
			cand[n++] = &c->m[i];
	return n ? cand[rn(c, n)] : NULL;
}

void map_drop(struct pmap *m)
{
	m->used = false;
	if (m->d) {
		m->d->nmaps--;
		pd_maybe_gone(m->d);
	}
}

/*
 * What mmap(len, off, prot, flags) of a descriptor may return: buf 1 if it
 * has a buffer of n words, 0 if it has none, -1 if unknown.
 */
static unsigned int mmap_mask(int buf, unsigned long n, size_t len,
			      unsigned long off, int prot, int flags)
{
	unsigned long alen, pgoff = off / page, pages;
	unsigned int ex = (prot & PROT_EXEC) ? M(EPERM) : 0;

	if (!len || off % page)
		return M(EINVAL);
	alen = (len + page - 1) & ~(page - 1);
	if (alen > USER_TOP)
		return M(ENOMEM);
	if ((ULONG_MAX - alen) / page < pgoff)
		return M(EOVERFLOW);
	if ((flags & MAP_TYPE) == MAP_SHARED_VALIDATE && (flags & MAP_SYNC))
		return M(EOPNOTSUPP);
	if (buf == 0)
		return M(EINVAL) | ex;
	if (buf < 0)
		return M(OK) | M(EINVAL) | ex;
	pages = buf_pages(n);
	if (pgoff > pages || alen / page > pages - pgoff)
		return M(EINVAL) | ex;
	if ((flags & MAP_TYPE) == MAP_PRIVATE)
		return M(EINVAL) | ex;
	if (prot & PROT_EXEC)
		return M(EPERM);
	return M(OK);
}

void op_mmap(struct ctx *c)
{
	static const int prots[] = {
		PROT_READ | PROT_WRITE, PROT_READ | PROT_WRITE,
		PROT_READ | PROT_WRITE, PROT_READ | PROT_WRITE,
		PROT_READ | PROT_WRITE, PROT_READ | PROT_WRITE,
		PROT_READ, PROT_NONE, PROT_WRITE,
		PROT_READ | PROT_EXEC, PROT_READ | PROT_WRITE | PROT_EXEC,
	};
	static const int flagss[] = {
		MAP_SHARED, MAP_SHARED, MAP_SHARED, MAP_SHARED, MAP_SHARED,
		MAP_SHARED | MAP_POPULATE, MAP_SHARED_VALIDATE,
		MAP_SHARED_VALIDATE | MAP_SYNC, MAP_PRIVATE,
		MAP_PRIVATE | MAP_POPULATE,
	};
	unsigned long n = 0, known, pages, off = 0;
	int prot = prots[rn(c, ARRAY_SIZE(prots))];
	int flags = flagss[rn(c, ARRAY_SIZE(flagss))];
	struct target t;
	struct pmap *m;
	unsigned int mask;
	size_t len;
	long r;
	int buf, err;

	if (!target_get(c, &t, pd_unmapped_buffer))
		return;
	if (t.d) {
		buf = t.d->state != S_NONE;
		n = t.d->n;
	} else {
		known = atomic_load(&t.e->n);
		buf = known ? 1 : -1;
		n = known;
	}
	pages = n ? buf_pages(n) : 1 + rn(c, 4);
	switch (rn(c, 20)) {
	case 0:
		len = 0;
		break;
	case 1:
		len = 1UL << 48;
		break;
	case 2:
	case 3:
	case 4:
		len = page;
		break;
	case 5:
	case 6:
	case 7:
		len = (1 + rn(c, pages + 2)) * page;
		break;
	case 8:
		len = 1 + rn(c, pages * page);
		break;
		/* unaligned */
	default:
		len = pages * page;
		break;
	}
	switch (rn(c, 20)) {
	case 0: case 1: case 2: case 3:
		off = rn(c, pages + 2) * page;
		break;
	case 4:
		off = (pages + rn(c, 4)) * page;
		break;
		/* past the end */
	case 5:
		off = 1UL << 44;
		break;
	case 6:
		off = ~0UL & ~(page - 1);
		break;
		/* overflows */
	case 7:
		off = 100;
		break;
		/* unaligned */
	default:
		off = 0;
		break;
	}
	if (len > USER_TOP)
		off = 0;
	if (t.d && buf == 1 && chance(c, 50)) {
		/* what a harness does: the whole buffer, shared, read-write */
		len = buf_bytes(n);
		off = 0;
		prot = PROT_READ | PROT_WRITE;
		flags = MAP_SHARED;
	}
	r = syscall(SYS_mmap, NULL, len, prot, flags, t.fd, off);
	err = r == -1 ? errno : 0;
	mask = mmap_mask(buf, n, len, off, prot, flags);
	if (expect(c->tag, OP_MMAP, err, mask,
		   "%s fd %d (buffer %d, n %lu), len %zu, off %#lx, prot %#x, flags %#x",
		   t.d ? "private" : "shared", t.fd, buf, n, len, off, prot,
		   flags) && !err) {
		m = map_free_slot(c);
		if (!m || buf != 1) {
			/* no slot, or we did not know the size: let it go */
			munmap((void *)r, len);
		} else {
			m->used = true;
			m->addr = (char *)r;
			m->len = (len + page - 1) & ~(page - 1);
			m->pgoff = off / page;
			m->prot = prot;
			m->d = t.d;
			m->id = t.id;
			if (t.d)
				t.d->nmaps++;
		}
	} else if (!err) {
		munmap((void *)r, len);
	}
	target_put(c, &t);
}

void op_munmap(struct ctx *c)
{
	struct pmap *m = map_pick(c), *r;
	unsigned long pages, a, b;
	int err;

	if (!m)
		return;
	pages = m->len / page;
	a = 0;
	b = pages;
	if (pages > 1 && chance(c, 50)) {
		a = rn(c, pages);
		b = a + 1 + rn(c, pages - a);
		if (a == 0 && b == pages)
			b--;
	}
	err = munmap(m->addr + a * page, (b - a) * page) ? errno : 0;
	if (!expect(c->tag, OP_MUNMAP, err, M(OK), "munmap(%p + %lu pages of %lu)",
		    m->addr, a, pages))
		return;
	if (a == 0 && b == pages) {
		map_drop(m);
	} else if (a == 0) {
		m->addr += b * page;
		m->pgoff += b;
		m->len -= b * page;
	} else if (b == pages) {
		m->len = a * page;
	} else {
		/* a hole: the tail becomes a mapping of its own */
		r = map_free_slot(c);
		if (!r) {
			munmap(m->addr + b * page, (pages - b) * page);
			m->len = a * page;
			return;
		}
		*r = *m;
		r->addr = m->addr + b * page;
		r->pgoff = m->pgoff + b;
		r->len = (pages - b) * page;
		m->len = a * page;
		if (m->d)
			m->d->nmaps++;
	}
}

void op_mprotect(struct ctx *c)
{
	static const int prots[] = {
		PROT_READ, PROT_READ | PROT_WRITE, PROT_NONE, PROT_WRITE,
		PROT_READ | PROT_EXEC, PROT_EXEC,
	};
	struct pmap *m = map_pick(c);
	int prot = prots[rn(c, ARRAY_SIZE(prots))], err;

	if (!m)
		return;
	err = mprotect(m->addr, m->len, prot) ? errno : 0;
	/* okcov clears VM_MAYEXEC: kernel-written words never run */
	if (expect(c->tag, OP_MPROTECT, err,
		   (prot & PROT_EXEC) ? M(EACCES) : M(OK),
		   "mprotect(%p, %zu, %#x)", m->addr, m->len, prot) && !err)
		m->prot = prot;
}

void op_mremap(struct ctx *c)
{
	struct pmap *m = map_pick(c);
	unsigned long pages;
	size_t nlen;
	void *r;
	int err;

	if (!m)
		return;
	pages = m->len / page;
	if (pages > 1 && chance(c, 50)) {
		nlen = (1 + rn(c, pages - 1)) * page;
		r = mremap(m->addr, m->len, nlen, 0);
		err = r == MAP_FAILED ? errno : 0;
		if (!err && r != m->addr)
			err = -1;
		if (expect(c->tag, OP_MREMAP, err, M(OK),
			   "shrink %p from %zu to %zu bytes", m->addr, m->len,
			   nlen) && !err)
			m->len = nlen;
		return;
	}
	/* VM_DONTEXPAND: growing is refused, moving or not */
	nlen = m->len + page * (1 + rn(c, 4));
	r = mremap(m->addr, m->len, nlen, chance(c, 50) ? MREMAP_MAYMOVE : 0);
	err = r == MAP_FAILED ? errno : 0;
	if (!err) {
		/* it grew: keep the bookkeeping honest, then complain */
		m->addr = r;
		m->len = nlen;
		err = -1;
	}
	expect(c->tag, OP_MREMAP, err, M(EFAULT), "grow %p from %zu to %zu bytes",
	       m->addr, m->len, nlen);
}

/* A mapping of a private descriptor holding buf[0], readable and writable. */
static struct pmap *map_with_word0(struct ctx *c, bool private_only)
{
	struct pmap *cand[MAXMAP];
	int i, n = 0;

	for (i = 0; i < MAXMAP; i++) {
		struct pmap *m = &c->m[i];

		if (m->used && m->pgoff == 0 &&
		    (m->prot & (PROT_READ | PROT_WRITE)) ==
		    (PROT_READ | PROT_WRITE) && (!private_only || m->d))
			cand[n++] = m;
	}
	return n ? cand[rn(c, n)] : NULL;
}

static unsigned long capacity(struct pdesc *d)
{
	return d->state == S_TRACE && d->mode == KCOV_MODE_TRACE_CMP ?
	       (d->n - 1) / 4 : d->n - 1;
}

/*
 * buf[0] is user-writable: the kernel must read it once, bounds-check it
 * and record nothing for a value at or past capacity.
 */
void op_bufwrite(struct ctx *c)
{
	struct pmap *m = map_with_word0(c, false);
	uint64_t *buf;
	uint64_t v, got, cap;
	struct pdesc *d;
	bool pc;

	if (!m)
		return;
	buf = (uint64_t *)m->addr;
	d = m->d;
	cap = d ? capacity(d) : 0;
	switch (rn(c, 7)) {
	case 0:
		v = ~0ULL;
		break;
	case 1:
		v = 1ULL << 62;
		break;
	case 2:
		v = cap;
		break;
	case 3:
		v = cap ? cap - 1 : 0;
		break;
	case 4:
		v = d ? d->n : rnd(c) % 1024;
		break;
	case 5:
		v = 0;
		break;
	default:
		v = rnd(c);
		break;
	}
	word_set(&buf[0], v);
	syscall(SYS_getpid);
	got = word_get(&buf[0]);
	if (!d) {
		count(OP_BUFWRITE, RS_OK);	/* a shared buffer: no telling */
		return;
	}
	pc = d->state == S_TRACE && d->mode == KCOV_MODE_TRACE_PC &&
	     c->att_id == d->id;
	if (!pc || v >= cap)
		expect(c->tag, OP_BUFWRITE, got == v ? 0 : -1, M(OK),
		       "buf[0] = %#" PRIx64 " (capacity %" PRIu64 ", state %d mode %d) became %#" PRIx64 ": recorded past capacity or while not tracing",
		       v, cap, d->state, d->mode, got);
	else
		expect(c->tag, OP_BUFWRITE,
		       (got > v || (got == v && atomic_load(&shm->narrowed))) &&
		       got <= cap ? 0 : -1,
		       M(OK),
		       "buf[0] = %" PRIu64 " (capacity %" PRIu64 ") became %" PRIu64 " after getpid while tracing PCs",
		       v, cap, got);
}

/*
 * What a fuzzing harness does, every step of which must work: open, size,
 * map the whole buffer, enable (unless this thread is attached already).
 * Returns the mapping, or NULL.
 */
static struct pmap *harness_setup(struct ctx *c)
{
	unsigned long n = 64 + rn(c, 8192);
	int mode = KCOV_MODE_TRACE_PC, fd, err;
	struct pdesc *d = pd_free_slot(c);
	struct pmap *m = map_free_slot(c);
	void *p;

	if (!d || !m)
		return NULL;
	fd = dev_open(c, false);
	if (fd < 0)
		return NULL;
	memset(d, 0, sizeof(*d));
	d->used = true;
	d->fds[0] = fd;
	d->nfds = 1;
	d->id = new_id();
	att_refresh(c);
	err = ioc(fd, KIOSETBUFSIZE, &n);
	if (!expect(c->tag, OP_SETBUFSIZE, err, M(OK) | M(ENOMEM),
		    "harness: fd %d, n %lu", fd, n) || err)
		return NULL;
	d->state = S_READY;
	d->n = n;
	p = mmap(NULL, buf_bytes(n), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (!expect(c->tag, OP_MMAP, p == MAP_FAILED ? errno : 0, M(OK),
		    "harness: fd %d, n %lu", fd, n) || p == MAP_FAILED)
		return NULL;
	m->used = true;
	m->addr = p;
	m->len = buf_bytes(n);
	m->pgoff = 0;
	m->prot = PROT_READ | PROT_WRITE;
	m->d = d;
	m->id = d->id;
	d->nmaps++;
	if (c->att_id)
		return m;
	err = ioc(fd, KIOENABLE, &mode);
	if (expect(c->tag, OP_ENABLE, err, M(OK), "harness: fd %d", fd) &&
	    !err) {
		d->state = S_TRACE;
		d->mode = mode;
		att_set(c, d->id);
	}
	return m;
}

/* Reset, getpid, and check what a private buffer recorded. */
void op_bufcheck(struct ctx *c)
{
	struct pmap *m = map_with_word0(c, true);
	uint64_t *buf;
	uint64_t got, cap, i, words, pc;
	struct pdesc *d;

	if (!m && chance(c, 50))
		m = harness_setup(c);
	if (!m)
		return;
	d = m->d;
	buf = (uint64_t *)m->addr;
	cap = capacity(d);
	word_set(&buf[0], 0);
	syscall(SYS_getpid);
	got = word_get(&buf[0]);
	if (d->state != S_TRACE || d->mode != KCOV_MODE_TRACE_PC) {
		/* READY records nothing; nothing here emits comparisons */
		expect(c->tag, OP_BUFCHECK, got ? -1 : 0, M(OK),
		       "state %d mode %d: %" PRIu64 " records after getpid",
		       d->state, d->mode, got);
		return;
	}
	if (!expect(c->tag, OP_BUFCHECK,
		    (cap && !atomic_load(&shm->narrowed) ? got >= 1 : 1) &&
		    got <= cap ? 0 : -1, M(OK),
		    "tracing PCs (n %lu, fd %s): %" PRIu64 " records after getpid",
		    d->n, d->nfds ? "open" : "closed, still mapped", got))
		return;
	words = m->len / 8;
	for (i = 1; i <= got && i < words; i++) {
		pc = word_get(&buf[i]);
		if (pc < KERNEL_TEXT) {
			expect(c->tag, OP_BUFCHECK, -1, M(OK),
			       "record %" PRIu64 " of %" PRIu64 " is %#" PRIx64 ", not a kernel PC",
			       i, got, pc);
			return;
		}
	}
}
