#!/usr/bin/env bash
# perch record -- CMD on tests/workloads/shares: work_a/b/c take the share of the samples their
# CPU clocks give, and every stack goes back to main.
#
#   tests/integration/shares.sh [BUILD_DIR]   (or tests/integration.sh BUILD_DIR shares)
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin shares "${1:-build}"

if launch shares -- "$WL/shares" 3; then
	check_shares "launch shares" "$T/shares.folded" "$T/shares.truth"
fi

it_end
