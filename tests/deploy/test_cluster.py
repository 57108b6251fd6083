"""3 agents + 2 diagnosers + Alertmanager on a multi-host incident
(examples/incident-pcie, 2 hosts): the alert names the root that
`reflex diagnose` names on the same bundle; the diagnoser owning the shard is
kill -9'd mid-incident, the other takes over, the root is published once and
no event is lost."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (Alertmanager, Redis, check, free_port, http_get, metric, spawn,  # noqa
                     tempdir, wait_for)

ap = argparse.ArgumentParser()
ap.add_argument("--reflex", required=True)
ap.add_argument("--kb", required=True)
ap.add_argument("--bundle", required=True)
a = ap.parse_args()

tmp = tempdir()
topo = os.path.join(a.bundle, "topology.json")
expected = json.loads(subprocess.run([a.reflex, "diagnose", "--kb", a.kb, a.bundle],
                                     capture_output=True, text=True, timeout=120,
                                     check=True).stdout)
root = expected["root_causes"][0]
n_events = len(subprocess.run([a.reflex, "events", "--kb", a.kb, a.bundle], capture_output=True,
                              text=True, timeout=120, check=True).stdout.splitlines())
print("reflex diagnose: root %s (%s); reflex events: %d events" %
      (root["device"], root["fault_class"], n_events), flush=True)

redis = Redis(tmp).start()
am = Alertmanager(tmp).start()
shutil.copytree(os.path.join(a.bundle, "hosts"), os.path.join(tmp, "logs"))
logs = os.path.join(tmp, "logs")

diag = {}
for name in ("d1", "d2"):
    mport = free_port()
    out = open(os.path.join(tmp, name + ".jsonl"), "w")
    p = spawn([a.reflex, "watch", "--kb", a.kb, "--topology", topo, "--redis", redis.url(),
               "--owner", name, "--lease-ttl", "2s", "--settle", "4s", "--alertmanager",
               am.url(), "--alert-resend", "5s", "--metrics", "127.0.0.1:%d" % mport,
               "--log-format", "json"],
              stdout=out, stderr=open(os.path.join(tmp, name + ".log"), "w"))
    diag[name] = (p, mport, out)


def agent(name, host, follow):
    return spawn([a.reflex, "agent", "--kb", a.kb, "--topology", topo, "--host", host,
                  "--follow", follow, "--redis", redis.url(), "--year", "2026", "--state",
                  os.path.join(tmp, name + ".state")],
                 stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, name + ".log"), "w"))


shard = "job:job-42"
# Agent 1 first: the incident's first host; the owner sees part of the incident.
agents = [agent("a1", "node-0017", os.path.join(logs, "node-0017"))]
owner = wait_for(lambda: (redis.cli("GET", "reflex:{%s}:lease" % shard).strip() or None), 30,
                 "a diagnoser to own the shard")
check(owner in diag, "diagnoser %s owns shard %s" % (owner, shard))
other = "d2" if owner == "d1" else "d1"


def events_seen(name):
    try:
        return metric(http_get("http://127.0.0.1:%d/metrics" % diag[name][1]),
                      "reflex_watch_events_total")
    except Exception:
        return 0


wait_for(lambda: events_seen(owner) > 0, 30, "the owner to read agent 1's events")
seen_before = events_seen(owner)
diag[owner][0].kill()  # kill -9 mid-incident, before its settle window ends
diag[owner][0].wait(timeout=10)
print("killed %s after it read %d event(s)" % (owner, seen_before), flush=True)
agents.append(agent("a2", "node-0018", os.path.join(logs, "node-0018", "kern.log")))
agents.append(agent("a3", "node-0018", os.path.join(logs, "node-0018", "train.log")))

wait_for(lambda: redis.cli("GET", "reflex:{%s}:lease" % shard).strip() == other, 20,
         "%s to take the shard over" % other)
check(True, "%s took over shard %s after the lease lapsed" % (other, shard))


def firing():
    return [x for x in am.alerts() if x["labels"].get("alertname") == "ReflexRootCause"]


# An early answer (settle passed before the last agents' events came) may be
# alerted first; later evidence re-diagnoses and the alert follows the answer.
top = wait_for(lambda: [x for x in firing() if x["labels"]["device"] == root["device"]], 90,
               "the alert for %s in Alertmanager" % root["device"])
check(top, "Alertmanager holds an alert for %s (all alerts: %s)" %
      (root["device"], [x["labels"]["device"] for x in firing()]))
lab = top[0]["labels"]
check(lab["fault_class"] == root["fault_class"], "alert fault_class %s" % lab["fault_class"])
for k in ("alertname", "cluster", "host", "device", "fault_class", "remediation", "job",
          "severity"):
    check(k in lab, "alert label %s=%s" % (k, lab.get(k)))
ann = top[0]["annotations"]
check(".rfx:" in ann.get("rule", ""), "alert annotation rule %s" % ann.get("rule"))
check(ann.get("evidence") and ann.get("action") is not None and ann.get("summary"),
      "alert annotations summary/evidence/action present")
r = subprocess.run(["amtool", "alert", "query", "--alertmanager.url=" + am.url(), "-o", "json"],
                   capture_output=True, text=True, timeout=30)
check(r.returncode == 0 and root["device"] in r.stdout, "amtool alert query names the root")

# Published once: the diagnoses stream and both diagnosers' stdout.
time.sleep(3)  # a few more ticks: a repeat would show now
entries = redis.stream("reflex:{%s}:diagnoses" % shard)
tops = [json.loads(f["diagnosis"])["root_causes"][0]["device"] for _, f in entries
        if json.loads(f["diagnosis"])["root_causes"]]
check(tops.count(root["device"]) == 1,
      "the root is published once on the diagnoses stream (%d entries: %s)" % (len(entries), tops))
out_lines = []
for name in diag:
    diag[name][2].flush()
    with open(os.path.join(tmp, name + ".jsonl")) as f:
        out_lines += [json.loads(x) for x in f if x.strip()]
check(sum(1 for d in out_lines if d["root_causes"] and
          d["root_causes"][0]["device"] == root["device"]) == 1,
      "the root appears once on the diagnosers' stdout")

# No event lost: every event `reflex events` finds is in the stream, and the
# survivor fed each distinct one to its engine.
ids = set(f.get("id") for _, f in redis.stream("reflex:{%s}:events" % shard))
check(len(ids) == n_events, "stream holds %d distinct events (reflex events: %d)" %
      (len(ids), n_events))
wait_for(lambda: events_seen(other) == n_events, 20, "the survivor to read every event")
check(True, "%s fed %d events" % (other, n_events))
for p in agents:
    p.terminate()
for p in agents:
    p.wait(timeout=15)
diag[other][0].terminate()
check(diag[other][0].wait(timeout=20) == 0, "diagnoser exits 0 on SIGTERM")
am.stop()
redis.stop()
print("PASS")
