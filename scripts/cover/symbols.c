// SPDX-License-Identifier: GPL-2.0
/*
 * okcov-cover: /proc/kallsyms, and the names of functions across kernels.
 */
#include "cover.h"

/*
 * GCC and clang clone or split a function under a new local symbol:
 * foo.constprop.0, foo.isra.0, foo.part.0, foo.cold, foo.cold.12,
 * foo.llvm.1234567, foo.lto_priv.0, foo.localalias, foo.specialized.1.
 * The same function must match across kernels, so the profile keys on
 * "foo". A name with any other dotted part is left as it is.
 */
static const char *const clone_suffixes[] = {
	"constprop", "isra", "part", "cold", "llvm", "lto_priv",
	"localalias", "specialized", "clone", NULL,
};

static bool is_clone_suffix(const char *s, size_t n)
{
	const char *const *p;

	for (p = clone_suffixes; *p; p++)
		if (strlen(*p) == n && !strncmp(*p, s, n))
			return true;
	return false;
}

static bool all_alnum(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]))
			return false;
	return n > 0;
}

/* Writes the normalized form of name into out (at least strlen + 1). */
void normalize_name(const char *name, char *out)
{
	const char *dot = strchr(name, '.'), *p;
	bool prev_suffix = false;

	strcpy(out, name);
	if (!dot || dot == name)
		return;
	/* every dotted part is a clone suffix or the number/hash after one */
	for (p = dot + 1;; ) {
		const char *e = strchr(p, '.');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (is_clone_suffix(p, n))
			prev_suffix = true;
		else if (!(prev_suffix && all_alnum(p, n)))
			return;
		if (!e)
			break;
		p = e + 1;
	}
	out[dot - name] = '\0';
}

/* ---- kallsyms (scripts/libokcov/kallsyms.c) ---- */

void load_kallsyms_or_die(const char *path)
{
	int err = ksyms_load_file(path);

	if (err == -ENOENT)
		die("%s: no text symbols", path);
	if (err == -EPERM)
		die("%s: addresses are hidden; run as root with kernel.kptr_restrict <= 1",
		    path);
	if (err)
		die("%s: %s", path, strerror(-err));
}

/* The module a symbol is in, as profiles name it: "vmlinux" for the core. */
const char *sym_mod(const struct ksym *s)
{
	return s->mod ? s->mod : "vmlinux";
}
