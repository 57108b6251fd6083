#!/usr/bin/env python3
"""Parity with a peer's own test suite: leptonai/gpud's kernel-message matchers.

Reads gpud's matcher cases (a TSV of leptonai/gpud's own test lines, kept
beside the checkout and used in place), writes ONE temporary incident bundle with one
host per case (hosts/case-<unique_id>/<file_fed>, spec interfaces.md §3), runs
`reflex events` on it once and compares, per case, what Reflex recognized with
gpud's verdict:

- a POS case is recognized when an event from that case's file is one of the
  Reflex events that gpud_equivalents.tsv lists for its gpud_name (with the
  field values listed there);
- a NONE case (gpud: benign) must produce no event, unless
  expected_differences.tsv lists the case, the events Reflex emits instead and
  why.

Exit status: 0 pass, 1 parity below --floor or a benign line flagged without an
expectation (or flagged with other events than its expectation names), 2 usage
or a failed reflex run, 77 when the cases file is absent (ctest
SKIP_RETURN_CODE). No message pattern lives here: meanings come from kb/, the
mapping from the two TSV files beside this script.
"""

import argparse
import csv
import json
import os
import sys
import tempfile

from collections import OrderedDict, defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "pylib"))
from reflex_tables import events_by_host, unescape  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77
CASE_COLUMNS = ["unique_id", "category", "gpud_component", "case_ids", "line_or_sequence",
                "kind", "file_fed", "gpud_verdict", "gpud_name", "xid_code"]


def read_tsv(path, required):
    """Rows of a TSV with a header; '#' lines and blank lines are comments."""
    with open(path, newline="", encoding="utf-8") as f:
        lines = [l for l in f if l.strip() and not l.startswith("#")]
    # Our own tables never quote: a field may start with a double quote.
    rows = list(csv.DictReader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))
    missing = [c for c in required if rows and c not in rows[0]]
    if missing:
        raise ValueError(f"{path}: missing columns {', '.join(missing)}")
    return rows


def read_cases(path):
    # gpud's table quotes the one field that holds double quotes (csv dialect).
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    if not rows or any(c not in rows[0] for c in CASE_COLUMNS):
        raise ValueError(f"{path}: not a gpud matcher-case table (columns {', '.join(CASE_COLUMNS)})")
    for r in rows:
        if r["gpud_verdict"] not in ("POS", "NONE"):
            raise ValueError(f"{path}: case {r['unique_id']}: verdict {r['gpud_verdict']!r}")
        if r["file_fed"] not in ("kern.log", "train.log"):
            raise ValueError(f"{path}: case {r['unique_id']}: file_fed {r['file_fed']!r}")
    return rows


def parse_fields(spec, where):
    """'xid=79,fatality=Fatal' -> {'xid': '79', ...}; '' or '-' -> {}."""
    out = {}
    spec = spec.strip()
    if spec in ("", "-"):
        return out
    for part in spec.split(","):
        if "=" not in part:
            raise ValueError(f"{where}: field constraint {part!r} is not NAME=VALUE")
        k, v = part.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def read_equivalents(path):
    table = defaultdict(list)
    for n, r in enumerate(read_tsv(path, ["gpud_name", "reflex_events", "fields", "why"]), 2):
        where = f"{path}: row {n}"
        if not r["why"].strip():
            raise ValueError(f"{where}: empty 'why'")
        events = {e.strip() for e in r["reflex_events"].split(",") if e.strip()}
        if not events:
            raise ValueError(f"{where}: no reflex event")
        table[r["gpud_name"].strip()].append((events, parse_fields(r["fields"], where)))
    return table


def read_expectations(path):
    out = {}
    for n, r in enumerate(read_tsv(path, ["unique_id", "reflex_events", "what_reflex_does", "why"]), 2):
        where = f"{path}: row {n}"
        uid = r["unique_id"].strip()
        if not r["why"].strip() or not r["what_reflex_does"].strip():
            raise ValueError(f"{where}: every expectation needs what Reflex does and why")
        if uid in out:
            raise ValueError(f"{where}: case {uid} listed twice")
        spec = r["reflex_events"].strip()
        events = set() if spec in ("", "-") else {e.strip() for e in spec.split(",") if e.strip()}
        out[uid] = {"events": events, "what": r["what_reflex_does"].strip(), "why": r["why"].strip()}
    return out


def same_value(want, got):
    if got is None:
        return False
    if want == got:
        return True
    try:
        return int(want, 0) == int(got, 0)
    except ValueError:
        return False


def equivalent(event, rows):
    for names, fields in rows:
        if event["event"] in names and all(
                same_value(v, (event.get("fields") or {}).get(k)) for k, v in fields.items()):
            return True
    return False


def host_of(case):
    return "case-" + case["unique_id"]


def write_bundle(cases, root, feed):
    """One host per case. feed 'as-captured' writes the lines verbatim (the
    test); 'envelope' wraps each line in a interfaces.md §4 envelope with the transport
    its file implies, which takes line-format detection out of the measure."""
    hosts = []
    for c in cases:
        host = host_of(c)
        d = os.path.join(root, "hosts", host)
        os.makedirs(d)
        lines = unescape(c["line_or_sequence"]).split("\n")
        with open(os.path.join(d, c["file_fed"]), "w", encoding="utf-8", newline="\n") as f:
            for line in lines:
                if feed == "envelope":
                    src = "kernel" if c["file_fed"] == "kern.log" else "app"
                    line = json.dumps({"host": host, "source": src, "msg": line})
                f.write(line + "\n")
        hosts.append({"name": host})
    with open(os.path.join(root, "topology.json"), "w", encoding="utf-8") as f:
        json.dump({"cluster": "gpud-parity", "hosts": hosts}, f, indent=1)


def short(text, n=110):
    text = unescape(text).replace("\n", " | ")
    return text if len(text) <= n else text[: n - 3] + "..."


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reflex", required=True, help="the reflex binary")
    ap.add_argument("--kb", required=True, help="knowledge base (sources or artifact)")
    ap.add_argument("--cases", required=True, help="gpud-matcher-cases.tsv (kept outside the project)")
    ap.add_argument("--floor", type=float, default=98.0, help="minimum parity in %% (default 98)")
    ap.add_argument("--equivalents", default=os.path.join(HERE, "gpud_equivalents.tsv"))
    ap.add_argument("--expected", default=os.path.join(HERE, "expected_differences.tsv"))
    ap.add_argument("--feed", choices=["as-captured", "envelope"], default="as-captured",
                    help="as-captured (the test): lines written verbatim; envelope (diagnosis): "
                         "each line sent as a interfaces.md §4 envelope, so misses that remain are the KB's")
    ap.add_argument("--keep", metavar="DIR", help="write the bundle to DIR (must not exist) and keep it")
    ap.add_argument("--quiet", action="store_true", help="do not list the misses one by one")
    args = ap.parse_args(argv)

    if not os.path.exists(args.cases):
        print(f"SKIP: {args.cases} is absent (the peer-parity table lives outside the project)")
        return SKIP
    try:
        cases = read_cases(args.cases)
        equivalents = read_equivalents(args.equivalents)
        expectations = read_expectations(args.expected)
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    known = {c["unique_id"] for c in cases}
    problems = [f"expectation for case {u}, which the table does not have"
                for u in expectations if u not in known]

    try:
        if args.keep:
            os.makedirs(args.keep)
            write_bundle(cases, args.keep, args.feed)
            by_host = events_by_host(args.reflex, args.kb, args.keep)
        else:
            with tempfile.TemporaryDirectory(prefix="gpud-parity-") as tmp:
                write_bundle(cases, tmp, args.feed)
                by_host = events_by_host(args.reflex, args.kb, tmp)
    except (OSError, RuntimeError, json.JSONDecodeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2

    per_cat = OrderedDict()
    misses, flagged, stale = [], [], []
    pos_total = pos_ok = 0
    for c in cases:
        uid, events = c["unique_id"], by_host.get(host_of(c), [])
        names = sorted({e["event"] for e in events})
        exp = expectations.get(uid)
        if c["gpud_verdict"] == "POS":
            pos_total += 1
            cat = per_cat.setdefault(c["category"], [0, 0])
            cat[1] += 1
            rows = equivalents.get(c["gpud_name"])
            if rows is None:
                problems.append(f"case {uid}: no row for gpud name {c['gpud_name']!r} in {args.equivalents}")
                rows = []
            if any(equivalent(e, rows) for e in events):
                pos_ok += 1
                cat[0] += 1
                if exp:
                    stale.append(f"case {uid}: recognized now, yet expected_differences.tsv says: {exp['what']}")
            else:
                misses.append((c, names, exp))
        else:
            if not events:
                if exp:
                    stale.append(f"case {uid}: not flagged now, yet expected_differences.tsv says: {exp['what']}")
                continue
            ok = exp is not None and set(names) <= exp["events"]
            flagged.append((c, names, exp, ok))

    print(f"gpud parity: {len(cases)} cases from {args.cases} (feed: {args.feed})")
    print(f"{'category':<12} recognized/total (gpud POS)")
    for cat, (ok, tot) in per_cat.items():
        print(f"{cat:<12} {ok:>4}/{tot:<4} {100.0 * ok / tot:5.1f}%")
    explained = sum(1 for _, _, e in misses if e)
    print(f"\nmissed POS: {len(misses)} ({explained} with an expectation, counted as misses all the same)")
    if not args.quiet:
        for c, names, exp in misses:
            got = ", ".join(names) if names else "no event"
            print(f"  miss {c['unique_id']:>4} {c['category']:<10} gpud {c['gpud_name']!r}: reflex {got}: {short(c['line_or_sequence'])}")
            if exp:
                print(f"       expected: {exp['what']} -- {exp['why']}")
    bad = [f for f in flagged if not f[3]]
    nones = sum(1 for c in cases if c["gpud_verdict"] == "NONE")
    print(f"\nbenign (gpud NONE) lines flagged: {len(flagged)} of {nones} "
          f"({len(flagged) - len(bad)} with an expectation, {len(bad)} without)")
    for c, names, exp, ok in flagged:
        tag = "expected" if ok else "UNEXPECTED"
        print(f"  {tag} {c['unique_id']:>4} {c['category']:<10} reflex {', '.join(names)}: {short(c['line_or_sequence'])}")
        if exp:
            print(f"       {'' if ok else 'expectation names ' + ', '.join(sorted(exp['events'])) + '; '}{exp['what']} -- {exp['why']}")
    for s in stale:
        print(f"note: stale expectation: {s}")
    for p in problems:
        print(f"error: {p}")

    parity = 100.0 * pos_ok / pos_total if pos_total else 0.0
    print(f"\nparity: {pos_ok}/{pos_total} = {parity:.1f}% of gpud's recognized lines (floor {args.floor:g}%)")
    failed = parity < args.floor or bad or problems
    print("FAIL" if failed else "PASS")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
