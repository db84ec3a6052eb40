// SPDX-License-Identifier: GPL-2.0
/*
 * okcov-bench PHASE: per-syscall cost in one guest boot.
 *
 *   okcov-bench absent	module not loaded: the baseline
 *   okcov-bench loaded	module loaded, no descriptor: must equal absent
 *   okcov-bench traced	first KIOSETBUFSIZE latency (installs the hook),
 *			then an enabled thread, a bystander thread while
 *			another thread is enabled, and a second install
 *
 * Each line is "phase syscall ns/op"; scripts/bench turns them into ratios.
 * Run under QEMU -icount so that guest time follows instructions executed.
 * Before each phase the guest must be idle (a whole second with the CPU
 * 97% idle): work left over from boot or from an ftrace hook install or
 * removal (seconds on 7.x) would otherwise be charged to that phase.
 */
#include <err.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "okcov.h"

#define ENTRIES		(512UL << 10)
#define ROUNDS		5

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void op_getppid(void)
{
	syscall(SYS_getppid);
}

static void op_open_read_close(void)
{
	char buf[64];
	int fd = open("/proc/version", O_RDONLY);

	if (fd < 0)
		err(1, "/proc/version");
	if (read(fd, buf, sizeof(buf)) < 0)
		err(1, "read");
	close(fd);
}

static const struct {
	const char *name;
	void (*fn)(void);
	int iters;
} ops[] = {
	{ "getppid", op_getppid, 20000 },
	{ "open+read+close", op_open_read_close, 2000 },
};

static uint64_t *cover;

/* Busy and total jiffies of all CPUs, from /proc/stat. */
static void cpu_jiffies(unsigned long long *busy, unsigned long long *total)
{
	unsigned long long v[10] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int i;

	if (!f || fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
			 &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
			 &v[7], &v[8], &v[9]) < 5)
		err(1, "/proc/stat");
	fclose(f);
	*total = 0;
	for (i = 0; i < 8; i++)	/* guest time is already in user */
		*total += v[i];
	*busy = *total - v[3] - v[4];	/* minus idle and iowait */
}

/* Wait (at most 120 s) for a one-second window with the CPU 97% idle. */
static void settle(const char *phase)
{
	unsigned long long b0, t0, b1, t1;
	double start = now_ns();

	for (;;) {
		cpu_jiffies(&b0, &t0);
		sleep(1);
		cpu_jiffies(&b1, &t1);
		if (t1 > t0 && (b1 - b0) * 100 <= (t1 - t0) * 3)
			break;
		if (now_ns() - start > 120e9) {
			printf("# %s: the guest never went idle; measuring anyway\n",
			       phase);
			return;
		}
	}
	printf("# %s: guest idle after %.1f s\n", phase,
	       (now_ns() - start) / 1e9);
}

/* Best of ROUNDS: the least disturbed run. Resets the buffer as we go. */
static double measure(int i)
{
	double best = 0;
	int r, k;

	for (r = 0; r < ROUNDS; r++) {
		double t0 = now_ns();

		for (k = 0; k < ops[i].iters; k++) {
			if (cover)
				__atomic_store_n(&cover[0], 0, __ATOMIC_RELAXED);
			ops[i].fn();
		}
		t0 = (now_ns() - t0) / ops[i].iters;
		if (!r || t0 < best)
			best = t0;
	}
	return best;
}

static void run_all(const char *phase)
{
	size_t i;

	settle(phase);
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		printf("%s %s %.0f\n", phase, ops[i].name, measure(i));
	fflush(stdout);
}

static int open_ready(uint64_t **map, double *setup_ns)
{
	unsigned long n = ENTRIES;
	double t0;
	int fd = open(OKCOV_PATH, O_RDWR);

	if (fd < 0)
		err(1, "open %s", OKCOV_PATH);
	t0 = now_ns();
	if (ioctl(fd, KIOSETBUFSIZE, &n))
		err(1, "KIOSETBUFSIZE");
	if (setup_ns)
		*setup_ns = now_ns() - t0;
	*map = mmap(NULL, n * 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*map == MAP_FAILED)
		err(1, "mmap");
	return fd;
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int stage;

/* The enabled thread the bystander runs beside. */
static void *enabled_thread(void *arg)
{
	int fd = *(int *)arg, mode = KCOV_MODE_TRACE_PC;

	if (ioctl(fd, KIOENABLE, &mode))
		err(1, "KIOENABLE");
	pthread_mutex_lock(&mu);
	stage = 1;
	pthread_cond_broadcast(&cv);
	while (stage != 2)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return NULL;
}

int main(int argc, char **argv)
{
	int fd, fd2, mode = KCOV_MODE_TRACE_PC;
	uint64_t *map, *map2;
	double first, second;
	pthread_t t;

	if (argc != 2)
		errx(2, "usage: okcov-bench absent|loaded|traced");
	if (strcmp(argv[1], "traced")) {
		run_all(argv[1]);
		return 0;
	}

	fd = open_ready(&map, &first);
	printf("install first-KIOSETBUFSIZE %.0f\n", first);

	/* Bystander: another thread is enabled, this one is not. */
	pthread_create(&t, NULL, enabled_thread, &fd);
	pthread_mutex_lock(&mu);
	while (stage != 1)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	run_all("bystander");
	pthread_mutex_lock(&mu);
	stage = 2;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	pthread_join(t, NULL);

	/* Enabled: this thread records every function it enters. */
	if (ioctl(fd, KIOENABLE, &mode))
		err(1, "KIOENABLE");
	cover = map;
	run_all("enabled");
	cover = NULL;
	if (ioctl(fd, KIODISABLE, 0))
		err(1, "KIODISABLE");

	/* A second descriptor while the hook is installed costs no install. */
	fd2 = open_ready(&map2, &second);
	printf("install second-KIOSETBUFSIZE %.0f\n", second);
	munmap(map2, ENTRIES * 8);
	close(fd2);
	munmap(map, ENTRIES * 8);
	close(fd);
	return 0;
}
