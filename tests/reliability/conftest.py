"""Shared pieces of the reliability tests: the newsd binary and helper tools,
generated article files, store checks (store_check + field-by-field
comparison with gen_articles.article), keys.

Knobs (environment):
  NEWSD_BIN     newsd to test (default build/newsd)
  NEWSD_TOOLS   directory of the helpers built from tests/reliability/*.c
                (default build/release/tests/reliability)
  RELIABILITY_LONG=1  the long runs recorded in docs/reliability.md
                (crash: 200,000 articles and 20 kills; see each test)"""
import os
import sqlite3
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "api"))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))

from harness import BIN, REPO, cli_ok  # noqa: E402
import gen_articles  # noqa: E402
import longest_first  # noqa: E402
import skip_policy  # noqa: E402

TOOLS = os.environ.get("NEWSD_TOOLS") or os.path.join(REPO, "build", "release", "tests",
                                                      "reliability")
LONG = os.environ.get("RELIABILITY_LONG") == "1"


def pytest_configure(config):
    skip_policy.install(config)  # every skip shown; in CI a precondition skip fails


# tests/longest_first.py (--durations=0 summed by file, 2026-11-28: the
# crash test and the load test ~45 s each of ~220 s).
LONGEST_FIRST = ["test_crash", "test_load", "test_alert_fairness", "test_crawl_crash",
                 "test_engine_damage", "test_retention", "test_disk_full", "test_wal"]


def pytest_collection_modifyitems(config, items):
    longest_first.sort(config, items, LONGEST_FIRST)


@pytest.fixture
def fts5_side(monkeypatch):
    """Stores made by this test keep the FTS5 side (NEWSD_INDEX=fts5): the
    part of a store that can disagree with its articles table after a crash
    or a full disk, which store_check compares row by row. (With the engine
    index a store is the table alone, a subset of what is checked here.)"""
    monkeypatch.setenv("NEWSD_INDEX", "fts5")


def tool(name):
    path = os.path.join(TOOLS, name)
    if not os.access(path, os.X_OK):
        pytest.fail("helper %s not built (make %s)" % (path, os.path.relpath(path, REPO)))
    return path


def write_articles(path, n, start=0):
    """Articles start..start+n-1 as JSONL at path."""
    with open(path, "w", encoding="utf-8") as f:
        subprocess.run([sys.executable, os.path.join(HERE, "gen_articles.py"), str(n),
                        str(start)], stdout=f, check=True)
    return str(path)


def store_check(store, words=(), tokens=()):
    """Run store_check on the store's file; returns (ok, figures dict, text)."""
    args = [tool("store_check"), os.path.join(str(store), "newsd.db")] + list(words) + \
        ["=" + t for t in tokens]
    p = subprocess.run(args, capture_output=True, text=True, timeout=300)
    figures = {}
    for line in p.stdout.splitlines():
        k, _, v = line.partition(" ")
        if k in ("word", "token"):
            figures.setdefault(k, {})[v.split(" ")[0]] = v.split(" ")[1:]
        elif v:
            figures[k] = v
    return p.returncode == 0, figures, p.stdout + p.stderr


def stored_articles(store):
    """Every article row of the store by url (read-only, plain sqlite3: the
    articles table needs no tokenizer)."""
    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(str(store), "newsd.db"), uri=True,
                         timeout=30)
    try:
        rows = db.execute("SELECT url, source_name, author, title, description, url_to_image,"
                          " published_at, content FROM articles").fetchall()
    finally:
        db.close()
    return rows


def article_index(url):
    """i of a generated article's url, or None."""
    prefix = "https://reliability.example/news/"
    if not url.startswith(prefix):
        return None
    return int(url[len(prefix):].split("/")[0])


def check_rows(rows, n_total):
    """Every stored row is a generated article, intact; returns the set of
    their indices (duplicates are an error)."""
    import calendar
    import time
    seen = set()
    for url, source_name, author, title, description, image, published, content in rows:
        i = article_index(url)
        assert i is not None and 0 <= i < n_total, "unexpected row %r" % url
        assert i not in seen, "article %d stored twice" % i
        seen.add(i)
        a = gen_articles.article(i)
        want_t = calendar.timegm(time.strptime(a["publishedAt"], "%Y-%m-%dT%H:%M:%SZ"))
        got = (url, source_name, author, title, description, image, published, content)
        want = (a["url"], a["source"]["name"], a["author"], a["title"], a["description"],
                a["urlToImage"], want_t, a["content"])
        assert got == want, "article %d is not intact:\n got  %r\n want %r" % (i, got, want)
    return seen


def new_key(store):
    r = cli_ok("keys", "create", "--create", "--store", str(store), "--name", "reliability")
    return r.out.strip()


@pytest.fixture
def newsd_bin():
    if not os.access(BIN, os.X_OK):
        pytest.fail("newsd binary not found: %s (set NEWSD_BIN)" % BIN)
    return BIN
