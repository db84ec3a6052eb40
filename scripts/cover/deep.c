// SPDX-License-Identifier: GPL-2.0
/*
 * okcov-cover deep: the basic-block leaders of the functions named, from
 * the running kernel's own text, installed as okcov deep probes (KIODEEP).
 * okcov decodes the functions itself where it can (KIO_DEEP_FUNCTIONS,
 * x86_64); what it cannot, and --list, are decoded here:
 *
 * Bounds come from /proc/kallsyms (a function ends where the next text
 * symbol starts), bytes from /proc/kcore (the live text, with
 * alternatives, static calls and jump labels as patched), decoded by
 * binutils' objdump: the kernel exports no decoder to modules, and
 * kernel text holds every instruction set extension the crypto code
 * uses (VEX, EVEX), which objdump knows and a small decoder would not.
 * Leaders: every direct branch target inside the function (its .cold
 * parts included), and the instruction after each conditional branch.
 * Not leaders: the entry (ftrace records it), anything after a call (a
 * call does not end a block), the targets of indirect jumps (Debian's x86
 * kernels have no jump tables, -fno-jump-tables; a retpoline or return
 * thunk is a direct jump out of the function, so none of its targets is
 * inside; okcov's own decoding, plan.c, follows the jump tables of x86
 * kernels built without retpolines). A leader on endbr64 or a nop moves
 * to the next instruction; one on int3 padding or ud2 (a BUG()) is
 * dropped, and so is (x86) an edge's block: nothing but register
 * settings (mov of a constant or a register, xor of a register with
 * itself) then a jmp within the function or the next leader, the value
 * a compiler puts on one way into a join, which Linux's kcov has no
 * block for. okcov-cover(1) says more.
 */
#include "cover.h"

#include <elf.h>
#include <fnmatch.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>

#define MAX_FUNC_SIZE	(64UL << 10)	/* past the last symbol of a module */
/*
 * Leaders a KIODEEP call: as many as okcov takes at all (deep_max_probes'
 * ceiling), so that a function and its .cold part, which may lie far
 * apart in the sorted list, reach the copier in one call.
 */
#define DEEP_CHUNK	65536

struct insn {
	uint64_t addr;
	unsigned int len;
	char mnem[16];
	uint64_t target;	/* a direct branch's, else 0 */
	bool cond;		/* a conditional branch */
	bool sets;		/* sets a register only (is_setting()) */
};

struct region {
	uint64_t start, end;
};

struct addrs {
	uint64_t *a;
	size_t n, cap;
};

static void addrs_add(struct addrs *s, uint64_t v)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 256;
		s->a = xrealloc(s->a, s->cap * sizeof(*s->a));
	}
	s->a[s->n++] = v;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void addrs_sort_uniq(struct addrs *s)
{
	size_t i, k = 0;

	qsort(s->a, s->n, sizeof(*s->a), cmp_u64);
	for (i = 0; i < s->n; i++)
		if (!k || s->a[k - 1] != s->a[i])
			s->a[k++] = s->a[i];
	s->n = k;
}

/* ---- /proc/kcore ---- */

static int kcore = -1;
static Elf64_Phdr *phdrs;
static unsigned int nphdrs;

static void kcore_open(void)
{
	Elf64_Ehdr eh;

	if (kcore >= 0)
		return;
	kcore = open("/proc/kcore", O_RDONLY | O_CLOEXEC);
	if (kcore < 0)
		die("/proc/kcore: %s (root, and a kernel with CONFIG_PROC_KCORE)",
		    strerror(errno));
	if (pread(kcore, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr))
		die("/proc/kcore: not a 64-bit ELF core");
	nphdrs = eh.e_phnum;
	phdrs = xrealloc(NULL, nphdrs * sizeof(*phdrs));
	if (pread(kcore, phdrs, nphdrs * sizeof(*phdrs), eh.e_phoff) !=
	    (ssize_t)(nphdrs * sizeof(*phdrs)))
		die("/proc/kcore: cannot read its program headers");
}

/* Up to @len live bytes at kernel address @addr: how many, or 0. */
static size_t kcore_read(uint64_t addr, void *buf, size_t len)
{
	unsigned int i;
	ssize_t got;

	kcore_open();
	for (i = 0; i < nphdrs; i++) {
		const Elf64_Phdr *p = &phdrs[i];

		if (p->p_type != PT_LOAD || addr < p->p_vaddr ||
		    addr - p->p_vaddr >= p->p_filesz)
			continue;
		if (len > p->p_vaddr + p->p_filesz - addr)
			len = p->p_vaddr + p->p_filesz - addr;
		got = pread(kcore, buf, len, p->p_offset + (addr - p->p_vaddr));
		return got > 0 ? got : 0;
	}
	return 0;
}

/* ---- objdump ---- */

static const char *objdump_arch(void)
{
#if defined(__x86_64__)
	return "i386:x86-64";
#elif defined(__aarch64__)
	return "aarch64";
#else
#error "okcov-cover deep: x86_64 and arm64 only"
#endif
}

static bool is_prefix(const char *tok)
{
	static const char *const p[] = {
		"bnd", "notrack", "cs", "ds", "es", "ss", "fs", "gs", "data16",
		"addr32", "lock", "rep", "repz", "repnz", "repe", "repne",
		"rex", "rex.W", NULL,
	};

	for (unsigned int i = 0; p[i]; i++)
		if (!strcmp(tok, p[i]))
			return true;
	return !strncmp(tok, "rex.", 4);
}

/* Is @m a conditional (*@cond) or unconditional direct-branch mnemonic? */
static bool is_branch(const char *m, bool *cond)
{
#if defined(__aarch64__)
	*cond = !strncmp(m, "b.", 2) || !strcmp(m, "cbz") ||
		!strcmp(m, "cbnz") || !strcmp(m, "tbz") || !strcmp(m, "tbnz");
	return *cond || !strcmp(m, "b");
#else
	*cond = (m[0] == 'j' && strcmp(m, "jmp")) || !strncmp(m, "loop", 4);
	return m[0] == 'j' || !strncmp(m, "loop", 4);
#endif
}

#if defined(__x86_64__)
/* A 32- or 64-bit general register, as objdump spells it ("%rax"). */
static bool is_gpr(const char *r, size_t len)
{
	static const char *const regs[] = {
		"%rax", "%rbx", "%rcx", "%rdx", "%rsi", "%rdi", "%rbp", "%rsp",
		"%eax", "%ebx", "%ecx", "%edx", "%esi", "%edi", "%ebp", "%esp",
	};
	size_t i;

	if (len >= 3 && r[0] == '%' && r[1] == 'r' && r[2] >= '0' && r[2] <= '9')
		return (len == 3 || (len == 4 && r[3] >= '0' && r[3] <= '5') ||
			(len == 4 && r[3] == 'd') || (len == 5 && r[4] == 'd' &&
						       r[3] >= '0' && r[3] <= '5'));
	for (i = 0; i < ARRAY_SIZE(regs); i++)
		if (len == 4 && !strncmp(r, regs[i], 4))
			return true;
	return false;
}

/*
 * Does "@m @ops" only set a 32- or 64-bit register to a constant or to
 * another register's value (mov $imm or mov %reg to a register, xor of a
 * register with itself, no prefix)? plan.c's okcov_plan_sets().
 */
static bool is_setting(const char *m, const char *ops, bool prefixed)
{
	const char *comma = ops ? strchr(ops, ',') : NULL;
	size_t l1, l2;

	if (prefixed || !comma || strchr(comma + 1, ','))
		return false;
	l1 = comma - ops;
	l2 = strcspn(comma + 1, " \t\n");
	if (!is_gpr(comma + 1, l2))
		return false;
	if (!strcmp(m, "mov") || !strcmp(m, "movabs"))
		return ops[0] == '$' || is_gpr(ops, l1);
	return !strcmp(m, "xor") && l1 == l2 && !strncmp(ops, comma + 1, l1) &&
	       is_gpr(ops, l1);
}

#endif

/* One line of objdump -d: "addr:\tbytes\tmnemonic operands". */
static bool parse_line(char *line, struct insn *in)
{
	char *tab, *bytes, *text, *tok, *save, *last = NULL, *end;
	bool prefixed = false;
	uint64_t t;

	memset(in, 0, sizeof(*in));
	in->addr = strtoull(line, &tab, 16);
	if (tab == line || tab[0] != ':' || tab[1] != '\t')
		return false;
	bytes = tab + 2;
	text = strchr(bytes, '\t');
	if (!text)
		return false;
	*text++ = '\0';
	for (tok = strtok_r(bytes, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		in->len++;
	tok = strtok_r(text, " \t\n", &save);
	while (tok && is_prefix(tok)) {
		prefixed = true;
		tok = strtok_r(NULL, " \t\n", &save);
	}
	if (!tok || !in->len)
		return false;
	snprintf(in->mnem, sizeof(in->mnem), "%s", tok);
	if (!is_branch(in->mnem, &in->cond)) {
#if defined(__x86_64__)
		in->sets = is_setting(in->mnem,
				      save ? save + strspn(save, " \t") : NULL,
				      prefixed);
#else
		(void)prefixed;
#endif
		return true;
	}
	/* The target: the last operand, "0xffff..." (or "ffff..." <sym>). */
	for (tok = strtok_r(NULL, " \t\n,", &save); tok;
	     tok = strtok_r(NULL, " \t\n,", &save))
		if (tok[0] != '<')
			last = tok;
	if (!last || last[0] == '*' || last[0] == '%')
		return true;	/* indirect */
	t = strtoull(last, &end, 16);
	if (end != last && !*end)
		in->target = t;
	return true;
}

/* Decode [r->start, r->end) into @out (appended). */
static void decode(const struct region *r, struct insn **out, size_t *n,
		   size_t *cap)
{
	size_t len = r->end - r->start, got;
	char tmpl[] = "/tmp/okcov-deep.XXXXXX", cmd[512], *line = NULL;
	size_t linecap = 0;
	unsigned char *buf;
	struct insn in;
	FILE *p;
	int fd;

	buf = xrealloc(NULL, len);
	got = kcore_read(r->start, buf, len);
	if (got < len)
		die("/proc/kcore: cannot read 0x%llx..0x%llx",
		    (unsigned long long)r->start, (unsigned long long)r->end);
	fd = mkstemp(tmpl);
	if (fd < 0 || write(fd, buf, len) != (ssize_t)len)
		die("%s: %s", tmpl, strerror(errno));
	close(fd);
	free(buf);
	snprintf(cmd, sizeof(cmd),
		 "%s -D -b binary -m %s --adjust-vma=0x%llx --insn-width=16 %s",
		 getenv("OKCOV_OBJDUMP") ? getenv("OKCOV_OBJDUMP") : "objdump",
		 objdump_arch(), (unsigned long long)r->start, tmpl);
	p = popen(cmd, "r");
	if (!p)
		die("%s: %s", cmd, strerror(errno));
	while (getline(&line, &linecap, p) > 0) {
		if (!parse_line(line, &in))
			continue;
		if (*n == *cap) {
			*cap = *cap ? 2 * *cap : 1024;
			*out = xrealloc(*out, *cap * sizeof(**out));
		}
		(*out)[(*n)++] = in;
	}
	free(line);
	if (pclose(p))
		die("%s failed (is binutils installed?)", cmd);
	unlink(tmpl);
}

static bool in_regions(const struct region *r, size_t nr, uint64_t a)
{
	for (size_t i = 0; i < nr; i++)
		if (a >= r[i].start && a < r[i].end)
			return true;
	return false;
}

static int cmp_insn(const void *a, const void *b)
{
	const struct insn *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The instruction at @a among @in (sorted), or NULL. */
static const struct insn *insn_at(const struct insn *in, size_t n, uint64_t a)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (in[mid].addr == a)
			return &in[mid];
		if (in[mid].addr < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static bool is_filler(const char *m)
{
	return !strcmp(m, "endbr64") || !strncmp(m, "nop", 3) ||
	       !strcmp(m, "bti");
}

#if defined(__x86_64__)
/* Register settings an edge block may hold, at most (plan.c's). */
#define EDGE_SETS	4

/*
 * Is the block at leader @a an edge's (plan.c's okcov_plan_edge_block()):
 * nothing but register settings, then a jmp within the function or a
 * leader of @lead (@nl, sorted)?
 */
static bool edge_block(const struct insn *in, size_t n, const struct region *r,
		       size_t nr, uint64_t a, const uint64_t *lead, size_t nl)
{
	const struct insn *q = insn_at(in, n, a);
	unsigned int k;

	for (k = 0; q && k <= EDGE_SETS; k++) {
		if (!strcmp(q->mnem, "jmp") && q->target)
			return in_regions(r, nr, q->target);
		if (k && bsearch(&q->addr, lead, nl, sizeof(*lead), cmp_u64))
			return true;
		if (!q->sets)
			return false;
		q = insn_at(in, n, q->addr + q->len);
	}
	return false;
}

/* Drop the edge blocks among @out's leaders from @before on. */
static void drop_edge_blocks(const struct insn *in, size_t n,
			     const struct region *r, size_t nr,
			     struct addrs *out, size_t before)
{
	size_t i, nl = 0;
	uint64_t *lead = xrealloc(NULL, (out->n - before + 1) * sizeof(*lead));

	for (i = before; i < out->n; i++)
		if (out->a[i])
			lead[nl++] = out->a[i];
	qsort(lead, nl, sizeof(*lead), cmp_u64);
	for (i = before; i < out->n; i++)
		if (out->a[i] &&
		    edge_block(in, n, r, nr, out->a[i], lead, nl))
			out->a[i] = 0;
	free(lead);
}
#endif

/*
 * The leaders of the function at symbol @f (its .cold parts found among
 * the symbols by name) into @out.
 */
static size_t function_leaders(size_t f, struct addrs *out)
{
	const struct ksym *s = ksyms_get(f);
	struct region r[8];
	struct insn *in = NULL;
	size_t nr = 0, n = 0, cap = 0, i, before = out->n, len = strlen(s->name);
	uint64_t entry, a;
	const struct insn *p;

	r[nr].start = s->addr;
	r[nr++].end = ksyms_end(f, MAX_FUNC_SIZE);
	for (i = 0; i < ksyms_count() && nr < ARRAY_SIZE(r); i++) {
		const struct ksym *c = ksyms_get(i);

		if (!strncmp(c->name, s->name, len) &&
		    !strncmp(c->name + len, ".cold", 5) &&
		    (!c->name[len + 5] || c->name[len + 5] == '.') &&
		    !strcmp(sym_mod(c), sym_mod(s))) {
			r[nr].start = c->addr;
			r[nr++].end = ksyms_end(i, MAX_FUNC_SIZE);
		}
	}
	for (i = 0; i < nr; i++) {
		size_t was = n;

		decode(&r[i], &in, &n, &cap);
		if (getenv("OKCOV_DEEP_DEBUG"))
			fprintf(stderr, "%s: region 0x%llx..0x%llx: %zu insns\n",
				s->name, (unsigned long long)r[i].start,
				(unsigned long long)r[i].end, n - was);
	}
	qsort(in, n, sizeof(*in), cmp_insn);
	if (!n)
		return 0;
	/*
	 * Past an endbr64, or the 4-byte nop IBT seals an unused one into
	 * (the first instruction at the symbol: a .cold part may lie below).
	 */
	p = insn_at(in, n, s->addr);
	entry = s->addr + (p && (!strcmp(p->mnem, "endbr64") ||
				 (!strncmp(p->mnem, "nop", 3) && p->len == 4)) ?
			   p->len : 0);
	for (i = 0; i < n; i++) {
		if (in[i].target && in_regions(r, nr, in[i].target))
			addrs_add(out, in[i].target);
		if (in[i].cond && i + 1 < n)
			addrs_add(out, in[i].addr + in[i].len);
	}
	/* Move off fillers, drop what cannot or need not be probed. */
	for (i = before; i < out->n; i++) {
		a = out->a[i];
		while ((p = insn_at(in, n, a)) && is_filler(p->mnem))
			a += p->len;
		/* .cold parts may lie below the function: not its entry. */
		if (!p || (a >= s->addr && a <= entry) ||
		    !strcmp(p->mnem, "int3") ||
		    !strcmp(p->mnem, "ud2") || !strcmp(p->mnem, "(bad)"))
			a = 0;
		out->a[i] = a;
	}
#if defined(__x86_64__)
	drop_edge_blocks(in, n, r, nr, out, before);
#endif
	free(in);
	return out->n - before;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Every text function a glob of @globs names (not .cold parts): its
 * symbol. Plain names (a profile's list: a thousand of them) are looked
 * up in a sorted copy; only real globs go through fnmatch() for each of
 * the kernel's symbols.
 */
static size_t find_functions(char **globs, size_t nglobs, size_t **fns)
{
	char **names = xrealloc(NULL, (nglobs + 1) * sizeof(*names));
	char **pats = xrealloc(NULL, (nglobs + 1) * sizeof(*pats));
	size_t i, g, n = 0, nnames = 0, npats = 0;
	uint64_t last = 0;

	for (g = 0; g < nglobs; g++) {
		if (strpbrk(globs[g], "*?[\\"))
			pats[npats++] = globs[g];
		else
			names[nnames++] = globs[g];
	}
	qsort(names, nnames, sizeof(*names), cmp_str);
	*fns = NULL;
	for (i = 0; i < ksyms_count(); i++) {
		const struct ksym *s = ksyms_get(i);
		const char *name = s->name;

		if (s->addr == last || strstr(name, ".cold"))
			continue;
		if (!bsearch(&name, names, nnames, sizeof(*names), cmp_str)) {
			for (g = 0; g < npats; g++)
				if (!fnmatch(pats[g], name, 0))
					break;
			if (g == npats)
				continue;
		}
		last = s->addr;
		*fns = xrealloc(*fns, (n + 1) * sizeof(**fns));
		(*fns)[n++] = i;
	}
	free(names);
	free(pats);
	return n;
}

/* The leaders of the functions at symbols @fns (@n), by objdump. */
static void find_leaders(const size_t *fns, size_t n, struct addrs *out)
{
	size_t i, k;

	for (i = 0; i < n; i++)
		function_leaders(fns[i], out);
	for (i = k = 0; i < out->n; i++)
		if (out->a[i])
			out->a[k++] = out->a[i];
	out->n = k;
	addrs_sort_uniq(out);
}

/*
 * x86 optimises each new kprobe into a jump from a worker that holds
 * kprobes' mutex across an RCU-tasks grace period, so installing probes
 * one after another waits for it again and again. With more than
 * OPT_PAUSE_MIN leaders, optimisation is paused (the sysctl) while they
 * go in and resumed after: kprobes then optimises them all in batches.
 */
#define OPT_SYSCTL	"/proc/sys/debug/kprobes-optimization"
#define OPT_PAUSE_MIN	64

static sig_atomic_t opt_paused;	/* read by opt_resume_signal() too */
static const int opt_signals[] = { SIGINT, SIGTERM, SIGHUP };
static struct sigaction opt_old[ARRAY_SIZE(opt_signals)];

static int opt_write(const char *v)
{
	int fd = open(OPT_SYSCTL, O_WRONLY | O_CLOEXEC), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, v, 1) == 1;
	close(fd);
	return ok ? 0 : -1;
}

/* Optimisation back on, and the signals' handlers as they were. */
static void opt_resume(void)
{
	size_t i;

	if (!opt_paused)
		return;
	if (!opt_write("1"))
		opt_paused = 0;
	for (i = 0; i < ARRAY_SIZE(opt_signals); i++)
		sigaction(opt_signals[i], &opt_old[i], NULL);
}

static void opt_resume_signal(int sig)
{
	opt_resume();
	raise(sig);
}

static void opt_pause(size_t n)
{
	struct sigaction sa = { .sa_handler = opt_resume_signal };
	char v = 0;
	size_t i;
	int fd;

	if (n <= OPT_PAUSE_MIN)
		return;
	fd = open(OPT_SYSCTL, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (read(fd, &v, 1) != 1)
		v = 0;
	close(fd);
	if (v != '1')
		return;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < ARRAY_SIZE(opt_signals); i++)
		sigaction(opt_signals[i], &sa, &opt_old[i]);
	if (!opt_write("0"))
		opt_paused = 1;
	else
		for (i = 0; i < ARRAY_SIZE(opt_signals); i++)
			sigaction(opt_signals[i], &opt_old[i], NULL);
}

/* CLOCK_MONOTONIC, in seconds. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* What an install did, for its one line on stderr. */
struct deep_stats {
	size_t okcov_fns;	/* functions okcov decoded */
	size_t objdump_fns;	/* functions objdump decoded */
	size_t leaders;		/* objdump's leaders */
	double objdump_s;	/* objdump's time */
	unsigned int installed;	/* leaders added */
};

/* --refused FILE: the functions okcov refused, a line each: NAME ERRNO. */
static FILE *refused_out;

/* Per errno, what okcov refused. */
struct tally {
	unsigned int n[160], refused;
};

static void tally_add(struct tally *t, const int32_t *errs, size_t n)
{
	size_t j;

	for (j = 0; j < n; j++) {
		if (!errs[j])
			continue;
		t->refused++;
		if (-errs[j] > 0 && -errs[j] < (int)ARRAY_SIZE(t->n))
			t->n[-errs[j]]++;
	}
}

static void tally_print(const struct tally *t, const char *what)
{
	size_t i;

	if (!t->refused)
		return;
	fprintf(stderr, "%s: deep: %u %s refused:", prog, t->refused, what);
	for (i = 0; i < ARRAY_SIZE(t->n); i++)
		if (t->n[i])
			fprintf(stderr, " %s %u", strerror(i), t->n[i]);
	fputc('\n', stderr);
}

/*
 * KIODEEP of @a (@n addresses, with @flags) on @fd, in calls as large as
 * okcov takes; each address's errno in @errs, the leaders added in
 * *@installed. 0, or the errno of a call that failed.
 */
static int deep_calls(int fd, const uint64_t *a, size_t n, uint32_t flags,
		      int32_t *errs, unsigned int *installed)
{
	struct kio_deep d;
	size_t i, k;

	for (i = 0; i < n; i += k) {
		k = n - i < DEEP_CHUNK ? n - i : DEEP_CHUNK;
		memset(&d, 0, sizeof(d));
		d.addrs = (uintptr_t)(a + i);
		d.errors = (uintptr_t)(errs + i);
		d.count = k;
		d.flags = flags;
		if (ioctl(fd, KIODEEP, &d))
			return errno;
		*installed += d.installed;
	}
	return 0;
}

static void deep_die(int e)
{
	opt_resume();
	die("KIODEEP: %s%s", strerror(e),
	    e == ENOTTY ? " (okcov without deep probes?)" :
	    e == ENOSPC ? " (see deep_max_probes)" : "");
}

/* A function okcov cannot decode, or decode all of (its plan's verdicts). */
static bool undecoded(int32_t err)
{
	return err == -EILSEQ || err == -EOPNOTSUPP || err == -EFBIG ||
	       err == -E2BIG;
}

/*
 * Install the leaders of the functions at symbols @fns (@nfn) through a
 * new descriptor of @dev (kept open: the probes go when it closes): its
 * fd. okcov decodes the functions itself (KIO_DEEP_FUNCTIONS) where it
 * can; objdump decodes the ones it cannot (or all, where okcov has no
 * decoder or predates the flag). Tallies what okcov refused on stderr.
 */
static int install(const char *dev, const size_t *fns, size_t nfn,
		   struct deep_stats *st)
{
	struct addrs f = { NULL, 0, 0 }, l = { NULL, 0, 0 };
	struct tally tf = { { 0 }, 0 }, tl = { { 0 }, 0 };
	int32_t *errs = xrealloc(NULL, nfn * sizeof(*errs));
	size_t *left = xrealloc(NULL, nfn * sizeof(*left));
	size_t i, k = 0;
	double t0;
	int fd, e;

	fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die("%s: %s", dev, strerror(errno));
	for (i = 0; i < nfn; i++)
		addrs_add(&f, ksyms_get(fns[i])->addr);
	opt_pause(OPT_PAUSE_MIN + nfn);
	e = deep_calls(fd, f.a, nfn, KIO_DEEP_FUNCTIONS | KIO_DEEP_PARTIAL,
		       errs, &st->installed);
	if (e == EINVAL || e == EOPNOTSUPP) {
		/* No decoder in okcov (arm64), or an okcov before the flag. */
		for (i = 0; i < nfn; i++)
			errs[i] = -EILSEQ;
	} else if (e) {
		deep_die(e);
	}
	for (i = 0; i < nfn; i++) {
		if (undecoded(errs[i]))
			left[k++] = fns[i];
		else
			tally_add(&tf, errs + i, 1);
		if (refused_out && errs[i] && !undecoded(errs[i]))
			fprintf(refused_out, "%s %s\n", ksyms_get(fns[i])->name,
				strerror(-errs[i]));
	}
	if (refused_out && fflush(refused_out))
		die("--refused: %s", strerror(errno));
	st->okcov_fns = nfn - k;
	st->objdump_fns = k;
	if (k) {
		t0 = now_s();
		find_leaders(left, k, &l);
		st->objdump_s = now_s() - t0;
		st->leaders = l.n;
		errs = xrealloc(errs, (l.n ? l.n : 1) * sizeof(*errs));
		e = deep_calls(fd, l.a, l.n, KIO_DEEP_PARTIAL, errs,
			       &st->installed);
		if (e)
			deep_die(e);
		tally_add(&tl, errs, l.n);
	}
	opt_resume();
	tally_print(&tf, "functions");
	tally_print(&tl, "leaders");
	free(left);
	free(errs);
	free(f.a);
	free(l.a);
	return fd;
}

/* The globs of a names file, one a line, into @g. */
static void read_names(const char *path, char ***g, size_t *n)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *f = fopen(path, "r");

	if (!f)
		die("%s: %s", path, strerror(errno));
	while ((len = getline(&line, &cap, f)) > 0) {
		line[strcspn(line, " \t\n#")] = '\0';
		if (!*line)
			continue;
		*g = xrealloc(*g, (*n + 1) * sizeof(**g));
		(*g)[(*n)++] = xstrdup(line);
	}
	free(line);
	fclose(f);
}

/* The install's line on stderr. */
static void deep_report(size_t nfn, const struct deep_stats *st, double s)
{
	fprintf(stderr, "%s: deep: %zu functions, %zu leaders, %u probes installed",
		prog, nfn, st->okcov_fns ? (size_t)st->installed : st->leaders,
		st->installed);
	if (s > 0)
		fprintf(stderr, " in %.1f s", s);
	fprintf(stderr, " (okcov decoded %zu functions, objdump %zu",
		st->okcov_fns, st->objdump_fns);
	if (st->objdump_fns)
		fprintf(stderr, " in %.1f s", st->objdump_s);
	fprintf(stderr, ")\n");
}

/*
 * For run --deep: install the leaders of @globs (symbols loaded); the
 * descriptor that holds them, or -1 if there were none.
 */
int deep_install(const char *dev, char **globs, size_t nglobs)
{
	struct deep_stats st = { 0 };
	size_t nfn, *fns;
	int fd;

	nfn = find_functions(globs, nglobs, &fns);
	if (!nfn)
		die("deep: no function matches");
	fd = install(dev, fns, nfn, &st);
	deep_report(nfn, &st, 0);
	free(fns);
	return fd;
}

static void deep_usage(FILE *f)
{
	fprintf(f,
"usage: okcov-cover deep [--list] [-f FILE] [-d DEVICE] [-k KALLSYMS]\n"
"                        [--refused FILE] FUNC... [-- CMD [ARG]...]\n");
}

int cmd_deep(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "list", no_argument, NULL, 'l' },
		{ "file", required_argument, NULL, 'f' },
		{ "device", required_argument, NULL, 'd' },
		{ "kallsyms", required_argument, NULL, 'k' },
		{ "refused", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dev = OKCOV_PATH, *kallsyms = "/proc/kallsyms";
	char **globs = NULL, **cmd = NULL, *last_arg = NULL;
	size_t nglobs = 0, i, nfn, *fns;
	struct addrs l = { NULL, 0, 0 };
	struct deep_stats st = { 0 };
	bool list = false;
	int c, fd, status;
	double t0;
	pid_t pid;

	while ((c = getopt_long(argc, argv, "+lf:d:k:h", opts, NULL)) != -1) {
		last_arg = optarg;
		switch (c) {
		case 'l':
			list = true;
			break;
		case 'f':
			read_names(optarg, &globs, &nglobs);
			break;
		case 'd':
			dev = optarg;
			break;
		case 'k':
			kallsyms = optarg;
			break;
		case 'R':
			refused_out = fopen(optarg, "w");
			if (!refused_out)
				die("%s: %s", optarg, strerror(errno));
			break;
		case 'h':
			deep_usage(stdout);
			return 0;
		default:
			deep_usage(stderr);
			return EXIT_TROUBLE;
		}
	}
	/*
	 * getopt ate a "--" that came first (deep -f FILE -- CMD): no
	 * function named on the line, the rest is the command.
	 */
	if (optind > 1 && !strcmp(argv[optind - 1], "--") &&
	    argv[optind - 1] != last_arg)
		cmd = argv + optind;
	for (; !cmd && optind < argc; optind++) {
		if (!strcmp(argv[optind], "--")) {
			cmd = argv + optind + 1;
			break;
		}
		globs = xrealloc(globs, (nglobs + 1) * sizeof(*globs));
		globs[nglobs++] = argv[optind];
	}
	if (!nglobs) {
		warnx_("deep: no function named");
		deep_usage(stderr);
		return EXIT_TROUBLE;
	}
	if (cmd && !*cmd)
		die("deep: no command after --");
	load_kallsyms_or_die(kallsyms);
	nfn = find_functions(globs, nglobs, &fns);
	if (!nfn)
		die("deep: no function matches");
	if (list) {
		find_leaders(fns, nfn, &l);
		for (i = 0; i < l.n; i++) {
			const struct ksym *s = ksyms_lookup(l.a[i], NULL);

			printf("0x%llx %s+0x%llx\n", (unsigned long long)l.a[i],
			       s ? s->name : "?",
			       s ? (unsigned long long)(l.a[i] - s->addr) : 0ULL);
		}
		return 0;
	}
	t0 = now_s();
	fd = install(dev, fns, nfn, &st);
	deep_report(nfn, &st, now_s() - t0);
	free(fns);
	if (!cmd) {
		sigset_t set;
		int sig;

		sigemptyset(&set);
		sigaddset(&set, SIGINT);
		sigaddset(&set, SIGTERM);
		sigprocmask(SIG_BLOCK, &set, NULL);
		fprintf(stderr, "%s: deep: holding them until interrupted\n", prog);
		sigwait(&set, &sig);
		close(fd);
		return 0;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (!pid) {
		execvp(cmd[0], cmd);
		warnx_("%s: %s", cmd[0], strerror(errno));
		_exit(errno == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC);
	}
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid: %s", strerror(errno));
	close(fd);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
