#!/usr/bin/env bash
# End-to-end golden tests of `perch symbolize` against GNU addr2line (the output format it copies)
# and eu-addr2line (elfutils), on the fixtures tests/fixtures/inl.c and tmpl.cpp built here at
# -O2 -g (tmpl.cpp also with -gdwarf-4), a copy of each with its DWARF and symbols split off into a
# .gnu_debuglink file, and a fully stripped copy. Needs no root.
#
#   tests/symbolize.sh [BUILD_DIR]
#
# Addresses checked: every function symbol's first byte and bytes inside each function (second,
# middle, last). Not the alignment padding between functions: there addr2line names the
# function before (BFD takes the nearest symbol below, whatever its size) where perch, like
# eu-addr2line, names none.
set -u
BUILD=${1:-build}
PERCH=$(realpath "$BUILD/perch")
SRC=$(cd "$(dirname "$0")" && pwd)/fixtures
T=$(mktemp -d /tmp/perch-symbolize.XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }
skip() { echo "skip $1: $2"; }
have() { command -v "$1" >/dev/null 2>&1; }

finish() {
	echo "symbolize: $pass passed, $fail failed"
	[ "$fail" -eq 0 ]
	exit
}

# addrs BIN: hex addresses of every defined function symbol of BIN (its .symtab), and of the
# second, middle and last byte of each.
addrs() {
	readelf -sW "$1" | awk '$4 == "FUNC" && $7 != "UND" { print $2, $3 }' | sort -u |
		while read -r start size; do
			case $size in 0x*) size=$((size)) ;; esac
			s=$((16#$start))
			printf '%x\n' "$s"
			[ "$size" -gt 1 ] && printf '%x\n%x\n%x\n' $((s + 1)) $((s + size / 2)) \
				$((s + size - 1))
		done
}

# same NAME EXPECTED ACTUAL: pass when the two files are equal, else show the first differences.
same() {
	if cmp -s "$2" "$3"; then
		ok "$1 ($(wc -l <"$3") lines)"
	else
		bad "$1" "$(diff "$2" "$3" | head -8 | tr '\n' '|')"
	fi
}

# ---- fixtures --------------------------------------------------------------------------------
if [ ! -x "$PERCH" ]; then
	bad "setup" "$PERCH is not built"
	finish
fi
for tool in gcc objcopy strip readelf addr2line; do
	if ! have "$tool"; then
		bad "setup" "$tool is not installed (binutils, gcc)"
		finish
	fi
done
if ! gcc -O2 -g -o "$T/inl" "$SRC/inl.c"; then
	bad "setup" "cannot build $SRC/inl.c"
	finish
fi
bins="inl"
# tmpl4: DWARF 4 line tables (another header layout than gcc 12's default DWARF 5).
if have g++ && g++ -O2 -g -o "$T/tmpl" "$SRC/tmpl.cpp" &&
	g++ -O2 -gdwarf-4 -o "$T/tmpl4" "$SRC/tmpl.cpp"; then
	bins="$bins tmpl tmpl4"
else
	skip "C++ fixture" "no g++ built $SRC/tmpl.cpp"
fi
for b in $bins; do
	addrs "$T/$b" >"$T/$b.addrs"
	# As distributions ship: code and .dynsym in the binary, DWARF and .symtab in the file
	# .gnu_debuglink names, next to it.
	cp "$T/$b" "$T/$b.split"
	objcopy --only-keep-debug "$T/$b.split" "$T/$b.split.debug"
	strip "$T/$b.split"
	objcopy --add-gnu-debuglink="$T/$b.split.debug" "$T/$b.split"
	cp "$T/$b" "$T/$b.stripped"
	strip --strip-all "$T/$b.stripped"
done
if readelf -SW "$T/inl.split" | grep -q -e '\.symtab' -e '\.debug_info'; then
	bad "setup" "strip left .symtab or .debug_info in inl.split"
fi

# ---- golden output against GNU addr2line ------------------------------------------------------
for b in $bins; do
	for v in "" .split .stripped; do
		f=$T/$b$v
		a=$T/$b.addrs
		mapfile -t list <"$a"
		addr2line -f -C -e "$f" "${list[@]}" >"$T/want" 2>/dev/null
		"$PERCH" symbolize --addr2line -e "$f" "${list[@]}" >"$T/got" 2>"$T/err"
		same "$b$v: ${#list[@]} addresses as arguments = addr2line -f -C" "$T/want" "$T/got"
		addr2line -f -i -C -e "$f" <"$a" >"$T/want" 2>/dev/null
		"$PERCH" symbolize --addr2line -i -e "$f" <"$a" >"$T/got" 2>>"$T/err"
		same "$b$v: -i, addresses on stdin = addr2line -f -i -C" "$T/want" "$T/got"
		if [ -s "$T/err" ]; then
			bad "$b$v: stderr" "$(head -3 "$T/err" | tr '\n' '|')"
		fi
	done
done
if [ -e "$T/tmpl" ]; then
	addr2line -f -i -e "$T/tmpl" <"$T/tmpl.addrs" >"$T/want"
	"$PERCH" symbolize --addr2line -i --no-demangle -e "$T/tmpl" <"$T/tmpl.addrs" >"$T/got"
	same "tmpl: -i --no-demangle = addr2line -f -i (linkage names)" "$T/want" "$T/got"
	if grep -q '(discriminator [0-9]*)' "$T/got"; then
		ok "tmpl: output has line-table discriminators (the loop's inline call)"
	else
		bad "tmpl discriminators" "none printed; the fixture's loop should have some"
	fi
fi
if grep -q '^leaf$' <("$PERCH" symbolize -i -e "$T/inl.split" <"$T/inl.addrs") &&
	grep -q '^crtstuff.c:?$' <("$PERCH" symbolize -e "$T/inl.split" <"$T/inl.addrs"); then
	ok "inl.split: inline chains from the debuglink file, crtstuff.c:? from its .symtab"
else
	bad "inl.split" "no inline frame 'leaf' or no 'crtstuff.c:?' line"
fi

# ---- symbol versions ------------------------------------------------------------------------------
# A library defining foo in two versions as glibc does (.symver): its .symtab spells foo@@V2 and
# foo@V1. perch names both without the version (and the default one's internal alias foo_v2 by
# the public name); --addr2line keeps DWARF's names.
cat >"$T/ver.c" <<'EOF2'
__asm__(".symver foo_v1, foo@V1");
__asm__(".symver foo_v2, foo@@V2");
int foo_v1(int x) { return x + 1; }
int foo_v2(int x) { return x * 3 + 1; }
EOF2
printf 'V1 { global: foo; local: *; };\nV2 { global: foo; } V1;\n' >"$T/ver.map"
if gcc -g -O1 -shared -fPIC -Wl,--version-script="$T/ver.map" -o "$T/libver.so" "$T/ver.c" 2>"$T/err"; then
	v1=$(readelf -sW "$T/libver.so" | awk '$8 == "foo@V1" { print $2; exit }')
	v2=$(readelf -sW "$T/libver.so" | awk '$8 == "foo@@V2" { print $2; exit }')
	got=$("$PERCH" symbolize -e "$T/libver.so" "$v1" "$v2" | awk 'NR % 2 == 1' | tr '\n' ' ')
	raw=$("$PERCH" symbolize --addr2line -e "$T/libver.so" "$v2" | head -1)
	if [ -n "$v1" ] && [ -n "$v2" ] && [ "$got" = "foo foo " ] && [ "$raw" = foo_v2 ]; then
		ok "symbol versions: foo@V1 and foo@@V2 both named foo (--addr2line: $raw, as addr2line)"
	else
		bad "symbol versions" "foo@V1 at '$v1', foo@@V2 at '$v2' named '$got'; --addr2line '$raw'"
	fi
else
	bad "symbol versions" "could not build the fixture: $(head -2 "$T/err" | tr '\n' '|')"
fi

# ---- MiniDebugInfo (.gnu_debugdata) --------------------------------------------------------------
# Made as gdb's manual says ("MiniDebugInfo"): the function symbols .dynsym lacks, kept in a copy
# of the debug file, xz-compressed into .gnu_debugdata of the stripped binary. Every function
# symbol's addresses must get that symbol's name, as the unstripped binary's .symtab gives it.
if have xz && have nm; then
	b=$T/inl
	nm -D "$b" --format=posix --defined-only 2>/dev/null | awk '{ print $1 }' | sort >"$T/dynsyms"
	nm "$b" --format=posix --defined-only | awk '$2 == "T" || $2 == "t" || $2 == "D" { print $1 }' |
		sort >"$T/funcsyms"
	comm -13 "$T/dynsyms" "$T/funcsyms" >"$T/keep"
	objcopy --only-keep-debug "$b" "$b.dbg"
	objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbols="$T/keep" \
		"$b.dbg" "$b.minidbg"
	cp "$b" "$b.mini"
	strip --strip-all -R .comment "$b.mini"
	cp "$b.mini" "$b.trunc"
	xz -f "$b.minidbg"
	objcopy --add-section .gnu_debugdata="$b.minidbg.xz" "$b.mini"
	# address -> name of the unstripped .symtab: each sized function's first, second, middle and
	# last byte
	readelf -sW "$b" | awk '$4 == "FUNC" && $7 != "UND" && $3 > 0 { print $2, $3, $8 }' | sort -u -k1,1 |
		while read -r start size name; do
			s=$((16#$start))
			for a in $s $((s + size / 2)) $((s + size - 1)) $((s + (size > 1))); do
				printf '%x %s\n' "$a" "$name"
			done
		done | sort -u -k1,1 >"$T/mini.want"
	cut -d' ' -f1 "$T/mini.want" >"$T/mini.addrs"
	"$PERCH" symbolize --addr2line -e "$b.mini" <"$T/mini.addrs" 2>"$T/err" | awk 'NR % 2 == 1' >"$T/mini.names"
	paste -d' ' "$T/mini.addrs" "$T/mini.names" >"$T/mini.got"
	same "MiniDebugInfo: $(wc -l <"$T/mini.addrs") addresses of every function named from .gnu_debugdata as the unstripped .symtab names them" \
		"$T/mini.want" "$T/mini.got"
	[ -s "$T/err" ] && bad "MiniDebugInfo stderr" "$(head -2 "$T/err" | tr '\n' '|')"
	# Corrupt: the xz stream cut short. Ignored with one note; the module still answers.
	head -c $(($(stat -c %s "$b.minidbg.xz") / 2)) "$b.minidbg.xz" >"$T/trunc.xz"
	objcopy --add-section .gnu_debugdata="$T/trunc.xz" "$b.trunc"
	"$PERCH" symbolize --addr2line -e "$b.trunc" <"$T/mini.addrs" >"$T/trunc.got" 2>"$T/err"
	rc=$?
	if [ $rc -eq 0 ] && [ "$(wc -l <"$T/trunc.got")" -eq $((2 * $(wc -l <"$T/mini.addrs"))) ] &&
		[ "$(grep -c 'gnu_debugdata' "$T/err")" -eq 1 ] && ! grep -qv '^??' <(awk 'NR % 2 == 1' "$T/trunc.got" | grep -v '^main$'); then
		ok "truncated .gnu_debugdata: ignored with one note ($(cat "$T/err")), exit 0, every address answered"
	else
		bad "truncated .gnu_debugdata" "exit $rc, stderr: $(head -2 "$T/err" | tr '\n' '|')"
	fi
else
	skip "MiniDebugInfo" "needs xz and nm (xz-utils, binutils)"
fi

# ---- against eu-addr2line, normalized -----------------------------------------------------------
# eu-addr2line adds columns and " inlined at ... in CALLER", prints no discriminators, and prints
# ??:0 where only a symbol names the address (addr2line: ??:? or the symbol's FILE:?).
norm_eu() { sed -e 's/ inlined at .*//' -e 's/:\([0-9][0-9]*\):[0-9][0-9]*$/:\1/'; }
norm_perch() { sed -e 's/ (discriminator [0-9]*)$//' -e 's/^.*:?$/??:0/'; }
if have eu-addr2line; then
	for b in $bins; do
		for v in "" .split; do
			f=$T/$b$v
			eu-addr2line -f -i -C -e "$f" <"$T/$b.addrs" | norm_eu >"$T/want"
			"$PERCH" symbolize --addr2line -i -e "$f" <"$T/$b.addrs" | norm_perch >"$T/got"
			same "$b$v: -i = eu-addr2line -f -i -C (columns, discriminators aside)" \
				"$T/want" "$T/got"
		done
	done
else
	skip "eu-addr2line" "not installed (elfutils)"
fi

# ---- unknown addresses, input forms, streaming ----------------------------------------------------
"$PERCH" symbolize --addr2line -i -e "$T/inl" 0x7fff0000 ffffffffffffffff >"$T/got"
printf '??\n??:0\n??\n??:0\n' >"$T/want"
same "address in no segment: ?? and ??:0, as addr2line" "$T/want" "$T/got"

start=$(head -1 "$T/inl.addrs")
printf '0x%s\n%s\n  0X%s\nnot-hex\n\n%s' "$start" "$start" "$start" "$start" >"$T/forms"
addr2line -f -i -C -e "$T/inl" <"$T/forms" >"$T/want"
"$PERCH" symbolize --addr2line -i -e "$T/inl" <"$T/forms" >"$T/got"
same "stdin: 0x, bare, indented, garbage, empty and unterminated lines as addr2line reads them" \
	"$T/want" "$T/got"

# A reader that waits for each answer before it sends the next address (addr2line used as a
# coprocess) must get it without closing stdin.
outer=$(readelf -sW "$T/inl" | awk '$4 == "FUNC" && $8 == "outer" { print $2 }')
coproc SYM { timeout 30 "$PERCH" symbolize -e "$T/inl"; }
# bash unsets SYM_PID once it has reaped the coprocess, which may be before the wait below
sym_pid=$SYM_PID
echo "0x$outer" >&"${SYM[1]}"
fn=""
pos=""
read -r -t 5 fn <&"${SYM[0]}" && read -r -t 5 pos <&"${SYM[0]}"
echo "0x$outer" >&"${SYM[1]}"
fn2=""
read -r -t 5 fn2 <&"${SYM[0]}"
to_sym=${SYM[1]}
exec {to_sym}>&-
wait "$sym_pid" 2>/dev/null
if [ "$fn" = "$fn2" ] && [ -n "$fn" ] && [ "${pos%:*}" = "$SRC/inl.c" ]; then
	ok "streaming: each answer arrives while stdin stays open ($fn, $pos)"
else
	bad "streaming" "got '$fn' '$pos' '$fn2' within 5 s"
fi

# ---- bad input: exit status and one line on stderr ------------------------------------------------
expect_exit() { # NAME STATUS ARGS...
	local name=$1 want=$2 rc lines
	shift 2
	"$PERCH" symbolize "$@" </dev/null >"$T/out" 2>"$T/err"
	rc=$?
	lines=$(wc -l <"$T/err")
	if [ "$rc" -eq "$want" ] && [ "$lines" -eq 1 ] && [ ! -s "$T/out" ]; then
		ok "$name: exit $rc, '$(cat "$T/err")'"
	else
		bad "$name" "exit $rc (want $want), $lines stderr lines: $(tr '\n' '|' <"$T/err")"
	fi
}
echo "not an ELF file" >"$T/text"
expect_exit "missing file" 66 -e "$T/nonexistent" 0x1000
expect_exit "not ELF" 66 -e "$T/text" 0x1000
expect_exit "directory" 66 -e "$T" 0x1000
expect_exit "unknown option" 64 --bogus -e "$T/inl" 0x1000
expect_exit "unknown short option" 64 -x -e "$T/inl" 0x1000
expect_exit "no -e" 64 0x1000
expect_exit "-e without argument" 64 -e
if [ -w /dev/full ]; then
	"$PERCH" symbolize -e "$T/inl" 0x1000 >/dev/full 2>"$T/err"
	rc=$?
	if [ "$rc" -eq 73 ] && [ "$(wc -l <"$T/err")" -eq 1 ]; then
		ok "unwritable output: exit 73, '$(cat "$T/err")'"
	else
		bad "unwritable output" "exit $rc (want 73): $(tr '\n' '|' <"$T/err")"
	fi
fi
if "$PERCH" symbolize --help | grep -q -- '--no-demangle'; then
	ok "--help prints the options, exit 0"
else
	bad "--help" "no option list"
fi
finish
