#!/usr/bin/env bash
# Inline frames and source lines: a function inlined into its caller is its own frame, and with
# --lines both carry the source lines the workload marks (LINE:burn, LINE:call). report
# --no-inline: the out-of-line function alone, taking the inlined code's self time, in every
# format; checked against the CPU time the workload measured in each part.
#
#   tests/integration/inlined.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin inlined "${1:-build}"

launch inl -- "$WL/inlined" 1
folded "$T/inl.data" --lines >"$T/inl.lines"
src=$TESTS/workloads/inlined.c
lburn=$(grep -n 'LINE:burn' "$src" | cut -d: -f1)
lcall=$(grep -n 'LINE:call' "$src" | cut -d: -f1)
ih=$(share "$T/inl.folded" hot_inline)
ic=$(stack_pct "$T/inl.lines" ";caller \\(inlined\\.c:$lcall\\);hot_inline \\(inlined\\.c:$lburn\\)\$")
if within "$ih" 100 5 && within "$ic" 100 5; then
	ok "inline: hot_inline (inlined into caller) on $ih % of stacks; --lines caller (inlined.c:$lcall);hot_inline (inlined.c:$lburn) on $ic %"
else
	bad inline "hot_inline on $ih %, with lines on $ic %: $(sort -t' ' -k2 -n "$T/inl.lines" | tail -2)"
fi

# split_caller: a third of its CPU time in its own body, two thirds in split_hot inlined into it.
# At 4999 Hz for ~3000 samples; a share p of n samples taken at random moments is off by chance
# with a standard deviation of sqrt(p(1-p)/n): the tolerance is binom_tol's (4 of those + 1, at
# least 3 points).
launch split -F 4999 -- "$WL/inlined" 2 split
folded "$T/split.data" --no-inline >"$T/split.noinl"
n=$(samples "$T/split.folded")
hot=$(truth_pct "$T/split.truth" split_hot)
own=$(truth_pct "$T/split.truth" split_caller)
both=$(awk -v a="$hot" -v b="$own" 'BEGIN { printf "%.2f", a + b }')
ph=$(share "$T/split.folded" split_hot)
po=$(awk -v a="$(samples "$T/split.folded" ';split_caller(;|$)' ';split_hot(;|$)')" -v n="$n" \
	'BEGIN { printf "%.2f", n ? 100 * a / n : 0 }')
pn=$(share "$T/split.noinl" split_caller)
th=$(binom_tol "$hot" "$n")
to=$(binom_tol "$own" "$n")
if within "$ph" "$hot" "$th" && within "$po" "$own" "$to"; then
	ok "--inline (default): split_hot on $ph % of $n stacks, split_caller's own code $po % (workload: $hot +-$th / $own +-$to %)"
else
	bad "--inline" "split_hot $ph % (workload $hot +-$th), split_caller's own $po % (workload $own +-$to), $n samples"
fi
if within "$pn" "$both" 3 && ! grep -q split_hot "$T/split.noinl"; then
	ok "--no-inline: split_caller on $pn % of stacks (workload: $hot + $own = $both %, +-3), no split_hot frame"
else
	bad "--no-inline" "split_caller $pn % (workload $both), split_hot frames: $(grep -c split_hot "$T/split.noinl")"
fi
# against perf report --no-inline on the same run (perch launches perf, perf the workload): the
# self share of split_caller, each of its own samples of the workload's thread; both sample at
# 4999 Hz, so 3 points is over 4 standard deviations of the difference at ~3000 samples each
if command -v perf >/dev/null; then
	"$PERCH" record -q -F 4999 -o "$T/pf.data" -- perf record -q -e cpu-clock -F 4999 \
		-o "$T/pf.perf" -- "$WL/inlined" 2 split >/dev/null 2>"$T/err" || bad "perf run" "$(head -2 "$T/err")"
	a=$(folded "$T/pf.data" --no-inline | grep '^inlined;' | awk "$FOLD_AWK"'{ parse(); t += n; if (fr[k] == "split_caller") c += n }
		END { printf "%.2f %d", t ? 100 * c / t : 0, t }')
	b=$(perf report -i "$T/pf.perf" --no-inline --comm inlined -n --sort sym --stdio -g none 2>/dev/null |
		awk '!/^#/ && NF >= 4 { t += $2; if ($4 == "split_caller") c += $2 } END { printf "%.2f %d", t ? 100 * c / t : 0, t }')
	if [ "${a#* }" -ge 1000 ] && [ "${b#* }" -ge 1000 ] && within "${a% *}" "${b% *}" 3; then
		ok "--no-inline: split_caller self ${a% *} % of ${a#* } samples, perf report --no-inline ${b% *} % of ${b#* } (+-3)"
	else
		bad "--no-inline vs perf" "split_caller self: perch ${a% *} % of ${a#* }, perf ${b% *} % of ${b#* }"
	fi
else
	bad "--no-inline vs perf" "needs perf (scripts/install-deps.sh installs linux-perf)"
fi
# the text report's self column: split_caller's under --no-inline is, sample for sample, its own
# plus split_hot's under --inline
# self_of REC FUNC [REPORT_OPTION...]: FUNC's self samples in the text report
self_of() { "$PERCH" report --top=50 "${@:3}" "$1" | awk -v f="$2" '/^Top functions by self/ { on = 1; next }
	on && /^$/ { exit } on && $5 == f { print $2; exit }'; }
si=$(($(self_of "$T/split.data" split_caller --inline) + $(self_of "$T/split.data" split_hot)))
sn=$(self_of "$T/split.data" split_caller --no-inline)
if [ "$si" -eq "${sn:-0}" ] && [ "$si" -gt 0 ]; then
	ok "text: split_caller self $sn samples with --no-inline = split_caller + split_hot with --inline"
else
	bad "text self" "--no-inline split_caller $sn, --inline split_caller + split_hot $si"
fi
# every format with samples (chrome has them only with --timeline): split_hot named with
# --inline, nowhere with --no-inline
for fmt in folded pprof speedscope html; do
	"$PERCH" report --format="$fmt" -o "$T/in.$fmt" "$T/split.data" 2>/dev/null
	"$PERCH" report --format="$fmt" --no-inline -o "$T/no.$fmt" "$T/split.data" 2>/dev/null
	[ "$fmt" = pprof ] && for f in in no; do gzip -dc "$T/$f.pprof" >"$T/$f.raw" && mv "$T/$f.raw" "$T/$f.pprof"; done
	if grep -qa split_hot "$T/in.$fmt" && ! grep -qa split_hot "$T/no.$fmt" && grep -qa split_caller "$T/no.$fmt"; then
		ok "$fmt: split_hot with --inline, only split_caller with --no-inline"
	else
		bad "$fmt --no-inline" "split_hot in --inline: $(grep -ca split_hot "$T/in.$fmt"), in --no-inline: $(grep -ca split_hot "$T/no.$fmt")"
	fi
done

it_end
