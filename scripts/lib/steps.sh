# Shared by scripts/*.sh and editors/*/test/run.sh (sourced, not run): a
# line before each long step, a heartbeat while it runs, and Debian package
# installs that say what they install and why, keep apt's output in a log
# and end with a summary.
#
#   long WHAT CMD [ARG...]      run CMD; while it runs, print
#                               "   … still WHAT (Ns)" every $STEPS_EVERY
#                               seconds (default 10); return its status
#   apt_install WHY LOG PKG...  install the missing PKGs with apt-get (root
#                               only), output in LOG; return 1 on failure
#
# Lines go to the script's stdout, or its stderr when STEPS_FD=2 is set
# before sourcing; never into a command's redirected output.

if [ "${STEPS_FD:-1}" = 2 ]; then
	exec {_steps_out}>&2
else
	exec {_steps_out}>&1
fi
_steps_say() { echo "$*" >&"$_steps_out"; }

long() {
	local what=$1 every=${STEPS_EVERY:-10} pid t=0 old_int old_term
	shift
	# Asynchronous commands ignore SIGINT in a script: pass Ctrl-C on.
	old_int=$(trap -p INT)
	old_term=$(trap -p TERM)
	"$@" &
	pid=$!
	trap 'kill "$pid" 2>/dev/null; exit 130' INT
	trap 'kill "$pid" 2>/dev/null; exit 143' TERM
	while kill -0 "$pid" 2>/dev/null; do
		sleep 1
		t=$((t + 1))
		if [ $((t % every)) -eq 0 ] && kill -0 "$pid" 2>/dev/null; then
			_steps_say "   … still $what (${t}s)"
		fi
	done
	wait "$pid"
	local rc=$?
	trap - INT TERM
	[ -n "$old_int" ] && eval "$old_int"
	[ -n "$old_term" ] && eval "$old_term"
	return $rc
}

apt_install() {
	local why=$1 log=$2 p missing=()
	shift 2
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
		_steps_say "   ${missing[*]} missing: installing needs root and apt-get"
		return 1
	fi
	mkdir -p "$(dirname "$log")"
	: >"$log"
	_steps_say "== apt: ${missing[*]}: $why"
	_steps_say "   apt-get update first (output in $log)"
	export DEBIAN_FRONTEND=noninteractive
	long "apt-get update" apt-get -o DPkg::Lock::Timeout=300 update >>"$log" 2>&1 || {
		_steps_say "   apt-get update failed: see $log"
		return 1
	}
	# What apt will install: the packages with their dependencies, and sizes.
	local plan count sizes
	plan=$(LC_ALL=C apt-get -s install "${missing[@]}" 2>>"$log" |
		sed -n 's/^Inst \([^ ]*\) \(\[[^]]*\] \)\{0,1\}(\([^ ]*\) .*/\1=\3/p')
	count=$(printf '%s\n' "$plan" | grep -c .)
	sizes=$(apt-cache show --no-all-versions $plan 2>/dev/null |
		awk '/^Size:/ {d += $2} /^Installed-Size:/ {i += $2}
			END {printf "%.0f MB to download, %.0f MB on disk", d / 1e6, i / 1024}')
	_steps_say "   apt-get install: $count packages with their dependencies, $sizes (a few minutes)"
	long "apt-get install (output in $log)" \
		apt-get -o DPkg::Lock::Timeout=300 install -y -q "${missing[@]}" >>"$log" 2>&1 || {
		tail -n 15 "$log" >&2
		_steps_say "   apt-get install failed: see $log"
		return 1
	}
	_steps_say "   installed ${missing[*]} and their dependencies: $count packages, $sizes; log: $log"
}
