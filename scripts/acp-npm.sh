#!/usr/bin/env bash
# Installs the ACP SDK that agentls's ACP tests run against (acp/testdata/npm:
# @agentclientprotocol/sdk, pinned by its package-lock.json): its client
# drives `agentls acp` end to end, and its schema/v1/schema.json is what the
# acp package's types are held to. It goes into the suite cache, once per
# version of the lock file; the script prints the directory holding
# node_modules. scripts/test.sh's go suite runs it and passes the directory
# to the tests as AGENTLS_ACP_NPM.
#
# Exit 0 with the directory on stdout; 77 when node or npm is missing; 1
# when the install failed (the registry unreachable); the reason is the last
# line on stderr.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
src=$repo/acp/testdata/npm
dir=${AGENTLS_TEST_CACHE:-$repo/.cache/test}/acp
command -v node >/dev/null || { echo "node is not installed (the ACP tests run the ACP SDK's client on Node 18 or later)" >&2; exit 77; }
command -v npm >/dev/null || { echo "npm is not installed (the ACP tests install the ACP SDK with it)" >&2; exit 77; }
mkdir -p "$dir"
want=$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -c1-16)
if [ "$(cat "$dir/node_modules/.agentls-lock" 2>/dev/null)" != "$want" ]; then
	cp "$src/package.json" "$src/package-lock.json" "$dir/"
	echo "   npm ci: the ACP SDK the ACP tests use, into ${dir#"$repo"/} (output in ${dir#"$repo"/}/npm-ci.log)" >&2
	# The user's npm configuration (omit, ignore-scripts, a registry mirror
	# with other packages) must not change what the tests run.
	if ! (cd "$dir" && NPM_CONFIG_USERCONFIG=/dev/null npm ci --include=prod --no-audit --no-fund >"$dir/npm-ci.log" 2>&1); then
		tail -n 20 "$dir/npm-ci.log" >&2
		echo "npm ci of the ACP test packages failed (is the npm registry reachable? log: $dir/npm-ci.log)" >&2
		exit 1
	fi
	echo "$want" >"$dir/node_modules/.agentls-lock"
fi
echo "$dir"
