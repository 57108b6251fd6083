#!/usr/bin/env python3
"""Deployment figures (README "Deployment", docs/deploy-benchmarks.md); not a
timed test. On this machine, with real servers on loopback (the test
harness: free ports, temp dir, everything stopped at exit):
  1. redis-benchmark XADD on the same Redis (the engine's ceiling);
  2. events/s agent -> Redis -> diagnoser (one agent --once publishing a file
     of recognized lines, one diagnoser reading and diagnosing them);
  3. agent CPU % of one core and RSS at ~1 MB/min of host logs, and during
     an 800,000-line Xid storm.
  bench/deploy_bench.py --reflex build/tools/reflex/reflex --kb kb [--quick]"""
import argparse
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "deploy"))
from harness import cpu_s, rss_mib, Redis, free_port, http_get, metric, spawn, tempdir, wait_for  # noqa

ap = argparse.ArgumentParser()
ap.add_argument("--reflex", required=True)
ap.add_argument("--kb", required=True)
ap.add_argument("--quick", action="store_true")
ap.add_argument("--fsync", default="always", help="Redis appendfsync: always or everysec")
ap.add_argument("--throughput-only", action="store_true")
a = ap.parse_args()
BUNDLE = os.path.join(ROOT, "examples", "incident-pcie")
TOPO = os.path.join(BUNDLE, "topology.json")
tmp = tempdir()
samples = open(os.path.join(BUNDLE, "hosts", "node-0017", "kern.log")).read().splitlines()
msgs = [s.split("kernel: ", 1)[1] for s in samples]


redis = Redis(tmp, fsync=a.fsync).start()
out = ["Redis AOF appendfsync %s" % a.fsync]

# 1. redis-benchmark XADD, payload of a typical event's size.
payload = "x" * 700
n = 50000 if a.quick else 200000
r = subprocess.run(["redis-benchmark", "-h", "127.0.0.1", "-p", str(redis.port), "-n", str(n),
                    "-c", "4", "-P", "50", "-q", "XADD", "reflex:{bench}:events", "MAXLEN", "~",
                    "1000000", "*", "id", "__rand_int__", "e", payload],
                   capture_output=True, text=True, timeout=300)
line = [x for x in r.stdout.replace("\r", "\n").splitlines() if "requests per second" in x]
rate = line[-1].split(":")[-1].strip() if line else r.stdout[-200:]
out.append("redis-benchmark XADD (700-byte field, 4 clients, pipeline 50): %s" % rate)
redis.cli("DEL", "reflex:{bench}:events")

# 2. agent -> Redis -> diagnoser. Lines 301 s apart: each is its own event.
N = 20000 if a.quick else 60000
logdir = os.path.join(tmp, "tp", "node-0017")
os.makedirs(logdir)
start = int(time.time()) - N * 301
with open(os.path.join(logdir, "kern.log"), "w") as f:
    for i in range(N):
        ts = time.strftime("%b %e %H:%M:%S", time.gmtime(start + i * 301))
        f.write("%s node-0017 kernel: %s\n" % (ts, msgs[i % 2]))
year = time.gmtime(start).tm_year
mport = free_port()
d = spawn([a.reflex, "watch", "--kb", a.kb, "--topology", TOPO, "--redis", redis.url(),
           "--metrics", "127.0.0.1:%d" % mport, "--settle", "60s"],
          stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "d.log"), "w"))
time.sleep(1.5)  # the diagnoser has loaded its KB
t0 = time.time()
ag = spawn([a.reflex, "agent", "--kb", a.kb, "--topology", TOPO, "--host", "node-0017",
            "--follow", logdir, "--redis", redis.url(), "--year", str(year), "--once",
            "--batch", "1000"], stdout=subprocess.DEVNULL,
           stderr=open(os.path.join(tmp, "a.log"), "w"))
ag.wait(timeout=600)
t_pub = time.time() - t0
events = int(redis.conn().call("XLEN", "reflex:{job:job-42}:events"))
wait_for(lambda: metric(http_get("http://127.0.0.1:%d/metrics" % mport),
                        "reflex_watch_events_total") >= events, 600, "the diagnoser")
t_all = time.time() - t0
out.append("agent -> Redis: %d events from %d lines in %.2f s (%.0f events/s, KB load included)"
           % (events, N, t_pub, events / t_pub))
out.append("agent -> Redis -> diagnoser (1 shard, engine fed): %.2f s (%.0f events/s)" %
           (t_all, events / t_all))
d.terminate()
d.wait(timeout=30)
if a.throughput_only:
    redis.stop()
    print("\n".join(out))
    sys.exit(0)

# 3. Agent cost at ~1 MB/min (mostly lines no signature takes, some events),
#    then an 800k-line Xid storm on 8 GPUs.
logdir2 = os.path.join(tmp, "cost", "node-0017")
os.makedirs(logdir2)
path = os.path.join(logdir2, "kern.log")
open(path, "w").close()
ag = spawn([a.reflex, "agent", "--kb", a.kb, "--topology", TOPO, "--host", "node-0017",
            "--follow", logdir2, "--redis", redis.url(), "--year",
            str(time.gmtime().tm_year)], stdout=subprocess.DEVNULL,
           stderr=open(os.path.join(tmp, "cost.log"), "w"))
time.sleep(2)
secs = 20 if a.quick else 60
noise = ("systemd[1]: Started Session %d of user slurm; kubelet[2211]: I1201 pod sync ok "
         "volume=/var/lib/kubelet/pods/%d")
c0, w0 = cpu_s(ag.pid), time.time()
written = 0
with open(path, "a") as f:
    for s in range(secs):
        for j in range(10):  # 10 writes a second, ~1,750 bytes each = ~1 MB/min
            for k in range(12):
                ts = time.strftime("%b %e %H:%M:%S", time.gmtime())
                if (s * 120 + j * 12 + k) % 100 == 0:
                    ln = "%s node-0017 kernel: %s\n" % (ts, msgs[k % 2])
                else:
                    ln = "%s node-0017 %s\n" % (ts, noise % (k, s))
                f.write(ln)
                written += len(ln)
            f.flush()
            time.sleep(0.1)
c1, w1 = cpu_s(ag.pid), time.time()
out.append("agent at %.2f MB/min for %d s: %.2f%% of one core, RSS %.1f MiB" %
           (written / (w1 - w0) * 60 / 1e6, secs, 100 * (c1 - c0) / (w1 - w0), rss_mib(ag.pid)))
storm = 200000 if a.quick else 800000
ts = time.strftime("%b %e %H:%M:%S", time.gmtime())
xid = "NVRM: Xid (PCI:0000:%02x:00): 95, pid=2231, name=python, Uncontained: ECC"
buses = [0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb]
c0, w0 = cpu_s(ag.pid), time.time()
with open(path, "a") as f:
    for i in range(storm):
        f.write("%s node-0017 kernel: %s\n" % (ts, xid % buses[i % 8]))
peak = 0.0


# Caught up when its CPU stops moving (it has read the whole storm).
last = -1.0
for _ in range(1200):
    time.sleep(0.5)
    peak = max(peak, rss_mib(ag.pid))
    c = cpu_s(ag.pid)
    if c - last < 0.02:
        break
    last = c
c1, w1 = cpu_s(ag.pid), time.time()
out.append("agent, %d-line Xid storm on 8 GPUs written at once: %.2f s of CPU (%.0f lines/s of "
           "CPU), peak RSS %.1f MiB" % (storm, c1 - c0, storm / max(c1 - c0, 1e-9), peak))
ag.terminate()
ag.wait(timeout=30)
redis.stop()
print("\n".join(out))
