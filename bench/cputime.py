#!/usr/bin/env python3
"""cputime.py OUT -- CMD...: runs CMD and writes "wall user sys" in seconds
to OUT, to the microsecond (wait4's rusage). GNU time prints two decimals:
10 ms is ~3% of a 0.37 s run, more than the differences being measured."""
import os
import sys
import time

if len(sys.argv) < 4 or sys.argv[2] != "--":
    sys.exit("usage: cputime.py OUT -- CMD...")
out, cmd = sys.argv[1], sys.argv[3:]
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(cmd[0], cmd)
    finally:
        os._exit(127)
_, status, ru = os.wait4(pid, 0)
wall = time.monotonic() - t0
with open(out, "w") as f:
    f.write("%.6f %.6f %.6f\n" % (wall, ru.ru_utime, ru.ru_stime))
sys.exit(os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else 0)
