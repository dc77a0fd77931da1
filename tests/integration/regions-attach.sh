#!/usr/bin/env bash
# Attaching to a program linked with libperch.so, in a 200 ms "batch" region when perch arrives:
# the batches and ticks timed while perch was there, the batch open at attach reported untimed.
#
#   tests/integration/regions-attach.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin regions-attach "${1:-build}"

"$WL/regions-so" loop 4 >"$T/rattach.truth" &
rpid=$!
sleep 0.5
"$PERCH" record -q -p "$rpid" -d 1.5 -o "$T/rattach.data" 2>"$T/err" || bad "regions attach" "perch failed: $(cat "$T/err")"
wait "$rpid"
bc_=$(csv_all "$T/rattach.data" batch 3)
bmean=$(csv_all "$T/rattach.data" batch 6)
tc_=$(csv_all "$T/rattach.data" tick 3)
# ticks while perch was attached: at least half of what the workload's own tick rate gives over
# the recording's duration
rdur=$(seconds "$T/rattach.data")
mint=$(awk -v r="$(truth "$T/rattach.truth" ticks_per_s)" -v d="${rdur:-0}" 'BEGIN { printf "%d", r * d / 2 }')
untimed=0
says "$T/rattach.data" -i "already open when perch attached" && untimed=1
# the batches' mean: between the workload's shortest and longest (200 ms, longer when preempted
# in its last tick), 1 ms for the two clocks
lo=$(truth "$T/rattach.truth" batch_min)
hi=$(truth "$T/rattach.truth" batch_max)
minb=$(awk -v d="${rdur:-0}" -v h="${hi:-1}" 'BEGIN { printf "%d", d / h - 2 }')
if [ "${bc_:-0}" -ge "$minb" ] && [ "$minb" -gt 0 ] && awk -v m="${bmean:-0}" -v l="${lo:-1}" -v h="${hi:-0}" 'BEGIN { exit !(m >= l - 0.001 && m <= h + 0.001) }' &&
	[ "${tc_:-0}" -ge "${mint:-1}" ] && [ "${mint:-0}" -gt 0 ] && [ $untimed -eq 1 ]; then
	ok "regions attach (libperch.so): $bc_ batches (>= $minb), mean ${bmean} s (workload's batches $lo to $hi), $tc_ ticks (>= $mint from its tick rate); the batch open at attach is reported untimed"
else
	bad "regions attach" "batches ${bc_:-?} mean ${bmean:-?} s (workload's ${lo:-?} to ${hi:-?}), ticks ${tc_:-?} (want >= ${mint:-?}); untimed note: $untimed"
fi

it_end
