#!/usr/bin/env bash
# Files perch opens where a user could put something in its way (issue 25): a symlink swapped in
# for --control's ACK FIFO is refused, its target unchanged; report -o and model -o never write
# through a symlink nor over their own input; a record that fails before sampling (no PMU for
# -e cycles, too few descriptors for the BPF sampler) leaves the recording already at -o as it was.
#
#   tests/integration/output-safety.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin output-safety "${1:-build}"

REC=$TESTS/corpus/shares.data
cp "$REC" "$T/rec.data"

# unchanged NAME FILE WANT_TEXT: FILE still holds WANT_TEXT
unchanged() {
	if [ "$(cat "$2")" = "$3" ]; then
		ok "$1: $(basename "$2") unchanged"
	else
		bad "$1" "$(basename "$2") now holds '$(head -c 80 "$2")'"
	fi
}

# --control: one open with O_NOFOLLOW, then the descriptor must be a FIFO
mkfifo "$T/ctl"
echo "root's file" >"$T/victim"
ln -s "$T/victim" "$T/ack"
expect "--control ACK a symlink to a file" 84 "ack is a symbolic link, not a FIFO: refused" -- \
	"$PERCH" record "--control=fifo:$T/ctl,$T/ack" -o "$T/n.data" -- true
unchanged "--control ACK a symlink" "$T/victim" "root's file"
# a symlink is refused even to a FIFO: the open itself follows none (a stat() then open() of the
# path followed it, and a swap between the two wrote acks into whatever it pointed at)
mkfifo "$T/realack"
ln -s "$T/realack" "$T/ack2"
expect "--control ACK a symlink to a FIFO" 84 "ack2 is a symbolic link, not a FIFO: refused" -- \
	"$PERCH" record "--control=fifo:$T/ctl,$T/ack2" -o "$T/n.data" -- true
expect "--control CTL a regular file" 84 "victim is a regular file, not a FIFO: refused" -- \
	"$PERCH" record "--control=fifo:$T/victim" -o "$T/n.data" -- true
unchanged "--control CTL a regular file" "$T/victim" "root's file"

# report -o / model -o: a symlink at the name is refused, never written through; -o X X refused
ln -s "$T/rec.data" "$T/out.txt"
expect "report -o a symlink to the recording" 84 "out.txt: it is a symbolic link" -- \
	"$PERCH" report --format=folded -o "$T/out.txt" "$T/rec.data"
expect "report -o X X" 84 "is the recording it reads" -- \
	"$PERCH" report --format=folded -o "$T/rec.data" "$T/rec.data"
expect "model -o X X" 84 "is the recording it reads" -- \
	"$PERCH" model -o "$T/rec.data" "$T/rec.data"
if cmp -s "$REC" "$T/rec.data"; then
	ok "report -o, model -o: the recording is intact"
else
	bad "report -o, model -o" "the recording changed"
fi
"$PERCH" report --format=folded -o "$T/f.txt" "$T/rec.data" && "$PERCH" report --format=folded -o "$T/f.txt" "$T/rec.data"
rc=$?
if [ $rc -eq 0 ] && [ "$(ls "$T"/f.txt*)" = "$T/f.txt" ] && [ -s "$T/f.txt" ]; then
	ok "report -o twice: exit 0, one file, nothing left beside it"
else
	bad "report -o twice" "exit $rc, files: $(ls "$T"/f.txt*)"
fi

# record failing before sampling: the previous recording is neither renamed nor replaced
# failed_record NAME WANT_STATUS RECORD_ARGS...: with rec.data at -o, record exits WANT_STATUS
# and leaves p.data as it was, with no p.data.old and nothing else beside it
failed_record() {
	local name=$1 want=$2 rc
	shift 2
	cp "$REC" "$T/p.data"
	"$@" -o "$T/p.data" -- true >/dev/null 2>"$T/p.err"
	rc=$?
	if [ $rc -eq "$want" ] && cmp -s "$REC" "$T/p.data" && [ "$(ls "$T"/p.data*)" = "$T/p.data" ]; then
		ok "$name: exit $rc, the recording at -o kept as it was, no .old"
	else
		bad "$name" "exit $rc (want $want), files: $(ls "$T"/p.data*), $(head -1 "$T/p.err")"
	fi
}
if "$PERCH" record -q -e cycles -o "$T/pmu.data" -- true 2>/dev/null; then
	ok "record -e cycles: this machine has a PMU (the no-PMU case is not checked here)"
else
	failed_record "record -e cycles without a PMU" 79 "$PERCH" record -q -e cycles
fi
failed_record "record with 16 descriptors (the BPF sampler refused)" 71 \
	bash -c 'ulimit -n 16; exec "$0" "$@"' "$PERCH" record -q

it_end
