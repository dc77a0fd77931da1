#!/usr/bin/env bash
# Steps and pauses from the program itself (include/perch.h: perch_step, perch_step_end,
# perch_profile_pause/resume) and what perch record does with them: --steps=A:B records exactly
# those steps, --only-region=NAME counts only ticks inside region NAME (decided in the BPF
# program), and a program's own pause records nothing: no sample, no region. The truth is the
# workload's (tests/workloads/steps: each step's CLOCK_MONOTONIC interval and CPU time, the
# pause's interval, its CPU time inside region "hot") and the recording's exact sample times
# (--timeline).
#
#   tests/integration/steps.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin steps "${1:-build}"
DUMP=$(realpath "$BUILD/tests/timeline_dump")

# steps_of NAME: the step numbers the recording holds, in order, on one line
steps_of() { "$PERCH" report --format=stats "$T/$1.data" | awk '$1 == "step" { printf "%s%s", s, $3; s = " " } END { print "" }'; }
# rec_step NAME N FIELD: the recording's step N: start, end (ns) or samples
rec_step() {
	"$PERCH" report --format=stats "$T/$1.data" |
		awk -v n="$2" -v f="$3" '$1 == "step" && $3 == n { print (f == "start" ? $4 : f == "end" ? $5 : $6) }'
}
# wl_step NAME N FIELD: the workload's step N: start, end (ns) or cpu (ns)
wl_step() {
	awk -v n="$2" -v f="$3" '$1 == "step" && $2 == n { print (f == "start" ? $3 : f == "end" ? $4 : f == "steal" ? $6 : $5) }' "$T/$1.truth"
}
# le A B...: A <= B <= ... (as numbers)
le() { awk 'BEGIN { for (i = 1; i < ARGC - 1; i++) if (ARGV[i] == "" || ARGV[i] + 0 > ARGV[i + 1] + 0) exit 1 }' "$@"; }
# samples_close SAMPLES CPU_NS FREQ: SAMPLES ticks at FREQ Hz are CPU_NS of CPU, within 20 % (and
# 3 ticks: a step of 100 ms is 100 ticks)
samples_close() { awk -v s="$1" -v c="$2" -v f="$3" 'BEGIN { e = c / 1e9 * f; d = s - e; if (d < 0) d = -d; exit !(d <= 0.2 * e + 3) }'; }
# samples_fit SAMPLES CPU_NS STEAL_NS FREQ: as samples_close, but a cpu-clock tick comes every
# period of the CPU's clock while the thread is current, and that clock runs on through time the
# hypervisor steals, which the thread's CPU clock leaves out: at most the CPU time and what
# /proc/stat counted stolen from all CPUs meanwhile (in whole clock ticks: one more each, of
# two CPUs) (CI8: 130 ticks for a step of 100 ms of CPU, on a loaded VM)
samples_fit() {
	awk -v s="$1" -v c="$2" -v st="$3" -v f="$4" -v hz="$(getconf CLK_TCK)" 'BEGIN {
		e = c / 1e9 * f; hi = (c + st) / 1e9 * f + (st > 0 ? 2 * f / hz : 0)
		exit !(s >= 0.8 * e - 3 && s <= 1.2 * hi + 3) }'
}

# --steps=3:5 on 8 steps with CPU burnt between them (no step open): exactly steps 3 to 5, each
# with its own CPU time, every tick inside one of them, the recording stopped at step 5's end
if perch_record range --steps=3:5 --timeline -- "$WL/steps" 8 100 50; then
	"$DUMP" "$T/range.data" >"$T/range.tl"
	got=$(steps_of range)
	if [ "$got" = "3 4 5" ]; then
		ok "range: the recording holds steps $got, as asked"
	else
		bad "range steps" "holds '$got', asked 3:5"
	fi
	# Every timed tick inside the workload's own interval of step 3, 4 or 5 (not in the gaps).
	read -r out all <<<"$(awk 'FNR == NR { if ($1 == "step" && $2 >= 3 && $2 <= 5) { s[++n] = $3; e[n] = $4 }; next }
		$1 == "event" { all++; in_ = 0; for (i = 1; i <= n; i++) if ($2 >= s[i] && $2 <= e[i]) in_ = 1
				if (!in_) out++ }
		END { print out + 0, all + 0 }' "$T/range.truth" "$T/range.tl")"
	if [ "$out" -eq 0 ] && [ "$all" -gt 0 ]; then
		ok "range: all $all timed ticks inside the workload's steps 3-5, none before, between or after"
	else
		bad "range ticks" "$out of $all ticks outside the workload's steps 3-5"
	fi
	f=$(freq "$T/range.data")
	good=0
	for n in 3 4 5; do
		if samples_fit "$(rec_step range $n samples)" "$(wl_step range $n cpu)" "$(wl_step range $n steal)" "$f" &&
			le "$(wl_step range $n start)" "$(rec_step range $n start)" "$(rec_step range $n end)" "$(wl_step range $n end)"; then
			good=$((good + 1))
		else
			bad "range step $n" "$(rec_step range $n samples) samples for $(wl_step range $n cpu) ns of CPU ($(wl_step range $n steal) ns stolen); [$(rec_step range $n start), $(rec_step range $n end)] vs the workload's [$(wl_step range $n start), $(wl_step range $n end)]"
		fi
	done
	[ "$good" = 3 ] && ok "range: each step's samples match its CPU time (within 20 %); its times lie inside the workload's"
	if [ "$(rec_stat "$T/range.data" stopped_at)" = 3 ] && says "$T/range.data" "^steps      only steps 3:5" &&
		says "$T/range.data" "stopped at the end of the last step"; then
		ok "range: stopped at step 5's end; the header says only steps 3:5 were recorded"
	else
		bad "range header" "stopped_at $(rec_stat "$T/range.data" stopped_at); $("$PERCH" report "$T/range.data" | grep -E '^(steps|recorded)')"
	fi
fi

# Per-step region figures (--timeline: spans assigned to steps by their begin): step N calls
# region "part" N % 3 + 1 times; the workload times each call around its begin and end, so
# perch's total lies inside it (+0.2 ms: TSC against CLOCK_MONOTONIC) and the calls match
# exactly. The header's recorded line lists the steps' own intervals.
if perch_record parts --steps=2:5 --timeline -- "$WL/steps" 7 60 20 regions; then
	"$PERCH" report --format=csv "$T/parts.data" >"$T/parts.csv"
	good=0
	for n in 2 3 4 5; do
		read -r wc wt <<<"$(awk -v n="$n" '$1 == "region" && $2 == n { print $4, $5 }' "$T/parts.truth")"
		read -r rc rt <<<"$(awk -F, -v n="$n" '$1 == "part" && $12 == n { print $3, $4 * 1e9 }' "$T/parts.csv")"
		if [ "$rc" = "$wc" ] && awk -v r="$rt" -v w="$wt" 'BEGIN { exit !(r <= w + 200000 && r >= 0.8 * w) }' &&
			grep -A3 "^  [0-9]* *$n " <("$PERCH" report "$T/parts.data") | grep -q "region part: $wc calls"; then
			good=$((good + 1))
		else
			bad "parts step $n" "csv: $rc calls, $rt ns; the workload: $wc calls, $wt ns"
		fi
	done
	other=$(awk -F, '$1 == "part" && $12 != "" && ($12 < 2 || $12 > 5)' "$T/parts.csv" | wc -l)
	[ "$good" = 4 ] && [ "$other" = 0 ] && ok "parts: region part's calls per step 2-5 as the workload made them, its time inside the workload's (csv and text)"
	# the recorded line: one interval per step (gaps between them), each as long as the step
	got=$("$PERCH" report "$T/parts.data" | sed -n 's/^recorded   \(.*\) (the steps of --steps).*/\1/p' | tr ',' '\n' |
		awk '{ split($1, a, "-"); print (a[2] - a[1]) * 1e3 }')
	want=$(awk '$1 == "step" && $2 >= 2 && $2 <= 5 { print ($4 - $3) / 1e6 }' "$T/parts.truth")
	if [ "$(echo "$got" | wc -l)" = 4 ] && paste <(echo "$got") <(echo "$want") |
		awk '{ if (!($1 <= $2 + 2 && $1 >= 0.9 * $2 - 2)) bad = 1 } END { exit bad }'; then
		ok "parts: the header's recorded line lists the 4 steps' intervals ($(echo "$got" | tr '\n' ' ')ms)"
	else
		bad "parts recorded" "intervals '$(echo "$got" | tr '\n' ' ')' ms, the workload's steps '$(echo "$want" | tr '\n' ' ')' ms"
	fi
fi

# The HTML report's Steps tab, rendered by a browser: a row per step with the recording's samples
# and the workload's calls of region part
if [ -f "$T/parts.data" ] && command -v chromium >/dev/null; then
	"$PERCH" report --format=html -o "$T/parts.html" "$T/parts.data"
	timeout 120 chromium --headless --no-sandbox --disable-gpu --dump-dom "file://$T/parts.html#tab=steps" 2>/dev/null |
		grep -o '<table class="steps">.*</table>' | sed 's/<tr data-pid/\n&/g' |
		sed -n 's/^<tr data-pid="[0-9]*" data-step="\([0-9]*\)">\(<td>[^<]*<\/td>\)\{5\}<td>\([0-9]*\)<\/td>.*steps-regions">part: \([0-9]*\) calls.*/\1 \3 \4/p' >"$T/parts.rows"
	want=$(for n in 2 3 4 5; do echo "$n $(rec_step parts $n samples) $(awk -v n="$n" '$1 == "region" && $2 == n { print $4 }' "$T/parts.truth")"; done)
	if [ "$(cat "$T/parts.rows")" = "$want" ]; then
		ok "html: the Steps tab shows steps 2-5 with the recording's samples and the workload's calls of part"
	else
		bad "html Steps tab" "rows '$(tr '\n' ';' <"$T/parts.rows")', want '$(echo "$want" | tr '\n' ';')'"
	fi
else
	echo "skip html: no chromium"
fi

# chrome_slices NAME: the Chrome/Perfetto export's step and pause slices, "name" per line, after
# checking the JSON loads and every slice has a duration
chrome_slices() {
	"$PERCH" report --format=chrome "$T/$1.data" | python3 -c '
import json, sys
d = json.load(sys.stdin)
for e in d["traceEvents"]:
    if e.get("cat") in ("step", "paused") and e["ph"] == "X" and e["dur"] >= 0:
        print(e["name"])'
}
if [ -f "$T/range.data" ]; then
	got=$(chrome_slices range | tr '\n' ',')
	if [ "$got" = "step 3,step 4,step 5,paused (perch)," ]; then
		ok "range: the Chrome export has a slice per step and the recording's paused window"
	else
		bad "range chrome" "slices '$got'"
	fi
fi

# The program pauses itself inside step 1 (a region begun and ended in the pause); steps end at
# the next perch_step() (no gap): no tick and no region call in the pause, every step there
if perch_record pause --timeline --off-cpu -- "$WL/steps" 4 100 0 pause; then
	"$DUMP" "$T/pause.data" >"$T/pause.tl"
	read -r ps pe pc <<<"$(awk '$1 == "pause" { print $2, $3, $4 }' "$T/pause.truth")"
	in_pause=$(awk -v a="$ps" -v b="$pe" '$1 == "event" && $2 >= a && $2 <= b { n++ } END { print n + 0 }' "$T/pause.tl")
	in_step1=$(awk -v a="$(wl_step pause 1 start)" -v b="$(wl_step pause 1 end)" '$1 == "event" && $2 >= a && $2 <= b { n++ } END { print n + 0 }' "$T/pause.tl")
	if [ "$in_pause" -eq 0 ] && [ "$in_step1" -gt 0 ]; then
		ok "pause: no tick in the program's pause ($(((pe - ps) / 1000000)) ms); $in_step1 in the rest of its step"
	else
		bad "pause ticks" "$in_pause ticks inside the pause, $in_step1 in step 1"
	fi
	calls=$("$PERCH" report --format=csv "$T/pause.data" | awk -F, '$1 == "paused_region" && $2 == "" { print $3 }')
	if [ -z "$calls" ] || [ "$calls" = 0 ]; then
		ok "pause: the region begun and ended inside the pause is neither timed nor counted"
	else
		bad "pause region" "paused_region has $calls calls"
	fi
	# perch's pause window holds the workload's (its clock read after the pause, before the resume)
	read -r rs re <<<"$("$PERCH" report --format=stats "$T/pause.data" | awk '$1 == "program_pause" { print $4, $5 }')"
	if le "$rs" $((ps + 1000000)) && le $((pe - 1000000)) "$re" && says "$T/pause.data" "^program paused pid"; then
		ok "pause: the recording lists the program's pause window; the report says it was not recorded"
	else
		bad "pause window" "recorded [$rs, $re], the workload paused [$ps, $pe]"
	fi
	got=$(steps_of pause)
	c1=$(wl_step pause 1 cpu)
	if [ "$got" = "0 1 2 3" ] && samples_close "$(rec_step pause 1 samples)" $((c1 - pc)) "$(freq "$T/pause.data")"; then
		ok "pause: steps $got (each ended by the next); step 1 counts its CPU time less the pause's"
	else
		bad "pause steps" "steps '$got'; step 1: $(rec_step pause 1 samples) samples for $((c1 - pc)) ns unpaused CPU"
	fi
	# --off-cpu: the 30 ms sleep inside the pause is not kept, the one outside it is
	off_in=$(folded "$T/pause.data" --view=off | awk '/;nap_paused;/ { n += $NF } END { print n + 0 }')
	off_out=$(folded "$T/pause.data" --view=off | awk '/;nap_recorded;/ { n += $NF } END { print n + 0 }')
	if [ "$off_in" -eq 0 ] && [ "$off_out" -ge 25000000 ]; then
		ok "pause: no off-CPU block in the pause; the 30 ms sleep outside it shows $((off_out / 1000000)) ms"
	else
		bad "pause off-cpu" "$off_in ns blocked in the pause, $off_out ns in the recorded sleep"
	fi
	got=$(chrome_slices pause | tr '\n' ',')
	if [ "$got" = "step 0,step 1,paused,step 2,step 3," ]; then
		ok "pause: the Chrome export shows the steps and the program's pause"
	else
		bad "pause chrome" "slices '$got'"
	fi
fi

# perch merge keeps each input's steps and pauses, with their samples
if [ -f "$T/range.data" ] && [ -f "$T/pause.data" ] &&
	"$PERCH" merge -o "$T/merged.data" "$T/range.data" "$T/pause.data" 2>"$T/merge.err"; then
	got=$(steps_of merged)
	want_n=$(("$(rec_step range 4 samples)" + 0))
	pauses=$("$PERCH" report --format=stats "$T/merged.data" | awk '$1 == "program_pause" { n++ } END { print n + 0 }')
	if [ "$got" = "3 4 5 0 1 2 3" ] && [ "$(rec_step merged 4 samples)" = "$want_n" ] && [ "$pauses" = 1 ]; then
		ok "merge: the merged recording keeps both inputs' steps ($got) and the program's pause"
	else
		bad "merge" "steps '$got', step 4 samples $(rec_step merged 4 samples) (input: $want_n), $pauses pauses"
	fi
else
	bad "merge" "perch merge failed: $(cat "$T/merge.err" 2>/dev/null)"
fi

# --only-region=hot: 60 % of each step inside region "hot" (its name registered at the first
# step, after perch came), the rest outside: only the hot part is counted
if perch_record only --only-region=hot -- "$WL/steps" 5 200 0 only; then
	f=$(freq "$T/only.data")
	hot=$(truth "$T/only.truth" hot_cpu_s)
	n=$(folded "$T/only.data" | awk '{ n += $NF } END { print n + 0 }')
	outside=$(folded "$T/only.data" | awk '$0 !~ /;region:hot;/ { n += $NF } END { print n + 0 }')
	if [ "$n" -gt 0 ] && [ "$outside" -eq 0 ] && samples_close "$n" "$(awk -v h="$hot" 'BEGIN { printf "%d", h * 1e9 }')" "$f"; then
		ok "only: $n samples, all inside region hot, for the workload's $hot s of CPU in it"
	else
		bad "only" "$n samples ($outside outside hot) for $hot s of CPU inside hot"
	fi
	if says "$T/only.data" "^only       samples of threads inside region hot" &&
		! grep -q "no sample fell" "$T/only.err"; then
		ok "only: the header says so (and no warning)"
	else
		bad "only header" "no 'only' line, or a warning: $(cat "$T/only.err")"
	fi
	# no --timeline: no spans, so the steps have no region figures and the report says why
	if says "$T/only.data" "^  per-step region figures need perch record --timeline" &&
		! says "$T/only.data" "^             region hot:"; then
		ok "only: without --timeline the Steps section says per-step region figures need it"
	else
		bad "only note" "no note on per-step region figures without --timeline"
	fi
fi

# --only-region with a name the program never uses: 0 samples, exit 0, and one warning naming it
"$PERCH" record -q --only-region=nosuch -o "$T/nosuch.data" -- "$WL/steps" 2 100 0 only \
	>/dev/null 2>"$T/nosuch.err"
rc=$?
if [ $rc -eq 0 ] && [ "$(wc -l <"$T/nosuch.err")" -eq 1 ] &&
	grep -q "warning: --only-region=nosuch: no sample fell in region 'nosuch'" "$T/nosuch.err"; then
	ok "only nosuch: exit 0, one line: $(cat "$T/nosuch.err")"
else
	bad "only nosuch" "exit $rc: '$(cat "$T/nosuch.err")'"
fi

# Attached: the workload runs 8 cold steps (1.2 s) before its first use of region "hot", so the
# name registers after perch attached; only its ticks inside "hot" are counted
"$WL/steps" 14 150 0 only 8 >"$T/only-attach.truth" &
wl=$!
sleep 0.3
if "$PERCH" record -q --only-region=hot -p "$wl" -o "$T/only-attach.data" 2>"$T/only-attach.err"; then
	wait "$wl"
	hot=$(truth "$T/only-attach.truth" hot_cpu_s)
	n=$(folded "$T/only-attach.data" | awk '{ n += $NF } END { print n + 0 }')
	outside=$(folded "$T/only-attach.data" | awk '$0 !~ /;region:hot;/ { n += $NF } END { print n + 0 }')
	if [ "$n" -gt 0 ] && [ "$outside" -eq 0 ] &&
		samples_close "$n" "$(awk -v h="$hot" 'BEGIN { printf "%d", h * 1e9 }')" "$(freq "$T/only-attach.data")"; then
		ok "only-attach: region hot registered after the attach: $n samples, all inside it, for $hot s of CPU"
	else
		bad "only-attach" "$n samples ($outside outside hot) for $hot s of CPU inside hot"
	fi
else
	bad "only-attach" "perch record -p exited $?: $(cat "$T/only-attach.err")"
	wait "$wl"
fi

# Attached with --steps=6:7: perch ends when step 7 ends; the workload runs on to its end
"$WL/steps" 12 150 50 >"$T/steps-attach.truth" &
wl=$!
sleep 0.3
if "$PERCH" record -q --steps=6:7 -p "$wl" -o "$T/steps-attach.data" 2>"$T/steps-attach.err"; then
	running=no
	kill -0 "$wl" 2>/dev/null && running=yes
	wait "$wl"
	got=$(steps_of steps-attach)
	if [ "$got" = "6 7" ] && [ "$running" = yes ] && [ "$(rec_stat "$T/steps-attach.data" stopped_at)" = 3 ] &&
		le "$(wl_step steps-attach 6 start)" "$(rec_step steps-attach 6 start)" "$(rec_step steps-attach 7 end)" "$(wl_step steps-attach 7 end)"; then
		ok "steps-attach: steps $got recorded, perch ended at step 7's end while the workload ran on"
	else
		bad "steps-attach" "steps '$got', workload still running when perch ended: $running, stopped_at $(rec_stat "$T/steps-attach.data" stopped_at)"
	fi
else
	bad "steps-attach" "perch record -p exited $?: $(cat "$T/steps-attach.err")"
	wait "$wl"
fi

# Bad input: one line on stderr, exit 64 (usage), nothing recorded
for arg in 20:10 x 3: -1 ''; do
	"$PERCH" record -q --steps="$arg" -o "$T/badsteps.data" -- true >/dev/null 2>"$T/bad.err"
	rc=$?
	if [ $rc -eq 64 ] && [ "$(wc -l <"$T/bad.err")" -eq 1 ] && grep -q -- "--steps" "$T/bad.err" &&
		[ ! -e "$T/badsteps.data" ]; then
		ok "bad input: --steps='$arg' exits 64: $(cat "$T/bad.err")"
	else
		bad "bad input --steps='$arg'" "exit $rc: $(cat "$T/bad.err")"
	fi
done

it_end
