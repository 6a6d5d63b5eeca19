"""Stories over the API (issue 25 item 2, docs/api.md §9 "Stories"): dedupe=true on
/v2/everything and /v2/top-headlines, GET /v2/stories and GET
/v2/stories/{id}, against a brute-force oracle: every match of the same
search without dedupe (paged through), grouped in Python by the story ids
the store wrote (read from its SQLite file). Run on either backend
(NEWSD_INDEX=fts5 too); the engine is given segments of 7 documents so a
search spans many story columns, and a copy imported while the server runs
joins its story."""
import os
import random
import sqlite3

import pytest

from harness import Client, Server, cli_ok, err, import_jsonl, ok

NOW = 1626480000  # 2021-07-17T00:00:00Z
SIZES = [1, 1, 2, 3, 1, 5, 2, 1, 4, 1, 1, 3, 2, 1, 6, 1]


def copies():
    """Stories of SIZES copies each, every copy from another host (the
    same title and text: story/ joins them); the even ones mention alpha,
    the odd ones beta. Publication times interleave the stories."""
    rnd = random.Random(25)
    vocab = ["w%03d%s" % (i, rnd.choice("abcdefgh")) for i in range(3000)]
    hosts = ["site%d.example" % i for i in range(12)]
    rows = []
    for s, size in enumerate(SIZES):
        words = rnd.sample(vocab, 120)
        topic = "alpha" if s % 2 == 0 else "beta"
        for k, h in enumerate(rnd.sample(hosts, size)):
            rows.append({
                "source": {"id": None, "name": h.split(".")[0].title()},
                "author": None, "title": "Story %d: %s" % (s, " ".join(words[:7])),
                "description": "%s %s desc %d" % (topic, words[0], s),
                "url": "https://%s/news/story-%d-%d" % (h, s, k), "urlToImage": None,
                "publishedAt": "2021-07-%02dT%02d:%02d:00Z" % (10 + s % 5, 8 + k, s),
                "content": "%s %s" % (topic, " ".join(words[7:])), "headline": True})
    # One wire story carried by more sites than a story lists sources of
    # (gamma: no search above matches it).
    words = rnd.sample(vocab, 120)
    for k in range(WIRE):
        rows.append({
            "source": {"id": None, "name": "Wire%d" % k}, "author": None,
            "title": "Wire story: %s" % " ".join(words[:7]),
            "description": "gamma %s" % words[0], "url": "https://wire%d.example/a" % k,
            "urlToImage": None, "publishedAt": "2021-07-15T%02d:%02d:00Z" % (k // 4, k),
            "content": "gamma %s" % " ".join(words[7:]), "headline": False})
    return rows


WIRE = 14  # copies of the wire story, each from its own source
SOURCES_MAX = 10  # docs/api.md §9 "Stories": sources listed at most


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("stories"))
    import_jsonl(d, copies())
    key = cli_ok("keys", "create", "--create", "--store", d, "--name", "s").out.strip()
    db = sqlite3.connect(d + "/newsd.db")
    # An article stored before stories (NULL story_id) is read as the story
    # it founds alone: one singleton, and a copy of story 3 that did not
    # found it (whose story then has 2). (A founder read so is its story's
    # id again: store_story_resolve.)
    # (FTS5's update trigger needs newsd's tokenizer, which this connection
    # lacks: it is set aside for an update of story_id alone)
    trig = db.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger'"
                      " AND name = 'articles_fts_update'").fetchall()
    if trig:
        db.execute("DROP TRIGGER articles_fts_update")
    db.execute("UPDATE articles SET story_id = NULL WHERE url IN (?, ?)",
               (copies()[0]["url"], [r["url"] for r in copies() if "/story-3-" in r["url"]][-1]))
    if trig:
        db.execute(trig[0][0])
    db.commit()
    db.close()
    srv = Server(d, now=NOW, env={"NEWSD_ENGINE_SEGMENT_DOCS": "7"})
    yield Client(srv.base, key), d
    problems = srv.stop()
    assert not problems, "\n".join(problems)


def story_of(d):
    """url -> story key: the story_id written, or ("own", url) for NULL."""
    db = sqlite3.connect(d + "/newsd.db")
    out = {u: (s if s is not None else ("own", u))
           for u, s in db.execute("SELECT url, story_id FROM articles")}
    db.close()
    return out


def every_match(api, path, params):
    """Every article of the search without dedupe, in its order."""
    got, page = [], 1
    while True:
        b = ok(api.get(path, params + [("pageSize", "100"), ("page", str(page))]))
        got += b["articles"]
        if len(got) >= b["totalResults"] or not b["articles"]:
            return got
        page += 1


def oracle(matches, stories):
    """The stories in the matches' order: [(key, first member, members)]."""
    order, members = [], {}
    for a in matches:
        k = stories[a["url"]]
        if k not in members:
            order.append(k)
            members[k] = []
        members[k].append(a)
    return [(k, members[k][0], members[k]) for k in order]


SEARCHES = [
    ("/v2/everything", [("q", "alpha")]),
    ("/v2/everything", [("q", "alpha OR beta"), ("sortBy", "relevancy")]),
    ("/v2/everything", [("q", "alpha OR beta"), ("sortBy", "popularity")]),
    ("/v2/everything", [("domains", "site3.example,site5.example"), ("from", "2021-07-11")]),
    ("/v2/top-headlines", [("q", "alpha OR beta")]),
    ("/v2/top-headlines", [("q", "beta"), ("sortBy", "publishedAt")]),
]


@pytest.mark.parametrize("path,params", SEARCHES)
def test_dedupe_is_one_article_per_story_in_the_search_order(env, path, params):
    api, d = env
    assert_dedupe_is_the_oracle(api, d, path, params, (1, 3, 100))


def assert_dedupe_is_the_oracle(api, d, path, params, sizes):
    stories = story_of(d)
    want = oracle(every_match(api, path, params), stories)
    assert len(want) >= 2
    for size in sizes:
        got = []
        for page in range(1, 100):
            b = ok(api.get(path, params + [("dedupe", "true"), ("pageSize", str(size)),
                                           ("page", str(page))]))
            assert b["totalResults"] == len(want)
            if not b["articles"]:
                break
            got += b["articles"]
        assert [a["url"] for a in got] == [first["url"] for _, first, _ in want]
        ids = set()
        for a, (k, first, members) in zip(got, want):
            assert list(a)[-2:] == ["storyId", "storySize"]
            assert {x: a[x] for x in a if x not in ("storyId", "storySize")} == first
            assert a["storySize"] == len(members)
            if isinstance(k, int):
                assert a["storyId"] == str(k)
            ids.add(a["storyId"])
        assert len(ids) == len(got), "two stories share an id"


def test_dedupe_false_or_absent_is_newsapis_answer(env):
    api, _ = env
    plain = api.get("/v2/everything", [("q", "alpha")])
    off = api.get("/v2/everything", [("q", "alpha"), ("dedupe", "false")])
    assert plain.status_code == 200 and plain.content == off.content
    assert b"storyId" not in plain.content


def test_stories_match_the_oracle(env):
    api, d = env
    want = assert_stories_are_the_oracle(api, d, "alpha OR beta")
    # paging counts stories
    p2 = ok(api.get("/v2/stories", [("q", "alpha OR beta"), ("pageSize", "2"), ("page", "2")]))
    assert [s["article"]["url"] for s in p2["stories"]] == [f["url"] for _, f, _ in want[2:4]]


def assert_stories_are_the_oracle(api, d, q):
    """/v2/stories of q in both orders against the oracle; the oracle."""
    stories = story_of(d)
    want = oracle(every_match(api, "/v2/everything", [("q", q)]), stories)
    for sort in ("publishedAt", "size"):
        w = want if sort == "publishedAt" else sorted(want, key=lambda s: -len(s[2]))
        b = ok(api.get("/v2/stories", [("q", q), ("sortBy", sort), ("pageSize", "100")]))
        assert list(b) == ["status", "totalResults", "stories"]
        assert b["totalResults"] == len(want)
        assert [s["article"]["url"] for s in b["stories"]] == [f["url"] for _, f, _ in w]
        for s, (k, first, members) in zip(b["stories"], w):
            assert list(s) == ["id", "size", "firstSeen", "lastSeen", "sources", "article"]
            assert s["size"] == len(members) and s["article"] == first
            assert s["lastSeen"] == max(m["publishedAt"] for m in members)
            assert s["firstSeen"] == min(m["publishedAt"] for m in members)
            names = []
            for m in members:
                if m["source"] not in names:
                    names.append(m["source"])
            assert s["sources"] == names
            if isinstance(k, int):
                assert s["id"] == str(k)
        for size, page in ((3, 1), (3, 2), (1, 5)):
            p = ok(api.get("/v2/stories", [("q", q), ("sortBy", sort), ("pageSize", str(size)),
                                           ("page", str(page))]))
            assert p["totalResults"] == len(want)
            assert [s["article"]["url"] for s in p["stories"]] == [
                f["url"] for _, f, _ in w[size * (page - 1):size * page]]
    return want


def test_a_story_lists_every_member(env):
    api, d = env
    stories = story_of(d)
    b = ok(api.get("/v2/stories", [("q", "alpha OR beta"), ("pageSize", "100")]))
    for s in b["stories"]:
        one = ok(api.get("/v2/stories/" + s["id"]))
        assert list(one) == ["status", "story", "totalResults", "articles"]
        urls = [a["url"] for a in one["articles"]]
        assert sorted(urls) == sorted(u for u, k in stories.items()
                                      if k == int(s["id"]) or k == ("own", s["article"]["url"]))
        assert one["totalResults"] == one["story"]["size"] == len(urls)
        assert [a["publishedAt"] for a in one["articles"]] == sorted(
            (a["publishedAt"] for a in one["articles"]), reverse=True)


def test_a_copy_imported_while_serving_joins_its_story(env):
    api, d = env
    story14 = [r for r in copies() if "/story-14-" in r["url"]]
    before = ok(api.get("/v2/stories", [("q", "alpha"), ("sortBy", "size")]))["stories"][0]
    assert before["size"] == 6
    late = dict(story14[0], url="https://late.example/wire/story-14",
                source={"id": None, "name": "Late"}, publishedAt="2021-07-14T23:00:00Z")
    import_jsonl(d, [late])
    b = ok(api.get("/v2/everything", [("q", "alpha"), ("dedupe", "true")]))
    top = b["articles"][0]
    assert top["url"] == late["url"] and top["storyId"] == before["id"]
    assert top["storySize"] == 7


@pytest.mark.parametrize("path,params,status,code", [
    ("/v2/everything", [("q", "alpha"), ("dedupe", "yes")], 400, "parameterInvalid"),
    ("/v2/top-headlines", [("q", "alpha"), ("dedupe", "1")], 400, "parameterInvalid"),
    ("/v2/everything", [("q", "alpha"), ("dedupe", "true"), ("cursor", "*")], 400,
     "parameterInvalid"),
    ("/v2/stories", [], 400, "parametersMissing"),
    ("/v2/stories", [("q", "alpha"), ("sortBy", "relevancy")], 400, "parameterInvalid"),
    ("/v2/stories", [("q", "alpha"), ("pageSize", "0")], 400, "parameterInvalid"),
    ("/v2/stories/12345", [], 404, "storyNotFound"),
    ("/v2/stories/12a", [], 404, "storyNotFound"),
    ("/v2/stories/99999999999999999999", [], 404, "storyNotFound"),
    ("/v2/stories/-5", [], 404, "storyNotFound"),
])
def test_errors_are_newsapis(env, path, params, status, code):
    api, _ = env
    err(api.get(path, params), status, code)


def test_stories_need_a_key(env):
    api, _ = env
    err(api.get("/v2/stories", [("q", "alpha")], key=None), 401, "apiKeyMissing")
    err(api.get("/v2/stories/1", key=None), 401, "apiKeyMissing")


def test_a_story_pages_its_members_and_bounds_its_sources(env):
    api, d = env
    b = ok(api.get("/v2/stories", [("q", "gamma")]))
    assert b["totalResults"] == 1
    s = b["stories"][0]
    assert s["size"] == WIRE
    # the newest members' sources, each once, at most SOURCES_MAX
    want = ["Wire%d" % k for k in reversed(range(WIRE))][:SOURCES_MAX]
    assert [x["name"] for x in s["sources"]] == want
    assert s["firstSeen"] == "2021-07-15T00:00:00Z" and s["lastSeen"] == "2021-07-15T03:13:00Z"
    whole = ok(api.get("/v2/stories/" + s["id"]))
    assert whole["totalResults"] == WIRE and len(whole["articles"]) == WIRE
    assert whole["story"] == {k: s[k] for k in s if k != "article"}
    assert whole["articles"][0] == s["article"]
    got = []
    for page in (1, 2, 3, 4):
        p = ok(api.get("/v2/stories/" + s["id"], [("pageSize", "5"), ("page", str(page))]))
        assert p["totalResults"] == WIRE and p["story"] == whole["story"]
        assert len(p["articles"]) == max(0, min(5, WIRE - 5 * (page - 1)))
        got += p["articles"]
    assert got == whole["articles"]
    err(api.get("/v2/stories/" + s["id"], [("pageSize", "101")]), 400, "parameterInvalid")
    err(api.get("/v2/stories/" + s["id"], [("page", "0")]), 400, "parameterInvalid")


def test_fts5_keeps_an_index_of_stories(env):
    """The FTS5 mode answers a story by an index on articles.story_id, not
    a scan (the engine reads its in-memory story columns instead)."""
    _, d = env
    db = sqlite3.connect(d + "/newsd.db")
    has = db.execute("SELECT count(*) FROM sqlite_master WHERE type = 'index'"
                     " AND name = 'articles_story_id'").fetchone()[0]
    plan = " ".join(r[-1] for r in db.execute(
        "EXPLAIN QUERY PLAN SELECT id FROM articles WHERE (story_id = 1 OR story_id IS NULL)"
        " AND id BETWEEN 0 AND 9 ORDER BY id DESC"))
    db.close()
    fts5 = os.environ.get("NEWSD_INDEX") == "fts5"
    assert has == (1 if fts5 else 0)
    if fts5:
        assert "articles_story_id" in plan


def spread(n_alone, copies_of):
    """n_alone articles alone in their story and stories of copies_of[i]
    copies, all mentioning delta, publication times interleaved."""
    rnd = random.Random(2525)
    vocab = ["v%03d%s" % (i, rnd.choice("ijklmnop")) for i in range(3000)]
    rows = []
    for s in range(n_alone + len(copies_of)):
        words = rnd.sample(vocab, 120)
        size = 1 if s < n_alone else copies_of[s - n_alone]
        for k in range(size):
            rows.append({
                "source": {"id": None, "name": "Spread%d" % k}, "author": None,
                "title": "Spread %d: %s" % (s, " ".join(words[:7])),
                "description": "delta %s %d" % (words[0], s),
                "url": "https://spread%d.example/n/%d" % (k, s), "urlToImage": None,
                "publishedAt": "2021-07-%02dT%02d:%02d:00Z" % (10 + s % 4, 8 + k, s % 60),
                "content": "delta %s" % " ".join(words[7:]), "headline": True})
    return rows


DELTA = [("/v2/everything", [("q", "delta")]),
         ("/v2/everything", [("q", "delta"), ("sortBy", "publishedAt"), ("from", "2021-07-11")]),
         ("/v2/everything", [("q", "delta OR spread"), ("sortBy", "relevancy")]),
         ("/v2/everything", [("q", "delta"), ("sortBy", "popularity")])]


def test_dedupe_stays_exact_as_copies_come_and_go_across_segments(tmp_path):
    """Most matches alone in their story (the engine counts those without
    listing them): copies that join a story from another segment (a later
    import), and copies deleted, keep dedupe and /v2/stories equal to the
    oracle, in every order, paged."""
    d = str(tmp_path)
    rows = spread(40, [2, 3, 2])
    first = [r for r in rows if "spread0." in r["url"]]
    import_jsonl(d, first)
    import_jsonl(d, [r for r in rows if r not in first])  # copies: later segments
    key = cli_ok("keys", "create", "--create", "--store", d, "--name", "s").out.strip()
    srv = Server(d, now=NOW, env={"NEWSD_ENGINE_SEGMENT_DOCS": "5"})
    try:
        api = Client(srv.base, key)

        # words of articles alone in their story only: a walk by relevancy
        # meets no match the engine listed
        lone_words = " OR ".join(first[i]["description"].split()[1] for i in (2, 5, 9))
        alone_only = [("/v2/everything", [("q", lone_words), ("sortBy", sort)])
                for sort in ("relevancy", "popularity")]

        def check():
            for path, params in DELTA + alone_only:
                assert_dedupe_is_the_oracle(api, d, path, params, (1, 4, 100))
            return assert_stories_are_the_oracle(api, d, "delta")
        want = check()
        assert len(want) == 43 and sorted(len(m) for _, _, m in want)[-3:] == [2, 2, 3]
        # a copy of an article alone so far, from a new segment
        lone = first[7]
        import_jsonl(d, [dict(lone, url="https://late.example/n/7",
                              source={"id": None, "name": "Late"},
                              publishedAt=lone["publishedAt"].replace("T08", "T09"))])
        want = check()
        assert len(want) == 43 and sorted(len(m) for _, _, m in want)[-4:] == [2, 2, 2, 3]
        # copies deleted: a story of two left alone, one of three down to two
        for url in ("https://late.example/n/7", "https://spread1.example/n/41",
                    "https://spread2.example/n/41"):
            cli_ok("articles", "delete", "--store", d, "--url", url)
        want = check()
        assert len(want) == 43 and sorted(len(m) for _, _, m in want)[-3:] == [1, 2, 2]
        # an article alone in its story deleted
        cli_ok("articles", "delete", "--store", d, "--url", first[3]["url"])
        assert len(check()) == 42
    finally:
        assert not srv.stop()
