#!/usr/bin/env bash
# Each command's option table (userspace/cli/opts.h) against what people read, from the binary
# alone (no source is read):
#   1. `perch --help` lists the commands; `perch CMD --help` (and `perch help CMD`) prints that
#      command's usage and options only, exit 0;
#   2. every spelling the table lists (`perch CMD --help=markdown`) is accepted by CMD's parser;
#   3. docs/perch-CMD.md exists with NAME, SYNOPSIS, DESCRIPTION, OPTIONS, EXAMPLES, SEE ALSO,
#      and each of its generated blocks (<!-- generated: perch CMD --help=X -->) is what the
#      binary prints now (bash scripts/man.sh update BUILD/perch rewrites them);
#   4. `make install-man DESTDIR=...` installs share/man/man1/perch-CMD.1 for every command, its
#      OPTIONS being `perch CMD --help=man`; groff (where installed) renders it without warnings;
#   5. docs/commands.md's synopsis of every command is the table's (a generated block each).
#
#   bash tests/help.sh [BUILD_DIR]
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${1:-build}
PERCH=$(realpath "$BUILD/perch")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   help: $1"; }
bad() { fail=$((fail + 1)); echo "FAIL help: $1"; }

"$PERCH" --help >"$T/help" 2>&1 || bad "perch --help exited $?"
cmds=$(sed -n '/^commands:$/,/^$/s/^  \([a-z]*\)  .*/\1/p' "$T/help")
[ "$(wc -w <<<"$cmds")" -ge 10 ] || bad "perch --help lists $(wc -w <<<"$cmds") commands: $cmds"
[ "$(wc -l <"$T/help")" -le 25 ] || bad "perch --help is $(wc -l <"$T/help") lines, not a short list"

# the generated blocks of a docs page, each as "COMMAND<TAB>LINE" (its lines in order)
blocks() {
	awk '/^<!-- generated: perch .* -->$/ { c = $0; sub(/^<!-- generated: perch /, "", c); sub(/ -->$/, "", c); next }
	     /^<!-- end generated -->$/ { c = ""; next }
	     c != "" { print c "\t" $0 }' "$1"
}

make -s BUILD="$BUILD" DESTDIR="$T/inst" PREFIX=/usr install-man >"$T/install.out" 2>&1 ||
	bad "make install-man: $(tail -1 "$T/install.out")"
MAN=$T/inst/usr/share/man/man1

for c in $cmds; do
	# 1. its usage and options only
	if ! "$PERCH" "$c" --help >"$T/$c.help" 2>&1; then
		bad "perch $c --help exited non-zero"
	elif ! head -1 "$T/$c.help" | grep -q "^usage: perch $c "; then
		bad "perch $c --help does not start with its usage: $(head -1 "$T/$c.help")"
	elif grep -E '^(usage:|      ) +perch [a-z]+' "$T/$c.help" | grep -v "perch $c " | grep -q .; then
		bad "perch $c --help shows other commands' usage"
	elif ! "$PERCH" help "$c" | cmp -s - "$T/$c.help"; then
		bad "perch help $c is not perch $c --help"
	else
		ok "perch $c --help: its usage and $(grep -cE '^ +-' "$T/$c.help") option lines"
	fi
	# 2. every spelling of the table parses: "-X 1" and "--long=1" where the entry takes an
	# argument, alone where it takes none
	"$PERCH" "$c" --help=markdown >"$T/$c.md"
	rejected=""
	n=0
	while read -r entry; do
		arg=""
		[[ $entry =~ =|-[a-zA-Z]\ [A-Z] ]] && arg=1
		for o in $(echo "$entry" | sed 's/ [^,]*//g; s/=[^,]*//g; s/,/ /g'); do
			n=$((n + 1))
			set -- "$o"
			[ -n "$arg" ] && case $o in --*) set -- "$o=1" ;; *) set -- "$o" 1 ;; esac
			"$PERCH" "$c" "$@" --help </dev/null >/dev/null 2>"$T/opt.err"
			grep -qE "unknown option|needs an argument" "$T/opt.err" && rejected="$rejected [$*]"
		done
	done < <(sed -n "s/^- \(\`[^:]*\)\`: .*/\1/p" "$T/$c.md" | tr -d '`')
	if [ -z "$rejected" ] && [ "$n" -gt 1 ]; then
		ok "perch $c parses all $n spellings its table lists"
	else
		bad "perch $c rejects spellings its table lists ($n checked):$rejected"
	fi
	# 3. the docs page and its generated blocks
	doc=docs/perch-$c.md
	if [ ! -f "$doc" ]; then
		bad "no $doc"
		continue
	fi
	missing=""
	for s in NAME SYNOPSIS DESCRIPTION OPTIONS EXAMPLES "SEE ALSO"; do
		grep -qx "## $s" "$doc" || missing="$missing '$s'"
	done
	[ -z "$missing" ] || bad "$doc lacks the sections$missing"
	blocks "$doc" >"$T/$c.blocks"
	stale=""
	for how in synopsis markdown; do
		grep -q "^$c --help=$how	" "$T/$c.blocks" || {
			stale="$stale (no --help=$how block)"
			continue
		}
		sed -n "s/^$c --help=$how	//p" "$T/$c.blocks" >"$T/$c.doc.$how"
		"$PERCH" "$c" --help=$how >"$T/$c.bin.$how"
		cmp -s "$T/$c.doc.$how" "$T/$c.bin.$how" || stale="$stale --help=$how"
	done
	if [ -z "$stale" ] && [ -z "$missing" ]; then
		ok "$doc: its sections, and its synopsis and option list are the table's"
	elif [ -n "$stale" ]; then
		bad "$doc differs from the table:$stale (bash scripts/man.sh update $BUILD/perch)"
	fi
	# 4. the installed man page
	page=$MAN/perch-$c.1
	if [ ! -f "$page" ]; then
		bad "make install-man installed no perch-$c.1"
		continue
	fi
	sed -n '/^\.\\" generated: perch '"$c"' --help=man$/,/^\.\\" end generated$/p' "$page" |
		sed '1d;$d' >"$T/$c.man"
	if [ -s "$T/$c.man" ] && "$PERCH" "$c" --help=man | cmp -s - "$T/$c.man" &&
		grep -q '^\.SH OPTIONS' "$page"; then
		ok "perch-$c.1: its OPTIONS are the table's"
	else
		bad "perch-$c.1: its OPTIONS are not perch $c --help=man's"
	fi
	if command -v groff >/dev/null; then
		w=$(groff -man -ww -z "$page" 2>&1)
		[ -z "$w" ] || bad "perch-$c.1: groff says: $w"
	fi
done
# 5. the synopsis of every command at a glance
blocks docs/commands.md >"$T/commands.blocks"
stale=""
for c in $cmds; do
	sed -n "s/^$c --help=synopsis	//p" "$T/commands.blocks" >"$T/$c.glance"
	"$PERCH" "$c" --help=synopsis >"$T/$c.bin.glance"
	[ -s "$T/$c.glance" ] && cmp -s "$T/$c.glance" "$T/$c.bin.glance" || stale="$stale $c"
done
if [ -z "$stale" ]; then
	ok "docs/commands.md: every command's synopsis is its table's"
else
	bad "docs/commands.md: the synopsis of$stale is missing or not the table's (bash scripts/man.sh update $BUILD/perch)"
fi
# a docs page for no command is a stale one
for doc in docs/perch-*.md; do
	c=${doc#docs/perch-}
	c=${c%.md}
	grep -qx "$c" <<<"$cmds" || bad "$doc: perch has no command $c"
done
echo "help: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
