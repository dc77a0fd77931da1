#!/usr/bin/env bash
# clang-format check of every tracked C source and header (CI runs it through make test).
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.c' '*.h' 2>/dev/null || true)
[ -n "$files" ] || files=$(find bpf userspace symbolize unwind tests bench include -name '*.[ch]' 2>/dev/null)
bad=0
for f in $files; do
	if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
		echo "format: $f is not clang-format clean (run: make format)" >&2
		bad=1
	fi
done
[ "$bad" -eq 0 ] && echo "format: clean"
exit "$bad"
