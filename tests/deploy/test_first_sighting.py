"""A dedup window never delays the first sighting (IngestOptions::announce_folds):
an agent follows a training log; a PyTorch watchdog timeout (a `dedup 10m`
signature, kb/pytorch.rfx) appended now is in the stream within ~2 s as a
count-1 event, not when its 10-minute fold closes. A repeat of it folds; at
SIGTERM the fold is sent as an update of the same event (same evidence, count
2, its own id), which the stream's readers merge (harness.stream_counts).

The line is node-0017's real rank-0 watchdog line of examples/incident-pcie
(its README cites the source) with the timestamp set to now: the fold's window
is in log time, and a line from the past would close at once.
--poll 10s: the append is seen by inotify, not by the poll (runtime/deploy)."""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Redis, check, dump_logs_on_failure, spawn, stream_counts, tempdir, wait_for  # noqa

ap = argparse.ArgumentParser()
ap.add_argument("--reflex", required=True)
ap.add_argument("--kb", required=True)
ap.add_argument("--bundle", required=True)
ap.add_argument("--poll", default="10s")
a = ap.parse_args()

tmp = tempdir()
dump_logs_on_failure(tmp)
topo = os.path.join(a.bundle, "topology.json")
train = open(os.path.join(a.bundle, "hosts", "node-0017", "train.log")).read().splitlines(True)
watchdog = next(ln for ln in train if "Watchdog caught" in ln and "[rank0]" in ln)
stamp = "[E305 10:51:02.408271257 "
check(stamp in watchdog, "the example's rank-0 watchdog line")


def now_line():
    t = time.time()
    g = time.gmtime(t)
    s = "[E%02d%02d %s.%09d " % (g.tm_mon, g.tm_mday, time.strftime("%H:%M:%S", g),
                                  int((t % 1) * 1e9))
    return watchdog.replace(stamp, s)


log_dir = os.path.join(tmp, "var-log")
os.makedirs(log_dir)
path = os.path.join(log_dir, "train.log")
with open(path, "w") as f:
    f.writelines(train[:5])  # NCCL INFO start-up: no event
redis = Redis(tmp).start()
agent = spawn([a.reflex, "agent", "--kb", a.kb, "--topology", topo, "--host", "node-0017",
               "--follow", path, "--redis", redis.url(), "--year", time.strftime("%Y"),
               "--poll", a.poll, "--state", os.path.join(tmp, "state")],
              stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "agent.log"), "w"))
wait_for(lambda: "following" in open(os.path.join(tmp, "agent.log")).read(), 60,
         "the agent to follow the file")
time.sleep(0.5)  # and to have read what is there


def events():
    keys = [k.strip() for k in redis.cli("--scan", "--pattern", "reflex:*:events").split()]
    out = []
    for k in keys:
        for _, f in redis.stream(k):
            out.append((f["id"], json.loads(f["e"])))
    return out, keys


def watchdogs():
    return [e for _, e in events()[0] if e["name"] == "torch_watchdog_timeout"]


with open(path, "a") as f:
    f.write(now_line())
t0 = time.time()
got = wait_for(watchdogs, 5, "the watchdog timeout in the stream")
took = time.time() - t0
check(took < 2.5, "published %.2f s after the append (a 10-minute fold does not hold it)" % took)
check(len(got) == 1 and got[0].get("count", 1) == 1, "one event, count 1: %s" % got)
check(got[0]["evidence"] == path + ":6", "its evidence is the line (%s)" % got[0]["evidence"])

with open(path, "a") as f:
    f.write(now_line())  # the same rank's timeout again: folds into the open window
time.sleep(1.5)
check(len(watchdogs()) == 1, "the repeat folds (nothing new in the stream)")
agent.terminate()
agent.wait(timeout=20)
evs, keys = events()
wd = [(i, e) for i, e in evs if e["name"] == "torch_watchdog_timeout"]
check(len(wd) == 2 and wd[1][1]["count"] == 2 and wd[1][1]["evidence"] == wd[0][1]["evidence"]
      and wd[0][0] != wd[1][0], "at stop the fold is sent as its update: count 2, same evidence, "
      "its own id")
counts = stream_counts(redis, keys[0])[0]
check(counts["torch_watchdog_timeout"] == 2, "merged, two lines count two (%s)" % counts)
print("PASS")
