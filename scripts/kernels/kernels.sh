# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# shellcheck disable=SC2034 # K_* and OKCOV_*: read by the sourcing scripts
# shellcheck disable=SC2153 # VMLINUZ, VMLINUX...: kernel.env's, set by sourcing it
#
# The test kernels, as the other scripts see them: read kernels.list and
# a fetched kernel's kernel.env.  Sourced by scripts/lib.sh.  Fetching and
# building (the only writer of kernel.env) is scripts/kernels/fetch.sh,
# run through scripts/fetch-kernel.
#
# Cache layout (${OKCOV_CACHE:-$HOME/.cache/okcov}, never in the checkout):
#
#	kernels/NAME/kernel.env	shell variables describing NAME (fields
#				below)
#	kernels/NAME/root/	deb kinds: the kernel's packages, extracted
#	kernels/NAME/build/	build kind: the O= build tree (also KDIR);
#				key, build.log, build.time beside it
#	kernels/NAME/vmlinux	deb kinds: the ELF inside VMLINUZ
#				(kernel_vmlinux), vmlinux.id its key
#	decode/NAME/		the guest's /proc/kallsyms text symbols,
#				for selftests/decode/run
#	src/linux-SERIES/	Debian's linux-source-SERIES, extracted, and
#				src/linux-SERIES.version its package version
#	chroot/SUITE/		a chroot module builds run in (builder=)
#	apt/			apt state: host pkgcache, private suites
#
# kernel.env fields:
#
#	NAME SUITE FLAVOUR KIND	from kernels.list
#	ARCH			Debian architecture of the kernel, from
#				the flavour's suffix (amd64, arm64)
#	ABI			Debian ABI, e.g. 6.1.0-57 (build kind: KRELEASE)
#	VERSION			package version of the kernel (deb kinds) or
#				of the linux-source it was built from
#	KRELEASE		uname -r of the guest, e.g. 6.1.0-57-amd64
#	ROOT			the extracted packages (build kind: the tree)
#	VMLINUZ			the bzImage to boot
#	VMLINUX			the uncompressed ELF kernel, if there is one
#	KDIR			the headers/build tree for M= builds
#	MODDIR			the kernel's /lib/modules/KRELEASE
#	SYSTEM_MAP KCONFIG	System.map and .config of the kernel
#	BUILDER			command prefix for module builds (empty:
#				run make on the host); for another ARCH than
#				the host's it ends in "env ARCH=... CROSS_COMPILE=..."

OKCOV_KERNELS_LIST=${OKCOV_KERNELS_LIST:-$OKCOV_ROOT/scripts/kernels/kernels.list}
# The default Debian linux-source series, from the host's suite: the
# kselftest harness and checkpatch.pl come from linux-source-$it, and so do
# the kernels built from source that name no other (kernels.list source=).
OKCOV_SOURCE_SERIES=6.1
# The build machine's Debian architecture.
OKCOV_HOST_ARCH=$(dpkg --print-architecture)

# kernel_names: every name in kernels.list, in order.
kernel_names() {
	awk '!/^[ \t]*(#|$)/ { print $1 }' "$OKCOV_KERNELS_LIST"
}

default_kernel() {
	kernel_names | head -n 1
}

# kernel_entry NAME: set K_NAME K_SUITE K_FLAVOUR K_KIND K_ARCH and
# K_OPT[key] from NAME's line; fail if there is none.  K_ARCH is the
# Debian architecture that ends the flavour (rt-arm64: arm64).
declare -A K_OPT
kernel_entry() {
	local line opt f

	line=$(awk -v n="$1" '!/^[ \t]*(#|$)/ && $1 == n { print; exit }' \
		"$OKCOV_KERNELS_LIST")
	[ -n "$line" ] ||
		die "unknown kernel '$1' (known: $(kernel_names | xargs))"
	read -r -a f <<<"$line"	# no pathname expansion: options hold globs
	K_NAME=${f[0]} K_SUITE=${f[1]} K_FLAVOUR=${f[2]} K_KIND=${f[3]}
	K_ARCH=${K_FLAVOUR##*-}
	case $K_ARCH in
	amd64|arm64) ;;
	*) die "kernels.list: $K_NAME: no architecture in flavour '$K_FLAVOUR'" ;;
	esac
	K_OPT=()
	for opt in "${f[@]:4}"; do
		case $opt in
		*=*) K_OPT[${opt%%=*}]=${opt#*=} ;;
		*) die "kernels.list: $K_NAME: bad option '$opt'" ;;
		esac
	done
}

kernel_dir() {
	echo "$OKCOV_CACHE/kernels/$1"
}

# load_kernel_env NAME: source NAME's kernel.env, fetching NAME first if
# it has none (scripts/fetch-kernel NAME also checks a fetched one).
load_kernel_env() {
	local env

	env=$(kernel_dir "$1")/kernel.env
	[ -r "$env" ] || "$OKCOV_ROOT/scripts/fetch-kernel" "$1" >/dev/null ||
		die "cannot fetch kernel $1"
	# shellcheck disable=SC1090
	. "$env"
	# Written by a checkout that predates the fields: the host's.
	ARCH=${ARCH:-$OKCOV_HOST_ARCH} CROSS=${CROSS:-}
	[ -r "$VMLINUZ" ] && [ -d "$KDIR" ] ||
		die "kernel $1: $env points at missing files; run scripts/fetch-kernel $1"
}

# guest_make_vars: after load_kernel_env, set GUEST_MAKE to the make
# variables that build guest programs (selftests/) for the kernel's
# architecture, and GUEST_SUFFIX to the suffix of their build directory;
# installs the cross compiler it needs.  Static for another architecture:
# the host has no libraries of it to put in the guest, and Debian ships no
# static libkmod (LIBKMOD=0: the tests load modules with finit_module()).
guest_make_vars() {
	GUEST_MAKE=() GUEST_SUFFIX=
	[ "$ARCH" != "$OKCOV_HOST_ARCH" ] || return 0
	case $ARCH in
	arm64) need_pkgs gcc-aarch64-linux-gnu libc6-dev-arm64-cross ;;
	*) die "no cross compiler for guest programs of $ARCH" ;;
	esac
	GUEST_MAKE=(CC="${CROSS}gcc" LDFLAGS=-static LIBKMOD=0)
	GUEST_SUFFIX=-$ARCH
}

# kernel_vmlinux: after load_kernel_env, print the kernel as an
# uncompressed ELF (for QEMU's PVH entry in scripts/vm/run, for objdump in
# selftests/decode/): kernel.env's VMLINUX for built kernels, else
# extracted from VMLINUZ once, next to ROOT, and again when VMLINUZ
# changes.  Its symbols are stripped; its sections are not.
kernel_vmlinux() {
	local out off magic tool id

	if [ -n "${VMLINUX:-}" ] && [ -r "$VMLINUX" ]; then
		echo "$VMLINUX"
		return 0
	fi
	out=$(dirname "$ROOT")/vmlinux
	id=$(stat -L -c '%n %s %Y' "$VMLINUZ")
	if [ -s "$out" ] && [ "$(cat "$out.id" 2>/dev/null)" = "$id" ]; then
		echo "$out"
		return 0
	fi
	for magic in '\xfd7zXZ\x00:xz' '\x28\xb5\x2f\xfd:zstd' '\x1f\x8b\x08:gzip'; do
		tool=${magic##*:}
		off=$(LC_ALL=C grep -abo -P "${magic%:*}" "$VMLINUZ" |
			head -n 1 | cut -d: -f1) || true
		[ -n "$off" ] || continue
		command -v "$tool" >/dev/null || continue
		tail -c +$((off + 1)) "$VMLINUZ" | "$tool" -dc >"$out.tmp.$$" 2>/dev/null
		if [ "$(head -c 4 "$out.tmp.$$" | od -An -c | tr -d ' ')" = '177ELF' ]; then
			# Two callers at once write the same bytes: last one wins.
			echo "$id" >"$out.id.$$"
			mv "$out.tmp.$$" "$out"
			mv "$out.id.$$" "$out.id"
			echo "$out"
			return 0
		fi
	done
	rm -f "$out.tmp.$$"
	die "cannot extract an ELF vmlinux from $VMLINUZ"
}
