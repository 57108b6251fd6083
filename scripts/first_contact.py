#!/usr/bin/env python3
"""Record the first-contact answer of newly collected incident bundles.

A real incident is scored by the current KB *before* anyone changes kb/ for
it, and that first answer is kept in its truth.json as

  "first_contact": {"commit": "<git HEAD>", "date": "YYYY-MM-DD",
                    "top1": true|false|null, "fault_class": true|false,
                    "predicted": {"device": ..., "fault_class": ...}}

(`top1` is null when the source names no device). It is never overwritten: a
bundle that already has one is reported and left alone. `--report` prints the
first-contact figures over every bundle under the given directories that has
one (the README's honest figure).

Usage:
  scripts/first_contact.py --reflex build/tools/reflex/reflex --kb kb BUNDLE...
  scripts/first_contact.py --report DIR...
"""

import argparse
import datetime
import json
import os
import subprocess
import sys


def bundles_under(paths):
    out = []
    for p in paths:
        if os.path.isfile(os.path.join(p, "truth.json")):
            out.append(p)
            continue
        for root, dirs, files in os.walk(p):
            if "truth.json" in files:
                out.append(root)
                dirs[:] = []
    return sorted(out)


def git_head(repo):
    p = subprocess.run(["git", "-C", repo, "rev-parse", "--short=12", "HEAD"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    head = p.stdout.strip() if p.returncode == 0 else "unknown"
    dirty = subprocess.run(["git", "-C", repo, "status", "--porcelain", "kb"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return head + ("+kb-changes" if dirty.stdout.strip() else "")


def record(args):
    todo = []
    for b in bundles_under(args.bundles):
        with open(os.path.join(b, "truth.json"), encoding="utf-8") as f:
            truth = json.load(f)
        if "first_contact" in truth:
            print(f"{b}: first contact already recorded ({truth['first_contact'].get('commit')}); "
                  "left alone")
            continue
        todo.append((b, truth))
    if not todo:
        return 0
    p = subprocess.run([args.reflex, "eval", "--kb", args.kb, "--format", "json"] +
                       [b for b, _ in todo], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if p.returncode not in (0, 1):
        sys.stderr.write(p.stderr)
        print(f"first_contact: reflex eval exited {p.returncode}", file=sys.stderr)
        return 2
    results = {os.path.normpath(r["bundle"]): r for r in json.loads(p.stdout)["results"]}
    commit = git_head(os.path.dirname(os.path.abspath(args.kb)))
    today = datetime.date.today().isoformat()
    for b, truth in todo:
        r = results.get(os.path.normpath(b))
        if r is None:
            print(f"{b}: not scored by reflex eval", file=sys.stderr)
            continue
        pred = r["predicted"][0] if r["predicted"] else {"device": None, "fault_class": None}
        known = truth.get("device_known", True) and not truth.get("false_alarm", False)
        truth["first_contact"] = {
            "commit": commit, "date": today,
            "top1": r["top1"] if known else None,
            "fault_class": r["fault_class_ok"],
            "predicted": {"device": pred["device"], "fault_class": pred["fault_class"]},
        }
        with open(os.path.join(b, "truth.json"), "w", encoding="utf-8") as f:
            json.dump(truth, f, indent=2)
            f.write("\n")
        print(f"{b}: first contact top1={truth['first_contact']['top1']} "
              f"class={truth['first_contact']['fault_class']} ({commit})")
    return 0


def table(args):
    print("| case | class | first top-1 | first class | first answer | at | source |")
    print("|---|---|---|---|---|---|---|")
    for b in bundles_under(args.bundles):
        with open(os.path.join(b, "truth.json"), encoding="utf-8") as f:
            t = json.load(f)
        fc = t.get("first_contact")
        if not fc:
            continue
        cls = "false alarm" if t.get("false_alarm") else (t.get("root_cause") or {}).get("fault_class", "-")
        top1 = "-" if fc.get("top1") is None else ("yes" if fc["top1"] else "no")
        pred = fc.get("predicted") or {}
        answer = f"{pred.get('device') or '(none)'} {pred.get('fault_class') or ''}".strip()
        print(f"| `{os.path.basename(os.path.normpath(b))}` | {cls} | {top1} | "
              f"{'yes' if fc.get('fault_class') else 'no'} | {answer} | {fc.get('commit', '')} | "
              f"{t.get('source_url', '')} |")
    return 0


def report(args):
    n = cls = dev_n = top1 = 0
    for b in bundles_under(args.bundles):
        with open(os.path.join(b, "truth.json"), encoding="utf-8") as f:
            fc = json.load(f).get("first_contact")
        if not fc:
            continue
        n += 1
        cls += bool(fc.get("fault_class"))
        if fc.get("top1") is not None:
            dev_n += 1
            top1 += bool(fc["top1"])
    if not n:
        print("first contact: no bundle has a first_contact record")
        return 0
    print(f"first contact: {n} incidents, class {100.0 * cls / n:.1f}%"
          + (f", top-1 {100.0 * top1 / dev_n:.1f}% ({dev_n} with a known device)" if dev_n else ""))
    return 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reflex", help="the reflex binary")
    ap.add_argument("--kb", help="the knowledge base (as it is before any change for these bundles)")
    ap.add_argument("--report", action="store_true", help="print the first-contact figures")
    ap.add_argument("--table", action="store_true", help="print every recorded first answer as a markdown table")
    ap.add_argument("bundles", nargs="+")
    a = ap.parse_args(argv)
    if a.report:
        return report(a)
    if a.table:
        return table(a)
    if not a.reflex or not a.kb:
        ap.error("--reflex and --kb are needed to record a first contact")
    return record(a)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
