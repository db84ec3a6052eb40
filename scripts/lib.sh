# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# shellcheck disable=SC2034 # OKCOV_*_PKGS: read by the sourcing scripts
#
# What every okcov script shares.  Source it from bash:
#
#	. "$(dirname "$0")/lib.sh"
#
# Paths, messages, root and package installation, and the test kernels as
# read from scripts/kernels/ (kernel_names, kernel_entry, load_kernel_env:
# scripts/kernels/kernels.sh, which also describes the cache layout).
# Module builds go to $OKCOV_BUILD/NAME/ (scripts/build-module), guest
# console logs to $OKCOV_CACHE/runs/ (scripts/vm-run).

OKCOV_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OKCOV_CACHE=${OKCOV_CACHE:-$HOME/.cache/okcov}
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
	# Two scripts at once (check-all's lanes) would fight over dpkg's
	# lock: one installs, the other waits and then finds them installed.
	mkdir -p "$OKCOV_CACHE/apt"
	exec 7>"$OKCOV_CACHE/apt/install.lock"
	flock 7
	mapfile -t missing < <(dpkg-query -W -f='${Package} ${db:Status-Status}\n' \
		"${missing[@]}" 2>/dev/null | awk '$2 == "installed" { print $1 }' |
		sort | comm -13 - <(printf '%s\n' "${missing[@]}" | sort))
	if [ ${#missing[@]} -gt 0 ]; then
		msg "installing ${missing[*]}"
		if [ -z "$okcov_apt_updated" ]; then
			as_root apt-get -q update >&2 || die "apt-get update failed"
			okcov_apt_updated=1
		fi
		as_root env DEBIAN_FRONTEND=noninteractive \
			apt-get -q -y --no-install-recommends install "${missing[@]}" >&2 ||
			die "apt-get install ${missing[*]} failed"
	fi
	exec 7>&-
}

# okcov_tool NAME [KERNEL]: build the userspace programs of scripts/ (make
# tools: the one rule for them) and print the path of program NAME.  With
# KERNEL, NAME runs in its guest: for another architecture than the host's
# it is built alone, static, with the cross compiler (guest_make_vars),
# into $OKCOV_BUILD/tools-ARCH.
okcov_tool() {
	local tools

	if [ -n "${2:-}" ]; then
		load_kernel_env "$2"
		guest_make_vars
		if [ ${#GUEST_MAKE[@]} -gt 0 ]; then
			tools=$OKCOV_BUILD/tools$GUEST_SUFFIX
			make -s -C "$OKCOV_ROOT" TOOLS="$tools" "${GUEST_MAKE[@]}" \
				"$tools/$1" >&2 || return 1
			echo "$tools/$1"
			return 0
		fi
	fi
	make -s -C "$OKCOV_ROOT" tools >&2 || return 1
	echo "$OKCOV_ROOT/build/tools/$1"
}

# Test results.  Counting is scripts/tap-count.awk's alone; a script that
# makes test points prints each with tap_point and ends with tap_totals.
tap_lines=()

# tap_count: "PASSED FAILED SKIPPED" of the TAP on stdin.
tap_count() {
	awk -f "$OKCOV_ROOT/scripts/tap-count.awk"
}

# tap_point ok|fail|skip DESCRIPTION [REASON]: print the next numbered TAP
# result line (skip: "ok N DESCRIPTION # SKIP REASON") and keep it for
# tap_totals.  Call it in the script's own shell, not in a subshell.
tap_point() {
	local line n=$((${#tap_lines[@]} + 1))
	case $1 in
	ok) line="ok $n $2" ;;
	skip) line="ok $n $2 # SKIP ${3:-}" ;;
	fail) line="not ok $n $2" ;;
	*) die "tap_point: ok, fail or skip, not '$1'" ;;
	esac
	tap_lines+=("$line")
	echo "$line"
}

# tap_totals: print "N passed, N failed, N skipped" of the tap_point lines
# so far; fails if one failed.
tap_totals() {
	local p f s
	read -r p f s < <(printf '%s\n' "${tap_lines[@]}" | tap_count)
	echo "$p passed, $f failed, $s skipped"
	[ "$f" -eq 0 ]
}

# tap_failures: print how many tap_point lines so far failed.
tap_failures() {
	printf '%s\n' "${tap_lines[@]}" | tap_count | cut -d' ' -f2
}

# The packages each script needs on the host.
OKCOV_FETCH_PKGS=(apt dpkg)
OKCOV_BUILD_PKGS=(make gcc libc6-dev rsync libelf1 util-linux pahole)
OKCOV_VM_PKGS=(qemu-system-x86 busybox-static cpio coreutils util-linux)
OKCOV_TEST_PKGS=(gcc make libc6-dev libkmod-dev pkg-config kmod)

# shellcheck source=scripts/kernels/kernels.sh
. "$OKCOV_ROOT/scripts/kernels/kernels.sh"
