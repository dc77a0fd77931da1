#!/usr/bin/env bash
# docs/STYLE.md's size rules: no C function over 90 lines, no block nested deeper than 3 levels, no
# source file over 1,000 lines. Prints every offender and the median function length; fails when
# there is an offender.
#
#   scripts/check-size.sh [FILE...]   (default: the tracked C of bpf userspace symbolize unwind
#                                      include runtime cuda; tests/ and bench/ are not held to it)
#   SIZE_LIST=1 scripts/check-size.sh  also lists every function: file:line name lines levels
#
# A function's length runs from the line of its name to its closing brace. Nesting counts the
# blocks (braces) inside a function body: the body is level 0, `if (...) {` in it level 1, and
# so on; a switch body is one level (case labels add none, a braced case adds one, like any
# block). Initializer and compound-literal braces are not blocks. Preprocessor lines are skipped,
# so an #if that opens a brace on both branches would miscount (the tree has none).
set -euo pipefail
cd "$(dirname "$0")/.."

MAX_LINES=${MAX_LINES:-90}
MAX_DEPTH=${MAX_DEPTH:-3}
MAX_FILE=${MAX_FILE:-1000}

if [ $# -gt 0 ]; then
	files=("$@")
else
	mapfile -t files < <(git ls-files -- 'bpf/*.[ch]' 'userspace/*.[ch]' 'symbolize/*.[ch]' \
		'unwind/*.[ch]' 'include/*.[ch]' 'runtime/*.[ch]' 'cuda/*.[ch]' 2>/dev/null)
fi
[ ${#files[@]} -gt 0 ] || {
	echo "size: no C files" >&2
	exit 1
}

long_files=$(wc -l "${files[@]}" | awk -v max="$MAX_FILE" '$2 != "total" && $1 > max { print "  " $2 ": " $1 " lines" }')
[ -z "$long_files" ] || printf 'size: files over %d lines:\n%s\n' "$MAX_FILE" "$long_files"

awk -v max_lines="$MAX_LINES" -v max_depth="$MAX_DEPTH" -v list="${SIZE_LIST:-0}" '
function reset_header() { fname = ""; fline = 0; has_eq = 0 }
function word_end() {
	if (word == "")
		return
	prev = "w:" word
	if (depth == 0 && pdepth == 0) {
		last_word = word
		last_word_line = FNR
	}
	word = ""
}
function open_brace(   kind, lvl) {
	if (depth == 0) {
		kind = (prev == ")" && !has_eq && fname != "") ? "func" : "other"
		lvl = 0
	} else if (kinds[depth] == "init" || kinds[depth] == "other") {
		kind = kinds[depth]
	} else if (prev == "=" || prev == "," || prev == "(" || prev == "w:return" ||
		   prev == "?" || (prev == ")" && (closed_after !~ /^w:/ || closed_after == "w:return"))) {
		kind = "init"
	} else {
		kind = "block"
		lvl = levels[depth] + 1
		if (lvl > fdepth)
			fdepth = lvl
	}
	depth++
	kinds[depth] = kind
	levels[depth] = lvl
	if (depth == 1 && kind == "func") {
		fdepth = 0
		ffile = FILENAME
	}
}
function close_brace() {
	if (depth == 0)
		return
	if (depth == 1 && kinds[1] == "func") {
		n = FNR - fline + 1
		nfuncs++
		lens[nfuncs] = n
		if (n > longest) {
			longest = n
			longest_at = ffile ":" fline " " fname "()"
		}
		if (list)
			printf "%s:%d %s %d %d\n", ffile, fline, fname, n, fdepth
		if (n > max_lines)
			long_list = long_list sprintf("  %s:%d %s(): %d lines\n", ffile, fline, fname, n)
		if (fdepth > max_depth)
			deep_list = deep_list sprintf("  %s:%d %s(): %d levels\n", ffile, fline, fname, fdepth)
	}
	depth--
	if (depth == 0)
		reset_header()
}
FNR == 1 { depth = 0; pdepth = 0; in_comment = 0; cont = 0; prev = ""; word = ""; reset_header() }
{
	line = $0
	if (cont) {
		cont = (line ~ /\\$/)
		next
	}
	if (!in_comment && line ~ /^[ \t]*#/) {
		cont = (line ~ /\\$/)
		next
	}
	len = length(line)
	for (i = 1; i <= len; i++) {
		c = substr(line, i, 1)
		if (in_comment) {
			if (c == "*" && substr(line, i + 1, 1) == "/") {
				in_comment = 0
				i++
			}
			continue
		}
		if (c == "/" && substr(line, i + 1, 1) == "*") {
			word_end()
			in_comment = 1
			i++
			continue
		}
		if (c == "/" && substr(line, i + 1, 1) == "/") {
			word_end()
			break
		}
		if (c == "\"" || c == "\047") {
			word_end()
			for (i++; i <= len && substr(line, i, 1) != c; i++)
				if (substr(line, i, 1) == "\\")
					i++
			prev = "lit"
			continue
		}
		if (c ~ /[A-Za-z0-9_]/) {
			word = word c
			continue
		}
		word_end()
		if (c ~ /[ \t]/)
			continue
		if (c == "(") {
			if (depth == 0 && pdepth == 0 && prev ~ /^w:/ && last_word != "__attribute__") {
				fname = last_word
				fline = last_word_line
			}
			pstack[++pdepth] = prev
		} else if (c == ")") {
			closed_after = pdepth > 0 ? pstack[pdepth] : ""
			if (pdepth > 0)
				pdepth--
		} else if (c == "{") {
			open_brace()
		} else if (c == "}") {
			close_brace()
		} else if (depth == 0 && c == ";") {
			reset_header()
		} else if (depth == 0 && c == "=") {
			has_eq = 1
		}
		prev = c
	}
	word_end()
}
END {
	if (long_list != "")
		printf "size: functions over %d lines:\n%s", max_lines, long_list
	if (deep_list != "")
		printf "size: nesting deeper than %d levels:\n%s", max_depth, deep_list
	if (nfuncs == 0) {
		print "size: no functions found"
		exit 1
	}
	# insertion sort: a few thousand numbers
	for (i = 2; i <= nfuncs; i++) {
		v = lens[i]
		for (j = i - 1; j >= 1 && lens[j] > v; j--)
			lens[j + 1] = lens[j]
		lens[j + 1] = v
	}
	median = (nfuncs % 2) ? lens[(nfuncs + 1) / 2] : (lens[nfuncs / 2] + lens[nfuncs / 2 + 1]) / 2
	printf "size: %d functions, median %s lines, longest %d (%s)\n", nfuncs, median, longest, longest_at
	exit (long_list != "" || deep_list != "") ? 1 : 0
}' "${files[@]}" || exit 1
[ -z "$long_files" ]
