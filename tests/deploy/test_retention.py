"""Time-based retention (`reflex watch --retention`, XTRIM MINID ~) against
a real redis-server under the per-role ACL users (deploy/users.acl): the
owner of a shard drops the entries of its event and diagnoses streams older
than the retention and keeps every newer one (the agent's events, still
diagnosed); the diagnoser user may XTRIM event streams yet still not append
to them; the agent user may not XTRIM."""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (Redis, acl_redis, RespError, check, free_port, http_get, metric, spawn,  # noqa
                     tempdir, wait_for)

ap = argparse.ArgumentParser()
ap.add_argument("--reflex", required=True)
ap.add_argument("--kb", required=True)
ap.add_argument("--bundle", required=True)
ap.add_argument("--acl", required=True)
a = ap.parse_args()

tmp = tempdir()
topo = os.path.join(a.bundle, "topology.json")
redis, pw = acl_redis(tmp, a.acl, fsync="everysec")
redis.start()
EV, DG = "reflex:{job:job-42}:events", "reflex:{job:job-42}:diagnoses"


def refused(user, password, *cmd):
    c = redis.conn(user, password)
    try:
        c.call(*cmd)
        return ""
    except RespError as e:
        return str(e)
    finally:
        c.close()


# Entries two hours old (explicit ids: the stream id is the time), then the
# agents' events of the demo incident (ids of now).
admin = redis.conn()
old_ms = int(time.time() * 1000) - 2 * 3600 * 1000
OLD = 1000
for i in range(OLD):
    admin.call("XADD", EV, "%d-%d" % (old_ms, i), "x", "old")
    admin.call("XADD", DG, "%d-%d" % (old_ms, i), "incident", "old", "revision", "1",
               "diagnosis", "{}")
agents = [spawn([a.reflex, "agent", "--kb", a.kb, "--topology", topo, "--host", h,
                 "--follow", os.path.join(a.bundle, "hosts", h), "--year", "2026", "--once",
                 "--redis", redis.url("reflex-agent", pw["AGENT"])],
                stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, h + ".log"), "w"))
          for h in ("node-0017", "node-0018")]
for p in agents:
    check(p.wait(timeout=60) == 0, "agent publishes")
new = [sid for sid, _ in redis.stream(EV) if int(sid.split("-")[0]) > old_ms]
check(len(new) > 0, "%d new events beside %d two-hour-old entries" % (len(new), OLD))

# ACL: the diagnoser may trim event streams, not append to them; the agent may not trim.
r = refused("reflex-diagnoser", pw["DIAGNOSER"], "XTRIM", EV, "MINID", "~", "1")
check(r == "", "the diagnoser user may XTRIM an event stream")
r = refused("reflex-diagnoser", pw["DIAGNOSER"], "XADD", EV, "*", "id", "x", "e", "{}")
check("NOPERM" in r, "the diagnoser user still may not append events (%s)" % r[:60])
r = refused("reflex-agent", pw["AGENT"], "XTRIM", EV, "MINID", "~", "1")
check("NOPERM" in r, "the agent user may not XTRIM (%s)" % r[:60])

port = free_port()
out = os.path.join(tmp, "d.jsonl")
d = spawn([a.reflex, "watch", "--kb", a.kb, "--topology", topo, "--settle", "2s",
           "--retention", "1h", "--metrics", "127.0.0.1:%d" % port,
           "--redis", redis.url("reflex-diagnoser", pw["DIAGNOSER"])],
          stdout=open(out, "w"), stderr=open(os.path.join(tmp, "d.log"), "w"))


def trimmed():
    return metric(http_get("http://127.0.0.1:%d/metrics" % port),
                  "reflex_watch_trimmed_entries_total")


# MINID ~ drops whole stream nodes (100 entries by default): the node that
# holds the newest old entries and the first new ones may stay.
wait_for(lambda: trimmed() >= 2 * (OLD - 100), 60, "the owner trims the old entries")
left = redis.stream(EV)
old_left = [sid for sid, _ in left if int(sid.split("-")[0]) <= old_ms]
check(len(old_left) <= 100, "old events dropped (%d of %d left)" % (len(old_left), OLD))
check([sid for sid, _ in left if int(sid.split("-")[0]) > old_ms] == new,
      "every event newer than the retention kept (%d)" % len(new))
dg_old = [sid for sid, _ in redis.stream(DG) if int(sid.split("-")[0]) <= old_ms]
check(len(dg_old) <= 100, "old diagnoses dropped (%d of %d left)" % (len(dg_old), OLD))


def diagnosed():
    with open(out) as f:
        return any(json.loads(x)["root_causes"] for x in f if x.strip())


wait_for(diagnosed, 60, "the kept events are still diagnosed")
check(any(int(sid.split("-")[0]) > old_ms for sid, _ in redis.stream(DG)),
      "the new diagnosis is in the diagnoses stream")
m = http_get("http://127.0.0.1:%d/metrics" % port)
check(metric(m, "reflex_watch_trim_failures_total") == 0, "no trim failed under the ACL user")
d.terminate()
check(d.wait(timeout=20) == 0, "diagnoser exits 0")
bad = subprocess.run([a.reflex, "watch", "--kb", a.kb, "--topology", topo, "--retention", "5s",
                      "--redis", redis.url()], capture_output=True, text=True, timeout=60)
check(bad.returncode == 2 and "--retention" in bad.stderr,
      "a retention shorter than 1m is refused")
redis.stop()
print("PASS")
