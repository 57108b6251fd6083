#!/usr/bin/env python3
"""Stands in for `journalctl -f -o json` in tests: prints the entries of a
JSONL file (each has __CURSOR), after --after-cursor=C when given, `--delay`
seconds between batches of 50, then exits (or, with --follow, idles until
killed, bounded)."""
import argparse
import json
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("file")
ap.add_argument("--delay", type=float, default=0)
ap.add_argument("--follow", action="store_true")
ap.add_argument("--after-cursor", default="")
a, _ = ap.parse_known_args()
entries = [ln for ln in open(a.file) if ln.strip()]
start = 0
if a.after_cursor:
    for i, ln in enumerate(entries):
        if json.loads(ln)["__CURSOR"] == a.after_cursor:
            start = i + 1
            break
    else:
        sys.exit("fake journalctl: cursor not found")
for i, ln in enumerate(entries[start:]):
    sys.stdout.write(ln)
    if a.delay and i % 50 == 49:
        sys.stdout.flush()
        time.sleep(a.delay)
sys.stdout.flush()
if a.follow:
    time.sleep(300)
