"""Garbage in a stream (foreign entries, truncated JSON, huge fields, bytes
that are not UTF-8): counted by reason, skipped, and the diagnoser keeps
going — it still diagnoses the incident the agents publish after. The
metrics of the agent and of the diagnoser pass `promtool check metrics`."""
import argparse
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
ap.add_argument("--promtool", default="")
a = ap.parse_args()

tmp = tempdir()
topo = os.path.join(a.bundle, "topology.json")
expected = json.loads(subprocess.run([a.reflex, "diagnose", "--kb", a.kb, a.bundle],
                                     capture_output=True, text=True, timeout=120,
                                     check=True).stdout)["root_causes"][0]["device"]
redis = Redis(tmp).start()
key = "reflex:{job:job-42}:events"
c = redis.conn()
c.call("XADD", key, "*", "foo", "bar")                                   # foreign
c.call("XADD", key, "*", "id", "t1", "e", '{"name":"xid79_fallen_o')     # truncated JSON
c.call("XADD", key, "*", "id", "t2", "e", "x" * (3 << 20))               # huge field
c.call("XADD", key, "*", "id", "t3", "e", "{}")                          # no event in it
c.call("XADD", key, "*", "id", "t4", "e", b'{"name":"\xff\xfe","device":7}')  # not UTF-8
c.call("XADD", key, "*", "id", "t5", "e", json.dumps({"name": "a" * 100000, "device": []}))
c.close()

mport = free_port()
out = os.path.join(tmp, "d1.jsonl")
d = spawn([a.reflex, "watch", "--kb", a.kb, "--topology", topo, "--redis", redis.url(),
           "--owner", "d1", "--settle", "2s", "--metrics", "127.0.0.1:%d" % mport],
          stdout=open(out, "w"), stderr=open(os.path.join(tmp, "d1.log"), "w"))
murl = "http://127.0.0.1:%d/metrics" % mport


def skipped(reason):
    try:
        return metric(http_get(murl), "reflex_watch_skipped_entries_total", 'reason="%s"' % reason)
    except Exception:
        return -1


wait_for(lambda: skipped("foreign") == 1, 30, "the foreign entry to be counted")
# The entries are counted in stream order, after the foreign one: wait (bounded)
# for the last of them rather than race a slow (e.g. sanitizer) build.
wait_for(lambda: skipped("too_large") + skipped("bad_event") >= 5, 30,
         "the other garbage entries to be counted")
check(skipped("too_large") == 1, "the huge entry is counted as too_large")
check(skipped("bad_event") == 4, "truncated / empty / non-UTF-8 / mistyped entries counted "
      "as bad_event (%d)" % skipped("bad_event"))

aport = free_port()
agents = []
for host in ("node-0017", "node-0018"):
    agents.append(spawn([a.reflex, "agent", "--kb", a.kb, "--topology", topo, "--host", host,
                         "--follow", os.path.join(a.bundle, "hosts", host), "--redis",
                         redis.url(), "--year", "2026"] +
                        (["--metrics", "127.0.0.1:%d" % aport] if host == "node-0017" else []),
                        stdout=subprocess.DEVNULL,
                        stderr=open(os.path.join(tmp, host + ".log"), "w")))


def diagnosed():
    with open(out) as f:
        for ln in f:
            dj = json.loads(ln)
            if dj["root_causes"] and dj["root_causes"][0]["device"] == expected:
                return True
    return False


wait_for(diagnosed, 60, "the diagnoser to diagnose the incident after the garbage")
check(True, "the diagnoser kept going and names %s" % expected)
check(d.poll() is None, "the diagnoser is still running")

# The fault alone is diagnosed after the settle time (no job symptom needed),
# possibly before node-0017's agent has read its file: wait for its count.
agent_metrics = wait_for(
    lambda: (lambda t: t if metric(t, "reflex_agent_lines_read_total") > 0 else None)(
        http_get("http://127.0.0.1:%d/metrics" % aport)), 30, "agent metrics with lines read")
watch_metrics = http_get(murl)
check(metric(agent_metrics, "reflex_agent_lines_read_total") > 0, "agent counts lines read")
check(metric(agent_metrics, "reflex_agent_events_total") > 0, "agent counts events by signature")
check(metric(watch_metrics, "reflex_watch_diagnoses_total") >= 1, "watch counts diagnoses")
check(metric(watch_metrics, "reflex_watch_diagnosis_latency_seconds_count") >= 1,
      "watch observes diagnosis latency")
if a.promtool:
    for name, text in (("agent", agent_metrics), ("watch", watch_metrics)):
        r = subprocess.run([a.promtool, "check", "metrics"], input=text, capture_output=True,
                           text=True, timeout=30)
        check(r.returncode == 0, "promtool check metrics accepts the %s's metrics %s" %
              (name, r.stdout + r.stderr))
for p in agents:
    p.terminate()
    p.wait(timeout=15)
d.terminate()
check(d.wait(timeout=20) == 0, "diagnoser exits 0")
redis.stop()
print("PASS")
