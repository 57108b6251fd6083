#!/bin/sh
# `cmake --install` into a temporary prefix, then use only what was installed:
# the reflexc, reflex and reflex-sim binaries and the shipped KB in share/reflex/kb.
# (The C API package is tested by tests/capi/install_test.sh.)
set -eu
BUILD=$1; SRC=$2
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
P="$T/prefix"
cmake --install "$BUILD" --prefix "$P" >/dev/null
for b in reflex reflexc reflex-sim; do
  [ -x "$P/bin/$b" ] || { echo "not installed: bin/$b" >&2; exit 1; }
done
KB="$P/share/reflex/kb"
[ -f "$KB/chains.rfx" ] || { echo "not installed: share/reflex/kb" >&2; exit 1; }
"$P/bin/reflexc" check "$KB" 2>/dev/null
"$P/bin/reflexc" build "$KB" -o "$T/kb.rfxkb" 2>"$T/build.err"
grep -q "precompiled pattern database" "$T/build.err" || { cat "$T/build.err" >&2; exit 1; }
# The demo incident, diagnosed from the installed KB sources and its artifact.
"$P/bin/reflex" diagnose --kb "$KB" "$SRC/examples/incident-pcie" > "$T/src.json"
grep -q '"device": "node-0018/pcie/0000:5c:00.0"' "$T/src.json"
"$P/bin/reflex" diagnose --kb "$T/kb.rfxkb" "$SRC/examples/incident-pcie" > "$T/art.json"
cmp "$T/src.json" "$T/art.json"
# The artifact's precompiled pattern database is used, and recognizes the same events.
"$P/bin/reflex" events --kb "$KB" --stats "$SRC/examples/incident-pcie" > "$T/src.ev" 2>"$T/src.st"
"$P/bin/reflex" events --kb "$T/kb.rfxkb" --stats "$SRC/examples/incident-pcie" > "$T/art.ev" 2>"$T/art.st"
grep -q '"precompiled_patterns": false' "$T/src.st"
grep -q '"precompiled_patterns": true' "$T/art.st"
cmp "$T/src.ev" "$T/art.ev"
[ -s "$T/art.ev" ]
# A simulated bundle from the installed simulator.
"$P/bin/reflex-sim" --seed 3 --count 1 --hosts 8 --out "$T/sim" -q
"$P/bin/reflex" diagnose --kb "$T/kb.rfxkb" "$T/sim/incident-0001" | grep -q '"root_causes"'
echo "install test: reflex, reflexc, reflex-sim and share/reflex/kb work from the prefix"
