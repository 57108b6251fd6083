#!/usr/bin/env bash
# `make bench`: every speed and memory figure the README's table reports, from
# one run of one build, ending in that table (Markdown, ready to paste).
#   1. ingest (bench/ingest_bench.sh) on each mix: mixed, telemetry, storm;
#      one core each, CPU time, against wc -l / grep / rg / Hyperscan alone,
#      and --threads against the one-thread run (wall time, same output);
#   2. the engine (engine_bench): 100,000 GPUs, 1,000,000 events, thread CPU
#      per diagnosis p50/p99 and peak RSS, ENGINE_RUNS runs on one core.
# The full log is kept in $REFLEX_BENCH_DIR/bench_all.log; the table is
# printed last and written to $REFLEX_BENCH_DIR/summary.md.
#
# Environment: everything bench/ingest_bench.sh reads (BUILD, REFLEX_BENCH_MB,
# REFLEX_BENCH_DIR, REFLEX_BENCH_CORE, REFLEX_BENCH_THREADS, ...), and
#   REFLEX_BENCH_ENGINE_RUNS=3   engine_bench runs (each 300 diagnoses)
#   REFLEX_BENCH_ENGINE_ARGS=""  extra engine_bench arguments (e.g. --events 300000)
#   REFLEX_BENCH_TABLE_ONLY=1    only rebuild the table from the last run's outputs
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
DIR=${REFLEX_BENCH_DIR:-/tmp/reflex-bench}
CORE=${REFLEX_BENCH_CORE-0}
RUNS=${REFLEX_BENCH_ENGINE_RUNS:-3}
PROFILES=${REFLEX_BENCH_PROFILES:-mixed telemetry storm}
ENGINE=$BUILD/runtime/engine/bench/engine_bench
[[ -x $ENGINE ]] || { echo "bench_all: $ENGINE not built (BUILD=$BUILD)" >&2; exit 2; }
mkdir -p "$DIR"
LOG=$DIR/bench_all.log
TABLE_ONLY=${REFLEX_BENCH_TABLE_ONLY:-0}
[[ $TABLE_ONLY == 1 ]] || : >"$LOG"
PIN=()
if [[ -n $CORE ]] && command -v taskset >/dev/null; then PIN=(taskset -c "$CORE"); fi
started=$(date -u '+%Y-%m-%d %H:%M UTC')
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$BUILD/CMakeCache.txt" 2>/dev/null || true)

for p in $PROFILES; do
  [[ $TABLE_ONLY == 1 ]] && break
  REFLEX_BENCH_PROFILE=$p BUILD=$BUILD bash bench/ingest_bench.sh 2>&1 | tee "$DIR/ingest-$p.txt" | tee -a "$LOG"
done

for ((i = 1; i <= RUNS; i++)); do
  [[ $TABLE_ONLY == 1 ]] && break
  # shellcheck disable=SC2086  # extra arguments are words
  "${PIN[@]}" "$ENGINE" ${REFLEX_BENCH_ENGINE_ARGS:-} 2>&1 | tee "$DIR/engine-$i.txt" | tee -a "$LOG"
done

# --- the table -------------------------------------------------------------
row() {  # file, command name -> "cpu_s vs_rg" of that row of ingest_bench's table
  awk -v name="$2" 'index($0, name) == 1 {
      rest = substr($0, length(name) + 1); n = split(rest, f, " ")
      if (f[1] ~ /^[0-9.]+$/) { print f[1], f[n]; exit } }' "$1"
}
grouped() {  # 1234567 -> 1,234,567 (printf's ' flag needs a locale)
  echo "$1" | sed -E ':a; s/^([0-9]+)([0-9]{3})/\1,\2/; ta'
}
field() {  # file, regex with one group (sed -E) -> the group, first match
  sed -nE "s/$2/\\1/p" "$1" | head -1
}
{
  echo "Figures from one run of \`make bench\` ($started, $build_type build, $(nproc) CPUs," \
    "load average at the end $(cut -d' ' -f1-3 /proc/loadavg); CPU time, one core unless noted;" \
    "each ingest command the fastest of ${REFLEX_BENCH_REPS:-3} runs):"
  echo
  echo "| what | figure |"
  echo "| --- | --- |"
  for p in $PROFILES; do
    f=$DIR/ingest-$p.txt
    [[ -s $f ]] || continue
    size=$(field "$f" '^ingest benchmark, profile [a-z]+: ([0-9]+ MB, [0-9]+ lines).*')
    share=$(field "$f" '^lines matching a first-line pattern \(rg -c\): [0-9]+ \(([0-9.]+%)\).*')
    read -r src_s src_rg < <(row "$f" "reflex events ")
    read -r art_s art_rg < <(row "$f" "reflex events (artifact)")
    read -r rg_s _ < <(row "$f" "rg -c -j1 -f")
    read -r wc_s _ < <(row "$f" "wc -l")
    mls=$(field "$f" '^reflex events: [0-9]+ matched lines\/s of CPU \(sources\), ([0-9]+) \(artifact\).*')
    thr=$(field "$f" '^reflex events --threads [0-9]+ \(artifact\): wall ([0-9.]+x) .*' | sed 's/^\./0./')
    thr_n=$(field "$f" '^reflex events --threads ([0-9]+) .*')
    same=$(field "$f" '^reflex events --threads .*output (.*)$')
    pairs=$(field "$f" '^reflex events --threads .* over ([0-9]+) pairs: .*')
    rounds=$(field "$f" '^reflex events --threads .* rounds alone ([0-9.]+x), .*' | sed 's/^\./0./')
    median=$(field "$f" '^reflex events --threads .* median pair ([0-9.]+x)\).*')
    echo "| ingest \`$p\` ($size, ${share} match a pattern) | **${art_rg} \`rg\`** from an artifact (${art_s} s; rg ${rg_s} s, \`wc -l\` ${wc_s} s), ${src_rg} from sources; $(grouped "${mls:-0}") matched lines/s; \`--threads ${thr_n}\` **${thr}** the one-thread wall time (fastest of ${pairs} pairs each; the rounds alone ${rounds}, median pair ${median}), output ${same} |"
  done
  f=$DIR/ingest-${PROFILES%% *}.txt
  art=$(field "$f" '^artifact: (.*)$')
  [[ -n $art ]] && echo "| knowledge base artifact | $art |"
  p50s=() p99s=() rss=()
  for ((i = 1; i <= RUNS; i++)); do
    f=$DIR/engine-$i.txt
    p50s+=("$(field "$f" '^ *thread CPU per incident: p50 ([0-9.]+) ms.*')")
    p99s+=("$(field "$f" '^ *thread CPU per incident: .* p99 ([0-9.]+) ms.*')")
    rss+=("$(field "$f" '^ *peak RSS +([0-9]+) MiB.*')")
  done
  head=$(head -1 "$DIR/engine-1.txt")
  n_diag=$(field "$DIR/engine-1.txt" '^ *diagnosis per incident: .*\(([0-9]+) runs\).*')
  echo "| diagnosis (${head#engine_bench: }) | thread CPU per diagnosis p50 **$(
    IFS=/; echo "${p50s[*]}") ms**, p99 **$(IFS=/; echo "${p99s[*]}") ms** ($RUNS runs of $n_diag diagnoses), peak RSS **$(
    IFS=/; echo "${rss[*]}") MiB** |"
} >"$DIR/summary.md"
echo
cat "$DIR/summary.md"
