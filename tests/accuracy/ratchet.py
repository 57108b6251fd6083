#!/usr/bin/env python3
"""Raise the floors of tests/accuracy/*_floors.json to what `reflex eval` measures now.

A ratchet: a floor only ever goes up (a figure below its floor is a regression
to fix, not a floor to lower). Usage:
  python3 tests/accuracy/ratchet.py build/tools/reflex/reflex kb FLOORS.json DIR
"""
import json
import math
import subprocess
import sys


def main():
    if len(sys.argv) != 5:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    reflex, kb, floors_path, bundles = sys.argv[1:]
    out = subprocess.run([reflex, "eval", "--kb", kb, "--format", "json", bundles],
                         capture_output=True, text=True, check=True).stdout
    got = json.loads(out)
    with open(floors_path) as f:
        floors = json.load(f)

    def raise_to(table, key, value):
        if value is None:
            return
        new = math.floor(value)
        if new > table.get(key, -1):
            print(f"{floors_path}: {key} {table.get(key)} -> {new}")
            table[key] = new

    acc = got["accuracy"]
    raise_to(floors, "fault_class", acc["fault_class"])
    raise_to(floors, "top1_device", acc["top1_device"])
    by = floors.setdefault("by_fault_class", {})
    for g in got["by_fault_class"]:
        if g["class"].startswith("("):
            continue
        entry = by.setdefault(g["class"], {})
        raise_to(entry, "fault_class", g["fault_class"])
        raise_to(entry, "top1_device", g["top1_device"])
    with open(floors_path, "w") as f:
        json.dump(floors, f, indent=2)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
