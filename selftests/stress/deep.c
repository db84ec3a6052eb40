// SPDX-License-Identifier: GPL-2.0
/*
 * okcov_stress: deep probes (KIODEEP) on the test-target module's
 * hand-placed blocks, installed on a descriptor of their own, hit by the
 * target's deep function, and removed when that descriptor is closed, all
 * while the other threads enable, disable, close and unload around them.
 * Strict requests with a mid-instruction address must fail whole
 * (EILSEQ); the same as a partial request installs the rest. Half the
 * requests ask for instrumented copies (deep_copies=1, x86_64), which
 * the next request that finds no deep leader installed takes: the
 * target's calls then run okcov's copies. What is left behind at rmmod
 * would be a kernel warning (okcov_deep_cleanup(), okcov_copy_cleanup()),
 * or okcov would not unload (a copy in use keeps it loaded).
 */
#include "stress.h"
#include "okcov_target.h"

void op_deep(struct ctx *c)
{
	__u64 addrs[OKCOV_DEEP_NLEADERS + 1];
	bool bad = chance(c, 20), partial = chance(c, 50);
	struct okcov_target_deep t;
	struct kio_deep d = { 0 };
	int fd, i, n = OKCOV_DEEP_NLEADERS, runs = 1 + rn(c, 4);

	if (!target_open(c, OP_DEEP) ||
	    ioctl(c->tfd, OKCOV_TARGET_DEEP_LEADERS, &t))
		return;		/* no target, or not x86_64 */
	fd = dev_open(c, true);
	if (fd < 0)
		return;
	write_file("/sys/module/okcov/parameters/deep_copies",
		   chance(c, 50) ? "1" : "0");
	memcpy(addrs, t.leaders, sizeof(t.leaders));
	if (bad)
		addrs[n++] = t.leaders[OKCOV_DEEP_ELSE] + 1;
	d.addrs = (uintptr_t)addrs;
	d.count = n;
	d.flags = partial ? KIO_DEEP_PARTIAL : 0;
	expect(c->tag, OP_DEEP, ioctl(fd, KIODEEP, &d) ? errno : 0,
	       bad && !partial ? M(EILSEQ) : M(OK), "KIODEEP of %d%s%s", n,
	       bad ? ", one mid-instruction" : "", partial ? ", partial" : "");
	for (i = 0; i < runs; i++)
		expect(c->tag, OP_DEEP,
		       ioctl(c->tfd, OKCOV_TARGET_DEEP_RUN, (unsigned long)(i & 1)) < 0 ?
		       errno : 0, M(OK), "OKCOV_TARGET_DEEP_RUN");
	close(fd);
}
