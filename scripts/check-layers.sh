#!/bin/bash
# The layering rule of docs/DESIGN.md ("Dependencies point one way"): every quoted #include that
# crosses into another part must follow an allowed arrow below. A new arrow is a design change:
# add it here and to docs/DESIGN.md together, or move the code to the part that owns it.
# And a private header (NAME_impl.h) owns its folder: only the files beside it include it (tests/
# may, to test a part from inside).
#
#   scripts/check-layers.sh [DIR]   the tracked files, or every C file under DIR (a copy, for
#                                   tests/layers.sh)
set -u
cd "${1:-$(dirname "$0")/..}" || exit 1

# part: the parts it may include from (itself is always allowed)
declare -A ALLOW=(
	[cli]="record report model format symbolize unwind lib include"
	[record]="model format symbolize unwind lib bpf include cuda" # --gpu: the channel, the join
	[report]="model format symbolize lib include"
	[model]="format symbolize lib include"
	[format]="lib"
	[symbolize]="lib"
	[unwind]="lib"
	[lib]=""
	[bpf]="unwind"
	[cuda]="lib include"
	[runtime]="include lib cuda" # inside the user's process: the region runtime, CUDA injection
)

part_of() {
	case $1 in
	userspace/*/*) p=${1#userspace/}; echo "${p%%/*}" ;;
	symbolize/* | unwind/* | bpf/* | cuda/* | include/* | runtime/*) echo "${1%%/*}" ;;
	*) echo "" ;;
	esac
}

# private FILE INC: INC, included by FILE, is a private header of another folder.
private() {
	local dir=${1%/*} target
	case ${2##*/} in *_impl.h) ;; *) return 1 ;; esac
	case $2 in */*) ;; *) return 1 ;; esac # beside it
	for target in "userspace/$2" "$2"; do
		[ -e "$target" ] && [ "${target%/*}" != "$dir" ] && return 0
	done
	return 1
}

bad=0
while read -r file; do
	from=$(part_of "$file")
	[ -n "$from" ] || continue
	[ "$from" = include ] && continue
	while IFS= read -r inc; do
		if private "$file" "$inc"; then
			echo "layers: $file includes \"$inc\": a private header, for its own folder only"
			bad=1
		fi
		case $inc in
		sample.skel.h | vmlinux.h) continue ;; # generated into BUILD
		perch.h | perch_abi.h) to=include ;;
		*/*) to=${inc%%/*} ;;
		*) continue ;; # same folder
		esac
		[ "$to" = "$from" ] && continue
		case " ${ALLOW[$from]} " in
		*" $to "*) ;;
		*)
			echo "layers: $file includes \"$inc\": $from may not depend on $to (docs/DESIGN.md, data flow)"
			bad=1
			;;
		esac
	done < <(sed -n 's/^#[ \t]*include[ \t]*"\([^"]*\)".*/\1/p' "$file")
done < <(if [ $# -gt 0 ]; then find . -name '*.[ch]' | sed 's|^\./||'; else git ls-files '*.c' '*.h'; fi)
[ $bad -eq 0 ] && echo "layers: every include follows docs/DESIGN.md's arrows"
exit $bad
