// SPDX-License-Identifier: GPL-2.0
/*
 * Instrumented copies (x86_64, /sys/kernel/debug/okcov/copy): okcov lays
 * out, relocates and writes a copy of a function into its pool; nothing
 * is redirected into it yet.
 *
 *  layout:   for the test-target's functions, a few syscall paths'
 *            (ksys_read, vfs_read, do_sys_openat2...) and one with a
 *            .cold part, the copy's bytes (from /proc/kcore, decoded by
 *            objdump in the guest) hold each original instruction at its
 *            mapped place with the same mnemonic; each direct branch goes
 *            to the mapped target (the record of a leader) inside the
 *            function, to the same address outside it; each RIP-relative
 *            operand keeps its absolute address; each record sequence
 *            pushes its leader and calls okcov_copy_record; the fentry
 *            site is a nop; the original's bytes are the same before and
 *            after the copy is made;
 *  again:    a second write of the same function returns the same copy;
 *  run:      the copy of okcov_target_deep(), called through the
 *            test-target's hook, returns what the original returns, and
 *            records exactly the leaders of the path it took (the answers
 *            the kprobe backend gives in okcov_deep's target test): then
 *            and join for 1, else and join for 0; nothing for a thread
 *            that is not enabled, which gets the same return values;
 *  flags:    okcov_target_flags(), whose leaders sit between a cmp and
 *            the setz and setc that read its flags, returns the same
 *            through its copy, enabled and not;
 *  refused:  okcov's own text (EACCES) and no function (ENXIO): the
 *            plan's errno on write; no address (EINVAL); a read before any
 *            write (ENODATA); no root (EACCES on open);
 *  full:     copies of every text function, one after the other, until
 *            the pool is full: ENOSPC, and no other errno than the
 *            planner's verdicts (runs last: the pool stays full).
 *
 * Needs the test-target module and x86_64; layout needs objdump in the
 * guest and /proc/kcore.
 */
#include <ctype.h>
#include <elf.h>
#include <limits.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "okcov_test.h"
#include "kmod_util.h"
#include "okcov_target.h"

#define NENT		(64 << 10)
#define MAX_INSNS	(64 << 10)
#define RECORD_LEN	15

struct copy {
	uint64_t start, size;
	char name[256];
	uint64_t fn_start, fn_end, fentry;
	uint64_t pool_used, pool_size;
	unsigned int n;			/* instructions */
	uint64_t *caddr, *oaddr;	/* each one's copy and original address */
	unsigned char *len;		/* its length in the copy */
	uint64_t *record;		/* its record's address, or 0 */
	unsigned int nrecords;
};

static void copy_free(struct copy *c)
{
	free(c->caddr);
	free(c->oaddr);
	free(c->len);
	free(c->record);
	memset(c, 0, sizeof(*c));
}

/* Write @addr to the copy file, parse what it reads: 0, or the errno. */
static int copy_get(uint64_t addr, struct copy *c)
{
	uint64_t x, y, pending = 0;
	char line[512];
	unsigned int l;
	FILE *f;

	memset(c, 0, sizeof(*c));
	f = st_inspect(ST_COPY_FILE, addr);
	if (!f)
		return errno;
	c->caddr = calloc(MAX_INSNS, sizeof(*c->caddr));
	c->oaddr = calloc(MAX_INSNS, sizeof(*c->oaddr));
	c->len = calloc(MAX_INSNS, 1);
	c->record = calloc(MAX_INSNS, sizeof(*c->record));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "copy %llx %llu", (unsigned long long *)&c->start,
			   (unsigned long long *)&c->size) == 2)
			continue;
		if (sscanf(line, "function %255s %llx %llx", c->name,
			   (unsigned long long *)&c->fn_start,
			   (unsigned long long *)&c->fn_end) == 3)
			continue;
		if (sscanf(line, "pool %llu %llu",
			   (unsigned long long *)&c->pool_used,
			   (unsigned long long *)&c->pool_size) == 2)
			continue;
		if (sscanf(line, "fentry %llx", (unsigned long long *)&c->fentry) == 1)
			continue;
		if (sscanf(line, "record %llx %llx", (unsigned long long *)&x,
			   (unsigned long long *)&y) == 2) {
			pending = x;
			c->nrecords++;
			continue;
		}
		if (sscanf(line, "map %llx %llx %u", (unsigned long long *)&x,
			   (unsigned long long *)&y, &l) == 3 && c->n < MAX_INSNS) {
			c->caddr[c->n] = x;
			c->oaddr[c->n] = y;
			c->len[c->n] = l;
			c->record[c->n++] = pending;
			pending = 0;
		}
	}
	fclose(f);
	return 0;
}

/* The copy's index of original @a, or -1. */
static int copy_find(const struct copy *c, uint64_t a)
{
	unsigned int i;

	for (i = 0; i < c->n; i++)
		if (c->oaddr[i] == a)
			return i;
	return -1;
}

/* The parts of the function planned at @addr, from the plan file. */
static int plan_regions(uint64_t addr, uint64_t (*r)[2], int max)
{
	char line[256];
	uint64_t x, y;
	int nr = 0;
	FILE *f;

	f = st_inspect(ST_PLAN_FILE, addr);
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "region %llx %llx", (unsigned long long *)&x,
			   (unsigned long long *)&y) == 2 && nr < max) {
			r[nr][0] = x;
			r[nr++][1] = y;
		}
		if (!strncmp(line, "insn ", 5))
			break;
	}
	fclose(f);
	return nr;
}

/* ---- /proc/kcore, as okcov-cover deep reads it ---- */

static int kcore = -1;
static Elf64_Phdr *phdrs;
static unsigned int nphdrs;

static int kcore_open(void)
{
	Elf64_Ehdr eh;

	if (kcore >= 0)
		return 0;
	kcore = open("/proc/kcore", O_RDONLY | O_CLOEXEC);
	if (kcore < 0)
		return -errno;
	if (pread(kcore, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64)
		return -EINVAL;
	nphdrs = eh.e_phnum;
	phdrs = calloc(nphdrs, sizeof(*phdrs));
	if (pread(kcore, phdrs, nphdrs * sizeof(*phdrs), eh.e_phoff) !=
	    (ssize_t)(nphdrs * sizeof(*phdrs)))
		return -EIO;
	return 0;
}

/* @len live bytes at kernel address @addr: 0, or -1. */
static int kcore_read(uint64_t addr, void *buf, size_t len)
{
	unsigned int i;

	if (kcore_open())
		return -1;
	for (i = 0; i < nphdrs; i++) {
		const Elf64_Phdr *p = &phdrs[i];

		if (p->p_type != PT_LOAD || addr < p->p_vaddr ||
		    addr + len > p->p_vaddr + p->p_filesz)
			continue;
		return pread(kcore, buf, len, p->p_offset + (addr - p->p_vaddr)) ==
		       (ssize_t)len ? 0 : -1;
	}
	return -1;
}

/* ---- objdump ---- */

struct dis {
	uint64_t addr;
	unsigned int len;
	char mnem[32];
	char ops[160];
	uint64_t target;	/* a direct branch's or call's, or 0 */
	uint64_t rip;		/* a RIP-relative operand's address, or 0 */
};

static bool is_prefix(const char *tok)
{
	static const char *const p[] = {
		"bnd", "notrack", "cs", "ds", "es", "ss", "fs", "gs", "data16",
		"addr32", "lock", "rep", "repz", "repnz", "repe", "repne", NULL,
	};
	unsigned int i;

	for (i = 0; p[i]; i++)
		if (!strcmp(tok, p[i]))
			return true;
	return !strncmp(tok, "rex", 3);
}

static bool is_direct(const char *m)
{
	return m[0] == 'j' || !strncmp(m, "call", 4);
}

/* "addr:\tbytes\tmnemonic operands [# 0x...]" */
static bool dis_line(char *line, struct dis *d)
{
	char *tab, *bytes, *text, *tok, *save, *hash, *end;
	uint64_t t;

	memset(d, 0, sizeof(*d));
	d->addr = strtoull(line, &tab, 16);
	if (tab == line || tab[0] != ':' || tab[1] != '\t')
		return false;
	bytes = tab + 2;
	text = strchr(bytes, '\t');
	if (!text)
		return false;
	*text++ = '\0';
	for (tok = strtok_r(bytes, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		d->len++;
	hash = strstr(text, "# 0x");
	if (hash) {
		d->rip = strtoull(hash + 2, NULL, 16);
		*hash = '\0';
	}
	tok = strtok_r(text, " \t\n", &save);
	while (tok && is_prefix(tok))
		tok = strtok_r(NULL, " \t\n", &save);
	if (!tok)
		return false;
	snprintf(d->mnem, sizeof(d->mnem), "%s", tok);
	tok = strtok_r(NULL, "\n", &save);
	if (tok) {
		while (*tok == ' ' || *tok == '\t')
			tok++;
		snprintf(d->ops, sizeof(d->ops), "%s", tok);
	}
	if (is_direct(d->mnem) && (d->ops[0] == '0' || isxdigit(d->ops[0]))) {
		t = strtoull(d->ops, &end, 16);
		if (end != d->ops && (!*end || *end == ' '))
			d->target = t;
	}
	return true;
}

/* Decode @len bytes of kernel text at @addr: how many, or -1. */
static int dis_range(uint64_t addr, size_t len, struct dis *out, int max)
{
	char tmpl[] = "/tmp/okcov-copy.XXXXXX", cmd[512], line[512];
	unsigned char *buf = malloc(len);
	int fd, n = 0;
	FILE *p;

	if (!buf || kcore_read(addr, buf, len)) {
		free(buf);
		return -1;
	}
	fd = mkstemp(tmpl);
	if (fd < 0 || write(fd, buf, len) != (ssize_t)len) {
		free(buf);
		return -1;
	}
	close(fd);
	free(buf);
	snprintf(cmd, sizeof(cmd),
		 "objdump -D -w -b binary -m i386:x86-64 --adjust-vma=0x%llx %s",
		 (unsigned long long)addr, tmpl);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p))
		if (n < max && dis_line(line, &out[n]))
			n++;
	if (p)
		pclose(p);
	unlink(tmpl);
	return n;
}

static const struct dis *dis_at(const struct dis *d, int n, uint64_t a)
{
	int i;

	for (i = 0; i < n; i++)
		if (d[i].addr == a)
			return &d[i];
	return NULL;
}

static char skip_reason[256];

FIXTURE(copy) {
	int tfd;
	struct okcov_target_deep t;
};

FIXTURE_SETUP(copy)
{
	self->tfd = -1;
	if (skip_reason[0])
		SKIP(return, "%s", skip_reason);
	ASSERT_EQ(0, ksyms_load());
	self->tfd = open(OKCOV_TARGET_PATH, O_RDWR);
	ASSERT_LE(0, self->tfd);
	ASSERT_EQ(0, st_ret(ioctl(self->tfd, OKCOV_TARGET_DEEP_LEADERS,
				  &self->t)));
}

FIXTURE_TEARDOWN(copy)
{
	if (self->tfd >= 0)
		close(self->tfd);
}

static bool tool_missing(void)
{
	return system("objdump --version >/dev/null 2>&1") ||
	       access("/proc/kcore", R_OK);
}

/*
 * Make the copy of the function at @fn (its original text read before and
 * after), and hold it against the original: the number of faults, each
 * logged, or -1 when the tools failed.
 */
/* What check_copy() held against the original, over all functions. */
static unsigned int checked_branches, checked_riprel, checked_records;

static int check_copy(struct __test_metadata *_metadata, uint64_t fn,
		      struct copy *c)
{
	static struct dis orig[MAX_INSNS], cp[MAX_INSNS];
	uint64_t region[8][2], record_fn, want, entry_end;
	unsigned char *before[8] = { 0 }, *after;
	int nr, r, no = 0, nc, i, j, faults = 0;
	const struct dis *o, *d, *t;
	size_t len;
	char b[160];

	nr = plan_regions(fn, region, 8);
	if (nr <= 0)
		return -1;
	for (r = 0; r < nr; r++) {
		len = region[r][1] - region[r][0];
		before[r] = malloc(len);
		if (kcore_read(region[r][0], before[r], len))
			return -1;
	}
	i = copy_get(fn, c);
	if (i) {
		TH_LOG("%s: no copy: %s", ksyms_format(fn, b, sizeof(b)),
		       strerror(i));
		return 1;
	}
	/* The original's text did not change. */
	for (r = 0; r < nr; r++) {
		len = region[r][1] - region[r][0];
		after = malloc(len);
		if (kcore_read(region[r][0], after, len))
			return -1;
		if (memcmp(before[r], after, len)) {
			TH_LOG("%s: text at 0x%llx changed", c->name,
			       (unsigned long long)region[r][0]);
			faults++;
		}
		free(after);
		free(before[r]);
		i = dis_range(region[r][0], len, orig + no, MAX_INSNS - no);
		if (i < 0)
			return -1;
		no += i;
	}
	nc = dis_range(c->start, c->size, cp, MAX_INSNS);
	if (nc <= 0)
		return -1;
	record_fn = ksyms_addr("okcov_copy_record", "okcov");
	if (!record_fn)
		return -1;
	entry_end = c->fentry ? c->fentry + 5 : c->fn_start + 1;
	for (i = 0; i < (int)c->n; i++) {
		o = dis_at(orig, no, c->oaddr[i]);
		d = dis_at(cp, nc, c->caddr[i]);
		if (!o || !d || d->len != c->len[i]) {
			TH_LOG("%s: %s: no instruction at 0x%llx in the copy",
			       c->name, ksyms_format(c->oaddr[i], b, sizeof(b)),
			       (unsigned long long)c->caddr[i]);
			faults++;
			continue;
		}
		if (c->oaddr[i] == c->fentry) {
			if (strncmp(d->mnem, "nop", 3)) {
				TH_LOG("%s: fentry site is %s in the copy",
				       c->name, d->mnem);
				faults++;
			}
			continue;
		}
		if (strcmp(o->mnem, d->mnem)) {
			TH_LOG("%s: %s: %s became %s", c->name,
			       ksyms_format(o->addr, b, sizeof(b)), o->mnem,
			       d->mnem);
			faults++;
		}
		if (o->target) {
			checked_branches++;
			want = o->target;
			j = copy_find(c, o->target);
			if (j >= 0 && !(o->target >= c->fn_start &&
					o->target < entry_end))
				want = c->record[j] ? c->record[j] : c->caddr[j];
			if (d->target != want) {
				TH_LOG("%s: %s %s: copy goes to 0x%llx, not 0x%llx",
				       c->name, ksyms_format(o->addr, b, sizeof(b)),
				       o->mnem, (unsigned long long)d->target,
				       (unsigned long long)want);
				faults++;
			}
		}
		checked_riprel += !!o->rip;
		if (o->rip != d->rip) {
			TH_LOG("%s: %s: RIP-relative 0x%llx became 0x%llx",
			       c->name, ksyms_format(o->addr, b, sizeof(b)),
			       (unsigned long long)o->rip,
			       (unsigned long long)d->rip);
			faults++;
		}
		if (!c->record[i])
			continue;
		/* push $leader; call okcov_copy_record; lea 8(%rsp),%rsp */
		checked_records++;
		t = dis_at(cp, nc, c->record[i]);
		if (!t || strncmp(t->mnem, "push", 4) ||
		    strtoull(t->ops + 1, NULL, 16) != c->oaddr[i]) {
			TH_LOG("%s: record of %s does not push it: %s %s",
			       c->name, ksyms_format(c->oaddr[i], b, sizeof(b)),
			       t ? t->mnem : "-", t ? t->ops : "");
			faults++;
		}
		t = dis_at(cp, nc, c->record[i] + 5);
		if (!t || strncmp(t->mnem, "call", 4) || t->target != record_fn) {
			TH_LOG("%s: record of %s calls no okcov_copy_record",
			       c->name, ksyms_format(c->oaddr[i], b, sizeof(b)));
			faults++;
		}
		t = dis_at(cp, nc, c->record[i] + 10);
		if (!t || strcmp(t->mnem, "lea") ||
		    strcmp(t->ops, "0x8(%rsp),%rsp") ||
		    c->record[i] + RECORD_LEN != c->caddr[i]) {
			TH_LOG("%s: record of %s does not pop its leader",
			       c->name, ksyms_format(c->oaddr[i], b, sizeof(b)));
			faults++;
		}
	}
	/* Every original instruction is in the copy. */
	if ((int)c->n != no) {
		TH_LOG("%s: %d instructions, %u in the copy", c->name, no, c->n);
		faults++;
	}
	return faults;
}

static const char *const path_fns[] = {
	"ksys_read", "ksys_write", "vfs_read", "vfs_write", "do_sys_openat2",
	"do_filp_open", "path_openat", "ksys_dup3", "__x64_sys_dup",
	"__fdget_pos", "vfs_fstatat", "do_dup2", "filp_close",
};

TEST_F_TIMEOUT(copy, layout, 600)
{
	unsigned int i, done = 0;
	uint64_t a, cold = 0;
	struct copy c;
	int faults;

	if (tool_missing())
		SKIP(return, "no objdump or /proc/kcore in the guest");
	/* A hook an earlier test left lingering goes now, not mid-read. */
	ASSERT_EQ(0, st_wait_hook(0, 30000));
	for (i = 0; i < ARRAY_SIZE(path_fns) + 3; i++) {
		if (i < ARRAY_SIZE(path_fns))
			a = ksyms_addr(path_fns[i], NULL);
		else if (i == ARRAY_SIZE(path_fns))
			a = ksyms_addr("okcov_target_deep", OKCOV_TARGET_NAME);
		else if (i == ARRAY_SIZE(path_fns) + 1)
			a = ksyms_addr("okcov_target_flags", OKCOV_TARGET_NAME);
		else
			a = cold = st_cold_function();
		if (!a)
			continue;
		faults = check_copy(_metadata, a, &c);
		ASSERT_LE(0, faults);
		EXPECT_EQ(0, faults);
		EXPECT_LT(0, c.n);
		/* The entry's fentry site, right at or past an endbr64. */
		if (c.fentry)
			EXPECT_TRUE(c.fentry == c.fn_start || c.fentry == c.fn_start + 4);
		TH_LOG("%s: %u instructions, %u records, %llu bytes at 0x%llx%s",
		       c.name, c.n, c.nrecords, (unsigned long long)c.size,
		       (unsigned long long)c.start,
		       i == ARRAY_SIZE(path_fns) + 2 ? " (with .cold)" : "");
		done++;
		copy_free(&c);
	}
	TH_LOG("%u functions: %u direct branches and calls, %u RIP-relative operands, %u records checked",
	       done, checked_branches, checked_riprel, checked_records);
	EXPECT_LT(8, done);
	EXPECT_LT(100, checked_branches);
	/*
	 * Some at least: the kcov kernel's (tinyconfig) code addresses
	 * globals absolutely, and these functions have 4 RIP-relative
	 * operands there, 10 and more on Debian's.
	 */
	EXPECT_LT(2, checked_riprel);
	EXPECT_LT(100, checked_records);
	if (!cold)
		TH_LOG("no copyable function with a .cold part found");
}

TEST_F(copy, again)
{
	struct copy c1, c2;
	uint64_t fn = ksyms_addr("okcov_target_deep", OKCOV_TARGET_NAME);

	if (_metadata->skip)
		return;
	ASSERT_NE(0, fn);
	ASSERT_EQ(0, copy_get(fn, &c1));
	ASSERT_EQ(0, copy_get(self->t.leaders[0], &c2));
	EXPECT_EQ(c1.start, c2.start);
	EXPECT_EQ(c1.pool_used, c2.pool_used);
	EXPECT_STREQ("okcov_target_deep", c1.name);
	EXPECT_EQ(fn, c1.fn_start);
	EXPECT_EQ(OKCOV_DEEP_NLEADERS, c1.nrecords);
	copy_free(&c1);
	copy_free(&c2);
}

static int call_copy(int tfd, int kfd, uint64_t fn, uint64_t arg, int64_t *ret)
{
	struct okcov_target_call call = {
		.fn = fn, .arg = arg, .okcov_fd = kfd,
	};
	int err = st_ioctl(tfd, OKCOV_TARGET_CALL_COPY, &call);

	*ret = call.ret;
	return err;
}

/* Records in [lo, hi) that are not in @ok (@n of them). */
static int stray(const struct st_cov *c, uint64_t lo, uint64_t hi,
		 const uint64_t *ok, int n)
{
	uint64_t i, pcs = st_pcs(c);
	int k, bad = 0;
	bool fine;

	for (i = 0; i < pcs; i++) {
		if (c->buf[i + 1] < lo || c->buf[i + 1] >= hi)
			continue;
		for (k = 0, fine = false; k < n && !fine; k++)
			fine = c->buf[i + 1] == ok[k];
		bad += !fine;
	}
	return bad;
}

static const char *const leader_name[] = { "else", "then", "join" };

struct bystander {
	int tfd, kfd;
	uint64_t fn;
	int64_t ret;
	int err;
};

static void *bystander_fn(void *p)
{
	struct bystander *b = p;

	b->err = call_copy(b->tfd, b->kfd, b->fn, 1, &b->ret);
	return NULL;
}

TEST_F(copy, run)
{
	struct st_cov cov = { .fd = -1, .buf = MAP_FAILED };
	struct bystander by;
	pthread_t th;
	struct copy c;
	uint64_t fn;
	int64_t ret;
	char b[160];
	int v, i;

	if (_metadata->skip)
		return;
	fn = ksyms_addr("okcov_target_deep", OKCOV_TARGET_NAME);
	ASSERT_NE(0, fn);
	ASSERT_EQ(0, copy_get(fn, &c));
	ASSERT_EQ(0, st_new(&cov, NENT));
	/* The hook calls okcov's memory only, with okcov held open. */
	EXPECT_EQ(EPERM, call_copy(self->tfd, cov.fd, fn, 1, &ret));
	EXPECT_EQ(EBADF, call_copy(self->tfd, -1, c.start, 1, &ret));

	for (v = 1; v >= 0; v--) {
		unsigned int want = v ? (1U << OKCOV_DEEP_THEN) |
					(1U << OKCOV_DEEP_JOIN) :
					(1U << OKCOV_DEEP_ELSE) |
					(1U << OKCOV_DEEP_JOIN);

		/* Not enabled: the original's result, nothing recorded. */
		ASSERT_EQ(0, call_copy(self->tfd, cov.fd, c.start, v, &ret));
		EXPECT_EQ(v ? 4 : 3, ret);
		EXPECT_EQ(ret, ioctl(self->tfd, OKCOV_TARGET_DEEP_RUN,
				     (unsigned long)v));

		ASSERT_EQ(0, st_enable(cov.fd, KCOV_MODE_TRACE_PC));
		st_reset(&cov);
		ASSERT_EQ(0, call_copy(self->tfd, cov.fd, c.start, v, &ret));
		ASSERT_EQ(0, st_disable(cov.fd));
		EXPECT_EQ(v ? 4 : 3, ret);
		for (i = 0; i < OKCOV_DEEP_NLEADERS; i++) {
			EXPECT_EQ(!!(want & (1U << i)),
				  st_recorded(&cov, self->t.leaders[i])) {
				TH_LOG("value %d: %s leader %s %s", v,
				       leader_name[i],
				       ksyms_format(self->t.leaders[i], b, sizeof(b)),
				       want & (1U << i) ? "missing" : "recorded");
			}
		}
		/* Nothing else of the function, nothing of the copy. */
		EXPECT_EQ(0, stray(&cov, c.fn_start, c.fn_end,
				   (const uint64_t *)self->t.leaders,
				   OKCOV_DEEP_NLEADERS));
		EXPECT_EQ(0, stray(&cov, c.start, c.start + c.size, NULL, 0));
	}

	/* A thread that is not enabled records nothing, gets the same. */
	ASSERT_EQ(0, st_enable(cov.fd, KCOV_MODE_TRACE_PC));
	st_reset(&cov);
	by = (struct bystander){ .tfd = self->tfd, .kfd = cov.fd, .fn = c.start };
	ASSERT_EQ(0, pthread_create(&th, NULL, bystander_fn, &by));
	ASSERT_EQ(0, pthread_join(th, NULL));
	ASSERT_EQ(0, st_disable(cov.fd));
	EXPECT_EQ(0, by.err);
	EXPECT_EQ(4, by.ret);
	for (i = 0; i < OKCOV_DEEP_NLEADERS; i++)
		EXPECT_FALSE(st_recorded(&cov, self->t.leaders[i]));
	st_free(&cov);
	copy_free(&c);
}

/* Flags live across the records: the same answers as the original. */
TEST_F(copy, flags)
{
	struct st_cov cov = { .fd = -1, .buf = MAP_FAILED };
	static const uint64_t vals[] = { 0, 1, 2 };
	unsigned int i, n;
	struct copy c;
	int64_t ret;
	long want;
	uint64_t fn;

	if (_metadata->skip)
		return;
	fn = ksyms_addr("okcov_target_flags", OKCOV_TARGET_NAME);
	ASSERT_NE(0, fn);
	ASSERT_EQ(0, copy_get(fn, &c));
	EXPECT_LE(2, c.nrecords);
	ASSERT_EQ(0, st_new(&cov, NENT));
	for (i = 0; i < ARRAY_SIZE(vals); i++) {
		want = ioctl(self->tfd, OKCOV_TARGET_FLAGS_RUN,
			     (unsigned long)vals[i]);
		EXPECT_EQ(vals[i] == 1 ? 0x11 : vals[i] ? 0x10 : 0x12, want);
		ASSERT_EQ(0, call_copy(self->tfd, cov.fd, c.start, vals[i], &ret));
		EXPECT_EQ(want, ret);
		ASSERT_EQ(0, st_enable(cov.fd, KCOV_MODE_TRACE_PC));
		st_reset(&cov);
		ASSERT_EQ(0, call_copy(self->tfd, cov.fd, c.start, vals[i], &ret));
		ASSERT_EQ(0, st_disable(cov.fd));
		EXPECT_EQ(want, ret) {
			TH_LOG("value %llu: 0x%llx through the copy, 0x%lx",
			       (unsigned long long)vals[i], (long long)ret, want);
		}
		/* Each leader recorded: the slow path ran between them. */
		for (n = 0; n < c.n; n++)
			if (c.record[n])
				EXPECT_TRUE(st_recorded(&cov, c.oaddr[n]));
	}
	st_free(&cov);
	copy_free(&c);
}

TEST_F(copy, refused)
{
	struct copy c;
	uint64_t own;
	char buf[64];
	int fd;

	if (_metadata->skip)
		return;
	own = ksyms_addr("okcov_enable", "okcov");
	ASSERT_NE(0, own);
	EXPECT_EQ(EACCES, copy_get(own, &c));
	copy_free(&c);
	EXPECT_EQ(ENXIO, copy_get(0x1000, &c));
	copy_free(&c);
	fd = open(ST_COPY_FILE, O_RDWR);
	ASSERT_LE(0, fd);
	EXPECT_EQ(ENODATA, st_ret(read(fd, buf, sizeof(buf))));
	EXPECT_EQ(EINVAL, st_ret(write(fd, "ksys_read", 9)));
	close(fd);
}

TEST_F(copy, unprivileged)
{
	pid_t pid;
	int status;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (setuid(65534))
			_exit(2);
		_exit(open(ST_COPY_FILE, O_RDWR) < 0 && errno == EACCES ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/*
 * A function that ends in a call of __stack_chk_fail (which never
 * returns) and int3 padding: nothing reaches that int3, so the copier
 * takes the function instead of refusing it (EBUSY) as it refuses an
 * int3 a patch or a kprobe left where code runs on.
 */
TEST_F_TIMEOUT(copy, noreturn, 300)
{
	unsigned int copied = 0, found = 0;
	uint64_t chk, a, len;
	unsigned char b[4096];
	struct copy c;
	size_t i, k;
	int32_t rel;
	int err;

	if (_metadata->skip)
		return;
	if (access("/proc/kcore", R_OK))
		SKIP(return, "no /proc/kcore to find such a function");
	chk = ksyms_addr("__stack_chk_fail", NULL);
	if (!chk)
		SKIP(return, "no __stack_chk_fail: no stack protector");
	for (i = 0; i < ksyms_count() && copied < 3 && found < 20; i++) {
		a = ksyms_get(i)->addr;
		len = ksyms_end(i, a + sizeof(b)) - a;
		if (ksyms_get(i)->mod || !st_kernel_text(a) || len < 6 ||
		    len > sizeof(b) || kcore_read(a, b, len))
			continue;
		for (k = len; k && b[k - 1] == 0xcc; k--)
			;
		if (k == len || k < 5 || b[k - 5] != 0xe8)
			continue;
		memcpy(&rel, b + k - 4, sizeof(rel));
		if (a + k + rel != chk)
			continue;
		found++;
		err = copy_get(a, &c);
		EXPECT_NE(EBUSY, err) {
			TH_LOG("%s: refused for its int3 padding",
			       ksyms_get(i)->name);
		}
		if (!err) {
			TH_LOG("%s: copied, %u instructions", c.name, c.n);
			copied++;
		}
		copy_free(&c);
	}
	if (!found)
		SKIP(return, "no function ends in __stack_chk_fail and int3s");
	EXPECT_LT(0, copied);
}

/* Last: copies until the pool is full. */
TEST_F_TIMEOUT(copy, full, 900)
{
	unsigned int n = 0, refused = 0, busy = 0, other = 0;
	char line[256], *name, a[32];
	uint64_t addr, last = 0;
	int fd, err = 0, len;
	FILE *f;

	if (_metadata->skip)
		return;
	f = fopen("/proc/kallsyms", "r");
	ASSERT_NE(NULL, f);
	fd = open(ST_COPY_FILE, O_RDWR);
	ASSERT_LE(0, fd);
	while (fgets(line, sizeof(line), f)) {
		name = strchr(line, ' ');
		if (!name || strchr(name, '[') || (name[1] != 't' && name[1] != 'T'))
			continue;
		addr = strtoull(line, NULL, 16);
		if (addr == last || !st_kernel_text(addr))
			continue;
		last = addr;
		len = snprintf(a, sizeof(a), "0x%llx\n", (unsigned long long)addr);
		if (write(fd, a, len) == len) {
			n++;
			continue;
		}
		err = errno;
		if (err == ENOSPC)
			break;
		switch (err) {
		case EOPNOTSUPP: case EFBIG: case E2BIG: case EACCES: case ENXIO:
		case EFAULT: case EILSEQ:
			refused++;	/* the planner's verdicts */
			break;
		case EBUSY: case EAGAIN:
			/* an int3 in it, or being patched */
			if (busy++ < 5) {
				name[strcspn(name, "\n")] = 0;
				TH_LOG("%s: %s", name + 3, strerror(err));
			}
			break;
		default:
			other++;
			name[strcspn(name, "\n")] = 0;
			TH_LOG("%s: %s", name + 3, strerror(err));
			break;
		}
	}
	close(fd);
	fclose(f);
	TH_LOG("%u copies until %s, %u refused by the planner, %u with an int3 in the code, %u other",
	       n, err == ENOSPC ? "the pool was full" : "the last function",
	       refused, busy, other);
	EXPECT_EQ(ENOSPC, err);
	EXPECT_EQ(0, other);
}

static void prepare(void)
{
	char why[200];

#ifndef __x86_64__
	snprintf(skip_reason, sizeof(skip_reason), "copies are x86_64's");
	return;
#endif
	if (access(ST_COPY_FILE, F_OK))
		snprintf(skip_reason, sizeof(skip_reason), "no %s", ST_COPY_FILE);
	else if (st_target_load(why, sizeof(why)))
		snprintf(skip_reason, sizeof(skip_reason), "%s", why);
}

OKCOV_HARNESS_MAIN(prepare);
