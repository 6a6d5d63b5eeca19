"""/v2/everything (§2, §3, §4, §8) against the reference model of corpus.py."""
import re

import pytest

from harness import articles_ok, err, parse_json, urls

H = "https://newsd.test/"
EV = "/v2/everything"


def check(api, corpus, params, expect, page_size=100):
    """One page of /everything equals the reference: total, order, objects."""
    exp = corpus.everything(**expect)
    b = articles_ok(api.get(EV, list(params) + [("pageSize", str(page_size))]))
    assert b["totalResults"] == len(exp), (params, [a.url for a in exp][:10], urls(b)[:10])
    assert urls(b) == [a.url for a in exp[:page_size]], params
    assert b["articles"] == [a.rendered() for a in exp[:page_size]], params
    return b


def fetch_all(api, params, page_size):
    """Every page until an empty one; totalResults must not change."""
    got, total, page = [], None, 1
    while True:
        b = articles_ok(api.get(EV, list(params) + [("pageSize", str(page_size)),
                                                      ("page", str(page))]))
        if total is None:
            total = b["totalResults"]
        assert b["totalResults"] == total, "totalResults changed on page %d" % page
        if not b["articles"]:
            break
        assert len(b["articles"]) <= page_size
        got.extend(b["articles"])
        page += 1
        assert page < 100
    return total, got


# ---- whole-store rendering -----------------------------------------------------------
def test_every_article_is_rendered_as_imported(api, corpus):
    """Every stored article, paged newest first, equals §3's rendering of the
    fixture line: fields verbatim, publishedAt normalised, content truncated,
    source.id null when the line had none."""
    tlds = sorted({a.host.rsplit(".", 1)[-1] for a in corpus.articles})
    total, got = fetch_all(api, [("domains", ",".join(tlds))], 100)
    exp = sorted(corpus.articles, key=lambda a: -a.t)
    assert total == len(exp)
    assert [a["url"] for a in got] == [a.url for a in exp]
    for g, e in zip(got, exp):
        assert g == e.rendered(), e.url


# ---- q: query language over the real corpus (quoted words: exact tokens) ----------------
@pytest.mark.parametrize("q", [
    '"covid"', '"police"', '"apple" OR "google"', '"covid" NOT "vaccine"',
    '"covid" "vaccine"', '"covid" AND "vaccine"', '"prime minister"', '"india" -"covid"',
    '("apple" OR "google") AND "the"', '"the"', '"Twitter"', '"ELON MUSK"',
])
def test_q_real_corpus(api, corpus, q):
    check(api, corpus, [("q", q)], {"q": q})


@pytest.mark.parametrize("searchin", [
    "title", "description", "content", "title,content", "description,title",
    "TITLE", " title , description ", "title,description,content"])
def test_searchin(api, corpus, searchin):
    check(api, corpus, [("q", '"covid"'), ("searchIn", searchin)],
          {"q": '"covid"', "searchin": searchin})


@pytest.mark.parametrize("q", ['"covid"', '"the" "india"', 'plinthor OR zebulox'])
def test_qintitle(api, corpus, q):
    check(api, corpus, [("qInTitle", q)], {"qintitle": q})


def test_q_and_qintitle_both_must_match(api, corpus):
    check(api, corpus, [("q", '"vaccine"'), ("qInTitle", '"covid"')],
          {"q": '"vaccine"', "qintitle": '"covid"'})


def test_searchin_applies_to_q_only(api, corpus):
    """qInTitle always searches titles, whatever searchIn says."""
    check(api, corpus, [("qInTitle", '"covid"'), ("searchIn", "content")],
          {"qintitle": '"covid"'})
    check(api, corpus, [("q", '"the"'), ("qInTitle", '"covid"'), ("searchIn", "description")],
          {"q": '"the"', "qintitle": '"covid"', "searchin": "description"})


def test_repeated_q_joined_with_and(api, corpus):
    b = check(api, corpus, [("q", "plinthor"), ("q", "zebulox")],
              {"q": ["plinthor", "zebulox"]})
    assert urls(b) == [H + "q2"]


# ---- q: the operators, on hand-made articles ------------------------------------------
QUERIES = [
    # (q, urls the contract gives, by hand)
    ("plinthor", {"q1", "q2", "q4"}),
    ("plinthor quorvax", {"q1"}),
    ("plinthor AND quorvax", {"q1"}),
    ("plinthor OR zebulox", {"q1", "q2", "q3", "q4", "q5"}),
    ("plinthor OR quorvax AND zebulox", {"q1", "q2", "q4", "q3"}),
    ("(plinthor OR quorvax) AND zebulox", {"q2", "q3"}),
    ("plinthor NOT quorvax", {"q2", "q4"}),
    ("plinthor -quorvax", {"q2", "q4"}),
    ("NOT quorvax AND plinthor", {"q2", "q4"}),
    ("+plinthor +zebulox", {"q2"}),
    ("plinthor OR +zebulox", {"q1", "q2", "q3", "q4", "q5"}),
    ("plinthor AND NOT (quorvax OR zebulox)", {"q4"}),
    ("PLINTHOR Zebulox", {"q2"}),
    ('"vorpalix snickersnee"', {"q-ph1"}),
    ('"snickersnee vorpalix"', {"q-ph2"}),
    ("vorpalix snickersnee", {"q-ph1", "q-ph2"}),
    ('vorpalix -"vorpalix snickersnee"', {"q-ph2"}),
    ('+"vorpalix snickersnee" blade', {"q-ph1"}),
    ("zyxtro-42", {"q-hy1"}),
    ("zyxtro 42", {"q-hy1", "q-hy2"}),
    ("flurbonia", {"q-ap"}),
    ('"flurbonia s"', {"q-ap"}),
    ("5g qorvitex", {"q-5g"}),
    ('"5" qorvitex', set()),
    ("grimbly rock and roll", {"q-rock1"}),
    ("grimbly rock roll", {"q-rock1", "q-rock2"}),
    ("wubbleton or", {"q-ops"}),
    ("wubbleton not", {"q-ops"}),
    ("wubbleton and", {"q-ops"}),
    ("grimbly and", {"q-rock1"}),
]


@pytest.mark.parametrize("q,want", QUERIES, ids=[q for q, _ in QUERIES])
def test_query_language(api, corpus, q, want):
    exp = corpus.everything(q=q, domains="newsd.test")
    assert {a.url for a in exp} == {H + w for w in want}, "reference disagrees with the hand answer"
    check(api, corpus, [("q", q), ("domains", "newsd.test")], {"q": q, "domains": "newsd.test"})


@pytest.mark.parametrize("q,want", [
    ("cafe", "l-fr"), ("CAFÉ", "l-fr"), ("café", "l-fr"), ("montréal", "l-fr"),
    ("zurich", "l-de"), ("ZÜRICH", "l-de"), ("straße", "l-de"),
    ("人工智能", "l-zh"), ("智能", "l-zh"), ('"发展迅速"', "l-zh"), ("Москва", "l-ru"),
])
def test_case_accents_and_cjk(api, corpus, q, want):
    b = check(api, corpus, [("q", q), ("domains", "newsd.test")], {"q": q, "domains": "newsd.test"})
    assert urls(b) == [H + want]


def test_plus_must_be_percent_encoded(api, corpus):
    """In a query string '+' is a space (§8): 'q=+plinthor' is just 'plinthor',
    '%2B' is the operator; both must work, raw '+' between words is AND."""
    r = api.raw_get(EV + "?q=plinthor+zebulox&domains=newsd.test&apiKey=" + api.key)
    assert r[0] == 200, r
    b = parse_json(r[2])
    assert [a["url"] for a in b["articles"]] == [H + "q2"]
    st, _, body = api.raw_get(EV + "?q=%2Bplinthor%20%2Bquorvax&domains=newsd.test&apiKey="
                              + api.key)
    assert st == 200
    assert [a["url"] for a in parse_json(body)["articles"]] == [H + "q1"]


# ---- sources ----------------------------------------------------------------------
@pytest.mark.parametrize("params,sources", [
    ([("sources", "bbc-news")], "bbc-news"),
    ([("sources", "bbc-news,cnn")], "bbc-news,cnn"),
    ([("sources", " bbc-news , cnn ")], "bbc-news,cnn"),
    ([("sources", "bbc-news"), ("sources", "cnn,fox-news")], "bbc-news,cnn,fox-news"),
    ([("sources", "hacker-news")], "hacker-news"),
    ([("sources", "newsd-archive")], "newsd-archive"),
])
def test_sources(api, corpus, params, sources):
    check(api, corpus, params, {"sources": sources})


def test_unknown_source_id_of_an_article_is_registered(api, corpus):
    """§8: an imported article whose source.id is not in the catalogue registers
    it, so sources= finds the article, and its source.id comes back."""
    b = check(api, corpus, [("sources", "newsd-test-wire")], {"sources": "newsd-test-wire"})
    assert urls(b) == [H + "unknown-source"]
    assert b["articles"][0]["source"] == {"id": "newsd-test-wire", "name": "Newsd Test Wire"}


def test_source_id_null_without_catalogue_publisher(api, corpus):
    b = articles_ok(api.get(EV, [("q", "nullcheck"), ("domains", "newsd.test")]))
    got = {a["url"]: a for a in b["articles"]}
    assert set(got) == {H + "nulls", H + "no-id-key"}
    n = got[H + "nulls"]
    assert n["source"] == {"id": None, "name": "Newsd Test Gazette"}
    assert n["author"] is None and n["description"] is None
    assert n["urlToImage"] is None and n["content"] is None
    k = got[H + "no-id-key"]
    assert k["source"] == {"id": None, "name": "Newsd Wire Desk"}
    assert k["author"] is None and k["urlToImage"] is None


# ---- domains ---------------------------------------------------------------------
@pytest.mark.parametrize("params", [
    [("domains", "newsd.test")],
    [("domains", "www.newsd.test")],
    [("domains", "NEWSD.Test")],
    [("domains", "sub.newsd.test")],
    [("domains", "deep.sub.newsd.test")],
    [("domains", "notnewsd.test")],
    [("domains", "example.co.uk")],
    [("domains", "co.uk")],
    [("domains", "bbc.co.uk")],
    [("domains", "newsd.test,notnewsd.test")],
    [("domains", "newsd.test"), ("domains", "example.co.uk")],
    [("domains", "newsd.test"), ("excludeDomains", "sub.newsd.test")],
    [("domains", "newsd.test"), ("excludeDomains", "www.caps.newsd.test,sub.newsd.test")],
    [("domains", "com"), ("excludeDomains", "cnn.com"), ("excludeDomains", "foxnews.com")],
    [("domains", " co.uk , newsd.test "), ("excludeDomains", " bbc.co.uk ")],
])
def test_domains(api, corpus, params):
    exp = {}
    for k, v in params:
        key = {"domains": "domains", "excludeDomains": "exclude"}[k]
        exp[key] = exp[key] + "," + v if key in exp else v
    check(api, corpus, params, exp)


def test_domains_hand_answers(api, corpus):
    b = articles_ok(api.get(EV, [("q", "domaincheck"), ("domains", "www.newsd.test")]))
    assert set(urls(b)) == {"https://www.newsd.test/m1", "https://deep.sub.newsd.test/m3",
                            "https://Caps.Newsd.Test/m5"}
    b = articles_ok(api.get(EV, [("q", "domaincheck"), ("domains", "co.uk")]))
    assert set(urls(b)) == {"https://www.example.co.uk/m6", "https://shop.example.co.uk/m7"}


# ---- from / to ---------------------------------------------------------------------
D = "https://newsd.test/d"
DATES = [
    ("2019-03-10", "2019-03-10", {2, 3, 4}),
    ("2019-03-10T12:30:45", "2019-03-10T12:30:45", {3}),
    ("2019-03-10T12:30:45Z", "2019-03-10T12:30:45Z", {3}),
    ("2019-03-10T12:30:45.999Z", "2019-03-10T12:30:45.001", {3}),
    ("2019-03-10T12:30:46", "2019-03-10", {4}),
    (None, "2019-03-10T12:30:44.999Z", {1, 2}),
    ("2019-03-10T14:30:45+02:00", "2019-03-10T14:30:45+02:00", {3}),
    ("2019-03-10T07:00:45-05:30", "2019-03-10T07:00:45.5-05:30", {3}),
    ("2019-03-10T23:59:59", "2019-03-11", {4, 5}),
    ("2019-03-09T23:59:59Z", "2019-03-09", {1}),
    ("2019-03-10T12:00:00", "2019-03-10", {3, 4}),
    ("2019-03-12", "2019-03-12", {6, 7, 8, 9, 10}),
    ("2019-03-12T12:30:45Z", "2019-03-12T12:30:45Z", {6}),
    ("2019-03-12T13:30:00Z", "2019-03-12T13:30:00Z", {7}),
    ("2019-03-12T10:11:12Z", "2019-03-12T10:11:12Z", {8}),
    ("2019-03-12T09:08:07Z", "2019-03-12T09:08:07Z", {9}),
    ("2019-03-12T20:30:00Z", "2019-03-12T20:30:00Z", {10}),
    ("2019-03-09T23:59:59Z", "2019-03-13", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}),
]


@pytest.mark.parametrize("frm,to,want", DATES)
def test_from_to(api, corpus, frm, to, want):
    """Inclusive bounds, date-only to = whole day, fractions truncated, offsets;
    imported publishedAt normalised the same way (d6..d10 carry offsets,
    fractions and no zone in the fixture)."""
    params = [("q", "datecheck"), ("domains", "newsd.test")]
    if frm:
        params.append(("from", frm))
    if to:
        params.append(("to", to))
    b = articles_ok(api.get(EV, params))
    assert set(urls(b)) == {D + str(i) for i in want}
    assert b["totalResults"] == len(want)
    exp = corpus.everything(domains="newsd.test", frm=frm, to=to)
    exp = [a for a in exp if a.url.startswith(D)]
    assert urls(b) == [a.url for a in exp]


def test_imported_published_at_normalised(api):
    b = articles_ok(api.get(EV, [("q", "datecheck"), ("domains", "newsd.test")]))
    got = {a["url"]: a["publishedAt"] for a in b["articles"]}
    assert got[D + "6"] == "2019-03-12T12:30:45Z"
    assert got[D + "7"] == "2019-03-12T13:30:00Z"
    assert got[D + "8"] == "2019-03-12T10:11:12Z"
    assert got[D + "9"] == "2019-03-12T09:08:07Z"
    assert got[D + "10"] == "2019-03-12T20:30:00Z"


def test_from_to_real_corpus(api, corpus):
    check(api, corpus, [("domains", "com"), ("from", "2021-07-01"), ("to", "2022-01-04")],
          {"domains": "com", "frm": "2021-07-01", "to": "2022-01-04"})
    check(api, corpus, [("q", '"the"'), ("from", "2023-01-06T10:00:00+01:00")],
          {"q": '"the"', "frm": "2023-01-06T10:00:00+01:00"})


@pytest.mark.parametrize("frm,to", [
    ("2021-02-30", None), (None, "2021-02-29"), ("2021-13-01", None), ("2021-1-1", None),
    ("yesterday", None), ("2021-02-28T25:00:00", None), ("2021-02-28T10:61:00Z", None),
    ("2021-02-28T10:00:00+25:00", None), ("20210228", None), ("2019-03-11", "2019-03-10"),
    ("2019-03-10T00:00:01", "2019-03-10T00:00:00"), ("1677721600", None),
])
def test_bad_dates(api, frm, to):
    params = [("q", "datecheck")]
    if frm:
        params.append(("from", frm))
    if to:
        params.append(("to", to))
    b = err(api.get(EV, params), 400, "parameterInvalid")
    assert re.search(r"\b(from|to)\b", b["message"]), b["message"]


# ---- a broad filter at few candidates: read from the facet column ----------------
# A language or source term whose documents outnumber the query's matches
# more than 4 to 1 is checked at each match from its facet column instead of
# being decoded (index/engine/sets.c, COLUMN_RATIO); the answers must be the
# decoded ones'.
@pytest.mark.parametrize("name,value,word", [
    ("language", "en", "said"), ("language", "en", "people"), ("language", "en", "police"),
    ("sources", "bbc-news", "government"), ("sources", "bbc-news", "police"),
    ("sources", "bbc-news", "war")])
def test_broad_filter_at_few_matches(api, corpus, name, value, word):
    q = '"%s"' % word
    matches, everyone = corpus.everything(q=q), corpus.everything(**{name: value})
    assert 0 < 4 * len(matches) < len(everyone), (word, name, len(matches), len(everyone))
    check(api, corpus, [("q", q), (name, value)], {"q": q, name: value})


@pytest.mark.parametrize("word", ["government", "war", "water", "said"])
def test_not_a_source_at_few_matches(api, word):
    """The column's negated narrowing (NOT source:…) against two plain searches."""
    q = '"%s"' % word
    total = articles_ok(api.get(EV, [("q", q)]))["totalResults"]
    bbc = articles_ok(api.get(EV, [("q", q), ("sources", "bbc-news")]))["totalResults"]
    b = articles_ok(api.get(EV, [("q", q + " NOT source:bbc-news"), ("pageSize", "100")]))
    assert bbc > 0 and b["totalResults"] == total - bbc, (word, total, bbc, b["totalResults"])
    assert all(a["source"]["id"] != "bbc-news" for a in b["articles"])


# ---- language ---------------------------------------------------------------------
@pytest.mark.parametrize("lang", ["en", "fr", "ru", "EN", "Fr", "zh", "de", "es", "ud", "he"])
def test_language(api, corpus, lang):
    check(api, corpus, [("domains", "com,ru,fr,test,uk,de,it,no,ar,br,jp"), ("language", lang)],
          {"domains": "com,ru,fr,test,uk,de,it,no,ar,br,jp", "language": lang})


def test_language_se_is_sv(api, corpus):
    """§2: `se` is accepted as sv; the article whose catalogue source says `se`
    (svenska-dagbladet, stored verbatim) is Swedish too."""
    want = {H + "l-sv", H + "l-se-source"}
    for lang in ("sv", "se", "SE"):
        b = articles_ok(api.get(EV, [("q", "langcheck"), ("language", lang)]))
        assert set(urls(b)) == want, lang


@pytest.mark.parametrize("lang", ["xx", "english", "e", "ja", "hi", "e1", "en,fr"])
def test_language_invalid(api, lang):
    b = err(api.get(EV, [("q", "plinthor"), ("language", lang)]), 400, "parameterInvalid")
    assert b["message"].startswith("The language parameter must be "), b["message"]


# ---- sortBy ---------------------------------------------------------------------------
def test_sort_published_at_default_and_explicit(api, corpus):
    exp = [a.url for a in corpus.everything(domains="newsd.test")]
    for sort in (None, "publishedAt", "PUBLISHEDAT", "publishedat"):
        params = [("domains", "newsd.test")] + ([("sortBy", sort)] if sort else [])
        assert urls(articles_ok(api.get(EV, params))) == exp, sort


def test_sort_relevancy_title_before_body(api):
    for sort in ("relevancy", "Relevancy"):
        b = articles_ok(api.get(EV, [("q", "zorblaxian"), ("sortBy", sort)]))
        assert b["totalResults"] == 3
        assert urls(b)[0] == H + "r1", urls(b)
        assert set(urls(b)) == {H + "r1", H + "r2", H + "r3"}
    b = articles_ok(api.get(EV, [("q", "zorblaxian")]))
    assert urls(b) == [H + "r3", H + "r2", H + "r1"]


def test_sort_popularity_follows_catalogue(api, corpus):
    ids = ["bbc-news", "cnn", "reuters"]
    pops = {i: corpus.popularity(i) for i in ids}
    assert len(set(pops.values())) == 3
    exp = [H + "p-" + i.split("-")[0] for i in sorted(ids, key=lambda i: -pops[i])]
    b = articles_ok(api.get(EV, [("q", "quibbleflux"), ("sortBy", "popularity")]))
    assert urls(b) == exp


def test_sort_popularity_non_increasing(api, corpus):
    srcs = "bbc-news,cnn,fox-news,google-news,the-times-of-india,abc-news,reuters"
    exp = corpus.everything(sources=srcs)
    total, got = fetch_all(api, [("sources", srcs), ("sortBy", "popularity")], 50)
    assert total == len(exp) > 100
    assert sorted(a["url"] for a in got) == sorted(a.url for a in exp)
    pops = [corpus.popularity(a["source"]["id"]) for a in got]
    assert pops == sorted(pops, reverse=True), pops


def test_sort_relevancy_same_set(api, corpus):
    exp = corpus.everything(q='"covid"')
    b = articles_ok(api.get(EV, [("q", '"covid"'), ("sortBy", "relevancy")]))
    assert b["totalResults"] == len(exp)
    assert sorted(urls(b)) == sorted(a.url for a in exp)


@pytest.mark.parametrize("sort", ["newest", "date", "popular", "relevance",
                                  "publishedAt,relevancy"])
def test_sort_invalid(api, sort):
    err(api.get(EV, [("q", "plinthor"), ("sortBy", sort)]), 400, "parameterInvalid",
        "The sortBy parameter must be one of publishedAt, relevancy, popularity.")


# ---- content (§3) -----------------------------------------------------------------------
def fixture_content(corpus, name):
    return corpus.article(H + name).line["content"]


def get_one(api, url_tail, q):
    b = articles_ok(api.get(EV, [("q", q), ("domains", "newsd.test")]))
    got = {a["url"]: a for a in b["articles"]}
    return got[H + url_tail]


def test_content_exactly_200_is_whole(api, corpus):
    c = fixture_content(corpus, "len-200")
    assert len(c) == 200
    assert get_one(api, "len-200", "lencheck")["content"] == c


def test_content_201_is_cut(api, corpus):
    c = fixture_content(corpus, "len-201")
    assert len(c) == 201 and c[197:199] == "😀漢"
    got = get_one(api, "len-201", "lencheck")["content"]
    assert got == c[:199] + "… [+2 chars]"


def test_content_long_is_cut(api, corpus):
    c = fixture_content(corpus, "len-1000")
    got = get_one(api, "len-1000", "lencheck")["content"]
    assert got == c[:199] + "… [+801 chars]"


def test_content_suffix_is_just_text(api, corpus):
    c = fixture_content(corpus, "len-suffix-short")
    assert get_one(api, "len-suffix-short", "lencheck")["content"] == c
    c = fixture_content(corpus, "len-suffix-long")
    assert len(c) == 208
    assert get_one(api, "len-suffix-long", "lencheck")["content"] == c[:199] + "… [+9 chars]"


def test_escapes_round_trip(api, corpus):
    line = corpus.article(H + "escapes").line
    a = get_one(api, "escapes", "escapecheck")
    assert a["title"] == line["title"]
    assert a["description"] == line["description"]
    assert a["content"] == line["content"]


# ---- paging ---------------------------------------------------------------------------
def test_default_page_size_is_100(api, corpus):
    exp = corpus.everything(domains="com")
    assert len(exp) > 200
    b = articles_ok(api.get(EV, [("domains", "com")]))
    assert b["totalResults"] == len(exp)
    assert urls(b) == [a.url for a in exp[:100]]
    b = articles_ok(api.get(EV, [("domains", "com"), ("page", "3")]))
    assert urls(b) == [a.url for a in exp[200:300]]


@pytest.mark.parametrize("size", [1, 7, 40, 100])
def test_pages_concatenate(api, corpus, size):
    params = [("domains", "com,uk")] if size > 1 else [("q", '"covid"')]
    exp = corpus.everything(**({"domains": "com,uk"} if size > 1 else {"q": '"covid"'}))
    total, got = fetch_all(api, params, size)
    assert total == len(exp)
    assert [a["url"] for a in got] == [a.url for a in exp]


def test_page_past_the_end_is_empty(api, corpus):
    exp = corpus.everything(q='"covid"')
    b = articles_ok(api.get(EV, [("q", '"covid"'), ("page", "50"), ("pageSize", "100")]))
    assert b["articles"] == [] and b["totalResults"] == len(exp)


def test_no_match_is_empty_ok(api):
    b = articles_ok(api.get(EV, [("q", "xyzzyplughnothing")]))
    assert b == {"status": "ok", "totalResults": 0, "articles": []}


# ---- stemming (§8) -------------------------------------------------------------------
@pytest.mark.parametrize("q,want", [
    ("stemcheck council", [H + "stem-en"]),       # plain: councils -> council
    ("stemcheck budget approving", [H + "stem-en"]),
    ('stemcheck "councils"', [H + "stem-en"]),    # quoted: the exact token is there
    ('stemcheck "council"', []),                  # quoted: exact tokens only
    ('"stemcheck council"', []),                  # phrases: exact tokens only
    ('"stemcheck councils"', [H + "stem-en"]),
])
def test_stemming_plain_words_only(api, q, want):
    b = articles_ok(api.get(EV, [("q", q)]))
    assert urls(b) == want
