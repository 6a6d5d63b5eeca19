"""HTTP-level rules of §1, §3 and §8: methods, paths, CORS, limits, JSON form."""
import gzip
import os
import re
import socket
import time

import pytest

from corpus import DATA
from harness import (SLOW, Client, Server, articles_ok, assert_compact, cli_ok, err, ok,
                     parse_json, run_cli, sources_ok, urls)

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


def test_a_plans_allowed_origins_echo_a_listed_origin_and_never_another(tmp_path):
    """docs/configuration.md `[plan] allowed_origins`: a listed Origin is sent
    back in Access-Control-Allow-Origin (blanks or commas between them); any
    other Origin, or none, gets the first listed one, never itself or `*`."""
    cfg = tmp_path / "plans.conf"
    cfg.write_text("[plan web]\nallowed_origins = https://app.example, https://admin.example\n")
    store = str(tmp_path / "store")
    cli_ok("import", "--create", "--store", store, os.path.join(DATA, "handmade.jsonl"))
    key = cli_ok("keys", "create", "--create", "--store", store, "--name", "web", "--plan", "web",
                 "--config", str(cfg)).out.strip()
    srv = Server(store, args=["--config", str(cfg)])
    try:
        c = Client(srv.base, key)
        for origin, want in (("https://admin.example", "https://admin.example"),
                             ("https://app.example", "https://app.example"),
                             ("https://evil.example", "https://app.example"),
                             ("https://app.example.evil", "https://app.example"),
                             (None, "https://app.example")):
            r = c.get(EV, [("q", "handmade")], headers={"Origin": origin} if origin else {})
            # (not articles_ok: it asserts the `*` of a plan without origins)
            assert r.status_code == 200 and r.json()["status"] == "ok", r.text
            assert r.headers.get("Access-Control-Allow-Origin") == want, (origin, r.headers)
    finally:
        problems = srv.stop()
    assert not problems, problems


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


def many_headers(n, line_len):
    """n header lines of line_len bytes each, CRLF included."""
    return {"X-P%d" % i: "v" * (line_len - len("X-P%d: \r\n" % i)) for i in range(n)}


def test_header_lines_within_the_limits_fit_the_connection_pool(api):
    """500 header lines of 16 KiB with an 8 KiB URL are answered; just over
    16 KiB in as many lines is the JSON 431; far more lines than that are
    refused by libmicrohttpd's pool at once (its 431, docs/api.md §1)."""
    long_url = Q + [("padding", "x" * 7000)]
    articles_ok(api.get(EV, long_url, headers=many_headers(500, 32), fresh=True))
    err(api.get(EV, long_url, headers=many_headers(500, 40), fresh=True), 431,
        "requestTooLarge")
    status, _, _ = api.raw(b"GET /v2/everything?q=x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                           + b"a:\r\n" * 5000 + b"\r\n")
    assert status == 431


def test_a_body_is_refused_unread(api):
    """No endpoint takes a body: a GET that carries one is 413 (a POST 405),
    answered at once, and the connection is closed rather than drained."""
    r = api.get(EV, Q, data=b'{"q":"zebulox"}', headers={"Content-Type": "application/json"},
                fresh=True)
    err(r, 413, "requestTooLarge")
    assert r.headers.get("Connection", "").lower() == "close"
    # Content-Length: 0 is no body.
    articles_ok(api.get(EV, Q, headers={"Content-Length": "0"}, fresh=True))


def _first_answer(api, raw, wait=5.0 * SLOW):
    """Send raw bytes; return (seconds to the first byte, status line, rest).
    A server that waits for bytes never sent (the bug these tests guard
    against) leaves the status line empty: the client gives up after wait
    seconds, while the server would wait on. No bound on the server's speed."""
    host, port = api.base[len("http://"):].split(":")
    with socket.create_connection((host, int(port)), timeout=wait) as s:
        t0 = time.monotonic()
        s.sendall(raw)
        data = b""
        try:
            while b"\r\n\r\n" not in data:
                c = s.recv(65536)
                if not c:
                    break
                data += c
        except socket.timeout:
            pass
        return time.monotonic() - t0, data.split(b"\r\n", 1)[0], data


@pytest.mark.parametrize("raw,status", [
    # 10^12 bytes announced and never sent: answered before any is read.
    (b"POST /v2/everything?q=a HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000000\r\n\r\n",
     b"405"),
    # A chunked body trickling in: the same.
    (b"GET /v2/everything?q=a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
     b"3\r\nabc\r\n", b"413"),
    (b"GET /v2/everything?q=a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n", b"413"),
])
def test_an_announced_body_is_answered_at_once(api, raw, status):
    _, line, data = _first_answer(api, raw)
    assert line.split(b" ")[1:2] == [status], (line, data[:300])
    assert b'"status":"error"' in data or b"Content-Length" in data


def _params_target(n, key=None):
    parts = ["q=plinthor"] + ["p%d=1" % i for i in range(n)]
    if key:
        parts.append("apiKey=" + key)
    return "/v2/everything?" + "&".join(parts)


@pytest.mark.parametrize("n", [1, 100, 1000, 5000])
def test_many_parameters_are_answered_at_once(api, key, n):
    """A request of n unknown parameters: answered (not hung, not dropped)
    at once (not after a client's timeout), with or without a key; over 8 KiB it is a 414."""
    for with_key in (False, True):
        target = _params_target(n, key if with_key else None)
        raw = ("GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % target).encode()
        _, line, _ = _first_answer(api, raw)
        if len(target) > 8192:
            want = b"414"
        else:
            want = b"200" if with_key else b"401"
        assert line.split(b" ")[1:2] == [want], (n, with_key, len(target), line)


@pytest.mark.parametrize("amps", [1, 1000, 4000, 8100, 40000])
def test_a_query_of_empty_parameters_is_answered(api, amps):
    """The smallest form of the attack: "/?" and thousands of '&'."""
    raw = b"GET /v2/everything?" + b"&" * amps + b" HTTP/1.1\r\nHost: x\r\n\r\n"
    _, line, _ = _first_answer(api, raw)
    want = b"414" if amps + len("/v2/everything?") > 8192 else b"401"
    assert line.split(b" ")[1:2] == [want], (amps, line)


@pytest.mark.parametrize("klen", [1, 100, 1000, 4000, 8150, 8200])
@pytest.mark.parametrize("vlen", [0, 1, 1000, 8150, 8200])
def test_parameter_names_and_values_of_every_length(api, key, klen, vlen):
    """An unknown parameter's name and value, each of up to the URL limit:
    200 while the whole URL is within 8 KiB, 414 past it."""
    target = "/v2/everything?q=plinthor&%s=%s" % ("k" * klen, "v" * vlen)
    raw = ("GET %s HTTP/1.1\r\nHost: x\r\nX-Api-Key: %s\r\nConnection: close\r\n\r\n"
           % (target, key)).encode()
    _, line, _ = _first_answer(api, raw)
    want = b"414" if len(target) > 8192 else b"200"
    assert line.split(b" ")[1:2] == [want], (klen, vlen, line)


def test_compact_json_with_unescaped_non_ascii(api, corpus):
    q = '"langcheck" OR "lencheck" OR "escapecheck"'
    r = api.get(EV, [("q", q)])
    b = articles_ok(r)
    # The page holds every one of them, so every character below is looked at.
    assert b["totalResults"] == len(b["articles"]) == len(corpus.everything(q=q)) >= 10
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
    # The build, as newsd --version says it.
    cli = run_cli("--version")
    assert cli.rc == 0 and cli.out.startswith("newsd "), cli
    # (--version's first line; the second names the schema and segment format)
    assert b["version"] == cli.out.splitlines()[0][len("newsd "):], (b, cli.out)
    assert re.fullmatch(r"\d+\.\d+\.\d+ \(commit ([0-9a-f]{7,}(-dirty)?|unknown)\)",
                        b["version"]), b


def test_raw_space_and_quote_in_q(api, key):
    st, hd, body = api.raw_get(EV + "?q=grimbly rock and roll&domains=newsd.test&apiKey=" + key)
    assert st == 200, body[:300]
    assert [a["url"] for a in parse_json(body)["articles"]] == [H + "q-rock1"]
    st, hd, body = api.raw_get(EV + '?q="vorpalix%20snickersnee"&apiKey=' + key)
    assert st == 200, body[:300]
    assert [a["url"] for a in parse_json(body)["articles"]] == [H + "q-ph1"]
