#!/usr/bin/env bash
# Every option perch's parsers accept is in `perch --help`: the long options of each command's
# getopt table (struct option longopts[] in userspace/cli/CMD.c) and the letters of its getopt
# string must each appear in that command's part of the help (its synopsis lines and its
# "CMD options" section); -h/--help anywhere. The options are read from the source, so an option
# added to a parser and not to the help fails here.
#
#   bash tests/help.sh [BUILD_DIR]
set -u
cd "$(dirname "$0")/.." || exit 1
PERCH=${1:-build}/perch
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0

"$PERCH" --help >"$T/help" 2>&1 || { echo "FAIL help: perch --help exited $?"; exit 1; }

# section CMD: the synopsis lines of CMD (from "perch CMD" to the next "perch ") and its
# "CMD options" section ("CMD and OTHER options" too; to the next "X options" line)
section() {
	awk -v c="$1" '
		/^(usage:| +)perch / { syn = ($0 ~ "perch " c " ") }
		/^[a-z][a-z ]* options/ { opt = 0; for (i = 1; $i != "options" && $i != "options:"; i++) if ($i == c) opt = 1; syn = 0 }
		/^$/ { syn = 0 }
		syn || opt' "$T/help"
}

for src in userspace/cli/*.c; do
	cmd=$(sed -n 's/^\t\.name = "\([a-z]*\)",$/\1/p' "$src")
	[ -n "$cmd" ] || continue
	section "$cmd" >"$T/$cmd"
	if [ ! -s "$T/$cmd" ]; then
		fail=$((fail + 1))
		echo "FAIL help: perch --help has no part for $cmd"
		continue
	fi
	longs=$(sed -n '/struct option longopts\[\]/,/};/p' "$src" | grep -o '{"[a-z0-9-]*"' | tr -d '{"')
	shorts=$(grep -o 'getopt_long(argc, argv, "[^"]*"' "$src" | sed 's/.*"\(.*\)"/\1/' | tr -d ':+' | fold -w1)
	missing=""
	for o in $longs; do
		[ "$o" = help ] && continue
		grep -Eq -- "--$o([^a-z0-9-]|$)" "$T/$cmd" || missing="$missing --$o"
	done
	for o in $shorts; do
		[ "$o" = h ] && continue
		grep -Eq -- "(^|[^a-zA-Z0-9-])-$o([^a-zA-Z0-9]|$)" "$T/$cmd" || missing="$missing -$o"
	done
	if [ -z "$missing" ]; then
		pass=$((pass + 1))
		echo "ok   help: perch $cmd: all $(echo $longs $shorts | wc -w) options in perch --help"
	else
		fail=$((fail + 1))
		echo "FAIL help: perch $cmd accepts options perch --help does not list:$missing"
	fi
done
if grep -Eq -- '-h, --help' "$T/help"; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
	echo "FAIL help: perch --help does not say -h, --help"
fi
echo "help: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
