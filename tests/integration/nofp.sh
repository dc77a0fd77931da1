#!/usr/bin/env bash
# Code built without frame pointers (-O2 -fomit-frame-pointer): user stacks unwound in the kernel
# from .eh_frame give the shares workload's answers.
#
#   tests/integration/nofp.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin nofp "${1:-build}"

launch nofp -- "$WL/shares-nofp" 3
check_shares "no frame pointers (-O2 -fomit-frame-pointer)" "$T/nofp.folded" "$T/nofp.truth"

it_end
