#!/usr/bin/env bash
# Damaged CFI: every byte of a binary's .eh_frame past its first CIE overwritten. The unwinder
# cannot use it; the recording counts the module and perch record warns about it.
#
#   tests/integration/badcfi.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin badcfi "${1:-build}"

cp "$WL/shares-nofp" "$T/nofp-badcfi"
# no FDE survives
read -r eoff esize < <(readelf -SW "$T/nofp-badcfi" | awk '$2 == ".eh_frame" { print $5, $6 }')
eoff=$((16#$eoff))
esize=$((16#$esize))
head -c $((esize - 24)) /dev/zero | tr '\0' '\132' | dd of="$T/nofp-badcfi" bs=1 seek=$((eoff + 24)) conv=notrunc status=none
"$PERCH" record -o "$T/badcfi.data" -- "$T/nofp-badcfi" 0.5 >/dev/null 2>"$T/err"
dmg=$(rec_stat "$T/badcfi.data" unwind_modules_cfi_damaged)
if [ "${dmg:-0}" -ge 1 ] && grep -q "nofp-badcfi: its CFI (.eh_frame) is damaged" "$T/err"; then
	ok "damaged .eh_frame: counted in the report ($dmg module) and warned about while recording"
else
	bad "damaged .eh_frame" "unwind_modules_cfi_damaged '${dmg}'; stderr: $(head -2 "$T/err")"
fi

it_end
