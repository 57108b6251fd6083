#!/usr/bin/env python3
"""The emitter-catalog gate: does the KB recognize what the emitters can print?

Each catalog (kb/catalog/<emitter>.tsv, format in kb/catalog/README.md) lists
messages an emitter's source or official documentation can print, with a
concrete rendered line, the transport it reaches a log by, and what Reflex
must do with it: FAULT (an event with the row's fault class), SYMPTOM (a
symptom event) or BENIGN (nothing that is a fault or a symptom).

The gate writes ONE temporary incident bundle with one host per row (the line
framed as its transport delivers it: a kernel line in kern.log as syslog
writes it, a daemon's syslog line, a job's output verbatim, or a named file),
runs `reflex events` once, and scores per emitter:

  FAULT    recognized: >= 1 event with a fault class; class: one has the row's class
  SYMPTOM  recognized: >= 1 event that is a symptom or has a fault class
  BENIGN   flagged:    >= 1 event that is a symptom or has a fault class

Symptoms come from the KB itself (`reflexc graph --format json`), classes
from `reflex events`; no message pattern or meaning lives here.

Exit status: 0 every floor met, 1 a floor missed or a catalog malformed, 2
usage or a failed run.
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "pylib"))
from reflex_tables import events_by_host, unescape  # noqa: E402

COLUMNS = ["id", "emitter", "version", "source", "level", "format", "line", "transport",
           "expect", "class", "meaning"]
EXPECTS = ("FAULT", "SYMPTOM", "BENIGN")
# Floors (percent): the gate.
FLOORS = {"fault_recognized": 95.0, "fault_class": 90.0, "symptom_recognized": 90.0,
          "benign_flagged_max": 2.0}
BASE_TIME = (2026, 12, 7, 4, 0, 0)
MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()


def standard_classes(kb):
    """The standard classes: `class NAME "..."` without a parent, in kb/."""
    names = set()
    paths = []
    if os.path.isdir(kb):
        for root, _, files in os.walk(kb):
            paths += [os.path.join(root, f) for f in files if f.endswith(".rfx")]
    pat = re.compile(r'^\s*class\s+([A-Za-z_]\w*)\s+"')
    for p in paths:
        with open(p, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = pat.match(line)
                if m:
                    names.add(m.group(1))
    return names


class Catalog:
    def __init__(self):
        self.rows = []
        self.errors = []


def read_catalog(path, classes, cat):
    where0 = os.path.relpath(path)
    with open(path, encoding="utf-8", newline="") as f:
        raw = [l.rstrip("\r\n") for l in f]
    header = None
    for n, line in enumerate(raw, 1):
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if header is None:
            header = cells
            missing = [c for c in COLUMNS if c not in header]
            if missing:
                cat.errors.append(f"{where0}:{n}: header lacks {', '.join(missing)}")
                return
            continue
        where = f"{where0}:{n}"
        if len(cells) != len(header):
            cat.errors.append(f"{where}: {len(cells)} cells, the header has {len(header)}")
            continue
        r = dict(zip(header, cells))
        r = {k: v.strip() for k, v in r.items()}
        r["where"] = where
        r["file"] = where0
        bad = []
        if not r["id"]:
            bad.append("empty id")
        if r["expect"] not in EXPECTS:
            bad.append(f"expect {r['expect']!r} is not one of {', '.join(EXPECTS)}")
        if r["expect"] == "FAULT" and classes and r["class"] not in classes:
            bad.append(f"class {r['class']!r} is not a standard class")
        if r["expect"] != "FAULT" and r["class"] not in ("", "-"):
            bad.append(f"{r['expect']} row with class {r['class']!r} (use -)")
        if not r["source"] or r["source"] == "-":
            bad.append("no source")
        if not r["line"]:
            bad.append("no line")
        t = r["transport"]
        if not (t in ("kernel", "syslog", "app") or (t.startswith("file:") and valid_name(t[5:]))):
            bad.append(f"transport {t!r} is not kernel, syslog, app or file:NAME")
        if bad:
            cat.errors.append(f"{where}: " + "; ".join(bad))
            continue
        cat.rows.append(r)


def valid_name(name):
    return bool(name) and "/" not in name and name not in (".", "..") and not name.startswith(".")


def clock(i):
    """The syslog stamp of BASE_TIME plus i seconds."""
    y, mo, d, h, mi, s = BASE_TIME
    s += i
    mi += s // 60
    s %= 60
    h += mi // 60
    mi %= 60
    return f"{MONTHS[mo - 1]} {d:2d} {h:02d}:{mi:02d}:{s:02d}"


def write_bundle(rows, root):
    hosts = []
    used = set()
    for k, r in enumerate(rows):
        host = "c-" + re.sub(r"[^A-Za-z0-9_.-]", "_", r["id"])
        while host in used:
            host += "_"
        used.add(host)
        r["host"] = host
        d = os.path.join(root, "hosts", host)
        os.makedirs(d)
        lines = unescape(r["line"]).split("\n")
        t = r["transport"]
        if t == "kernel":
            name = "kern.log"
            lines = [f"{clock(i)} {host} kernel: {l}" for i, l in enumerate(lines)]
        elif t == "syslog":
            name = "syslog"
            lines = [f"{clock(i)} {host} {l}" for i, l in enumerate(lines)]
        elif t == "app":
            name = "train.log"
        else:
            name = t[5:]
        with open(os.path.join(d, name), "a", encoding="utf-8", newline="\n") as f:
            for l in lines:
                f.write(l + "\n")
        hosts.append({"name": host})
    with open(os.path.join(root, "topology.json"), "w", encoding="utf-8") as f:
        json.dump({"cluster": "catalog-gate", "hosts": hosts}, f)


def symptom_events(reflexc, kb):
    p = subprocess.run([reflexc, "graph", "--format", "json", kb],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        raise RuntimeError(f"reflexc graph exited {p.returncode}")
    g = json.loads(p.stdout)
    return {n["name"] for n in g["nodes"] if n.get("symptom")}


def judge(row, events, symptoms):
    faults = [e for e in events if e.get("fault_class")]
    loud = [e for e in events if e.get("fault_class") or e["event"] in symptoms]
    got = sorted({e["event"] for e in events})
    if row["expect"] == "FAULT":
        ok = bool(faults)
        right = any(e["fault_class"] == row["class"] for e in faults)
        got_cls = sorted({e["fault_class"] for e in faults})
        return ok, right, got, got_cls
    if row["expect"] == "SYMPTOM":
        return bool(loud), None, got, []
    return not loud, None, got, []


def pct(a, b):
    return 100.0 * a / b if b else None


def fmt(p):
    return "-" if p is None else f"{p:.1f}%"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reflex", required=True, help="the reflex binary")
    ap.add_argument("--reflexc", help="the reflexc binary (default: beside reflex)")
    ap.add_argument("--kb", required=True, help="knowledge base directory")
    ap.add_argument("--show-misses", action="store_true", help="list every row that misses")
    ap.add_argument("--format", choices=["text", "markdown", "json"], default="text")
    ap.add_argument("--min-rows", type=int, default=0,
                    help="fail unless the catalogs hold at least this many rows")
    ap.add_argument("--no-floors", action="store_true", help="report only, exit 0 unless malformed")
    ap.add_argument("--by", choices=["emitter", "file"], default="emitter",
                    help="rows of the report (and floors): per emitter, or per catalog file")
    ap.add_argument("catalogs", nargs="+", help="catalog .tsv files or directories of them")
    a = ap.parse_args(argv)
    reflexc = a.reflexc or os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(a.reflex))),
                                        "reflexc", "reflexc")
    paths = []
    for c in a.catalogs:
        if os.path.isdir(c):
            paths += sorted(os.path.join(c, f) for f in os.listdir(c) if f.endswith(".tsv"))
        else:
            paths.append(c)
    if not paths:
        print("catalog_gate: no catalog given", file=sys.stderr)
        return 2
    classes = standard_classes(a.kb)
    cat = Catalog()
    for p in paths:
        try:
            read_catalog(p, classes, cat)
        except OSError as e:
            print(f"catalog_gate: {p}: {e.strerror}", file=sys.stderr)
            return 2
    seen = {}
    for r in cat.rows:
        key = (r["file"], r["id"])
        if key in seen:
            cat.errors.append(f"{r['where']}: id {r['id']} repeats {seen[key]}")
        seen[key] = r["where"]
    try:
        symptoms = symptom_events(reflexc, a.kb)
        with tempfile.TemporaryDirectory(prefix="reflex-catalog-") as tmp:
            write_bundle(cat.rows, tmp)
            by_host = events_by_host(a.reflex, a.kb, tmp)
    except (RuntimeError, OSError, ValueError) as e:
        print(f"catalog_gate: {e}", file=sys.stderr)
        return 2

    stats = collections.OrderedDict()
    misses = []
    for r in cat.rows:
        key = r["emitter"] if a.by == "emitter" else os.path.splitext(os.path.basename(r["file"]))[0]
        s = stats.setdefault(key, collections.Counter())
        ok, right, got, got_cls = judge(r, by_host.get(r["host"], []), symptoms)
        e = r["expect"]
        s[e] += 1
        if e == "FAULT":
            s["fault_ok"] += ok
            s["fault_class"] += bool(right)
            if not right:
                misses.append((r, "not recognized" if not ok else
                               f"class {', '.join(got_cls)} (want {r['class']})", got))
        elif e == "SYMPTOM":
            s["symptom_ok"] += ok
            if not ok:
                misses.append((r, "no symptom event", got))
        else:
            s["benign_flagged"] += not ok
            if not ok:
                misses.append((r, "benign line flagged", got))

    total = collections.Counter()
    for s in stats.values():
        total.update(s)
    report = []
    failed = []

    def line_for(name, s):
        d = {"emitter": name, "rows": s["FAULT"] + s["SYMPTOM"] + s["BENIGN"],
             "fault": s["FAULT"], "fault_recognized": pct(s["fault_ok"], s["FAULT"]),
             "fault_class": pct(s["fault_class"], s["FAULT"]),
             "symptom": s["SYMPTOM"], "symptom_recognized": pct(s["symptom_ok"], s["SYMPTOM"]),
             "benign": s["BENIGN"], "benign_flagged": pct(s["benign_flagged"], s["BENIGN"])}
        bad = []
        if d["fault_recognized"] is not None and d["fault_recognized"] < FLOORS["fault_recognized"]:
            bad.append("fault recognized")
        if d["fault_class"] is not None and d["fault_class"] < FLOORS["fault_class"]:
            bad.append("fault class")
        if d["symptom_recognized"] is not None and \
                d["symptom_recognized"] < FLOORS["symptom_recognized"]:
            bad.append("symptom recognized")
        if d["benign_flagged"] is not None and d["benign_flagged"] > FLOORS["benign_flagged_max"]:
            bad.append("benign flagged")
        d["below"] = bad
        return d

    for name, s in stats.items():
        d = line_for(name, s)
        report.append(d)
        if d["below"]:
            failed.append(f"{name}: {', '.join(d['below'])}")
    all_d = line_for("all", total)
    if all_d["below"]:
        failed.append(f"all: {', '.join(all_d['below'])}")
    if a.min_rows and all_d["rows"] < a.min_rows:
        failed.append(f"all: {all_d['rows']} rows, fewer than {a.min_rows}")

    if a.format == "json":
        print(json.dumps({"emitters": report, "all": all_d, "floors": FLOORS,
                          "errors": cat.errors, "failed": failed,
                          "misses": [{"id": r["id"], "file": r["where"], "why": why, "events": got}
                                     for r, why, got in misses]}, indent=1))
    else:
        md = a.format == "markdown"
        head = ["emitter" if a.by == "emitter" else "catalog", "rows", "FAULT", "recognized", "right class", "SYMPTOM", "recognized",
                "BENIGN", "flagged"]
        rows = [[d["emitter"], str(d["rows"]), str(d["fault"]), fmt(d["fault_recognized"]),
                 fmt(d["fault_class"]), str(d["symptom"]), fmt(d["symptom_recognized"]),
                 str(d["benign"]), fmt(d["benign_flagged"])] for d in report + [all_d]]
        if md:
            print("| " + " | ".join(head) + " |")
            print("|" + "---|" * len(head))
            for r in rows:
                r[0] = f"**{r[0]}**" if r[0] == "all" else r[0]
                print("| " + " | ".join(r) + " |")
        else:
            w = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
            print("  ".join(h.ljust(w[i]) for i, h in enumerate(head)))
            for r in rows:
                print("  ".join(c.ljust(w[i]) for i, c in enumerate(r)))
            print(f"floors: FAULT recognized >= {FLOORS['fault_recognized']:g}%, right class >= "
                  f"{FLOORS['fault_class']:g}%, SYMPTOM recognized >= "
                  f"{FLOORS['symptom_recognized']:g}%, BENIGN flagged <= "
                  f"{FLOORS['benign_flagged_max']:g}% (each emitter and all)")
        if a.show_misses and misses:
            print(f"\nmisses ({len(misses)}):")
            for r, why, got in misses:
                print(f"  {r['where']} {r['id']} [{r['expect']} {r['class']}] {why}; events: "
                      f"{', '.join(got) or 'none'}")
                print(f"      {unescape(r['line'])[:200]}")
    for e in cat.errors:
        print(f"catalog_gate: error: {e}", file=sys.stderr)
    if cat.errors:
        return 1
    if failed and not a.no_floors:
        for f in failed:
            print(f"catalog_gate: below the floor: {f}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
