/* SPDX-License-Identifier: GPL-2.0 */
/*
 * okcov-cover from inside a test: where it is, and whether it can decode
 * the guest's live text (objdump, /proc/kcore). For okcov_deep and
 * okcov_plan, which hold okcov's leaders against the tool's.
 */
#ifndef OKCOV_TOOL_H
#define OKCOV_TOOL_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* okcov-cover, next to this binary or at $OKCOV_COVER. */
static char tool[PATH_MAX + 16];

static void find_tool(void)
{
	const char *env = getenv("OKCOV_COVER");
	char exe[PATH_MAX], *slash;
	ssize_t n;

	if (env && *env) {
		snprintf(tool, sizeof(tool), "%s", env);
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	snprintf(tool, sizeof(tool), "%s/okcov-cover", exe);
}

/* Why okcov-cover cannot run here, or NULL. */
static const char *tool_missing(void)
{
	if (access(tool, X_OK))
		return "no okcov-cover next to the test";
	if (system("objdump --version >/dev/null 2>&1"))
		return "no objdump in the guest";
	if (access("/proc/kcore", R_OK))
		return "no /proc/kcore (CONFIG_PROC_KCORE)";
	return NULL;
}

#endif /* OKCOV_TOOL_H */
