"""Retention (docs/operations.md "Retention"): `newsd serve` with
[retention] deletes the articles past max_age_days in the background while
another process imports and clients search, and nothing that should stay
is ever lost; `newsd articles delete` by each selector, through the real CLI
and then the real API; the store's file shrinks after a large delete
(incremental vacuum, or `articles compact` for an older file); `newsd index
verify` agrees afterwards."""
import json
import os
import sqlite3
import subprocess
import threading
import time

import requests

from harness import (BIN, SLOW, Client, Server, articles_ok, clean_env, cli_ok, run_cli, total,
                     wait_total)

DAY = 86400


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def write_jsonl(path, arts):
    with open(path, "w", encoding="utf-8") as f:
        for a in arts:
            f.write(json.dumps(a) + "\n")
    return str(path)


def article(i, published, word, source="wire", body=200):
    return {"source": {"id": source, "name": source.title()},
            "title": "%s story number %d" % (word, i),
            "description": "%s description %d" % (word, i),
            "content": ("%s content %d " % (word, i)) * body,
            "url": "https://%s.example.com/%s/%d" % (source, word, i),
            "publishedAt": iso(published)}


def db_count(store, where="1"):
    con = sqlite3.connect("file:%s?mode=ro" % os.path.join(str(store), "newsd.db"), uri=True)
    try:
        return con.execute("SELECT count(*) FROM articles WHERE " + where).fetchone()[0]
    finally:
        con.close()


def verify(store):
    v = run_cli("index", "verify", "--store", str(store))
    assert v.rc == 0 and "ok" in v.out, v
    return v


def test_retention_under_concurrent_import_and_search(tmp_path):
    """Old articles (published 20-40 days ago) go; fresh ones (the last
    two days) never do, while an import in another process adds both."""
    now = int(time.time())
    store = tmp_path / "store"
    old = [article(i, now - 20 * DAY - i * 600, "oldword") for i in range(1400)]
    fresh = [article(i, now - 2 * DAY + i * 60, "freshword") for i in range(400)]
    cli_ok("import", "--create", "--store", str(store), write_jsonl(tmp_path / "first.jsonl",
                                                        old[:600] + fresh[:200]))
    key = cli_ok("keys", "create", "--create", "--store", str(store), "--plan", "unlimited").out.strip()
    conf = tmp_path / "retention.conf"
    # A period of one second and small batches: many runs and many
    # transactions during the test.
    conf.write_text("[retention]\nmax_age_days = 5\nperiod_seconds = 1\nbatch_size = 25\n")
    # The later imports, each its own process, mixing old and fresh.
    rounds = []
    for r in range(4):
        arts = old[600 + r * 200:800 + r * 200] + fresh[200 + r * 50:250 + r * 50]
        rounds.append(write_jsonl(tmp_path / ("round%d.jsonl" % r), arts))

    srv = Server(store, args=["--quiet", "--config", str(conf)])
    errors = []

    def importer():
        for path in rounds:
            p = subprocess.run([BIN, "import", "--create", "--store", str(store), path],
                               capture_output=True, env=clean_env(), timeout=120 * SLOW)
            if p.returncode != 0:
                errors.append(p.stderr.decode())
            time.sleep(0.2)

    try:
        c = Client(srv.base, key)
        t = threading.Thread(target=importer)
        t.start()
        seen_fresh = 0
        searches = 0
        while t.is_alive() or searches < 20:
            b = articles_ok(c.get("/v2/everything", {"q": "freshword", "pageSize": 100}))
            # Fresh articles only ever arrive: the count never goes down.
            assert b["totalResults"] >= seen_fresh, (b["totalResults"], seen_fresh)
            seen_fresh = b["totalResults"]
            assert all("freshword" in a["title"] for a in b["articles"])
            searches += 1
            time.sleep(0.05)
        t.join()
        assert not errors, errors
        # Every fresh article is found (the follower may still be indexing
        # the last round: read-your-writes waits 1 s), and every old one goes,
        # from the table, the results and the count.
        wait_total(c, {"q": "freshword"}, len(fresh))
        wait_total(c, {"q": "oldword"}, 0)
        b = articles_ok(c.get("/v2/everything", {"q": "freshword", "pageSize": 100}))
        assert b["totalResults"] == len(fresh), b["totalResults"]
        assert db_count(store) == len(fresh)
        assert total(c, {"q": "story"}) == len(fresh)
        # Every old article went by the policy (its counter), none by hand.
        assert "retention: " in srv.stderr()
        want = "newsd_retention_deleted_total %d\n" % len(old)
        deadline = time.monotonic() + 10
        m = requests.get(srv.base + "/metrics", timeout=30).text
        while want not in m and time.monotonic() < deadline:
            time.sleep(0.1)
            m = requests.get(srv.base + "/metrics", timeout=30).text
        assert want in m, m[-3000:]
    finally:
        problems = srv.stop()
    assert not problems, problems
    verify(store)


def test_articles_delete_by_each_selector_cli_then_api(tmp_path):
    now = int(time.time())
    store = tmp_path / "store"
    arts = ([article(i, now - 30 * DAY + i * 3600, "alpha", "alpha-wire") for i in range(60)] +
            [article(i, now - 30 * DAY + i * 3600, "beta", "beta-wire") for i in range(60)])
    cli_ok("import", "--create", "--store", str(store), write_jsonl(tmp_path / "a.jsonl", arts))
    key = cli_ok("keys", "create", "--create", "--store", str(store), "--plan", "unlimited").out.strip()
    srv = Server(store, args=["--quiet"])
    try:
        c = Client(srv.base, key)
        assert total(c, {"q": "story"}) == 120

        # --source: every article of that source, none of the other's.
        r = cli_ok("articles", "delete", "--store", str(store), "--source", "alpha-wire")
        assert r.out.strip() == "60", r
        wait_total(c, {"sources": "alpha-wire"}, 0)
        assert total(c, {"q": "beta"}) == 60

        # --url: the one article, given as imported (with a tracking
        # parameter the import's canonical form drops).
        url = "https://beta-wire.example.com/beta/7?utm_source=x"
        r = cli_ok("articles", "delete", "--store", str(store), "--url", url)
        assert r.out.strip() == "1", r
        wait_total(c, {"q": "beta"}, 59)
        assert total(c, {"q": '"number 7"'}) == 0
        r = cli_ok("articles", "delete", "--store", str(store), "--url", url)
        assert r.out.strip() == "0", r

        # --before: published before the 20th hour of beta's run.
        cut = now - 30 * DAY + 20 * 3600
        r = cli_ok("articles", "delete", "--store", str(store), "--before", iso(cut))
        assert r.out.strip() == "19", r  # hours 0..19 of beta, less the 7th
        wait_total(c, {"q": "beta"}, 40)
        b = articles_ok(c.get("/v2/everything", {"q": "beta", "pageSize": 100,
                                                 "sortBy": "publishedAt"}))
        assert min(a["publishedAt"] for a in b["articles"]) == iso(cut)

        # Selectors combine (every one must match).
        r = cli_ok("articles", "delete", "--store", str(store), "--source", "alpha-wire",
                   "--before", iso(now))
        assert r.out.strip() == "0", r
        assert db_count(store) == 40

        # Usage errors: exit 2, nothing deleted.
        for args in ([], ["--before", "yesterday"], ["--url", "not a url"], ["--source", ""],
                     ["--bogus"], ["extra"]):
            r = run_cli("articles", "delete", "--store", str(store), *args)
            assert r.rc == 2 and ("newsd: articles" in r.err or "usage" in r.err), r
        r = run_cli("articles", "frobnicate")
        assert r.rc == 2, r
        assert db_count(store) == 40
    finally:
        problems = srv.stop()
    assert not problems, problems
    v = verify(store)
    assert "rows 40" in v.out, v.out


def file_size(store):
    return os.path.getsize(os.path.join(str(store), "newsd.db"))


def test_the_store_file_shrinks_after_a_large_delete(tmp_path):
    now = int(time.time())
    store = tmp_path / "store"
    arts = [article(i, now - 10 * DAY + i, "bulk", body=300) for i in range(3000)]
    path = write_jsonl(tmp_path / "a.jsonl", arts)
    cli_ok("import", "--create", "--store", str(store), path)
    big = file_size(store)
    r = cli_ok("articles", "delete", "--store", str(store), "--before", iso(now))
    assert r.out.strip() == "3000"
    small = file_size(store)
    print("store file %d bytes before, %d after the delete" % (big, small))
    assert small < big / 4, (big, small)
    verify(store)


def test_an_older_store_is_compacted_once_then_shrinks(tmp_path):
    """A file made before auto_vacuum=INCREMENTAL: deletes keep its size
    (and say so) until `articles compact` switches it."""
    now = int(time.time())
    store = tmp_path / "store"
    arts = [article(i, now - 10 * DAY + i * 300, "bulk", body=300) for i in range(2000)]
    cli_ok("import", "--create", "--store", str(store), write_jsonl(tmp_path / "a.jsonl", arts))
    db = os.path.join(str(store), "newsd.db")
    con = sqlite3.connect(db)
    con.execute("PRAGMA auto_vacuum=NONE")
    con.execute("VACUUM")
    assert con.execute("PRAGMA auto_vacuum").fetchone()[0] == 0
    con.close()
    big = file_size(store)
    r = cli_ok("articles", "delete", "--store", str(store), "--before", iso(now - 5 * DAY))
    assert int(r.out) > 0 and "articles compact" in r.err, r
    assert file_size(store) >= big * 0.95
    cli_ok("articles", "compact", "--store", str(store))
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA auto_vacuum").fetchone()[0] == 2
    con.close()
    assert file_size(store) < big * 0.9
    left = db_count(store)
    assert left == 2000 - int(r.out)
    # From now on a delete gives the space back at once.
    before = file_size(store)
    r = cli_ok("articles", "delete", "--store", str(store), "--before", iso(now))
    assert r.out.strip() == str(left) and "compact" not in r.err, r
    assert file_size(store) < before / 4
    verify(store)
