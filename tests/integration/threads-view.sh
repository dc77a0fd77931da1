#!/usr/bin/env bash
# Per-thread views (perch report --per-thread, --sort=comm,pid,tid, --pid/--tid/--comm) on three
# threads of unequal CPU shares (tests/workloads/threadshares: each names itself share-N and
# prints its tid and its own CPU clock): each thread's rows hold its share of the samples (+-3
# points of its CPU time's share of the process's), and each filter keeps exactly the samples of
# the threads it names (its total equals their per-thread rows' sum) in folded, speedscope and
# pprof (read back by go tool pprof where go is installed).
#
#   tests/integration/threads-view.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin threads-view "${1:-build}"

launch tv -- "$WL/threadshares" 2 || { it_end; exit 1; }
R=$T/tv.data
folded "$R" --per-thread >"$T/pt.folded"
folded "$R" --sort=comm,tid >"$T/ct.folded"
pid=$(truth "$T/tv.truth" pid | cut -d. -f1)
all=$(samples "$T/pt.folded")

# by_lead FOLDED N: "KEY1;...;KEYN<tab>count" per distinct lead of N frames, sorted by key
by_lead() {
	awk -v lead="$2" "$FOLD_AWK"'{ parse(); key = fr[1]; for (i = 2; i <= lead; i++) key = key ";" fr[i]; s[key] += $NF }
		END { for (k in s) print k "\t" s[k] }' "$1" | LC_ALL=C sort
}
# lead_count FOLDED N KEY: the samples under the lead KEY
lead_count() { by_lead "$1" "$2" | awk -F'\t' -v k="$3" '$1 == k { print $2 }'; }

# every line of --per-thread leads with "pid N;tid N" of the workload's process
bad_leads=$(awk -v p="pid $pid" "$FOLD_AWK"'{ parse(); if (fr[1] != p || fr[2] !~ /^tid [0-9]+$/) b += $NF } END { print b + 0 }' "$T/pt.folded")
if [ "$bad_leads" -eq 0 ] && [ "$all" -gt 0 ]; then
	ok "--per-thread: every folded stack leads with pid $pid;tid N ($all samples)"
else
	bad "--per-thread" "$bad_leads of $all samples do not lead with 'pid $pid;tid N'"
fi

# each thread's share, by its tid (--per-thread) and by its name and tid (--sort=comm,tid)
tok=1 got="" want=""
for i in 0 1 2; do
	tid=$(truth "$T/tv.truth" "tid_$i" | cut -d. -f1)
	n=$(lead_count "$T/pt.folded" 2 "pid $pid;tid $tid")
	# by comm,tid: the tid's rows under every name it had (a sample or two before it named
	# itself) sum to its row, and most are under share-N
	c=$(awk -v t="tid $tid" "$FOLD_AWK"'{ parse(); if (fr[2] == t) s += $NF } END { print s + 0 }' "$T/ct.folded")
	named=$(lead_count "$T/ct.folded" 2 "share-$i;tid $tid")
	s=$(pct "${n:-0}" "$all")
	e=$(truth_pct "$T/tv.truth" "share-$i")
	got="$got $s"
	want="$want $e"
	within "$s" "$e" 3 || tok=0
	[ "${n:-0}" = "${c:-x}" ] && [ $((${named:-0} * 100)) -ge $((${n:-0} * 95)) ] || tok=0
	eval "tid_$i=$tid n_$i=${n:-0} named_$i=${named:-0}"
done
if [ $tok -eq 1 ]; then
	ok "per-thread shares share-0..2 =$got % (threads' CPU clocks:$want, +-3); --sort=comm,tid the same counts, >= 95 % under share-N"
else
	bad "per-thread shares" "share-0..2 =$got % (threads' CPU clocks:$want, +-3); by comm,tid: $(by_lead "$T/ct.folded" 2 | tr '\t\n' '= ')"
fi

# filters keep exactly the named threads' samples
# shellcheck disable=SC2154 # tid_N, n_N, named_N set by eval above
check_filter() { # check_filter WHAT WANT OPTION...
	local what=$1 want=$2 got
	shift 2
	got=$(folded "$R" "$@" | awk '{ s += $NF } END { print s + 0 }')
	if [ "$got" -eq "$want" ]; then
		ok "$what keeps $got samples (the per-thread rows: $want)"
	else
		bad "$what" "kept $got samples, the per-thread rows hold $want"
	fi
}
# shellcheck disable=SC2154
{
	check_filter "--tid=$tid_1" "$n_1" --tid="$tid_1"
	check_filter "--tid=$tid_0,$tid_2" $((n_0 + n_2)) --tid="$tid_0,$tid_2"
	# by name: the rows --sort=comm,tid gives the names (a thread's first tick may come before
	# it named itself)
	check_filter "--comm=share-1,share-2" $((named_1 + named_2)) --comm=share-1,share-2
	check_filter "--pid=$pid" "$all" --pid="$pid"
	check_filter "--pid=$pid --comm=share-2" "$named_2" --pid="$pid" --comm=share-2
	check_filter "--comm=share-0 --select=share_work" "$(awk "$FOLD_AWK"'{ parse(); if (fr[1] == "share-0" && $0 ~ /;share_work/) s += $NF } END { print s + 0 }' "$T/ct.folded")" --comm=share-0 --select=share_work
}

# speedscope: one profile per thread, only the filtered thread's
names=$("$PERCH" report --format=speedscope --comm=share-2 "$R" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(" ".join(sorted(p["name"] for p in d["profiles"])) + " " + str(sum(sum(p["weights"]) for p in d["profiles"])))')
if [ "$names" = "share-2 ($pid/$tid_2) $named_2" ]; then
	ok "speedscope --comm=share-2: one profile, share-2 ($pid/$tid_2), $named_2 samples"
else
	bad "speedscope --comm" "profiles and weight '$names', want 'share-2 ($pid/$tid_2) $named_2'"
fi

# pprof: the filter's samples are those go tool pprof's own tag filter keeps of the whole profile
if command -v go >/dev/null; then
	export HOME=$T GOCACHE=$T/gocache GOPATH=$T/gopath GOTOOLCHAIN=local
	raw_total() { go tool pprof -raw "$@" 2>/dev/null | awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 } s && /^ *[0-9]+ +[0-9]+:/ { t += $1 } END { print t + 0 }'; }
	"$PERCH" report --format=pprof -o "$T/all.pb.gz" "$R"
	"$PERCH" report --format=pprof --comm=share-1 -o "$T/one.pb.gz" "$R"
	a=$(raw_total "$T/one.pb.gz")
	b=$(raw_total -tagfocus='thread=^share-1$' "$T/all.pb.gz")
	if [ "$a" -eq "$named_1" ] && [ "$a" -eq "$b" ]; then
		ok "pprof --comm=share-1: $a samples = go tool pprof -tagfocus thread=share-1 on the whole = $b"
	else
		bad "pprof --comm" "$a samples; go tool pprof -tagfocus on the whole: $b; share-1's rows: $named_1"
	fi
else
	ok "pprof check skipped: go not installed"
fi

# bad filters: one line, usage status
expect "--tid=abc" 64 "bad --tid 'abc'" -- "$PERCH" report --tid=abc "$R"
expect "--pid=1 (not in the recording)" 64 "no thread with --pid=1" -- "$PERCH" report --pid=1 "$R"
expect "--comm=share-9 (not in the recording)" 64 "no thread with --comm=share-9" -- "$PERCH" report --comm=share-9 --format=folded "$R"
expect "--sort=pid,pid" 64 "bad --sort" -- "$PERCH" report --sort=pid,pid "$R"
expect "--sort=function,pid" 64 "bad --sort" -- "$PERCH" report --sort=function,pid "$R"

it_end
