#!/usr/bin/env bash
# Past the region runtime's limits: 4106 names (10 beyond the table), nesting 70 deep. What goes
# beyond is counted apart and said, never credited to another name.
#
#   tests/integration/regions-limits.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin regions-limits "${1:-build}"

# (the table's 4096th name is name_4094: "nest" came first)
perch_record limits -- "$WL/regions" limits
last=$(csv_all "$T/limits.data" name_4094 3)
beyond=$(csv_all "$T/limits.data" "[region names beyond the runtime's table]" 3)
nest=$(csv_all "$T/limits.data" nest 3)
"$PERCH" report "$T/limits.data" >"$T/limits.txt"
if [ "${last:-}" = 1 ] && [ "${beyond:-}" = 10 ] && [ "${nest:-}" = 64 ] &&
	grep -q "^  10 region calls had names beyond the 4096" "$T/limits.txt" &&
	grep -q "^  6 region begins and marks were nested deeper than the 64" "$T/limits.txt"; then
	ok "limits: the 4096th name 1 call, the 10 names beyond it counted apart, 64 of 70 nested levels timed, 6 counted; both said in the notes"
else
	bad "limits" "name_4094 ${last:-?} calls (want 1), beyond ${beyond:-?} (want 10), nest ${nest:-?} (want 64); notes: $(grep -c 'beyond the 4096\|deeper than the 64' "$T/limits.txt")"
fi

it_end
