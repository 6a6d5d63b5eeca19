"""docs/openapi.json (and its YAML rendering) against the code and the
contract: the served document, the error table of src/api/error.h, the
parameter tables of docs/api.md, and a representative request set that
reaches every error code a request can provoke, each response validated
against the schema of its endpoint and status (conftest.py also validates
every other response of the session)."""
import json
import math
import os
import re
import subprocess
import sys
import time

import jsonschema
import pytest

import openapi_check
from harness import REPO, Client, Server, cli_ok, err, parse_json

DOC = openapi_check.load_doc()
EV = "/v2/everything"
TH = "/v2/top-headlines"


# ---- the document itself ---------------------------------------------------------------
def test_served_document_is_the_committed_one(api):
    r = api.get("/v2/openapi.json", key=None)
    assert r.status_code == 200
    assert r.headers["Content-Type"].replace(" ", "") == "application/json;charset=utf-8"
    assert parse_json(r.content) == DOC


def test_yaml_rendering_agrees_with_the_json():
    # the committed YAML is what the script makes of the committed JSON ...
    r = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "openapi-yaml.py"),
                        "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    # ... and a real YAML parser reads it as the same document
    yaml = pytest.importorskip("yaml")
    with open(os.path.join(REPO, "docs", "openapi.yaml"), encoding="utf-8") as f:
        assert yaml.safe_load(f) == DOC


def test_document_shape():
    assert DOC["openapi"].startswith("3.1.")
    assert DOC["info"]["title"] and DOC["info"]["version"]
    inlined = openapi_check.inline_refs(DOC, DOC)  # every $ref resolves
    ids = []
    for path, item in inlined["paths"].items():
        assert path.startswith("/")
        for method, op in item.items():
            # Only the alerts (an extension) take more than GET and HEAD.
            assert method in ("get", "head") or (
                path.startswith("/v2/alerts") and method in ("post", "delete")), (path, method)
            ids.append(op["operationId"])
            assert op["responses"], path
            assert "200" in op["responses"] or "201" in op["responses"], path
            for p in op.get("parameters", []):
                assert {"name", "in", "schema"} <= set(p), (path, p)
                jsonschema.Draft202012Validator.check_schema(p["schema"])
            for status, resp in op["responses"].items():
                assert re.fullmatch(r"[1-5]\d\d", status), (path, status)
                assert resp.get("description"), (path, status)
                for media in resp.get("content", {}).values():
                    jsonschema.Draft202012Validator.check_schema(media["schema"])
    assert len(ids) == len(set(ids)), "operationIds must be unique"
    for name, schema in DOC["components"]["schemas"].items():
        jsonschema.Draft202012Validator.check_schema(schema)


def error_table():
    """(code, HTTP status) pairs of API_ERROR_MAP in src/api/error.h."""
    with open(os.path.join(REPO, "src", "api", "error.h"), encoding="utf-8") as f:
        text = f.read()
    pairs = re.findall(r'X\(API_ERR_\w+,\s*"(\w+)",\s*(\d{3})', text)
    assert len(pairs) >= 15, pairs
    return {(c, int(s)) for c, s in pairs}


def test_every_error_of_the_code_is_documented_under_its_status():
    table = error_table()
    assert {c for c, _ in table} == set(DOC["components"]["schemas"]["Error"]["properties"]
                                        ["code"]["enum"])
    inlined = openapi_check.inline_refs(DOC, DOC)
    for path in (EV, EV + "/stream", TH, "/v2/top-headlines/sources", "/v2/sources"):
        responses = inlined["paths"][path]["get"]["responses"]
        for code, status in table:
            if code == "routeNotFound":
                continue  # an unknown path has no operation; components/responses/NotFound
            if code == "streamPositionExpired":
                continue  # an `event: error` inside /v2/everything/stream's 200 (its description)
            if code == "forbidden":
                continue  # /metrics only (metrics_allow_networks): components/responses/Forbidden
            if code in ("alertNotFound", "tooManyAlerts"):
                continue  # /v2/alerts only
            if code == "storyNotFound":
                continue  # /v2/stories/{id} only
            if code == "articleNotFound" and path != EV:
                continue  # /v2/everything's similarTo only
            resp = responses.get(str(status))
            assert resp, "%s: status %d (%s) not documented" % (path, status, code)
            enum = resp["content"]["application/json"]["schema"]["allOf"][1]["properties"][
                "code"]["enum"]
            assert code in enum, "%s %d: %s missing from %s" % (path, status, code, enum)
    nf = inlined["components"]["responses"]["NotFound"]["content"]["application/json"]
    assert nf["schema"]["allOf"][1]["properties"]["code"]["enum"] == ["routeNotFound"]


def api_md_parameters():
    """Parameter names of each endpoint's table in docs/api.md."""
    with open(os.path.join(REPO, "docs", "api.md"), encoding="utf-8") as f:
        text = f.read()
    out = {}
    for m in re.finditer(r"^### GET (/v2/[\w/-]+)(.*?)(?=^### |^## )", text, re.S | re.M):
        names = set()
        for row in re.findall(r"^\| ([^|]+) \|", m.group(2), re.M):
            if row.strip() in ("param", "---"):
                continue
            names |= {n.strip() for n in row.split(",")}
        out[m.group(1)] = names
    return out


def test_every_parameter_of_the_contract_is_documented():
    tables = api_md_parameters()
    assert tables[EV] >= {"q", "qInTitle", "sources", "from", "to", "pageSize"}, tables
    assert tables[TH] >= {"country", "category", "q", "pageSize"}, tables
    # the sources section has no table: "category, language, country filters"
    tables["/v2/top-headlines/sources"] = {"category", "language", "country"}
    tables["/v2/sources"] = tables["/v2/top-headlines/sources"]
    inlined = openapi_check.inline_refs(DOC, DOC)
    for path, names in tables.items():
        params = inlined["paths"][path]["get"]["parameters"]
        query = {p["name"] for p in params if p["in"] == "query"}
        assert names <= query, "%s: %s not in the document" % (path, names - query)
        assert {"X-Api-Key", "Authorization"} <= {p["name"] for p in params if p["in"] == "header"}


def test_the_checker_rejects_what_the_document_forbids():
    """The session-wide validation can fail: responses that break the
    document are refused."""
    c = openapi_check.Checker()
    hdr = {"Content-Type": "application/json; charset=utf-8", "X-Request-Id": "0123456789abcdef",
           "Access-Control-Allow-Origin": "*"}
    good = {"status": "ok", "totalResults": 1, "articles": [{
        "source": {"id": None, "name": "X"}, "author": None, "title": "t", "description": None,
        "url": "https://e.test/", "urlToImage": None, "publishedAt": "2026-01-02T03:04:05Z",
        "content": None}]}
    c.check("GET", EV, 200, hdr, json.dumps(good).encode())
    bad_cases = [
        (200, dict(good, totalResults=-1)),
        (200, dict(good, articles=[dict(good["articles"][0], publishedAt="2026-01-02")])),
        (200, dict(good, articles=[{k: v for k, v in good["articles"][0].items()
                                    if k != "content"}])),
        (200, dict(good, code="x")),
        (400, {"status": "error", "code": "apiKeyMissing", "message": "m"}),
        (401, {"status": "error", "code": "apiKeyMissing", "message": ""}),
        (418, {"status": "error", "code": "unexpectedError", "message": "m"}),
    ]
    for status, body in bad_cases:
        with pytest.raises(AssertionError):
            c.check("GET", EV, status, hdr, json.dumps(body).encode())
    with pytest.raises(AssertionError):  # undocumented content type
        c.check("GET", EV, 200, dict(hdr, **{"Content-Type": "text/html"}),
                json.dumps(good).encode())
    with pytest.raises(AssertionError):  # a bad request id
        c.check("GET", EV, 200, dict(hdr, **{"X-Request-Id": "nope"}), json.dumps(good).encode())
    with pytest.raises(AssertionError):  # unknown path answered 200
        c.check("GET", "/v2/nothing", 200, hdr, json.dumps(good).encode())


# ---- a representative request set, every error code included -----------------------------
PLANS = """
[plan tiny]
requests_per_day = 2

[plan bursty]
burst_per_second = 0.001
burst_size = 1

[plan shallow]
result_window = 10
history_days = 30
alerts = 1
"""


@pytest.fixture(scope="module")
def planned(tmp_path_factory):
    """A second server with plans whose limits are quick to reach."""
    d = tmp_path_factory.mktemp("openapi-plans")
    store = str(d / "store")
    cfg = d / "plans.conf"
    cfg.write_text(PLANS)
    data = os.path.join(REPO, "tests", "data", "api")
    cli_ok("sources", "import", "--create", "--store", store, os.path.join(data, "sources.jsonl"))
    cli_ok("import", "--create", "--store", store, os.path.join(data, "handmade.jsonl"))
    keys = {}
    for plan in ("tiny", "bursty", "shallow", "unlimited"):
        keys[plan] = cli_ok("keys", "create", "--create", "--store", store, "--name", plan, "--plan", plan,
                            "--config", str(cfg)).out.strip()
    keys["disabled"] = cli_ok("keys", "create", "--create", "--store", store, "--name", "off").out.strip()
    cli_ok("keys", "disable", "--store", store, "off")
    srv = Server(store, args=["--config", str(cfg)])
    yield srv, keys
    problems = srv.stop()
    assert not problems, "\n".join(problems)


ALERT = {"query": {"q": "plinthor"}, "webhook": "https://hooks.example.com/newsd",
         "secret": "openapi"}


def representative(api, planned_client, keys, corpus):
    """(label, response, want status, want code or None) for ~45 requests."""
    some = sorted(s["id"] for s in corpus.sources)[:3]
    p = planned_client
    reqs = [
        ("everything", lambda: api.get(EV, [("q", "plinthor")]), 200, None),
        ("everything all params", lambda: api.get(EV, [
            ("q", "plinthor OR zebulox"), ("qInTitle", "plinthor"), ("searchIn", "title,content"),
            ("domains", "newsd.test"), ("excludeDomains", "example.com"),
            ("from", "2000-01-01"), ("to", "2030-01-01T00:00:00Z"), ("language", "en"),
            ("sortBy", "relevancy"), ("pageSize", "5"), ("page", "1")]), 200, None),
        ("everything sources", lambda: api.get(EV, [("sources", ",".join(some))]), 200, None),
        ("everything popularity", lambda: api.get(EV, [("domains", "com"),
                                                       ("sortBy", "popularity")]), 200, None),
        ("everything empty", lambda: api.get(EV, [("q", '"nosuchwordanywhere"')]), 200, None),
        ("everything prefixed", lambda: api.get("/https://newsapi.org" + EV, [("q", "plinthor")]),
         200, None),
        ("everything head", lambda: api.request("HEAD", EV, [("q", "plinthor")]), 200, None),
        ("top-headlines country", lambda: api.get(TH, [("country", "us")]), 200, None),
        ("top-headlines category", lambda: api.get(TH, [("category", "technology"),
                                                        ("sortBy", "publishedAt")]), 200, None),
        ("top-headlines sources", lambda: api.get(TH, [("sources", ",".join(some))]), 200, None),
        ("top-headlines q", lambda: api.get(TH, [("q", "the"), ("pageSize", "3")]), 200, None),
        ("sources", lambda: api.get("/v2/top-headlines/sources"), 200, None),
        ("sources filtered", lambda: api.get("/v2/top-headlines/sources", [
            ("category", "business"), ("language", "en"), ("country", "us")]), 200, None),
        ("sources legacy", lambda: api.get("/v2/sources/"), 200, None),
        ("healthz", lambda: api.get("/healthz", key=None), 200, None),
        ("openapi", lambda: api.get("/v2/openapi.json", key=None), 200, None),
        ("metrics", lambda: api.get("/metrics", key=None), 200, None),
        ("page", lambda: api.get("/", key=None), 200, None),
        ("page script", lambda: api.get("/app.js", key=None), 200, None),
        ("page style", lambda: api.get("/style.css", key=None), 200, None),
        # 400
        ("missing everything", lambda: api.get(EV, []), 400, "parametersMissing"),
        ("missing top-headlines", lambda: api.get(TH, [("pageSize", "5")]), 400,
         "parametersMissing"),
        ("incompatible", lambda: api.get(TH, [("sources", some[0]), ("country", "us")]), 400,
         "parametersIncompatible"),
        ("invalid pageSize", lambda: api.get(EV, [("q", "a"), ("pageSize", "101")]), 400,
         "parameterInvalid"),
        ("invalid q", lambda: api.get(EV, [("q", "(a")]), 400, "parameterInvalid"),
        ("invalid date", lambda: api.get(EV, [("q", "a"), ("from", "2021-02-30")]), 400,
         "parameterInvalid"),
        ("invalid category", lambda: api.get("/v2/sources", [("category", "cats")]), 400,
         "parameterInvalid"),
        ("country on everything", lambda: api.get(EV, [("q", "a"), ("country", "us")]), 400,
         "parameterInvalid"),
        ("too many sources", lambda: api.get(EV, [("sources", ",".join(
            "s%d" % i for i in range(21)))]), 400, "sourcesTooMany"),
        ("unknown source", lambda: api.get(EV, [("sources", "no-such-source")]), 400,
         "sourceDoesNotExist"),
        # 401
        ("key missing", lambda: api.get(EV, [("q", "a")], key=None), 401, "apiKeyMissing"),
        ("key invalid", lambda: api.get(TH, [("country", "us")], key="bogus"), 401,
         "apiKeyInvalid"),
        ("key disabled", lambda: p.get(EV, [("q", "a")], key=keys["disabled"]), 401,
         "apiKeyDisabled"),
        # 404, 405, 414, 431
        ("route", lambda: api.get("/v2/nothing", key=None), 404, "routeNotFound"),
        ("route with key", lambda: api.get("/v3/everything"), 404, "routeNotFound"),
        ("method", lambda: api.request("DELETE", EV, [("q", "a")]), 405, "methodNotAllowed"),
        ("method on page", lambda: api.request("POST", "/", key=None), 405, "methodNotAllowed"),
        ("url too long", lambda: api.get(EV, [("q", "a"), ("pad", "x" * 9000)], fresh=True),
         414, "requestTooLarge"),
        ("headers too large", lambda: api.get(EV, [("q", "a")], fresh=True,
                                              headers={"X-Pad": "y" * 17000}),
         431, "requestTooLarge"),
        # 426
        ("window", lambda: p.get(EV, [("q", "plinthor"), ("page", "2"), ("pageSize", "10")],
                                 key=keys["shallow"]), 426, "maximumResultsReached"),
        ("history", lambda: p.get(EV, [("q", "plinthor"), ("from", "2000-01-01"), ("pageSize", "5")],
                                  key=keys["shallow"]), 426, "parameterInvalid"),
        ("server window", lambda: api.get(EV, [("q", "a"), ("page", "101"), ("pageSize", "100")]),
         426, "maximumResultsReached"),
        # 429: the tiny plan allows two requests a day, the bursty one one at a time
        ("quota 1", lambda: p.get(EV, [("q", "a")], key=keys["tiny"]), 200, None),
        ("quota 2", lambda: p.get(EV, [("q", "a")], key=keys["tiny"]), 200, None),
        ("quota exhausted", lambda: p.get(EV, [("q", "a")], key=keys["tiny"]), 429,
         "apiKeyExhausted"),
        ("burst 1", lambda: p.get(EV, [("q", "a")], key=keys["bursty"]), 200, None),
        ("burst limited", lambda: p.get(EV, [("q", "a")], key=keys["bursty"]), 429,
         "rateLimited"),
        # webhook alerts (an extension): the shallow plan keeps one
        ("alert", lambda: p.request("POST", "/v2/alerts", key=keys["shallow"], json=ALERT), 201,
         None),
        ("alerts", lambda: p.get("/v2/alerts", key=keys["shallow"]), 200, None),
        ("alert over the plan", lambda: p.request("POST", "/v2/alerts", key=keys["shallow"],
                                                  json=ALERT), 403, "tooManyAlerts"),
        ("alert of nobody", lambda: p.get("/v2/alerts/987654", key=keys["shallow"]), 404,
         "alertNotFound"),
        ("alert deleted", lambda: p.request("DELETE", "/v2/alerts/987654",
                                            key=keys["shallow"]), 404, "alertNotFound"),
        ("alert body too large", lambda: p.request("POST", "/v2/alerts", key=keys["shallow"],
                                                   data=b"x" * 20000), 413, "requestTooLarge"),
        # stories (an extension)
        ("dedupe", lambda: api.get(EV, [("q", "a"), ("dedupe", "true"), ("pageSize", "3")]), 200,
         None),
        ("stories", lambda: api.get("/v2/stories", [("q", "a"), ("pageSize", "3")]), 200, None),
        ("story of nobody", lambda: api.get("/v2/stories/987654"), 404, "storyNotFound"),
        ("similarTo of nothing", lambda: api.get(EV, [("similarTo", "https://no.example/x")]),
         404, "articleNotFound"),
    ]
    for label, send, status, code in reqs:
        yield label, send(), status, code


# Codes no request can provoke on purpose: an internal fault, and the node
# being unable to serve. Their envelopes are the same Error schema.
# Not produced by this suite's server: failures, and forbidden (metrics_allow_networks,
# which tests/api/test_proxy.py drives).
UNREACHABLE = {"unexpectedError", "serviceUnavailable", "forbidden"}
# The live stream's own codes need open streams and time: tests/api/test_stream.py.
STREAM_ONLY = {"tooManyStreams", "streamPositionExpired"}
# The export's plan limit needs a plan with one and exports: tests/api/test_export.py.
EXPORT_ONLY = {"exportLimitReached"}


def test_representative_requests_match_the_document(api, planned, corpus):
    srv, keys = planned
    p = Client(srv.base, keys["unlimited"])
    checker = openapi_check.checker()
    before = checker.checked
    codes, n = set(), 0
    # (each request is sent as the loop asks for it: between two of these
    # times lies the one request of an iteration)
    asked = time.monotonic()
    for label, r, status, code in representative(api, p, keys, corpus):
        got = time.monotonic()
        n += 1
        assert r.status_code == status, "%s: want %d, got %d: %s" % (
            label, status, r.status_code, r.text[:300])
        if code:
            b = err(r, status, code)
            codes.add(b["code"])
        if label == "quota exhausted":
            assert r.headers.get("X-RateLimit-Remaining") == "0"
        if label == "burst 1":
            emptied_after = asked  # the bucket's one token went in this request
        if label == "burst limited":
            # 0.001 a second: the next request 1,000 s after the bucket was
            # emptied, less the time since (whole seconds, rounded up). The
            # time between the two requests is counted, not assumed to be
            # under a second: under make check's load it once was not.
            since = got - emptied_after
            assert 1000 - math.ceil(since) <= int(r.headers["Retry-After"]) <= 1000, \
                (since, r.headers)
        asked = time.monotonic()
    # every response above went through the validating wrapper
    assert checker.checked - before == n
    all_codes = set(DOC["components"]["schemas"]["Error"]["properties"]["code"]["enum"])
    assert codes == all_codes - UNREACHABLE - STREAM_ONLY - EXPORT_ONLY, \
        all_codes - UNREACHABLE - STREAM_ONLY - EXPORT_ONLY - codes
    assert n >= 40
