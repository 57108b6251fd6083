#!/bin/sh
# `reflex agent --strict-transport` applies to the files it follows: the demo's
# syslog kern.log (lines tagged "kernel:" in syslog text, which anyone can
# forge) yields events without the flag and none with it.
#   agent_strict_transport.sh REFLEX KB BUNDLE WORKDIR
set -eu
REFLEX=$1 KB=$2 BUNDLE=$3 WORK=$4
run() {  # $1: extra flag; prints the number of event lines
  rm -rf "$WORK" && mkdir -p "$WORK"
  cp "$BUNDLE/hosts/node-0017/kern.log" "$WORK/kern.log"
  timeout 120 "$REFLEX" agent --kb "$KB" --topology "$BUNDLE/topology.json" --host node-0017 \
    --follow "$WORK/kern.log" --year 2026 --once $1 2>"$WORK/stderr" | grep -c . || true
}
plain=$(run "")
strict=$(run --strict-transport)
echo "events without --strict-transport: $plain, with it: $strict"
[ "$plain" -gt 0 ] || { echo "FAIL: no events from the demo's kern.log"; exit 1; }
[ "$strict" -eq 0 ] || { echo "FAIL: --strict-transport did not refuse syslog 'kernel:' lines"; exit 1; }
