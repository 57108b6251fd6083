"""The agent's disk spool (the agent buffers in bounded memory then on
disk). Redis is unreachable while more lines are written than the memory
buffer holds: the events go to the spool (positions advance past them), and
drain to Redis oldest first once it is back. Three modes:
  outage  Redis down, spool grows, Redis back: every event exactly once, spool empty.
  kill    kill -9 the agent while events are only in the spool, restart: each exactly once.
  damage  a spool record cut off (crash mid-append) and one corrupted: the
          intact records are delivered, the damage counted, no crash."""
import argparse
import collections
import json
import os
import struct
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
ap.add_argument("--mode", choices=["outage", "kill", "damage"], required=True)
ap.add_argument("--lines", type=int, default=400)
ap.add_argument("--promtool", default="")
a = ap.parse_args()

tmp = tempdir()
dump_logs_on_failure(tmp)
topo = os.path.join(a.bundle, "topology.json")
samples = open(os.path.join(a.bundle, "hosts", "node-0017", "kern.log")).read().splitlines()
msgs = [s.split("kernel: ", 1)[1] for s in samples][:2]
start = int(time.time())
logdir = os.path.join(tmp, "bundle", "hosts", "node-0017")
os.makedirs(logdir)
path = os.path.join(logdir, "kern.log")
state = os.path.join(tmp, "agent.state")
spool = state + ".spool"  # the default: beside the state file
key = "reflex:{job:job-42}:events"
BUFFER = 20
written = 0


def write(n):
    # 400 s apart: no storm folds across lines, one event per line.
    global written
    with open(path, "a") as f:
        for _ in range(n):
            ts = time.strftime("%b %e %H:%M:%S", time.gmtime(start + written * 400))
            f.write("%s node-0017 kernel: %s\n" % (ts, msgs[written % 2]))
            written += 1


redis = Redis(tmp)
mport = free_port()
murl = "http://127.0.0.1:%d/metrics" % mport


def agent():
    return spawn([a.reflex, "agent", "--kb", a.kb, "--topology", topo, "--host", "node-0017",
                  "--follow", logdir, "--redis", redis.url(), "--state", state,
                  "--year", str(time.gmtime(start).tm_year), "--buffer", str(BUFFER),
                  "--batch", "10", "--spool-max", "1M", "--poll", "50ms",
                  "--metrics", "127.0.0.1:%d" % mport],
                 stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "agent.log"), "a"))


def m(name, labels=None):
    return metric(http_get(murl), name, labels)


def segments():
    return sorted(os.path.join(spool, n) for n in os.listdir(spool) if n.endswith(".spool"))


def records(seg):
    """(offset, length, id) of each record of a segment (reflex/deploy/spool.h's format)."""
    data, out, pos = open(seg, "rb").read(), [], 0
    while pos + 12 <= len(data):
        magic, n, _ = struct.unpack_from("<4sII", data, pos)
        assert magic == b"RSP1", "unexpected spool bytes at %s:%d" % (seg, pos)
        body = data[pos + 12:pos + 12 + n]
        sl = struct.unpack_from("<I", body, 0)[0]
        il = struct.unpack_from("<I", body, 4 + sl)[0]
        out.append((pos, 12 + n, body[8 + sl:8 + sl + il].decode()))
        pos += 12 + n
    return out


def spill_while_down():
    """Redis unreachable, more lines than the buffer: they end up spooled."""
    write(a.lines)
    wait_for(lambda: m("reflex_agent_lines_read_total") >= written and
             m("reflex_agent_spool_events") >= a.lines - BUFFER and os.path.exists(state), 60,
             "the lines read and spooled while Redis is down")
    mt = http_get(murl)
    check(metric(mt, "reflex_agent_buffer_events") <= BUFFER and
          metric(mt, "reflex_agent_spilled_events_total") >= a.lines - BUFFER and
          metric(mt, "reflex_agent_spool_bytes") > 0,
          "memory stays bounded (%d buffered), the spool holds %d events (%d bytes)" %
          (metric(mt, "reflex_agent_buffer_events"), metric(mt, "reflex_agent_spool_events"),
           metric(mt, "reflex_agent_spool_bytes")))
    saved = json.load(open(state))["files"]
    off = max([f["offset"] for f in saved if f["path"].endswith("kern.log")] or [0])
    check(off >= os.path.getsize(path) * (a.lines - BUFFER) // written,
          "the read position advanced past the spooled lines (offset %d of %d)" %
          (off, os.path.getsize(path)))


def drained():
    return (m("reflex_agent_spool_events") == 0 and m("reflex_agent_buffer_events") == 0 and
            m("reflex_agent_files_opened_total") >= 1)


lost = set()
if a.mode == "outage":
    redis.start()
    p = agent()
    write(30)
    # (the last line of each kind stays in its open fold: its time is ahead)
    wait_for(lambda: m("reflex_agent_published_events_total") >= 20, 30, "the first events")
    redis.stop(hard=True)
    spill_while_down()
    redis.start()
    wait_for(drained, 60, "the spool to drain")
    check(m("reflex_agent_drained_events_total") >= a.lines - BUFFER,
          "the spooled events were drained (%d)" % m("reflex_agent_drained_events_total"))
    write(30)
    wait_for(lambda: m("reflex_agent_published_events_total") >= written - 2, 30,
             "the last lines (but the two in open folds)")
    check(all(os.path.getsize(s) == 0 for s in segments()), "the spool is empty on disk")
    p.terminate()
    check(p.wait(timeout=20) == 0, "agent exits 0 on SIGTERM")
elif a.mode == "kill":
    redis.start()
    p = agent()
    write(30)
    # (the last line of each kind stays in its open fold: its time is ahead)
    wait_for(lambda: m("reflex_agent_published_events_total") >= 20, 30, "the first events")
    redis.stop(hard=True)
    spill_while_down()
    p.kill()
    p.wait(timeout=10)
    check(sum(len(records(s)) for s in segments()) >= a.lines - BUFFER,
          "after kill -9 the spooled events are on disk")
    redis.start()
    p = agent()
    wait_for(drained, 60, "the restarted agent to drain the spool")
    wait_for(lambda: stream_counts(redis, key)[2] >= written - 2, 30,
             "every event in the stream (but the two in open folds, sent at stop)")
    p.terminate()
    check(p.wait(timeout=20) == 0, "agent exits 0 on SIGTERM")
else:
    p = agent()  # Redis never started yet: unreachable from the first line
    spill_while_down()
    p.kill()
    p.wait(timeout=10)
    segs = segments()
    check(len(segs) >= 2, "the spool spans %d segments" % len(segs))
    # Garbage inside the first segment (one record's body overwritten)...
    first = records(segs[0])
    off, n, rid = first[len(first) // 2]
    with open(segs[0], "r+b") as f:
        f.seek(off + n - 8)
        f.write(b"\xde\xad\xbe\xef")
    lost.add(rid)
    # ...and the last record of the last one cut off, as by a crash mid-append.
    off, n, rid = records(segs[-1])[-1]
    os.truncate(segs[-1], off + n - 5)
    lost.add(rid)
    redis.start()
    p = agent()
    wait_for(drained, 60, "the restarted agent to drain the damaged spool")
    wait_for(lambda: stream_counts(redis, key)[2] >= written - len(lost) - 2, 30,
             "the intact events in the stream")
    mt = http_get(murl)
    check(metric(mt, "reflex_agent_spool_damaged_total", 'reason="truncated"') == 1 and
          metric(mt, "reflex_agent_spool_damaged_total", 'reason="corrupt"') == 1 and
          metric(mt, "reflex_agent_spool_damaged_bytes_total") > 0,
          "the damage is counted: one record cut off, one corrupt")
    if a.promtool:  # every spool metric has samples here, labelled ones too
        r = subprocess.run([a.promtool, "check", "metrics"], input=mt, capture_output=True,
                           text=True, timeout=30)
        check(r.returncode == 0 and "reflex_agent_spool_bytes" in mt,
              "promtool check metrics accepts the agent's spool metrics " + r.stdout + r.stderr)
    p.terminate()
    check(p.wait(timeout=20) == 0, "agent exits 0 on SIGTERM")
    log = open(os.path.join(tmp, "agent.log")).read()
    check("damaged" in log, "the damage is said in the agent's log")

got, n_entries, n_ids = stream_counts(redis, key)
entries = redis.stream(key)
ids = {f["id"] for _, f in entries}
seen = collections.Counter(f["id"] for _, f in entries)
for sid, f in entries:
    if seen[f["id"]] > 1:  # a redelivery: which line, for the log
        print("redelivered %s %s" % (sid, json.loads(f["e"]).get("evidence")))
want = events_counts(a.reflex, a.kb, topo, os.path.join(tmp, "bundle"))
print("stream: %d entries, %d distinct ids; counts %s; reflex events %s; lost %d" %
      (n_entries, n_ids, dict(got), dict(want), len(lost)), flush=True)
check(not (ids & lost), "the damaged records' events are not in the stream")
if lost:
    check(n_ids == written - len(lost) and n_entries == n_ids and
          sum(want.values()) - sum(got.values()) == len(lost),
          "every intact record delivered once (%d of %d events)" % (n_ids, written))
else:
    check(n_entries == n_ids and got == want and sum(got.values()) == written,
          "every event exactly once in the stream (%d)" % written)
redis.stop()
print("PASS")
