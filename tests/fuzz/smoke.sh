#!/usr/bin/env bash
# CI's fuzz smoke test (`make test` runs it through `make clang-ci`): every
# libFuzzer target of BUILD_DIR for SECONDS from its seeds only, into scratch
# corpora emptied first (so the time is spent fuzzing, not replaying the
# committed corpora, which the gcc suite replays as fuzz.replay_*), two
# targets at a time. Any crash, leak (ASan), timeout or OOM fails it.
#   smoke.sh BUILD_DIR SECONDS [TARGET...]   (default: all eight)
set -u
build=$1 secs=$2
shift 2
src=$(cd "$(dirname "$0")/../.." && pwd)
out=$build/smoke
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(topology line_parser envelope artifact rfx_sema codec rfx runtime)

one() {  # name -> runs it, prints one line, exit status of the fuzzer
  local t=$1 seeds max_len=16384 timeout=10 extra=""
  case $t in
    topology) seeds="$src/kb/tests/topologies $src/examples/incident-pcie" ;;
    line_parser) seeds=$src/tests/fuzz/seeds_fast/lines ;;
    envelope) seeds=$src/tests/fuzz/seeds_fast/envelopes ;;
    artifact) seeds=$build/artifact_seed ;;
    rfx_sema) seeds=$src/tests/fuzz/seeds extra=-dict=$src/tests/fuzz/rfx.dict ;;
    codec) seeds=$src/tests/fuzz/seeds_fast/events ;;
    rfx) seeds=$src/tests/fuzz/seeds max_len=65536 extra=-dict=$src/tests/fuzz/rfx.dict ;;
    # Its first input pays the one-time KB compile (Hyperscan included): ~10
    # CPU-s at -O0 + ASan, measured; 20 s timed out on a loaded machine.
    runtime) seeds=$src/tests/fuzz/runtime_seeds max_len=65536 timeout=60 ;;
    *) echo "smoke: unknown target $t" >&2; return 2 ;;
  esac
  # The fast targets' scheduler setting (Makefile, fuzz-fast).
  case $t in rfx | runtime) ;; *) extra="$extra -entropic=0" ;; esac
  rm -rf "$out/$t" && mkdir -p "$out/$t/corpus"
  # shellcheck disable=SC2086
  "$build/tests/fuzz/fuzz_$t" -max_total_time="$secs" -max_len=$max_len -timeout=$timeout \
    $extra -print_final_stats=1 -artifact_prefix="$out/$t/" "$out/$t/corpus" $seeds \
    >"$out/$t.log" 2>&1 </dev/null
  local rc=$?
  local n r
  n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$t.log")
  r=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$out/$t.log")
  if [ $rc -eq 0 ]; then
    echo "fuzz smoke: fuzz_$t ${secs}s: ${n:-?} inputs, ${r:-?}/s"
  else
    echo "fuzz smoke: fuzz_$t FAILED (exit $rc), log $out/$t.log:"
    grep -E "ERROR|SUMMARY|Test unit written" "$out/$t.log" | head -20
  fi
  return $rc
}

mkdir -p "$out"
fail=0
# Two at a time (the machine has two cores), in a bounded number of rounds.
for ((i = 0; i < ${#targets[@]}; i += 2)); do
  one "${targets[i]}" &
  a=$!
  b=""
  if [ $((i + 1)) -lt ${#targets[@]} ]; then
    one "${targets[i + 1]}" &
    b=$!
  fi
  wait $a || fail=1
  if [ -n "$b" ]; then wait "$b" || fail=1; fi
done
exit $fail
