#!/usr/bin/env python3
"""Deterministic synthetic articles for the reliability tests.

    gen_articles.py N [START]   N JSONL lines (articles START..START+N-1) to stdout

Article i is a pure function of i (see article()), so a test can check any
stored article field by field without keeping the file. Every title holds a
token found in no other article (unique_token(i)) and one of WORDS
(WORDS[i % len(WORDS)]), so full-text counts can be predicted and checked."""
import json
import sys

WORDS = ["harbor", "glacier", "orchid", "lantern", "meadow", "copper", "falcon",
         "quartz", "willow", "saffron"]
BASE_TIME = 1704067200  # 2024-01-01T00:00:00Z
STEP = 37               # seconds between two articles: ids stay time-ordered


def unique_token(i):
    """'zq' + i in base 26 letters: one token, letters only, unique per i."""
    s = ""
    while True:
        s = chr(ord("a") + i % 26) + s
        i //= 26
        if i == 0:
            break
    return "zq" + s


def iso(t):
    import time
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def article(i):
    w = WORDS[i % len(WORDS)]
    tok = unique_token(i)
    return {
        "source": {"id": None, "name": "Reliability Wire %d" % (i % 17)},
        "author": "Reporter %d" % (i % 101),
        "title": "Crash article %d %s %s" % (i, tok, w),
        "description": "Description of article %d about the %s, café and 東京 included." % (i, w),
        "url": "https://reliability.example/news/%d/%s" % (i, tok),
        "urlToImage": "https://reliability.example/img/%d.jpg" % i,
        "publishedAt": iso(BASE_TIME + i * STEP),
        "content": ("Body of article %d. " % i) + ("The %s report continues. " % w) * 24,
    }


def main():
    n = int(sys.argv[1])
    start = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    out = sys.stdout
    for i in range(start, start + n):
        out.write(json.dumps(article(i), ensure_ascii=False, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
