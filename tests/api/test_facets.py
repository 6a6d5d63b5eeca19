"""facets= on /v2/everything and /v2/everything/counts (issue 26): the exact
top values over every match (not the page), equal to a brute-force count of
the fixture articles (counts_oracle.py), on both backends; the page's bytes
are the ones a request without facets gets."""
import pytest

from counts_oracle import FACETS, facets
from harness import err

EV = "/v2/everything"


def got(body, name):
    return [(v["value"], v["count"]) for v in body["facets"][name]]


@pytest.mark.parametrize("params,filters", [
    ([("q", "covid")], {"q": "covid"}),
    ([("q", "\"the\"")], {"q": "\"the\""}),
    ([("sources", "abc-news,bbc-news,cnn")], {"sources": "abc-news,bbc-news,cnn"}),
    ([("q", "covid OR \"vaccine\""), ("from", "2021-06-01"), ("to", "2021-12-31")],
     {"q": "covid OR \"vaccine\"", "frm": "2021-06-01", "to": "2021-12-31"}),
    ([("domains", "abcnews.go.com"), ("language", "en")],
     {"domains": "abcnews.go.com", "language": "en"}),
])
@pytest.mark.parametrize("size", [1, 3, 100])
def test_facets_equal_brute_force(api, corpus, params, filters, size):
    r = api.get(EV, params + [("facets", ",".join(FACETS)), ("facetSize", str(size)),
                              ("pageSize", "2")])
    assert r.status_code == 200, r.text
    body = r.json()
    matches = corpus.everything(**filters)
    want = facets(matches, FACETS, size)
    for name in FACETS:
        assert got(body, name) == want[name], (name, params)
    assert body["totalResults"] == len(matches)
    assert len(body["articles"]) == min(2, len(matches))


def test_source_facet_names_from_the_catalogue(api, corpus):
    body = api.get(EV, [("q", "covid"), ("facets", "source"), ("facetSize", "100")]).json()
    for v in body["facets"]["source"]:
        cat = corpus.catalogue.get(v["value"])
        if cat is not None:
            assert v["name"] == cat["name"], v


def test_page_bytes_unchanged(api):
    base = [("q", "covid"), ("pageSize", "5"), ("sortBy", "relevancy")]
    plain = api.get(EV, base).content
    with_facets = api.get(EV, base + [("facets", "language")]).content
    assert with_facets.startswith(plain[:-1] + b',"facets":{"language":[')
    assert with_facets.endswith(b"]}}")


def test_default_size_is_ten(api, corpus):
    body = api.get(EV, [("q", "\"the\""), ("facets", "author")]).json()
    want = facets(corpus.everything(q="\"the\""), ["author"], 100)["author"]
    assert len(want) > 10, "the fixture has more than ten authors for this query"
    assert got(body, "author") == want[:10]


def test_only_the_asked_facets_in_asked_order_of_index(api):
    body = api.get(EV, [("q", "covid"), ("facets", "language, source")]).json()
    assert list(body["facets"]) == ["source", "language"]


def test_cursor_pages_carry_the_whole_search_s_facets(api, corpus):
    want = facets(corpus.everything(q="covid"), ["domain"], 10)["domain"]
    params = [("q", "covid"), ("pageSize", "3"), ("facets", "domain")]
    body = api.get(EV, params + [("cursor", "*")]).json()
    assert "nextCursor" in body and got(body, "domain") == want
    body = api.get(EV, params + [("cursor", body["nextCursor"])]).json()
    assert got(body, "domain") == want  # the next page: still every match's


def test_no_match_is_empty_lists(api):
    body = api.get(EV, [("q", "zzzqqqxxy"), ("facets", "source,author")]).json()
    assert body["facets"] == {"source": [], "author": []}


@pytest.mark.parametrize("params,fragment", [
    ([("facets", "colour")], "facets"),
    ([("facets", "source"), ("facetSize", "0")], "facetSize"),
    ([("facets", "source"), ("facetSize", "101")], "facetSize"),
    ([("facets", "source"), ("facetSize", "ten")], "facetSize"),
    ([("facetSize", "5")], "facetSize"),
    ([("facets", "source"), ("format", "rss")], "format"),
])
def test_errors(api, params, fragment):
    e = err(api.get(EV, [("q", "covid")] + params), 400, "parameterInvalid")
    assert fragment in e["message"], e
