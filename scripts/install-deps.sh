#!/usr/bin/env bash
# Install the Debian packages perch needs to build and test, only those missing; with the
# argument fuzz, also what make fuzz needs.
set -euo pipefail
pkgs=(make gcc g++ clang llvm dwz libc6-dbg systemtap-sdt-dev libbpf-dev bpftool libelf-dev libdw-dev zlib1g-dev libcmocka-dev
      libprotobuf-c-dev protobuf-c-compiler golang-go
      xxd chromium nodejs
      pkg-config clang-format linux-perf util-linux libcap2-bin binutils elfutils procps xz-utils
      libcapstone-dev tmux bzip2 liblzma-dev python3.11 libpython3.11-dev)
# make fuzz: libFuzzer's runtime for the installed clang (only a Recommends of clang's packages).
if [ "${1:-}" = fuzz ]; then
	clang_major=$(clang -dumpversion 2>/dev/null | cut -d. -f1)
	pkgs+=("libclang-rt-${clang_major:-14}-dev")
fi
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# tests/html.sh's browser driver: playwright-core, pinned by tests/browser/package-lock.json
# (npm ci: nothing fetched when node_modules already matches the lock).
browser_deps() {
	[ "${1:-}" = fuzz ] && return 0
	local d
	d=$(dirname "$0")/../tests/browser
	[ -f "$d/node_modules/playwright-core/package.json" ] &&
		[ "$d/node_modules/.package-lock.json" -nt "$d/package-lock.json" ] && return 0
	# Debian's nodejs comes without npm (NodeSource's has it): then Debian's npm package
	command -v npm >/dev/null || apt-get install -y -qq --no-install-recommends npm >/dev/null
	(cd "$d" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
}
if [ ${#missing[@]} -eq 0 ]; then
	browser_deps "${1:-}"
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "perch: missing packages: ${missing[*]} (run as root, or: sudo apt-get install ${missing[*]})" >&2
	exit 1
fi
echo "perch: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
browser_deps "${1:-}"
