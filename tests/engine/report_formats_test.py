#!/usr/bin/env python3
"""`reflex diagnose` renderings for a person and for machines: the text report,
JSON fields `host` and `device_evidence`, `--format jsonl`, and `--format svg`.

Usage: report_formats_test.py REFLEX SOURCE_DIR [--svg-render]

Bundles: examples/incident-pcie (its README cites the line sources), and a
two-incident bundle assembled from two real incidents of tests/realworld
(a-akash-209-node1-xid79-pci-a1, a-nvidia-docker-1553-gpu0-0900-xid79-container-stuck;
each truth.json gives its source_url). The hostile bundles change one real
line of incident-pcie and name a host with markup: near-misses made here.
With --svg-render the SVGs are also drawn with rsvg-convert (exit 77, skipped,
when it is not installed: scripts/setup.sh installs librsvg2-bin).
"""

import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
REFLEX, SRC = sys.argv[1], sys.argv[2]
KB = os.path.join(SRC, "kb")
PCIE = os.path.join(SRC, "examples", "incident-pcie")
RESULTS = {"passed": 0, "failed": 0}


def check(cond, what):
    if cond:
        RESULTS["passed"] += 1
    else:
        RESULTS["failed"] += 1
        print("FAIL:", what)


def diagnose(bundle, fmt):
    p = subprocess.run([REFLEX, "diagnose", "--kb", KB, "--format", fmt, bundle],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    if p.returncode != 0:
        raise SystemExit("reflex diagnose %s failed (%d): %s" % (fmt, p.returncode,
                                                                 p.stderr.decode(errors="replace")))
    return p.stdout


def multi_bundle(tmp):
    out = os.path.join(tmp, "multi")
    os.makedirs(os.path.join(out, "hosts"))
    for case, host in (("a-akash-209-node1-xid79-pci-a1", "node1"),
                       ("a-nvidia-docker-1553-gpu0-0900-xid79-container-stuck", "node-1")):
        shutil.copytree(os.path.join(SRC, "tests", "realworld", case, "hosts", host),
                        os.path.join(out, "hosts", host))
    return out


def hostile_bundles(tmp):
    """A chain line with markup and bytes that are not UTF-8; a host named with markup."""
    one = os.path.join(tmp, "hostile")
    shutil.copytree(PCIE, one)
    kern = os.path.join(one, "hosts", "node-0018", "kern.log")
    data = open(kern, "rb").read()
    assert b"name=python," in data
    data = data.replace(b"name=python,",
                        b"name=<script>alert(\"x&y\")</script>'\xff\xfe,")
    open(kern, "wb").write(data)
    two = os.path.join(tmp, "hostile-host")
    host = os.path.join(two, "hosts", "ev<il>&\"q'")
    os.makedirs(host)
    with open(os.path.join(host, "kern.log"), "wb") as f:
        f.write(b"[  100.000000] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=<b>&amp;, "
                b"GPU has fallen off the bus.\n")
    return one, two


def classes(el):
    return (el.get("class") or "").split()


def by_class(root, cls):
    return [e for e in root.iter() if cls in classes(e)]


def texts(el):
    return [t.text or "" for t in el.iter(SVG + "text")]


def test_text_and_json(multi):
    # One incident: the check line, the root's other fault evidence listed,
    # the host, counts that agree with the JSON.
    text = diagnose(PCIE, "text").decode()
    doc = json.loads(diagnose(PCIE, "json"))
    root = doc["root_causes"][0]
    check(root["host"] == "node-0018", "pcie: host of the root")
    check("  host:        node-0018\n" in text, "pcie text: host line")
    m = re.search(r"why: explains (\d+) of (\d+) symptoms", text)
    check(m and int(m.group(1)) == root["explains"] and int(m.group(2)) == doc["symptoms"],
          "pcie: 'explains N of M' agrees with JSON explains/symptoms")
    check("%d symptom event(s)" % doc["symptoms"] in text, "pcie: header symptom count")
    check(root["explains"] <= doc["symptoms"], "pcie: explains <= symptoms")
    # Every symptom is either explained by the root or listed unexplained.
    check(doc["symptoms"] - root["explains"] == len(doc["unexplained"]),
          "pcie: symptoms = explains + unexplained")
    kinds = [e["event"] for e in root["device_evidence"]]
    check(len(kinds) == int(re.search(r"(\d+) other kinds? of fault", root["why"]).group(1)),
          "pcie: device_evidence lists what why counts")
    for k in kinds:
        check(re.search(r"\n    \S+  %s( \(x\d+, first shown\))?\n        hosts/" % k, text),
              "pcie text: other fault evidence %s listed with its line" % k)

    # Several incidents: notes once, after all of them, at most 5.
    text = diagnose(multi, "text").decode()
    doc = json.loads(diagnose(multi, "json"))
    incs = doc["incidents"]
    check(len(incs) == 2, "multi: two incidents")
    check(text.count("\nNotes:\n") == 1, "multi text: one Notes block")
    check(text.rfind("\nNotes:\n") > text.rfind("\nIncident "), "multi text: notes after incidents")
    topo_note = [n for n in incs[0]["notes"] if n.startswith("no topology")]
    check(topo_note and text.count(topo_note[0]) == 1, "multi text: run note said once")
    notes = text[text.rfind("\nNotes:\n") + 8:].splitlines()
    all_notes = {n for i in incs for n in i["notes"]}
    if len(all_notes) > 5:
        check(len(notes) == 6 and notes[5] == "  - %d more (--format json lists all)" %
              (len(all_notes) - 5), "multi text: 5 notes then how many more")
    for inc in incs:
        r = inc["root_causes"][0]
        check(inc["trigger"] is None and inc["symptoms"] == 0 and r["explains"] == 0,
              "multi: no trigger, so explains = symptoms = 0")
        check("fault event" in r["why"], "multi: why counts fault events")
        check(r["host"] in ("node1", "node-1"), "multi: host of each root")
        check(r["check"] and ("  check:       " + r["check"]) in text, "multi text: check line")

    # JSON Lines: one incident per line, the same documents.
    lines = diagnose(multi, "jsonl").decode().splitlines()
    check(len(lines) == len(incs), "jsonl: one line per incident")
    parsed = [json.loads(l) for l in lines]
    check([p["incident"] for p in parsed] == [i["incident"] for i in incs], "jsonl: same order")
    check(parsed[0]["principal"] is True and parsed[1]["principal"] is False, "jsonl: principal")


def svg_of(bundle, tmp, name):
    data = diagnose(bundle, "svg")
    path = os.path.join(tmp, name + ".svg")
    open(path, "wb").write(data)
    return path, ET.fromstring(data)


def test_svg(multi, hostile, hostile_host, tmp, render):
    out = {}
    path, root = svg_of(PCIE, tmp, "pcie")
    out["pcie"] = path
    doc = json.loads(diagnose(PCIE, "json"))
    rc = doc["root_causes"][0]
    check(len(by_class(root, "incident")) == 1, "svg pcie: one incident panel")
    lanes = by_class(root, "lane")
    names = [texts(l)[0] for l in lanes]
    check(len(names) == len(set(names)), "svg pcie: one lane per device")
    devices = {l["device"] for l in rc["chain"]} | {u["device"] for u in doc["unexplained"]}
    check(devices <= set(names), "svg pcie: a lane for each chain/unexplained device")
    culprit = [l for l in lanes if "culprit" in classes(l)]
    check(len(culprit) == 1 and texts(culprit[0])[0] == rc["device"], "svg pcie: culprit lane")
    arrows = [e for e in by_class(root, "chain-arrow") if e.get("id")]
    check(len(arrows) == len(rc["chain"]) - 1, "svg pcie: one arrow per chain step")
    hosts = [texts(h)[0] for h in by_class(root, "host")]
    check(hosts[:1] == ["node-0018"] and len(hosts) == len(set(hosts)), "svg pcie: host groups")
    check(len(by_class(root, "legend")) == 1, "svg pcie: legend")
    sub = by_class(root, "subtree-node")
    check(any("culprit" in classes(n) for n in sub) and len(sub) >= 2,
          "svg pcie: PCIe subtree with the culprit marked")
    # A real time axis: the 10-minute wait for the watchdog is most of the width,
    # the 0.6 s from AER to Xid 79 almost none.
    xs = {}
    for m in by_class(by_class(root, "incident")[0], "mark"):
        title = m.find(SVG + "title").text
        c = m.find(SVG + "circle")
        if c is not None:
            xs.setdefault(title.split(" on ")[0], float(c.get("cx")))
    gap_long = xs["torch_watchdog_timeout"] - xs["xid79_fallen_off_bus"]
    gap_short = xs["xid79_fallen_off_bus"] - xs["pcie_aer_fatal_received"]
    check(gap_long > 400 and 0 <= gap_short < 5, "svg pcie: time scale shows the gap")
    check(len(by_class(root, "tick")) >= 3, "svg pcie: axis ticks")

    path, root = svg_of(multi, tmp, "multi")
    out["multi"] = path
    check(len(by_class(root, "incident")) == 2, "svg multi: two incident panels")
    check(len(by_class(root, "notime-band")) >= 1, "svg multi: a 'no wall time' band")
    for p in by_class(root, "incident"):
        check(len(by_class(p, "lane")) >= 1, "svg multi: lanes in each panel")

    for name, bundle in (("hostile", hostile), ("hostile-host", hostile_host)):
        raw = diagnose(bundle, "svg")
        path, root = svg_of(bundle, tmp, name)
        out[name] = path
        tags = {e.tag.replace(SVG, "") for e in root.iter()}
        check(tags <= {"svg", "title", "style", "defs", "marker", "path", "rect", "g", "text",
                       "line", "circle"}, "svg %s: only drawing elements (%s)" % (name, tags))
        check(b"<script" not in raw and b"href" not in raw, "svg %s: no script, no link" % name)
        raw.decode("utf-8")  # raises when not UTF-8
        all_text = " ".join((e.text or "") for e in root.iter())
        if name == "hostile":
            check("<script>alert(\"x&y\")</script>'\ufffd\ufffd" in all_text,
                  "svg hostile: the line shown as text, bad bytes replaced")
        else:
            check("ev<il>&\"q'" in all_text, "svg hostile host: the name shown as text")

    if render:
        for name, path in out.items():
            png = path[:-4] + ".png"
            p = subprocess.run(["rsvg-convert", "-o", png, path], stderr=subprocess.PIPE)
            check(p.returncode == 0, "rsvg-convert %s: %s" % (name, p.stderr.decode()[:200]))
            if p.returncode:
                continue
            head = open(png, "rb").read(24)
            w, h = struct.unpack(">II", head[16:24])
            check(head[:8] == b"\x89PNG\r\n\x1a\n" and w == 1280 and 150 <= h <= 4000,
                  "png %s: sane size %dx%d" % (name, w, h))


def main():
    render = "--svg-render" in sys.argv
    if render and not shutil.which("rsvg-convert"):
        print("SKIP: rsvg-convert not installed (Debian package librsvg2-bin; scripts/setup.sh)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        multi = multi_bundle(tmp)
        hostile, hostile_host = hostile_bundles(tmp)
        if not render:
            test_text_and_json(multi)
        test_svg(multi, hostile, hostile_host, tmp, render)
    print("%d passed, %d failed" % (RESULTS["passed"], RESULTS["failed"]))
    return 1 if RESULTS["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
