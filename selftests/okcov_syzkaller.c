// SPDX-License-Identifier: GPL-2.0
/*
 * What syzkaller's OpenBSD executor does with kcov(4), from its documented
 * behaviour (written here, not copied): one descriptor per thread slot
 * plus one extra (7 per process), KIOSETBUFSIZE of exactly 512 << 10
 * entries, a 4 MiB MAP_SHARED mapping with everything after the first
 * page made read-only, KIOREMOTEATTACH {KCOV_REMOTE_COMMON, 0} on the
 * extra descriptor (a failure is fatal to the executor), KIOENABLE with a
 * pointer to the mode in each worker thread, buf[0] reset before each
 * program, and an abort on any comparison record whose type is above 7.
 * The executor hashes consecutive PCs into edges; so do we, and expect
 * them to repeat between identical programs.
 *
 * TRACE_CMP records come from the instrumented test-target module when
 * okcov owns the sanitizer hooks (not a CONFIG_KCOV kernel) and the
 * module is there; the CMP variant checks the comparisons it knows the
 * target makes, and SKIPs where nothing could make one (the protocol
 * over empty buffers proves nothing).
 */
#include "kselftest_harness.h"
#include "okcov_test.h"
#include "kmod_util.h"
#include "okcov_target.h"

#define SLOTS		6		/* worker threads of one executor */
#define NDESC		(SLOTS + 1)	/* + the extra (remote) descriptor */
#define COVER_N		(512UL << 10)
#define COVER_BYTES	(4UL << 20)
#define PROGRAMS	3

static bool have_sancov;

struct slot {
	int fd;
	uint64_t *buf;
	int mode;
	int err;		/* first failure, for the main thread */
	uint64_t records[PROGRAMS];
	uint64_t bad_type;	/* a cmp type above 7, or 0 */
	uint64_t magic[PROGRAMS];	/* the target's == MAGIC64 records */
	uint64_t edges[PROGRAMS];
	bool getpid_seen;
};

/* Open, size, map, protect: the executor's cover_open() + cover_protect(). */
static int cover_open(struct slot *s)
{
	uint64_t n = COVER_N;
	size_t ps = st_page_size();
	void *p;

	s->fd = st_open();
	if (s->fd < 0)
		return errno;
	if (ioctl(s->fd, KIOSETBUFSIZE, &n))
		return errno;
	p = mmap(NULL, COVER_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED,
		 s->fd, 0);
	if (p == MAP_FAILED)
		return errno;
	s->buf = p;
	if (mprotect((char *)p + ps, COVER_BYTES - ps, PROT_READ))
		return errno;
	return 0;
}

static void cover_close(struct slot *s)
{
	if (s->buf)
		munmap(s->buf, COVER_BYTES);
	if (s->fd >= 0)
		close(s->fd);
}

/* Distinct (prev, pc) pairs, the executor's edge hash, over a small table. */
static uint64_t edge_count(const uint64_t *buf, uint64_t n)
{
	static __thread uint32_t seen[1 << 14];
	uint64_t i, prev = 0, edges = 0;

	memset(seen, 0, sizeof(seen));
	for (i = 0; i < n; i++) {
		uint64_t pc = buf[i + 1];
		uint32_t h = (uint32_t)((pc ^ (prev << 1)) * 0x9e3779b1u);
		uint32_t k = (h >> 18) & ((1 << 14) - 1);

		if (seen[k] != h + 1) {
			seen[k] = h + 1;
			edges++;
		}
		prev = pc;
	}
	return edges;
}

/* One "program": a few syscalls, and the target's compares in CMP mode. */
static void program(int tfd)
{
	char b[64];
	int fd;

	syscall(SYS_getpid);
	fd = open("/proc/self/stat", O_RDONLY);
	if (fd >= 0) {
		if (read(fd, b, sizeof(b)) < 0)
			b[0] = 0;
		close(fd);
	}
	if (tfd >= 0)
		ioctl(tfd, OKCOV_TARGET_RUN, OKCOV_TARGET_MAGIC64);
}

struct cmp_rec {
	uint64_t type, arg1, arg2, pc;
};

/*
 * Records of the 8-byte compare with constant @a (KCOV_CMP_SIZE(3) |
 * KCOV_CMP_CONST, either operand) made in the target's function @fn.
 */
static uint64_t cmp_hits(const uint64_t *buf, uint64_t a, const char *fn)
{
	uint64_t i, n = __atomic_load_n(&buf[0], __ATOMIC_RELAXED);
	uint64_t room = (COVER_N - 1) / 4, hits = 0;

	for (i = 0; i < n && i < room; i++) {
		struct cmp_rec r = {
			buf[4 * i + 1], buf[4 * i + 2],
			buf[4 * i + 3], buf[4 * i + 4],
		};

		if (r.type == (KCOV_CMP_SIZE(3) | KCOV_CMP_CONST) &&
		    (r.arg1 == a || r.arg2 == a) &&
		    ksyms_pc_matches(r.pc, st_in_target, fn))
			hits++;
	}
	return hits;
}

static void *worker(void *arg)
{
	struct slot *s = arg;
	int p, tfd = open(OKCOV_TARGET_PATH, O_RDWR);

	if (ioctl(s->fd, KIOENABLE, &s->mode)) {
		s->err = errno;
		goto out;
	}
	for (p = 0; p < PROGRAMS; p++) {
		uint64_t i, n, room;

		__atomic_store_n(&s->buf[0], 0, __ATOMIC_RELAXED);
		program(tfd);
		n = __atomic_load_n(&s->buf[0], __ATOMIC_RELAXED);
		s->records[p] = n;
		if (s->mode == KCOV_MODE_TRACE_CMP) {
			room = (COVER_N - 1) / 4;
			for (i = 0; i < n && i < room; i++)
				if (s->buf[4 * i + 1] > 7 && !s->bad_type)
					s->bad_type = s->buf[4 * i + 1];
			s->magic[p] = cmp_hits(s->buf, OKCOV_TARGET_MAGIC64,
					       "okcov_target_run");
		} else {
			room = COVER_N - 1;
			if (n > room)
				n = room;
			s->edges[p] = edge_count(s->buf, n);
			for (i = 0; i < n; i++)
				if (ksyms_pc_matches(s->buf[i + 1],
						     ksym_is_syscall, "getpid"))
					s->getpid_seen = true;
		}
	}
	if (ioctl(s->fd, KIODISABLE, 0))
		s->err = errno;
out:
	if (tfd >= 0)
		close(tfd);
	return NULL;
}

FIXTURE(executor) {
	struct slot slots[NDESC];
};

FIXTURE_VARIANT(executor) {
	int mode;
};

FIXTURE_VARIANT_ADD(executor, pc) { .mode = KCOV_MODE_TRACE_PC };
FIXTURE_VARIANT_ADD(executor, cmp) { .mode = KCOV_MODE_TRACE_CMP };

FIXTURE_SETUP(executor)
{
	int i;

	ASSERT_EQ(0, ksyms_load());
	if (st_max_entries() < COVER_N)
		SKIP(return, "max_entries below 512 << 10");
	for (i = 0; i < NDESC; i++) {
		self->slots[i].fd = -1;
		self->slots[i].buf = NULL;
		self->slots[i].mode = variant->mode;
	}
	for (i = 0; i < NDESC; i++)
		ASSERT_EQ(0, cover_open(&self->slots[i]));
}

FIXTURE_TEARDOWN(executor)
{
	int i;

	for (i = 0; i < NDESC; i++)
		cover_close(&self->slots[i]);
}

TEST_F_TIMEOUT(executor, run, 300)
{
	struct slot *extra = &self->slots[SLOTS];
	struct kio_remote_attach ra = { KCOV_REMOTE_COMMON, 0 };
	pthread_t th[SLOTS];
	int i, p, tfd;

	if (_metadata->skip)
		return;
	if (variant->mode == KCOV_MODE_TRACE_CMP && !have_sancov)
		SKIP(return, "no comparison source: __sanitizer_cov_* are not okcov's (a CONFIG_KCOV kernel?)");
	if (variant->mode == KCOV_MODE_TRACE_CMP &&
	    access(OKCOV_TARGET_PATH, F_OK))
		SKIP(return, "no comparison source: no test-target module (OKCOV_TARGET_KO)");
	/* the extra descriptor: remote, enabled by the main thread */
	ASSERT_EQ(0, st_ioctl(extra->fd, KIOREMOTEATTACH, &ra));
	ASSERT_EQ(0, st_enable(extra->fd, variant->mode));
	__atomic_store_n(&extra->buf[0], 0, __ATOMIC_RELAXED);

	for (i = 0; i < SLOTS; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, worker,
					    &self->slots[i]));
	/* deferred work of the process, into the extra descriptor */
	tfd = open(OKCOV_TARGET_PATH, O_RDWR);
	if (tfd >= 0) {
		ASSERT_EQ(0, ioctl(tfd, OKCOV_TARGET_DEFER,
				   OKCOV_DEFER_WORK | OKCOV_DEFER_TIMER));
		ASSERT_EQ(0, ioctl(tfd, OKCOV_TARGET_WAIT, 0));
		close(tfd);
	}
	for (i = 0; i < SLOTS; i++)
		ASSERT_EQ(0, pthread_join(th[i], NULL));
	/*
	 * okcov(4)'s reading rule for a buffer several CPUs write: once
	 * KIODISABLE returns, every claimed slot holds its PC.
	 */
	ASSERT_EQ(0, st_disable(extra->fd));

	for (i = 0; i < SLOTS; i++) {
		struct slot *s = &self->slots[i];

		ASSERT_EQ(0, s->err);
		ASSERT_EQ(0, s->bad_type) {
			TH_LOG("slot %d: cmp type %llu", i,
			       (unsigned long long)s->bad_type);
		}
		if (variant->mode == KCOV_MODE_TRACE_PC) {
			ASSERT_TRUE(s->getpid_seen);
			for (p = 0; p < PROGRAMS; p++)
				ASSERT_LT(0, s->edges[p]);
		} else {
			/* each program's OKCOV_TARGET_RUN compared MAGIC64 */
			for (p = 0; p < PROGRAMS; p++) {
				ASSERT_LE(1, s->magic[p]) {
					TH_LOG("slot %d program %d: %llu records, none of MAGIC64 in okcov_target_run",
					       i, p,
					       (unsigned long long)s->records[p]);
				}
			}
		}
	}

	/* the remote buffer: the deferred work, well-formed */
	if (variant->mode == KCOV_MODE_TRACE_CMP) {
		uint64_t n = extra->buf[0], bad = 0;

		for (i = 0; (uint64_t)i < n && (uint64_t)i < (COVER_N - 1) / 4; i++)
			if (extra->buf[4 * i + 1] > 7)
				bad++;
		ASSERT_EQ(0, bad);
		/* the work item's and the timer's known compares */
		ASSERT_EQ(1, cmp_hits(extra->buf, OKCOV_TARGET_WORK_MAGIC,
				      "okcov_target_in_work"));
		ASSERT_EQ(1, cmp_hits(extra->buf, OKCOV_TARGET_TIMER_MAGIC,
				      "okcov_target_in_timer"));
		/* the workers' own compares are theirs, not remote */
		ASSERT_EQ(0, cmp_hits(extra->buf, OKCOV_TARGET_MAGIC64,
				      "okcov_target_run"));
	} else if (tfd >= 0) {
		ASSERT_LT(0, st_count_matching(
			&(struct st_cov){ extra->fd, COVER_N, extra->buf },
			ksym_named, "okcov_target_in_work"));
		ASSERT_LT(0, st_count_matching(
			&(struct st_cov){ extra->fd, COVER_N, extra->buf },
			ksym_named, "okcov_target_in_timer"));
	}
}

/* KIOREMOTEATTACH failing is fatal to the executor: it must not here. */
TEST(remote_attach_every_run)
{
	struct kio_remote_attach ra = { KCOV_REMOTE_COMMON, 0 };
	struct slot s = { .fd = -1 };
	int run;

	if (st_max_entries() < COVER_N)
		SKIP(return, "max_entries below 512 << 10");
	for (run = 0; run < 5; run++) {
		ASSERT_EQ(0, cover_open(&s));
		ASSERT_EQ(0, st_ioctl(s.fd, KIOREMOTEATTACH, &ra));
		ASSERT_EQ(0, st_enable(s.fd, KCOV_MODE_TRACE_PC));
		cover_close(&s);
		s.fd = -1;
		s.buf = NULL;
	}
}

static void prepare(void)
{
	char why[256];

	st_target_load(why, sizeof(why));	/* the tests say what is missing */
	have_sancov = ksyms_load() == 0 &&
		      ksyms_addr("__sanitizer_cov_trace_pc", "okcov");
}

OKCOV_HARNESS_MAIN(prepare);
