"""A GPU that falls off the bus alerts with no job symptom: an agent follows
node-0018's logs (the demo incident's real lines, examples/incident-pcie,
whose README cites them); the benign start of its kern.log alerts nobody;
then the fatal AER and the Xid 79 are appended, and within settle + a few
seconds Alertmanager holds a kind="node" alert on the PCIe switch, the
evidence naming the file the agent read and its line numbers, and
reflex_watch_open_incidents is 1. Then the job's watchdog timeouts are
appended: the incident becomes the job's (kind="job", same root) and the
node alert is resolved."""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (Alertmanager, Redis, check, dump_logs_on_failure, free_port, http_get,  # noqa
                     metric, spawn, tempdir, wait_for)

ap = argparse.ArgumentParser()
ap.add_argument("--reflex", required=True)
ap.add_argument("--kb", required=True)
ap.add_argument("--bundle", required=True)
a = ap.parse_args()

SETTLE = 5
tmp = tempdir()
dump_logs_on_failure(tmp)
topo = os.path.join(a.bundle, "topology.json")
src = os.path.join(a.bundle, "hosts", "node-0018")
kern = open(os.path.join(src, "kern.log")).read().splitlines(True)
train = open(os.path.join(src, "train.log")).read().splitlines(True)
fatal = next(i for i, ln in enumerate(kern) if "Uncorrected (Fatal)" in ln)
first_watchdog = next(i for i, ln in enumerate(train) if "Watchdog caught" in ln)
host_dir = os.path.join(tmp, "var-log", "node-0018")
os.makedirs(host_dir)
with open(os.path.join(src, "boot_time")) as f, open(os.path.join(host_dir, "boot_time"), "w") as g:
    g.write(f.read())
kern_path = os.path.join(host_dir, "kern.log")
train_path = os.path.join(host_dir, "train.log")
with open(kern_path, "w") as f:
    f.writelines(kern[:fatal])  # boot banner, NIC noise, a corrected AER
with open(train_path, "w") as f:
    f.writelines(train[:first_watchdog])  # launch, NCCL INFO, training steps

redis = Redis(tmp).start()
am = Alertmanager(tmp).start()
mport = free_port()
diag = spawn([a.reflex, "watch", "--kb", a.kb, "--topology", topo, "--redis", redis.url(),
              "--owner", "d1", "--settle", "%ds" % SETTLE, "--alertmanager", am.url(),
              "--alert-resend", "2s", "--metrics", "127.0.0.1:%d" % mport],
             stdout=open(os.path.join(tmp, "diag.jsonl"), "w"),
             stderr=open(os.path.join(tmp, "diag.log"), "w"))
agent = spawn([a.reflex, "agent", "--kb", a.kb, "--topology", topo, "--host", "node-0018",
               "--follow", host_dir, "--redis", redis.url(), "--year", "2026", "--poll", "100ms"],
              stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "agent.log"), "w"))
murl = "http://127.0.0.1:%d/metrics" % mport


def watch_metric(name):
    return metric(http_get(murl), name)


def ours():
    return [x for x in am.alerts() if x["labels"].get("alertname") == "ReflexRootCause"
            and x["status"]["state"] == "active" and x["endsAt"] > x["updatedAt"]]


# The benign start is read, published and fed; nothing alerts.
wait_for(lambda: watch_metric("reflex_watch_events_total") >= 1, 30, "the noise to be fed")
time.sleep(SETTLE + 3)
check(ours() == [], "benign lines (NIC noise, a corrected AER) alert nobody")
check(watch_metric("reflex_watch_open_incidents") == 0, "and open no incident")

# The GPU falls off the bus: a fatal AER on its switch, Xid 79. No job symptom.
with open(kern_path, "a") as f:
    f.writelines(kern[fatal:])
t0 = time.time()
node = wait_for(lambda: [x for x in ours() if x["labels"].get("kind") == "node"], SETTLE + 20,
                "a kind=node alert")
took = time.time() - t0
lab, ann = node[0]["labels"], node[0]["annotations"]
check(lab["device"] == "node-0018/pcie/0000:5c:00.0" and lab["host"] == "node-0018",
      "the node alert names the PCIe switch above GPU 3 of node-0018 (%s)" % lab["device"])
check(took < SETTLE + 15, "it arrived %.1f s after the lines (settle %d s)" % (took, SETTLE))
check(lab["fault_class"] == "pcie" and lab["severity"] == "critical",
      "fault_class pcie, severity critical")
check(watch_metric("reflex_watch_open_incidents") == 1, "reflex_watch_open_incidents is 1")
# The evidence is the file the agent read, with its line numbers in that file.
want = "%s:%d" % (kern_path, fatal + 1)
check(want in ann["evidence"], "the evidence names %s (%s)" % (want, ann["evidence"][:160]))
# So does the published diagnosis (JSONL on the diagnoser's stdout).
with open(os.path.join(tmp, "diag.jsonl")) as f:
    first = json.loads(f.readline())
link = first["root_causes"][0]["chain"][0]
check(first["trigger"] is None and link["evidence"] == want,
      "the diagnosis: trigger null, root evidence %s" % link["evidence"])

# The job then fails on it: the same root, now as the job's incident.
with open(train_path, "a") as f:
    f.writelines(train[first_watchdog:])
job = wait_for(lambda: [x for x in ours() if x["labels"].get("kind") == "job"], SETTLE + 30,
               "a kind=job alert")
check(job[0]["labels"]["device"] == lab["device"] and job[0]["labels"]["job"] == "job-42",
      "the job alert names the same root, job-42 (%s)" % job[0]["labels"]["device"])
wait_for(lambda: not [x for x in ours() if x["labels"].get("kind") == "node"], 20,
         "the node alert to be resolved")
check(True, "the node alert is resolved once the job symptom joined")
diag.terminate()
agent.terminate()
diag.wait(timeout=20)
agent.wait(timeout=20)
print("PASS")
