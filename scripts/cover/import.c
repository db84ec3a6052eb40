// SPDX-License-Identifier: GPL-2.0
/*
 * okcov-cover import: raw PCs (syzkaller's raw cover) to a profile.
 */
#include "cover.h"

/* import: raw PCs (syzkaller's raw cover: one hex PC a line) -> profile */
int cmd_import(int argc, char **argv)
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
