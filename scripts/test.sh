#!/usr/bin/env bash
# Runs agentls's test suites and reports what ran and what was skipped.
#
#   scripts/test.sh            every suite: go, then editors/*/test/run.sh
#   scripts/test.sh go nvim    only these
#
# Each editor suite is editors/<name>/test/run.sh: it installs what it needs
# where it can (Debian packages, npm), exits 0 on success, 1 on failure and
# 77 when it cannot run here, with the reason as its last line on stderr.
# With CI=true a skipped suite is a failure: CI runs everything.
#
# What the suites build and download stays in .cache/test of the checkout
# (AGENTLS_TEST_CACHE moves it); `make clean` removes it. Nothing is left in
# the system's temporary directory.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/steps.sh
work=$(mktemp -d "${TMPDIR:-/tmp}/agentls-test.XXXXXX")
trap 'rm -rf "$work"' EXIT

suites=("$@")
if [ ${#suites[@]} -eq 0 ]; then
	# Go, then every editor plugin that has a suite.
	suites=(go)
	for run in editors/*/test/run.sh; do
		[ -x "$run" ] && suites+=("$(basename "$(dirname "$(dirname "$run")")")")
	done
fi

passed=() failed=() skipped=()
GO=${GO:-go}

echo "== make test: suites ${suites[*]}"
for s in "${suites[@]}"; do
	case $s in
	go) echo "   go: the Go packages (needs Go; the first run downloads the modules through $($GO env GOPROXY 2>/dev/null || echo the module proxy)); with Node and npm, the MCP tests' npm servers and SDK, about 30 MB, the ACP SDK and acpx, about 60 MB, and the agents the engine tests run, about 500 MB, cached" ;;
	nvim) echo "   nvim: the Neovim plugin in Neovim 0.7+, headless and in a terminal under tmux (installs Debian's neovim and tmux when missing)" ;;
	emacs) echo "   emacs: the Emacs package in Emacs 28+, in batch and in a terminal under tmux (installs Debian's emacs-nox, tmux, and elpa-eglot for an Emacs without eglot, when missing)" ;;
	vscode) echo "   vscode: the VS Code extension (needs Node 20 and npm; when missing, installs chromium and build headers with apt, hundreds of MB, and code-server 4.100.3 from npm)" ;;
	esac
done

run_go() {
	echo "== go: go build ./... (the first time: module downloads and a full compile, two or three minutes on two cores)"
	long "go build ./..." $GO build ./... || return 1
	echo "== go: go vet ./..."
	long "go vet ./..." $GO vet ./... || return 1
	echo "== go: GOOS=windows go vet ./... (the Windows build and its tests still compile)"
	long "GOOS=windows go vet ./..." env GOOS=windows $GO vet ./... || return 1
	echo "== go: gofmt -l"
	local unformatted
	unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.cache/*'))
	if [ -n "$unformatted" ]; then
		echo "not gofmt-ed:"; echo "$unformatted"; return 1
	fi
	echo "== go: the npm MCP servers and SDK the MCP tests run against (scripts/mcp-npm.sh)"
	local npm_dir rc
	npm_dir=$(bash scripts/mcp-npm.sh)
	rc=$?
	case $rc in
	0)
		export AGENTLS_MCP_NPM=$npm_dir
		echo "   in ${npm_dir#"$PWD"/}"
		;;
	77)
		# The tests skip with the reason; under CI=true they fail.
		echo "   not installed: the MCP tests with real servers will be skipped"
		;;
	*) return 1 ;;
	esac
	echo "== go: the ACP SDK the ACP tests run against (scripts/acp-npm.sh)"
	npm_dir=$(bash scripts/acp-npm.sh)
	rc=$?
	case $rc in
	0)
		export AGENTLS_ACP_NPM=$npm_dir
		echo "   in ${npm_dir#"$PWD"/}"
		;;
	77)
		echo "   not installed: the ACP tests with the SDK's client and schema will be skipped"
		;;
	*) return 1 ;;
	esac
	echo "== go: the agents the engine tests run: Claude Code, Codex, Gemini CLI (scripts/engines-npm.sh)"
	npm_dir=$(bash scripts/engines-npm.sh)
	rc=$?
	case $rc in
	0)
		export AGENTLS_ENGINES_NPM=$npm_dir
		echo "   in ${npm_dir#"$PWD"/}"
		;;
	77)
		# The tests skip with the reason; under CI=true they fail.
		echo "   not installed: the engine tests with the real agents will be skipped"
		;;
	*) return 1 ;;
	esac
	echo "== go: go test ./... (three to five minutes on two cores: the engine tests start the real agents)"
	long "go test ./..." $GO test -count=1 -timeout 900s ./... || return 1
	local race=()
	for d in rpc handlers editors/headless workforce; do
		[ -d "$d" ] && race+=("./$d/...")
	done
	echo "== go: race detector on the concurrent core: go test -race ${race[*]}"
	echo "   (the race build compiles everything again with -race: about two minutes on 2 cores the first time)"
	long "go test -race" $GO test -count=1 -race -short -timeout 900s "${race[@]}" || return 1
	return 0
}

for s in "${suites[@]}"; do
	start=$(date +%s)
	if [ "$s" = go ]; then
		run_go
		rc=$?
	else
		script="editors/$s/test/run.sh"
		if [ ! -x "$script" ]; then
			echo "== $s: no suite at $script"
			rc=77
			reason="no test suite in this checkout"
		else
			echo "== $s: $script"
			errf=$work/$s.stderr
			# stdout as it is; stderr shown and kept, for the reason of a skip
			{
				bash "$script" 2>&1 1>&3 3>&- | tee "$errf"
				rc=${PIPESTATUS[0]}
			} 3>&1 1>&2
			reason=$(tail -n 1 "$errf")
			rm -f "$errf"
		fi
	fi
	took=$(( $(date +%s) - start ))
	case $rc in
	0) passed+=("$s (${took}s)") ;;
	77) skipped+=("$s: ${reason:-no reason given}") ;;
	*) failed+=("$s (exit $rc, ${took}s)") ;;
	esac
done

echo
echo "== summary"
for p in "${passed[@]}"; do echo "ran and passed: $p"; done
for f in "${failed[@]}"; do echo "FAILED: $f"; done
for k in "${skipped[@]}"; do echo "skipped: $k"; done
if [ "${CI:-}" = true ] && [ ${#skipped[@]} -gt 0 ]; then
	echo "CI=true: a skipped suite is a failure"
	failed+=("${skipped[@]}")
	skipped=()
fi
echo "suites: ${#passed[@]} passed, ${#failed[@]} failed, ${#skipped[@]} skipped"
[ ${#failed[@]} -eq 0 ]
