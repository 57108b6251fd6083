#!/usr/bin/env python3
"""Crash test of `reflex watch --db`: kill -9 at random points of a
fed stream, reopen the database, check nothing older than the commit interval
was lost and the file is readable.

Each run starts `reflex watch --db FILE --commit-interval 1s`, waits until it
is reading (a probe envelope reaches the database), feeds kernel Xid
envelopes (interfaces.md §4) at a steady rate, sometimes goes quiet for a while (the
idle path that used to commit nothing), and SIGKILLs it at a random moment.
Then, with python's sqlite3 (the sqlite3 CLI may not be installed):
  - PRAGMA integrity_check is "ok" and every row's JSON parses;
  - per (host, bdf, xid) — one dedup key of the Xid signatures, so lines fold
    into storms — the counts of `events` plus `storms` (open storms with their
    running count) cover every line written more than interval + slack before
    the kill, and never exceed the lines written (no line counted twice).
Every wait is bounded; the child is killed in every path (finally).
Exit 0 when all runs pass, 1 on a failed check, 2 on a setup problem.
"""
import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

XIDS = (79, 48, 95)  # xid79_fallen_off_bus, xid48_dbe, xid95_uncontained_ecc
BASE_TS = 1772704800.0  # 2026-03-05T10:00:00Z: event time, not wall clock


def rfc3339(t):
    whole = int(t)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + ".%06dZ" % int(
        round((t - whole) * 1e6))


def gpus_of(topology_path):
    with open(topology_path) as f:
        topo = json.load(f)
    out = []
    for h in topo["hosts"]:
        for g in h.get("gpus", []):
            out.append((h["name"], g["bdf"].lower()))
    return out


def envelope(host, bdf, xid, ts, marker):
    # NVRM prints the BDF without the function: 0000:18:00.0 -> PCI:0000:18:00
    pci = bdf.rsplit(".", 1)[0]
    msg = "NVRM: Xid (PCI:%s): %d, pid=4242, name=python, crash-test line %s" % (pci, xid, marker)
    return json.dumps({"host": host, "ts": rfc3339(ts), "source": "kernel", "msg": msg}) + "\n"


def read_counts(db_path):
    """(per-key counts over events + storms, rows, problems) of a database."""
    problems = []
    con = sqlite3.connect(db_path, timeout=10)
    try:
        ic = con.execute("PRAGMA integrity_check").fetchone()[0]
        if ic != "ok":
            problems.append("integrity_check: %s" % ic)
        app = con.execute("SELECT value FROM meta WHERE key='application'").fetchone()
        if not app or app[0] != "reflex":
            problems.append("meta.application is not reflex: %r" % (app,))
        con.execute("SELECT count(*) FROM diagnoses").fetchone()
        counts, rows = {}, 0
        for table in ("events", "storms"):
            for (js,) in con.execute("SELECT json FROM %s ORDER BY id" % table):
                rows += 1
                try:
                    ev = json.loads(js)
                except ValueError as e:
                    problems.append("%s row does not parse: %s" % (table, e))
                    continue
                fields = dict(ev.get("fields", []))
                if "bdf" not in fields:  # field order/shape: [[k, v], ...] or {k: v}
                    problems.append("%s row without bdf field: %s" % (table, js[:200]))
                    continue
                key = (ev.get("host"), fields["bdf"].lower(), int(fields["xid"]))
                counts[key] = counts.get(key, 0) + int(ev.get("count", 1))
        return counts, rows, problems
    finally:
        con.close()


def wait_ready(db_path, proc, deadline):
    """True once the probe line is in the database (watch reads and commits)."""
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        if os.path.exists(db_path):
            try:
                con = sqlite3.connect("file:%s?mode=ro" % db_path, uri=True, timeout=1)
                try:
                    n = con.execute("SELECT (SELECT count(*) FROM events) + "
                                    "(SELECT count(*) FROM storms)").fetchone()[0]
                finally:
                    con.close()
                if n > 0:
                    return True
            except sqlite3.Error:
                pass  # not created yet / schema being written
        time.sleep(0.05)
    return False


def one_run(args, rng, run, artifact, gpus, tmp):
    db = os.path.join(tmp, "run-%02d.db" % run)
    err_path = os.path.join(tmp, "run-%02d.stderr" % run)
    cmd = [args.reflex, "watch", "--kb", artifact, "--topology", args.topology, "--db", db,
           "--commit-interval", "%gs" % args.interval]
    written = []  # (monotonic time the write returned, key)
    with open(err_path, "w") as err:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=err)
    try:
        ts = BASE_TS + run * 100000.0
        # Two probe lines 61 s apart (event time) on one key: the second closes
        # the first's dedup fold, so an event reaches `events` even when open
        # storms are not stored (that failure is then the count check's).
        probe = gpus[0] + (XIDS[0],)
        ts += 61.0
        proc.stdin.write((envelope(*probe, ts - 61.0, "probe-1") +
                          envelope(*probe, ts, "probe-2")).encode())
        proc.stdin.flush()
        written.extend([(time.monotonic(), probe)] * 2)
        if not wait_ready(db, proc, time.monotonic() + args.ready_timeout):
            with open(err_path) as f:
                print("run %d: the probe line did not reach the database in %gs (watch not "
                      "reading, or not committing; rc=%s): %s" %
                      (run, args.ready_timeout, proc.poll(), f.read()[-2000:]))
            return None
        feed_s = rng.uniform(0.5, args.max_feed)
        quiet_s = rng.uniform(0.0, 2.5) if rng.random() < 0.5 else 0.0
        start = time.monotonic()
        i = 0
        while time.monotonic() - start < feed_s:
            # A burst every 10 ms (~args.rate lines/s); event time advances
            # 0.5 s a line, so each key's 60 s dedup folds close now and then
            # (rows in `events`) while the latest ones stay open (`storms`).
            burst = []
            for _ in range(max(1, args.rate // 100)):
                i += 1
                ts += 0.5
                key = rng.choice(gpus) + (rng.choice(XIDS),)
                burst.append((key, envelope(*key, ts, "%d-%d" % (run, i))))
            proc.stdin.write("".join(b for _, b in burst).encode())
            proc.stdin.flush()
            now = time.monotonic()
            written.extend((now, k) for k, _ in burst)
            time.sleep(0.01)
        time.sleep(quiet_s)
        t_kill = time.monotonic()
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        try:
            proc.stdin.close()
        except OSError:
            pass  # the pipe's reader is dead: nothing to flush
    if proc.returncode != -signal.SIGKILL:
        print("run %d: watch ended by itself (rc=%s) before the kill" % (run, proc.returncode))
        return None
    cutoff = t_kill - args.interval - args.slack
    need, total, times = {}, {}, {}
    for t, k in written:
        total[k] = total.get(k, 0) + 1
        times.setdefault(k, []).append(t)
        if t < cutoff:
            need[k] = need.get(k, 0) + 1
    counts, rows, problems = read_counts(db)
    # Lines of one key are read in order, so the ones lost are its newest:
    # the oldest of them, at the kill, is how far behind the file was.
    lag = 0.0
    for k, ts_k in times.items():
        have = counts.get(k, 0)
        if have < len(ts_k):
            lag = max(lag, t_kill - ts_k[have])
    for k in sorted(set(need) | set(counts)):
        have = counts.get(k, 0)
        if have < need.get(k, 0):
            problems.append("%s: %d line(s) older than %.2fs before the kill, %d in the database"
                            % (k, need[k], args.interval + args.slack, have))
        if have > total.get(k, 0):
            problems.append("%s: %d counted, only %d written (counted twice)"
                            % (k, have, total.get(k, 0)))
    return {"lines": len(written), "old": sum(need.values()), "stored": sum(counts.values()),
            "rows": rows, "feed_s": feed_s, "quiet_s": quiet_s, "lag": lag, "problems": problems}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reflex", required=True)
    ap.add_argument("--reflexc", required=True)
    ap.add_argument("--kb", required=True)
    ap.add_argument("--topology", required=True)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--interval", type=float, default=1.0, help="--commit-interval, seconds")
    ap.add_argument("--slack", type=float, default=0.25,
                    help="scheduling allowance beyond the interval (shared CI machines)")
    ap.add_argument("--rate", type=int, default=300, help="envelopes per second")
    ap.add_argument("--max-feed", type=float, default=4.0, help="longest feed before the kill, s")
    ap.add_argument("--ready-timeout", type=float, default=60.0)
    ap.add_argument("--budget", type=float, default=400.0, help="whole test, seconds")
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    print("seed %d (rerun with --seed %d)" % (seed, seed))
    gpus = gpus_of(args.topology)
    if not gpus:
        print("no GPUs in %s" % args.topology)
        return 2
    deadline = time.monotonic() + args.budget
    with tempfile.TemporaryDirectory(prefix="reflex-crash-") as tmp:
        # One artifact for every run: watch starts without compiling the KB.
        artifact = os.path.join(tmp, "kb.rfxkb")
        r = subprocess.run([args.reflexc, "build", "-o", artifact, args.kb],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=300)
        if r.returncode != 0:
            print("reflexc build failed: %s" % r.stderr.decode(errors="replace")[-2000:])
            return 2
        failed, worst = 0, 0.0
        for run in range(args.runs):
            if time.monotonic() > deadline:
                print("time budget of %gs used up after %d run(s)" % (args.budget, run))
                return 1
            res = one_run(args, rng, run, artifact, gpus, tmp)
            if res is None:
                return 2
            status = "FAIL" if res["problems"] else "ok"
            print("run %2d %s: %d lines fed over %.2fs, quiet %.2fs, killed; %d older than "
                  "the interval, %d counted in %d rows; oldest line lost %.2fs old" %
                  (run, status, res["lines"], res["feed_s"], res["quiet_s"], res["old"],
                   res["stored"], res["rows"], res["lag"]))
            worst = max(worst, res["lag"])
            for p in res["problems"][:10]:
                print("    " + p)
            failed += bool(res["problems"])
        print("%d of %d runs lost nothing older than %.2fs (oldest line lost: %.2fs old)" %
              (args.runs - failed, args.runs, args.interval + args.slack, worst))
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
