"""A diagnoser's memory bound (`reflex watch --redis --max-events`) against a
real redis-server: a shard fed far more events than --max-events holds at
most that many (the engine's retention drops the oldest half that no open
incident needs), says so in its metrics (reflex_watch_events_held,
reflex_watch_events_dropped_total), and still diagnoses. The events are a
real Xid 13 line (kb/xid.rfx's example, from NVIDIA's Xid catalog) on the
demo bundle's GPUs, 15 minutes apart in log time so none fold."""
import argparse
import datetime
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Redis, check, free_port, http_get, metric, spawn, tempdir, wait_for  # noqa

ap = argparse.ArgumentParser()
ap.add_argument("--reflex", required=True)
ap.add_argument("--kb", required=True)
ap.add_argument("--bundle", required=True)
a = ap.parse_args()

tmp = tempdir()
topo_path = os.path.join(a.bundle, "topology.json")
topo = json.load(open(topo_path))
gpus = [(h["name"], g["bdf"][5:7]) for h in topo["hosts"] for g in h["gpus"]]
redis = Redis(tmp, fsync="everysec")
redis.start()
N, MAX = 6000, 1000
XID13 = ("NVRM: Xid (PCI:0000:%s:00): 13, Graphics SM Warp Exception on (GPC 1, TPC 0): "
         "Out Of Range Address")
t0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
lines = []
for i in range(N):
    host, bus = gpus[i % len(gpus)]
    ts = (t0 + datetime.timedelta(minutes=15 * i)).strftime("%Y-%m-%dT%H:%M:%S.000000Z")
    lines.append(json.dumps({"host": host, "ts": ts, "source": "kernel", "msg": XID13 % bus}))
agent = subprocess.run([a.reflex, "agent", "--kb", a.kb, "--topology", topo_path, "--host",
                        "replay", "--stdin", "--once", "--redis", redis.url()],
                       input="\n".join(lines) + "\n", text=True, capture_output=True, timeout=120)
check(agent.returncode == 0, "the agent publishes %d events (%s)" % (N, agent.stderr[-300:]))

port = free_port()
d = spawn([a.reflex, "watch", "--kb", a.kb, "--topology", topo_path, "--settle", "2s",
           "--max-events", str(MAX), "--metrics", "127.0.0.1:%d" % port, "--redis", redis.url()],
          stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "d.log"), "w"))


def m(name):
    return metric(http_get("http://127.0.0.1:%d/metrics" % port), name)


def held_dropped():  # one scrape, so the two agree with each other
    body = http_get("http://127.0.0.1:%d/metrics" % port)
    return metric(body, "reflex_watch_events_held"), metric(body, "reflex_watch_events_dropped_total")


wait_for(lambda: m("reflex_watch_events_total") >= N, 120, "the diagnoser is fed every event")
# Received is counted on arrival, held and dropped once the engine took the
# batch: wait for the last batch to land (a loaded machine lags by seconds).
wait_for(lambda: sum(held_dropped()) == N, 60, "every event fed is held or dropped")
held, dropped = held_dropped()
check(0 < held <= MAX, "at most --max-events held (%d of %d fed)" % (held, N))
check(held + dropped == N, "held + dropped = fed (%d + %d = %d)" % (held, dropped, N))
d.terminate()
check(d.wait(timeout=30) == 0, "diagnoser exits 0")
bad = subprocess.run([a.reflex, "watch", "--kb", a.kb, "--topology", topo_path,
                      "--max-events", "10", "--redis", redis.url()],
                     capture_output=True, text=True, timeout=60)
check(bad.returncode == 2 and "--max-events" in bad.stderr, "--max-events below 1000 refused")
redis.stop()
print("PASS")
