#!/usr/bin/env bash
# Runs one libFuzzer binary until it has used CPU_SECONDS of CPU (not wall
# time: on a shared machine a wall-clock budget says little), in chunks of at
# most CHUNK wall seconds, and never longer than MAX_WALL wall seconds in all.
# New inputs go to WORK (a scratch corpus); crashes/leaks/timeouts to WORK/../.
# Prints one summary line: target, CPU seconds, executions, exec/s (per CPU
# second), crashes (files crash-*/leak-*/timeout-*/oom-*).
#   fuzz_cpu.sh BINARY CPU_SECONDS WORK [SEED_DIR...]
# Env: CHUNK (default 120), MAX_WALL (default 3600), FUZZ_ARGS (extra flags).
set -u
bin=$1 cpu_budget=$2 work=$3
shift 3
chunk=${CHUNK:-120}
max_wall=${MAX_WALL:-3600}
name=$(basename "$bin")
out=$(dirname "$work")
# Scratch files are named after WORK too: two workers whose WORK dirs share
# a parent read each other's CPU times and logs otherwise.
tag=$name.$(basename "$work")
mkdir -p "$work"
# user+sys of finished children, in centiseconds, into CPU_NOW (`times` must
# run in this shell, not in a $(...) subshell, to see them).
cpu_now() {
  times >"$out/.$tag.times"
  CPU_NOW=$(python3 -c '
import re, sys
t = open(sys.argv[1]).read().splitlines()[-1]  # children: user, sys
print(int(sum(int(m) * 60 + float(s) for m, s in re.findall(r"(\d+)m([\d.]+)s", t)) * 100))' \
    "$out/.$tag.times")
}
cpu_now
start_cpu=$CPU_NOW
start_wall=$SECONDS
execs=0
chunks=0
rc=0
while :; do
  cpu_now
  used=$((CPU_NOW - start_cpu))
  [ "$used" -ge $((cpu_budget * 100)) ] && break
  [ $((SECONDS - start_wall)) -ge "$max_wall" ] && break
  chunks=$((chunks + 1))
  [ "$chunks" -gt 1000 ] && break
  log=$out/$tag.chunk.log
  # shellcheck disable=SC2086
  "$bin" -max_total_time="$chunk" -entropic=0 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$out/" ${FUZZ_ARGS:-} "$work" "$@" >"$log" 2>&1
  rc=$?
  n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  execs=$((execs + ${n:-0}))
  cat "$log" >>"$out/$tag.log"
  [ $rc -eq 0 ] || break
done
cpu_now
used=$((CPU_NOW - start_cpu))
crashes=$(find "$out" -maxdepth 1 \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
rate=$((used > 0 ? execs * 100 / used : 0))
printf '%s cpu_s=%d.%02d execs=%d exec_per_cpu_s=%d chunks=%d last_rc=%d findings=%d wall_s=%d\n' \
  "$name" $((used / 100)) $((used % 100)) "$execs" "$rate" "$chunks" "$rc" "$crashes" \
  $((SECONDS - start_wall))
exit $rc
