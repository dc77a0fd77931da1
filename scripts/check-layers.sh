#!/bin/bash
# The layering rule of docs/DESIGN.md ("Dependencies point one way"): every quoted #include that
# crosses into another part must follow an allowed arrow below. A new arrow is a design change:
# add it here and to docs/DESIGN.md together, or move the code to the part that owns it.
set -u
cd "$(dirname "$0")/.."

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
)

part_of() {
	case $1 in
	userspace/*/*) p=${1#userspace/}; echo "${p%%/*}" ;;
	symbolize/* | unwind/* | bpf/* | cuda/* | include/*) echo "${1%%/*}" ;;
	*) echo "" ;;
	esac
}

bad=0
while read -r file; do
	from=$(part_of "$file")
	[ -n "$from" ] || continue
	[ "$from" = include ] && continue
	while IFS= read -r inc; do
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
done < <(git ls-files '*.c' '*.h')
[ $bad -eq 0 ] && echo "layers: every include follows docs/DESIGN.md's arrows"
exit $bad
