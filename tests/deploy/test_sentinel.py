"""Redis under Sentinel: a primary, two replicas and three sentinels on
loopback (deploy/sentinel.conf as shipped, only the addresses and the
timings changed), an agent with --redis-min-replicas 1 and a diagnoser,
both on a redis+sentinel:// URL, and Alertmanager when installed. The
demo incident's real lines (examples/incident-pcie, node-0018) are written
in three steps: the benign start, the fault (fatal AER, Xid 79), and, after
the primary is kill -9'd and a replica promoted, the job's symptom. The job
alert still names the PCIe switch; the stream on the new primary holds
every event of the lines written (nothing the agent counted as delivered
was lost: it counts a batch only once a replica holds it); no diagnosis is
published twice. Two replicas, not one: with one, the promoted replica has
none left and WAIT 1 holds every batch back until another joins (the
trade-off docs/deployment.md describes). Exits 77 (skipped) without Redis
Sentinel."""
import argparse
import collections
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (Alertmanager, Resp, check, dump_logs_on_failure, free_port, http_get,  # noqa
                     metric, spawn, tempdir, wait_for)

ap = argparse.ArgumentParser()
ap.add_argument("--reflex", required=True)
ap.add_argument("--kb", required=True)
ap.add_argument("--bundle", required=True)
ap.add_argument("--sentinel-conf", required=True)
a = ap.parse_args()
T0 = time.time()

# Debian's redis-sentinel is redis-server started as a sentinel.
if shutil.which("redis-sentinel"):
    SENTINEL = ["redis-sentinel"]
elif shutil.which("redis-server"):
    SENTINEL = ["redis-server"]
else:
    print("SKIP: neither redis-sentinel nor redis-server is installed")
    sys.exit(77)

NAME = "reflex"
SETTLE = 3
tmp = tempdir()
dump_logs_on_failure(tmp)


def call(port, *args):
    c = Resp(port)
    try:
        return c.call(*args)
    finally:
        c.close()


def info(port, section="replication"):
    text = call(port, "INFO", section).decode()
    return dict(ln.split(":", 1) for ln in text.splitlines() if ":" in ln)


class DataServer:
    """A redis-server (AOF, fsync always) in its own directory; a replica
    of `primary` when given."""

    def __init__(self, name, primary=None):
        self.name, self.port = name, free_port()
        self.dir = os.path.join(tmp, name)
        os.makedirs(self.dir)
        args = ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--dir",
                self.dir, "--appendonly", "yes", "--appendfsync", "always", "--save", "",
                "--daemonize", "no", "--logfile", os.path.join(tmp, name + ".log")]
        if primary:
            args += ["--replicaof", "127.0.0.1", str(primary.port)]
        self.proc = spawn(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(lambda: call(self.port, "PING") == "PONG", 15, "%s to answer" % name)


class Sentinel:
    """deploy/sentinel.conf as shipped, with this run's port, directory and
    primary, and short timings: down after 1 s, a failover retried after 5 s."""

    def __init__(self, name, primary):
        self.name, self.port = name, free_port()
        conf = open(a.sentinel_conf).read()
        conf, n = re.subn(r"(?m)^sentinel monitor reflex \S+ \d+ 2$",
                          "sentinel monitor reflex 127.0.0.1 %d 2" % primary.port, conf)
        check(n == 1, "%s: deploy/sentinel.conf monitors '%s' with quorum 2" % (name, NAME))
        conf += ("port %d\ndir %s\nlogfile %s\nsentinel down-after-milliseconds reflex 1000\n"
                 "sentinel failover-timeout reflex 5000\n" %
                 (self.port, tmp, os.path.join(tmp, name + ".log")))
        path = os.path.join(tmp, name + ".conf")  # Sentinel rewrites it
        with open(path, "w") as f:
            f.write(conf)
        self.proc = spawn(SENTINEL + [path, "--sentinel"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
        wait_for(lambda: call(self.port, "PING") == "PONG", 15, "%s to answer" % name)

    def master(self):
        r = call(self.port, "SENTINEL", "master", NAME)
        return {r[i].decode(): r[i + 1].decode() for i in range(0, len(r), 2)}

    def primary_port(self):
        return int(call(self.port, "SENTINEL", "get-master-addr-by-name", NAME)[1])


primary = DataServer("redis-a")
replicas = [DataServer("redis-b", primary), DataServer("redis-c", primary)]
wait_for(lambda: info(primary.port).get("connected_slaves") == "2" and
         all(info(r.port).get("master_link_status") == "up" for r in replicas), 30,
         "both replicas to sync")
sentinels = [Sentinel("sentinel-%d" % i, primary) for i in range(3)]
wait_for(lambda: all(s.master().get("num-slaves") == "2" and
                     s.master().get("num-other-sentinels") == "2" for s in sentinels), 30,
         "the sentinels to find the replicas and each other")
check(True, "3 sentinels on deploy/sentinel.conf watch the primary and its 2 replicas")
url = "redis+sentinel://" + ",".join("127.0.0.1:%d" % s.port for s in sentinels) + "/" + NAME

topo = os.path.join(a.bundle, "topology.json")
src = os.path.join(a.bundle, "hosts", "node-0018")
kern = open(os.path.join(src, "kern.log")).read().splitlines(True)
train = open(os.path.join(src, "train.log")).read().splitlines(True)
fatal = next(i for i, ln in enumerate(kern) if "Uncorrected (Fatal)" in ln)
first_watchdog = next(i for i, ln in enumerate(train) if "Watchdog caught" in ln)
host_dir = os.path.join(tmp, "bundle", "hosts", "node-0018")
os.makedirs(host_dir)
shutil.copy(os.path.join(src, "boot_time"), os.path.join(host_dir, "boot_time"))
kern_path, train_path = os.path.join(host_dir, "kern.log"), os.path.join(host_dir, "train.log")
with open(kern_path, "w") as f:
    f.writelines(kern[:fatal])
with open(train_path, "w") as f:
    f.writelines(train[:first_watchdog])

am = Alertmanager(tmp).start() if shutil.which("prometheus-alertmanager") else None
dport, aport = free_port(), free_port()
diag_args = [a.reflex, "watch", "--kb", a.kb, "--topology", topo, "--redis", url, "--owner",
             "d1", "--settle", "%ds" % SETTLE, "--metrics", "127.0.0.1:%d" % dport]
if am:
    diag_args += ["--alertmanager", am.url(), "--alert-resend", "2s"]
diag = spawn(diag_args, stdout=open(os.path.join(tmp, "diag.jsonl"), "w"),
             stderr=open(os.path.join(tmp, "diag.log"), "w"))
agent = spawn([a.reflex, "agent", "--kb", a.kb, "--topology", topo, "--host", "node-0018",
               "--follow", host_dir, "--redis", url, "--redis-min-replicas", "1", "--state",
               os.path.join(tmp, "agent.state"), "--year", "2026", "--poll", "100ms",
               "--metrics", "127.0.0.1:%d" % aport],
              stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "agent.log"), "w"))


shard = "job:job-42"
key = "reflex:{%s}:events" % shard


def stream(port, k):
    c = Resp(port)
    try:
        return c.call("XRANGE", k, "-", "+")
    finally:
        c.close()


def am_(port, name):
    return metric(http_get("http://127.0.0.1:%d/metrics" % port), name)


def published():
    return am_(aport, "reflex_agent_published_events_total")


# WAIT at work: both replicas frozen (SIGSTOP), the benign start reaches
# the primary but no replica, so the agent counts nothing delivered and
# keeps it; thawed, it is delivered.
for r in replicas:
    r.proc.send_signal(signal.SIGSTOP)
try:
    wait_for(lambda: am_(aport, "reflex_agent_publish_failures_total") >= 2 and
             len(stream(primary.port, key)) > 0, 30, "publishes that no replica acknowledged")
    check(published() == 0 and am_(aport, "reflex_agent_buffer_events") > 0,
          "with no replica answering WAIT the agent counts nothing delivered and keeps %d "
          "event(s), though the primary has %d" % (am_(aport, "reflex_agent_buffer_events"),
                                                   len(stream(primary.port, key))))
finally:
    for r in replicas:
        r.proc.send_signal(signal.SIGCONT)
wait_for(lambda: published() > 0 and am_(dport, "reflex_watch_events_total") > 0, 30,
         "the benign start to be published and fed")
# The fault, published (on a replica too: WAIT 1), then the primary dies.
before = published()
with open(kern_path, "a") as f:
    f.writelines(kern[fatal:])
wait_for(lambda: published() > before and am_(aport, "reflex_agent_buffer_events") == 0, 30,
         "the fault's events to be delivered")
acked = published()
primary.proc.kill()
primary.proc.wait(timeout=10)
t_kill = time.time()
print("kill -9 the primary after %d delivered event(s)" % acked, flush=True)
with open(train_path, "a") as f:
    f.writelines(train[first_watchdog:])
new = wait_for(lambda: (lambda p: p if p != primary.port else None)(sentinels[0].primary_port()),
               30, "a replica to be promoted")
check(new in [r.port for r in replicas], "the sentinels promoted a replica (port %d) %.1f s "
      "after the kill" % (new, time.time() - t_kill))
promoted = next(r for r in replicas if r.port == new)
other = next(r for r in replicas if r.port != new)
wait_for(lambda: info(other.port).get("master_port") == str(new) and
         info(other.port).get("master_link_status") == "up", 30,
         "the other replica to follow the new primary")

want = collections.Counter()
for ln in subprocess.run([a.reflex, "events", "--kb", a.kb, "--topology", topo,
                          os.path.join(tmp, "bundle")], capture_output=True, text=True,
                         timeout=120).stdout.splitlines():
    want[json.loads(ln)["event"]] += 1


def distinct_ids(port):
    ids = set()
    for _, fv in stream(port, key):
        f = {fv[i].decode(): fv[i + 1] for i in range(0, len(fv), 2)}
        ids.add(f["id"])
    return ids


total = sum(want.values())
wait_for(lambda: len(distinct_ids(new)) == total and am_(aport, "reflex_agent_buffer_events") == 0,
         40, "every event on the new primary")
got = collections.Counter()
seen = set()
for _, fv in stream(new, key):
    f = {fv[i].decode(): fv[i + 1] for i in range(0, len(fv), 2)}
    if f["id"] not in seen:
        seen.add(f["id"])
        got[json.loads(f["e"])["name"]] += 1
check(got == want, "the new primary holds every event of the lines written (%d; reflex events "
      "%s)" % (total, dict(want)))
check(published() >= total, "the agent counted %d delivered, %d before the kill" %
      (published(), acked))

DEVICE = "node-0018/pcie/0000:5c:00.0"
if am:
    def job_alerts():
        return [x for x in am.alerts() if x["labels"].get("alertname") == "ReflexRootCause" and
                x["labels"].get("kind") == "job" and x["status"]["state"] == "active"]
    alert = wait_for(job_alerts, 40, "the job alert after the failover")
    check(len(alert) == 1 and alert[0]["labels"]["device"] == DEVICE,
          "one job alert, on %s, %.1f s after the kill" % (alert[0]["labels"]["device"],
                                                           time.time() - t_kill))


def diagnoses():
    out = []
    for _, fv in stream(new, "reflex:{%s}:diagnoses" % shard):
        f = {fv[i].decode(): fv[i + 1] for i in range(0, len(fv), 2)}
        d = json.loads(f["diagnosis"])
        roots = tuple(r["device"] for r in d["root_causes"])
        out.append((f["incident"].decode(), roots))
    return out


wait_for(lambda: any(r and r[0] == DEVICE for _, r in diagnoses()), 40,
         "the diagnosis on the new primary")
print("diagnoses: %s" % diagnoses(), flush=True)
time.sleep(3)  # a few more ticks: a repeat would show now
ds = diagnoses()
check(len(ds) == len(set(ds)), "no diagnosis published twice (%s)" % ds)
with open(os.path.join(tmp, "diag.jsonl")) as f:
    printed = [json.dumps(json.loads(x)["root_causes"], sort_keys=True) + str(
        json.loads(x).get("incident")) for x in f if x.strip()]
check(len(printed) == len(set(printed)), "nor printed twice by the diagnoser (%d)" % len(printed))
agent.terminate()
diag.terminate()
check(agent.wait(timeout=20) == 0 and diag.wait(timeout=20) == 0, "both exit 0 on SIGTERM")
check(time.time() - T0 < 90 * min(10.0, max(1.0, float(os.environ.get(
    "REFLEX_TEST_TIME_SCALE", "1") or 1))), "within 90 s (%.0f s)" % (time.time() - T0))
print("PASS")
