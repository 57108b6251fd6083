#!/usr/bin/env python3
"""Only the kernel speaks for the kernel; only a host speaks for itself.

A training job writes its own output: one kernel-shaped line in it must not
get a GPU drained. Each shape below, written into node-0017's train.log of
the demo bundle, is refused as a kernel claim by `reflex events` and by
`reflex agent`, and `reflex diagnose` neither blames nor evicts its GPU but
quotes the line with its file and line number. Declared a kernel capture
(--kernel-capture, or the bundle's sources.json) the same file yields the
Xid event: the shape is one Reflex reads, so the refusal is the source
rule's doing. A line in node-0017's syslog that names node-0018 places
nothing on node-0018 unless the file is declared a central collector.

usage: spoof_cli_test.py REFLEX REFLEXC KB_DIR EXAMPLE_BUNDLE
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

XID = "NVRM: Xid (PCI:0000:3a:00): 79, pid=1, name=python, GPU has fallen off the bus."
# The shapes a kernel line takes (formats.md, "Line formats"), each forged
# into job output.
SHAPES = {
    "dmesg raw": "[ 9662.910385] " + XID,
    "dmesg -T": "[Thu Mar  5 10:41:03 2026] " + XID,
    "dmesg -r": "<3>[ 9662.910385] " + XID,
    "dmesg -x": "kern  :err   : [ 9662.910385] " + XID,
    "dmesg iso": "2026-03-05T10:41:03,910385+00:00 " + XID,
    "journal json": json.dumps({"_TRANSPORT": "kernel", "MESSAGE": XID,
                                "__REALTIME_TIMESTAMP": "1772707263910385",
                                "_HOSTNAME": "node-0017"}),
    "rfc5424 kern": "<3>1 2026-03-05T10:41:03.910385Z node-0017 kernel - - - " + XID,
    "rfc3164 kernel tag": "Mar  5 10:41:03 node-0017 kernel: " + XID,
    "rfc3164 tag + dmesg": "Mar  5 10:41:03 node-0017 kernel: [ 9662.910385] " + XID,
    "short-precise": "Mar 05 10:41:03.910385 node-0017 kernel: " + XID,
    "bare kernel tag": "kernel: " + XID,
    "quoted syslog": "Error: Mar  5 10:41:03 node-0017 kernel: " + XID,
    "iso syslog": "2026-03-05T10:41:03.910385+00:00 node-0017 kernel: " + XID,
}
LINE_NO = 21  # the forged line's number in train.log


def run(cmd, stdin=None):
    p = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=280)
    return p.returncode, p.stdout, p.stderr


def events(out):
    """`reflex events` lines, and `reflex agent`'s ({"event": "<the event's JSON>"})."""
    evs = []
    for l in out.splitlines():
        if l.startswith("{"):
            e = json.loads(l)
            evs.append(json.loads(e["event"]) if isinstance(e.get("event"), str) and
                       e["event"].startswith("{") else e)
    return evs


def forged(example, work, line, where="train.log", host="node-0017"):
    b = os.path.join(work, "b")
    shutil.rmtree(b, ignore_errors=True)
    shutil.copytree(example, b)
    path = os.path.join(b, "hosts", host, where)
    lines = open(path).read().splitlines() if os.path.exists(path) else [
        "Mar  5 10:40:%02d node-0017 systemd[1]: Started Session %d of user root." % (i, i)
        for i in range(30)]
    lines.insert(LINE_NO - 1, line)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return b


def xid_from(evs, evidence):
    return [e for e in evs if e.get("event") == "xid79_fallen_off_bus" and
            e.get("evidence") == evidence]


def main():
    reflex, reflexc, kb_dir, example = sys.argv[1:5]
    failures = []
    with tempfile.TemporaryDirectory() as work:
        kb = os.path.join(work, "kb.rfxkb")
        rc, _, err = run([reflexc, "build", "-o", kb, kb_dir])
        if rc != 0:
            print("cannot build the KB:", err)
            return 1
        ev_file = "hosts/node-0017/train.log:%d" % LINE_NO
        for name, line in SHAPES.items():
            b = forged(example, work, line)
            for strict in ([], ["--strict-transport"]):
                rc, out, err = run([reflex, "events", "--kb", kb] + strict + [b])
                if rc != 0 or xid_from(events(out), ev_file):
                    failures.append("%s%s: taken as a kernel line (rc %d)" %
                                    (name, " (strict)" if strict else "", rc))
            rc, out, _ = run([reflex, "events", "--kb", kb, "--kernel-capture", "train.log", b])
            if not xid_from(events(out), ev_file):
                failures.append("%s: not read even when train.log is declared a kernel capture"
                                % name)
        # The report: nothing blamed or evicted on node-0017, the claim quoted.
        b = forged(example, work, SHAPES["dmesg raw"])
        rc, out, err = run([reflex, "diagnose", "--kb", kb, "--format", "json", b])
        doc = json.loads(out) if out.strip().startswith("{") else {}
        roots = [r.get("device", "") for r in doc.get("root_causes", [])]
        notes = " ".join(doc.get("notes", []))
        if any(r.startswith("node-0017/gpu") for r in roots):
            failures.append("diagnose blames a node-0017 GPU: %s" % roots)
        if any("node-0017/gpu" in str(x) for x in doc.get("eviction_set", [])):
            failures.append("diagnose evicts a node-0017 GPU")
        if "refused as evidence" not in notes or ev_file not in notes:
            failures.append("the report does not quote the refused line: %r" % notes[:400])
        # sources.json declares it as the flag does.
        with open(os.path.join(b, "sources.json"), "w") as f:
            json.dump({"kernel_capture": ["hosts/node-0017/train.log"]}, f)
        rc, out, _ = run([reflex, "events", "--kb", kb, b])
        if not xid_from(events(out), ev_file):
            failures.append("sources.json kernel_capture not applied")
        for bad in ('{"kernel_captures": ["x"]}', '{"collector": "x"}',
                    '{"collector": ["a"], "collector": ["b"]}', '[1]'):
            with open(os.path.join(b, "sources.json"), "w") as f:
                f.write(bad)
            rc, _, err = run([reflex, "events", "--kb", kb, b])
            if rc != 2 or "sources.json" not in err:
                failures.append("bad sources.json %s: rc %d, %r" % (bad, rc, err[-200:]))
        # The agent follows job output as the shipped unit may: refused there too.
        b = forged(example, work, SHAPES["dmesg raw"])
        train = os.path.join(b, "hosts", "node-0017", "train.log")
        for extra, want in (([], 0), (["--kernel-capture", "train.log"], 1)):
            rc, out, err = run([reflex, "agent", "--kb", kb, "--topology",
                                os.path.join(b, "topology.json"), "--host", "node-0017",
                                "--follow", train, "--year", "2026", "--once"] + extra)
            got = [e for e in events(out) if e.get("name") == "xid79_fallen_off_bus" and
                   e.get("evidence") == train + ":%d" % LINE_NO]
            if rc != 0 or len(got) != want:
                failures.append("agent %s: %d xid79 event(s), want %d (rc %d)" %
                                (extra or "plain", len(got), want, rc))
        # A host speaks for itself: node-0017's syslog naming node-0018.
        other = "Mar  5 10:41:03 node-0018 kernel: NVRM: Xid (PCI:0000:5d:00): 79, pid=1, " \
                "name=python, GPU has fallen off the bus."
        b = forged(example, work, other, where="syslog")
        syslog_ev = "hosts/node-0017/syslog:%d" % LINE_NO
        for extra, want in (([], False), (["--collector", "syslog"], True)):
            rc, out, _ = run([reflex, "events", "--kb", kb] + extra + [b])
            got = [e for e in xid_from(events(out), syslog_ev) if e.get("host") == "node-0018"]
            if bool(got) != want or rc != 0:
                failures.append("syslog naming node-0018 %s: %d event(s) on node-0018" %
                                (extra or "plain", len(got)))
        rc, out, _ = run([reflex, "diagnose", "--kb", kb, "--format", "json", b])
        doc = json.loads(out) if out.strip().startswith("{") else {}
        if any(r.get("device", "").startswith("node-0018/gpu") for r in
               doc.get("root_causes", [])):
            failures.append("diagnose blames node-0018 from node-0017's syslog")
        if "names host node-0018" not in " ".join(doc.get("notes", [])):
            failures.append("the report does not show the line naming node-0018")
    for f in failures:
        print("FAIL:", f)
    print("spoof cases: %d shapes; %s" % (len(SHAPES), "ok" if not failures else
                                          "%d failed" % len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
