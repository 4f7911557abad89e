#!/usr/bin/env bash
# The code graph beside Universal Ctags on the same tree (docs/BENCHMARKS.md,
# "Code graph"): by default the Go standard library of this machine's Go,
# copied so the update figure can change a file. Usage:
#   scripts/bench-graph.sh [-copies N] [TREE] [RUNS]
# -copies N indexes N copies of TREE under different roots (copy1/ ...
# copyN/; the scale run: ten copies of the standard library are about
# 115,000 files) and skips the references' figures. Prints, per run, each
# figure (the graph's peak RSS per phase: rss_index, rss_update, rss_store,
# rss_repomap, rss_query, rss_load; an edit's delay while the store is
# written; the first agent/codeGraph answer of agentls restarted on the
# tree, from its start and from initialize, and its CPU time to it); then the
# medians; then, once (they do not
# vary), the precision and recall of the graph's Go references against
# go/ast (bench/graph -mode refs: fmt.Errorf, io.Reader, strings.Builder and
# 20 exported names drawn with a fixed seed). Needs ctags (Debian: apt-get
# install -y universal-ctags) and GNU time (/usr/bin/time).
set -euo pipefail
cd "$(dirname "$0")/.."
copies=0
if [ "${1:-}" = "-copies" ]; then
  copies=$2
  shift 2
fi
tree=${1:-"$(go env GOROOT)/src"}
runs=${2:-5}
command -v ctags >/dev/null || { echo "bench-graph: ctags is missing (apt-get install -y universal-ctags)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench-graph: /usr/bin/time is missing (apt-get install -y time)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ "$copies" -gt 0 ]; then
  mkdir -p "$work/tree"
  for c in $(seq "$copies"); do cp -r "$tree" "$work/tree/copy$c"; done
  update="copy1/$(cd "$tree" && find . -name '*.go' -size +20k -size -30k | sort | head -1 | sed 's|^\./||')"
else
  cp -r "$tree" "$work/tree"
  update=""
fi
CGO_ENABLED=0 go build -o "$work/graph" ./bench/graph
CGO_ENABLED=0 go build -o "$work/agentls" ./cmd/agentls
echo "tree: $tree ($(find "$work/tree" -type f | wc -l) files), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "ctags: $(ctags --version | head -1)"
for i in $(seq "$runs"); do
  # ctags: one core, definitions only
  /usr/bin/time -f "ctags_wall %e s\nctags_cpu %U %S\nctags_rss %M KiB" \
    ctags -R -f "$work/tags" "$work/tree" 2>"$work/ctags.time" >/dev/null || true
  grep '^ctags_' "$work/ctags.time" | awk '$1=="ctags_cpu"{printf "ctags_cpu %.3f s\n", $2+$3; next} {print}'
  echo "ctags_tags $(grep -vc '^!' "$work/tags")"
  # the graph: every core; then a second process from the stored graph
  rm -rf "$work/state.bin" "$work/state"
  "$work/graph" -tree "$work/tree" -state "$work/state.bin" ${update:+-update "$update"}
  "$work/graph" -tree "$work/tree" -state "$work/state.bin" -mode load
  # agentls itself, restarted on the tree: the first answer as a request sees it
  mkdir -p "$work/state"
  "$work/graph" -tree "$work/tree" -state "$work/state" -mode restart -agentls "$work/agentls" -runs 3
  echo "--"
done | tee "$work/runs.txt"
echo "medians of $runs runs:"
for k in $(awk '$1!="--" && $1!="update_file" && $1!="workers" && $1!="files" && $1!="definitions" && $1!="ctags_tags" {print $1}' "$work/runs.txt" | sort -u); do
  unit=$(awk -v k="$k" '$1==k {print $3; exit}' "$work/runs.txt")
  vals=$(awk -v k="$k" '$1==k {print $2}' "$work/runs.txt" | sort -g)
  n=$(echo "$vals" | wc -l)
  printf '%-20s %s %s\n' "$k" "$(echo "$vals" | sed -n "$(( (n + 1) / 2 ))p")" "$unit"
done
[ "$copies" -gt 0 ] && exit 0
echo "references against go/ast (bench/graph -mode refs):"
"$work/graph" -tree "$work/tree" -mode refs
