# Shared by the integration scripts (sourced, not run): the run's folders, pass/fail counting and
# the closing line, and the readings every scenario makes of folded stacks and of the "truth"
# lines the workloads print (tests/workloads/burn.h).
#
#   . "$(dirname "$0")/lib.sh"
#   it_begin NAME BUILD_DIR     sets BUILD PERCH WL T (a temporary folder, removed at exit)
#   ...ok / bad...
#   it_end                      prints "NAME: N passed, N failed"; fails when any did

it_begin() {
	IT_NAME=$1
	BUILD=${2:-build}
	PERCH=$(realpath "$BUILD/perch")
	WL=$(realpath "$BUILD/workloads")
	T=$(mktemp -d "/tmp/perch-$IT_NAME.XXXXXX")
	trap 'rm -rf "$T"' EXIT
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

# share FOLDED FUNC: percent of samples whose stack contains FUNC (total view, from folded stacks)
share() {
	awk -v f="$2" '{ n = $NF; all += n; st = $0; sub(/ [0-9]+$/, "", st); k = split(st, fr, ";");
		for (i = 1; i <= k; i++) if (fr[i] == f) { hit += n; break } }
		END { printf "%.2f", all ? 100 * hit / all : 0 }' "$1"
}

# rooted FOLDED NAME: percent of samples whose folded line starts with the thread name NAME
rooted() {
	awk -v c="$2" '{ n = $NF; all += n; split($0, fr, ";"); if (fr[1] == c) hit += n }
		END { printf "%.2f", all ? 100 * hit / all : 0 }' "$1"
}

# within ACTUAL EXPECTED TOLERANCE
within() { awk -v a="$1" -v e="$2" -v t="$3" 'BEGIN { d = a - e; if (d < 0) d = -d; exit !(d <= t) }'; }

# truth FILE NAME: the sum of NAME's values (many processes may print one each)
truth() {
	awk -v k="$2" '$1 == "truth" && $2 == k { s += $3; n++ } END { if (n) printf "%.9f", s; else print "?" }' "$1"
}
# pct PART WHOLE: PART as a percentage of WHOLE
pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0 && a != "?") printf "%.2f", 100 * a / b; else print "?" }'; }
# truth_pct FILE NAME [TOTAL_NAME]: NAME's CPU time as a percentage of the run's (default "cpu")
truth_pct() { pct "$(truth "$1" "$2")" "$(truth "$1" "${3:-cpu}")"; }
# freq REC: the sampling frequency perch recorded at (Hz)
freq() { "$PERCH" report "$1" | sed -n 's/^sampling .* at \([0-9]*\) Hz.*/\1/p'; }
# min_samples CPU_S HZ: the fewest samples a thread busy for CPU_S seconds may give at HZ: a tick
# each 1/HZ of CPU time, less a fifth for start-up and the ticks that straddle the run's ends
min_samples() { awk -v c="$1" -v f="$2" 'BEGIN { printf "%d", c * f * 0.8 }'; }

# stat FILE KEY: one number of a recording, from `perch report --format=stats` (format/keys.h
# names the keys; sampled, processes and threads are the counts the text header derives)
stat() { "$PERCH" report --format=stats "$1" | awk -v k="$2" '$1 == k { print $2; f = 1 } END { if (!f) print "" }'; }
