#!/bin/sh
# reflex-sim --hard over five seeds, each diagnosed by `reflex eval`: top-1
# device and fault-class accuracy per seed and per family (the scenario name
# before the dot). A measurement, not a gate (issue 12's targets: top-1 and
# class >= 95% on each seed); it exits 0 whatever the figures.
#
#   tests/sim/hard_eval.sh [BUILD_DIR] [COUNT]      (defaults: build, 40)
# Environment: KB (default kb), SEEDS (default five fixed seeds), WORK (a
# scratch directory, default a new one under ${TMPDIR:-/tmp}, removed at exit).
set -eu
BUILD=${1:-build}
COUNT=${2:-40}
KB=${KB:-kb}
SEEDS=${SEEDS:-"1201 1202 1203 1204 1205"}
SIM=$BUILD/tools/reflex-sim/reflex-sim
REFLEX=$BUILD/tools/reflex/reflex
for b in "$SIM" "$REFLEX"; do
  [ -x "$b" ] || { echo "hard_eval: $b is missing (build first: make build)" >&2; exit 2; }
done
command -v python3 >/dev/null || { echo "hard_eval: needs python3" >&2; exit 2; }
if [ -n "${WORK:-}" ]; then
  mkdir -p "$WORK"
else
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/reflex-hard-eval.XXXXXX")
  trap 'rm -rf "$WORK"' EXIT
fi

n=0
for seed in $SEEDS; do
  n=$((n + 1))
  [ "$n" -le 10 ] || break  # bounded: at most ten seeds
  rm -rf "$WORK/seed-$seed"
  "$SIM" --hard --seed "$seed" --count "$COUNT" --quiet --out "$WORK/seed-$seed"
  "$REFLEX" eval --kb "$KB" --format json "$WORK/seed-$seed" > "$WORK/eval-$seed.json"
done

python3 - "$WORK" $SEEDS <<'PY'
import json, sys
from collections import defaultdict
work, seeds = sys.argv[1], sys.argv[2:12]
fam = defaultdict(lambda: [0, 0, 0, 0, 0])  # n, top1 ok, device scored, class ok, class scored
print("seed      n  top1%  class%  errors")
for s in seeds:
    e = json.load(open(f"{work}/eval-{s}.json"))
    a = e["accuracy"]
    print(f"{s:<6} {e['bundles']:4} {a['top1_device']:6.1f} {a['fault_class']:7.1f} {e['errors']:7}")
    for r in e["results"]:
        f = fam[r["scenario"].split(".")[0]]
        f[0] += 1
        f[1] += r["top1"]
        f[2] += 1
        if r["truth"]["localizable"]:
            f[3] += r["fault_class_ok"]
            f[4] += 1
def pct(a, b):
    return f"{100.0 * a / b:6.1f}" if b else "     -"
print(f"\nfamily (all seeds)   n  top1%  class%")
for k in sorted(fam):
    n, t1, dn, c, cn = fam[k]
    print(f"{k:<16} {n:5} {pct(t1, dn)} {pct(c, cn)}")
PY
