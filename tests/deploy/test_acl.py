"""Redis ACL users per role (deploy/users.acl): an agent appends events and
nothing else (reading refused), a diagnoser reads events and writes leases and
diagnoses but cannot append events; a wrong password is refused and the agent
says so and publishes nothing; the deployment works with the right ones."""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (Redis, acl_redis, RespError, check, free_port, spawn, tempdir,  # noqa
                     wait_for)

ap = argparse.ArgumentParser()
ap.add_argument("--reflex", required=True)
ap.add_argument("--kb", required=True)
ap.add_argument("--bundle", required=True)
ap.add_argument("--acl", required=True)
a = ap.parse_args()

tmp = tempdir()
topo = os.path.join(a.bundle, "topology.json")
redis, pw = acl_redis(tmp, a.acl)
redis.start()
key = "reflex:{job:job-42}:events"


def refused(user, password, *cmd):
    try:
        c = redis.conn(user, password)
    except RespError as e:
        return str(e)
    try:
        c.call(*cmd)
        return ""
    except RespError as e:
        return str(e)
    finally:
        c.close()


check("WRONGPASS" in refused("reflex-agent", "wrong", "PING"), "a wrong password is refused")
r = refused("reflex-agent", pw["AGENT"], "XADD", key, "*", "id", "x", "e", "{}")
check(r == "", "the agent user may XADD to an event stream")
for cmd in (("XRANGE", key, "-", "+"), ("XREAD", "STREAMS", key, "0"), ("GET", "x"),
            ("XADD", "reflex:{job:job-42}:diagnoses", "*", "a", "b"), ("KEYS", "*"),
            ("EVAL", "return 1", "0")):
    r = refused("reflex-agent", pw["AGENT"], *cmd)
    check("NOPERM" in r, "the agent user is refused %s (%s)" % (cmd[0], r[:60]))
r = refused("reflex-diagnoser", pw["DIAGNOSER"], "XADD", key, "*", "id", "x", "e", "{}")
check("NOPERM" in r, "the diagnoser user may not append events (%s)" % r[:60])
redis.conn().call("DEL", key)

# An agent with a wrong password: refused, says so, publishes nothing.
bad = spawn([a.reflex, "agent", "--kb", a.kb, "--topology", topo, "--host", "node-0017",
             "--follow", os.path.join(a.bundle, "hosts", "node-0017"), "--year", "2026",
             "--redis", redis.url("reflex-agent", "wrong")],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "bad.log"), "w"))
wait_for(lambda: "WRONGPASS" in open(os.path.join(tmp, "bad.log")).read(), 20,
         "the agent to report the refused password")
check(redis.conn().call("EXISTS", key) == 0, "an agent with a wrong password publishes nothing")
check("wrong" not in open(os.path.join(tmp, "bad.log")).read().replace("WRONGPASS", ""),
      "the password is not in the agent's log")
bad.kill()
bad.wait(timeout=10)


def readyz(port):
    import urllib.error
    import urllib.request
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/readyz" % port, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


# /readyz of idle agents (nothing to publish: they ping): the agent user may
# not PING, but NOPERM proves Redis reached and the password taken; a wrong
# password is not ready, and says why.
empty = os.path.join(tmp, "empty")
os.makedirs(empty)
idle = {}
for name, password in (("right", pw["AGENT"]), ("wrong", "wrong")):
    port = free_port()
    idle[name] = (port, spawn([a.reflex, "agent", "--kb", a.kb, "--topology", topo, "--host",
                               "node-0017", "--follow", empty, "--metrics", "127.0.0.1:%d" % port,
                               "--redis", redis.url("reflex-agent", password)],
                              stdout=subprocess.DEVNULL,
                              stderr=open(os.path.join(tmp, "idle-%s.log" % name), "w")))
wait_for(lambda: readyz(idle["right"][0])[0] == 200, 30, "the idle agent's /readyz 200")
check(True, "an idle agent under reflex-agent is ready (%s)" % readyz(idle["right"][0])[1].strip())
# 503 "starting" comes first (before the first round of the main loop); the
# answer that names the refusal follows once a round has tried the bus.
wait_for(lambda: readyz(idle["wrong"][0])[0] == 503 and "WRONGPASS" in readyz(idle["wrong"][0])[1],
         30, "the wrong password's /readyz 503 naming WRONGPASS")
check("WRONGPASS" in readyz(idle["wrong"][0])[1],
      "a wrong password: /readyz 503 (%s)" % readyz(idle["wrong"][0])[1].strip())
for _, p in idle.values():
    p.terminate()
    p.wait(timeout=20)

# Right passwords: the deployment works under the per-role users.
out = os.path.join(tmp, "d.jsonl")
d = spawn([a.reflex, "watch", "--kb", a.kb, "--topology", topo, "--settle", "2s",
           "--redis", redis.url("reflex-diagnoser", pw["DIAGNOSER"])],
          stdout=open(out, "w"), stderr=open(os.path.join(tmp, "d.log"), "w"))
agents = [spawn([a.reflex, "agent", "--kb", a.kb, "--topology", topo, "--host", h,
                 "--follow", os.path.join(a.bundle, "hosts", h), "--year", "2026", "--once",
                 "--redis", redis.url("reflex-agent", pw["AGENT"])],
                stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, h + ".log"), "w"))
          for h in ("node-0017", "node-0018")]
for p in agents:
    check(p.wait(timeout=60) == 0, "agent publishes under the reflex-agent user")


def diagnosed():
    with open(out) as f:
        return any(json.loads(x)["root_causes"] for x in f if x.strip())


wait_for(diagnosed, 60, "a diagnosis under the reflex-diagnoser user")
check(True, "the diagnoser reads, leases and publishes under the reflex-diagnoser user")
d.terminate()
check(d.wait(timeout=20) == 0, "diagnoser exits 0")
redis.stop()
print("PASS")
