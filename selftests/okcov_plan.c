// SPDX-License-Identifier: GPL-2.0
/*
 * The planner (x86_64, /sys/kernel/debug/okcov/plan): okcov's own reading
 * of a function's live text, the first step of deep coverage through
 * instrumented copies.
 *
 *  target:   okcov_target_deep(), whose three leaders the test-target
 *            module placed by hand: copyable, exactly those leaders;
 *  whole:    a plan's instructions tile each of its parts with no gap,
 *            every leader is one of them, and the sizes add up;
 *  agrees:   for the functions of a few syscall paths (vfs_*, ksys_*,
 *            do_sys_openat2...), okcov's leaders are exactly the ones
 *            okcov-cover deep finds with objdump in the same live text;
 *  cold:     a function with a .cold part follows its branches into it:
 *            the part is a region of the plan, its leaders okcov-cover's;
 *  refused:  okcov's own text (EACCES), an address in no function
 *            (ENXIO), a write that is no address (EINVAL), a read before
 *            any write (ENODATA), no root (EACCES on open);
 *  refused_file: okcov-cover deep --refused lists okcov's own function
 *            and a notrace body, each with its errno's text;
 *  sweep:    every text function of the kernel proper: how many okcov can
 *            copy, and by what reason it refuses the others; none is
 *            undecodable.
 *
 * Needs the test-target module and x86_64; agrees, cold and refused_file need
 * okcov-cover next to this binary and objdump in the guest.
 */
#include <limits.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "okcov_test.h"
#include "kmod_util.h"
#include "okcov_target.h"
#include "okcov_tool.h"

#define MAX_LEADERS	4096
#define MAX_INSNS	(64 << 10)

struct plan {
	char name[256];
	uint64_t start, end;
	int verdict;
	int nregions;
	uint64_t region[8][2];
	unsigned int size, ninsns, nleaders, widen, copy, edges;
	uint64_t *insn;		/* each instruction's address... */
	unsigned char *len;	/* ...and length */
	uint64_t *leader;
};

static void plan_free(struct plan *p)
{
	free(p->insn);
	free(p->len);
	free(p->leader);
	memset(p, 0, sizeof(*p));
}

/*
 * Plan the function around @addr: 0 with *@p filled, or -errno of the
 * write. @full: parse the instructions and leaders too.
 */
static int plan_get(uint64_t addr, struct plan *p, bool full)
{
	char line[512], *t;
	uint64_t x, y;
	unsigned int l;
	FILE *f;

	memset(p, 0, sizeof(*p));
	f = st_inspect(ST_PLAN_FILE, addr);
	if (!f)
		return -errno;
	if (full) {
		p->insn = calloc(MAX_INSNS, sizeof(*p->insn));
		p->len = calloc(MAX_INSNS, 1);
		p->leader = calloc(MAX_LEADERS, sizeof(*p->leader));
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "function %255s %llx %llx", p->name,
			   (unsigned long long *)&p->start,
			   (unsigned long long *)&p->end) == 3)
			continue;
		if (sscanf(line, "verdict %d", &p->verdict) == 1)
			continue;
		if (sscanf(line, "region %llx %llx", (unsigned long long *)&x,
			   (unsigned long long *)&y) == 2 && p->nregions < 8) {
			p->region[p->nregions][0] = x;
			p->region[p->nregions++][1] = y;
			continue;
		}
		if (sscanf(line, "size %u insns %u leaders %u widen %u copy %u",
			   &p->size, &p->ninsns, &p->nleaders, &p->widen,
			   &p->copy) == 5) {
			t = strstr(line, " edges ");
			p->edges = t ? strtoul(t + 7, NULL, 10) : ~0U;
			if (!full)
				break;
			p->ninsns = p->nleaders = 0;
			continue;
		}
		if (full && sscanf(line, "insn %llx %u",
				   (unsigned long long *)&x, &l) == 2 &&
		    p->ninsns < MAX_INSNS) {
			p->insn[p->ninsns] = x;
			p->len[p->ninsns++] = l;
			continue;
		}
		if (full && sscanf(line, "leader %llx",
				   (unsigned long long *)&x) == 1 &&
		    p->nleaders < MAX_LEADERS)
			p->leader[p->nleaders++] = x;
	}
	fclose(f);
	return 0;
}

/* okcov-cover deep --list's leaders of function @fn (sorted): how many, or -1. */
static int tool_leaders(const char *fn, uint64_t *out, int max)
{
	char cmd[PATH_MAX + 512], line[256];
	int n = 0, i, j;
	uint64_t t;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s deep --list '%s'", tool, fn);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p))
		if (n < max)
			out[n++] = strtoull(line, NULL, 16);
	if (pclose(p))
		return -1;
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && out[j - 1] > out[j]; j--) {
			t = out[j];
			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return n;
}

static bool has_leader(const struct plan *p, uint64_t a)
{
	unsigned int i;

	for (i = 0; i < p->nleaders; i++)
		if (p->leader[i] == a)
			return true;
	return false;
}

/*
 * Compare okcov's leaders of @name with okcov-cover's: the number that
 * differ either way (each logged), or -1 when the tool failed.
 */
static int compare_with_tool(struct __test_metadata *_metadata,
			     const char *name, struct plan *p)
{
	static uint64_t want[MAX_LEADERS];
	char b[160];
	int n, i, j, diff = 0;
	bool found;

	n = tool_leaders(name, want, MAX_LEADERS);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++)
		if (!has_leader(p, want[i])) {
			diff++;
			TH_LOG("%s: okcov-cover's leader %s not okcov's", name,
			       ksyms_format(want[i], b, sizeof(b)));
		}
	for (i = 0; i < (int)p->nleaders; i++) {
		for (j = 0, found = false; j < n && !found; j++)
			found = want[j] == p->leader[i];
		if (!found) {
			diff++;
			TH_LOG("%s: okcov's leader %s not okcov-cover's", name,
			       ksyms_format(p->leader[i], b, sizeof(b)));
		}
	}
	return diff;
}

static char skip_reason[256];

FIXTURE(plan) {
	int tfd;
	struct okcov_target_deep t;
};

FIXTURE_SETUP(plan)
{
	self->tfd = -1;
	if (skip_reason[0])
		SKIP(return, "%s", skip_reason);
	ASSERT_EQ(0, ksyms_load());
	self->tfd = open(OKCOV_TARGET_PATH, O_RDWR);
	ASSERT_LE(0, self->tfd);
	ASSERT_EQ(0, st_ret(ioctl(self->tfd, OKCOV_TARGET_DEEP_LEADERS,
				  &self->t)));
}

FIXTURE_TEARDOWN(plan)
{
	if (self->tfd >= 0)
		close(self->tfd);
}

/* The hand-placed leaders, and no other. */
TEST_F(plan, target)
{
	struct plan p;
	uint64_t fn;
	char b[160];
	int i;

	if (_metadata->skip)
		return;
	fn = ksyms_addr("okcov_target_deep", OKCOV_TARGET_NAME);
	ASSERT_NE(0, fn);
	ASSERT_EQ(0, plan_get(fn, &p, true));
	EXPECT_STREQ("okcov_target_deep", p.name);
	EXPECT_EQ(fn, p.start);
	EXPECT_EQ(0, p.verdict);
	EXPECT_LT(0, p.ninsns);
	for (i = 0; i < OKCOV_DEEP_NLEADERS; i++) {
		uint64_t l = self->t.leaders[i];

		EXPECT_TRUE(has_leader(&p, l)) {
			TH_LOG("leader %d %s missing", i,
			       ksyms_format(l, b, sizeof(b)));
		}
	}
	EXPECT_EQ(OKCOV_DEEP_NLEADERS, p.nleaders);
	for (i = 0; i < (int)p.nleaders; i++)
		TH_LOG("leader %s", ksyms_format(p.leader[i], b, sizeof(b)));
	/* An address inside names the same function. */
	plan_free(&p);
	ASSERT_EQ(0, plan_get(self->t.leaders[0], &p, false));
	EXPECT_EQ(fn, p.start);
	plan_free(&p);
}

/*
 * okcov_target_edges(): the block after its branch only sets the result
 * and jumps to the join, the branch's target only sets it and falls into
 * the join. Both are edges' blocks (Linux's kcov has no block there), not
 * leaders: only the join leads, the last instruction before the return.
 */
TEST_F(plan, edges)
{
	struct plan p;
	uint64_t fn;
	char b[160];
	int i;

	if (_metadata->skip)
		return;
	fn = ksyms_addr("okcov_target_edges", OKCOV_TARGET_NAME);
	if (!fn)
		SKIP(return, "no okcov_target_edges() (x86_64 only)");
	ASSERT_EQ(0, plan_get(fn, &p, true));
	EXPECT_EQ(0, p.verdict);
	EXPECT_EQ(2, p.edges);
	EXPECT_EQ(1, p.nleaders);
	for (i = 0; i < (int)p.nleaders; i++)
		TH_LOG("leader %s", ksyms_format(p.leader[i], b, sizeof(b)));
	/* The join: "addq $1" (4 bytes), then the return. */
	if (p.nleaders == 1)
		for (i = 0; i + 1 < (int)p.ninsns; i++)
			if (p.insn[i] == p.leader[0])
				EXPECT_EQ(4, p.len[i]);
	plan_free(&p);
}

/* Check one plan's inner consistency: the number of faults. */
static int check_whole(struct __test_metadata *_metadata, const struct plan *p)
{
	unsigned int i, r, bytes = 0, faults = 0;
	uint64_t at;

	for (r = 0; r < (unsigned int)p->nregions; r++) {
		at = p->region[r][0];
		for (i = 0; i < p->ninsns; i++)
			if (p->insn[i] >= p->region[r][0] &&
			    p->insn[i] < p->region[r][1]) {
				if (p->insn[i] != at) {
					TH_LOG("%s: gap or overlap at 0x%llx",
					       p->name, (unsigned long long)at);
					faults++;
				}
				at = p->insn[i] + p->len[i];
				bytes += p->len[i];
			}
		if (at != p->region[r][1]) {
			TH_LOG("%s: part ends at 0x%llx, not 0x%llx", p->name,
			       (unsigned long long)at,
			       (unsigned long long)p->region[r][1]);
			faults++;
		}
	}
	if (bytes != p->size)
		faults++;
	for (i = 0; i < p->nleaders; i++) {
		unsigned int j;
		bool found = false;

		for (j = 0; j < p->ninsns && !found; j++)
			found = p->insn[j] == p->leader[i];
		if (!found || p->leader[i] == p->start) {
			TH_LOG("%s: leader 0x%llx is no instruction past the entry",
			       p->name, (unsigned long long)p->leader[i]);
			faults++;
		}
	}
	if (p->copy < p->size + p->widen + 5 * p->nleaders)
		faults++;
	return faults;
}

static const char *const path_fns[] = {
	"ksys_read", "ksys_write", "vfs_read", "vfs_write", "do_sys_openat2",
	"do_filp_open", "path_openat", "ksys_dup3", "__x64_sys_dup",
	"__fdget_pos", "vfs_fstatat", "do_dup2", "filp_close",
};

TEST_F(plan, whole)
{
	struct plan p;
	unsigned int i, done = 0;
	uint64_t a;

	if (_metadata->skip)
		return;
	for (i = 0; i < ARRAY_SIZE(path_fns); i++) {
		a = ksyms_addr(path_fns[i], NULL);
		if (!a)
			continue;
		ASSERT_EQ(0, plan_get(a, &p, true));
		EXPECT_EQ(0, check_whole(_metadata, &p));
		EXPECT_LT(0, p.ninsns);
		done++;
		plan_free(&p);
	}
	a = ksyms_addr("okcov_target_deep", OKCOV_TARGET_NAME);
	ASSERT_EQ(0, plan_get(a, &p, true));
	EXPECT_EQ(0, check_whole(_metadata, &p));
	plan_free(&p);
	EXPECT_LT(5, done);
}

TEST_F(plan, agrees)
{
	unsigned int i, done = 0, leaders = 0;
	int tries, diff;
	struct plan p;
	uint64_t a;

	find_tool();
	if (tool_missing())
		SKIP(return, "%s", tool_missing());
	for (i = 0; i < ARRAY_SIZE(path_fns); i++) {
		a = ksyms_addr(path_fns[i], NULL);
		if (!a)
			continue;
		/*
		 * Both read the live text: a kprobe an earlier test removed
		 * may still be being unoptimised there. A real disagreement
		 * stays; one from text in flux goes within a second.
		 */
		for (tries = 0;; tries++) {
			ASSERT_EQ(0, plan_get(a, &p, true));
			diff = compare_with_tool(_metadata, path_fns[i], &p);
			if (!diff || tries == 4)
				break;
			plan_free(&p);
			usleep(250 * 1000);
		}
		EXPECT_EQ(0, diff);
		leaders += p.nleaders;
		done++;
		plan_free(&p);
	}
	TH_LOG("%u functions, %u leaders agree", done, leaders);
	EXPECT_LT(5, done);
	EXPECT_LT(50, leaders);
}

/* A function with a .cold part: the part is a region, its leaders agree. */
TEST_F(plan, cold)
{
	int tried = 0, found = 0;
	uint64_t addr, parent;
	char name[256];
	struct plan p;
	FILE *f;
	int r;

	find_tool();
	if (tool_missing())
		SKIP(return, "%s", tool_missing());
	f = fopen("/proc/kallsyms", "r");
	ASSERT_NE(NULL, f);
	while (found < 3 && tried < 40 &&
	       (parent = st_next_cold(f, &addr, name, sizeof(name)))) {
		tried++;
		ASSERT_EQ(0, plan_get(parent, &p, true));
		for (r = 1; r < p.nregions; r++)
			if (p.region[r][0] == addr)
				break;
		if (r < p.nregions) {
			found++;
			EXPECT_EQ(0, check_whole(_metadata, &p));
			EXPECT_EQ(0, compare_with_tool(_metadata, name, &p));
			TH_LOG("%s: %d parts, %u leaders, verdict %d", name,
			       p.nregions, p.nleaders, p.verdict);
		}
		plan_free(&p);
	}
	fclose(f);
	if (!tried)
		SKIP(return, "no .cold part in this kernel");
	EXPECT_LT(0, found);
}

TEST_F(plan, refused)
{
	struct plan p;
	uint64_t own;
	char buf[64];
	int fd;

	if (_metadata->skip)
		return;
	own = ksyms_addr("okcov_ftrace_func", "okcov");
	if (!own)
		own = ksyms_addr("okcov_enable", "okcov");
	ASSERT_NE(0, own);
	ASSERT_EQ(0, plan_get(own, &p, false));
	EXPECT_EQ(-EACCES, p.verdict);
	ASSERT_EQ(0, plan_get(0x1000, &p, false));
	EXPECT_EQ(-ENXIO, p.verdict);
	fd = open(ST_PLAN_FILE, O_RDWR);
	ASSERT_LE(0, fd);
	EXPECT_EQ(ENODATA, st_ret(read(fd, buf, sizeof(buf))));
	EXPECT_EQ(EINVAL, st_ret(write(fd, "ksys_read", 9)));
	close(fd);
}

/*
 * okcov-cover deep --refused names what okcov refused, each with its
 * reason: okcov's own function (EACCES) and a notrace body ftrace has no
 * entry for (ENXIO). Neither is copied: a copy would stay cached, and
 * with it copy.c's jump-label and static-call hooks, which later tests
 * read as a hook still installed.
 */
TEST_F(plan, refused_file)
{
	char path[] = "/tmp/okcov-refused.XXXXXX", cmd[PATH_MAX + 256];
	const char *notraced = "__do_sys_newuname";
	int fd, lines = 0, own = 0, body = 0;
	char line[256], *why;
	FILE *f;

	if (_metadata->skip)
		return;
	find_tool();
	if (tool_missing())
		SKIP(return, "%s", tool_missing());
	ASSERT_NE(0, ksyms_addr("okcov_enable", "okcov"));
	if (!ksyms_addr(notraced, NULL))
		notraced = "";
	fd = mkstemp(path);
	ASSERT_LE(0, fd);
	close(fd);
	snprintf(cmd, sizeof(cmd),
		 "%s deep --refused %s okcov_enable %s -- true 2>/dev/null",
		 tool, path, notraced);
	EXPECT_EQ(0, system(cmd));
	f = fopen(path, "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		lines++;
		line[strcspn(line, "\n")] = '\0';
		why = strchr(line, ' ');
		ASSERT_NE(NULL, why);
		*why++ = '\0';
		TH_LOG("refused: %s (%s)", line, why);
		if (!strcmp(line, "okcov_enable")) {
			own++;
			EXPECT_STREQ(strerror(EACCES), why);
		} else if (*notraced && !strcmp(line, notraced)) {
			body++;
			EXPECT_STREQ(strerror(ENXIO), why);
		}
	}
	fclose(f);
	unlink(path);
	EXPECT_EQ(1, own);
	EXPECT_EQ(*notraced ? 1 : 0, body);
	EXPECT_EQ(own + body, lines);
}

/* An unprivileged opener is turned away by debugfs' mode (0600 root). */
TEST_F(plan, unprivileged)
{
	pid_t pid;
	int status;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (setuid(65534))
			_exit(2);
		_exit(open(ST_PLAN_FILE, O_RDWR) < 0 && errno == EACCES ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* The kernel proper's traceable functions, sorted: how many, or -errno. */
static char **traceable;
static size_t ntraceable;

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int load_traceable(void)
{
	char line[512];
	size_t cap = 0;
	FILE *f;

	f = fopen("/sys/kernel/debug/tracing/available_filter_functions", "r");
	if (!f)
		f = fopen("/sys/kernel/tracing/available_filter_functions", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strchr(line, '['))
			continue;	/* a module's */
		line[strcspn(line, "\n ")] = 0;
		if (ntraceable == cap) {
			cap = cap ? 2 * cap : 4096;
			traceable = realloc(traceable, cap * sizeof(*traceable));
			if (!traceable)
				return -ENOMEM;
		}
		traceable[ntraceable++] = strdup(line);
	}
	fclose(f);
	qsort(traceable, ntraceable, sizeof(*traceable), cmp_name);
	return ntraceable;
}

static bool is_traceable(const char *name)
{
	return bsearch(&name, traceable, ntraceable, sizeof(*traceable),
		       cmp_name);
}

/*
 * Every traceable function of the kernel proper (init and exit code is
 * gone, and so are the entry and boot stubs ftrace never sees), counted
 * by verdict.
 */
TEST_F_TIMEOUT(plan, sweep, 900)
{
	unsigned int n = 0, ok = 0, ilseq = 0, other = 0, big = 0, unsup = 0;
	char line[256], *name;
	uint64_t addr, last = 0;
	struct plan p;
	FILE *f;

	if (_metadata->skip)
		return;
	ASSERT_LT(10000, load_traceable());
	f = fopen("/proc/kallsyms", "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		name = strchr(line, ' ');
		if (!name || strchr(name, '[') || (name[1] != 't' && name[1] != 'T'))
			continue;
		addr = strtoull(line, NULL, 16);
		if (addr == last)
			continue;	/* an alias */
		last = addr;
		name += 3;
		name[strcspn(name, "\n")] = 0;
		if (!is_traceable(name) || !st_kernel_text(addr))
			continue;
		ASSERT_EQ(0, plan_get(addr, &p, false));
		if (p.start != addr)
			continue;	/* kallsyms saw another symbol there */
		n++;
		switch (-p.verdict) {
		case 0:
			ok++;
			break;
		case EILSEQ:
			ilseq++;
			TH_LOG("undecodable: %s", name);
			break;
		case EFBIG:
			big++;
			TH_LOG("too large: %s", name);
			break;
		case EOPNOTSUPP:
			unsup++;
			TH_LOG("unsupported instruction: %s", name);
			break;
		default:
			other++;
			TH_LOG("%s: verdict %d", name, p.verdict);
			break;
		}
	}
	fclose(f);
	TH_LOG("%u traceable functions: %u copyable, %u unsupported instruction, %u too large, %u undecodable, %u other",
	       n, ok, unsup, big, ilseq, other);
	EXPECT_LT(10000, n);
	EXPECT_LT(n * 9 / 10, ok);
	EXPECT_EQ(0, ilseq);
	EXPECT_EQ(0, other);
}

static void prepare(void)
{
	char why[200];

#ifndef __x86_64__
	snprintf(skip_reason, sizeof(skip_reason), "the planner is x86_64's");
	return;
#endif
	if (access(ST_PLAN_FILE, F_OK))
		snprintf(skip_reason, sizeof(skip_reason), "no %s", ST_PLAN_FILE);
	else if (st_target_load(why, sizeof(why)))
		snprintf(skip_reason, sizeof(skip_reason), "%s", why);
}

OKCOV_HARNESS_MAIN(prepare);
