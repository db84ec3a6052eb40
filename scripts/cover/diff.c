// SPDX-License-Identifier: GPL-2.0
/*
 * okcov-cover: read two profiles and compare them.
 */
#include "cover.h"

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

