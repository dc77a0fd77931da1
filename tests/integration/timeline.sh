#!/usr/bin/env bash
# perch record --timeline: every tick's time and key, every region begin, end and mark per thread.
# The truth is the recording's own other half and the workload's: each key has exactly as many
# timed ticks as it has counted samples (both come from the same ticks), the times are in order
# and inside the recording's windows; per thread the spans nest, each region has as many ends as
# the region table has calls (marks: as many marks) and their durations add up to the table's
# time; --format=otlp's timestamps between the clock reads before and after perch. With a small
# --max-size what is dropped is counted, every tick accounted for, and the
# file's timeline blocks hold no more than the cap (walked block by block).
# The spans equal the table only when the program answered perch's exit handshake: its final table
# and its last spans are read together while it waits. Without it (perch held up for the
# runtime's 2 s on a loaded machine: region_processes_no_handshake) the table is perch's last
# drain's read, and the ends between that drain's window end and that read are counted in it but
# were left in the ring for the next read, which never came: then at most the table's calls and
# time (with perch stopped over the program's exit: 96 step spans for 97 calls).
#
#   tests/integration/timeline.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin timeline "${1:-build}"
DUMP=$(realpath "$BUILD/tests/timeline_dump")

# dump NAME: the recording's time axis as lines (tests/timeline_dump.c) in $T/NAME.tl
dump() { "$DUMP" "$T/$1.data" >"$T/$1.tl"; }

# check_ticks NAME: the ticks against the counts, key by key, and their times
check_ticks() {
	local name=$1 sampled lost unkeyed res
	sampled=$(rec_stat "$T/$name.data" sampled)
	lost=$(rec_stat "$T/$name.data" timeline_ticks_lost)
	unkeyed=$(rec_stat "$T/$name.data" timeline_ticks_unkeyed)
	# keys whose event count differs from their count; events; out of order; outside the windows
	res=$(awk '$1 == "window" { if (!ws) ws = $2; we = $3 }
		$1 == "sample" { want[$2] = $5 }
		$1 == "event" { n++; got[$3]++; if ($2 < last) order++; last = $2; t[n] = $2 }
		END { for (k in want) if (want[k] != got[k] + 0) diff++
		      for (k in got) if (!(k in want)) diff++
		      for (i = 1; i <= n; i++) if (t[i] < ws || t[i] >= we) out++
		      print diff + 0, n + 0, order + 0, out + 0 }' "$T/$name.tl")
	read -r diff events order out <<<"$res"
	if [ "$diff" -eq 0 ] && [ "$events" -eq "$sampled" ] && [ "$lost" -eq 0 ] && [ "$unkeyed" -eq 0 ]; then
		ok "$name: $events timed ticks, each key's as many as its count ($sampled samples)"
	else
		bad "$name ticks" "$events timed ticks for $sampled samples ($diff keys differ, $lost lost, $unkeyed without a key)"
	fi
	if [ "$order" -eq 0 ] && [ "$out" -eq 0 ] && [ "$events" -gt 0 ]; then
		ok "$name: tick times in order, inside the recording's windows"
	else
		bad "$name tick times" "$order out of order, $out outside the windows"
	fi
}

# span_table NAME: per region name "NAME ENDS MARKS SECONDS": ends (marks) and the summed
# durations of its begin-end pairs, from the spans of every thread; nesting errors (an end that is
# not the innermost open begin's, time going back on a thread, a span outside the windows) are
# counted under the name "!errors"
span_table() {
	awk '$1 == "window" { if (!ws) ws = $2; we = $3 }
		$1 != "span" { next }
		{ th = $2 "/" $3; tm = $4; nm = $7; for (i = 8; i <= NF; i++) nm = nm " " $i
		  if (tm < last[th] || tm < ws || tm >= we) err++
		  last[th] = tm; names[nm] = 1 }
		$5 == "begin" { d = ++depth[th]; open[th, d] = nm; start[th, d] = tm }
		$5 == "end" { d = depth[th]
			if (d < 1 || open[th, d] != nm) { err++; next }
			ends[nm]++; secs[nm] += (tm - start[th, d]) / 1e9; depth[th] = d - 1 }
		$5 == "mark" { marks[nm]++ }
		END { for (nm in names) printf "%s\t%d\t%d\t%.9f\n", nm, ends[nm], marks[nm], secs[nm]
		      printf "!errors\t%d\t0\t0\n", err }' "$T/$1.tl"
}

# handshake NAME: "exact" when the program answered perch's exit handshake, else "atmost"
handshake() { [ "$(rec_stat "$T/$1.data" region_processes_no_handshake)" = 0 ] && echo exact || echo atmost; }

# check_spans NAME COLUMN: the spans against the region table (perch report --format=csv):
# per region ends (marks for a mark) = calls, and durations = calls * mean (COLUMN mean: every
# activation, nested ones too) or total (COLUMN total: no region of the workload recurses),
# within 0.1 % and a microsecond a call (the runtime's ticks converted at two moments); at most
# those without the exit handshake (see the top)
check_spans() {
	local name=$1 col=$2 errs res hs
	hs=$(handshake "$name")
	span_table "$name" >"$T/$name.spans"
	"$PERCH" report --format=csv "$T/$name.data" >"$T/$name.csv"
	errs=$(awk -F'\t' '$1 == "!errors" { print $2 }' "$T/$name.spans")
	if [ "$errs" -eq 0 ] && [ "$(wc -l <"$T/$name.spans")" -gt 1 ]; then
		ok "$name: spans nest per thread, in time order, inside the recording's windows"
	else
		bad "$name nesting" "$errs spans out of place ($(wc -l <"$T/$name.spans") names)"
	fi
	res=$(awk -F'\t' -v col="$col" -v hs="$hs" 'NR == FNR { if ($1 != "!errors") { e[$1] = $2; m[$1] = $3; s[$1] = $4 }; next }
		FNR > 1 { split($0, f, ","); if (f[2] != "") next
			nm = f[1]; calls = f[3]; t = col == "mean" ? f[6] * calls : f[4]
			n = (nm in m) && m[nm] > 0 ? m[nm] : e[nm] + 0
			if (hs == "exact" ? n != calls : n > calls) { bad = bad " " nm ":" n "/" calls; next }
			if (m[nm] > 0) next
			d = s[nm] - t; if (hs != "exact" && d < 0) d = 0; if (d < 0) d = -d
			if (d > t * 0.001 + calls * 1e-6) bad = bad " " nm ":" s[nm] "s/" t "s"; checked++ }
		END { print checked + 0, (bad == "" ? "-" : bad) }' "$T/$name.spans" FS=, "$T/$name.csv")
	read -r checked diffs <<<"$res"
	if [ "$diffs" = - ] && [ "$checked" -gt 0 ]; then
		ok "$name: spans = the region table's calls, their durations its time ($checked regions; $hs: exit handshake $([ "$hs" = exact ] || echo "not ")answered)"
	else
		bad "$name spans" "differ from the region table (region:spans/calls or span s/table s):$diffs ($hs; region_spans_lost $(rec_stat "$T/$name.data" region_spans_lost))"
	fi
}

t_before=$(date +%s%N)
perch_record share --timeline -- "$WL/regions" share 1.5
t_after=$(date +%s%N)
dump share
version=$(awk '$1 == "version" { print $2 }' "$T/share.tl")
if [ "${version:-0}" -lt 4 ]; then
	echo "timeline: skipped: the recording is version ${version:-?}, which keeps no timeline"
	it_end
	exit
fi
check_ticks share
check_spans share total

# --format=otlp: each tick a timestamp, Unix time, between the clock read before perch started and
# the one after it ended (the recording's META realtime_offset_ns), inside each profile's range
"$PERCH" report --format=otlp -o "$T/share.otlp" "$T/share.data"
read -r timed ticks outside uneven first last < <(python3 "$TESTS/otlp_decode.py" "$T/share.otlp" times samples)
sampled=$(rec_stat "$T/share.data" sampled)
if [ "$timed" = "$sampled" ] && [ "$ticks" = "$sampled" ] && [ "$outside" = 0 ] && [ "$uneven" = 0 ] &&
	[ "$first" -ge "$t_before" ] && [ "$last" -le "$t_after" ]; then
	ok "otlp: $timed tick timestamps from $(((first - t_before) / 1000000)) ms after the clock read before perch to $(((t_after - last) / 1000000)) ms before the one after"
else
	bad "otlp timestamps" "timed $timed, ticks $ticks of $sampled, $outside outside the range, $uneven uneven, first $first last $last, clock $t_before-$t_after"
fi

# two threads, nesting, a folded recursion, a mismatched end, marks, a region left open at exit
perch_record shape --timeline -- "$WL/regions" shape
dump shape
check_spans shape mean

# attached to a running program (libperch.so): spans from when perch arrived to the recording's
# end, nesting (the batch open at attach has no begin in them, nor its end); no more ends than
# the table has calls
"$WL/regions-so" loop 3 >"$T/attached.truth" &
rpid=$!
sleep 0.5
"$PERCH" record -q --timeline -p "$rpid" -d 1 -o "$T/attached.data" 2>"$T/attached.err" ||
	bad "attached" "perch failed: $(cat "$T/attached.err")"
wait "$rpid"
dump attached
span_table attached >"$T/attached.spans"
errs=$(awk -F'\t' '$1 == "!errors" { print $2 }' "$T/attached.spans")
tends=$(awk -F'\t' '$1 == "tick" { print $2 }' "$T/attached.spans")
tcalls=$(csv_all "$T/attached.data" tick 3)
if [ "$errs" -eq 0 ] && [ "${tends:-0}" -gt 0 ] && [ "$tends" -le "${tcalls:-0}" ]; then
	ok "attached: spans nest inside the recording's windows; $tends tick ends for $tcalls calls"
else
	bad "attached" "$errs spans out of place; ${tends:-no} tick ends for ${tcalls:-?} calls"
fi

# the cap on the timeline's bytes: 1 KiB, less than the ticks and steps of any run of the workload
# take (a step's six spans alone); the same run without a timeline says what the profile takes
perch_record plain -- "$WL/regions" share 1.5
plain=$(stat -c %s "$T/plain.data")
cap=1024
perch_record capped --timeline --max-size=1K -- "$WL/regions" share 1.5
dump capped
size=$(stat -c %s "$T/capped.data")
sampled=$(rec_stat "$T/capped.data" sampled)
edropped=$(rec_stat "$T/capped.data" timeline_events_dropped)
sdropped=$(rec_stat "$T/capped.data" timeline_spans_dropped)
slost=$(rec_stat "$T/capped.data" region_spans_lost)
events=$(awk '$1 == "event" { n++ } END { print n + 0 }' "$T/capped.tl")
spans=$(awk '$1 == "span" { n++ } END { print n + 0 }' "$T/capped.tl")
steps=$(csv_all "$T/capped.data" step 3)
# every span kept, dropped past the cap or lost in the ring; all six of each step the table
# counts, or no more without the exit handshake (see the top)
sall=$((spans + sdropped + slost))
hs=$(handshake capped)
if [ "$edropped" -gt 0 ] && [ "$sdropped" -gt 0 ] && [ $((events + edropped)) -eq "$sampled" ] &&
	{ [ "$sall" -eq $((steps * 6)) ] || { [ "$hs" = atmost ] && [ "$sall" -le $((steps * 6)) ]; }; }; then
	ok "capped: $edropped sample times and $sdropped spans dropped past --max-size, every one counted ($events + $edropped = $sampled samples; $spans + $sdropped + $slost lost = $sall for 6 x $steps steps, $hs)"
else
	bad "capped" "$events kept + $edropped dropped for $sampled samples; $spans + $sdropped + $slost lost spans for $steps steps ($hs)"
fi
# what the timeline took, block by block (an independent walk of the file: a 16-byte header, then
# blocks "type, length, CRC, reserved" whose payload starts with a u32 entry count): the entries
# of the TIMELINE, SPANS and GPU blocks are the bytes --max-size caps; the rest is the profile
read -r tbytes tblocks rest < <(python3 - "$T/capped.data" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
off, tl, nb, rest = 16, 0, 0, 16
while off + 16 <= len(d):
    typ, plen = struct.unpack_from("<II", d, off)
    if typ in (13, 14, 16):
        tl += plen - 4
        nb += 1
    else:
        rest += 16 + plen
    off += 16 + plen
print(tl, nb, rest if off == len(d) else -1)
PY
)
if [ "$tbytes" -le "$cap" ] && [ "$rest" -gt 0 ] && [ $((rest + tbytes + tblocks * 20)) -eq "$size" ] &&
	says "$T/capped.data" "dropped past --max-size"; then
	ok "capped: $tbytes bytes of timeline entries in $tblocks blocks with a cap of $cap; the profile $rest bytes ($plain without --timeline), and the report says what was dropped"
else
	bad "capped size" "$tbytes bytes of timeline entries in ${tblocks:-?} blocks with a cap of $cap (file $size, the rest ${rest:-?}), or the report does not say"
fi

it_end
