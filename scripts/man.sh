#!/usr/bin/env bash
# The man pages perch-CMD.1, made from docs/perch-CMD.md (no groff or pandoc needed): headings,
# paragraphs, code blocks, lists and `code` into troff, and the generated options block
# (<!-- generated: perch CMD --help=markdown -->) replaced by `perch CMD --help=man`, the same
# option table's troff, between `.\" generated` comments (tests/help.sh compares them).
#
#   bash scripts/man.sh PERCH docs/perch-CMD.md > perch-CMD.1   one page
#   bash scripts/man.sh install PERCH DIR                       every docs/perch-*.md into DIR
#   bash scripts/man.sh update PERCH      rewrite the generated blocks of docs/perch-*.md and
#                                         docs/commands.md (after an option table changed;
#                                         tests/help.sh fails until then)
set -eu
cd "$(dirname "$0")/.."

page() { # page PERCH MD
	local perch=$1 md=$2 name
	name=$(basename "$md" .md)
	awk -v perch="$perch" -v name="$name" -v version="$("$perch" --version | head -1)" '
	function lead(s) { return (substr(s, 1, 1) == "." || substr(s, 1, 1) == Q) ? "\\&" s : s }
	function esc(s, t) { # text: markdown escapes kept, backslashes, inline markup
		while (match(s, /\\[^a-zA-Z0-9 ]/))
			s = substr(s, 1, RSTART - 1) P substr(s, RSTART + 1)
		gsub(/\\/, "\\e", s)
		while (match(s, /`[^`]*`/))
			s = substr(s, 1, RSTART - 1) "\\fB" substr(s, RSTART + 1, RLENGTH - 2) "\\fR" substr(s, RSTART + RLENGTH)
		while (match(s, /\*\*[^*]*\*\*/))
			s = substr(s, 1, RSTART - 1) "\\fB" substr(s, RSTART + 2, RLENGTH - 4) "\\fR" substr(s, RSTART + RLENGTH)
		while (match(s, /\[[^]]*\]\([^)]*\)/)) { # [text](url): text
			t = substr(s, RSTART + 1, RLENGTH - 1); sub(/\]\(.*/, "", t)
			s = substr(s, 1, RSTART - 1) t substr(s, RSTART + RLENGTH)
		}
		gsub(P, "", s)
		return lead(s)
	}
	function para() { if (!fresh) print ".PP"; fresh = 1 }
	BEGIN { fresh = 1; Q = sprintf("%c", 39); P = sprintf("%c", 1) }
	NR == 1 && /^# / {
		t = toupper(name); gsub(/-/, "\\-", t)
		printf ".TH \"%s\" \"1\" \"\" \"%s\" \"perch manual\"\n", t, version
		next
	}
	/^<!-- generated: .* --help=markdown -->$/ {
		cmd = $0; sub(/^<!-- generated: /, "", cmd); sub(/ --help=markdown -->$/, "", cmd)
		sub(/^perch /, "", cmd)
		print ".\\\" generated: perch " cmd " --help=man"
		c = perch " " cmd " --help=man"
		while ((c | getline l) > 0) print l
		close(c)
		print ".\\\" end generated"
		skip = 1; next
	}
	skip && /^<!-- end generated -->$/ { skip = 0; fresh = 0; next }
	skip || /^<!--.*-->$/ { next }
	/^```/ {
		if (!code) { para(); print ".nf"; code = 1 } else { print ".fi"; code = 0; fresh = 0 }
		next
	}
	code { l = $0; gsub(/\\/, "\\e", l); print lead(l); next }
	/^## / { sub(/^## /, ""); print ".SH " toupper($0); fresh = 1; sect = $0; next }
	/^### / { sub(/^### /, ""); print ".SS " $0; fresh = 1; next }
	/^$/ { para(); next }
	/^- / { print ".IP \\(bu 2"; sub(/^- /, ""); print esc($0); fresh = 0; next }
	sect == "NAME" { l = esc($0); sub(/ - /, " \\- ", l); print l; fresh = 0; next }
	{ sub(/^ +/, ""); print esc($0); fresh = 0 }
	' "$md"
}

# update MD: each <!-- generated: perch CMD --help=X --> ... <!-- end generated --> block refilled
update() {
	local perch=$1 md=$2
	awk -v perch="$perch" '
	/^<!-- generated: perch .* -->$/ {
		print; cmd = $0; sub(/^<!-- generated: perch /, "", cmd); sub(/ -->$/, "", cmd)
		c = perch " " cmd
		while ((c | getline l) > 0) print l
		close(c)
		skip = 1; next
	}
	/^<!-- end generated -->$/ { skip = 0 }
	!skip' "$md" >"$md.tmp"
	mv "$md.tmp" "$md"
}

if [ "${1:-}" = update ]; then
	for md in docs/perch-*.md docs/commands.md; do
		update "$2" "$md"
	done
elif [ "${1:-}" = install ]; then
	perch=$2 dir=$3
	mkdir -p "$dir"
	for md in docs/perch-*.md; do
		page "$perch" "$md" >"$dir/$(basename "$md" .md).1.tmp"
		mv "$dir/$(basename "$md" .md).1.tmp" "$dir/$(basename "$md" .md).1"
		chmod 644 "$dir/$(basename "$md" .md).1"
	done
else
	page "$1" "$2"
fi
