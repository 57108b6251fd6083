#!/usr/bin/env python3
"""Standard input as a new user pipes it, and as a full disk would lose it:
empty input is a clean "no input" error (exit 2), and a copy that does not
fit the temporary directory is an error naming it (exit 2), never a shorter
input diagnosed in silence. The full-disk case needs a small tmpfs (root and
a mount namespace that allows it); without one that part is skipped.

usage: stdin_cli_test.py REFLEX KB_ARTIFACT_OR_DIR
"""
import os
import subprocess
import sys
import tempfile


def run(reflex, kb, data, env=None):
    p = subprocess.run([reflex, "diagnose", "--kb", kb, "-"], input=data, capture_output=True,
                       timeout=120, env=env)
    return p.returncode, p.stderr.decode(errors="replace")


def main():
    reflex, kb = sys.argv[1], sys.argv[2]
    failures = []
    rc, err = run(reflex, kb, b"")
    if rc != 2 or "no input: standard input is empty" not in err:
        failures.append("empty stdin: rc %d, stderr %r" % (rc, err[-300:]))
    with tempfile.TemporaryDirectory() as d:
        small = os.path.join(d, "small")
        os.mkdir(small)
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", small],
                                 capture_output=True).returncode == 0
        if mounted:
            try:
                env = dict(os.environ, TMPDIR=small)
                rc, err = run(reflex, kb, b"NVRM: Xid (PCI:0000:5d:00): 79\n" * 20000, env)
                if rc != 2 or "No space left on device" not in err:
                    failures.append("full TMPDIR: rc %d, stderr %r" % (rc, err[-300:]))
            finally:
                subprocess.run(["umount", small], capture_output=True)
        else:
            print("full-disk case skipped: cannot mount a tmpfs here")
    for f in failures:
        print("FAIL:", f)
    print("stdin cases: %s" % ("ok" if not failures else "%d failed" % len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
