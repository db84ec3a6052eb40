/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Loading and unloading modules through libkmod (never by running insmod
 * or rmmod), for the selftests that reload okcov or load the test-target
 * module. Every function returns
 * 0 or a negative errno, as libkmod does.
 *
 * With OKCOV_NO_LIBKMOD (static cross builds: Debian ships no libkmod.a)
 * the same two calls libkmod makes for an uncompressed .ko,
 * finit_module() and delete_module(O_NONBLOCK), are made directly.
 */
#ifndef OKCOV_KMOD_UTIL_H
#define OKCOV_KMOD_UTIL_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef OKCOV_NO_LIBKMOD
#include <fcntl.h>
#include <sys/syscall.h>
#else
#include <libkmod.h>
#endif

#include "okcov_target.h"

/* Whether a loadable module of that name is loaded (live or going). */
static inline bool st_module_loaded(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/module/%s/initstate", name);
	return access(path, F_OK) == 0;
}

#ifdef OKCOV_NO_LIBKMOD
static inline int st_kmod_insert(const char *path, const char *options)
{
	int fd, err = 0;

	if (!path)
		return -ENOENT;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (syscall(SYS_finit_module, fd, options ? options : "", 0))
		err = -errno;
	close(fd);
	return err;
}

/* delete_module() without waiting: -EAGAIN (EWOULDBLOCK) while in use. */
static inline int st_kmod_remove(const char *name)
{
	return syscall(SYS_delete_module, name, O_NONBLOCK) ? -errno : 0;
}
#else

/* libkmod's messages as KTAP diagnostics. */
static inline void st_kmod_log(void *data, int priority, const char *file,
				  int line, const char *fn, const char *format,
				  va_list args)
{
	fprintf(stderr, "# libkmod: ");
	vfprintf(stderr, format, args);
}

static inline struct kmod_ctx *st_kmod_ctx(void)
{
	static struct kmod_ctx *ctx;

	if (!ctx) {
		ctx = kmod_new(NULL, NULL);
		if (ctx)
			kmod_set_log_fn(ctx, st_kmod_log, NULL);
	}
	return ctx;
}

static inline int st_kmod_insert(const char *path, const char *options)
{
	struct kmod_ctx *ctx = st_kmod_ctx();
	struct kmod_module *mod;
	int err;

	if (!ctx)
		return -ENOMEM;
	if (!path)
		return -ENOENT;
	err = kmod_module_new_from_path(ctx, path, &mod);
	if (err < 0)
		return err;
	err = kmod_module_insert_module(mod, 0, options);
	kmod_module_unref(mod);
	return err;
}

/* delete_module() without waiting: -EAGAIN (EWOULDBLOCK) while in use. */
static inline int st_kmod_remove(const char *name)
{
	struct kmod_ctx *ctx = st_kmod_ctx();
	struct kmod_module *mod;
	int err;

	if (!ctx)
		return -ENOMEM;
	err = kmod_module_new_from_name(ctx, name, &mod);
	if (err < 0)
		return err;
	err = kmod_module_remove_module(mod, 0);
	kmod_module_unref(mod);
	return err;
}
#endif /* OKCOV_NO_LIBKMOD */

/*
 * Remove, retrying for a while on EAGAIN: for a module whose last user
 * is going away asynchronously (a test process still exiting).
 */
static inline int st_kmod_remove_wait(const char *name, int tries)
{
	int err;

	while ((err = st_kmod_remove(name)) == -EAGAIN && --tries > 0)
		usleep(100 * 1000);
	return err;
}

/*
 * For a binary that unloads okcov: the test-target module uses okcov's
 * symbols, so it goes first, whoever loaded it.
 */
static inline void st_target_remove(void)
{
	int err;

	if (!st_module_loaded(OKCOV_TARGET_NAME))
		return;
	err = st_kmod_remove_wait(OKCOV_TARGET_NAME, 50);
	if (err)
		fprintf(stderr, "# unloading %s: %s\n", OKCOV_TARGET_NAME,
			strerror(-err));
}

/* okcov.ko as the VM runner loaded it ($OKCOV_KO), or NULL. */
static inline const char *st_okcov_ko(void)
{
	const char *ko = getenv("OKCOV_KO");

	return ko && *ko ? ko : NULL;
}

/* The module parameters it loaded okcov with ($OKCOV_KO_ARGS), or "". */
static inline const char *st_okcov_args(void)
{
	const char *args = getenv("OKCOV_KO_ARGS");

	return args ? args : "";
}

/*
 * Unload okcov (waiting out users that are still exiting; not loaded is
 * fine) and load st_okcov_ko() with @args.
 */
static inline int st_okcov_reload(const char *args)
{
	int err = st_kmod_remove_wait("okcov", 50);

	if (err && err != -ENOENT)
		return err;
	return st_kmod_insert(st_okcov_ko(), args);
}

/* Loaded by st_target_load(), so unloaded at exit. */
static bool st_target_loaded_here;

static inline void st_target_unload(void)
{
	int err;

	if (!st_target_loaded_here)
		return;
	err = st_kmod_remove_wait(OKCOV_TARGET_NAME, 50);
	if (err)
		fprintf(stderr, "# unloading %s: %s\n", OKCOV_TARGET_NAME,
			strerror(-err));
}

/* The test-target module the VM runner passed ($OKCOV_TARGET_KO), or NULL. */
static inline const char *st_target_ko(void)
{
	const char *ko = getenv("OKCOV_TARGET_KO");

	return ko && *ko ? ko : NULL;
}

/*
 * The instrumented test-target module (selftests/target/): there already,
 * or loaded from $OKCOV_TARGET_KO (the VM runner's) and unloaded at exit.
 * 0, or -errno with why it is not there in @why. When st_target_ko() is
 * set, a failure is the module's fault, not a reason to skip.
 */
static inline int st_target_load(char *why, size_t len)
{
	const char *ko = st_target_ko();
	int err;

	if (!access(OKCOV_TARGET_PATH, F_OK))
		return 0;
	if (!ko) {
		snprintf(why, len, "no test-target module (OKCOV_TARGET_KO unset)");
		return -ENOENT;
	}
	err = st_kmod_insert(ko, "");
	if (err && err != -EEXIST) {
		snprintf(why, len, "loading %s: %s", ko, strerror(-err));
		return err;
	}
	st_target_loaded_here = !err;
	if (!err)
		atexit(st_target_unload);
	return 0;
}

/*
 * okcov reloaded, then the test-target module after it (a fresh pool:
 * copies stay until okcov's text goes), and the target's device opened:
 * its fd, or -1 with why in @why.
 */
static inline int st_fresh_target(char *why, size_t len)
{
	int err, fd;

	st_target_remove();
	err = st_okcov_reload(st_okcov_args());
	if (err) {
		snprintf(why, len, "cannot reload okcov: %s", strerror(-err));
		return -1;
	}
	if (st_target_load(why, len))
		return -1;
	fd = open(OKCOV_TARGET_PATH, O_RDWR);
	if (fd < 0)
		snprintf(why, len, "no %s: %s", OKCOV_TARGET_PATH,
			 strerror(errno));
	return fd;
}

#endif /* OKCOV_KMOD_UTIL_H */
