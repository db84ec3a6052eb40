// SPDX-License-Identifier: GPL-2.0
/*
 * okcov-cover: addresses of an ELF file to source lines, through its
 * DWARF: llvm-symbolizer (fast, and it knows where each function is
 * declared) or binutils' addr2line (everywhere, and the only one here
 * that takes a module's addresses in sections other than .text).
 */
#include <glob.h>

#include "cover.h"

static const char *llvm_symbolizer(void)
{
	static char *found;
	static bool looked;
	const char *path = getenv("PATH");
	char buf[4096];
	glob_t g;

	if (looked)
		return found;
	looked = true;
	while (path && *path) {
		size_t n = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/llvm-symbolizer", (int)n, path);
		if (n && !access(buf, X_OK))
			return found = xstrdup(buf);
		path += n + (path[n] == ':');
	}
	/* Debian's llvm-N packages install it only under a versioned name. */
	if (!glob("/usr/lib/llvm-*/bin/llvm-symbolizer", 0, NULL, &g)) {
		found = xstrdup(g.gl_pathv[g.gl_pathc - 1]);
		globfree(&g);
	}
	return found;
}

/* "auto" (default), "llvm" or "addr2line": okcov-cover lcov --symbolizer */
const char *symbolizer_choice = "auto";

bool symbolizer_is_llvm(void)
{
	if (!strcmp(symbolizer_choice, "addr2line"))
		return false;
	if (!llvm_symbolizer()) {
		if (!strcmp(symbolizer_choice, "llvm"))
			die("no llvm-symbolizer (Debian's llvm package has it)");
		return false;
	}
	return true;
}

/* Run argv with stdin from the file `in`; returns its stdout. */
static FILE *spawn(char *const argv[], const char *in, pid_t *pid)
{
	int fds[2], fd;

	if (pipe2(fds, O_CLOEXEC))
		die("pipe: %s", strerror(errno));
	fflush(NULL);
	*pid = fork();
	if (*pid < 0)
		die("fork: %s", strerror(errno));
	if (*pid == 0) {
		fd = open(in, O_RDONLY);
		if (fd < 0 || dup2(fd, 0) < 0 || dup2(fds[1], 1) < 0)
			_exit(127);
		execvp(argv[0], argv);
		fprintf(stderr, "%s: %s: %s\n", prog, argv[0], strerror(errno));
		_exit(127);
	}
	close(fds[1]);
	return fdopen(fds[0], "r");
}

static void reap(pid_t pid, const char *what)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		die("%s failed (status %d)", what, status);
}

static char *known(const char *file)
{
	return *file && strcmp(file, "??") ? xstrdup(file) : NULL;
}

/*
 * llvm-symbolizer --verbose: per address, one block of frames (innermost
 * first: a name line, then indented "Key: value" lines), then a blank line.
 */
static void parse_llvm(FILE *f, struct srcloc *out, size_t n)
{
	size_t i = 0, linecap = 0;
	char *line = NULL, *file = NULL;
	unsigned int line_no = 0;
	bool first = true;
	ssize_t len;

	while (i < n && (len = getline(&line, &linecap, f)) > 0) {
		char *v;

		if (line[len - 1] == '\n')
			line[--len] = '\0';
		if (!len) {			/* the end of an address */
			out[i].fn_file = file;
			out[i].outer_line = line_no;
			file = NULL;
			first = true;
			i++;
			continue;
		}
		if (line[0] != ' ')		/* a frame's function name */
			continue;
		v = strstr(line, ": ");
		v = v ? v + 2 : line + len;
		if (!strncmp(line, "  Filename:", 11)) {
			free(file);
			file = known(v);
			if (first)
				out[i].file = known(v);
		} else if (!strncmp(line, "  Line:", 7)) {
			line_no = strtoul(v, NULL, 10);
			if (first)
				out[i].line = line_no;
			first = false;
		} else if (!strncmp(line, "  Function start line:", 22)) {
			out[i].fn_line = strtoul(v, NULL, 10);
		}
	}
	free(file);
	free(line);
	if (i < n)
		die("llvm-symbolizer: answered %zu addresses of %zu", i, n);
}

/* addr2line: one "FILE:LINE" line per address, "??:0" for none. */
static void parse_addr2line(FILE *f, struct srcloc *out, size_t n)
{
	size_t i = 0, linecap = 0;
	char *line = NULL, *colon;
	ssize_t len;

	while (i < n && (len = getline(&line, &linecap, f)) > 0) {
		line[strcspn(line, "\n")] = '\0';
		/* "file:12 (discriminator 3)" */
		if (strstr(line, " (discriminator "))
			*strstr(line, " (discriminator ") = '\0';
		colon = strrchr(line, ':');
		if (colon) {
			*colon = '\0';
			out[i].line = strtoul(colon + 1, NULL, 10);
			out[i].file = out[i].line ? known(line) : NULL;
			out[i].fn_file = out[i].file ? xstrdup(out[i].file) : NULL;
			out[i].outer_line = out[i].line;
		}
		i++;
	}
	free(line);
	if (i < n)
		die("addr2line: answered %zu addresses of %zu", i, n);
}

static void run_symbolizer(const struct elf_file *e, const char *section,
			   const uint64_t *addrs, size_t n, struct srcloc *out)
{
	char tmp[] = "/tmp/okcov-cover.XXXXXX", obj[4200];
	bool llvm = symbolizer_is_llvm() &&
		    (!e->rel || !section || !strcmp(section, ".text"));
	char *argv[8];
	FILE *f;
	pid_t pid;
	int fd;

	memset(out, 0, n * sizeof(*out));
	if (!n)
		return;
	fd = mkstemp(tmp);
	if (fd < 0)
		die("%s: %s", tmp, strerror(errno));
	f = fdopen(fd, "w");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "0x%llx\n", (unsigned long long)addrs[i]);
	if (fclose(f))
		die("%s: %s", tmp, strerror(errno));
	if (llvm) {
		snprintf(obj, sizeof(obj), "--obj=%s", e->path);
		argv[0] = (char *)llvm_symbolizer();
		argv[1] = "--verbose";
		argv[2] = "--no-demangle";
		argv[3] = obj;
		argv[4] = NULL;
	} else {
		argv[0] = "addr2line";
		argv[1] = "-e";
		argv[2] = (char *)e->path;
		argv[3] = NULL;
		if (e->rel && section) {
			argv[3] = "-j";
			argv[4] = (char *)section;
			argv[5] = NULL;
		}
	}
	f = spawn(argv, tmp, &pid);
	if (llvm)
		parse_llvm(f, out, n);
	else
		parse_addr2line(f, out, n);
	fclose(f);
	reap(pid, argv[0]);
	unlink(tmp);
}

/* ---- the cache: DIR/<build id>[.<section>].<symbolizer>.v2.lines ---- */

const char *symbol_cache_dir;

struct cached {
	uint64_t addr;
	struct srcloc loc;
};

static int cmp_cached(const void *a, const void *b)
{
	const struct cached *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static char *field_or_null(char *s)
{
	return strcmp(s, "-") ? xstrdup(s) : NULL;
}

/* "ADDR LINE FN_LINE OUTER_LINE FILE FN_FILE", tab-separated, "-" for none. */
static struct cached *cache_load(const char *path, size_t *n)
{
	size_t cap = 0, linecap = 0;
	struct cached *c = NULL;
	char *line = NULL, *f[6];
	FILE *fp = fopen(path, "r");

	*n = 0;
	if (!fp)
		return NULL;
	while (getline(&line, &linecap, fp) > 0) {
		char *s = line;
		int k;

		line[strcspn(line, "\n")] = '\0';
		for (k = 0; k < 6 && (f[k] = strsep(&s, "\t")); k++)
			;
		if (k < 6)
			continue;	/* a line cut short by a crash */
		if (*n == cap)
			c = xrealloc(c, (cap = cap * 2 + 4096) * sizeof(*c));
		c[*n].addr = strtoull(f[0], NULL, 16);
		c[*n].loc.line = strtoul(f[1], NULL, 10);
		c[*n].loc.fn_line = strtoul(f[2], NULL, 10);
		c[*n].loc.outer_line = strtoul(f[3], NULL, 10);
		c[*n].loc.file = field_or_null(f[4]);
		c[*n].loc.fn_file = field_or_null(f[5]);
		(*n)++;
	}
	free(line);
	fclose(fp);
	qsort(c, *n, sizeof(*c), cmp_cached);
	return c;
}

/*
 * Resolve n addresses of e: link-time addresses, or for a module offsets
 * into its section `section`; a file is NULL where the debug info has no
 * line. With symbol_cache_dir set and a build id, what an earlier run
 * resolved is read from the cache there, and only the rest is asked.
 */
void symbolize(const struct elf_file *e, const char *section,
	       const uint64_t *addrs, size_t n, struct srcloc *out)
{
	struct cached *c, key;
	size_t nc = 0, nmiss = 0, i;
	uint64_t *miss;
	struct srcloc *got;
	char path[4096];
	FILE *fp;

	if (!symbol_cache_dir || !e->build_id[0]) {
		run_symbolizer(e, section, addrs, n, out);
		return;
	}
	snprintf(path, sizeof(path), "%s/%s%s%s.%s.v2.lines", symbol_cache_dir,
		 e->build_id, section ? "." : "", section ? section : "",
		 symbolizer_is_llvm() ? "llvm" : "addr2line");
	c = cache_load(path, &nc);
	miss = xrealloc(NULL, n * sizeof(*miss));
	for (i = 0; i < n; i++) {
		struct cached *hit;

		key.addr = addrs[i];
		hit = c ? bsearch(&key, c, nc, sizeof(*c), cmp_cached) : NULL;
		if (hit)
			out[i] = hit->loc;
		else
			miss[nmiss++] = addrs[i];
	}
	if (nmiss) {
		got = xrealloc(NULL, nmiss * sizeof(*got));
		run_symbolizer(e, section, miss, nmiss, got);
		mkdir(symbol_cache_dir, 0755);
		fp = fopen(path, "a");
		if (!fp)
			warnx_("warning: %s: %s (not cached)", path, strerror(errno));
		for (i = 0, nc = 0; i < n; i++) {
			if (nc < nmiss && miss[nc] == addrs[i]) {
				out[i] = got[nc];
				if (fp)
					fprintf(fp, "%llx\t%u\t%u\t%u\t%s\t%s\n",
						(unsigned long long)addrs[i],
						got[nc].line, got[nc].fn_line,
						got[nc].outer_line,
						got[nc].file ? got[nc].file : "-",
						got[nc].fn_file ? got[nc].fn_file : "-");
				nc++;
			}
		}
		if (fp && fclose(fp))
			warnx_("warning: %s: %s", path, strerror(errno));
		free(got);
	}
	free(miss);
}
