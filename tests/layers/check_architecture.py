#!/usr/bin/env python3
"""docs/architecture.md against the tree it describes.

- Its layer table (`| layer | directories | may use |`) must be the one the
  include check enforces (check_layers.ALLOWED), row for row.
- Every component directory (the top-level source directories, each
  directory under runtime/ and tools/ with a CMakeLists.txt) must be named
  on the page, as `dir/` in backquotes or as a heading.
- Every repository file or directory the page names in backquotes outside
  code blocks (`runtime/engine/reasoner_walk.cpp`, `fmt_dmesg.cpp`,
  `tests/layers`) must exist: a bare file name anywhere in the tree, a path
  from the root or as the tail of one (`reflex/deploy/agent.h`).

`--self-test` runs the check on a small tree with one of each mistake.
"""
import argparse
import io
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_layers import ALLOWED  # noqa: E402

DOC = "docs/architecture.md"
TOP_COMPONENTS = ["grammar", "model", "compiler", "runtime", "sim", "tools", "kb", "include", "tests"]
SKIP_DIRS = re.compile(r"^(build.*|\.git|generated|corpus_.*|__pycache__)$")
TICKED = re.compile(r"`([^`\s]+)`")
OWN_FILE = re.compile(r"^[\w./-]+\.(cpp|h|py|sh|md|rfx|g4|tsv)$")
ROW = re.compile(r"^\|\s*`(\w+)`\s*\|[^|]*\|([^|]*)\|\s*$")


def tree(root):
    """Every file's and directory's repository-relative path, and the basenames."""
    paths, names = set(), set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not SKIP_DIRS.match(d)]
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        if rel_dir != ".":
            paths.add(rel_dir)
        for fn in filenames:
            paths.add(fn if rel_dir == "." else rel_dir + "/" + fn)
            names.add(fn)
    return paths, names


def prose(text):
    """(line number, line) of the page outside fenced code blocks."""
    fenced = False
    for no, line in enumerate(text.split("\n"), 1):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            yield no, line


def components(root):
    out = [d for d in TOP_COMPONENTS if os.path.isdir(os.path.join(root, d))]
    for parent in ("runtime", "tools"):
        base = os.path.join(root, parent)
        if os.path.isdir(base):
            out += ["%s/%s" % (parent, d) for d in sorted(os.listdir(base))
                    if os.path.isfile(os.path.join(base, d, "CMakeLists.txt"))]
    return out


def exists(token, paths, names):
    token = token.split(":")[0].rstrip("/")
    if "*" in token or re.match(r"^(\w+/)*[a-z]\.\w+$", token):  # a glob or a placeholder
        return True
    if "/" not in token:
        return token in names or token in paths
    return token in paths or any(p.endswith("/" + token) for p in paths)


def check(root, out=sys.stdout):
    path = os.path.join(root, DOC)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    errors = 0

    def say(no, msg):
        nonlocal errors
        print("%s:%d: %s" % (DOC, no, msg), file=out)
        errors += 1

    table = {}
    for no, line in prose(text):
        m = ROW.match(line)
        if m:
            uses = set(re.findall(r"`(\w+)`", m.group(2)))
            table[m.group(1)] = (no, uses)
    for layer, allowed in sorted(ALLOWED.items()):
        if layer not in table:
            say(1, "the layer table has no row for `%s` (check_layers.py has it)" % layer)
        elif table[layer][1] != allowed:
            say(table[layer][0], "layer `%s` may use %s on the page, %s in check_layers.py" %
                (layer, sorted(table[layer][1]), sorted(allowed)))
    for layer in sorted(set(table) - set(ALLOWED)):
        say(table[layer][0], "the layer table names `%s`, which check_layers.py does not know" % layer)

    named = set()
    paths, names = tree(root)
    for no, line in prose(text):
        if line.startswith("#"):
            named.update(t.rstrip("/") for t in re.findall(r"[\w./-]+/", line))
        for t in TICKED.findall(line):
            if t.endswith("/"):
                named.add(t.rstrip("/"))
            if (t.endswith("/") and t.split("/")[0] in TOP_COMPONENTS) or OWN_FILE.match(t.split(":")[0]):
                if not exists(t, paths, names):
                    say(no, "names `%s`, which the tree does not have" % t)
            elif "/" in t and t.split("/")[0] in TOP_COMPONENTS and not exists(t, paths, names):
                say(no, "names `%s`, which the tree does not have" % t)
    for comp in components(root):
        if comp not in named:
            say(1, "component `%s/` is not described on the page" % comp)
    print("architecture: %d component(s), %d mismatch(es)" % (len(components(root)), errors), file=out)
    return errors


def self_test():
    with tempfile.TemporaryDirectory() as root:
        def write(rel, text=""):
            p = os.path.join(root, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write(text)
        write("model/kb.cpp")
        write("runtime/engine/CMakeLists.txt")
        write("runtime/engine/walk.cpp")
        write("runtime/store/CMakeLists.txt")
        rows = "".join("| `%s` | x | %s |\n" % (k, ", ".join("`%s`" % u for u in sorted(v)))
                       for k, v in ALLOWED.items() if k != "sim")
        rows += "| `sim` | x | `model`, `runtime` |\n"
        write(DOC, "# A\n\n| layer | directories | may use |\n| --- | --- | --- |\n" + rows +
              "\n### model/\n\n`kb.cpp` and `runtime/`, `runtime/engine/` with `walk.cpp`, `gone.cpp`,"
              " `kb/x.rfx:LINE`\n\n```\nruntime/store/ `old.cpp`\n```\n")
        buf = io.StringIO()
        n = check(root, buf)
        text = buf.getvalue()
        expect = ["layer `sim` may use ['model', 'runtime'] on the page, ['model'] in check_layers.py",
                  "names `gone.cpp`, which the tree does not have",
                  "component `runtime/store/` is not described on the page"]
        ok = n == len(expect) and all(e in text for e in expect)
        sys.stdout.write(text)
        print("self-test:", "ok" if ok else "FAILED (%d mismatches, expected %d)" % (n, len(expect)))
        return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    return 1 if check(os.path.abspath(a.root)) else 0


if __name__ == "__main__":
    sys.exit(main())
