// SPDX-License-Identifier: GPL-2.0
/*
 * okcov-cover: run a command with coverage on (okcov or Linux's kcov).
 */
#include "cover.h"

/* okcov's counters (okcov(4), FILES): debugfs, root's. */
#define OKCOV_STATS	"/sys/kernel/debug/okcov"

enum abi { ABI_OKCOV, ABI_LINUX_KCOV };

struct buffer {
	int fd;
	uint64_t *words;
	size_t n;
};

static uint64_t parse_count(const char *s, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || (*end && strcmp(end, "K") && strcmp(end, "M")) ||
	    *s == '-')
		die("%s: not a count: '%s'", what, s);
	if (*end == 'K')
		v <<= 10;
	else if (*end == 'M')
		v <<= 20;
	return v;
}

/* A number in okcov's @dir (parameters, or counters); 0 where missing. */
static uint64_t okcov_number(const char *dir, const char *name)
{
	char path[128], *v;
	uint64_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	v = read_line(path);
	n = v ? strtoull(v, NULL, 10) : 0;
	free(v);
	return n;
}

static uint64_t max_entries_param(void)
{
	return okcov_number("/sys/module/okcov/parameters", "max_entries");
}

static void buffer_open(struct buffer *b, const char *dev, enum abi abi,
			size_t n)
{
	size_t bytes;
	uint64_t n64 = n;

	b->n = n;
	b->fd = open(dev, O_RDWR | O_CLOEXEC);
	if (b->fd < 0) {
		if (errno == ENOENT && abi == ABI_OKCOV)
			die("%s: %s (is okcov loaded? insmod okcov.ko)", dev,
			    strerror(errno));
		if (errno == ENOENT)
			die("%s: %s (needs CONFIG_KCOV and debugfs mounted)",
			    dev, strerror(errno));
		die("%s: %s%s", dev, strerror(errno),
		    errno == EACCES ? " (run as root)" : "");
	}
	if (abi == ABI_OKCOV) {
		if (ioctl(b->fd, KIOSETBUFSIZE, &n64)) {
			uint64_t max = max_entries_param();

			if (errno == EINVAL && max)
				die("KIOSETBUFSIZE %zu: %s; the largest is %llu (okcov's max_entries parameter)",
				    n, strerror(errno), (unsigned long long)max);
			die("KIOSETBUFSIZE %zu: %s", n, strerror(errno));
		}
	} else if (ioctl(b->fd, KCOV_INIT_TRACE, (unsigned long)n)) {
		die("KCOV_INIT_TRACE %zu: %s", n, strerror(errno));
	}
	bytes = n * sizeof(uint64_t);
	b->words = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
			b->fd, 0);
	if (b->words == MAP_FAILED)
		die("mmap of %zu bytes of %s: %s", bytes, dev, strerror(errno));
}

/* The child tells the parent why it could not run CMD: stage and errno. */
struct child_err {
	int stage;
	int err;
};

enum { ST_ENABLE = 1, ST_REMOTE_ATTACH, ST_REMOTE_ENABLE, ST_EXEC };

static void __noreturn child(int errfd, enum abi abi, int mode,
			     struct buffer *t, struct buffer *r, char **argv)
{
	struct child_err ce = { 0, 0 };
	int okmode = mode ? OKCOV_MODE_TRACE_CMP : OKCOV_MODE_TRACE_PC;

	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	if (r->fd >= 0) {
		struct kio_remote_attach ra = { KCOV_REMOTE_COMMON, 0 };

		/* The process that runs CMD owns the remote descriptor. */
		if (ioctl(r->fd, KIOREMOTEATTACH, &ra)) {
			ce.stage = ST_REMOTE_ATTACH;
			goto fail;
		}
		if (ioctl(r->fd, KIOENABLE, &okmode)) {
			ce.stage = ST_REMOTE_ENABLE;
			goto fail;
		}
	}
	if (abi == ABI_OKCOV ? ioctl(t->fd, KIOENABLE, &okmode) :
	    ioctl(t->fd, KCOV_ENABLE,
		  (unsigned long)(mode ? KCOV_TRACE_CMP : KCOV_TRACE_PC))) {
		ce.stage = ST_ENABLE;
		goto fail;
	}
	/* Start from the exec: the setup above is not CMD's. */
	__atomic_store_n(&t->words[0], 0, __ATOMIC_RELAXED);
	if (r->fd >= 0)
		__atomic_store_n(&r->words[0], 0, __ATOMIC_RELAXED);
	execvp(argv[0], argv);
	ce.stage = ST_EXEC;
fail:
	ce.err = errno;
	if (write(errfd, &ce, sizeof(ce)) != sizeof(ce))
		_exit(EXIT_TROUBLE);
	_exit(ce.stage != ST_EXEC ? EXIT_TROUBLE :
	      ce.err == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC);
}

/* Read count records of `words` words each; returns how many there were. */
static uint64_t collect(struct cover *c, struct buffer *b, bool remote,
			bool *full)
{
	size_t per = c->cmp ? 4 : 1, cap = (b->n - 1) / per;
	uint64_t n = __atomic_load_n(&b->words[0], __ATOMIC_RELAXED), i;

	*full = n >= cap;
	if (n > cap)
		n = cap;
	for (i = 0; i < n; i++) {
		uint64_t *w = &b->words[1 + i * per];

		if (c->cmp)
			cover_add(c, w[3], w[0], remote);
		else
			cover_add(c, w[0], 0, remote);
	}
	return n;
}


/* Linux's kcov records PCs minus the KASLR offset (libokcov/kaslr.h). */
static uint64_t kcov_bias(void)
{
	return okcov_kaslr_offset(okcov_text(ksyms_addr("_text", NULL),
					     ksyms_addr("_stext", NULL)));
}

static void run_usage(FILE *f)
{
	fprintf(f,
"usage: okcov-cover run [-m pc|cmp] [--remote] [-n ENTRIES] [-o FILE]\n"
"                       [--device PATH] [--deep GLOB]... -- CMD [ARG]...\n"
"  -m, --mode pc|cmp   record function entries (pc, default) or comparisons\n"
"  -r, --remote        also record the work CMD defers (KIOREMOTEATTACH)\n"
"  -n, --entries N     buffer size in 8-byte entries (K and M suffixes)\n"
"  -o, --output FILE   write the profile to FILE (default okcov.profile; - is stdout)\n"
"  -d, --device PATH   /dev/okcov (default), /dev/kcov, or Linux's own\n"
"                      /sys/kernel/debug/kcov\n"
"  -k, --kallsyms FILE symbolize with FILE instead of /proc/kallsyms\n"
"  -D, --deep GLOB     also record the basic blocks of the functions GLOB\n"
"                      names (okcov-cover deep; repeatable)\n");
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "remote", no_argument, NULL, 'r' },
		{ "entries", required_argument, NULL, 'n' },
		{ "output", required_argument, NULL, 'o' },
		{ "device", required_argument, NULL, 'd' },
		{ "kallsyms", required_argument, NULL, 'k' },
		{ "deep", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dev = OKCOV_PATH, *output = "okcov.profile";
	char **deep = NULL;
	size_t ndeep = 0;
	const char *kallsyms = "/proc/kallsyms";
	struct buffer t = { -1, NULL, 0 }, r = { -1, NULL, 0 };
	struct cover cov = { NULL, 0, 0, false };
	struct header h = { NULL, 0 };
	uint64_t entries = 0, nt, nr = 0, bias = 0, dropped;
	bool remote = false, tfull, rfull = false;
	struct child_err ce;
	int c, mode = 0, pipefd[2], status, rc;
	struct stat st;
	char *cmdline, *mods_before, *mods_after;
	enum abi abi;
	FILE *out;
	pid_t pid;

	while ((c = getopt_long(argc, argv, "+m:rn:o:d:k:D:h", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (!strcmp(optarg, "pc"))
				mode = 0;
			else if (!strcmp(optarg, "cmp"))
				mode = 1;
			else
				die("-m: mode is pc or cmp, not '%s'", optarg);
			break;
		case 'r':
			remote = true;
			break;
		case 'n':
			entries = parse_count(optarg, "-n");
			break;
		case 'o':
			output = optarg;
			break;
		case 'd':
			dev = optarg;
			break;
		case 'k':
			kallsyms = optarg;
			break;
		case 'D':
			deep = xrealloc(deep, (ndeep + 1) * sizeof(*deep));
			deep[ndeep++] = optarg;
			break;
		case 'h':
			run_usage(stdout);
			return 0;
		default:
			run_usage(stderr);
			return EXIT_TROUBLE;
		}
	}
	if (optind >= argc) {
		warnx_("run: no command given");
		run_usage(stderr);
		return EXIT_TROUBLE;
	}
	argv += optind;
	cov.cmp = mode;

	/* okcov is a character device; Linux's kcov is a debugfs file. */
	if (stat(dev, &st))
		die("%s: %s%s", dev, strerror(errno),
		    !strcmp(dev, OKCOV_PATH) ? " (is okcov loaded? insmod okcov.ko)" :
		    strstr(dev, "debug/kcov") ?
		    " (needs CONFIG_KCOV and debugfs mounted on /sys/kernel/debug)" : "");
	abi = S_ISCHR(st.st_mode) ? ABI_OKCOV : ABI_LINUX_KCOV;
	if (remote && abi != ABI_OKCOV)
		die("--remote needs okcov (Linux's kcov has only annotated remote sections)");
	if (!entries) {
		entries = abi == ABI_OKCOV ? DEFAULT_ENTRIES : LKCOV_DEFAULT_ENTRIES;
		if (abi == ABI_OKCOV && max_entries_param() &&
		    max_entries_param() < entries)
			entries = max_entries_param();
	}
	if (entries < (mode ? 5 : 2))
		die("-n %llu: too small for one record", (unsigned long long)entries);

	/* Symbols first: a kernel that hides them fails before CMD runs. */
	load_kallsyms_or_die(kallsyms);
	mods_before = read_file("/proc/modules");
	/* The probes stay while this process holds their descriptor. */
	if (ndeep)
		deep_install(OKCOV_PATH, deep, ndeep);

	buffer_open(&t, dev, abi, entries);
	if (remote)
		buffer_open(&r, dev, abi, entries);
	/* Machine-wide: a run beside other remote users may count theirs. */
	dropped = remote ? okcov_number(OKCOV_STATS, "remote_dropped") : 0;
	if (pipe2(pipefd, O_CLOEXEC))
		die("pipe: %s", strerror(errno));

	/* Like time(1): the terminal's signals are CMD's to handle. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		close(pipefd[0]);
		child(pipefd[1], abi, mode, &t, &r, argv);
	}
	close(pipefd[1]);
	rc = read(pipefd[0], &ce, sizeof(ce));
	close(pipefd[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	if (rc == sizeof(ce)) {
		switch (ce.stage) {
		case ST_REMOTE_ATTACH:
			if (ce.err == ENOTTY)
				die("remote coverage not supported by this okcov (KIOREMOTEATTACH: %s)",
				    strerror(ce.err));
			die("KIOREMOTEATTACH: %s", strerror(ce.err));
		case ST_REMOTE_ENABLE:
			die("KIOENABLE on the remote descriptor: %s",
			    strerror(ce.err));
		case ST_ENABLE:
			if (abi == ABI_OKCOV && mode && ce.err == EINVAL)
				die("KIOENABLE cmp: %s (this okcov has no comparison mode)",
				    strerror(ce.err));
			die("%s: %s%s", abi == ABI_OKCOV ? "KIOENABLE" : "KCOV_ENABLE",
			    strerror(ce.err), abi == ABI_LINUX_KCOV && mode && ce.err == ENOTSUPP ?
			    " (nothing produces comparisons: a kernel without CONFIG_KCOV_ENABLE_COMPARISONS, or okcov with no instrumented module loaded)" :
			    "");
		default:
			warnx_("%s: %s", argv[0], strerror(ce.err));
			return ce.err == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC;
		}
	}

	/* Waits for remote sections in flight; EBUSY if already READY. */
	if (remote)
		(void)!ioctl(r.fd, KIODISABLE);
	nt = collect(&cov, &t, false, &tfull);
	if (remote) {
		nr = collect(&cov, &r, true, &rfull);
		dropped = okcov_number(OKCOV_STATS, "remote_dropped") - dropped;
	}
	cover_merge(&cov);
	/* Again if CMD loaded or unloaded modules. */
	mods_after = read_file("/proc/modules");
	if (!mods_before || !mods_after || strcmp(mods_before, mods_after))
		load_kallsyms_or_die(kallsyms);

	if (abi == ABI_LINUX_KCOV)
		bias = kcov_bias();

	cmdline = command_line(argv);
	system_header(&h);
	if (abi == ABI_OKCOV)
		okcov_module_header(&h);
	hdr_add(&h, "device", "%s", dev);
	hdr_add(&h, "source", "%s", abi == ABI_OKCOV ?
		"okcov (function entries; basic blocks of instrumented modules)" :
		"linux-kcov (basic blocks of instrumented code)");
	hdr_add(&h, "mode", "%s", mode ? "cmp" : "pc");
	hdr_add(&h, "remote", "%s", remote ? "yes" : "no");
	hdr_add(&h, "scope", "%s",
		"the thread that ran CMD, through execve; threads and processes it created are not recorded");
	hdr_add(&h, "command", "%s", cmdline);
	if (WIFEXITED(status))
		hdr_add(&h, "exit", "%d", WEXITSTATUS(status));
	else
		hdr_add(&h, "exit", "signal %d", WTERMSIG(status));
	hdr_add(&h, "entries", "%llu", (unsigned long long)entries);
	hdr_add(&h, "records", "%llu", (unsigned long long)nt);
	hdr_add(&h, "full", "%s", tfull ? "yes" : "no");
	if (remote) {
		hdr_add(&h, "remote.records", "%llu", (unsigned long long)nr);
		hdr_add(&h, "remote.full", "%s", rfull ? "yes" : "no");
		hdr_add(&h, "remote.dropped", "%llu", (unsigned long long)dropped);
	}
	if (bias)
		hdr_add(&h, "pc.kaslr_offset", "0x%llx", (unsigned long long)bias);

	if (!strcmp(output, "-")) {
		out = stdout;
	} else {
		out = fopen(output, "w");
		if (!out)
			die("%s: %s", output, strerror(errno));
	}
	if (write_profile(out, &h, &cov, bias) || (out != stdout && fclose(out)))
		die("%s: write failed: %s", output, strerror(errno));

	if (dropped)
		warnx_("warning: okcov dropped %llu remote events during the run (no owner tag or section left: see remote_dropped in okcov(4)).",
		       (unsigned long long)dropped);
	if (tfull || rfull) {
		unsigned long long max = max_entries_param();

		warnx_("warning: the %sbuffer filled up (%llu entries): the profile misses the rest of the run.",
		       rfull && !tfull ? "remote " : "", (unsigned long long)entries);
		if (abi == ABI_OKCOV && max && entries >= max)
			warnx_("  use -n with more entries; okcov allows at most %llu: reload it with a larger max_entries (insmod okcov.ko max_entries=N)",
			       max);
		else
			warnx_("  use -n with more entries (now %llu)",
			       (unsigned long long)entries);
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

