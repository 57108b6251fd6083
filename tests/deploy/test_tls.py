"""TLS between agents/diagnosers and Redis with Debian's packages
(docs/deployment.md, "Encryption in transit (TLS)"): hiredis 0.14 has no TLS,
so stunnel4 runs beside Redis (deploy/stunnel-server.conf) and beside each
client (deploy/stunnel-client.conf). Both shipped files run as written, only
ports and file paths substituted (and setuid/setgid dropped when not root).

A throwaway CA and certificates are made at test time (openssl CLI). Redis
runs under deploy/users.acl on a plain loopback port. Checked:
- two agents (--once) and a diagnoser go through the client tunnel: every
  event `reflex events` finds is in the stream (read on the plain port) and
  the diagnoser names a root cause;
- on the wire between the tunnels (a recording relay) neither the agent's
  password nor `XADD` nor any event name appears, though all cross the plain
  hop between the agents and the client tunnel (so the check can fail);
- the TLS port gives a plain-text client nothing; a TLS client without a
  certificate or with one of another CA is refused, one with the CA's
  certificate reaches Redis (NOAUTH: the passwords still apply);
- the client tunnel refuses a server whose certificate is of another CA, or
  of the right CA for another name (checkHost);
- Redis's own TLS port (Debian's redis-server is built with TLS) in place of
  the stunnel server: an agent publishes through the same client tunnel, and
  clients without the CA's certificate are refused.
Skipped (77) when stunnel4 or openssl is not installed."""
import argparse
import json
import os
import pwd
import re
import shutil
import socket
import ssl
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (acl_redis, check, dump_logs_on_failure, events_counts, free_port,  # noqa
                     spawn, stream_counts, tempdir, wait_for)

ap = argparse.ArgumentParser()
ap.add_argument("--reflex", required=True)
ap.add_argument("--kb", required=True)
ap.add_argument("--bundle", required=True)
ap.add_argument("--acl", required=True)
ap.add_argument("--deploy", required=True, help="the repository's deploy/ directory")
a = ap.parse_args()

STUNNEL = shutil.which("stunnel4") or shutil.which("stunnel")
if not STUNNEL or not shutil.which("openssl"):
    print("skipped: stunnel4 or openssl not installed (scripts/setup.sh installs them)")
    sys.exit(77)

tmp = tempdir()
dump_logs_on_failure(tmp)
topo = os.path.join(a.bundle, "topology.json")
SERVER_CONF = os.path.join(a.deploy, "stunnel-server.conf")
CLIENT_CONF = os.path.join(a.deploy, "stunnel-client.conf")


def conf_options(path):
    """{option: value} of a stunnel file (comments and sections skipped)."""
    out = {}
    for ln in open(path):
        m = re.match(r"^\s*(\w+)\s*=\s*(.*?)\s*$", ln)
        if m:
            out[m.group(1)] = m.group(2)
    return out


# Privileges are dropped as shipped when the test can (root, the package's user).
AS_SHIPPED = os.geteuid() == 0
try:
    pwd.getpwnam("stunnel4")
except KeyError:
    AS_SHIPPED = False
DROP = () if AS_SHIPPED else ("setuid", "setgid")


def write_conf(src, name, values):
    """The shipped file with the named options' values replaced; each must be
    in it (the test runs what the docs show)."""
    seen, lines = set(), []
    for ln in open(src):
        m = re.match(r"^\s*(\w+)\s*=", ln)
        opt = m.group(1) if m else None
        if opt in DROP:
            seen.add(opt)
            continue
        if opt in values:
            seen.add(opt)
            ln = "%s = %s\n" % (opt, values[opt])
        lines.append(ln)
    missing = (set(values) | set(DROP)) - seen
    if missing:
        raise AssertionError("%s has no %s" % (src, sorted(missing)))
    path = os.path.join(tmp, name + ".conf")
    with open(path, "w") as f:
        f.writelines(lines)
    return path


def openssl(*args):
    r = subprocess.run(["openssl"] + list(args), capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise AssertionError("openssl %s: %s" % (args[0], r.stderr))


KEYGEN = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-noenc", "-days", "2"]


def make_ca(name):
    crt, key = os.path.join(tmp, name + ".crt"), os.path.join(tmp, name + ".key")
    openssl("req", "-x509", *KEYGEN, "-subj", "/CN=" + name, "-keyout", key, "-out", crt)
    return crt, key


def make_cert(ca, file, cn, server):
    """A certificate signed by ca, the same commands as the docs show."""
    crt, key = os.path.join(tmp, file + ".crt"), os.path.join(tmp, file + ".key")
    ext = ["-addext", "basicConstraints=critical,CA:FALSE"]
    if server:
        ext += ["-addext", "subjectAltName=DNS:" + cn, "-addext", "extendedKeyUsage=serverAuth"]
    else:
        ext += ["-addext", "extendedKeyUsage=clientAuth"]
    openssl("req", "-x509", "-CA", ca[0], "-CAkey", ca[1], *KEYGEN, "-subj", "/CN=" + cn,
            *ext, "-keyout", key, "-out", crt)
    os.chmod(key, 0o600)
    return crt, key


NAME = conf_options(CLIENT_CONF)["checkHost"]  # the server certificate's name
ca = make_ca("reflex-ca")
other_ca = make_ca("other-ca")
server_cert = make_cert(ca, "redis-tls", NAME, True)
client_cert = make_cert(ca, "reflex-client", "node-0017", False)
foreign_client = make_cert(other_ca, "foreign-client", "node-0017", False)
rogue_server = make_cert(other_ca, "rogue-server", NAME, True)
misnamed_server = make_cert(ca, "misnamed-server", "other." + NAME, True)
check(True, "a CA and certificates made with openssl (server name %s)" % NAME)


def port_open(port):
    with socket.create_connection(("127.0.0.1", port), timeout=2):
        return True


def stunnel(name, conf):
    """Runs stunnel in the foreground (as shipped), its log in tmp; waits for
    its port. A failed start says why."""
    log = os.path.join(tmp, "stunnel-%s.log" % name)
    p = spawn([STUNNEL, conf], stdout=subprocess.DEVNULL, stderr=open(log, "w"))
    port = int(conf_options(conf)["accept"].rsplit(":", 1)[1])

    def up():
        if p.poll() is not None:
            raise AssertionError("stunnel %s exited %s:\n%s" % (name, p.returncode,
                                                              open(log).read()[-2000:]))
        return "Configuration successful" in open(log).read() and port_open(port)
    wait_for(up, 20, "stunnel %s on port %d" % (name, port))
    return port


def tls_server(name, cert, backend):
    return stunnel("server-" + name, write_conf(SERVER_CONF, "server-" + name, {
        "accept": "127.0.0.1:%d" % free_port(), "connect": "127.0.0.1:%d" % backend,
        "cert": cert[0], "key": cert[1], "CAfile": ca[0]}))


def tls_client(name, server_port):
    return stunnel("client-" + name, write_conf(CLIENT_CONF, "client-" + name, {
        "accept": "127.0.0.1:%d" % free_port(), "connect": "127.0.0.1:%d" % server_port,
        "cert": client_cert[0], "key": client_cert[1], "CAfile": ca[0]}))


class Relay:
    """A loopback TCP relay keeping every byte it passes, each way (at most
    16 MiB): what an eavesdropper on that hop sees."""

    def __init__(self, target):
        self.target, self.seen, self.lock = target, bytearray(), threading.Lock()
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(16)
        self.port = self.srv.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.srv.accept()
            except OSError:
                time.sleep(0.1)
                continue
            try:
                u = socket.create_connection(("127.0.0.1", self.target), timeout=10)
                u.settimeout(None)
            except OSError:
                c.close()
                continue
            for src, dst in ((c, u), (u, c)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src, dst):
        try:
            while True:
                b = src.recv(65536)
                if not b:
                    break
                with self.lock:
                    if len(self.seen) < 16 << 20:
                        self.seen += b
                dst.sendall(b)
        except OSError:
            pass
        finally:
            try:
                dst.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    def bytes(self):
        with self.lock:
            return bytes(self.seen)


PING = b"*1\r\n$4\r\nPING\r\n"


def probe(port, cert=None, plain=False):
    """Sends PING to port (plain TCP, or TLS verifying the server as the
    client tunnel does, with cert if given); the first reply bytes, or the
    error that ended the connection."""
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        if not plain:
            ctx = ssl.create_default_context(cafile=ca[0])
            if cert:
                ctx.load_cert_chain(cert[0], cert[1])
            s = ctx.wrap_socket(s, server_hostname=NAME)
        with s:
            s.sendall(PING)
            return s.recv(200)
    except (OSError, ssl.SSLError) as e:
        return "error: %s" % e


def reached_redis(reply):
    return isinstance(reply, bytes) and reply[:1] in (b"+", b"-")


redis, pw = acl_redis(tmp, a.acl)
redis.start()
tls_port = tls_server("main", server_cert, redis.port)
wire = Relay(tls_port)  # between the two tunnels: the network
tunnel = tls_client("main", wire.port)
front = Relay(tunnel)  # between the agents and their tunnel: loopback
check(True, "stunnel server and client from %s (%s)" %
      (a.deploy, "setuid stunnel4 as shipped" if AS_SHIPPED else "setuid dropped: not root"))

# --- through the tunnel: agents publish, the diagnoser diagnoses ----------
out = os.path.join(tmp, "d.jsonl")
d = spawn([a.reflex, "watch", "--kb", a.kb, "--topology", topo, "--settle", "2s",
           "--redis", "redis://reflex-diagnoser:%s@127.0.0.1:%d" % (pw["DIAGNOSER"], tunnel)],
          stdout=open(out, "w"), stderr=open(os.path.join(tmp, "diagnoser.log"), "w"))
agents = []
for host in ("node-0017", "node-0018"):
    agents.append(spawn([a.reflex, "agent", "--kb", a.kb, "--topology", topo, "--host", host,
                         "--follow", os.path.join(a.bundle, "hosts", host), "--year", "2026",
                         "--once", "--redis",
                         "redis://reflex-agent:%s@127.0.0.1:%d" % (pw["AGENT"], front.port)],
                        stdout=subprocess.DEVNULL,
                        stderr=open(os.path.join(tmp, host + ".log"), "w")))
for p in agents:
    check(p.wait(timeout=60) == 0, "an agent --once publishes through the client tunnel")

keys = sorted(k for k in redis.cli("--scan", "--pattern", "reflex:*:events").split())
check(keys, "event streams on the plain port: %s" % keys)
got = {}
for k in keys:
    for name, n in stream_counts(redis, k)[0].items():
        got[name] = got.get(name, 0) + n
want = dict(events_counts(a.reflex, a.kb, topo, a.bundle))
check(want and got == want, "every event `reflex events` finds came through TLS (%d kinds, %d)" %
      (len(want), sum(want.values())))


def diagnosed():
    with open(out) as f:
        return any(json.loads(x)["root_causes"] for x in f if x.strip())


wait_for(diagnosed, 60, "a diagnosis from the diagnoser behind the client tunnel")
check(True, "the diagnoser reads, leases and publishes through the client tunnel")
d.terminate()
check(d.wait(timeout=20) == 0, "diagnoser exits 0")

# --- what an eavesdropper sees ------------------------------------------
needles = [pw["AGENT"].encode(), b"XADD"] + [n.encode() for n in sorted(want)]
plain_hop, wire_hop = front.bytes(), wire.bytes()
check(all(n in plain_hop for n in needles),
      "the agents' password, XADD and all %d event names cross the plain hop to the tunnel" %
      len(want))
check(not [n for n in needles if n in wire_hop],
      "none of them is on the wire between the tunnels (%s)" %
      [n for n in needles if n in wire_hop])
check(wire_hop[:2] == b"\x16\x03", "the wire carries TLS records (%d bytes)" % len(wire_hop))

# --- the TLS port: who gets through ---------------------------------------
r = probe(tls_port, plain=True)
check(not reached_redis(r) and b"NOAUTH" not in (r if isinstance(r, bytes) else b""),
      "a plain-text client on the TLS port gets nothing from Redis (%r)" % (r,))
r = probe(tls_port)
check(not reached_redis(r), "a TLS client without a certificate is refused (%s)" % (r,))
r = probe(tls_port, foreign_client)
check(not reached_redis(r), "a client certificate of another CA is refused (%s)" % (r,))
r = probe(tls_port, client_cert)
check(reached_redis(r) and r.startswith(b"-NOAUTH"),
      "a client certificate of the CA reaches Redis, which still wants a password (%r)" % r)

# --- the client tunnel: which servers it accepts ---------------------------
r = probe(tunnel, plain=True)
check(isinstance(r, bytes) and r.startswith(b"-NOAUTH"),
      "the client tunnel reaches the real server (%r)" % r)
for name, cert in (("rogue", rogue_server), ("misnamed", misnamed_server)):
    # The rogue servers front the real Redis: only the tunnel's check stops them.
    bad = tls_client(name, tls_server(name, cert, redis.port))
    r = probe(bad, plain=True)
    check(not reached_redis(r), "the client tunnel refuses the %s server (%r)" % (name, r))
    log = os.path.join(tmp, "stunnel-client-%s.log" % name)
    why = wait_for(lambda: [ln.split(": ", 1)[-1] for ln in open(log) if "CERT:" in ln], 10,
                   "the %s client tunnel's log to say why" % name)
    check(True, "stunnel says why: %s" % [w.strip() for w in why[:2]])

# --- Redis's own TLS port (Debian's redis-server is built with it) in place
# of the stunnel server: the same client tunnel, the same certificates.
native = free_port()
redis.conn().call("CONFIG", "SET", "tls-cert-file", server_cert[0], "tls-key-file",
                  server_cert[1], "tls-ca-cert-file", ca[0], "tls-auth-clients", "yes",
                  "tls-port", str(native))
direct = tls_client("native", native)
before = sum(int(redis.cli("XLEN", k)) for k in keys)
p = spawn([a.reflex, "agent", "--kb", a.kb, "--topology", topo, "--host", "node-0018",
           "--follow", os.path.join(a.bundle, "hosts", "node-0018"), "--year", "2026", "--once",
           "--redis", "redis://reflex-agent:%s@127.0.0.1:%d" % (pw["AGENT"], direct)],
          stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "native.log"), "w"))
check(p.wait(timeout=60) == 0, "an agent --once publishes through the tunnel to Redis's TLS port")
after = sum(int(redis.cli("XLEN", k)) for k in keys)
check(after > before, "its entries are in the stream (%d more)" % (after - before))
for what, cert in (("without a certificate", None), ("with another CA's", foreign_client)):
    r = probe(native, cert)
    check(not reached_redis(r), "Redis's TLS port refuses a client %s (%s)" % (what, r))
redis.stop()
print("PASS")
