#!/bin/bash
# Golden reports: `perch report` on the recordings in tests/golden/ and tests/corpus/ must print
# exactly what tests/golden/expected/ holds, in every format and with the options that change
# what is printed. The recordings are self-contained (names and lines resolved when recorded), so
# the output depends on the report code alone: a refactor that changes one byte fails here.
#   bash tests/golden.sh BUILD            check
#   bash tests/golden.sh BUILD --update   rewrite the expected files (an intended change only)
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${1:-build}
PERCH=$BUILD/perch
UPDATE=${2:-}
EXP=tests/golden/expected

# name|options: one expected file per recording and variant
VARIANTS=(
	"text|"
	"all|--min-percent=0 --top=1000"
	"lines|--lines --min-percent=0"
	"mangled|--no-demangle"
	"folded|--format=folded"
	"foldedlines|--format=folded --lines"
	"csv|--format=csv"
	"stats|--format=stats"
)

mkdir -p "$EXP"
pass=0 fail=0

# golden WANT ARGS...: perch report ARGS (its output, stderr and exit status) must equal WANT
golden() {
	local want=$1 got
	shift
	got=$("$PERCH" report "$@" 2>&1; echo "exit $?")
	if [ "$UPDATE" = --update ]; then
		printf '%s\n' "$got" >"$want"
	elif [ "$got" = "$(cat "$want" 2>/dev/null)" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL golden: perch report $* differs from $want:"
		diff <(printf '%s\n' "$got") "$want" | head -20
	fi
}
for data in tests/golden/*.data tests/corpus/*.data; do
	base=$(basename "$data" .data)
	[ "${data#tests/corpus/}" != "$data" ] && base=corpus-$base
	for v in "${VARIANTS[@]}"; do
		name=${v%%|*} opts=${v#*|}
		# shellcheck disable=SC2086
		golden "$EXP/$base.$name" $opts "$data"
	done
done
# each region of each recording alone (the --region filter)
for data in tests/golden/regions*.data tests/corpus/regions-*.data; do
	base=$(basename "$data" .data)
	[ "${data#tests/corpus/}" != "$data" ] && base=corpus-$base
	for r in $("$PERCH" report --format=csv "$data" 2>/dev/null | awk -F, 'NR > 1 && $2 == "" { print $1 }' | sort -u); do
		golden "$EXP/$base.region-$r" --region="$r" --min-percent=0 "$data"
	done
done
# queries (--select/--exclude/--fold/--callers/--callees/--merge-chains/--sort, the per-thread
# views and filters) and their errors
QUERIES=(
	"corpus/recursion-dwarf|callers-ping|--callers=ping"
	"corpus/recursion-dwarf|callees-pong-csv|--callees=pong --format=csv"
	"corpus/recursion-dwarf|fold-select-merge|--fold=pong --select=main --merge-chains=90 --min-percent=0 --sort=total"
	"corpus/recursion-dwarf|fold-all|--fold=/./ --format=folded"
	"corpus/recursion-dwarf|select-then-fold|--select=pong --fold=pong --format=folded"
	"corpus/recursion-dwarf|fold-then-select|--fold=pong --select=pong --format=folded"
	"corpus/recursion-dwarf|no-function|--exclude=pin"
	"corpus/recursion-dwarf|bad-regex|--select=/pi[/"
	"corpus/recursion-dwarf|empty-pattern|--fold=ping,"
	"corpus/recursion-dwarf|bad-sort|--sort=name"
	"corpus/recursion-dwarf|bad-merge|--merge-chains=0"
	"corpus/recursion-dwarf|callers-pprof|--callers=ping --format=pprof"
	"corpus/recursion-dwarf|two-focus|--callers=ping --callees=pong"
	"golden/inlined|fold-inline-lines|--fold=/^hot_inline/ --lines --format=folded"
	"golden/inlined|exclude-regex-sort|--exclude=/^ld-linux/ --sort=self --min-percent=0"
	"golden/regions|exclude-csv|--exclude=thread_cpu_s --format=csv"
	"golden/regions|callees-share|--callees=share --region=io"
	"golden/forks|per-thread|--per-thread --min-percent=0"
	"golden/forks|sort-comm-pid-folded|--sort=comm,pid --format=folded"
	"golden/forks|sort-tid-self|--sort=tid,self"
	"golden/forks|per-thread-total|--per-thread --sort=total --top=4"
	"golden/forks|pid-filter-folded|--pid=10794,10797 --format=folded"
	"golden/forks|comm-filter-per-thread|--comm=forks --tid=10795,10796 --per-thread --top=3"
	"golden/forks|bad-tid|--tid=x"
	"golden/forks|no-thread|--tid=10795,1"
	"golden/inlined|sort-dso|--sort=dso --min-percent=5"
	"golden/forks|sort-comm-dso-self|--sort=comm,dso,self --min-percent=5"
	"corpus/metrics|metrics-all|--metrics=all --top=3"
	"corpus/metrics|metrics-none|--metrics=none --top=3"
	"corpus/metrics|bad-metrics|--metrics=some"
)
for q in "${QUERIES[@]}"; do
	IFS='|' read -r data name opts <<<"$q"
	base=$(basename "$data")
	[ "${data#corpus/}" != "$data" ] && base=corpus-$base
	# shellcheck disable=SC2086
	golden "$EXP/$base.query-$name" $opts "tests/$data.data"
done
[ "$UPDATE" = --update ] && { echo "golden: expected outputs rewritten in $EXP"; exit 0; }
echo "golden: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
