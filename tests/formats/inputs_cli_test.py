#!/usr/bin/env python3
"""`reflex events` / `reflex diagnose` on inputs as a new user gives them
(tests/formats/inputs/README.md): the year of year-less lines comes from the
input (a header, a dated line) or the file's modification time, never 1970;
the host comes from the lines (host field, a bug report's uname line) before
the path; a directory of hosts and a tarball of one are read.

usage: inputs_cli_test.py REFLEX KB [REFLEXC]
(with REFLEXC the KB is built once into an artifact: ~20 runs, each reading
.rfx sources, took minutes on a loaded machine)"""
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

REFLEX, KB = sys.argv[1], sys.argv[2]
REFLEXC = sys.argv[3] if len(sys.argv) > 3 else None
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "inputs")
failures = []


def run(args, stdin=None, cwd=None):
    p = subprocess.run([REFLEX] + args, input=stdin, capture_output=True, text=True, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


def events(args, stdin=None, cwd=None):
    rc, out, err = run(["events", "--kb", KB] + args, stdin, cwd)
    check(rc == 0, f"events {args}: exit {rc}: {err}")
    return [json.loads(l) for l in out.splitlines() if l.strip()], err


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


with tempfile.TemporaryDirectory() as tmp:
    if REFLEXC:
        artifact = os.path.join(tmp, "kb.rfxkb")
        subprocess.run([REFLEXC, "build", "-o", artifact, KB], check=True, capture_output=True)
        KB = artifact
    work = os.path.join(tmp, "data")
    shutil.copytree(DATA, work)
    kern = os.path.join(work, "in", "kern.log")
    t2025 = time.mktime((2025, 6, 1, 12, 0, 0, 0, 0, -1))
    os.utime(kern, (t2025, t2025))

    # A syslog kern.log without year: the year is the file's mtime, the host
    # the lines' host field (not 'in', the directory).
    evs, err = events(["in/kern.log"], cwd=work)
    check(len(evs) == 3, f"kern.log: 3 events, got {len(evs)}")
    xid = [e for e in evs if e["event"].startswith("xid79")]
    check(len(xid) == 1, "kern.log: one Xid 79")
    for e in xid:
        check(e["ts"] == "2025-02-14T05:03:42.000000Z", f"kern.log: year from mtime: {e['ts']}")
        check(e["device"] == "000-000-00000-1-gpu-1/gpu@0000:44:00.0", f"kern.log: device {e['device']}")
        check(e["evidence"] == "in/kern.log:3", f"kern.log: evidence {e['evidence']}")
    check("year 2025 for in/kern.log from its modification time" in err, f"kern.log: year note: {err}")
    check("placed on '000-000-00000-1-gpu-1' (named by the lines' host field)" in err,
          f"kern.log: host note: {err}")
    check(all(not e["ts"].startswith("1970") for e in evs), "kern.log: no 1970")
    # --year beats the mtime
    evs, err = events(["--year", "2023", "in/kern.log"], cwd=work)
    check(all(e["ts"].startswith("2023-02-14") for e in evs), "--year 2023: " + str([e["ts"] for e in evs]))
    check("take the year 2023 given (--year)" in err, f"--year note: {err}")
    # --timezone shifts zone-less times
    evs, _ = events(["--year", "2023", "--timezone", "+02:00", "in/kern.log"], cwd=work)
    check(all(e["ts"].startswith("2023-02-14T03:03") for e in evs), "--timezone +02:00: " + str([e["ts"] for e in evs]))
    # the diagnosis says where the year and the host came from
    rc, out, err = run(["diagnose", "--kb", KB, "in/kern.log"], cwd=work)
    check(rc == 0 and "from its modification time" in out and "named by the lines' host field" in out,
          f"diagnose notes: {out[:2000]}")
    check("000-000-00000-1-gpu-1/gpu@0000:44:00.0" in out and "1970" not in out, "diagnose: device, no 1970")

    # dmesg -T on stdin: refused as kernel lines unless declared (stdin is job
    # output until then: formats.md "Who speaks for what"), and the refusal
    # says so; declared, its own year and host 'stdin' (no line names one).
    with open(os.path.join(work, "dmesg-T.txt")) as f:
        paste = f.read()
    rc, out, err = run(["events", "--kb", KB, "--stats", "-"], stdin=paste, cwd=work)
    check(rc == 0 and not [l for l in out.splitlines() if l.startswith("{")],
          f"undeclared stdin: kernel events {out[:300]}")
    check('"refused_claims_by_file"' in err and "<stdin>" in err,
          f"undeclared stdin: refusal not reported: {err[-600:]}")
    evs, err = events(["--kernel-capture", "-", "-"], stdin=paste, cwd=work)
    check(len(evs) >= 1, f"stdin: events {len(evs)}")
    for e in evs:
        check(e["host"] == "stdin" and e["device"] == "stdin/gpu@0000:a1:00.0", f"stdin: {e['device']}")
        check(e["ts"].startswith("2024-04-"), f"stdin: ts {e['ts']}")
        check(e["evidence"].startswith("<stdin>:"), f"stdin: evidence {e['evidence']}")
    check("placed on 'stdin' (no line names a host" in err, f"stdin note: {err}")

    # A pasted NCCL error: the prefix's name is a pod name, never the host.
    with open(os.path.join(work, "nccl-paste.txt")) as f:
        rc, out, err = run(["events", "--kb", KB, "--stats", "-"], stdin=f.read(), cwd=work)
    check(rc == 0, f"nccl paste: exit {rc}")
    for l in out.splitlines():
        e = json.loads(l)
        check(e["host"] == "stdin", f"nccl paste: host {e['host']}")
    check("'node23'" not in err, f"nccl paste: pod name as host: {err}")

    # nvidia-smi -q: its Timestamp header dates the lines after it.
    rc, out, err = run(["events", "--kb", KB, "--stats", "nvidia-smi-q.txt"], cwd=work)
    stats = json.loads(err[err.index("{"):])
    check(rc == 0 and stats["no_timestamp"] == 0 and stats["implausible_time"] == 0,
          f"nvidia-smi -q: untimed {stats.get('no_timestamp')} implausible {stats.get('implausible_time')}")

    # nvidia-bug-report.log.gz in a directory 'in': one host, from uname; the
    # journal line's year from the Date: header.
    os.makedirs(os.path.join(work, "in2"))
    shutil.copy(os.path.join(work, "nvidia-bug-report.log.gz"), os.path.join(work, "in2"))
    evs, err = events(["in2/nvidia-bug-report.log.gz"], cwd=work)
    check(len(evs) == 2, f"bug report: 2 events, got {len(evs)}")
    check({e["device"] for e in evs} == {"gpu-node-31/gpu@0000:44:00.0"},
          "bug report: one device: " + str({e["device"] for e in evs}))
    dated = [e for e in evs if e["ts"]]
    check(len(dated) == 1 and dated[0]["ts"] == "2026-05-16T09:58:12.000000Z",
          "bug report: year from Date: " + str([e["ts"] for e in evs]))
    check("named by the bug report's uname line" in err, f"bug report host note: {err}")

    # Three hosts' logs in a directory (no hosts/), and the same as a tarball.
    evs, err = events(["multihost"], cwd=work)
    check(sorted(e["host"] for e in evs) == ["node-a", "node-b", "node-c"],
          "multihost: " + str([e["host"] for e in evs]))
    check(all(e["evidence"] == f"multihost/{e['host']}/dmesg-T.txt:1" for e in evs),
          "multihost evidence: " + str([e["evidence"] for e in evs]))
    with tarfile.open(os.path.join(tmp, "mh.tgz"), "w:gz") as t:
        t.add(os.path.join(work, "multihost"), arcname="multihost")
    evs, err = events([os.path.join(tmp, "mh.tgz")])
    check(sorted(e["host"] for e in evs) == ["node-a", "node-b", "node-c"],
          "multihost tarball: " + str([e["host"] for e in evs]))
    rc, out, err = run(["diagnose", "--kb", KB, "multihost"], cwd=work)
    check(rc == 0 and "not an incident bundle" not in err, f"diagnose multihost: {rc} {err}")

    # Several inputs at once: a file and a directory of hosts.
    evs, err = events(["in/kern.log", "multihost"], cwd=work)
    check(len({e["host"] for e in evs}) == 4, "file + dir: " + str({e["host"] for e in evs}))

    # --job NAME: the hosts of a directory of hosts' logs (no topology) are
    # one job of that name: ranks job/NAME/rankN, the diagnosis names the job.
    # Without it the ranks stay placeholders on their hosts. With a topology
    # that declares jobs, NAME must be one of them.
    example = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                           "incident-pcie")
    shutil.copytree(os.path.join(example, "hosts"), os.path.join(work, "jobhosts"))
    rc, out, err = run(["diagnose", "--kb", KB, "--job", "train-7", "jobhosts"], cwd=work)
    d = json.loads(out) if rc == 0 else {}
    check(d.get("job") == "job/train-7" and
          d.get("trigger", {}).get("device", "").startswith("job/train-7/rank"),
          f"--job: job {d.get('job')}, trigger {d.get('trigger')}")
    rc, out, err = run(["diagnose", "--kb", KB, "jobhosts"], cwd=work)
    d = json.loads(out) if rc == 0 else {}
    check("/rank@" in d.get("trigger", {}).get("device", ""), f"no --job: {d.get('trigger')}")
    rc, _, err = run(["diagnose", "--kb", KB, "--job", "nope", example], cwd=work)
    check(rc == 2 and "declares the jobs job-42; not nope" in err, f"--job nope: {rc} {err}")

    # Near-miss: an empty directory is no input (exit 2, a clear message).
    os.makedirs(os.path.join(work, "empty"))
    rc, _, err = run(["events", "--kb", KB, "empty"], cwd=work)
    check(rc == 2 and "neither an incident bundle" in err, f"empty dir: {rc} {err}")

print("FAILED" if failures else "ok", len(failures))
sys.exit(1 if failures else 0)
