"""Shared by the scripts that feed tables of lines to `reflex events` (the
peer-parity cases, the emitter catalogs): the tables' escapes, and the events
of one bundle grouped by the host directory their evidence names."""

import collections
import json
import subprocess
import sys


def unescape(text):
    """A tab is written \\t, a backslash \\\\, and the physical lines of a
    multi-line message are separated by \\n."""
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text) and text[i + 1] in "nt\\":
            out.append({"n": "\n", "t": "\t", "\\": "\\"}[text[i + 1]])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def events_by_host(reflex, kb, bundle):
    """`reflex events --kb KB BUNDLE`, by hosts/<host>/ of each event's
    evidence (a syslog host field may rename the host; the directory stays).
    RuntimeError when reflex fails."""
    p = subprocess.run([reflex, "events", "--kb", kb, bundle],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        raise RuntimeError(f"reflex events exited {p.returncode}")
    by_host = collections.defaultdict(list)
    for line in p.stdout.splitlines():
        if not line.strip():
            continue
        ev = json.loads(line)
        parts = (ev.get("evidence") or "").split(":")[0].split("/")
        if len(parts) >= 3 and parts[0] == "hosts":
            by_host[parts[1]].append(ev)
    return by_host
