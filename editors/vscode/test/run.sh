#!/usr/bin/env bash
# The VS Code extension's suite, run by scripts/test.sh (make test):
#
# It needs Node 20 and npm: the unit tests run on Node 20 or later, the
# end-to-end test's code-server 4.100.3 on Node 20 only.
#
#   1. npm ci of the extension (cached while package-lock.json is unchanged)
#   2. eslint and the strict TypeScript build
#   3. platform packages by scripts/package.sh: this machine's (the one
#      the end-to-end test installs) and win32-x64 (a cross-compiled one, in
#      the other executable format), the extension bundled, one .vsix per
#      target; TARGETS="…" names others, and `make vsix` builds and tests
#      all five (linux-arm64, darwin-x64 and darwin-arm64 besides: about
#      2.5 minutes of CPU each the first time, seconds once Go's build cache
#      has them)
#   4. unit tests (node's test runner, a vscode stub, the real agentls
#      binary: AGENTLS_BIN, else the one packaged for this machine)
#   5. the packaging test: each package's files, and its binary's format,
#      architecture, stripping and version stamp
#   6. the end-to-end tests in code-server 4.100.3 through chromium, with
#      the linux-x64 package installed (test/setup.sh installs both, cached),
#      the fake ACP agent of engines/enginestest as an engine, and gopls
#      (scripts/gopls.sh) serving a Go module of the workspace through a
#      language client of the test's own (test/e2e/gopls-client):
#      e2e.test.mjs in a trusted folder, trust.test.mjs in Restricted Mode
#      (a code-server of its own, one after the other)
#
# Exit 0 when everything passed, 1 on a failure, 77 when it cannot run here;
# then the reason is the last line on stderr. Bounded by AGENTLS_VSCODE_TIMEOUT
# seconds (default 1200), a cold install of code-server and cold builds of
# the five binaries included.
set -uo pipefail

if [ -z "${AGENTLS_VSCODE_BOUNDED:-}" ]; then
	export AGENTLS_VSCODE_BOUNDED=1
	timeout --kill-after=15 "${AGENTLS_VSCODE_TIMEOUT:-1200}" bash "$0" "$@"
	rc=$?
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		echo "vscode suite: timed out after ${AGENTLS_VSCODE_TIMEOUT:-1200}s" >&2
		exit 1
	fi
	exit $rc
fi

here=$(cd "$(dirname "$0")/.." && pwd)
repo=$(cd "$here/../.." && pwd)
. "$repo/scripts/lib/steps.sh"
cache=${AGENTLS_TEST_CACHE:-$repo/.cache/test}/vscode
mkdir -p "$cache"
work=$(mktemp -d "${TMPDIR:-/tmp}/agentls-vscode-suite.XXXXXX")
# KEEP=1 keeps it (the end-to-end tests' workspaces, logs and gopls's log
# are under it), for a failure to be read afterwards.
trap 'if [ -z "${KEEP:-}" ]; then rm -rf "$work"; else echo "kept $work" >&2; fi' EXIT

passed=0 failed=0
cannot() { echo "vscode suite cannot run here: $*" >&2; exit 77; }
step() { echo "== vscode: $*"; }
# count adds the pass/fail lines of node's test runner in $1 to the totals;
# a run that exited $2 != 0 without a failing test (a file that did not
# load, a failing hook) counts as one failure.
count() {
	local p f
	p=$(grep -E '^ℹ pass [0-9]+' "$1" | tail -n 1 | awk '{print $3}')
	f=$(grep -E '^ℹ fail [0-9]+' "$1" | tail -n 1 | awk '{print $3}')
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	if [ "${2:-0}" -ne 0 ] && [ "${f:-0}" -eq 0 ]; then
		echo "FAIL: $1: the test runner exited $2" >&2
		failed=$((failed + 1))
	fi
}
finish() {
	echo "vscode: $passed passed, $failed failed"
	[ "$failed" -eq 0 ] && [ "${1:-0}" -eq 0 ]
	exit $?
}

command -v node >/dev/null || cannot "node is not installed (the suite needs Node 20 and npm)"
command -v npm >/dev/null || cannot "npm is not installed (the suite needs Node 20 and npm)"
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 20 ] || cannot "Node 20 is needed, this is $(node --version)"
step "node $(node --version), npm $(npm --version)"
[ "$node_major" = 20 ] || echo "   the end-to-end test will be skipped: code-server 4.100.3 runs on Node 20 only"

# Everything the tests write goes under the work dir.
mkdir -p "$work/tmp"
export TMPDIR=$work/tmp

# 1. The extension's npm dependencies.
cd "$here"
want=$(sha256sum package-lock.json | cut -c1-16)
if [ "$(cat node_modules/.agentls-lock 2>/dev/null)" != "$want" ]; then
	# Whatever the user's npm config says (omit=dev, ignore-scripts, …), the
	# build and test tools are needed.
	step "npm ci: the extension's build and test tools into editors/vscode/node_modules (output in ${cache#"$repo"/}/npm-ci.log)"
	long "npm ci" npm ci --include=dev --no-audit --no-fund >"$cache/npm-ci.log" 2>&1 ||
		{ tail -n 20 "$cache/npm-ci.log" >&2; cannot "npm ci failed (is the npm registry reachable? log: $cache/npm-ci.log)"; }
	echo "$want" >node_modules/.agentls-lock
fi

# 2. Lint and the strict build.
step "eslint, tsc --strict"
if long "eslint" npx --no-install eslint src test/unit && long "tsc" npx --no-install tsc -p . &&
	long "tsc of the webview" npx --no-install tsc -p src/webview; then
	passed=$((passed + 1))
else
	echo "FAIL: eslint or tsc" >&2
	failed=$((failed + 1))
fi

# 3. The platform packages, every binary stamped with one version.
export VERSION=${VERSION:-$(git -C "$repo" describe --tags --always --dirty 2>/dev/null || echo dev)}
host=$(node -p 'process.platform + "-" + process.arch')
vsixes=$work/vsix
# This machine's package, and Windows's as a cross-compiled one; make vsix
# builds all five.
export TARGETS=${TARGETS:-$(
	case $host in
	linux-x64 | linux-arm64 | darwin-x64 | darwin-arm64) echo "$host win32-x64" ;;
	*) echo "linux-x64 win32-x64" ;;
	esac
)}
step "scripts/package.sh: agentls $VERSION for $TARGETS, one .vsix each (output in ${cache#"$repo"/}/package.log; make vsix builds all five)"
echo "   (the first time this compiles every package for each platform, about 2.5 minutes of CPU per platform)"
command -v go >/dev/null || cannot "go is not installed: the packages carry agentls built from this checkout"
if long "packaging" scripts/package.sh "$vsixes" >"$cache/package.log" 2>&1; then
	passed=$((passed + 1))
	ls -l "$vsixes" | awk 'NR > 1 {printf "   %s %6.2f MB\n", $9, $5 / 1048576}'
else
	tail -n 30 "$cache/package.log" >&2
	echo "FAIL: scripts/package.sh" >&2
	failed=$((failed + 1))
	finish 1
fi

# 4. Unit tests, against the binary packaged for this machine.
if [ -z "${AGENTLS_BIN:-}" ]; then
	AGENTLS_BIN=$here/bin/$host/agentls
	if [ ! -x "$AGENTLS_BIN" ]; then
		AGENTLS_BIN=$work/agentls
		step "go build: agentls for this machine ($host is not a packaged platform)"
		(cd "$repo" && long "go build" env CGO_ENABLED=0 go build -trimpath -o "$AGENTLS_BIN" ./cmd/agentls) || { echo "go build failed" >&2; exit 1; }
	fi
fi
export AGENTLS_BIN
step "unit tests: node --test out/test/unit/ (agentls: ${AGENTLS_BIN#"$repo"/})"
long "the unit tests" node --test --test-reporter=spec --require ./out/test/unit/vscode-stub/register.js out/test/unit/ 2>&1 | tee "$work/unit.log"
rc=${PIPESTATUS[0]}
count "$work/unit.log" $rc

# 5. What each package holds.
step "packaging test: node --test test/package/"
long "the packaging test" env VSIX_DIR="$vsixes" node --test --test-reporter=spec test/package/ 2>&1 | tee "$work/package-test.log"
rc=${PIPESTATUS[0]}
count "$work/package-test.log" $rc

# 6. End to end in code-server.
step "end-to-end setup (code-server 4.100.3, chromium)"
e2e_dir=$(bash "$here/test/setup.sh")
rc=$?
e2e_dir=$(tail -n 1 <<<"$e2e_dir")
if [ "$rc" -eq 77 ]; then
	echo "vscode: $passed passed, $failed failed before the end-to-end test" >&2
	cannot "the end-to-end test's editor could not be installed (see above)"
elif [ "$rc" -ne 0 ]; then
	echo "FAIL: test/setup.sh exited $rc" >&2
	failed=$((failed + 1))
	finish 1
fi
# The fake ACP agent (engines/enginestest) the end-to-end test runs as engine "fake".
if [ -z "${AGENTLS_FAKE_AGENT_BIN:-}" ]; then
	AGENTLS_FAKE_AGENT_BIN=$work/fakeagent
	step "go build: the fake ACP agent of engines/enginestest"
	(cd "$repo" && long "go build" go build -o "$AGENTLS_FAKE_AGENT_BIN" ./engines/enginestest/fakeagent) || { echo "FAIL: go build of the fake agent" >&2; failed=$((failed + 1)); finish 1; }
fi
export AGENTLS_FAKE_AGENT_BIN
# gopls, which a Go language client of the test's own runs for refs/
# (test/e2e/gopls-client), so that agentls's agent/references reach it.
if [ -z "${AGENTLS_GOPLS:-}" ]; then
	step "scripts/gopls.sh: gopls, for agentls's questions to VS Code's Go language server"
	AGENTLS_GOPLS=$(long "gopls" bash "$repo/scripts/gopls.sh") ||
		{ echo "   gopls cannot be installed here: the end-to-end test does not check the neighbours it gives"; AGENTLS_GOPLS=; }
fi
export AGENTLS_GOPLS
ext_version=$(node -p 'require("./package.json").version')
vsix=$vsixes/agentls-linux-x64-$ext_version.vsix
step "end-to-end tests: node --test test/e2e/e2e.test.mjs test/e2e/trust.test.mjs, with ${vsix#"$work"/} installed"
mkdir -p "$work/shots"
mkdir -p "$work/home"
long "the end-to-end tests" env HOME="$work/home" E2E_DIR="$e2e_dir" VSIX="$vsix" SHOTS="$work/shots" \
	node --test --test-concurrency=1 --test-reporter=spec test/e2e/e2e.test.mjs test/e2e/trust.test.mjs 2>&1 | tee "$work/e2e.log"
rc=${PIPESTATUS[0]}
count "$work/e2e.log" $rc
if grep -qE '^ℹ fail [1-9]' "$work/e2e.log"; then
	# Keep what the browser showed for whoever reads the failure.
	mkdir -p "$cache/last-failure"
	cp "$work"/shots/*.png "$cache/last-failure/" 2>/dev/null
	echo "screenshots of the failed end-to-end run: $cache/last-failure" >&2
fi
finish 0
