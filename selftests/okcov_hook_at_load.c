// SPDX-License-Identifier: GPL-2.0
/*
 * hook_at_load: the ftrace hook installed in the background at load and
 * kept until unload, so that no KIOENABLE waits for an install.
 *  - on: with no descriptor ever enabled the hook gets installed, once
 *    (debugfs hook_installs reads 1); the first KIOENABLE right after
 *    insmod returns without waiting for the install, and its thread's
 *    getpid() is recorded once the hook is in; the hook outlives
 *    hook_linger_ms with no descriptor enabled, and the next KIOENABLE
 *    finds it; an unload while the install runs waits for it and leaves
 *    nothing hooked;
 *  - off (the default): as before, the first KIOENABLE installs the hook
 *    before it returns and it goes hook_linger_ms after the last
 *    descriptor; the next KIOENABLE installs it again.
 *
 * Each variant reloads okcov with its parameters, then with the VM
 * runner's again. The hook is observed through
 * /sys/kernel/tracing/enabled_functions (nothing else in the test VM uses
 * ftrace) and the hook_installs counter.
 */
#include <time.h>

#include "kselftest_harness.h"
#include "okcov_test.h"
#include "okcov_stats.h"
#include "kmod_util.h"

#define TEST_LINGER_MS		200
/* Generous for an ioctl that waits for nothing: an install takes seconds. */
#define FAST_ENABLE_MS		1000

/* Load okcov with the runner's parameters and @args; unload it first. */
static int load(const char *args, bool unload)
{
	char all[512];

	snprintf(all, sizeof(all), "%s hook_linger_ms=%d %s", st_okcov_args(),
		 TEST_LINGER_MS, args);
	return unload ? st_okcov_reload(all) : st_kmod_insert(st_okcov_ko(), all);
}

/* The hook_at_load parameter: 1 (Y), 0 (N), or -1 if unreadable. */
static int param_hook_at_load(void)
{
	FILE *f = fopen("/sys/module/okcov/parameters/hook_at_load", "r");
	int c;

	if (!f)
		return -1;
	c = fgetc(f);
	fclose(f);
	return c == 'Y' ? 1 : c == 'N' ? 0 : -1;
}

/* Wait for hook_installs == @want: 0, or -ETIMEDOUT. */
static int wait_installs(long long want, int timeout_ms)
{
	long long end = st_now_ms() + timeout_ms;

	do {
		if (st_stat("hook_installs") == want)
			return 0;
		usleep(20 * 1000);
	} while (st_now_ms() < end);
	return -ETIMEDOUT;
}

/* Enable @c and return how long KIOENABLE took, in ms, or -1. */
static long long timed_enable(struct st_cov *c)
{
	long long t0 = st_now_ms();

	if (st_enable(c->fd, KCOV_MODE_TRACE_PC))
		return -1;
	return st_now_ms() - t0;
}

/* Is this thread's getpid() recorded? Up to @timeout_ms, enabled. */
static bool getpid_arrives(struct st_cov *c, int timeout_ms)
{
	long long end = st_now_ms() + timeout_ms;

	do {
		st_reset(c);
		sys_getpid_n(3);
		if (st_has_syscall(c, "getpid"))
			return true;
		usleep(20 * 1000);
	} while (st_now_ms() < end);
	return false;
}

FIXTURE(at_load) {
	struct st_cov c;
	bool reloaded;
};

FIXTURE_VARIANT(at_load) {
	bool on;
};

FIXTURE_VARIANT_ADD(at_load, on) { .on = true };
FIXTURE_VARIANT_ADD(at_load, off) { .on = false };

FIXTURE_SETUP(at_load)
{
	self->c.fd = -1;
	self->c.buf = MAP_FAILED;
	self->reloaded = false;
	if (!st_okcov_ko())
		SKIP(return, "OKCOV_KO unset: no okcov.ko to reload");
	ASSERT_LE(0, st_hook_installed()) {
		TH_LOG("%s unreadable: no tracefs?", ST_ENABLED_FUNCTIONS);
	}
	ASSERT_EQ(0, ksyms_load());
	st_target_remove();
	self->reloaded = true;
	if (variant->on) {
		/* An unload while the install runs waits for it, cleanly. */
		ASSERT_EQ(0, load("hook_at_load=1", true));
		ASSERT_EQ(0, st_kmod_remove_wait("okcov", 50));
		ASSERT_EQ(0, st_hook_installed()) {
			TH_LOG("unloaded, and ftrace still hooks functions");
		}
	}
	ASSERT_EQ(0, load(variant->on ? "hook_at_load=1" : "", !variant->on));
	ASSERT_EQ(0, st_new(&self->c, OKCOV_DEFAULT_MAX));
}

FIXTURE_TEARDOWN(at_load)
{
	st_free(&self->c);
	if (self->reloaded)
		st_okcov_reload(st_okcov_args());
}

TEST_F_TIMEOUT(at_load, first_enable, 300)
{
	long long installs, first, again, t0;

	if (_metadata->skip)	/* this harness runs the body after SKIP */
		return;
	ASSERT_EQ(variant->on, param_hook_at_load());

	/* Right after insmod. */
	t0 = st_now_ms();
	installs = st_stat("hook_installs");
	first = timed_enable(&self->c);
	ASSERT_LE(0, first);
	TH_LOG("hook_at_load=%d: first KIOENABLE %lld ms (hook_installs %lld before it)",
	       variant->on, first, installs);
	if (variant->on) {
		ASSERT_TRUE(installs == 0 || installs == 1);
		if (!installs)
			ASSERT_GT(FAST_ENABLE_MS, first);
	} else {
		ASSERT_EQ(0, installs);
		/* installed before KIOENABLE returned */
		ASSERT_EQ(1, st_stat("hook_installs"));
		ASSERT_EQ(1, st_hook_installed());
	}
	ASSERT_EQ(0, wait_installs(1, 120000)) {
		TH_LOG("the hook never got installed");
	}
	TH_LOG("hook_at_load=%d: hook installed %lld ms after insmod returned",
	       variant->on, st_now_ms() - t0);
	ASSERT_EQ(1, st_hook_installed());
	ASSERT_TRUE(getpid_arrives(&self->c, 30000)) {
		st_dump(&self->c, 200);
	}
	ASSERT_EQ(0, st_disable(self->c.fd));

	/* Every descriptor left TRACE, and hook_linger_ms passed. */
	usleep(TEST_LINGER_MS * 1000 + 500 * 1000);
	if (variant->on) {
		ASSERT_EQ(1, st_hook_installed()) {
			TH_LOG("hook_at_load=1, and the hook went after hook_linger_ms");
		}
	} else {
		ASSERT_EQ(0, st_wait_hook(0, 30000)) {
			TH_LOG("the hook stays installed with no descriptor enabled");
		}
	}
	again = timed_enable(&self->c);
	ASSERT_LE(0, again);
	TH_LOG("hook_at_load=%d: KIOENABLE after the linger %lld ms",
	       variant->on, again);
	ASSERT_EQ(variant->on ? 1 : 2, st_stat("hook_installs"));
	if (variant->on)
		ASSERT_GT(FAST_ENABLE_MS, again);
	st_reset(&self->c);
	sys_getpid_n(3);
	ASSERT_TRUE(st_has_syscall(&self->c, "getpid")) {
		st_dump(&self->c, 200);
	}
	ASSERT_EQ(0, st_disable(self->c.fd));
}

TEST_HARNESS_MAIN
