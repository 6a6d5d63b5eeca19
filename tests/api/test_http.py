"""HTTP-level rules of §1, §3 and §8: methods, paths, CORS, limits, JSON form."""
import gzip

import pytest

from harness import (articles_ok, assert_compact, err, ok, parse_json, sources_ok, urls)

EV = "/v2/everything"
H = "https://newsd.test/"
Q = [("q", "plinthor")]
ALLOW_HEADERS = {"x-api-key", "authorization", "x-no-cache", "content-type",
                 "access-control-allow-origin"}


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
@pytest.mark.parametrize("path", [EV, "/v2/top-headlines", "/v2/sources"])
def test_method_not_allowed(api, method, path):
    r = api.request(method, path, Q, data=b"x=1")
    err(r, 405, "methodNotAllowed")
    assert r.headers.get("Allow") == "GET, HEAD, OPTIONS"


def test_head(api):
    g = api.get(EV, Q)
    articles_ok(g)
    h = api.request("HEAD", EV, Q)
    assert h.status_code == 200
    assert h.content == b""
    assert h.headers.get("Content-Type") == g.headers.get("Content-Type")
    assert h.headers.get("Access-Control-Allow-Origin") == "*"
    h = api.request("HEAD", EV, Q, key=None)
    assert h.status_code == 401 and h.content == b""


@pytest.mark.parametrize("path", [EV, "/v2/top-headlines", "/v2/top-headlines/sources",
                                  "/v2/sources"])
def test_options_preflight(api, path):
    r = api.request("OPTIONS", path, key=None, headers={
        "Origin": "https://app.example", "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "x-api-key, authorization"})
    assert 200 <= r.status_code < 300, r.status_code
    assert r.headers.get("Access-Control-Allow-Origin") == "*"
    allowed = {h.strip().lower()
               for h in r.headers.get("Access-Control-Allow-Headers", "").split(",")}
    assert ALLOW_HEADERS <= allowed, allowed
    methods = r.headers.get("Access-Control-Allow-Methods")
    if methods is not None:
        assert "GET" in {m.strip().upper() for m in methods.split(",")}


@pytest.mark.parametrize("case", ["200", "400", "401", "404", "405", "426", "healthz"])
def test_cors_on_every_response(api, case):
    r = {
        "200": lambda: api.get(EV, Q),
        "400": lambda: api.get(EV, []),
        "401": lambda: api.get(EV, Q, key="bogus"),
        "404": lambda: api.get("/nope", key=None),
        "405": lambda: api.request("POST", EV, Q),
        "426": lambda: api.get(EV, Q + [("page", "1000"), ("pageSize", "100")]),
        "healthz": lambda: api.get("/healthz", key=None),
    }[case]()
    assert r.headers.get("Access-Control-Allow-Origin") == "*", (case, r.status_code)


@pytest.mark.parametrize("prefix", ["/https://newsapi.org", "/http://newsapi.org"])
def test_newsapi_prefix_stripped(api, prefix):
    assert urls(articles_ok(api.get(prefix + EV, Q))) == urls(articles_ok(api.get(EV, Q)))
    a = articles_ok(api.get(prefix + "/v2/top-headlines", [("country", "us")]))
    assert a == articles_ok(api.get("/v2/top-headlines", [("country", "us")]))
    assert sources_ok(api.get(prefix + "/v2/sources")) == sources_ok(api.get("/v2/sources"))
    err(api.get(prefix + "/v2/everything", Q, key=None), 401, "apiKeyMissing")


@pytest.mark.parametrize("path,params", [(EV, Q), ("/v2/top-headlines", [("country", "us")]),
                                         ("/v2/top-headlines/sources", []), ("/v2/sources", [])])
def test_trailing_slash(api, path, params):
    assert parse_json(api.get(path + "/", params).content) == \
        parse_json(api.get(path, params).content)
    ok(api.get(path + "/", params))


def test_gzip(api):
    params = [("domains", "com"), ("pageSize", "100")]
    plain = api.get(EV, params, headers={"Accept-Encoding": "identity"})
    articles_ok(plain)
    assert plain.headers.get("Content-Encoding", "identity") == "identity"
    r = api.get(EV, params, headers={"Accept-Encoding": "gzip"}, stream=True)
    assert r.headers.get("Content-Encoding") == "gzip"
    raw = r.raw.read(decode_content=False)
    assert gzip.decompress(raw) == plain.content
    articles_ok(api.get(EV, params, headers={"Accept-Encoding": "gzip"}))


def test_request_id(api):
    """(brief) Every response names its request: X-Request-Id, distinct per request."""
    a = api.get(EV, Q).headers.get("X-Request-Id")
    b = api.get(EV, []).headers.get("X-Request-Id")
    assert a and b and a != b


def test_url_limit(api, key):
    pad = "x" * 7000
    articles_ok(api.get(EV, Q + [("padding", pad)], fresh=True))
    r = api.get(EV, Q + [("padding", "x" * 9000)], fresh=True)
    err(r, 414, "requestTooLarge")


def test_header_limit(api):
    articles_ok(api.get(EV, Q, headers={"X-Padding": "y" * 8000}, fresh=True))
    r = api.get(EV, Q, headers={"X-Padding": "y" * 17000}, fresh=True)
    err(r, 431, "requestTooLarge")


def test_body_is_ignored(api):
    a = articles_ok(api.get(EV, Q, data=b'{"q":"zebulox"}',
                            headers={"Content-Type": "application/json"}))
    assert a == articles_ok(api.get(EV, Q))


def test_compact_json_with_unescaped_non_ascii(api):
    r = api.get(EV, [("q", "langcheck OR lencheck OR escapecheck")])
    b = articles_ok(r)
    assert b["totalResults"] >= 10
    assert_compact(r.content)
    assert "Montréal".encode() in r.content and "😀".encode() in r.content
    assert b"\\u00e9" not in r.content.lower()
    # control characters are escaped (a raw one would not parse as strict JSON)
    assert b"\x01" not in r.content and b"\r" not in r.content
    for path, params in [("/v2/sources", []), (EV, []), ("/nope", [])]:
        assert_compact(api.get(path, params).content)


def test_healthz(api):
    r = api.get("/healthz", key=None)
    assert r.status_code == 200
    b = parse_json(r.content)
    assert list(b)[0] == "status" and b["status"] == "ok"


def test_raw_space_and_quote_in_q(api, key):
    st, hd, body = api.raw_get(EV + "?q=grimbly rock and roll&domains=newsd.test&apiKey=" + key)
    assert st == 200, body[:300]
    assert [a["url"] for a in parse_json(body)["articles"]] == [H + "q-rock1"]
    st, hd, body = api.raw_get(EV + '?q="vorpalix%20snickersnee"&apiKey=' + key)
    assert st == 200, body[:300]
    assert [a["url"] for a in parse_json(body)["articles"]] == [H + "q-ph1"]
