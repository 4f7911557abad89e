#!/usr/bin/env bash
# Installs what the VS Code end-to-end test needs, and caches it so that a
# second run takes seconds:
#
#   Debian:  chromium (driven by playwright-core), ripgrep, and the headers that
#            code-server's native modules (node-pty, kerberos, native-keymap,
#            @vscode/spdlog...) build against.
#   npm:     code-server 4.100.3 (VS Code 1.100.3, the last release for Node 20)
#            and playwright-core, at the versions of test/e2e/package-lock.json,
#            into .cache/test/vscode/e2e of the checkout ($AGENTLS_TEST_CACHE
#            moves it). code-server 4.100.3 runs on Node 20 only.
#
# It exits 0 when everything is in place, 77 when it cannot be installed here
# (no root for apt, no registry), with the reason as the last line on stderr.
# Usage: test/setup.sh            (prints the e2e install dir as its last stdout line)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
STEPS_FD=2 . "$repo/scripts/lib/steps.sh"
cache=${AGENTLS_TEST_CACHE:-$repo/.cache/test}/vscode
e2e_dir=$cache/e2e
lock=$here/e2e/package-lock.json

log() { echo "setup: $*" >&2; }
cannot() { echo "cannot set up the VS Code end-to-end test: $*" >&2; exit 77; }

# Node 20 first: without it nothing below is of use.
command -v node >/dev/null || cannot "node is not installed (code-server 4.100.3 needs Node 20)"
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" = 20 ] || cannot "code-server 4.100.3 needs Node 20, this is Node $(node --version)"

# --- Debian packages ---------------------------------------------------------
debs=(chromium ripgrep libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev pkg-config build-essential python3)
apt_install "chromium to drive VS Code in a browser, ripgrep for its search, and the compilers and headers code-server's native modules build with" \
	"$cache/apt.log" "${debs[@]}" ||
	cannot "Debian packages missing and not installed (see above)"
[ -x /usr/bin/chromium ] || cannot "/usr/bin/chromium is missing after installing chromium"

# --- code-server and playwright-core -----------------------------------------
want=$(sha256sum "$lock" | cut -c1-16)
if [ -f "$e2e_dir/.installed" ] && [ "$(cat "$e2e_dir/.installed")" = "$want" ] &&
	[ -x "$e2e_dir/node_modules/.bin/code-server" ]; then
	log "code-server cached in $e2e_dir"
	echo "$e2e_dir"
	exit 0
fi

log "npm ci: code-server 4.100.3 and playwright-core into $e2e_dir (a few minutes, once; output in $cache/npm-install.log)"
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
# code-server's install scripts build its native modules: they must run,
# whatever the user's npm config says.
if ! (cd "$e2e_dir" && TMPDIR=$tmp long "npm ci of code-server" npm ci --ignore-scripts=false --no-audit --no-fund >"$cache/npm-install.log" 2>&1); then
	tail -n 30 "$cache/npm-install.log" >&2
	cannot "npm ci of code-server failed (log: $cache/npm-install.log)"
fi
[ -x "$e2e_dir/node_modules/code-server/lib/vscode/node_modules/@vscode/ripgrep/bin/rg" ] ||
	cannot "code-server installed without its ripgrep (log: $cache/npm-install.log)"
echo "$want" >"$e2e_dir/.installed"
log "code-server installed"
echo "$e2e_dir"
