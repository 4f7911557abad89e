#!/usr/bin/env bash
# The Neovim plugin's suite: every test/*_spec.lua in real Neovim, headless,
# against the agentls binary (built here unless AGENTLS_BIN is set) with a
# scripted model. Exit 0 all passed, 1 a failure, 77 cannot run here (the
# reason is the last line on stderr).
set -uo pipefail

# The whole run is bounded.
if [ -z "${AGENTLS_NVIM_BOUNDED:-}" ]; then
	AGENTLS_NVIM_BOUNDED=1 timeout -k 10 "${AGENTLS_NVIM_TIMEOUT:-600}" bash "$0" "$@"
	rc=$?
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		echo "nvim suite: timed out after ${AGENTLS_NVIM_TIMEOUT:-600}s" >&2
		exit 1
	fi
	exit $rc
fi

here=$(cd "$(dirname "$0")" && pwd)
plugin=$(dirname "$here")
repo=$(cd "$plugin/../.." && pwd)
cd "$repo"

skip() {
	echo "$1" >&2
	exit 77
}

if ! command -v nvim >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "== nvim: installing Neovim with apt"
		apt-get update -qq >/dev/null 2>&1
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq neovim >/dev/null 2>&1 ||
			skip "neovim could not be installed with apt-get"
	fi
	command -v nvim >/dev/null 2>&1 || skip "nvim is not installed (and cannot be installed here)"
fi
nvim --headless -u NONE -i NONE -c 'if has("nvim-0.7") | qall! | else | cquit | endif' >/dev/null 2>&1 ||
	skip "Neovim $(nvim --version | head -n 1) is older than 0.7"
echo "== nvim: $(nvim --version | head -n 1)"

cache=${XDG_CACHE_HOME:-$HOME/.cache}/agentls-test
if [ -z "${AGENTLS_BIN:-}" ]; then
	mkdir -p "$cache"
	echo "== nvim: go build -o $cache/agentls ./cmd/agentls"
	${GO:-go} build -o "$cache/agentls" ./cmd/agentls || { echo "nvim suite: building agentls failed" >&2; exit 1; }
	AGENTLS_BIN=$cache/agentls
fi
export AGENTLS_BIN

# Everything Neovim and agentls write goes under one temp dir.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"/{state,data,config,cache,run,agentls}
export XDG_STATE_HOME=$tmp/state XDG_DATA_HOME=$tmp/data XDG_CONFIG_HOME=$tmp/config XDG_CACHE_HOME=$tmp/cache
export TMPDIR=$tmp/run AGENTLS_STATE_DIR=$tmp/agentls
unset AGENTLS_MODEL ANTHROPIC_API_KEY OPENAI_API_KEY

passed=0 failed=0 bad=()
for spec in "$plugin"/test/*_spec.lua; do
	name=${spec#"$repo"/}
	echo "== nvim: nvim --headless -u NONE -i NONE  $name"
	out=$tmp/out.txt
	(cd "$plugin" && timeout -k 5 "${AGENTLS_NVIM_SPEC_TIMEOUT:-240}" nvim --headless -u NONE -i NONE \
		--cmd "set rtp^=$plugin" \
		-c "lua dofile('$plugin/test/runner.lua').main('$spec')" >"$out" 2>&1)
	rc=$?
	# :checkhealth prints its progress without a newline: keep it out.
	sed 's/Running healthchecks\.\.\.//g' "$out" | tr -d '\r' >"$out.clean"
	cat "$out.clean"
	p=$(grep -c '^ok - ' "$out.clean")
	f=$(grep -c '^not ok - ' "$out.clean")
	passed=$((passed + p))
	failed=$((failed + f))
	if [ $rc -ne 0 ]; then
		[ "$f" -eq 0 ] && failed=$((failed + 1)) && echo "not ok - $name exited with $rc"
		bad+=("$name")
	fi
done

echo "== nvim: $passed passed, $failed failed"
if [ ${#bad[@]} -gt 0 ] || [ "$failed" -gt 0 ]; then
	echo "nvim suite failed: ${bad[*]}" >&2
	exit 1
fi
exit 0
