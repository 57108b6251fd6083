#!/bin/sh
# reflex topology as a user runs it: exit codes, stdout, notes on stderr.
set -u
REFLEX=$1 DATA=$2 OUT=$3
rm -rf "$OUT" && mkdir -p "$OUT"
fail() { echo "FAIL: $*"; exit 1; }

"$REFLEX" topology --hostfile "$DATA/e2e/hostfile" --job job-7 -o "$OUT/t.json" "$DATA/e2e/hosts" 2>"$OUT/err" ||
  fail "exit $? on good input: $(cat "$OUT/err")"
grep -q '"name": "asus-b"' "$OUT/t.json" || fail "asus-b missing"
grep -q 'note: host asus-a: GPU 0 (0000:01:00.0): no PCIe switch seen' "$OUT/err" || fail "no root-port note"
# stdout carries the document alone.
"$REFLEX" topology "$DATA/e2e/hosts/asus-a" >"$OUT/a.json" 2>/dev/null || fail "one host dir"
head -c 1 "$OUT/a.json" | grep -q '{' || fail "stdout is not the document"
# The built file is a topology reflex diagnose takes.
"$REFLEX" diagnose --topology "$OUT/t.json" --kb "$DATA/../../../kb" --format text "$DATA/e2e/hosts/asus-a" >/dev/null 2>&1
[ $? -le 1 ] || fail "diagnose refused the built topology"

"$REFLEX" topology "$OUT/missing" >/dev/null 2>"$OUT/err"; rc=$?
[ $rc -eq 2 ] || fail "missing dir: exit $rc"
grep -q 'missing: not a directory' "$OUT/err" || fail "missing dir not named"
mkdir -p "$OUT/bad" && printf '\tGPU0\tGPU1\nGPU0\t X \n' >"$OUT/bad/topo.txt"
"$REFLEX" topology "$OUT/bad" >/dev/null 2>"$OUT/err"; rc=$?
[ $rc -eq 2 ] || fail "malformed topo: exit $rc"
grep -q 'bad/topo.txt:2: nvidia-smi topo -m' "$OUT/err" || fail "malformed file not named: $(cat "$OUT/err")"
mkdir -p "$OUT/fifo" && cp "$DATA/e2e/hosts/asus-a/lspci-tv.txt" "$OUT/fifo/" && mkfifo "$OUT/fifo/pipe"
"$REFLEX" topology "$OUT/fifo" >/dev/null 2>"$OUT/err" || fail "a FIFO in a host dir: $(cat "$OUT/err")"
grep -q 'pipe: skipped (not a regular file)' "$OUT/err" || fail "FIFO not noted"
# nvlink -s alone (real, data/SOURCES.md): GPUs by index, links as printed.
mkdir -p "$OUT/nvl" && cp "$DATA/siboehm-bench/nvidia-smi-nvlink-s.txt" "$OUT/nvl/links" && echo a6000 >"$OUT/nvl/hostname"
"$REFLEX" topology "$OUT/nvl" >"$OUT/nvl.json" 2>"$OUT/err" || fail "nvlink -s alone: $(cat "$OUT/err")"
grep -q '"all_inactive": true' "$OUT/nvl.json" || fail "all-inactive GPU lost"
[ "$(grep -c '"links": 4' "$OUT/nvl.json")" -eq 2 ] || fail "GPUs 0 and 1 not with 4 links"
grep -q 'GPUs known by index only' "$OUT/err" || fail "index-only GPUs not noted"
# A --query-gpu CSV without an index column is refused, named by file and line.
mkdir -p "$OUT/noidx" && cp "$DATA/nvidia-docker-1418/nvidia-smi-query-gpu.csv" "$OUT/noidx/gpus.csv"
"$REFLEX" topology "$OUT/noidx" >/dev/null 2>"$OUT/err"; rc=$?
[ $rc -eq 2 ] || fail "CSV without index: exit $rc"
grep -q "noidx/gpus.csv:1: nvidia-smi --query-gpu: no 'index' column" "$OUT/err" ||
  fail "CSV without index not named: $(cat "$OUT/err")"
printf 'node[1-2]\n' >"$OUT/hf"
"$REFLEX" topology --hostfile "$OUT/hf" "$DATA/e2e/hosts" >/dev/null 2>"$OUT/err"; rc=$?
[ $rc -eq 2 ] || fail "compressed hostlist: exit $rc"
echo PASS
