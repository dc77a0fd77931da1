#!/usr/bin/env bash
# Damaged CFI: every byte of a binary's .eh_frame past its first CIE overwritten. The unwinder
# cannot use it; the recording counts the module and perch record warns about it. And what is not
# damage: a library whose .eh_frame holds crtend.o's zero terminator alone (ICU's libicudata, in
# every process that links ICU), built here, preloaded: no warning, nothing counted.
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

# a data-only library: crt's code, and an .eh_frame of 4 zero bytes (checked, so the case is real)
echo 'const char icudata_like[4096] = {1};' >"$T/data.c"
cc -shared -fPIC -fno-asynchronous-unwind-tables -fno-unwind-tables -o "$T/libdataonly.so" "$T/data.c"
esize=$(readelf -SW "$T/libdataonly.so" | awk '$2 == ".eh_frame" { print $6 }')
"$PERCH" record -o "$T/term.data" -- env LD_PRELOAD="$T/libdataonly.so" "$WL/shares-nofp" 0.3 >/dev/null 2>"$T/term.err"
dmg=$(rec_stat "$T/term.data" unwind_modules_cfi_damaged)
# the library was seen: the one module without a table (shares-nofp alone has none)
none=$(rec_stat "$T/term.data" unwind_modules_without_table)
if [ "$esize" = 000004 ] && [ "$dmg" = 0 ] && [ "${none:-0}" -ge 1 ] && ! grep -q "damaged" "$T/term.err"; then
	ok "terminator-only .eh_frame (libicudata's): a module without a table ($none), no damage counted, no warning"
else
	bad "terminator-only .eh_frame" ".eh_frame size '$esize', unwind_modules_cfi_damaged '$dmg', without table '$none'; stderr: $(head -2 "$T/term.err")"
fi

it_end
