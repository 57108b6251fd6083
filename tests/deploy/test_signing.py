"""Events bound to the host that sent them (docs/deployment.md, "Threat
model"). With exactly the rights deploy/users.acl gives an agent, entries
forged into a job's stream are refused by a diagnoser that has the master
key (--verify-key): unsigned, signed with the wrong host's key, signed by a
host for an event of another host, or for a device of another host. No
diagnosis or eviction comes of them, and each is counted by reason. The
real agents, each with its own derived key (--signing-key) and the password
from a file (--redis-password-file, never in argv), still get the incident
diagnosed. Key files readable by every user are refused.

The signature is computed here from its definition (event_signing.cpp:
HMAC-SHA256 over length-prefixed host, shard, id and payload, with the host
key HMAC-SHA256(master, "reflex host key\\n" + host)), so the test also
pins the wire format."""
import argparse
import hashlib
import hmac
import json
import os
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import acl_redis, check, free_port, spawn, tempdir, wait_for  # noqa

ap = argparse.ArgumentParser()
ap.add_argument("--reflex", required=True)
ap.add_argument("--kb", required=True)
ap.add_argument("--bundle", required=True)
ap.add_argument("--acl", required=True)
a = ap.parse_args()

tmp = tempdir()
topo = os.path.join(a.bundle, "topology.json")


def secret(name, text, mode=0o600):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text + "\n")
    os.chmod(path, mode)
    return path


def run(*args):
    p = subprocess.run([a.reflex] + list(args), capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout.strip(), p.stderr


rc, master_hex, err = run("key", "new")
check(rc == 0 and len(master_hex) == 64, "reflex key new prints a 64-hex-digit key (%s)" % err)
master = secret("master.key", master_hex)
keys = {}
for h in ("node-0017", "node-0018"):
    rc, k, err = run("key", "derive", "--master", master, "--host", h)
    check(rc == 0 and len(k) == 64, "reflex key derive --host %s (%s)" % (h, err))
    keys[h] = k
check(keys["node-0017"] != keys["node-0018"], "each host has a key of its own")
open_key = secret("open.key", master_hex, 0o644)
rc, _, err = run("key", "derive", "--master", open_key, "--host", "x")
check(rc == 2 and "readable by every user" in err, "a key file readable by all is refused")

redis, pw = acl_redis(tmp, a.acl)
redis.start()
agent_pw = secret("agent.password", pw["AGENT"])
diag_pw = secret("diagnoser.password", pw["DIAGNOSER"])
base = "redis://%%s@127.0.0.1:%d" % redis.port


def host_key(host):
    return hmac.new(bytes.fromhex(master_hex), b"reflex host key\n" + host.encode(),
                    hashlib.sha256).digest()


def sign(key, host, shard, eid, payload):
    text = b"reflex entry v1"
    for f in (host.encode(), shard.encode(), eid.encode(), payload.encode()):
        text += b"\n" + str(len(f)).encode() + b":" + f
    return hmac.new(key, text, hashlib.sha256).hexdigest()


# The diagnoser: master key, password from a file.
mport = free_port()
out = os.path.join(tmp, "d.jsonl")
d = spawn([a.reflex, "watch", "--kb", a.kb, "--topology", topo, "--settle", "2s",
           "--redis", base % "reflex-diagnoser", "--redis-password-file", diag_pw,
           "--verify-key", master, "--metrics", "127.0.0.1:%d" % mport],
          stdout=open(out, "w"), stderr=open(os.path.join(tmp, "d.log"), "w"))


def refused():
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % mport, timeout=5) as r:
            text = r.read().decode()
    except OSError:
        return {}
    got = {}
    for line in text.splitlines():
        if line.startswith("reflex_watch_refused_entries_total{"):
            reason = line.split('reason="')[1].split('"')[0]
            got[reason] = float(line.split()[-1])
    return got


# A real event of node-0018's, as its agent would publish it (stdout bus).
p = subprocess.run([a.reflex, "agent", "--kb", a.kb, "--topology", topo, "--host", "node-0018",
                    "--follow", os.path.join(a.bundle, "hosts", "node-0018", "kern.log"),
                    "--year", "2026", "--once"], capture_output=True, text=True, timeout=60)
entries = [json.loads(x) for x in p.stdout.splitlines() if x.startswith("{")]
check(entries, "node-0018's agent recognizes its kern.log")
theirs = entries[-1]
shard, eid, payload = theirs["shard"], theirs["id"], theirs["event"]
key = "reflex:{%s}:events" % shard
agent_conn = redis.conn("reflex-agent", pw["AGENT"])
forged = {
    # no signature at all
    "unsigned": ("id", eid + "-u", "e", payload),
    # node-0017's key, claiming to be node-0018
    "bad_signature": ("id", eid + "-b", "e", payload, "h", "node-0018",
                      "s", sign(host_key("node-0017"), "node-0018", shard, eid + "-b", payload)),
    # node-0017 signs honestly, but the event is node-0018's
    "other_host": ("id", eid + "-o", "e", payload, "h", "node-0017",
                   "s", sign(host_key("node-0017"), "node-0017", shard, eid + "-o", payload)),
}
ev = json.loads(payload)
ev["host"] = "node-0017"  # node-0017's event, but on node-0018's device
moved = json.dumps(ev)
forged["other_device"] = ("id", eid + "-d", "e", moved, "h", "node-0017",
                          "s", sign(host_key("node-0017"), "node-0017", shard, eid + "-d", moved))
for fields in forged.values():
    agent_conn.call("XADD", key, "*", *fields)
wait_for(lambda: all(refused().get(r, 0) >= 1 for r in forged), 30,
         "every forged entry refused and counted by its reason")
check(True, "refused by reason: %s" % refused())
time.sleep(5)  # past the settle time: a forged incident would be out by now
check(not [x for x in open(out) if x.strip()], "no diagnosis comes of forged entries")

# The real agents, each with its key and the password from a file.
agents = []
for h in ("node-0017", "node-0018"):
    agents.append(spawn([a.reflex, "agent", "--kb", a.kb, "--topology", topo, "--host", h,
                         "--follow", os.path.join(a.bundle, "hosts", h), "--year", "2026",
                         "--once", "--redis", base % "reflex-agent",
                         "--redis-password-file", agent_pw, "--signing-key",
                         secret(h + ".key", keys[h])],
                        stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, h + ".log"), "w")))
for p in agents:
    cmdline = open("/proc/%d/cmdline" % p.pid, "rb").read().decode(errors="replace") \
        if os.path.exists("/proc/%d/cmdline" % p.pid) else ""
    check(pw["AGENT"] not in cmdline, "the password is not in the agent's argv")
    check(p.wait(timeout=60) == 0, "a signing agent publishes")


def diagnosed():
    with open(out) as f:
        return [json.loads(x) for x in f if x.strip() and json.loads(x)["root_causes"]]


wait_for(lambda: diagnosed(), 60, "the incident diagnosed from signed entries")
root = diagnosed()[-1]["root_causes"][0]["device"]
check(root == "node-0018/pcie/0000:5c:00.0", "the signed incident's root: %s" % root)
check(refused().get("unsigned", 0) == 1, "the real agents' entries are all taken")
d.terminate()
check(d.wait(timeout=20) == 0, "diagnoser exits 0")
redis.stop()
print("PASS")
