"""Every match, past the result window (issue 27 item 1, docs/api.md
"Every match: cursor paging"): cursor=* starts a newest-first walk, each
page's nextCursor continues it. Checked against the brute-force oracle of
tests/api/corpus.py, past a plan's result window, while another process
imports and deletes articles, and against malformed and foreign cursors."""
import json
import threading

import pytest

from harness import Client, Server, cli_ok, err, import_jsonl, ok, urls


def walk(client, params, size, limit=10000, between=None):
    """Every page of a walk: their bodies. between(i) runs after page i."""
    bodies, cursor = [], "*"
    for i in range(limit):
        if between and i:
            between(i)
        b = ok(client.get("/v2/everything", params + [("pageSize", str(size)),
                                                      ("cursor", cursor)]))
        bodies.append(b)
        if "nextCursor" not in b:
            return bodies
        assert list(b) == ["status", "totalResults", "articles", "nextCursor"]
        assert len(b["articles"]) == size, "a page before the last is full"
        cursor = b["nextCursor"]
    raise AssertionError("the walk did not end")


@pytest.mark.parametrize("params,expect,size", [
    ([("domains", "com")], {"domains": "com"}, 7),
    ([("q", '"covid"')], {"q": '"covid"'}, 1),
    ([("domains", "newsd.test"), ("from", "2020-01-01"), ("to", "2030-01-01")],
     {"domains": "newsd.test", "frm": "2020-01-01", "to": "2030-01-01"}, 100),
])
def test_a_walk_gives_every_match_once_newest_first(api, corpus, params, expect, size):
    want = [a.url for a in corpus.everything(**expect)]
    assert want
    bodies = walk(api, params, size)
    got = [u for b in bodies for u in urls(b)]
    assert got == want
    assert all(b["totalResults"] == len(want) for b in bodies)


def test_a_walk_without_a_cursor_is_todays_response(api):
    """No cursor parameter: NewsAPI's bytes, without nextCursor."""
    b = ok(api.get("/v2/everything", [("domains", "com"), ("pageSize", "5")]))
    assert list(b) == ["status", "totalResults", "articles"]


def test_a_walk_goes_past_the_result_window(tmp_path):
    """A plan whose window is 5 articles: page 2 of 5 is 426, but a walk
    reaches every match; each page counts one request."""
    store = str(tmp_path / "s")
    conf = tmp_path / "plans.conf"
    conf.write_text("[plan small]\nresult_window = 5\nrequests_per_day = 100\n")
    rows = [{"url": "https://walk.example/%d" % i, "title": "Walker number %d" % i,
             "publishedAt": "2024-01-01T00:%02d:00Z" % i, "source": {"id": None, "name": "W"}}
            for i in range(23)]
    cli_ok("import", "--create", "--store", store, "-",
           stdin="".join(json.dumps(r) + "\n" for r in rows).encode())
    key = cli_ok("keys", "create", "--create", "--store", store, "--plan", "small", "--config",
                 str(conf)).out.strip()
    srv = Server(store, args=["--config", str(conf)])
    try:
        c = Client(srv.base, key)
        err(c.get("/v2/everything", [("q", "walker"), ("pageSize", "5"), ("page", "2")]),
            426, "maximumResultsReached")
        bodies = walk(c, [("q", "walker")], 5)
        assert [u for b in bodies for u in urls(b)] == ["https://walk.example/%d" % i
                                                        for i in range(22, -1, -1)]
        r = c.get("/v2/everything", [("q", "walker"), ("pageSize", "5"), ("cursor", "*")])
        assert r.headers["X-RateLimit-Remaining"] == str(100 - 1 - len(bodies) - 1)
    finally:
        assert not srv.stop()


def test_a_walk_has_no_gap_and_no_duplicate_while_articles_come_and_go(tmp_path):
    """The oracle for completeness while another process imports (at any
    publication time) and deletes: every article there from start to end is
    given exactly once, nothing is given twice, every page is newest first,
    and whatever is given matches the search."""
    store = str(tmp_path / "s")
    base = [{"url": "https://flow.example/base/%d" % i, "title": "Flowing river %d" % i,
             "publishedAt": "2024-02-%02dT%02d:00:00Z" % (1 + i % 28, i % 24),
             "source": {"id": None, "name": "F"}} for i in range(300)]
    doomed = [{"url": "https://flow.example/doomed/%d" % i, "title": "Flowing doomed %d" % i,
               "publishedAt": "2024-02-%02dT12:30:00Z" % (1 + i % 28),
               "source": {"id": None, "name": "F"}} for i in range(40)]
    cli_ok("import", "--create", "--store", store, "-",
           stdin="".join(json.dumps(r) + "\n" for r in base + doomed).encode())
    key = cli_ok("keys", "create", "--create", "--store", store).out.strip()
    srv = Server(store)
    stop = threading.Event()
    rounds = [0]
    progressed = threading.Condition()

    def churn():
        k = 0
        while not stop.is_set() and k < 30:
            import_jsonl(store, [{"url": "https://flow.example/new/%d/%d" % (k, j),
                                  "title": "Flowing newcomer %d" % j,
                                  "publishedAt": "2024-02-%02dT06:15:00Z" % (1 + (k * 7 + j) % 28),
                                  "source": {"id": None, "name": "F"}} for j in range(5)])
            cli_ok("articles", "delete", "--store", store, "--url", doomed[k]["url"])
            k += 1
            with progressed:
                rounds[0] = k
                progressed.notify_all()

    def wait_for_churn(i):
        """The walk goes on only once the churn has moved: a third of the
        rounds by page 5, two thirds by page 20, all by page 40."""
        need = 10 if i == 5 else 20 if i == 20 else 30 if i == 40 else 0
        with progressed:
            progressed.wait_for(lambda: rounds[0] >= need or not t.is_alive(), timeout=60)
    t = threading.Thread(target=churn)
    try:
        c = Client(srv.base, key)
        t.start()
        bodies = walk(c, [("q", "flowing"), ("sortBy", "publishedAt")], 5,
                      between=wait_for_churn)
    finally:
        stop.set()
        t.join()
        assert not srv.stop()
    assert rounds[0] == 30 and len(bodies) > 40
    got = [u for b in bodies for u in urls(b)]
    assert len(got) == len(set(got)), "an article given twice"
    assert {r["url"] for r in base} <= set(got), "an article there all along was missed"
    assert all(u.startswith("https://flow.example/") for u in got)
    times = [a["publishedAt"] for b in bodies for a in b["articles"]]
    assert times == sorted(times, reverse=True)


def test_bad_and_foreign_cursors_are_refused(api):
    first = ok(api.get("/v2/everything", [("domains", "com"), ("pageSize", "3"),
                                          ("cursor", "*")]))
    nxt = first["nextCursor"]
    for bad in ("xyz", nxt[:-1], nxt + "0", nxt.upper(), "c2" + nxt[2:],
                nxt[:20] + ("0" if nxt[20] != "0" else "1") + nxt[21:]):
        b = err(api.get("/v2/everything", [("domains", "com"), ("cursor", bad)]),
                400, "parameterInvalid")
        assert "cursor=*" in b["message"], bad
    b = err(api.get("/v2/everything", [("domains", "org"), ("cursor", nxt)]), 400,
            "parameterInvalid")
    assert "another search" in b["message"]
    # the page size may change along the walk: it is not part of the search
    ok(api.get("/v2/everything", [("domains", "com"), ("pageSize", "50"), ("cursor", nxt)]))
    for extra, word in ((("page", "2"), "page"), (("sortBy", "relevancy"), "publishedAt"),
                        (("format", "rss"), "format")):
        b = err(api.get("/v2/everything", [("domains", "com"), ("cursor", "*"), extra]), 400,
                "parameterInvalid")
        assert word in b["message"], (extra, b)


def test_streams_and_alerts_refuse_a_cursor(api):
    b = err(api.get("/v2/everything/stream", [("q", "the"), ("cursor", "*")]), 400,
            "parameterInvalid")
    assert "cursor" in b["message"]
