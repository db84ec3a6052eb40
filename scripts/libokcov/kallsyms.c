// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/kallsyms loader and PC -> symbol lookup (kallsyms.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kallsyms.h"

static struct ksym *syms;
static size_t nsyms;

/* By address; aliases by name, so that the first is the same everywhere. */
static int cmp_sym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void ksyms_free(void)
{
	size_t i;

	for (i = 0; i < nsyms; i++)
		free((char *)syms[i].name);	/* mod shares the allocation */
	free(syms);
	syms = NULL;
	nsyms = 0;
}

/* Padding and CFI preambles sit before the function they belong to. */
static bool is_preamble(const char *name)
{
	return !strncmp(name, "__pfx_", 6) || !strncmp(name, "__cfi_", 6);
}

/* One "addr type name[\t[mod]]" line into syms: 0 or -ENOMEM. */
static int ksyms_add(char *line, size_t *cap)
{
	char *end, *name, *mod, *copy;
	uint64_t addr;

	addr = strtoull(line, &end, 16);
	if (end == line || end[0] != ' ' || !end[1] ||
	    !strchr("tTwW", end[1]) || end[2] != ' ')
		return 0;
	name = end + 3;
	mod = strpbrk(name, "\t ");
	if (mod) {
		*mod++ = '\0';
		mod += strspn(mod, " \t[");
		mod[strcspn(mod, "] \t")] = '\0';
	}
	if (!*name || is_preamble(name))
		return 0;

	if (nsyms == *cap) {
		size_t ncap = *cap ? *cap * 2 : 65536;
		struct ksym *n = realloc(syms, ncap * sizeof(*syms));

		if (!n)
			return -ENOMEM;
		syms = n;
		*cap = ncap;
	}
	/* name and module name in one allocation */
	copy = malloc(strlen(name) + 1 + (mod ? strlen(mod) + 1 : 0));
	if (!copy)
		return -ENOMEM;
	strcpy(copy, name);
	syms[nsyms].name = copy;
	syms[nsyms].mod = NULL;
	if (mod && *mod)
		syms[nsyms].mod = strcpy(copy + strlen(name) + 1, mod);
	syms[nsyms].addr = addr;
	nsyms++;
	return 0;
}

/* 0, -ENOENT (no text symbol), -EPERM (no address shown), or -errno. */
static int ksyms_read(const char *path)
{
	size_t cap = 0, linecap = 0;
	char *line = NULL;
	ssize_t len;
	int err = 0;
	FILE *f;

	ksyms_free();
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (!err && (len = getline(&line, &linecap, f)) > 0) {
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		err = ksyms_add(line, &cap);
	}
	free(line);
	fclose(f);
	if (err)
		return err;
	if (!nsyms)
		return -ENOENT;
	qsort(syms, nsyms, sizeof(*syms), cmp_sym);
	return syms[nsyms - 1].addr ? 0 : -EPERM;
}

int ksyms_load_file(const char *path)
{
	int err = ksyms_read(path);
	FILE *f;

	if (err != -EPERM || strcmp(path, KSYMS_PROC))
		return err;
	/* Addresses hidden (kptr_restrict=2): root may lower it to 1. */
	f = fopen("/proc/sys/kernel/kptr_restrict", "w");
	if (!f)
		return err;
	fputs("1\n", f);
	fclose(f);
	return ksyms_read(path);
}

int ksyms_load(void)
{
	return ksyms_load_file(KSYMS_PROC);
}

size_t ksyms_count(void)
{
	return nsyms;
}

const struct ksym *ksyms_get(size_t i)
{
	return &syms[i];
}

uint64_t ksyms_end(size_t i, uint64_t max)
{
	size_t j = i + 1;

	while (j < nsyms && syms[j].addr == syms[i].addr)
		j++;
	if (j == nsyms || syms[j].addr - syms[i].addr > max)
		return syms[i].addr + max;
	return syms[j].addr;
}

const struct ksym *ksyms_lookup(uint64_t pc, size_t *nalias)
{
	size_t lo = 0, hi = nsyms, first, n;

	if (nalias)
		*nalias = 0;
	/* last index with addr <= pc */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (syms[mid].addr <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	first = lo - 1;
	if (pc - syms[first].addr > KSYMS_MAX_OFFSET)
		return NULL;
	while (first > 0 && syms[first - 1].addr == syms[first].addr)
		first--;
	for (n = 0; first + n < nsyms &&
		    syms[first + n].addr == syms[first].addr; n++)
		;
	if (nalias)
		*nalias = n;
	return &syms[first];
}

bool ksyms_pc_matches(uint64_t pc,
		      bool (*pred)(const struct ksym *s, const void *ctx),
		      const void *ctx)
{
	const struct ksym *s;
	size_t i, n;

	s = ksyms_lookup(pc, &n);
	for (i = 0; s && i < n; i++)
		if (pred(&s[i], ctx))
			return true;
	return false;
}

bool ksym_is_syscall(const struct ksym *s, const void *ctx)
{
	const char *sc = ctx;
	size_t ln = strlen(s->name), ls = strlen(sc);

	if (s->mod)
		return false;
	/* "sys_" + sc, at the start or after an underscore */
	if (ln < ls + 4 || strcmp(s->name + ln - ls, sc))
		return false;
	if (strncmp(s->name + ln - ls - 4, "sys_", 4))
		return false;
	return ln == ls + 4 || s->name[ln - ls - 5] == '_';
}

bool ksym_name_contains(const struct ksym *s, const void *substr)
{
	return strstr(s->name, substr) != NULL;
}

bool ksym_in_module(const struct ksym *s, const void *mod)
{
	return s->mod && !strcmp(s->mod, mod);
}

bool ksym_named(const struct ksym *s, const void *name)
{
	return !strcmp(s->name, name);
}

uint64_t ksyms_addr(const char *name, const char *mod)
{
	size_t i;

	for (i = 0; i < nsyms; i++) {
		if (strcmp(syms[i].name, name))
			continue;
		if (mod && (!syms[i].mod || strcmp(syms[i].mod, mod)))
			continue;
		return syms[i].addr;
	}
	return 0;
}

const char *ksyms_format(uint64_t pc, char *buf, size_t len)
{
	const struct ksym *s = ksyms_lookup(pc, NULL);

	if (!s)
		snprintf(buf, len, "0x%llx (unknown)", (unsigned long long)pc);
	else
		snprintf(buf, len, "%s+0x%llx%s%s%s", s->name,
			 (unsigned long long)(pc - s->addr),
			 s->mod ? " [" : "", s->mod ? s->mod : "",
			 s->mod ? "]" : "");
	return buf;
}
