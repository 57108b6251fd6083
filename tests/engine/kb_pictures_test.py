#!/usr/bin/env python3
"""`reflexc graph --focus/--depth/--family` and scripts/kb_pictures.sh.

Usage: kb_pictures_test.py REFLEXC SOURCE_DIR [--render]

Without --render: the focus semantics on the shipped kb/ (depth 0 is the event
alone, every rule drawn at depth 1 touches it, depth 2 holds depth 1, unknown
names are usage errors). With --render: the script draws every family with
Graphviz into a temporary directory and each picture must stay under a size
bound (exit 77, skipped, without `dot`).
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

REFLEXC, SRC = sys.argv[1], sys.argv[2]
RESULTS = {"passed": 0, "failed": 0}
MAX_PT = 8000  # per side: a page one can scroll, not the 89,627 pt of the whole graph


def check(cond, what):
    RESULTS["passed" if cond else "failed"] += 1
    if not cond:
        print("FAIL:", what)


def reflexc(*args):
    return subprocess.run([REFLEXC, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=600)


def focus(kb, event, depth, fmt="json"):
    p = reflexc("graph", "--format", fmt, "--focus", event, "--depth", str(depth), kb)
    assert p.returncode == 0, p.stderr.decode()
    return json.loads(p.stdout) if fmt == "json" else p.stdout.decode()


def test_focus(kb):
    ev = "xid79_fallen_off_bus"
    g0, g1, g2 = (focus(kb, ev, d) for d in (0, 1, 2))
    check([n["name"] for n in g0["nodes"]] == [ev] and not g0["edges"], "depth 0: the event alone")
    names1 = {n["name"] for n in g1["nodes"]}
    check(len(names1) > 1 and g1["edges"], "depth 1: neighbours")
    check(all(ev in (e["cause"], e["effect"]) for e in g1["edges"]), "depth 1: edges touch EVENT")
    check(all(e["cause"] in names1 and e["effect"] in names1 for e in g1["edges"]),
          "depth 1: edges between drawn events")
    names2 = {n["name"] for n in g2["nodes"]}
    check(names1 < names2 and len(g2["edges"]) > len(g1["edges"]), "depth 2 holds depth 1")
    dot = focus(kb, ev, 1, "dot")
    check(dot.startswith("digraph") and '"%s" [' % ev in dot and "fillcolor" in dot,
          "dot: the focus event drawn filled")
    pairs = re.findall(r'^  "([^"]+)" -> "([^"]+)"', dot, re.M)
    check(len(pairs) == len(set(pairs)), "dot: one edge per pair of events")
    p = reflexc("graph", "--focus", "no_such_event", kb)
    check(p.returncode == 2 and b"no event 'no_such_event'" in p.stderr, "unknown event: exit 2")
    p = reflexc("graph", "--family", "no_such_class", kb)
    check(p.returncode == 2 and b"no event of class" in p.stderr, "unknown family: exit 2")
    fams = reflexc("graph", "--list-families", kb).stdout.decode().split()
    check("pcie" in fams[::2] and all(c.isdigit() for c in fams[1::2]), "--list-families")


def test_render(kb, tmp):
    out = os.path.join(tmp, "pictures")
    p = subprocess.run(["bash", os.path.join(SRC, "scripts", "kb_pictures.sh"), REFLEXC, kb, out],
                       stderr=subprocess.PIPE, timeout=1200)
    check(p.returncode == 0, "kb_pictures.sh: %s" % p.stderr.decode()[-300:])
    fams = reflexc("graph", "--list-families", kb).stdout.decode().split()[::2]
    for fam in fams:
        path = os.path.join(out, fam + ".svg")
        if not os.path.exists(path):
            check(False, "%s.svg drawn" % fam)
            continue
        head = open(path).read(2000)
        m = re.search(r'<svg width="(\d+)pt" height="(\d+)pt"', head)
        check(m and int(m.group(1)) <= MAX_PT and int(m.group(2)) <= MAX_PT,
              "%s.svg under %d pt a side (%s)" % (fam, MAX_PT, m and m.groups()))
    index = open(os.path.join(out, "README.md")).read()
    check(all("(%s.svg)" % f in index for f in fams), "README.md indexes every picture")


def main():
    render = "--render" in sys.argv
    if render and not shutil.which("dot"):
        print("SKIP: Graphviz dot not installed (Debian package graphviz; scripts/setup.sh)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        # One compile, then the artifact: each graph call loads it in a moment.
        kb = os.path.join(tmp, "kb.rfxkb")
        p = reflexc("build", "-o", kb, os.path.join(SRC, "kb"))
        if p.returncode != 0:
            print(p.stderr.decode())
            return 1
        if render:
            test_render(kb, tmp)
        else:
            test_focus(kb)
    print("%d passed, %d failed" % (RESULTS["passed"], RESULTS["failed"]))
    return 1 if RESULTS["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
