# SPDX-License-Identifier: GPL-2.0
#
# okcov user targets.  The module itself is described by Kbuild.
#
#   make                    okcov.ko and nothing else, against the running
#                           kernel's headers; without them it stops and
#                           says so (it never builds for another kernel
#                           unasked)
#   make KERNEL=<name>      against a test kernel from
#                           scripts/kernels/kernels.list (fetched into
#                           the cache)
#   make KDIR=<dir>         against any kernel build tree
#   make all-tools          okcov.ko, the selftests (fetches linux-source)
#                           and okcov-cover: everything, for developers
#   make check              build and run the selftests in a QEMU guest
#   make check-all          the same on every stock test kernel
#   make demo | bench       coverage demo | overhead benchmark, in a guest
#                           (bench DEEP=1: with deep mode's rows, slow;
#                            DEEP=copies: deep through instrumented copies)
#   make tools              the userspace programs of scripts/ (okcov-cover,
#                           okcov-bench, okcov-demo) into build/tools/
#   make okcov-cover        only the coverage profile tool
#   make cover-tests        its host-side tests (no VM; part of make check)
#   make decode-test        okcov's instruction decoder (module/insn.c)
#                           against objdump over every text function of
#                           the amd64 Debian test kernels (no VM but one
#                           boot per kernel for its symbols, cached);
#                           KERNELS='debian-6.1 ...' to choose
#   make man-check          the man pages name every module parameter, ioctl
#                           and okcov-cover subcommand, and no other (no VM;
#                           part of make check and make style)
#   make cover-kernels-test its profiles of `ls /` on 6.1 and 7.x differ as known
#   make cover-lcov-test    its lcov of a recording of the test-target module
#                           has the lines the source says (one VM boot)
#   make report-test        make report of `ls /` on 6.1 and 7.x: its
#                           tracefiles, pages and differential (two boots,
#                           Debian's debug info; part of check-all)
#   make compare CMD='ls /' KERNELS='debian-6.1 debian-7'
#                           record CMD's coverage on each kernel, diff them
#   make report CMD='ls /' KERNELS='debian-6.1 debian-7'
#                           the same as HTML: annotated source per kernel
#                           (genhtml, Debian's debug info fetched once),
#                           and a differential report against the first
#                           (SHOT=FILE.png: a picture of it, for the README;
#                           NATIVE=1: Linux's kcov beside okcov on the
#                           CONFIG_KCOV kernels, KERNELS='kcov-dwarf')
#   make install            modules_install into KDIR's kernel (default:
#                           the running one; none: it stops as make does),
#                           okcov-cover, the man pages and the headers
#   make install-headers    okcov.h and OpenBSD's sys/kcov.h into
#                           $(PREFIX)/include (default /usr/local)
#   make dkms-install       register, build and install okcov with DKMS
#   make dkms-check         dkms build and install into a scratch tree
#                           against a test kernel's headers, then load the
#                           result in that kernel's guest (part of check-all)
#   make deb                the Debian packages okcov-dkms (all) and
#                           okcov-tools (okcov-cover) into the build dir,
#                           their paths printed (scripts/debian/)
#   make deb-check          dpkg -i them in a Debian disk-image guest:
#                           DKMS builds okcov there, modprobe, udev rule,
#                           purge (scripts/image/; part of check-all)
#   make syz-image          the fuzzing image (okcov from okcov-dkms, loaded at
#                           boot) and a syz-manager config for VMS=2 QEMU
#                           VMs under TCG; builds syzkaller offline at the
#                           pinned revision (SYZKALLER=<its git dir>, once);
#                           prints the config's path (scripts/syz/README)
#   make syz-smoke          syz-manager with VMS (1) VMs for MINUTES (10) and its
#                           figures: machine check, executions, corpus,
#                           coverage, crashes (not CI: too slow)
#   make syz-hints          syz-execprog's machine check and hints in one
#                           guest: Comparisons enabled with deep_cmp, a
#                           magic ioctl command found in a copied
#                           function, and a control with deep_cmp=0
#                           (SYZKALLER= as syz-image; not CI: too slow)
#   make syz-campaign       the campaign benchmark against native kcov:
#                           twin 6.1 kernels (scripts/syz/twins), then
#                           syz-manager okcov-guided, deep (deep_reach=1),
#                           kcov-guided and blind for MINUTES=60 (or to
#                           EXECS= executions each) with VMS=2 each, one
#                           after another, every corpus replayed on the
#                           kcov twin;
#                           a table and an SVG plot (scripts/syz/README;
#                           not CI: hours)
#   make clean
#   make check-ci           check-all without the ci=no kernels (debug),
#                           and only the ci_tests= binaries where a kernel
#                           names some (debug-7): what CI runs, after
#                           make style
#   make readme-check       README's module file and kernel configuration
#                           lists match module/ and selftests/config (no
#                           VM; part of make style)
#   make style              checkpatch on the C files, shellcheck on the
#                           scripts, man-check and readme-check

VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
PREFIX ?= /usr/local
INCLUDEDIR ?= $(PREFIX)/include
RUNNING_KDIR := /lib/modules/$(shell uname -r)/build
KERNEL ?=
KDIR ?=

# with_kdir: the shell prefix of the targets that build against a kernel.
# It sets KDIR and BUILDER (the command prefix for module builds): KDIR=
# as given, else the test kernel KERNEL= (one fetch, then its
# kernel.env), else the running kernel's headers, else it stops: a module
# built for a test kernel cannot load on this host, and `make install`
# would install it for that kernel's release.
with_kdir = KDIR='$(KDIR)' BUILDER= && \
	if [ -z "$$KDIR" ]; then \
		if [ -n '$(KERNEL)' ]; then \
			env=$$(scripts/fetch-kernel '$(KERNEL)') && . "$$env" || exit 1; \
		elif [ -d $(RUNNING_KDIR) ]; then \
			KDIR=$(RUNNING_KDIR); \
		else \
			$(no_kdir); exit 1; \
		fi; \
	fi && test -n "$$KDIR"
no_kdir = { \
	echo "okcov: no kernel headers at $(RUNNING_KDIR)."; \
	echo "  Install them (apt-get install linux-headers-$$(uname -r)),"; \
	echo "  or build against a kernel tree:  make KDIR=<kernel build dir>"; \
	echo "  or against a test kernel:        make KERNEL=<name>  (scripts/vm-run --list)"; \
	echo "  To try okcov without installing: make demo, or make check (in a test VM)."; \
	} >&2
kernel_opt = $(if $(KERNEL),--kernel $(KERNEL))

CC ?= gcc
DESTDIR ?=

# The userspace programs of scripts/: one rule, one set of flags, one
# place.  The selftests, scripts/bench/run, demo, compare and the DKMS check
# run these binaries; `make style` builds them (-Werror).  They build
# against uapi/ and the userspace library scripts/libokcov/ (kallsyms,
# KASLR), which each compiles in; never against selftests/.
TOOLS ?= build/tools
TOOLS_CFLAGS := -O2 -g -Wall -Werror -D_GNU_SOURCE -pthread -Iuapi -Iscripts/libokcov
TOOL_PROGS := $(TOOLS)/okcov-cover $(TOOLS)/okcov-bench $(TOOLS)/okcov-demo
LIBOKCOV := $(wildcard scripts/libokcov/*.c) $(wildcard scripts/libokcov/*.h)

all: module

all-tools: module selftests tools

module:
	@$(with_kdir) && echo "okcov: building against $$KDIR" && \
	$$BUILDER $(MAKE) -C "$$KDIR" M=$(CURDIR) modules

selftests:
	@src=$$(scripts/fetch-source) && \
	$(MAKE) -C selftests HARNESS_DIR=$$src/tools/testing/selftests

tools: $(TOOL_PROGS) $(TOOLS)/decode_test

okcov-cover: $(TOOLS)/okcov-cover

$(TOOLS)/okcov-cover: $(wildcard scripts/cover/*.c) $(wildcard scripts/cover/*.h)
$(TOOLS)/okcov-bench: $(wildcard scripts/bench/*.c) scripts/bench/bench.h
$(TOOLS)/okcov-demo: scripts/okcov-demo.c

$(TOOL_PROGS): uapi/okcov.h $(LIBOKCOV)
	@mkdir -p $(TOOLS)
	$(CC) $(TOOLS_CFLAGS) $(LDFLAGS) -o $@ $(filter %.c,$^)

# The module's instruction decoder, built for the host as it is.
$(TOOLS)/decode_test: selftests/decode/decode_test.c module/insn.c module/insn.h
	@mkdir -p $(TOOLS)
	$(CC) $(TOOLS_CFLAGS) -Imodule $(LDFLAGS) -o $@ $(filter %.c,$^)

decode-test: $(TOOLS)/decode_test
	selftests/decode/run $(if $(KERNELS),--kernels '$(KERNELS)')

cover-tests: $(TOOLS)/okcov-cover
	scripts/cover/tests/cover-tests $(TOOLS)/okcov-cover

# okcov-cover across debian-6.1 and debian-7 (two VM boots)
cover-kernels-test:
	scripts/cover/tests/cover-kernels-test

# okcov-cover lcov on a real recording of the test-target module (one boot)
cover-lcov-test: $(TOOLS)/okcov-cover
	scripts/cover/tests/cover-lcov-test

report-test: $(TOOLS)/okcov-cover
	scripts/report-test

man-check:
	scripts/man-check

readme-check:
	scripts/readme-check

check: cover-tests man-check
	scripts/check $(kernel_opt)

check-all:
	scripts/check-all

dkms-check:
	scripts/dkms-check $(kernel_opt)

deb:
	scripts/deb

deb-check:
	scripts/deb-check $(kernel_opt)

check-ci:
	scripts/check-all --ci

syz-image:
	scripts/syz/image $(kernel_opt)

syz-smoke:
	scripts/syz/smoke $(kernel_opt) $(if $(MINUTES),--minutes $(MINUTES)) $(if $(VMS),--vms $(VMS))

syz-hints:
	scripts/syz/hints $(kernel_opt)

syz-campaign:
	scripts/syz/campaign $(if $(MINUTES),--minutes $(MINUTES)) $(if $(EXECS),--execs $(EXECS)) \
		$(if $(VMS),--vms $(VMS))

style: man-check readme-check tools
	scripts/style

.PHONY: check-ci style man-check readme-check

demo:
	scripts/demo $(kernel_opt)

bench:
	scripts/bench/run $(kernel_opt) $(if $(filter 1,$(DEEP)),--deep) $(if $(filter copies,$(DEEP)),--deep=copies)

compare: $(TOOLS)/okcov-cover
	scripts/compare $(if $(KERNELS),--kernels '$(KERNELS)') -- $(CMD)

report: $(TOOLS)/okcov-cover
	scripts/report $(if $(KERNELS),--kernels '$(KERNELS)') $(if $(NATIVE),--native) $(if $(SHOT),--shot '$(SHOT)') -- $(CMD)

install: module install-tools install-headers
	@$(with_kdir) && $(MAKE) -C "$$KDIR" M=$(CURDIR) modules_install && \
	depmod -a "$$(sed -n 's/^#define UTS_RELEASE "\(.*\)"/\1/p' \
		"$$KDIR/include/generated/utsrelease.h")"

install-tools: $(TOOLS)/okcov-cover
	install -D -m 0755 $(TOOLS)/okcov-cover $(DESTDIR)$(PREFIX)/bin/okcov-cover
	install -D -m 0644 scripts/cover/okcov-cover.1 $(DESTDIR)$(PREFIX)/share/man/man1/okcov-cover.1
	install -D -m 0644 scripts/man/okcov.4 $(DESTDIR)$(PREFIX)/share/man/man4/okcov.4
	install -D -m 0644 scripts/man/okcov-linux.4 $(DESTDIR)$(PREFIX)/share/man/man4/okcov-linux.4

# <okcov.h>, and <sys/kcov.h> with OpenBSD's names: a harness written for
# OpenBSD then builds with no -I flag at all.
install-headers:
	install -d $(DESTDIR)$(INCLUDEDIR)/sys
	install -m 0644 uapi/okcov.h $(DESTDIR)$(INCLUDEDIR)/okcov.h
	install -m 0644 uapi/openbsd/sys/kcov.h $(DESTDIR)$(INCLUDEDIR)/sys/kcov.h

# What DKMS builds from, copied to DKMS_SOURCE.
DKMS_SOURCE ?= /usr/src/okcov-$(VERSION)
dkms-source:
	rm -rf $(DKMS_SOURCE)
	mkdir -p $(DKMS_SOURCE)
	cp -a Kbuild dkms.conf module uapi $(DKMS_SOURCE)/
	@# a tree built in place (make) holds its objects: sources only
	find $(DKMS_SOURCE) \( -name '*.o' -o -name '.*.cmd' -o -name '.*.d' \
		-o -name '*.ko' -o -name '*.mod' -o -name '*.mod.c' \) -delete

dkms-install: dkms-source
	dkms remove -m okcov -v $(VERSION) --all 2>/dev/null || true
	dkms add -m okcov -v $(VERSION)
	dkms build -m okcov -v $(VERSION)
	dkms install -m okcov -v $(VERSION)

clean:
	rm -f *.o *.ko *.mod *.mod.c .*.cmd Module.symvers modules.order
	find module -name '*.o' -o -name '.*.cmd' -o -name '.*.d' | xargs rm -f
	rm -rf .tmp_versions $(TOOL_PROGS) $(TOOLS)/decode_test
	@if [ -f selftests/Makefile ]; then $(MAKE) -C selftests clean; fi

.PHONY: all all-tools module selftests tools okcov-cover cover-tests check check-all demo bench \
	compare report report-test cover-kernels-test cover-lcov-test install install-tools install-headers \
	dkms-source dkms-install dkms-check deb deb-check decode-test syz-image syz-smoke syz-hints syz-campaign clean
