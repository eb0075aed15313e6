#!/usr/bin/env python3
"""Rebuilds kb/ (the Vue docs bilingual slice) from four fetched repositories.

Usage: make-slice.py VUE_DOCS VUE_DOCS_JA VUE_ROUTER PINIA OUT_DIR

Each source is either a git directory (bare clone or .git, read at the commit
pinned below) or an extracted tree of that commit. OUT_DIR is normally kb.

The slice is:
  ja/      every Markdown page under src/ of vuejs-translations/docs-ja whose
           English page under src/ of vuejs/docs is at least 500 bytes (this
           drops the placeholder pages that only mount a Vue component);
  en/      the English page (vuejs/docs src/) of each of those, except the
           ones listed in withheld-english.txt;
  router/  English-only distractors: every Markdown page under packages/docs
           of vuejs/router except zh/ (Chinese) and api/ (generated);
  pinia/   English-only distractors: the same for vuejs/pinia.
Paths keep their place under src/ or packages/docs/. Files are copied unchanged.
"""
import os
import subprocess
import sys

COMMITS = {
    "vue": "01e098a967951ea92d09b100b8e7d82c7a3369a2",      # vuejs/docs
    "vue-ja": "c627102bfabf8bc5ecaa6eb763b965a0a5d43a5b",   # vuejs-translations/docs-ja
    "router": "b19cce24aaf561b154b23cd475ca112bd61f2d10",   # vuejs/router
    "pinia": "254eec764ecccd120ab9dbc31352d76ffd6ecfa3",    # vuejs/pinia
}
MIN_BYTES = 500


class Source:
    def __init__(self, path, commit):
        self.path, self.commit = path, commit
        self.git = os.path.isdir(os.path.join(path, "objects")) and os.path.exists(
            os.path.join(path, "HEAD")
        )

    def files(self, prefix):
        if self.git:
            out = subprocess.run(
                ["git", "--git-dir", self.path, "ls-tree", "-r", "--name-only",
                 self.commit, prefix],
                check=True, capture_output=True, text=True).stdout
            names = out.split("\n")
        else:
            root = os.path.join(self.path, prefix)
            names = [
                os.path.relpath(os.path.join(d, f), self.path).replace(os.sep, "/")
                for d, _, fs in os.walk(root) for f in fs
            ]
        return sorted(n[len(prefix) + 1:] for n in names if n.endswith(".md"))

    def read(self, name):
        if self.git:
            return subprocess.run(
                ["git", "--git-dir", self.path, "cat-file", "blob",
                 f"{self.commit}:{name}"],
                check=True, capture_output=True).stdout
        with open(os.path.join(self.path, name), "rb") as f:
            return f.read()


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    vue, vue_ja, router, pinia, out = sys.argv[1:6]
    vue = Source(vue, COMMITS["vue"])
    vue_ja = Source(vue_ja, COMMITS["vue-ja"])
    router = Source(router, COMMITS["router"])
    pinia = Source(pinia, COMMITS["pinia"])
    with open(os.path.join(here, "withheld-english.txt"), encoding="utf-8") as f:
        withheld = set(f.read().split())

    en_names = set(vue.files("src"))
    plan = []  # (source, source path, kb path)
    for name in vue_ja.files("src"):
        if name not in en_names or len(vue.read("src/" + name)) < MIN_BYTES:
            continue
        plan.append((vue_ja, "src/" + name, "ja/" + name))
        if name not in withheld:
            plan.append((vue, "src/" + name, "en/" + name))
    missing = withheld - {p[2][3:] for p in plan if p[2].startswith("ja/")}
    if missing:
        sys.exit(f"withheld pages not in the slice: {sorted(missing)}")
    for src, folder in ((router, "router"), (pinia, "pinia")):
        for name in src.files("packages/docs"):
            if name.split("/")[0] in ("zh", "api"):
                continue
            plan.append((src, "packages/docs/" + name, f"{folder}/{name}"))

    counts = {}
    for src, name, rel in plan:
        dst = os.path.join(out, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "wb") as f:
            f.write(src.read(name))
        top = rel.split("/")[0]
        counts[top] = counts.get(top, 0) + 1
    print(", ".join(f"{k}: {v}" for k, v in sorted(counts.items())),
          f"({len(plan)} pages) written to {out}")


if __name__ == "__main__":
    main()
