/* SPDX-License-Identifier: GPL-2.0 */
/*
 * okcov's counters, read-only files in /sys/kernel/debug/okcov/ (okcov(4),
 * FILES; module parameters until December 2026): descriptors alive
 * (DYING ones and those awaiting a grace period included), task-hash
 * entries alive, remote events dropped for lack of a tag or section, and
 * tags reclaimed from timers deleted and work cancelled before running.
 * The last two count since load.
 */
#ifndef OKCOV_STATS_H
#define OKCOV_STATS_H

#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

#define OKCOV_STATS_DIR		"/sys/kernel/debug/okcov/"

/* The counter's value, or -1 if it cannot be read. */
static inline long long st_stat(const char *name)
{
	char path[128];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), OKCOV_STATS_DIR "%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

struct st_stats {
	long long descriptors;
	long long entries;
};

static inline struct st_stats st_stats_now(void)
{
	struct st_stats s = {
		.descriptors = st_stat("descriptors"),
		.entries = st_stat("entries"),
	};

	return s;
}

/*
 * Wait (up to @ms) until descriptors and entries are back at @base:
 * descriptors are freed after a grace period, DYING ones when their
 * thread has gone. Returns whether they are; *now gets the last values.
 */
static inline bool st_stats_settle(const struct st_stats *base,
				   struct st_stats *now, int ms)
{
	for (;;) {
		*now = st_stats_now();
		if (now->descriptors == base->descriptors &&
		    now->entries == base->entries)
			return true;
		if (ms <= 0)
			return false;
		usleep(20 * 1000);
		ms -= 20;
	}
}

/*
 * Poll counter @name until it is at most @want: frees wait for RCU grace
 * periods (and, under emulation, for the RCU callback thread). Returns
 * the last value read.
 */
static inline long long st_stat_settle(const char *name, long long want)
{
	long long v = st_stat(name);
	int i;

	for (i = 0; i < 100 && v > want; i++) {
		usleep(50 * 1000);
		v = st_stat(name);
	}
	return v;
}

#endif /* OKCOV_STATS_H */
