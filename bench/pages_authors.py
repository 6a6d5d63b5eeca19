#!/usr/bin/env python3
"""The author field on the extraction development set, page by page
(issue 28, docs/extraction.md "Author"): runs build/release/bench/pages_extract
over the set and, for every page whose annotation names an author, prints
the pages where newsd's author is missing or differs from the annotated
string: expected, got, the half (bench/pages_split.py) and where the first
annotated name occurs in the page's HTML (JSON-LD, a <meta>, or the markup
around it), so misses can be grouped by kind. Ends with the counts: found,
exact, wrong (an author given that shares no word with the annotation:
the author field's precision counts those against it), per half and in all.
Figures only; asserts nothing. Run bench/pages_split.py first (it unpacks
the pages into OUT).

    bench/pages_authors.py DEVSET [OUT] [--all] [--extra]

--all prints the authors that share a word with the annotation too;
--extra the authors given on pages whose annotation names none."""
import html
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pages_split import half  # noqa: E402

TOOL = "build/release/bench/pages_extract"


def words(text):
    return {w.lower() for w in re.findall(r"\w{2,}", text or "")}


def where(raw, name):
    """The first place the name (or its first word pair) occurs in the HTML."""
    probe = name.split(";")[0].split(",")[0].strip()
    for needle in (probe, " ".join(probe.split()[:2]), probe.split()[-1] if probe.split() else probe):
        if not needle:
            continue
        i = raw.find(needle)
        if i < 0:
            i = raw.find(html.escape(needle))
        if i >= 0:
            before = raw[max(0, i - 160):i]
            kind = "json-ld" if "ld+json" in raw[max(0, i - 20000):i].split("</script>")[-1] else \
                "meta" if "<meta" in before[before.rfind("<"):] else "markup"
            snip = re.sub(r"\s+", " ", raw[max(0, i - 160):i + len(needle) + 60])
            return kind, snip
    return "absent", ""


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    devset = args[0]
    out = args[1] if len(args) > 1 else "build/pages-split"
    rows, gold = [], {}
    with open(os.path.join(devset, "expectations.jsonl"), encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            name = os.path.basename(rec["file"])[:-3]
            gold[name] = rec
            rows.append(f"{name}\t{rec.get('url') or '-'}\t{os.path.join(out, 'pages', name)}\n")
    res = subprocess.run([TOOL], input="".join(rows).encode(), stdout=subprocess.PIPE, check=True)
    got = {r["file"]: r for r in map(json.loads, [l for l in res.stdout.decode().split("\n") if l.strip()])}
    named = found = exact = wrong = extra = 0
    halves = {h: [0, 0, 0, 0] for h in ("tuning", "held-out")}  # named found exact wrong
    for name, g in gold.items():
        want = g.get("author")
        want = "; ".join(want) if isinstance(want, list) else want
        have = got.get(name, {}).get("author")
        if not want:
            given = bool(have) and "author" in g
            extra += given
            if given and "--extra" in sys.argv:
                print(f"EXTRA\t{half(name)}\t{name}\t{have!r}")
            continue
        named += 1
        found += bool(have)
        exact += have == want
        miss = not have
        # the annotated name itself is never wrong, even one with no word
        # of two letters ("R. R.")
        bad = bool(have) and have != want and not (words(have) & words(want))
        wrong += bad
        for k, v in enumerate((1, bool(have), have == want, bad)):
            halves[half(name)][k] += v
        if have == want or (not miss and not bad and "--all" not in sys.argv):
            continue
        with open(os.path.join(out, "pages", name), "rb") as fh:
            raw = fh.read().decode("utf-8", "replace")
        kind, snip = where(raw, want)
        print(f"{'MISS' if miss else 'WRONG' if bad else 'DIFF'}\t{half(name)}\t{name}\n"
              f"  want {want!r}\n  got  {have!r}\n  at   {kind}: {snip}\n")
    for h, (n, f, e, w) in halves.items():
        print(f"{h:9} named {n}: found {f}, exact {e}, wrong {w}")
    print(f"named {named}: found {found} ({found / max(named, 1):.3f}), exact {exact}, "
          f"wrong (no shared word) {wrong}; author given where the annotation says none: {extra}")


if __name__ == "__main__":
    main()
