"""The agent reads the journal (a stand-in journalctl printing `-o json`
entries, kernel transport): kill -9 mid-journal and restart, resuming after
the saved cursor — every entry counted exactly once (distinct ids and storm
counts = `reflex events` on the same entries as a journal file in a bundle),
and the journal reader does not outlive a killed agent."""
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
a = ap.parse_args()
here = os.path.dirname(os.path.abspath(__file__))
tmp = tempdir()
topo = os.path.join(a.bundle, "topology.json")
samples = open(os.path.join(a.bundle, "hosts", "node-0017", "kern.log")).read().splitlines()
msgs = [s.split("kernel: ", 1)[1] for s in samples][:2]
start_us = int(time.time()) * 1000000
bundle_dir = os.path.join(tmp, "bundle", "hosts", "node-0017")
os.makedirs(bundle_dir)
jfile = os.path.join(bundle_dir, "journal.json")
N = 3000
with open(jfile, "w") as f:
    for i in range(N):
        f.write(json.dumps({"__CURSOR": "s=fake;i=%x" % i,
                            "__REALTIME_TIMESTAMP": str(start_us + i * 400 * 1000000),
                            "_HOSTNAME": "node-0017", "_TRANSPORT": "kernel",
                            "MESSAGE": msgs[i % 2]}) + "\n")
redis = Redis(tmp).start()
state = os.path.join(tmp, "state")


def agent(delay, once):
    cmd = "python3 %s %s --delay %s%s" % (os.path.join(here, "fake_journalctl.py"), jfile, delay,
                                          "" if once else " --follow")
    args = [a.reflex, "agent", "--kb", a.kb, "--topology", topo, "--host", "node-0017",
            "--journal", "--journal-command", cmd, "--redis", redis.url(), "--state", state,
            "--batch", "20"]
    return spawn(args + (["--once"] if once else []), stdout=subprocess.DEVNULL,
                 stderr=open(os.path.join(tmp, "agent.log"), "a"))


key = "reflex:{job:job-42}:events"
for rnd in range(2):
    p = agent(0.05, once=False)
    wait_for(lambda: redis.conn().call("XLEN", key) > 0 and
             os.path.exists(state) and "cursor" in open(state).read(), 30,
             "the agent to publish and save a cursor")
    time.sleep(0.5)
    p.kill()
    p.wait(timeout=10)
    time.sleep(0.5)
    r = subprocess.run(["pgrep", "-f", "fake_journalctl.py %s" % jfile], capture_output=True)
    check(r.returncode != 0, "the journal reader died with the killed agent (round %d)" % rnd)
saved = json.load(open(state))
cur = [f["cursor"] for f in saved["files"] if f["cursor"]]
check(cur and cur[0] != "s=fake;i=%x" % (N - 1), "killed mid-journal at cursor %s" % cur)
p = agent(0, once=True)
check(p.wait(timeout=120) == 0, "agent --once resumes after the cursor and drains")

got, _, _ = stream_counts(redis, key)
want = events_counts(a.reflex, a.kb, topo, os.path.join(tmp, "bundle"))
print("stream %s; reflex events %s" % (dict(got), dict(want)), flush=True)
check(sum(want.values()) == N, "reflex events counts every journal entry")
check(got == want, "every journal entry counted exactly once across 2 kill -9 + restart")
redis.stop()
print("PASS")
