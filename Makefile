# SPDX-License-Identifier: GPL-2.0
#
# okcov user targets.  The module itself is described by Kbuild.
#
#   make                    okcov.ko (+ selftests) against the running
#                           kernel's headers, else against the default test
#                           kernel (fetched into the cache)
#   make KERNEL=<name>      against a test kernel from
#                           scripts/kernels/kernels.list
#   make KDIR=<dir>         against any kernel build tree
#   make check              build and run the selftests in a QEMU guest
#   make check-all          the same on every stock test kernel, then the
#                           stress test
#   make check-ci           check-all without the ci=no kernels (debug):
#                           what CI runs, after make style
#   make style              checkpatch on the C files, shellcheck on the
#                           scripts
#   make demo | bench       coverage demo | overhead benchmark, in a guest
#   make install            modules_install into KDIR's kernel (default:
#                           the running one)
#   make dkms-install       register, build and install okcov with DKMS
#   make clean

VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
RUNNING_KDIR := /lib/modules/$(shell uname -r)/build
KERNEL ?=
KDIR ?=

# KDIR and the builder prefix, resolved only by the targets that need them.
kdir = $(or $(KDIR),$(if $(KERNEL),$$(scripts/fetch-kernel --print KDIR $(KERNEL)),$$(if [ -d $(RUNNING_KDIR) ]; then echo $(RUNNING_KDIR); else scripts/fetch-kernel --print KDIR; fi)))
builder = $(if $(and $(KERNEL),$(if $(KDIR),,1)),$$(scripts/fetch-kernel --print BUILDER $(KERNEL)))
kernel_opt = $(if $(KERNEL),--kernel $(KERNEL))

all: module selftests

module:
	@kdir="$(kdir)" && test -n "$$kdir" && echo "okcov: building against $$kdir" && \
	$(builder) $(MAKE) -C "$$kdir" M=$(CURDIR) modules

selftests:
	@src=$$(scripts/fetch-source) && \
	$(MAKE) -C selftests HARNESS_DIR=$$src/tools/testing/selftests

check:
	scripts/check $(kernel_opt)

check-all:
	scripts/check-all

check-ci:
	scripts/check-all --ci

style:
	scripts/style

demo:
	scripts/demo $(kernel_opt)

bench:
	scripts/bench $(kernel_opt)

install: module
	@kdir="$(kdir)" && $(MAKE) -C "$$kdir" M=$(CURDIR) modules_install && \
	depmod -a "$$(sed -n 's/^#define UTS_RELEASE "\(.*\)"/\1/p' \
		"$$kdir/include/generated/utsrelease.h")"

dkms-install:
	rm -rf /usr/src/okcov-$(VERSION)
	mkdir -p /usr/src/okcov-$(VERSION)
	cp -a Kbuild dkms.conf module uapi /usr/src/okcov-$(VERSION)/
	dkms remove -m okcov -v $(VERSION) --all 2>/dev/null || true
	dkms add -m okcov -v $(VERSION)
	dkms build -m okcov -v $(VERSION)
	dkms install -m okcov -v $(VERSION)

clean:
	rm -f *.o *.ko *.mod *.mod.c .*.cmd Module.symvers modules.order
	find module -name '*.o' -o -name '.*.cmd' -o -name '.*.d' | xargs rm -f
	rm -rf .tmp_versions
	$(MAKE) -C selftests clean

.PHONY: all module selftests check check-all check-ci style demo bench install dkms-install clean
