#!/usr/bin/env python3
"""Rebuilds kb/ (the tldr bilingual slice) from a tldr-pages checkout.

Usage: make-slice.py TLDR_DIR OUT_DIR    (e.g. ../../../shared/corpora/tldr kb)

The slice is every page of pages.ja/, the English page of each Japanese page
whose English page is not listed in withheld-english.txt (Japanese alias pages
only when their English page is more than an alias), and the English pages of
the commands named in distractor-names.txt (in common, linux, osx, windows and
android, where they exist), minus the withheld ones. Paths keep their place
under pages/ and pages.ja/.
"""
import os
import re
import shutil
import sys

here = os.path.dirname(os.path.abspath(__file__))
tldr, out = sys.argv[1], sys.argv[2]
platforms = ["common", "linux", "osx", "windows", "android"]


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def ja_alias(path):
    return re.search("のエイリアス|エイリアスです", read(path)) is not None


withheld = set(read(os.path.join(here, "withheld-english.txt")).split())
ja = sorted(
    os.path.relpath(os.path.join(d, f), os.path.join(tldr, "pages.ja"))
    for d, _, files in os.walk(os.path.join(tldr, "pages.ja"))
    for f in files
    if f.endswith(".md")
)
en = set()
for rel in ja:
    src = os.path.join(tldr, "pages", rel)
    if rel in withheld or not os.path.exists(src):
        continue
    if not ja_alias(os.path.join(tldr, "pages.ja", rel)) or "alias of" not in read(src):
        en.add(rel)
for name in read(os.path.join(here, "distractor-names.txt")).split():
    for platform in platforms:
        rel = f"{platform}/{name}.md"
        if rel not in withheld and os.path.exists(os.path.join(tldr, "pages", rel)):
            en.add(rel)
for folder, rels in (("pages.ja", ja), ("pages", sorted(en))):
    for rel in rels:
        dst = os.path.join(out, folder, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(os.path.join(tldr, folder, rel), dst)
print(f"{len(ja)} Japanese and {len(en)} English pages written to {out}")
