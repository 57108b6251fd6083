#!/usr/bin/env bash
# CI's sanitized run of the tables of hostile input (`make test` runs it
# through `make clang-ci`): the clang ASan+UBSan tree's own `reflex`,
# `reflexc` and test binaries over the bad-input and spoof tables, as ctest
# defines them. The gcc suite runs the same tables unsanitized; here a
# read past a buffer, a use after free, a leak or undefined behaviour that
# leaves the output right still fails. Every sanitizer report goes to a file
# (log_path), so one fails the run even where a test looks only at the output
# or a child's exit status is not checked.
#   sanitized_tables.sh BUILD_DIR [JOBS]
set -u
build=$(cd "$1" && pwd) jobs=${2:-2}
# One regex a table: each must match at least one registered test, so a table
# that is renamed or not built fails here rather than silently not running.
tables=(
  'formats\.spoof_cli$' 'formats\.archive_cli$' 'formats\.stdin_cli$' 'formats\.inputs_cli$'
  'compiler\.BadInput\.' 'TopologyLoad\.' 'Bundle\.' 'Sources\.'
)
regex="^($(IFS='|' && echo "${tables[*]}"))"
cd "$build" || exit 2
for t in "${tables[@]}"; do
  n=$(ctest -N -R "^$t" | sed -n 's/^Total Tests: //p')
  if [ "${n:-0}" -eq 0 ]; then
    echo "sanitized tables: no test matches ^$t in $build (not built?)"
    exit 1
  fi
done

reports=$build/sanitizer-reports
rm -rf "$reports" && mkdir -p "$reports"
# The same log_path in both: with ASan and UBSan in one runtime, the common
# flags UBSAN_OPTIONS sets are read last and apply to both.
log=log_path=$reports/report
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:$log
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:$log
# formats.spoof_cli runs last and alone: its `reflexc build` of the shipped KB
# (~70 CPU-s under ASan here) has 180 s in the test, and beside the inputs
# table's own KB build on a loaded 2-core machine it took longer (measured).
alone='formats\.spoof_cli$'
logf=$build/sanitized-tables.log
ctest --output-on-failure --no-tests=error -j "$jobs" -R "$regex" -E "^$alone" >"$logf" 2>&1
rc=$?
ctest --output-on-failure --no-tests=error -R "^$alone" >>"$logf" 2>&1 || rc=1
grep -E 'tests passed|Total Test time' "$logf"
shopt -s nullglob
found=("$reports"/*)
if [ ${#found[@]} -gt 0 ]; then
  echo "sanitized tables: ${#found[@]} sanitizer report(s) in $reports; the first:"
  for f in "${found[@]:0:2}"; do
    echo "== $f"
    grep -v -E '^ *0x[0-9a-f]+: |^Shadow|^  [A-Z].*: ' "$f" | head -n 30
  done
  rc=1
fi
if [ $rc -ne 0 ]; then
  echo "sanitized tables: FAILED (ctest log $logf)"
  grep -E '\*\*\*|FAIL' "$logf" | head -40
  exit 1
fi
echo "sanitized tables: ok ($logf)"
