#!/usr/bin/env python3
"""Comments that point nowhere: issue numbers, paths outside the repository,
and names of source files or documents the repository does not have.

A comment says why, briefly, and what it points at must be there for the
reader of this repository: an issue number means nothing once the issue is
closed, a path outside the repository is not in a clone, and a comment
naming a source file that is gone sends a newcomer looking for it. Checked: the comments of
C++ sources, Python, shell, CMake, Makefile and `.rfx` files. Printed as
`file:line: ...`; `--self-test` shows the check failing on a small tree.
"""
import argparse
import io
import os
import re
import sys
import tempfile

SKIP_DIRS = re.compile(r"^(build.*|\.git|generated|corpus_.*|node_modules|__pycache__)$")
C_LIKE = re.compile(r"\.(h|hpp|cpp|cc|c|g4)$")
HASH_LIKE = re.compile(r"(\.(py|sh|cmake|rfx|yaml|yml|conf)|^CMakeLists\.txt|^Makefile)$")

# Not a public project's own tracker cited as owner/repo#N or repo-issues#N.
ISSUE = re.compile(r"(?<![\w/-])(?:[Ii]ssues?|ISSUE|[Tt]asks?)\s*#?\d+\b")
OUTSIDE = re.compile(r"\.\./shared\b|\breference/\w+\.md\b|\bspec/interfaces\.md\b|"
                     r"(?<![\w/.-])(?:domain|peers|toolchain)\.md\b")
# A file name of this repository's own kinds and style: a path under one of
# its top-level directories, or a bare lower_snake_case name. Other names (an
# emitter's `socket.cc`, PyTorch's `ProcessGroupNCCL.cpp`, `megatron/...`) are
# citations of outside sources.
OWN_NAME = re.compile(r"(?<![\w/.*-])((?:[\w-]+/)*[\w-]+\.(?:cpp|h|py|md|rfx|g4))\b")
# A section cited by name: README, "Deployment" or docs/cli.md, "Storms".
SECTION = re.compile(r'\b(README(?:\.md)?|docs/[\w-]+\.md),?\s+"([^"]+)"')


def headings(root, doc, cache={}):
    """The lower-cased headings of a markdown file of the repository, or None."""
    path = os.path.join(root, doc if doc.endswith(".md") else doc + ".md")
    if path not in cache:
        try:
            with open(path, encoding="utf-8") as f:
                cache[path] = [l.lstrip("#").strip().lower() for l in f if l.startswith("#")]
        except OSError:
            cache[path] = None
    return cache[path]


def comments_c(text):
    """(line number, comment text) of // and /* */ comments, strings skipped."""
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            yield line, text[i + 2:j]
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j
            for k, part in enumerate(text[i + 2:j].split("\n")):
                yield line + k, part
            line += text.count("\n", i, j)
            i = j + 2
        elif c == 'R' and text.startswith('R"', i) and (i == 0 or not text[i - 1].isalnum()):
            m = re.match(r'R"([^()\\\s]{0,16})\(', text[i:])
            if not m:
                i += 1
                continue
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            line += text.count("\n", i, j)
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # digit separator
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1 if j < n and text[j] == c else j
        else:
            i += 1


def comments_hash(text):
    """(line number, comment text) of # comments outside quotes and /regex/."""
    for no, raw in enumerate(text.split("\n"), 1):
        quote = None
        for k, c in enumerate(raw):
            if quote:
                if c == "\\":
                    continue
                if c == quote:
                    quote = None
            elif c in "\"'":
                quote = c
            elif c == "#" and (k == 0 or raw[k - 1] in " \t"):
                yield no, raw[k + 1:]
                break


def comments_py(text):
    """# comments and the lines of triple-quoted docstrings."""
    yield from comments_hash(text)
    for m in re.finditer(r'"""(.*?)"""', text, re.S):
        first = text.count("\n", 0, m.start()) + 1
        for k, part in enumerate(m.group(1).split("\n")):
            yield first + k, part


def repo_names(root):
    """Every file's basename and repository-relative path."""
    names = set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for fn in filenames:
            rel = os.path.relpath(os.path.join(dirpath, fn), root).replace(os.sep, "/")
            names.add(fn)
            names.add(rel)
            parts = rel.split("/")
            for k in range(1, len(parts)):
                names.add("/".join(parts[k:]))
    return names


def used_in_code(text, path, comment):
    """True when the file's code itself reads the outside path (an optional
    corpus beside the checkout, say): the comment then describes the code."""
    if not path.startswith("../shared"):
        return False
    rest = text.replace(comment, "", 1)
    return path in rest


def looks_own(name, tops):
    if "/" in name:
        return name.split("/")[0] in tops
    return re.match(r"^[a-z0-9_]+\.\w+$", name) is not None


def check(root, out=sys.stdout):
    names = repo_names(root)
    tops = {d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d))}
    problems = files = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not SKIP_DIRS.match(d))
        for fn in sorted(filenames):
            if C_LIKE.search(fn):
                extract = comments_c
            elif fn.endswith(".py"):
                extract = comments_py
            elif HASH_LIKE.search(fn):
                extract = comments_hash
            else:
                continue
            path = os.path.join(dirpath, fn)
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            files += 1
            for line, comment in extract(text):
                why = []
                if ISSUE.search(comment):
                    why.append("an issue number (%s): say the reason itself" % ISSUE.search(comment).group(0))
                if OUTSIDE.search(comment) and not used_in_code(text, OUTSIDE.search(comment).group(0),
                                                                  comment):
                    why.append("a path outside the repository (%s): cite the public source" %
                               OUTSIDE.search(comment).group(0))
                for m in SECTION.finditer(comment):
                    hs = headings(root, m.group(1))
                    if hs is not None and not any(m.group(2).lower() in h for h in hs):
                        why.append('%s, "%s", a section it does not have' % (m.group(1), m.group(2)))
                if not fn.endswith(".rfx"):  # .rfx comments cite emitters' sources
                    for m in OWN_NAME.finditer(comment):
                        if (looks_own(m.group(1), tops) and m.group(1) not in names
                                and not OUTSIDE.search(m.group(1))):
                            why.append("%s, which this repository does not have" % m.group(1))
                for w in why:
                    print("%s:%d: comment names %s" % (rel, line, w), file=out)
                    problems += 1
    print("comments: %d files, %d comments pointing nowhere" % (files, problems), file=out)
    return problems


def self_test():
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "src"))
        files = {
            "src/a.cpp": '// The parser (see lower.cpp) for issue 13.\nconst char* s = "// issue 9";\n'
                         "/* b.h is here */\n",
            "src/b.h": "#pragma once  // nothing wrong here: a.cpp, src/*_x.cpp, acme/lwa-issues#117\n"
                       '// README, "Usage" is here; README, "Gone" is not\n',
            "README.md": "# Tool\n## Usage\n",
            "src/k.rfx": "# from reference/domain.md; NCCL's socket.cc:518\npattern p = /a#b/\n",
            "CMakeLists.txt": 'set(X "# not a comment issue 5")\n',
            "t.py": 'Q = 1\n' + '"' * 3 + 'A tool.\n\nSee issue 7.' + '"' * 3 + '\nx = "issue 8"\n',
        }
        for rel, text in files.items():
            with open(os.path.join(d, rel), "w") as f:
                f.write(text)
        buf = io.StringIO()
        n = check(d, out=buf)
        text = buf.getvalue()
        ok = (n == 5 and "t.py:4: comment names an issue number (issue 7)" in text and 'src/b.h:2: comment names README, "Gone", a section it does not have' in text and "src/a.cpp:1: comment names an issue number (issue 13)" in text
              and "src/a.cpp:1: comment names lower.cpp" in text
              and "src/k.rfx:1: comment names a path outside the repository (reference/domain.md)" in text)
        print(text, end="")
        print("self-test: %s" % ("ok" if ok else "FAILED"))
        return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    return 1 if check(os.path.abspath(a.root)) else 0


if __name__ == "__main__":
    sys.exit(main())
