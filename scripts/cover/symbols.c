// SPDX-License-Identifier: GPL-2.0
/*
 * okcov-cover: /proc/kallsyms, and the names of functions across kernels.
 */
#include "cover.h"

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
void normalize_name(const char *name, char *out)
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

/* ---- kallsyms ---- */

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

void load_kallsyms_or_die(const char *path)
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
const struct sym *lookup(uint64_t pc)
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

uint64_t sym_addr(const char *name)
{
	for (size_t i = 0; i < nsyms; i++)
		if (!strcmp(syms[i].name, name) && !strcmp(syms[i].mod, "vmlinux"))
			return syms[i].addr;
	return 0;
}


/* The loaded symbols, by address (okcov-cover deep walks them). */
size_t sym_count(void)
{
	return nsyms;
}

const struct sym *sym_get(size_t i)
{
	return &syms[i];
}

/* Where symbol @i's function ends: the next greater address, within @max. */
uint64_t sym_end(size_t i, uint64_t max)
{
	size_t j = i + 1;

	while (j < nsyms && syms[j].addr == syms[i].addr)
		j++;
	if (j == nsyms || syms[j].addr - syms[i].addr > max)
		return syms[i].addr + max;
	return syms[j].addr;
}
