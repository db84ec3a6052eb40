// SPDX-License-Identifier: GPL-2.0
/*
 * A worker process: its threads (dispatching random operations,
 * draining on request), its bystander and its supervisor.
 */
#include "stress.h"

static void op_syscalls(struct ctx *c)
{
	coverage_syscalls(c, 1 + rn(c, 8));
	count(OP_SYSCALLS, RS_OK);
}

/* Operations a fork child may do: no fork, exec or thread exit. */
void run_child_ops(struct ctx *c, int nops)
{
	while (nops-- > 0) {
		switch (rn(c, 14)) {
		case 0:
			op_open(c);
			break;
		case 1:
			op_dup(c);
			break;
		case 2:
			op_close(c);
			break;
		case 3:
		case 4:
			op_setbufsize(c);
			break;
		case 5:
		case 6:
			op_enable(c, chance(c, 20));
			break;
		case 7:
			op_disable(c);
			break;
		case 8:
			op_badioctl(c);
			break;
		case 9:
			op_mmap(c);
			break;
		case 10:
			op_munmap(c);
			break;
		case 11:
			op_bufcheck(c);
			break;
		case 12:
			op_bufwrite(c);
			break;
		default:
			op_syscalls(c);
			break;
		}
	}
}

/* Relative weights of the operations of a worker thread (per mille: sum 1000). */
static const struct {
	enum op op;
	unsigned int w;
} op_weights[] = {
	{ OP_SYSCALLS, 50 }, { OP_OPEN, 70 }, { OP_DUP, 30 },
	{ OP_CLOSE, 55 }, { OP_PASS, 25 }, { OP_SETBUFSIZE, 90 }, { OP_ENABLE, 80 },
	{ OP_ENABLE_LEGACY, 30 }, { OP_DISABLE, 65 }, { OP_BADIOCTL, 50 },
	{ OP_MMAP, 95 }, { OP_MUNMAP, 40 }, { OP_MPROTECT, 20 },
	{ OP_MREMAP, 20 }, { OP_BUFWRITE, 70 }, { OP_BUFCHECK, 65 },
	{ OP_FORK, 15 }, { OP_EXEC, 7 }, { OP_THREAD_EXIT, 8 },
	{ OP_RATTACH, 20 }, { OP_RENABLE, 20 }, { OP_RDISABLE, 10 },
	{ OP_RCLOSE, 10 }, { OP_RDEFER, 15 }, { OP_TDEFER, 15 },
	{ OP_TCHURN, 12 }, { OP_BHSTORM, 8 }, { OP_DEEP, 5 },
};

static void do_op(struct ctx *c)
{
	unsigned int r = rn(c, 1000), i;
	enum op op = OP_SYSCALLS;
	double t0;

	for (i = 0; i < ARRAY_SIZE(op_weights); i++) {
		if (r < op_weights[i].w) {
			op = op_weights[i].op;
			break;
		}
		r -= op_weights[i].w;
	}
	/* stuck attached to a DYING descriptor: exiting is the way out */
	if (c->att_id && !pd_pick_if(c, pd_is_trace) && chance(c, 2))
		op = OP_THREAD_EXIT;
	c->ops++;
	t0 = now();
	switch (op) {
	case OP_OPEN:
		op_open(c);
		break;
	case OP_DUP:
		op_dup(c);
		break;
	case OP_CLOSE:
		op_close(c);
		break;
	case OP_PASS:
		op_pass(c);
		break;
	case OP_SETBUFSIZE:
		op_setbufsize(c);
		break;
	case OP_ENABLE:
		op_enable(c, false);
		break;
	case OP_ENABLE_LEGACY:
		op_enable(c, true);
		break;
	case OP_DISABLE:
		op_disable(c);
		break;
	case OP_BADIOCTL:
		op_badioctl(c);
		break;
	case OP_MMAP:
		op_mmap(c);
		break;
	case OP_MUNMAP:
		op_munmap(c);
		break;
	case OP_MPROTECT:
		op_mprotect(c);
		break;
	case OP_MREMAP:
		op_mremap(c);
		break;
	case OP_BUFWRITE:
		op_bufwrite(c);
		break;
	case OP_BUFCHECK:
		op_bufcheck(c);
		break;
	case OP_FORK:
		spawn_child(c, OP_FORK, fork_child);
		break;
	case OP_EXEC:
		spawn_child(c, OP_EXEC, exec_child);
		break;
	case OP_THREAD_EXIT:
		c->exiting = true;
		break;
	case OP_RATTACH:
		op_rattach(c);
		break;
	case OP_RENABLE:
		op_renable(c);
		break;
	case OP_RDISABLE:
		op_rdisable(c);
		break;
	case OP_RCLOSE:
		op_rclose(c);
		break;
	case OP_RDEFER:
		op_rdefer(c);
		break;
	case OP_TDEFER:
		op_tdefer(c);
		break;
	case OP_TCHURN:
		op_tchurn(c);
		break;
	case OP_BHSTORM:
		op_bhstorm(c);
		break;
	case OP_DEEP:
		op_deep(c);
		break;
	default:
		op_syscalls(c);
		break;
	}
	atomic_fetch_add_explicit(&shm->ns[op], (unsigned long)((now() - t0) * 1e9),
				  memory_order_relaxed);
	atomic_fetch_add_explicit(&shm->timed[op], 1, memory_order_relaxed);
}

/* --------------------------------------------------- worker threads */

struct slot {
	pthread_t th;
	bool running;
	atomic_bool done;
	atomic_uint acked;	/* drain epoch this thread finished */
	int spawns;
	/* what an exiting thread hands to the supervisor */
	int h_fd;
	enum dstate h_state;
	unsigned long h_n, h_id;
	int proc, idx;
	struct pool *pool;
	uint64_t seed;
};

static void unmap_all(struct ctx *c)
{
	int i;

	for (i = 0; i < MAXMAP; i++) {
		struct pmap *m = &c->m[i];

		if (!m->used)
			continue;
		expect(c->tag, OP_MUNMAP, munmap(m->addr, m->len) ? errno : 0,
		       M(OK), "munmap(%p, %zu)", m->addr, m->len);
		map_drop(m);
	}
}

/* Close every private descriptor, some after disabling, some not. */
static void close_all(struct ctx *c, struct slot *handoff)
{
	struct pdesc *d;
	int i, err;

	for (i = 0; i < MAXD; i++) {
		d = &c->d[i];
		if (!d->used || !d->nfds)
			continue;
		if (handoff && handoff->h_fd < 0 && chance(c, 60)) {
			/* keep one fd for the supervisor */
			handoff->h_fd = d->fds[--d->nfds];
			handoff->h_state = d->state;
			handoff->h_n = d->n;
			handoff->h_id = d->id;
		} else if (d->state == S_TRACE && chance(c, 40)) {
			err = ioc(d->fds[0], KIODISABLE, NULL);
			if (expect(c->tag, OP_DISABLE, err, M(OK),
				   "fd %d before close", d->fds[0]) && !err) {
				d->state = S_READY;
				c->att_id = 0;
			}
		}
		while (d->nfds)
			pd_close_fd(c, d, d->nfds - 1);
	}
}

/* Leave only DYING descriptors behind, attached to this live thread. */
static void drain_self(struct ctx *c, struct slot *s, unsigned int epoch)
{
	unsigned long n = 1 + rn(c, 4096);
	int mode = KCOV_MODE_TRACE_PC, fd, err, i;

	unmap_all(c);
	target_close(c);	/* okcov_target is unloaded first */
	/* the attachment is valid: rmmod waits for every thread's ack */
	if (c->att_id && c->att_gen != cur_gen())
		c->att_id = 0;
	for (i = 0; i < MAXD; i++) {
		struct pdesc *d = &c->d[i];

		if (d->used && d->nfds && d->state == S_READY && !c->att_id &&
		    chance(c, 60)) {
			err = ioc(d->fds[0], KIOENABLE, &mode);
			if (expect(c->tag, OP_ENABLE, err, M(OK),
				   "drain: fd %d", d->fds[0]) && !err) {
				d->state = S_TRACE;
				d->mode = mode;
				att_set(c, d->id);
			}
		}
	}
	close_all(c, NULL);
	if (!c->att_id && chance(c, 70)) {
		fd = dev_open(c, false);
		if (fd >= 0) {
			err = ioc(fd, KIOSETBUFSIZE, &n);
			expect(c->tag, OP_SETBUFSIZE, err, M(OK) | M(ENOMEM),
			       "drain: n %lu", n);
			if (!err) {
				err = ioc(fd, KIOENABLE, &mode);
				if (expect(c->tag, OP_ENABLE, err, M(OK),
					   "drain: fresh fd %d", fd) && !err)
					att_set(c, new_id());
			}
			coverage_syscalls(c, 3);
			expect(c->tag, OP_CLOSE, close(fd) ? errno : 0, M(OK),
			       "drain: fd %d", fd);
		}
	}
	if (c->att_id)
		atomic_fetch_add(&shm->dying_at_drain, 1);
	count(OP_DRAIN, RS_OK);
	atomic_store(&s->acked, epoch);
}

static void *worker_fn(void *arg)
{
	struct slot *s = arg;
	struct ctx *c = calloc(1, sizeof(*c));
	unsigned int epoch, done_epoch = 0;
	int phase;

	if (!c)
		abort();
	c->kind = K_THREAD;
	c->tfd = -1;
	c->pool = s->pool;
	c->rng = s->seed;
	snprintf(c->tag, sizeof(c->tag), "proc %d thread %d.%d", s->proc,
		 s->idx, s->spawns);
	atomic_fetch_add(&shm->threads_spawned, 1);
	for (;;) {
		phase = atomic_load(&shm->phase);
		if (phase == PH_STOP)
			break;
		if (phase != PH_RUN) {
			epoch = atomic_load(&shm->epoch);
			if (done_epoch != epoch) {
				drain_self(c, s, epoch);
				done_epoch = epoch;
			}
			/* alive, maybe attached to a DYING descriptor */
			coverage_syscalls(c, 2);
			usleep(2000);
			continue;
		}
		if (c->exiting)
			break;
		do_op(c);
	}
	unmap_all(c);
	target_close(c);
	close_all(c, c->exiting && atomic_load(&shm->phase) == PH_RUN ?
		  s : NULL);
	if (c->exiting)
		count(OP_THREAD_EXIT, RS_OK);
	free(c);
	atomic_store(&s->done, true);
	return NULL;	/* maybe still attached: the exit probe detaches */
}

static atomic_bool noise_stop;

static void *noise_fn(void *arg)
{
	unsigned long n = 0;

	while (!atomic_load(&noise_stop)) {
		coverage_syscalls(NULL, 4);
		if (++n % 64 == 0)	/* counted in syscalls */
			atomic_fetch_add_explicit(&shm->cnt[OP_NOISE][RS_OK],
						  64 * 4, memory_order_relaxed);
		usleep(5000);
	}
	return NULL;
}

/*
 * A thread that exited handed over one of its descriptors. Its exit makes
 * a TRACE descriptor READY, so another thread may enable it, right after
 * pthread_join() (which returns before sched_process_exit on kernels
 * before 6.16: okcov detaches a PF_EXITING thread itself).
 */
static void check_handoff(struct ctx *sup, struct slot *s)
{
	int mode = KCOV_MODE_TRACE_PC, err;
	struct pool *p = s->pool;
	unsigned int mask;

	if (s->h_fd < 0)
		return;
	err = ioc(s->h_fd, KIOENABLE, &mode);
	if (s->h_state == S_TRACE)
		atomic_fetch_add(&shm->handoff_trace, 1);
	mask = s->h_state == S_NONE ? M(EBUSY) : M(OK);
	if (expect(sup->tag, OP_HANDOFF, err, mask,
		   "fd %d of a thread just joined, state %d%s", s->h_fd,
		   s->h_state, s->h_state == S_TRACE ?
		   " (it exited enabled)" : "") && !err)
		expect(sup->tag, OP_DISABLE, ioc(s->h_fd, KIODISABLE, NULL),
		       M(OK), "handed-over fd %d", s->h_fd);
	pool_wrlock(p);
	if (!err && atomic_load(&shm->phase) == PH_RUN && p->cnt < POOLMAX) {
		p->e[p->cnt].fd = s->h_fd;
		p->e[p->cnt].id = s->h_id;
		atomic_store(&p->e[p->cnt].n, s->h_n);
		p->cnt++;
		s->h_fd = -1;
	}
	pool_unlock(p);
	if (s->h_fd >= 0)
		close(s->h_fd);
	s->h_fd = -1;
}

static void pool_close_all(struct pool *p)
{
	int i;

	pool_wrlock(p);
	for (i = 0; i < p->cnt; i++)
		close(p->e[i].fd);
	p->cnt = 0;
	pool_unlock(p);
}

static void spawn(struct slot *s, uint64_t base)
{
	pthread_attr_t attr;

	s->seed = splitmix(&base) ^ ((uint64_t)s->spawns << 32);
	s->h_fd = -1;
	atomic_store(&s->done, false);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 << 10);
	if (pthread_create(&s->th, &attr, worker_fn, s)) {
		fail("supervisor", "pthread_create: %s", strerror(errno));
		s->running = false;
	} else {
		s->running = true;
	}
	pthread_attr_destroy(&attr);
	s->spawns++;
}

int worker_main(int proc, int nthreads, uint64_t seed)
{
	struct slot slots[MAX_THREADS];
	struct ctx sup = { .kind = K_SUPERVISOR };
	pthread_rwlockattr_t ra;
	unsigned int epoch, acked_epoch = 0;
	struct pool pool;
	pthread_t noise;
	bool stopping = false, all;
	uint64_t base = seed;
	int i, phase;

	snprintf(sup.tag, sizeof(sup.tag), "proc %d supervisor", proc);
	pthread_rwlockattr_init(&ra);
	pthread_rwlockattr_setkind_np(&ra,
		PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&pool.lock, &ra);
	pool.cnt = 0;
	atomic_store(&pool.children, 0);
	remote_init(&pool.r);
	memset(slots, 0, sizeof(slots));
	pthread_create(&noise, NULL, noise_fn, NULL);
	for (i = 0; i < nthreads; i++) {
		slots[i].proc = proc;
		slots[i].idx = i;
		slots[i].pool = &pool;
		slots[i].h_fd = -1;
		spawn(&slots[i], splitmix(&base));
	}
	for (;;) {
		phase = atomic_load(&shm->phase);
		if (phase == PH_STOP)
			stopping = true;
		all = true;
		for (i = 0; i < nthreads; i++) {
			struct slot *s = &slots[i];

			if (s->running && atomic_load(&s->done)) {
				pthread_join(s->th, NULL);
				s->running = false;
				check_handoff(&sup, s);
			}
			if (!s->running && !stopping)
				spawn(s, splitmix(&base));
			if (s->running)
				all = false;
		}
		if (stopping && all)
			break;
		epoch = atomic_load(&shm->epoch);
		if ((phase == PH_DRAIN || phase == PH_UNLOADED) &&
		    acked_epoch != epoch) {
			bool acked = true;

			for (i = 0; i < nthreads; i++)
				if (slots[i].running &&
				    atomic_load(&slots[i].acked) != epoch)
					acked = false;
			if (acked) {
				pool_close_all(&pool);
				remote_close(&pool.r);
				acked_epoch = epoch;
				atomic_fetch_add(&shm->drained, 1);
			}
		}
		usleep(2000);
	}
	pool_close_all(&pool);
	remote_close(&pool.r);
	atomic_store(&noise_stop, true);
	pthread_join(noise, NULL);
	return 0;
}
