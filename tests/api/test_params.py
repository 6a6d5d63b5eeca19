"""Query-string rules of §1 and §8 Values: names case-insensitive, empty =
absent, repeated lists joined, items trimmed, unknown names ignored, strict
integers, page/pageSize limits and defaults."""
import pytest

from harness import articles_ok, err, parse_json, urls

EV = "/v2/everything"
TH = "/v2/top-headlines"


def same(api, path, a, b):
    ra, rb = api.get(path, a), api.get(path, b)
    assert ra.status_code == rb.status_code == 200, (ra.text[:300], rb.text[:300])
    assert parse_json(ra.content) == parse_json(rb.content), (a, b)
    return parse_json(ra.content)


@pytest.mark.parametrize("canon,variant", [
    ([("q", '"covid"')], [("Q", '"covid"')]),
    ([("qInTitle", '"covid"')], [("qintitle", '"covid"')]),
    ([("qInTitle", '"covid"')], [("QINTITLE", '"covid"')]),
    ([("q", '"the"'), ("pageSize", "5")], [("q", '"the"'), ("pagesize", "5")]),
    ([("q", '"the"'), ("pageSize", "5"), ("page", "2")],
     [("q", '"the"'), ("PAGESIZE", "5"), ("Page", "2")]),
    ([("q", '"covid"'), ("sortBy", "relevancy")], [("q", '"covid"'), ("sortby", "relevancy")]),
    ([("q", '"covid"'), ("searchIn", "title")], [("q", '"covid"'), ("SEARCHIN", "title")]),
    ([("domains", "co.uk")], [("Domains", "co.uk")]),
    ([("domains", "com"), ("excludeDomains", "cnn.com")],
     [("domains", "com"), ("excludedomains", "cnn.com")]),
    ([("domains", "com"), ("from", "2022-01-01"), ("to", "2022-06-01")],
     [("domains", "com"), ("FROM", "2022-01-01"), ("To", "2022-06-01")]),
    ([("domains", "com"), ("language", "en")], [("domains", "com"), ("LANGUAGE", "en")]),
    ([("sources", "bbc-news")], [("SOURCES", "bbc-news")]),
])
def test_everything_names_case_insensitive(api, canon, variant):
    same(api, EV, canon, variant)


@pytest.mark.parametrize("canon,variant", [
    ([("country", "us")], [("COUNTRY", "us")]),
    ([("category", "business")], [("Category", "business")]),
    ([("language", "en")], [("lAnGuAgE", "en")]),
    ([("sources", "bbc-news")], [("Sources", "bbc-news")]),
])
def test_top_headlines_names_case_insensitive(api, canon, variant):
    same(api, TH, canon, variant)


@pytest.mark.parametrize("canon,variant", [
    ([("q", '"covid"')], [("q", '"covid"'), ("pageSize", ""), ("page", ""), ("sortBy", "")]),
    ([("q", '"covid"')], [("q", '"covid"'), ("language", ""), ("from", ""), ("to", "")]),
    ([("q", '"covid"')], [("q", '"covid"'), ("searchIn", ""), ("excludeDomains", ""),
                          ("domains", ""), ("sources", ""), ("qInTitle", "")]),
    ([("domains", "com")], [("q", ""), ("domains", "com")]),
])
def test_everything_empty_is_absent(api, canon, variant):
    same(api, EV, canon, variant)


@pytest.mark.parametrize("canon,variant", [
    ([("country", "us")], [("country", "us"), ("category", ""), ("sources", ""), ("q", "")]),
    ([("q", '"the"')], [("q", '"the"'), ("country", ""), ("pageSize", ""), ("language", "")]),
])
def test_top_headlines_empty_is_absent(api, canon, variant):
    same(api, TH, canon, variant)


@pytest.mark.parametrize("path,canon", [(EV, [("q", '"covid"')]), (TH, [("country", "us")])])
def test_unknown_parameters_ignored(api, path, canon):
    same(api, path, canon, canon + [("foo", "bar"), ("apiKeyX", "1"), ("pageSizes", "3"),
                                    ("q2", "zzz")])


def test_repeated_list_parameters_joined(api, corpus):
    same(api, EV, [("q", '"covid"'), ("searchIn", "title,description")],
         [("q", '"covid"'), ("searchIn", "title"), ("searchIn", "description")])
    same(api, EV, [("domains", "co.uk,newsd.test")],
         [("domains", "co.uk"), ("domains", "newsd.test")])
    same(api, EV, [("sources", "bbc-news,cnn")], [("sources", "bbc-news"), ("sources", "cnn")])
    same(api, EV, [("domains", "com"), ("excludeDomains", "cnn.com,foxnews.com")],
         [("domains", "com"), ("excludeDomains", "cnn.com"), ("excludeDomains", "foxnews.com")])


def test_list_items_trimmed(api):
    same(api, EV, [("q", '"covid"'), ("searchIn", "title,content")],
         [("q", '"covid"'), ("searchIn", " title ,  content ")])
    same(api, EV, [("sources", "bbc-news,cnn")], [("sources", " bbc-news ,cnn  ")])
    same(api, EV, [("domains", "co.uk,newsd.test")], [("domains", "co.uk , newsd.test")])


PAGING_MESSAGES = {"page": "The page parameter must be a whole number of 1 or more.",
                   "pageSize": "The pageSize parameter must be a whole number from 1 to 100."}


@pytest.mark.parametrize("path,params", [(EV, [("q", '"covid"')]), (TH, [("country", "us")])])
@pytest.mark.parametrize("value", ["2.5", "1e2", "-1", "+1", " 1", "1 ", "0x10", "ten", "１",
                                   "1,2", "0"])
@pytest.mark.parametrize("name", ["page", "pageSize"])
def test_integers_are_plain_digits(api, path, params, name, value):
    err(api.get(path, params + [(name, value)]), 400, "parameterInvalid",
        PAGING_MESSAGES[name])


@pytest.mark.parametrize("path,params", [(EV, [("q", '"the"')]), (TH, [("q", '"the"')])])
def test_page_size_limits(api, path, params):
    assert len(articles_ok(api.get(path, params + [("pageSize", "1")]))["articles"]) == 1
    assert len(articles_ok(api.get(path, params + [("pageSize", "05")]))["articles"]) == 5
    full = articles_ok(api.get(path, params + [("pageSize", "100")]))
    assert len(full["articles"]) == min(100, full["totalResults"])
    err(api.get(path, params + [("pageSize", "101")]), 400, "parameterInvalid")
    err(api.get(path, params + [("page", "0")]), 400, "parameterInvalid")
    p2 = articles_ok(api.get(path, params + [("pageSize", "3"), ("page", "2")]))
    assert urls(p2) == urls(full)[3:6]


def test_default_page_sizes(api):
    assert len(articles_ok(api.get(EV, [("q", '"the"')]))["articles"]) == 100
    assert len(articles_ok(api.get(TH, [("q", '"the"')]))["articles"]) == 20


@pytest.mark.parametrize("value", ["relevancy", "RELEVANCY", "Popularity", "publishedat"])
def test_sort_by_value_case_insensitive(api, value):
    articles_ok(api.get(EV, [("q", '"covid"'), ("sortBy", value)]))
    articles_ok(api.get(TH, [("q", '"the"'), ("sortBy", value)]))


@pytest.mark.parametrize("value", ["Title", "DESCRIPTION", "Content,TITLE"])
def test_search_in_value_case_insensitive(api, value):
    same(api, EV, [("q", '"covid"'), ("searchIn", value.lower())],
         [("q", '"covid"'), ("searchIn", value)])


@pytest.mark.parametrize("value,bad", [("titles", "titles"), ("body", "body"),
                                       ("title,body", "body"), ("url", "url")])
def test_search_in_invalid(api, value, bad):
    """The message names the one item refused, not the whole list."""
    err(api.get(EV, [("q", '"covid"'), ("searchIn", value)]), 400, "parameterInvalid",
        "The searchIn parameter accepts title, description and content; '%s' is not one of "
        "them." % bad)
