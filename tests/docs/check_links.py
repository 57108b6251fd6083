#!/usr/bin/env python3
"""Every relative link of the README and docs/*.md resolves: the file exists,
and a #anchor names a heading of it (GitHub's slugs). Exit 1 on a broken one."""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LINK = re.compile(r"\]\(([^)\s]+)\)")


def slug(heading):
    t = heading.lstrip("#").strip().lower()
    t = re.sub(r"[^\w\- ]", "", t)
    return t.replace(" ", "-")


def anchors(path):
    out, fence = set(), False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                fence = not fence
            elif not fence and line.startswith("#"):
                out.add(slug(line.rstrip("\n")))
    return out


def main():
    files = [os.path.join(ROOT, "README.md")] + sorted(
        os.path.join(ROOT, "docs", f) for f in os.listdir(os.path.join(ROOT, "docs"))
        if f.endswith(".md"))
    bad = 0
    for src in files:
        text = open(src, encoding="utf-8").read()
        text = re.sub(r"```.*?```", "", text, flags=re.S)
        for url in LINK.findall(text):
            if re.match(r"^[a-z]+:", url):
                continue
            path, _, frag = url.partition("#")
            target = os.path.normpath(os.path.join(os.path.dirname(src), path)) if path else src
            if not os.path.exists(target):
                print(f"{os.path.relpath(src, ROOT)}: {url}: no such file")
                bad += 1
            elif frag and target.endswith(".md") and frag not in anchors(target):
                print(f"{os.path.relpath(src, ROOT)}: {url}: no heading #{frag}")
                bad += 1
    print(f"{len(files)} files, {bad} broken link(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
