#!/usr/bin/env bash
# Builds the release archives the ACP registry manifest names
# (acp/registry/agentls/agent.json) and writes the manifest for them.
#
#   scripts/acp-registry.sh VERSION     e.g. scripts/acp-registry.sh 0.2.0
#
# For each platform of the manifest it cross-compiles agentls as `make build`
# does (static, stripped, version stamped) and packs it alone as
# dist/acp/agentls-VERSION-<target>.tar.gz; then it rewrites
# acp/registry/agentls/agent.json with VERSION, the archives' release URLs
# (https://github.com/agentls/agentls/releases/download/vVERSION/…) and their
# sha256. Publishing: upload dist/acp/*.tar.gz to the release vVERSION, commit
# the manifest, and copy acp/registry/agentls (agent.json and icon.svg) into a
# fork of github.com/agentclientprotocol/registry for a pull request
# (docs/ACP.md, "In the ACP registry").
#
# Exit 0 when the archives and the manifest are written; 2 on a bad VERSION; 1
# when a build fails.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
version=${1:-}
if ! [[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
	echo "usage: scripts/acp-registry.sh VERSION (semantic, e.g. 0.2.0; the registry wants x.y.z)" >&2
	exit 2
fi
GO=${GO:-go}
out=$repo/dist/acp
base="https://github.com/agentls/agentls/releases/download/v$version"
mkdir -p "$out"
# The registry's platform names and Go's.
targets=("darwin-aarch64 darwin arm64" "darwin-x86_64 darwin amd64" "linux-aarch64 linux arm64" "linux-x86_64 linux amd64"
	"windows-aarch64 windows arm64" "windows-x86_64 windows amd64")
entries=()
for t in "${targets[@]}"; do
	read -r name goos goarch <<<"$t"
	exe=agentls
	[ "$goos" = windows ] && exe=agentls.exe
	work=$(mktemp -d "${TMPDIR:-/tmp}/agentls-registry.XXXXXX")
	echo "   building agentls $version for $name" >&2
	(cd "$repo" && CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch $GO build -trimpath \
		-ldflags "-s -w -X main.version=$version" -o "$work/$exe" ./cmd/agentls) || { rm -rf "$work"; exit 1; }
	archive=agentls-$version-$name.tar.gz
	# Reproducible: the same build gives the same bytes, and so the same sha256.
	tar -C "$work" --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - "$exe" | gzip -n -9 >"$out/$archive"
	rm -rf "$work"
	sum=$(sha256sum "$out/$archive" | cut -c1-64)
	entries+=("      \"$name\": {
        \"archive\": \"$base/$archive\",
        \"sha256\": \"$sum\",
        \"cmd\": \"./$exe\",
        \"args\": [\"acp\"]
      }")
done
manifest=$repo/acp/registry/agentls/agent.json
description=$(sed -n 's/^  "description": \(".*"\),$/\1/p' "$manifest")
{
	printf '{\n  "id": "agentls",\n  "name": "agentls",\n  "version": "%s",\n' "$version"
	printf '  "description": %s,\n' "$description"
	printf '  "repository": "https://github.com/agentls/agentls",\n'
	printf '  "website": "https://github.com/agentls/agentls/blob/main/docs/ACP.md",\n'
	printf '  "distribution": {\n    "binary": {\n'
	for i in "${!entries[@]}"; do
		sep=","
		[ "$i" -eq $((${#entries[@]} - 1)) ] && sep=""
		printf '%s%s\n' "${entries[$i]}" "$sep"
	done
	printf '    }\n  }\n}\n'
} >"$manifest.tmp"
mv "$manifest.tmp" "$manifest"
echo "   wrote ${manifest#"$repo"/} and ${#entries[@]} archives in ${out#"$repo"/}" >&2
