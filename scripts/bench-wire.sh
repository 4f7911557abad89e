#!/usr/bin/env bash
# bench-wire.sh: the transport benchmark of agentls, side by side over stdio
# pipes with an echo server on stock go.lsp.dev/jsonrpc2 v0.10.0 and one on
# vscode-jsonrpc (Node), rounds interleaved. See docs/BENCH-WIRE.md.
#
# Usage: scripts/bench-wire.sh [--markdown FILE] [--rounds N] [--quick] [-- DRIVER FLAGS...]
#   --markdown FILE  also write the results as a Markdown table to FILE
#   --rounds N       rounds (default 5)
#   --quick          few requests per round: checks the setup in seconds
#   after --, flags go to the driver as they are (go run ./bench/wire/driver -h)
#
# It builds bin/agentls (when cmd/agentls exists), the stock server and the
# driver into .cache/bench-wire/, installs the Node server's locked
# dependencies with `npm ci` only when they are missing or stale, and says
# which server it skipped and why. Exit status: the driver's (0 all measured,
# 1 a server failed, 2 usage), or the failing build's.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

markdown=""
rounds=5
quick=0
driver_args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--markdown) markdown=${2:?--markdown needs a file}; shift 2 ;;
	--markdown=*) markdown=${1#--markdown=}; shift ;;
	--rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
	--rounds=*) rounds=${1#--rounds=}; shift ;;
	--quick) quick=1; shift ;;
	--) shift; driver_args+=("$@"); break ;;
	-h|--help) sed -n '2,/^set /{/^#/s/^# \{0,1\}//p;}' "$0"; exit 0 ;;
	*) echo "bench-wire: unknown argument $1 (try --help)" >&2; exit 2 ;;
	esac
done

# The driver runs from the repository root, so the servers' commands are
# relative and the report shows no machine-specific paths.
cache="$root/.cache/bench-wire"
mkdir -p "$cache" "$root/bin"
servers=()
skipped=()
notes=("$(go version | sed 's/^go version //')")

echo "bench-wire: building the driver and the stock jsonrpc2 server" >&2
go build -o "$cache/driver" ./bench/wire/driver
go build -o "$cache/stockserver" ./bench/wire/stockserver

# 1. vscode-jsonrpc, the baseline.
node_dir="$root/bench/wire/node"
if ! command -v node >/dev/null 2>&1; then
	skipped+=("vscode-jsonrpc: node is not on PATH (install Node.js 18 or later)")
elif ! command -v npm >/dev/null 2>&1; then
	skipped+=("vscode-jsonrpc: npm is not on PATH")
else
	want=$(sed -n 's/.*"vscode-jsonrpc": "\([^"]*\)".*/\1/p' "$node_dir/package.json" | head -n1)
	have=""
	if [ -f "$node_dir/node_modules/vscode-jsonrpc/package.json" ]; then
		have=$(sed -n 's/^[[:space:]]*"version": "\([^"]*\)".*/\1/p' "$node_dir/node_modules/vscode-jsonrpc/package.json" | head -n1)
	fi
	if [ "$have" != "$want" ]; then
		echo "bench-wire: installing vscode-jsonrpc $want with npm ci" >&2
		if ! (cd "$node_dir" && npm ci --no-audit --no-fund --loglevel=error >&2); then
			skipped+=("vscode-jsonrpc: npm ci failed in bench/wire/node (see above)")
			want=""
		fi
	fi
	if [ -n "$want" ]; then
		servers+=(-server "vscode-jsonrpc=node bench/wire/node/server.js")
		notes+=("node $(node --version), vscode-jsonrpc $want")
	fi
fi

# 2. stock go.lsp.dev/jsonrpc2.
servers+=(-server "stock jsonrpc2=.cache/bench-wire/stockserver")
notes+=("go.lsp.dev/jsonrpc2 $(go list -m -f '{{.Version}}' go.lsp.dev/jsonrpc2)")

# 3. agentls.
if [ -d "$root/cmd/agentls" ]; then
	echo "bench-wire: building bin/agentls" >&2
	go build -o "$root/bin/agentls" ./cmd/agentls
	servers+=(-server "agentls=bin/agentls serve")
	notes+=("agentls $(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)")
else
	skipped+=("agentls: cmd/agentls does not exist in this tree yet")
fi

for s in ${skipped[@]+"${skipped[@]}"}; do
	echo "bench-wire: SKIPPED $s" >&2
done

args=(-rounds "$rounds")
if [ "$quick" = 1 ]; then
	args+=(-warmup 100 -pings 500 -inflight 2000 -payloads 5 -spawns 2)
fi
if [ -n "$markdown" ]; then
	args+=(-markdown "$markdown")
fi
note=$(IFS=';'; echo "${notes[*]}" | sed 's/;/; /g')
if [ ${#skipped[@]} -gt 0 ]; then
	note="$note; skipped: $(IFS=';'; echo "${skipped[*]}" | sed 's/;/; /g')"
fi
args+=(-note "$note")

status=0
"$cache/driver" "${servers[@]}" "${args[@]}" ${driver_args[@]+"${driver_args[@]}"} || status=$?
if [ ${#skipped[@]} -gt 0 ]; then
	echo >&2
	for s in "${skipped[@]}"; do
		echo "bench-wire: SKIPPED $s" >&2
	done
fi
exit "$status"
