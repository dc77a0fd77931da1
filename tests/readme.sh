#!/usr/bin/env bash
# The user documentation's commands, run or parsed as written: README.md and the user guide in
# docs/ (every docs/*.md but DESIGN.md, STYLE.md and the generated per-command pages
# docs/perch-CMD.md, which tests/help.sh holds to the option tables), read in that order:
#   1. the region build lines (`cc -Iinclude app.c ...`, in README and docs/regions.md) run as
#      written, in a folder holding include/ and build/ (BUILD's perch and workloads, a plain libperch), on a small app.c with one region; each
#      program must start (exit 0) and `perch record` of it must see the region's 3 calls (the
#      shared library's registry read before the loader mapped it lost them, 11 runs in 20);
#   2. the example commands in code blocks (`$ perch ...`, `build/perch ...`, `perch --version`) run
#      there, in order, stdin /dev/null, each program of each exiting 0 (or of SIGPIPE, under
#      `| head`), those of perch top, annotate, script and --version printing something, each of
#      the four run at least once (`perch` is BUILD/perch; the attach example, whose pids are made up, and
#      lines needing a tool that is not installed are only parsed);
#   3. every option the pages name for a perch command (synopsis lines, `perch CMD ...` in code and
#      in backticks, the first column of the tables headed "option") is accepted by that command's parser:
#      `perch CMD OPTION [VALUE] --help` must not say "unknown option" or that an argument is
#      missing (a placeholder value such as N may be refused as a bad value: the option parsed);
#   4. every relative link of README.md and docs/*.md names a file of the repository and, with a
#      #fragment, a heading of that file (GitHub's anchors); links to the per-command pages are
#      checked once docs/ holds any of them;
#   5. bench/publish.sh's splice: a table replaces its section of a copy of a page, the one it
#      replaced kept below, the rest untouched; a page without the section is left as it was; and
#      docs/BENCHMARKS.md has the section of every bench script that publishes.
# Needs root and BPF for the recordings (as tests/integration.sh).
#
#   bash tests/readme.sh [BUILD_DIR]
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
BUILD=$(realpath "${1:-build}")
PERCH=$BUILD/perch
T=$(mktemp -d /tmp/perch-readme.XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   readme: $1"; }
bad() { fail=$((fail + 1)); echo "FAIL readme: $1"; }

# The pages read, in order: README first (its examples record what later ones read)
PAGES=(README.md)
for f in docs/*.md; do
	case ${f#docs/} in DESIGN.md | STYLE.md | BENCHMARKS.md | perch-*.md) continue ;; esac
	PAGES+=("$f")
done
PAGES+=(docs/BENCHMARKS.md)

# build/ as the pages' lines see it: this BUILD's perch and workloads; the region runtime of a
# plain build (a sanitizer build's libperch needs -fsanitize to link: it is not what README's
# lines build against), this BUILD's where it is plain, else ./build's
LIB=$BUILD
if nm -D "$BUILD/libperch.so" 2>/dev/null | grep -q __asan; then
	LIB=$ROOT/build
fi
ln -s "$ROOT/include" "$T/include"
mkdir "$T/build"
ln -s "$PERCH" "$T/build/perch"
ln -s "$BUILD/workloads" "$T/build/workloads"
ln -s "$LIB/libperch.so" "$T/build/libperch.so"
ln -s "$LIB/libperch.a" "$T/build/libperch.a"
cat >"$T/app.c" <<'EOF'
#include <perch.h>

int main(void)
{
	volatile unsigned long x = 0;

	for (int i = 0; i < 3; i++) {
		perch_region_begin("solve");
		for (unsigned long j = 0; j < 20000000; j++)
			x += j;
		perch_region_end("solve");
	}
	return 0;
}
EOF

# 1. the region build lines
# (each distinct line once; the shared library's and the static one's are in docs/regions.md)
mapfile -t builds < <(grep -hE '^cc .*app\.c' "${PAGES[@]}" | sed 's/ *#.*$//' | awk '!seen[$0]++')
nregions=$(grep -cE '^cc .*app\.c' docs/regions.md)
if [ ${#builds[@]} -lt 2 ] || [ "$nregions" -lt 2 ]; then
	bad "want the region build lines (cc ... app.c, shared and static) in docs/regions.md:" \
		"${#builds[@]} found, $nregions there"
fi
for line in "${builds[@]}"; do
	rm -f "$T/app"
	if ! (cd "$T" && bash -c "$line") >"$T/cc.err" 2>&1; then
		bad "'$line' does not build: $(head -3 "$T/cc.err")"
		continue
	fi
	if ! (cd "$T" && ./app) >"$T/app.err" 2>&1; then
		bad "'$line': ./app does not start: $(head -2 "$T/app.err")"
		continue
	fi
	(cd "$T" && "$PERCH" record -q -o "$T/app.data" -- ./app) >/dev/null 2>"$T/rec.err"
	calls=$("$PERCH" report --format=csv "$T/app.data" 2>/dev/null | awk -F, '$1 == "solve" && $2 == "" { print $3 }')
	if [ "$calls" = 3 ]; then
		ok "'$line' builds, ./app starts, perch record sees its 3 calls of region solve"
	else
		bad "'$line': perch record of ./app: region solve calls '$calls', want 3 ($(head -2 "$T/rec.err"))"
	fi
done

# The pages' perch commands and options, as lines "KIND<TAB>CMD<TAB>TEXT": run (an example to run
# as written), opt (an option and its value, to parse)
python3 - "${PAGES[@]}" >"$T/cmds" <<'EOF'
import re, sys
CMDS = "record|report|symbolize|diff|merge|push|top|annotate|script"
LONG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)(=[^\s\]|`,)]*)?")
SHORT = re.compile(r"(?<![\w-])(-[a-zA-Z])(?![\w-])(?: ([A-Z][A-Z0-9_]*|[0-9][0-9.,]*))?")

def options(cmd, text):
    text = re.sub(r"\s#\s.*$", "", text)  # a shell comment
    for m in LONG.finditer(text):
        print(f"opt\t{cmd}\t{m.group(1)}{m.group(2) or ''}")
    for m in SHORT.finditer(text):
        print(f"opt\t{cmd}\t{m.group(1)}" + (f" {m.group(2)}" if m.group(2) else ""))

lines = []
for page in sys.argv[1:]:
    lines += [l.rstrip("\n") for l in open(page)] + [""]
inblock = False
options_table = False  # inside a table whose first column is "option"
for line in lines:
    if line.startswith("| option |"):
        options_table = True
    elif not line.startswith("|"):
        options_table = False
    if line.startswith("```"):
        inblock = not inblock
        continue
    if inblock:
        if re.match(r"^(\$ |build/)?perch --version$", line):
            print(f"run\tversion\t{line[2:] if line.startswith('$ ') else line}")
            continue
        m = re.match(r"^(\$ |build/)?perch (" + CMDS + r")\b(.*)$", line)
        if not m:
            continue
        runnable = m.group(1) and "[" not in line
        # a runnable line's options end at its first pipe (what follows is another program's)
        options(m.group(2), m.group(3).split(" | ")[0] if runnable else m.group(3))
        if runnable:
            print(f"run\t{m.group(2)}\t{line[2:] if m.group(1) == '$ ' else line}")
        continue
    for m in re.finditer(r"`perch (" + CMDS + r")( [^`]*)?`", line):
        options(m.group(1), m.group(2) or "")
    if options_table and (line.startswith("| `-") or line.startswith("| `report -")):
        cell = line.split("|")[1]
        cmd = "report" if cell.strip().startswith("`report ") else "any"
        options(cmd, cell.replace("`", " ").replace("\\|", "|"))
EOF

# 2. the examples, in order, in $T (perch.data is theirs)
perch() { "$PERCH" "$@"; }
export -f perch
export PERCH
nrun=0
ran=""
ran_lines=""
while IFS=$'\t' read -r kind cmd text; do
	[ "$kind" = run ] || continue
	[[ $'\n'$ran_lines$'\n' == *$'\n'"$text"$'\n'* ]] && continue # the same example on two pages: once
	ran_lines+=$'\n'$text
	if [[ $text == *" -p "* ]]; then
		continue # the attach example's pids are made up: parsed below
	fi
	tool=$(grep -oE '\| *[a-z][a-z0-9_.-]*\.pl' <<<"$text" | tr -d '| ')
	if [ -n "$tool" ] && ! command -v "$tool" >/dev/null; then
		echo "     readme: not run ($tool not installed): $text"
		continue
	fi
	nrun=$((nrun + 1))
	ran="$ran $cmd"
	# every program of the line's pipeline exits 0, or 141 (SIGPIPE: `| head` closed the pipe)
	if ! (cd "$T" && timeout 60 bash -c "$text"$'\n''for s in "${PIPESTATUS[@]}"; do [ "$s" = 0 ] || [ "$s" = 141 ] || exit "$s"; done') </dev/null >"$T/run.out" 2>"$T/run.err"; then
		bad "'$text' exited $?: $(head -2 "$T/run.err")"
	# the commands that print what they show (no file of their own) print something
	elif [[ " top annotate script version " == *" $cmd "* ]] && ! [ -s "$T/run.out" ]; then
		bad "'$text' exited 0 but printed nothing"
	else
		ok "ran '$text' ($(wc -l <"$T/run.out") lines out)"
	fi
done <"$T/cmds"
[ $nrun -ge 3 ] || bad "only $nrun examples found to run in README and docs/"
# the "Live view, annotate, script" block's commands are among them
for c in top annotate script version; do
	[[ " $ran " == *" $c "* ]] || bad "no example of perch $c was run (docs/live.md has them)"
done

# 3. every option parses
parses() { # parses CMD ARGS...: perch CMD ARGS --help does not reject an option
	# in $T: an option whose value the docs leave out takes --help for it (`report -o --help`
	# wrote the report to a file named --help in the tree)
	(cd "$T" && "$PERCH" "$@" --help </dev/null >/dev/null 2>"$T/opt.err")
	! grep -qE "unknown option|needs an argument|requires an argument" "$T/opt.err"
}
nopt=0
rejected=""
while IFS=$'\t' read -r kind cmd text; do
	[ "$kind" = opt ] || continue
	val=${text%%|*} # the first of alternatives: --format=text|folded -> --format=text
	# shellcheck disable=SC2086 # an option and its value: two words
	set -- $val
	nopt=$((nopt + 1))
	if [ "$cmd" = any ]; then
		parses record "$@" || parses report "$@" || rejected="$rejected [$text]"
	else
		parses "$cmd" "$@" || rejected="$rejected [perch $cmd $text]"
	fi
done < <(sort -u "$T/cmds")
if [ -z "$rejected" ] && [ $nopt -gt 50 ]; then
	ok "every option README and docs/ name parses ($nopt distinct option uses)"
else
	bad "options in README and docs/ perch rejects ($nopt checked):$rejected"
fi
# 4. every relative link resolves: the file, and the heading a #fragment names
if python3 - README.md docs/*.md >"$T/links" 2>&1 <<'EOF'; then
import os, re, sys

def slugs(path):  # GitHub's heading anchors: lower case, punctuation dropped, spaces -> '-'
    seen, out, fence = {}, set(), False
    for line in open(path):
        if line.startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"^#{1,6} +(.*?) *#*$", line.rstrip("\n"))
        if m:
            s = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else f"{s}-{n}")
    return out

have_cmd_pages = any(re.match(r"perch-.*\.md$", f) for f in os.listdir("docs"))
bad = n = 0
for page in sys.argv[1:]:
    text = re.sub(r"```.*?```", "", open(page).read(), flags=re.S)  # no links in code
    text = re.sub(r"`[^`\n]*`", "", text)
    for target in re.findall(r"\]\(([^()\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        n += 1
        path, _, frag = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
        if not os.path.exists(dest) or dest.startswith(".."):
            if re.match(r"docs/perch-[a-z]+\.md$", dest) and not have_cmd_pages:
                continue  # the per-command pages are generated from the option tables
            print(f"{page}: link to {target}: no such file in the repository")
            bad += 1
        elif frag and dest.endswith(".md") and frag not in slugs(dest):
            print(f"{page}: link to {target}: {dest} has no heading #{frag}")
            bad += 1
print(f"{n} relative links")
sys.exit(1 if bad else 0)
EOF
	ok "every relative link of README and docs/ resolves ($(tail -1 "$T/links"))"
else
	bad "links that do not resolve: $(grep -v 'relative links$' "$T/links" | tr '\n' ';')"
fi

# 5. bench/publish.sh's splice, on a copy; and each publishing bench script has its section
page='# page\n\n## part\n\n<!-- bench:demo -->\n\n### old\n\n| old |\n\n<!-- /bench:demo -->\n\n### older\n\ntail\n'
printf '%b' "$page" >"$T/page.md"
printf '%b' "$page" >"$T/page.orig"
printf '## Title the section already gives\n\n- a line\n\n| new |\n' >"$T/table.md"
want=$(printf '# page\n\n## part\n\n<!-- bench:demo -->\n\n### DATE\n\n- a line\n\n| new |\n\n<!-- /bench:demo -->\n### old\n\n| old |\n\n### older\n\ntail')
dated='s/^### [0-9]\{4\}-[0-9][0-9]-[0-9][0-9] [0-9:]* UTC: .*, [0-9]* CPUs$/### DATE/'
if bash bench/publish.sh --splice demo "$T/page.md" "$T/table.md" &&
	[ "$(sed "$dated" "$T/page.md")" = "$want" ] &&
	! bash bench/publish.sh --splice other "$T/page.orig" "$T/table.md" 2>/dev/null &&
	printf '%b' "$page" | cmp -s - "$T/page.orig"; then
	ok "bench/publish.sh puts a new table in its section, dated, the old one below it"
else
	bad "bench/publish.sh's splice: got $(tr '\n' '~' <"$T/page.md")"
fi
missing=""
for f in bench/*.sh; do
	# shellcheck disable=SC2016 # the line as the scripts spell it
	name=$(sed -n 's|^\. "$(dirname "$0")/publish.sh" \([a-z-]*\) "$@"$|\1|p' "$f")
	[ -n "$name" ] || continue
	for marker in "<!-- bench:$name -->" "<!-- /bench:$name -->"; do
		grep -qxF "$marker" docs/BENCHMARKS.md || missing="$missing $f($marker)"
	done
done
if [ -z "$missing" ]; then
	ok "docs/BENCHMARKS.md has the section of every bench script that publishes"
else
	bad "no section in docs/BENCHMARKS.md for:$missing"
fi
echo "readme: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
