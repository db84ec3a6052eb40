// SPDX-License-Identifier: GPL-2.0
/*
 * decode_test: okcov's x86_64 instruction decoder (module/insn.c, the
 * module's own file built for userspace) against binutils' objdump.
 *
 *   decode_test unit
 *	hand-written encodings of known length, kind and parts (VEX, EVEX,
 *	RIP-relative, 66 imm16, mov imm64, invalid ones), and the comparer
 *	below fed a correct and two doctored objdump listings: it must pass
 *	the first and fail the others. KTAP-like lines; non-zero on failure.
 *   decode_test syms VMLINUX PARTS ARGS < KALLSYMS
 *	the t/T symbols inside VMLINUX's .text, one per address, written
 *	to ARGS as objcopy --add-symbol options (objdump then starts each
 *	function afresh); prints "functions N", then PARTS lines "START
 *	STOP" that split .text at function starts into parts of similar
 *	size, for objdumps run side by side.
 *   decode_test compare VMLINUX < OBJDUMP
 *	for each instruction of an `objdump -d -z --insn-width=15 -j .text`
 *	listing of VMLINUX, decode the same address and compare the length,
 *	the kind, a direct branch's target and a RIP-relative operand's
 *	target. Prints each finding, then "result functions=N insns=N
 *	disagree=N bad=N unsupported=N"; exits 1 on a disagreement.
 */
#include <ctype.h>
#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "insn.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

struct text {
	const u8 *bytes;
	uint64_t addr, size;
};

struct counts {
	unsigned long functions, insns, disagree, bad, unsupported, cut;
	unsigned long targets, riprel, gap, unchecked;
	int quiet;
};

/*
 * Instructions kernel text holds that okcov chooses not to decode (its
 * -EILSEQ is then counted, not failed), by objdump's mnemonic. Empty: none
 * was found on the test kernels.
 */
static const char *const unsupported[] = {
	NULL,
};

/*
 * Instructions kernel text holds that the host's objdump (binutils 2.40)
 * does not know yet: where it says (bad) and okcov decodes one of these,
 * that is counted and listed, and the walk resynchronises past it.
 */
static const struct {
	const char *name;
	u8 n, b[4], mask[4];
} objdump_gaps[] = {
	/* 6.12+ native_lkgs(), load_gs_index(): LKGS_DI */
	{ "lkgs %di", 4, { 0xf2, 0x0f, 0x00, 0xf7 }, { 0xff, 0xff, 0xff, 0xff } },
	/* 7.x get_rmpentry(): AMD SEV-SNP's RMPREAD */
	{ "rmpread", 4, { 0xf2, 0x0f, 0x01, 0xfd }, { 0xff, 0xff, 0xff, 0xff } },
};

/* ------------------------------------------------------------ vmlinux */

static void load_text(const char *path, struct text *t)
{
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	const char *names;
	struct stat st;
	const u8 *map;
	int fd, i;

	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st)) {
		perror(path);
		exit(2);
	}
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	close(fd);
	eh = (const Elf64_Ehdr *)map;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_machine != EM_X86_64) {
		fprintf(stderr, "%s: not an x86_64 ELF\n", path);
		exit(2);
	}
	sh = (const Elf64_Shdr *)(map + eh->e_shoff);
	names = (const char *)map + sh[eh->e_shstrndx].sh_offset;
	for (i = 0; i < eh->e_shnum; i++) {
		if (strcmp(names + sh[i].sh_name, ".text"))
			continue;
		t->bytes = map + sh[i].sh_offset;
		t->addr = sh[i].sh_addr;
		t->size = sh[i].sh_size;
		return;
	}
	fprintf(stderr, "%s: no .text\n", path);
	exit(2);
}

/* -------------------------------------------------------------- syms */

struct sym {
	uint64_t addr;
	char *name;
};

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int syms(const char *vmlinux, int parts, const char *args)
{
	struct sym *s = NULL;
	size_t n = 0, cap = 0, i, j, k;
	char line[1024], name[512], type;
	unsigned long long addr;
	struct text t;
	uint64_t next;
	FILE *out;

	load_text(vmlinux, &t);
	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "%llx %c %511s", &addr, &type, name) != 3 ||
		    (type != 't' && type != 'T') ||
		    addr < t.addr || addr >= t.addr + t.size)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 65536;
			s = realloc(s, cap * sizeof(*s));
			if (!s)
				abort();
		}
		s[n].addr = addr;
		s[n++].name = strdup(name);
	}
	qsort(s, n, sizeof(*s), sym_cmp);
	for (i = j = 0; i < n; i++)
		if (!j || s[i].addr != s[j - 1].addr)
			s[j++] = s[i];
	n = j;
	if (!n || parts < 1) {
		fprintf(stderr, "decode_test: no text symbols\n");
		return 2;
	}
	out = fopen(args, "w");
	if (!out) {
		perror(args);
		return 2;
	}
	for (i = 0; i < n; i++)
		fprintf(out, "--add-symbol '%s=.text:0x%" PRIx64 ",function,global'\n",
			s[i].name, s[i].addr - t.addr);
	if (fclose(out)) {
		perror(args);
		return 2;
	}
	printf("functions %zu\n", n);
	/* Part k starts at the first function past k/parts of .text. */
	for (k = 0, i = 0; k < (size_t)parts; k++) {
		next = t.addr + t.size;
		for (j = i; k + 1 < (size_t)parts && j < n; j++)
			if (s[j].addr >= t.addr + t.size / parts * (k + 1)) {
				next = s[j].addr;
				break;
			}
		printf("0x%" PRIx64 " 0x%" PRIx64 "\n",
		       k ? s[i].addr : t.addr, next);
		while (i < n && s[i].addr < next)
			i++;
	}
	return 0;
}

/* ----------------------------------------------------------- compare */

/* objdump's mnemonic, past its prefix words. */
static const char *mnemonic(const char *s, char *buf, size_t size)
{
	static const char *const pfx[] = {
		"lock", "rep", "repz", "repe", "repnz", "repne", "bnd",
		"notrack", "cs", "ds", "ss", "es", "fs", "gs", "data16",
		"addr32", "xacquire", "xrelease", NULL,
	};
	size_t len, i;

	for (;;) {
		while (*s == ' ')
			s++;
		len = strcspn(s, " ");
		for (i = 0; pfx[i]; i++)
			if (strlen(pfx[i]) == len && !strncmp(s, pfx[i], len))
				break;
		if (!pfx[i] && strncmp(s, "rex", 3))
			break;
		s += len;
	}
	if (len >= size)
		len = size - 1;
	memcpy(buf, s, len);
	buf[len] = 0;
	return s + len;
}

/* The kind objdump's text implies; -1 for a nop okcov may call OTHER. */
static int objdump_kind(const char *m, const char *ops)
{
	static const struct { const char *m; int kind; } exact[] = {
		{ "loop", OKCOV_KIND_LOOP }, { "loope", OKCOV_KIND_LOOP },
		{ "loopne", OKCOV_KIND_LOOP }, { "jrcxz", OKCOV_KIND_LOOP },
		{ "jecxz", OKCOV_KIND_LOOP }, { "int3", OKCOV_KIND_INT3 },
		{ "ud0", OKCOV_KIND_UD }, { "ud1", OKCOV_KIND_UD },
		{ "ud2", OKCOV_KIND_UD }, { "hlt", OKCOV_KIND_STOP },
		{ "int", OKCOV_KIND_STOP }, { "int1", OKCOV_KIND_STOP },
		{ "icebp", OKCOV_KIND_STOP }, { "syscall", OKCOV_KIND_STOP },
		{ "sysenter", OKCOV_KIND_STOP }, { "endbr64", OKCOV_KIND_NOP },
		{ "ljmp", OKCOV_KIND_JMP_IND }, { "lcall", OKCOV_KIND_CALL_IND },
		{ NULL, 0 },
	};
	int i, ind;

	for (i = 0; exact[i].m; i++)
		if (!strcmp(m, exact[i].m))
			return exact[i].kind;
	while (*ops == ' ')
		ops++;
	ind = *ops == '*';
	if (!strncmp(m, "call", 4))
		return ind ? OKCOV_KIND_CALL_IND : OKCOV_KIND_CALL;
	if (!strncmp(m, "jmp", 3))
		return ind ? OKCOV_KIND_JMP_IND : OKCOV_KIND_JMP;
	if (m[0] == 'j')
		return OKCOV_KIND_JCC;
	if (!strncmp(m, "ret", 3) || !strncmp(m, "lret", 4) ||
	    !strncmp(m, "iret", 4))
		return OKCOV_KIND_RET;
	if (!strncmp(m, "sysret", 6) || !strncmp(m, "sysexit", 7))
		return OKCOV_KIND_STOP;
	if (!strncmp(m, "nop", 3) ||
	    (!strcmp(m, "xchg") && !strncmp(ops, "%ax,%ax", 7)))
		return -1;
	return OKCOV_KIND_OTHER;
}

/* The address at the start of @s (past spaces and '#'): a target. */
static uint64_t address_in(const char *s)
{
	while (*s == ' ' || *s == '#')
		s++;
	if (!strncmp(s, "0x", 2))
		s += 2;
	return strtoull(s, NULL, 16);
}

static void hexdump(char *buf, const u8 *p, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		sprintf(buf + 3 * i, "%02x ", p[i]);
	buf[n ? 3 * n - 1 : 0] = 0;
}

/* Where the listing is: its function, and an instruction cut short. */
struct walk {
	const struct text *t;
	struct counts *c;
	char fn[256];
	uint64_t fstart, expect, stop;
	int sync, resync;
	struct {
		int on;
		uint64_t addr, end;
		unsigned int n;
		char why[200];
	} cut;
};

static void finding(struct walk *w, const char *what, uint64_t addr,
		    unsigned int n, const char *text)
{
	char bytes[3 * OKCOV_INSN_MAX + 1];

	if (w->c->quiet)
		return;
	hexdump(bytes, w->t->bytes + (addr - w->t->addr),
		n > OKCOV_INSN_MAX ? OKCOV_INSN_MAX : n);
	printf("# %s: %s+0x%" PRIx64 " (%" PRIx64 "): %s: %s\n", what, w->fn,
	       addr - w->fstart, addr, bytes, text);
}

static int in_list(const char *m)
{
	int i;

	for (i = 0; unsupported[i]; i++)
		if (!strcmp(m, unsupported[i]))
			return 1;
	return 0;
}

/*
 * An instruction that runs past the next symbol: objdump stops at the
 * symbol and shows the bytes before it as .byte or lone prefixes. Fine
 * when a function does start inside okcov's instruction (retbleed's and
 * SRSO's untraining code hide a ret inside a test or movabs).
 */
static void cut_end(struct walk *w, uint64_t next_fn)
{
	if (!w->cut.on)
		return;
	w->cut.on = 0;
	if (next_fn > w->cut.addr && next_fn < w->cut.end) {
		w->c->cut++;
		finding(w, "cut", w->cut.addr, w->cut.end - w->cut.addr,
			"crosses into the next function");
	} else {
		w->c->disagree++;
		finding(w, "DISAGREE", w->cut.addr, w->cut.n, w->cut.why);
	}
}

static int objdump_gap(const u8 *p, unsigned int len)
{
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(objdump_gaps); i++) {
		if (objdump_gaps[i].n != len)
			continue;
		for (j = 0; j < len; j++)
			if ((p[j] & objdump_gaps[i].mask[j]) != objdump_gaps[i].b[j])
				break;
		if (j == len)
			return 1;
	}
	return 0;
}

/* One objdump instruction line at @addr: its bytes and text. */
static void compare_one(struct walk *w, uint64_t addr, unsigned int n,
			const char *text)
{
	const struct text *t = w->t;
	const u8 *p = t->bytes + (addr - t->addr);
	uint64_t avail = t->size - (addr - t->addr), want, got;
	struct counts *c = w->c;
	char m[32], why[200];
	struct okcov_insn insn;
	const char *ops;
	int ret, kind;
	s32 disp;

	ret = okcov_insn_decode(&insn, p, avail > 64 ? 64 : avail);
	w->sync = !ret;
	w->expect = addr + (ret ? 0 : insn.len);
	c->insns++;
	ops = mnemonic(text, m, sizeof(m));
	if (!strcmp(m, "(bad)")) {
		if (!ret && objdump_gap(p, insn.len)) {
			c->gap++;
			finding(w, "objdump-gap", addr, insn.len,
				"objdump (bad), okcov decodes what binutils 2.40 does not");
			w->resync = 1;
		} else if (ret == -EILSEQ) {
			c->bad++;
			finding(w, "bad", addr, 8, "objdump (bad), okcov -EILSEQ");
		} else {
			c->disagree++;
			snprintf(why, sizeof(why), "objdump (bad), okcov %d: len %u",
				 ret, ret ? 0 : insn.len);
			finding(w, "DISAGREE", addr, 8, why);
		}
		return;
	}
	if (ret) {
		if (ret == -EILSEQ && in_list(m)) {
			c->unsupported++;
			finding(w, "unsupported", addr, n, text);
		} else {
			c->disagree++;
			snprintf(why, sizeof(why), "okcov %s, objdump: %s",
				 ret == -EILSEQ ? "-EILSEQ" : "-ENODATA", text);
			finding(w, "DISAGREE", addr, n, why);
		}
		return;
	}
	why[0] = 0;
	kind = objdump_kind(m, ops);
	if (insn.len != n) {
		snprintf(why, sizeof(why), "okcov len %u, objdump %u: %s",
			 insn.len, n, text);
		if (insn.len > n && (!m[0] || !strcmp(m, ".byte"))) {
			/* maybe cut short by a symbol: see cut_end() */
			w->cut.on = 1;
			w->cut.addr = addr;
			w->cut.end = addr + insn.len;
			w->cut.n = insn.len;
			memcpy(w->cut.why, why, sizeof(why));
			return;
		}
	} else if (kind != insn.kind &&
		   !(kind == -1 && (insn.kind == OKCOV_KIND_NOP ||
				    insn.kind == OKCOV_KIND_OTHER))) {
		snprintf(why, sizeof(why), "okcov kind %u, objdump %d: %s",
			 insn.kind, kind, text);
	} else if (insn.kind == OKCOV_KIND_JMP || insn.kind == OKCOV_KIND_JCC ||
		   insn.kind == OKCOV_KIND_CALL || insn.kind == OKCOV_KIND_LOOP) {
		want = address_in(ops);
		got = addr + insn.len + (int64_t)insn.rel;
		c->targets++;
		if (want != got)
			snprintf(why, sizeof(why), "okcov target %" PRIx64 ": %s",
				 got, text);
	} else if (!!(insn.flags & OKCOV_INSN_RIPREL) !=
		   !!(strstr(ops, "(%rip)") || strstr(ops, "(%eip)"))) {
		snprintf(why, sizeof(why), "okcov RIP-relative %d: %s",
			 !!(insn.flags & OKCOV_INSN_RIPREL), text);
	} else if ((insn.flags & OKCOV_INSN_RIPREL) && strstr(ops, "# ")) {
		memcpy(&disp, p + insn.disp_off, 4);
		want = address_in(strstr(ops, "# "));
		got = addr + insn.len + (int64_t)disp;
		c->riprel++;
		if (insn.disp_size != 4 || want != got)
			snprintf(why, sizeof(why), "okcov RIP target %" PRIx64 ": %s",
				 got, text);
	}
	if (why[0]) {
		c->disagree++;
		finding(w, "DISAGREE", addr, n, why);
	}
}

/*
 * Past an instruction objdump does not know, its listing is out of step:
 * walk okcov's decoding up to objdump's @addr, unchecked, until both
 * start an instruction at the same address. 0 while out of step.
 */
static int resync(struct walk *w, uint64_t addr)
{
	const struct text *t = w->t;
	struct okcov_insn insn;
	uint64_t left;

	while (w->expect < addr) {
		left = t->addr + t->size - w->expect;
		if (okcov_insn_decode(&insn, t->bytes + (w->expect - t->addr),
				      left > 64 ? 64 : left))
			break;
		w->expect += insn.len;
		w->c->unchecked++;
	}
	if (addr < w->expect)
		return 0;
	w->resync = 0;
	return 1;
}

/*
 * Walk an objdump listing. Each function starts at its header; within it,
 * each instruction must start where okcov's previous one ended (after a
 * (bad) or -EILSEQ, objdump's next line resynchronises both). @stop: where
 * the listing was told to stop (--stop-address), or 0.
 */
static void compare(FILE *in, const struct text *t, struct counts *c,
		    uint64_t stop)
{
	struct walk w = { .t = t, .c = c, .fn = "?", .stop = stop };
	char line[1024], *p, *end;
	uint64_t addr;
	unsigned int n;

	while (fgets(line, sizeof(line), in)) {
		line[strcspn(line, "\n")] = 0;
		addr = strtoull(line, &end, 16);
		if (end == line)
			continue;
		if (!strncmp(end, " <", 2) && end[strlen(end) - 1] == ':') {
			cut_end(&w, addr);
			snprintf(w.fn, sizeof(w.fn), "%.*s",
				 (int)(strlen(end) - 4), end + 2);
			w.fstart = w.expect = addr;
			w.sync = 1;
			w.resync = 0;
			c->functions++;
			continue;
		}
		if (strncmp(end, ":\t", 2) || addr < t->addr ||
		    addr >= t->addr + t->size)
			continue;
		p = end + 2;
		for (n = 0; isxdigit((unsigned char)p[0]) &&
		     isxdigit((unsigned char)p[1]) && p[2] == ' '; p += 3) {
			if (strtoul(p, NULL, 16) != t->bytes[addr - t->addr + n])
				c->disagree++;	/* wrong vmlinux: never quiet */
			n++;
		}
		while (*p == ' ' || *p == '\t')
			p++;
		if (!n)
			continue;
		if (w.cut.on) {
			/* the rest of a cut instruction, as objdump shows it */
			if (addr < w.cut.end)
				continue;
			cut_end(&w, 0);
		}
		if (w.resync && !resync(&w, addr))
			continue;
		if (w.sync && addr != w.expect) {
			c->disagree++;
			finding(&w, "DISAGREE", addr, n,
				"objdump's instruction is not where okcov's previous one ended");
		}
		compare_one(&w, addr, n, p);
	}
	cut_end(&w, stop ? stop : t->addr + t->size);
}

/* -------------------------------------------------------------- unit */

struct unit {
	const char *name;
	u8 n, b[OKCOV_INSN_MAX + 2];
	int ret;
	u8 len, kind, flags, disp_size, imm_size;
	s32 rel;
};

#define K(k)	OKCOV_KIND_##k
#define F(f)	OKCOV_INSN_##f

static const struct unit units[] = {
	{ "mov rip-relative", 7, { 0x48, 0x8b, 0x05, 0x10, 0, 0, 0 }, 0,
	  7, K(OTHER), F(MODRM) | F(RIPREL), 4, 0 },
	{ "cmpl imm8 rip-relative", 7, { 0x83, 0x3d, 1, 2, 3, 4, 0 }, 0,
	  7, K(OTHER), F(MODRM) | F(RIPREL), 4, 1 },
	{ "mov sib disp8", 5, { 0x48, 0x8b, 0x44, 0x24, 0x08 }, 0,
	  5, K(OTHER), F(MODRM) | F(SIB), 1, 0 },
	{ "mov sib base 5 no disp8", 7, { 0x8b, 0x04, 0x25, 0, 0, 0, 0 }, 0,
	  7, K(OTHER), F(MODRM) | F(SIB), 4, 0 },
	{ "mov %cr3 (mod ignored)", 3, { 0x0f, 0x20, 0x58 }, 0,
	  3, K(OTHER), F(MODRM), 0, 0 },
	{ "66 mov imm16", 4, { 0x66, 0xb8, 0x34, 0x12 }, 0,
	  4, K(OTHER), 0, 0, 2 },
	{ "66 add imm16", 5, { 0x66, 0x81, 0xc0, 0x34, 0x12 }, 0,
	  5, K(OTHER), F(MODRM), 0, 2 },
	{ "66 REX.W add imm32", 8, { 0x66, 0x48, 0x81, 0xc0, 1, 2, 3, 4 }, 0,
	  8, K(OTHER), F(MODRM), 0, 4 },
	{ "movabs imm64", 10, { 0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8 }, 0,
	  10, K(OTHER), 0, 0, 8 },
	{ "movabs moffs64", 9, { 0xa1, 1, 2, 3, 4, 5, 6, 7, 8 }, 0,
	  9, K(OTHER), 0, 0, 8 },
	{ "67 mov moffs32", 6, { 0x67, 0xa1, 1, 2, 3, 4 }, 0,
	  6, K(OTHER), 0, 0, 4 },
	{ "test imm32", 6, { 0xf7, 0xc0, 1, 2, 3, 4 }, 0,
	  6, K(OTHER), F(MODRM), 0, 4 },
	{ "not (no imm)", 2, { 0xf7, 0xd0 }, 0, 2, K(OTHER), F(MODRM), 0, 0 },
	{ "test imm8", 3, { 0xf6, 0xc3, 0xcc }, 0,
	  3, K(OTHER), F(MODRM), 0, 1 },
	{ "enter", 4, { 0xc8, 0x10, 0, 1 }, 0, 4, K(OTHER), 0, 0, 3 },
	{ "ret imm16", 3, { 0xc2, 8, 0 }, 0, 3, K(RET), 0, 0, 2 },
	{ "ret", 1, { 0xc3 }, 0, 1, K(RET), 0, 0, 0 },
	{ "call rel32", 5, { 0xe8, 0xfb, 0xff, 0xff, 0xff }, 0,
	  5, K(CALL), 0, 0, 4, -5 },
	{ "jmp rel8", 2, { 0xeb, 0xfe }, 0, 2, K(JMP), 0, 0, 1, -2 },
	{ "jz rel32", 6, { 0x0f, 0x84, 0, 1, 0, 0 }, 0,
	  6, K(JCC), 0, 0, 4, 256 },
	{ "jrcxz", 2, { 0xe3, 0x10 }, 0, 2, K(LOOP), 0, 0, 1, 16 },
	{ "call *%rax", 2, { 0xff, 0xd0 }, 0, 2, K(CALL_IND), F(MODRM), 0, 0 },
	{ "jmp *rip", 6, { 0xff, 0x25, 0, 0, 0, 0 }, 0,
	  6, K(JMP_IND), F(MODRM) | F(RIPREL), 4, 0 },
	{ "int3", 1, { 0xcc }, 0, 1, K(INT3), 0, 0, 0 },
	{ "ud2", 2, { 0x0f, 0x0b }, 0, 2, K(UD), 0, 0, 0 },
	{ "ud1", 3, { 0x0f, 0xb9, 0xcc }, 0, 3, K(UD), F(MODRM), 0, 0 },
	{ "nop", 1, { 0x90 }, 0, 1, K(NOP), 0, 0, 0 },
	{ "xchg %eax,%r8d", 2, { 0x41, 0x90 }, 0, 2, K(OTHER), 0, 0, 0 },
	{ "nopw 10 bytes", 10,
	  { 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0 }, 0,
	  10, K(NOP), F(MODRM) | F(SIB), 4, 0 },
	{ "endbr64", 4, { 0xf3, 0x0f, 0x1e, 0xfa }, 0,
	  4, K(NOP), F(MODRM) | F(ENDBR), 0, 0 },
	{ "hlt", 1, { 0xf4 }, 0, 1, K(STOP), 0, 0, 0 },
	{ "syscall", 2, { 0x0f, 0x05 }, 0, 2, K(STOP), 0, 0, 0 },
	{ "xsha256 (PadLock)", 4, { 0xf3, 0x0f, 0xa6, 0xd0 }, 0,
	  4, K(OTHER), F(MODRM), 0, 0 },
	{ "vzeroupper", 3, { 0xc5, 0xf8, 0x77 }, 0,
	  3, K(OTHER), F(VEX), 0, 0 },
	{ "vmovdqa (%rsp),%ymm0", 5, { 0xc5, 0xfd, 0x6f, 0x04, 0x24 }, 0,
	  5, K(OTHER), F(VEX) | F(MODRM) | F(SIB), 0, 0 },
	{ "vpshufd imm8", 5, { 0xc5, 0xf9, 0x70, 0xc1, 0x1b }, 0,
	  5, K(OTHER), F(VEX) | F(MODRM), 0, 1 },
	{ "vinsertf128 (c4 map 3)", 6, { 0xc4, 0xe3, 0x7d, 0x18, 0xc1, 1 }, 0,
	  6, K(OTHER), F(VEX) | F(MODRM), 0, 1 },
	{ "vpshufb (c4 map 2) rip", 9,
	  { 0xc4, 0xe2, 0x7d, 0x00, 0x05, 0, 0, 0, 0 }, 0,
	  9, K(OTHER), F(VEX) | F(MODRM) | F(RIPREL), 4, 0 },
	{ "evex vmovdqa32 disp8", 8,
	  { 0x62, 0xf1, 0x7d, 0x48, 0x6f, 0x44, 0x24, 0x01 }, 0,
	  8, K(OTHER), F(EVEX) | F(MODRM) | F(SIB), 1, 0 },
	{ "evex vpternlogd (map 3)", 7,
	  { 0x62, 0xf3, 0x75, 0x48, 0x25, 0xc2, 0x96 }, 0,
	  7, K(OTHER), F(EVEX) | F(MODRM), 0, 1 },
	{ "evex vaddph (map 5)", 6, { 0x62, 0xf5, 0x7c, 0x48, 0x58, 0xc1 }, 0,
	  6, K(OTHER), F(EVEX) | F(MODRM), 0, 0 },
	{ "15 bytes", 15, { 0x26, 0x26, 0x26, 0x26, 0x26, 0x26, 0x26, 0x26,
			    0x26, 0x26, 0x0f, 0x1f, 0x44, 0, 0 }, 0,
	  15, K(NOP), F(MODRM) | F(SIB), 1, 0 },
	/* The invalid ones. */
	{ "16 bytes", 16, { 0x26, 0x26, 0x26, 0x26, 0x26, 0x26, 0x26, 0x26,
			    0x26, 0x26, 0x26, 0x0f, 0x1f, 0x44, 0, 0 },
	  -EILSEQ },
	{ "push %es", 1, { 0x06 }, -EILSEQ },
	{ "call far", 7, { 0x9a, 0, 0, 0, 0, 0, 0 }, -EILSEQ },
	{ "jmp far", 7, { 0xea, 0, 0, 0, 0, 0, 0 }, -EILSEQ },
	{ "into", 1, { 0xce }, -EILSEQ },
	{ "3DNow!", 4, { 0x0f, 0x0f, 0xc1, 0xb4 }, -EILSEQ },
	{ "REX before a prefix", 3, { 0x48, 0x66, 0x90 }, -EILSEQ },
	{ "66 call (vendor-dependent)", 5, { 0x66, 0xe8, 0, 0, 0 }, -EILSEQ },
	{ "PadLock with memory", 3, { 0x0f, 0xa7, 0x00 }, -EILSEQ },
	{ "XOP", 5, { 0x8f, 0xe9, 0x78, 0xe1, 0xc1 }, -EILSEQ },
	{ "VEX map 4", 5, { 0xc4, 0xe4, 0x7d, 0x00, 0xc1 }, -EILSEQ },
	{ "EVEX map 4 (APX)", 6, { 0x62, 0xf4, 0x7c, 0x48, 0x00, 0xc1 },
	  -EILSEQ },
	{ "call rel32 cut short", 3, { 0xe8, 0, 0 }, -ENODATA },
	{ "prefix only", 1, { 0x66 }, -ENODATA },
	{ "ModRM cut short", 2, { 0x48, 0x8b }, -ENODATA },
};

/* A tiny listing for the comparer; @doctor spoils one line. */
static const u8 unit_text[] = {
	0x55, 0x48, 0x89, 0xe5, 0xe8, 0xf7, 0xff, 0xff, 0xff, 0x5d, 0xc3,
};

static const char *const unit_listing[] = {
	"0000000000001000 <f>:",
	"    1000:\t55 \tpush   %rbp",
	"    1001:\t48 89 e5 \tmov    %rsp,%rbp",
	"    1004:\te8 f7 ff ff ff \tcall   0000000000001000 <f>",
	"    1009:\t5d \tpop    %rbp",
	"    100a:\tc3 \tret",
};

static unsigned long unit_compare(int doctor)
{
	struct text t = { unit_text, 0x1000, sizeof(unit_text) };
	struct counts c = { .quiet = 1 };
	char buf[512] = "";
	unsigned int i;
	FILE *in;

	for (i = 0; i < ARRAY_SIZE(unit_listing); i++) {
		if (doctor == 1 && i == 3) {
			/* the call's target one byte off */
			strcat(buf, "    1004:\te8 f7 ff ff ff \tcall   0000000000001001 <f+1>\n");
			continue;
		}
		if (doctor == 2 && i == 2) {
			/* the mov two instructions long */
			strcat(buf, "    1001:\t48 89 \tmov    %rsp,%rbp\n    1003:\te5 \tin\n");
			continue;
		}
		strcat(buf, unit_listing[i]);
		strcat(buf, "\n");
	}
	in = fmemopen(buf, strlen(buf), "r");
	if (!in)
		abort();
	compare(in, &t, &c, 0);
	fclose(in);
	return c.disagree;
}

static int unit(void)
{
	unsigned int i, n = ARRAY_SIZE(units), bad = 0, nr = 0;
	const struct unit *u;
	struct okcov_insn insn;
	unsigned long d;
	int ret, ok;

	printf("TAP version 13\n1..%u\n", n + 3);
	for (i = 0; i < n; i++) {
		u = &units[i];
		ret = okcov_insn_decode(&insn, u->b, u->n);
		ok = ret == u->ret;
		if (ok && !ret)
			ok = insn.len == u->len && insn.kind == u->kind &&
			     insn.flags == u->flags &&
			     insn.disp_size == u->disp_size &&
			     insn.imm_size == u->imm_size &&
			     insn.rel == u->rel;
		if (!ok) {
			bad++;
			printf("# got %d: len %u kind %u flags %#x disp %u imm %u rel %d\n",
			       ret, insn.len, insn.kind, insn.flags,
			       insn.disp_size, insn.imm_size, insn.rel);
		}
		printf("%sok %u - %s\n", ok ? "" : "not ", ++nr, u->name);
	}
	for (i = 0; i < 3; i++) {
		d = unit_compare(i);
		ok = i ? d > 0 : d == 0;
		bad += !ok;
		printf("%sok %u - comparer on a %s listing: %lu disagreements\n",
		       ok ? "" : "not ", ++nr, i ? "doctored" : "correct", d);
	}
	printf("# %u passed, %u failed\n", nr - bad, bad);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct counts c = { 0 };
	struct text t;

	if (argc == 2 && !strcmp(argv[1], "unit"))
		return unit();
	if (argc == 5 && !strcmp(argv[1], "syms"))
		return syms(argv[2], atoi(argv[3]), argv[4]);
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "compare")) {
		load_text(argv[2], &t);
		compare(stdin, &t, &c, argc == 4 ? strtoull(argv[3], NULL, 0) : 0);
		printf("result functions=%lu insns=%lu disagree=%lu bad=%lu unsupported=%lu cut=%lu targets=%lu riprel=%lu gap=%lu unchecked=%lu\n",
		       c.functions, c.insns, c.disagree, c.bad, c.unsupported,
		       c.cut, c.targets, c.riprel, c.gap, c.unchecked);
		return c.disagree ? 1 : 0;
	}
	fprintf(stderr, "usage: decode_test unit | syms VMLINUX PARTS ARGS | compare VMLINUX [STOP]\n");
	return 2;
}
