#!/usr/bin/env bash
# The Emacs package's suite: byte-compilation with warnings as errors,
# checkdoc, then the ERT tests in real Emacs against the built agentls.
#
#   editors/emacs/test/run.sh            (AGENTLS_BIN=... to test a given binary)
#
# Exits 0 when everything passed, 1 on a failure, 77 when Emacs cannot be
# had here (the reason is the last line on stderr).
set -uo pipefail
cd "$(dirname "$0")/../../.."
repo=$PWD
pkg=editors/emacs

# The whole suite is bounded: re-run this script under timeout once.
if [ -z "${AGENTLS_EMACS_BOUNDED:-}" ]; then
	AGENTLS_EMACS_BOUNDED=1 exec timeout --kill-after=10 600 bash "$0" "$@"
fi

skip() { echo "emacs: $*" >&2; exit 77; }
. scripts/lib/steps.sh
cache=${AGENTLS_TEST_CACHE:-$repo/.cache/test}

# Emacs runs with a HOME, a TMPDIR and XDG directories of its own under the
# work dir: nothing lands in the user's ~/.emacs.d (native compilation
# writes there even with -Q) or in /tmp.
work=$(mktemp -d "${TMPDIR:-/tmp}/agentls-emacs-suite.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home" "$work/tmp"
own=(HOME="$work/home" TMPDIR="$work/tmp" XDG_CONFIG_HOME="$work/home/.config"
	XDG_CACHE_HOME="$work/home/.cache" XDG_DATA_HOME="$work/home/.local/share" XDG_STATE_HOME="$work/home/.local/state")

# Emacs ≥ 28 (Debian's emacs-nox, with jsonrpc.el), installed when missing.
if ! command -v emacs >/dev/null 2>&1; then
	apt_install "the suite runs the package in real Emacs" "$cache/apt-emacs.log" emacs-nox ||
		skip "emacs is not installed and cannot be installed here (needs root and apt-get; see above)"
fi
version=$(env "${own[@]}" emacs --version | head -n 1)
env "${own[@]}" emacs --batch -Q --eval '(unless (and (>= emacs-major-version 28) (require (quote jsonrpc) nil t)) (kill-emacs 3))' 2>/dev/null ||
	skip "this Emacs is older than 28 or lacks jsonrpc.el: $version"
echo "== emacs: $version"

# eglot, for the test of a client that declares no resource operations:
# built in from Emacs 29, Debian's elpa-eglot (1.9) before; installed when
# missing.
if ! env "${own[@]}" emacs --batch -Q --eval "(unless (or (require 'eglot nil t) (file-expand-wildcards \"/usr/share/emacs/site-lisp/elpa-src/eglot-*\")) (kill-emacs 3))" 2>/dev/null; then
	apt_install "a test drives agentls from eglot" "$cache/apt-eglot.log" elpa-eglot ||
		echo "emacs: eglot cannot be installed here: its test is skipped"
fi

# tmux, for the tests that run Emacs in a terminal (C-g, C-x C-c),
# installed when missing.
if ! command -v tmux >/dev/null 2>&1; then
	apt_install "two tests run Emacs in a terminal under tmux" "$cache/apt-tmux.log" tmux ||
		echo "emacs: tmux cannot be installed here: its tests are skipped"
fi
command -v tmux >/dev/null 2>&1 && echo "== emacs: $(tmux -V), for the tests in a terminal"

# What this checkout builds goes into its own .cache/build, never the
# install cache (AGENTLS_TEST_CACHE), which other checkouts may share: a
# suite must test the code beside it.
built=$repo/.cache/build
if [ -z "${AGENTLS_BIN:-}" ]; then
	mkdir -p "$built"
	echo "== emacs: go build -o ${built#"$repo"/}/agentls ./cmd/agentls"
	long "go build" ${GO:-go} build -o "$built/agentls" ./cmd/agentls || { echo "emacs: cannot build agentls" >&2; exit 1; }
	AGENTLS_BIN=$built/agentls
fi
export AGENTLS_BIN
# The fake ACP agent (engines/enginestest) the engine tests run as engine "fake".
if [ -z "${AGENTLS_FAKE_AGENT_BIN:-}" ]; then
	mkdir -p "$built"
	echo "== emacs: go build -o ${built#"$repo"/}/fakeagent ./engines/enginestest/fakeagent"
	long "go build" ${GO:-go} build -o "$built/fakeagent" ./engines/enginestest/fakeagent || { echo "emacs: cannot build the fake agent" >&2; exit 1; }
	AGENTLS_FAKE_AGENT_BIN=$built/fakeagent
fi
export AGENTLS_FAKE_AGENT_BIN
# gopls, the language server the code graph's test asks through eglot,
# installed into the cache once.
if [ -z "${AGENTLS_GOPLS:-}" ]; then
	echo "== emacs: scripts/gopls.sh (gopls, for the test of agent/references through eglot)"
	AGENTLS_GOPLS=$(long "gopls" bash scripts/gopls.sh) || { echo "emacs: gopls cannot be installed here: its test is skipped"; AGENTLS_GOPLS=; }
fi
export AGENTLS_GOPLS
# From here on, only Emacs (and the agentls it starts) run: Go is done.
export "${own[@]}"

status=0

# The package is agentls.el and the files it loads, all in $pkg.
cp "$pkg"/*.el "$work/"
files=("$work"/*.el)

echo "== emacs: byte-compile with warnings as errors, each file in an Emacs of its own"
# One Emacs per file: a file that uses another without saying so cannot
# hide behind one compiled before it.
compiled=ok
for f in "${files[@]}"; do
	emacs --batch -Q -L "$work" --eval '(setq byte-compile-error-on-warn t)' \
		-f batch-byte-compile "$f" 2>&1 | grep -v '^Loading' || true
	if [ ! -f "${f}c" ]; then
		echo "byte-compile: ${f##*/} FAILED"
		compiled=FAILED
	fi
done
echo "byte-compile: $compiled (${#files[@]} files)"
[ "$compiled" = ok ] || status=1

echo "== emacs: checkdoc"
out=$(emacs --batch -Q --eval '
(progn
  (require (quote checkdoc))
  (setq checkdoc-diagnostic-buffer "*agentls-checkdoc*")
  (dolist (f command-line-args-left)
    (with-current-buffer (find-file-noselect f) (checkdoc-current-buffer t)))
  (with-current-buffer (get-buffer-create "*agentls-checkdoc*")
    (princ (buffer-string))))' "${files[@]}" 2>/dev/null | grep -E '^[^ ]+:[0-9]+:' || true)
if [ -n "$out" ]; then
	echo "$out"
	echo "checkdoc: FAILED"
	status=1
else
	echo "checkdoc: ok"
fi

echo "== emacs: ERT tests (emacs --batch -Q -L $pkg -l $pkg/test/agentls-test.el -f ert-run-tests-batch-and-exit)"
log=$work/ert.log
# The compiled package is what users run: test that one.
long "the ERT tests" emacs --batch -Q -L "$work" -L "$pkg/test" -l "$pkg/test/agentls-test.el" \
	-f ert-run-tests-batch-and-exit >"$log" 2>&1
ert=$?
grep -v -E '^(Loading|\[jsonrpc\] Server exited)' "$log"
if [ $ert -ne 0 ]; then
	status=1
fi
summary=$(grep -E '^Ran [0-9]+ tests' "$log" | tail -n 1)
echo "emacs: ${summary:-no ERT summary (Emacs exited $ert)}"
# ERT counts a test that quit (C-g escaping it) as neither passed nor failed.
quits=$(grep -cE '^ +QUIT ' "$log" || true)
if [ "$quits" -gt 0 ]; then
	echo "emacs: $quits ERT tests quit"
	status=1
fi
skipped=$(grep -cE '^ +SKIPPED ' "$log" || true)
if [ "$skipped" -gt 0 ] && [ "${CI:-}" = true ]; then
	echo "emacs: $skipped ERT tests skipped, which CI does not allow"
	status=1
fi
cd "$repo"
exit $status
