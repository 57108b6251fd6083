"""The agent sees an appended line within a second although --poll is 30 s:
inotify on the followed directory wakes it (runtime/deploy/agent.cpp,
ChangeWatch). Also after a rotation by rename (a new file under the followed
name) and a copytruncate. With --no-inotify the polling path still reads
appends, within --poll. No Redis: the agent prints its events (a dry run).

The lines are node-0017's real watchdog lines of examples/incident-pcie (its
README cites the source), one rank each (a `dedup 10m` signature folds
repeats per rank), with the timestamp set to now."""
import argparse
import json
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import check, dump_logs_on_failure, spawn, tempdir, wait_for  # noqa

ap = argparse.ArgumentParser()
ap.add_argument("--reflex", required=True)
ap.add_argument("--kb", required=True)
ap.add_argument("--bundle", required=True)
a = ap.parse_args()

tmp = tempdir()
dump_logs_on_failure(tmp)
topo = os.path.join(a.bundle, "topology.json")
train = open(os.path.join(a.bundle, "hosts", "node-0017", "train.log")).read().splitlines(True)
stamp = "[E305 10:51:02."


def rank_line(r):
    ln = next(x for x in train if "Watchdog caught" in x and x.startswith("[rank%d]" % r))
    i = ln.index(stamp)
    t = time.time()
    g = time.gmtime(t)
    now = "[E%02d%02d %s." % (g.tm_mon, g.tm_mday, time.strftime("%H:%M:%S", g))
    return ln[:i] + now + ln[i + len(stamp):]


class Agent:
    def __init__(self, name, log_dir, extra):
        self.events = []
        self.err = open(os.path.join(tmp, name + ".log"), "w")
        self.p = spawn([a.reflex, "agent", "--kb", a.kb, "--topology", topo, "--host",
                        "node-0017", "--follow", log_dir, "--year", time.strftime("%Y")] + extra,
                       stdout=subprocess.PIPE, stderr=self.err, text=True)
        threading.Thread(target=self._read, daemon=True).start()
        self.name = name

    def _read(self):
        for ln in self.p.stdout:
            self.events.append((time.time(), json.loads(json.loads(ln)["event"])))

    def ranks(self):
        return [e["device"].rsplit("rank", 1)[1] for _, e in self.events
                if e["name"] == "torch_watchdog_timeout"]

    def ready(self):
        wait_for(lambda: "following" in open(os.path.join(tmp, self.name + ".log")).read(), 60,
                 "the agent to follow the files")
        time.sleep(0.5)

    def seen_within(self, rank, append, limit, what):
        t0 = time.time()
        append()
        wait_for(lambda: str(rank) in self.ranks(), limit + 5, what)
        t = next(t for t, e in self.events if e["device"].endswith("rank%d" % rank))
        check(t - t0 < limit, "%s: read %.2f s after the write (limit %.1f s)" %
              (what, t - t0, limit))
        return t - t0

    def stop(self):
        self.p.terminate()
        self.p.wait(timeout=20)


def append(path, text):
    with open(path, "a") as f:
        f.write(text)


log_dir = os.path.join(tmp, "logs")
os.makedirs(log_dir)
path = os.path.join(log_dir, "train.log")
with open(path, "w") as f:
    f.writelines(train[:5])  # NCCL INFO start-up: no event

ag = Agent("inotify", log_dir, ["--poll", "30s"])
ag.ready()
ag.seen_within(0, lambda: append(path, rank_line(0)), 1.0, "an appended line")


def rotate():
    os.rename(path, path + ".1")
    with open(path, "w") as f:
        f.writelines(train[:5])  # so the copytruncate below leaves a shorter file
        f.write(rank_line(1))


ag.seen_within(1, rotate, 1.0, "a line in a new file after a rotation by rename")


def copytruncate():
    with open(path, "r+") as f:
        f.truncate(0)
        f.write(rank_line(2))


ag.seen_within(2, copytruncate, 1.0, "a line after a copytruncate")
ag.stop()

# The polling path: no inotify, --poll 2s. A line is seen, after up to --poll.
path2 = os.path.join(tmp, "logs2")
os.makedirs(path2)
p2 = os.path.join(path2, "train.log")
with open(p2, "w") as f:
    f.writelines(train[:5])
pg = Agent("polling", path2, ["--poll", "2s", "--no-inotify"])
pg.ready()
pg.seen_within(3, lambda: append(p2, rank_line(3)), 3.0, "polling: an appended line")
pg.seen_within(4, lambda: append(p2, rank_line(4)), 3.0, "polling: another one")
pg.stop()
print("PASS")
