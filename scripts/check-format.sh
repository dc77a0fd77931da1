#!/usr/bin/env bash
# clang-format check of every tracked C source and header (CI runs it through make test).
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.c' '*.h' 2>/dev/null || true)
[ -n "$files" ] || files=$(find bpf userspace symbolize unwind tests bench include -name '*.[ch]' 2>/dev/null)
# batches of files, one batch a CPU; clang-format names each file that differs in its diagnostics
# ("FILE:LINE:COL: error: code should be clang-formatted")
out=$(printf '%s\n' $files | xargs -P "$(nproc 2>/dev/null || echo 2)" -n 32 clang-format --dry-run --Werror 2>&1) &&
	rc=0 || rc=$?
bad=$(echo "$out" | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: .*/\1/p' | sort -u)
for f in $bad; do
	echo "format: $f is not clang-format clean (run: make format)" >&2
done
if [ "$rc" -ne 0 ] && [ -z "$bad" ]; then
	echo "format: clang-format failed: $(echo "$out" | head -3)" >&2
	exit 1
fi
[ -z "$bad" ] && echo "format: clean"
[ -z "$bad" ]
