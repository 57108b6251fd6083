#!/usr/bin/env python3
"""The 12,500-host deployment run (docs/deploy-benchmarks.md). Not a
timed test. Real servers on loopback (tests/deploy/harness.py: free ports,
temp dir, everything stopped at exit): Redis (AOF everysec), Alertmanager,
--diagnosers `reflex watch --redis`, and --agents `reflex agent --stdin`
processes that replay the cluster's hosts as envelopes (the Vector / Fluent
Bit path; each agent carries 1/--agents of the hosts).

The feed is reflex-sim's scale feed: one --hosts-host cluster (8 GPUs a
host, one job over all of it), its incident's lines as `reflex events`
recognizes them, each replay shifted in time so that its last --burst
seconds are written in real time (the earlier lines, e.g. the cause 30 min
before the NCCL timeouts, are back-dated and written at once), one replay
after the other; background: lines of the bundle that match nothing, spread
over all hosts at --noise-rate lines/s; one --storm-line Xid storm on one
host's 8 GPUs after the replays. Measured, in one run:
  - latency: the last line of a replay written to its agent -> the alert
    naming the sim's true root device in Alertmanager (GET /api/v2/alerts,
    polled every 50 ms), p50/p99 and beyond the --settle window;
  - diagnoser RSS; agents' CPU % of one core and RSS during the background
    phase, the replays and the storm, and CPU seconds per MB of lines (what
    ~1 MB/min per host costs one host's agent).
  nice -n 10 bench/deploy_cluster_bench.py --reflex build/tools/reflex/reflex --kb kb.rfxkb
      [--hosts 12500] [--agents 4] [--replays 3]"""
import argparse
import collections
import json
import os
import random
import re
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "deploy"))
from harness import (cpu_s, rss_mib, Alertmanager, Redis, dump_logs_on_failure, free_port, http_get, metric,  # noqa
                     spawn, tempdir, wait_for)

ap = argparse.ArgumentParser()
ap.add_argument("--reflex", required=True)
ap.add_argument("--kb", required=True, help="a built artifact (reflexc build kb -o kb.rfxkb)")
ap.add_argument("--sim", default=None, help="reflex-sim (default: beside --reflex's build)")
ap.add_argument("--hosts", type=int, default=12500)
ap.add_argument("--noise-lines-per-host", type=int, default=20)
ap.add_argument("--scenario", default="gpu_fallen_off_bus")
ap.add_argument("--agents", type=int, default=4)
ap.add_argument("--diagnosers", type=int, default=2)
ap.add_argument("--replays", type=int, default=3)
ap.add_argument("--burst", type=float, default=15.0, help="seconds of each replay written live")
ap.add_argument("--noise-rate", type=float, default=2000.0, help="background lines/s, all agents")
ap.add_argument("--steady", type=float, default=60.0, help="background-only phase, seconds")
ap.add_argument("--storm", type=int, default=800000)
ap.add_argument("--gap", type=float, default=10.0, help="seconds between an alert and the next "
                "replay")
ap.add_argument("--settle", default="2s")
ap.add_argument("--work", help="keep the generated bundle and its events here (reused)")
ap.add_argument("--max-events", type=int, default=0,
                help="the diagnosers' --max-events (0: their default)")
ap.add_argument("--drain", type=float, default=0.0,
                help="at the end, wait up to this many seconds for the diagnosers to take "
                     "every event (their intake stops growing for 10 s)")
a = ap.parse_args()
SETTLE_S = float(a.settle.rstrip("s"))
tmp = tempdir()
dump_logs_on_failure(tmp)
work = a.work or os.path.join(tmp, "work")
os.makedirs(work, exist_ok=True)
sim = a.sim or os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(a.reflex))),
                            "tools", "reflex-sim", "reflex-sim")
out = []


def say(s):
    print(s, flush=True)
    out.append(s)


def load():
    return " ".join(open("/proc/loadavg").read().split()[:3])


# ---- the feed ----
bundle = os.path.join(work, "incident-0001")
if not os.path.exists(os.path.join(bundle, "truth.json")):
    subprocess.run([sim, "--seed", "1", "--count", "1", "--hosts", str(a.hosts),
                    "--noise-lines-per-host", str(a.noise_lines_per_host), "--scenario",
                    a.scenario, "--quiet", "--out", work], check=True, timeout=1800)
events_path = os.path.join(work, "events.jsonl")
if not os.path.exists(events_path):
    with open(events_path + ".tmp", "w") as f:
        subprocess.run([a.reflex, "events", "--kb", a.kb, bundle], stdout=f,
                       stderr=subprocess.DEVNULL, check=True, timeout=3600)
    os.rename(events_path + ".tmp", events_path)
TOPO = os.path.join(bundle, "topology.json")
topo = json.load(open(TOPO))
hosts = [h["name"] for h in topo["hosts"]]
truth = json.load(open(os.path.join(bundle, "truth.json")))["root_cause"]["device"]
SYSLOG = re.compile(r"^[A-Z][a-z]{2} [ 0-9]\d \d\d:\d\d:\d\d \S+ [^:\s]+(?:\[\d+\])?: ")


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%06dZ" % int((t % 1) * 1e6)


def parse_iso(s):
    base, frac = s.rstrip("Z").split(".") if "." in s else (s.rstrip("Z"), "0")
    return time.mktime(time.strptime(base, "%Y-%m-%dT%H:%M:%S")) - time.timezone + \
        float("0." + frac)


incident = []  # (orig time, host, source, msg)
evidence = set()
for ln in open(events_path):
    e = json.loads(ln)
    evidence.add(e["evidence"])
    if not e.get("ts") or not e.get("line"):
        continue
    incident.append((parse_iso(e["ts"]), e["host"], e.get("transport") or "app",
                     SYSLOG.sub("", e["line"], count=1), e["device"].startswith("job/")))
incident.sort(key=lambda x: x[0])
# The incident's last hour of log time (its cause and the symptom wave; the
# bundle's older background faults would fall into the previous replay's
# window). Replays are 2 h apart in log time, beyond the engine's incident
# gap (1 h) and linger (30 min): each is an incident of its own.
span_all = incident[-1][0] - incident[0][0]
incident = [x for x in incident if x[0] >= incident[-1][0] - 3600]
# Background: text lines of the bundle that are no event (a sample of hosts).
noise_pool = []
rng = random.Random(7)
for h in rng.sample(hosts, min(300, len(hosts))):
    d = os.path.join(bundle, "hosts", h)
    for fn in sorted(os.listdir(d)):
        if not (fn.startswith(("kern", "dmesg", "syslog", "train"))):
            continue
        src = "kernel" if fn.startswith(("kern", "dmesg")) else "app"
        for i, ln in enumerate(open(os.path.join(d, fn), errors="replace")):
            if "hosts/%s/%s:%d" % (h, fn, i + 1) in evidence or not ln.strip():
                continue
            noise_pool.append((src, SYSLOG.sub("", ln.rstrip("\n"), count=1)))
noise_bytes = sum(len(m) for _, m in noise_pool) / max(1, len(noise_pool))
say("date %s; load %s; cluster %d hosts x 8 GPUs (reflex-sim seed 1, scenario %s, one job), "
    "incident: %d events in its last hour of log time (%.0f s in all), true root %s; background pool %d lines "
    "(%.0f bytes avg); %d agents, %d diagnosers, settle %s" %
    (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), load(), len(hosts), a.scenario,
     len(incident), span_all, truth, len(noise_pool), noise_bytes,
     a.agents, a.diagnosers, a.settle))

# ---- the deployment ----
redis = Redis(tmp, fsync="everysec").start()
am = Alertmanager(tmp).start()
diags = []
for i in range(a.diagnosers):
    port = free_port()
    p = spawn([a.reflex, "watch", "--kb", a.kb, "--topology", TOPO, "--redis", redis.url(),
               "--owner", "d%d" % i, "--settle", a.settle, "--alertmanager", am.url(),
               "--alert-resend", "60s", "--metrics", "127.0.0.1:%d" % port] +
              (["--max-events", str(a.max_events)] if a.max_events else []),
              stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "d%d.log" % i), "w"))
    diags.append((p, port))
agents = []
for i in range(a.agents):
    port = free_port()
    p = spawn([a.reflex, "agent", "--kb", a.kb, "--topology", TOPO, "--host", "replay-%d" % i,
               "--stdin", "--redis", redis.url(), "--metrics", "127.0.0.1:%d" % port],
              stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
              stderr=open(os.path.join(tmp, "a%d.log" % i), "w"))
    agents.append((p, port))
for _, port in diags + agents:
    wait_for(lambda: http_get("http://127.0.0.1:%d/metrics" % port, tries=1), 600, "metrics up")
agent_of = {h: i % a.agents for i, h in enumerate(hosts)}
locks = [threading.Lock() for _ in agents]
written = [0] * a.agents  # bytes of msg written per agent


def send(i, lines):
    data = "".join(lines).encode()
    with locks[i]:
        agents[i][0].stdin.write(data)
        agents[i][0].stdin.flush()
        written[i] += len(data)


def env(host, src, msg, t):
    return json.dumps({"host": host, "ts": iso(t), "source": src, "msg": msg}) + "\n"


stop_noise = threading.Event()


def noise_loop():
    """Background at --noise-rate lines/s, in 10 ms slices, bounded by stop_noise."""
    k = 0
    t_next = time.time()
    per = max(1, int(a.noise_rate / 100))
    while not stop_noise.is_set():
        now = time.time()
        batch = collections.defaultdict(list)
        for _ in range(per):
            src, msg = noise_pool[k % len(noise_pool)]
            h = hosts[(k * 7919) % len(hosts)]
            batch[agent_of[h]].append(env(h, src, msg, now))
            k += 1
        for i, lines in batch.items():
            send(i, lines)
        t_next += 0.01
        time.sleep(max(0.0, t_next - time.time()))


def cpu_all():
    return [cpu_s(p.pid) for p, _ in agents]


def phase(name, t0, c0, b0):
    t1, c1 = time.time(), cpu_all()
    rss = [rss_mib(p.pid) for p, _ in agents]
    pct = [100 * (x - y) / (t1 - t0) for x, y in zip(c1, c0)]
    mb = [(x - y) / 1e6 for x, y in zip(written, b0)]
    cpu_per_mb = sum(x - y for x, y in zip(c1, c0)) / max(1e-9, sum(mb))
    say("%s: %.0f s, agents' CPU %s %% of one core, RSS %s MiB, %.1f MB of lines written "
        "(%.2f CPU-s per MB); load %s" %
        (name, t1 - t0, ["%.1f" % x for x in pct], ["%.0f" % x for x in rss], sum(mb),
         cpu_per_mb, load()))
    return cpu_per_mb


def seen_alerts():
    with urllib.request.urlopen(am.url() + "/api/v2/alerts", timeout=5) as r:
        return {(x["annotations"].get("incident"), x["startsAt"])
                for x in json.loads(r.read()) if x["labels"].get("device") == truth}


rss_peak = [0.0] * len(diags)
rss_peak_stop = threading.Event()


def rss_sampler():  # bounded by rss_peak_stop (set before the summary)
    while not rss_peak_stop.wait(1.0):
        for k, (p, _) in enumerate(diags):
            try:
                rss_peak[k] = max(rss_peak[k], rss_mib(p.pid))
            except OSError:
                pass


threading.Thread(target=rss_sampler, daemon=True).start()

# ---- background only ----
nt = threading.Thread(target=noise_loop, daemon=True)
nt.start()
t0, c0, b0 = time.time(), cpu_all(), list(written)
time.sleep(a.steady)
steady_cpu_per_mb = phase("background only (%.0f lines/s over %d hosts)" % (a.noise_rate,
                                                                            len(hosts)), t0, c0, b0)

# ---- the replays ----
lat = []
t0, c0, b0 = time.time(), cpu_all(), list(written)
last_orig = incident[-1][0]
for r in range(a.replays):
    before = seen_alerts()
    found = {}

    def poll_alert():  # from the replay's start: the first new alert naming the root
        for _ in range(18000):  # bounded: 900 s at 50 ms
            try:  # by incident: a takeover re-posts an old incident's alert
                new = {x for x in seen_alerts() if x[0] not in {b[0] for b in before}}
            except OSError:
                new = None
            if new:
                found["t"], found["alert"] = time.time(), sorted(new)[0]
                return
            time.sleep(0.05)

    poller = threading.Thread(target=poll_alert, daemon=True)
    poller.start()
    start = time.time()
    first_sym = None
    shift = start + a.burst - last_orig  # the last --burst s of log time are written live
    back = (a.replays - 1 - r) * 7200.0  # log time of earlier replays: 2 h apart
    pending = collections.defaultdict(list)
    first_live = None
    for t_orig, host, src, msg, symptom in incident:
        t = t_orig + shift
        if t > time.time():  # flush what is due, then wait for this line's time
            if first_live is None:
                first_live = time.time()
            for i, lines in pending.items():
                send(i, lines)
            pending.clear()
            time.sleep(max(0.0, t - time.time()))
        if symptom and first_sym is None:  # written with the next flush
            for i, lines in pending.items():
                send(i, lines)
            pending.clear()
            pending[agent_of.get(host, 0)].append(env(host, src, msg, t - back))
            for i, lines in pending.items():
                send(i, lines)
            pending.clear()
            first_sym = time.time()
            continue
        pending[agent_of.get(host, 0)].append(env(host, src, msg, t - back))
    for i, lines in pending.items():
        send(i, lines)
    last_write = time.time()
    poller.join(timeout=900)
    if "t" not in found:
        for n in sorted(os.listdir(tmp)):  # the diagnosers' and agents' own words
            if n.endswith(".log"):
                with open(os.path.join(tmp, n), errors="replace") as f:
                    print("---- %s\n%s" % (n, "".join(f.readlines()[-20:])))
        sys.exit("replay %d: no alert naming %s within 900 s" % (r + 1, truth))
    t_alert, got = found["t"], [found["alert"]]
    first_live = first_live or last_write
    first_sym = first_sym or first_live
    lat.append(t_alert - first_sym)
    rss = [rss_mib(p.pid) for p, _ in diags]
    say("replay %d: %d lines in %.1f s (live from %.1f s, first symptom line at %.1f s); alert "
        "for %s in Alertmanager %.2f s after the first symptom line was written, %+.2f s from "
        "the last line (%s); diagnoser RSS %s MiB; load %s" %
        (r + 1, len(incident), last_write - start, first_live - start, first_sym - start, truth,
         lat[-1], t_alert - last_write, got[0][0], ["%.0f" % x for x in rss], load()))
    time.sleep(a.gap)
phase("during the replays", t0, c0, b0)

# ---- the storm: --storm Xid lines on one host's 8 GPUs, written at once ----
sh = [h for h in topo["hosts"] if h["name"] != truth.split("/")[0]][0]
buses = [g["bdf"][5:7] for g in sh["gpus"]][:8]
xid = "NVRM: Xid (PCI:0000:%s:00): 95, pid=2231, name=python, Uncontained: ECC"
i_storm = agent_of[sh["name"]]
t0, c0, b0 = time.time(), cpu_all(), list(written)
now = time.time()
for k in range(0, a.storm, 10000):
    send(i_storm, [env(sh["name"], "kernel", xid % buses[j % len(buses)], now)
                   for j in range(k, min(a.storm, k + 10000))])
    now = time.time()
quiet = 0
peak = 0.0
prev = cpu_s(agents[i_storm][0].pid)
for _ in range(3000):  # caught up when the storm agent's CPU stops moving (bounded: 300 s)
    time.sleep(0.1)
    peak = max(peak, rss_mib(agents[i_storm][0].pid))
    c = cpu_s(agents[i_storm][0].pid)
    quiet = quiet + 1 if c - prev < 0.02 else 0
    prev = c
    if quiet >= 10:
        break
phase("storm (%d Xid lines on %s's 8 GPUs, agent %d; peak RSS %.0f MiB)" %
      (a.storm, sh["name"], i_storm, peak), t0, c0, b0)
stop_noise.set()
nt.join(timeout=10)

def fed_total():
    return sum(metric(http_get("http://127.0.0.1:%d/metrics" % port), "reflex_watch_events_total")
               for _, port in diags)


if a.drain > 0:  # bounded: --drain seconds
    t_end, last, still = time.time() + a.drain, -1, 0
    while time.time() < t_end and still < 10:
        time.sleep(1)
        n = fed_total()
        still = still + 1 if n == last else 0
        last = n
    say("drained: %d events fed after %.0f s more" % (last, a.drain - (t_end - time.time())))
rss_peak_stop.set()
lat.sort()
p50 = statistics.median(lat)
p99 = lat[min(len(lat) - 1, int(round(0.99 * (len(lat) - 1))))]
published = [metric(http_get("http://127.0.0.1:%d/metrics" % port), "reflex_watch_events_total")
             for _, port in diags]
say("latency, the incident's first symptom line written -> alert in Alertmanager, %d replays: p50 %.2f s, p99 %.2f s; "
    "beyond the %gs settle: p50 %.2f s, p99 %.2f s" %
    (len(lat), p50, p99, SETTLE_S, p50 - SETTLE_S, p99 - SETTLE_S))
held = [metric(http_get("http://127.0.0.1:%d/metrics" % port), "reflex_watch_events_held")
        for _, port in diags]
dropped = [metric(http_get("http://127.0.0.1:%d/metrics" % port),
                  "reflex_watch_events_dropped_total") for _, port in diags]
say("diagnoser peak RSS %s MiB (sampled each second); events held %s, dropped by retention %s" %
    (["%.0f" % x for x in rss_peak], [int(x) for x in held], [int(x) for x in dropped]))
say("diagnoser RSS %s MiB, events fed %s; agents at ~1 MB/min per host (%.2f CPU-s per MB in the "
    "background phase): %.3f%% of one core per host" %
    (["%.0f" % rss_mib(p.pid) for p, _ in diags], [int(x) for x in published],
     steady_cpu_per_mb, 100 * steady_cpu_per_mb / 60.0))
for p, _ in agents:
    p.stdin.close()
for p, _ in agents + diags:
    p.terminate()
for p, _ in agents + diags:
    try:
        p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
am.stop()
redis.stop()
print("\n".join(out))
