// SPDX-License-Identifier: GPL-2.0
/*
 * The main process: loading and unloading okcov through libkmod, the
 * rmmod/insmod cycles around a drain, and the run of the worker processes.
 */
#include "stress.h"
#include "kmod_util.h"
#include "okcov_target.h"

const char *ko_path, *ko_args;
const char *target_ko;

#ifndef OKCOV_NO_LIBKMOD
/* libkmod's messages on stdout, one line each, like every other line. */
static void kmod_log(void *data, int priority, const char *file, int line,
		     const char *fn, const char *format, va_list args)
{
	char buf[512];

	vsnprintf(buf, sizeof(buf), format, args);
	buf[strcspn(buf, "\n")] = 0;
	say("# libkmod: %s", buf);
}

#endif

#ifdef OKCOV_NO_LIBKMOD
bool kmod_setup(void)
{
	return true;
}

void kmod_teardown(void)
{
}
#else
/* kmod_util.h's libkmod context, logging through say(); false if none. */
bool kmod_setup(void)
{
	struct kmod_ctx *ctx = st_kmod_ctx();

	if (ctx)
		kmod_set_log_fn(ctx, kmod_log, NULL);
	return ctx;
}

void kmod_teardown(void)
{
	kmod_unref(st_kmod_ctx());
}
#endif

/* 0 or a positive errno, as every other result here. */
int do_insmod(void)
{
	return -st_kmod_insert(ko_path, ko_args);
}

/* Never waits (O_NONBLOCK): EAGAIN while okcov is in use. */
static int do_rmmod(void)
{
	return -st_kmod_remove(OKCOV_NAME);
}

bool mod_loaded(void)
{
	return st_module_loaded(OKCOV_NAME);
}

/* okcov's filter or exclude parameter is set: a syscall may record nothing. */
bool read_narrowed(void)
{
	static const char * const params[] = { "filter", "exclude" };
	char path[128], val[256];
	unsigned int i;
	bool narrowed = false;
	FILE *f;

	for (i = 0; i < ARRAY_SIZE(params); i++) {
		snprintf(path, sizeof(path), "/sys/module/okcov/parameters/%s",
			 params[i]);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(val, sizeof(val), f)) {
			val[strcspn(val, "\n")] = 0;
			if (*val && strcmp(val, "(null)"))
				narrowed = true;
		}
		fclose(f);
	}
	return narrowed;
}

bool load(const char *why)
{
	double t0 = now();
	int err = do_insmod();

	if (!expect("cycler", OP_INSMOD, err, M(OK), "insmod %s %s (%s)",
		    ko_path, ko_args, why))
		return false;
	atomic_store(&shm->max_entries, st_max_entries());
	atomic_store(&shm->narrowed, read_narrowed());
	/* okcov_target links against okcov's hooks: loaded after it */
	if (target_ko && expect("cycler", OP_INSMOD,
				-st_kmod_insert(target_ko, ""), M(OK),
				"insmod %s (%s)", target_ko, why))
		atomic_store(&shm->target, true);
	if (!max_entries()) {
		fail("cycler", "cannot read %s", OKCOV_MAX_PARAM);
		atomic_store(&shm->max_entries, 512UL << 10);
	}
	say("# %s: insmod ok (%.2f s)", why, now() - t0);
	return true;
}

/* okcov is gone: its device too. */
static void check_unloaded(void)
{
	int fd = open(OKCOV_PATH, O_RDWR);

	expect("cycler", OP_OPEN, fd < 0 ? errno : 0, M(ENOENT) | M(ENXIO) |
	       M(ENODEV), "open(%s) with okcov unloaded", OKCOV_PATH);
	if (fd >= 0)
		close(fd);
}

/* rmmod that must succeed: nothing is open or mapped any more. */
bool unload(const char *why)
{
	double t0 = now();
	int err, tries = 0;

	/* it pins okcov; its files are closed, their work cancelled */
	if (st_module_loaded(OKCOV_TARGET_NAME)) {
		atomic_store(&shm->target, false);
		err = -st_kmod_remove(OKCOV_TARGET_NAME);
		if (!expect("cycler", OP_RMMOD, err, M(OK),
			    "%s: rmmod %s with none of its files open", why,
			    OKCOV_TARGET_NAME))
			return false;
	}
	while ((err = do_rmmod()) == EAGAIN && tries++ < 20)
		usleep(100 * 1000);
	if (!expect("cycler", OP_RMMOD, err, M(OK),
		    "%s: rmmod with no descriptor open or mapped (%d retries)",
		    why, tries))
		return false;
	if (tries)
		fail("cycler", "%s: rmmod refused %d times (EAGAIN) with no descriptor open or mapped",
		     why, tries);
	atomic_fetch_add(&shm->gen, 1);
	atomic_fetch_add(&shm->unloads, 1);
	check_unloaded();
	say("# %s: rmmod ok (%.2f s)", why, now() - t0);
	return true;
}

/* --------------------------------------------------------------- engine */

static pid_t workers[MAX_PROCS];
static bool worker_dead[MAX_PROCS];

/* Reap exited workers; an early or abnormal exit is a failure. */
static int reap_workers(int nprocs, bool expected)
{
	int i, status, alive = 0;

	for (i = 0; i < nprocs; i++) {
		if (worker_dead[i])
			continue;
		if (waitpid(workers[i], &status, WNOHANG) != workers[i]) {
			alive++;
			continue;
		}
		worker_dead[i] = true;
		if (!expected || !WIFEXITED(status) || WEXITSTATUS(status))
			fail("main", "worker %d (pid %d) %s %d%s", i, workers[i],
			     WIFSIGNALED(status) ? "killed by signal" :
			     "exited with", WIFSIGNALED(status) ?
			     WTERMSIG(status) : WEXITSTATUS(status),
			     expected ? "" : " before the end");
	}
	return alive;
}

static int dead_workers(int nprocs)
{
	int i, n = 0;

	for (i = 0; i < nprocs; i++)
		n += worker_dead[i];
	return n;
}

double t_start;

/* One rmmod/insmod cycle around a drain; false if the run must stop. */
static bool run_cycle(int nprocs)
{
	int n = atomic_fetch_add(&shm->cycles, 1) + 1;
	double t0 = now(), t1;
	int err, dying;

	/* in use: refused (or, if every descriptor happens to be closed, not) */
	atomic_fetch_add(&shm->seq, 1);
	err = do_rmmod();
	expect("cycler", OP_RMMOD, err, M(OK) | M(EAGAIN) | M(EBUSY),
	       "cycle %d: rmmod while in use", n);
	if (!err) {
		atomic_fetch_add(&shm->gen, 1);
		atomic_fetch_add(&shm->unloads, 1);
		if (!load("reload after an idle moment"))
			return false;
	} else {
		atomic_fetch_add(&shm->refusals, 1);
	}
	atomic_fetch_add(&shm->seq, 1);
	expect("cycler", OP_INSMOD, do_insmod(), M(EEXIST),
	       "cycle %d: insmod while loaded", n);

	atomic_store(&shm->drained, 0);
	atomic_store(&shm->dying_at_drain, 0);
	atomic_fetch_add(&shm->epoch, 1);
	atomic_store(&shm->phase, PH_DRAIN);
	while (atomic_load(&shm->drained) + dead_workers(nprocs) < nprocs) {
		reap_workers(nprocs, false);
		if (now() - t0 > 1.5 * hang_s) {
			fail("cycler", "cycle %d: drain not done after %g s (%d of %d processes)",
			     n, 1.5 * hang_s, atomic_load(&shm->drained),
			     nprocs);
			return false;
		}
		usleep(10 * 1000);
	}
	t1 = now();
	dying = atomic_load(&shm->dying_at_drain);
	atomic_fetch_add(&shm->seq, 1);
	if (!unload("drained"))
		return false;
	atomic_store(&shm->phase, PH_UNLOADED);
	usleep(500 * 1000);	/* threads run on, their descriptors freed */
	if (!load("drained"))
		return false;
	atomic_fetch_add(&shm->seq, 1);
	atomic_store(&shm->phase, PH_RUN);
	say("# t=%.1fs cycle %d: rmmod in use -> %s; drain %.1f s, %d threads attached to DYING descriptors at unload; cycle %.1f s",
	    t0 - t_start, n, err ? res_names[res_of(err)] : "ok (idle)",
	    t1 - t0, dying, now() - t0);
	return true;
}

bool run_engine(int nprocs, int nthreads, double secs, double cycle_s,
		       uint64_t seed)
{
	double t0 = now(), next = t0 + cycle_s, tc;
	bool ok = true;
	int i;

	memset(worker_dead, 0, sizeof(worker_dead));
	atomic_store(&shm->phase, PH_RUN);
	for (i = 0; i < nprocs; i++) {
		uint64_t s = seed + 0x1000003ULL * (i + 1);

		workers[i] = fork();
		if (workers[i] == 0)
			_exit(worker_main(i, nthreads, splitmix(&s)));
		if (workers[i] < 0) {
			fail("main", "fork: %s", strerror(errno));
			worker_dead[i] = true;
		}
		atomic_fetch_add(&shm->procs_spawned, 1);
	}
	while (now() - t0 < secs) {
		if (!reap_workers(nprocs, false))
			break;
		/*
		 * A cycle every cycle_s seconds, with at least cycle_s / 2 of
		 * plain stress in between: under emulation a cycle (drain,
		 * ftrace hook removal and reinstall) takes longer than that.
		 * A cycle started may run past the end.
		 */
		if (cycle_s > 0 && now() >= next &&
		    now() - t0 < secs - cycle_s / 2) {
			tc = now();
			if (!run_cycle(nprocs)) {
				ok = false;
				break;
			}
			next = tc + cycle_s;
			if (next < now() + cycle_s / 2)
				next = now() + cycle_s / 2;
		}
		usleep(50 * 1000);
	}
	atomic_store(&shm->phase, PH_STOP);
	t0 = now();
	while (reap_workers(nprocs, true)) {
		if (now() - t0 > 1.5 * hang_s) {
			fail("main", "workers still running %g s after the stop",
			     1.5 * hang_s);
			for (i = 0; i < nprocs; i++)
				if (!worker_dead[i])
					kill(workers[i], SIGKILL);
			reap_workers(nprocs, true);
			return false;
		}
		usleep(20 * 1000);
	}
	return ok;
}
