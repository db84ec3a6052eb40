# SPDX-License-Identifier: GPL-2.0
#
# Shared shell functions of the okcov scripts.  Source it from bash:
#
#	. "$(dirname "$0")/lib.sh"
#
# Cache layout (${OKCOV_CACHE:-$HOME/.cache/okcov}, never in the checkout):
#
#	kernels/NAME/root/	the kernel's packages, dpkg-deb -x'ed
#	kernels/NAME/kernel.env	shell variables describing it (see
#				write_kernel_env)
#	build/CHECKOUT/NAME/okcov/
#				out-of-tree build of okcov.ko for NAME from the
#				checkout CHECKOUT (its directory name and a hash
#				of its path; $OKCOV_BUILD overrides); extra
#				modules are built below it at their repo path
#	src/linux-6.1/		Debian's linux-source-6.1, extracted
#	chroot/SUITE/		a debootstrapped chroot module builds run in
#				(kernels.list builder=), and chroot/chroot-run
#	apt/			apt state: host pkgcache, private suites
#	runs/			guest console logs of scripts/vm-run
#
# Kernels are listed in scripts/kernels.list.  Fetching dispatches on its
# kind column to fetch_kind_<kind>; a builder=NAME option makes module
# builds run under builder_NAME.

OKCOV_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OKCOV_CACHE=${OKCOV_CACHE:-$HOME/.cache/okcov}
OKCOV_KERNELS_LIST=${OKCOV_KERNELS_LIST:-$OKCOV_ROOT/scripts/kernels.list}
OKCOV_DEFAULT_SOURCE=${OKCOV_DEFAULT_SOURCE:-6.1}
# Module builds, one tree per checkout: several checkouts (a developer's,
# CI's fresh clone) may share the cache at the same time.
OKCOV_BUILD=${OKCOV_BUILD:-$OKCOV_CACHE/build/$(basename "$OKCOV_ROOT")-$(
	printf %s "$OKCOV_ROOT" | md5sum | cut -c1-8)}
export OKCOV_CACHE

okcov_prog=$(basename "$0")

# okcov_usage: print the calling script's header comment to stderr.
okcov_usage() {
	awk 'NR > 3 && /^#/ { sub(/^# ?/, ""); print; next } NR > 3 { exit }' \
		"$0" >&2
}

msg() { echo "$okcov_prog: $*" >&2; }
die() { echo "$okcov_prog: $*" >&2; exit 1; }

# Run as root: directly, or through sudo when we are not.
as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	else
		sudo "$@"
	fi
}

# need_pkgs PKG...: install the Debian packages that are missing.
okcov_apt_updated=
need_pkgs() {
	local p missing=()

	declare -A ok=()
	while read -r p; do
		ok[$p]=1
	done < <(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "$@" \
		2>/dev/null | awk '$2 == "installed" { print $1 }')
	for p in "$@"; do
		[ -n "${ok[$p]:-}" ] || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	msg "installing ${missing[*]}"
	if [ -z "$okcov_apt_updated" ]; then
		as_root apt-get -q update >&2 || die "apt-get update failed"
		okcov_apt_updated=1
	fi
	as_root env DEBIAN_FRONTEND=noninteractive \
		apt-get -q -y --no-install-recommends install "${missing[@]}" >&2 ||
		die "apt-get install ${missing[*]} failed"
}

# The packages each script needs on the host.
OKCOV_FETCH_PKGS=(apt dpkg)
OKCOV_BUILD_PKGS=(make gcc libc6-dev rsync libelf1 util-linux)
OKCOV_VM_PKGS=(qemu-system-x86 busybox-static cpio coreutils util-linux)
OKCOV_TEST_PKGS=(gcc make libc6-dev libkmod-dev pkg-config kmod)

# ---------------------------------------------------------------- apt

# The host's apt, with a persistent package cache: the host's apt config
# may disable pkgcache.bin (Debian's docker images do), which makes every
# apt-cache call rebuild it for seconds.
host_apt() {
	local cmd=$1
	shift
	mkdir -p "$OKCOV_CACHE/apt/host"
	"$cmd" -o "Dir::Cache::pkgcache=$OKCOV_CACHE/apt/host/pkgcache.bin" \
		-o "Dir::Cache::srcpkgcache=$OKCOV_CACHE/apt/host/srcpkgcache.bin" \
		-o APT::Sandbox::User=root "$@"
}

# host_has_suite SUITE: do the host's apt sources carry SUITE?  Read from
# the sources files, not the lists, which a fresh machine may not have yet.
host_has_suite() {
	local f

	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
		 /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		awk -v s="$1" '
			/^[ \t]*#/ { next }
			tolower($1) == "suites:" {
				for (i = 2; i <= NF; i++) if ($i == s) f = 1
			}
			$1 == "deb" {
				i = 2; if ($2 ~ /^\[/) while ($i !~ /\]$/) i++
				if ($2 ~ /^\[/) i++
				if ($(i + 1) == s) f = 1
			}
			END { exit !f }' "$f" && return 0
	done
	return 1
}

# host_lists SUITE: make sure the host's package lists for SUITE exist.
host_lists() {
	compgen -G "/var/lib/apt/lists/*_dists_$1_*Release" >/dev/null &&
		return 0
	[ -z "$okcov_apt_updated" ] || return 0
	msg "no package lists for $1: apt-get update"
	as_root apt-get -q update >&2 || die "apt-get update failed"
	okcov_apt_updated=1
}

# kapt SUITE apt-get|apt-cache ARGS...: apt for SUITE, through the host's
# sources when they carry it, else through scripts/apt-private.  Never
# writes an archive address anywhere: apt-private takes it from the host.
kapt() {
	local suite=$1
	shift
	if host_has_suite "$suite"; then
		host_lists "$suite"
		host_apt "$@"
	else
		"$OKCOV_ROOT/scripts/apt-private" "$suite" "$@"
	fi
}

# ------------------------------------------------------- kernels.list

# kernel_names: every name in kernels.list, in order.
kernel_names() {
	awk '!/^[ \t]*(#|$)/ { print $1 }' "$OKCOV_KERNELS_LIST"
}

default_kernel() {
	kernel_names | head -n 1
}

# kernel_entry NAME: set K_NAME K_SUITE K_FLAVOUR K_KIND and K_OPT[key]
# from NAME's line; fail if there is none.
declare -A K_OPT
kernel_entry() {
	local line opt f

	line=$(awk -v n="$1" '!/^[ \t]*(#|$)/ && $1 == n { print; exit }' \
		"$OKCOV_KERNELS_LIST")
	[ -n "$line" ] ||
		die "unknown kernel '$1' (known: $(kernel_names | xargs))"
	read -r -a f <<<"$line"	# no pathname expansion: options hold globs
	K_NAME=${f[0]} K_SUITE=${f[1]} K_FLAVOUR=${f[2]} K_KIND=${f[3]}
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

# --------------------------------------------------------- kernel.env

# kernel.env is sourced by the scripts.  Fields:
#
#	NAME SUITE FLAVOUR KIND	from kernels.list
#	ABI			Debian ABI, e.g. 6.1.0-57 (empty if built)
#	VERSION			package (or source) version, e.g. 6.1.192-3
#	KRELEASE		uname -r of the guest, e.g. 6.1.0-57-amd64
#	ROOT			the extracted packages
#	VMLINUZ			the bzImage to boot
#	KDIR			the headers/build tree for M= builds
#	MODDIR			the kernel's /lib/modules/KRELEASE
#	SYSTEM_MAP KCONFIG	System.map and .config of the kernel
#	BUILDER			command prefix for module builds (empty:
#				run make on the host)
write_kernel_env() {
	local f=$1 var
	shift
	: >"$f.new"
	for var in NAME SUITE FLAVOUR KIND ABI VERSION KRELEASE ROOT VMLINUZ \
		   KDIR MODDIR SYSTEM_MAP KCONFIG BUILDER; do
		printf '%s=%q\n' "$var" "${!var:-}" >>"$f.new"
	done
	mv "$f.new" "$f"
}

# load_kernel_env NAME: source NAME's kernel.env, fetching it if needed.
load_kernel_env() {
	local env
	env=$(kernel_dir "$1")/kernel.env
	[ -r "$env" ] || "$OKCOV_ROOT/scripts/fetch-kernel" "$1" >/dev/null ||
		die "cannot fetch kernel $1"
	# shellcheck disable=SC1090
	. "$env"
	[ -r "$VMLINUZ" ] && [ -d "$KDIR" ] ||
		die "kernel $1: $env points at missing files; run scripts/fetch-kernel $1"
}

# ------------------------------------------------------------- fetch

# fix_extracted_root ROOT: make an extracted package tree usable where it
# is: absolute symlinks (lib/modules/*/build -> /usr/src/...) point inside
# ROOT, and the headers' Makefile includes its -common sibling in ROOT.
fix_extracted_root() {
	local root=$1 link target mk

	while IFS= read -r -d '' link; do
		target=$(readlink "$link")
		ln -sfn "$(realpath -m -s --relative-to="$(dirname "$link")" \
			"$root$target")" "$link"
	done < <(find "$root" -type l -lname '/*' -print0)

	# 7.x's also sets KBUILD_OUTPUT=/usr/src/linux-headers-<krelease>.
	for mk in "$root"/usr/src/linux-headers-*/Makefile; do
		[ -f "$mk" ] || continue
		sed -i -e "s|^include /usr/src/|include $root/usr/src/|" \
			-e "s|^\(KBUILD_OUTPUT *:\{0,1\}= *\)/usr/src/|\1$root/usr/src/|" \
			"$mk"
	done
}

# deb_resolve: set the caller's abi and version from the metapackage of
# the current kernels.list entry (K_OPT[meta], default
# linux-image-<flavour>): the ABI is that of the linux-image-<abi>-<flavour>
# it depends on.  Asked at every call, never hard-coded.
deb_resolve() {
	local meta show dep

	meta=${K_OPT[meta]:-linux-image-$K_FLAVOUR}
	show=$(kapt "$K_SUITE" apt-cache show --no-all-versions "$meta") ||
		die "$K_NAME: no package $meta in $K_SUITE"
	version=$(awk '/^Version:/ { print $2; exit }' <<<"$show")
	dep=$(awk '/^(Pre-)?Depends:/ { sub(/^[^:]*: */, ""); print; exit }' \
		<<<"$show" | tr ',' '\n' | sed 's/^ *//; s/ .*//' |
		grep -m1 '^linux-image-') ||
		die "$K_NAME: $meta depends on no linux-image package"
	abi=${dep#linux-image-}
	abi=${abi%-"$K_FLAVOUR"}
	[ -n "$abi" ] && [ "$abi" != "${dep#linux-image-}" ] ||
		die "$K_NAME: cannot parse the ABI out of $dep"
}

# deb_current DIR ABI VERSION: is DIR's kernel.env that kernel, complete?
# An unchanged metapackage version means the cached tree is current.
deb_current() {
	[ -r "$1/kernel.env" ] && [ -d "$1/root" ] &&
	( . "$1/kernel.env" && [ "$ABI" = "$2" ] && [ "$VERSION" = "$3" ] &&
	  [ -r "$VMLINUZ" ] )
}

# deb_deps PATTERN PKG...: the packages PKG... depend on whose names match
# the ERE PATTERN, one per line.
deb_deps() {
	local pattern=$1
	shift
	kapt "$K_SUITE" apt-cache depends "$@" |
		awk -v p="$pattern" '$1 == "Depends:" && $2 ~ p { print $2 }' |
		sort -u
}

# deb_first PKG...: the first of PKG... that K_SUITE has.
deb_first() {
	local p
	for p in "$@"; do
		if kapt "$K_SUITE" apt-cache show --no-all-versions "$p" \
			>/dev/null 2>&1; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

# deb_fetch DIR PKG...: download PKG... from K_SUITE and make their
# extracted contents DIR/root (replaced as a whole).
deb_fetch() {
	local dir=$1 dl new deb
	shift

	msg "$K_NAME: fetching $abi ($version) from $K_SUITE: $*"
	dl=$dir/download
	new=$dir/root.new
	rm -rf "$dl" "$new"
	mkdir -p "$dl" "$new"
	(cd "$dl" && kapt "$K_SUITE" apt-get -q download "$@" >&2) ||
		die "$K_NAME: apt-get download failed"
	for deb in "$dl"/*.deb; do
		dpkg-deb -x "$deb" "$new" || die "$K_NAME: dpkg-deb -x $deb failed"
	done
	rm -rf "$dl" "$dir/root"
	mv "$new" "$dir/root"
	fix_extracted_root "$dir/root"
}

# fetch_kind_deb: a Debian kernel from apt, packaged as up to 6.12:
# linux-image-<abi>-<flavour>[-unsigned] holds /boot/vmlinuz-*, config,
# System.map and the modules.
fetch_kind_deb() {
	local dir abi version image headers pkgs

	dir=$(kernel_dir "$K_NAME")
	deb_resolve
	deb_current "$dir" "$abi" "$version" && return 0

	image=$(deb_first "linux-image-$abi-$K_FLAVOUR-unsigned" \
		"linux-image-$abi-$K_FLAVOUR") ||
		die "$K_NAME: no linux-image-$abi-$K_FLAVOUR in $K_SUITE"
	headers=linux-headers-$abi-$K_FLAVOUR
	# -common and linux-kbuild-X.Y: whatever these headers depend on.
	pkgs=$(deb_deps '^linux-(headers|kbuild)-' "$headers")
	[ -n "$pkgs" ] || die "$K_NAME: cannot resolve the deps of $headers"
	# shellcheck disable=SC2086
	deb_fetch "$dir" "$image" "$headers" $pkgs

	NAME=$K_NAME SUITE=$K_SUITE FLAVOUR=$K_FLAVOUR KIND=$K_KIND
	ABI=$abi VERSION=$version
	ROOT=$dir/root
	KRELEASE=$abi-$K_FLAVOUR
	VMLINUZ=$ROOT/boot/vmlinuz-$KRELEASE
	KDIR=$ROOT/usr/src/linux-headers-$KRELEASE
	MODDIR=$ROOT/lib/modules/$KRELEASE
	SYSTEM_MAP=$ROOT/boot/System.map-$KRELEASE
	KCONFIG=$ROOT/boot/config-$KRELEASE
	BUILDER=
	[ -r "$VMLINUZ" ] && [ -d "$KDIR" ] && [ -d "$MODDIR" ] ||
		die "$K_NAME: unexpected package layout in $ROOT"
	write_kernel_env "$dir/kernel.env"
}

# fetch_kind_deb_split: a Debian kernel from apt, packaged as from 7.x:
# the image is split into linux-binary[-unsigned]-<abi>-<flavour> (only
# /usr/lib/modules/<krelease>/vmlinuz[.unsigned]), linux-base-<abi>-<flavour>
# (config, modules.builtin, a stub System.map) and linux-modules-* (not
# fetched: the test VM needs no Debian module).
fetch_kind_deb_split() {
	local dir abi version binary headers pkgs f

	dir=$(kernel_dir "$K_NAME")
	deb_resolve
	deb_current "$dir" "$abi" "$version" && return 0

	binary=$(deb_first "linux-binary-unsigned-$abi-$K_FLAVOUR" \
		"linux-binary-$abi-$K_FLAVOUR") ||
		die "$K_NAME: no linux-binary-$abi-$K_FLAVOUR in $K_SUITE"
	headers=linux-headers-$abi-$K_FLAVOUR
	# linux-base-<abi>-<flavour>, -common and linux-kbuild-X.Y.
	pkgs=$(deb_deps '^linux-(headers|kbuild|base)-' "$binary" "$headers")
	grep -q '^linux-headers-' <<<"$pkgs" && grep -q '^linux-base-' <<<"$pkgs" ||
		die "$K_NAME: cannot resolve the deps of $binary and $headers"
	# shellcheck disable=SC2086
	deb_fetch "$dir" "$binary" "$headers" $pkgs

	NAME=$K_NAME SUITE=$K_SUITE FLAVOUR=$K_FLAVOUR KIND=$K_KIND
	ABI=$abi VERSION=$version
	ROOT=$dir/root
	KRELEASE=$abi-$K_FLAVOUR
	MODDIR=$ROOT/usr/lib/modules/$KRELEASE
	VMLINUZ=
	for f in "$MODDIR/vmlinuz.unsigned" "$MODDIR/vmlinuz" \
		 "$ROOT/boot/vmlinuz-$KRELEASE"; do
		[ -r "$f" ] && VMLINUZ=$f && break
	done
	KDIR=$ROOT/usr/src/linux-headers-$KRELEASE
	SYSTEM_MAP=$MODDIR/System.map
	KCONFIG=$MODDIR/config
	BUILDER=
	[ -n "$VMLINUZ" ] && [ -d "$KDIR" ] && [ -r "$KCONFIG" ] ||
		die "$K_NAME: unexpected package layout in $ROOT"
	write_kernel_env "$dir/kernel.env"
}

# ----------------------------------------------------------- builders
#
# builder_NAME (kernels.list builder=NAME) is called by fetch_kernel with
# the kernel's kernel.env loaded, and prints the command prefix module
# builds run under (kernel.env's BUILDER).

# builder_chroot SUITE PKG...: a debootstrapped SUITE chroot with PKG...
# in $OKCOV_CACHE/chroot/SUITE, created once (its .okcov-stamp lists what
# it was made with; an existing chroot without a stamp is adopted if it
# has every PKG); builds run in it through scripts/chroot-run with the
# cache bind-mounted at the same path, so kernel.env's paths hold inside.
builder_chroot() {
	local suite=$1 dir root want mirror t0
	shift

	dir=$OKCOV_CACHE/chroot
	root=$dir/$suite
	want="$suite $*"
	mkdir -p "$dir"
	(
		flock 8
		[ "$(cat "$root/.okcov-stamp" 2>/dev/null)" = "$want" ] && exit 0
		if [ -x "$root/usr/bin/env" ] &&
		   [ "$(dpkg-query --admindir="$root/var/lib/dpkg" -W \
			-f='${db:Status-Status}\n' "$@" 2>/dev/null |
			grep -c '^installed$')" -eq $# ]; then
			msg "adopting the $suite chroot in $root"
		else
			need_pkgs debootstrap
			mirror=$("$OKCOV_ROOT/scripts/apt-private" "$suite" mirror) ||
				die "no archive address for $suite"
			msg "creating a $suite chroot in $root (a few minutes)"
			t0=$(date +%s)
			# Never delete through a mount (chroot-run's binds live in
			# private namespaces; a stray one would take the cache along).
			! grep -qF " $root" /proc/self/mountinfo ||
				die "something is mounted below $root"
			rm -rf "$root.new"
			debootstrap --variant=minbase --include="$(IFS=,; echo "$*")" \
				"$suite" "$root.new" "$mirror" >"$dir/$suite.log" 2>&1 ||
				die "debootstrap $suite failed; see $dir/$suite.log"
			rm -rf "$root"
			mv "$root.new" "$root"
			msg "$suite chroot ready in $(($(date +%s) - t0)) s"
		fi
		echo "$want" >"$root/.okcov-stamp"
	) 8>"$dir/.lock" || return 1

	# kernel.env is shared by every checkout using this cache: point it at
	# a copy of the runner in the cache, not at this checkout.
	if ! cmp -s "$OKCOV_ROOT/scripts/chroot-run" "$dir/chroot-run"; then
		install -m 0755 "$OKCOV_ROOT/scripts/chroot-run" "$dir/chroot-run.$$" &&
			mv "$dir/chroot-run.$$" "$dir/chroot-run" || return 1
	fi
	echo "$dir/chroot-run --bind $OKCOV_CACHE $root"
}

# builder_trixie: Debian 13's gcc-14 (or whichever gcc-N the kernel's
# .kernelvariables name) and glibc, which the 7.x linux-kbuild tools are
# linked against; the host (bookworm) has neither.
builder_trixie() {
	local cc
	cc=$(sed -n 's/^CC *=.*(CROSS_COMPILE)\(gcc-[0-9]*\).*/\1/p' \
		"$KDIR/.kernelvariables" 2>/dev/null)
	builder_chroot trixie "${cc:-gcc-14}" make libc6-dev libelf1t64 bc \
		kmod xz-utils dwarves
}

# need_kernel_cc: with kernel.env loaded and no BUILDER, install the
# compiler Debian built the kernel with (CC in the headers'
# .kernelvariables, gcc-12 for bookworm) if the host lacks it.
need_kernel_cc() {
	local cc

	[ -z "${BUILDER:-}" ] || return 0
	need_pkgs "${OKCOV_BUILD_PKGS[@]}"
	# Kernels built here (debug) have no .kernelvariables: the host's gcc.
	cc=$(sed -n 's/^CC *=.*(CROSS_COMPILE)//p' "$KDIR/.kernelvariables" \
		2>/dev/null) || true
	if [ -n "$cc" ] && ! command -v "$cc" >/dev/null; then
		need_pkgs "$cc"
	fi
}

# kernel_vmlinux: with kernel.env loaded, print the path of the kernel as
# an uncompressed ELF, extracted from VMLINUZ once (QEMU boots it through
# its PVH entry: no decompression under emulation, but also no KASLR).
kernel_vmlinux() {
	local out off magic tool id
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
		tail -c +$((off + 1)) "$VMLINUZ" | "$tool" -dc >"$out.tmp" 2>/dev/null
		if [ "$(head -c 4 "$out.tmp" | od -An -c | tr -d ' ')" = '177ELF' ]; then
			mv "$out.tmp" "$out"
			echo "$id" >"$out.id"
			echo "$out"
			return 0
		fi
	done
	rm -f "$out.tmp"
	die "cannot extract an ELF vmlinux from $VMLINUZ"
}

# fetch_kernel NAME: make NAME's kernel.env current; print its path.
fetch_kernel() {
	local fn dir

	kernel_entry "$1"
	dir=$(kernel_dir "$K_NAME")
	fn=fetch_kind_${K_KIND//-/_}
	declare -F "$fn" >/dev/null ||
		die "$K_NAME: kind '$K_KIND' has no $fn in scripts/lib.sh"
	need_pkgs "${OKCOV_FETCH_PKGS[@]}"
	mkdir -p "$dir"
	(
		flock 9
		"$fn"
		if [ -n "${K_OPT[builder]:-}" ]; then
			fn=builder_${K_OPT[builder]//-/_}
			declare -F "$fn" >/dev/null ||
				die "$K_NAME: builder '${K_OPT[builder]}' has no $fn"
			# Prints the command prefix for module builds.
			. "$dir/kernel.env"
			BUILDER=$("$fn") || die "$K_NAME: $fn failed"
			write_kernel_env "$dir/kernel.env"
		fi
	) 9>"$dir/.lock" || exit 1
	echo "$dir/kernel.env"
}

# fetch_source [SERIES]: Debian's linux-source-SERIES extracted in
# $OKCOV_CACHE/src/linux-SERIES; print that directory.  An existing tree
# is kept as it is (selftests only need its headers and scripts).
fetch_source() {
	local series=${1:-$OKCOV_DEFAULT_SOURCE} src dir deb tarball tmp

	src=$OKCOV_CACHE/src
	dir=$src/linux-$series
	if [ -f "$dir/Makefile" ] &&
	   [ -f "$dir/tools/testing/selftests/kselftest_harness.h" ]; then
		echo "$dir"
		return 0
	fi
	need_pkgs "${OKCOV_FETCH_PKGS[@]}" xz-utils
	mkdir -p "$src"
	(
		flock 9
		[ -f "$dir/Makefile" ] && exit 0
		msg "fetching linux-source-$series"
		host_lists "$(. /etc/os-release && echo "$VERSION_CODENAME")"
		rm -f "$src"/linux-source-"$series"_*.deb
		(cd "$src" && host_apt apt-get -q download "linux-source-$series" >&2) ||
			die "apt-get download linux-source-$series failed"
		deb=$(ls "$src"/linux-source-"$series"_*.deb | head -n 1)
		rm -rf "$src/pkg"
		dpkg-deb -x "$deb" "$src/pkg" || die "dpkg-deb -x $deb failed"
		tarball=$(ls "$src"/pkg/usr/src/linux-source-"$series".tar.* | head -n 1)
		tmp=$src/extract.tmp
		rm -rf "$tmp"
		mkdir -p "$tmp"
		tar -xaf "$tarball" -C "$tmp" || die "tar -xaf $tarball failed"
		rm -rf "$dir"
		mv "$tmp/linux-source-$series" "$dir"
		rm -rf "$tmp"
	) 9>"$src/.lock" || exit 1
	echo "$dir"
}

# fetch_kind_build: a kernel built from Debian's linux-source with the
# config fragment of the config= option (today only `debug`, built by
# scripts/build-debug-kernel, which keeps its own cache key and writes
# kernel.env).  Cold, this is a long build; warm it is a stamp check.
fetch_kind_build() {
	[ "${K_OPT[config]:-}" = scripts/debug.config ] ||
		die "$K_NAME: kind build knows only config=scripts/debug.config"
	local env NAME SUITE FLAVOUR KIND ABI VERSION KRELEASE ROOT VMLINUZ KDIR
	local MODDIR SYSTEM_MAP KCONFIG BUILDER SRCVERSION VMLINUX
	"$OKCOV_ROOT/scripts/build-debug-kernel" >/dev/null ||
		die "$K_NAME: scripts/build-debug-kernel failed"
	env=$(kernel_dir "$K_NAME")/kernel.env
	# Complete its kernel.env with the fields every kernel has.
	# shellcheck disable=SC1090
	. "$env"
	NAME=$K_NAME SUITE=$K_SUITE FLAVOUR=$K_FLAVOUR KIND=$K_KIND
	VERSION=${SRCVERSION:-} ABI=$KRELEASE ROOT=$KDIR BUILDER=
	write_kernel_env "$env"
}
