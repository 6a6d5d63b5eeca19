"""/v2/top-headlines/sources and its alias /v2/sources (§2, §3, §8)."""
import pytest

from harness import err, sources_ok

PATHS = ["/v2/top-headlines/sources", "/v2/sources"]


@pytest.mark.parametrize("path", PATHS)
def test_all_headline_sources_by_id(api, corpus, path):
    """Every headline source of the catalogue, values verbatim (quirks such as
    language `se` and country `is` kept), ordered by id byte order; sources
    marked "headlines": false and sources registered by articles are absent."""
    b = sources_ok(api.get(path))
    exp = corpus.headline_sources()
    assert [s["id"] for s in b["sources"]] == [s["id"] for s in exp]
    assert b["sources"] == exp
    ids = {s["id"] for s in b["sources"]}
    assert not ids & {"hacker-news", "reddit-r-all", "newsd-archive", "newsd-test-wire"}
    assert {"goteborgs-posten", "ynet", "bbc-news"} <= ids


FILTERS = [
    [("category", "business")], [("category", "SPORTS")], [("language", "de")],
    [("language", "EN")], [("country", "us")], [("country", "Gb")], [("country", "is")],
    [("language", "en"), ("country", "gb")], [("category", "general"), ("language", "fr"),
                                              ("country", "fr")],
    [("category", "technology"), ("country", "us")],
    [("country", "xx")], [("language", "xx")], [("country", "us"), ("language", "ru")],
    [("category", "health")], [("language", "sv")], [("language", "SE")],
]


@pytest.mark.parametrize("params", FILTERS)
@pytest.mark.parametrize("path", PATHS)
def test_filters(api, corpus, path, params):
    b = sources_ok(api.get(path, params))
    exp = corpus.headline_sources(**{k: v for k, v in params})
    assert b["sources"] == exp


@pytest.mark.parametrize("path", PATHS)
def test_no_paging(api, corpus, path):
    b = sources_ok(api.get(path, [("pageSize", "1"), ("page", "2")]))
    assert len(b["sources"]) == len(corpus.headline_sources())


@pytest.mark.parametrize("name,value", [
    ("category", "bogus"), ("category", "sport"), ("country", "usa"), ("country", "u"),
    ("country", "1a"), ("language", "eng"), ("language", "e"), ("language", "e1"),
])
@pytest.mark.parametrize("path", PATHS)
def test_malformed_filters(api, path, name, value):
    b = err(api.get(path, [(name, value)]), 400, "parameterInvalid")
    assert b["message"].startswith("The %s parameter must be " % name), b["message"]


@pytest.mark.parametrize("path", PATHS + ["/v2/top-headlines/sources/", "/v2/sources/"])
def test_needs_a_key(api, path):
    err(api.get(path, key=None), 401, "apiKeyMissing")
