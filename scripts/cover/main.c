// SPDX-License-Identifier: GPL-2.0
/*
 * okcov-cover: record the kernel coverage of a command into a profile, and
 * compare two profiles (for example the same program on two kernels, or
 * under okcov and under Linux's own kcov).
 *
 *   okcov-cover run [-m pc|cmp] [--remote] [-n ENTRIES] [-o FILE]
 *                   [--device PATH] -- CMD [ARG]...
 *   okcov-cover deep [--list] [-f FILE] [-d DEVICE] [--refused FILE] FUNC... [-- CMD [ARG]...]
 *   okcov-cover import [-m pc|cmp] [--kallsyms FILE] [-o FILE] [RAW]
 *   okcov-cover diff [--module M] [--match GLOB] [--ignore-counts] A B
 *   okcov-cover lcov [-V VMLINUX] [-M MODULE.ko]... [-f FUNCTIONS] [-o FILE]
 *                    PROFILE...
 *
 * The profile format is documented in okcov-cover(1) (okcov-cover.1, here).
 */
#include "cover.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: okcov-cover run [-m pc|cmp] [--remote] [-n ENTRIES] [-o FILE]\n"
"                       [--device PATH] -- CMD [ARG]...\n"
"       okcov-cover deep [--list] [-f FILE] [-d DEVICE] [-k KALLSYMS]\n"
"                        [--refused FILE] FUNC... [-- CMD [ARG]...]\n"
"       okcov-cover diff [--module M] [--match GLOB] [--ignore-counts] A B\n"
"       okcov-cover import [-m pc|cmp] [-k KALLSYMS] [-o FILE] [RAW]\n"
"       okcov-cover lcov [-V VMLINUX] [-M MODULE.ko]... [-f FUNCTIONS] [-o FILE] PROFILE...\n"
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
	if (!strcmp(argv[1], "deep"))
		return cmd_deep(argc - 1, argv + 1);
	if (!strcmp(argv[1], "diff"))
		return cmd_diff(argc - 1, argv + 1);
	if (!strcmp(argv[1], "lcov"))
		return cmd_lcov(argc - 1, argv + 1);
	if (!strcmp(argv[1], "import"))
		return cmd_import(argc - 1, argv + 1);
	warnx_("unknown command '%s'", argv[1]);
	usage(stderr);
	return EXIT_TROUBLE;
}

