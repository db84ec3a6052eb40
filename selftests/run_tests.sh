#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest-side runner for the okcov selftests (busybox sh). Runs every test
# binary of this directory in order, each printing KTAP, never stopping at a
# failure; after each, "# BINARY: exit RC (N passed, N failed, N skipped,
# Ns)" (its result lines counted by tap-count.awk, copied here from
# scripts/: the one counter, as on the host), and at the end "selftests:
# N passed, N failed, N skipped" over all of them; exits non-zero if
# anything failed.
#
# Environment (set by the VM runner): OKCOV_KO, the okcov module (already
# loaded); OKCOV_TARGET_KO, the instrumented test-target module (optional).
# OKCOV_TESTS overrides the list of binaries to run; OKCOV_DEBUG=1 makes
# some tests print more (resolved buffers, per-round timings).

dir=$(cd "$(dirname "$0")" && pwd)
tests=${OKCOV_TESTS:-"@TESTS@"}
tmp=${TMPDIR:-/tmp}
[ -d "$tmp" ] && [ -w "$tmp" ] || tmp=$dir
log=$tmp/okcov-selftest.$$.log
rcf=$tmp/okcov-selftest.$$.rc

passed=0
failed=0
skipped=0
bad=""

for t in $tests; do
	echo "# selftests: okcov: $t"
	if [ ! -x "$dir/$t" ]; then
		echo "# $t: not found in $dir"
		failed=$((failed + 1))
		bad="$bad $t"
		continue
	fi
	t0=$(date +%s)
	{ "$dir/$t"; echo $? > "$rcf"; } 2>&1 | tee "$log"
	t1=$(date +%s)
	rc=$(cat "$rcf" 2>/dev/null)
	rc=${rc:-255}

	set -- $(awk -f "$dir/tap-count.awk" "$log")
	p=${1:-0} f=${2:-1} s=${3:-0}
	# A binary that died without reporting a failure still failed:
	# exit 0 is pass, 4 (KSFT_SKIP) is skip, anything else is a failure.
	if [ "$rc" != 0 ] && [ "$rc" != 4 ] && [ "$f" = 0 ]; then
		f=1
	fi
	echo "# $t: exit $rc ($p passed, $f failed, $s skipped, $((t1 - t0))s)"
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
	[ "$f" = 0 ] || bad="$bad $t"
done
rm -f "$log" "$rcf"

[ -z "$bad" ] || echo "# failed:$bad"
echo "selftests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
