"""Every match, past the result window (issue 27 item 1, docs/api.md
"Every match: cursor paging"): cursor=* starts a walk in any sortBy order, each
page's nextCursor continues it. Checked against the brute-force oracle of
tests/api/corpus.py, past a plan's result window, while another process
imports and deletes articles, and against malformed and foreign cursors."""
import json
import random
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


def serve_rows(store, rows, sources=None):
    """A new store of rows (and a sources file) served: (server, key)."""
    if sources:
        cli_ok("sources", "import", "--create", "--store", store, sources)
    cli_ok("import", "--create", "--store", store, "-",
           stdin="".join(json.dumps(r) + "\n" for r in rows).encode())
    key = cli_ok("keys", "create", "--create", "--store", store).out.strip()
    return Server(store), key


def walk_while(srv, key, params, size, churn_round, need):
    """A walk while another thread runs churn_round(k) for k in 0..29
    (each an import and a deletion in another process): the walk goes on
    at page i only once need.get(i, 0) rounds are done, so that the churn
    falls inside it. The server is stopped after. The walk's bodies."""
    progressed = threading.Condition()
    rounds = [0]

    def churn():
        for k in range(30):
            churn_round(k)
            with progressed:
                rounds[0] = k + 1
                progressed.notify_all()

    def wait_for_churn(i):
        with progressed:
            progressed.wait_for(lambda: rounds[0] >= need.get(i, 0) or not t.is_alive(),
                                timeout=60)
    t = threading.Thread(target=churn)
    try:
        t.start()
        bodies = walk(Client(srv.base, key), params, size, between=wait_for_churn)
    finally:
        t.join()
        assert not srv.stop()
    assert rounds[0] == 30, "the churn did not finish"
    return bodies


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
    srv, key = serve_rows(store, base + doomed)

    def churn_round(k):
        import_jsonl(store, [{"url": "https://flow.example/new/%d/%d" % (k, j),
                              "title": "Flowing newcomer %d" % j,
                              "publishedAt": "2024-02-%02dT06:15:00Z" % (1 + (k * 7 + j) % 28),
                              "source": {"id": None, "name": "F"}} for j in range(5)])
        cli_ok("articles", "delete", "--store", store, "--url", doomed[k]["url"])
    # a third of the rounds by page 5, two thirds by page 20, all by page 40
    bodies = walk_while(srv, key, [("q", "flowing"), ("sortBy", "publishedAt")], 5, churn_round,
                        {5: 10, 20: 20, 40: 30})
    assert len(bodies) > 40
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
    for extra, word in ((("page", "2"), "page"), (("format", "rss"), "format")):
        b = err(api.get("/v2/everything", [("domains", "com"), ("cursor", "*"), extra]), 400,
                "parameterInvalid")
        assert word in b["message"], (extra, b)
    # a walk's cursor goes on in its own sortBy order, not another
    for sort in ("relevancy", "popularity"):
        b = err(api.get("/v2/everything", [("domains", "com"), ("sortBy", sort),
                                           ("cursor", nxt)]), 400, "parameterInvalid")
        assert "sortBy" in b["message"], (sort, b)


def test_streams_and_alerts_refuse_a_cursor(api):
    b = err(api.get("/v2/everything/stream", [("q", "the"), ("cursor", "*")]), 400,
            "parameterInvalid")
    assert "cursor" in b["message"]


# --- ranked orders: relevancy and popularity ---------------------------------

# Catalogue sources with popularity (two share one: a tie across sources);
# "unlisted" is outside the catalogue (below every catalogue source).
RANK_SOURCES = [("rk-gold", 900), ("rk-silver", 500), ("rk-bronze", 500), ("rk-tin", 10)]
RANK_WORDS = ["alpha", "bravo", "kilo", "oscar", "tango", "zulu"]


def rank_rows(n, seed, tag="base", day0=1):
    """n articles of few words, so that many share a score (ties go by id):
    most hold "river" (some several times, in title or description), every
    one holds other words of RANK_WORDS."""
    rnd = random.Random(seed)
    rows = []
    for i in range(n):
        words = [rnd.choice(RANK_WORDS) for _ in range(rnd.randint(1, 4))]
        title = " ".join(words + ["river"] * (i % 3 if i % 17 else 0))
        desc = " ".join([rnd.choice(RANK_WORDS) for _ in range(rnd.randint(0, 6))]
                        + (["river"] if i % 5 == 0 else []))
        src = (RANK_SOURCES + [("unlisted", None)])[rnd.randrange(len(RANK_SOURCES) + 1)][0]
        rows.append({"url": "https://rank.example/%s/%d" % (tag, i), "title": title,
                     "description": desc or None,
                     "publishedAt": "2024-03-%02dT%02d:%02d:%02dZ" % (
                         day0 + i % 27, i % 24, i % 60, (i * 7) % 60),
                     "source": {"id": src, "name": src}})
    return rows


def rank_sources_file(tmp_path):
    path = tmp_path / "rank-sources.jsonl"
    path.write_text("".join(json.dumps({
        "id": sid, "name": sid, "description": sid, "url": "https://%s.example" % sid,
        "category": "general", "language": "en", "country": "us", "popularity": pop}) + "\n"
        for sid, pop in RANK_SOURCES))
    return str(path)


def holds(row, word):
    text = (row["title"] + " " + (row["description"] or "")).split()
    return word in text


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """11,000 articles: more matches than the default result window of 10,000."""
    tmp = tmp_path_factory.mktemp("rank")
    store = str(tmp / "s")
    rows = rank_rows(11000, 27)
    srv, key = serve_rows(store, rows, rank_sources_file(tmp))
    try:
        yield Client(srv.base, key), rows
    finally:
        assert not srv.stop()


@pytest.mark.parametrize("sort", ["relevancy", "popularity", "publishedAt"])
def test_a_ranked_walk_gives_every_match_once_past_the_window(big, sort):
    """Every sortBy order walked past the 10,000 window: the union is the
    brute-force match set, nothing twice, and the pages the result window
    reaches come in the order page= gives them."""
    client, rows = big
    params = [("q", "river OR alpha OR kilo"), ("sortBy", sort)]
    want = {r["url"] for r in rows if any(holds(r, w) for w in ("river", "alpha", "kilo"))}
    assert len(want) > 10000
    err(client.get("/v2/everything", params + [("pageSize", "100"), ("page", "101")]), 426,
        "maximumResultsReached")
    bodies = walk(client, params, 100)
    got = [u for b in bodies for u in urls(b)]
    assert len(got) == len(set(got)), "an article given twice"
    assert set(got) == want
    assert all(b["totalResults"] == len(want) for b in bodies)
    for page in (1, 2, 3, 100):
        b = ok(client.get("/v2/everything", params + [("pageSize", "100"),
                                                      ("page", str(page))]))
        assert urls(b) == urls(bodies[page - 1]), page
    if sort == "popularity":
        rank = dict(RANK_SOURCES)
        pops = [rank.get(a["source"]["id"], -1) for b in bodies for a in b["articles"]]
        assert pops == sorted(pops, reverse=True)
        # within one popularity: newest first (the id tie-break)
        for p in set(pops):
            times = [a["publishedAt"] for b in bodies for a in b["articles"]
                     if rank.get(a["source"]["id"], -1) == p]
            assert times == sorted(times, reverse=True)


@pytest.mark.parametrize("sort", ["relevancy", "popularity"])
def test_a_ranked_walk_has_no_gap_and_no_duplicate_while_articles_come_and_go(tmp_path, sort):
    """While another process imports (words that move every score's
    statistics) and deletes, a walk in a ranked order gives every article
    there from start to end exactly once and nothing twice."""
    store = str(tmp_path / "s")
    base = rank_rows(300, 5)
    doomed = rank_rows(40, 6, tag="doomed")
    srv, key = serve_rows(store, base + doomed, rank_sources_file(tmp_path))

    def churn_round(k):
        # river-heavy newcomers: "river" grows common, its idf falls
        import_jsonl(store, [dict(r, title=r["title"] + " river river")
                             for r in rank_rows(8, 100 + k, tag="new%d" % k)])
        cli_ok("articles", "delete", "--store", store, "--url", doomed[k]["url"])
    bodies = walk_while(srv, key, [("q", "river OR kilo"), ("sortBy", sort)], 7, churn_round,
                        {3: 10, 10: 20, 20: 30})
    assert len(bodies) > 20
    got = [u for b in bodies for u in urls(b)]
    assert len(got) == len(set(got)), "an article given twice"
    want = {r["url"] for r in base if holds(r, "river") or holds(r, "kilo")}
    assert want <= set(got), "an article there all along was missed"
    if sort == "popularity":
        rank = dict(RANK_SOURCES)
        pops = [rank.get(a["source"]["id"], -1) for b in bodies for a in b["articles"]]
        assert pops == sorted(pops, reverse=True)


@pytest.mark.parametrize("sort", ["relevancy", "popularity"])
def test_bad_and_foreign_ranked_cursors_are_refused(api, sort):
    search = [("q", "the OR covid"), ("sortBy", sort)]
    first = ok(api.get("/v2/everything", search + [("pageSize", "3"), ("cursor", "*")]))
    nxt = first["nextCursor"]
    assert nxt.startswith("c2" + sort[0])
    # the next page continues in the order page= gives
    b = ok(api.get("/v2/everything", search + [("pageSize", "3"), ("cursor", nxt)]))
    want = urls(ok(api.get("/v2/everything", search + [("pageSize", "6")])))
    assert urls(first) + urls(b) == want
    flip = lambda s, i: s[:i] + ("0" if s[i] != "0" else "1") + s[i + 1:]  # noqa: E731
    tampered = [flip(nxt, i) for i in (2, 10, 30, 40, len(nxt) - 12, len(nxt) - 1)]
    bad_ones = ["xyz", nxt[:-1], nxt + "0", nxt.upper(), "c3" + nxt[2:], nxt[:45] + nxt[-8:]]
    if sort == "relevancy":  # its statistics: cut, padded, or a number spelled twice
        assert nxt.count(".") >= 3
        bad_ones += [nxt[:51] + nxt[-8:], nxt.replace(".", ".0", 1),
                     nxt[:-8] + ".1" + nxt[-8:]]
    for bad in bad_ones + tampered:
        b = err(api.get("/v2/everything", search + [("cursor", bad)]), 400, "parameterInvalid")
        assert "cursor=*" in b["message"] or "sortBy" in b["message"], bad
    # another search, another order
    b = err(api.get("/v2/everything", [("q", "covid"), ("sortBy", sort), ("cursor", nxt)]),
            400, "parameterInvalid")
    assert "another search" in b["message"]
    other = "popularity" if sort == "relevancy" else "relevancy"
    for s in (other, "publishedAt"):
        b = err(api.get("/v2/everything", [("q", "the OR covid"), ("sortBy", s),
                                           ("cursor", nxt)]), 400, "parameterInvalid")
        assert "sortBy" in b["message"], (s, b)
    # an export is newest first: a ranked cursor is no place of it
    b = err(api.get("/v2/everything/export", [("q", "the OR covid"), ("cursor", nxt)]), 400,
            "parameterInvalid")


def test_a_relevancy_cursor_holds_a_bounded_number_of_words(api):
    q = " OR ".join("w%d" % i for i in range(70)) + " OR covid"
    b = err(api.get("/v2/everything", [("q", q), ("sortBy", "relevancy"), ("cursor", "*")]),
            400, "parameterInvalid")
    assert "at most 64" in b["message"]
