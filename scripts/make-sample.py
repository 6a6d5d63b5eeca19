#!/usr/bin/env python3
"""Build the bundled sample of data/sample/ from the real NewsAPI data set.

Kept for reproducibility only: newsd never reads the data set at run time.
Deterministic (no randomness, no clock): the same input gives the same bytes.

    scripts/make-sample.py [--data ../shared/data] [--out data/sample]

Writes
  sources.json    a byte-for-byte copy of newsapi-sources.json (129 sources,
                  quirks such as language "se" kept)
  articles.jsonl  real articles from real/articles.jsonl, one per line, the
                  original article object with newsd's extra import keys
                  appended (ingest/imports/article_json.c):
                    country, category  the first label of the article in
                                       real/articles_labels.jsonl (same line
                                       order), when it has labels
                    headline           true for labelled articles (they were
                                       served by /v2/top-headlines), false
                                       for the others
Selection
  - headlines: every labelled article published within WINDOW_SECONDS of
    the newest labelled one (what /v2/top-headlines shows of a store that is
    no longer fed: its live window ends at the newest headline), and for
    each of COUNTRIES x the 7 categories the PER_PAIR most recent labelled
    articles whose first labels are that pair;
  - every article that mentions bitcoin (title, description or content);
  - every EVERY_NTH-th unlabelled article (plain /v2/everything articles).
Output keeps the line order of the data set.
"""
import argparse
import calendar
import datetime
import json
import os
import shutil
import sys

COUNTRIES = ["us", "gb", "in", "au", "fr", "de", "it", "ca"]
CATEGORIES = ["business", "entertainment", "general", "health", "science", "sports",
              "technology"]
PER_PAIR = 40
WINDOW_SECONDS = 48 * 3600  # the default live window of /v2/top-headlines
EVERY_NTH = 3
MAX_BYTES = 10 * 1000 * 1000


def mentions(article, word):
    for key in ("title", "description", "content"):
        v = article.get(key)
        if isinstance(v, str) and word in v.lower():
            return True
    return False


def stamp(iso):
    """Seconds of a "YYYY-MM-DDThh:mm:ssZ" time (the data set's one form)."""
    t = datetime.datetime.strptime(iso, "%Y-%m-%dT%H:%M:%SZ")
    return calendar.timegm(t.timetuple())


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=os.path.join(here, "..", "..", "shared", "data"))
    ap.add_argument("--out", default=os.path.join(here, "..", "data", "sample"))
    args = ap.parse_args()

    real = os.path.join(args.data, "real")
    with open(os.path.join(real, "articles.jsonl"), encoding="utf-8") as f:
        lines = [l for l in f.read().split("\n") if l]
    with open(os.path.join(real, "articles_labels.jsonl"), encoding="utf-8") as f:
        labels = [json.loads(l) for l in f.read().split("\n") if l]
    if len(lines) != len(labels):
        sys.exit("articles.jsonl and articles_labels.jsonl differ in length")
    articles = [json.loads(l) for l in lines]
    for i, (a, l) in enumerate(zip(articles, labels)):
        if a["url"] != l["url"]:
            sys.exit("line %d: labels are not in article order" % (i + 1))

    def first_labels(i):
        l = labels[i]
        if not l["countries"] or not l["categories"]:
            return None
        return l["countries"][0], l["categories"][0]

    chosen = set()
    labelled = [i for i in range(len(articles)) if first_labels(i)]
    stamps = {i: stamp(articles[i]["publishedAt"]) for i in labelled}
    newest = max(stamps.values())
    chosen.update(i for i in labelled if stamps[i] >= newest - WINDOW_SECONDS)
    by_pair = {}
    for i in range(len(articles)):
        p = first_labels(i)
        if p and p[0] in COUNTRIES and p[1] in CATEGORIES:
            by_pair.setdefault(p, []).append(i)
    for pair in sorted(by_pair):
        # Newest first; ties by line number keep it deterministic.
        idx = sorted(by_pair[pair], key=lambda i: (articles[i]["publishedAt"], -i), reverse=True)
        chosen.update(idx[:PER_PAIR])
    chosen.update(i for i, a in enumerate(articles) if mentions(a, "bitcoin"))
    unlabelled = [i for i in range(len(articles)) if first_labels(i) is None]
    chosen.update(unlabelled[::EVERY_NTH])

    os.makedirs(args.out, exist_ok=True)
    shutil.copyfile(os.path.join(args.data, "newsapi-sources.json"),
                    os.path.join(args.out, "sources.json"))
    out_path = os.path.join(args.out, "articles.jsonl")
    size = 0
    with open(out_path, "w", encoding="utf-8", newline="\n") as out:
        for i in sorted(chosen):
            a = dict(articles[i])
            p = first_labels(i)
            if p:
                a["country"], a["category"] = p
                a["headline"] = True
            else:
                a["headline"] = False
            line = json.dumps(a, ensure_ascii=False, separators=(",", ":")) + "\n"
            size += len(line.encode("utf-8"))
            out.write(line)
    if size > MAX_BYTES:
        sys.exit("sample too large: %d bytes" % size)
    print("%s: %d articles, %d bytes" % (out_path, len(chosen), size))


if __name__ == "__main__":
    main()
