#!/usr/bin/env python3
"""make bench-pages's table (docs/extraction.md): newsd's extractor beside
readability-lxml (Debian's python3-readability) and Mozilla's Readability.js
(bench/pages_readability.js; skipped with a note when build/readability-js
has no node_modules) in the same run, on two sets:

  dev    the extraction development set (DEVSET: pages/*.html.gz and
         expectations.jsonl), scored by its own score.py: snippet
         precision, recall and F1, micro-averaged, as trafilatura's
         evaluation does;
  pages  tests/data/pages (PAGES: source.html, expected.html per folder):
         token precision, recall and F1 of each text against the text of
         expected.html, averaged over pages.

newsd runs through build/release/bench/pages_extract; a page newsd leaves
out as no article scores as no output. pages/s is CPU time of the
extraction alone (parsing included), one thread. With --newsd-only the
baselines are not run. Figures only; asserts nothing.

    bench/pages_table.py DEVSET PAGES [OUT] [--newsd-only]"""
import collections
import json
import os
import re
import subprocess
import sys
import time

from pages_devset import unpack

TOOL = "build/release/bench/pages_extract"
JS_DIR = "build/readability-js/node_modules"
PAGE_URL = "http://fakehost/test/page.html"
BLOCKS = re.compile(r"<(/?)(p|div|li|h[1-6]|br|tr|td|th|blockquote|section|article|pre|dd|dt|figcaption)\b", re.I)


def html_text(html):
    """Text of an HTML fragment with a line break at every block."""
    if not html:
        return ""
    import lxml.html
    try:
        return lxml.html.fromstring(BLOCKS.sub(r"\n<\1\2", html)).text_content()
    except Exception:  # an empty or odd fragment
        return ""


def dev_pages(devset, out):
    return unpack(devset, out)


def test_pages(root):
    rows = []
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name, "source.html")
        if os.path.isfile(path):
            rows.append((name, PAGE_URL, path))
    return rows


def run_lines(cmd, rows):
    listing = "".join(f"{n}\t{u}\t{p}\n" for n, u, p in rows).encode()
    res = subprocess.run(cmd, input=listing, stdout=subprocess.PIPE, check=True)
    # one record a "\n"; str.splitlines would also cut at a U+2028 in a text
    lines = [l for l in res.stdout.decode().split("\n") if l.strip()]
    return {r["file"]: r for r in map(json.loads, lines)}


def run_newsd(rows):
    return run_lines([TOOL], rows)


JS_BATCH = 50  # pages per node process: jsdom's memory grows page after page


def run_readability_js(rows):
    out = {}
    for k in range(0, len(rows), JS_BATCH):
        out.update(run_lines(["node", "bench/pages_readability.js"], rows[k:k + JS_BATCH]))
    return out


def run_readability_lxml(rows):
    from readability import Document
    out = {}
    for name, url, path in rows:
        with open(path, "rb") as f:
            raw = f.read()
        start = time.process_time()
        try:
            html = Document(raw, url=None if url == "-" else url).summary(html_partial=True)
            text = html_text(html)
        except Exception:  # a page it cannot read scores as no output
            text = None
        out[name] = {"file": name, "text": text, "seconds": time.process_time() - start}
    return out


def score_dev(devset, result, path):
    with open(path, "w", encoding="utf-8") as fh:
        for r in result.values():
            fh.write(json.dumps({"file": r["file"], "text": r.get("text")}) + "\n")
    res = subprocess.run([sys.executable, os.path.join(devset, "score.py"), path],
                         stdout=subprocess.PIPE, check=True, text=True)
    m = re.search(r"precision ([\d.]+)\s+recall ([\d.]+).*F1 ([\d.]+)", res.stdout)
    return float(m.group(1)), float(m.group(2)), float(m.group(3))


def tokens(text):
    return collections.Counter(re.findall(r"\w+", (text or "").lower()))


def score_pages(root, result):
    ps, rs, fs = [], [], []
    for name, r in result.items():
        with open(os.path.join(root, name, "expected.html"), "rb") as f:
            want = tokens(html_text(f.read().decode("utf-8", "replace")))
        got = tokens(r.get("text"))
        shared = sum((got & want).values())
        p = shared / sum(got.values()) if got else (0.0 if want else 1.0)
        rc = shared / sum(want.values()) if want else 1.0
        ps.append(p)
        rs.append(rc)
        fs.append(2 * p * rc / (p + rc) if p + rc else 0.0)
    n = len(result) or 1
    return sum(ps) / n, sum(rs) / n, sum(fs) / n


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    newsd_only = "--newsd-only" in sys.argv
    devset, pages = args[0], args[1]
    out = args[2] if len(args) > 2 else "build/pages-table"
    os.makedirs(out, exist_ok=True)
    sets = [("pages", test_pages(pages))]
    if os.path.isfile(os.path.join(devset, "expectations.jsonl")):
        sets.insert(0, ("dev", dev_pages(devset, out)))
    else:
        print(f"(the development set is left out: no {devset}/expectations.jsonl)")
    tools = [("newsd", run_newsd)]
    if not newsd_only:
        if os.path.isdir(JS_DIR):
            tools.append(("Readability.js", run_readability_js))
        else:
            print(f"(Readability.js left out: no {JS_DIR}; make bench-pages installs it)")
        tools.append(("readability-lxml", run_readability_lxml))
    print(f"{'set':6} {'tool':17} {'pages':>11} {'F1':>6} {'prec':>6} {'recall':>6} {'pages/s':>8}")
    for set_name, rows in sets:
        for tool, run in tools:
            result = run(rows)
            done = sum(1 for r in result.values() if r.get("text"))
            if set_name == "dev":
                p, r, f = score_dev(devset, result, os.path.join(out, f"{tool}.jsonl"))
            else:
                p, r, f = score_pages(pages, result)
            secs = sum(r_["seconds"] for r_ in result.values()) or 1e-9
            print(f"{set_name:6} {tool:17} {done:>5} / {len(rows):<3} {f:6.3f} {p:6.3f} {r:6.3f}"
                  f" {len(rows) / secs:8.0f}")
            if tool == "newsd":
                left = [n for n, r_ in result.items() if not r_.get("readerable")]
                print(f"{'':6} {'':17} left out as no article: {len(left)}"
                      + (f" ({', '.join(sorted(left)[:8])}{', ...' if len(left) > 8 else ''})" if left else ""))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
