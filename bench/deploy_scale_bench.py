#!/usr/bin/env python3
"""Scale figures of the deployment (docs/deploy-benchmarks.md). Not
a timed test. Real servers on loopback (tests/deploy/harness.py: free ports,
temp dir, everything stopped at exit). A simulated cluster: --jobs jobs of 2
hosts each (8 GPUs + 8 NICs a host, cloned from examples/incident-pcie's
topology), every job with the demo incident's events (captured once from
`reflex agent` on the demo's logs, hosts and job renamed, fresh ids), plus
background events and one storm burst, appended to the jobs' streams as the
agents would (same keys, same payloads). In the same run:
  1. raw Redis: XADD of those payloads (pipelined, one client) and XREAD
     COUNT 1000 of them back — the engine's own ceiling;
  2. capacity with 1, 2, 4 diagnosers: every incident of every job
     diagnosed, events/s, against 1.;
  3. latency under load (2 diagnosers): probe incidents appended while
     background events and a storm arrive; from the XADD of a probe's last
     event to its diagnosis in the diagnoses stream (both Redis stream ids:
     the server's clock), p50/p99, and beyond the settle window;
  4. diagnoser RSS.
Not included: the agent hop (see bench/deploy_bench.py for agent->Redis).
Give --kb a built artifact (reflexc build kb -o kb.rfxkb): every shard has
its own engine, and from .rfx sources each one compiles the pattern
database (about 1 s a shard on the 2-core machine, 35 ms from the artifact).
  nice -n 10 bench/deploy_scale_bench.py --reflex build/tools/reflex/reflex --kb kb.rfxkb [--jobs 500]"""
import argparse
import collections
import copy
import hashlib
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "deploy"))
from harness import Redis, free_port, rss_mib, http_get, metric, spawn, tempdir, wait_for  # noqa

ap = argparse.ArgumentParser()
ap.add_argument("--reflex", required=True)
ap.add_argument("--kb", required=True)
ap.add_argument("--jobs", type=int, default=500, help="jobs of 2 hosts (500 = 1,000 hosts)")
ap.add_argument("--diagnosers", default="1,2,4")
ap.add_argument("--noise", type=int, default=20, help="background events per job")
ap.add_argument("--storm", type=int, default=20000, help="events of the storm burst, one shard")
ap.add_argument("--probes", type=int, default=20)
ap.add_argument("--settle", default="2s")
ap.add_argument("--before", help="another reflex binary (e.g. the previous commit's): the "
                "1-diagnoser run is repeated interleaved with it (A B A B), RSS and events/s")
ap.add_argument("--rounds", type=int, default=2, help="interleaved rounds with --before")
ap.add_argument("--no-latency", action="store_true")
ap.add_argument("--backlog", action="store_true",
                help="capacity: append every record first, then time the diagnosers draining it "
                "(the feeder's own speed out of the figure)")
ap.add_argument("--perf", action="store_true", help="perf record the first diagnoser")
ap.add_argument("--perf-call-graph", default="dwarf,16384",
                help="perf record --call-graph (fp is cheaper but the build keeps no frame pointers)")
a = ap.parse_args()
BUNDLE = os.path.join(ROOT, "examples", "incident-pcie")
tmp = tempdir()
SETTLE_S = float(a.settle.rstrip("s"))


# ---- the simulated cluster's topology ----
demo = json.load(open(os.path.join(BUNDLE, "topology.json")))
topo = {"cluster": "sim-scale", "fabric": demo["fabric"], "hosts": [], "jobs": []}
for k in range(a.jobs):
    names = []
    for t, tmpl in enumerate(demo["hosts"]):
        h = copy.deepcopy(tmpl)
        n = 2 * k + t
        h["name"] = "node-%05d" % n
        h["ip"] = "10.%d.%d.%d" % (1 + n // 65536, (n // 256) % 256, n % 256)
        for g in h.get("gpus", []):
            g["serial"] = "%s%05d" % (g["serial"], n)
        for i, nic in enumerate(h.get("nics", [])):
            nic["ip"] = "10.%d.%d.%d" % (100 + n // 8192, (n // 32) % 256, (n % 32) * 8 + i)
        topo["hosts"].append(h)
        names.append(h["name"])
    topo["jobs"].append({"id": "job-%d" % k, "ranks": {"hosts": names, "gpus_per_host": 8}})
TOPO = os.path.join(tmp, "topology.json")
with open(TOPO, "w") as f:
    json.dump(topo, f)

# ---- the demo incident's events, as the agents publish them ----
template = []
for h in ("node-0017", "node-0018"):
    r = subprocess.run([a.reflex, "agent", "--kb", a.kb, "--topology",
                        os.path.join(BUNDLE, "topology.json"), "--host", h, "--follow",
                        os.path.join(BUNDLE, "hosts", h), "--year", "2026", "--once"],
                       capture_output=True, text=True, timeout=120, check=True)
    template += [json.loads(x) for x in r.stdout.splitlines()]
noise_tmpl = [t for t in template if "mlx5_access_reg" in t["event"]][0]


def renamed(t, k, salt):
    """One template event for job k: hosts and job renamed, a fresh id."""
    e = (t["event"].replace("node-0017", "node-%05d" % (2 * k))
         .replace("node-0018", "node-%05d" % (2 * k + 1)).replace("job-42", "job-%d" % k))
    shard = t["shard"].replace("job-42", "job-%d" % k)
    sid = hashlib.sha256(("%s/%d/%s" % (t["id"], k, salt)).encode()).hexdigest()[:32]
    return shard, sid, e


def incident(k, salt=""):
    return [renamed(t, k, salt) for t in template]


def noise(k, i):
    sh, sid, e = renamed(noise_tmpl, k, "noise%d" % i)
    ev = json.loads(e)
    ev["evidence"] = ev["evidence"].rsplit(":", 1)[0] + ":%d" % (100000 + i)
    return sh, sid, json.dumps(ev)


def xadd_all(conn, records, batch=1000):
    """Pipelined XADD as the agents send them; returns the last stream id."""
    last = None
    for i in range(0, len(records), batch):
        out = b""
        chunk = records[i:i + batch]
        for shard, sid, e in chunk:
            args = [b"XADD", ("reflex:{%s}:events" % shard).encode(), b"MAXLEN", b"~",
                    b"1000000", b"*", b"id", sid.encode(), b"e", e.encode()]
            out += b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in args)
        conn.s.sendall(out)
        for _ in chunk:
            last = conn._read()
    return last.decode() if isinstance(last, bytes) else last


redis = Redis(tmp, fsync="everysec").start()
lines = ["date %s; load average %s; %d jobs (%d hosts), %d events per incident" %
         (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
          open("/proc/loadavg").read().split()[:3], a.jobs, 2 * a.jobs, len(template))]

# ---- 1. raw Redis on the same records ----
records = []
for k in range(a.jobs):
    records += incident(k)
    records += [noise(k, i) for i in range(a.noise)]
conn = redis.conn()
t0 = time.time()
xadd_all(conn, records)
raw_xadd = len(records) / (time.time() - t0)
t0 = time.time()
n_read = 0
for k in range(a.jobs):
    cur = "0"
    for _ in range(1000):
        rep = conn.call("XREAD", "COUNT", "1000", "STREAMS", "reflex:{job:job-%d}:events" % k, cur)
        if not rep:
            break
        entries = rep[0][1]
        n_read += len(entries)
        cur = entries[-1][0].decode()
raw_xread = n_read / (time.time() - t0)
lines.append("raw Redis, %d records: XADD %.0f/s (pipelined, 1 client), XREAD COUNT 1000 %.0f "
             "entries/s" % (len(records), raw_xadd, raw_xread))
conn.call("FLUSHALL")
# redis-benchmark XADD on the same Redis: a typical payload's size, 4 clients, pipeline 50.
avg = int(sum(len(e) for _, _, e in records) / len(records))
rb = subprocess.run(["redis-benchmark", "-h", "127.0.0.1", "-p", str(redis.port), "-n", "200000",
                     "-c", "4", "-P", "50", "-q", "XADD", "reflex:{bench}:events", "MAXLEN", "~",
                     "1000000", "*", "id", "__rand_int__", "e", "x" * avg],
                    capture_output=True, text=True, timeout=600)
rbl = [x for x in rb.stdout.replace("\r", "\n").splitlines() if "requests per second" in x]
try:
    rb_xadd = float(re.search(r"([0-9.]+) requests per second", rbl[-1]).group(1))
except (IndexError, AttributeError):
    sys.exit("redis-benchmark: no rate in %r" % rb.stdout[-300:])
lines.append("redis-benchmark XADD (%d-byte field, 4 clients, pipeline 50): %.0f/s" %
             (avg, rb_xadd))
conn.call("FLUSHALL")


def start_diagnosers(n, tag, binary=None):
    procs = []
    for i in range(n):
        port = free_port()
        p = spawn([binary or a.reflex, "watch", "--kb", a.kb, "--topology", TOPO, "--redis", redis.url(),
                   "--owner", "%s-%d" % (tag, i), "--settle", a.settle, "--lease-ttl", "6s",
                   "--metrics", "127.0.0.1:%d" % port],
                  stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "%s-%d.log" % (tag, i)),
                                                        "w"))
        procs.append((p, port))
    for p, port in procs:  # KB and topology loaded, serving metrics
        wait_for(lambda: http_get("http://127.0.0.1:%d/metrics" % port, tries=1), 300,
                 "diagnoser metrics")
    return procs


def published_incidents():
    c = redis.conn()
    n = 0
    for k in range(a.jobs):
        n += c.call("HLEN", "reflex:{job:job-%d}:published" % k)
    c.close()
    return n


def stop(procs):
    for p, _ in procs:
        p.terminate()
    for p, _ in procs:
        p.wait(timeout=60)


# ---- 2. capacity with 1, 2, 4 diagnosers ----
def capacity(n, binary, tag):
    conn = redis.conn()
    if a.backlog:  # the records wait in Redis; timed from the diagnosers' start
        xadd_all(conn, records)
        t_added = 0.0
        procs = start_diagnosers(n, tag, binary)
        t0 = time.time()
    else:
        procs = start_diagnosers(n, tag, binary)
        t0 = time.time()
        xadd_all(conn, records)
        t_added = time.time() - t0
    if a.perf:
        perf = subprocess.Popen(["perf", "record", "-e", "cpu-clock", "--call-graph",
                                 a.perf_call_graph, "-o", os.path.join(tmp, tag + ".perf"),
                                 "-p", str(procs[0][0].pid)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
    want = a.jobs
    wait_for(lambda: published_incidents() >= want, 1800, "%d jobs diagnosed" % want, step=0.5)
    t_done = time.time() - t0
    if a.perf:
        perf.send_signal(2)
        perf.wait(timeout=120)
        rep = subprocess.run(["perf", "report", "--no-children", "--percent-limit", "1.5",
                              "--stdio", "-g", "none", "-i", os.path.join(tmp, tag + ".perf")],
                             capture_output=True, text=True, timeout=600)
        lines.append("perf, %s:\n%s" % (tag, "\n".join(
            x for x in rep.stdout.splitlines() if x.strip() and not x.startswith("#"))[:4000]))
        # Inclusive (callers') shares: where the self time above is spent from.
        rep = subprocess.run(["perf", "report", "--children", "--percent-limit", "4", "--stdio",
                              "-g", "none", "-i", os.path.join(tmp, tag + ".perf")],
                             capture_output=True, text=True, timeout=600)
        lines.append("perf inclusive, %s:\n%s" % (tag, "\n".join(
            x[:160] for x in rep.stdout.splitlines() if x.strip() and not x.startswith("#"))[:6000]))
    rss = [rss_mib(p.pid) for p, _ in procs]
    owned = [metric(http_get("http://127.0.0.1:%d/metrics" % port),
                    "reflex_watch_shards_owned") for _, port in procs]
    rate = len(records) / max(t_done - SETTLE_S, 1e-3)
    lines.append("%s, %d diagnoser(s): %d events of %d jobs all diagnosed in %.1f s (appended in "
                 "%.1f s), %.0f events/s beyond the %gs settle = %.3fx redis-benchmark XADD, "
                 "%.2fx raw XADD, %.3fx raw XREAD; shards owned %s; RSS %s MiB; load %s" %
                 (tag, n, len(records), a.jobs, t_done, t_added, rate, SETTLE_S, rate / rb_xadd,
                  rate / raw_xadd, rate / raw_xread, [int(x) for x in owned],
                  ["%.0f" % r for r in rss], open("/proc/loadavg").read().split()[:3]))
    stop(procs)
    conn.call("FLUSHALL")
    conn.close()
    return rate, rss


if a.before:
    ab = collections.defaultdict(list)
    for r in range(a.rounds):
        for tag, binary in (("before", a.before), ("after", a.reflex)):
            ab[tag].append(capacity(1, binary, "%s#%d" % (tag, r + 1)))
    lines.append("interleaved, 1 diagnoser, %d shards: median RSS before %.0f MiB, after %.0f MiB "
                 "(%.2fx); median events/s before %.0f, after %.0f (%.2fx)" %
                 ((a.jobs,) + tuple(statistics.median(x[1][0] for x in ab[t]) for t in ("before",
                                                                                      "after")) +
                  (statistics.median(x[1][0] for x in ab["after"]) /
                   statistics.median(x[1][0] for x in ab["before"]),) +
                  tuple(statistics.median(x[0] for x in ab[t]) for t in ("before", "after")) +
                  (statistics.median(x[0] for x in ab["after"]) /
                   statistics.median(x[0] for x in ab["before"]),)))
cap = {}
for n in [int(x) for x in a.diagnosers.split(",") if x]:
    cap[n] = capacity(n, a.reflex, "cap%d" % n)[0]
if cap:
    base = min(cap)
    lines.append("capacity vs %d diagnoser: %s" %
                 (base, ", ".join("%d: %.2fx" % (n, cap[n] / cap[base]) for n in sorted(cap))))
if a.no_latency:
    redis.stop()
    print("\n".join(lines))
    sys.exit(0)

# ---- 3. latency under load, 2 diagnosers ----
procs = start_diagnosers(2, "lat")
conn = redis.conn()
background = []
for k in range(a.jobs):
    background += [noise(k, i) for i in range(a.noise)]
xadd_all(conn, background)  # the shards exist, the diagnosers own them
noise_only = None
wait_for(lambda: sum(metric(http_get("http://127.0.0.1:%d/metrics" % port),
                            "reflex_watch_shards_owned") for _, port in procs) >= a.jobs,
         300, "every shard owned")
time.sleep(SETTLE_S + 1)
noise_only = published_incidents()  # background alone: diagnoses it makes, if any
rng = random.Random(7)
lat = []
storm_at = a.probes // 2
probe_jobs = rng.sample(range(a.jobs), min(a.probes, a.jobs))  # each job's first incident
for i, k in enumerate(probe_jobs):
    if i == storm_at:  # one storm: a burst into one job's shard, unfolded
        xadd_all(conn, [noise(rng.randrange(a.jobs), 10 ** 6 + j) for j in range(a.storm)])
    more = [noise(rng.randrange(a.jobs), 2 * 10 ** 6 + i * 1000 + j) for j in range(500)]
    xadd_all(conn, more)  # background arriving meanwhile
    last = xadd_all(conn, incident(k, "probe%d" % i))
    last_ms = int(last.split("-")[0])
    key = "reflex:{job:job-%d}:diagnoses" % k

    def diagnosed():
        rep = conn.call("XRANGE", key, "(" + last, "+", "COUNT", "1")
        return rep[0][0].decode() if rep else None

    sid = wait_for(diagnosed, 120, "probe %d diagnosed" % i, step=0.02)
    lat.append((int(sid.split("-")[0]) - last_ms) / 1000.0)
lat.sort()
p50 = statistics.median(lat)
p99 = lat[min(len(lat) - 1, int(round(0.99 * (len(lat) - 1))))]
rss = [rss_mib(p.pid) for p, _ in procs]
lines.append("background events alone made %d diagnoses" % noise_only)
lines.append("latency, 2 diagnosers, %d probes among %d background events + a %d-event storm: "
             "p50 %.2f s, p99 %.2f s (beyond the %gs settle: p50 %.2f s, p99 %.2f s); RSS %s MiB" %
             (len(lat), len(background) + 500 * a.probes, a.storm, p50, p99, SETTLE_S,
              p50 - SETTLE_S, p99 - SETTLE_S, ["%.0f" % r for r in rss]))
stop(procs)
redis.stop()
print("\n".join(lines))
