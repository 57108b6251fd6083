#!/bin/sh
# scripts/collect-topology.sh as an SRE runs it: on this machine as it is (a
# missing tool is skipped with a message, never a stray or empty file), then
# with stand-in tools (a failing nvidia-smi, an lspci printing nothing, an
# nvidia-smi printing real outputs of data/SOURCES.md) and reflex topology on
# what was collected.
set -u
REFLEX=$1 DATA=$2 SCRIPT=$3 OUT=$4
rm -rf "$OUT" && mkdir -p "$OUT"
fail() { echo "FAIL: $*"; exit 1; }

# 1. This machine, whatever it has.
sh "$SCRIPT" "$OUT/here" 2>"$OUT/here.err" || fail "exit $? on this machine: $(cat "$OUT/here.err")"
[ -s "$OUT/here/hostname" ] || fail "no hostname file"
ls "$OUT/here" | grep -q '\.tmp$' && fail "a .tmp file was left"
for pair in lspci:lspci-tv.txt lspci:lspci-vvv.txt nvidia-smi:nvidia-smi-q.txt \
    nvidia-smi:nvidia-smi-topo-m.txt nvidia-smi:nvidia-smi-query-gpu.csv \
    nvidia-smi:nvidia-smi-nvlink-s.txt ibstat:ibstat.txt; do
  tool=${pair%%:*} file=${pair#*:}
  if [ -e "$OUT/here/$file" ]; then
    [ -s "$OUT/here/$file" ] || fail "$file kept empty"
  else
    grep -q "collect-topology: .*$file skipped" "$OUT/here.err" || fail "$file neither kept nor noted"
  fi
  if ! command -v "$tool" >/dev/null 2>&1; then
    grep -q "collect-topology: $tool not found: $file skipped" "$OUT/here.err" ||
      fail "absent $tool not noted for $file: $(cat "$OUT/here.err")"
  fi
done
"$REFLEX" topology "$OUT/here" >"$OUT/here.json" 2>"$OUT/here.rerr"; rc=$?
if [ "$(ls "$OUT/here" | grep -cv '^hostname$')" -eq 0 ]; then
  [ $rc -eq 2 ] || fail "nothing collected but exit $rc"
  grep -Eq 'no recognised tool output|neither a host' "$OUT/here.rerr" || fail "empty collection not named"
else
  [ $rc -eq 0 ] || fail "collected here but exit $rc: $(cat "$OUT/here.rerr")"
fi

# 2. Stand-in tools: the script keeps what worked and says what did not.
mkdir -p "$OUT/bin"
cat >"$OUT/bin/nvidia-smi" <<EOF
#!/bin/sh
case "\$*" in
  "nvlink -s") cat "$DATA/siboehm-bench/nvidia-smi-nvlink-s.txt" ;;
  --query-gpu=*) cat "$DATA/nuxhash-10/nvidia-smi-query-gpu.csv" ;;
  *) echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."; exit 9 ;;
esac
EOF
printf '#!/bin/sh\nexit 0\n' >"$OUT/bin/lspci"
printf '#!/bin/sh\nexit 1\n' >"$OUT/bin/ibdev2netdev"
printf '#!/bin/sh\necho ibpanic\nexit 1\n' >"$OUT/bin/ibstat"
chmod +x "$OUT/bin/"*
PATH="$OUT/bin:$PATH" sh "$SCRIPT" "$OUT/stub" 2>"$OUT/stub.err" || fail "exit $? with stand-ins"
for f in lspci-tv.txt nvidia-smi-q.txt nvidia-smi-topo-m.txt ibdev2netdev.txt ibstat.txt; do
  [ -e "$OUT/stub/$f" ] && fail "$f kept from a failed or silent tool"
done
grep -q "'nvidia-smi -q' failed: nvidia-smi-q.txt skipped" "$OUT/stub.err" || fail "failed -q not noted"
grep -q "'lspci -tv' failed: lspci-tv.txt skipped" "$OUT/stub.err" || fail "silent lspci not noted"
ls "$OUT/stub" | grep -q '\.tmp$' && fail "a .tmp file was left"
cmp -s "$OUT/stub/nvidia-smi-nvlink-s.txt" "$DATA/siboehm-bench/nvidia-smi-nvlink-s.txt" ||
  fail "nvlink -s not kept as printed"
"$REFLEX" topology "$OUT/stub" >"$OUT/stub.json" 2>"$OUT/stub.rerr" ||
  fail "exit $? on the collected outputs: $(cat "$OUT/stub.rerr")"
# The two stand-in outputs come from two machines: their UUIDs disagree, so no
# GPU gets the other machine's links.
grep -q 'nvlink -s GPU 0 has UUID GPU-5baec991-.*its links are left out' "$OUT/stub.rerr" ||
  fail "UUID disagreement not noted"
grep -q '"nvlinks"' "$OUT/stub.json" && fail "links of another machine's GPU kept"
[ "$(grep -c '"index":' "$OUT/stub.json")" -eq 5 ] || fail "not the 5 GPUs of --query-gpu"
grep -q 'note: host .*: no lspci output' "$OUT/stub.rerr" || fail "missing lspci not noted"
echo PASS
