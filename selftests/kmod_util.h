/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Loading and unloading modules through libkmod (never by running insmod
 * or rmmod), for the lifecycle and sancov selftests. Every function returns
 * 0 or a negative errno, as libkmod does.
 */
#ifndef OKCOV_KMOD_UTIL_H
#define OKCOV_KMOD_UTIL_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <libkmod.h>

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

/* Whether a loadable module of that name is loaded (live or going). */
static inline bool st_module_loaded(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/module/%s/initstate", name);
	return access(path, F_OK) == 0;
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

#endif /* OKCOV_KMOD_UTIL_H */
