#!/usr/bin/env python3
"""Archives as hostile input: a tar bomb is refused on its members' declared
sizes before anything is written (and --max-unpack lets a wanted one
through), a member that appears twice (a second topology.json) is an error,
and an interrupted run leaves no temporary directory behind.

usage: archive_cli_test.py REFLEX KB
"""
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time


def diagnose(reflex, kb, args, tmpdir, timeout=120):
    env = dict(os.environ, TMPDIR=tmpdir)
    p = subprocess.run([reflex, "diagnose", "--kb", kb] + args, capture_output=True,
                       timeout=timeout, env=env)
    return p.returncode, p.stderr.decode(errors="replace")


def bundle(root, big_bytes=0, lines=None):
    os.makedirs(os.path.join(root, "b", "hosts", "n1"))
    with open(os.path.join(root, "b", "hosts", "n1", "kern.log"), "w") as f:
        f.write(lines or "[1.000000] hello\n")
    if big_bytes:
        with open(os.path.join(root, "b", "hosts", "n1", "big.log"), "wb") as f:
            f.write(b"\0" * big_bytes)


def main():
    reflex, kb = sys.argv[1], sys.argv[2]
    failures = []
    with tempfile.TemporaryDirectory() as d:
        tmpdir = os.path.join(d, "tmp")
        os.mkdir(tmpdir)
        # A bomb: 64 MiB of zeros compress to ~64 KiB, far past 1000:1.
        bundle(os.path.join(d, "bomb"), big_bytes=80 << 20)
        bomb = os.path.join(d, "bomb.tgz")
        with tarfile.open(bomb, "w:gz") as t:
            t.add(os.path.join(d, "bomb", "b"), arcname="b")
        t0 = time.monotonic()
        rc, err = diagnose(reflex, kb, [bomb], tmpdir)
        took = time.monotonic() - t0
        if rc != 2 or "would unpack past" not in err or "--max-unpack" not in err:
            failures.append("bomb: rc %d, %r" % (rc, err[-300:]))
        if os.listdir(tmpdir):
            failures.append("bomb left %s in TMPDIR" % os.listdir(tmpdir))
        print("bomb refused in %.2f s" % took)
        rc, err = diagnose(reflex, kb, ["--max-unpack", str(200 << 20), bomb], tmpdir)
        if rc != 0:
            failures.append("--max-unpack did not let the archive through: rc %d, %r" %
                            (rc, err[-300:]))
        # A member twice: tar keeps the last, silently; here it is an error.
        bundle(os.path.join(d, "dup"))
        dup = os.path.join(d, "dup.tar")
        with tarfile.open(dup, "w") as t:
            t.add(os.path.join(d, "dup", "b"), arcname="b")
            t.add(os.path.join(d, "dup", "b", "hosts", "n1", "kern.log"),
                  arcname="b/hosts/n1/kern.log")
        rc, err = diagnose(reflex, kb, [dup], tmpdir)
        if rc != 2 or "is in the archive twice" not in err:
            failures.append("duplicate member: rc %d, %r" % (rc, err[-300:]))
        # Interrupted mid-run: the temporary directory goes with it.
        bundle(os.path.join(d, "slow"), lines="[1.000000] kernel: hello there\n" * 2000000)
        slow = os.path.join(d, "slow.tgz")
        with tarfile.open(slow, "w:gz") as t:
            t.add(os.path.join(d, "slow", "b"), arcname="b")
        env = dict(os.environ, TMPDIR=tmpdir)
        p = subprocess.Popen([reflex, "diagnose", "--kb", kb, slow], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):  # until the unpack has begun (bounded: 10 s)
            if os.listdir(tmpdir):
                break
            time.sleep(0.05)
        started = bool(os.listdir(tmpdir))
        p.send_signal(signal.SIGINT)
        rc = p.wait(timeout=60)
        if not started:
            print("SIGINT case: the run ended before its temporary directory was seen; skipped")
        elif os.listdir(tmpdir):
            failures.append("SIGINT left %s in TMPDIR (rc %d)" % (os.listdir(tmpdir), rc))
        shutil.rmtree(tmpdir, ignore_errors=True)
    for f in failures:
        print("FAIL:", f)
    print("archive cases: %s" % ("ok" if not failures else "%d failed" % len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
