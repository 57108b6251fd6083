"""A log server's agent (`reflex agent --follow-hosts DIR --signing-keys
KEYS`, runtime/deploy/agent_hosts.h): DIR/<host>/ as rsyslog's per-host
template keeps it. Against a real redis-server on loopback:
  - node-0017's directory, there at start: its events come out with host
    node-0017 and node-0017's devices, evidence its file;
  - node-0018's directory, created after the agent started: followed, its
    events node-0018's (the PCIe switch of its fatal AER);
  - a line in node-0017's file naming node-0018 (a syslog host field) is
    refused: no event from that line, while the line after it is read;
  - each entry is signed as its event's host with that host's key
    (computed here from the master key, event_signing.cpp's definition);
  - a directory whose name is no host name is not followed.
The lines are examples/incident-pcie's real ones (its README cites their
sources); the appended ones are its node-0018 Xid 79 line in syslog form
and its node-0017 Xid 13 line at a later time."""
import argparse
import hashlib
import hmac
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Redis, check, dump_logs_on_failure, spawn, tempdir, wait_for  # noqa

ap = argparse.ArgumentParser()
ap.add_argument("--reflex", required=True)
ap.add_argument("--kb", required=True)
ap.add_argument("--bundle", required=True)
a = ap.parse_args()

tmp = tempdir()
dump_logs_on_failure(tmp)
topo = os.path.join(a.bundle, "topology.json")
remote = os.path.join(tmp, "remote")
os.makedirs(os.path.join(remote, "node-0017"))
os.makedirs(os.path.join(remote, "bad name"))  # not a host name: not followed
k17 = os.path.join(remote, "node-0017", "kern.log")
shutil.copy(os.path.join(a.bundle, "hosts", "node-0017", "kern.log"), k17)
with open(os.path.join(remote, "bad name", "kern.log"), "w") as f:
    f.write(open(k17).read())


def run(*args):
    return subprocess.run([a.reflex] + list(args), stdout=subprocess.PIPE, check=True,
                          text=True).stdout.strip()


def secret(path, text):
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
        f.write(text + "\n")
    return path


keys = os.path.join(tmp, "keys")
os.makedirs(keys)
master = secret(os.path.join(tmp, "master.key"), run("key", "new"))
for h in ("node-0017", "node-0018"):
    secret(os.path.join(keys, h + ".key"), run("key", "derive", "--master", master, "--host", h))
master_hex = open(master).read().strip()


def signature(host, shard, eid, payload):
    key = hmac.new(bytes.fromhex(master_hex), b"reflex host key\n" + host.encode(),
                   hashlib.sha256).digest()
    text = b"reflex entry v1"
    for f in (host.encode(), shard.encode(), eid.encode(), payload):
        text += b"\n" + str(len(f)).encode() + b":" + f
    return hmac.new(key, text, hashlib.sha256).hexdigest()


redis = Redis(tmp).start()
STREAM = "reflex:{job:job-42}:events"
err = os.path.join(tmp, "agent.log")
agent = spawn([a.reflex, "agent", "--kb", a.kb, "--topology", topo, "--host", "logsrv",
               "--follow-hosts", remote, "--signing-keys", keys, "--redis", redis.url(),
               "--state", os.path.join(tmp, "agent.state"), "--year", "2026"],
              stdout=subprocess.DEVNULL, stderr=open(err, "w"))


def events():
    out = []
    for _, f in redis.stream(STREAM):
        ev = json.loads(f["e"])
        ev["_f"] = f
        out.append(ev)
    return out


def from_file(host, fn):
    path = os.path.join(remote, host, fn)
    return [e for e in events() if e["evidence"].rsplit(":", 1)[0] == path]


try:
    wait_for(lambda: from_file("node-0017", "kern.log"), 30, "node-0017's events")
    # A host directory created while the agent runs (files first, then the
    # rename into the tree, as a log server's new host appears at once).
    new = os.path.join(tmp, "node-0018.new")
    shutil.copytree(os.path.join(a.bundle, "hosts", "node-0018"), new)
    os.rename(new, os.path.join(remote, "node-0018"))
    wait_for(lambda: any(e["device"] == "node-0018/pcie/0000:5c:00.0"
                         for e in from_file("node-0018", "kern.log")), 30,
             "node-0018's events, its directory created after the start")
    # A line in node-0017's file naming node-0018, then one of node-0017's own.
    n17 = sum(1 for _ in open(k17))
    with open(k17, "a") as f:
        f.write("Mar  5 12:40:00 node-0018 kernel: [ 9662.910385] NVRM: Xid (PCI:0000:5d:00): "
                "79, pid=48213, name=python, GPU has fallen off the bus.\n")
        f.write("Mar  5 12:41:00 node-0017 kernel: [ 4522.031877] NVRM: Xid (PCI:0000:ab:00): "
                "13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception on (GPC 1, TPC "
                "3, SM 0): Out Of Range Address\n")
    wait_for(lambda: any(e["evidence"] == "%s:%d" % (k17, n17 + 2) for e in events()), 30,
             "the line after the refused one")
    evs = events()
finally:
    agent.terminate()
    agent.wait(timeout=30)
    redis.stop()

check(not [e for e in evs if e["evidence"] == "%s:%d" % (k17, n17 + 1)],
      "the line in node-0017's file naming node-0018 is refused (no event)")
for host in ("node-0017", "node-0018"):
    mine = [e for e in evs if e["evidence"].startswith(os.path.join(remote, host) + "/")]
    check(mine, "events from %s's directory" % host)
    check(all(e["host"] == host for e in mine), "%s's events carry host %s" % (host, host))
    check(all(e["device"].startswith(host + "/") or e["device"].startswith("job/") for e in mine),
          "%s's events name its devices or its ranks" % host)
    for e in mine:
        f = e["_f"]
        check(f.get("h") == host.encode(), "%s's entries are signed as %s" % (host, host))
        check(f["s"].decode() == signature(host, "job:job-42", f["id"].decode(), f["e"]),
              "%s's entry signed with %s's key" % (host, host))
check(not [e for e in evs if "bad name" in e["evidence"]], "a non-host directory is not followed")
log = open(err).read()
check("not a host name" in log, "the skipped directory is said")
print("PASS: %d events (node-0017 %d, node-0018 %d), signed per host; the new host followed; "
      "the other host's line refused" %
      (len(evs), sum(e["host"] == "node-0017" for e in evs),
       sum(e["host"] == "node-0018" for e in evs)))
