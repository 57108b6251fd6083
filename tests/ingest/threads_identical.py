#!/usr/bin/env python3
"""`--threads N` gives the bytes of one thread (docs/cli.md, `reflex events`).

Generates small multi-host bundles of the three bench mixes (bench/gen_logs.py:
many hosts, storms, CSV/JSON/counter files, multi-line messages) and compares,
byte for byte, `reflex events --stats` (stdout and stderr: events, counters,
notes) and `reflex diagnose` (stdout) with --threads 1, 2 and 3, plus the
shipped example bundle. Usage: threads_identical.py REFLEX KB SRC_DIR
"""
import os
import shutil
import subprocess
import sys
import tempfile

reflex, kb, src = sys.argv[1:4]
TIMEOUT = 300  # per command (a loaded 2-core machine)


def run(args):
    p = subprocess.run([reflex] + args, capture_output=True, timeout=TIMEOUT)
    if p.returncode != 0:
        sys.exit(f"FAILED: {' '.join(args)} exited {p.returncode}\n{p.stderr.decode(errors='replace')}")
    return p.stdout, p.stderr


failures = 0
with tempfile.TemporaryDirectory(prefix="reflex-threads-") as tmp:
    bundles = [os.path.join(src, "examples", "incident-pcie")]
    for profile in ("mixed", "telemetry", "storm"):
        out = os.path.join(tmp, profile)
        subprocess.run([sys.executable, os.path.join(src, "bench", "gen_logs.py"), "--out", out,
                        "--mb", "3", "--profile", profile], check=True, capture_output=True,
                       timeout=TIMEOUT)
        bundles.append(out)
    # One storm file alone is read with one thread (files are the unit of
    # parallel work: docs/cli.md, `reflex events`); a storm on two hosts engages the
    # threads, so the storm's folds cross the replay of two workers.
    two = os.path.join(tmp, "storm-two-hosts")
    shutil.copytree(os.path.join(tmp, "storm"), two)
    files = sorted((os.path.getsize(os.path.join(d, f)), os.path.join(d, f))
                   for d, _, fs in os.walk(os.path.join(two, "hosts")) for f in fs)
    largest = files[-1][1]
    hosts = sorted(os.listdir(os.path.join(two, "hosts")))
    other = next(h for h in hosts if h != os.path.basename(os.path.dirname(largest)))
    shutil.copy(largest, os.path.join(two, "hosts", other, os.path.basename(largest)))
    bundles.append(two)
    # Few large files: the walk's last files (3 MB each) hand their ops to the
    # replay as they are read (threaded_walk.h, kStreamBytes), not at their end.
    big = os.path.join(tmp, "mixed-two-hosts")
    subprocess.run([sys.executable, os.path.join(src, "bench", "gen_logs.py"), "--out", big,
                    "--mb", "12", "--hosts", "2", "--profile", "mixed"], check=True,
                   capture_output=True, timeout=TIMEOUT)
    bundles.append(big)
    for b in bundles:
        name = os.path.basename(b)
        ev1 = run(["events", "--kb", kb, "--stats", "--threads", "1", b])
        di1 = run(["diagnose", "--kb", kb, "--format", "json", "--threads", "1", b])[0]
        events = ev1[0].count(b"\n")
        if events == 0:
            sys.exit(f"FAILED: {name}: no events at all (the comparison would prove nothing)")
        for n in ("2", "3"):
            evn = run(["events", "--kb", kb, "--stats", "--threads", n, b])
            din = run(["diagnose", "--kb", kb, "--format", "json", "--threads", n, b])[0]
            for what, a, c in (("events stdout", ev1[0], evn[0]), ("events stderr", ev1[1], evn[1]),
                               ("diagnose stdout", di1, din)):
                if a != c:
                    failures += 1
                    print(f"DIFFERS: {name} {what} --threads {n} ({len(a)} vs {len(c)} bytes)")
        print(f"{name}: {events} events, --threads 2/3 byte-identical" if not failures else name)

    # What fails says the same with threads (the KB loads beside the inputs,
    # the topology and the listing: cmd_events.cpp, EventsInputs).
    ex = bundles[0]
    bad_topo = os.path.join(tmp, "bad-topology.json")
    with open(bad_topo, "w") as f:
        f.write("{not json")
    no_hosts = os.path.join(tmp, "no-hosts")
    os.makedirs(no_hosts)
    cases = {
        "missing bundle": ["events", "--kb", kb, os.path.join(tmp, "nope")],
        "bad topology": ["events", "--kb", kb, "--topology", bad_topo, ex],
        "missing topology": ["events", "--kb", kb, "--topology", os.path.join(tmp, "nope.json"), ex],
        "no hosts/": ["events", "--kb", kb, no_hosts],
        "missing KB and bundle": ["events", "--kb", os.path.join(tmp, "nokb"),
                                  os.path.join(tmp, "nope")],
    }
    for what, args in cases.items():
        got = []
        for n in ("1", "2"):
            p = subprocess.run([reflex] + args + ["--threads", n], capture_output=True,
                               timeout=TIMEOUT)
            got.append((p.returncode, p.stderr))
        if got[0][0] != 2 or got[0] != got[1]:
            failures += 1
            print(f"DIFFERS: {what}: --threads 1 exit {got[0][0]} {got[0][1]!r}, "
                  f"--threads 2 exit {got[1][0]} {got[1][1]!r}")
        else:
            print(f"{what}: exit 2 and the same message with --threads 2")
    # Log files given by path (gathered in a temporary bundle, whose name
    # no message may carry: it differs between runs).
    logs = sorted(os.path.join(d, f) for d, _, fs in os.walk(os.path.join(ex, "hosts"))
                  for f in fs)
    got = [run(["events", "--kb", kb, "--threads", n] + logs) for n in ("1", "2")]
    if got[0] != got[1] or not got[0][0]:
        failures += 1
        print(f"DIFFERS: log files by path: --threads 1 {got[0]!r} --threads 2 {got[1]!r}")
    else:
        n_events = got[0][0].count(b"\n")
        print(f"log files by path: {n_events} events, the same bytes with --threads 2")
sys.exit(1 if failures else 0)
