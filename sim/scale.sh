#!/usr/bin/env bash
# Scale benchmark: one incident on a 12,500-host x 8-GPU cluster (a >= 1 GB
# bundle at the default noise), then the end-to-end `reflex diagnose` time,
# ingest throughput and peak RSS as a user runs it (interfaces.md §7: whole commands).
# Not run in CI.
#
#   sim/scale.sh [BUILD_DIR] [OUT_DIR]
#   env: HOSTS=12500 NOISE=500 SCENARIO=gpu_fallen_off_bus SEED=1 KB=<repo>/kb
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build-rel}
out=${2:-/tmp/reflex-scale}
hosts=${HOSTS:-12500}
noise=${NOISE:-500}
scenario=${SCENARIO:-gpu_fallen_off_bus}
seed=${SEED:-1}
kb=${KB:-$here/kb}
sim=$build/tools/reflex-sim/reflex-sim
reflex=$build/tools/reflex/reflex
for b in "$sim" "$reflex"; do
  [[ -x $b ]] || { echo "scale.sh: $b not built (cmake --build $build --target reflex reflex-sim)" >&2; exit 2; }
done
[[ -x /usr/bin/time ]] || { echo "scale.sh: needs /usr/bin/time (GNU time)" >&2; exit 2; }
export LC_ALL=C

rm -rf "$out"
echo "== generating: $hosts hosts, noise $noise lines/host, scenario $scenario" >&2
/usr/bin/time -v -o "$out.gen.time" "$sim" --seed "$seed" --count 1 --hosts "$hosts" \
  --noise-lines-per-host "$noise" --scenario "$scenario" --quiet --out "$out"
bundle=$out/incident-0001
bytes=$(du -sb "$bundle" | cut -f1)
lines=$(find "$bundle/hosts" -type f ! -name '*.gz' ! -name boot_time -print0 | xargs -0 cat | wc -l)
files=$(find "$bundle/hosts" -type f | wc -l)

echo "== reflex diagnose" >&2
/usr/bin/time -v -o "$out.diag.time" "$reflex" diagnose --kb "$kb" "$bundle" > "$out.diagnosis.json" || true
echo "== reflex events" >&2
/usr/bin/time -v -o "$out.events.time" "$reflex" events --kb "$kb" "$bundle" > /dev/null || true

field() { grep -F "$2" "$1" | sed 's/.*: //'; }
secs() {  # h:mm:ss or m:ss.ss -> seconds
  awk -F: '{ if (NF==3) print $1*3600+$2*60+$3; else print $1*60+$2 }' <<<"$1"
}
gen_s=$(secs "$(field "$out.gen.time" 'Elapsed (wall clock)')")
diag_s=$(secs "$(field "$out.diag.time" 'Elapsed (wall clock)')")
ev_s=$(secs "$(field "$out.events.time" 'Elapsed (wall clock)')")
diag_rss=$(field "$out.diag.time" 'Maximum resident set size')
ev_rss=$(field "$out.events.time" 'Maximum resident set size')
gen_rss=$(field "$out.gen.time" 'Maximum resident set size')
truth=$(grep -o '"device": "[^"]*"' "$bundle/truth.json" | head -1)
got=$(grep -o '"device": "[^"]*"' "$out.diagnosis.json" | sed -n 2p || true)

awk -v h="$hosts" -v b="$bytes" -v l="$lines" -v f="$files" -v gs="$gen_s" -v grss="$gen_rss" \
    -v ds="$diag_s" -v drss="$diag_rss" -v es="$ev_s" -v erss="$ev_rss" 'BEGIN {
  printf "| measure | value |\n|---|---|\n";
  printf "| hosts x GPUs | %d x 8 |\n", h;
  printf "| bundle | %.2f GB, %d lines, %d files |\n", b/1e9, l, f;
  printf "| reflex-sim wall / peak RSS | %.1f s / %.0f MB |\n", gs, grss/1024;
  printf "| reflex diagnose wall / peak RSS | %.1f s / %.0f MB |\n", ds, drss/1024;
  printf "| diagnose ingest throughput | %.0f MB/s, %.2f M lines/s |\n", b/1e6/ds, l/1e6/ds;
  printf "| reflex events wall / peak RSS | %.1f s / %.0f MB |\n", es, erss/1024;
}'
echo "truth:     $truth"
echo "diagnosis: ${got:-(none)}  (full output: $out.diagnosis.json)"
