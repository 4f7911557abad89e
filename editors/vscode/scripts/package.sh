#!/usr/bin/env bash
# Builds the extension's platform packages, one .vsix per target, each with
# the agentls binary for that platform inside (bin/<target>/agentls,
# agentls.exe on Windows), so the extension works without agentls on PATH:
#
#   OUT/agentls-<target>-<version>.vsix   for linux-x64 linux-arm64
#                                          darwin-x64 darwin-arm64 win32-x64
#
#   scripts/package.sh [OUT]      (default OUT: dist/vscode of the repository)
#
# The binaries are cross-compiled static (CGO_ENABLED=0), -trimpath, stripped
# (-s -w) and stamped with VERSION (default: git describe, as make build
# does). TARGETS="linux-x64 win32-x64" builds only those. The extension is
# bundled by esbuild into dist/extension.js (npm run bundle, which vsce runs
# before packaging); .vscodeignore says what else goes in. npm dependencies
# must be installed (npm ci). Prints the path of each package.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:-$repo/dist/vscode}
targets=(${TARGETS:-linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64})
version=${VERSION:-$(git -C "$repo" describe --tags --always --dirty 2>/dev/null || echo dev)}
ext_version=$(node -p 'require(process.argv[1]).version' "$here/package.json")

# goos_goarch names the Go platform of a VS Code target.
goos_goarch() {
	case $1 in
	linux-x64) echo linux amd64 ;;
	linux-arm64) echo linux arm64 ;;
	darwin-x64) echo darwin amd64 ;;
	darwin-arm64) echo darwin arm64 ;;
	win32-x64) echo windows amd64 ;;
	*) echo "package.sh: unknown target $1 (want linux-x64, linux-arm64, darwin-x64, darwin-arm64 or win32-x64)" >&2; return 1 ;;
	esac
}

for t in "${targets[@]}"; do
	goos_goarch "$t" >/dev/null
done

# Type errors stop the packaging: esbuild only strips the types.
cd "$here"
npx --no-install tsc -p . --noEmit
npx --no-install tsc -p src/webview

mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$here/bin"
ignore=$(mktemp "${TMPDIR:-/tmp}/agentls-vscodeignore.XXXXXX")
trap 'rm -f "$ignore"' EXIT
for t in "${targets[@]}"; do
	platform=$(goos_goarch "$t")
	goos=${platform% *} goarch=${platform#* }
	exe=agentls
	[ "$goos" = windows ] && exe=agentls.exe
	echo "package.sh: go build agentls $version for $goos/$goarch" >&2
	(cd "$repo" && CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath \
		-ldflags "-s -w -X main.version=$version" -o "$here/bin/$t/$exe" ./cmd/agentls)
	chmod 755 "$here/bin/$t/$exe"

	# .vscodeignore, and this target's binary: no other target's.
	{ cat "$here/.vscodeignore"; echo "!bin/$t/$exe"; } >"$ignore"
	vsix=$out/agentls-$t-$ext_version.vsix
	rm -f "$vsix"
	npx --no-install vsce package --no-dependencies --skip-license --target "$t" \
		--ignoreFile "$ignore" --out "$vsix" >&2
	echo "$vsix"
done
