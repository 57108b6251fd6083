#!/bin/sh
# Everything Reflex prints on the shipped corpora, written to one directory,
# so that a refactoring can show its output is byte-identical:
#
#   scripts/output_snapshot.sh build /tmp/before   # on the old tree
#   scripts/output_snapshot.sh build /tmp/after    # on the new tree
#   diff -r /tmp/before /tmp/after && echo identical
#
# Covered: reflexc check/graph/test on kb/, the compiled artifact's bytes,
# `reflex diagnose` (json and text) and `reflex events` on every bundle of
# examples/, tests/realworld, tests/first-contact and ../shared/realworld-dev
# (when present), `reflex eval` on those corpora and on a simulated corpus,
# and the demo.
set -eu
BUILD=${1:?usage: output_snapshot.sh BUILD_DIR OUT_DIR}
OUT=${2:?usage: output_snapshot.sh BUILD_DIR OUT_DIR}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
REFLEX=$BUILD/tools/reflex/reflex
REFLEXC=$BUILD/tools/reflexc/reflexc
SIM=$BUILD/tools/reflex-sim/reflex-sim
mkdir -p "$OUT"
cd "$ROOT"

# A command's stdout, stderr and exit code, in one file.
run() {
    name=$1
    shift
    rc=0
    "$@" >"$OUT/$name.out" 2>"$OUT/$name.err" || rc=$?
    echo "$rc" >"$OUT/$name.rc"
}

run reflexc-check "$REFLEXC" check kb/
run reflexc-test "$REFLEXC" test kb/
run reflexc-graph "$REFLEXC" graph --format json kb/
"$REFLEXC" build -o "$OUT/kb.rfxkb" kb/ >/dev/null 2>&1
KB=$OUT/kb.rfxkb
run demo "$REFLEX" diagnose --kb kb --format text examples/incident-pcie

for corpus in examples tests/realworld tests/first-contact ../shared/realworld-dev; do
    [ -d "$corpus" ] || continue
    tag=$(echo "$corpus" | tr '/.' '__')
    for bundle in "$corpus"/*/; do
        [ -d "$bundle/hosts" ] || continue
        b=$(basename "$bundle")
        run "$tag.$b.diagnose-json" "$REFLEX" diagnose --kb "$KB" --format json "$bundle"
        run "$tag.$b.diagnose-text" "$REFLEX" diagnose --kb "$KB" --format text "$bundle"
        run "$tag.$b.events" "$REFLEX" events --kb "$KB" --stats "$bundle"
    done
    run "$tag.eval" "$REFLEX" eval --kb "$KB" --format json "$corpus"
done

if [ -x "$SIM" ]; then
    "$SIM" --seed 7 --count 30 -q --out "$OUT/sim-corpus" >/dev/null 2>&1 || true
    "$SIM" --hard --seed 7 --count 40 --families all -q --out "$OUT/sim-hard" >/dev/null 2>&1 || true
    for d in sim-corpus sim-hard; do
        [ -d "$OUT/$d" ] && run "$d.eval" "$REFLEX" eval --kb "$KB" --format json "$OUT/$d"
    done
    rm -rf "$OUT/sim-corpus" "$OUT/sim-hard"
fi
