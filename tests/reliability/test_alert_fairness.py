"""One key's slow webhooks must not delay every key's alerts (issue 23 item 3,
docs/security.md). 40 alerts of two keys POST to 40 receivers on loopback
that each answer after 9.9 s (just under the 10 s timeout); a third key's 4
alerts POST to a receiver that answers at once. While the slow POSTs hang,
the fast key's deliveries of several later imports must all arrive: the
event-ordering assertion is that each fast delivery reaches its receiver
before any slow receiver has answered (a generous 9.9 s bound). Then every
slow alert, past the 32nd too, gets its delivery. Takes about 25 s."""
import json
import threading
import time

from http.server import BaseHTTPRequestHandler

from harness import SLOW, Client, Server, cli_ok, import_jsonl, serve_http

SLOW_ANSWER_S = 9.9
SLOW_KEYS, SLOW_PER_KEY = 2, 20
FAST_ALERTS = 4
ROUNDS = 6


class Board:
    """What every receiver saw, in one place: POST arrivals and slow answers."""

    def __init__(self):
        self.lock = threading.Lock()
        self.slow_posts = {}    # alert id -> first arrival (monotonic)
        self.slow_answered = 0  # slow POSTs answered so far
        self.fast = []          # (alert id, article url, arrival, slow answered by then)


def slow_receiver(board):
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with board.lock:
                board.slow_posts.setdefault(json.loads(body)["alert"], time.monotonic())
            time.sleep(SLOW_ANSWER_S)
            with board.lock:
                board.slow_answered += 1
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *a):
            pass

    return serve_http(Handler)


def fast_receiver(board):
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            doc = json.loads(body)
            now = time.monotonic()
            with board.lock:
                for a in doc["articles"]:
                    board.fast.append((doc["alert"], a["url"], now, board.slow_answered))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *a):
            pass

    return serve_http(Handler)


def article(word, i):
    return {"source": {"id": None, "name": "Fairness"}, "author": "T",
            "title": "%s item %d" % (word, i), "description": "About %s %d" % (word, i),
            "url": "https://fair.example/%s/%d" % (word, i), "urlToImage": None,
            "publishedAt": "2026-01-02T03:04:05Z", "content": "Body %d" % i}


def add_alert(base, key, q, url):
    r = Client(base, key).request(
        "POST", "/v2/alerts", headers={"Content-Type": "application/json"},
        data=json.dumps({"query": {"q": q}, "webhook": url, "secret": "s"}))
    assert r.status_code == 201, r.text
    return r.json()["alert"]["id"]


def wait_until(what, cond, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)


def test_slow_webhooks_delay_only_their_own_alerts(tmp_path):
    store, config = str(tmp_path / "store"), str(tmp_path / "newsd.conf")
    with open(config, "w") as f:
        f.write("[outbound]\nallow_networks = 127.0.0.0/8\n\n[plan many]\nalerts = 50\n")
    keys = [cli_ok("keys", "create", "--create", "--store", store, "--plan", "many", "--config",
                   config).out.strip() for _ in range(SLOW_KEYS + 1)]
    board = Board()
    servers = []
    srv = Server(store, args=("--config", config))
    try:
        slow_ids = []
        for k in range(SLOW_KEYS):
            for _ in range(SLOW_PER_KEY):
                httpd, base = slow_receiver(board)
                servers.append(httpd)
                slow_ids.append(add_alert(srv.base, keys[k], "tortoiseword", base + "hook"))
        httpd, base = fast_receiver(board)
        servers.append(httpd)
        fast_ids = [add_alert(srv.base, keys[-1], "hareword", base + "hook")
                    for _ in range(FAST_ALERTS)]
        time.sleep(1.5)  # the worker takes new alerts up within a second
        import_jsonl(store, [article("tortoiseword", 0), article("hareword", 0)])
        # The slow POSTs are in flight (16 of them at least) ...
        wait_until("the slow POSTs", lambda: len(board.slow_posts) >= 16, 8 * SLOW)
        # ... and the fast key's deliveries of later imports still arrive.
        imported = {}
        for r in range(1, ROUNDS + 1):
            import_jsonl(store, [article("hareword", r)])
            imported["https://fair.example/hareword/%d" % r] = time.monotonic()
        want = FAST_ALERTS * (ROUNDS + 1)
        wait_until("the fast deliveries", lambda: len(board.fast) >= want, 30 * SLOW)
        with board.lock:
            fast = list(board.fast)
        late = [(aid, url) for aid, url, _, answered in fast if answered]
        assert not late, "fast deliveries waited for the slow receivers: %r" % late
        got = sorted((aid, url) for aid, url, _, _ in fast)
        assert got == sorted((aid, "https://fair.example/hareword/%d" % r)
                             for aid in fast_ids for r in range(ROUNDS + 1))
        lat = sorted(t - imported[url] for _, url, t, _ in fast if url in imported)
        print("fast deliveries after the import: p50 %.2f s, p95 %.2f s, max %.2f s" % (
            lat[len(lat) // 2], lat[int(len(lat) * 0.95)], lat[-1]))
        # Every slow alert, past the 32nd too, gets its delivery.
        wait_until("every slow alert's POST", lambda: len(board.slow_posts) == len(slow_ids),
                   3 * SLOW_ANSWER_S * SLOW)
        assert sorted(board.slow_posts) == sorted(slow_ids)
    finally:
        problems = srv.stop()
        for h in servers:
            h.shutdown()
            h.server_close()
        assert not problems, "\n".join(problems)
