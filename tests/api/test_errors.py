"""§5 errors that need no plan, the key rules of §1, and the validation order."""
import json
import re
import time

import pytest

from harness import SLOW, articles_ok, cli_ok, err, run_cli

EV = "/v2/everything"
TH = "/v2/top-headlines"
MISSING_KEY = ("Your API key is missing. Append this to the URL with the apiKey param, or use "
               "the x-api-key HTTP header.")
INVALID_KEY = ("Your API key is invalid or incorrect. Check your key, or contact the "
               "administrator of this server to get one.")
DISABLED_KEY = "Your API key has been disabled."
EV_MISSING = ("Required parameters are missing, the scope of your search is too broad. Please "
              "set any of the following required parameters and try again: q, qInTitle, "
              "sources, domains.")
TOO_MANY = ("You have requested too many sources in a single request. Try splitting the "
            "request into 2 smaller requests.")
Q = [("q", "plinthor")]


def wait_for(fn, what):
    """Key changes made by the CLI while the server runs must take effect;
    allow a short propagation delay, never a fixed sleep."""
    deadline = time.monotonic() + 5 * SLOW
    while True:
        r = fn()
        if r is not None:
            return r
        assert time.monotonic() < deadline, "timed out waiting for " + what
        time.sleep(0.05)


# ---- keys ----------------------------------------------------------------------
@pytest.mark.parametrize("path", [EV, TH, "/v2/top-headlines/sources", "/v2/sources"])
def test_key_missing(api, path):
    err(api.get(path, Q, key=None), 401, "apiKeyMissing", MISSING_KEY)


def test_empty_key_is_missing(api):
    err(api.get(EV, Q + [("apiKey", "")], key=None), 401, "apiKeyMissing", MISSING_KEY)
    err(api.get(EV, Q, key=None, headers={"X-Api-Key": ""}), 401, "apiKeyMissing")
    err(api.get(EV, Q, key=None, headers={"Authorization": ""}), 401, "apiKeyMissing")


@pytest.mark.parametrize("path", [EV, TH, "/v2/sources"])
def test_key_invalid(api, path):
    err(api.get(path, Q, key="0123456789abcdef0123456789abcdef"), 401, "apiKeyInvalid",
        INVALID_KEY)


def test_key_transports(api, key):
    articles_ok(api.get(EV, Q + [("apiKey", key)], key=None))
    articles_ok(api.get(EV, Q + [("apikey", key)], key=None))
    articles_ok(api.get(EV, Q + [("APIKEY", key)], key=None))
    articles_ok(api.get(EV, Q, key=None, headers={"x-api-key": key}))
    for auth in ("Bearer " + key, "bearer " + key, "BEARER " + key, key):
        articles_ok(api.get(EV, Q, key=None, headers={"Authorization": auth}))


def test_key_precedence(api, store, key):
    """First non-empty of apiKey, X-Api-Key, Authorization wins."""
    bad = "not-a-key-at-all"
    alt = store.keys["alt"]
    articles_ok(api.get(EV, Q + [("apiKey", key)], key=bad))
    err(api.get(EV, Q + [("apiKey", bad)], key=key), 401, "apiKeyInvalid")
    articles_ok(api.get(EV, Q + [("apiKey", "")], key=key))
    err(api.get(EV, Q, key=bad, headers={"Authorization": "Bearer " + key}), 401, "apiKeyInvalid")
    articles_ok(api.get(EV, Q, key=key, headers={"Authorization": "Bearer " + bad}))
    articles_ok(api.get(EV, Q, key=None, headers={"X-Api-Key": "", "Authorization": key}))
    err(api.get(EV, Q + [("apiKey", bad)], key=None, headers={"Authorization": "Bearer " + alt}),
        401, "apiKeyInvalid")


def test_key_disable_enable_while_serving(api, store):
    k = store.keys["victim-disable"]
    articles_ok(api.get(EV, Q, key=k))
    cli_ok("keys", "disable", "--store", store.path, "victim-disable")
    wait_for(lambda: api.get(EV, Q, key=k).status_code == 401 or None, "disable")
    err(api.get(EV, Q, key=k), 401, "apiKeyDisabled", DISABLED_KEY)
    # the key check comes before any parameter check
    err(api.get(EV, [("pageSize", "0")], key=k), 401, "apiKeyDisabled")
    cli_ok("keys", "enable", "--store", store.path, "victim-disable")
    wait_for(lambda: api.get(EV, Q, key=k).status_code == 200 or None, "enable")
    articles_ok(api.get(EV, Q, key=k))


def key_id(store, name):
    """The id `keys list` prints on the line of the key named NAME."""
    out = cli_ok("keys", "list", "--store", store.path).out
    lines = [l for l in out.splitlines() if re.search(r"(^|\s|=)%s(\s|$)" % re.escape(name), l)]
    assert len(lines) == 1, out
    first = lines[0].split()[0]
    return first.split("=", 1)[1] if "=" in first else first


def test_key_disable_by_id(api, store):
    k = store.keys["victim-byid"]
    kid = key_id(store, "victim-byid")
    assert kid != "victim-byid"
    cli_ok("keys", "disable", "--store", store.path, kid)
    wait_for(lambda: api.get(EV, Q, key=k).status_code == 401 or None, "disable by id")
    err(api.get(EV, Q, key=k), 401, "apiKeyDisabled", DISABLED_KEY)
    cli_ok("keys", "enable", "--store", store.path, kid)
    wait_for(lambda: api.get(EV, Q, key=k).status_code == 200 or None, "enable by id")


def test_key_delete_while_serving(api, store):
    k = store.keys["victim-delete"]
    articles_ok(api.get(EV, Q, key=k))
    cli_ok("keys", "delete", "--store", store.path, "victim-delete")
    wait_for(lambda: api.get(EV, Q, key=k).status_code == 401 or None, "delete")
    err(api.get(EV, Q, key=k), 401, "apiKeyInvalid", INVALID_KEY)
    r = run_cli("keys", "enable", "--store", store.path, "victim-delete")
    assert r.rc == 1 and r.err.strip(), repr(r)


def test_key_created_while_serving(api, store):
    k = cli_ok("keys", "create", "--create", "--store", store.path, "--name", "late").out.strip()
    wait_for(lambda: api.get(EV, Q, key=k).status_code == 200 or None, "new key")


# ---- routes -------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["/v2", "/v2/", "/v2/nothing", "/v1/everything",
                                  "/v2/everything/extra", "/v2/top-headlines/sources/x",
                                  "/v2/everythingx", "/everything", "/https://newsapi.org/v3/x"])
@pytest.mark.parametrize("key", [None, "bogus-key", "main"])
def test_route_not_found_before_key(api, store, path, key):
    k = store.keys["main"] if key == "main" else key
    err(api.get(path, Q, key=k), 404, "routeNotFound")


# ---- scope, incompatibility, values -------------------------------------------------------
@pytest.mark.parametrize("params", [[], [("language", "en")], [("excludeDomains", "cnn.com")],
                                    [("from", "2021-01-01")], [("q", "")], [("qInTitle", "")],
                                    [("sortBy", "popularity"), ("pageSize", "10")],
                                    [("searchIn", "title")], [("pageSize", "0")],
                                    [("page", "abc")], [("sources", "")], [("domains", "")]])
def test_everything_scope_missing(api, params):
    err(api.get(EV, params), 400, "parametersMissing", EV_MISSING)


@pytest.mark.parametrize("name", ["country", "category", "Country", "CATEGORY"])
@pytest.mark.parametrize("extra", [[], Q, [("pageSize", "0")], [("q", "(")]])
def test_everything_rejects_country_and_category(api, name, extra):
    """Unsupported parameter: checked before the scope and the values."""
    value = "us" if name.lower() == "country" else "bogus"
    err(api.get(EV, extra + [(name, value)]), 400, "parameterInvalid",
        "The %s param is not currently supported on the /everything endpoint." % name.lower())


@pytest.mark.parametrize("params,code", [
    ([("pageSize", "0")], "parametersMissing"),
    (Q + [("pageSize", "0")], "parameterInvalid"),
    (Q + [("page", "101"), ("pageSize", "100"), ("sortBy", "bogus")], "parameterInvalid"),
    (Q + [("page", "101"), ("pageSize", "100"), ("language", "xx")], "parameterInvalid"),
    ([("sources", ",".join("nope-%d" % i for i in range(21)))], "sourcesTooMany"),
    ([("sources", "nope-1")], "sourceDoesNotExist"),
])
def test_validation_order(api, params, code):
    err(api.get(EV, params), 400, code)


def test_key_checked_before_parameters(api):
    err(api.get(EV, [("country", "us")], key=None), 401, "apiKeyMissing")
    err(api.get(EV, [], key="bogus"), 401, "apiKeyInvalid")
    err(api.get(TH, [("sources", "x"), ("country", "us")], key=None), 401, "apiKeyMissing")


@pytest.mark.parametrize("path", [EV, TH])
def test_sources_limits(api, corpus, path):
    twenty = sorted(s["id"] for s in corpus.sources)[:20]
    articles_ok(api.get(path, [("sources", ",".join(twenty))]))
    many = ["nope-%d" % i for i in range(21)]
    err(api.get(path, [("sources", ",".join(many))]), 400, "sourcesTooMany", TOO_MANY)
    err(api.get(path, [("sources", ",".join(twenty + ["nope-x"]))]), 400, "sourcesTooMany",
        TOO_MANY)
    err(api.get(path, [("sources", "bbc-news,no-such-source")]), 400, "sourceDoesNotExist",
        "You have requested a source which does not exist: no-such-source.")
    err(api.get(path, [("sources", "bbc-news"), ("sources", "other-missing")]), 400,
        "sourceDoesNotExist", "You have requested a source which does not exist: other-missing.")


# ---- result window -------------------------------------------------------------------
@pytest.mark.parametrize("path,params", [(EV, [("q", '"the"')]), (TH, [("country", "us")])])
@pytest.mark.parametrize("page,size,ok", [(100, 100, True), (101, 100, False),
                                          (10000, 1, True), (10001, 1, False),
                                          (201, 50, False), (200, 50, True), (1000, 11, False)])
def test_maximum_results_reached(api, path, params, page, size, ok):
    r = api.get(path, params + [("page", str(page)), ("pageSize", str(size))])
    if ok:
        b = articles_ok(r)
        assert b["articles"] == []
    else:
        # The server's window (no plan's): the whole message, the range asked included.
        err(r, 426, "maximumResultsReached",
            "You have requested too many results. This server returns at most the first "
            "10000 results of a search. You are trying to request results %d to %d."
            % ((page - 1) * size, page * size))


# ---- q -----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["q", "qInTitle"])
def test_q_length_in_code_points(api, name):
    for q in ("é" * 500, "a" * 500, ("plinthor " * 56)[:500], ("zürichzürich " * 39)[:500],
              "😀 " * 249 + "ab"):
        assert len(q) == 500
        articles_ok(api.get(EV, [(name, q)]))
    for q in ("é" * 501, "a" * 501, "😀" * 501, ("zürichzürich " * 39)[:501]):
        err(api.get(EV, [(name, q)]), 400, "parameterInvalid",
            "The %s parameter is too long: 501 characters, the limit is 500." % name)


def test_q_of_167_words_accepted(api):
    """§2: q up to 500 characters is valid, however many words it holds."""
    q = "ab " * 166 + "ab"
    assert len(q) == 500
    articles_ok(api.get(EV, [("q", q)]))


def test_q_of_500_cjk_characters_accepted(api):
    """§2: q up to 500 characters is valid; a long CJK run (one phrase of
    bigrams, §8) is still such a query."""
    q = "漢字" * 250
    b = articles_ok(api.get(EV, [("q", q)]))
    assert b["totalResults"] == 0


@pytest.mark.parametrize("q", ["(plinthor", "plinthor)", '"plinthor', 'plinthor "zebulox',
                               "plinthor AND", "AND plinthor", "OR plinthor", "plinthor OR",
                               "plinthor AND OR zebulox", "()", "plinthor NOT", "((plinthor)",
                               "ééééé AND", "é (plinthor", "plinthor ) zebulox"])
@pytest.mark.parametrize("path", [EV, TH])
def test_malformed_query(api, path, q):
    b = err(api.get(path, [("q", q)]), 400, "parameterInvalid")
    m = re.search(r"at character (\d+)", b["message"])
    assert m, b["message"]
    assert 1 <= int(m.group(1)) <= len(q) + 1, (q, b["message"])


@pytest.mark.parametrize("q,pos", [("plinthor)", 9), ("ééé)", 4), ("漢字 ) a", 4)])
def test_malformed_query_position_in_code_points(api, q, pos):
    b = err(api.get(EV, [("q", q)]), 400, "parameterInvalid")
    assert "at character %d" % pos in b["message"], b["message"]


@pytest.mark.parametrize("q", ["-plinthor", "NOT plinthor", '-"vorpalix snickersnee"',
                               "-plinthor -zebulox", "NOT (plinthor OR zebulox)",
                               "plinthor OR -zebulox", "plinthor OR NOT zebulox"])
@pytest.mark.parametrize("name", ["q", "qInTitle"])
def test_exclusion_only_rejected(api, name, q):
    err(api.get(EV, [(name, q)]), 400, "parameterInvalid")


def test_leading_not_with_positive_part_is_fine(api):
    b = articles_ok(api.get(EV, [("q", "NOT quorvax AND plinthor")]))
    assert b["totalResults"] == 2


# ---- NUL bytes (issue 14 item 6) ---------------------------------------------------
# C strings end at a NUL byte: values used to be read cut short there (a key
# "KEY%00garbage" authenticated as KEY, "sortBy=relevancy%00x" sorted by
# relevancy). A NUL anywhere in a value is refused instead.
def raw_error(api, target, *headers):
    """A request sent byte for byte (NULs in the target or headers); returns
    the parsed error envelope and the status."""
    head = b"GET " + target + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
    for h in headers:
        head += h + b"\r\n"
    status, hdrs, body = api.raw(head + b"\r\n")
    assert hdrs.get("content-type", "").replace(" ", "") == "application/json;charset=utf-8"
    b = json.loads(body)
    assert list(b) == ["status", "code", "message"] and b["status"] == "error", b
    return status, b


def test_a_key_parameter_with_a_nul_byte_is_invalid(api, key):
    for q in ("apiKey=%s%%00garbage" % key, "apiKey=%s%%00" % key, "apiKey=%%00%s" % key,
              "apiKey=%s&apiKey=x%%00" % key):
        err(api.get(EV + "?q=plinthor&" + q, key=None), 401, "apiKeyInvalid", INVALID_KEY)


def test_a_key_header_with_a_nul_byte_is_invalid(api, key):
    k = key.encode()
    for h in (b"X-Api-Key: " + k + b"\0zz", b"X-Api-Key: " + k + b"\0",
              b"X-Api-Key: \0" + k, b"Authorization: Bearer " + k + b"\0zz",
              b"Authorization: " + k + b"\0\0"):
        status, b = raw_error(api, b"/v2/everything?q=plinthor", h)
        assert (status, b["code"], b["message"]) == (401, "apiKeyInvalid", INVALID_KEY), (h, b)


@pytest.mark.parametrize("path,query,name", [
    (EV, "q=plinthor&sources=bbc-news%00x", "sources"),
    (TH, "category=business%00", "category"),
    (EV, "q=plinthor&sortBy=relevancy%00x", "sortBy"),
    (EV, "q=plinthor&searchIn=title%00x", "searchIn"),
    (EV, "q=plinthor%00", "q"),
    (EV, "q=plinthor&pagesize=10%00", "pageSize"),
    (TH, "country=us%00", "country"),
    (EV, "q=plinthor&language=en%00fr", "language"),
    (EV, "q=plinthor&unknownParameter=%00", "unknownparameter"),
    ("/v2/top-headlines/sources", "category=business%00", "category"),
])
def test_a_parameter_with_a_nul_byte_is_invalid(api, path, query, name):
    b = err(api.get(path + "?" + query), 400, "parameterInvalid")
    assert b["message"] == ("The %s parameter contains a NUL byte (%%00), which no value may "
                            "contain." % name), b


def test_the_key_is_checked_before_a_nul_byte(api):
    err(api.get(EV + "?q=plinthor&sortBy=relevancy%00x", key=None), 401, "apiKeyMissing")


def test_a_header_with_a_nul_byte_is_invalid(api, key):
    k = b"X-Api-Key: " + key.encode()
    for target in (b"/v2/everything?q=plinthor", b"/v2/top-headlines/sources", b"/healthz"):
        for h in (b"Origin: https://a.test\0.evil.test", b"Accept: */*\0",
                  b"X-Anything: \0"):
            status, b = raw_error(api, target, k, h)
            name = h.split(b":")[0].decode()
            assert (status, b["code"]) == (400, "parameterInvalid"), (target, h, b)
            assert b["message"] == ("The %s header contains a NUL byte, which no header value "
                                    "may contain." % name), b


def test_a_url_with_a_raw_nul_byte_is_invalid(api, key):
    k = key.encode()
    for target in (b"/v2/everything?q=plinthor&apiKey=" + k + b"\0zz",
                   b"/v2/everything?q=plinthor\0&apiKey=" + k,
                   b"/v2/everything\0/x?q=plinthor&apiKey=" + k, b"/healthz\0"):
        status, b = raw_error(api, target)
        assert (status, b["code"]) == (400, "parameterInvalid"), (target, b)
        assert b["message"] == "The request URL contains a NUL byte, which no URL may contain."


def test_clean_requests_sent_byte_for_byte_are_served(api, key):
    """The NUL checks take nothing else for one: spaces, tabs, bare LFs."""
    for head in (b"X-Api-Key: " + key.encode(), b"X-Api-Key:\t " + key.encode(),
                 b"Authorization: Bearer " + key.encode()):
        status, _, body = api.raw(b"GET /v2/everything?q=plinthor HTTP/1.1\nHost: x\n"
                                  b"Connection: close\n" + head + b"\n\n")
        assert status == 200, (head, body[:300])
