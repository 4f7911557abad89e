#!/usr/bin/env bash
# The offline demo: agentls changes a copy of examples/greeter with the
# scripted model of examples/demo.script.json: no API key, no model server.
# It needs Go, and on the first run the network, for the Go module proxy
# (go env GOPROXY) to download agentls's modules; after that, nothing.
# The repository is left as it was; everything happens in a temporary dir.
# It ends by running the copy's tests itself, and fails if they fail.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
GO=${GO:-go}
# Progress goes to stderr with agentls's own; stdout is the result.
STEPS_FD=2 . scripts/lib/steps.sh
say() { echo "$*" >&2; }

command -v "$GO" >/dev/null || { say "make demo needs Go 1.26 or later (https://go.dev/dl/)"; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/agentls-demo.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/state" "$tmp/greeter"
cp -R examples/greeter/. "$tmp/greeter/"

# Offline, the download succeeds only when every module is already there.
if ! GOPROXY=off $GO mod download >/dev/null 2>&1; then
	say "== downloading agentls's Go modules through $($GO env GOPROXY) (the first run only)"
	long "downloading the Go modules" $GO mod download ||
		{ say "the Go modules could not be downloaded: the first run needs the network (or GOPROXY / GOFLAGS=-mod=vendor set up for your network)"; exit 1; }
fi
say "== go build ./cmd/agentls (the first run compiles everything: a minute or two; seconds after that)"
long "building agentls" $GO build -o "$tmp/bin/agentls" ./cmd/agentls

say "== agentls run in a copy of examples/greeter ($tmp/greeter), with the scripted model"
cd "$tmp/greeter"
AGENTLS_STATE_DIR="$tmp/state" "$tmp/bin/agentls" run --yes --mode apply \
	--model "script:$repo/examples/demo.script.json" \
	'Make Greet fall back to "world" for an empty name, add a Farewell function with a test, and run the tests.'

# The scripted model reports what it was written to report; the tests of the
# changed copy are the proof.
say "== the demo's own check: go test ./... in the changed copy"
set +e
$GO test -count=1 ./... >&2
rc=$?
set -e
say "go test ./... exit status: $rc"
if [ $rc -ne 0 ]; then
	say "make demo FAILED: the changed copy's tests fail"
	exit 1
fi
