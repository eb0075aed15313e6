#!/usr/bin/env python3
"""Builds the knowledge base of one pair of benchmarks/tldr-pairs from the tldr-pages corpus.

    python3 make-slice.py CORPUS PAIR OUT      # e.g. ../shared/corpora/tldr zh /tmp/zh-kb

PAIR/slice.json lists the commands (`common/tar`, `linux/cal` ...): `chosen` are copied
from `pages/` and from `pages.PAIR/`, `distractors` from `pages/` only, unchanged and at
their relative paths (OUT/pages/common/tar.md, OUT/pages.zh/common/tar.md).
"""
import json
import os
import shutil
import sys

corpus, pair, out = sys.argv[1:4]
here = os.path.dirname(os.path.abspath(__file__))
slice_ = json.load(open(os.path.join(here, pair, "slice.json"), encoding="utf-8"))
copies = [(folder, c) for c in slice_["chosen"] for folder in ("pages", "pages." + pair)]
copies += [("pages", c) for c in slice_["distractors"]]
for folder, command in copies:
    src = os.path.join(corpus, folder, command + ".md")
    dst = os.path.join(out, folder, command + ".md")
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copyfile(src, dst)
print(f"{pair}: {len(copies)} pages in {out}")
