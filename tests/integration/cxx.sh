#!/usr/bin/env bash
# C++ names: demangled by default, raw with --no-demangle.
#
#   tests/integration/cxx.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin cxx "${1:-build}"

launch cxx -- "$WL/cxx" 1
folded "$T/cxx.data" --no-demangle >"$T/cxx.raw"
cd_=$(share "$T/cxx.folded" "void work::spin<3>()")
cr=$(share "$T/cxx.raw" "_ZN4work4spinILi3EEEvv")
if within "$cd_" 100 5 && within "$cr" 100 5; then
	ok "c++: 'void work::spin<3>()' on $cd_ % of stacks, _ZN4work4spinILi3EEEvv with --no-demangle on $cr %"
else
	bad cxx "demangled on $cd_ %, raw on $cr %"
fi

it_end
