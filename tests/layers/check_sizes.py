#!/usr/bin/env python3
"""The size gate: no C++ file over 800 lines, no class or struct over 600.

A file that grows past ~800 lines, or a class past ~600, is asking to be
split (the function gate, 120 lines, runs in clang-ci). Generated code (the
ANTLR parser, build trees) and fuzz corpora are not looked at. A class is
measured from the line of `class X ... {` to the line of its closing brace,
inline member bodies included; comments and string literals do not count as
braces; member functions defined out of line count towards
their class. Prints `file:line: ...` for each breach and fails; `--report N`
also lists the N largest files and classes; `--self-test` runs the checker on
a small tree with one file and one class too long, so the gate can be seen to
fail.
"""
import argparse
import os
import re
import sys
import tempfile

FILE_LIMIT = 800
CLASS_LIMIT = 600
SOURCE = re.compile(r"\.(h|hpp|cpp|cc|c)$")
SKIP_DIRS = re.compile(r"^(build.*|\.git|generated|corpus_.*|node_modules)$")
CLASS_HEAD = re.compile(r"\b(class|struct|union)\s+(?:alignas\([^)]*\)\s*)?([A-Za-z_][\w:]*)[^;{()=]*\{")
# An out-of-line member function definition at namespace level: `R X::f(...) ... {`.
MEMBER_DEF = re.compile(r"^[^\s#}][^;{}]*?\b([A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)::~?[A-Za-z_]\w*\s*\([^;{}]*\{", re.M)


def strip_comments_and_strings(text):
    """The text with comments, string and char literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == 'R' and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^()\\\s]{0,16})\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # digit separator 1'000
                out.append(c)
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = min(j + 1, n)
        else:
            out.append(c)
            i += 1
    return "".join(out)


def matching_brace(code, j):
    """Index of the brace closing the one at j (or the end of the text)."""
    depth = 0
    while j < len(code):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0:
                return j
        j += 1
    return j


def member_definitions(code):
    """{class name: lines of its member functions defined outside the class}."""
    lines = {}
    for m in MEMBER_DEF.finditer(code):
        end = matching_brace(code, m.end() - 1)
        n = code.count("\n", m.start(), end) + 1
        lines[m.group(1)] = lines.get(m.group(1), 0) + n
    return lines


def classes(text):
    """(name, first line, last line) of every class/struct/union definition."""
    code = strip_comments_and_strings(text)
    found = []
    for m in CLASS_HEAD.finditer(code):
        # `enum class X {` is an enumeration, not a class.
        before = code[max(0, m.start() - 12):m.start()]
        if re.search(r"\benum\s+$", before):
            continue
        j = matching_brace(code, m.end() - 1)
        first = code.count("\n", 0, m.start()) + 1
        last = code.count("\n", 0, j) + 1
        found.append((m.group(2), first, last))
    return found


def sources(root):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not SKIP_DIRS.match(d))
        for fn in sorted(filenames):
            if SOURCE.search(fn):
                yield os.path.join(dirpath, fn)


def check(root, report=0, out=sys.stdout):
    breaches = 0
    sizes = []
    defs = []        # (name, rel, first line, length of the definition)
    outside = {}     # class name -> lines of members defined outside it
    for path in sources(root):
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        sizes.append((lines, rel))
        if lines > FILE_LIMIT:
            print("%s:1: file of %d lines (limit %d): split it by job" % (rel, lines, FILE_LIMIT), file=out)
            breaches += 1
        defs += [(name, rel, first, last - first + 1) for name, first, last in classes(text)]
        for name, n in member_definitions(strip_comments_and_strings(text)).items():
            outside[name] = outside.get(name, 0) + n
    # Members defined out of line count towards their class, so moving bodies
    # out of a class definition does not make a large class small.
    by_last = {}
    for name, *_ in defs:
        by_last.setdefault(name.split("::")[-1], []).append(name)
    extra = {}
    for key, n in outside.items():
        if any(d[0] == key for d in defs):
            extra[key] = extra.get(key, 0) + n
        elif len(by_last.get(key.split("::")[-1], [])) == 1:
            only = by_last[key.split("::")[-1]][0]
            extra[only] = extra.get(only, 0) + n
    class_sizes = []
    for name, rel, first, length in defs:
        total = length + extra.pop(name, 0)
        class_sizes.append((total, "%s:%d %s" % (rel, first, name)))
        if total > CLASS_LIMIT:
            print("%s:%d: class %s of %d lines with its members (limit %d): split it by job" %
                  (rel, first, name, total, CLASS_LIMIT), file=out)
            breaches += 1
    if report:
        print("largest files:", file=out)
        for n, rel in sorted(sizes, reverse=True)[:report]:
            print("  %5d %s" % (n, rel), file=out)
        print("largest classes (members defined outside included):", file=out)
        for n, where in sorted(class_sizes, reverse=True)[:report]:
            print("  %5d %s" % (n, where), file=out)
    print("sizes: %d C++ files, %d classes, %d over the limits (files %d, classes %d lines)" %
          (len(sizes), len(class_sizes), breaches, FILE_LIMIT, CLASS_LIMIT), file=out)
    return breaches


def self_test():
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "src"))
        os.makedirs(os.path.join(d, "build", "gen"))
        def write(rel, text):
            with open(os.path.join(d, rel), "w") as f:
                f.write(text)
        body = "".join("  int f%d() { return %d; }  // } not a brace\n" % (i, i) for i in range(CLASS_LIMIT))
        write("src/big_class.h", "#pragma once\nclass Big {\n%s};\nenum class E { a };\n" % body)
        write("src/ok.cpp", 'const char* s = "{{{";\nstruct Small { int x; };\n')
        # Small in its definition, large with the members defined out of line.
        write("src/outside.cpp", "class Wide {\n  int f();\n};\n" +
              "".join("int Wide::f%d() {\n  return 1;\n}\n" % i for i in range(CLASS_LIMIT // 3 + 1)))
        write("src/long.cpp", "int x;\n" * (FILE_LIMIT + 1))
        write("build/gen/huge.cpp", "int y;\n" * (FILE_LIMIT * 3))  # generated: ignored
        import io
        buf = io.StringIO()
        n = check(d, out=buf)
        text = buf.getvalue()
        ok = (n == 3 and "src/big_class.h:2: class Big of 602 lines" in text
              and "src/outside.cpp:1: class Wide of 606 lines" in text
              and "src/long.cpp:1: file of 801 lines" in text and "huge.cpp" not in text
              and "Small" not in text)
        print(text, end="")
        print("self-test: %s" % ("ok" if ok else "FAILED"))
        return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    ap.add_argument("--report", type=int, default=0, help="also list the N largest files and classes")
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    return 1 if check(os.path.abspath(a.root), a.report) else 0


if __name__ == "__main__":
    sys.exit(main())
