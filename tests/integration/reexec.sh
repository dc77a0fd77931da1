#!/usr/bin/env bash
# A process that re-execs itself: 300 images in 1.5 s, many in each drain period. Every sample
# resolves in the image it was taken in.
#
#   tests/integration/reexec.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin reexec "${1:-build}"

launch reexec -- "$WL/reexec" 300 5
rw=$(share "$T/reexec.folded" image_work)
erw=$(truth_pct "$T/reexec.truth" image_work)
rnomaps=$(rec_stat "$T/reexec.data" samples_without_mappings)
rtotal=$(samples "$T/reexec.folded")
# every sample resolved in the image it was taken in (its exec generation): none without
# mappings but the odd tick inside exec itself, when the old image is gone and the new one not
# yet mapped
if within "$rw" "$erw" 3 && [ "${rnomaps:-999999}" -le $((rtotal / 200)) ]; then
	ok "re-exec: image_work $rw % (workload's CPU clocks $erw, +-3) over 300 images; $rnomaps of $rtotal samples without mappings"
else
	bad "re-exec" "image_work $rw % (workload's CPU clocks $erw, +-3); ${rnomaps:-?} of $rtotal samples without mappings (want <= 0.5 %)"
fi

it_end
