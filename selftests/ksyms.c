// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/kallsyms loader and PC -> symbol lookup for the okcov selftests.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksyms.h"

#define KSYMS_PATH		"/proc/kallsyms"
#define KSYMS_MAX_OFFSET	(1UL << 20)

static struct ksym *syms;
static size_t nsyms;

static int cmp_addr(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return 0;
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

static int ksyms_read(size_t *nonzero)
{
	size_t cap = 0, linecap = 0;
	char *line = NULL;
	ssize_t len;
	FILE *f;

	*nonzero = 0;
	f = fopen(KSYMS_PATH, "r");
	if (!f)
		return -errno;

	while ((len = getline(&line, &linecap, f)) > 0) {
		char *p = line, *end, *name, *mod, *copy;
		uint64_t addr;
		char type;

		if (line[len - 1] == '\n')
			line[--len] = '\0';
		addr = strtoull(p, &end, 16);
		if (end == p || *end != ' ')
			continue;
		type = end[1];
		if (type != 'T' && type != 't' && type != 'W' && type != 'w')
			continue;
		if (end[2] != ' ')
			continue;
		name = end + 3;
		mod = strchr(name, '\t');
		if (mod)
			*mod++ = '\0';

		if (nsyms == cap) {
			struct ksym *n;

			cap = cap ? cap * 2 : 65536;
			n = realloc(syms, cap * sizeof(*syms));
			if (!n)
				goto nomem;
			syms = n;
		}

		/* name and module name in one allocation */
		copy = malloc(strlen(name) + 1 + (mod ? strlen(mod) + 1 : 0));
		if (!copy)
			goto nomem;
		strcpy(copy, name);
		syms[nsyms].name = copy;
		syms[nsyms].mod = NULL;
		if (mod) {
			char *m = copy + strlen(name) + 1;

			/* "[okcov_target]" -> "okcov_target" */
			if (*mod == '[')
				mod++;
			strcpy(m, mod);
			m[strcspn(m, "]")] = '\0';
			syms[nsyms].mod = m;
		}
		syms[nsyms].addr = addr;
		if (addr)
			(*nonzero)++;
		nsyms++;
	}
	free(line);
	fclose(f);
	qsort(syms, nsyms, sizeof(*syms), cmp_addr);
	return nsyms ? 0 : -ENOENT;

nomem:
	free(line);
	fclose(f);
	return -ENOMEM;
}

int ksyms_load(void)
{
	size_t nonzero;
	FILE *f;
	int err;

	ksyms_free();
	err = ksyms_read(&nonzero);
	if (err || nonzero)
		return err;

	/* Addresses hidden (kptr_restrict=2): root may lower it to 1. */
	f = fopen("/proc/sys/kernel/kptr_restrict", "w");
	if (f) {
		fputs("1\n", f);
		fclose(f);
	}
	ksyms_free();
	err = ksyms_read(&nonzero);
	if (!err && !nonzero)
		err = -EPERM;
	return err;
}

size_t ksyms_count(void)
{
	return nsyms;
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
