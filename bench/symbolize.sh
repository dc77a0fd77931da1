#!/usr/bin/env bash
# `perch symbolize -i` against `addr2line -f -i -C`, `eu-addr2line -f -i -C` and
# `llvm-symbolizer --inlining --demangle` on real binaries of this machine: libc (DWARF from
# libc6-dbg's separate debug file, found by build-id), a large C++ library, and perch itself. For
# each tool: the time to the first answer (its index build, or whatever it reads up front), the
# rate on many addresses in one process (warm), and the rate with a fresh process per 100 addresses
# (cold); then how far each output agrees with addr2line's. Prints Markdown.
#
#   bash bench/symbolize.sh [BUILD_DIR]
#
# Environment: WARM_MAX (addresses in a warm run, default 100000), WARM_SECONDS (most time one
# warm run may take, default 10: a slower tool gets fewer addresses), COLD_BATCHES (fresh
# processes per cold figure, default 10), SEED.
set -u
# the table also into BENCH_OUT (docs/BENCHMARKS.md) when set: bench/publish.sh
. "$(dirname "$0")/publish.sh" symbolize "$@"
export LC_ALL=C
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PERCH=$(realpath "$BUILD/perch")
WARM_MAX=${WARM_MAX:-100000}
WARM_SECONDS=${WARM_SECONDS:-10}
COLD_BATCHES=${COLD_BATCHES:-10}
BATCH=100
SEED=${SEED:-20261121}
CC=${CC:-cc}
T=$(mktemp -d /tmp/perch-bench-symbolize.XXXXXX)
trap 'rm -rf "$T"' EXIT
t_start=${EPOCHREALTIME/[.,]/}

die() {
	echo "bench/symbolize: $*" >&2
	exit 1
}
have() { command -v "$1" >/dev/null 2>&1; }

[ -x "$PERCH" ] || die "$PERCH is not built (make)"
[ -f "$BUILD/libperchcore.a" ] || die "$BUILD/libperchcore.a is not built (make)"
LLVM_SYM=""
for c in llvm-symbolizer-14 llvm-symbolizer; do
	have "$c" && LLVM_SYM=$c && break
done
if [ -z "$LLVM_SYM" ] && [ "$(id -u)" -eq 0 ] && have apt-get; then
	echo "installing llvm-14 for llvm-symbolizer-14 ..." >&2
	apt-get install -y llvm-14 >/dev/null 2>&1 && LLVM_SYM="llvm-symbolizer-14"
fi
TOOLS="perch"
for c in addr2line eu-addr2line; do
	have "$c" && TOOLS="$TOOLS $c"
done
[ -n "$LLVM_SYM" ] && TOOLS="$TOOLS llvm-symbolizer"

"$CC" -O2 -o "$T/addrs" "$ROOT/bench/symbolize_addrs.c" -lelf ||
	die "cannot build bench/symbolize_addrs.c (libelf-dev)"
"$CC" -O2 -D_GNU_SOURCE -I"$ROOT" -I"$ROOT/userspace" -o "$T/symtab" "$ROOT/bench/symbolize_symtab.c" \
	"$BUILD/libperchcore.a" -lelf -ldw -lz -llzma -lm || die "cannot build bench/symbolize_symtab.c"

# run_tool TOOL FILE: symbolize the addresses on stdin, one record per address (-a).
run_tool() {
	case $1 in
	perch) "$PERCH" symbolize --addr2line -a -i -e "$2" ;;
	addr2line) addr2line -a -f -i -C -e "$2" ;;
	eu-addr2line) eu-addr2line -a -f -i -C -e "$2" ;;
	llvm-symbolizer) "$LLVM_SYM" -a --inlining --demangle --output-style=GNU --obj="$2" ;;
	esac
}

# timed TOOL FILE IN OUT: wall microseconds of one process, from fork to exit.
timed() {
	local s e
	s=${EPOCHREALTIME/[.,]/}
	run_tool "$1" "$2" <"$3" >"$4" 2>/dev/null
	e=${EPOCHREALTIME/[.,]/}
	echo $((e - s))
}

median3() { printf '%s\n' "$@" | sort -n | sed -n 2p; }

# cold TOOL FILE: addresses per second over COLD_BATCHES fresh processes of BATCH addresses.
cold() {
	local k total=0
	for ((k = 0; k < COLD_BATCHES; k++)); do
		sed -n "$((k * BATCH + 1)),$((k * BATCH + BATCH))p" "$T/all" >"$T/batch"
		total=$((total + $(timed "$1" "$2" "$T/batch" "$T/o")))
	done
	awk -v n=$((COLD_BATCHES * BATCH)) -v t="$total" 'BEGIN { printf "%.0f", n / t * 1e6 }'
}

build_id_debug() { # FILE: its debug file under /usr/lib/debug/.build-id, if there is one
	local id
	id=$(readelf -n "$1" 2>/dev/null | awk '/Build ID:/ { print $3; exit }')
	[ -n "$id" ] && [ -f "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ] &&
		echo "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
}

# describe FILE DEBUG: what symbols and DWARF FILE has.
describe() {
	local syms dwarf
	if readelf -SW "$1" 2>/dev/null | grep -q ' \.symtab '; then syms=".symtab"; else syms=".dynsym only"; fi
	if readelf -SW "$1" 2>/dev/null | grep -q ' \.debug_info '; then
		dwarf="DWARF in the file"
	elif [ -n "$2" ]; then
		dwarf="DWARF + .symtab in separate debug file (build-id)"
	else
		dwarf="no DWARF"
	fi
	echo "$syms, $dwarf"
}

ROWS=$T/rows
AGREE=$T/agree
GOALS=$T/goals
: >"$ROWS"
: >"$AGREE"
: >"$GOALS"

# bench LABEL FILE: every tool on the same addresses of FILE.
bench() {
	local label=$1 file=$2 debug symfile tool first probe n runs t
	local -A warm_rate cold_rate
	debug=$(build_id_debug "$file")
	symfile=${debug:-$file}
	cat "$file" ${debug:+"$debug"} >/dev/null # page cache: no tool pays for the disk
	"$T/addrs" "$symfile" "$WARM_MAX" "$SEED" >"$T/all" || die "$file: no addresses"
	head -1 "$T/all" >"$T/one"
	head -1000 "$T/all" >"$T/probe"
	for tool in $TOOLS; do
		first=$(median3 "$(timed "$tool" "$file" "$T/one" "$T/o")" \
			"$(timed "$tool" "$file" "$T/one" "$T/o")" \
			"$(timed "$tool" "$file" "$T/one" "$T/o")")
		# WARM_MAX addresses, or as many as a 1000-address probe says fit in WARM_SECONDS;
		# the median of 3 runs where a run takes under 1.5 s.
		probe=$(timed "$tool" "$file" "$T/probe" "$T/o")
		read -r n runs < <(awk -v p="$probe" -v f="$first" -v s="$WARM_SECONDS" \
			-v max="$WARM_MAX" 'BEGIN {
			d = (p - f) / 999; if (d < 0.01) d = 0.01; n = int(s * 1e6 / d);
			if (n < 1000) n = 1000; if (n > max) n = max;
			print n, (n * d < 1.5e6 ? 3 : 1) }')
		head -"$n" "$T/all" >"$T/warm"
		t=$(timed "$tool" "$file" "$T/warm" "$T/out.$tool")
		if [ "$runs" -eq 3 ]; then
			t=$(median3 "$t" "$(timed "$tool" "$file" "$T/warm" "$T/o")" \
				"$(timed "$tool" "$file" "$T/warm" "$T/o")")
		fi
		warm_rate[$tool]=$(awk -v n="$n" -v t="$t" -v f="$first" 'BEGIN {
			d = t - f; if (d < 1) d = 1; printf "%.0f", (n - 1) / d * 1e6 }')
		cold_rate[$tool]=$(median3 "$(cold "$tool" "$file")" "$(cold "$tool" "$file")" \
			"$(cold "$tool" "$file")")
		printf '| %s | %s | %s | %.1f | %s | %s | %s |\n' "$label" "$(describe "$file" "$debug")" \
			"$tool" "$(awk -v f="$first" 'BEGIN { print f / 1000 }')" \
			"${warm_rate[$tool]}" "$n" "${cold_rate[$tool]}" >>"$ROWS"
	done
	if [ -e "$T/out.addr2line" ]; then
		read -r cmp addrs lines names positions llvm < <(awk -f "$ROOT/bench/symbolize_cmp.awk" \
			"$T/out.perch" "$T/out.addr2line" ${LLVM_SYM:+"$T/out.llvm-symbolizer"})
		printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$label" "$cmp" \
			"$(grep -c . "$T/out.addr2line")" "$lines" "$names / $positions" "$addrs" \
			"${LLVM_SYM:+$llvm}" >>"$AGREE"
	fi
	# The goal: faster than every other tool warm, at least as fast as llvm-symbolizer cold.
	local best_other=0 verdict_warm verdict_cold
	for tool in $TOOLS; do
		[ "$tool" = perch ] && continue
		[ "${warm_rate[$tool]}" -gt "$best_other" ] && best_other=${warm_rate[$tool]}
	done
	verdict_warm=$([ "${warm_rate[perch]}" -gt "$best_other" ] && echo met || echo "NOT met")
	verdict_cold="n/a (no llvm-symbolizer)"
	if [ -n "$LLVM_SYM" ]; then
		verdict_cold=$([ "${cold_rate[perch]}" -ge "${cold_rate[llvm-symbolizer]}" ] &&
			echo met || echo "NOT met")
	fi
	echo "- $label: warm $verdict_warm (perch ${warm_rate[perch]}/s, best other $best_other/s);" \
		"cold $verdict_cold (perch ${cold_rate[perch]}/s${LLVM_SYM:+, llvm-symbolizer ${cold_rate[llvm-symbolizer]}/s})" >>"$GOALS"
	rm -f "$T"/out.*
}

LIBC=$(ldd "$PERCH" | awk '$1 == "libc.so.6" { print $3 }')
LIBC=$(realpath "${LIBC:-/usr/lib/x86_64-linux-gnu/libc.so.6}")
CXX_BIN=""
for c in /usr/lib/x86_64-linux-gnu/libLLVM-14.so.1 /usr/lib/llvm-14/lib/libLLVM-14.so.1 \
	/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus; do
	[ -f "$c" ] && CXX_BIN=$(realpath "$c") && break
done

bench "$(basename "$LIBC")" "$LIBC"
[ -n "$CXX_BIN" ] && bench "$(basename "$CXX_BIN")" "$CXX_BIN"
bench "perch" "$PERCH"

"$T/addrs" "$(build_id_debug "$LIBC" || echo "$LIBC")" 1000 "$SEED" >"$T/libc-addrs"
elapsed=$(((${EPOCHREALTIME/[.,]/} - t_start) / 1000000))

cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
echo "## perch symbolize vs addr2line, eu-addr2line, llvm-symbolizer"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "- machine: $(uname -sr) ($(uname -m)); CPU: ${cpu:-unknown}, $(nproc) CPUs"
echo "- tools: perch (this tree, $BUILD/perch), $(addr2line --version 2>/dev/null | head -1)," \
	"$(eu-addr2line --version 2>/dev/null | head -1)," \
	"${LLVM_SYM:-no llvm-symbolizer} $($LLVM_SYM --version 2>/dev/null | awk '/LLVM version/ { print $NF }')"
echo "- addresses: per binary, $WARM_MAX drawn with a fixed seed ($SEED) from its function symbols" \
	"(libc: the debug file's .symtab), half function starts, half bytes inside functions"
echo
echo "| binary | symbols, debug info | tool | first address ms [1] | warm addr/s [2] | warm N | cold addr/s [3] |"
echo "|---|---|---|---|---|---|---|"
cat "$ROWS"
echo
echo "Goal of the issue (perch faster than all three warm, at least as fast as llvm-symbolizer cold):"
echo
cat "$GOALS"
echo
echo "Agreement with addr2line on the warm run's addresses [4]:"
echo
echo "| binary | addresses | addr2line lines | perch lines that differ | of them names / positions | addresses with a difference | differing lines where llvm-symbolizer agrees with perch |"
echo "|---|---|---|---|---|---|---|"
cat "$AGREE"
echo
echo "Naming a library without .symtab from its debug file's .symtab, without its DWARF [5]"
echo "(first call, fresh symbolizer, libc):"
echo
echo '```'
"$T/symtab" "$LIBC" <"$T/libc-addrs"
echo '```'
echo
echo "1. Median of 3 runs of one process given one address: process start, opening the file and"
echo "   whatever the tool reads before its first answer (for perch: the symbol tables, and the"
echo "   DWARF index as far as symbolize/dwarf_index.c builds it for one lookup; the others read"
echo "   DWARF per compile unit as addresses need it)."
echo "2. One process over the first 'warm N' addresses ($WARM_MAX, or fewer for a tool a 1000-address"
echo "   probe says would take over ${WARM_SECONDS} s), output to a file; median of 3 runs where one takes"
echo "   under 1.5 s: (N - 1) / (time - first address time), so the one-time start-up is not"
echo "   counted (lazy DWARF reading done after the first address is)."
echo "3. $COLD_BATCHES fresh processes of $BATCH addresses each (the first $((COLD_BATCHES * BATCH)) of the"
echo "   list), start-up and index build included, page cache warm: addresses / total wall time;"
echo "   median of 3 such rounds."
echo "4. Line by line per address over the addresses both tools ran warm. 'names / positions':"
echo "   differing function-name lines / FILE:LINE lines. Last column: of the differing lines, those"
echo "   where llvm-symbolizer --output-style=GNU printed what perch did (allowing for its ??:0 where"
echo "   addr2line prints ??:? and its missing discriminators on caller frames): there addr2line"
echo "   2.40 is the odd one out (it names the compile unit's main file instead of an included one"
echo "   in DWARF 5 line tables). Other differences: which of several symbols at one address names"
echo "   it, and demangler versions (libstdc++'s __cxa_demangle vs binutils' libiberty)."
echo "5. bench/symbolize_symtab.c through the symbolizer API: sym_module__resolve() with no debug"
echo "   directory (.dynsym only), with the default one (the debug file's .symtab read, its DWARF"
echo "   not), and sym_module__resolve_inline() (the DWARF index), on the first of libc's addresses"
echo "   that .dynsym leaves unnamed (a function internal to libc)."
echo
echo "(bench/symbolize.sh took ${elapsed} s)"
