#!/usr/bin/env python3
"""CI's clang 14 frontend pass (`make test` runs it through `make clang-ci`).

Runs clang-tidy (the clang frontend: parse, Sema, template instantiation, every
-Wall -Wextra -Werror warning of the compile command) over every translation
unit of a clang-configured build tree's compile_commands.json, JOBS at a time,
with one check on top: readability-function-size (no function of
120 lines or more, counted from its opening brace's line to its closing one's). Cheaper than a clang codegen build of the
whole tree; the fuzz targets' libraries are also fully compiled by clang
(-O1, ASan) in the same CI step.

Exit status: 1 when any TU has a compiler error (clang rejects it or a warning
under -Werror); long functions are listed and fail only with --gate-size (the
lead switches it on with `make test FUNCTION_SIZE_GATE=1`, or by changing the
Makefile's default, once the remaining long functions are split).

Excluded, on purpose: the ANTLR-generated parser (build tree's
grammar/generated/: third-party generated code, compiled with -w, and compiled
by clang in the fuzz build anyway). Nothing else is skipped.
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import time

THRESHOLD = 120


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build_dir")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--gate-size", action="store_true",
                    help="fail when a function has %d lines or more" % THRESHOLD)
    ap.add_argument("--clang-tidy", default="clang-tidy-14")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per TU")
    a = ap.parse_args()
    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(a.build_dir, "compile_commands.json")) as f:
        db = json.load(f)
    gen = os.path.join(os.path.abspath(a.build_dir), "grammar", "generated") + os.sep
    files = sorted({os.path.abspath(e["file"]) for e in db})
    skipped = [p for p in files if p.startswith(gen)]
    files = [p for p in files if not p.startswith(gen)]
    # Headers of the project are checked too (reported once, below).
    hdr = "^" + re.escape(src) + "/(compiler|model|runtime|tools|include|sim|tests|bench|examples)/"
    # clang-tidy counts the lines after the opening brace's up to the closing
    # brace's (a one-line body between braces is 2); "N lines" below counts
    # both brace lines, so < 120 of those is a LineThreshold of 118.
    config = ("{CheckOptions: [{key: readability-function-size.LineThreshold, value: %d}]}"
              % (THRESHOLD - 2))

    def run(path):
        cmd = [a.clang_tidy, "-p", a.build_dir, "--quiet", "-checks=-*,readability-function-size",
               "-config=" + config, "-header-filter=" + hdr, path]
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               errors="replace", timeout=a.timeout)
            return path, p.returncode, p.stdout
        except subprocess.TimeoutExpired:
            return path, 124, "timeout after %d s\n" % a.timeout

    t0 = time.time()
    failed, long_fns = [], {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        for path, rc, out in ex.map(run, files):
            lines = out.splitlines()
            for i, l in enumerate(lines):
                m = re.match(r"(.*?):(\d+):\d+: warning: function '(.*)' exceeds", l)
                if m:
                    size = ""
                    for n in lines[i + 1:i + 6]:
                        s = re.search(r"(\d+) lines including whitespace", n)
                        if s:
                            size = str(int(s.group(1)) + 1)
                            break
                    key = (os.path.relpath(m.group(1), src), int(m.group(2)))
                    long_fns[key] = (m.group(3), size)
            if rc != 0 and re.search(r"error: |timeout after", out):
                failed.append(path)
                print("== clang rejects %s" % os.path.relpath(path, src))
                print("\n".join(l for l in lines if not l.startswith("Suppressed ")
                                and "Use -header-filter" not in l))
    print("clang frontend: %d translation units in %.0f s (%d jobs), %d rejected; "
          "excluded: %d generated ANTLR files" % (len(files), time.time() - t0, a.jobs,
                                                  len(failed), len(skipped)))
    for (path, line), (fn, size) in sorted(long_fns.items()):
        print("function-size: %s:%d: %s lines: %s" % (path, line, size, fn))
    print("function-size: %d functions of %d lines or more (%s)" %
          (len(long_fns), THRESHOLD, "gate ON: fails CI" if a.gate_size else
           "report only; FUNCTION_SIZE_GATE=1 makes it fail"))
    if failed or (a.gate_size and long_fns):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
