"""A plan's limits on what a key sees (docs/configuration.md "[plan NAME]",
docs/api.md §6, §8), with the server's clock fixed (NEWSD_NOW) and articles
placed on each boundary and one second beyond it: history_days (the oldest
article: the start of today − N days, also without `from`), delay_seconds
(the newest: now − N seconds), both on /v2/everything and /v2/top-headlines;
the server's live_window_hours and result_window; a plan's allowed_origins;
the exact X-RateLimit-Limit / -Remaining / -Reset values of a daily and of
a monthly quota. Each test names the boundary it would notice moving."""
import calendar
import json

import pytest

from harness import HTTP_TIMEOUT, Client, Server, cli_ok, import_jsonl, parse_json
from sse import Stream

NOW = calendar.timegm((2023, 1, 7, 6, 0, 0))       # a Saturday, 06:00 UTC
TODAY = NOW - NOW % 86400
DAY = 86400
HISTORY = TODAY - 30 * DAY                          # developer: 30 days of history
DELAY = NOW - DAY                                   # developer: 24 h delay
NEWEST = NOW - 600                                  # the newest headline: the live window's end
WINDOW_HOURS = 1000                                 # [server] live_window_hours
WINDOW = NEWEST - WINDOW_HOURS * 3600               # its start
WORD = "plandrift"

# name -> publication time; every article is a headline in country "us".
TIMES = {
    "newest": NEWEST,
    "delay-after": DELAY + 1,       # one second too fresh for a 24 h delay
    "delay-edge": DELAY,            # exactly 24 h old: shown
    "day-old": NOW - 30 * 3600,
    "week-old": NOW - 7 * DAY,
    "history-edge": HISTORY,        # the first second a 30-day plan may see
    "history-before": HISTORY - 1,  # one second too old
    "window-edge": WINDOW,          # the live window's first second
    "window-before": WINDOW - 1,
    "ancient": NOW - 400 * DAY,
}

CONFIG = """[server]
live_window_hours = %d
result_window = 12

[plan origins]
allowed_origins = https://a.example, https://b.example

[plan monthly]
requests_per_month = 7

[plan bursty]
requests_per_day = 10
burst_per_second = 0.5
burst_size = 3
""" % WINDOW_HOURS


def fmt(t):
    import time
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def row(name):
    return {"source": {"id": None, "name": "Plan Desk"}, "author": None,
            "title": "%s %s" % (WORD, name), "description": None,
            "url": "https://plans.example/%s" % name, "urlToImage": None,
            "publishedAt": fmt(TIMES[name]), "content": None,
            "headline": True, "country": "us", "category": "general"}


def names(body):
    return [a["url"].rsplit("/", 1)[1] for a in body["articles"]]


def newest_first(selected):
    return sorted(selected, key=lambda n: -TIMES[n])


def oldest_first(selected):
    return sorted(selected, key=lambda n: TIMES[n])


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    d = tmp_path_factory.mktemp("plans")
    store, cfg = str(d / "store"), d / "newsd.conf"
    cfg.write_text(CONFIG)
    import_jsonl(store, [row(n) for n in TIMES])
    keys = {}
    for plan in ("unlimited", "developer", "business", "origins", "monthly", "bursty"):
        keys[plan] = cli_ok("keys", "create", "--create", "--store", store, "--name", plan, "--plan", plan,
                            "--config", str(cfg)).out.strip()
    srv = Server(store, now=NOW, args=["--config", str(cfg)])
    yield srv, keys
    problems = srv.stop()
    assert not problems, "\n".join(problems)


def get(site, plan, path, params, headers=None):
    srv, keys = site
    r = Client(srv.base, keys[plan]).get(path, params, headers=headers)
    return r, parse_json(r.content)


def search(site, plan, **params):
    r, b = get(site, plan, "/v2/everything", dict({"q": WORD, "pageSize": 12}, **params))
    assert r.status_code == 200, r.text
    assert b["totalResults"] == len(b["articles"]), b
    return names(b)


def headlines(site, plan, **params):
    r, b = get(site, plan, "/v2/top-headlines", dict({"country": "us", "pageSize": 12},
                                                     **params))
    assert r.status_code == 200, r.text
    assert b["totalResults"] == len(b["articles"]), b
    return names(b)


def test_an_unlimited_key_sees_every_article(site):
    assert search(site, "unlimited") == newest_first(TIMES)


def test_the_developer_plan_sees_neither_the_last_24_hours_nor_beyond_30_days(site):
    """history_days = 30 hides what is older than the start of today − 30
    days with no `from`; delay_seconds = 86400 hides the last 24 hours
    (an article exactly 24 h old is shown)."""
    want = [n for n, t in TIMES.items() if HISTORY <= t <= DELAY]
    assert "delay-edge" in want and "history-edge" in want
    assert search(site, "developer") == newest_first(want)


def test_the_developer_plan_refuses_a_from_before_its_history(site):
    r, b = get(site, "developer", "/v2/everything", {"q": WORD, "from": fmt(HISTORY - 1)})
    assert r.status_code == 426, r.text
    assert b == {"status": "error", "code": "parameterInvalid",
                 "message": "You are trying to request results too far in the past. Your plan "
                 "permits you to request articles as far back as 2022-12-08, but you have "
                 "requested 2022-12-07."}
    # The first allowed second is allowed.
    assert search(site, "developer", **{"from": fmt(HISTORY)}) == \
        newest_first([n for n, t in TIMES.items() if HISTORY <= t <= DELAY])


def test_the_developer_plan_s_delay_also_caps_an_explicit_to(site):
    assert search(site, "developer", to=fmt(NOW)) == \
        newest_first([n for n, t in TIMES.items() if HISTORY <= t <= DELAY])


def test_the_business_plan_is_real_time_with_five_years_of_history(site):
    assert search(site, "business") == newest_first(TIMES)


def test_top_headlines_keep_to_the_live_window(site):
    """live_window_hours = 1000: the window ends at the newest headline
    (older than now) and starts 1000 h before it, that second included."""
    want = [n for n, t in TIMES.items() if WINDOW <= t <= NEWEST]
    assert "window-edge" in want and "window-before" not in want
    assert headlines(site, "unlimited") == oldest_first(want)


def test_top_headlines_obey_the_developer_plan_s_delay_and_history(site):
    """The live window is longer than 30 days here, so history_days cuts it;
    the delay cuts its end."""
    want = [n for n, t in TIMES.items() if max(WINDOW, HISTORY) <= t <= DELAY]
    assert headlines(site, "developer") == oldest_first(want)


def test_the_server_s_result_window_limits_plans_without_one(site):
    """result_window = 12: results 9 to 12 are the last allowed, 10 to 15 are not."""
    r, b = get(site, "unlimited", "/v2/everything", {"q": WORD, "pageSize": 4, "page": 3})
    assert r.status_code == 200 and names(b) == newest_first(TIMES)[8:12], r.text
    r, b = get(site, "unlimited", "/v2/everything", {"q": WORD, "pageSize": 5, "page": 3})
    assert r.status_code == 426, r.text
    assert b == {"status": "error", "code": "maximumResultsReached",
                 "message": "You have requested too many results. This server returns at most "
                 "the first 12 results of a search. You are trying to request results 10 to 15."}
    # The developer plan's own window (100) wins over the server's.
    assert len(search(site, "developer", pageSize=13, page=1)) == 4


def test_a_plan_s_allowed_origins_are_what_cors_answers(site):
    """An allowed Origin is echoed; any other gets the first allowed one;
    a plan without the list answers *."""
    for origin, want in (("https://b.example", "https://b.example"),
                         ("https://a.example", "https://a.example"),
                         ("https://evil.example", "https://a.example"),
                         (None, "https://a.example")):
        h = {"Origin": origin} if origin else {}
        r, _ = get(site, "origins", "/v2/everything", {"q": WORD, "pageSize": 1}, headers=h)
        assert r.status_code == 200
        assert r.headers["Access-Control-Allow-Origin"] == want, (origin, r.headers)
    r, _ = get(site, "unlimited", "/v2/everything", {"q": WORD, "pageSize": 1},
               headers={"Origin": "https://a.example"})
    assert r.headers["Access-Control-Allow-Origin"] == "*"


def rate(r):
    return tuple(int(r.headers[h]) for h in ("X-RateLimit-Limit", "X-RateLimit-Remaining",
                                             "X-RateLimit-Reset"))


def test_rate_limit_headers_carry_the_daily_quota_exactly(site):
    """developer: 100 a day, resetting at the next UTC midnight."""
    srv, keys = site
    c = Client(srv.base, keys["developer"])
    first = rate(c.get("/v2/top-headlines/sources"))
    assert first[0] == 100 and first[2] == TODAY + DAY, first
    second = rate(c.get("/v2/top-headlines/sources"))
    assert second == (100, first[1] - 1, TODAY + DAY), (first, second)


def test_rate_limit_headers_carry_the_monthly_quota_exactly(site):
    """A monthly quota resets at the first second of the next UTC month;
    the limit stays the limit while the remaining count falls."""
    srv, keys = site
    c = Client(srv.base, keys["monthly"])
    seen = [rate(c.get("/v2/top-headlines/sources")) for _ in range(3)]
    feb = calendar.timegm((2023, 2, 1, 0, 0, 0))
    assert seen == [(7, 6, feb), (7, 5, feb), (7, 4, feb)], seen


def test_keys_without_a_quota_get_no_rate_limit_headers(site):
    r, _ = get(site, "unlimited", "/v2/top-headlines/sources", {})
    assert not [h for h in r.headers if h.lower().startswith("x-ratelimit")], r.headers


def test_the_burst_limit_allows_its_size_then_says_when_to_retry(site):
    """burst_size = 3 at 0.5 a second: three at once, then 429 rateLimited
    with Retry-After 2 (whole seconds until the bucket holds a request);
    the refused request does not count toward the daily quota."""
    srv, keys = site
    c = Client(srv.base, keys["bursty"])
    for left in (9, 8, 7):
        r = c.get("/v2/top-headlines/sources")
        assert r.status_code == 200 and rate(r)[1] == left, r.headers
    r = c.get("/v2/top-headlines/sources")
    assert r.status_code == 429, r.text
    assert parse_json(r.content) == {
        "status": "error", "code": "rateLimited",
        "message": "You have made too many requests in a short time. Back off and try again "
                   "in a moment."}
    assert r.headers["Retry-After"] == "2", r.headers
    assert rate(r)[:2] == (10, 7), r.headers


def test_a_live_stream_of_the_developer_plan_is_delayed_too(site):
    """docs/api.md §2: the plan's delay applies to /v2/everything/stream as
    the stream opens. A fresh article is committed, then one older than the
    delay: the older one is the stream's very next event (events come in
    commit order), so the fresh one was held back, with no fixed wait."""
    srv, keys = site
    word = "streamdelayx"
    s = Stream(srv.base, "/v2/everything/stream", {"q": word},
               {"X-Api-Key": keys["developer"]}, timeout=HTTP_TIMEOUT)
    try:
        assert s.status == 200, s.body

        def plain(name, t):  # not a headline: the top-headlines tests keep their set
            return {"source": {"id": None, "name": "Plan Desk"}, "author": None,
                    "title": "%s %s" % (word, name), "description": None,
                    "url": "https://plans.example/stream/%s" % name, "urlToImage": None,
                    "publishedAt": fmt(t), "content": None}
        import_jsonl(srv.store, [plain("fresh", NOW - 10)])
        import_jsonl(srv.store, [plain("old-enough", DELAY - 60)])
        e = s.next_event(HTTP_TIMEOUT)
        assert e is not None, "no event"
        assert json.loads(e.text)["url"] == "https://plans.example/stream/old-enough", e
    finally:
        s.close()
