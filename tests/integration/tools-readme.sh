#!/usr/bin/env bash
# The README's "Live view, annotate, script" block, run as written: every line that starts with
# build/perch, from a folder where build is this build (its own files land there), each exiting 0
# with something on stdout. The other scenarios (top, annotate, script) check what they print.
#
#   tests/integration/tools-readme.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin tools-readme "${1:-build}"
ln -s "$(realpath "$BUILD")" "$T/build"
readme=$TESTS/../README.md
mapfile -t cmds < <(awk '/^### Live view, annotate, script/ { on = 1 } on && /^```sh/ { b = 1; next }
	b && /^```/ { exit } b && /^build\/perch/ { sub(/ +# .*/, ""); print }' "$readme")
if [ ${#cmds[@]} -lt 5 ]; then
	bad "readme" "found ${#cmds[@]} commands in README's block"
fi
for c in "${cmds[@]}"; do
	(cd "$T" && bash -c "$c" </dev/null >"$T/out" 2>"$T/err")
	rc=$?
	if [ $rc -eq 0 ] && [ -s "$T/out" ]; then
		ok "$c: exit 0, $(wc -l <"$T/out") lines"
	else
		bad "$c" "exit $rc: $(head -3 "$T/err")"
	fi
done
it_end
