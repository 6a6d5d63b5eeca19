"""Webhook alerts (docs/api.md "Webhook alerts", issue 17): /v2/alerts and
/v2/alerts/ID against a real newsd, and deliveries to a real webhook on
loopback — one that fails for a while, a newsd killed with SIGKILL in the
middle and restarted, articles imported by `newsd import` in another
process. Every delivery must arrive (at least once), each delivery id with
the same body every time, signed with the alert's secret, in order per
alert."""
import json
import os
import re
import signal
import socket
import threading
import time
import types
from http.server import BaseHTTPRequestHandler

import pytest
import requests

from corpus import DATA
from harness import SLOW, Client, Server, cli_ok, err, import_jsonl, run_cli, serve_http
from webhook import Receiver, check_deliveries

ALERTS = "/v2/alerts"
EV = "/v2/everything"
# Short leases and retries so that a restart and a failing webhook take
# seconds, not minutes (the defaults: 30 s lease, 1 s .. 10 min backoff).
FAST = {"NEWSD_ALERTS_LEASE_MS": "1500", "NEWSD_ALERTS_RETRY_MIN_MS": "200",
        "NEWSD_ALERTS_RETRY_MAX_MS": "800"}


def wait_for(what, cond, timeout=30):
    deadline = time.monotonic() + timeout * SLOW
    last = None
    while time.monotonic() < deadline:
        last = cond()
        if last:
            return last
        time.sleep(0.05)
    raise AssertionError("timed out waiting for %s (last: %r)" % (what, last))


def start_server(path, config):
    saved = dict(os.environ)
    os.environ.update(FAST)
    try:
        return Server(path, args=("--config", config))
    finally:
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    d = tmp_path_factory.mktemp("alerts")
    store = str(d / "store")
    config = str(d / "newsd.conf")
    with open(config, "w") as f:
        f.write("[outbound]\nallow_networks = 127.0.0.0/8\n\n[plan tiny]\nalerts = 2\n")
    cli_ok("sources", "import", "--create", "--store", store, os.path.join(DATA, "sources.jsonl"))
    keys = {}
    for name, plan in (("owner", "unlimited"), ("other", "unlimited"), ("tiny", "tiny")):
        keys[name] = cli_ok("keys", "create", "--create", "--store", store, "--name", name, "--plan", plan,
                            "--config", config).out.strip()
    site = types.SimpleNamespace(dir=d, store=store, config=config, keys=keys,
                                 server=start_server(store, config))
    yield site
    problems = site.server.stop()
    assert not problems, "\n".join(problems)


def client(site, who="owner"):
    return Client(site.server.base, site.keys[who])


def post(c, body, **kw):
    data = body if isinstance(body, (bytes, str)) else json.dumps(body)
    return c.request("POST", ALERTS, data=data, headers={"Content-Type": "application/json"},
                     **kw)


def alert_body(q="zebulon", webhook="https://example.com/hook", secret="s3cret", **query):
    query.setdefault("q", q)
    return {"query": query, "webhook": webhook, "secret": secret}


# ---- the endpoints --------------------------------------------------------------


def test_an_alert_is_created_listed_read_and_deleted_by_its_key_only(site):
    me, them = client(site), client(site, "other")
    r = post(me, alert_body(q="zebulon", language="en", sources="bbc-news"))
    assert r.status_code == 201, r.text
    alert = r.json()["alert"]
    assert r.json()["status"] == "ok"
    assert alert["query"] == {"q": "zebulon", "sources": "bbc-news", "language": "en"}
    assert alert["webhook"] == "https://example.com/hook"
    assert "secret" not in alert  # written, never read back
    # Without dedupe an alert reads as it did before dedupe existed.
    assert list(alert) == ["id", "query", "webhook", "createdAt"]
    aid = alert["id"]
    listed = me.get(ALERTS).json()
    assert listed["status"] == "ok" and aid in [a["id"] for a in listed["alerts"]]
    assert me.get("%s/%d" % (ALERTS, aid)).json()["alert"] == alert
    # Another key neither sees nor removes it: it does not exist for them.
    assert aid not in [a["id"] for a in them.get(ALERTS).json()["alerts"]]
    err(them.get("%s/%d" % (ALERTS, aid)), 404, "alertNotFound")
    err(them.request("DELETE", "%s/%d" % (ALERTS, aid)), 404, "alertNotFound")
    assert me.request("DELETE", "%s/%d" % (ALERTS, aid)).json() == {"status": "ok"}
    err(me.request("DELETE", "%s/%d" % (ALERTS, aid)), 404, "alertNotFound")
    err(me.get("%s/abc" % ALERTS), 404, "alertNotFound")


def test_alerts_need_a_key(site):
    err(post(client(site), alert_body(), key=None), 401, "apiKeyMissing")
    err(client(site).get(ALERTS, key="0" * 32), 401, "apiKeyInvalid")


@pytest.mark.parametrize("query", [
    {"q": "(unbalanced"},
    {"q": "-only"},
    {"language": "en"},                       # no scope: parametersMissing
    {"q": "x", "sources": "no-such-source"},  # sourceDoesNotExist
    {"q": "x", "sources": ",".join("s%d" % i for i in range(21))},
    {"q": "x", "language": "xx"},
    {"q": "x", "searchIn": "body"},
    {"q": "x", "country": "us"},
    {"q": "x" * 501},
])
def test_the_query_is_refused_exactly_as_everything_refuses_it(site, query):
    """The same code, status and message as GET /v2/everything with the
    same parameters."""
    me = client(site)
    want = me.get(EV, params=query)
    assert want.status_code == 400, want.text
    got = post(me, {"query": query, "webhook": "https://example.com/h", "secret": "s"})
    assert (got.status_code, got.json()) == (want.status_code, want.json())


@pytest.mark.parametrize("body,code", [
    (b"", "parametersMissing"),
    (b"{not json", "parameterInvalid"),
    (b"[1,2]", "parameterInvalid"),
    (b'{"query":{"q":"a"},"webhook":"https://e.com/h"}', "parametersMissing"),
    (b'{"query":{"q":"a"},"secret":"s"}', "parametersMissing"),
    (b'{"webhook":"https://e.com/h","secret":"s"}', "parametersMissing"),
    (b'{"query":"q=a","webhook":"https://e.com/h","secret":"s"}', "parameterInvalid"),
    (b'{"query":{"q":7},"webhook":"https://e.com/h","secret":"s"}', "parameterInvalid"),
    (b'{"query":{"q":"a","q":"b"},"webhook":"https://e.com/h","secret":"s"}', "parameterInvalid"),
    (b'{"query":{"q":"a\\u0000b"},"webhook":"https://e.com/h","secret":"s"}', "parameterInvalid"),
    (b'{"query":{"q":"a","from":"2024-01-01"},"webhook":"https://e.com/h","secret":"s"}',
     "parameterInvalid"),
    (b'{"query":{"q":"a"},"webhook":"ftp://e.com/h","secret":"s"}', "parameterInvalid"),
    (b'{"query":{"q":"a"},"webhook":"https://","secret":"s"}', "parameterInvalid"),
    (b'{"query":{"q":"a"},"webhook":"https://e.com/h","secret":5}', "parameterInvalid"),
    (b'{"query":{"q":"a"},"webhook":"http://10.1.2.3/h","secret":"s"}', "parameterInvalid"),
    (b'\xff\xfe{}', "parameterInvalid"),
    (b'{"query":{"q":"a"},"webhook":"https://e.com/h","secret":"s","dedupe":"yes"}',
     "parameterInvalid"),
    (b'{"query":{"q":"a"},"webhook":"https://e.com/h","secret":"s","dedupe":1}',
     "parameterInvalid"),
    (b'{"query":{"q":"a","dedupe":"true"},"webhook":"https://e.com/h","secret":"s"}',
     "parameterInvalid"),
])
def test_a_bad_body_is_a_clear_error(site, body, code):
    r = post(client(site), body)
    err(r, 400, code)


def test_a_body_over_16_kib_is_refused_unread(site):
    r = post(client(site), alert_body(q="a", secret="x" * 20000))
    err(r, 413, "requestTooLarge")


def test_other_methods_are_refused_with_the_right_allow(site):
    r = client(site).request("PUT", ALERTS)
    err(r, 405, "methodNotAllowed")
    assert r.headers["Allow"] == "GET, HEAD, POST, OPTIONS"
    r = client(site).request("POST", ALERTS + "/1")
    err(r, 405, "methodNotAllowed")
    assert r.headers["Allow"] == "GET, HEAD, DELETE, OPTIONS"
    # /v2/everything still takes no body and no POST.
    err(client(site).request("POST", EV, data=b"{}"), 405, "methodNotAllowed")


def test_a_plan_limits_the_alerts_of_a_key(site):
    tiny = client(site, "tiny")
    for i in range(2):
        assert post(tiny, alert_body(q="limit%d" % i)).status_code == 201
    r = post(tiny, alert_body(q="limit2"))
    err(r, 403, "tooManyAlerts", "You have 2 alerts, as many as your plan allows. Delete one "
        "(DELETE /v2/alerts/ID) before adding another.")
    assert len(tiny.get(ALERTS).json()["alerts"]) == 2  # the refused one was not kept
    # Deleting one makes room again.
    first = tiny.get(ALERTS).json()["alerts"][0]["id"]
    assert tiny.request("DELETE", "%s/%d" % (ALERTS, first)).status_code == 200
    assert post(tiny, alert_body(q="limit3")).status_code == 201


def test_the_operator_lists_adds_and_removes_alerts(site):
    key_id = None
    for line in cli_ok("keys", "list", "--store", site.store).out.splitlines():
        if " other " in " %s " % line:
            key_id = line.split()[0]
    assert key_id
    r = cli_ok("alerts", "add", "--store", site.store, "--key-id", key_id, "--webhook",
               "https://example.com/op", "--q", "okapi", "--language", "en")
    aid = int(r.out.splitlines()[0])
    assert r.out.splitlines()[1].startswith("secret: ")
    listed = cli_ok("alerts", "list", "--store", site.store, "--key-id", key_id).out
    assert '{"q":"okapi","language":"en"}' in listed
    # The key sees it through the API.
    assert aid in [a["id"] for a in client(site, "other").get(ALERTS).json()["alerts"]]
    # Validation is the endpoint's, as a usage error.
    bad = run_cli("alerts", "add", "--store", site.store, "--key-id", key_id, "--webhook",
                  "https://example.com/op", "--q", "(broken")
    assert bad.rc == 2 and "q parameter is invalid" in bad.err, bad
    bad = run_cli("alerts", "add", "--store", site.store, "--key-id", "9999", "--webhook",
                  "https://example.com/op", "--q", "x")
    assert bad.rc != 0 and "key" in bad.err, bad
    cli_ok("alerts", "remove", "--store", site.store, "--key-id", key_id, str(aid))
    assert run_cli("alerts", "remove", "--store", site.store, str(aid)).rc == 1


# ---- deliveries ------------------------------------------------------------------


def article(word, i, t="2026-01-02T03:04:%02dZ"):
    return {"source": {"id": "bbc-news", "name": "BBC News"}, "author": "A. Writer",
            "title": "%s story number %d" % (word, i),
            "description": "A description of %s item %d" % (word, i),
            "url": "https://alerts.example/%s/%d" % (word, i), "urlToImage": None,
            "publishedAt": t % (i % 60), "content": "Body text %d" % i}


def newer_first(i):
    """A publishedAt format for article i: later i, earlier time."""
    return "2026-01-02T03:%02d:%%02dZ" % (50 - i)


def test_matching_articles_reach_the_webhook_signed_and_in_order(site):
    rec = Receiver(fail_first=3)
    try:
        me = client(site)
        a1 = post(me, alert_body(q="quokkazap", webhook=rec.url, secret="one")).json()["alert"]
        a2 = post(me, alert_body(q="wombatrix", webhook=rec.url, secret="two")).json()["alert"]
        # Commit order is not publication order: each later article of a
        # file is older, and the second import's are older still.
        arts = [article("quokkazap", i, t=newer_first(i)) for i in range(5)] + \
               [article("wombatrix", i, t=newer_first(i)) for i in range(3)] + \
               [article("nothingmatches", i) for i in range(4)]
        import_jsonl(site.store, arts)
        import_jsonl(site.store, [article("quokkazap", i, t="2025-01-02T03:04:%02dZ")
                                  for i in (5, 6)])
        want1 = ["https://alerts.example/quokkazap/%d" % i for i in range(7)]
        want2 = ["https://alerts.example/wombatrix/%d" % i for i in range(3)]
        # In commit order, exactly once each: no sorting.
        wait_for("both alerts' articles", lambda: len(rec.delivered(a1["id"])) >= 7 and
                 len(rec.delivered(a2["id"])) >= 3)
        assert rec.delivered(a1["id"]) == want1
        assert rec.delivered(a2["id"]) == want2
        check_deliveries(rec, {a1["id"]: "one", a2["id"]: "two"})
        doc = json.loads(rec.snapshot()[-1][2])
        assert list(doc["articles"][0]) == ["source", "author", "title", "description", "url",
                                            "urlToImage", "publishedAt", "content"]
        # 500s were retried under the same id.
        assert any(p[3] == 500 for p in rec.snapshot())
        # Counted by value: at least one delivery per alert went out, and
        # the three 500s were three retries.
        # (a sender records its outcome just after the answer: waited for)
        wait_for("the deliveries counted", lambda: metric(
            site.server.base, "newsd_alert_deliveries_sent_total") >= 2 and metric(
            site.server.base, "newsd_alert_delivery_retries_total") >= 3)
        for a in (a1, a2):
            me.request("DELETE", "%s/%d" % (ALERTS, a["id"]))
    finally:
        rec.close()


def test_more_than_100_matches_are_cut_into_deliveries_of_100(site):
    rec = Receiver()
    try:
        me = client(site)
        a = post(me, alert_body(q="manyfold", webhook=rec.url, secret="k")).json()["alert"]
        import_jsonl(site.store, [article("manyfold", i) for i in range(230)])
        wait_for("230 articles", lambda: len(rec.delivered(a["id"])) >= 230)
        assert rec.delivered(a["id"]) == ["https://alerts.example/manyfold/%d" % i
                                          for i in range(230)]
        sizes = [len(json.loads(p[2])["articles"]) for p in rec.snapshot()]
        assert max(sizes) == 100 and sum(sizes) == 230, sizes
        check_deliveries(rec, {a["id"]: "k"})
        me.request("DELETE", "%s/%d" % (ALERTS, a["id"]))
    finally:
        rec.close()


def test_a_sigkill_mid_delivery_loses_nothing(site):
    """The webhook fails while newsd is killed with SIGKILL and articles are
    imported while it is down; after the restart everything arrives, each
    delivery id with its one body."""
    rec = Receiver(fail_first=10 ** 9)  # fails until told otherwise
    try:
        me = client(site)
        a = post(me, alert_body(q="phoenixed", webhook=rec.url, secret="kill")).json()["alert"]
        import_jsonl(site.store, [article("phoenixed", i) for i in range(4)])
        wait_for("a failed attempt", lambda: len(rec.snapshot()) >= 2)
        site.server.proc.send_signal(signal.SIGKILL)
        site.server.proc.wait()
        import_jsonl(site.store, [article("phoenixed", i) for i in range(4, 9)])
        seen_before = {p[0]: p[2] for p in rec.snapshot()}
        old = site.server
        site.server = start_server(site.store, site.config)
        old.stop()  # cleans its files up (it died: that problem is expected)
        with rec.lock:
            rec.fail_first = len(rec.posts) + 2
        want = ["https://alerts.example/phoenixed/%d" % i for i in range(9)]
        wait_for("every article after the restart",
                 lambda: sorted(set(rec.delivered(a["id"]))) == sorted(want), timeout=40)
        bodies = check_deliveries(rec, {a["id"]: "kill"})
        for did, body in seen_before.items():
            assert bodies[did] == body
        # The delivery that failed before the kill was resent under its id.
        assert any(p[0] in seen_before and p[3] == 200 for p in rec.snapshot())
        client(site).request("DELETE", "%s/%d" % (ALERTS, a["id"]))
    finally:
        rec.close()


def test_a_failing_delivery_logs_the_alert_and_host_but_not_the_webhook_secret(site):
    """Slack, Discord and Teams webhooks carry their secret in the path:
    every failed delivery is logged with the alert's id and the webhook as
    scheme://host:port/... only (docs/security.md)."""
    rec = Receiver(fail_first=10 ** 9)
    try:
        me = client(site)
        hook = rec.url[:-len("hook")] + "services/T000/B000/SECRETXYZ"
        a = post(me, alert_body(q="slackhooked", webhook=hook, secret="s")).json()["alert"]
        import_jsonl(site.store, [article("slackhooked", 0)])
        wait_for("two failed attempts", lambda: len(rec.snapshot()) >= 2)
        host = hook[:hook.index("/services/")]
        wait_for("the failure's log line", lambda: "alert %d: delivery" % a["id"]
                 in site.server.stderr())
        log = site.server.stderr()
        assert "SECRETXYZ" not in log
        assert "alert %d: delivery" % a["id"] in log and host + "/..." in log, log[-2000:]
        me.request("DELETE", "%s/%d" % (ALERTS, a["id"]))
    finally:
        rec.close()


def test_a_failing_delivery_is_retried_after_doubling_delays_up_to_the_maximum(site):
    """docs/api.md: retried after 1 s, 2 s, 4 s ... at most 10 minutes apart
    (here FAST: 200 ms doubling up to 800 ms). The schedule is read from the
    log line of each failed attempt (`attempt K in MS ms`), not timed: a
    loaded machine cannot make it pass or fail."""
    rec = Receiver(fail_first=10 ** 9)
    try:
        me = client(site)
        a = post(me, alert_body(q="backoffix", webhook=rec.url, secret="b")).json()["alert"]
        import_jsonl(site.store, [article("backoffix", 0)])
        pat = re.compile(r"alert %d: delivery \S+ to \S+ failed \(HTTP 500\); attempt (\d+) in "
                         r"(\d+) ms" % a["id"])

        def schedule():
            got = [(int(k), int(ms)) for k, ms in pat.findall(site.server.stderr())]
            return got if len(got) >= 5 else None
        got = wait_for("five failed attempts", schedule)
        assert got[:5] == [(2, 200), (3, 400), (4, 800), (5, 800), (6, 800)], got
        # one delivery, the same id every time
        assert len({p[0] for p in rec.snapshot()}) == 1
        me.request("DELETE", "%s/%d" % (ALERTS, a["id"]))
    finally:
        rec.close()


def test_a_webhook_that_redirects_is_a_failed_delivery_not_followed(site):
    """docs/security.md: a webhook answers where it was asked; a redirect
    (here 307 to another receiver on loopback, which the outbound policy
    allows) is a failed attempt, retried to the same URL, and the target of
    the redirect never receives the delivery."""
    target = Receiver()
    asked = []

    class Redirect(BaseHTTPRequestHandler):
        def do_POST(self):
            asked.append(self.path)
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(307)
            self.send_header("Location", target.url)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *a):
            pass

    httpd, base = serve_http(Redirect)
    try:
        me = client(site)
        a = post(me, alert_body(q="redirectix", webhook=base + "moved",
                                secret="r")).json()["alert"]
        import_jsonl(site.store, [article("redirectix", 0)])
        wait_for("two attempts, or one followed", lambda: len(asked) >= 2 or target.snapshot())
        assert target.snapshot() == []
        wait_for("the failure's log line", lambda: "alert %d: delivery" % a["id"]
                 in site.server.stderr() and "(HTTP 307)" in site.server.stderr())
        me.request("DELETE", "%s/%d" % (ALERTS, a["id"]))
    finally:
        httpd.shutdown()
        httpd.server_close()
        target.close()


def metric(base, name):
    for line in requests.get(base + "/metrics").text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError("no %s in /metrics" % name)


def test_a_delivery_failing_past_the_retry_window_is_dropped_and_the_next_goes(tmp_path):
    """After the retry window (24 h; here 1.5 s) a delivery is dropped with
    a log line and counted; the alert's later deliveries go on."""
    store, config = str(tmp_path / "store"), str(tmp_path / "newsd.conf")
    with open(config, "w") as f:
        f.write("[outbound]\nallow_networks = 127.0.0.0/8\n")
    key = cli_ok("keys", "create", "--create", "--store", store).out.strip()
    saved = dict(os.environ)
    os.environ.update(FAST, NEWSD_ALERTS_EXPIRE_MS="1500")
    try:
        srv = Server(store, args=("--config", config))
    finally:
        os.environ.clear()
        os.environ.update(saved)
    rec = Receiver(fail_first=10 ** 9)
    try:
        c = Client(srv.base, key)
        a = post(c, alert_body(q="ephemerix", webhook=rec.url, secret="e")).json()["alert"]
        import_jsonl(store, [article("ephemerix", 0)])
        wait_for("the drop", lambda: metric(srv.base, "newsd_alert_deliveries_failed_total") >= 1)
        assert "dropped after" in srv.stderr()
        assert metric(srv.base, "newsd_alert_delivery_retries_total") >= 1
        wait_for("nothing pending", lambda: metric(srv.base,
                                                   "newsd_alert_deliveries_pending") == 0)
        with rec.lock:
            rec.fail_first = 0
        import_jsonl(store, [article("ephemerix", 1)])
        wait_for("the next delivery", lambda: rec.delivered(a["id"]))
        assert rec.delivered(a["id"]) == ["https://alerts.example/ephemerix/1"]
        first = rec.snapshot()[0][0]
        assert all(p[3] == 500 for p in rec.snapshot() if p[0] == first)
        check_deliveries(rec, {a["id"]: "e"}, dropped={first})
        # Counted once its answer is taken (the receiver saw the POST first).
        wait_for("the count", lambda: metric(srv.base, "newsd_alert_deliveries_sent_total") == 1)
    finally:
        rec.close()
        problems = srv.stop()
        assert not problems, "\n".join(problems)


def test_a_chunked_alert_body_is_refused_at_once(site):
    host, port = site.server.base[len("http://"):].split(":")
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall(b"POST /v2/alerts HTTP/1.1\r\nHost: x\r\nX-Api-Key: %s\r\n"
                  b"Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n" % site.keys["owner"].encode())
        data = s.recv(65536)
    assert data.split(b"\r\n", 1)[0].split(b" ")[1] == b"413", data[:200]
    assert b'"requestTooLarge"' in data


def test_a_clean_stop_hands_the_leases_back(tmp_path):
    """With a lease of a minute, a restarted server delivers at once: the
    one that stopped gave its leases back."""
    store = str(tmp_path / "store")
    config = str(tmp_path / "newsd.conf")
    with open(config, "w") as f:
        f.write("[outbound]\nallow_networks = 127.0.0.0/8\n")
    key = cli_ok("keys", "create", "--create", "--store", store).out.strip()
    saved = dict(os.environ)
    os.environ.update(FAST, NEWSD_ALERTS_LEASE_MS="60000")
    rec = Receiver()
    srv = None
    try:
        srv = Server(store, args=("--config", config))
        a = post(Client(srv.base, key), alert_body(q="relayon", webhook=rec.url,
                                                   secret="r")).json()["alert"]
        import_jsonl(store, [article("relayon", 0)])
        wait_for("the first delivery", lambda: rec.delivered(a["id"]))
        problems = srv.stop()
        assert not problems, "\n".join(problems)
        srv = Server(store, args=("--config", config))
        import_jsonl(store, [article("relayon", 1)])
        wait_for("the delivery after the restart", lambda: len(rec.delivered(a["id"])) == 2,
                 timeout=15)
    finally:
        os.environ.clear()
        os.environ.update(saved)
        rec.close()
        if srv and srv.proc.poll() is None:
            problems = srv.stop()
            assert not problems, "\n".join(problems)


def cpu_seconds(pid):
    """utime + stime of process pid (/proc/PID/stat fields 14 and 15)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_the_worker_sleeps_once_the_last_alert_is_deleted(tmp_path):
    """Issue 23 item 5: after the last alert was deleted, a commit to the
    log must not leave the delivery worker polling it in a loop: the idle
    server uses almost no CPU."""
    store, config = str(tmp_path / "store"), str(tmp_path / "newsd.conf")
    with open(config, "w") as f:
        f.write("[outbound]\nallow_networks = 127.0.0.0/8\n")
    key = cli_ok("keys", "create", "--create", "--store", store).out.strip()
    srv = start_server(store, config)
    rec = Receiver()
    try:
        c = Client(srv.base, key)
        a = post(c, alert_body(q="idlewatch", webhook=rec.url, secret="i")).json()["alert"]
        import_jsonl(store, [article("idlewatch", 0)])
        wait_for("the delivery", lambda: rec.delivered(a["id"]))
        assert c.request("DELETE", "%s/%d" % (ALERTS, a["id"])).json() == {"status": "ok"}
        time.sleep(1.5)  # the worker's lease step (every 0.5 s here) lets the alert go
        import_jsonl(store, [article("idlewatch", 1)])
        time.sleep(1.5)  # the index takes the article in
        before = cpu_seconds(srv.proc.pid)
        time.sleep(3)
        used = cpu_seconds(srv.proc.pid) - before
        assert used < 0.3, "the idle server used %.2f s of CPU in 3 s" % used
    finally:
        rec.close()
        problems = srv.stop()
        assert not problems, "\n".join(problems)


# ---- delivery rules (docs/api.md "Webhook alerts") ----------------------------------


def alert_server(tmp_path, conf="[outbound]\nallow_networks = 127.0.0.0/8\n", env=None):
    """A fresh store, key and server; (server, client, store)."""
    store, config = str(tmp_path / "store"), str(tmp_path / "newsd.conf")
    with open(config, "w") as f:
        f.write(conf)
    key = cli_ok("keys", "create", "--create", "--store", store).out.strip()
    srv = Server(store, args=("--config", config), env=env)
    return srv, Client(srv.base, key), store


def stop_ok(srv):
    problems = srv.stop()
    assert not problems, "\n".join(problems)


FAILED = r"alert %d: delivery \w+ to \S+ failed \((.*)\); attempt (\d+) in (\d+) ms"


def failures(srv, alert_id, n):
    """The first n failure lines of alert_id, waited for: [(why, attempt, delay ms)]."""
    text = srv.wait_log(FAILED % alert_id, n, timeout=60 * SLOW)
    return [(w, int(a), int(d)) for w, a, d in re.findall(FAILED % alert_id, text)][:n]


def test_the_retries_back_off_1_2_4_seconds_by_default(tmp_path):
    """Without the test hooks: the documented schedule, read from the log
    line of each failed attempt (no timing measured)."""
    rec = Receiver(fail_first=10 ** 9)
    srv, c, store = alert_server(tmp_path)
    try:
        a = post(c, alert_body(q="backoffix", webhook=rec.url, secret="b")).json()["alert"]
        import_jsonl(store, [article("backoffix", 0)])
        got = failures(srv, a["id"], 3)
        assert [(x[1], x[2]) for x in got] == [(2, 1000), (3, 2000), (4, 4000)], got
        assert got[0][0] == "HTTP 500", got
    finally:
        rec.close()
        stop_ok(srv)


def test_the_backoff_doubles_up_to_its_cap(tmp_path):
    """At most retry_max apart (10 min; here NEWSD_ALERTS_RETRY_MAX_MS)."""
    rec = Receiver(fail_first=10 ** 9)
    srv, c, store = alert_server(tmp_path, env=dict(FAST))
    try:
        a = post(c, alert_body(q="cappedix", webhook=rec.url, secret="b")).json()["alert"]
        import_jsonl(store, [article("cappedix", 0)])
        got = failures(srv, a["id"], 5)
        assert [x[2] for x in got] == [200, 400, 800, 800, 800], got
    finally:
        rec.close()
        stop_ok(srv)


def test_a_redirect_is_not_followed_at_delivery(tmp_path):
    """A webhook that answers 302 to another receiver: a failed delivery
    (not 2xx), and the other receiver never asked."""
    target = Receiver()

    class Redirect(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(302)
            self.send_header("Location", target.url)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *a):
            pass

    httpd, base = serve_http(Redirect)
    srv, c, store = alert_server(tmp_path)
    try:
        a = post(c, alert_body(q="redirix", webhook=base + "hook", secret="r")).json()["alert"]
        import_jsonl(store, [article("redirix", 0)])
        got = failures(srv, a["id"], 1)
        assert got[0][0] == "HTTP 302", got
        # The attempt is over (logged): a followed redirect would have come first.
        assert target.snapshot() == []
    finally:
        httpd.shutdown()
        httpd.server_close()
        target.close()
        stop_ok(srv)


def test_a_host_name_is_checked_after_dns_at_each_delivery(tmp_path):
    """'localhost' is a name, so the alert is accepted; it resolves to a
    loopback address, which [outbound] does not allow here: every delivery
    is refused before connecting, and the receiver never hears of it."""
    rec = Receiver()
    port = rec.url.split(":")[2].split("/")[0]
    srv, c, store = alert_server(tmp_path, conf="")
    try:
        r = post(c, alert_body(q="dnsix", webhook="http://localhost:%s/hook" % port, secret="d"))
        assert r.status_code == 201, r.text
        a = r.json()["alert"]
        # The literal address is refused at once, for comparison.
        err(post(c, alert_body(q="dnsix", webhook=rec.url, secret="d")), 400,
            "parameterInvalid")
        import_jsonl(store, [article("dnsix", 0)])
        got = failures(srv, a["id"], 2)
        assert all("HTTP" not in why for why, _, _ in got), got
        assert rec.snapshot() == []
    finally:
        rec.close()
        stop_ok(srv)


def test_a_delivery_gets_10_seconds_to_be_answered(tmp_path):
    """A webhook that takes the POST and never answers: the attempt fails
    after the delivery timeout, 10 s, not the feeds' timeout_seconds (set
    to 60 here). The bounds are the timeout's, not newsd's speed: not
    before 10 s, and well before 20 (a 30 s default would not pass)."""
    hold = socket.socket()
    hold.bind(("127.0.0.1", 0))
    hold.listen(8)
    held, arrived = [], []

    def accept():
        while True:
            try:
                conn, _ = hold.accept()
            except OSError:
                return
            held.append(conn)
            arrived.append(time.monotonic())

    threading.Thread(target=accept, daemon=True).start()
    srv, c, store = alert_server(
        tmp_path, conf="[outbound]\nallow_networks = 127.0.0.0/8\ntimeout_seconds = 60\n")
    try:
        hook = "http://127.0.0.1:%d/hook" % hold.getsockname()[1]
        a = post(c, alert_body(q="timeoutix", webhook=hook, secret="t")).json()["alert"]
        import_jsonl(store, [article("timeoutix", 0)])
        got = failures(srv, a["id"], 1)
        failed_at = time.monotonic()
        assert arrived, "the webhook was never connected to"
        waited = failed_at - arrived[0]
        assert 9.5 <= waited < 20, (waited, got)
        assert "HTTP" not in got[0][0], got
    finally:
        hold.close()
        for conn in held:
            conn.close()
        stop_ok(srv)


# ---- a story once (dedupe, issue 25) ----------------------------------------------


def story_copy(word, host, n):
    """Article n of one story: the same text under another site's URL (the
    story assigner joins them, as tests/api/test_stream.py's copies)."""
    title = "%s harbour warehouse fire forces evacuation downtown" % word
    return dict(article(word, n), title=title, url="https://%s/fire/%d" % (host, n),
                source={"id": None, "name": host},
                description="A warehouse fire at the %s harbour." % word,
                content="Crews fought the %s harbour warehouse fire overnight." % word)


def other_story(word, n):
    return dict(article(word, n), title="%s council approves the new cycling budget" % word,
                description="The %s council voted on bicycles lanes." % word,
                content="Councillors of %s approved a budget for cycling paths." % word)


def test_dedupe_delivers_a_story_once_and_counts_its_copies(site):
    """"dedupe": true: the first article of a story goes out (with its
    storyId after NewsAPI's keys), later copies of it are counted on the
    alert (copies), not delivered; another story goes out; an alert on the
    same search without dedupe gets every copy, as NewsAPI's articles."""
    word = "kestrelvane"
    rec = Receiver()
    try:
        me = client(site)
        body = alert_body(q=word, webhook=rec.url, secret="once")
        body["dedupe"] = True
        r = post(me, body)
        assert r.status_code == 201, r.text
        once = r.json()["alert"]
        assert list(once) == ["id", "query", "webhook", "createdAt", "dedupe", "copies"]
        assert once["dedupe"] is True and once["copies"] == 0
        every = post(me, alert_body(q=word, webhook=rec.url, secret="all")).json()["alert"]
        rows = [story_copy(word, "wire-a.example", 1), other_story(word, 2),
                story_copy(word, "wire-b.example", 3), story_copy(word, "wire-c.example", 4)]
        for row in rows:  # one commit each: copies come in later passes too
            import_jsonl(site.store, [row])
        urls = [row["url"] for row in rows]
        wait_for("every article to the plain alert", lambda: len(rec.delivered(every["id"])) >= 4)
        wait_for("both stories to the dedupe alert", lambda: len(rec.delivered(once["id"])) >= 2)
        wait_for("the copies counted", lambda: me.get(
            "%s/%d" % (ALERTS, once["id"])).json()["alert"]["copies"] == 2)
        assert rec.delivered(every["id"]) == urls
        assert rec.delivered(once["id"]) == [urls[0], urls[1]]
        check_deliveries(rec, {once["id"]: "once", every["id"]: "all"})
        sent = [a for p in rec.snapshot() for a in json.loads(p[2])["articles"]
                if json.loads(p[2])["alert"] == once["id"]]
        plain = [a for p in rec.snapshot() for a in json.loads(p[2])["articles"]
                 if json.loads(p[2])["alert"] == every["id"]]
        keys = ["source", "author", "title", "description", "url", "urlToImage", "publishedAt",
                "content"]
        assert all(list(a) == keys for a in plain)
        assert [list(a) for a in sent] == [keys + ["storyId"]] * 2
        assert {k: sent[0][k] for k in keys} == plain[0]
        assert sent[0]["storyId"] != sent[1]["storyId"]
        # The story is the one the search API gives, with its three copies.
        b = me.get(EV, params={"q": word, "dedupe": "true"}).json()
        assert {a["storyId"]: a["storySize"] for a in b["articles"]}[sent[0]["storyId"]] == 3
        # Later copies stay counted, not sent; the count is the alert's.
        import_jsonl(site.store, [story_copy(word, "wire-d.example", 5)])
        wait_for("the fourth copy counted", lambda: me.get(
            "%s/%d" % (ALERTS, once["id"])).json()["alert"]["copies"] == 3)
        wait_for("the copy to the plain alert", lambda: len(rec.delivered(every["id"])) >= 5)
        assert len(rec.delivered(once["id"])) == 2
        # An update of the first article is of a story delivered: counted.
        import_jsonl(site.store, [dict(rows[0], content=rows[0]["content"] + " Updated.")])
        wait_for("the update counted", lambda: me.get(
            "%s/%d" % (ALERTS, once["id"])).json()["alert"]["copies"] == 4)
        wait_for("the update to the plain alert", lambda: len(rec.delivered(every["id"])) >= 6)
        assert rec.delivered(every["id"])[5] == urls[0]
        assert len(rec.delivered(once["id"])) == 2
        listed = {a["id"]: a for a in me.get(ALERTS).json()["alerts"]}
        assert listed[once["id"]]["copies"] == 4 and "copies" not in listed[every["id"]]
        for a in (once, every):
            me.request("DELETE", "%s/%d" % (ALERTS, a["id"]))
    finally:
        rec.close()


def test_dedupe_remembers_the_stories_delivered_across_a_restart(site):
    """The stories delivered are written with the deliveries: after a
    restart (or another node taking the alert) a later copy of a story
    delivered before is still counted, not delivered again."""
    word = "petrelmoor"
    rec = Receiver()
    try:
        body = alert_body(q=word, webhook=rec.url, secret="again")
        body["dedupe"] = True
        a = post(client(site), body).json()["alert"]
        first = story_copy(word, "wire-a.example", 1)
        import_jsonl(site.store, [first])
        wait_for("the story's first article", lambda: rec.delivered(a["id"]) == [first["url"]])
        problems = site.server.stop()
        assert not problems, "\n".join(problems)
        site.server = start_server(site.store, site.config)
        import_jsonl(site.store, [story_copy(word, "wire-b.example", 2), other_story(word, 3)])
        wait_for("the other story", lambda: len(rec.delivered(a["id"])) >= 2)
        wait_for("the copy counted", lambda: client(site).get(
            "%s/%d" % (ALERTS, a["id"])).json()["alert"]["copies"] == 1)
        assert rec.delivered(a["id"]) == [first["url"], other_story(word, 3)["url"]]
        client(site).request("DELETE", "%s/%d" % (ALERTS, a["id"]))
    finally:
        rec.close()


def test_dedupe_must_be_a_boolean_beside_the_query(site):
    body = alert_body(q="a")
    body["dedupe"] = "yes"
    err(post(client(site), body), 400, "parameterInvalid",
        "The dedupe field must be true or false.")
    body = alert_body(q="a", dedupe="true")
    err(post(client(site), body), 400, "parameterInvalid",
        'The dedupe parameter is a field of the body beside query: "dedupe": true.')
    # false and null are an alert without dedupe, as no dedupe is.
    for off in (False, None):
        body = alert_body(q="dedupeoff")
        body["dedupe"] = off
        r = post(client(site), body)
        assert r.status_code == 201, r.text
        alert = r.json()["alert"]
        assert list(alert) == ["id", "query", "webhook", "createdAt"]
        client(site).request("DELETE", "%s/%d" % (ALERTS, alert["id"]))


def test_the_operator_adds_an_alert_with_dedupe(site):
    key_id = None
    for line in cli_ok("keys", "list", "--store", site.store).out.splitlines():
        if " other " in " %s " % line:
            key_id = line.split()[0]
    r = cli_ok("alerts", "add", "--store", site.store, "--key-id", key_id, "--webhook",
               "https://example.com/op", "--q", "dedupedop", "--dedupe")
    aid = int(r.out.splitlines()[0])
    listed = cli_ok("alerts", "list", "--store", site.store, "--key-id", key_id).out.splitlines()
    assert listed[0].split()[:5] == ["ID", "KEY", "CREATED", "CURSOR", "COPIES"]
    row = [l.split() for l in listed[1:] if l.split()[0] == str(aid)][0]
    assert row[4] == "0"
    got = client(site, "other").get("%s/%d" % (ALERTS, aid)).json()["alert"]
    assert got["dedupe"] is True and got["copies"] == 0
    cli_ok("alerts", "remove", "--store", site.store, str(aid))
