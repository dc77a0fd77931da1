# shellcheck shell=bash
# Shared by the integration scenarios (tests/integration/*.sh, sourced, not run): the run's
# folders, pass/fail counting and the closing line; recording a workload; the readings every
# scenario makes of folded stacks, of a recording's counts (perch report --format=stats) and of
# the "truth" lines the workloads print (tests/workloads/burn.h).
#
#   . "$(dirname "$0")/../lib.sh"
#   it_begin NAME BUILD_DIR     sets BUILD PERCH WL TESTS T (a temporary folder, removed at exit)
#   ...ok / bad...
#   it_end                      prints "NAME: N passed, N failed"; fails when any did

# shellcheck disable=SC2034 # read by the scenarios
TESTS=$(realpath "$(dirname "${BASH_SOURCE[0]}")")

it_begin() {
	IT_NAME=$1
	BUILD=${2:-build}
	PERCH=$(realpath "$BUILD/perch")
	WL=$(realpath "$BUILD/workloads")
	T=$(mktemp -d "/tmp/perch-$IT_NAME.XXXXXX")
	# PERCH_KEEP=1 keeps the scenario's files (recordings, folded stacks) for a look afterwards
	if [ -n "${PERCH_KEEP:-}" ]; then
		echo "$IT_NAME: files kept in $T"
	else
		trap 'rm -rf "$T"' EXIT
	fi
	pass=0
	fail=0
	if [ "$(id -u)" -ne 0 ]; then
		echo "$IT_NAME: needs root (CAP_BPF, CAP_PERFMON); 0 passed, 1 failed"
		exit 1
	fi
}

it_end() {
	echo "$IT_NAME: $pass passed, $fail failed"
	[ "$fail" -eq 0 ]
}

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }

# ---- running perch ------------------------------------------------------------------------------

# perch_record NAME [RECORD_OPTION...] -- CMD...: perch record -q CMD into $T/NAME.data; CMD's
# stdout (its truth lines) goes to $T/NAME.truth, perch's stderr to $T/NAME.err. A failed record is
# one failure, named NAME. Returns perch's exit status.
perch_record() {
	local name=$1 rc opts=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	"$PERCH" record -q "${opts[@]}" -o "$T/$name.data" -- "$@" >"$T/$name.truth" 2>"$T/$name.err"
	rc=$?
	[ $rc -eq 0 ] || bad "$name" "perch record exited $rc: $(cat "$T/$name.err")"
	return $rc
}

# launch NAME [RECORD_OPTION...] -- CMD...: perch_record, then the folded stacks in $T/NAME.folded
launch() {
	local rc
	perch_record "$@"
	rc=$?
	folded "$T/$1.data" >"$T/$1.folded"
	return $rc
}

# jit_launch NAME WORKLOAD [MODE]: launch WORKLOAD (tests/workloads/jit or jit-nofp) for 2 s, MODE
# telling it how to write its perf map; the map is removed before the stacks are folded, so the
# JIT frames are named from the recording alone
jit_launch() {
	local pid
	perch_record "$1" -- "$WL/$2" 2 ${3:+"$3"}
	pid=$(rec_stat "$T/$1.data" pids)
	rm -f "/tmp/perf-$pid.map"
	folded "$T/$1.data" >"$T/$1.folded"
}

# folded REC [REPORT_OPTION...]: the recording's folded stacks
folded() { "$PERCH" report --format=folded "${@:2}" "$1"; }

# expect NAME STATUS PATTERN -- CMD...: CMD exits STATUS with one line on stderr that has PATTERN
# (CMD's stdout stays in $T/out, its stderr in $T/err)
expect() {
	local name=$1 want=$2 pat=$3 rc lines
	shift 4
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	lines=$(wc -l <"$T/err")
	if [ $rc -eq "$want" ] && grep -q "$pat" "$T/err" && [ "$lines" -eq 1 ]; then
		ok "$name: exit $rc, '$(cat "$T/err")'"
	else
		bad "$name" "exit $rc (want $want), $lines stderr lines: $(head -3 "$T/err")"
	fi
}

# ---- a recording's numbers ----------------------------------------------------------------------

# rec_stat REC KEY: one number of a recording, from `perch report --format=stats` (format/keys.h
# names the keys; sampled, processes and threads are the counts the text header derives); empty
# when the recording has no such key (duration_ns and exit_status of one that did not finish).
# (Not called stat: that would shadow stat(1).)
rec_stat() { "$PERCH" report --format=stats "$1" | awk -v k="$2" '$1 == k { print $2; f = 1 } END { if (!f) print "" }'; }
# freq REC: the sampling frequency perch recorded at (Hz)
freq() { rec_stat "$1" frequency; }
# seconds REC: the recording's duration in seconds, to the ms as the text report gives it
seconds() {
	local ns
	ns=$(rec_stat "$1" duration_ns)
	[ -n "$ns" ] && awk -v n="$ns" 'BEGIN { printf "%.3f", n / 1e9 }'
}
# says REC [GREP_OPTION...] PATTERN: the text report has a line that matches PATTERN, for the checks
# of what it tells the user in words
says() { "$PERCH" report "$1" 2>/dev/null | grep -q "${@:2}"; }
# call_tree REC [REPORT_OPTION...]: the text report's call tree, for the checks that count its
# nodes (the one part of the human report the tests read: its shape is what they test)
# (up to the blank line before the sections that follow it)
call_tree() { "$PERCH" report "${@:2}" "$1" | awk '/^Call tree/ { on = 1 } on && /^$/ { exit } on'; }
# csv_all REC NAME COLUMN: the all-threads row's COLUMN (3 calls, 4 total_s, 6 mean_s) of region
# NAME, from perch report --format=csv
csv_all() { "$PERCH" report --format=csv "$1" | awk -F, -v n="$2" -v c="$3" '$1 == n && $2 == "" { print $c }'; }

# ---- folded stacks: "COMM;FRAME;...;FRAME COUNT", one line per distinct stack -------------------

# The parse every reading below shares, for awk: parse() sets n (the line's samples), stack (the
# line without its count) and fr[1..k] (fr[1] the thread's name, fr[k] the leaf).
# shellcheck disable=SC2016 # awk's $NF and $0
FOLD_AWK='function parse() { n = $NF; stack = $0; sub(/ [0-9]+$/, "", stack); k = split(stack, fr, ";") }'

# share FOLDED FUNC: percent of samples whose stack contains FUNC (total view, from folded stacks)
share() {
	awk -v f="$2" "$FOLD_AWK"'{ parse(); all += n; for (i = 1; i <= k; i++) if (fr[i] == f) { hit += n; break } }
		END { printf "%.2f", all ? 100 * hit / all : 0 }' "$1"
}

# rooted FOLDED NAME: percent of samples whose folded line starts with the thread name NAME
rooted() {
	awk -v c="$2" "$FOLD_AWK"'{ parse(); all += n; if (fr[1] == c) hit += n }
		END { printf "%.2f", all ? 100 * hit / all : 0 }' "$1"
}

# top_root FOLDED: "PCT N ROOT SECOND", tab-separated (frames have spaces): of the N samples
# (those that start in the dynamic loader's entry left out: they run before the program's own),
# the percent PCT under the most common outermost frame ROOT (the frame after the thread name);
# SECOND is the next most common
top_root() {
	awk "$FOLD_AWK"'{ parse() } fr[2] !~ /^ld-linux/ { all += n; c[fr[2]] += n }
		END { for (r in c) if (c[r] > c[top] || top == "") top = r
		      for (r in c) if (r != top && (c[r] > c[sec] || sec == "")) sec = r
		      printf "%.2f\t%d\t%s\t%s\n", all ? 100 * c[top] / all : 0, all, top == "" ? "-" : top, sec == "" ? "-" : sec }' "$1"
}

# The regular expressions below (awk EREs) reach awk through the environment, where a backslash
# stays a backslash (awk -v would take it as an escape).

# samples FOLDED [REGEX [NOT_REGEX]]: how many samples there are; with REGEX, how many have a stack
# (the line without its count) that matches it, and with NOT_REGEX too, that does not match that
samples() {
	RE=${2-} NO=${3-} awk "$FOLD_AWK"'{ parse() } (ENVIRON["RE"] == "" || stack ~ ENVIRON["RE"]) &&
		(ENVIRON["NO"] == "" || stack !~ ENVIRON["NO"]) { s += n } END { print s + 0 }' "$1"
}

# stack_pct FOLDED REGEX: percent of samples whose stack matches REGEX
stack_pct() {
	RE=$2 awk "$FOLD_AWK"'{ parse(); all += n; if (stack ~ ENVIRON["RE"]) hit += n }
		END { printf "%.2f", all ? 100 * hit / all : 0 }' "$1"
}

# pct_within FOLDED REGEX WITHIN: "P N": of the N samples whose stack matches WITHIN, the percent P
# whose stack matches REGEX as well
pct_within() {
	RE=$2 IN=$3 awk "$FOLD_AWK"'{ parse() } stack ~ ENVIRON["IN"] { all += n; if (stack ~ ENVIRON["RE"]) hit += n }
		END { printf "%.2f %d", all ? 100 * hit / all : 0, all }' "$1"
}

# misses FOLDED REGEX WITHIN: the three heaviest stacks that match WITHIN but not REGEX, with their
# sample counts and the recording's unwinder counters, for a failed check's message
misses() {
	RE=$2 IN=$3 awk "$FOLD_AWK"'{ parse() } stack ~ ENVIRON["IN"] && stack !~ ENVIRON["RE"] { c[stack] += n }
		END { for (s in c) print c[s], s }' "$1" | sort -rn | head -3 | tr '\n' '|'
}

# deeper FOLDED N: how many samples are on lines of more than N frames (the thread's name counted)
deeper() { awk -v d="$2" "$FOLD_AWK"'{ parse(); if (k > d) s += n } END { print s + 0 }' "$1"; }

# leaf_named FOLDED: percent of samples whose leaf (the innermost user frame: kernel frames, which
# end in _[k], skipped) has a function name (not MODULE+0xOFF, not [anon] or another [...])
leaf_named() {
	awk "$FOLD_AWK"'{ parse(); all += n; leaf = ""; for (i = 2; i <= k; i++) if (fr[i] !~ /_\[k\]$/) leaf = fr[i]
		if (leaf != "" && leaf !~ /\+0x/ && leaf !~ /^\[/) hit += n }
		END { printf "%.2f", all ? 100 * hit / all : 0 }' "$1"
}

# anon FOLDED: percent of samples with an unnamed frame in anonymous memory ([anon]+0x...)
anon() { stack_pct "$1" '\[anon\]\+0x'; }

# within ACTUAL EXPECTED TOLERANCE
# binom_tol PCT N: the tolerance, in points, for a share PCT of N samples taken at random moments (the
# JIT workload calls its functions in random order): four binomial standard deviations, plus a
# point for what the workload's own clock reads add, and never under 3
binom_tol() {
	awk -v p="$1" -v n="$2" 'BEGIN { p /= 100; t = n > 0 ? 400 * sqrt(p * (1 - p) / n) + 1 : 100
		printf "%.1f", t < 3 ? 3 : t }'
}

within() { awk -v a="$1" -v e="$2" -v t="$3" 'BEGIN { d = a - e; if (d < 0) d = -d; exit !(d <= t) }'; }

# ---- code no symbol names: perch's MODULE+0xSTART? names from .eh_frame FDEs --------------------

# fde_table ELF...: every .eh_frame FDE of each file as binutils' readelf reads it (not perch's
# reader), one line "BASE LO HI NAME": LO, HI the FDE's ELF addresses (decimal), NAME what perch
# calls code it covers that no symbol names, BASE+0xSTART? (START the file offset of LO)
fde_table() {
	local f
	for f in "$@"; do
		{ readelf -lW "$f" && readelf --debug-dump=frames "$f"; } 2>/dev/null | awk -v b="${f##*/}" '
		function hex(s,  i, v) { s = tolower(s); sub(/^0x/, "", s); v = 0
			for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
		$1 == "LOAD" { off[++ns] = hex($2); va[ns] = hex($3); fs[ns] = hex($5) }
		$4 == "FDE" && $6 ~ /^pc=/ { split(substr($6, 4), r, /\.\./); lo = hex(r[1]); hi = hex(r[2])
			for (i = 1; i <= ns; i++) if (lo >= va[i] && lo < va[i] + fs[i]) {
				printf "%s %d %d %s+0x%x?\n", b, lo, hi, b, lo - va[i] + off[i]; break } }'
	done | sort -k1,1 -k2,2n -k3,3n
}

# name_table ELF...: every function symbol of each file (and of its /usr/lib/debug/.build-id file)
# as binutils' readelf spells it, one line "BASE NAME PERCH": PERCH the name `perch symbolize` gives
# its address (every alias, versioned or not, of one address gets perch's one name): so a
# reference tool's names (perf's, readelf's) compare with perch's without a naming rule copied here
name_table() {
	local f id dbg
	for f in "$@"; do
		id=$(readelf -nW "$f" 2>/dev/null | awk '/Build ID:/ { print $NF; exit }')
		dbg=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
		[ -n "$id" ] && [ -f "$dbg" ] || dbg=
		readelf -sW "$f" $dbg 2>/dev/null | awk '($4 == "FUNC" || $4 == "IFUNC") && $7 != "UND" && $8 != "" { print $2, $8 }' |
			sort -u >"$T/names.$$"
		# the function the address is in: the outermost of its inline chain (-i; the first line
		# of plain symbolize is the innermost, _int_malloc's first instruction being
		# checked_request2size's), each chain after its address (-a)
		awk '{ print $1 }' "$T/names.$$" | sort -u | "$PERCH" symbolize -i -a -e "$f" |
			awk '/^0x/ { if (a != "") print a, fn; a = $0; sub(/^0x0*/, "", a); n = 0; next }
				{ if (++n % 2 == 1) fn = $0 } END { if (a != "") print a, fn }' >"$T/perchnames.$$"
		awk -v b="${f##*/}" 'NR == FNR { p[$1] = substr($0, length($1) + 2); next }
			{ a = $1; sub(/^0*/, "", a); print b, $2, p[a] }' "$T/perchnames.$$" "$T/names.$$"
	done
	rm -f "$T/names.$$" "$T/perchnames.$$"
}

# For awk, with a fde_table file as its first input: fde_load() (on that file's lines) keeps it,
# fde_of(BASE, ADDR) gives the name of the FDE covering ADDR in module BASE ("" for none): of the
# FDEs starting at or below ADDR the last (the shortest of those sharing a start, as perch keeps),
# ending where the next one starts at the latest.
# shellcheck disable=SC2016 # awk's $1..$4
FDE_AWK='function fde_load() { if (FN_[$1] == "" || $2 != FL_[$1, FN_[$1]]) { i_ = ++FN_[$1]
		FL_[$1, i_] = $2; FH_[$1, i_] = $3; FM_[$1, i_] = $4; if (i_ > 1 && FH_[$1, i_ - 1] > $2) FH_[$1, i_ - 1] = $2 } }
	function fde_of(b, a,  lo, hi, mid) { lo = 1; hi = FN_[b] + 0
		while (lo <= hi) { mid = int((lo + hi) / 2); if (FL_[b, mid] <= a) lo = mid + 1; else hi = mid - 1 }
		return hi >= 1 && a < FH_[b, hi] ? FM_[b, hi] : "" }'

# timeline_counts DUMP: of a tests/timeline_dump listing, "DIFF EVENTS ORDER": the keys whose timed
# ticks differ from their sample count, the timed ticks, and those out of time order
timeline_counts() {
	awk '$1 == "sample" { want[$2] = $5 }
		$1 == "event" { n++; got[$3]++; if ($2 < last) order++; last = $2 }
		END { for (k in want) if (want[k] != got[k] + 0) diff++
		      for (k in got) if (!(k in want)) diff++
		      print diff + 0, n + 0, order + 0 }' "$1"
}

# ---- what the workload measured -----------------------------------------------------------------

# truth FILE NAME: the sum of NAME's values (many processes may print one each)
truth() {
	awk -v k="$2" '$1 == "truth" && $2 == k { s += $3; n++ } END { if (n) printf "%.9f", s; else print "?" }' "$1"
}
# pct PART WHOLE: PART as a percentage of WHOLE
pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0 && a != "?") printf "%.2f", 100 * a / b; else print "?" }'; }
# truth_pct FILE NAME [TOTAL_NAME]: NAME's CPU time as a percentage of the run's (default "cpu")
truth_pct() { pct "$(truth "$1" "$2")" "$(truth "$1" "${3:-cpu}")"; }
# min_samples CPU_S HZ: the fewest samples a thread busy for CPU_S seconds may give at HZ: a tick
# each 1/HZ of CPU time, less a fifth for start-up and the ticks that straddle the run's ends
min_samples() { awk -v c="$1" -v f="$2" 'BEGIN { printf "%d", c * f * 0.8 }'; }

# check_shares NAME FOLDED TRUTH: the shares workload's work_a/b/c take the share of samples its
# CPU clocks give (+-3 points), and main is on (nearly) every stack: two checks
check_shares() {
	local name=$1 folded=$2 tf=$3 a b c m ea eb ec
	a=$(share "$folded" work_a)
	b=$(share "$folded" work_b)
	c=$(share "$folded" work_c)
	m=$(share "$folded" main)
	ea=$(truth_pct "$tf" work_a)
	eb=$(truth_pct "$tf" work_b)
	ec=$(truth_pct "$tf" work_c)
	if within "$a" "$ea" 3 && within "$b" "$eb" 3 && within "$c" "$ec" 3; then
		ok "$name: work_a/b/c = $a/$b/$c % (workload's CPU clocks: $ea/$eb/$ec, +-3)"
	else
		bad "$name" "work_a/b/c = $a/$b/$c % (workload's CPU clocks: $ea/$eb/$ec, +-3)"
	fi
	if within "$m" 100 2; then
		ok "$name: main on $m % of stacks"
	else
		bad "$name" "main on only $m % of stacks"
	fi
}
