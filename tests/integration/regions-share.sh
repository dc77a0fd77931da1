#!/usr/bin/env bash
# Samples tagged with their regions: "solve" burns 7 ms and "io" 3 ms of CPU in each step
# (tests/workloads/regions.c share); the samples in each must say so, and report --region keeps
# exactly a region's samples.
#
#   tests/integration/regions-share.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin regions-share "${1:-build}"

launch rshare -- "$WL/regions" share 3
"$PERCH" report --format=csv "$T/rshare.data" >"$T/rshare.csv"
sv=$(share "$T/rshare.folded" region:solve)
io=$(share "$T/rshare.folded" region:io)
st=$(share "$T/rshare.folded" region:step)
# the exact share of wall time, from the region table (TSC timings, not samples)
tsv=$(awk -F, '$1 == "solve" && $2 == "" { s = $4 } $1 == "step" && $2 == "" { t = $4 } END { printf "%.2f", t ? 100 * s / t : 0 }' "$T/rshare.csv")
esv=$(truth_pct "$T/rshare.truth" solve)
eio=$(truth_pct "$T/rshare.truth" io)
if within "$sv" "$esv" 3 && within "$io" "$eio" 3 && within "$st" 100 1 && within "$sv" "$tsv" 3; then
	ok "regions: samples in solve/io = $sv/$io % (workload's CPU clocks $esv/$eio, +-3; timed share of solve $tsv %), step on $st %"
else
	bad "regions share" "solve/io = $sv/$io % (workload's CPU clocks $esv/$eio, +-3; timed share of solve $tsv %), step $st %"
fi
folded "$T/rshare.data" --region=io >"$T/rio.folded"
if [ -s "$T/rio.folded" ] && ! grep -qv 'region:io' "$T/rio.folded" &&
	within "$(samples "$T/rio.folded")" "$(samples "$T/rshare.folded" 'region:io')" 0; then
	ok "regions: report --region=io keeps exactly the samples inside io"
else
	bad "regions filter" "--region=io kept other samples or lost some"
fi

it_end
