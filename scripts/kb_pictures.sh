#!/usr/bin/env bash
# Draws the shipped KB's causal graph as one picture per fault class (family):
# docs/kb-graph/<class>.svg, the class's events and, folded by class, the
# events one rule step away (`reflexc graph --family CLASS --depth 1`), plus
# docs/kb-graph/README.md, the index. The whole graph in one picture is too
# large to read or even to lay out.
#
# Usage: scripts/kb_pictures.sh [REFLEXC] [KB] [OUT]
#   defaults: build/tools/reflexc/reflexc kb docs/kb-graph
# Exit 77 when Graphviz `dot` is not installed (scripts/setup.sh installs it).
set -euo pipefail

REFLEXC=${1:-build/tools/reflexc/reflexc}
KB=${2:-kb}
OUT=${3:-docs/kb-graph}

if ! command -v dot >/dev/null 2>&1; then
  echo "kb_pictures: Graphviz 'dot' is not installed (Debian package graphviz); nothing drawn" >&2
  exit 77
fi

mkdir -p "$OUT"
rm -f "$OUT"/*.svg
families=$("$REFLEXC" graph --list-families "$KB")
{
  echo "# The knowledge base's causal graph, one picture per fault class"
  echo
  echo "Drawn by \`scripts/kb_pictures.sh\` (\`reflexc graph --family CLASS --depth 1 kb/\`"
  echo "piped to Graphviz). Each picture shows the events of one standard fault class"
  echo "(filled; symptoms as double octagons, latents as ellipses) and the rules into and"
  echo "out of them; the events one rule step away are folded into one node per class"
  echo "(its tooltip names them), and the class's events that no rule links are one node."
  echo "An edge is one pair of events: the first rule's name and how many more rules say"
  echo "the same; a thick edge has strength >= 0.8. For one event and its neighbourhood:"
  echo "\`reflexc graph --focus EVENT --depth N kb/ | dot -Tsvg\`."
  echo
  echo "| class | events | picture |"
  echo "| --- | --- | --- |"
} >"$OUT/README.md"
while read -r fam count; do
  [ -n "$fam" ] || continue
  # nodesep 0.12 in (Graphviz's default is 0.25): the larger families stack
  # many events in one rank, and the picture must stay a page one can scroll.
  "$REFLEXC" graph --family "$fam" --depth 1 "$KB" | dot -Gnodesep=0.12 -Tsvg -o "$OUT/$fam.svg"
  echo "| $fam | $count | [$fam.svg]($fam.svg) |" >>"$OUT/README.md"
done <<<"$families"
echo "kb_pictures: wrote $(echo "$families" | wc -l) pictures to $OUT" >&2
