// SPDX-License-Identifier: GPL-2.0
/*
 * okcov-cover: reading a profile (the format is okcov-cover(1)'s), for
 * diff and lcov.
 */
#include "cover.h"

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

void load_profile(struct profile *p, const char *path)
{
	size_t linecap = 0, lineno = 0, cap = 0, pcap = 0, counted[4] = { 0 };
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
			else if (!strcmp(line, "# kernel.build_id"))
				slot = &p->build_id;
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
			char *pc = field(&s), *sym = field(&s), *mod = field(&s);
			char *end, *plus;
			struct ppc *r;
			uint64_t v, off = 0, hits = 0;

			errno = 0;
			v = pc ? strtoull(pc, &end, 16) : 0;
			if (!pc || errno || *end || !sym || !mod)
				bad("malformed %s line: expected '%s PC SYMBOL+OFF MODULE HITS'",
				    kw, kw);
			counted[kw[0] == 'r' ? 3 : 1]++;
			/* "[unknown] unknown", or SYMBOL+0xOFF */
			plus = strrchr(sym, '+');
			if (!plus || strncmp(plus, "+0x", 3))
				continue;
			off = strtoull(plus + 3, &end, 16);
			if (*end || !parse_u64(field(&s), &hits))
				continue;
			*plus = '\0';
			if (p->npcs == pcap) {
				pcap = pcap ? pcap * 2 : 4096;
				p->pcs = xrealloc(p->pcs, pcap * sizeof(*p->pcs));
			}
			r = &p->pcs[p->npcs++];
			r->pc = v;
			r->sym = xstrdup(sym);
			r->mod = xstrdup(mod);
			r->off = off;
			r->hits = hits;
			r->remote = kw[0] == 'r';
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
