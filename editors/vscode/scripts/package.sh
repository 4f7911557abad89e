#!/usr/bin/env bash
# Builds agentls.vsix: the compiled extension with the agentls binary for
# linux-x64 inside (bin/linux-x64/agentls), so the extension works without
# agentls on PATH.
#
#   scripts/package.sh [OUT.vsix]
#
# AGENTLS_BIN=path uses that binary instead of building one with go build.
# Run from anywhere; npm dependencies must be installed (npm ci).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:-$here/agentls.vsix}

mkdir -p "$here/bin/linux-x64"
if [ -n "${AGENTLS_BIN:-}" ]; then
	cp "$AGENTLS_BIN" "$here/bin/linux-x64/agentls"
else
	(cd "$repo" && CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -o "$here/bin/linux-x64/agentls" ./cmd/agentls)
fi
chmod 755 "$here/bin/linux-x64/agentls"
cd "$here"
npx --no-install tsc -p .
npx --no-install vsce package --skip-license --target linux-x64 --out "$out" >&2
echo "$out"
