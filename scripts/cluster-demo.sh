#!/usr/bin/env bash
# The deployment on one machine (README, "Deployment"): Redis, 3 agents over
# the demo incident's hosts, 2 diagnosers and Alertmanager, all on free
# loopback ports in a temp dir; prints the alert Alertmanager holds
# (`amtool alert query`) and stops everything, also on failure or Ctrl-C.
#   scripts/cluster-demo.sh [BUILD_DIR]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
REFLEX=$BUILD/tools/reflex/reflex
BUNDLE=$ROOT/examples/incident-pcie
[ -x "$REFLEX" ] || { echo "cluster-demo: build first (make build): no $REFLEX" >&2; exit 2; }
for t in redis-server redis-cli prometheus-alertmanager amtool python3; do
  command -v $t >/dev/null || { echo "cluster-demo: needs $t (scripts/setup.sh)" >&2; exit 2; }
done

TMP=$(mktemp -d /tmp/reflex-cluster-demo.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null || true
  done
  rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_until() {  # wait_until SECONDS DESCRIPTION COMMAND...
  local n=$(( $1 * 10 )) what=$2; shift 2
  for _ in $(seq $n); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "cluster-demo: timed out waiting for $what" >&2; return 1
}

RP=$(port); AP=$(port)
mkdir -p "$TMP/redis" "$TMP/am" "$TMP/logs"
redis-server --bind 127.0.0.1 --port "$RP" --dir "$TMP/redis" --appendonly yes --save "" \
  --daemonize no --logfile "$TMP/redis/redis.log" & PIDS+=($!)
wait_until 15 redis redis-cli -p "$RP" ping
printf 'route:\n  receiver: "null"\n  group_wait: 1s\nreceivers:\n  - name: "null"\n' >"$TMP/am/am.yml"
prometheus-alertmanager --config.file="$TMP/am/am.yml" --storage.path="$TMP/am/data" \
  --web.listen-address="127.0.0.1:$AP" --cluster.listen-address= >"$TMP/am/am.log" 2>&1 & PIDS+=($!)
wait_until 30 alertmanager amtool --alertmanager.url="http://127.0.0.1:$AP" config show
echo "redis on 127.0.0.1:$RP, alertmanager on 127.0.0.1:$AP, logs in $TMP"

URL="redis://127.0.0.1:$RP"
KB=$ROOT/kb TOPO=$BUNDLE/topology.json
for d in d1 d2; do
  "$REFLEX" watch --kb "$KB" --topology "$TOPO" --redis "$URL" --owner "$d" --settle 5s \
    --lease-ttl 3s --alertmanager "http://127.0.0.1:$AP" --alert-resend 10s \
    >"$TMP/$d.jsonl" 2>"$TMP/$d.log" & PIDS+=($!)
done
cp -r "$BUNDLE/hosts/." "$TMP/logs/"
# Three agents: node-0017's directory, node-0018's kernel log, node-0018's training log.
agent() { "$REFLEX" agent --kb "$KB" --topology "$TOPO" --host "$1" --follow "$2" --redis "$URL" \
            --year 2026 --state "$TMP/$3.state" 2>"$TMP/$3.log" & PIDS+=($!); }
agent node-0017 "$TMP/logs/node-0017" a1
agent node-0018 "$TMP/logs/node-0018/kern.log" a2
agent node-0018 "$TMP/logs/node-0018/train.log" a3

echo "waiting for the alert (settle 5s) ..."
has_alert() { amtool alert query --alertmanager.url="http://127.0.0.1:$AP" -o json | grep -q ReflexRootCause; }
wait_until 60 "the alert" has_alert
sleep 6  # later evidence may revise the first answer
echo "--- amtool alert query"
amtool alert query --alertmanager.url="http://127.0.0.1:$AP" -o extended
echo "--- diagnoses published (both diagnosers' stdout)"
cat "$TMP"/d1.jsonl "$TMP"/d2.jsonl | python3 -c '
import json, sys
for l in sys.stdin:
    d = json.loads(l)
    r = d["root_causes"][0] if d["root_causes"] else {}
    print(d.get("incident"), "rev", d.get("revision"), "->", r.get("device"), r.get("fault_class"))'
echo "--- reflex diagnose on the same bundle"
"$REFLEX" diagnose --kb "$KB" "$BUNDLE" | python3 -c '
import json, sys; r = json.load(sys.stdin)["root_causes"][0]; print(r["device"], r["fault_class"])'
