"""docs/deployment.md's "Step by step" runs as written: its sh blocks, in
order, in one bash (set -e) in a fresh directory, with only the variables
the manual names set (WORK, REDIS_PORT, REFLEX_SRC, METRICS_PORT) and the
built reflex and reflexc on PATH. The deployment it makes (Redis under the
shipped config and ACL users, two diagnosers verifying signatures, two
signing agents) must name the demo incident's root cause; whatever it
started is stopped on every exit path."""
import argparse
import os
import re
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import check, free_port, tempdir  # noqa

ap = argparse.ArgumentParser()
ap.add_argument("--reflex", required=True)
ap.add_argument("--reflexc", required=True)
ap.add_argument("--source", required=True)
a = ap.parse_args()

doc = open(os.path.join(a.source, "docs", "deployment.md")).read()
m = re.search(r"^### Step by step\n(.*?)^### ", doc, re.S | re.M)
check(m is not None, "docs/deployment.md has a 'Step by step' section")
blocks = re.findall(r"^```sh\n(.*?)^```", m.group(1), re.S | re.M)
check(len(blocks) >= 5, "the section holds its sh blocks (%d)" % len(blocks))

work = os.path.join(tempdir(), "deploy")
env = dict(os.environ, WORK=work, REDIS_PORT=str(free_port()), METRICS_PORT=str(free_port()),
           REFLEX_SRC=a.source,
           PATH=os.pathsep.join([os.path.dirname(os.path.abspath(a.reflex)),
                                 os.path.dirname(os.path.abspath(a.reflexc)),
                                 os.environ.get("PATH", "")]))
script = "set -e -o pipefail\n" + "\n".join(blocks)


def stop_everything():
    for name in ("watch-d1.pid", "watch-d2.pid", "redis.pid"):
        path = os.path.join(work, name)
        try:
            os.kill(int(open(path).read().strip()), signal.SIGKILL)
        except (OSError, ValueError):
            pass


try:
    p = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True,
                       timeout=240)
finally:
    stop_everything()
out = p.stdout + p.stderr
check(p.returncode == 0, "the blocks run as written (exit %d): %s" % (p.returncode, out[-1500:]))
check('"root_causes":[{"device":"node-0018/pcie/0000:5c:00.0"' in p.stdout,
      "the manual's deployment names the demo's root cause: %s" % p.stdout[-500:])
for host in ("node-0017", "node-0018"):
    log = open(os.path.join(work, "agent-%s.log" % host)).read()
    check("published" in log, "the %s agent published (%s)" % (host, log[-200:]))
print("PASS")
