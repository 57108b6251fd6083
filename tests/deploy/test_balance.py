"""Shard balancing between diagnosers (real redis-server, the ACL users of
deploy/users.acl): one diagnoser alone takes every shard; a second and a
third join and the shards spread to ceil(shards / live) at most each, given
up by the first without a diagnosis repeated; the owner of the incident's
shard is kill -9'd and the two left share every shard again, the incident's
answer still published once."""
import argparse
import collections
import json
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (Redis, acl_redis, check, dump_logs_on_failure, free_port, http_get, metric,  # noqa
                     spawn, tempdir, wait_for)

ap = argparse.ArgumentParser()
ap.add_argument("--reflex", required=True)
ap.add_argument("--kb", required=True)
ap.add_argument("--bundle", required=True)
ap.add_argument("--acl", required=True)
ap.add_argument("--reflexc", help="build the KB once: diagnosers load the artifact (README)")
a = ap.parse_args()

tmp = tempdir()
dump_logs_on_failure(tmp)
topo = os.path.join(a.bundle, "topology.json")
redis, pw = acl_redis(tmp, a.acl, fsync="everysec")
redis.start()
admin = redis.conn()

# The demo incident's events (its job's shard), and five more shards with an
# entry each (foreign: counted and skipped by their owner).
for h in ("node-0017", "node-0018"):
    p = spawn([a.reflex, "agent", "--kb", a.kb, "--topology", topo, "--host", h, "--follow",
               os.path.join(a.bundle, "hosts", h), "--year", "2026", "--once",
               "--redis", redis.url("reflex-agent", pw["AGENT"])],
              stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, h + ".log"), "w"))
    check(p.wait(timeout=60) == 0, "agent for %s publishes" % h)
for i in range(5):
    admin.call("XADD", "reflex:{bal:%d}:events" % i, "*", "x", "y")
shards = sorted(k.decode()[len("reflex:{"):-len("}:events")]
                for k in admin.call("KEYS", "reflex:{*}:events"))
N = len(shards)
check(N >= 6, "%d shards: %s" % (N, shards))
INCIDENT = "job:job-42"

diag = {}


# Diagnosers load a built artifact, as the README advises: compiling kb/ for
# every shard taken costs ~1 s (many times that under a sanitizer), longer
# than this test's 3 s lease.
kb_for_watch = a.kb
if a.reflexc:
    kb_for_watch = os.path.join(tmp, "kb.rfxkb")
    subprocess.run([a.reflexc, "build", "-o", kb_for_watch, a.kb], check=True, timeout=600,
                   stdout=subprocess.DEVNULL)


def start(name):
    port = free_port()
    p = spawn([a.reflex, "watch", "--kb", kb_for_watch, "--topology", topo, "--owner", name,
               "--lease-ttl", "3s", "--settle", "2s", "--metrics", "127.0.0.1:%d" % port,
               "--redis", redis.url("reflex-diagnoser", pw["DIAGNOSER"])],
              stdout=open(os.path.join(tmp, name + ".jsonl"), "w"),
              stderr=open(os.path.join(tmp, name + ".log"), "w"))
    diag[name] = (p, port)


def owners():
    """shard -> the diagnoser holding its lease (None: free)."""
    out = {}
    for s in shards:
        v = admin.call("GET", "reflex:{%s}:lease" % s)
        out[s] = v.decode() if v else None
    return out


def spread(names):
    """Every shard leased by one of `names`, none holding more than its share."""
    o = owners()
    per = collections.Counter(o.values())
    share = math.ceil(N / len(names))
    ok = all(v in names for v in o.values()) and all(per[n] <= share for n in names)
    return per if ok else None


def answers():
    """Root-cause answers published on stdout by every diagnoser, and the
    entries of the incident's diagnoses stream."""
    lines = []
    for name in diag:
        with open(os.path.join(tmp, name + ".jsonl")) as f:
            lines += [json.loads(x) for x in f if x.strip()]
    stream = redis.stream("reflex:{%s}:diagnoses" % INCIDENT)
    return [d for d in lines if d.get("root_causes")], len(stream)


start("d1")
per = wait_for(lambda: spread(["d1"]), 30, "d1 alone takes every shard")
check(per["d1"] == N, "d1 alone holds all %d shards" % N)
wait_for(lambda: answers()[0], 60, "d1 diagnoses the incident")


def settled(state={"last": None, "since": 0}):
    """The answers unchanged for 3 s (later revisions, if any, are out)."""
    import time
    now = (len(answers()[0]), answers()[1])
    if now != state["last"]:
        state["last"], state["since"] = now, time.time()
    return time.time() - state["since"] >= 3


wait_for(settled, 60, "d1's answers to settle", step=0.5)
first, n_stream = answers()
check(len(first) >= 1, "the incident diagnosed once by d1 (%d answers)" % len(first))

start("d2")
per = wait_for(lambda: spread(["d1", "d2"]), 45, "d2 joins: shards spread over d1 and d2")
check(per["d1"] == math.ceil(N / 2) and per["d2"] == N - math.ceil(N / 2),
      "d1 gave shards up to its share: %s" % dict(per))
start("d3")
per = wait_for(lambda: (lambda p: p if p and len(p) == 3 else None)(spread(["d1", "d2", "d3"])),
               45, "d3 joins: shards spread over all three")
check(max(per.values()) <= math.ceil(N / 3) and min(per.values()) >= 1,
      "each of three holds about a third: %s" % dict(per))
released = sum(metric(http_get("http://127.0.0.1:%d/metrics" % port),
                      "reflex_watch_shards_released_total") for _, port in diag.values())
check(released >= N - math.ceil(N / 3), "shards were given up, not lost (%d released)" % released)

victim = owners()[INCIDENT]
p, _ = diag[victim]
p.kill()
p.wait(timeout=10)
left = [n for n in diag if n != victim]
per = wait_for(lambda: spread(left), 45, "after kill -9 of %s: %s share every shard" %
               (victim, left))
check(sum(per.values()) == N and max(per.values()) <= math.ceil(N / 2),
      "the two left hold every shard: %s" % dict(per))


def rebuilt():
    owner = owners()[INCIDENT]  # None while a lease lapses and is taken again
    return owner in left and metric(http_get("http://127.0.0.1:%d/metrics" % diag[owner][1]),
                                    "reflex_watch_events_total") > 0


wait_for(rebuilt, 30, "the new owner rebuilt the shard")
later, n_stream2 = answers()
check(n_stream2 == n_stream, "the incident's diagnoses stream not repeated across %d moves "
      "(%d entries)" % (released, n_stream2))
check(len(later) == len(first), "no answer printed twice across balancing and failover")
for name in left:
    p, _ = diag[name]
    p.terminate()
    check(p.wait(timeout=30) == 0, "%s exits 0" % name)
redis.stop()
print("PASS")
