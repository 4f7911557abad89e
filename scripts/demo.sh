#!/usr/bin/env bash
# The offline demo: agentls changes a copy of examples/greeter with the
# scripted model of examples/demo.script.json. No key, no network, only Go.
# The repository is left as it was; everything happens in a temporary dir.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
GO=${GO:-go}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/agentls-demo.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/state" "$tmp/greeter"
cp -R examples/greeter/. "$tmp/greeter/"

$GO build -o "$tmp/bin/agentls" ./cmd/agentls

echo "== agentls run in a copy of examples/greeter ($tmp/greeter)" >&2
cd "$tmp/greeter"
AGENTLS_STATE_DIR="$tmp/state" "$tmp/bin/agentls" run --yes --mode apply \
	--model "script:$repo/examples/demo.script.json" \
	'Make Greet fall back to "world" for an empty name, add a Farewell function with a test, and run the tests.'
