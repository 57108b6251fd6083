"""`reflex agent --kmsg` (the kernel's own records: kernel transport, boot time
known), from a file of records in the kmsg format (data/kmsg-records.txt,
real kernel lines; sources in data/kmsg-records.md):
  1. the events equal `reflex events` on the same lines written as kern.log
     (wall time = boot time + TS_USEC; a facility-user record is not kernel);
  2. kill -9 and restart: continues after the saved SEQ, every event exactly
     once in the stream (real redis-server);
  3. a SEQ gap (records the ring overwrote while the agent was down) and a
     record not in the format: counted, said, the rest read.
With --device: a smoke test of the real /dev/kmsg, skipped (exit 77, with the
reason) where it cannot be read."""
import argparse
import calendar
import json
import os
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
ap.add_argument("--device", action="store_true")
a = ap.parse_args()

tmp = tempdir()
dump_logs_on_failure(tmp)
topo = os.path.join(a.bundle, "topology.json")
HOST = "node-0017"
BOOT = "2024-03-05T08:00:00Z"
BOOT_S = calendar.timegm(time.strptime(BOOT, "%Y-%m-%dT%H:%M:%SZ"))
mport = free_port()
murl = "http://127.0.0.1:%d/metrics" % mport


def m(name, labels=None):
    return metric(http_get(murl), name, labels)


if a.device:
    try:
        fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
        try:
            os.read(fd, 16384)
        finally:
            os.close(fd)
    except OSError as e:
        print("SKIP: /dev/kmsg cannot be read here (%s)" % e)
        sys.exit(77)
    p = spawn([a.reflex, "agent", "--kb", a.kb, "--topology", topo, "--host", HOST, "--kmsg",
               "--state", os.path.join(tmp, "state"), "--poll", "50ms",
               "--metrics", "127.0.0.1:%d" % mport],
              stdout=open(os.path.join(tmp, "events.jsonl"), "w"),
              stderr=open(os.path.join(tmp, "agent.log"), "w"))
    wait_for(lambda: m("reflex_agent_kmsg_records_total") > 0, 30, "records from /dev/kmsg")
    check(m("reflex_agent_kmsg_bad_records_total") == 0,
          "/dev/kmsg: %d records read, none refused" % m("reflex_agent_kmsg_records_total"))
    p.terminate()
    check(p.wait(timeout=20) == 0, "agent exits 0 on SIGTERM")
    saved = json.load(open(os.path.join(tmp, "state")))["files"]
    kpos = [f for f in saved if f["evidence"].endswith("/kmsg")]
    check(len(kpos) == 1 and kpos[0]["cursor"].startswith("boot_id="),
          "the SEQ position is saved with this boot's id (%s)" % kpos)
    print("PASS")
    sys.exit(0)

fixture = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "kmsg-records.txt")
records = []  # (pri, seq, ts_usec, message, continuation lines)
for ln in open(fixture).read().splitlines():
    if ln.startswith(" "):
        records[-1][4].append(ln)
        continue
    head, msg = ln.split(";", 1)
    pri, seq, ts = head.split(",")[:3]
    records.append((int(pri), int(seq), int(ts), msg, []))


def copies(n, skip=()):
    """n copies of the fixture, SEQs running on, each 200000 s later (the same
    real lines again, as a long-running host logs them)."""
    out = []
    for c in range(n):
        for pri, seq, ts, msg, cont in records:
            s = seq + len(records) * c
            if s not in skip:
                out.append((pri, s, ts + 200000 * 1000000 * c, msg, cont))
    return out


def kmsg_text(recs):
    return "".join("%d,%d,%d,-;%s\n%s" % (p, s, t, msg, "".join(c + "\n" for c in cont))
                   for p, s, t, msg, cont in recs)


def kern_log(recs):
    """The same records as rsyslog writes them to kern.log (its high-precision
    RSYSLOG_FileFormat, Debian's default; not the kernel's: under the writer's tag)."""
    out = []
    for pri, _, ts, msg, _ in recs:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(BOOT_S + ts // 1000000)) + \
            ".%06d+00:00" % (ts % 1000000)
        if pri >> 3 == 0:
            out.append("%s %s kernel: [%5d.%06d] %s\n" %
                       (stamp, HOST, ts // 1000000, ts % 1000000, msg))
        else:
            out.append("%s %s logger: %s\n" % (stamp, HOST, msg))
    return "".join(out)


def agent(kfile, redis=None, once=False):
    args = [a.reflex, "agent", "--kb", a.kb, "--topology", topo, "--host", HOST,
            "--kmsg", kfile, "--boot-time", BOOT, "--year", "2024", "--poll", "50ms",
            "--state", os.path.join(tmp, "state"), "--metrics", "127.0.0.1:%d" % mport]
    if redis:
        args += ["--redis", redis.url()]
    if once:
        args.append("--once")
    return spawn(args, stdout=subprocess.PIPE if once else subprocess.DEVNULL,
                 stderr=open(os.path.join(tmp, "agent.log"), "a"), text=True)


# 1. Equal to `reflex events` on the same lines as kern.log.
kfile = os.path.join(tmp, "kmsg")
recs = copies(2)
with open(kfile, "w") as f:
    f.write(kmsg_text(recs))
bundle = os.path.join(tmp, "bundle")
os.makedirs(os.path.join(bundle, "hosts", HOST))
with open(os.path.join(bundle, "hosts", HOST, "kern.log"), "w") as f:
    f.write(kern_log(recs))
p = agent(kfile, once=True)
out, _ = p.communicate(timeout=60)
check(p.returncode == 0, "agent --kmsg FILE --once exits 0")
got = sorted((json.loads(json.loads(ln)["event"]) for ln in out.splitlines()),
             key=lambda e: (e["ts"], e["name"]))
r = subprocess.run([a.reflex, "events", "--kb", a.kb, "--topology", topo, bundle], capture_output=True, text=True, timeout=60, check=True)
want = sorted((json.loads(ln) for ln in r.stdout.splitlines()), key=lambda e: (e["ts"], e["event"]))


def iso_us(s):
    return calendar.timegm(time.strptime(s[:19], "%Y-%m-%dT%H:%M:%S")) * 1000000 + \
        int(s[20:26])


check(len(got) == len(want) > 0, "as many events as reflex events on kern.log (%d)" % len(want))
for g, w in zip(got, want):
    same = (g["name"] == w["event"] and g["device"] == w["device"] and
            dict(map(tuple, g["fields"])) == w["fields"] and g["transport"] == w["transport"] and
            g["clock"] == w["clock"])
    # kern.log's time is rsyslog's; the kmsg one is boot + TS_USEC: the same here.
    close = g["ts"] == iso_us(w["ts"])
    check(same and close, "%s on %s equal (kmsg ts %d, kern.log %s)" %
          (g["name"], g["device"], g["ts"], w["ts"]))
check(not any(g["transport"] != "kernel" and g["name"].startswith("xid") for g in got),
      "the facility-user record (a process writing to /dev/kmsg) makes no kernel Xid event")
os.remove(os.path.join(tmp, "state"))

# 2 + 3. kill -9, restart: after the saved SEQ; a gap and a bad record counted.
redis = Redis(tmp).start()
key = "reflex:{job:job-42}:events"
first = copies(2)
with open(kfile, "w") as f:
    f.write(kmsg_text(first))
p = agent(kfile, redis)
n_first = sum(events_counts(a.reflex, a.kb, topo, bundle).values())
# All but the last record's events (it may sit in an open fold until stop).
wait_for(lambda: stream_counts(redis, key)[2] >= n_first - 1 and
         os.path.exists(os.path.join(tmp, "state")), 30, "the first records' events")
time.sleep(0.5)
p.kill()
p.wait(timeout=10)
# While the agent was down: the ring moved on (one SEQ gone), a record not
# in the format, then more records.
later = copies(4)[len(first):]
GONE = later[1][1]
text = kmsg_text([r for r in later if r[1] != GONE])
with open(kfile, "a") as f:
    f.write("this is not a kmsg record\n" + text)
p = agent(kfile, redis)
wait_for(lambda: m("reflex_agent_kmsg_records_total") >= len(later) - 1, 30,
         "the restarted agent to read the new records")
mt = http_get(murl)
check(metric(mt, "reflex_agent_kmsg_gaps_total") == 1 and
      metric(mt, "reflex_agent_kmsg_lost_records_total") == 1,
      "the SEQ gap is counted: 1 gap, 1 record lost")
check(metric(mt, "reflex_agent_kmsg_bad_records_total") == 1, "the bad record is counted")
time.sleep(0.5)
p.terminate()
check(p.wait(timeout=20) == 0, "agent exits 0 on SIGTERM")
log = open(os.path.join(tmp, "agent.log")).read()
check("overwritten in the kernel's ring" in log and "from SEQ " in log,
      "the gap and the resume point are said in the log")

# What was delivered: first + later without the one gone, as kern.log.
with open(os.path.join(bundle, "hosts", HOST, "kern.log"), "w") as f:
    f.write(kern_log(first + [r for r in later if r[1] != GONE]))
want = events_counts(a.reflex, a.kb, topo, bundle)
got, n_entries, n_ids = stream_counts(redis, key)
print("stream: %d entries, %d ids; %s; reflex events %s" %
      (n_entries, n_ids, dict(got), dict(want)), flush=True)
check(got == want and n_entries == n_ids,
      "every event exactly once across kill -9 and restart (%d)" % n_ids)
redis.stop()
print("PASS")
