# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# shellcheck disable=SC2034 # kernel.env's fields, written by name
#
# Kernel acquisition: make a kernels.list entry's kernel.env current.
# Sourced by scripts/fetch-kernel and scripts/fetch-source, after
# scripts/lib.sh.  fetch_kernel() is the only writer of kernel.env (fields:
# scripts/kernels/kernels.sh).
#
# fetch_kernel dispatches on the entry's kind column to fetch_kind_<kind>,
# which sets the kernel.env fields (fetching or building only what is not
# current); a builder=NAME option then sets BUILDER through builder_NAME.
#
#	deb		a Debian kernel from apt, packaged as up to 6.12
#	deb-split	the same, packaged as from 7.x
#	build		built from Debian's linux-source with a config fragment

OKCOV_KERNELS_DIR=$OKCOV_ROOT/scripts/kernels

# ------------------------------------------------------------------ apt

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
# sources when they carry it, else through scripts/kernels/apt-private.  Never
# writes an archive address anywhere: apt-private takes it from the host.
# A kernel of another architecture (K_ARCH) always goes through apt-private,
# with the host's architecture as a second one (linux-kbuild-X.Y:amd64).
kapt() {
	local suite=$1
	shift
	if [ "${K_ARCH:-$OKCOV_HOST_ARCH}" != "$OKCOV_HOST_ARCH" ]; then
		OKCOV_APT_ARCH=$K_ARCH,$OKCOV_HOST_ARCH \
			"$OKCOV_KERNELS_DIR/apt-private" "$suite" "$@"
	elif host_has_suite "$suite"; then
		host_lists "$suite"
		host_apt "$@"
	else
		"$OKCOV_KERNELS_DIR/apt-private" "$suite" "$@"
	fi
}

# ------------------------------------------------------------- kernel.env

OKCOV_ENV_FIELDS=(NAME SUITE FLAVOUR KIND ARCH ABI VERSION KRELEASE ROOT
	VMLINUZ VMLINUX KDIR MODDIR SYSTEM_MAP KCONFIG CROSS BUILDER)

# write_kernel_env FILE: write the fields; FILE is replaced only when its
# content changes.
write_kernel_env() {
	local f=$1 var
	for var in "${OKCOV_ENV_FIELDS[@]}"; do
		printf '%s=%q\n' "$var" "${!var:-}"
	done >"$f.new"
	if cmp -s "$f.new" "$f"; then
		rm -f "$f.new"
	else
		mv "$f.new" "$f"
	fi
}

# fetch_kernel NAME: make NAME's kernel.env current; print its path.
fetch_kernel() {
	local fn dir

	kernel_entry "$1"
	dir=$(kernel_dir "$K_NAME")
	fn=fetch_kind_${K_KIND//-/_}
	declare -F "$fn" >/dev/null ||
		die "$K_NAME: kind '$K_KIND' has no $fn in scripts/kernels/fetch.sh"
	need_pkgs "${OKCOV_FETCH_PKGS[@]}"
	mkdir -p "$dir"
	(
		flock 9
		NAME=$K_NAME SUITE=$K_SUITE FLAVOUR=$K_FLAVOUR KIND=$K_KIND
		ARCH=$K_ARCH CROSS=
		"$fn" "$dir"
		BUILDER=
		if [ -n "${K_OPT[builder]:-}" ]; then
			fn=builder_${K_OPT[builder]//-/_}
			declare -F "$fn" >/dev/null ||
				die "$K_NAME: builder '${K_OPT[builder]}' has no $fn"
			# Prints the command prefix for module builds.
			BUILDER=$("$fn") || die "$K_NAME: $fn failed"
		fi
		# Kbuild takes ARCH and CROSS_COMPILE from the environment.
		if [ "$ARCH" != "$OKCOV_HOST_ARCH" ]; then
			CROSS=$(cross_prefix "$ARCH")
			BUILDER="${BUILDER:+$BUILDER }env ARCH=$ARCH CROSS_COMPILE=$CROSS"
		fi
		write_kernel_env "$dir/kernel.env"
	) 9>"$dir/.lock" || exit 1
	echo "$dir/kernel.env"
}


# cross_prefix ARCH: the GNU triplet prefix of Debian's cross compilers
# for ARCH (gcc-12-aarch64-linux-gnu installs aarch64-linux-gnu-gcc-12).
cross_prefix() {
	case $1 in
	arm64) echo aarch64-linux-gnu- ;;
	amd64) echo x86_64-linux-gnu- ;;
	*) die "no cross compiler known for $1" ;;
	esac
}

# deb_host_tools PKG...: PKG..., one per line, with linux-kbuild-* taken
# for the host's architecture when the kernel is another's: its fixdep
# and modpost run on the build machine.
deb_host_tools() {
	local p
	for p in "$@"; do
		case $p in
		linux-kbuild-*) [ "$K_ARCH" = "$OKCOV_HOST_ARCH" ] ||
			p=$p:$OKCOV_HOST_ARCH ;;
		esac
		echo "$p"
	done
}

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
	local dir=$1 abi version image headers pkgs

	deb_resolve
	if ! deb_current "$dir" "$abi" "$version"; then
		image=$(deb_first "linux-image-$abi-$K_FLAVOUR-unsigned" \
			"linux-image-$abi-$K_FLAVOUR") ||
			die "$K_NAME: no linux-image-$abi-$K_FLAVOUR in $K_SUITE"
		headers=linux-headers-$abi-$K_FLAVOUR
		# -common and linux-kbuild-X.Y: whatever these headers depend on.
		pkgs=$(deb_deps '^linux-(headers|kbuild)-' "$headers")
		[ -n "$pkgs" ] || die "$K_NAME: cannot resolve the deps of $headers"
		# shellcheck disable=SC2086
		pkgs=$(deb_host_tools $pkgs)
		# shellcheck disable=SC2086
		deb_fetch "$dir" "$image" "$headers" $pkgs
	fi

	ABI=$abi VERSION=$version
	ROOT=$dir/root
	KRELEASE=$abi-$K_FLAVOUR
	VMLINUZ=$ROOT/boot/vmlinuz-$KRELEASE
	KDIR=$ROOT/usr/src/linux-headers-$KRELEASE
	MODDIR=$ROOT/lib/modules/$KRELEASE
	SYSTEM_MAP=$ROOT/boot/System.map-$KRELEASE
	KCONFIG=$ROOT/boot/config-$KRELEASE
	VMLINUX=
	[ -r "$VMLINUZ" ] && [ -d "$KDIR" ] && [ -d "$MODDIR" ] ||
		die "$K_NAME: unexpected package layout in $ROOT"
}

# fetch_kind_deb_split: a Debian kernel from apt, packaged as from 7.x:
# the image is split into linux-binary[-unsigned]-<abi>-<flavour> (only
# /usr/lib/modules/<krelease>/vmlinuz[.unsigned]), linux-base-<abi>-<flavour>
# (config, modules.builtin, a stub System.map) and linux-modules-* (not
# fetched: the test VM needs no Debian module).
fetch_kind_deb_split() {
	local dir=$1 abi version binary headers pkgs f

	deb_resolve
	if ! deb_current "$dir" "$abi" "$version"; then
		binary=$(deb_first "linux-binary-unsigned-$abi-$K_FLAVOUR" \
			"linux-binary-$abi-$K_FLAVOUR") ||
			die "$K_NAME: no linux-binary-$abi-$K_FLAVOUR in $K_SUITE"
		headers=linux-headers-$abi-$K_FLAVOUR
		# linux-base-<abi>-<flavour>, -common and linux-kbuild-X.Y.
		pkgs=$(deb_deps '^linux-(headers|kbuild|base)-' "$binary" "$headers")
		grep -q '^linux-headers-' <<<"$pkgs" &&
			grep -q '^linux-base-' <<<"$pkgs" ||
			die "$K_NAME: cannot resolve the deps of $binary and $headers"
		# shellcheck disable=SC2086
		pkgs=$(deb_host_tools $pkgs)
		# shellcheck disable=SC2086
		deb_fetch "$dir" "$binary" "$headers" $pkgs
	fi

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
	VMLINUX=
	[ -n "$VMLINUZ" ] && [ -d "$KDIR" ] && [ -r "$KCONFIG" ] ||
		die "$K_NAME: unexpected package layout in $ROOT"
}

# ---------------------------------------------------------- linux-source

# fetch_source [SERIES [SUITE]]: Debian's linux-source-SERIES (default
# $OKCOV_SOURCE_SERIES) from SUITE (default the host's own suite; another
# one through kapt) extracted in $OKCOV_CACHE/src/linux-SERIES, its
# package version in src/linux-SERIES.version; print the directory.  An
# existing tree is kept (remove it to fetch a newer linux-source).  One
# lock per series: two series download and extract side by side.
fetch_source() {
	local series=${1:-$OKCOV_SOURCE_SERIES} suite=${2:-} src dir deb tarball tmp f
	local pkg t0

	src=$OKCOV_CACHE/src
	dir=$src/linux-$series
	if [ -f "$dir/Makefile" ] && [ -s "$dir.version" ]; then
		echo "$dir"
		return 0
	fi
	need_pkgs "${OKCOV_FETCH_PKGS[@]}" xz-utils
	mkdir -p "$src"
	(
		flock 9
		[ -f "$dir/Makefile" ] && [ -s "$dir.version" ] && exit 0
		deb=
		for f in "$src"/linux-source-"$series"_*.deb; do
			[ -f "$f" ] && { [ -z "$deb" ] || [ "$f" -nt "$deb" ]; } &&
				deb=$f
		done
		if [ -f "$dir/Makefile" ] && [ -n "$deb" ]; then
			# Extracted without its version: the .deb beside it has it.
			dpkg-deb -f "$deb" Version >"$dir.version"
			exit 0
		fi
		msg "fetching linux-source-$series${suite:+ from $suite}"
		t0=$(date +%s)
		rm -f "$src"/linux-source-"$series"_*.deb
		if [ -n "$suite" ]; then
			(cd "$src" && kapt "$suite" apt-get -q download \
				"linux-source-$series" >&2)
		else
			host_lists "$(. /etc/os-release && echo "$VERSION_CODENAME")"
			(cd "$src" && host_apt apt-get -q download \
				"linux-source-$series" >&2)
		fi || die "apt-get download linux-source-$series failed"
		deb=$(compgen -G "$src/linux-source-${series}_*.deb" | head -n 1)
		pkg=$src/pkg-$series
		rm -rf "$pkg"
		dpkg-deb -x "$deb" "$pkg" || die "dpkg-deb -x $deb failed"
		tarball=$(compgen -G "$pkg/usr/src/linux-source-$series.tar.*" |
			head -n 1)
		tmp=$src/extract-$series.tmp
		rm -rf "$tmp"
		mkdir -p "$tmp"
		tar -xaf "$tarball" -C "$tmp" || die "tar -xaf $tarball failed"
		rm -rf "$dir" "$pkg"
		mv "$tmp/linux-source-$series" "$dir"
		rm -rf "$tmp"
		dpkg-deb -f "$deb" Version >"$dir.version"
		msg "linux-source-$series ready in $(($(date +%s) - t0)) s"
	) 9>"$src/.lock-$series" || exit 1
	echo "$dir"
}

# ------------------------------------------------------ the build kind

# build_base_targets BASE: the make targets that make BASE's .config, in
# order: "defconfig" is the architecture's, "tinyconfig" and "allnoconfig"
# are themselves, anything else X is the fragment target X.config
# (kvm_guest.config...).
build_base_targets() {
	local t parts

	IFS=+ read -r -a parts <<<"$1"
	for t in "${parts[@]}"; do
		case $t in
		defconfig) echo x86_64_defconfig ;;
		tinyconfig|allnoconfig) echo "$t" ;;
		*) echo "$t.config" ;;
		esac
	done
}

# build_key BASE FRAGMENT SRCVERSION SERIES: the cache key of a built
# kernel.  An out-of-tree module must be built with the compiler that
# built its kernel, so the compiler is part of it.  (SRCVERSION names the
# suite too: 6.12.95-1~bpo12+1.)  Of the fragment only what Kconfig reads
# counts: its comments and blank lines do not, but "# CONFIG_X is not
# set" does, so editing a comment rebuilds nothing.
build_key() {
	local recipe

	recipe=$( (build_base_targets "$1"; basename "$2") |
		sed ':a; N; $!ba; s/\n/ + /g')
	{
		echo "recipe: $recipe"
		echo "source: linux-source-$4 $3"
		echo "compiler: $(gcc --version | head -n 1)"
		awk '/^# CONFIG_[A-Za-z0-9_]+ is not set$/ || !/^[ \t]*(#|$)/' "$2"
	} | sha256sum | cut -d' ' -f1
}

# build_verify_config FRAGMENT CONFIG: Kconfig drops options whose
# dependencies are unmet without a word: every "CONFIG_X=v" of FRAGMENT
# must be in CONFIG verbatim, and no "# CONFIG_X is not set" enabled.
build_verify_config() {
	local line opt bad=0

	while IFS= read -r line; do
		case $line in
		CONFIG_*=*)
			grep -qxF -- "$line" "$2" && continue
			opt=${line%%=*}
			msg "$K_NAME: not applied: $line (got: $(grep -E \
				"^(# )?${opt}[= ]" "$2" || echo absent))"
			bad=1
			;;
		"# CONFIG_"*" is not set")
			opt=${line#\# }
			opt=${opt%% *}
			grep -qE "^$opt=[ym]" "$2" || continue
			msg "$K_NAME: not disabled: $opt"
			bad=1
			;;
		esac
	done <"$1"
	[ "$bad" -eq 0 ] || die "$K_NAME: $1 does not apply cleanly"
}

# build_fragment DIR SPEC: the path of the config fragment of config=SPEC:
# FILE in scripts/kernels/, or FILE+FILE... (each in turn: a variant of
# another kernel's fragment, e.g. kcov.config+dwarf.config), joined into
# DIR/SPEC with each option as the last file that names it sets it; the
# build key covers that file's name and content.
build_fragment() {
	local f files=() joined

	IFS=+ read -r -a files <<<"$2"
	for f in "${files[@]}"; do
		[ -r "$OKCOV_KERNELS_DIR/$f" ] ||
			die "$K_NAME: no config fragment $OKCOV_KERNELS_DIR/$f"
	done
	if [ ${#files[@]} -eq 1 ]; then
		echo "$OKCOV_KERNELS_DIR/${files[0]}"
		return
	fi
	mkdir -p "$1"
	joined=$1/$2
	# a later file's option replaces an earlier file's line for it
	(cd "$OKCOV_KERNELS_DIR" && awk '
		function opt(l) {
			if (match(l, /^CONFIG_[A-Za-z0-9_]+=/))
				return substr(l, 1, RLENGTH - 1)
			if (match(l, /^# CONFIG_[A-Za-z0-9_]+ is not set$/))
				return substr(l, 3, RLENGTH - 13)
			return ""
		}
		FNR == 1 { nf++ }
		{ line[nf, FNR] = $0; len[nf] = FNR; o = opt($0)
		  if (o != "") last[o] = nf }
		END {
			for (f = 1; f <= nf; f++)
				for (i = 1; i <= len[f]; i++) {
					o = opt(line[f, i])
					if (o == "" || last[o] == f)
						print line[f, i]
				}
		}' "${files[@]}") >"$joined.new"
	mv "$joined.new" "$joined"
	echo "$joined"
}

# fetch_kind_build DIR: a kernel built from linux-source with the config
# fragment config=FILE (in scripts/kernels/; FILE+FILE: build_fragment) on top of base=BASE (default
# defconfig, see build_base_targets), in DIR/build.  source=SERIES[@SUITE]
# picks another linux-source than $OKCOV_SOURCE_SERIES's from the host's
# suite (e.g. source=7.3@trixie-backports).  The build is redone
# when DIR/key differs from build_key (DIR/stamp held the key of the
# whole fragment, comments too; it is left alone for older checkouts
# sharing the cache); cold, it takes minutes
# (OKCOV_JOBS parallel jobs, default nproc, at nice OKCOV_NICE, default
# 5); warm, it is this key check.
fetch_kind_build() {
	local dir=$1 frag base series suite src srcver key build log t0 t

	frag=$(build_fragment "$dir" "${K_OPT[config]:?"$K_NAME: kind build needs config="}")
	base=${K_OPT[base]:-defconfig}
	series=${K_OPT[source]:-$OKCOV_SOURCE_SERIES}
	suite=
	case $series in
	*@*) suite=${series#*@} series=${series%%@*} ;;
	esac
	[ -n "$series" ] || die "$K_NAME: bad source=${K_OPT[source]}"
	src=$(fetch_source "$series" "$suite") ||
		die "cannot fetch linux-source-$series"
	srcver=$(cat "$src.version")
	key=$(build_key "$base" "$frag" "$srcver" "$series")
	build=$dir/build
	log=$dir/build.log

	# One build at a time per kernel, whoever started it.
	exec 8>"$dir/.build-lock"
	flock 8
	if [ "$(cat "$dir/key" 2>/dev/null)" != "$key" ] ||
	   [ ! -f "$build/arch/x86/boot/bzImage" ]; then
		need_pkgs "${OKCOV_BUILD_PKGS[@]}" build-essential bc bison \
			flex libelf-dev libssl-dev dwarves cpio xz-utils
		rm -f "$dir/key" "$dir/stamp" "$dir/kernel.env"
		: >"$log"
		t0=$(date +%s)
		msg "$K_NAME: building linux-source-$series $srcver" \
			"from $base + ${K_OPT[config]} in $build (log: $log)"
		mkdir -p "$build"
		rm -f "$build/.config"
		for t in $(build_base_targets "$base"); do
			build_make "$t"
		done
		(cd "$src" && scripts/kconfig/merge_config.sh -m -O "$build" \
			"$build/.config" "$frag") >>"$log" 2>&1 ||
			die "$K_NAME: merge_config.sh failed; see $log"
		build_make olddefconfig
		build_verify_config "$frag" "$build/.config"
		build_make bzImage modules modules_prepare
		rm -rf "$dir/modroot"
		build_make INSTALL_MOD_PATH="$dir/modroot" INSTALL_MOD_STRIP=1 \
			modules_install
		t=$(($(date +%s) - t0))
		echo "$t s, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg) at the end" \
			>"$dir/build.time"
		echo "$key" >"$dir/key"
		msg "$K_NAME: built in $t s"
	fi
	exec 8>&-

	KRELEASE=$(cat "$build/include/config/kernel.release")
	ABI=$KRELEASE VERSION=$srcver
	ROOT=$build KDIR=$build
	VMLINUZ=$build/arch/x86/boot/bzImage
	VMLINUX=$build/vmlinux
	MODDIR=$dir/modroot/lib/modules/$KRELEASE
	SYSTEM_MAP=$build/System.map
	KCONFIG=$build/.config
}

# build_make ARGS...: make in the current build kind's O= tree, logged.
build_make() {
	nice -n "${OKCOV_NICE:-5}" make -C "$src" O="$build" \
		-j"${OKCOV_JOBS:-$(nproc)}" "$@" >>"$log" 2>&1 || {
		tail -n 40 "$log" >&2
		die "$K_NAME: make $* failed; full log in $log"
	}
}

# ------------------------------------------------------------- builders
#
# builder_NAME (kernels.list builder=NAME) is called by fetch_kernel with
# the kernel's fields set, and prints the command prefix module
# builds run under (kernel.env's BUILDER).

# builder_chroot NAME SUITE PKG...: a debootstrapped SUITE chroot with PKG...
# in $OKCOV_CACHE/chroot/NAME, created once (its .okcov-stamp lists what
# it was made with; an existing chroot without a stamp is adopted if it
# has every PKG); builds run in it through scripts/kernels/chroot-run with the
# cache bind-mounted at the same path, so kernel.env's paths hold inside.
builder_chroot() {
	local name=$1 suite=$2 dir root want mirror t0
	shift 2

	dir=$OKCOV_CACHE/chroot
	root=$dir/$name
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
			mirror=$("$OKCOV_KERNELS_DIR/apt-private" "$suite" mirror) ||
				die "no archive address for $suite"
			msg "creating a $suite chroot in $root (a few minutes)"
			t0=$(date +%s)
			# Never delete through a mount (chroot-run's binds live in
			# private namespaces; a stray one would take the cache along).
			! grep -qF " $root" /proc/self/mountinfo ||
				die "something is mounted below $root"
			rm -rf "$root.new"
			debootstrap --variant=minbase --include="$(IFS=,; echo "$*")" \
				"$suite" "$root.new" "$mirror" >"$dir/$name.log" 2>&1 ||
				die "debootstrap $suite failed; see $dir/$name.log"
			rm -rf "$root"
			mv "$root.new" "$root"
			msg "$suite chroot ready in $(($(date +%s) - t0)) s"
		fi
		echo "$want" >"$root/.okcov-stamp"
	) 8>"$dir/.lock" || return 1

	# kernel.env is shared by every checkout using this cache: point it at
	# a copy of the runner in the cache, not at this checkout.
	if ! cmp -s "$OKCOV_KERNELS_DIR/chroot-run" "$dir/chroot-run"; then
		install -m 0755 "$OKCOV_KERNELS_DIR/chroot-run" "$dir/chroot-run.$$" &&
			mv "$dir/chroot-run.$$" "$dir/chroot-run" || return 1
	fi
	echo "$dir/chroot-run --bind $OKCOV_CACHE $root"
}

# builder_trixie: Debian 13's gcc-14 (or whichever gcc-N the kernel's
# .kernelvariables name) and glibc, which the 7.x linux-kbuild tools are
# linked against; the host (bookworm) has neither.  For another
# architecture, the cross gcc-N (gcc-14-aarch64-linux-gnu) in a chroot of
# its own (trixie-arm64), so that the native one is never rebuilt.
builder_trixie() {
	local cc name=trixie
	cc=$(sed -n 's/^CC *=.*(CROSS_COMPILE)\(gcc-[0-9]*\).*/\1/p' \
		"$KDIR/.kernelvariables" 2>/dev/null)
	cc=${cc:-gcc-14}
	if [ "$K_ARCH" != "$OKCOV_HOST_ARCH" ]; then
		name=trixie-$K_ARCH
		cc=$cc-$(cross_prefix "$K_ARCH")
		cc=${cc%-}
	fi
	builder_chroot "$name" trixie "$cc" make libc6-dev libelf1t64 bc \
		kmod xz-utils dwarves
}

