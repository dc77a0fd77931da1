#!/usr/bin/env bash
# Recordings of other events than cpu-clock through the exports, perch diff and perch merge, on
# tests/workloads/faults (it counts its own page faults and context switches):
#   - speedscope names the event after each profile's "comm (pid/tid)" and its weights are the
#     events the samples stand for (-c 2: twice the samples, within 2 % of the faults the workload
#     counted); chrome's otherData says the event and the header's sampling line, its counters are
#     named by the event; html's data says the unit;
#   - a recording of two events (-e page-faults,cs): every format but text and stats exits 64 with
#     one line without --event, and exits 0 with it;
#   - diff compares like with like: page-faults against page-faults (each side's touch_pages
#     self samples are its recording's), --event=NAME picks one event of a recording of several,
#     different events or several without --event exit 64 with one line;
#   - merge keeps events apart: two page-faults recordings add up, two of two events keep each
#     event's samples, a page-faults and a cpu-clock recording exit 64 with one line.
#
#   tests/integration/events-tools.sh [BUILD_DIR]   (or tests/integration.sh BUILD_DIR events-tools)
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin events-tools "${1:-build}"

PAGES=20000
SLEEPS=100
truth_of() { awk -v k="$2" '$1 == "truth" && $2 == k { printf "%d", $3 }' "$1"; }
# the touch_pages self samples of a recording's folded stacks (REPORT_OPTION... after it)
touch_self() { samples <(folded "$@") ';touch_pages$'; }

# count_check WHAT GOT WANT: GOT within 2 % (and 2) of WANT
count_check() {
	if within "$2" "$3" "$(awk -v w="$3" 'BEGIN { print 0.02 * w + 2 }')"; then
		ok "$1: $2 (the workload counted $3)"
	else
		bad "$1" "$2, the workload counted $3"
	fi
}

perch_record pf1 -e page-faults -- "$WL/faults" $PAGES 0 || { it_end; exit; }
perch_record pf2 -e page-faults -c 2 -- "$WL/faults" $PAGES 0 || { it_end; exit; }
perch_record cpu -- "$WL/faults" $PAGES 0 || { it_end; exit; }
perch_record both -e page-faults,cs -- "$WL/faults" $PAGES $SLEEPS || { it_end; exit; }

# speedscope: the event in each profile's name, weights = events (-c 2: two a sample)
"$PERCH" report --format=speedscope "$T/pf2.data" >"$T/pf2.speedscope.json"
read -r names unit weights <<<"$(python3 - "$T/pf2.speedscope.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
ps = [p for p in d["profiles"] if p["type"] == "sampled"]
named = all(p["name"].endswith(") page-faults") for p in ps)
units = {p["unit"] for p in ps}
print(int(named and len(ps) > 0), ",".join(sorted(units)), sum(sum(p["weights"]) for p in ps))
EOF
)"
nsamples=$(samples <(folded "$T/pf2.data"))
if [ "$names" = 1 ] && [ "$unit" = none ] && [ "$weights" -eq $((2 * nsamples)) ]; then
	ok "speedscope -e page-faults -c 2: profiles named '... page-faults', unit none, weights $weights = 2 x $nsamples samples"
else
	bad "speedscope -e page-faults -c 2" "named $names, unit '$unit', weights $weights for $nsamples samples"
fi
python3 - "$T/pf2.speedscope.json" >"$T/pf2.touch" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
fr = d["shared"]["frames"]
print(sum(w for p in d["profiles"] if p["type"] == "sampled"
          for s, w in zip(p["samples"], p["weights"]) if s and fr[s[-1]]["name"] == "touch_pages"))
EOF
count_check "speedscope -e page-faults -c 2: touch_pages weight (events)" "$(cat "$T/pf2.touch")" \
	"$(truth_of "$T/pf2.truth" faults)"
# the default cpu-clock profile keeps its plain names
if "$PERCH" report --format=speedscope "$T/cpu.data" | grep -q '"name":"[^"]*([0-9]*/[0-9]*)"'; then
	ok "speedscope cpu-clock: profiles named 'comm (pid/tid)' as before"
else
	bad "speedscope cpu-clock" "no profile named 'comm (pid/tid)'"
fi

# chrome: otherData event and sampling (the text header's), counters named by the event
"$PERCH" report --format=chrome "$T/pf1.data" >"$T/pf1.chrome.json"
hdr=$("$PERCH" report "$T/pf1.data" | sed -n 's/^sampling   \([^;]*\);.*/\1/p')
got=$(python3 - "$T/pf1.chrome.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
o = d["otherData"]
c = {e["name"] for e in d["traceEvents"] if e["ph"] == "C" and e.get("cat") != "metrics"}
print(o.get("event"), "|", o.get("sampling"), "|", ",".join(sorted(c)))
EOF
)
if [ "$got" = "page-faults | $hdr | page-faults/s" ]; then
	ok "chrome -e page-faults: otherData and counters say '$got'"
else
	bad "chrome -e page-faults" "'$got', want 'page-faults | $hdr | page-faults/s'"
fi

# html: the unit in the page's data, --event in its CLI line
"$PERCH" report --format=html -o "$T/pf1.html" "$T/pf1.data"
"$PERCH" report --format=html --event=cs -o "$T/cs.html" "$T/both.data"
if grep -q '"unit":"page-faults"' "$T/pf1.html" && grep -q '"unit":"context-switches"' "$T/cs.html" &&
	grep -q '"args":\["--event=context-switches"\]' "$T/cs.html" && ! grep -q '"unit":' \
	<("$PERCH" report --format=html "$T/cpu.data"); then
	ok "html: the data's unit is the event (none for cpu-clock), --event in its CLI line"
else
	bad "html units" "$(grep -o '"unit":"[^"]*"\|"args":[^]]*]' "$T/pf1.html" "$T/cs.html")"
fi

# two events: each format with --event, the same refusal without it
for f in folded csv pprof speedscope chrome html; do
	expect "--format=$f of two events without --event" 64 "choose one with --event" -- \
		"$PERCH" report --format=$f -o "$T/x.$f" "$T/both.data"
	if "$PERCH" report --format=$f --event=cs -o "$T/x.$f" "$T/both.data" 2>"$T/err" && [ -s "$T/x.$f" ]; then
		ok "--format=$f --event=cs of two events: exit 0"
	else
		bad "--format=$f --event=cs" "$(head -2 "$T/err")"
	fi
done

# diff: like with like
diff_self() { # diff_self BASE NEW [OPTION...]: touch_pages' self samples, base and new
	"$PERCH" diff --format=csv "${@:3}" "$1" "$2" |
		awk -F, '$1 == "function" && $15 == "\"touch_pages\"" { print $2, $3 }'
}
got=$(diff_self "$T/pf1.data" "$T/pf2.data")
want="$(touch_self "$T/pf1.data") $(touch_self "$T/pf2.data")"
if [ "$got" = "$want" ] && [ "${got%% *}" -gt 0 ]; then
	ok "diff page-faults vs page-faults (-c 2): touch_pages self $got, each side's own"
else
	bad "diff page-faults" "touch_pages self '$got', want '$want'"
fi
got=$(diff_self "$T/pf1.data" "$T/both.data" --event=page-faults)
want="$(touch_self "$T/pf1.data") $(touch_self "$T/both.data" --event=page-faults)"
if [ "$got" = "$want" ]; then
	ok "diff --event=page-faults of one and two events: touch_pages self $got"
else
	bad "diff --event=page-faults" "touch_pages self '$got', want '$want'"
fi
expect "diff page-faults vs cpu-clock" 64 "diff compares one event" -- \
	"$PERCH" diff "$T/pf1.data" "$T/cpu.data"
expect "diff of two events without --event" 64 "choose one with --event" -- \
	"$PERCH" diff "$T/pf1.data" "$T/both.data"
expect "diff --event=NAME one side lacks" 64 "no such event" -- \
	"$PERCH" diff --event=cs "$T/pf1.data" "$T/both.data"

# merge: the same events add up, apart per event; mixed events are refused
if "$PERCH" merge -o "$T/m1.data" "$T/pf1.data" "$T/pf1.data" 2>"$T/err"; then
	got=$(touch_self "$T/m1.data")
	want=$((2 * $(touch_self "$T/pf1.data")))
	if [ "$got" -eq "$want" ] && says "$T/m1.data" "^sampling   page-faults, 1 sample every 1 event;"; then
		ok "merge of two page-faults recordings: touch_pages self $got, the event kept"
	else
		bad "merge page-faults" "touch_pages self $got, want $want; $("$PERCH" report "$T/m1.data" | grep '^sampling')"
	fi
else
	bad "merge page-faults" "$(cat "$T/err")"
fi
if "$PERCH" merge -o "$T/m2.data" "$T/both.data" "$T/both.data" 2>"$T/err"; then
	a=$(samples <(folded "$T/m2.data" --event=cs) ';main;nap;')
	b=$(samples <(folded "$T/both.data" --event=cs) ';main;nap;')
	c=$(touch_self "$T/m2.data" --event=page-faults)
	d=$(touch_self "$T/both.data" --event=page-faults)
	if [ "$a" -eq $((2 * b)) ] && [ "$c" -eq $((2 * d)) ] && [ "$b" -gt 0 ]; then
		ok "merge of two recordings of two events: each event apart (nap $a = 2 x $b, touch_pages $c = 2 x $d)"
	else
		# (once, in a sanitizer pass: nap 0; the stacks the context switches had instead)
		bad "merge two events" "nap $a (one: $b), touch_pages $c (one: $d); context-switches stacks: $(misses <(folded "$T/both.data" --event=cs) ';main;nap;' '.'); $("$PERCH" report --format=stats "$T/both.data" | awk '$2 != 0 && /^(lost|stacks_|unwind|early|truncated|samples)/ { printf "%s %s, ", $1, $2 }')"
	fi
else
	bad "merge two events" "$(cat "$T/err")"
fi
expect "merge page-faults and cpu-clock" 64 "cannot merge different events or periods" -- \
	"$PERCH" merge -o "$T/m3.data" "$T/pf1.data" "$T/cpu.data"
expect "merge -c 1 and -c 2" 64 "(period 1), .* (period 2): cannot merge" -- \
	"$PERCH" merge -o "$T/m3.data" "$T/pf1.data" "$T/pf2.data"
it_end
