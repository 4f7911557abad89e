#!/bin/sh
# bench-diff.sh: the diff benchmarks of package editing, with
# `git diff --no-index` on the very same files as the reference.
#
# Usage: scripts/bench-diff.sh [benchtime]   (default 20x)
#
# It runs BenchmarkDiff (which writes each input pair to a temp dir), then
# times git diff on every pair (the mean of 10 runs) and reports git's peak
# memory (GNU time's maximum resident set size).
set -eu
benchtime=${1:-20x}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$(dirname "$0")/.."

echo "== agentls editing.ComputeDiff + TextEdits + Unified (go test -bench)"
AGENTLS_BENCH_DIFF_DIR=$dir go test ./editing/ -run '^$' -bench '^BenchmarkDiff$' -benchmem -benchtime "$benchtime" |
	grep '^Benchmark'

echo "== git diff --no-index (same files; mean of 10 runs, peak RSS)"
for old in "$dir"/*.old; do
	name=$(basename "$old" .old)
	new=$dir/$name.new
	start=$(date +%s%N)
	i=0
	while [ $i -lt 10 ]; do
		git diff --no-index --no-color "$old" "$new" >/dev/null || true
		i=$((i + 1))
	done
	end=$(date +%s%N)
	rss=$( { /usr/bin/time -f %M git diff --no-index --no-color "$old" "$new" >/dev/null; } 2>&1 || true)
	printf '%-28s %8.2f ms/op  %8s KB peak RSS\n' "$name" "$(echo "($end - $start) / 10000000" | bc -l)" "$(echo "$rss" | tail -1)"
done
