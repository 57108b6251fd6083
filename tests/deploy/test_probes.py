"""Operable like an exporter: an agent and a diagnoser with --metrics serve
reflex_build_info, the process_* metrics of their own process (from
/proc/self: checked against what /proc says of that pid), histogram bucket
labels as Prometheus clients print them (le="0.05"), and /healthz and
/readyz: both 200 while Redis answers; Redis stopped, /readyz says 503 (and
why) while /healthz stays 200; Redis back, /readyz is 200 again. The metrics
pass `promtool check metrics` when promtool is installed."""
import argparse
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (Redis, check, cpu_s, dump_logs_on_failure, free_port, metric, spawn,  # noqa
                     tempdir, wait_for)

ap = argparse.ArgumentParser()
ap.add_argument("--reflex", required=True)
ap.add_argument("--kb", required=True)
ap.add_argument("--bundle", required=True)
ap.add_argument("--promtool", default="")
a = ap.parse_args()

tmp = tempdir()
dump_logs_on_failure(tmp)
topo = os.path.join(a.bundle, "topology.json")
redis = Redis(tmp).start()
logs = os.path.join(tmp, "logs")
os.makedirs(logs)
with open(os.path.join(logs, "kern.log"), "w") as f:
    f.write("")  # nothing to publish: the agent's readiness comes from its pings

aport, dport = free_port(), free_port()
agent = spawn([a.reflex, "agent", "--kb", a.kb, "--topology", topo, "--host", "node-0018",
               "--follow", logs, "--redis", redis.url(), "--year", "2026",
               "--metrics", "127.0.0.1:%d" % aport],
              stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "agent.log"), "w"))
diag = spawn([a.reflex, "watch", "--kb", a.kb, "--topology", topo, "--redis", redis.url(),
              "--owner", "d1", "--metrics", "127.0.0.1:%d" % dport],
             stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "diag.log"), "w"))
procs = {"agent": (agent, aport), "diagnoser": (diag, dport)}


def get(port, path):
    """(status, body); an HTTP error status is an answer, not an exception."""
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


for who, (p, port) in procs.items():
    wait_for(lambda: get(port, "/readyz")[0] == 200, 30, who + " /readyz 200")
    check(True, "%s: /readyz 200 with Redis up (%s)" % (who, get(port, "/readyz")[1].strip()))
    check(get(port, "/healthz")[0] == 200, who + ": /healthz 200")
    check(get(port, "/nothing")[0] == 404, who + ": another path is 404")
    text = get(port, "/metrics")[1]
    version = re.search(r'^reflex_build_info\{version="([^"]+)"\} 1$', text, re.M)
    check(version is not None, who + ": reflex_build_info{version=...} 1")
    r = subprocess.run([a.reflex, "--version"], capture_output=True, text=True, timeout=30)
    check(version.group(1) in r.stdout + r.stderr,
          "%s: build_info's version %s is the binary's (%s)" %
          (who, version.group(1), (r.stdout + r.stderr).strip()[:60]))
    # The process_* values are this process's: compare with /proc/<pid>.
    with open("/proc/stat") as f:
        btime = float(next(ln.split()[1] for ln in f if ln.startswith("btime ")))
    with open("/proc/%d/stat" % p.pid) as f:
        start = btime + int(f.read().rsplit(")", 1)[1].split()[19]) / os.sysconf("SC_CLK_TCK")
    got = metric(text, "process_start_time_seconds")
    check(abs(got - start) < 1.5, "%s: process_start_time_seconds %.2f = its start %.2f" %
          (who, got, start))
    fds = len(os.listdir("/proc/%d/fd" % p.pid))
    got = metric(text, "process_open_fds")
    check(0 < got and abs(got - fds) <= 3, "%s: process_open_fds %d ~ /proc: %d" % (who, got, fds))
    cpu = metric(text, "process_cpu_seconds_total")
    check(0 < cpu <= cpu_s(p.pid) + 0.05, "%s: process_cpu_seconds_total %.2f (<= %.2f now)" %
          (who, cpu, cpu_s(p.pid)))
    check(metric(text, "process_resident_memory_bytes") > 1 << 20,
          who + ": process_resident_memory_bytes")
    check(metric(text, "process_max_fds") >= fds, who + ": process_max_fds")
    les = re.findall(r'_bucket\{le="([^"]+)"\}', text)
    # Shortest round trip: Python's repr, without the ".0" Go's client omits.
    bad = [le for le in les if le != "+Inf" and le != re.sub(r"\.0$", "", repr(float(le)))]
    check(not bad, "%s: %d bucket labels in the shortest form (not: %s)" %
          (who, len(les), bad[:3]))
    if who == "diagnoser":  # the agent has no histogram
        check(len(les) > 5 and 'le="0.05"' in text,
              'diagnoser: the 0.05 s latency bucket reads le="0.05"')
    if a.promtool:
        r = subprocess.run([a.promtool, "check", "metrics"], input=text, capture_output=True,
                           text=True, timeout=60)
        check(r.returncode == 0, "%s: promtool check metrics passes%s" %
              (who, "" if r.returncode == 0 else ": " + r.stdout + r.stderr))

# Redis goes away: not ready, still live.
redis.stop()
for who, (p, port) in procs.items():
    wait_for(lambda: get(port, "/readyz")[0] == 503, 20, who + " /readyz 503 with Redis down")
    check(True, "%s: /readyz 503 with Redis down (%s)" % (who, get(port, "/readyz")[1].strip()))
time.sleep(2)  # a few more loop rounds: the verdict holds, the loop keeps going
for who, (p, port) in procs.items():
    check(get(port, "/readyz")[0] == 503, who + ": /readyz stays 503 while Redis is down")
    check(get(port, "/healthz")[0] == 200, who + ": /healthz stays 200 (the loop runs)")
redis.start()
for who, (p, port) in procs.items():
    wait_for(lambda: get(port, "/readyz")[0] == 200, 30, who + " /readyz 200 again")
    check(True, who + ": /readyz 200 again once Redis is back")
for p, _ in procs.values():
    p.terminate()
    p.wait(timeout=20)
print("PASS")
