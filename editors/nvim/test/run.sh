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
. scripts/lib/steps.sh
cache=${AGENTLS_TEST_CACHE:-$repo/.cache/test}

skip() {
	echo "$1" >&2
	exit 77
}

# Everything Neovim and agentls write goes under one temp dir, from the
# first nvim on: nothing lands in the user's ~/.cache, ~/.local or /tmp.
# (Go keeps the user's: its build cache and settings follow XDG too, so the
# XDG variables are exported after the build.)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/agentls-nvim-suite.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"/{state,data,config,cache,run,agentls}
xdg=(XDG_STATE_HOME="$tmp/state" XDG_DATA_HOME="$tmp/data" XDG_CONFIG_HOME="$tmp/config" XDG_CACHE_HOME="$tmp/cache")
unset AGENTLS_MODEL ANTHROPIC_API_KEY OPENAI_API_KEY

if ! command -v nvim >/dev/null 2>&1; then
	apt_install "the suite runs the plugin in real Neovim" "$cache/apt-nvim.log" neovim ||
		skip "nvim is not installed and cannot be installed here (needs root and apt-get; see above)"
	command -v nvim >/dev/null 2>&1 || skip "nvim is not installed (and cannot be installed here)"
fi
# tmux, for the test that runs Neovim in a terminal (the review float),
# installed when missing.
if ! command -v tmux >/dev/null 2>&1; then
	apt_install "a test runs Neovim in a terminal under tmux" "$cache/apt-tmux.log" tmux ||
		echo "nvim: tmux cannot be installed here: its test is skipped"
fi
command -v tmux >/dev/null 2>&1 && echo "== nvim: $(tmux -V), for the test in a terminal"
version=$(env "${xdg[@]}" nvim --version | head -n 1)
env "${xdg[@]}" nvim --headless -u NONE -i NONE -c 'if has("nvim-0.7") | qall! | else | cquit | endif' >/dev/null 2>&1 ||
	skip "$version is older than Neovim 0.7"
echo "== nvim: $version"

# What this checkout builds goes into its own .cache/build, never the
# install cache (AGENTLS_TEST_CACHE), which other checkouts may share: a
# suite must test the code beside it.
built=$repo/.cache/build
if [ -z "${AGENTLS_BIN:-}" ]; then
	mkdir -p "$built"
	echo "== nvim: go build -o ${built#"$repo"/}/agentls ./cmd/agentls"
	long "go build" ${GO:-go} build -o "$built/agentls" ./cmd/agentls || { echo "nvim suite: building agentls failed" >&2; exit 1; }
	AGENTLS_BIN=$built/agentls
fi
export AGENTLS_BIN
# The fake ACP agent (engines/enginestest) the engine tests run as engine "fake".
if [ -z "${AGENTLS_FAKE_AGENT_BIN:-}" ]; then
	mkdir -p "$built"
	echo "== nvim: go build -o ${built#"$repo"/}/fakeagent ./engines/enginestest/fakeagent"
	long "go build" ${GO:-go} build -o "$built/fakeagent" ./engines/enginestest/fakeagent || { echo "nvim suite: building the fake agent failed" >&2; exit 1; }
	AGENTLS_FAKE_AGENT_BIN=$built/fakeagent
fi
export AGENTLS_FAKE_AGENT_BIN
# gopls, the language server the code graph's test asks through Neovim's
# other clients (test/lsp_spec.lua), installed into the cache once.
if [ -z "${AGENTLS_GOPLS:-}" ]; then
	echo "== nvim: scripts/gopls.sh (gopls, for the test of agent/references through Neovim)"
	AGENTLS_GOPLS=$(long "gopls" bash scripts/gopls.sh) || { echo "nvim: gopls cannot be installed here: its test is skipped"; AGENTLS_GOPLS=; }
fi
export AGENTLS_GOPLS
export "${xdg[@]}" TMPDIR="$tmp/run" AGENTLS_STATE_DIR="$tmp/agentls"

# run_spec runs one spec file in its own Neovim; the output goes to $out.
run_spec() {
	cd "$plugin" && timeout -k 5 "${AGENTLS_NVIM_SPEC_TIMEOUT:-240}" nvim --headless -u NONE -i NONE \
		--cmd "set rtp^=$plugin" \
		-c "lua dofile('$plugin/test/runner.lua').main('$1')" >"$out" 2>&1
}

passed=0 failed=0 bad=()
for spec in "$plugin"/test/*_spec.lua; do
	name=${spec#"$repo"/}
	echo "== nvim: nvim --headless -u NONE -i NONE  $name"
	out=$tmp/out.txt
	long "running $name" run_spec "$spec"
	rc=$?
	# :checkhealth prints its progress without a newline: keep it out.
	sed 's/Running healthchecks\.\.\.//g' "$out" | tr -d '\r' >"$out.clean"
	cat "$out.clean"
	p=$(grep -c '^ok - ' "$out.clean")
	grep '^ok - .* # SKIP ' "$out.clean" >>"$tmp/skipped"
	f=$(grep -c '^not ok - ' "$out.clean")
	passed=$((passed + p))
	failed=$((failed + f))
	if [ $rc -ne 0 ]; then
		[ "$f" -eq 0 ] && failed=$((failed + 1)) && echo "not ok - $name exited with $rc"
		bad+=("$name")
	fi
done

skips=$(cat "$tmp"/skipped 2>/dev/null | wc -l)
echo "== nvim: $passed passed ($skips skipped), $failed failed"
if [ "$skips" -gt 0 ] && [ "${CI:-}" = true ]; then
	echo "nvim: $skips tests skipped, which CI does not allow"
	failed=$((failed + skips))
fi
if [ ${#bad[@]} -gt 0 ] || [ "$failed" -gt 0 ]; then
	echo "nvim suite failed: ${bad[*]}" >&2
	exit 1
fi
exit 0
