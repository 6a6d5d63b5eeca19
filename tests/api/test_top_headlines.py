"""/v2/top-headlines (§2, §8): the live window (clock fixed with NEWSD_NOW),
filters, order, paging, validation."""
import json
import os

import pytest

from harness import Client, Server, articles_ok, cli_ok, err, urls

TH = "/v2/top-headlines"
H = "https://newsd.test/"


def check(api, corpus, params, expect, page_size=None, page=1):
    exp = corpus.top_headlines(**expect)
    p = list(params)
    if page_size:
        p.append(("pageSize", str(page_size)))
    if page != 1:
        p.append(("page", str(page)))
    b = articles_ok(api.get(TH, p))
    n = page_size or 20
    want = exp[(page - 1) * n:page * n]
    assert b["totalResults"] == len(exp), (params, [a.url for a in exp][:5])
    assert urls(b) == [a.url for a in want], params
    assert b["articles"] == [a.rendered() for a in want], params
    return b


def test_fixture_window_is_meaningful(corpus):
    """The fixture has headlines on both sides of the window, and the window
    ends at NOW because a (future) headline is newer than NOW."""
    hl = [a for a in corpus.articles if a.headline]
    assert corpus.window_end() == corpus.now
    assert any(a.t > corpus.now for a in hl)
    assert any(a.t < corpus.now - corpus.window for a in hl)
    assert len(corpus.top_headlines(country="us")) > 20


@pytest.mark.parametrize("country", ["us", "gb", "fr", "in", "au", "ru", "nz", "ca", "US", "Gb"])
def test_country(api, corpus, country):
    check(api, corpus, [("country", country)], {"country": country})


@pytest.mark.parametrize("category", ["business", "technology", "general", "science", "health",
                                      "sports", "Business", "TECHNOLOGY"])
def test_category(api, corpus, category):
    check(api, corpus, [("category", category)], {"category": category})


@pytest.mark.parametrize("country,category", [("us", "business"), ("in", "technology"),
                                              ("gb", "general"), ("fr", "sports")])
def test_country_and_category(api, corpus, country, category):
    check(api, corpus, [("country", country), ("category", category)],
          {"country": country, "category": category})


@pytest.mark.parametrize("sources", ["bbc-news", "the-times-of-india", "cnn,techcrunch",
                                     " the-times-of-india , bbc-news ", "newsd-test-wire"])
def test_sources(api, corpus, sources):
    check(api, corpus, [("sources", sources)], {"sources": sources})


def test_sources_repeated(api, corpus):
    check(api, corpus, [("sources", "bbc-news"), ("sources", "the-times-of-india")],
          {"sources": "bbc-news,the-times-of-india"})


@pytest.mark.parametrize("q", ['"the"', '"india"', '"the" -"india"', 'inheritmark'])
def test_q(api, corpus, q):
    check(api, corpus, [("q", q)], {"q": q}, page_size=100)


def test_qintitle(api, corpus):
    check(api, corpus, [("qInTitle", '"the"')], {"qintitle": '"the"'}, page_size=100)
    check(api, corpus, [("q", '"the"'), ("qInTitle", '"india"')],
          {"q": '"the"', "qintitle": '"india"'}, page_size=100)


@pytest.mark.parametrize("language", ["en", "fr", "ru", "EN", "xx", "hi"])
def test_language(api, corpus, language):
    check(api, corpus, [("language", language)], {"language": language}, page_size=100)


def test_unknown_country_gives_empty_list(api):
    b = articles_ok(api.get(TH, [("country", "xx")]))
    assert b == {"status": "ok", "totalResults": 0, "articles": []}


# ---- order and paging -------------------------------------------------------------
def test_default_order_earliest_first_and_page_size_20(api, corpus):
    exp = corpus.top_headlines(q='"the"')
    assert len(exp) > 40
    b = articles_ok(api.get(TH, [("q", '"the"')]))
    assert len(b["articles"]) == 20
    times = [a["publishedAt"] for a in b["articles"]]
    assert times == sorted(times)
    assert urls(b) == [a.url for a in exp[:20]]


@pytest.mark.parametrize("sort", ["publishedAt", "PUBLISHEDAT"])
def test_sort_published_at_newest_first(api, corpus, sort):
    exp = corpus.top_headlines(q='"the"', newest_first=True)
    b = articles_ok(api.get(TH, [("q", '"the"'), ("sortBy", sort), ("pageSize", "100")]))
    assert urls(b) == [a.url for a in exp]


@pytest.mark.parametrize("sort", ["relevancy", "popularity"])
def test_other_sorts_accepted(api, corpus, sort):
    exp = corpus.top_headlines(q='"the"')
    b = articles_ok(api.get(TH, [("q", '"the"'), ("sortBy", sort), ("pageSize", "100")]))
    assert b["totalResults"] == len(exp)
    assert sorted(urls(b)) == sorted(a.url for a in exp)


def test_pages_concatenate(api, corpus):
    exp = corpus.top_headlines(q='"the"')
    got, page = [], 1
    while True:
        b = articles_ok(api.get(TH, [("q", '"the"'), ("pageSize", "7"), ("page", str(page))]))
        assert b["totalResults"] == len(exp)
        if not b["articles"]:
            break
        got += urls(b)
        page += 1
    assert got == [a.url for a in exp]


def test_page_two_default_size(api, corpus):
    check(api, corpus, [("country", "in")], {"country": "in"}, page=2)


# ---- the live window ---------------------------------------------------------------------
def test_window_excludes_future_and_old(api, corpus):
    for word in ("kwazzlecron", "oldquill"):  # hl-future, hl-old: headlines outside
        b = articles_ok(api.get(TH, [("q", word)]))
        assert b["totalResults"] == 0, word
        b = articles_ok(api.get("/v2/everything", [("q", word)]))
        assert b["totalResults"] == 1, word
    all_hl = corpus.top_headlines(q='"the"')
    assert all(corpus.now - corpus.window <= a.t <= corpus.now for a in all_hl)


def test_country_and_category_inherited_from_source(api):
    """A headline imported without country/category takes its source's (bbc-news: gb, general)."""
    b = articles_ok(api.get(TH, [("country", "gb"), ("category", "general"), ("q", "inheritmark")]))
    assert urls(b) == [H + "hl-inherit"]


def test_reimport_replaces_flags(api):
    """§8 upsert: update-1 became a headline (nz/science) with a new title;
    update-2 stopped being one."""
    b = articles_ok(api.get(TH, [("country", "nz")]))
    assert urls(b) == [H + "update-1"]
    assert b["articles"][0]["title"] == "Revised snarfle story"
    assert articles_ok(api.get(TH, [("country", "ie")]))["totalResults"] == 0
    assert articles_ok(api.get(TH, [("q", "glimmerfen")]))["totalResults"] == 0
    assert articles_ok(api.get("/v2/everything", [("q", "blorptitle")]))["totalResults"] == 0
    assert articles_ok(api.get("/v2/everything", [("q", "snarfle")]))["totalResults"] == 1


def test_headline_of_other_language_and_country(api):
    b = articles_ok(api.get(TH, [("country", "ca"), ("language", "fr")]))
    assert urls(b) == [H + "hl-ca"]
    b = articles_ok(api.get(TH, [("country", "ca"), ("language", "en")]))
    assert b["totalResults"] == 0


# ---- validation --------------------------------------------------------------------------
MISSING = ("Required parameters are missing. Please set any of the following parameters "
           "and try again: sources, q, language, country, category.")


@pytest.mark.parametrize("params", [[], [("pageSize", "5")], [("sortBy", "publishedAt")],
                                    [("q", "")], [("country", ""), ("foo", "bar")],
                                    [("searchIn", "title")], [("domains", "bbc.co.uk")]])
def test_parameters_missing(api, params):
    err(api.get(TH, params), 400, "parametersMissing", MISSING)


INCOMPATIBLE = "You cannot mix the sources parameter with the country or category parameters."


@pytest.mark.parametrize("params", [
    [("sources", "bbc-news"), ("country", "us")],
    [("sources", "bbc-news"), ("category", "business")],
    [("sources", "no-such-source"), ("country", "us")],
    [("sources", "bbc-news"), ("country", "usa")],
    [("sources", "bbc-news"), ("category", "bogus"), ("pageSize", "0")],
])
def test_parameters_incompatible(api, params):
    err(api.get(TH, params), 400, "parametersIncompatible", INCOMPATIBLE)


@pytest.mark.parametrize("name,value", [
    ("country", "usa"), ("country", "u"), ("country", "u1"), ("country", "1"), ("country", "u s"),
    ("category", "bogus"), ("category", "sport"), ("category", "business,sports"),
    ("language", "eng"), ("language", "e"), ("language", "e1"),
    ("pageSize", "0"), ("pageSize", "101"), ("page", "0"), ("pageSize", "2.5"), ("page", "-1"),
    ("sortBy", "newest"),
])
def test_parameter_invalid(api, name, value):
    b = err(api.get(TH, [("q", "the"), (name, value)]), 400, "parameterInvalid")
    # The parameter named as the client spelt it (any message holds "q").
    assert b["message"].startswith("The %s parameter " % name), b["message"]


def test_sources_too_many_and_unknown(api):
    many = ",".join("src-%d" % i for i in range(21))
    err(api.get(TH, [("sources", many)]), 400, "sourcesTooMany",
        "You have requested too many sources in a single request. Try splitting the request "
        "into 2 smaller requests.")
    err(api.get(TH, [("sources", "bbc-news,no-such-source")]), 400, "sourceDoesNotExist",
        "You have requested a source which does not exist: no-such-source.")


def test_q_length_limit(api):
    articles_ok(api.get(TH, [("q", "é" * 500)]))
    err(api.get(TH, [("q", "é" * 501)]), 400, "parameterInvalid",
        "The q parameter is too long: 501 characters, the limit is 500.")


# ---- a store that is not being fed ---------------------------------------------------------
@pytest.fixture(scope="module")
def stale(tmp_path_factory):
    """Headlines from January 2020 served with the clock in 2024: the window
    ends at the newest headline, so the last 48 h of headlines still show."""
    d = tmp_path_factory.mktemp("stale")
    rows = [("2020-01-10T12:00:00Z", "newest"), ("2020-01-09T00:00:00Z", "36h-before"),
            ("2020-01-08T12:00:01Z", "47h59m59s-before"), ("2020-01-08T11:00:00Z", "49h-before"),
            ("2019-12-01T00:00:00Z", "old")]
    f = d / "hl.jsonl"
    f.write_text("".join(json.dumps({
        "source": {"id": None, "name": "Stale Times"}, "author": None, "title": "Stale " + n,
        "description": None, "url": "https://stale.test/" + n, "urlToImage": None,
        "publishedAt": t, "content": None}) + "\n" for t, n in rows))
    g = d / "plain.jsonl"
    g.write_text(json.dumps({
        "source": {"id": None, "name": "Stale Times"}, "title": "Stale not a headline",
        "url": "https://stale.test/plain", "publishedAt": "2020-01-10T00:00:00Z"}) + "\n")
    store = str(d / "store")
    os.mkdir(store)
    cli_ok("import", "--create", "--store", store, "--headlines", "--country", "us", "--category", "sports",
           str(f))
    cli_ok("import", "--create", "--store", store, str(g))
    key = cli_ok("keys", "create", "--create", "--store", store).out.strip()
    srv = Server(store, now=1704067200)  # 2024-01-01
    yield Client(srv.base, key)
    problems = srv.stop()
    assert not problems, "\n".join(problems)


def test_stale_store_shows_latest_headlines(stale):
    b = articles_ok(stale.get(TH, [("country", "us")]))
    want = ["47h59m59s-before", "36h-before", "newest"]
    assert urls(b) == ["https://stale.test/" + w for w in want]
    b = articles_ok(stale.get(TH, [("category", "sports"), ("sortBy", "publishedAt")]))
    assert urls(b) == ["https://stale.test/" + w for w in reversed(want)]
    assert articles_ok(stale.get(TH, [("q", "stale")]))["totalResults"] == 3
    assert articles_ok(stale.get("/v2/everything", [("q", "stale")]))["totalResults"] == 6
