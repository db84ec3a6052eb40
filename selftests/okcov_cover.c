// SPDX-License-Identifier: GPL-2.0
/*
 * okcov-cover in the guest: `run` on this binary's own workload (known
 * syscalls, chosen by letters), checking which kernel functions land in
 * the profile and which do not; CMD's exit status; a full buffer; diff of
 * two real profiles; --remote; and --device /sys/kernel/debug/kcov on a
 * CONFIG_KCOV kernel.
 *
 * okcov-cover is expected next to this binary (selftests/Makefile builds
 * it there), or at $OKCOV_COVER.
 */
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "okcov_test.h"

#define LKCOV_PATH	"/sys/kernel/debug/kcov"
/* Each run may install the whole-kernel hook (seconds under TCG) and
 * symbolizes through all of kallsyms.
 */
#define COVER_TIMEOUT	300

/* an argv for cover(), NULL-terminated */
#define ARGV(...)	((const char *[]){ __VA_ARGS__, NULL })

static char tool[PATH_MAX], self_exe[PATH_MAX];

/* The workload: one letter per action, in order. */
static void *thread_sysinfo(void *arg)
{
	struct sysinfo si;

	syscall(SYS_sysinfo, &si);
	return arg;
}

/*
 * The close of the last reference to a BPF map queues bpf_map_free_deferred
 * on a workqueue (kernel/bpf/syscall.c); give the kworker time to run it.
 */
static int bpf_map_free(void)
{
	int fd = st_bpf_array_map(16);

	if (fd < 0)
		return -1;
	close(fd);
	usleep(500 * 1000);
	return 0;
}

static int workload(const char *acts)
{
	struct utsname u;
	pthread_t th;

	for (; *acts; acts++) {
		switch (*acts) {
		case 'p':
			syscall(SYS_getppid);
			break;
		case 'u':
			syscall(SYS_uname, &u);
			break;
		case 's':
			thread_sysinfo(NULL);
			break;
		case 't':	/* sysinfo in a thread of its own */
			if (pthread_create(&th, NULL, thread_sysinfo, NULL) ||
			    pthread_join(th, NULL))
				return 99;
			break;
		case 'b':	/* its free is deferred to a kworker */
			if (bpf_map_free())
				return 98;
			break;
		case 'x':
			return 7;
		case 'k':
			kill(getpid(), SIGKILL);
			break;
		}
	}
	return 0;
}

/*
 * Run okcov-cover with argv (NULL-terminated, without argv[0]); its
 * stdout and stderr go to out (NULL: /dev/null). Returns its exit status,
 * or -1.
 */
static int cover(const char *out, const char *const *args)
{
	const char *argv[32];
	int status, fd, i;
	pid_t pid;

	argv[0] = tool;
	for (i = 0; args[i] && i < 30; i++)
		argv[i + 1] = args[i];
	argv[i + 1] = NULL;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		fd = open(out ? out : "/dev/null",
			  O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(120);
		execv(tool, (char **)argv);
		_exit(121);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* okcov-cover run -o prof -- <this binary> --workload acts */
static int workload_run(const char *log, const char *prof, const char *acts)
{
	return cover(log, ARGV("run", "-o", prof, "--", self_exe,
			       "--workload", acts));
}

/* Whether a line of path matches: exactly, or as a prefix. */
static bool file_has(const char *path, const char *want, bool prefix)
{
	char line[4096];
	bool found = false;
	FILE *f = fopen(path, "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		found = prefix ? !strncmp(line, want, strlen(want)) :
				 !strcmp(line, want);
	}
	fclose(f);
	return found;
}

/*
 * The hits of the function of syscall sc in a profile ("fn" lines whose
 * name is sys_<sc> after an underscore, in vmlinux), or 0.
 */
static unsigned long long hits_of(const char *path, const char *kind,
				  const char *sc, char *name, bool exact)
{
	char line[4096], mod[128];
	unsigned long long hits, total = 0;
	FILE *f = fopen(path, "r");
	char *found = name, nm[512];

	if (!f)
		return 0;
	name = nm;
	while (fgets(line, sizeof(line), f)) {
		struct ksym s = { 0, name, NULL };

		char kw[8];

		if (sscanf(line, "%7s %511s %127s %llu", kw, name, mod, &hits) != 4 ||
		    strcmp(kw, kind) || strcmp(mod, "vmlinux"))
			continue;
		if (exact ? !strcmp(name, sc) : ksym_is_syscall(&s, sc)) {
			total += hits;
			if (total == hits)
				strcpy(found, name);
		}
	}
	fclose(f);
	return total;
}

static unsigned long long fn_hits_name(const char *path, const char *sc,
				       char *name)
{
	return hits_of(path, "fn", sc, name, false);
}

static unsigned long long fn_hits(const char *path, const char *sc)
{
	char name[512];

	return fn_hits_name(path, sc, name);
}

static void show(const char *path)
{
	char line[512];
	FILE *f = fopen(path, "r");
	int n = 0;

	while (f && n++ < 40 && fgets(line, sizeof(line), f))
		fprintf(stderr, "#   | %s", line);
	if (f)
		fclose(f);
}

FIXTURE(cover) {
	char prof[64], log[64], prof2[64];
};

FIXTURE_SETUP(cover)
{
	struct stat st;

	if (stat(OKCOV_PATH, &st))
		SKIP(return, "%s: okcov not loaded", OKCOV_PATH);
	ASSERT_EQ(0, access(tool, X_OK)) TH_LOG("no okcov-cover at %s", tool);
	snprintf(self->prof, sizeof(self->prof), "/tmp/cover.%d.prof", getpid());
	snprintf(self->prof2, sizeof(self->prof2), "/tmp/cover.%d.2.prof", getpid());
	snprintf(self->log, sizeof(self->log), "/tmp/cover.%d.log", getpid());
}

FIXTURE_TEARDOWN(cover)
{
	unlink(self->prof);
	unlink(self->prof2);
	unlink(self->log);
}

/* The syscalls the workload made are in the profile; those it did not
 * make are not; the header says where the profile came from.
 */
TEST_F_TIMEOUT(cover, run_records_the_syscalls, COVER_TIMEOUT)
{
	char want[PATH_MAX + 64];
	struct utsname u;

	ASSERT_EQ(0, workload_run(self->log, self->prof, "pu")) show(self->log);
	ASSERT_EQ(0, workload_run(self->log, self->prof2, "s")) show(self->log);

	ASSERT_LT(0, fn_hits(self->prof, "getppid")) show(self->prof);
	ASSERT_LT(0, fn_hits(self->prof, "newuname")) show(self->prof);
	/* execve of CMD is recorded: coverage follows it into the image */
	ASSERT_LT(0, fn_hits(self->prof, "execve")) show(self->prof);
	ASSERT_EQ(0, fn_hits(self->prof, "sysinfo")) show(self->prof);

	ASSERT_LT(0, fn_hits(self->prof2, "sysinfo")) show(self->prof2);
	ASSERT_EQ(0, fn_hits(self->prof2, "getppid")) show(self->prof2);
	ASSERT_EQ(0, fn_hits(self->prof2, "newuname")) show(self->prof2);

	ASSERT_TRUE(file_has(self->prof, "okcov-cover profile v1", false));
	ASSERT_EQ(0, uname(&u));
	snprintf(want, sizeof(want), "# kernel.release: %s", u.release);
	ASSERT_TRUE(file_has(self->prof, want, false)) show(self->prof);
	ASSERT_TRUE(file_has(self->prof, "# mode: pc", false));
	ASSERT_TRUE(file_has(self->prof, "# device: /dev/okcov", false));
	ASSERT_TRUE(file_has(self->prof, "# exit: 0", false));
	ASSERT_TRUE(file_has(self->prof, "# full: no", false));
	snprintf(want, sizeof(want), "# command: %s --workload pu", self_exe);
	ASSERT_TRUE(file_has(self->prof, want, false)) show(self->prof);
	ASSERT_TRUE(file_has(self->prof, "end fn ", true));
}

/* Threads CMD creates start detached: their syscalls are not recorded. */
TEST_F_TIMEOUT(cover, threads_of_cmd_not_recorded, COVER_TIMEOUT)
{

	ASSERT_EQ(0, workload_run(self->log, self->prof, "tp")) show(self->log);
	ASSERT_LT(0, fn_hits(self->prof, "getppid")) show(self->prof);
	ASSERT_EQ(0, fn_hits(self->prof, "sysinfo")) show(self->prof);
}

/* okcov-cover's exit status is CMD's; a signal is 128 + its number. */
TEST_F_TIMEOUT(cover, exit_status_is_cmds, COVER_TIMEOUT)
{

	ASSERT_EQ(7, workload_run(self->log, self->prof, "px")) show(self->log);
	ASSERT_TRUE(file_has(self->prof, "# exit: 7", false));
	ASSERT_LT(0, fn_hits(self->prof, "getppid"));
	ASSERT_EQ(128 + SIGKILL, workload_run(self->log, self->prof2, "pk")) show(self->log);
	ASSERT_TRUE(file_has(self->prof2, "# exit: signal 9", false));
	ASSERT_EQ(127, cover(self->log, ARGV("run", "-o", self->prof, "--",
					     "/nonexistent/cmd")))
		show(self->log);
	ASSERT_TRUE(file_has(self->log,
			     "okcov-cover: /nonexistent/cmd: No such file or directory",
			     false)) show(self->log);
}

/* A buffer too small says so, and how to get a bigger one. */
TEST_F_TIMEOUT(cover, full_buffer_warns, COVER_TIMEOUT)
{

	ASSERT_EQ(0, cover(self->log, ARGV("run", "-n", "64", "-o", self->prof,
					   "--", self_exe, "--workload", "p")))
		show(self->log);
	ASSERT_TRUE(file_has(self->prof, "# full: yes", false));
	ASSERT_TRUE(file_has(self->prof, "# records: 63", false)) show(self->prof);
	ASSERT_TRUE(file_has(self->log,
			     "okcov-cover: warning: the buffer filled up (64 entries): the profile misses the rest of the run.",
			     false)) show(self->log);
	ASSERT_TRUE(file_has(self->log, "okcov-cover:   use -n with more entries",
			     true)) show(self->log);
}

/* diff of two real runs: the syscall only one made shows up as such. */
TEST_F_TIMEOUT(cover, diff_of_two_runs, COVER_TIMEOUT)
{
	char want[768], name[512];

	ASSERT_EQ(0, workload_run(self->log, self->prof, "pu")) show(self->log);
	ASSERT_EQ(0, workload_run(self->log, self->prof2, "u")) show(self->log);
	ASSERT_EQ(1, cover(self->log, ARGV("diff", "--match", "*sys_get*ppid",
					   self->prof, self->prof2)))
		show(self->log);
	/* __x64_sys_getppid, or __do_sys_getppid where the wrapper is notrace */
	ASSERT_LT(0, fn_hits_name(self->prof, "getppid", name));
	snprintf(want, sizeof(want), "- %s vmlinux %llu", name,
		 fn_hits(self->prof, "getppid"));
	ASSERT_TRUE(file_has(self->log, want, false)) show(self->log);
	ASSERT_TRUE(file_has(self->log,
			     "okcov-cover diff: 1 only in A, 0 only in B, 0 changed, 0 same",
			     true)) show(self->log);
	ASSERT_EQ(0, cover(self->log, ARGV("diff", self->prof, self->prof))) show(self->log);
}

/*
 * --remote works, or says plainly that this okcov lacks it: the map free
 * CMD deferred to a kworker lands in the remote part of the profile, its
 * own syscalls in the thread part only.
 */
TEST_F_TIMEOUT(cover, remote, COVER_TIMEOUT)
{
	char name[512];
	int rc;

	/* tinyconfig kernels (kcov) have no bpf(): no stock deferred work */
	if (bpf_map_free())
		SKIP(return, "no BPF array map on this kernel: %s",
		     strerror(errno));
	rc = cover(self->log, ARGV("run", "--remote", "-o", self->prof,
				   "--", self_exe, "--workload", "pb"));
	if (rc == 2 && file_has(self->log,
				"okcov-cover: remote coverage not supported by this okcov",
				true))
		SKIP(return, "this okcov has no KIOREMOTEATTACH");
	ASSERT_EQ(0, rc) show(self->log);
	ASSERT_TRUE(file_has(self->prof, "# remote: yes", false));
	ASSERT_LT(0, fn_hits(self->prof, "getppid")) show(self->prof);
	ASSERT_LT(0, fn_hits(self->prof, "bpf")) show(self->prof);
	ASSERT_EQ(0, hits_of(self->prof, "rfn", "getppid", name, false));
	ASSERT_EQ(0, hits_of(self->prof, "rfn", "bpf", name, false));
	ASSERT_LT(0, hits_of(self->prof, "rfn", "bpf_map_free_deferred", name,
			     true)) show(self->prof);
	ASSERT_EQ(0, hits_of(self->prof, "fn", "bpf_map_free_deferred", name,
			     true));
}

/* Linux's own kcov: basic-block PCs map to the syscall's function. */
TEST_F_TIMEOUT(cover, native_kcov, COVER_TIMEOUT)
{
	int rc;

	if (access(LKCOV_PATH, F_OK))
		SKIP(return, "no %s (kernel without CONFIG_KCOV)", LKCOV_PATH);
	ASSERT_EQ(0, cover(self->log, ARGV("run", "--device", LKCOV_PATH,
					   "-o", self->prof, "--", self_exe,
					   "--workload", "pu")))
		show(self->log);
	ASSERT_TRUE(file_has(self->prof, "# device: " LKCOV_PATH, false));
	ASSERT_TRUE(file_has(self->prof, "# source: linux-kcov", true));
	/* debug: CONFIG_KCOV without KCOV_INSTRUMENT_ALL instruments nothing */
	if (file_has(self->prof, "# records: 0", false))
		SKIP(return, "Linux's kcov recorded nothing (no KCOV_INSTRUMENT_ALL)");
	ASSERT_LT(0, fn_hits(self->prof, "newuname")) show(self->prof);
	ASSERT_EQ(0, fn_hits(self->prof, "sysinfo")) show(self->prof);
	/* basic blocks: PCs inside functions, several per function */
	ASSERT_FALSE(file_has(self->prof, "fn [unknown] ", true)) show(self->prof);

	rc = cover(self->log, ARGV("run", "-m", "cmp", "--device", LKCOV_PATH,
				   "-o", self->prof2, "--", self_exe,
				   "--workload", "p"));
	if (rc == 2 && file_has(self->log, "okcov-cover: KCOV_ENABLE:", true)) {
		/*
		 * okcov's personality refuses comparisons while no
		 * instrumented module is loaded (none is, here): expected.
		 */
		if (!ksyms_load() &&
		    ksyms_addr("__sanitizer_cov_trace_pc", "okcov")) {
			TH_LOG("okcov: no instrumented module, KCOV_TRACE_CMP refused");
			return;
		}
		SKIP(return, "no CONFIG_KCOV_ENABLE_COMPARISONS");
	}
	ASSERT_EQ(0, rc) show(self->log);
	ASSERT_TRUE(file_has(self->prof2, "# mode: cmp", false));
}

int main(int argc, char **argv)
{
	const char *env = getenv("OKCOV_COVER");
	ssize_t n;
	char *slash;

	if (argc == 3 && !strcmp(argv[1], "--workload"))
		return workload(argv[2]);

	n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	if (n <= 0)
		return 1;
	self_exe[n] = '\0';
	if (env) {
		snprintf(tool, sizeof(tool), "%s", env);
	} else {
		snprintf(tool, sizeof(tool), "%s", self_exe);
		slash = strrchr(tool, '/');
		snprintf(slash + 1, sizeof(tool) - (slash + 1 - tool),
			 "okcov-cover");
	}
	return test_harness_run(argc, argv);
}
