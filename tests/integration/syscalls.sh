#!/usr/bin/env bash
# Kernel frames under the user frames that entered the kernel, against perf record -g on the same
# binary; and the folded format itself.
#
#   tests/integration/syscalls.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin syscalls "${1:-build}"

launch sys -- "$WL/syscalls" 2
under=$(stack_pct "$T/sys.folded" ';do_syscalls;.*_\[k\]')
# How much of the time is in the kernel is the machine's (the rest are ticks that land just after
# a syscall returns, taken in user mode): perf record -g on the same binary is the reference. Its
# frame-pointer walk loses do_syscalls (libc's syscall wrappers are frameless leaves), so it is
# compared on "has kernel frames", and perch must also have do_syscalls above them.
perf record -q -e cpu-clock -F 997 -g -o "$T/sys.perf" -- "$WL/syscalls" 2 2>/dev/null
pk=$(perf script -i "$T/sys.perf" -F comm,ip,sym,dso 2>/dev/null | awk '/^[^ \t]/ { if (n) { all++; hit += k }
	n = 1; k = 0; next } /\[kernel/ { k = 1 } END { if (n) { all++; hit += k } printf "%.2f", all ? 100 * hit / all : 0 }')
if within "$under" "$pk" 5 && grep -q ';do_syscalls;.*\(ksys_write\|__x64_sys_write\|x64_sys_call\)_\[k\]' "$T/sys.folded"; then
	ok "syscalls: $under % of samples have kernel frames beneath do_syscalls (perf on the same binary: $pk % with kernel frames, +-5; write path named)"
else
	bad syscalls "$under % of samples have kernel frames beneath do_syscalls (perf on the same binary: $pk % with kernel frames, +-5)"
fi
if grep -qv ';' "$T/sys.folded" || ! awk '$NF !~ /^[0-9]+$/ { exit 1 }' "$T/sys.folded"; then
	bad "folded format" "lines must be 'frame;frame;... count'"
else
	ok "folded: every line is 'comm;frame;...;frame count', kernel frames end in _[k]"
fi

it_end
