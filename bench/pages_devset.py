#!/usr/bin/env python3
"""newsd's extractor on the extraction development set (make bench-pages,
docs/extraction.md): decompresses DEVSET/pages/*.html.gz into OUT/pages once,
runs build/release/bench/pages_extract over them (the page's annotated URL
resolves links and tells a site root), writes OUT/newsd.jsonl and prints the
set's own score.py figures (precision, recall, F1, author), pages/s of the
extraction alone, and the pages left out as no article.

    bench/pages_devset.py DEVSET [OUT] [--misses N]
Figures only; asserts nothing."""
import gzip
import json
import os
import subprocess
import sys

TOOL = "build/release/bench/pages_extract"


def unpack(devset, out, records=None):
    """(name, url, path) of every page, decompressed into OUT/pages once;
    records (a dict), when given, gets each page's expectations by name."""
    rows = []
    os.makedirs(os.path.join(out, "pages"), exist_ok=True)
    with open(os.path.join(devset, "expectations.jsonl"), encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            name = os.path.basename(rec["file"])[:-3]
            path = os.path.join(out, "pages", name)
            if not os.path.exists(path):
                with gzip.open(os.path.join(devset, rec["file"]), "rb") as src, open(path, "wb") as dst:
                    dst.write(src.read())
            if records is not None:
                records[name] = rec
            rows.append((name, rec.get("url") or "-", path))
    return rows


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    misses = []
    if "--misses" in sys.argv:
        misses = ["--misses", sys.argv[sys.argv.index("--misses") + 1]]
        args = [a for a in args if a != misses[1]]
    devset = args[0]
    out = args[1] if len(args) > 1 else "build/devset"
    rows = unpack(devset, out)
    listing = "".join(f"{n}\t{u}\t{p}\n" for n, u, p in rows)
    res = subprocess.run([TOOL], input=listing.encode(), stdout=subprocess.PIPE, check=True)
    result = os.path.join(out, "newsd.jsonl")
    with open(result, "wb") as fh:
        fh.write(res.stdout)
    recs = [json.loads(l) for l in res.stdout.decode().splitlines() if l.strip()]
    secs = sum(r["seconds"] for r in recs)
    skipped = [r["file"] for r in recs if not r["readerable"]]
    print(f"newsd on {len(recs)} pages: {len(recs) - len(skipped)} extracted, "
          f"{len(skipped)} left out as no article; {len(recs) / secs:.0f} pages/s (extraction CPU)")
    sys.stdout.flush()
    subprocess.run([sys.executable, os.path.join(devset, "score.py"), result] + misses, check=True)


if __name__ == "__main__":
    main()
