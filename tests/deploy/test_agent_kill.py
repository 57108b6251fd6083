"""kill -9 an agent mid-file and restart it (three times, while the file
grows): every event reaches the stream exactly once by id, and the folded
storm counts add up to the lines written — what `reflex events` finds in the
same file. Each kill comes only after the agent has published from that
start (else it tests nothing: a slow start-up was once killed before it read
a line). One storm kind: with two kinds interleaved in one file a kill can
re-count a sent fold's later lines (a documented limit: one saved position
per file), and with one kind in each of two files the folds' ends depend on
how far the agent has read the other file (storm time is the latest line's),
so a restart can cut them elsewhere. Also: rotation by rename and truncation
are followed."""
import argparse
import collections
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Redis, check, events_counts, spawn, stream_counts, tempdir, wait_for  # noqa

ap = argparse.ArgumentParser()
ap.add_argument("--reflex", required=True)
ap.add_argument("--kb", required=True)
ap.add_argument("--bundle", required=True)
ap.add_argument("--lines", type=int, default=12000)
a = ap.parse_args()

tmp = tempdir()
topo = os.path.join(a.bundle, "topology.json")
samples = open(os.path.join(a.bundle, "hosts", "node-0017", "kern.log")).read().splitlines()
# A sample kind whose storms fold by time (dedup): fold boundaries then
# depend on the lines' own times only, never on when the agent runs.
msgs = [s.split("kernel: ", 1)[1] for s in samples][:1]
start = int(time.time())  # times from now on: real time never closes a fold early
logdir = os.path.join(tmp, "bundle", "hosts", "node-0017")
os.makedirs(logdir)
path = os.path.join(logdir, "kern.log")
year = time.gmtime(start).tm_year


def line(i):
    ts = time.strftime("%b %e %H:%M:%S", time.gmtime(start + i))
    return "%s node-0017 kernel: %s\n" % (ts, msgs[i % len(msgs)])


redis = Redis(tmp).start()
state = os.path.join(tmp, "agent.state")


def agent(once=False):
    args = [a.reflex, "agent", "--kb", a.kb, "--topology", topo, "--host", "node-0017",
            "--follow", logdir, "--redis", redis.url(), "--state", state, "--year", str(year),
            "--batch", "50", "--poll", "50ms"]
    if once:
        args.append("--once")
    return spawn(args, stdout=subprocess.DEVNULL,
                 stderr=open(os.path.join(tmp, "agent.log"), "a"))


written = 0
f = open(path, "w")


def write(n):
    global written
    for _ in range(n):
        f.write(line(written))
        written += 1
    f.flush()


def published():
    return len(redis.stream("reflex:{job:job-42}:events"))


write(a.lines // 4)
kills = 0
for rnd in range(3):
    before = published()
    p = agent()
    # Grow the file while the agent reads it, then kill -9 it mid-way,
    # once it has published something of its own.
    for _ in range(5):
        write(a.lines // 20)
        time.sleep(0.15)
    wait_for(lambda: published() > before or p.poll() is not None, 60,
             "the agent's first events after start %d" % (rnd + 1))
    check(p.poll() is None, "agent still running at kill %d" % (rnd + 1))
    p.kill()
    p.wait(timeout=10)
    kills += 1
write(a.lines - written)
f.close()

# Rotation by rename + a fresh file, then truncation of the fresh one.
os.rename(path, path + ".1")
with open(path, "w") as g:
    g.write(line(written))
    g.write(line(written + 1))
p = agent(once=True)
check(p.wait(timeout=120) == 0, "agent with --once drains and exits 0 after %d kill -9" % kills)

got, n_entries, n_ids = stream_counts(redis, "reflex:{job:job-42}:events")
dups = n_entries - n_ids

# The same lines as a bundle: kern.log.1 (the rotated file) + kern.log.
want = events_counts(a.reflex, a.kb, topo, os.path.join(tmp, "bundle"))
print("stream: %d entries, %d distinct ids (%d redelivered); counts %s; reflex events %s" %
      (n_entries, n_ids, dups, dict(got), dict(want)), flush=True)
check(sum(want.values()) == written + 2, "reflex events counts every line written")
check(got == want, "every line counted exactly once across %d kill -9 + restart" % kills)

# Truncation (copytruncate): the file starts over and its new line is read.
with open(path, "w") as g:
    g.write(line(written + 5000))
p = agent(once=True)
check(p.wait(timeout=60) == 0, "agent drains after the truncation")
names = [json.loads(f["e"])["name"] for _, f in redis.stream("reflex:{job:job-42}:events")]
check(len(names) == n_entries + 1, "the truncated file's new line is one new event")
redis.stop()
print("PASS")
