#!/usr/bin/env bash
# Installs what agentls's ACP tests run against (acp/testdata/npm, pinned by
# its package-lock.json): the ACP SDK (@agentclientprotocol/sdk), whose
# client drives `agentls acp` end to end and whose schema/v1/schema.json the
# acp package's types are held to; and acpx, a second ACP client from npm
# (a headless command line for any ACP agent), which drives agentls end to
# end in a temporary workspace. It goes into the suite cache, once per
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
command -v node >/dev/null || { echo "node is not installed (the ACP tests run the ACP SDK's client and acpx on Node 20 or later)" >&2; exit 77; }
command -v npm >/dev/null || { echo "npm is not installed (the ACP tests install the ACP SDK with it)" >&2; exit 77; }
mkdir -p "$dir"
want=$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -c1-16)
if [ "$(cat "$dir/node_modules/.agentls-lock" 2>/dev/null)" != "$want" ]; then
	cp "$src/package.json" "$src/package-lock.json" "$dir/"
	echo "   npm install: the ACP SDK and acpx the ACP tests use, about 60 MB, into ${dir#"$repo"/} (output in ${dir#"$repo"/}/npm-ci.log)" >&2
	# The user's npm configuration (omit, ignore-scripts, a registry mirror
	# with other packages) must not change what the tests run. npm install
	# from the lock file rather than npm ci: acpx's @openclaw/fs-safe names
	# native packages for platforms it never published, which no lock file
	# can hold and npm ci takes for a lock file out of date; what the lock
	# holds is installed as it holds it, in a node_modules made anew.
	rm -rf "$dir/node_modules"
	if ! (cd "$dir" && NPM_CONFIG_USERCONFIG=/dev/null npm install --no-save --include=prod --no-audit --no-fund >"$dir/npm-ci.log" 2>&1); then
		tail -n 20 "$dir/npm-ci.log" >&2
		echo "npm ci of the ACP test packages failed (is the npm registry reachable? log: $dir/npm-ci.log)" >&2
		exit 1
	fi
	echo "$want" >"$dir/node_modules/.agentls-lock"
fi
echo "$dir"
