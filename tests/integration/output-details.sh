#!/usr/bin/env bash
# Output details (issue 16): the text header keeps a command whose argv holds line breaks on one
# line (as \n) and an attached process's command line padded with empty arguments without
# trailing spaces; -d on a launched command exits 0 and says "stopped after -d SEC" when perch's
# own SIGTERM ended it, and a command's own exit status (one that catches SIGTERM, one that ends
# before -d) is still perch's.
#
#   tests/integration/output-details.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin output-details "${1:-build}"

# header WHAT REC WANT_COMMAND: the text header's command line is WANT_COMMAND, the next line the
# pids line, and no line of the report ends in white space
header() {
	local what=$1 rec=$2 want=$3 cmd next trailing
	"$PERCH" report "$rec" >"$T/report" 2>&1
	cmd=$(sed -n 2p "$T/report")
	next=$(sed -n 3p "$T/report" | cut -c1-11)
	trailing=$(grep -c '[[:space:]]$' "$T/report")
	if [ "$cmd" = "command    $want" ] && [ "$next" = "pids       " ] && [ "$trailing" -eq 0 ]; then
		ok "$what: header says 'command    $want', one line, no trailing white space"
	else
		bad "$what" "line 2 '$cmd' (want 'command    $want'), line 3 '$next...', $trailing lines end in white space"
	fi
}

"$PERCH" record -q -o "$T/ml.data" -- sh -c $'true\ntrue' >/dev/null 2>"$T/ml.err"
header "multi-line command" "$T/ml.data" 'sh -c true\ntrue'

"$WL/threadshares" 3 "" "" "" "" >/dev/null &
wl=$!
sleep 0.3
"$PERCH" record -q -o "$T/pad.data" -p "$wl" -d 0.5 2>"$T/pad.err"
wait "$wl"
header "attached, argv padded with empty arguments" "$T/pad.data" "$WL/threadshares 3"

# -d stops the launched command: perch exits 0 and says so; the recording keeps the command's
# status (143: SIGTERM)
"$PERCH" record -q -o "$T/d.data" -d 0.5 -- "$WL/threadshares" 10 >/dev/null 2>"$T/d.err"
rc=$?
st=$("$PERCH" report "$T/d.data" | sed -n 's/^duration .*exit status \([0-9]*\)$/\1/p')
if [ $rc -eq 0 ] && grep -q "stopped after -d 0.5" "$T/d.err" && [ "$st" = 143 ]; then
	ok "-d 0.5 on a launched command: exit 0, '$(cat "$T/d.err")', recording's exit status $st"
else
	bad "-d on a launched command" "exit $rc, stderr '$(cat "$T/d.err")', recording's exit status '$st'"
fi
"$PERCH" record -q -o "$T/t.data" -d 0.5 -- sh -c 'trap "exit 3" TERM; while :; do :; done' 2>"$T/t.err"
rc=$?
if [ $rc -eq 3 ] && ! grep -q "stopped after" "$T/t.err"; then
	ok "-d on a command that exits 3 on SIGTERM: perch exits 3"
else
	bad "-d, command's own status" "exit $rc (want 3), stderr '$(cat "$T/t.err")'"
fi
"$PERCH" record -q -o "$T/e.data" -d 5 -- sh -c 'exit 5' 2>"$T/e.err"
rc=$?
if [ $rc -eq 5 ] && ! grep -q "stopped after" "$T/e.err"; then
	ok "-d 5 on a command that exits 5 first: perch exits 5"
else
	bad "-d, command exits first" "exit $rc (want 5), stderr '$(cat "$T/e.err")'"
fi

it_end
