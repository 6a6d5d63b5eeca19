"""GET /v2/everything/stream (issue 17 item 1, docs/api.md "Live streams"):
a real newsd, real streaming reads over HTTP (sse.py) while `newsd import`
runs in another process. Matching articles arrive and others do not, in
commit order with increasing ids; a reconnect with Last-Event-ID (or
lastEventId=) gets exactly what it missed, then the live ones; a position
past the replay window is answered with streamPositionExpired; the plan's
`streams` limit gives tooManyStreams; invalid parameters give exactly the
errors of /v2/everything; keep-alive comments come at the configured
interval; a client that does not read is cut off; SIGTERM ends streams.
NEWSD_INDEX=fts5 runs all of it on the fts5 backend (make api-test-fts5)."""
import json
import os
import re
import threading
import time
import uuid

import pytest
import requests

from corpus import DATA
from harness import (ARTICLE_KEYS, HTTP_TIMEOUT, SLOW, Client, Server, cli_ok, err,
                     import_jsonl)
from sse import Stream

WAIT = 15 * SLOW  # generous: an article is due within 1 s of its commit

CONFIG = """
[server]
stream_keepalive_seconds = 1
[plan two]
streams = 2
[plan quota]
requests_per_day = 2
[plan one]
streams = 1
[plan delayed]
delay_seconds = 3600
[plan month]
history_days = 30
"""

STREAM = "/v2/everything/stream"


def article(word, n, extra=""):
    tag = uuid.uuid4().hex[:12]
    return {
        "source": {"id": None, "name": "Live Wire"},
        "author": "Stream Tester",
        "title": "%s report %d %s" % (word, n, extra),
        "description": "Number %d of a live test batch about %s." % (n, word),
        "url": "https://live.example.com/%s/%s/%d" % (word, tag, n),
        "urlToImage": None,
        "publishedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "content": "Body of %s %d." % (word, n),
    }


def import_rows(store, rows, batch=None):
    """newsd import in another process (one run per batch of rows, so that
    they are separate commits); waits for it."""
    batch = batch or len(rows)
    for i in range(0, len(rows), batch):
        import_jsonl(store, rows[i:i + batch])


def import_async(store, rows, batch):
    t = threading.Thread(target=import_rows, args=(store, rows, batch))
    t.start()
    return t


def urls_of(events):
    return [json.loads(e.text)["url"] for e in events]


def check_article_events(events):
    ids = []
    for e in events:
        assert e.event == "article", e
        assert e.id and e.id.isdigit(), e
        ids.append(int(e.id))
        a = json.loads(e.text)
        assert list(a) == ARTICLE_KEYS, list(a)
        assert len(e.data) == 1, "one data line per event: %r" % e
    assert ids == sorted(ids) and len(set(ids)) == len(ids), "ids must increase: %r" % ids
    return ids


def next_is_sentinel(stream, store, word, **fields):
    """Commit one more matching article and see it as the stream's very next
    event: whatever was committed before it and wrongly matched would have
    come first (events come in commit order). No fixed wait for "nothing"."""
    row = dict(article(word, 10 ** 6, "sentinel"), **fields)
    import_rows(store, [row])
    e = collect(stream, 1)[0]
    assert json.loads(e.text)["url"] == row["url"], "not the sentinel: %r" % e


def collect(stream, n, timeout=WAIT):
    """n events, failing when they do not come in time."""
    out = []
    deadline = time.monotonic() + timeout
    while len(out) < n:
        e = stream.next_event(max(0.01, deadline - time.monotonic()))
        if e is None:
            break
        out.append(e)
    assert len(out) == n, "got %d of %d events: %r" % (len(out), n, out[-3:])
    return out


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    d = tmp_path_factory.mktemp("live")
    cfg = d / "newsd.conf"
    cfg.write_text(CONFIG)
    store = str(d / "store")
    cli_ok("sources", "import", "--create", "--store", store, os.path.join(DATA, "sources.jsonl"))
    cli_ok("import", "--create", "--store", store, os.path.join(DATA, "articles.jsonl"))
    keys = {}
    for name, plan in (("main", "unlimited"), ("two", "two"), ("quota", "quota")):
        keys[name] = cli_ok("keys", "create", "--create", "--store", store, "--name", name, "--plan", plan,
                            "--config", str(cfg)).out.strip()
    srv = Server(store, args=["--config", str(cfg)])
    srv.keys = keys
    srv.store_path = store
    srv.config = str(cfg)
    srv.client = Client(srv.base, keys["main"])
    yield srv
    problems = srv.stop()
    assert not problems, "\n".join(problems)


def open_stream(srv, params, key=None, headers=None, wait_for_room=None):
    """A stream of the main key (or key). The main key's streams closed by
    earlier tests are given back at their next keep-alive (1 s here): a
    tooManyStreams answer is tried again until then."""
    h = {"X-Api-Key": key or srv.keys["main"]}
    h.update(headers or {})
    if wait_for_room is None:
        wait_for_room = key is None
    deadline = time.monotonic() + WAIT
    while True:
        s = Stream(srv.base, STREAM, params, h, timeout=HTTP_TIMEOUT)
        if not (wait_for_room and s.status == 429 and b"tooManyStreams" in s.body):
            return s
        s.close()
        assert time.monotonic() < deadline, "the main key's streams were never given back"
        time.sleep(0.05)


def test_matching_articles_arrive_in_commit_order_and_others_do_not(live):
    word, other = "zephyrquill", "marblecrest"
    # A client that accepts gzip: the stream must still not be compressed
    # (a compressor would hold events back until its block fills).
    s = open_stream(live, {"q": word}, headers={"Accept-Encoding": "gzip, deflate"})
    s2 = open_stream(live, {"qInTitle": other})
    try:
        assert s.status == 200, s.body
        assert s.headers["content-type"].startswith("text/event-stream")
        assert s.headers.get("access-control-allow-origin") == "*"
        assert "content-encoding" not in s.headers
        rows = []
        for n in range(30):
            rows.append(article(word if n % 3 == 0 else other, n))
        t = import_async(live.store_path, rows, batch=7)
        got = collect(s, 10)
        got2 = collect(s2, 20)
        t.join()
        assert urls_of(got) == [r["url"] for r in rows if word in r["title"]]
        assert urls_of(got2) == [r["url"] for r in rows if other in r["title"]]
        check_article_events(got)
        check_article_events(got2)
        # Nothing else arrives (non-matching articles were committed too).
        next_is_sentinel(s, live.store_path, word)
        # The same JSON /v2/everything gives for the article.
        b = live.client.get("/v2/everything", {"q": word, "sortBy": "publishedAt"}).json()
        by_url = {a["url"]: a for a in b["articles"]}
        for e in got:
            a = json.loads(e.text)
            assert by_url[a["url"]] == a
    finally:
        s.close()
        s2.close()


def test_an_updated_article_is_sent_again_under_a_higher_id(live):
    word = "quillbright"
    s = open_stream(live, {"q": word})
    try:
        a = article(word, 1)
        import_rows(live.store_path, [a])
        first = collect(s, 1)[0]
        a["title"] = a["title"] + " (updated)"
        import_rows(live.store_path, [a])
        second = collect(s, 1)[0]
        assert int(second.id) > int(first.id)
        assert json.loads(second.text)["title"].endswith("(updated)")
    finally:
        s.close()


def test_a_proximity_is_matched_on_each_new_article(live):
    """"a b"~1 through the saved-search matcher: within one field, either
    order, at most one token between; not across fields."""
    w1, w2 = "zorbline", "vextral"
    s = open_stream(live, {"q": '"%s %s"~1' % (w1, w2)})
    try:
        rows = [article(w1, n) for n in range(4)]
        rows[0]["title"] = "%s report %s" % (w1, w2)          # one between: yes
        rows[1]["title"] = "%s report two %s" % (w1, w2)      # two between: no
        rows[2]["title"] = "%s %s report" % (w2, w1)          # reversed, adjacent: yes
        rows[3]["description"] = "%s in the description" % w2  # across fields: no
        import_rows(live.store_path, rows)
        got = collect(s, 2)
        assert urls_of(got) == [rows[0]["url"], rows[2]["url"]]
        next_is_sentinel(s, live.store_path, "%s %s" % (w2, w1),
                         url="https://live.example.com/near/%s" % uuid.uuid4().hex)
    finally:
        s.close()


def test_filters_other_than_q_apply(live):
    s = open_stream(live, {"domains": "filtered.example.org", "language": "en"})
    try:
        a = article("plainword", 1)
        b = dict(article("plainword", 2), url="https://news.filtered.example.org/x/%s" %
                 uuid.uuid4().hex)
        import_rows(live.store_path, [a, b])
        got = collect(s, 1)
        assert urls_of(got) == [b["url"]]
        next_is_sentinel(s, live.store_path, "plainword",
                         url="https://news.filtered.example.org/x/%s" % uuid.uuid4().hex)
    finally:
        s.close()


@pytest.mark.parametrize("how", ["header", "param"])
def test_a_reconnect_gets_exactly_what_it_missed_then_the_live_ones(live, how):
    word = "cobaltfern" + how
    s = open_stream(live, {"q": word})
    rows_a = [article(word, n) for n in range(3)]
    import_rows(live.store_path, rows_a)
    got_a = collect(s, 3)
    s.close()
    last = got_a[0].id  # as if the client had seen only the first one
    rows_b = [article(word, n) for n in range(3, 6)] + [article("unrelated", 9)]
    import_rows(live.store_path, rows_b)
    if how == "header":
        s = open_stream(live, {"q": word}, headers={"Last-Event-ID": last})
    else:
        s = open_stream(live, {"q": word, "lastEventId": last})
    try:
        assert s.status == 200, s.body
        missed = collect(s, 5)
        assert urls_of(missed) == [r["url"] for r in rows_a[1:] + rows_b[:3]]
        rows_c = [article(word, n) for n in range(6, 8)]
        import_rows(live.store_path, rows_c)
        fresh = collect(s, 2)
        assert urls_of(fresh) == [r["url"] for r in rows_c]
        ids = check_article_events(missed + fresh)
        assert ids[0] > int(last)
        next_is_sentinel(s, live.store_path, word)
    finally:
        s.close()


def test_the_hand_over_from_replay_to_live_has_no_gap_or_duplicate(live):
    """A reconnect while an import is committing batch after batch: the
    replay ends and the live part begins somewhere inside that import."""
    word = "emberlattice"
    s = open_stream(live, {"q": word})
    first = [article(word, 0)]
    import_rows(live.store_path, first)
    pos = collect(s, 1)[0].id
    s.close()
    rows = [article(word if n % 2 else "chaff", n) for n in range(1, 400)]
    t = import_async(live.store_path, rows, batch=5)
    # Reconnect once the import has begun committing, not after a guess.
    deadline = time.monotonic() + WAIT
    while live.client.get("/v2/everything", {"q": '"chaff"', "pageSize": 1}).json()[
            "totalResults"] == 0:
        assert time.monotonic() < deadline, "the import never committed"
        time.sleep(0.02)
    s = open_stream(live, {"q": word}, headers={"Last-Event-ID": pos})
    try:
        want = [r["url"] for r in rows if word in r["title"]]
        got = collect(s, len(want), timeout=WAIT * 4)
        t.join()
        assert urls_of(got) == want
        check_article_events(got)
        next_is_sentinel(s, live.store_path, word)
    finally:
        t.join()
        s.close()


def test_a_position_at_the_head_replays_nothing(live):
    word = "headpoint"
    s = open_stream(live, {"q": word})
    import_rows(live.store_path, [article(word, 1)])
    e = collect(s, 1)[0]
    s.close()
    s = open_stream(live, {"q": word}, headers={"Last-Event-ID": e.id})
    try:
        next_is_sentinel(s, live.store_path, word)
    finally:
        s.close()


def test_keep_alive_comments_come_at_the_configured_interval(live):
    s = open_stream(live, {"q": "nothingwillmatchthis"})
    try:
        seen = []
        deadline = time.monotonic() + 10 * SLOW
        while len(seen) < 3 and time.monotonic() < deadline:
            try:
                seen.append(s.comments.get(timeout=0.2))
            except Exception:
                pass
        kinds = [c for _, c in seen]
        assert kinds.count("keep-alive") >= 2, kinds
    finally:
        s.close()


def test_too_many_streams_for_the_plan(live):
    key = live.keys["two"]
    a = open_stream(live, {"q": "one"}, key=key)
    b = open_stream(live, {"q": "two"}, key=key)
    try:
        assert a.status == 200 and b.status == 200
        c = Client(live.base, key)
        r = c.get(STREAM, {"q": "three"})
        err(r, 429, "tooManyStreams", "You have too many streams open at once: your plan "
            "allows 2. Close one and try again.")
        # Another key is not affected.
        d = open_stream(live, {"q": "three"})
        assert d.status == 200
        d.close()
    finally:
        a.close()
    # The closed stream's place comes back (noticed at its next keep-alive).
    deadline = time.monotonic() + 10 * SLOW
    while True:
        s = open_stream(live, {"q": "four"}, key=key)
        if s.status == 200:
            s.close()
            break
        assert time.monotonic() < deadline, "a closed stream still counted: %r" % s.body
        time.sleep(0.3)
    b.close()


def test_a_stream_counts_as_one_request(live):
    key = live.keys["quota"]
    s = open_stream(live, {"q": "quotaword"}, key=key)
    try:
        assert s.status == 200
        assert s.headers.get("x-ratelimit-remaining") == "1", s.headers
        c = Client(live.base, key)
        assert c.get("/v2/everything", {"q": "x"}).status_code == 200
        err(c.get(STREAM, {"q": "quotaword"}), 429, "apiKeyExhausted")
    finally:
        s.close()


# The same invalid requests on both endpoints give the same answer.
INVALID = [
    {},
    {"language": "en"},
    {"q": "a" * 501},
    {"q": "(unbalanced"},
    {"q": "-only"},
    {"qInTitle": "\"open"},
    {"q": "x", "searchIn": "title,body"},
    {"sources": ",".join("s%d" % i for i in range(21))},
    {"sources": "no-such-source"},
    {"q": "x", "language": "xx"},
    {"q": "x", "country": "us"},
    {"q": "x", "category": "business"},
    {"domains": "a.com", "q": "x", "sources": "no-such-source"},
]


@pytest.mark.parametrize("params", INVALID, ids=[json.dumps(p)[:40] for p in INVALID])
def test_invalid_parameters_give_the_errors_of_everything(live, params):
    c = live.client
    want = c.get("/v2/everything", params)
    got = c.get(STREAM, params)
    assert want.status_code >= 400
    assert (got.status_code, got.json()) == (want.status_code, want.json())


def test_key_errors_are_those_of_everything(live):
    c = live.client
    err(c.get(STREAM, {"q": "x"}, key=None), 401, "apiKeyMissing")
    err(c.get(STREAM, {"q": "x"}, key="nope" * 8), 401, "apiKeyInvalid")


@pytest.mark.parametrize("name", ["from", "to", "sortBy", "page", "pageSize"])
def test_search_only_parameters_are_refused(live, name):
    value = {"from": "2021-01-01", "to": "2021-01-02", "sortBy": "publishedAt", "page": "1",
             "pageSize": "10"}[name]
    b = err(live.client.get(STREAM, {"q": "x", name: value}), 400, "parameterInvalid")
    assert name in b["message"]


@pytest.mark.parametrize("value", ["abc", "-1", "1.5", "9" * 30])
def test_a_malformed_position_is_refused(live, value):
    b = err(live.client.get(STREAM, {"q": "x", "lastEventId": value}), 400, "parameterInvalid")
    assert "lastEventId" in b["message"]
    b = err(live.client.get(STREAM, {"q": "x"}, headers={"Last-Event-ID": value}), 400,
            "parameterInvalid")
    assert "Last-Event-ID" in b["message"]


def test_metrics_count_streams_and_events(live):
    def scrape():
        text = requests.get(live.base + "/metrics", timeout=HTTP_TIMEOUT).text
        out = {}
        for line in text.splitlines():
            m = re.match(r"^(newsd_stream\w*) (\S+)$", line)
            if m:
                out[m.group(1)] = float(m.group(2))
        return out
    before = scrape()
    assert "newsd_streams_open" in before and "newsd_stream_events_total" in before
    assert "newsd_stream_slow_disconnects_total" in before
    s = open_stream(live, {"q": "metricword"})
    try:
        import_rows(live.store_path, [article("metricword", 1), article("metricword", 2)])
        collect(s, 2)
        after = scrape()
        # Streams closed by earlier tests may be given back meanwhile: the
        # open count is at least this one; the events are exactly its two
        # (no other open stream matches these articles), and nobody was cut off.
        assert after["newsd_streams_open"] >= 1
        assert after["newsd_stream_events_total"] == before["newsd_stream_events_total"] + 2
        assert after["newsd_stream_slow_disconnects_total"] == \
            before["newsd_stream_slow_disconnects_total"]
    finally:
        s.close()


def test_head_answers_without_a_stream(live):
    r = live.client.request("HEAD", STREAM, {"q": "x"})
    assert r.status_code == 200
    assert r.headers["Content-Type"].startswith("text/event-stream")


# ---- servers of their own ---------------------------------------------------------

def small_server(tmp_path, extra):
    cfg = tmp_path / "newsd.conf"
    cfg.write_text("[server]\n" + extra)
    store = str(tmp_path / "store")
    cli_ok("sources", "import", "--create", "--store", store, os.path.join(DATA, "sources.jsonl"))
    key = cli_ok("keys", "create", "--create", "--store", store, "--name", "k").out.strip()
    srv = Server(store, args=["--config", str(cfg)])
    return srv, store, key


def test_a_position_older_than_the_replay_window_is_expired(tmp_path):
    # Keep-alives each second: the streams this test closes are given back soon.
    srv, store, key = small_server(tmp_path, "stream_replay_window_seconds = 1\n"
                                   "stream_keepalive_seconds = 1\n")
    try:
        word = "oldnews"
        s = Stream(srv.base, STREAM, {"q": word}, {"X-Api-Key": key})
        import_rows(store, [article(word, 1)])
        first = collect(s, 1)[0]
        s.close()
        import_rows(store, [article(word, 2)])
        # Until the position is a second old it replays article 2; then it
        # is expired. Asked again until then (a bounded wait), not slept.
        deadline = time.monotonic() + WAIT
        while True:
            s = Stream(srv.base, STREAM, {"q": word},
                       {"X-Api-Key": key, "Last-Event-ID": first.id})
            if s.status == 429:  # the streams closed here not given back yet
                s.close()
                assert time.monotonic() < deadline, s.body
                time.sleep(0.2)
                continue
            assert s.status == 200
            e = s.next_event(WAIT)
            assert e is not None, "neither the replay nor the error came"
            if e.event == "error":
                break
            assert e.event == "article" and time.monotonic() < deadline, e
            s.close()
            time.sleep(0.2)
        body = json.loads(e.text)
        assert list(body) == ["status", "code", "message"]
        assert body["status"] == "error" and body["code"] == "streamPositionExpired"
        assert s.closed.wait(WAIT), "the stream must close after the error"
        s.close()
        # Without a position (or at the head) a stream opens as usual (once
        # the streams closed above are given back).
        deadline = time.monotonic() + WAIT
        while True:
            s = Stream(srv.base, STREAM, {"q": word}, {"X-Api-Key": key})
            if s.status != 429:
                break
            s.close()
            assert time.monotonic() < deadline, s.body
            time.sleep(0.2)
        assert s.status == 200, s.body
        import_rows(store, [article(word, 3)])
        assert collect(s, 1)[0].event == "article"
        s.close()
    finally:
        problems = srv.stop()
        assert not problems, "\n".join(problems)


def test_a_client_that_does_not_read_is_cut_off(tmp_path):
    srv, store, key = small_server(tmp_path, "stream_buffer_bytes = 65536\n")
    try:
        def slow_count():
            text = requests.get(srv.base + "/metrics", timeout=HTTP_TIMEOUT).text
            m = re.search(r"^newsd_stream_slow_disconnects_total (\S+)$", text, re.M)
            return float(m.group(1))
        before = slow_count()
        word = "floodword"
        import socket
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", srv.port))
        sock.sendall(("GET %s?q=%s HTTP/1.1\r\nHost: x\r\nX-Api-Key: %s\r\n\r\n"
                      % (STREAM, word, key)).encode())
        # The stream is open (seen on /metrics) before the flood begins.
        deadline = time.monotonic() + WAIT
        while not re.search(r"^newsd_streams_open 1$", requests.get(
                srv.base + "/metrics", timeout=HTTP_TIMEOUT).text, re.M):
            assert time.monotonic() < deadline, "the stream never opened"
            time.sleep(0.05)
        big = "lorem ipsum " * 8000  # ~100 KB of description per article
        rows = [dict(article(word, n), description=big) for n in range(200)]
        import_rows(store, rows, batch=50)
        deadline = time.monotonic() + WAIT * 2
        while slow_count() <= before:
            assert time.monotonic() < deadline, "the slow client was never cut off"
            time.sleep(0.2)
        # The server goes on serving.
        assert Client(srv.base, key).get("/v2/everything", {"q": word}).status_code == 200
        sock.close()
    finally:
        problems = srv.stop()
        assert not problems, "\n".join(problems)


def test_sigterm_ends_open_streams_promptly(tmp_path):
    srv, store, key = small_server(tmp_path, "stream_keepalive_seconds = 60\n")
    streams = [Stream(srv.base, STREAM, {"q": "w%d" % i}, {"X-Api-Key": key}) for i in range(5)]
    assert all(s.status == 200 for s in streams)
    t0 = time.monotonic()
    problems = srv.stop()
    took = time.monotonic() - t0
    assert not problems, "\n".join(problems)
    assert took < 8 * SLOW, "SIGTERM took %.1f s with streams open" % took
    for s in streams:
        assert s.closed.wait(5), "a stream stayed open after the server stopped"
        s.close()


# ---- a stream answers to its key for as long as it is open (issue 23 item 2) ----

KEY_CHANGE_WAIT = 10 * SLOW  # the server sees `newsd keys` changes within 2 s


def new_key(srv, plan="unlimited"):
    name = "k" + uuid.uuid4().hex[:10]
    key = cli_ok("keys", "create", "--create", "--store", srv.store_path, "--name", name, "--plan", plan,
                 "--config", srv.config).out.strip()
    return name, key


def error_event(stream, timeout=KEY_CHANGE_WAIT):
    """The stream's next event, which must be its last: an `event: error`
    (its NewsAPI envelope returned), then the end of the stream."""
    e = stream.next_event(timeout)
    assert e is not None and e.event == "error", "expected an error event, got %r" % e
    assert stream.closed.wait(timeout), "the stream stayed open after its error event"
    body = json.loads(e.text)
    assert body["status"] == "error" and list(body) == ["status", "code", "message"]
    return body


@pytest.mark.parametrize("verb,code", [("disable", "apiKeyDisabled"),
                                       ("delete", "apiKeyInvalid")])
def test_a_stream_ends_when_its_key_is_disabled_or_deleted(live, verb, code):
    word = "keyfade" + verb
    name, key = new_key(live)
    s = open_stream(live, {"q": word}, key=key)
    try:
        assert s.status == 200, s.body
        import_rows(live.store_path, [article(word, 1)])
        collect(s, 1)
        cli_ok("keys", verb, "--store", live.store_path, name)
        body = error_event(s)
        assert body["code"] == code
    finally:
        s.close()
    # What a new stream of the key gets: the same refusal.
    s2 = open_stream(live, {"q": word}, key=key)
    assert s2.status == 401 and json.loads(s2.body)["code"] == code


def test_a_plan_with_fewer_streams_closes_the_extra_ones(live):
    word = "planshrink"
    name, key = new_key(live, "two")
    a = open_stream(live, {"q": word}, key=key)
    b = open_stream(live, {"q": word}, key=key)
    try:
        assert a.status == 200 and b.status == 200
        cli_ok("keys", "set-plan", "--store", live.store_path, "--config", live.config, name,
               "one")
        deadline = time.monotonic() + KEY_CHANGE_WAIT
        while time.monotonic() < deadline and not (a.closed.is_set() or b.closed.is_set()):
            time.sleep(0.05)
        closed, kept = (a, b) if a.closed.is_set() else (b, a)
        body = error_event(closed, 1)
        assert body["code"] == "tooManyStreams"
        # The one left goes on, and the key holds exactly its plan's one stream.
        import_rows(live.store_path, [article(word, 1)])
        assert urls_of(collect(kept, 1))
        assert not kept.closed.is_set()
        third = open_stream(live, {"q": word}, key=key)
        assert third.status == 429 and json.loads(third.body)["code"] == "tooManyStreams"
    finally:
        a.close()
        b.close()


def aged(word, n, seconds):
    a = article(word, n)
    a["publishedAt"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - seconds))
    return a


def test_the_plans_window_applies_to_every_article_and_follows_a_plan_change(live):
    word = "windowshift"
    name, key = new_key(live, "delayed")
    s = open_stream(live, {"q": word}, key=key)
    try:
        assert s.status == 200, s.body
        # Delayed by an hour: a fresh article is held back, a two-hour-old one sent.
        fresh, old = article(word, 1), aged(word, 2, 2 * 3600)
        import_rows(live.store_path, [fresh])
        import_rows(live.store_path, [old])
        assert urls_of(collect(s, 1)) == [old["url"]]
        # Moved to a plan without delay but with 30 days of history: fresh
        # articles come once the server sees the change ...
        cli_ok("keys", "set-plan", "--store", live.store_path, "--config", live.config, name,
               "month")
        deadline = time.monotonic() + KEY_CHANGE_WAIT
        got, tried = None, []
        while got is None and time.monotonic() < deadline:
            tried.append(article(word, 10 + len(tried)))
            import_rows(live.store_path, [tried[-1]])
            got = s.next_event(0.5)
        assert got is not None, "a fresh article never came after the plan lost its delay"
        tried = [a["url"] for a in tried]
        assert json.loads(got.text)["url"] in tried
        # ... and one older than the history window no longer does.
        ancient, last = aged(word, 100, 60 * 86400), article(word, 101)
        import_rows(live.store_path, [ancient])
        import_rows(live.store_path, [last])
        # Until `last` comes (events come in commit order: `ancient`, had it
        # been sent, would have come before it), not until a quiet moment,
        # which a loaded machine can make before `last` arrives.
        seen = []
        deadline = time.monotonic() + WAIT
        while last["url"] not in seen:
            e = s.next_event(max(0.01, deadline - time.monotonic()))
            assert e is not None, "the last article never came: %r" % seen
            seen += urls_of([e])
        rest = [u for u in seen if u not in tried]
        assert rest == [last["url"]]
    finally:
        s.close()


def test_dedupe_sends_a_story_once_and_counts_its_copies(live):
    """dedupe=true (issue 25): a story's first article is sent with storyId
    and storySize after NewsAPI's keys, each later copy is an `event: copy`
    with the story's id and how many of its articles the stream has met;
    a stream without dedupe gets every copy as NewsAPI's article."""
    word = "quarrybell"
    title = "%s harbour warehouse fire forces evacuation downtown" % word

    def copy_of(host, n):
        return dict(article(word, n), title=title, url="https://%s/fire/%d" % (host, n),
                    source={"id": None, "name": host},
                    description="A warehouse fire at the %s harbour." % word,
                    content="Crews fought the %s harbour warehouse fire overnight." % word)
    rows = [copy_of("wire-a.example", 1), article(word, 2, "other"),
            copy_of("wire-b.example", 3), copy_of("wire-c.example", 4)]
    d = open_stream(live, {"q": word, "dedupe": "true"})
    plain = open_stream(live, {"q": word})
    try:
        import_rows(live.store_path, rows, batch=1)
        got = collect(d, 4)
        every = collect(plain, 4)
    finally:
        d.close()
        plain.close()
    check_article_events(every)
    assert urls_of(every) == [r["url"] for r in rows]
    assert [e.event for e in got] == ["article", "article", "copy", "copy"]
    first, other = json.loads(got[0].text), json.loads(got[1].text)
    assert list(first) == ARTICLE_KEYS + ["storyId", "storySize"]
    assert first["url"] == rows[0]["url"] and first["storySize"] == 1
    assert {k: first[k] for k in ARTICLE_KEYS} == json.loads(every[0].text)
    assert other["url"] == rows[1]["url"] and other["storyId"] != first["storyId"]
    assert [json.loads(e.text) for e in got[2:]] == [
        {"storyId": first["storyId"], "storySize": 2},
        {"storyId": first["storyId"], "storySize": 3}]
    # the ids are the articles' positions, as without dedupe (a reconnect resumes)
    assert [e.id for e in got] == [e.id for e in every]
    # the story is the one the search API gives
    b = live.client.get("/v2/everything", {"q": word, "dedupe": "true"}).json()
    assert {a["storyId"]: a["storySize"] for a in b["articles"]}[first["storyId"]] == 3


@pytest.mark.parametrize("params", [{"dedupe": "yes"}, {"similarTo": "https://x.example/a"}])
def test_dedupe_and_similar_to_on_a_stream_are_checked(live, params):
    err(live.client.get(STREAM, dict(params, q="x")), 400, "parameterInvalid")
