"""The query language's limits hold for the whole request (issue 23 item 1,
docs/security.md "Query limits"): 500 characters and 256 words and phrases
for all the values of q (or qInTitle) together, however they are split —
q=a&q=b&... 1,500 times was merged in cubic time, seconds of CPU per GET —
on /v2/everything, /v2/top-headlines, /v2/everything/stream and in the
saved search of POST /v2/alerts; and an alert stored before the rule that
breaks it is compiled under the same limits at start, refused with a log
line, not in seconds."""
import json
import os
import sqlite3
import time

import pytest

from harness import SLOW, Client, Server, cli_ok, err

EV, TH, STREAM, ALERTS = "/v2/everything", "/v2/top-headlines", "/v2/everything/stream", \
    "/v2/alerts"
PATHS = [EV, TH, STREAM]


def words(n):
    """n distinct words of two characters (three past the 1,296th), short
    enough for 1,500 of them as q values to stay under the URL limit."""
    abc = "abcdefghijklmnopqrstuvwxyz0123456789"
    k = len(abc)
    return [abc[i % k] + abc[(i // k) % k] + ("" if i < k * k else abc[i // (k * k)])
            for i in range(n)]


def refused(api, path, params):
    """The 400 parameterInvalid envelope of a GET; read only once its status
    says it is no stream (a stream accepted by mistake would stay open)."""
    r = api.get(path, params, stream=True)
    if r.status_code != 400:
        r.close()
        raise AssertionError("%s: %d, not 400" % (path, r.status_code))
    return err(r, 400, "parameterInvalid")


def post_alert(api, query):
    body = {"query": query, "webhook": "https://example.com/hook", "secret": "s3cret"}
    return api.request("POST", ALERTS, data=json.dumps(body),
                       headers={"Content-Type": "application/json"})


@pytest.mark.parametrize("path", PATHS)
def test_1500_q_values_are_refused_at_once_with_400(api, path):
    """Under the URL limit, over the length limit of q all together: refused
    before any of it is parsed (the test checks the answer, not the time)."""
    params = [("q", w) for w in words(1500)]
    b = refused(api, path, params)
    assert "too long" in b["message"] and "1500 values" in b["message"], b["message"]
    assert "500" in b["message"], b["message"]


@pytest.mark.parametrize("name", ["q", "qInTitle"])
@pytest.mark.parametrize("path", PATHS)
def test_the_length_limit_counts_every_value(api, path, name):
    refused(api, path, [(name, "a" * 300), (name, "b" * 201)])
    if path != STREAM:  # a stream that is accepted stays open: the errors are the point
        assert api.get(path, [(name, "a" * 300), (name, "b" * 200)]).status_code == 200


def letters(n):
    """n one-letter words (repeated: each counts, as in one value)."""
    return [chr(ord("a") + i % 26) for i in range(n)]


@pytest.mark.parametrize("path", PATHS)
def test_the_term_limit_counts_every_value(api, path):
    """500 characters hold at most 250 words in one value, but 500 in
    one-letter values: 257 words are refused however they are split, 256
    pass."""
    split = refused(api, path, [("q", x) for x in letters(257)])
    assert "more than 256 words and phrases" in split["message"], split["message"]
    assert "value 257 of 257" in split["message"], split["message"]
    mixed = [("q", " ".join(letters(200)))] + [("q", x) for x in letters(57)]
    b = refused(api, path, mixed)
    assert "more than 256 words and phrases" in b["message"], b["message"]
    if path != STREAM:
        assert api.get(path, [("q", x) for x in letters(256)]).status_code == 200


def test_split_values_mean_the_and_of_the_values(api):
    """The merge keeps its meaning: q=a&q=b is q=a AND b, duplicates once."""
    joined = api.get(EV, [("q", "plinthor AND zebulox")]).json()
    split = api.get(EV, [("q", "plinthor"), ("q", "zebulox"), ("q", "plinthor")]).json()
    assert split["status"] == "ok" and split["totalResults"] == joined["totalResults"]


@pytest.mark.parametrize("query", [
    {"q": words(1500)},
    {"q": ["a" * 300, "b" * 201]},
    {"q": letters(257)},
    {"q": [" ".join(letters(200))] + letters(57)},
    {"q": "x", "qInTitle": letters(300)},
])
def test_a_saved_search_is_held_to_the_same_limits(api, query):
    """POST /v2/alerts: the same 400 as /v2/everything with the same values."""
    want = api.get(EV, [(k, v) for k, vs in query.items()
                        for v in (vs if isinstance(vs, list) else [vs])])
    b = err(post_alert(api, query), 400, "parameterInvalid")
    assert b == want.json()


def test_an_alert_stored_over_the_limits_is_skipped_at_start(tmp_path):
    """An alert saved before the rule (written here straight into the store)
    with 2,000 words is refused when the worker compiles it, with a log line;
    the server starts and serves, and a valid alert beside it is kept."""
    store = str(tmp_path / "store")
    key = cli_ok("keys", "create", "--create", "--store", store, "--name", "k").out.strip()
    db = sqlite3.connect(os.path.join(store, "newsd.db"))
    (key_id,) = db.execute("SELECT id FROM keys").fetchone()
    big = json.dumps({"q": words(2000)})
    for q in (big, json.dumps({"q": "zebulon"})):
        db.execute("INSERT INTO alerts(key_id, query, webhook, secret) VALUES (?, ?, ?, ?)",
                   (key_id, q, "https://example.com/hook", "s"))
    db.commit()
    (big_id,) = db.execute("SELECT id FROM alerts WHERE query = ?", (big,)).fetchone()
    db.close()
    srv = Server(store)
    try:
        deadline = time.monotonic() + 30 * SLOW
        line = None
        while time.monotonic() < deadline and not line:
            line = next((x for x in srv.stderr().splitlines()
                         if "alert %d:" % big_id in x), None)
            time.sleep(0.05)
        assert line and "too long" in line and "matches nothing" in line, srv.stderr()[-2000:]
        assert not any("alert %d:" % (big_id + 1) in x for x in srv.stderr().splitlines())
        assert Client(srv.base, key).get(EV, [("q", "zebulon")]).status_code == 200
    finally:
        problems = srv.stop()
    assert not problems, "\n".join(problems)
