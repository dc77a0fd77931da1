#!/usr/bin/env bash
# Another mount namespace: the path the process mapped (/usr/bin/true, bind-mounted over by the
# workload) names a different file on the host; its samples are still the workload's.
#
#   tests/integration/mountns.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin mountns "${1:-build}"

cp "$WL/shares" "$T/shares-copy"
launch ns -- unshare -m sh -c "mount --bind $T/shares-copy /usr/bin/true && exec /usr/bin/true 2"
check_shares "mount namespace (/usr/bin/true bind-mounted over by the workload)" "$T/ns.folded" "$T/ns.truth"

it_end
