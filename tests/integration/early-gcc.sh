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

# reach NAME [OPTION...]: "HIT N" of cc1's samples (those inside its exec or exit left out: no
# unwinder can read a user stack there), HIT through main; gcc runs as ${PIN[@]} says
PIN=()
reach() {
	launch "$1" "${@:2}" -- "${PIN[@]}" gcc -O2 -c "$T/big.c" -o "$T/$1.o"
	grep '^cc1;' "$T/$1.folded" | grep -Ev '(bprm_execve|do_exit)_\[k\]' >"$T/$1.cc1"
	echo "$(samples "$T/$1.cc1" ';main(;|$)') $(samples "$T/$1.cc1")"
}

# early NAME: the early stacks' counters of its recording
early() {
	local s
	s=$("$PERCH" report --format=stats "$T/$1.data")
	awk '$1 ~ /^early_stacks_/ { v[substr($1, 14)] = $2 }
		END { printf "%d copied, %d rescued, %d short, %d ring full, %d lost", v["copied"],
			v["rescued"], v["short"], v["ring_full"], v["lost"] }' <<<"$s"
}

# same NAME WHAT: NAME's share of cc1's samples through main is plain's within sampling error
# (four standard deviations of the difference, pooled binomial, plus a point), and no early
# stack was lost to a full ring or a full loader
same() {
	local hit n res pct pct_p tol full lost
	read -r hit n < <(reach "$1" "${@:3}")
	res=$(awk -v a="$hit_p" -v n="$n_p" -v b="$hit" -v m="$n" 'BEGIN {
		if (!n || !m) { print "0 0 0"; exit }
		p = (a + b) / (n + m); tol = 400 * sqrt(p * (1 - p) * (1 / n + 1 / m)) + 1
		printf "%.2f %.2f %.2f\n", 100 * a / n, 100 * b / m, tol }')
	read -r pct_p pct tol <<<"$res"
	full=$(rec_stat "$T/$1.data" early_stacks_ring_full)
	lost=$(rec_stat "$T/$1.data" early_stacks_lost)
	if [ "$n_p" -ge 100 ] && [ "$n" -ge 100 ] && within "$pct" "$pct_p" "$tol" &&
		[ "${full:-1}" -eq 0 ] && [ "${lost:-1}" -eq 0 ]; then
		ok "cc1's samples through main: $pct % of $n $2, $pct_p % of $n_p without (within $tol; early stacks: $(early "$1"))"
	else
		bad "cc1 $2" "$pct % of $n samples through main, $pct_p % of $n_p without (want within $tol, none lost; early stacks: $(early "$1"); without: $(early plain)); heaviest short: $(misses "$T/$1.cc1" ';main(;|$)' '^cc1')"
	fi
}

read -r hit_p n_p < <(reach plain)
same timed "with --timeline" --timeline
# A loader that is slow to build cc1's table (a second and more, under the sanitizers on a busy
# machine; CI, 2026-11-29: 85 % through main, against 98 %): perch shares its CPU with a busy loop
# while gcc runs alone on the other. The ticks of that time wait in the early ring (4 MiB) and the
# window is held open until the table is listed.
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
	printf '#!/bin/sh\nexec taskset -c 0 %q "$@"\n' "$PERCH" >"$T/pinned"
	chmod +x "$T/pinned"
	taskset -c 0 sh -c 'while :; do :; done' &
	hog=$!
	PERCH_ALONE=$PERCH PERCH=$T/pinned PIN=(taskset -c 1)
	same loaded "with perch sharing its CPU with a busy loop" --timeline
	PERCH=$PERCH_ALONE PIN=()
	kill "$hog"
	wait "$hog" 2>/dev/null
else
	echo "early-gcc: loaded: skipped: one CPU"
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
