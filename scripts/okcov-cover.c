// SPDX-License-Identifier: GPL-2.0
/*
 * okcov-cover: record the kernel coverage of a command into a profile, and
 * compare two profiles (for example the same program on two kernels, or
 * under okcov and under Linux's own kcov).
 *
 *   okcov-cover run [-m pc|cmp] [--remote] [-n ENTRIES] [-o FILE]
 *                   [--device PATH] -- CMD [ARG]...
 *   okcov-cover import [-m pc|cmp] [--kallsyms FILE] [-o FILE] [RAW]
 *   okcov-cover diff [--module M] [--match GLOB] [--ignore-counts] A B
 *
 * The profile format is documented in okcov-cover(1) (scripts/man/).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "okcov.h"

#ifndef KIOREMOTEATTACH
/* SPEC 2b; defined here until uapi/okcov.h carries it. */
struct kio_remote_attach {
	int subsystem;
	int id;
};
#define KIOREMOTEATTACH		_IOW('K', 4, struct kio_remote_attach)
#define KCOV_REMOTE_COMMON	0
#endif

/* Linux's own kcov (include/uapi/linux/kcov.h). */
#define LKCOV_INIT_TRACE	_IOR('c', 1, unsigned long)
#define LKCOV_ENABLE		_IO('c', 100)
#define LKCOV_DISABLE		_IO('c', 101)
#define LKCOV_TRACE_PC		0
#define LKCOV_TRACE_CMP		1
/* Linux's kcov records PCs minus the KASLR offset; x86_64 links _text here. */
#define X86_64_START_KERNEL	0xffffffff81000000ULL

#ifndef ENOTSUPP
#define ENOTSUPP		524	/* the kernel's, for KCOV_ENABLE cmp */
#endif

#define PROFILE_MAGIC		"okcov-cover profile v1"
#define DEFAULT_ENTRIES		(512UL << 10)
#define LKCOV_DEFAULT_ENTRIES	(2UL << 20)
#define MAX_SYM_OFFSET		(1UL << 20)

/* Exit statuses of okcov-cover itself (run returns CMD's otherwise). */
#define EXIT_TROUBLE		2
#define EXIT_NOEXEC		126
#define EXIT_NOTFOUND		127

#define __printf(a, b)	__attribute__((format(printf, a, b)))
#define __noreturn	__attribute__((noreturn))

static const char *prog = "okcov-cover";

static void __printf(1, 2) warnx_(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

#define die(...)	do { warnx_(__VA_ARGS__); exit(EXIT_TROUBLE); } while (0)

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory");
	return p;
}

static char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		die("out of memory");
	return p;
}

/* ---------------------------------------------------------------------- */
/* Names: strip the compiler's clone suffixes.                            */

/*
 * GCC and clang clone or split a function under a new local symbol:
 * foo.constprop.0, foo.isra.0, foo.part.0, foo.cold, foo.cold.12,
 * foo.llvm.1234567, foo.lto_priv.0, foo.localalias, foo.specialized.1.
 * The same function must match across kernels, so the profile keys on
 * "foo". A name with any other dotted part is left as it is.
 */
static const char *const clone_suffixes[] = {
	"constprop", "isra", "part", "cold", "llvm", "lto_priv",
	"localalias", "specialized", "clone", NULL,
};

static bool is_clone_suffix(const char *s, size_t n)
{
	const char *const *p;

	for (p = clone_suffixes; *p; p++)
		if (strlen(*p) == n && !strncmp(*p, s, n))
			return true;
	return false;
}

static bool all_alnum(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]))
			return false;
	return n > 0;
}

/* Writes the normalized form of name into out (at least strlen + 1). */
static void normalize_name(const char *name, char *out)
{
	const char *dot = strchr(name, '.'), *p;
	bool prev_suffix = false;

	strcpy(out, name);
	if (!dot || dot == name)
		return;
	/* every dotted part is a clone suffix or the number/hash after one */
	for (p = dot + 1;; ) {
		const char *e = strchr(p, '.');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (is_clone_suffix(p, n))
			prev_suffix = true;
		else if (!(prev_suffix && all_alnum(p, n)))
			return;
		if (!e)
			break;
		p = e + 1;
	}
	out[dot - name] = '\0';
}

/* ---------------------------------------------------------------------- */
/* kallsyms                                                               */

struct sym {
	uint64_t addr;
	char *name;		/* as in kallsyms */
	char *mod;		/* "vmlinux" for the core kernel */
};

static struct sym *syms;
static size_t nsyms;

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Padding and CFI preambles sit before the function they belong to. */
static bool is_preamble(const char *name)
{
	return !strncmp(name, "__pfx_", 6) || !strncmp(name, "__cfi_", 6);
}

/* Returns the number of text symbols with a non-zero address. */
static size_t load_kallsyms(const char *path)
{
	size_t cap = 0, nonzero = 0, linecap = 0;
	char *line = NULL;
	ssize_t len;
	FILE *f;

	for (size_t i = 0; i < nsyms; i++) {
		free(syms[i].name);
		free(syms[i].mod);
	}
	nsyms = 0;
	f = fopen(path, "r");
	if (!f)
		die("%s: %s", path, strerror(errno));
	while ((len = getline(&line, &linecap, f)) > 0) {
		char *end, *name, *mod;
		uint64_t addr;

		if (line[len - 1] == '\n')
			line[--len] = '\0';
		addr = strtoull(line, &end, 16);
		if (end == line || end[0] != ' ' || !strchr("tTwW", end[1]) ||
		    !end[1] || end[2] != ' ')
			continue;
		name = end + 3;
		mod = strchr(name, '\t');
		if (!mod)
			mod = strchr(name, ' ');
		if (mod) {
			*mod++ = '\0';
			mod += strspn(mod, " \t[");
			mod[strcspn(mod, "] \t")] = '\0';
		}
		if (!*name || is_preamble(name))
			continue;
		if (nsyms == cap) {
			cap = cap ? cap * 2 : 65536;
			syms = xrealloc(syms, cap * sizeof(*syms));
		}
		syms[nsyms].addr = addr;
		syms[nsyms].name = xstrdup(name);
		syms[nsyms].mod = xstrdup(mod && *mod ? mod : "vmlinux");
		nonzero += addr != 0;
		nsyms++;
	}
	free(line);
	fclose(f);
	qsort(syms, nsyms, sizeof(*syms), cmp_sym);
	return nonzero;
}

static void load_kallsyms_or_die(const char *path)
{
	FILE *f;

	if (load_kallsyms(path) || strcmp(path, "/proc/kallsyms"))
		goto check;
	/* kptr_restrict hides the addresses: root may lower it to 1. */
	f = fopen("/proc/sys/kernel/kptr_restrict", "w");
	if (f) {
		fputs("1\n", f);
		fclose(f);
		load_kallsyms(path);
	}
check:
	if (!nsyms)
		die("%s: no text symbols", path);
	if (!syms[nsyms - 1].addr)
		die("%s: addresses are hidden; run as root with kernel.kptr_restrict <= 1",
		    path);
}

/*
 * The function holding pc: the greatest symbol address at or below it; of
 * several aliases at that address the first by name, so that the choice is
 * the same on every kernel.
 */
static const struct sym *lookup(uint64_t pc)
{
	size_t lo = 0, hi = nsyms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (syms[mid].addr <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || pc - syms[lo - 1].addr > MAX_SYM_OFFSET)
		return NULL;
	lo--;
	while (lo > 0 && syms[lo - 1].addr == syms[lo].addr)
		lo--;
	return &syms[lo];
}

static uint64_t sym_addr(const char *name)
{
	for (size_t i = 0; i < nsyms; i++)
		if (!strcmp(syms[i].name, name) && !strcmp(syms[i].mod, "vmlinux"))
			return syms[i].addr;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Coverage records -> functions                                          */

struct rec {			/* one distinct (context, PC) */
	uint64_t pc;
	uint64_t hits;
	uint64_t cmps_const;	/* cmp mode */
	unsigned int sizes;	/* cmp mode: bit n = operand of 1 << n bytes */
	bool remote;
};

struct fn {
	char *name;		/* normalized */
	const char *mod;
	uint64_t hits, pcs, consts;
	unsigned int sizes;
	bool remote;
};

static int cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->remote != y->remote)
		return x->remote - y->remote;
	if (x->pc != y->pc)
		return x->pc < y->pc ? -1 : 1;
	return 0;
}

static int cmp_fn(const void *a, const void *b)
{
	const struct fn *x = a, *y = b;
	int r;

	if (x->remote != y->remote)
		return x->remote - y->remote;
	r = strcmp(x->mod, y->mod);
	return r ? r : strcmp(x->name, y->name);
}

struct cover {
	struct rec *recs;
	size_t nrecs, cap;
	bool cmp;
};

static void cover_add(struct cover *c, uint64_t pc, uint64_t type, bool remote)
{
	struct rec *r;

	if (c->nrecs == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 4096;
		c->recs = xrealloc(c->recs, c->cap * sizeof(*c->recs));
	}
	r = &c->recs[c->nrecs++];
	r->pc = pc;
	r->hits = 1;
	r->remote = remote;
	r->sizes = c->cmp ? 1u << ((type & KCOV_CMP_MASK) >> 1) : 0;
	r->cmps_const = c->cmp && (type & KCOV_CMP_CONST);
}

/* Sort and merge equal (context, PC) records. */
static void cover_merge(struct cover *c)
{
	size_t i, n = 0;

	qsort(c->recs, c->nrecs, sizeof(*c->recs), cmp_rec);
	for (i = 0; i < c->nrecs; i++) {
		if (n && !cmp_rec(&c->recs[n - 1], &c->recs[i])) {
			c->recs[n - 1].hits += c->recs[i].hits;
			c->recs[n - 1].sizes |= c->recs[i].sizes;
			c->recs[n - 1].cmps_const += c->recs[i].cmps_const;
		} else {
			c->recs[n++] = c->recs[i];
		}
	}
	c->nrecs = n;
}

static void sizes_str(unsigned int sizes, char *buf)
{
	char *p = buf;

	*p = '\0';
	for (int i = 0; i < 4; i++)
		if (sizes & (1u << i))
			p += sprintf(p, "%s%d", p == buf ? "" : ",", 1 << i);
	if (p == buf)
		strcpy(buf, "-");
}

/* Header lines "# key: value", in order. */
struct header {
	char **lines;
	size_t n;
};

static void __printf(3, 4)
hdr_add(struct header *h, const char *key, const char *fmt, ...)
{
	char *val, *line, *p;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&val, fmt, ap);
	va_end(ap);
	if (r < 0)
		die("out of memory");
	for (p = val; *p; p++)		/* one line per key */
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	while (p > val && p[-1] == ' ')
		*--p = '\0';
	if (asprintf(&line, "# %s: %s", key, val) < 0)
		die("out of memory");
	free(val);
	h->lines = xrealloc(h->lines, (h->n + 1) * sizeof(*h->lines));
	h->lines[h->n++] = line;
}

/*
 * Write the profile: header, one "fn" line per function, one "pc" line per
 * distinct PC ("rfn"/"rpc" for remote coverage), then the "end" line that
 * tells a complete file from a truncated one.
 */
static int write_profile(FILE *out, struct header *h, struct cover *c,
			 uint64_t pc_bias)
{
	struct fn *fns = NULL;
	size_t nfns = 0, i, j, npc[2] = { 0, 0 }, nfn[2] = { 0, 0 };
	char sizes[16];

	fprintf(out, "%s\n", PROFILE_MAGIC);
	for (i = 0; i < h->n; i++)
		fprintf(out, "%s\n", h->lines[i]);
	fprintf(out, "# fields: %s\n", c->cmp ?
		"fn NAME MODULE CMPS PCS SIZES CONSTS | pc PC SYMBOL+OFF MODULE CMPS SIZES CONSTS" :
		"fn NAME MODULE HITS PCS | pc PC SYMBOL+OFF MODULE HITS");

	fns = xrealloc(NULL, c->nrecs * sizeof(*fns));
	for (i = 0; i < c->nrecs; i++) {
		const struct sym *s = lookup(c->recs[i].pc + pc_bias);
		struct fn *f = &fns[nfns++];

		if (s) {
			f->name = xrealloc(NULL, strlen(s->name) + 1);
			normalize_name(s->name, f->name);
			f->mod = s->mod;
		} else {
			f->name = xstrdup("[unknown]");
			f->mod = "unknown";
		}
		f->hits = c->recs[i].hits;
		f->pcs = 1;
		f->sizes = c->recs[i].sizes;
		f->consts = c->recs[i].cmps_const;
		f->remote = c->recs[i].remote;
	}
	qsort(fns, nfns, sizeof(*fns), cmp_fn);
	for (i = 0; i < nfns; i = j) {
		struct fn f = fns[i];

		for (j = i + 1; j < nfns && !cmp_fn(&fns[i], &fns[j]); j++) {
			f.hits += fns[j].hits;
			f.pcs++;
			f.sizes |= fns[j].sizes;
			f.consts += fns[j].consts;
		}
		nfn[f.remote]++;
		fprintf(out, "%s %s %s %llu %llu", f.remote ? "rfn" : "fn",
			f.name, f.mod, (unsigned long long)f.hits,
			(unsigned long long)f.pcs);
		if (c->cmp) {
			sizes_str(f.sizes, sizes);
			fprintf(out, " %s %llu", sizes,
				(unsigned long long)f.consts);
		}
		fputc('\n', out);
	}
	for (i = 0; i < nfns; i++)
		free(fns[i].name);
	free(fns);

	for (i = 0; i < c->nrecs; i++) {
		struct rec *r = &c->recs[i];
		const struct sym *s = lookup(r->pc + pc_bias);

		npc[r->remote]++;
		fprintf(out, "%s %016llx ", r->remote ? "rpc" : "pc",
			(unsigned long long)r->pc);
		if (s)
			fprintf(out, "%s+0x%llx %s", s->name,
				(unsigned long long)(r->pc + pc_bias - s->addr),
				s->mod);
		else
			fprintf(out, "[unknown] unknown");
		fprintf(out, " %llu", (unsigned long long)r->hits);
		if (c->cmp) {
			sizes_str(r->sizes, sizes);
			fprintf(out, " %s %llu", sizes,
				(unsigned long long)r->cmps_const);
		}
		fputc('\n', out);
	}
	fprintf(out, "end fn %zu pc %zu rfn %zu rpc %zu\n",
		nfn[0], npc[0], nfn[1], npc[1]);
	return fflush(out) ? -errno : 0;
}

/* ---------------------------------------------------------------------- */
/* Where a profile came from                                              */

static char *read_line(const char *path)
{
	char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return xstrdup(buf);
}

/* A whole (small) file as a string, or NULL. */
static char *read_file(const char *path)
{
	size_t len = 0, cap = 0, n;
	char *buf = NULL;
	FILE *f = fopen(path, "r");

	if (!f)
		return NULL;
	do {
		if (cap - len < 4096)
			buf = xrealloc(buf, cap = cap + 65536);
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
	} while (n > 0);
	fclose(f);
	buf[len] = '\0';
	return buf;
}

/* The GNU build id note of vmlinux, from /sys/kernel/notes. */
static bool kernel_build_id(char *hex, size_t len)
{
	unsigned char buf[4096];
	size_t n, off = 0;
	FILE *f = fopen("/sys/kernel/notes", "rb");

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	while (off + 12 <= n) {
		uint32_t namesz, descsz, type;
		size_t name_off = off + 12, desc_off;

		memcpy(&namesz, buf + off, 4);
		memcpy(&descsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		desc_off = name_off + ((namesz + 3) & ~3u);
		if (desc_off + descsz > n)
			break;
		if (type == 3 && namesz == 4 && !memcmp(buf + name_off, "GNU", 4) &&
		    descsz * 2 < len) {
			for (uint32_t i = 0; i < descsz; i++)
				sprintf(hex + 2 * i, "%02x", buf[desc_off + i]);
			return true;
		}
		off = desc_off + ((descsz + 3) & ~3u);
	}
	return false;
}

static void shell_quote(const char *s, char **out, size_t *len, size_t *cap)
{
	bool plain = *s != '\0';
	const char *p;

	for (p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("@%_-+=:,./", *p))
			plain = false;
	if (*cap < *len + 4 * strlen(s) + 4) {
		*cap = *len + 4 * strlen(s) + 64;
		*out = xrealloc(*out, *cap);
	}
	if (plain) {
		*len += sprintf(*out + *len, "%s", s);
		return;
	}
	(*out)[(*len)++] = '\'';
	for (p = s; *p; p++) {
		if (*p == '\'')
			*len += sprintf(*out + *len, "'\\''");
		else
			(*out)[(*len)++] = *p;
	}
	(*out)[(*len)++] = '\'';
	(*out)[*len] = '\0';
}

static char *command_line(char **argv)
{
	size_t len = 0, cap = 0;
	char *out = NULL;

	for (; *argv; argv++) {
		if (len) {
			out = xrealloc(out, cap = cap + 1);
			out[len++] = ' ';
			out[len] = '\0';
		}
		shell_quote(*argv, &out, &len, &cap);
	}
	return out ? out : xstrdup("");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* okcov's version and every module parameter (the function set in use). */
static void okcov_module_header(struct header *h)
{
	const char *dir = "/sys/module/okcov/parameters";
	char path[512], *v, **names = NULL;
	size_t n = 0, i;
	struct dirent *de;
	DIR *d;

	v = read_line("/sys/module/okcov/version");
	if (v)
		hdr_add(h, "okcov.version", "%s", v);
	free(v);
	v = read_line("/sys/module/okcov/srcversion");
	hdr_add(h, "okcov.srcversion", "%s", v ? v : "unknown");
	free(v);
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		names = xrealloc(names, (n + 1) * sizeof(*names));
		names[n++] = xstrdup(de->d_name);
	}
	if (d)
		closedir(d);
	qsort(names, n, sizeof(*names), cmp_str);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		v = read_line(path);
		if (v) {
			snprintf(path, sizeof(path), "okcov.param.%s", names[i]);
			hdr_add(h, path, "%s", *v ? v : "(none)");
		}
		free(v);
		free(names[i]);
	}
	free(names);
}

static void system_header(struct header *h)
{
	struct utsname u;
	char id[128], *v;

	if (!uname(&u)) {
		hdr_add(h, "kernel.release", "%s", u.release);
		hdr_add(h, "kernel.machine", "%s", u.machine);
	}
	v = read_line("/proc/version");
	if (v)
		hdr_add(h, "kernel.version", "%s", v);
	free(v);
	hdr_add(h, "kernel.build_id", "%s",
		kernel_build_id(id, sizeof(id)) ? id : "unknown");
}

/* ---------------------------------------------------------------------- */
/* run                                                                    */

enum abi { ABI_OKCOV, ABI_LINUX_KCOV };

struct buffer {
	int fd;
	uint64_t *words;
	size_t n;
};

static uint64_t parse_count(const char *s, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || (*end && strcmp(end, "K") && strcmp(end, "M")) ||
	    *s == '-')
		die("%s: not a count: '%s'", what, s);
	if (*end == 'K')
		v <<= 10;
	else if (*end == 'M')
		v <<= 20;
	return v;
}

static uint64_t okcov_max_entries(void)
{
	char *v = read_line("/sys/module/okcov/parameters/max_entries");
	uint64_t n = v ? strtoull(v, NULL, 10) : 0;

	free(v);
	return n;
}

static void buffer_open(struct buffer *b, const char *dev, enum abi abi,
			size_t n)
{
	size_t bytes;
	uint64_t n64 = n;

	b->n = n;
	b->fd = open(dev, O_RDWR | O_CLOEXEC);
	if (b->fd < 0) {
		if (errno == ENOENT && abi == ABI_OKCOV)
			die("%s: %s (is okcov loaded? insmod okcov.ko)", dev,
			    strerror(errno));
		if (errno == ENOENT)
			die("%s: %s (needs CONFIG_KCOV and debugfs mounted)",
			    dev, strerror(errno));
		die("%s: %s%s", dev, strerror(errno),
		    errno == EACCES ? " (run as root)" : "");
	}
	if (abi == ABI_OKCOV) {
		if (ioctl(b->fd, KIOSETBUFSIZE, &n64)) {
			uint64_t max = okcov_max_entries();

			if (errno == EINVAL && max)
				die("KIOSETBUFSIZE %zu: %s; the largest is %llu (okcov's max_entries parameter)",
				    n, strerror(errno), (unsigned long long)max);
			die("KIOSETBUFSIZE %zu: %s", n, strerror(errno));
		}
	} else if (ioctl(b->fd, LKCOV_INIT_TRACE, (unsigned long)n)) {
		die("KCOV_INIT_TRACE %zu: %s", n, strerror(errno));
	}
	bytes = n * sizeof(uint64_t);
	b->words = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
			b->fd, 0);
	if (b->words == MAP_FAILED)
		die("mmap of %zu bytes of %s: %s", bytes, dev, strerror(errno));
}

/* The child tells the parent why it could not run CMD: stage and errno. */
struct child_err {
	int stage;
	int err;
};

enum { ST_ENABLE = 1, ST_REMOTE_ATTACH, ST_REMOTE_ENABLE, ST_EXEC };

static void __noreturn child(int errfd, enum abi abi, int mode,
			     struct buffer *t, struct buffer *r, char **argv)
{
	struct child_err ce = { 0, 0 };
	int okmode = mode ? KCOV_MODE_TRACE_CMP : KCOV_MODE_TRACE_PC;

	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	if (r->fd >= 0) {
		struct kio_remote_attach ra = { KCOV_REMOTE_COMMON, 0 };

		/* The process that runs CMD owns the remote descriptor. */
		if (ioctl(r->fd, KIOREMOTEATTACH, &ra)) {
			ce.stage = ST_REMOTE_ATTACH;
			goto fail;
		}
		if (ioctl(r->fd, KIOENABLE, &okmode)) {
			ce.stage = ST_REMOTE_ENABLE;
			goto fail;
		}
	}
	if (abi == ABI_OKCOV ? ioctl(t->fd, KIOENABLE, &okmode) :
	    ioctl(t->fd, LKCOV_ENABLE,
		  (unsigned long)(mode ? LKCOV_TRACE_CMP : LKCOV_TRACE_PC))) {
		ce.stage = ST_ENABLE;
		goto fail;
	}
	/* Start from the exec: the setup above is not CMD's. */
	__atomic_store_n(&t->words[0], 0, __ATOMIC_RELAXED);
	if (r->fd >= 0)
		__atomic_store_n(&r->words[0], 0, __ATOMIC_RELAXED);
	execvp(argv[0], argv);
	ce.stage = ST_EXEC;
fail:
	ce.err = errno;
	if (write(errfd, &ce, sizeof(ce)) != sizeof(ce))
		_exit(EXIT_TROUBLE);
	_exit(ce.stage != ST_EXEC ? EXIT_TROUBLE :
	      ce.err == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC);
}

/* Read count records of `words` words each; returns how many there were. */
static uint64_t collect(struct cover *c, struct buffer *b, bool remote,
			bool *full)
{
	size_t per = c->cmp ? 4 : 1, cap = (b->n - 1) / per;
	uint64_t n = __atomic_load_n(&b->words[0], __ATOMIC_RELAXED), i;

	*full = n >= cap;
	if (n > cap)
		n = cap;
	for (i = 0; i < n; i++) {
		uint64_t *w = &b->words[1 + i * per];

		if (c->cmp)
			cover_add(c, w[3], w[0], remote);
		else
			cover_add(c, w[0], 0, remote);
	}
	return n;
}

static void run_usage(FILE *f)
{
	fprintf(f,
"usage: okcov-cover run [-m pc|cmp] [--remote] [-n ENTRIES] [-o FILE]\n"
"                       [--device PATH] -- CMD [ARG]...\n"
"  -m, --mode pc|cmp   record function entries (pc, default) or comparisons\n"
"  -r, --remote        also record the work CMD defers (KIOREMOTEATTACH)\n"
"  -n, --entries N     buffer size in 8-byte entries (K and M suffixes)\n"
"  -o, --output FILE   write the profile to FILE (default okcov.profile; - is stdout)\n"
"  -d, --device PATH   /dev/okcov (default), /dev/kcov, or Linux's own\n"
"                      /sys/kernel/debug/kcov\n"
"  -k, --kallsyms FILE symbolize with FILE instead of /proc/kallsyms\n");
}

static int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "remote", no_argument, NULL, 'r' },
		{ "entries", required_argument, NULL, 'n' },
		{ "output", required_argument, NULL, 'o' },
		{ "device", required_argument, NULL, 'd' },
		{ "kallsyms", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dev = OKCOV_PATH, *output = "okcov.profile";
	const char *kallsyms = "/proc/kallsyms";
	struct buffer t = { -1, NULL, 0 }, r = { -1, NULL, 0 };
	struct cover cov = { NULL, 0, 0, false };
	struct header h = { NULL, 0 };
	uint64_t entries = 0, nt, nr = 0, bias = 0;
	bool remote = false, tfull, rfull = false;
	struct child_err ce;
	int c, mode = 0, pipefd[2], status, rc;
	struct stat st;
	char *cmdline, *mods_before, *mods_after;
	enum abi abi;
	FILE *out;
	pid_t pid;

	while ((c = getopt_long(argc, argv, "+m:rn:o:d:k:h", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (!strcmp(optarg, "pc"))
				mode = 0;
			else if (!strcmp(optarg, "cmp"))
				mode = 1;
			else
				die("-m: mode is pc or cmp, not '%s'", optarg);
			break;
		case 'r':
			remote = true;
			break;
		case 'n':
			entries = parse_count(optarg, "-n");
			break;
		case 'o':
			output = optarg;
			break;
		case 'd':
			dev = optarg;
			break;
		case 'k':
			kallsyms = optarg;
			break;
		case 'h':
			run_usage(stdout);
			return 0;
		default:
			run_usage(stderr);
			return EXIT_TROUBLE;
		}
	}
	if (optind >= argc) {
		warnx_("run: no command given");
		run_usage(stderr);
		return EXIT_TROUBLE;
	}
	argv += optind;
	cov.cmp = mode;

	/* okcov is a character device; Linux's kcov is a debugfs file. */
	if (stat(dev, &st))
		die("%s: %s%s", dev, strerror(errno),
		    !strcmp(dev, OKCOV_PATH) ? " (is okcov loaded? insmod okcov.ko)" :
		    strstr(dev, "debug/kcov") ?
		    " (needs CONFIG_KCOV and debugfs mounted on /sys/kernel/debug)" : "");
	abi = S_ISCHR(st.st_mode) ? ABI_OKCOV : ABI_LINUX_KCOV;
	if (remote && abi != ABI_OKCOV)
		die("--remote needs okcov (Linux's kcov has only annotated remote sections)");
	if (!entries) {
		entries = abi == ABI_OKCOV ? DEFAULT_ENTRIES : LKCOV_DEFAULT_ENTRIES;
		if (abi == ABI_OKCOV && okcov_max_entries() &&
		    okcov_max_entries() < entries)
			entries = okcov_max_entries();
	}
	if (entries < (mode ? 5 : 2))
		die("-n %llu: too small for one record", (unsigned long long)entries);

	/* Symbols first: a kernel that hides them fails before CMD runs. */
	load_kallsyms_or_die(kallsyms);
	mods_before = read_file("/proc/modules");

	buffer_open(&t, dev, abi, entries);
	if (remote)
		buffer_open(&r, dev, abi, entries);
	if (pipe2(pipefd, O_CLOEXEC))
		die("pipe: %s", strerror(errno));

	/* Like time(1): the terminal's signals are CMD's to handle. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		close(pipefd[0]);
		child(pipefd[1], abi, mode, &t, &r, argv);
	}
	close(pipefd[1]);
	rc = read(pipefd[0], &ce, sizeof(ce));
	close(pipefd[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	if (rc == sizeof(ce)) {
		switch (ce.stage) {
		case ST_REMOTE_ATTACH:
			if (ce.err == ENOTTY)
				die("remote coverage not supported by this okcov (KIOREMOTEATTACH: %s)",
				    strerror(ce.err));
			die("KIOREMOTEATTACH: %s", strerror(ce.err));
		case ST_REMOTE_ENABLE:
			die("KIOENABLE on the remote descriptor: %s",
			    strerror(ce.err));
		case ST_ENABLE:
			if (abi == ABI_OKCOV && mode && ce.err == EINVAL)
				die("KIOENABLE cmp: %s (this okcov has no comparison mode)",
				    strerror(ce.err));
			die("%s: %s%s", abi == ABI_OKCOV ? "KIOENABLE" : "KCOV_ENABLE",
			    strerror(ce.err), abi == ABI_LINUX_KCOV && mode && ce.err == ENOTSUPP ?
			    " (kernel lacks CONFIG_KCOV_ENABLE_COMPARISONS)" : "");
		default:
			warnx_("%s: %s", argv[0], strerror(ce.err));
			return ce.err == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC;
		}
	}

	/* Waits for remote sections in flight; EBUSY if already READY. */
	if (remote)
		(void)!ioctl(r.fd, KIODISABLE);
	nt = collect(&cov, &t, false, &tfull);
	if (remote)
		nr = collect(&cov, &r, true, &rfull);
	cover_merge(&cov);
	/* Again if CMD loaded or unloaded modules. */
	mods_after = read_file("/proc/modules");
	if (!mods_before || !mods_after || strcmp(mods_before, mods_after))
		load_kallsyms_or_die(kallsyms);

	if (abi == ABI_LINUX_KCOV) {
		uint64_t text = sym_addr("_text");

		if (text)
			bias = text - X86_64_START_KERNEL;
	}

	cmdline = command_line(argv);
	system_header(&h);
	if (abi == ABI_OKCOV)
		okcov_module_header(&h);
	hdr_add(&h, "device", "%s", dev);
	hdr_add(&h, "source", "%s", abi == ABI_OKCOV ?
		"okcov (function entries; basic blocks of instrumented modules)" :
		"linux-kcov (basic blocks of instrumented code)");
	hdr_add(&h, "mode", "%s", mode ? "cmp" : "pc");
	hdr_add(&h, "remote", "%s", remote ? "yes" : "no");
	hdr_add(&h, "scope", "%s",
		"the thread that ran CMD, through execve; threads and processes it created are not recorded");
	hdr_add(&h, "command", "%s", cmdline);
	if (WIFEXITED(status))
		hdr_add(&h, "exit", "%d", WEXITSTATUS(status));
	else
		hdr_add(&h, "exit", "signal %d", WTERMSIG(status));
	hdr_add(&h, "entries", "%llu", (unsigned long long)entries);
	hdr_add(&h, "records", "%llu", (unsigned long long)nt);
	hdr_add(&h, "full", "%s", tfull ? "yes" : "no");
	if (remote) {
		hdr_add(&h, "remote.records", "%llu", (unsigned long long)nr);
		hdr_add(&h, "remote.full", "%s", rfull ? "yes" : "no");
	}
	if (bias)
		hdr_add(&h, "pc.kaslr_offset", "0x%llx", (unsigned long long)bias);

	if (!strcmp(output, "-")) {
		out = stdout;
	} else {
		out = fopen(output, "w");
		if (!out)
			die("%s: %s", output, strerror(errno));
	}
	if (write_profile(out, &h, &cov, bias) || (out != stdout && fclose(out)))
		die("%s: write failed: %s", output, strerror(errno));

	if (tfull || rfull) {
		unsigned long long max = okcov_max_entries();

		warnx_("warning: the %sbuffer filled up (%llu entries): the profile misses the rest of the run.",
		       rfull && !tfull ? "remote " : "", (unsigned long long)entries);
		if (abi == ABI_OKCOV && max && entries >= max)
			warnx_("  use -n with more entries; okcov allows at most %llu: reload it with a larger max_entries (insmod okcov.ko max_entries=N)",
			       max);
		else
			warnx_("  use -n with more entries (now %llu)",
			       (unsigned long long)entries);
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

/* ---------------------------------------------------------------------- */
/* import: raw PCs (syzkaller's raw cover: one hex PC a line) -> profile  */

static int cmd_import(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "output", required_argument, NULL, 'o' },
		{ "kallsyms", required_argument, NULL, 'k' },
		{ "bias", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *output = "-", *kallsyms = "/proc/kallsyms", *in = "-";
	struct cover cov = { NULL, 0, 0, false };
	struct header h = { NULL, 0 };
	size_t linecap = 0, lineno = 0;
	uint64_t bias = 0, n = 0;
	char *line = NULL;
	FILE *f, *out;
	int c;

	while ((c = getopt_long(argc, argv, "m:o:k:b:h", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (strcmp(optarg, "pc") && strcmp(optarg, "cmp"))
				die("-m: mode is pc or cmp, not '%s'", optarg);
			cov.cmp = !strcmp(optarg, "cmp");
			break;
		case 'o':
			output = optarg;
			break;
		case 'k':
			kallsyms = optarg;
			break;
		case 'b':
			bias = strtoull(optarg, NULL, 0);
			break;
		case 'h':
			printf("usage: okcov-cover import [-m pc|cmp] [-k KALLSYMS] [-b BIAS] [-o FILE] [RAW]\n"
			       "  RAW: one hex PC a line (pc), or TYPE ARG1 ARG2 PC (cmp)\n");
			return 0;
		default:
			return EXIT_TROUBLE;
		}
	}
	if (optind < argc)
		in = argv[optind++];
	if (optind < argc)
		die("import: one input file at most");
	load_kallsyms_or_die(kallsyms);
	f = strcmp(in, "-") ? fopen(in, "r") : stdin;
	if (!f)
		die("%s: %s", in, strerror(errno));
	while (getline(&line, &linecap, f) > 0) {
		unsigned long long w[4];
		char *s, *end;
		int k;

		lineno++;
		if (line[0] == '#' || line[strspn(line, " \t\r\n")] == '\0')
			continue;
		for (k = 0, s = line; k < 4; k++) {
			s += strspn(s, " \t\r\n");
			if (!*s)
				break;
			errno = 0;
			w[k] = strtoull(s, &end, 16);
			if (errno || end == s || !strchr(" \t\r\n", *end))
				break;
			s = end;
		}
		s += strspn(s, " \t\r\n");
		if (*s || k != (cov.cmp ? 4 : 1))
			die("%s:%zu: expected %s", in, lineno,
			    cov.cmp ? "TYPE ARG1 ARG2 PC" : "a hex PC");
		if (cov.cmp)
			cover_add(&cov, w[3], w[0], false);
		else
			cover_add(&cov, w[0], 0, false);
		n++;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	cover_merge(&cov);
	hdr_add(&h, "source", "import of %s", in);
	hdr_add(&h, "kallsyms", "%s", kallsyms);
	hdr_add(&h, "mode", "%s", cov.cmp ? "cmp" : "pc");
	hdr_add(&h, "records", "%llu", (unsigned long long)n);
	if (bias)
		hdr_add(&h, "pc.kaslr_offset", "0x%llx", (unsigned long long)bias);
	out = strcmp(output, "-") ? fopen(output, "w") : stdout;
	if (!out)
		die("%s: %s", output, strerror(errno));
	if (write_profile(out, &h, &cov, bias) || (out != stdout && fclose(out)))
		die("%s: write failed: %s", output, strerror(errno));
	return 0;
}

/* ---------------------------------------------------------------------- */
/* diff                                                                   */

struct pfn {
	char *name, *mod;
	uint64_t hits;
	bool remote;
};

struct profile {
	const char *path;
	char *release, *source, *mode, *command;
	struct pfn *fns;
	size_t nfns;
};

static char *field(char **p)
{
	char *s = *p, *e;

	s += strspn(s, " ");
	if (!*s)
		return NULL;
	e = s + strcspn(s, " ");
	if (*e)
		*e++ = '\0';
	*p = e;
	return s;
}

static bool parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return false;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return !errno && !*end;
}

#define bad(fmt, ...) \
	die("%s:%zu: " fmt, p->path, lineno, ##__VA_ARGS__)

static void load_profile(struct profile *p, const char *path)
{
	size_t linecap = 0, lineno = 0, cap = 0, counted[4] = { 0 };
	bool ended = false;
	char *line = NULL;
	ssize_t len;
	FILE *f;

	memset(p, 0, sizeof(*p));
	p->path = path;
	f = fopen(path, "r");
	if (!f)
		die("%s: %s", path, strerror(errno));
	while ((len = getline(&line, &linecap, f)) > 0) {
		char *s = line, *kw;

		lineno++;
		if (line[len - 1] != '\n')
			bad("truncated profile: last line cut short (no newline)");
		line[--len] = '\0';
		if (lineno == 1) {
			if (strncmp(line, "okcov-cover profile v", 21))
				die("%s: not an okcov-cover profile (the first line should be '%s')",
				    path, PROFILE_MAGIC);
			if (strcmp(line, PROFILE_MAGIC))
				die("%s: profile format '%s' is not supported (this okcov-cover reads '%s')",
				    path, line + 20, PROFILE_MAGIC + 20);
			continue;
		}
		if (ended)
			bad("data after the end line");
		if (line[0] == '#') {
			char *v = strstr(line, ": ");
			char **slot = NULL;

			if (!v)
				continue;
			*v = '\0';
			if (!strcmp(line, "# kernel.release"))
				slot = &p->release;
			else if (!strcmp(line, "# source"))
				slot = &p->source;
			else if (!strcmp(line, "# mode"))
				slot = &p->mode;
			else if (!strcmp(line, "# command"))
				slot = &p->command;
			if (slot && !*slot)
				*slot = xstrdup(v + 2);
			continue;
		}
		kw = field(&s);
		if (!kw)
			bad("empty line");
		if (!strcmp(kw, "fn") || !strcmp(kw, "rfn")) {
			struct pfn *fn;
			char *name = field(&s), *mod = field(&s);
			uint64_t hits;

			if (!name || !mod || !parse_u64(field(&s), &hits))
				bad("malformed %s line: expected '%s NAME MODULE HITS PCS'",
				    kw, kw);
			if (p->nfns == cap) {
				cap = cap ? cap * 2 : 1024;
				p->fns = xrealloc(p->fns, cap * sizeof(*p->fns));
			}
			fn = &p->fns[p->nfns++];
			fn->name = xstrdup(name);
			fn->mod = xstrdup(mod);
			fn->hits = hits;
			fn->remote = kw[0] == 'r';
			counted[fn->remote ? 2 : 0]++;
		} else if (!strcmp(kw, "pc") || !strcmp(kw, "rpc")) {
			char *pc = field(&s), *end;

			if (!pc || (strtoull(pc, &end, 16), *end) || !field(&s) ||
			    !field(&s))
				bad("malformed %s line: expected '%s PC SYMBOL+OFF MODULE HITS'",
				    kw, kw);
			counted[kw[0] == 'r' ? 3 : 1]++;
		} else if (!strcmp(kw, "end")) {
			static const char *const keys[] = { "fn", "pc", "rfn", "rpc" };
			uint64_t v;

			for (int i = 0; i < 4; i++) {
				char *k = field(&s);

				if (!k || strcmp(k, keys[i]) || !parse_u64(field(&s), &v))
					bad("malformed end line");
				if (v != counted[i])
					bad("truncated or edited profile: the end line says %llu %s lines, the file has %zu",
					    (unsigned long long)v, keys[i], counted[i]);
			}
			ended = true;
		} else {
			bad("unknown line type '%s'", kw);
		}
	}
	free(line);
	if (ferror(f))
		die("%s: read error: %s", path, strerror(errno));
	fclose(f);
	if (lineno == 0)
		die("%s: empty file, not an okcov-cover profile", path);
	if (!ended)
		die("%s: truncated profile: no end line after line %zu (was the run cut short?)",
		    path, lineno);
}

static int cmp_pfn(const void *a, const void *b)
{
	const struct pfn *x = a, *y = b;
	int r;

	if (x->remote != y->remote)
		return x->remote - y->remote;
	r = strcmp(x->mod, y->mod);
	return r ? r : strcmp(x->name, y->name);
}

static void filter_profile(struct profile *p, const char *mod, const char *glob)
{
	size_t i, n = 0;

	for (i = 0; i < p->nfns; i++) {
		if (mod && strcmp(p->fns[i].mod, mod))
			continue;
		if (glob && fnmatch(glob, p->fns[i].name, 0))
			continue;
		p->fns[n++] = p->fns[i];
	}
	p->nfns = n;
	qsort(p->fns, p->nfns, sizeof(*p->fns), cmp_pfn);
}

static void describe(const char *tag, struct profile *p)
{
	const char *src = p->source ? p->source : "source unknown";

	/* the source's first word: okcov, linux-kcov, import */
	printf("%s %s (%s, %.*s, mode %s)\n", tag, p->path,
	       p->release ? p->release : "kernel unknown",
	       (int)strcspn(src, " "), src, p->mode ? p->mode : "?");
}

static void print_fn(char tag, const struct pfn *f)
{
	printf("%c %s%s %s %llu\n", tag, f->remote ? "remote:" : "", f->name,
	       f->mod, (unsigned long long)f->hits);
}

static void diff_usage(FILE *f)
{
	fprintf(f,
"usage: okcov-cover diff [--module M] [--match GLOB] [--ignore-counts] A B\n"
"  exit status: 0 same, 1 different, 2 trouble\n");
}

static int cmd_diff(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "module", required_argument, NULL, 'M' },
		{ "match", required_argument, NULL, 'g' },
		{ "ignore-counts", no_argument, NULL, 'c' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *mod = NULL, *glob = NULL;
	size_t i = 0, j = 0, onlya = 0, onlyb = 0, changed = 0, same = 0;
	bool counts = true, quiet = false;
	struct profile a, b;
	int c;

	while ((c = getopt_long(argc, argv, "M:g:cqh", opts, NULL)) != -1) {
		switch (c) {
		case 'M':
			mod = optarg;
			break;
		case 'g':
			glob = optarg;
			break;
		case 'c':
			counts = false;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			diff_usage(stdout);
			return 0;
		default:
			diff_usage(stderr);
			return EXIT_TROUBLE;
		}
	}
	if (argc - optind != 2) {
		diff_usage(stderr);
		return EXIT_TROUBLE;
	}
	load_profile(&a, argv[optind]);
	load_profile(&b, argv[optind + 1]);
	filter_profile(&a, mod, glob);
	filter_profile(&b, mod, glob);

	if (!quiet) {
		describe("---", &a);
		describe("+++", &b);
		if (a.mode && b.mode && strcmp(a.mode, b.mode))
			printf("# note: the modes differ: counts mean different things\n");
	}
	while (i < a.nfns || j < b.nfns) {
		int r = i == a.nfns ? 1 : j == b.nfns ? -1 :
			cmp_pfn(&a.fns[i], &b.fns[j]);

		if (r < 0) {
			if (!quiet)
				print_fn('-', &a.fns[i]);
			onlya++;
			i++;
		} else if (r > 0) {
			if (!quiet)
				print_fn('+', &b.fns[j]);
			onlyb++;
			j++;
		} else {
			if (counts && a.fns[i].hits != b.fns[j].hits) {
				if (!quiet)
					printf("~ %s%s %s %llu -> %llu\n",
					       a.fns[i].remote ? "remote:" : "",
					       a.fns[i].name, a.fns[i].mod,
					       (unsigned long long)a.fns[i].hits,
					       (unsigned long long)b.fns[j].hits);
				changed++;
			} else {
				same++;
			}
			i++;
			j++;
		}
	}
	printf("okcov-cover diff: %zu only in A, %zu only in B, %zu changed, %zu same (A %zu functions, B %zu)\n",
	       onlya, onlyb, changed, same, a.nfns, b.nfns);
	return onlya || onlyb || changed;
}

/* ---------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
"usage: okcov-cover run [-m pc|cmp] [--remote] [-n ENTRIES] [-o FILE]\n"
"                       [--device PATH] -- CMD [ARG]...\n"
"       okcov-cover diff [--module M] [--match GLOB] [--ignore-counts] A B\n"
"       okcov-cover import [-m pc|cmp] [-k KALLSYMS] [-o FILE] [RAW]\n"
"See okcov-cover(1).\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_TROUBLE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(argv[1], "diff"))
		return cmd_diff(argc - 1, argv + 1);
	if (!strcmp(argv[1], "import"))
		return cmd_import(argc - 1, argv + 1);
	warnx_("unknown command '%s'", argv[1]);
	usage(stderr);
	return EXIT_TROUBLE;
}
