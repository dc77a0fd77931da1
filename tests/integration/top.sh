#!/usr/bin/env bash
# perch top in a real terminal (tmux, detached): the launched workload's hottest function
# (tests/workloads/shares: work_a burns 60 % of its CPU time) is the first row within two
# refreshes; q quits with exit 0 and the terminal's mode as it was (stty -g before and after, in
# the pane); so does Ctrl-C; and top ends by itself, with the workload's exit status, when the
# workload exits.
#
#   tests/integration/top.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin top "${1:-build}"
if ! command -v tmux >/dev/null; then
	bad "tmux" "not installed (scripts/install-deps.sh installs it)"
	it_end
	exit
fi
SOCK=perch-top-$$ # a tmux server of this test's own
trap 'tmux -L "$SOCK" kill-server 2>/dev/null; rm -rf "$T"' EXIT
REFRESH=1

# start NAME SECONDS: perch top on shares SECONDS in a detached session NAME; the pane records
# the terminal mode before and after, and top's exit status, in $T/NAME.*
start() {
	tmux -L "$SOCK" new-session -d -s "$1" -x 160 -y 40 \
		"stty -g >$T/$1.before; $PERCH top -d $REFRESH -- $WL/shares $2; echo \$? >$T/$1.rc.tmp; mv $T/$1.rc.tmp $T/$1.rc; stty -g >$T/$1.after; sleep 60"
}

# wait_for NAME FILE SECONDS: FILE appears
wait_file() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[ -f "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# hot NAME: poll the pane until work_a is the first row; the screen it showed up on in
# $T/NAME.screen, the screens seen before it counted in $T/NAME.screens
hot() {
	local i up seen=0 last=""
	for ((i = 0; i < 100; i++)); do
		tmux -L "$SOCK" capture-pane -p -t "$1" >"$T/$1.screen"
		up=$(sed -n 's/.* up \([0-9.]*\) s.*/\1/p' "$T/$1.screen")
		if [ -n "$up" ] && [ "$up" != "$last" ]; then
			seen=$((seen + 1))
			last=$up
		fi
		if awk '$1 ~ /%$/ { print $NF; exit }' "$T/$1.screen" | grep -qx work_a; then
			echo "$seen" >"$T/$1.screens"
			return 0
		fi
		sleep 0.1
	done
	echo "$seen" >"$T/$1.screens"
	return 1
}

# quit NAME KEY: send KEY, then check the exit status and the terminal mode
quit() {
	tmux -L "$SOCK" send-keys -t "$1" "$2"
	if wait_file "$T/$1.rc" 10 && [ "$(cat "$T/$1.rc")" -eq 0 ] && wait_file "$T/$1.after" 5 &&
		cmp -s "$T/$1.before" "$T/$1.after"; then
		ok "$1: $2 quits, exit 0, terminal mode restored ($(cat "$T/$1.after" | cut -c1-24)...)"
	else
		bad "$1 $2" "exit $(cat "$T/$1.rc" 2>/dev/null || echo '(none: still running)'), mode before $(cat "$T/$1.before" 2>/dev/null | cut -c1-30) after $(cat "$T/$1.after" 2>/dev/null | cut -c1-30)"
	fi
}

start q 30
if hot q && [ "$(cat "$T/q.screens")" -le 2 ]; then
	ok "q: work_a is the first row on screen $(cat "$T/q.screens") (refresh ${REFRESH} s): $(grep -m1 'work_a' "$T/q.screen" | tr -s ' ')"
else
	bad "q hot" "work_a not the first row within two refreshes ($(cat "$T/q.screens") screens): $(head -8 "$T/q.screen" | tr '\n' '|')"
fi
grep -q "samples: [0-9]* in the last" "$T/q.screen" && grep -q "since start" "$T/q.screen" &&
	ok "q: the screen says which columns are the last interval and which since start" ||
	bad "q header" "$(head -6 "$T/q.screen" | tr '\n' '|')"
quit q q

start ctrlc 30
hot ctrlc || bad "ctrlc hot" "work_a never the first row: $(head -8 "$T/ctrlc.screen" | tr '\n' '|')"
quit ctrlc C-c

# the workload exits by itself after 1.5 s: top ends with its status (0), the mode restored
start done 1.5
if wait_file "$T/done.rc" 15 && [ "$(cat "$T/done.rc")" -eq 0 ] && wait_file "$T/done.after" 5 &&
	cmp -s "$T/done.before" "$T/done.after"; then
	ok "done: top ended with the workload, exit 0, terminal mode restored"
else
	bad "done" "exit $(cat "$T/done.rc" 2>/dev/null || echo '(none)'), modes differ or missing"
fi

# -a: every process; the workload is started by the test, not by perch: its hot function shows
# among the rows (the machine's idle time and whatever else runs share the screen with it)
"$WL/shares" 30 >/dev/null 2>&1 &
SH=$!
tmux -L "$SOCK" new-session -d -s all -x 160 -y 40 \
	"stty -g >$T/all.before; $PERCH top -a -d $REFRESH; echo \$? >$T/all.rc.tmp; mv $T/all.rc.tmp $T/all.rc; stty -g >$T/all.after; sleep 60"
seen=""
for ((i = 0; i < 100; i++)); do
	tmux -L "$SOCK" capture-pane -p -t all >"$T/all.screen"
	if awk '$1 ~ /%$/ { print $NF }' "$T/all.screen" | grep -qx work_a; then
		seen=1
		break
	fi
	sleep 0.1
done
[ -n "$seen" ] && ok "all: top -a shows the separately started workload's work_a: $(grep -m1 'work_a' "$T/all.screen" | tr -s ' ')" ||
	bad "all" "work_a not among top -a's rows in 10 s: $(head -12 "$T/all.screen" | tr '\n' '|')"
quit all q
kill "$SH" 2>/dev/null
wait "$SH" 2>/dev/null

expect "no target" 64 "nothing to watch" -- "$PERCH" top
expect "bad refresh" 64 "bad refresh" -- "$PERCH" top -d 0 -- true
expect "-a with -p" 64 "without -p" -- "$PERCH" top -a -p 1
it_end
