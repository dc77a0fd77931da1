#!/usr/bin/env bash
# Recordings cut short or damaged: perch report says where, with its own exit status, and still
# reports what the good blocks hold; a file that is not a recording is refused at once.
#
#   tests/integration/bad-file.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin bad-file "${1:-build}"

perch_record shares -- "$WL/shares" 3
size=$(wc -c <"$T/shares.data")
head -c $((size - 7)) "$T/shares.data" >"$T/cut.data"
expect "truncated recording" 67 "truncated after" -- "$PERCH" report "$T/cut.data"
if grep -q "Top functions by self" "$T/out"; then
	ok "truncated recording: complete blocks still reported"
else
	bad "truncated report" "no report printed"
fi
cp "$T/shares.data" "$T/damaged.data"
# 64 bytes: wherever they land they hit a payload (CRC mismatch) or a length field, never only
# the type field of one header (an unknown type is skipped by design).
head -c 64 /dev/zero | tr '\0' '\377' | dd of="$T/damaged.data" bs=1 seek=$((size / 2)) conv=notrunc status=none
expect "damaged recording" 65 "damaged after" -- "$PERCH" report "$T/damaged.data"
if grep -q "Top functions by self" "$T/out"; then
	ok "damaged recording: good blocks still reported"
else
	bad "damaged report" "no report printed"
fi

# ---- report refuses what is not a recording file, at once ------------------------------------
start=$(date +%s)
timeout 10 "$PERCH" report /dev/zero >/dev/null 2>"$T/err"
rc=$?
if [ $rc -eq 66 ] && [ "$(wc -l <"$T/err")" -eq 1 ]; then
	ok "report /dev/zero: exit 66 in $(($(date +%s) - start)) s, one line: $(cat "$T/err")"
else
	bad "report /dev/zero" "exit $rc (66 wanted; 124: still reading after 10 s): $(head -c 300 "$T/err")"
fi

it_end
