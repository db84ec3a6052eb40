// SPDX-License-Identifier: GPL-2.0
/*
 * okcov-cover: what lcov reads of an ELF file (vmlinux or a module's .ko):
 * its function symbols by name, its sections and its GNU build id.
 */
#include <elf.h>

#include "cover.h"

static int cmp_esym(const void *a, const void *b)
{
	const struct elf_sym *x = a, *y = b;
	int r = strcmp(x->name, y->name);

	if (r)
		return r;
	if (x->shndx != y->shndx)
		return x->shndx < y->shndx ? -1 : 1;
	return x->value < y->value ? -1 : x->value > y->value;
}

static void build_id(struct elf_file *e, const unsigned char *p, size_t n)
{
	size_t off = 0;

	while (off + 12 <= n) {
		uint32_t namesz, descsz, type;
		size_t desc;

		memcpy(&namesz, p + off, 4);
		memcpy(&descsz, p + off + 4, 4);
		memcpy(&type, p + off + 8, 4);
		desc = off + 12 + ((namesz + 3) & ~3u);
		if (desc + descsz > n)
			return;
		if (type == NT_GNU_BUILD_ID && namesz == 4 &&
		    !memcmp(p + off + 12, "GNU", 4) &&
		    descsz * 2 < sizeof(e->build_id)) {
			for (uint32_t i = 0; i < descsz; i++)
				sprintf(e->build_id + 2 * i, "%02x", p[desc + i]);
			return;
		}
		off = desc + ((descsz + 3) & ~3u);
	}
}

/*
 * Open path, an x86_64 or arm64 ELF64 file, or die. Its functions are the
 * FUNC and NOTYPE symbols of executable sections, less the padding and
 * CFI preambles, as in kallsyms.
 */
void elf_open(struct elf_file *e, const char *path)
{
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	const char *strtab = NULL;
	const Elf64_Sym *st = NULL;
	size_t nst = 0, i;
	struct stat sb;
	int fd;

	memset(e, 0, sizeof(*e));
	e->path = xstrdup(path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb))
		die("%s: %s", path, strerror(errno));
	e->len = sb.st_size;
	e->map = e->len ? mmap(NULL, e->len, PROT_READ, MAP_PRIVATE, fd, 0) :
		 MAP_FAILED;
	close(fd);
	eh = e->map;
	if (e->map == MAP_FAILED || e->len < sizeof(*eh) ||
	    memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(*sh) > e->len ||
	    eh->e_shstrndx >= eh->e_shnum)
		die("%s: not a 64-bit ELF file", path);
	e->rel = eh->e_type == ET_REL;
	e->machine = eh->e_machine;
	e->sh = sh = (const Elf64_Shdr *)((const char *)e->map + eh->e_shoff);
	e->shnum = eh->e_shnum;
	e->shstr = (const char *)e->map + sh[eh->e_shstrndx].sh_offset;
	for (i = 0; i < e->shnum; i++) {
		if (sh[i].sh_type != SHT_NOBITS &&
		    sh[i].sh_offset + sh[i].sh_size > e->len)
			die("%s: section %zu past the end of the file", path, i);
		if (sh[i].sh_type == SHT_NOTE)
			build_id(e, (const unsigned char *)e->map + sh[i].sh_offset,
				 sh[i].sh_size);
		if (sh[i].sh_type == SHT_SYMTAB && sh[i].sh_link < e->shnum) {
			st = (const Elf64_Sym *)((const char *)e->map +
						 sh[i].sh_offset);
			nst = sh[i].sh_size / sizeof(*st);
			strtab = (const char *)e->map + sh[sh[i].sh_link].sh_offset;
		}
	}
	if (!st)
		die("%s: no symbol table (a stripped file has no debug info either)",
		    path);
	e->syms = xrealloc(NULL, nst * sizeof(*e->syms));
	for (i = 0; i < nst; i++) {
		unsigned int type = ELF64_ST_TYPE(st[i].st_info);
		const char *name = strtab + st[i].st_name;

		if ((type != STT_FUNC && type != STT_NOTYPE) || !*name ||
		    st[i].st_shndx == SHN_UNDEF || st[i].st_shndx >= e->shnum ||
		    !(sh[st[i].st_shndx].sh_flags & SHF_EXECINSTR) ||
		    !strncmp(name, "__pfx_", 6) || !strncmp(name, "__cfi_", 6) ||
		    !strncmp(name, ".L", 2))
			continue;
		e->syms[e->nsyms].name = name;
		e->syms[e->nsyms].value = st[i].st_value;
		e->syms[e->nsyms].size = st[i].st_size;
		e->syms[e->nsyms].shndx = st[i].st_shndx;
		e->nsyms++;
	}
	qsort(e->syms, e->nsyms, sizeof(*e->syms), cmp_esym);
}

const char *elf_section_name(const struct elf_file *e, unsigned int shndx)
{
	const Elf64_Shdr *sh = e->sh;

	return shndx < e->shnum ? e->shstr + sh[shndx].sh_name : "?";
}

/* The symbols named name: *n of them from the returned index. */
size_t elf_lookup(const struct elf_file *e, const char *name, size_t *n)
{
	size_t lo = 0, hi = e->nsyms, first;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(e->syms[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	first = lo;
	while (lo < e->nsyms && !strcmp(e->syms[lo].name, name))
		lo++;
	*n = lo - first;
	return first;
}

/*
 * The @len bytes of code at @addr (a link address in vmlinux, an offset in
 * section @shndx of a module), or NULL if the file does not hold them all.
 */
const unsigned char *elf_text(const struct elf_file *e, unsigned int shndx,
			      uint64_t addr, size_t len)
{
	const Elf64_Shdr *sh = e->sh;
	unsigned int i;
	uint64_t at;

	for (i = 1; i < e->shnum; i++) {
		if ((e->rel && i != shndx) || sh[i].sh_type != SHT_PROGBITS ||
		    !(sh[i].sh_flags & SHF_EXECINSTR))
			continue;
		at = e->rel ? addr : addr - sh[i].sh_addr;
		if (at <= sh[i].sh_size && len <= sh[i].sh_size - at)
			return (const unsigned char *)e->map + sh[i].sh_offset + at;
	}
	return NULL;
}
