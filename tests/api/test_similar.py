"""similarTo=URL on /v2/everything (issue 25, docs/api.md §9 "More like
this"): the article's story first (newest first), then the matches of an
OR of its heaviest terms by tf-idf ranked by relevancy, the story and the
article left out. The topic part is checked against an oracle: the terms
worked out here from the corpus (the same weights: title 3, description
1.5, content 1, times BM25's idf), searched with q=... OR ... and
sortBy=relevancy on the same server. Either backend (NEWSD_INDEX=fts5
too)."""
import math
import re
from collections import Counter

import pytest

from harness import Client, Server, cli_ok, err, import_jsonl, ok

NOW = 1626480000  # 2021-07-17T00:00:00Z
COMMON = ["report", "today", "officials", "statement", "update"]


def art(host, path, title, desc, content, when):
    return {"source": {"id": None, "name": host.split(".")[0].title()}, "author": None,
            "title": title, "description": desc, "url": "https://%s/%s" % (host, path),
            "urlToImage": None, "publishedAt": when, "content": content}


def corpus():
    rows = []
    # the wire story: four copies on four sites (story/ joins them)
    text = ("Magma surges beneath Grindavik as seismologists track tremors; "
            "lava fountains reach harbour, evacuation ordered, geothermal plant shut. "
            + " ".join(COMMON))
    for k, h in enumerate(["wire1.example", "wire2.example", "wire3.example", "wire4.example"]):
        rows.append(art(h, "volcano", "Volcano erupts near Grindavik harbour",
                        "Lava fountains and tremors", text, "2021-07-1%dT10:00:00Z" % (k + 2)))
    # same topic, other stories: they share some of the story's rare words
    rows.append(art("geo.example", "a", "Seismologists map magma under Reykjanes",
                    "Tremors continue", "The geothermal plant is safe. " + " ".join(COMMON),
                    "2021-07-11T09:00:00Z"))
    rows.append(art("geo2.example", "b", "Harbour reopens after evacuation",
                    "Fishermen return", "Boats back in the harbour of the town. report",
                    "2021-07-10T09:00:00Z"))
    rows.append(art("geo3.example", "c", "Lava: how hot is it",
                    "A science explainer", "Lava can reach 1200 degrees. statement",
                    "2021-07-09T09:00:00Z"))
    # unrelated, sharing only the common words
    for i, topic in enumerate(["football transfer window", "stock market rally",
                               "film festival awards", "election campaign debate",
                               "bakery bread prices", "railway strike talks"]):
        rows.append(art("other%d.example" % i, "x", "The %s" % topic, "More on %s" % topic,
                        "%s %s" % (topic, " ".join(COMMON)), "2021-07-0%dT08:00:00Z" % (i + 1)))
    return rows


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("similar"))
    import_jsonl(d, corpus())
    key = cli_ok("keys", "create", "--create", "--store", d, "--name", "s").out.strip()
    srv = Server(d, now=NOW, env={"NEWSD_ENGINE_SEGMENT_DOCS": "5"})
    yield Client(srv.base, key)
    problems = srv.stop()
    assert not problems, "\n".join(problems)


def tokens(s):
    return [t for t in re.findall(r"[a-z0-9]+", (s or "").lower()) if len(t) >= 3]


def top_terms(a, rows, n=10):
    """The article's heaviest terms as index/similar.c weighs them."""
    tf = Counter()
    for field, w in (("title", 3.0), ("description", 1.5), ("content", 1.0)):
        for t in tokens(a[field]):
            tf[t] += w
    docs = [set(tokens(r["title"]) + tokens(r["description"]) + tokens(r["content"]))
            for r in rows]
    N = len(rows)

    def weight(t):
        df = sum(t in d for d in docs)
        return tf[t] * math.log(1 + (N - df + 0.5) / (df + 0.5))
    # ties by the term's bytes, as index/similar.c breaks them
    return sorted(tf, key=lambda t: (-weight(t), t.encode()))[:n]


def similar(api, url, extra=()):
    got, page = [], 1
    while True:
        b = ok(api.get("/v2/everything", [("similarTo", url), ("pageSize", "3"),
                                          ("page", str(page))] + list(extra)))
        got += b["articles"]
        if not b["articles"]:
            return b["totalResults"], got
        assert b["totalResults"] == total if page > 1 else True
        total = b["totalResults"]
        page += 1


def test_story_first_then_the_topic_by_its_terms(env):
    api = env
    rows = corpus()
    src = rows[1]  # a copy in the middle of the story
    total, got = similar(api, src["url"])
    urls = [a["url"] for a in got]
    story = [r["url"] for r in rows[:4] if r["url"] != src["url"]]
    assert src["url"] not in urls
    # the story's other copies, newest first
    assert urls[:3] == sorted(story, key=lambda u: [r["publishedAt"] for r in rows
                                                    if r["url"] == u][0], reverse=True)
    # then the topic: what the OR of its terms finds, by relevancy, but the story
    terms = top_terms(src, rows)
    assert not set(terms) & set(COMMON), terms  # common words weigh nothing
    b = ok(api.get("/v2/everything", [("q", " OR ".join(terms)), ("sortBy", "relevancy"),
                                      ("pageSize", "100")]))
    want = [a["url"] for a in b["articles"] if a["url"] not in story + [src["url"]]]
    assert urls[3:] == want
    assert total == len(urls) == 3 + len(want)
    assert {u.split("/")[2] for u in want} == {"geo.example", "geo2.example", "geo3.example"}
    # the whole page is NewsAPI's articles, each as /v2/everything writes it
    assert all(list(a) == list(b["articles"][0]) for a in got)


def test_a_lone_article_has_only_its_topic(env):
    api = env
    rows = corpus()
    src = rows[4]
    total, got = similar(api, src["url"])
    urls = [a["url"] for a in got]
    terms = top_terms(src, rows)
    b = ok(api.get("/v2/everything", [("q", " OR ".join(terms)), ("sortBy", "relevancy"),
                                      ("pageSize", "100")]))
    assert urls == [a["url"] for a in b["articles"] if a["url"] != src["url"]]
    assert total == len(urls) and urls
    assert not any("other" in u for u in urls)


def test_the_time_window_applies_to_both_parts(env):
    api = env
    rows = corpus()
    total, got = similar(api, rows[0]["url"], [("from", "2021-07-11"), ("to", "2021-07-13")])
    urls = [a["url"] for a in got]
    # of the story (published 12th to 15th) only the 13th's copy is in the window
    assert urls[0] == rows[1]["url"] and rows[2]["url"] not in urls
    assert rows[3]["url"] not in urls and rows[0]["url"] not in urls
    assert all("2021-07-11" <= a["publishedAt"][:10] <= "2021-07-13" for a in got)
    assert "https://geo.example/a" in urls and "https://geo2.example/b" not in urls
    assert total == len(urls)


def test_an_address_variant_finds_the_article(env):
    api = env
    rows = corpus()
    plain = similar(api, rows[0]["url"])
    # canonical form: scheme/host case and tracking parameters do not matter
    variant = similar(api, rows[0]["url"].replace("https://wire1", "HTTPS://WIRE1")
                      + "?utm_source=x")
    assert plain == variant


@pytest.mark.parametrize("params,status,code", [
    ([("similarTo", "https://nowhere.example/none")], 404, "articleNotFound"),
    ([("similarTo", "not a url")], 400, "parameterInvalid"),
    ([("similarTo", "")], 400, "parametersMissing"),  # empty is absent, as for q
    ([("similarTo", "https://wire1.example/volcano"), ("q", "lava")], 400, "parameterInvalid"),
    ([("similarTo", "https://wire1.example/volcano"), ("sources", "bbc-news")], 400,
     "parameterInvalid"),
    ([("similarTo", "https://wire1.example/volcano"), ("sortBy", "publishedAt")], 400,
     "parameterInvalid"),
    ([("similarTo", "https://wire1.example/volcano"), ("dedupe", "true")], 400,
     "parameterInvalid"),
    ([("similarTo", "https://wire1.example/volcano"), ("cursor", "*")], 400, "parameterInvalid"),
    ([("similarTo", "https://wire1.example/volcano"), ("pageSize", "0")], 400,
     "parameterInvalid"),
    ([("similarTo", "https://wire1.example/volcano"), ("country", "us")], 400,
     "parameterInvalid"),
])
def test_errors(env, params, status, code):
    err(env.get("/v2/everything", params), status, code)


def test_needs_a_key(env):
    err(env.get("/v2/everything", [("similarTo", "https://wire1.example/volcano")], key=None),
        401, "apiKeyMissing")


@pytest.mark.parametrize("window", [[("from", "2021-07-09"), ("to", "2021-07-10")],
                                    [("from", "2021-07-11"), ("to", "2021-07-11")]])
def test_a_lone_article_counts_right_in_and_out_of_the_window(env, window):
    """The engine counts matches alone in their story without listing them:
    the article itself is among them only when the window holds it."""
    api = env
    rows = corpus()
    src = rows[4]  # 2021-07-11, alone in its story
    total, got = similar(api, src["url"], window)
    urls = [a["url"] for a in got]
    terms = top_terms(src, rows)
    b = ok(api.get("/v2/everything", [("q", " OR ".join(terms)), ("sortBy", "relevancy"),
                                      ("pageSize", "100")] + window))
    assert urls == [a["url"] for a in b["articles"] if a["url"] != src["url"]]
    assert total == len(urls)
