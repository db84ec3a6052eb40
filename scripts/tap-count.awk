# SPDX-License-Identifier: GPL-2.0
#
# tap-count.awk: the one place okcov counts test results.  Reads TAP or
# KTAP and prints "PASSED FAILED SKIPPED" over the result lines of the top
# level (a "# "-indented subtest is its parent's business):
#
#   ok N ...             passed
#   ok N ... # SKIP ...  skipped (the directive after the description)
#   not ok N ...         failed (a "# TODO" is still a failure here)
#
# Used on the host through tap_count and tap_totals (scripts/lib.sh) and
# in the guest by selftests/run_tests.sh (busybox awk: POSIX only).

/^ok [0-9]+/ {
	if ($0 ~ /^ok [0-9]+[^#]*# SKIP/)
		s++
	else
		p++
	next
}
/^not ok [0-9]+/ { f++ }
END { print p + 0, f + 0, s + 0 }
