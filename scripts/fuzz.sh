#!/usr/bin/env bash
# Runs every fuzz target of the module for a while each (default 60s), or
# only the targets named after the time. Targets are found by their
# `func Fuzz…` lines (CONTRIBUTING.md lists them). Crashers land in the
# package's testdata/fuzz and fail the run: fix them and keep them as seeds.
#
# Usage: scripts/fuzz.sh [time] [target...]
#   scripts/fuzz.sh 3m FuzzWalkStaysInside
set -euo pipefail
cd "$(dirname "$0")/.."
time=${1:-60s}
shift || true
only=" $* "
status=0
ran=0
for pkg in $(go list ./...); do
	dir=$(go list -f '{{.Dir}}' "$pkg")
	for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //'); do
		if [ "$only" != "  " ] && [[ "$only" != *" $target "* ]]; then
			continue
		fi
		echo "== $pkg $target ($time)"
		ran=$((ran + 1))
		go test -run '^$' -fuzz "^${target}\$" -fuzztime "$time" "$pkg" || status=1
	done
done
if [ "$ran" -eq 0 ]; then
	echo "fuzz.sh: no fuzz target matches:$only" >&2
	exit 1
fi
exit $status
