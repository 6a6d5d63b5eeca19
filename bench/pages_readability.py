#!/usr/bin/env python3
"""readability-lxml (Debian's python3-readability) over every page folder of
a directory, for bench_pages's baseline (make bench-pages,
docs/extraction.md): one JSON line per page, {"page", "title", "html",
"seconds"}, on stdout. The page URL is the one bench_pages gives newsd's
extractor. Figures only."""
import json
import os
import sys
import time

from readability import Document

PAGE_URL = "http://fakehost/test/page.html"


def main():
    root = sys.argv[1]
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name, "source.html")
        if not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            raw = f.read()
        start = time.process_time()
        try:
            doc = Document(raw, url=PAGE_URL)
            html = doc.summary(html_partial=True)
            title = doc.short_title()
        except Exception as e:  # a page it cannot read scores zero
            html, title = "", ""
            print(f"{name}: readability-lxml failed: {e}", file=sys.stderr)
        seconds = time.process_time() - start
        print(json.dumps({"page": name, "title": title, "html": html, "seconds": seconds}))


if __name__ == "__main__":
    main()
