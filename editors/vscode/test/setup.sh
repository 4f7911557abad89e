#!/usr/bin/env bash
# Installs what the VS Code end-to-end test needs, and caches it so that a
# second run takes seconds:
#
#   Debian:  chromium (driven by playwright-core), ripgrep, and the headers that
#            code-server's native modules (node-pty, kerberos, native-keymap,
#            @vscode/spdlog...) build against.
#   npm:     code-server 4.100.3 (VS Code 1.100.3, the last release for Node 20)
#            and playwright-core, at the versions of test/e2e/package-lock.json,
#            into $AGENTLS_TEST_CACHE/vscode/e2e.
#
# It exits 0 when everything is in place, 77 when it cannot be installed here
# (no root for apt, no registry), with the reason as the last line on stderr.
# Usage: test/setup.sh            (prints the e2e install dir as its last stdout line)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${AGENTLS_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agentls-test}/vscode
e2e_dir=$cache/e2e
lock=$here/e2e/package-lock.json

log() { echo "setup: $*" >&2; }
cannot() { echo "cannot set up the VS Code end-to-end test: $*" >&2; exit 77; }

# --- Debian packages ---------------------------------------------------------
debs=(chromium ripgrep libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev pkg-config build-essential python3)
missing=()
for p in "${debs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	[ "$(id -u)" = 0 ] || cannot "Debian packages missing (${missing[*]}) and not root to install them"
	command -v apt-get >/dev/null || cannot "Debian packages missing (${missing[*]}) and no apt-get"
	log "apt-get install ${missing[*]}"
	apt-get update -q >&2 || cannot "apt-get update failed"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2 ||
		cannot "apt-get install ${missing[*]} failed"
fi
[ -x /usr/bin/chromium ] || cannot "/usr/bin/chromium is missing after installing chromium"
command -v node >/dev/null || cannot "node is not installed"
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" = 20 ] || cannot "code-server 4.100.3 needs Node 20, this is Node $(node --version)"

# --- code-server and playwright-core -----------------------------------------
want=$(sha256sum "$lock" | cut -c1-16)
if [ -f "$e2e_dir/.installed" ] && [ "$(cat "$e2e_dir/.installed")" = "$want" ] &&
	[ -x "$e2e_dir/node_modules/.bin/code-server" ]; then
	log "code-server cached in $e2e_dir"
	echo "$e2e_dir"
	exit 0
fi

log "installing code-server 4.100.3 and playwright-core into $e2e_dir (a few minutes, once)"
rm -rf "$e2e_dir"
mkdir -p "$e2e_dir"
cp "$here/e2e/package.json" "$lock" "$e2e_dir/"

# There is no route to GitHub here: @vscode/ripgrep's postinstall (1.15.11 in
# code-server's shrinkwrap) takes its prebuilt download from a cache dir under
# os.tmpdir() when the archive is there, so put Debian's rg there in the shape
# it expects: rg at the top of a .tar.gz.
tmp=$(mktemp -d "$cache/tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
rgcache=$tmp/vscode-ripgrep-cache-1.15.11
mkdir -p "$rgcache/stage"
cp "$(command -v rg)" "$rgcache/stage/rg"
tar -C "$rgcache/stage" -czf "$rgcache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" rg

# As root, code-server's postinstall refuses to run without unsafe-perm;
# node-pty's build runs npx, which must not stop to ask.
export npm_config_unsafe_perm=true npm_config_yes=true
export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false
[ -f /usr/include/node/node.h ] && export npm_config_nodedir=/usr
if ! (cd "$e2e_dir" && TMPDIR=$tmp npm ci --no-audit --no-fund >"$cache/npm-install.log" 2>&1); then
	tail -n 30 "$cache/npm-install.log" >&2
	cannot "npm ci of code-server failed (log: $cache/npm-install.log)"
fi
[ -x "$e2e_dir/node_modules/code-server/lib/vscode/node_modules/@vscode/ripgrep/bin/rg" ] ||
	cannot "code-server installed without its ripgrep (log: $cache/npm-install.log)"
echo "$want" >"$e2e_dir/.installed"
log "code-server installed"
echo "$e2e_dir"
