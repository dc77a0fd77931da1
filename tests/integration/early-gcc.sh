#!/usr/bin/env bash
# Early ticks with --timeline (issue 23): gcc compiling a generated file runs cc1, a freshly
# exec'd 30 MB binary without frame pointers whose unwind tables take perch hundreds of ms to
# build. Its ticks before they are listed are walked later from a copy (struct perch_early);
# with --timeline as without, and each such tick gets its place on the timeline at its own time.
# The truth is the recording without --timeline: the share of cc1's samples that reach main must
# be the same within sampling error, and the timed ticks must match the counts key by key, in
# order.
#
#   tests/integration/early-gcc.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin early-gcc "${1:-build}"
DUMP=$(realpath "$BUILD/tests/timeline_dump")

if ! command -v gcc >/dev/null; then
	echo "early-gcc: skipped: no gcc"
	it_end
	exit
fi
# about a second of cc1 at -O2: 120 small functions with loops for it to optimize
awk 'BEGIN { for (i = 0; i < 120; i++)
		printf "int f%d(int x) { int s = 0; for (int j = 0; j < x; j++) { s += j * %d ^ (s >> 3); if (s %% 7 == %d) s -= x; } return s + %d; }\n", i, i, i % 7, i
	print "int main(void) { int s = 0;"; for (i = 0; i < 120; i++) printf "s += f%d(%d);\n", i, i
	print "return s; }" }' >"$T/big.c"

# reach NAME: "HIT N" of cc1's samples (those inside its exec or exit left out: no unwinder can
# read a user stack there), HIT through main
reach() {
	launch "$1" "${@:2}" -- gcc -O2 -c "$T/big.c" -o "$T/$1.o"
	grep '^cc1;' "$T/$1.folded" | grep -Ev '(bprm_execve|do_exit)_\[k\]' >"$T/$1.cc1"
	echo "$(samples "$T/$1.cc1" ';main(;|$)') $(samples "$T/$1.cc1")"
}

read -r hit_p n_p < <(reach plain)
read -r hit_t n_t < <(reach timed --timeline)
# the two shares and the tolerance for their difference: four standard deviations of it (pooled
# binomial), plus a point
res=$(awk -v a="$hit_p" -v n="$n_p" -v b="$hit_t" -v m="$n_t" 'BEGIN {
	if (!n || !m) { print "0 0 0"; exit }
	p = (a + b) / (n + m); tol = 400 * sqrt(p * (1 - p) * (1 / n + 1 / m)) + 1
	printf "%.2f %.2f %.2f\n", 100 * a / n, 100 * b / m, tol }')
read -r pct_p pct_t tol <<<"$res"
early="$(rec_stat "$T/timed.data" early_stacks_copied) copied, $(rec_stat "$T/timed.data" early_stacks_rescued) rescued"
if [ "$n_p" -ge 100 ] && [ "$n_t" -ge 100 ] && within "$pct_t" "$pct_p" "$tol"; then
	ok "cc1's samples through main: $pct_t % of $n_t with --timeline, $pct_p % of $n_p without (within $tol; early stacks: $early)"
else
	bad "cc1 with --timeline" "$pct_t % of $n_t samples through main, $pct_p % of $n_p without (want within $tol; early stacks: $early); heaviest short: $(misses "$T/timed.cc1" ';main(;|$)' '^cc1')"
fi

# every tick on the timeline, the rescued ones too: each key as many timed ticks as its count
"$DUMP" "$T/timed.data" >"$T/timed.tl"
read -r diff events order < <(timeline_counts "$T/timed.tl")
sampled=$(rec_stat "$T/timed.data" sampled)
if [ "$diff" -eq 0 ] && [ "$order" -eq 0 ] && [ "$events" -eq "$sampled" ]; then
	ok "timeline: $events timed ticks in time order, each key's as many as its count ($sampled samples)"
else
	bad "timeline" "$events timed ticks for $sampled samples ($diff keys differ, $order out of order)"
fi

it_end
