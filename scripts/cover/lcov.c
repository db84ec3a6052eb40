// SPDX-License-Identifier: GPL-2.0
/*
 * okcov-cover lcov: profiles to an lcov tracefile, through the debug info
 * of vmlinux and of the modules.
 *
 * Each pc line names SYMBOL+OFF, so a PC maps to its link-time address
 * through the ELF symbol of that name, whatever the KASLR offset or the
 * module's load address; a name the ELF file has several times (static
 * functions) is told apart by the offset the unique names give. A PC less
 * than one call instruction into its function is ftrace's entry site;
 * any other that follows a call instruction in the ELF file's code is a
 * return address (okcov's call sites, the sancov hooks of instrumented
 * modules, Linux's kcov), resolved at PC - 1: the call; one that does not
 * is a deep-mode block leader, resolved at PC: the block's first
 * instruction.
 */
#include "cover.h"

struct obj {			/* vmlinux or a module */
	char *mod;
	const char *path;	/* its ELF file, NULL: none given */
	struct elf_file elf;
	bool open;
	uint64_t missing;	/* records without a matching symbol */
};

struct func {			/* an ELF function something refers to */
	struct obj *o;
	const struct elf_sym *s;
	uint64_t entry_hits, call_max;
	struct srcloc loc;	/* of its entry */
};

struct site {			/* a call site (return address) or a leader */
	size_t f;		/* index in funcs */
	uint64_t off, hits;
	bool leader;		/* a deep block leader, not after a call */
	struct srcloc loc;	/* of off - 1, or off for a leader */
};

struct frow {
	char *file, *name;
	unsigned int line;
	uint64_t hits;
};

struct drow {
	char *file;
	unsigned int line;
	uint64_t hits;
};

static struct obj *objs;
static size_t nobjs;
static struct func *funcs;
static size_t nfuncs, capfuncs;
static struct site *sites;
static size_t nsites, capsites;

static struct obj *obj_get(const char *mod)
{
	for (size_t i = 0; i < nobjs; i++)
		if (!strcmp(objs[i].mod, mod))
			return &objs[i];
	objs = xrealloc(objs, (nobjs + 1) * sizeof(*objs));
	memset(&objs[nobjs], 0, sizeof(*objs));
	objs[nobjs].mod = xstrdup(mod);
	return &objs[nobjs++];
}

/* Module names as kallsyms has them: dashes are underscores. */
static char *mod_name(const char *path)
{
	const char *b = strrchr(path, '/');
	char *m = xstrdup(b ? b + 1 : path), *p;

	if (strstr(m, ".ko"))
		*strstr(m, ".ko") = '\0';
	for (p = m; *p; p++)
		if (*p == '-')
			*p = '_';
	return m;
}

/* A directory tree searched for NAME.ko (or .ko.xz is not read: say so). */
static char *find_ko(const char *dir, const char *mod, int depth)
{
	struct dirent *de;
	char path[4096], *found = NULL;
	DIR *d = opendir(dir);

	if (!d)
		return NULL;
	while (!found && (de = readdir(d))) {
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (stat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode) && depth < 8) {
			found = find_ko(path, mod, depth + 1);
		} else if (S_ISREG(st.st_mode) && strstr(de->d_name, ".ko") &&
			   !strcmp(strstr(de->d_name, ".ko"), ".ko")) {
			char *m = mod_name(de->d_name);

			if (!strcmp(m, mod))
				found = xstrdup(path);
			free(m);
		}
	}
	closedir(d);
	return found;
}

/* An index of (key, key2) -> position, for funcs and sites. */
struct hidx {
	struct hslot { uintptr_t k1; uint64_t k2; size_t v; } *slots;
	size_t cap, n;
};

static size_t hash2(uintptr_t k1, uint64_t k2)
{
	uint64_t h = (k1 ^ (k2 * 0x9e3779b97f4a7c15ULL)) * 0xff51afd7ed558ccdULL;

	return h ^ (h >> 29);
}

/* The position stored for (k1, k2), or else store `v` and return it. */
static size_t hidx_get(struct hidx *h, uintptr_t k1, uint64_t k2, size_t v)
{
	size_t i;

	if (2 * (h->n + 1) > h->cap) {
		struct hidx old = *h;

		h->cap = h->cap ? h->cap * 2 : 8192;
		h->slots = xrealloc(NULL, h->cap * sizeof(*h->slots));
		memset(h->slots, 0, h->cap * sizeof(*h->slots));
		h->n = 0;
		for (i = 0; i < old.cap; i++)
			if (old.slots[i].k1)
				hidx_get(h, old.slots[i].k1, old.slots[i].k2,
					 old.slots[i].v);
		free(old.slots);
	}
	for (i = hash2(k1, k2) & (h->cap - 1); h->slots[i].k1;
	     i = (i + 1) & (h->cap - 1))
		if (h->slots[i].k1 == k1 && h->slots[i].k2 == k2)
			return h->slots[i].v;
	h->slots[i].k1 = k1;
	h->slots[i].k2 = k2;
	h->slots[i].v = v;
	h->n++;
	return v;
}

static struct hidx func_idx, site_idx;

static size_t func_get(struct obj *o, const struct elf_sym *s)
{
	size_t i = hidx_get(&func_idx, (uintptr_t)s, 0, nfuncs);

	if (i < nfuncs)
		return i;
	if (nfuncs == capfuncs) {
		capfuncs = capfuncs ? capfuncs * 2 : 4096;
		funcs = xrealloc(funcs, capfuncs * sizeof(*funcs));
	}
	memset(&funcs[nfuncs], 0, sizeof(*funcs));
	funcs[nfuncs].o = o;
	funcs[nfuncs].s = s;
	return nfuncs++;
}

/*
 * The entry site: ftrace's call is the first instruction, or follows an
 * endbr64 (x86 IBT, +4) or arm64's bti/nops (at most +8). A return
 * address always lies past a whole call instruction (5 bytes on x86).
 */
static bool is_entry(const struct obj *o, uint64_t off)
{
	return o->elf.machine == 183 /* EM_AARCH64 */ ? off <= 8 : off < 5;
}

/*
 * Whether the instruction before @off into @s is a call: x86 call rel32
 * (a retpoline'd indirect call too), call *%reg, call *disp32(%rip);
 * arm64 bl, blr. A leader that happens to follow a call resolves as one.
 */
static bool after_call(const struct obj *o, const struct elf_sym *s,
		       uint64_t off)
{
	const unsigned char *p;
	uint32_t insn;

	if (o->elf.machine == 183 /* EM_AARCH64 */) {
		p = off >= 4 ? elf_text(&o->elf, s->shndx, s->value + off - 4, 4) :
		    NULL;
		if (!p)
			return true;
		memcpy(&insn, p, 4);
		return (insn >> 26) == 0x25 || (insn & 0xfffffc1f) == 0xd63f0000;
	}
	p = off >= 6 ? elf_text(&o->elf, s->shndx, s->value + off - 6, 6) : NULL;
	if (!p)
		return true;
	return p[1] == 0xe8 || (p[0] == 0xff && p[1] == 0x15) ||
	       (p[4] == 0xff && (p[5] & 0xf8) == 0xd0);
}

struct base {
	struct obj *o;
	unsigned int shndx;	/* 0 for vmlinux: one offset for all */
	uint64_t base;		/* runtime PC - link address */
};

/* One profile's records onto the functions and call sites. */
static void add_profile(struct profile *p, uint64_t *unresolved)
{
	struct base *bases = NULL;
	size_t nbases = 0, i, k, n, first;

	/* The load offsets, from the names the ELF file has once. */
	for (i = 0; i < p->npcs; i++) {
		struct ppc *r = &p->pcs[i];
		struct obj *o = obj_get(r->mod);
		const struct elf_sym *s;
		unsigned int sh;

		if (!o->open)
			continue;
		first = elf_lookup(&o->elf, r->sym, &n);
		if (n != 1)
			continue;
		s = &o->elf.syms[first];
		sh = o->elf.rel ? s->shndx : 0;
		for (k = 0; k < nbases; k++)
			if (bases[k].o == o && bases[k].shndx == sh)
				break;
		if (k < nbases)
			continue;
		bases = xrealloc(bases, (nbases + 1) * sizeof(*bases));
		bases[nbases].o = o;
		bases[nbases].shndx = sh;
		bases[nbases++].base = r->pc - (s->value + r->off);
	}
	for (i = 0; i < p->npcs; i++) {
		struct ppc *r = &p->pcs[i];
		struct obj *o = obj_get(r->mod);
		const struct elf_sym *s = NULL;
		size_t f;

		if (!o->open) {
			(*unresolved)++;
			continue;
		}
		first = elf_lookup(&o->elf, r->sym, &n);
		for (k = 0; k < n && !s; k++) {
			const struct elf_sym *c = &o->elf.syms[first + k];
			unsigned int sh = o->elf.rel ? c->shndx : 0;

			if (n == 1) {
				s = c;
				break;
			}
			for (size_t b = 0; b < nbases; b++)
				if (bases[b].o == o && bases[b].shndx == sh &&
				    r->pc - bases[b].base == c->value + r->off)
					s = c;
		}
		/*
		 * Not this kernel's or this module's build: leave it out. A
		 * return address may be the function's end: a call is its
		 * last instruction (of a noreturn function).
		 */
		if (!s || (s->size && r->off > s->size) ||
		    (s->size && r->off == s->size && is_entry(o, r->off))) {
			o->missing++;
			continue;
		}
		f = func_get(o, s);
		if (is_entry(o, r->off)) {
			funcs[f].entry_hits += r->hits;
			continue;
		}
		k = hidx_get(&site_idx, f + 1, r->off, nsites);
		if (k == nsites) {
			if (nsites == capsites) {
				capsites = capsites ? capsites * 2 : 4096;
				sites = xrealloc(sites, capsites * sizeof(*sites));
			}
			nsites++;
			memset(&sites[k], 0, sizeof(*sites));
			sites[k].f = f;
			sites[k].off = r->off;
			sites[k].leader = !after_call(o, s, r->off);
		}
		sites[k].hits += r->hits;
	}
	free(bases);
}

/*
 * The traced function set, as tracefs lists it (available_filter_functions
 * or enabled_functions): "NAME [MODULE]" or "NAME (1) R ...". Every such
 * function becomes a function at 0, unless a record reached it.
 */
static size_t add_function_list(const char *path)
{
	size_t linecap = 0, added = 0, first, n;
	char *line = NULL;
	FILE *f = fopen(path, "r");

	if (!f)
		die("%s: %s", path, strerror(errno));
	while (getline(&line, &linecap, f) > 0) {
		char *name = strtok(line, " \t\n"), *mod = strtok(NULL, " \t\n");
		struct obj *o;

		if (!name)
			continue;
		if (mod && mod[0] == '[')
			mod[strcspn(mod, "]")] = '\0', mod++;
		else
			mod = "vmlinux";
		o = obj_get(mod);
		if (!o->open)
			continue;
		first = elf_lookup(&o->elf, name, &n);
		for (size_t k = 0; k < n; k++, added++)
			func_get(o, &o->elf.syms[first + k]);
	}
	free(line);
	fclose(f);
	return added;
}

struct query {
	unsigned int shndx;
	uint64_t addr;
	struct srcloc *dst;
};

static int cmp_query(const void *a, const void *b)
{
	const struct query *x = a, *y = b;

	if (x->shndx != y->shndx)
		return x->shndx < y->shndx ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * Resolve every function entry and call site of o: one symbolizer run for
 * vmlinux, one per section for a module (its addresses are offsets).
 */
static void resolve(struct obj *o)
{
	struct query *q = NULL;
	size_t nq = 0, cap = 0, i, j, k, n;

	for (i = 0; i < nfuncs + nsites; i++) {
		struct func *f = &funcs[i < nfuncs ? i : sites[i - nfuncs].f];

		if (f->o != o)
			continue;
		if (nq == cap)
			q = xrealloc(q, (cap = cap * 2 + 4096) * sizeof(*q));
		q[nq].shndx = o->elf.rel ? f->s->shndx : 0;
		if (i < nfuncs) {
			q[nq].addr = f->s->value;
			q[nq].dst = &f->loc;
		} else {
			q[nq].addr = f->s->value + sites[i - nfuncs].off -
				     !sites[i - nfuncs].leader;
			q[nq].dst = &sites[i - nfuncs].loc;
		}
		nq++;
	}
	qsort(q, nq, sizeof(*q), cmp_query);
	for (i = 0; i < nq; i = j) {
		uint64_t *addrs;
		struct srcloc *locs;

		for (j = i; j < nq && q[j].shndx == q[i].shndx; j++)
			;
		addrs = xrealloc(NULL, (j - i) * sizeof(*addrs));
		for (k = i, n = 0; k < j; k++)
			if (!n || addrs[n - 1] != q[k].addr)
				addrs[n++] = q[k].addr;
		locs = xrealloc(NULL, n * sizeof(*locs));
		symbolize(&o->elf, o->elf.rel ?
			  elf_section_name(&o->elf, q[i].shndx) : NULL,
			  addrs, n, locs);
		for (k = i, n = 0; k < j; k++) {
			if (k > i && q[k].addr != q[k - 1].addr)
				n++;
			*q[k].dst = locs[n];	/* the strings are shared */
		}
		free(locs);
		free(addrs);
	}
	free(q);
}

/* ---- paths ---- */

static const char *const *strips;
static size_t nstrips;
static const char *srcdir;

/*
 * A DWARF path as a path in the kernel tree: Debian's build directory
 * (debian/build/build_ARCH_FEATURE_FLAVOUR/, three levels below the
 * tree) and each --strip prefix taken off, "." and ".." folded; a
 * relative result is relative to the source tree.
 */
static char *tree_path(const char *raw)
{
	const char *p = raw, *m = strstr(raw, "debian/build/build_");
	char *out = xrealloc(NULL, strlen(raw) + 2), *o = out;
	int climb = 0;

	if (m && (m == raw || m[-1] == '/') && strchr(m + 19, '/')) {
		p = strchr(m + 19, '/') + 1;
		climb = 3;
	}
	if (*p == '/')
		*o++ = '/';
	while (*p) {
		size_t n;

		p += strspn(p, "/");
		n = strcspn(p, "/");
		if (!n)
			break;
		if (n == 1 && p[0] == '.') {
			/* nothing */
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			char *up = o;

			while (up > out && up[-1] == '/' && up - 1 > out)
				up--;
			while (up > out && up[-1] != '/')
				up--;
			if (up < o && strncmp(up, "../", 3)) {
				o = up;
			} else if (climb > 0) {
				climb--;
			} else {
				memcpy(o, "../", 3);
				o += 3;
			}
		} else {
			memcpy(o, p, n);
			o += n;
			*o++ = '/';
		}
		p += n;
	}
	if (o > out + 1 && o[-1] == '/')
		o--;
	*o = '\0';
	for (size_t i = 0; i < nstrips; i++) {
		size_t n = strlen(strips[i]);

		while (n && strips[i][n - 1] == '/')
			n--;
		if (n && !strncmp(out, strips[i], n) && out[n] == '/') {
			memmove(out, out + n + 1, strlen(out + n + 1) + 1);
			break;
		}
	}
	if (srcdir && out[0] != '/') {
		char *full;

		if (asprintf(&full, "%s/%s", srcdir, out) < 0)
			die("out of memory");
		free(out);
		out = full;
	}
	return out;
}

/* The number of lines of a source file, 0 if it cannot be read. */
static unsigned int source_lines(const char *path)
{
	char buf[65536];
	unsigned int lines = 0;
	bool partial = false;
	size_t n;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		for (size_t i = 0; i < n; i++)
			lines += buf[i] == '\n';
		partial = buf[n - 1] != '\n';
	}
	fclose(f);
	return lines + partial;
}

/* ---- the tracefile ---- */

static int cmp_frow(const void *a, const void *b)
{
	const struct frow *x = a, *y = b;
	int r = strcmp(x->file, y->file);

	return r ? r : strcmp(x->name, y->name);
}

static int cmp_frow_line(const void *a, const void *b)
{
	const struct frow *x = a, *y = b;
	int r = strcmp(x->file, y->file);

	if (r)
		return r;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int cmp_drow(const void *a, const void *b)
{
	const struct drow *x = a, *y = b;
	int r = strcmp(x->file, y->file);

	if (r)
		return r;
	return x->line < y->line ? -1 : x->line > y->line;
}

struct rows {
	struct frow *f;
	size_t nf, capf;
	struct drow *d;
	size_t nd, capd;
};

static void add_frow(struct rows *t, char *file, char *name, unsigned int line,
		     uint64_t hits)
{
	if (t->nf == t->capf)
		t->f = xrealloc(t->f, (t->capf = t->capf * 2 + 4096) * sizeof(*t->f));
	t->f[t->nf++] = (struct frow){ file, name, line, hits };
}

static void add_drow(struct rows *t, char *file, unsigned int line,
		     uint64_t hits)
{
	if (t->nd == t->capd)
		t->d = xrealloc(t->d, (t->capd = t->capd * 2 + 4096) * sizeof(*t->d));
	t->d[t->nd++] = (struct drow){ file, line, hits };
}

/* ---- --onto: the functions placed in another kernel's tracefile ---- */

struct place {
	char *name, *file;
	unsigned int line;
};

static int cmp_place(const void *a, const void *b)
{
	const struct place *x = a, *y = b;

	return strcmp(x->name, y->name);
}

/* The FN lines of an lcov tracefile, by name. */
static struct place *load_places(const char *path, size_t *n)
{
	size_t linecap = 0, cap = 0;
	char *line = NULL, *file = NULL;
	struct place *p = NULL;
	FILE *f = fopen(path, "r");

	*n = 0;
	if (!f)
		die("%s: %s", path, strerror(errno));
	while (getline(&line, &linecap, f) > 0) {
		char *comma;

		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "SF:", 3)) {
			file = xstrdup(line + 3);
			continue;
		}
		comma = strchr(line, ',');
		if (!strncmp(line, "FN:", 3) && file && comma) {
			if (*n == cap)
				p = xrealloc(p, (cap = cap * 2 + 4096) * sizeof(*p));
			p[*n].name = xstrdup(comma + 1);
			p[*n].file = file;
			p[(*n)++].line = strtoul(line + 3, NULL, 10);
		}
	}
	free(line);
	fclose(f);
	qsort(p, *n, sizeof(*p), cmp_place);
	return p;
}

/* The tail of a path below the source tree, to match across trees. */
static const char *tree_tail(const char *file)
{
	size_t n = srcdir ? strlen(srcdir) : 0;

	return n && !strncmp(file, srcdir, n) && file[n] == '/' ? file + n + 1 : file;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);

	return a >= b && !strcmp(s + a - b, tail) && (a == b || s[a - b - 1] == '/');
}

/*
 * Put each function at the file and line the other tracefile gives its
 * name (of several, the one in the same file of the tree), with a DA
 * there; call sites have no counterpart in another tree and go. The
 * functions the other one lacks are written to `unmatched`.
 */
static void place_onto(struct rows *t, const char *path, const char *unmatched)
{
	size_t np, i, kept = 0, lost = 0;
	struct place *p = load_places(path, &np);
	struct hidx used;
	FILE *u = NULL;

	if (unmatched) {
		u = fopen(unmatched, "w");
		if (!u)
			die("%s: %s", unmatched, strerror(errno));
	}
	t->nd = 0;
	for (i = 0; i < t->nf; i++) {
		struct place key = { t->f[i].name, NULL, 0 }, *m, *best = NULL;

		m = bsearch(&key, p, np, sizeof(*p), cmp_place);
		while (m && m > p && !strcmp(m[-1].name, key.name))
			m--;
		for (; m && m < p + np && !strcmp(m->name, key.name); m++)
			if (!best || ends_with(m->file, tree_tail(t->f[i].file)))
				best = m;
		if (!best) {
			lost++;
			if (u)
				fprintf(u, "%s %s:%u %llu\n", t->f[i].name,
					tree_tail(t->f[i].file), t->f[i].line,
					(unsigned long long)t->f[i].hits);
			continue;
		}
		t->f[kept] = t->f[i];
		t->f[kept].file = best->file;
		t->f[kept].line = best->line;
		add_drow(t, best->file, best->line, t->f[kept].hits);
		kept++;
	}
	t->nf = kept;
	/*
	 * Every file of the other tracefile gets a record: genhtml 2.3 takes
	 * a file the baseline lacks for another one of the same name there.
	 * A record needs a DA, so it is line 1 at 0: the licence line, never
	 * code (genhtml counts it as deleted, DUB).
	 */
	memset(&used, 0, sizeof(used));
	for (i = 0; i < kept; i++)
		hidx_get(&used, (uintptr_t)t->f[i].file, 0, 1);
	for (i = 0; i < np; i++)
		if (!hidx_get(&used, (uintptr_t)p[i].file, 0, 0))
			add_drow(t, p[i].file, 1, 0);	/* merged later */
	free(used.slots);
	if (u && fclose(u))
		die("%s: write failed: %s", unmatched, strerror(errno));
	if (u)
		warnx_("--onto %s: %zu functions placed, %zu without a counterpart (listed in %s)",
		       path, kept, lost, unmatched);
	else
		warnx_("--onto %s: %zu functions placed, %zu without a counterpart",
		       path, kept, lost);
}

static void lcov_usage(FILE *f)
{
	fprintf(f,
"usage: okcov-cover lcov [-o FILE] [-V VMLINUX] [-M MODULE.ko]... [-D DIR]...\n"
"                        [-f FUNCTIONS] [-s SRCDIR] [-S PREFIX]... [-t NAME]\n"
"                        [--symbolizer auto|llvm|addr2line] PROFILE...\n"
"  -V, --vmlinux FILE    the kernel's ELF file with debug info\n"
"  -M, --module FILE     a module's .ko with debug info (repeatable)\n"
"  -D, --module-dir DIR  search DIR for the modules' .ko files (repeatable)\n"
"  -f, --functions FILE  the traced function set (tracefs enabled_functions):\n"
"                        each at 0 where not reached\n"
"  -s, --source DIR      the kernel source tree: paths under it, files it\n"
"                        lacks and lines past their end left out\n"
"  -S, --strip PREFIX    take PREFIX off the debug info's paths (repeatable)\n"
"  -t, --test-name NAME  the tracefile's TN: (default: none)\n"
"  -C, --cache DIR       keep what the symbolizer said in DIR, by build id\n"
"  -o, --output FILE     the tracefile (default: standard output)\n"
"  --onto TRACEFILE      only functions, each at the file and line another\n"
"                        kernel's tracefile gives its name (a baseline for\n"
"                        genhtml --baseline-file); --unmatched FILE lists\n"
"                        those it lacks\n");
}

int cmd_lcov(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "vmlinux", required_argument, NULL, 'V' },
		{ "module", required_argument, NULL, 'M' },
		{ "module-dir", required_argument, NULL, 'D' },
		{ "functions", required_argument, NULL, 'f' },
		{ "source", required_argument, NULL, 's' },
		{ "strip", required_argument, NULL, 'S' },
		{ "test-name", required_argument, NULL, 't' },
		{ "symbolizer", required_argument, NULL, 'y' },
		{ "onto", required_argument, NULL, 'O' },
		{ "cache", required_argument, NULL, 'C' },
		{ "unmatched", required_argument, NULL, 'u' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *output = "-", *vmlinux = NULL, *flist = NULL, *tname = "";
	const char *onto_path = NULL, *unmatched = NULL;
	const char **kos = NULL, **dirs = NULL, **strip = NULL;
	size_t nkos = 0, ndirs = 0, nstrip = 0, nprof, i, j;
	uint64_t unresolved = 0, noline = 0, dropped_files = 0, past_eof = 0;
	size_t files = 0, fnf = 0, fnh = 0, lf = 0, lh = 0;
	struct profile *profs;
	struct rows t = { 0 };
	const char *bid = NULL;
	FILE *out;
	int c;

	while ((c = getopt_long(argc, argv, "o:V:M:D:f:s:S:t:C:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'V':
			vmlinux = optarg;
			break;
		case 'M':
			kos = xrealloc(kos, (nkos + 1) * sizeof(*kos));
			kos[nkos++] = optarg;
			break;
		case 'D':
			dirs = xrealloc(dirs, (ndirs + 1) * sizeof(*dirs));
			dirs[ndirs++] = optarg;
			break;
		case 'f':
			flist = optarg;
			break;
		case 's':
			srcdir = optarg;
			break;
		case 'S':
			strip = xrealloc(strip, (nstrip + 1) * sizeof(*strip));
			strip[nstrip++] = optarg;
			break;
		case 't':
			tname = optarg;
			break;
		case 'y':
			if (strcmp(optarg, "auto") && strcmp(optarg, "llvm") &&
			    strcmp(optarg, "addr2line"))
				die("--symbolizer: auto, llvm or addr2line, not '%s'",
				    optarg);
			symbolizer_choice = optarg;
			break;
		case 'C':
			symbol_cache_dir = optarg;
			break;
		case 'O':
			onto_path = optarg;
			break;
		case 'u':
			unmatched = optarg;
			break;
		case 'h':
			lcov_usage(stdout);
			return 0;
		default:
			lcov_usage(stderr);
			return EXIT_TROUBLE;
		}
	}
	if (optind >= argc) {
		warnx_("lcov: no profile given");
		lcov_usage(stderr);
		return EXIT_TROUBLE;
	}
	strips = strip;
	nstrips = nstrip;
	nprof = argc - optind;
	profs = xrealloc(NULL, nprof * sizeof(*profs));
	for (i = 0; i < nprof; i++) {
		const char *id;

		load_profile(&profs[i], argv[optind + i]);
		id = profs[i].build_id;
		if (!id || !strcmp(id, "unknown"))
			continue;
		if (bid && strcmp(bid, id))
			die("%s: another kernel (build id %s) than %s (%s): one tracefile is one kernel's",
			    argv[optind + i], id, argv[optind], bid);
		bid = id;
	}

	/* The ELF files: vmlinux, the modules given, those found. */
	if (vmlinux) {
		struct obj *o = obj_get("vmlinux");

		elf_open(&o->elf, vmlinux);
		o->open = true;
		if (bid && o->elf.build_id[0] && strcmp(bid, o->elf.build_id))
			die("%s: build id %s, but the profile's kernel has %s: not its debug info",
			    vmlinux, o->elf.build_id, bid);
	}
	for (i = 0; i < nkos; i++) {
		char *m = mod_name(kos[i]);
		struct obj *o = obj_get(m);

		free(m);
		if (o->open)
			continue;
		elf_open(&o->elf, kos[i]);
		o->open = true;
	}
	for (i = 0; i < nprof; i++) {
		for (j = 0; j < profs[i].npcs; j++) {
			struct obj *o = obj_get(profs[i].pcs[j].mod);
			char *ko = NULL;

			if (o->open || o->path || !strcmp(o->mod, "vmlinux"))
				continue;
			for (size_t d = 0; d < ndirs && !ko; d++)
				ko = find_ko(dirs[d], o->mod, 0);
			o->path = ko ? ko : "";
			if (ko) {
				elf_open(&o->elf, ko);
				o->open = true;
			}
		}
	}

	for (i = 0; i < nprof; i++)
		add_profile(&profs[i], &unresolved);
	if (flist)
		add_function_list(flist);
	for (i = 0; i < nsites; i++)
		if (sites[i].hits > funcs[sites[i].f].call_max)
			funcs[sites[i].f].call_max = sites[i].hits;
	for (i = 0; i < nobjs; i++)
		if (objs[i].open)
			resolve(&objs[i]);

	/* Functions: FN at the declaration line, which also gets a DA. */
	for (i = 0; i < nfuncs; i++) {
		struct func *f = &funcs[i];
		char name[4096];
		uint64_t hits = f->entry_hits ? f->entry_hits : f->call_max;
		unsigned int line = f->loc.fn_line ? f->loc.fn_line : f->loc.line;
		char *file = f->loc.fn_file ? f->loc.fn_file : f->loc.file;

		if (!file || !line) {
			noline++;
			continue;
		}
		snprintf(name, sizeof(name), "%s", f->s->name);
		normalize_name(f->s->name, name);
		file = tree_path(file);
		add_frow(&t, file, xstrdup(name), line, hits);
		add_drow(&t, file, line, hits);
	}
	/*
	 * A call site at the line of its function's own source: of a call
	 * inlined from elsewhere (a header), the line of the inlined call,
	 * so that lcov finds every hit line inside a hit function.
	 */
	for (i = 0; i < nsites; i++) {
		struct site *s = &sites[i];
		char *file = s->loc.fn_file ? s->loc.fn_file : s->loc.file;
		unsigned int line = s->loc.fn_file ? s->loc.outer_line : s->loc.line;

		if (!file || !line) {
			noline++;
			continue;
		}
		add_drow(&t, tree_path(file), line, s->hits);
	}

	/* Merge: one FN per name and file, one DA per line. */
	if (onto_path)
		place_onto(&t, onto_path, unmatched);
	qsort(t.f, t.nf, sizeof(*t.f), cmp_frow);
	for (i = 0, j = 0; i < t.nf; i++) {
		if (j && !cmp_frow(&t.f[j - 1], &t.f[i])) {
			t.f[j - 1].hits += t.f[i].hits;
			if (t.f[i].line < t.f[j - 1].line)
				t.f[j - 1].line = t.f[i].line;
		} else {
			t.f[j++] = t.f[i];
		}
	}
	t.nf = j;
	qsort(t.f, t.nf, sizeof(*t.f), cmp_frow_line);
	qsort(t.d, t.nd, sizeof(*t.d), cmp_drow);
	for (i = 0, j = 0; i < t.nd; i++) {
		if (j && !cmp_drow(&t.d[j - 1], &t.d[i]))
			t.d[j - 1].hits += t.d[i].hits;
		else
			t.d[j++] = t.d[i];
	}
	t.nd = j;

	out = strcmp(output, "-") ? fopen(output, "w") : stdout;
	if (!out)
		die("%s: %s", output, strerror(errno));
	for (i = 0, j = 0; i < t.nd; ) {
		const char *file = t.d[i].file;
		unsigned int nlines = srcdir ? source_lines(file) : (unsigned int)-1;
		size_t d0 = i, fh = 0, ff = 0, dh = 0, df = 0;

		while (j < t.nf && strcmp(t.f[j].file, file) < 0)
			j++;
		while (i < t.nd && !strcmp(t.d[i].file, file))
			i++;
		if (!nlines) {		/* not in the source tree */
			dropped_files++;
			while (j < t.nf && !strcmp(t.f[j].file, file))
				j++;
			continue;
		}
		fprintf(out, "TN:%s\nSF:%s\n", tname, file);
		for (size_t k = j; k < t.nf && !strcmp(t.f[k].file, file); k++)
			if (t.f[k].line <= nlines)
				fprintf(out, "FN:%u,%s\n", t.f[k].line, t.f[k].name);
		for (; j < t.nf && !strcmp(t.f[j].file, file); j++) {
			if (t.f[j].line > nlines)
				continue;
			fprintf(out, "FNDA:%llu,%s\n",
				(unsigned long long)t.f[j].hits, t.f[j].name);
			ff++;
			fh += t.f[j].hits > 0;
		}
		fprintf(out, "FNF:%zu\nFNH:%zu\n", ff, fh);
		for (size_t k = d0; k < i; k++) {
			if (t.d[k].line > nlines) {
				past_eof++;
				continue;
			}
			fprintf(out, "DA:%u,%llu\n", t.d[k].line,
				(unsigned long long)t.d[k].hits);
			df++;
			dh += t.d[k].hits > 0;
		}
		fprintf(out, "LF:%zu\nLH:%zu\nend_of_record\n", df, dh);
		files++;
		fnf += ff;
		fnh += fh;
		lf += df;
		lh += dh;
	}
	if (fflush(out) || (out != stdout && fclose(out)))
		die("%s: write failed: %s", output, strerror(errno));

	for (i = 0; i < nobjs; i++) {
		if (objs[i].missing)
			warnx_("warning: %s: %llu records name a symbol its ELF file (%s) lacks or is smaller than: another build?",
			       objs[i].mod, (unsigned long long)objs[i].missing,
			       objs[i].elf.path);
		if (!objs[i].open)
			warnx_("warning: %s: no debug info given (%s): its records are left out",
			       objs[i].mod, !strcmp(objs[i].mod, "vmlinux") ?
			       "--vmlinux" : "--module or --module-dir");
	}
	fprintf(stderr,
		"okcov-cover lcov: %zu files, %zu of %zu functions, %zu of %zu lines; %llu PCs without debug info, %llu addresses without a line, %llu files outside the source tree, %llu lines past the end of their file\n",
		files, fnh, fnf, lh, lf, (unsigned long long)unresolved,
		(unsigned long long)noline, (unsigned long long)dropped_files,
		(unsigned long long)past_eof);
	return 0;
}
