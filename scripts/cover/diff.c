// SPDX-License-Identifier: GPL-2.0
/*
 * okcov-cover: read two profiles and compare them.
 */
#include "cover.h"

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

int cmd_diff(int argc, char **argv)
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

