"""The HTTP layer against an attacker (issue 14, docs/security.md): requests
libmicrohttpd gives up on are still ended (logged, freed, uncounted); what a
client sends cannot forge the access log or put a key in it; queued requests
whose client left are not run, and queue time counts in the time budget."""
import json
import os
import re
import socket
import threading

import pytest

from conftest import new_key, write_articles
from harness import SLOW, Client, Server, articles_ok, cli_ok, err


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    d = tmp_path_factory.mktemp("http")
    store = d / "store"
    cli_ok("import", "--create", "--store", str(store), "--language", "en",
           write_articles(d / "a.jsonl", 200))
    return store


def send(port, raw, wait=5.0, read=True):
    """Send raw bytes on a new connection; the first bytes of the answer
    (b"" when the server closed without one)."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as s:
        s.sendall(raw)
        if not read:
            return b""
        try:
            return s.recv(4096)
        except OSError:
            return b""


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def test_requests_libmicrohttpd_gives_up_on_are_ended(store):
    """Requests that run libmicrohttpd's per-connection pool out (the
    thousand-parameter query of the report, tens of thousands of header
    lines) and requests cut off mid-head are all answered or closed at once,
    each gets its access-log line, none stays counted in flight (SIGTERM is
    quick and says nothing is left), and memory does not grow with them.
    Before the fix: no answer for 30 s, +40 KB per request, and "stopping
    with N request(s) still in flight"."""
    srv = Server(store)
    try:
        many = "&".join("p%d=1" % i for i in range(1000))
        attacks = [
            b"GET /v2/everything?q=a&" + many.encode() + b" HTTP/1.1\r\nHost: x\r\n\r\n",
            b"GET /?" + b"&" * 40000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
            b"GET /v2/everything?q=a HTTP/1.1\r\nHost: x\r\n" + b"a:\r\n" * 30000 + b"\r\n",
        ]
        # Warm up the allocator before the baseline.
        for raw in attacks:
            send(srv.port, raw)
        rss0 = rss_kb(srv.proc.pid)
        for i in range(150):
            # Answered, not left to a timeout: send() waits at most 5 s
            # (30 s under ASan) for the first bytes, and b"" fails below.
            answer = send(srv.port, attacks[i % 3], wait=5.0 * SLOW)
            assert answer.startswith(b"HTTP/1.1 "), (i % 3, answer[:80])
            if i % 3 == 0:
                assert answer.startswith(b"HTTP/1.1 401"), answer[:80]
            elif i % 3 == 1:
                assert answer.startswith(b"HTTP/1.1 414"), answer[:80]
        # Heads cut off in the middle: the request line is in, the rest never comes.
        for _ in range(30):
            with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as s:
                s.sendall(b"GET /v2/everything?q=a HTTP/1.1\r\nHost: x\r\nX-A")
        rss1 = rss_kb(srv.proc.pid)
        assert rss1 < rss0 + 8 * 1024, (rss0, rss1)
        # One access-log line per attack (a head cut off may close before
        # its request line is read: then there is no request to log).
        srv.wait_log(r" http 127\.0\.0\.1 \S+ /(?!healthz)", 3 + 150)
    finally:
        log = srv.stderr() if os.path.exists(srv.err_path) else ""
        problems = srv.stop()
    # Nothing left in flight: the stop did not wait for any request (a
    # wait would say "still in flight" once it gave up).
    assert not problems, problems
    assert "still in flight" not in log


def test_what_a_client_sends_cannot_forge_the_log_nor_leak_a_key(store):
    """Bytes a terminal obeys are escaped in every field of the access log,
    and a key is masked wherever the target holds it: after '&' or ';' in
    the path (a client that lost its '?'), and in a 404's unknown path
    segments, which are not logged at all."""
    key = new_key(store)
    srv = Server(store)
    try:
        c = Client(srv.base, key)
        send(srv.port, b"\x1b[31mGET /v2/everything?q=a HTTP/1.1\r\nHost: x\r\n\r\n")
        send(srv.port, b"GET /v2/everything?q=a\rb\x07c HTTP/1.1\r\nHost: x\r\n\r\n")
        send(srv.port, b"GET /v2/everything?q=\x1b]0;owned\x07 HTTP/1.1\r\nHost: x\r\n\r\n")
        for target in ("/v2/everything&apiKey=" + key,
                       "/v2/everything;apiKey=%s?q=a" % key,
                       "/v2/everything/" + key,
                       "/v2/" + key + "/x?q=a",
                       "/" + key):
            r = c.get(target, key=None)
            assert r.status_code == 404, (target, r.status_code)
        articles_ok(c.get("/v2/everything", {"q": "crash"}))
        log = srv.wait_log(r" http 127\.0\.0\.1 GET /v2/everything\?q=crash 200 ", 1)
    finally:
        problems = srv.stop()
    assert not problems, problems
    access = [line for line in log.splitlines() if " http " in line]
    assert len(access) >= 9, log[-2000:]
    assert "\x1b" not in log and "\x07" not in log and "\r" not in log
    # Not GET: 405, whatever it is called.
    assert "\\x1b[31mGET /v2/everything?q=a 405" in log, access
    assert "/v2/everything?q=a\\x0db\\x07c 401" in log, access
    assert key not in log, [line for line in access if key in line]
    assert " /v2/everything/... 404 " in log, access


@pytest.fixture
def slow_server(store, monkeypatch):
    """One worker, and every search takes three seconds (the test hook):
    what the tests send while the first search runs (five requests, or one
    within the 500 ms budget) has that long to arrive on a loaded machine."""
    monkeypatch.setenv("NEWSD_TEST_SEARCH_DELAY_MS", "3000")

    def start(*args):
        return Server(store, args=["--threads", "1"] + list(args))
    return start


STARTED = r"test delay of \d+ ms begins"


def test_queued_requests_whose_client_left_are_not_run(store, slow_server):
    """A request that waits behind a slow one, and whose client closes the
    connection meanwhile, is dropped when its turn comes instead of being
    run: of seven requests (the slow one, five gone, one live) exactly two
    are run, seen by the test hook's line at the start of each."""
    key = new_key(store)
    # (a budget above the two searches the live request waits for and runs)
    srv = slow_server("--query-timeout-ms", "30000")
    try:
        c = Client(srv.base, key)
        req = ("GET /v2/everything?q=crash HTTP/1.1\r\nHost: x\r\nX-Api-Key: %s\r\n\r\n"
               % key).encode()
        first = threading.Thread(target=send, args=(srv.port, req, 10.0 * SLOW))
        first.start()
        srv.wait_log(STARTED, 1)  # the only worker is busy with it now
        for _ in range(5):
            send(srv.port, req, read=False)  # sent, then the client leaves
        articles_ok(c.get("/v2/everything", {"q": "crash"}, fresh=True))
        first.join(10 * SLOW)
        log = srv.wait_log("client gone before its turn", 5)
    finally:
        problems = srv.stop()
    assert not problems, problems
    assert log.count("client gone before its turn") == 5, log[-3000:]
    assert len(re.findall(STARTED, log)) == 2, log[-3000:]


def test_queue_time_counts_in_the_time_budget(store, slow_server):
    """With a 500 ms budget, a request that waited seconds for the only
    worker is answered 503 serviceUnavailable with Retry-After as soon as
    its turn comes, without running its search; its budget counted from
    its arrival, not from when a worker took it."""
    key = new_key(store)
    srv = slow_server("--query-timeout-ms", "500")
    try:
        c = Client(srv.base, key)
        first = threading.Thread(target=lambda: c.get("/v2/everything", {"q": "crash"},
                                                      fresh=True))
        first.start()
        srv.wait_log(STARTED, 1)  # the only worker is busy with it now
        r = c.get("/v2/everything", {"q": "crash"}, fresh=True)
        first.join(10 * SLOW)
        b = err(r, 503, "serviceUnavailable")
        assert "busy" in b["message"], b
        assert r.headers.get("Retry-After") == "1", r.headers
        log = srv.wait_log("queue wait exceeded the time budget", 1)
    finally:
        problems = srv.stop()
    assert not problems, problems
    # Answered as soon as its turn came, its search never begun.
    assert len(re.findall(STARTED, log)) == 1, log[-3000:]


def test_the_access_log_names_client_and_key_id_and_speaks_json(store):
    """Each access-log line names the client's address and the id of the key
    that made the request (never the key); --log-format json writes every
    line, hostile targets included, as one JSON object."""
    key = new_key(store)
    listed = cli_ok("keys", "list", "--store", str(store)).out
    srv = Server(store, args=["--log-format", "json"])
    try:
        c = Client(srv.base, key)
        articles_ok(c.get("/v2/everything", {"q": "crash"}))
        c.get("/v2/everything", {"q": "crash"}, key="0123456789abcdef0123456789abcdef")
        send(srv.port, b'GET /v2/everything?q="a\\"b\x1b HTTP/1.1\r\nHost: x\r\n\r\n')
        send(srv.port, b'\x1b"GET /x"y HTTP/1.1\r\nHost: x\r\n\r\n')
        # Four lines of this test's requests (the harness's /healthz aside).
        log = srv.wait_log(r'"msg":"http".*"target":"(?!/healthz)', 4)
    finally:
        problems = srv.stop()
    assert not problems, problems
    lines = [json.loads(line) for line in log.splitlines() if line.strip()]
    access = [o for o in lines if o.get("msg") == "http"]
    assert len(access) >= 4, log[-2000:]
    for o in access:
        assert set(o) >= {"ts", "level", "client", "method", "target", "status", "us", "id",
                          "key"}, o
        assert o["client"] == "127.0.0.1", o
    ok = [o for o in access if o["status"] == 200 and o["target"].startswith("/v2/everything")]
    assert ok and isinstance(ok[0]["key"], int), ok
    # The id is the one keys list shows for that key's row (the newest).
    ids = [int(m) for m in re.findall(r"^\s*(\d+)\s", listed, re.M)]
    assert ok[0]["key"] == max(ids), (ok[0], listed)
    bad = [o for o in access if o["status"] == 401]
    assert bad and bad[0]["key"] is None, bad
    assert key not in log
