"""Real servers for the deployment tests (tests/deploy): redis-server and
Alertmanager on free loopback ports in a temp dir, the reflex processes, and
a teardown that always stops every one of them (also on failure or signal).
Every wait is bounded in count and time."""
import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

_procs = []


def _cleanup(*_):
    for p in reversed(_procs):
        if p.poll() is None:
            try:
                p.kill()
            except OSError:
                pass
    for p in _procs:
        try:
            p.wait(timeout=5)
        except Exception:
            pass


atexit.register(_cleanup)


def _on_signal(sig, _frame):
    _cleanup()
    sys.exit(128 + sig)


signal.signal(signal.SIGTERM, _on_signal)
signal.signal(signal.SIGINT, _on_signal)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def spawn(args, **kw):
    p = subprocess.Popen(args, **kw)
    _procs.append(p)
    return p


# Sanitizer builds run the binaries several times slower: ctest sets
# REFLEX_TEST_TIME_SCALE there (tests/deploy/CMakeLists.txt) and every wait_for
# stretches by it (bounded: 1 to 10).
TIME_SCALE = min(10.0, max(1.0, float(os.environ.get("REFLEX_TEST_TIME_SCALE", "1") or 1)))


def wait_for(pred, timeout, what, step=0.1):
    """Polls pred until it is truthy. A connection refused or reset (OSError,
    which urllib's URLError is) means "not yet": a server under a sanitizer
    build may not be listening when the first poll comes."""
    end = time.time() + timeout * TIME_SCALE
    last = None
    while time.time() < end:
        try:
            v = pred()
        except OSError as e:
            v, last = None, e
        if v:
            return v
        time.sleep(step)
    raise AssertionError("timed out after %.0fs waiting for %s%s" %
                         (timeout, what, " (last error: %s)" % last if last else ""))


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)
    print("ok:", msg, flush=True)


class Redis:
    def __init__(self, tmp, aclfile=None, port=None, fsync="always"):
        self.dir = os.path.join(tmp, "redis")
        os.makedirs(self.dir, exist_ok=True)
        self.port = port or free_port()
        self.aclfile = aclfile
        self.fsync = fsync
        self.proc = None
        self.admin = []  # redis-cli auth args when ACLs are on
        self.admin_auth = None  # (user, password) for Resp when ACLs are on

    def start(self):
        args = ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port),
                "--dir", self.dir, "--appendonly", "yes", "--appendfsync", self.fsync,
                "--save", "", "--daemonize", "no", "--protected-mode", "yes",
                "--logfile", os.path.join(self.dir, "redis.log")]
        if self.aclfile:
            args += ["--aclfile", self.aclfile]
        self.proc = spawn(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(lambda: self.ping(), 15, "redis-server on port %d" % self.port)
        return self

    def ping(self):
        try:
            return self.cli("PING", timeout=2).strip() == "PONG"
        except Exception:
            return False

    def cli(self, *args, user=None, password=None, timeout=10, check_rc=True):
        auth = []
        if user is not None:
            auth = ["--user", user, "--pass", password, "--no-auth-warning"]
        elif self.admin:
            auth = self.admin
        r = subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(self.port)] + auth +
                           [str(a) for a in args], capture_output=True, text=True,
                           timeout=timeout)
        if check_rc and r.returncode != 0:
            raise AssertionError("redis-cli %s: %s" % (args, r.stderr))
        return r.stdout

    def stop(self, hard=False):
        if self.proc and self.proc.poll() is None:
            if hard:
                self.proc.kill()
            else:
                self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)

    def url(self, user=None, password=None):
        cred = ""
        if user is not None:
            cred = "%s:%s@" % (user, password)
        return "redis://%s127.0.0.1:%d" % (cred, self.port)

    def conn(self, user=None, password=None):
        c = Resp(self.port)
        if user is not None:
            c.call("AUTH", user, password)
        elif self.admin_auth:
            c.call("AUTH", *self.admin_auth)
        return c

    def stream(self, key):
        """[(stream_id, {field: value})] of a whole stream (XRANGE in pages)."""
        c = self.conn()
        out, start = [], "-"
        for _ in range(100000):
            page = c.call("XRANGE", key, start, "+", "COUNT", "1000")
            entries = [(sid.decode(), {fv[i].decode(): fv[i + 1] for i in range(0, len(fv), 2)})
                       for sid, fv in page]
            if not entries:
                break
            out += entries
            start = "(" + entries[-1][0]
        c.close()
        return out



def acl_redis(tmp, acl_template, fsync="always"):
    """A redis-server under deploy/users.acl with per-run passwords (the
    template's CHANGE_ME_<ROLE> replaced), admin credentials set; not started.
    Returns (redis, passwords by role)."""
    pw = {"AGENT": "agent-%d" % os.getpid(), "DIAGNOSER": "diag-%d" % os.getpid(),
          "ADMIN": "admin-%d" % os.getpid()}
    acl = open(acl_template).read()
    for k, v in pw.items():
        acl = acl.replace("CHANGE_ME_" + k, v)
    aclfile = os.path.join(tmp, "users.acl")
    with open(aclfile, "w") as f:
        f.write(acl)
    redis = Redis(tmp, aclfile=aclfile, fsync=fsync)
    redis.admin = ["--user", "reflex-admin", "--pass", pw["ADMIN"], "--no-auth-warning"]
    redis.admin_auth = ("reflex-admin", pw["ADMIN"])
    return redis, pw

class RespError(Exception):
    pass


class Resp:
    """A minimal RESP2 client (no redis module needed): one connection, bounded timeouts."""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.f = self.s.makefile("rb")

    def call(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            b = a if isinstance(a, bytes) else str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(b), b)
        self.s.sendall(out)
        r = self._read()
        if isinstance(r, RespError):
            raise r
        return r

    def _read(self):
        line = self.f.readline()
        if not line:
            raise ConnectionError("redis closed the connection")
        t, rest = line[:1], line[1:-2]
        if t == b"+":
            return rest.decode()
        if t == b"-":
            return RespError(rest.decode())
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self.f.read(n + 2)
            return data[:-2]
        if t == b"*":
            n = int(rest)
            if n < 0:
                return None
            return [self._read() for _ in range(n)]
        raise ConnectionError("bad reply %r" % line)

    def close(self):
        self.s.close()


AM_CONFIG = """route:
  receiver: "null"
  group_wait: 1s
receivers:
  - name: "null"
"""


class Alertmanager:
    def __init__(self, tmp):
        self.dir = os.path.join(tmp, "alertmanager")
        os.makedirs(self.dir, exist_ok=True)
        self.port = free_port()
        with open(os.path.join(self.dir, "am.yml"), "w") as f:
            f.write(AM_CONFIG)

    def start(self):
        self.proc = spawn(["prometheus-alertmanager",
                           "--config.file=" + os.path.join(self.dir, "am.yml"),
                           "--storage.path=" + os.path.join(self.dir, "data"),
                           "--web.listen-address=127.0.0.1:%d" % self.port,
                           "--cluster.listen-address="],
                          stdout=open(os.path.join(self.dir, "am.log"), "w"),
                          stderr=subprocess.STDOUT)
        wait_for(lambda: self._ready(), 30, "alertmanager on port %d" % self.port)
        return self

    def _ready(self):
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/-/ready" % self.port,
                                        timeout=2) as r:
                return r.status == 200
        except Exception:
            return False

    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def alerts(self):
        with urllib.request.urlopen(self.url() + "/api/v2/alerts", timeout=5) as r:
            return json.loads(r.read())

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def _stream_folds(redis, key):
    """The stream's events, each id once (a redelivery is the same event),
    a fold's update merged into its first sighting (same name, device,
    evidence, time and line: the largest count stands, as the diagnoser's
    engine merges it): ({fold key: count}, entries, distinct ids)."""
    import collections
    import json
    entries = redis.stream(key)
    by_id = collections.OrderedDict()
    for _, f in entries:
        by_id.setdefault(f["id"], f["e"])
    folds = {}
    for payload in by_id.values():
        ev = json.loads(payload)
        k = (ev["name"], ev["device"], ev["evidence"], ev.get("ts"), ev.get("mono"), ev["line"])
        folds[k] = max(folds.get(k, 0), ev.get("count", 1))
    return folds, len(entries), len(by_id)


def stream_counts(redis, key):
    """Events per name in a stream (_stream_folds): (counts, entries, distinct ids)."""
    import collections
    folds, entries, ids = _stream_folds(redis, key)
    got = collections.Counter()
    for k, n in folds.items():
        got[k[0]] += n
    return got, entries, ids


def stream_counts_by_device(redis, key):
    """As stream_counts, per (name, device): what a diagnoser counts for each
    signature on each device."""
    import collections
    got = collections.Counter()
    for k, n in _stream_folds(redis, key)[0].items():
        got[(k[0], k[1])] += n
    return got


def events_counts_by_device(reflex, kb, topo, bundle):
    """Events per (name, device) that `reflex events` finds in the same lines."""
    import collections
    import json
    r = subprocess.run([reflex, "events", "--kb", kb, "--topology", topo, bundle],
                       capture_output=True, text=True, timeout=120)
    want = collections.Counter()
    for ln in r.stdout.splitlines():
        ev = json.loads(ln)
        want[(ev["event"], ev["device"])] += ev.get("count", 1)
    return want


def events_counts(reflex, kb, topo, bundle):
    """Events per name that `reflex events` finds in the same lines."""
    import collections
    want = collections.Counter()
    for (name, _device), n in events_counts_by_device(reflex, kb, topo, bundle).items():
        want[name] += n
    return want


def http_get(url, timeout=5, tries=50):
    """GET, retried while the server is still starting (bounded)."""
    for i in range(tries):
        try:
            with urllib.request.urlopen(url, timeout=timeout) as r:
                return r.read().decode()
        except urllib.error.URLError:
            if i == tries - 1:
                raise
            time.sleep(0.1)


def metric(text, name, labels=None):
    """Sum of a metric's samples whose label text contains `labels`."""
    total = 0.0
    for ln in text.splitlines():
        if ln.startswith("#"):
            continue
        head, _, val = ln.rpartition(" ")
        mname = head.split("{")[0]
        if mname == name and (labels is None or labels in head):
            total += float(val)
    return total


def tempdir():
    d = tempfile.mkdtemp(prefix="reflex-deploy-")
    atexit.register(lambda: shutil.rmtree(d, ignore_errors=True))
    return d


def dump_logs_on_failure(tmp, lines=30):
    """On an uncaught error: the last lines of every *.log in tmp (the
    processes' stderr), then the error, so a failed run explains itself."""
    def hook(kind, value, tb):
        for n in sorted(os.listdir(tmp)):
            if n.endswith(".log"):
                print("---- %s (last %d lines)" % (n, lines))
                with open(os.path.join(tmp, n), errors="replace") as f:
                    print("".join(f.readlines()[-lines:]))
        sys.__excepthook__(kind, value, tb)
    sys.excepthook = hook


# A process's CPU seconds (user + system) and resident memory, for the
# deployment benchmarks.
def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid):
    with open("/proc/%d/status" % pid) as f:
        for ln in f:
            if ln.startswith("VmRSS:"):
                return int(ln.split()[1]) / 1024.0
    return 0.0
