#!/usr/bin/env bash
# Runs every fuzz target of the module for a while each (default 60s).
# Crashers land in the package's testdata/fuzz and fail the run: fix them
# and keep them as seeds.
set -euo pipefail
cd "$(dirname "$0")/.."
time=${1:-60s}
status=0
for pkg in $(go list ./...); do
	dir=$(go list -f '{{.Dir}}' "$pkg")
	for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //'); do
		echo "== $pkg $target ($time)"
		go test -run '^$' -fuzz "^${target}\$" -fuzztime "$time" "$pkg" || status=1
	done
done
exit $status
