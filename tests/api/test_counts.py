"""GET /v2/everything/counts (issue 26, docs/api.md §6): every bucket equal to
a brute-force count of the fixture articles (counts_oracle.py), on both
backends (make api-test-fts5 runs this file on FTS5), with time zones,
limits and errors."""
import pytest

from corpus import fmt_time, parse_time
from counts_oracle import bounds, counts
from harness import err

CT = "/v2/everything/counts"


def expect(corpus, interval, tz, frm, to, **filters):
    lo, hi = parse_time(frm), parse_time(to, end_of_day=True)
    b = bounds(interval, tz, lo, hi)
    got = counts(corpus.everything(frm=frm, to=to, **filters), b, lo, hi)
    scope = {k: v for k, v in filters.items() if k not in ("q", "qintitle", "searchin")}
    tot = counts(corpus.everything(frm=frm, to=to, **scope), b, lo, hi) if scope else None
    return b, got, tot


def check(api, corpus, interval, tz, frm, to, params, **filters):
    b, want, want_total = expect(corpus, interval, tz, frm, to, **filters)
    p = list(params) + [("interval", interval), ("from", frm), ("to", to)]
    if tz:
        p.append(("tz", tz))
    r = api.get(CT, p)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["status"] == "ok" and body["interval"] == interval
    assert [c["from"] for c in body["counts"]] == [fmt_time(t) for t in b[:-1]], p
    assert [c["count"] for c in body["counts"]] == want, p
    if want_total is not None:
        assert [c["total"] for c in body["counts"]] == want_total, p
    assert body["totalResults"] == sum(want)
    return body


@pytest.mark.parametrize("interval", ["hour", "day", "week", "month"])
def test_buckets_equal_brute_force(api, corpus, interval):
    rng = {"hour": ("2021-09-01", "2021-09-20"), "day": ("2021-06-01", "2021-12-31"),
           "week": ("2020-01-01", "2022-12-31"), "month": ("2019-01-01", "2023-01-31")}[interval]
    body = check(api, corpus, interval, None, rng[0], rng[1], [("q", "covid")], q="covid")
    assert body["totalResults"] > 0, "the fixture has covid articles in the range"
    assert any(c["count"] == 0 for c in body["counts"]), "zero buckets are present"


def test_sources_scope_total_equals_count(api, corpus):
    src = "abc-news"
    body = check(api, corpus, "month", None, "2020-01-01", "2023-01-31", [("sources", src)],
                 sources=src)
    assert all(c["total"] == c["count"] for c in body["counts"])
    assert body["totalResults"] > 0


def test_total_is_the_scope_without_q(api, corpus):
    # q narrows count; total counts the same sources without q
    check(api, corpus, "month", None, "2020-01-01", "2023-01-31",
          [("q", "covid"), ("domains", "abcnews.go.com")], q="covid", domains="abcnews.go.com")


@pytest.mark.parametrize("tz,frm,to", [
    ("America/New_York", "2021-11-01", "2021-11-14"),  # fall back on 11-07: a 25-hour day
    ("Europe/Berlin", "2022-03-20", "2022-04-03"),     # spring forward on 03-27: 23 hours
    ("+05:30", "2021-09-01", "2021-09-30"),
    ("-0800", "2021-07-01", "2021-07-31"),
    ("Asia/Kathmandu", "2021-09-01", "2021-09-10"),    # +05:45
])
def test_time_zones(api, corpus, tz, frm, to):
    check(api, corpus, "day", tz, frm, to, [("domains", "abcnews.go.com,channel3000.com")],
          domains="abcnews.go.com,channel3000.com")
    check(api, corpus, "hour", tz, frm, to, [("q", "covid")], q="covid")


def test_dst_day_lengths(api):
    r = api.get(CT, [("q", "covid"), ("interval", "day"), ("tz", "America/New_York"),
                     ("from", "2021-11-06"), ("to", "2021-11-08")])
    starts = [parse_time(c["from"]) for c in r.json()["counts"]]
    # the local midnights of Nov 6, 7, 8: 4 h, then 5 h behind UTC
    assert [fmt_time(t) for t in starts] == ["2021-11-05T04:00:00Z", "2021-11-06T04:00:00Z",
                                              "2021-11-07T04:00:00Z", "2021-11-08T05:00:00Z"]
    assert starts[3] - starts[2] == 25 * 3600


def test_default_interval_is_day_and_to_defaults_to_now(api, corpus):
    r = api.get(CT, [("q", "covid"), ("from", "2022-12-01")])
    body = r.json()
    assert r.status_code == 200 and body["interval"] == "day" and body["tz"] == "UTC"
    assert body["counts"][-1]["from"] == fmt_time(corpus.now - corpus.now % 86400)


def test_default_window_without_from(api):
    body = api.get(CT, [("q", "covid"), ("interval", "hour")]).json()
    assert len(body["counts"]) in (48, 49)


def test_empty_window_is_no_buckets(api):
    # from after to is refused as on /everything
    err(api.get(CT, [("q", "covid"), ("from", "2022-01-02"), ("to", "2022-01-01")]), 400,
        "parameterInvalid")


@pytest.mark.parametrize("params,code,fragment", [
    ([("interval", "minute")], "parameterInvalid", "interval"),
    ([("tz", "Mars/Olympus")], "parameterInvalid", "tz"),
    ([("tz", "../../etc/passwd")], "parameterInvalid", "tz"),
    ([("tz", "+24:00")], "parameterInvalid", "tz"),
    ([("interval", "hour"), ("from", "2020-01-01"), ("to", "2022-01-01")], "parameterInvalid",
     "Too many buckets"),
    ([("pageSize", "10")], "parameterInvalid", "pageSize"),
    ([("sortBy", "relevancy")], "parameterInvalid", "sortBy"),
    ([("facets", "colour")], "parameterInvalid", "facets"),
])
def test_errors(api, params, code, fragment):
    e = err(api.get(CT, [("q", "covid")] + params), 400, code)
    assert fragment in e["message"], e


def test_scope_and_key_rules_are_everything_s(api):
    err(api.get(CT, [("interval", "day")]), 400, "parametersMissing")
    err(api.get(CT, [("q", "covid")], key=None), 401, "apiKeyMissing")
    err(api.get(CT, [("q", "covid")], key="0" * 32), 401, "apiKeyInvalid")
    e = err(api.get(CT, [("q", "covid"), ("country", "us")]), 400, "parameterInvalid")
    assert "country" in e["message"]


def test_counts_with_facets(api, corpus):
    from counts_oracle import facets
    r = api.get(CT, [("q", "covid"), ("from", "2020-01-01"), ("to", "2023-01-31"),
                     ("interval", "month"), ("facets", "language,source"), ("facetSize", "3")])
    body = r.json()
    want = facets(corpus.everything(q="covid", frm="2020-01-01", to="2023-01-31"),
                  ["language", "source"], 3)
    assert [(v["value"], v["count"]) for v in body["facets"]["language"]] == want["language"]
    assert [(v["value"], v["count"]) for v in body["facets"]["source"]] == want["source"]


def test_a_counts_request_is_one_request_against_the_quota(tmp_path, corpus):
    """However many buckets and facets: one request, like the search it
    extends; the key's quota then refuses it as it refuses /v2/everything."""
    import os

    from corpus import DATA
    from harness import Client, Server, cli_ok
    cfg = tmp_path / "plans.conf"
    cfg.write_text("[plan three]\nrequests_per_day = 3\n")
    store = str(tmp_path / "store")
    cli_ok("import", "--create", "--store", store, os.path.join(DATA, "articles.jsonl"))
    key = cli_ok("keys", "create", "--create", "--store", store, "--name", "three", "--plan",
                 "three", "--config", str(cfg)).out.strip()
    srv = Server(store, now=corpus.now, args=["--config", str(cfg)])
    try:
        c = Client(srv.base, key)
        left = []
        for params in ([("q", "covid"), ("interval", "hour"), ("from", "2021-09-01"),
                        ("to", "2021-10-31"), ("facets", "source,author")],
                       [("q", "covid"), ("facets", "language")],
                       [("q", "covid"), ("interval", "month"), ("from", "2019-01-01")]):
            r = c.get(CT if ("interval", "hour") in params or ("interval", "month") in params
                      else "/v2/everything", params)
            assert r.status_code == 200, r.text
            left.append(int(r.headers["X-RateLimit-Remaining"]))
        assert left == [2, 1, 0]
        err(c.get(CT, [("q", "covid")]), 429, "apiKeyExhausted")
    finally:
        problems = srv.stop()
    assert not problems, problems
