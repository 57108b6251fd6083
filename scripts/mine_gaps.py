#!/usr/bin/env python3
"""Find the next gap by machine: templates of the lines Reflex did not understand.

For every incident bundle (a directory with hosts/) or log file under the
given paths, runs `reflex events --stats --unrecognized`, which lists every
line that a KB `suspect` flags as fault-like but that no signature
recognizes. The lines are clustered into templates (a small Drain-style
miner: variable tokens masked, lines of one length and leading words grouped,
merged while at least --similarity of their tokens agree), and the most
frequent templates that no catalog row of kb/catalog/ covers are printed with
a count, the bundles they came from and one example. Each is a candidate for
a new catalog row (from the emitter's source) and its signature.

Usage:
  scripts/mine_gaps.py --reflex build/tools/reflex/reflex --kb kb tests/realworld tests/first-contact
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys

MASKS = [
    (re.compile(r"^\[?[\d:.\-T+Z ]+\]?$"), "<T>"),
    (re.compile(r"^(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?[,:)]*$"), "<PCI>"),
    (re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}(?:<\d+>|:\d+)?[,:]*$"), "<IP>"),
    (re.compile(r"^(?:0x)?[0-9a-fA-F]*\d[0-9a-fA-F]*[,:)]*$"), "<N>"),
    (re.compile(r".*\d.*"), "<*>"),
]


def mask(token):
    for rx, sub in MASKS:
        if rx.match(token):
            return sub
    return token


def tokens(line):
    return [mask(t) for t in line.split()]


class Miner:
    """Drain-style: groups by (length, first two tokens), then by similarity."""

    def __init__(self, similarity):
        self.sim = similarity
        self.groups = collections.defaultdict(list)

    def add(self, line, where):
        toks = tokens(line)
        if not toks:
            return
        key = (len(toks), tuple(toks[:2]))
        for c in self.groups[key]:
            same = sum(a == b for a, b in zip(c["template"], toks))
            if same / len(toks) >= self.sim:
                c["template"] = [a if a == b else "<*>" for a, b in zip(c["template"], toks)]
                c["count"] += 1
                c["where"].add(where)
                return
        self.groups[key].append({"template": toks, "count": 1, "example": line, "where": {where}})

    def clusters(self):
        return [c for cs in self.groups.values() for c in cs]


def inputs_under(paths):
    out = []
    for p in paths:
        if os.path.isfile(p):
            out.append(p)
            continue
        for root, dirs, _ in os.walk(p):
            if "hosts" in dirs:
                out.append(root)
                dirs[:] = []
    return sorted(out)


def catalog_templates(catalog_dir):
    templates = []
    if not os.path.isdir(catalog_dir):
        return templates
    for name in sorted(os.listdir(catalog_dir)):
        if not name.endswith(".tsv"):
            continue
        header = None
        with open(os.path.join(catalog_dir, name), encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\n")
                if not line.strip() or line.startswith("#"):
                    continue
                cells = line.split("\t")
                if header is None:
                    header = cells
                    continue
                row = dict(zip(header, cells))
                for physical in row.get("line", "").split("\\n"):
                    templates.append(tokens(physical))
    return templates


def covered(template, catalog, similarity):
    for t in catalog:
        # A catalog line covers a template when one contains the other's
        # tokens in order, mostly (prefixes such as NCCL's differ).
        if not t:
            continue
        inter = len(set(t) & set(template))
        if inter / max(len(set(template)), 1) >= similarity:
            return True
    return False


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reflex", required=True)
    ap.add_argument("--kb", required=True)
    ap.add_argument("--catalog", default=None, help="catalog directory (default KB/catalog)")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--similarity", type=float, default=0.6)
    ap.add_argument("paths", nargs="+", help="corpora: directories of bundles, bundles or log files")
    a = ap.parse_args(argv)
    miner = Miner(a.similarity)
    runs = 0
    for inp in inputs_under(a.paths):
        p = subprocess.run([a.reflex, "events", "--kb", a.kb, "--stats", "--unrecognized", inp],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            print(f"mine_gaps: {inp}: reflex events exited {p.returncode}", file=sys.stderr)
            continue
        runs += 1
        stats = None
        for line in p.stderr.splitlines():
            line = line.strip()
            if line.startswith("{"):
                try:
                    stats = json.loads(line)
                except ValueError:
                    pass
        if stats is None:
            # --stats may pretty-print over several lines.
            start = p.stderr.find("{")
            try:
                stats = json.loads(p.stderr[start:]) if start >= 0 else {}
            except ValueError:
                stats = {}
        for u in stats.get("unrecognized_samples", []):
            miner.add(u["line"], os.path.basename(os.path.normpath(inp)))
    catalog = catalog_templates(a.catalog or os.path.join(a.kb, "catalog"))
    clusters = sorted(miner.clusters(), key=lambda c: (-c["count"], c["example"]))
    gaps = [c for c in clusters if not covered(c["template"], catalog, a.similarity)]
    print(f"{runs} input(s) read; {sum(c['count'] for c in clusters)} unrecognized line(s) in "
          f"{len(clusters)} template(s); {len(gaps)} not covered by a catalog row")
    for c in gaps[: a.top]:
        print(f"\n{c['count']:6d}  {' '.join(c['template'])}")
        print(f"        in {len(c['where'])} input(s): {', '.join(sorted(c['where'])[:4])}")
        print(f"        e.g. {c['example'][:200]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
