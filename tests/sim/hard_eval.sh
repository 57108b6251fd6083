#!/bin/sh
# reflex-sim --hard over five seeds, each diagnosed by `reflex eval`: top-1
# device and fault-class accuracy per seed and per family (the scenario name
# before the dot). Without FLOORS a measurement that exits 0 whatever the
# figures; with FLOORS=FILE (tests/accuracy/sim_hard_floors.json, ctest
# accuracy.sim_hard) a gate: exit 1 when a seed's top-1 or class, or a
# family's over all seeds, is below its floor (the target: >= 95% on
# each seed).
#
#   tests/sim/hard_eval.sh [BUILD_DIR] [COUNT]      (defaults: build, 40)
# Environment: KB (default kb), SEEDS (default five fixed seeds), WORK (a
# scratch directory, default a new one under ${TMPDIR:-/tmp}, removed at exit),
# FAMILIES (reflex-sim --families: default, the set the floors hold; new, the
# families added after it; or all).
set -eu
BUILD=${1:-build}
COUNT=${2:-40}
KB=${KB:-kb}
SEEDS=${SEEDS:-"1201 1202 1203 1204 1205"}
FAMILIES=${FAMILIES:-default}
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
  "$SIM" --hard --families "$FAMILIES" --seed "$seed" --count "$COUNT" --quiet --out "$WORK/seed-$seed"
  "$REFLEX" eval --kb "$KB" --format json "$WORK/seed-$seed" > "$WORK/eval-$seed.json"
done

python3 - "$WORK" "${FLOORS:-}" $SEEDS <<'PY'
import json, sys
from collections import defaultdict
work, floors_path, seeds = sys.argv[1], sys.argv[2], sys.argv[3:13]
floors = json.load(open(floors_path)) if floors_path else None
below = []
fam = defaultdict(lambda: [0, 0, 0, 0, 0])  # n, top1 ok, device scored, class ok, class scored
print("seed      n  top1%  class%  errors")
for s in seeds:
    e = json.load(open(f"{work}/eval-{s}.json"))
    a = e["accuracy"]
    print(f"{s:<6} {e['bundles']:4} {a['top1_device']:6.1f} {a['fault_class']:7.1f} {e['errors']:7}")
    for key in ("top1_device", "fault_class"):
        if floors and a[key] is not None and a[key] < floors["per_seed"][key]:
            below.append(f"seed {s}: {key} {a[key]:.1f} < floor {floors['per_seed'][key]}")
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
    fl = (floors or {}).get("per_family", {}).get(k, {})
    for key, got in (("top1_device", 100.0 * t1 / dn if dn else None),
                     ("fault_class", 100.0 * c / cn if cn else None)):
        if key in fl and got is not None and got < fl[key]:
            below.append(f"family {k}: {key} {got:.1f} < floor {fl[key]}")
for b in below:
    print("BELOW FLOOR: " + b)
if floors:
    print("hard-mode floors: " + ("FAILED" if below else "met") + f" ({floors_path})")
sys.exit(1 if below else 0)
PY
