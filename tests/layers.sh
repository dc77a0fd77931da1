#!/usr/bin/env bash
# scripts/check-layers.sh's own test, on a copy of the tree's C files: it passes with a private
# header (NAME_impl.h) spelled with its path from inside its own folder, and fails naming each
# violation planted: a private header included from outside its folder (twice), and an include
# against the arrows. About 2 s of CPU (two runs of the check).
#   bash tests/layers.sh
set -u
cd "$(dirname "$0")/.." || exit 1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0

check() { # check WHAT WANT_STATUS [GREP...]: the check on the copy exits WANT_STATUS, says each GREP
	local what=$1 want=$2 out st ok=1
	shift 2
	out=$(bash scripts/check-layers.sh "$T" 2>&1)
	st=$?
	[ "$st" = "$want" ] || ok=0
	for g in "$@"; do
		grep -qF -- "$g" <<<"$out" || ok=0
	done
	if [ $ok = 1 ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL layers: $what: exit $st, want $want; said: $out"
	fi
}

git ls-files -z '*.c' '*.h' | tar --null -T - -cf - | tar -xf - -C "$T"
echo '#include "record/regions/regions_impl.h"' >>"$T/userspace/record/regions/regions.c"
check "regions_impl.h by its path, from its own folder" 0 "every include follows"
echo '#include "record/sampler/sampler_impl.h"' >>"$T/userspace/record/record.c"
echo '#include "format/writer_impl.h"' >>"$T/userspace/report/text.c"
echo '#include "record/record.h"' >>"$T/userspace/format/reader.c"
check "three violations" 1 \
	'userspace/record/record.c includes "record/sampler/sampler_impl.h": a private header' \
	'userspace/report/text.c includes "format/writer_impl.h": a private header' \
	'userspace/format/reader.c includes "record/record.h": format may not depend on record'
echo "layers: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
