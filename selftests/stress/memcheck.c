// SPDX-License-Identifier: GPL-2.0
/*
 * Memory after the run: /proc/meminfo, and settling the kernel's caches
 * before reading it.
 */
#include "stress.h"

bool read_meminfo(struct meminfo *m)
{
	char line[256], name[32];
	FILE *f = fopen("/proc/meminfo", "r");
	long v;

	m->slab = m->vmalloc = m->memfree = -1;
	m->n = 0;
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%31[^:]: %ld", name, &v) != 2)
			continue;
		if (!strcmp(name, "Slab"))
			m->slab = v;
		else if (!strcmp(name, "VmallocUsed"))
			m->vmalloc = v;
		else if (!strcmp(name, "MemFree"))
			m->memfree = v;
		if (m->n < MEMINFO_MAX) {
			strcpy(m->name[m->n], name);
			m->kib[m->n++] = v;
		}
	}
	fclose(f);
	/*
	 * Free pages parked on per-CPU lists are not in MemFree, and how
	 * many there are depends on the last few frees: count them back.
	 */
	m->pcp = 0;
	f = fopen("/proc/zoneinfo", "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, " count: %ld", &v) == 1)
			m->pcp += v * (page / 1024);
	if (f)
		fclose(f);
	return m->slab >= 0 && m->vmalloc >= 0 && m->memfree >= 0;
}

/* Every /proc/meminfo field that moved by 256 KiB or more. */
void meminfo_deltas(const struct meminfo *a, const struct meminfo *b)
{
	char line[1024];
	size_t n = 0;
	int i;

	for (i = 0; i < a->n && i < b->n; i++) {
		long d = b->kib[i] - a->kib[i];

		if (strcmp(a->name[i], b->name[i]) || (d < 256 && d > -256))
			continue;
		n += snprintf(line + n, sizeof(line) - n, "%s%s %+ld",
			      n ? ", " : "", a->name[i], d);
		if (n >= sizeof(line))
			break;
	}
	say("# meminfo fields that moved (KiB): %s", n ? line : "none");
}

void write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0)
		return;
	if (write(fd, s, strlen(s)) < 0)
		say("# write %s to %s: %s", s, path, strerror(errno));
	close(fd);
}

/*
 * Shrink every slab cache (aliases are symlinks: each cache once).  This
 * frees empty slabs and, on KASAN kernels, empties the cache's share of
 * KASAN's quarantine, where freed objects otherwise wait (up to 1/32 of RAM)
 * still counted in Slab.
 */
static void shrink_slabs(void)
{
	DIR *d = opendir("/sys/kernel/slab");
	struct dirent *e;
	char path[PATH_MAX];

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink",
			 e->d_name);
		write_file(path, "1");
	}
	closedir(d);
}

void settle(void)
{
	sync();
	write_file("/proc/sys/vm/drop_caches", "3");
	sleep(2);	/* RCU callbacks, deferred vfree */
	write_file("/proc/sys/vm/drop_caches", "3");
	shrink_slabs();
	sleep(1);
}
