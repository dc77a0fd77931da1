#!/usr/bin/env bash
# 1000 threads filling both CPUs: perch competes with its target for time, and still names their
# samples and cuts no stack into a runaway.
#
#   tests/integration/manythreads.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin manythreads "${1:-build}"

launch many -- "$WL/manythreads" 3 1000
mw=$(share "$T/many.folded" thread_work)
emw=$(truth_pct "$T/many.truth" thread_work)
mnomaps=$(rec_stat "$T/many.data" samples_without_mappings)
mtotal=$(samples "$T/many.folded")
# stacks of 127 frames of one repeated address (a frame-pointer walk gone round in a loop) are
# cut where the walk left the mappings, and counted: none may stay in the folded output
mlong=$(deeper "$T/many.folded" 100)
if within "$mw" "$emw" 3 && [ "${mnomaps:-999999}" -le $((mtotal / 200)) ] && [ "$mlong" -eq 0 ]; then
	ok "1000 threads: thread_work $mw % (threads' CPU clocks $emw, +-3), $mnomaps of $mtotal samples without mappings, no runaway stacks"
else
	bad "1000 threads" "thread_work $mw % (threads' CPU clocks $emw, +-3), ${mnomaps:-?} of $mtotal without mappings (want <= 0.5 %), $mlong samples on stacks over 100 frames"
fi

it_end
