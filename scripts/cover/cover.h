/* SPDX-License-Identifier: GPL-2.0 */
/*
 * okcov-cover: what its parts share. main.c: the command dispatch only;
 * util.c: messages and allocation; symbols.c: loading /proc/kallsyms
 * (into scripts/libokcov/'s table) and name normalization; profile.c:
 * records to functions, and writing a profile; read.c: reading a
 * profile; elf.c and symbolize.c: debug info to source lines; run.c,
 * import.c, diff.c, lcov.c: the subcommands of those names. It builds
 * against uapi/ and scripts/libokcov/ only.
 */
#ifndef OKCOV_COVER_H
#define OKCOV_COVER_H

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

#include <linux/kcov.h>		/* Linux's own kcov, for --device */

#include "okcov.h"
#include "kallsyms.h"		/* scripts/libokcov/ */
#include "kaslr.h"

#ifndef ENOTSUPP
#define ENOTSUPP		524	/* the kernel's, for KCOV_ENABLE cmp */
#endif

#define PROFILE_MAGIC		"okcov-cover profile v1"
#define DEFAULT_ENTRIES		OKCOV_DEFAULT_ENTRIES
#define LKCOV_DEFAULT_ENTRIES	(2UL << 20)

/* Exit statuses of okcov-cover itself (run returns CMD's otherwise). */
#define EXIT_TROUBLE		2
#define EXIT_NOEXEC		126
#define EXIT_NOTFOUND		127

#define __printf(a, b)	__attribute__((format(printf, a, b)))
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define __noreturn	__attribute__((noreturn))

/* util.c */
extern const char *prog;

void __printf(1, 2) warnx_(const char *fmt, ...);
#define die(...)	do { warnx_(__VA_ARGS__); exit(EXIT_TROUBLE); } while (0)
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

/* symbols.c; the table itself is libokcov's (kallsyms.h) */
void normalize_name(const char *name, char *out);
void load_kallsyms_or_die(const char *path);
const char *sym_mod(const struct ksym *s);

/* profile.c */
struct rec {			/* one distinct (context, PC) */
	uint64_t pc;
	uint64_t hits;
	uint64_t cmps_const;	/* cmp mode */
	unsigned int sizes;	/* cmp mode: bit n = operand of 1 << n bytes */
	bool remote;
};

struct cover {
	struct rec *recs;
	size_t nrecs, cap;
	bool cmp;
};

/* Header lines "# key: value", in order. */
struct header {
	char **lines;
	size_t n;
};

void cover_add(struct cover *c, uint64_t pc, uint64_t type, bool remote);
void cover_merge(struct cover *c);
void __printf(3, 4) hdr_add(struct header *h, const char *key,
			    const char *fmt, ...);
int write_profile(FILE *out, struct header *h, struct cover *c,
		  uint64_t pc_bias);
char *read_line(const char *path);
char *read_file(const char *path);
char *command_line(char **argv);
void system_header(struct header *h);
void okcov_module_header(struct header *h);

/* read.c: a profile as written by write_profile() */
struct pfn {
	char *name, *mod;
	uint64_t hits;
	bool remote;
};

struct ppc {			/* a pc or rpc line */
	uint64_t pc, off, hits;
	char *sym, *mod;	/* the kallsyms name, before normalization */
	bool remote;
};

struct profile {
	const char *path;
	char *release, *source, *mode, *command, *build_id;
	struct pfn *fns;
	size_t nfns;
	struct ppc *pcs;	/* those with a symbol */
	size_t npcs;
};

void load_profile(struct profile *p, const char *path);

/* elf.c */
struct elf_sym {
	const char *name;
	uint64_t value, size;
	unsigned int shndx;
};

struct elf_file {
	const char *path;
	void *map;
	size_t len;
	bool rel;		/* ET_REL: a module, addresses are section offsets */
	unsigned int machine;
	const void *sh;		/* the section headers */
	unsigned int shnum;
	const char *shstr;
	struct elf_sym *syms;	/* functions, by name */
	size_t nsyms;
	char build_id[128];	/* hex, "" if none */
};

void elf_open(struct elf_file *e, const char *path);
const char *elf_section_name(const struct elf_file *e, unsigned int shndx);
size_t elf_lookup(const struct elf_file *e, const char *name, size_t *n);
const unsigned char *elf_text(const struct elf_file *e, unsigned int shndx,
			      uint64_t addr, size_t len);

/* symbolize.c */
struct srcloc {
	char *file;		/* where the code is (innermost frame); NULL: unknown */
	unsigned int line;
	char *fn_file;		/* the function it is in (outermost frame) */
	unsigned int fn_line;	/* where that is declared; 0: unknown */
	unsigned int outer_line; /* the line in it (of the inlined call) */
};

extern const char *symbolizer_choice;
extern const char *symbol_cache_dir;
bool symbolizer_is_llvm(void);
void symbolize(const struct elf_file *e, const char *section,
	       const uint64_t *addrs, size_t n, struct srcloc *out);

/* the commands */
int cmd_run(int argc, char **argv);
int cmd_deep(int argc, char **argv);
int deep_install(const char *dev, char **globs, size_t nglobs);
int cmd_import(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_lcov(int argc, char **argv);

#endif /* OKCOV_COVER_H */
