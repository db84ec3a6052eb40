// SPDX-License-Identifier: GPL-2.0
/*
 * okcov-cover: coverage records to functions, and the profile file.
 */
#include "cover.h"

struct fn {
	char *name;		/* normalized */
	const char *mod;
	uint64_t hits, pcs, consts;
	unsigned int sizes;
	bool remote;
};

static int cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->remote != y->remote)
		return x->remote - y->remote;
	if (x->pc != y->pc)
		return x->pc < y->pc ? -1 : 1;
	return 0;
}

static int cmp_fn(const void *a, const void *b)
{
	const struct fn *x = a, *y = b;
	int r;

	if (x->remote != y->remote)
		return x->remote - y->remote;
	r = strcmp(x->mod, y->mod);
	return r ? r : strcmp(x->name, y->name);
}


void cover_add(struct cover *c, uint64_t pc, uint64_t type, bool remote)
{
	struct rec *r;

	if (c->nrecs == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 4096;
		c->recs = xrealloc(c->recs, c->cap * sizeof(*c->recs));
	}
	r = &c->recs[c->nrecs++];
	r->pc = pc;
	r->hits = 1;
	r->remote = remote;
	r->sizes = c->cmp ? 1u << ((type & KCOV_CMP_MASK) >> 1) : 0;
	r->cmps_const = c->cmp && (type & KCOV_CMP_CONST);
}

/* Sort and merge equal (context, PC) records. */
void cover_merge(struct cover *c)
{
	size_t i, n = 0;

	qsort(c->recs, c->nrecs, sizeof(*c->recs), cmp_rec);
	for (i = 0; i < c->nrecs; i++) {
		if (n && !cmp_rec(&c->recs[n - 1], &c->recs[i])) {
			c->recs[n - 1].hits += c->recs[i].hits;
			c->recs[n - 1].sizes |= c->recs[i].sizes;
			c->recs[n - 1].cmps_const += c->recs[i].cmps_const;
		} else {
			c->recs[n++] = c->recs[i];
		}
	}
	c->nrecs = n;
}

static void sizes_str(unsigned int sizes, char *buf)
{
	char *p = buf;

	*p = '\0';
	for (int i = 0; i < 4; i++)
		if (sizes & (1u << i))
			p += sprintf(p, "%s%d", p == buf ? "" : ",", 1 << i);
	if (p == buf)
		strcpy(buf, "-");
}


void __printf(3, 4)
hdr_add(struct header *h, const char *key, const char *fmt, ...)
{
	char *val, *line, *p;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&val, fmt, ap);
	va_end(ap);
	if (r < 0)
		die("out of memory");
	for (p = val; *p; p++)		/* one line per key */
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	while (p > val && p[-1] == ' ')
		*--p = '\0';
	if (asprintf(&line, "# %s: %s", key, val) < 0)
		die("out of memory");
	free(val);
	h->lines = xrealloc(h->lines, (h->n + 1) * sizeof(*h->lines));
	h->lines[h->n++] = line;
}

/*
 * Write the profile: header, one "fn" line per function, one "pc" line per
 * distinct PC ("rfn"/"rpc" for remote coverage), then the "end" line that
 * tells a complete file from a truncated one.
 */
int write_profile(FILE *out, struct header *h, struct cover *c,
			 uint64_t pc_bias)
{
	struct fn *fns = NULL;
	size_t nfns = 0, i, j, npc[2] = { 0, 0 }, nfn[2] = { 0, 0 };
	char sizes[16];

	fprintf(out, "%s\n", PROFILE_MAGIC);
	for (i = 0; i < h->n; i++)
		fprintf(out, "%s\n", h->lines[i]);
	fprintf(out, "# fields: %s\n", c->cmp ?
		"fn NAME MODULE CMPS PCS SIZES CONSTS | pc PC SYMBOL+OFF MODULE CMPS SIZES CONSTS" :
		"fn NAME MODULE HITS PCS | pc PC SYMBOL+OFF MODULE HITS");

	fns = xrealloc(NULL, c->nrecs * sizeof(*fns));
	for (i = 0; i < c->nrecs; i++) {
		const struct ksym *s = ksyms_lookup(c->recs[i].pc + pc_bias, NULL);
		struct fn *f = &fns[nfns++];

		if (s) {
			f->name = xrealloc(NULL, strlen(s->name) + 1);
			normalize_name(s->name, f->name);
			f->mod = sym_mod(s);
		} else {
			f->name = xstrdup("[unknown]");
			f->mod = "unknown";
		}
		f->hits = c->recs[i].hits;
		f->pcs = 1;
		f->sizes = c->recs[i].sizes;
		f->consts = c->recs[i].cmps_const;
		f->remote = c->recs[i].remote;
	}
	qsort(fns, nfns, sizeof(*fns), cmp_fn);
	for (i = 0; i < nfns; i = j) {
		struct fn f = fns[i];

		for (j = i + 1; j < nfns && !cmp_fn(&fns[i], &fns[j]); j++) {
			f.hits += fns[j].hits;
			f.pcs++;
			f.sizes |= fns[j].sizes;
			f.consts += fns[j].consts;
		}
		nfn[f.remote]++;
		fprintf(out, "%s %s %s %llu %llu", f.remote ? "rfn" : "fn",
			f.name, f.mod, (unsigned long long)f.hits,
			(unsigned long long)f.pcs);
		if (c->cmp) {
			sizes_str(f.sizes, sizes);
			fprintf(out, " %s %llu", sizes,
				(unsigned long long)f.consts);
		}
		fputc('\n', out);
	}
	for (i = 0; i < nfns; i++)
		free(fns[i].name);
	free(fns);

	for (i = 0; i < c->nrecs; i++) {
		struct rec *r = &c->recs[i];
		const struct ksym *s = ksyms_lookup(r->pc + pc_bias, NULL);

		npc[r->remote]++;
		fprintf(out, "%s %016llx ", r->remote ? "rpc" : "pc",
			(unsigned long long)r->pc);
		if (s)
			fprintf(out, "%s+0x%llx %s", s->name,
				(unsigned long long)(r->pc + pc_bias - s->addr),
				sym_mod(s));
		else
			fprintf(out, "[unknown] unknown");
		fprintf(out, " %llu", (unsigned long long)r->hits);
		if (c->cmp) {
			sizes_str(r->sizes, sizes);
			fprintf(out, " %s %llu", sizes,
				(unsigned long long)r->cmps_const);
		}
		fputc('\n', out);
	}
	fprintf(out, "end fn %zu pc %zu rfn %zu rpc %zu\n",
		nfn[0], npc[0], nfn[1], npc[1]);
	return fflush(out) ? -errno : 0;
}

/* ---- where a profile came from ---- */

char *read_line(const char *path)
{
	char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return xstrdup(buf);
}

/* A whole (small) file as a string, or NULL. */
char *read_file(const char *path)
{
	size_t len = 0, cap = 0, n;
	char *buf = NULL;
	FILE *f = fopen(path, "r");

	if (!f)
		return NULL;
	do {
		if (cap - len < 4096)
			buf = xrealloc(buf, cap = cap + 65536);
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
	} while (n > 0);
	fclose(f);
	buf[len] = '\0';
	return buf;
}

/* The GNU build id note of vmlinux, from /sys/kernel/notes. */
static bool kernel_build_id(char *hex, size_t len)
{
	unsigned char buf[4096];
	size_t n, off = 0;
	FILE *f = fopen("/sys/kernel/notes", "rb");

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	while (off + 12 <= n) {
		uint32_t namesz, descsz, type;
		size_t name_off = off + 12, desc_off;

		memcpy(&namesz, buf + off, 4);
		memcpy(&descsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		desc_off = name_off + ((namesz + 3) & ~3u);
		if (desc_off + descsz > n)
			break;
		if (type == 3 && namesz == 4 && !memcmp(buf + name_off, "GNU", 4) &&
		    descsz * 2 < len) {
			for (uint32_t i = 0; i < descsz; i++)
				sprintf(hex + 2 * i, "%02x", buf[desc_off + i]);
			return true;
		}
		off = desc_off + ((descsz + 3) & ~3u);
	}
	return false;
}

static void shell_quote(const char *s, char **out, size_t *len, size_t *cap)
{
	bool plain = *s != '\0';
	const char *p;

	for (p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("@%_-+=:,./", *p))
			plain = false;
	if (*cap < *len + 4 * strlen(s) + 4) {
		*cap = *len + 4 * strlen(s) + 64;
		*out = xrealloc(*out, *cap);
	}
	if (plain) {
		*len += sprintf(*out + *len, "%s", s);
		return;
	}
	(*out)[(*len)++] = '\'';
	for (p = s; *p; p++) {
		if (*p == '\'')
			*len += sprintf(*out + *len, "'\\''");
		else
			(*out)[(*len)++] = *p;
	}
	(*out)[(*len)++] = '\'';
	(*out)[*len] = '\0';
}

char *command_line(char **argv)
{
	size_t len = 0, cap = 0;
	char *out = NULL;

	for (; *argv; argv++) {
		if (len) {
			out = xrealloc(out, cap = cap + 1);
			out[len++] = ' ';
			out[len] = '\0';
		}
		shell_quote(*argv, &out, &len, &cap);
	}
	return out ? out : xstrdup("");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* okcov's version and every module parameter (the function set in use). */
void okcov_module_header(struct header *h)
{
	const char *dir = "/sys/module/okcov/parameters";
	char path[512], *v, **names = NULL;
	size_t n = 0, i;
	struct dirent *de;
	DIR *d;

	v = read_line("/sys/module/okcov/version");
	if (v)
		hdr_add(h, "okcov.version", "%s", v);
	free(v);
	v = read_line("/sys/module/okcov/srcversion");
	hdr_add(h, "okcov.srcversion", "%s", v ? v : "unknown");
	free(v);
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		names = xrealloc(names, (n + 1) * sizeof(*names));
		names[n++] = xstrdup(de->d_name);
	}
	if (d)
		closedir(d);
	qsort(names, n, sizeof(*names), cmp_str);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		v = read_line(path);
		if (v) {
			snprintf(path, sizeof(path), "okcov.param.%s", names[i]);
			hdr_add(h, path, "%s", *v ? v : "(none)");
		}
		free(v);
		free(names[i]);
	}
	free(names);
}

void system_header(struct header *h)
{
	struct utsname u;
	char id[128], *v;

	if (!uname(&u)) {
		hdr_add(h, "kernel.release", "%s", u.release);
		hdr_add(h, "kernel.machine", "%s", u.machine);
	}
	v = read_line("/proc/version");
	if (v)
		hdr_add(h, "kernel.version", "%s", v);
	free(v);
	hdr_add(h, "kernel.build_id", "%s",
		kernel_build_id(id, sizeof(id)) ? id : "unknown");
}

