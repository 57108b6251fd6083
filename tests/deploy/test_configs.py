"""The shipped configurations start as shipped: redis-server runs
deploy/redis.conf (only the port, dir, log file and supervision overridden on
the command line) with deploy/users.acl loaded, and the users it defines are
the ones the docs name; the Alertmanager config in docs/deployment.md passes
`amtool check-config`; deploy/reflex-agent.service passes
`systemd-analyze verify` (its ExecStart pointed at the built binary).
A tool that is not installed is skipped with the reason; exit 77 if nothing
could be checked at all."""
import argparse
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import RespError, Resp, check, free_port, spawn, tempdir, wait_for  # noqa

ap = argparse.ArgumentParser()
ap.add_argument("--reflex", required=True)
ap.add_argument("--source", required=True, help="the repository root")
a = ap.parse_args()
a.source = os.path.abspath(a.source)

tmp = tempdir()
conf = os.path.join(a.source, "deploy", "redis.conf")
acl = os.path.join(a.source, "deploy", "users.acl")
checked = 0


def skip(what, why):
    print("skipped: %s (%s)" % (what, why), flush=True)


# --- Redis: deploy/redis.conf as shipped, deploy/users.acl as shipped ------
if shutil.which("redis-server"):
    port = free_port()
    rdir = os.path.join(tmp, "redis")
    os.makedirs(rdir)
    log = os.path.join(rdir, "redis.log")
    # The shipped aclfile path is /etc/redis/users.acl; the file is the
    # repository's, unchanged. `supervised systemd` only warns without
    # NOTIFY_SOCKET, but "no" keeps the log free of that noise.
    proc = spawn(["redis-server", conf, "--port", str(port), "--dir", rdir,
                  "--aclfile", acl, "--logfile", log, "--supervised", "no"],
                 stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)

    def up():
        if proc.poll() is not None:
            raise AssertionError("redis-server exited (%s) with deploy/redis.conf:\n%s" %
                                 (proc.returncode, open(log).read()[-2000:]
                                  if os.path.exists(log) else "no log"))
        c = Resp(port)
        try:
            return c.call("AUTH", "reflex-admin", "CHANGE_ME_ADMIN") == "OK"
        finally:
            c.close()

    wait_for(up, 15, "redis-server with deploy/redis.conf on port %d" % port)
    check(True, "redis-server starts with deploy/redis.conf and deploy/users.acl")
    c = Resp(port)
    try:
        c.call("PING")
        refused = ""
    except RespError as e:
        refused = str(e)
    check("NOAUTH" in refused, "the default user is off: an unauthenticated PING is refused")
    c.call("AUTH", "reflex-admin", "CHANGE_ME_ADMIN")
    users = [u.decode() for u in c.call("ACL", "LIST")]
    names = sorted(u.split()[1] for u in users)
    check(names == ["default", "reflex-admin", "reflex-agent", "reflex-diagnoser"],
          "the ACL users are the ones deploy/users.acl defines (%s)" % names)
    check(any(u.startswith("user default off") for u in users), "user default is off")
    for role in ("agent", "diagnoser"):
        r = Resp(port)
        check(r.call("AUTH", "reflex-" + role, "CHANGE_ME_" + role.upper()) == "OK",
              "reflex-%s authenticates with its placeholder password" % role)
        r.close()

    def conf_get(name):
        v = c.call("CONFIG", "GET", name)
        return v[1].decode() if v else None

    # The directives the docs promise, as Redis read them from the file.
    want = {"appendonly": "yes", "appendfsync": "everysec", "maxmemory-policy": "noeviction",
            "protected-mode": "yes", "save": "", "maxmemory": str(8 << 30)}
    for k, v in want.items():
        check(conf_get(k) == v, "redis.conf: %s = %r (got %r)" % (k, v, conf_get(k)))
    check(conf_get("bind").split()[0] == "127.0.0.1",
          "redis.conf binds loopback only (%r)" % conf_get("bind"))
    c.close()
    proc.terminate()
    proc.wait(timeout=10)
    checked += 1
else:
    skip("deploy/redis.conf", "redis-server not installed")

# --- Alertmanager: every yaml block of docs/deployment.md with a route ------
doc = open(os.path.join(a.source, "docs", "deployment.md")).read()
blocks = [b for b in re.findall(r"```yaml\n(.*?)```", doc, re.S) if "route:" in b]
check(len(blocks) >= 1, "docs/deployment.md has an Alertmanager config (%d)" % len(blocks))
if shutil.which("amtool"):
    for i, b in enumerate(blocks):
        p = os.path.join(tmp, "am%d.yml" % i)
        with open(p, "w") as f:
            f.write(b)
        r = subprocess.run(["amtool", "check-config", p], capture_output=True, text=True,
                           timeout=60)
        check(r.returncode == 0, "amtool check-config accepts the docs' config #%d%s" %
              (i, "" if r.returncode == 0 else ":\n" + r.stdout + r.stderr))
    # The check is not a rubber stamp: a route to an undefined receiver fails.
    p = os.path.join(tmp, "bad.yml")
    with open(p, "w") as f:
        f.write(blocks[0].replace("receiver: node-ops", "receiver: nobody"))
    r = subprocess.run(["amtool", "check-config", p], capture_output=True, text=True,
                       timeout=60)
    check(r.returncode != 0, "amtool check-config refuses an undefined receiver")
    checked += 1
else:
    skip("the docs' Alertmanager config", "amtool not installed")

# --- systemd: deploy/reflex-agent.service -----------------------------------
unit = open(os.path.join(a.source, "deploy", "reflex-agent.service")).read()
check("ExecStart=/usr/bin/reflex agent " in unit, "the unit runs /usr/bin/reflex agent")
sa = shutil.which("systemd-analyze")
if sa:
    # verify checks that ExecStart's binary exists: point it at the build.
    udir = os.path.join(tmp, "unit")
    os.makedirs(udir)
    upath = os.path.join(udir, "reflex-agent.service")
    with open(upath, "w") as f:
        f.write(unit.replace("ExecStart=/usr/bin/reflex ", "ExecStart=%s " %
                             os.path.abspath(a.reflex)))
    r = subprocess.run([sa, "verify", upath], capture_output=True, text=True, timeout=60)
    out = (r.stdout + r.stderr).strip()
    # Unknown keys and bad values are warnings with exit 0: any line about the
    # unit counts as a failure.
    about = [ln for ln in out.splitlines() if "reflex-agent.service" in ln]
    if r.returncode != 0 and not about:
        skip("systemd-analyze verify", "it cannot run in this environment: " + out[:200])
    else:
        check(r.returncode == 0 and not about,
              "systemd-analyze verify accepts deploy/reflex-agent.service%s" %
              ("" if not about else ":\n" + "\n".join(about)))
        checked += 1
else:
    skip("deploy/reflex-agent.service", "systemd-analyze not installed")

if checked == 0:
    print("nothing could be checked")
    sys.exit(77)
print("PASS")
