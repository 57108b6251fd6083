#!/usr/bin/env python3
"""Live tail, append -> Alertmanager (docs/deploy-benchmarks.md, "Live tail").
Not a timed test. Unlike deploy_cluster_bench.py, which replays historical
logs through stdin, the agents here follow files that this script appends
to in real time, with the timestamps of now; real servers on loopback
(tests/deploy/harness.py: free ports, temp dir, everything stopped at
exit): Redis (AOF everysec), Alertmanager, --diagnosers `reflex watch
--redis` (settle --settle). Two shapes:
  - default: one agent per host (`--follow DIR`), 2 x --trials + 2 hosts;
  - --agents N --hosts-per-agent M: N log servers' agents (`--follow-hosts
    DIR`, DIR/<host>/ as rsyslog's per-host template keeps it), N x M hosts,
    each entry signed with its host's key (`--signing-keys`, the diagnosers
    `--verify-key`).

The cluster: each host a copy of examples/incident-pcie's node-0018 (8 GPUs
behind their PCIe switches); hosts 2k, 2k+1 run job-k (16 ranks). The lines
are the example's real lines (its README cites their sources), re-stamped
to now. Background: the example's lines that are no event (NCCL INFO,
training steps, corrected-AER chatter) at --noise-rate lines/s over all
hosts (default 200; with --agents 0.16 per host, deploy_cluster_bench.py's
2,000 lines/s over 12,500 hosts); a --storm-line Xid 95 storm on the last
host, written during the trials. Trial k uses one pair alone (its own
incident; the pairs spread over the agents), alternately:
  - node: the fatal AER + Xid 79 block on host 2k+1's kern.log; measured
    from the append to an alert kind=node naming its PCIe switch;
  - job: the same block, then every rank's watchdog timeout lines on both
    hosts' train.log; measured from the first watchdog append to an alert
    kind=job naming the switch.
Alertmanager is polled every 50 ms. Target: p99 <= settle + 2 s.
  nice -n 10 bench/deploy_live_bench.py --reflex build/tools/reflex/reflex --kb kb.rfxkb
      [--trials 8] [--agents 10 --hosts-per-agent 125] [--smoke]
--smoke (bounded, for ctest): 2 trials, light background, no storm, 2 log
servers' agents x 3 hosts; exits 1 when an alert does not come within
settle + 10 s."""
import argparse
import copy
import hashlib
import hmac
import json
import os
import statistics
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "deploy"))
from harness import (cpu_s, rss_mib, Alertmanager, Redis, dump_logs_on_failure, free_port,  # noqa
                     http_get, spawn, tempdir, wait_for)

ap = argparse.ArgumentParser()
ap.add_argument("--reflex", required=True)
ap.add_argument("--kb", required=True, help="kb sources or a built artifact (faster start)")
ap.add_argument("--example", default=os.path.join(ROOT, "examples", "incident-pcie"))
ap.add_argument("--trials", type=int, default=8)
ap.add_argument("--diagnosers", type=int, default=2)
ap.add_argument("--settle", default="2s")
ap.add_argument("--agents", type=int, default=0, help="log servers' agents (--follow-hosts); "
                "0: one agent per host")
ap.add_argument("--hosts-per-agent", type=int, default=125)
ap.add_argument("--noise-rate", type=float, default=None, help="background lines/s, all hosts")
ap.add_argument("--storm", type=int, default=100000, help="Xid 95 lines during the trials")
ap.add_argument("--gap", type=float, default=3.0, help="seconds between trials")
ap.add_argument("--smoke", action="store_true")
a = ap.parse_args()
if a.smoke:
    a.trials, a.noise_rate, a.storm, a.diagnosers = 2, 20.0, 0, 1
    a.agents, a.hosts_per_agent = 2, 3
MULTI = a.agents > 0
SETTLE_S = float(a.settle.rstrip("s"))
tmp = tempdir()
dump_logs_on_failure(tmp)
out = []


def say(s):
    print(s, flush=True)
    out.append(s)


def load():
    return " ".join(open("/proc/loadavg").read().split()[:3])


# ---- the cluster: copies of node-0018 ----
ex_topo = json.load(open(os.path.join(a.example, "topology.json")))
proto = next(h for h in ex_topo["hosts"] if h["name"] == "node-0018")
n_hosts = a.agents * a.hosts_per_agent if MULTI else 2 * a.trials + 2
if n_hosts < 2 * a.trials + 2 or n_hosts % 2:
    sys.exit("need an even number of hosts, at least 2 x --trials + 2")
if a.noise_rate is None:
    a.noise_rate = 0.16 * n_hosts if MULTI else 200.0
n_pairs = n_hosts // 2
stride = max(1, (n_pairs - 1) // a.trials)  # trial pairs spread over the agents, not the last
hosts = ["live-%04d" % i for i in range(n_hosts)]
topo = {k: v for k, v in ex_topo.items() if k not in ("hosts", "jobs")}
topo["hosts"], topo["jobs"] = [], []
for i, name in enumerate(hosts):
    h = copy.deepcopy(proto)
    h["name"], h["ip"] = name, "10.%d.%d.%d" % (1 + i // 62500, i // 250 % 250, i % 250 + 1)
    for g in h.get("gpus", []):
        g["serial"] = "%d%03d" % (1650924000000 + i, g["index"])
    for n in h.get("nics", []):
        n["ip"] = "11.%d.%d.%d" % (i // 250, i % 250, n.get("port", 1) + h["nics"].index(n))
    topo["hosts"].append(h)
for k in range(n_hosts // 2):
    topo["jobs"].append({"id": "job-%d" % k,
                         "ranks": {"hosts": [hosts[2 * k], hosts[2 * k + 1]], "gpus_per_host": 8}})
TOPO = os.path.join(tmp, "topology.json")
json.dump(topo, open(TOPO, "w"))


def lines_of(host, fn):
    return open(os.path.join(a.example, "hosts", host, fn)).read().splitlines()


kern18, train17, train18 = (lines_of("node-0018", "kern.log"), lines_of("node-0017", "train.log"),
                            lines_of("node-0018", "train.log"))
fault = [ln.split("] ", 1)[1] for ln in kern18[6:17]]  # the fatal AER .. the Xid 79 (dmesg text)
watch17 = [ln for ln in train17 if ln.startswith("[rank")]  # ranks 0-7: 4 lines each
watch18 = [ln for ln in train18 if ln.startswith("[rank")]  # ranks 8-15
noise = ([("train.log", ln) for ln in train18[1:17]] +  # NCCL INFO
         [("kern.log", ln.split("] ", 1)[1]) for ln in kern18[2:6]])  # corrected AER chatter
step_line = "%s [INFO] step %d | loss 1.98 | 4.9 s/it"
BOOT = int(time.time()) - 100000
dirs = {}
locks = {}
agent_of = {h: (i // a.hosts_per_agent if MULTI else i) for i, h in enumerate(hosts)}
for h in hosts:
    d = os.path.join(tmp, "logs", "a%d" % agent_of[h], h) if MULTI else os.path.join(tmp, "logs", h)
    os.makedirs(d)
    with open(os.path.join(d, "boot_time"), "w") as f:
        f.write(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(BOOT)))
    for fn in ("kern.log", "train.log"):
        open(os.path.join(d, fn), "w").close()
    dirs[h] = d
    locks[h] = threading.Lock()


def dmesg(text):
    return "[%12.6f] %s\n" % (time.time() - BOOT, text)


def torch_now(ln):  # "[rankN]:[E305 10:51:02.423719257 ..." -> now
    t = time.time()
    g = time.gmtime(t)
    head, rest = ln.split(":[E", 1)
    return "%s:[E%02d%02d %s.%09d %s\n" % (head, g.tm_mon, g.tm_mday,
                                           time.strftime("%H:%M:%S", g), int((t % 1) * 1e9),
                                           rest.split(" ", 2)[2])


def append(h, fn, text):
    with locks[h], open(os.path.join(dirs[h], fn), "a") as f:
        f.write(text)


# ---- the deployment ----
sign_args, verify_args = [], []
if MULTI:  # the hosts' keys, as `reflex key derive` writes them (checked against it once)
    master = subprocess.run([a.reflex, "key", "new"], stdout=subprocess.PIPE, check=True,
                            text=True).stdout.strip()
    MASTER, KEYS = os.path.join(tmp, "master.key"), os.path.join(tmp, "keys")
    os.makedirs(KEYS)
    for path, text in [(MASTER, master)] + [
            (os.path.join(KEYS, h + ".key"),
             hmac.new(bytes.fromhex(master), b"reflex host key\n" + h.encode(),
                      hashlib.sha256).hexdigest()) for h in hosts]:
        with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write(text + "\n")
    derived = subprocess.run([a.reflex, "key", "derive", "--master", MASTER, "--host", hosts[0]],
                             stdout=subprocess.PIPE, check=True, text=True).stdout.strip()
    assert derived == open(os.path.join(KEYS, hosts[0] + ".key")).read().strip(), "key derive"
    sign_args, verify_args = ["--signing-keys", KEYS], ["--verify-key", MASTER]
redis = Redis(tmp, fsync="everysec").start()
am = Alertmanager(tmp).start()
diags, agents = [], []
for i in range(a.diagnosers):
    port = free_port()
    diags.append(spawn([a.reflex, "watch", "--kb", a.kb, "--topology", TOPO, "--redis",
                        redis.url(), "--owner", "d%d" % i, "--settle", a.settle,
                        "--alertmanager", am.url(), "--alert-resend", "60s"] + verify_args + [
                        "--metrics", "127.0.0.1:%d" % port],
                       stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "d%d.log" % i), "w")))
    diags[-1].port = port
names = ["logsrv-%d" % i for i in range(a.agents)] if MULTI else hosts
for i, name in enumerate(names):
    src = (["--follow-hosts", os.path.join(tmp, "logs", "a%d" % i)] + sign_args if MULTI
           else ["--follow", dirs[name]])
    p = spawn([a.reflex, "agent", "--kb", a.kb, "--topology", TOPO, "--host", name] + src +
              ["--redis", redis.url(), "--year", time.strftime("%Y"),
               "--state", os.path.join(tmp, name + ".state")],
              stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "a-%s.log" % name), "w"))
    agents.append(p)
t_start = time.time()
files_each = 2 * a.hosts_per_agent if MULTI else 2
for name in names:
    wait_for(lambda: open(os.path.join(tmp, "a-%s.log" % name)).read().count("following ") >=
             files_each, 1800, "agent %s to follow its files" % name, step=0.5)
for p in diags:
    wait_for(lambda: http_get("http://127.0.0.1:%d/metrics" % p.port, tries=1), 600, "diagnoser")
say("date %s; load %s; %d hosts (%s), %d diagnosers, settle %s; all up in %.0f s; "
    "background %.0f lines/s" %
    (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), load(), n_hosts,
     "%d log servers' agents x %d hosts, --follow-hosts, signed" % (a.agents, a.hosts_per_agent)
     if MULTI else "one agent each, --follow", a.diagnosers, a.settle, time.time() - t_start,
     a.noise_rate))

stop_bg = threading.Event()


def background():  # bounded by stop_bg
    k, t_next = 0, time.time()
    per = max(1, int(a.noise_rate / 10))
    while not stop_bg.is_set():
        for _ in range(per):
            h = hosts[k % n_hosts]
            fn, ln = noise[k % len(noise)]
            if k % 3 == 0:
                fn, ln = "train.log", step_line % (time.strftime("%Y-%m-%d %H:%M:%S"), k)
            append(h, fn, dmesg(ln) if fn == "kern.log" else ln + "\n")
            k += 1
        t_next += 0.1
        time.sleep(max(0.0, t_next - time.time()))


def storm():  # --storm lines on the last host's 8 GPUs, in 5,000-line writes
    buses = [g["bdf"][5:7] for g in proto["gpus"]][:8]
    xid = "NVRM: Xid (PCI:0000:%s:00): 95, pid=2231, name=python, Uncontained: ECC"
    for k in range(0, a.storm, 5000):
        append(hosts[-1], "kern.log", "".join(dmesg(xid % buses[j % 8])
                                               for j in range(k, min(a.storm, k + 5000))))
        time.sleep(0.05)


def alert_for(device, kind):
    return [x for x in am.alerts() if x["labels"].get("device") == device and
            x["labels"].get("kind") == kind and x["status"]["state"] == "active"]


bg = threading.Thread(target=background, daemon=True)
bg.start()
time.sleep(5 if a.smoke else 20)  # background alone first
cpu0 = [cpu_s(p.pid) for p in agents]
dcpu0, rcpu0 = [cpu_s(p.pid) for p in diags], cpu_s(redis.proc.pid)
t_trials0 = time.time()
storm_t = threading.Thread(target=storm, daemon=True)
if a.storm:
    storm_t.start()
lat = {"node": [], "job": []}
failed = 0
for k in range(a.trials):
    kind = "node" if k % 2 == 0 else "job"
    h0, h1 = hosts[2 * k * stride], hosts[2 * k * stride + 1]
    device = "%s/pcie/0000:5c:00.0" % h1
    append(h1, "kern.log", "".join(dmesg(x) for x in fault))
    t0 = time.time()
    if kind == "job":
        time.sleep(0.5)  # the ranks time out after the GPU fell off
        append(h0, "train.log", "".join(torch_now(x) for x in watch17))
        t0 = time.time()
        append(h1, "train.log", "".join(torch_now(x) for x in watch18))
    try:
        wait_for(lambda: alert_for(device, kind), SETTLE_S + (10 if a.smoke else 60),
                 "%s alert for %s" % (kind, device), step=0.05)
        lat[kind].append(time.time() - t0)
        say("trial %d (%s): alert kind=%s for %s %.2f s after the append; load %s" %
            (k + 1, kind, kind, device, lat[kind][-1], load()))
    except AssertionError as e:
        failed += 1
        say("trial %d (%s): %s" % (k + 1, kind, e))
    time.sleep(a.gap)
storm_t.join(timeout=120) if a.storm else None
cpu1 = [cpu_s(p.pid) for p in agents]
t_trials1 = time.time()
stop_bg.set()
bg.join(timeout=10)
for kind, v in lat.items():
    if not v:
        continue
    v.sort()
    p99 = v[min(len(v) - 1, int(round(0.99 * (len(v) - 1))))]
    say("%s incidents, %d trials: append -> alert p50 %.2f s, p99 %.2f s (settle %gs: p99 is "
        "settle %+.2f s; target <= settle + 2 s: %s)" %
        (kind, len(v), statistics.median(v), p99, SETTLE_S, p99 - SETTLE_S,
         "met" if p99 <= SETTLE_S + 2 else "NOT met"))
span = t_trials1 - t_trials0
say("agents: RSS %.0f-%.0f MiB; CPU during the trials (%.0f s) %.1f CPU-s in all, %.1f%% of a "
    "core per agent on average (the storm host's agent %.1f CPU-s)" %
    (min(rss_mib(p.pid) for p in agents), max(rss_mib(p.pid) for p in agents), span,
     sum(cpu1) - sum(cpu0), 100.0 * (sum(cpu1) - sum(cpu0)) / span / len(agents),
     cpu1[-1] - cpu0[-1]))
say("diagnosers: RSS %s MiB, CPU during the trials %s CPU-s; redis-server RSS %.0f MiB, "
    "CPU %.1f CPU-s" %
    ("/".join("%.0f" % rss_mib(p.pid) for p in diags),
     "/".join("%.1f" % (cpu_s(p.pid) - c) for p, c in zip(diags, dcpu0)), rss_mib(redis.proc.pid),
     cpu_s(redis.proc.pid) - rcpu0))
refused = 0
for p in diags:
    text = http_get("http://127.0.0.1:%d/metrics" % p.port, tries=3) or ""
    refused += sum(float(ln.split()[-1]) for ln in text.splitlines()
                   if ln.startswith("reflex_watch_refused_entries_total{"))
if MULTI:
    say("entries refused by the diagnosers' --verify-key: %d" % refused)
    failed += refused > 0
for p in agents + diags:
    p.terminate()
for p in agents + diags:
    try:
        p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
am.stop()
redis.stop()
print("\n".join(out))
sys.exit(1 if failed else 0)
