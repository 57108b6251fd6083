""".gz rotations (logrotate `compress`): a followed file compressed while
the agent was down is finished from the saved position (its unread lines
published once, under the file's own evidence name); one compressed while
the agent runs is not re-published; a .gz cut short (gzip still writing)
is read as far as it goes, and after a kill -9 and restart, finished;
compressed files present at an agent's first start are history (counted,
not read); a corrupt .gz is reported, not a crash. Every check compares the
stream (each event id once) with `reflex events` on the same lines."""
import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (Redis, check, dump_logs_on_failure, events_counts, free_port,  # noqa
                     http_get, metric, spawn, stream_counts, tempdir, wait_for)

ap = argparse.ArgumentParser()
ap.add_argument("--reflex", required=True)
ap.add_argument("--kb", required=True)
ap.add_argument("--bundle", required=True)
a = ap.parse_args()

tmp = tempdir()
dump_logs_on_failure(tmp)
topo = os.path.join(a.bundle, "topology.json")
samples = open(os.path.join(a.bundle, "hosts", "node-0017", "kern.log")).read().splitlines()
# Two sample kinds whose storms fold by time (dedup): folds then depend on
# the lines' own times, never on when the agent runs.
msgs = [s.split("kernel: ", 1)[1] for s in samples][:2]
start = int(time.time())
year = time.gmtime(start).tm_year
KEY = "reflex:{job:job-42}:events"
redis = Redis(tmp).start()
counter = [0]


def lines(n, kinds=2):
    out = []
    for _ in range(n):
        i = counter[0]
        counter[0] += 1
        ts = time.strftime("%b %e %H:%M:%S", time.gmtime(start + i))
        out.append("%s node-0017 kernel: %s\n" % (ts, msgs[i % kinds]))
    return "".join(out)


def append(path, text):
    with open(path, "a") as f:
        f.write(text)


def gzip_file(src, dst):
    """logrotate's compress: gzip the rotated file, then remove it."""
    with open(src, "rb") as f, gzip.open(dst, "wb") as g:
        shutil.copyfileobj(f, g)
    os.unlink(src)


class Host:
    """One followed directory, its agent's state and log, and a reference
    bundle holding the same lines as plain files (what `reflex events`
    reads)."""

    def __init__(self, name):
        self.dir = os.path.join(tmp, name, "hosts", "node-0017")
        self.ref = os.path.join(tmp, name + "-ref", "hosts", "node-0017")
        os.makedirs(self.dir)
        os.makedirs(self.ref)
        self.state = os.path.join(tmp, name + ".state")
        self.log = os.path.join(tmp, name + ".log")
        self.metrics_port = free_port()

    def write(self, text, ref_name="kern.log"):
        append(os.path.join(self.dir, "kern.log"), text)
        append(os.path.join(self.ref, ref_name), text)

    def agent(self, once=True, extra=()):
        args = [a.reflex, "agent", "--kb", a.kb, "--topology", topo, "--host", "node-0017",
                "--follow", self.dir, "--redis", redis.url(), "--state", self.state,
                "--year", str(year), "--batch", "50", "--poll", "50ms",
                "--metrics", "127.0.0.1:%d" % self.metrics_port] + list(extra)
        if once:
            args.append("--once")
        return spawn(args, stdout=subprocess.DEVNULL, stderr=open(self.log, "a"))

    def run_once(self, what):
        p = self.agent()
        check(p.wait(timeout=120) == 0, "agent --once exits 0 (%s)" % what)

    def log_text(self):
        return open(self.log).read()


def evidences():
    return [json.loads(f["e"]).get("evidence", "") for _, f in redis.stream(KEY)]


def compare(host, what):
    got, n_entries, n_ids = stream_counts(redis, KEY)
    want = events_counts(a.reflex, a.kb, topo, os.path.dirname(os.path.dirname(host.ref)))
    print("%s: stream %d entries, %d ids; counts %s; reflex events %s" %
          (what, n_entries, n_ids, dict(got), dict(want)), flush=True)
    check(got == want, "%s: every line counted exactly once" % what)
    return n_entries, n_ids


# 1. Compressed while the agent was down: kern.log read to line 3000; 2000
#    more lines written; rotated (rename) and compressed; a new kern.log.
h = Host("down")
h.write(lines(3000), "kern.log.1")
h.run_once("first part")
h.write(lines(2000), "kern.log.1")
os.rename(os.path.join(h.dir, "kern.log"), os.path.join(h.dir, "kern.log.1"))
gzip_file(os.path.join(h.dir, "kern.log.1"), os.path.join(h.dir, "kern.log.1.gz"))
h.write(lines(500))
h.run_once("after the rotation")
compare(h, "compressed while down")
ev = evidences()
# Evidence is the path the agent read the file by (absolute), with its lines.
kern_ev = os.path.join(os.path.abspath(h.dir), "kern.log") + ":"
check(any(e.startswith(kern_ev) and int(e.rsplit(":", 1)[1]) > 3000
          for e in ev),
      "the .gz's unread lines carry the original file's evidence name (kern.log:3001...)")
check(not any(".gz" in e for e in ev), "no evidence names the .gz itself")
# Restarted again: the finished .gz (renamed by the next rotation) is not read again.
n0 = len(redis.stream(KEY))
os.rename(os.path.join(h.dir, "kern.log.1.gz"), os.path.join(h.dir, "kern.log.2.gz"))
h.run_once("after the .gz was renamed")
check(len(redis.stream(KEY)) == n0, "a finished .gz renamed by the next rotation: nothing re-sent")
redis.cli("DEL", KEY)

# 2. Compressed while the agent runs (no delaycompress): the rotated file is
#    read to its end from the open descriptor; its .gz adds nothing.
h = Host("running")
h.write(lines(2000), "kern.log.1")
p = h.agent(once=False)
port = h.metrics_port
wait_for(lambda: metric(http_get("http://127.0.0.1:%d/metrics" % port),
                        "reflex_agent_lines_read_total") >= 2000, 60, "the agent reads 2000 lines")
os.rename(os.path.join(h.dir, "kern.log"), os.path.join(h.dir, "kern.log.1"))
append(os.path.join(h.dir, "kern.log.1"), lines(0))
gzip_file(os.path.join(h.dir, "kern.log.1"), os.path.join(h.dir, "kern.log.1.gz"))
h.write(lines(300))
wait_for(lambda: metric(http_get("http://127.0.0.1:%d/metrics" % port),
                        "reflex_agent_lines_read_total") >= 2300, 60, "the agent reads the new file")
# delaycompress: kern.log -> kern.log.1 (plain), later kern.log.1 -> kern.log.2.gz.
os.rename(os.path.join(h.dir, "kern.log"), os.path.join(h.dir, "kern.log.1"))
os.rename(os.path.join(h.ref, "kern.log"), os.path.join(h.ref, "kern.log.0"))
h.write(lines(200))
time.sleep(1.5)  # a directory scan sees kern.log.1 under its new name
gzip_file(os.path.join(h.dir, "kern.log.1"), os.path.join(h.dir, "kern.log.2.gz"))
h.write(lines(100))
wait_for(lambda: metric(http_get("http://127.0.0.1:%d/metrics" % port),
                        "reflex_agent_lines_read_total") >= 2600, 60, "the agent reads all lines")
time.sleep(2.5)  # scans that see the .gz files
m = http_get("http://127.0.0.1:%d/metrics" % port)
check(metric(m, "reflex_agent_lines_read_total") == 2600,
      "the .gz copies of files read while running are not read again (2600 lines read)")
p.terminate()
check(p.wait(timeout=30) == 0, "agent stops on SIGTERM")
n_entries, n_ids = compare(h, "compressed while running")
check(n_entries == n_ids, "nothing re-published (%d entries, %d ids)" % (n_entries, n_ids))
redis.cli("DEL", KEY)

# 3. A .gz cut short (gzip still writing): read as far as it goes; kill -9;
#    the rest written; the restarted agent finishes it.
h = Host("partial")
# One kind of line: one fold open at a time. With two kinds interleaved, a
# kill -9 can leave the position before one kind's open fold and after the
# start of the other kind's fold already sent; its lines then count twice
# (the limit the README states, not a .gz matter).
h.write(lines(1000, kinds=1), "kern.log.1")
h.run_once("before the partial .gz")
h.write(lines(6000, kinds=1), "kern.log.1")
os.rename(os.path.join(h.dir, "kern.log"), os.path.join(tmp, "partial-kern.log.1"))
whole = gzip.compress(open(os.path.join(tmp, "partial-kern.log.1"), "rb").read(),
                      compresslevel=1)
gzpath = os.path.join(h.dir, "kern.log.1.gz")
with open(gzpath, "wb") as f:
    f.write(whole[:len(whole) // 2])
p = h.agent(once=False)
wait_for(lambda: "waiting for the rest" in h.log_text(), 60, "the agent reads the partial .gz")
read_half = wait_for(lambda: metric(http_get("http://127.0.0.1:%d/metrics" % h.metrics_port),
                                    "reflex_agent_lines_read_total") > 1000, 30,
                     "lines of the partial .gz read")
read_half = metric(http_get("http://127.0.0.1:%d/metrics" % h.metrics_port),
                   "reflex_agent_lines_read_total")
time.sleep(0.5)  # its positions reach the state file
p.kill()
p.wait(timeout=10)
check(1000 < read_half < 7000, "part of the .gz read before kill -9 (%d lines)" % read_half)
with open(gzpath, "ab") as f:
    f.write(whole[len(whole) // 2:])
h.write(lines(10, kinds=1))
h.run_once("after the .gz was completed")
compare(h, "partial .gz, kill -9, completed")
check(not any(".gz" in e for e in evidences()), "the partial .gz continued kern.log's names")
redis.cli("DEL", KEY)

# 4. First start: compressed files already there are history, not read;
#    a corrupt .gz (its CRC wrong) appearing later is reported.
h = Host("first")
with gzip.open(os.path.join(h.dir, "kern.log.3.gz"), "wt") as g:
    g.write(lines(400))
h.write(lines(100))
p = h.agent(once=False)
port = h.metrics_port
wait_for(lambda: metric(http_get("http://127.0.0.1:%d/metrics" % port),
                        "reflex_agent_lines_read_total") >= 100, 60, "the agent reads kern.log")
m = http_get("http://127.0.0.1:%d/metrics" % port)
check(metric(m, "reflex_agent_gz_skipped_total", 'reason="history"') == 1,
      "a .gz present at the first start is counted as history")
check("present at the agent's first start not read" in h.log_text(), "and said so")
good = gzip.compress(lines(300).encode())
with open(os.path.join(h.dir, "kern.log.4.gz"), "wb") as f:
    f.write(good[:-8] + bytes(b ^ 0xFF for b in good[-8:-4]) + good[-4:])  # bad CRC
wait_for(lambda: metric(http_get("http://127.0.0.1:%d/metrics" % port),
                        "reflex_agent_gz_errors_total") >= 1, 30, "the corrupt .gz is counted")
check("compressed data unreadable" in h.log_text(), "the corrupt .gz is reported")
p.terminate()
check(p.wait(timeout=30) == 0, "agent stops on SIGTERM after a corrupt .gz")
check(not any("kern.log.3.gz" in e for e in evidences()), "history .gz not published")
redis.stop()
print("PASS")
