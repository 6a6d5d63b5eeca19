#!/usr/bin/env python3
"""The extraction development set in two halves (docs/extraction.md): a
tuning half and a held-out half, split by the first byte of the MD5 of each
page's file name (even: tuning), so the split never changes. Runs
build/release/bench/pages_extract over the set and prints, per half and
overall, the set's snippet precision, recall and F1 (as its score.py
counts them), the pages whose author the annotation names with an author
found and with the annotated string exactly, and the pages left out as no
article. A rule is kept only when it helps the held-out half too.
Figures only; asserts nothing.

    bench/pages_split.py DEVSET [OUT]"""
import hashlib
import json
import os
import re
import subprocess
import sys

from pages_devset import unpack

TOOL = "build/release/bench/pages_extract"


def norm(text):
    return re.sub(r"\s+", " ", text).strip()


def half(name):
    return "tuning" if hashlib.md5(name.encode()).digest()[0] % 2 == 0 else "held-out"


def main():
    devset = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else "build/pages-split"
    gold = {}
    rows = ["%s\t%s\t%s\n" % r for r in unpack(devset, out, gold)]
    res = subprocess.run([TOOL], input="".join(rows).encode(), stdout=subprocess.PIPE, check=True)
    got = {r["file"]: r for r in map(json.loads, [l for l in res.stdout.decode().split("\n") if l.strip()])}
    sums = {h: [0] * 7 for h in ("tuning", "held-out", "all")}  # tp fp fn named found exact left
    for name, g in gold.items():
        r = got.get(name, {})
        text = r.get("text")
        t = norm(text) if isinstance(text, str) else None
        tp = sum(1 for w in g["with"] if t is not None and norm(w) in t)
        fp = sum(1 for w in g["without"] if t is not None and norm(w) in t)
        want = g.get("author")
        want = "; ".join(want) if isinstance(want, list) else want
        for h in (half(name), "all"):
            s = sums[h]
            s[0] += tp
            s[1] += fp
            s[2] += len(g["with"]) - tp
            if want:
                s[3] += 1
                s[4] += bool(r.get("author"))
                s[5] += r.get("author") == want
            s[6] += text is None
    for h, (tp, fp, fn, named, found, exact, left) in sums.items():
        p = tp / (tp + fp) if tp + fp else 0.0
        rc = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
        print(f"{h:9} F1 {f1:.4f}  precision {p:.4f}  recall {rc:.4f}  author found {found}/{named}"
              f" ({found / max(named, 1):.3f}), exact {exact}  left out {left}")


if __name__ == "__main__":
    main()
