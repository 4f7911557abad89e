#!/usr/bin/env bash
# Installs the external agents agentls runs as engines, which its engine
# tests run offline against local fake model servers (engines/testdata/npm:
# @zed-industries/claude-agent-acp 0.17.1 and 0.23.1,
# @zed-industries/codex-acp 0.16.0 with its native binary for this platform,
# @google/gemini-cli 0.61.0, pinned by its package-lock.json) into the suite
# cache, once per version of the lock file, and prints the directory holding
# node_modules. scripts/test.sh's go suite runs it and passes the directory
# to the tests as AGENTLS_ENGINES_NPM.
#
# Exit 0 with the directory on stdout; 77 when node or npm is missing; 1
# when the install failed (the registry unreachable); the reason is the last
# line on stderr.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
src=$repo/engines/testdata/npm
dir=${AGENTLS_TEST_CACHE:-$repo/.cache/test}/engines
command -v node >/dev/null || { echo "node is not installed (the engine tests run Claude Code, Codex and Gemini CLI on Node 20 or later)" >&2; exit 77; }
command -v npm >/dev/null || { echo "npm is not installed (the engine tests install Claude Code, Codex and Gemini CLI with it)" >&2; exit 77; }
mkdir -p "$dir"
want=$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -c1-16)
if [ "$(cat "$dir/node_modules/.agentls-lock" 2>/dev/null)" != "$want" ]; then
	cp "$src/package.json" "$src/package-lock.json" "$dir/"
	echo "   npm ci: the agents the engine tests run, about 500 MB, into ${dir#"$repo"/} (output in ${dir#"$repo"/}/npm-ci.log)" >&2
	# The user's npm configuration (omit, ignore-scripts, a registry mirror
	# with other packages) must not change what the tests run. Optional
	# dependencies are kept: codex-acp's native binary is one.
	if ! (cd "$dir" && NPM_CONFIG_USERCONFIG=/dev/null npm ci --include=prod --include=optional --no-audit --no-fund >"$dir/npm-ci.log" 2>&1); then
		tail -n 20 "$dir/npm-ci.log" >&2
		echo "npm ci of the engine test packages failed (is the npm registry reachable? log: $dir/npm-ci.log)" >&2
		exit 1
	fi
	echo "$want" >"$dir/node_modules/.agentls-lock"
fi
# claude-agent-acp 0.17.1 is installed under an alias, whose bin npm links
# nowhere (0.23.1 has the name): made executable as a linked bin is, so
# that the tests can run it through npx from a project of its own, as Zed
# runs an older version.
chmod +x "$dir/node_modules/claude-agent-acp-0.17/dist/index.js" 2>/dev/null
echo "$dir"
