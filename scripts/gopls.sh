#!/usr/bin/env bash
# Installs gopls, the Go language server the editor suites answer
# agent/references and agent/definition with (docs/PROTOCOL.md §4), into
# the suite cache, once per version, and prints its path. The editor
# suites run it (editors/*/test/run.sh) and hand the path to their tests
# as AGENTLS_GOPLS.
#
#   scripts/gopls.sh        go install golang.org/x/tools/gopls@$GOPLS_VERSION
#
# Exit 0 with the path on stdout; 77 when go is missing; 1 when the
# install failed (the module proxy unreachable); the reason is the last
# line on stderr.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
# The last gopls that builds with go1.26 (v0.24 needs go1.27).
version=${GOPLS_VERSION:-v0.23.0}
dir=${AGENTLS_TEST_CACHE:-$repo/.cache/test}/gopls/$version
command -v go >/dev/null || { echo "go is not installed (gopls is built with it)" >&2; exit 77; }
if [ ! -x "$dir/gopls" ]; then
	mkdir -p "$dir"
	echo "   go install golang.org/x/tools/gopls@$version into ${dir#"$repo"/} (a minute or two, once; output in ${dir#"$repo"/}/install.log)" >&2
	# The user's GOFLAGS (-mod=vendor, a tag) must not change the build;
	# the toolchain is this one, never one downloaded for gopls.
	if ! (cd "$dir" && GOFLAGS= GOTOOLCHAIN=local GOBIN="$dir" go install "golang.org/x/tools/gopls@$version" >"$dir/install.log" 2>&1); then
		tail -n 20 "$dir/install.log" >&2
		echo "go install of gopls $version failed (is the Go module proxy reachable? log: $dir/install.log)" >&2
		exit 1
	fi
fi
echo "$dir/gopls"
