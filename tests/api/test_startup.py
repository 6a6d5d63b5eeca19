"""Start-up with the purpose-built index (docs/engine.md "Persistence"):
the first start on a store builds the index on its own thread and serves
meanwhile — /healthz says "starting" with 503 and searches answer a
NewsAPI-style 503 with Retry-After — then answers normally; a restart opens
the index's files and answers at once. NEWSD_ENGINE_BUILD_DELAY_MS makes
the small test store's build last longer than serve's grace period."""
import shutil
import time

import pytest

from corpus import DATA
from harness import Client, Server, cli_ok

BUILDING = "The search index is being built"


@pytest.fixture
def fresh_store(tmp_path):
    d = str(tmp_path / "store")
    cli_ok("sources", "import", "--create", "--store", d, DATA + "/sources.jsonl")
    cli_ok("import", "--create", "--store", d, DATA + "/articles.jsonl")
    key = cli_ok("keys", "create", "--create", "--store", d, "--name", "startup").out.strip()
    return d, key


def test_serving_starts_before_the_first_build_and_a_restart_needs_none(fresh_store, monkeypatch,
                                                                        corpus):
    store, key = fresh_store
    monkeypatch.setenv("NEWSD_INDEX", "engine")
    monkeypatch.setenv("NEWSD_ENGINE_BUILD_DELAY_MS", "9000")
    srv = Server(store, now=corpus.now, wait_ready=False)
    try:
        c = Client(srv.base, key)
        h = c.get("/healthz", key=None)
        assert h.status_code == 503, h.text
        # The store's own count, known before the index is: every fixture article.
        stored = len({line["url"] for line in corpus.real_lines})
        # Every top-level domain of the fixture's hosts: a filter each article passes.
        every_tld = ",".join(sorted({corpus.article(line["url"]).host.rsplit(".", 1)[-1]
                                   for line in corpus.real_lines}))
        assert h.json()["status"] == "starting" and h.json()["articles"] == stored, h.text
        # /livez (liveness) answers 200 all the while /healthz (readiness) is 503.
        live = c.get("/livez", key=None)
        assert live.status_code == 200 and live.json() == {"status": "alive"}, live.text
        for path, params in (("/v2/everything", {"q": "the"}),
                             ("/v2/top-headlines", {"country": "us"})):
            r = c.get(path, params)
            assert r.status_code == 503, r.text
            body = r.json()
            assert body["status"] == "error" and body["code"] == "serviceUnavailable", body
            assert BUILDING in body["message"]
            assert r.headers.get("Retry-After") == "5"
        # Keys and parameters are still checked first.
        assert c.get("/v2/everything", {"q": "the"}, key="0" * 32).status_code == 401
        deadline = time.monotonic() + 60
        while c.get("/healthz", key=None).status_code != 200:
            assert time.monotonic() < deadline, "the index was never ready"
            time.sleep(0.1)
        # Every article indexed: a query matching each of them finds them all.
        r = c.get("/v2/everything", {"domains": every_tld, "pageSize": 1})
        assert r.status_code == 200 and r.json()["totalResults"] == stored, r.text
        total = r.json()["totalResults"]
    finally:
        problems = srv.stop()
    assert not problems, problems

    # The restart opens the files the first start wrote: answered at once,
    # even with the slow-build knob still set (it only delays a build).
    monkeypatch.setenv("NEWSD_ENGINE_BUILD_DELAY_MS", "0")
    srv = Server(store, now=corpus.now)
    try:
        c = Client(srv.base, key)
        assert c.get("/healthz", key=None).status_code == 200
        r = c.get("/v2/everything", {"domains": every_tld, "pageSize": 1})
        assert r.status_code == 200 and r.json()["totalResults"] == total
        assert "opened from its files" in Server._read(srv.err_path)
    finally:
        problems = srv.stop()
    assert not problems, problems


def test_a_server_stopped_while_building_exits_cleanly(fresh_store, monkeypatch, corpus):
    store, _ = fresh_store
    monkeypatch.setenv("NEWSD_INDEX", "engine")
    monkeypatch.setenv("NEWSD_ENGINE_BUILD_DELAY_MS", "7000")
    shutil.rmtree(store + "/newsd.db.engine", ignore_errors=True)
    srv = Server(store, now=corpus.now, wait_ready=False)
    problems = srv.stop()  # SIGTERM while the build has not finished
    assert not problems, problems



def test_healthz_fails_when_the_index_and_the_table_disagree(fresh_store, monkeypatch, corpus):
    """Issue 30 item 4: a database replaced or edited behind a running
    server left searches answering from an index that no longer matched
    the table while /healthz said ok. Rows put into the table with a seq
    the index has already passed are never read by it (the follower reads
    seq > what it covers), as with a table swapped under it."""
    import sqlite3
    store, key = fresh_store
    # The engine: an index of its own (FTS5 lives in the table's file and
    # cannot disagree with it this way).
    monkeypatch.setenv("NEWSD_INDEX", "engine")
    srv = Server(store, now=corpus.now)
    try:
        c = Client(srv.base, key)
        h = c.get("/healthz", key=None)
        assert h.status_code == 200 and h.json()["status"] == "ok", h.text
        rows = h.json()["articles"]
        con = sqlite3.connect(store + "/newsd.db")
        try:
            with con:
                con.execute("INSERT INTO articles(id, seq, url, canonical_url, source_id, "
                            "source_name, title, published_at, language) "
                            "SELECT id + 1, 1, url || '#behind', canonical_url || '#behind', "
                            "source_id, source_name, title, published_at, language "
                            "FROM articles WHERE id + 1 NOT IN (SELECT id FROM articles) "
                            "LIMIT 5")
        finally:
            con.close()
        deadline = time.monotonic() + 30
        while True:
            h = c.get("/healthz", key=None)
            if h.status_code == 503 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert h.status_code == 503, h.text
        body = h.json()
        assert body["status"] == "index disagrees", body
        assert body["articles"] == rows + 5 and body["indexed"] == rows, body
        assert "index" in body["message"] and str(rows + 5) in body["message"], body
        # /livez still says the process is alive: restarting it is not the cure.
        assert c.get("/livez", key=None).status_code == 200
    finally:
        problems = srv.stop()
    assert not problems, problems
