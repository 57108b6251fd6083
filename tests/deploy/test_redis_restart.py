"""Redis restarted (AOF) mid-stream, and Redis unreachable for a while: the
agent buffers (bounded), retries with backoff, then drains; nothing is lost
(the stream holds every event of the lines written) and the agent's metrics
show the gap (publish failures, buffered events)."""
import argparse
import collections
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (Redis, check, events_counts, free_port, http_get, metric, spawn,  # noqa
                     stream_counts, tempdir, wait_for)

ap = argparse.ArgumentParser()
ap.add_argument("--reflex", required=True)
ap.add_argument("--kb", required=True)
ap.add_argument("--bundle", required=True)
ap.add_argument("--down", type=float, default=5.0, help="seconds Redis stays unreachable")
a = ap.parse_args()

tmp = tempdir()
topo = os.path.join(a.bundle, "topology.json")
samples = open(os.path.join(a.bundle, "hosts", "node-0017", "kern.log")).read().splitlines()
msgs = [s.split("kernel: ", 1)[1] for s in samples][:2]
start = int(time.time())
logdir = os.path.join(tmp, "bundle", "hosts", "node-0017")
os.makedirs(logdir)
path = os.path.join(logdir, "kern.log")
written = 0


def write(n):
    global written
    with open(path, "a") as f:
        for _ in range(n):
            ts = time.strftime("%b %e %H:%M:%S", time.gmtime(start + written * 400))
            f.write("%s node-0017 kernel: %s\n" % (ts, msgs[written % 2]))
            written += 1


redis = Redis(tmp).start()
mport = free_port()
murl = "http://127.0.0.1:%d/metrics" % mport
write(200)
agent = spawn([a.reflex, "agent", "--kb", a.kb, "--topology", topo, "--host", "node-0017",
               "--follow", logdir, "--redis", redis.url(), "--state",
               os.path.join(tmp, "state"), "--year", str(time.gmtime(start).tm_year),
               "--poll", "50ms", "--metrics", "127.0.0.1:%d" % mport],
              stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "agent.log"), "w"))
key = "reflex:{job:job-42}:events"
wait_for(lambda: metric(http_get(murl), "reflex_agent_published_events_total") > 0, 30,
         "the first events to be published")

# 1. Restart (SIGTERM, AOF fsync always) mid-stream.
redis.stop()
write(200)
redis.start()
# 2. Unreachable: killed, more lines meanwhile, back after --down seconds.
time.sleep(1)
redis.stop(hard=True)
write(200)
time.sleep(a.down)
m = http_get(murl)
buffered = metric(m, "reflex_agent_buffer_events")
failures = metric(m, "reflex_agent_publish_failures_total")
lag = metric(m, "reflex_agent_publish_lag_seconds")
check(failures > 0 and buffered > 0, "while Redis is down the agent buffers (%d events, %d failed "
      "publishes, lag %.1fs)" % (buffered, failures, lag))
redis.start()
write(200)
wait_for(lambda: metric(http_get(murl), "reflex_agent_buffer_events") == 0 and
         metric(http_get(murl), "reflex_agent_lines_read_total") >= written, 60,
         "the agent to drain")
agent.terminate()
check(agent.wait(timeout=20) == 0, "agent exits 0 on SIGTERM (open folds sent)")

got, _, _ = stream_counts(redis, key)
want = events_counts(a.reflex, a.kb, topo, os.path.join(tmp, "bundle"))
print("stream %s, reflex events %s" % (dict(got), dict(want)), flush=True)
check(got == want and sum(got.values()) == written,
      "nothing lost over a Redis restart and %.0fs of Redis down (%d lines)" % (a.down, written))
redis.stop()
print("PASS")
