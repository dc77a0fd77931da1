#!/usr/bin/env bash
# Where a bench script's table goes: stdout always; with BENCH_OUT=FILE (make bench sets
# docs/BENCHMARKS.md) also into FILE, in the script's own section, between the lines
#   <!-- bench:NAME -->  and  <!-- /bench:NAME -->
# The new table, under a heading with its date and CPU model, replaces what was between them; the
# table it replaces moves just below the closing line, on top of the older ones (the history).
# FILE is left as it was when the script fails or the markers are missing.
#
# A bench script sources this first, before it changes directory:
#   . "$(dirname "$0")/publish.sh" NAME "$@"
# which, with BENCH_OUT set, runs the script again as a child with its output captured and exits
# with its status; without BENCH_OUT it returns and the script runs as it always did.
#
# Run as a program, it splices by hand (tests/readme.sh checks the splice this way):
#   bash bench/publish.sh --splice NAME FILE TABLE_FILE

# bench_splice NAME FILE TABLE: TABLE's lines (a leading "## title" line dropped: the section
# names the script) into FILE's section NAME, dated; 1 when FILE lacks the markers.
bench_splice() {
	local name=$1 file=$2 table=$3 tmp cpu
	if ! grep -qxF "<!-- bench:$name -->" "$file" || ! grep -qxF "<!-- /bench:$name -->" "$file"; then
		echo "publish: $file has no <!-- bench:$name --> ... <!-- /bench:$name --> section" >&2
		return 1
	fi
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
	tmp=$(mktemp "$file.XXXXXX") || return 1
	awk -v name="$name" -v table="$table" \
		-v head="### $(date -u '+%Y-%m-%d %H:%M UTC'): ${cpu:-unknown CPU}, $(nproc) CPUs" '
		$0 == "<!-- bench:" name " -->" {
			print; print ""; print head; print ""
			first = 1
			while ((getline line < table) > 0) {
				if (first && line ~ /^## /) { first = 0; skip = 1; continue }
				if (skip && line == "") { skip = 0; continue }
				first = 0; skip = 0; print line
			}
			print ""; inside = 1; n = 0; next
		}
		$0 == "<!-- /bench:" name " -->" {
			print; inside = 0
			while (n > 0 && old[n] == "") n--  # the old table, its blank lines around it dropped
			for (i = 1; i <= n; i++) if (!(i == 1 && old[i] == "")) print old[i]
			next
		}
		inside { old[++n] = $0; next }
		{ print }
	' "$file" >"$tmp" && mv "$tmp" "$file"
}

if [ "${1:-}" = --splice ]; then
	bench_splice "$2" "$3" "$4"
	exit
fi

if [ -n "${BENCH_OUT:-}" ] && [ -z "${BENCH_PUBLISH_CHILD:-}" ]; then
	bench_name=$1
	shift
	bench_out=$(realpath -m "$BENCH_OUT")
	bench_table=$(mktemp /tmp/perch-bench.XXXXXX)
	set +e
	BENCH_PUBLISH_CHILD=1 bash "$0" "$@" | tee "$bench_table"
	bench_rc=${PIPESTATUS[0]}
	if [ "$bench_rc" -eq 0 ]; then
		bench_splice "$bench_name" "$bench_out" "$bench_table" &&
			echo "publish: the table is in $bench_out, section $bench_name" >&2 || bench_rc=1
	fi
	rm -f "$bench_table"
	exit "$bench_rc"
fi
