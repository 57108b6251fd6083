#!/usr/bin/env python3
"""The include graph against the layers of the architecture (docs/architecture.md).

Every `#include "..."` in the source tree is resolved to a file, each file
belongs to a layer, and an include may only point down an allowed arrow:

    grammar <- compiler <- tools        model <- compiler, runtime, sim, deploy
    runtime <- capi, deploy, tools      compiler <- capi (KB sources)
    deploy (runtime/deploy: the agent and diagnoser) <- tools

A wrong arrow prints `file:line: layer X may not include Y (path)` and the
check fails. `--self-test` runs the checker on a small tree with one bad
include, so this test can be seen to fail.
"""
import argparse
import os
import re
import sys
import tempfile

# Who may include whom (a layer always includes itself).
ALLOWED = {
    "grammar": set(),
    "model": set(),
    "compiler": {"grammar", "model"},
    "runtime": {"model"},
    "capi": {"runtime", "model", "compiler"},
    "deploy": {"runtime", "model"},
    "sim": {"model"},
    "tools": {"compiler", "runtime", "model", "grammar", "sim", "capi", "deploy"},
}
# Directories checked (tests, bench and examples may reach anything).
CHECKED_DIRS = ["grammar", "model", "compiler", "runtime", "sim", "tools", "include"]
# Where `#include "reflex/x.h"`-style names are looked up after the includer's
# own directory: the include paths the targets export (each component's own
# include/ directory, found in the tree, then the public include/).
def search_dirs(root):
    dirs = ["model/include", "compiler/include"]
    rt = os.path.join(root, "runtime")
    if os.path.isdir(rt):
        dirs += sorted("runtime/%s/include" % d for d in os.listdir(rt)
                       if os.path.isdir(os.path.join(rt, d, "include")))
    return dirs + ["include", "."]
# Headers ANTLR generates from grammar/ into the build tree.
GRAMMAR_GENERATED = re.compile(r"^Reflex(Lexer|Parser|Listener|Visitor|BaseListener|BaseVisitor)\.h$")
# Components under runtime/ that are layers of their own.
RUNTIME_LAYERS = {"capi": "capi", "deploy": "deploy"}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCE = re.compile(r"\.(h|hpp|cpp|cc|c)$")


def layer_of(rel):
    """The layer of a repository-relative path, or None (outside the layers)."""
    parts = rel.split("/")
    top = parts[0]
    if top in ("grammar", "model", "compiler", "sim", "tools"):
        return top
    if top == "runtime":
        return RUNTIME_LAYERS.get(parts[1], "runtime") if len(parts) > 1 else "runtime"
    if top == "include":
        return "runtime"
    return None


def resolve(root, includer_rel, name):
    here = os.path.dirname(includer_rel)
    for d in [here] + search_dirs(root):
        cand = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(os.path.join(root, cand)):
            return cand.replace(os.sep, "/")
    return None


def check(root, out=sys.stdout):
    errors = 0
    files = 0
    for top in CHECKED_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for fn in sorted(filenames):
                if not SOURCE.search(fn):
                    continue
                path = os.path.join(dirpath, fn)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                src = layer_of(rel)
                if src is None:
                    continue
                files += 1
                with open(path, encoding="utf-8", errors="replace") as f:
                    for lineno, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        name = m.group(1)
                        target = resolve(root, rel, name)
                        if target is not None:
                            dst = layer_of(target)
                        elif GRAMMAR_GENERATED.match(os.path.basename(name)):
                            dst, target = "grammar", name
                        elif name.startswith("reflex/"):
                            print(f"{rel}:{lineno}: cannot resolve {name} (not in any include/ of the tree)",
                                  file=out)
                            errors += 1
                            continue
                        else:
                            continue  # a system or generated header outside the layers
                        if dst is None or dst == src or dst in ALLOWED[src]:
                            continue
                        print(f"{rel}:{lineno}: layer {src} may not include {dst} ({target})",
                              file=out)
                        errors += 1
    return errors, files


def self_test():
    """A tree with one wrong arrow must fail with the expected message."""
    import io
    with tempfile.TemporaryDirectory() as root:
        def write(rel, text):
            p = os.path.join(root, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write(text)
        write("model/include/reflex/kb.h", "#pragma once\n")
        write("runtime/ingest/locate.h", '#include "reflex/kb.h"\n')
        write("compiler/good.cpp", '#include "reflex/kb.h"\n#include "ReflexParser.h"\n')
        write("compiler/bad.cpp", '// a pass\n#include "../runtime/ingest/locate.h"\n')
        write("model/worse.cpp", '#include "reflex/topology.h"\n')
        write("include/reflex/topology.h", '#include "reflex/kb.h"\n')
        write("runtime/deploy/include/reflex/deploy/agent.h", '#include "reflex/topology.h"\n')
        write("runtime/deploy/agent.cpp", '#include "reflex/deploy/agent.h"\n#include "reflex/kb.h"\n')
        write("tools/reflex/cmd_agent.cpp", '#include "reflex/deploy/agent.h"\n')
        write("runtime/engine/engine.cpp", '#include "reflex/deploy/agent.h"\n')
        buf = io.StringIO()
        errors, _ = check(root, buf)
        text = buf.getvalue()
        expect = [
            "compiler/bad.cpp:2: layer compiler may not include runtime (runtime/ingest/locate.h)",
            "model/worse.cpp:1: layer model may not include runtime (include/reflex/topology.h)",
            "runtime/engine/engine.cpp:1: layer runtime may not include deploy "
            "(runtime/deploy/include/reflex/deploy/agent.h)",
        ]
        ok = errors == len(expect) and all(e in text for e in expect)
        sys.stdout.write(text)
        print("self-test:", "ok" if ok else f"FAILED ({errors} errors, expected {len(expect)})")
        return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    errors, files = check(os.path.abspath(a.root))
    print(f"{files} files checked, {errors} wrong include(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
