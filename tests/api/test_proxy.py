"""Running behind a reverse proxy (docs/operations.md): every serve setting
from the config file alone, X-Forwarded-For believed only from
trusted_proxies, /metrics limited by metrics_allow_networks, and the
shipped nginx example (dist/nginx-newsd.conf) run as it is in front of a
real newsd over TLS on loopback."""
import http.server
import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time

import pytest
import requests

from harness import (ASAN, BIN, HTTP_TIMEOUT, REPO, Server, allow_loopback, clean_env, cli_ok,
                     reply, serve_http)

LISTENING = re.compile(r" on http://[^:]+:(\d+)")  # "listening on ...", "metrics on ..."


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    d = tmp_path_factory.mktemp("proxy") / "store"
    cli_ok("import", "--create", "--store", str(d), os.path.join(REPO, "tests", "data", "api",
                                                       "handmade.jsonl"))
    key = cli_ok("keys", "create", "--create", "--store", str(d), "--name", "proxy").out.strip()
    return d, key


def conf(tmp_path, text, name="newsd.conf"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def access_lines(srv, n, target):
    """The JSON access lines, once n of them for targets matching the regex
    target are written (a line follows its answer: waited for, not slept;
    the harness's own /healthz lines are not counted)."""
    text = srv.wait_log(r'"msg":"http".*"target":"(?:%s)' % target, n)
    return [json.loads(line) for line in text.splitlines()
            if line.startswith("{") and '"msg":"http"' in line]


RSS = (b'<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>'
       b'<item><title>Proxied feed item</title><link>https://feeds.example/1</link>'
       b'<pubDate>Mon, 02 Jan 2023 10:00:00 GMT</pubDate></item></channel></rss>')


class FeedHits(http.server.BaseHTTPRequestHandler):
    """A feed on loopback that counts the polls it gets."""
    hits = 0

    def do_GET(self):
        type(self).hits += 1
        reply(self, RSS, "application/rss+xml")

    def log_message(self, *a):
        pass


def serve_from(path, env=None, args=()):
    """newsd serve --config path (and args); (process, [ports printed])."""
    p = subprocess.Popen([BIN, "serve", "--config", path] + list(args), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=clean_env(env))
    return p


def ports_of(p, n):
    # serve prints its addresses once they listen (or exits).
    lines = [p.stdout.readline() for _ in range(n)]
    ports = [int(m.group(1)) for m in map(LISTENING.search, lines) if m]
    assert len(ports) == n, (lines, p.poll())
    return ports


def stop(p):
    """SIGTERM; stderr once it has exited (every access line written by then)."""
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=30 * (6 if ASAN else 1))
    assert p.returncode == 0, err[-2000:]
    return err


def scrape(base, name):
    m = re.search(r"^%s (\S+)$" % name, requests.get(base + "/metrics",
                                                       timeout=HTTP_TIMEOUT).text, re.M)
    return float(m.group(1)) if m else None


@pytest.fixture
def feed_store(tmp_path):
    """The handmade store plus one feed on loopback, due at once."""
    FeedHits.hits = 0
    srv, base = serve_http(FeedHits)
    d = tmp_path / "feedstore"
    cli_ok("import", "--create", "--store", str(d), os.path.join(REPO, "tests", "data", "api",
                                                       "handmade.jsonl"))
    key = cli_ok("keys", "create", "--create", "--store", str(d)).out.strip()
    allow = allow_loopback(tmp_path)
    cli_ok("feeds", "add", "--create", "--store", str(d), "--config", allow, base + "feed.rss")
    yield d, key
    srv.shutdown()
    srv.server_close()


SERVER_CONF = """[server]
listen = 127.0.0.1:0
store = %s
metrics_listen = 127.0.0.1:0
crawl = %s
log_format = json
access_log = true
result_window = 1
index = fts5
trusted_proxies = 127.0.0.1
query_timeout_ms = 4000

[outbound]
allow_networks = 127.0.0.0/8
"""


def test_the_config_file_alone_sets_every_serve_setting(feed_store, tmp_path):
    """No flag but --config: listen, store, metrics_listen, crawl, log_format,
    access_log, result_window, index and trusted_proxies come from [server]
    and each is seen doing its work. (live_window_hours and result_window
    against plans: test_plans.py; stream_*: test_stream.py; user:
    tests/reliability/test_security.py; the command line and environment
    winning over the file: the next test.)"""
    d, key = feed_store
    path = conf(tmp_path, SERVER_CONF % (d, "false"))
    p = serve_from(path)
    try:
        base, metrics = ["http://127.0.0.1:%d" % n for n in ports_of(p, 2)]
        h = {"X-Api-Key": key, "X-Forwarded-For": "192.0.2.7"}
        r = requests.get(base + "/v2/everything", params={"q": "plinthor", "pageSize": 1},
                         headers=h, timeout=HTTP_TIMEOUT)
        # store: the handmade articles; result_window = 1: exactly one result page.
        assert r.status_code == 200 and r.json()["totalResults"] == 3, r.text
        r = requests.get(base + "/v2/everything", params={"q": "plinthor", "pageSize": 1,
                                                          "page": 2},
                         headers=h, timeout=HTTP_TIMEOUT)
        assert r.status_code == 426 and "at most the first 1 results" in r.json()["message"]
        # metrics_listen: /metrics there, and not on listen.
        assert requests.get(base + "/metrics", timeout=HTTP_TIMEOUT).status_code == 404
        # index = fts5: none of the engine's own figures.
        assert scrape(metrics, "newsd_index_ready") == 1
        assert scrape(metrics, "newsd_index_segments") is None
        assert not os.path.exists(os.path.join(str(d), "newsd.db.engine"))
        # crawl = false: the due feed on an allowed address was never asked.
        assert scrape(metrics, "newsd_feeds_polled_total") == 0
    finally:
        err = stop(p)
    assert FeedHits.hits == 0
    lines = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    assert any(o.get("msg", "").startswith("crawler: off") for o in lines), err[-2000:]
    http_lines = [o for o in lines if o.get("msg") == "http"]
    # access_log, log_format = json; trusted_proxies: the client is X-Forwarded-For's.
    assert [(o["status"], o["client"]) for o in http_lines
            if o["target"].startswith("/v2/")] == [(200, "192.0.2.7"), (426, "192.0.2.7")]

    # The same file with crawl = true polls the feed: the check above could fail.
    p = serve_from(conf(tmp_path, SERVER_CONF % (d, "true"), "crawling.conf"))
    try:
        base, metrics = ["http://127.0.0.1:%d" % n for n in ports_of(p, 2)]
        deadline = time.monotonic() + HTTP_TIMEOUT
        while (scrape(metrics, "newsd_feeds_polled_total") or 0) < 1:
            assert time.monotonic() < deadline, "crawl = true never polled the feed"
            time.sleep(0.05)
        assert FeedHits.hits >= 1
    finally:
        stop(p)


def test_the_command_line_and_the_environment_win_over_the_file(feed_store, tmp_path):
    """NEWSD_STORE and NEWSD_LISTEN over store and listen; --quiet over
    access_log; --no-crawl over crawl; --index over index."""
    d, key = feed_store
    path = conf(tmp_path, "[server]\nlisten = 127.0.0.1:1\nstore = %s\naccess_log = true\n"
                "crawl = true\nindex = fts5\n[outbound]\nallow_networks = 127.0.0.0/8\n"
                % (tmp_path / "not-this-store"))
    p = serve_from(path, env={"NEWSD_STORE": str(d), "NEWSD_LISTEN": "127.0.0.1:0"},
                   args=["--quiet", "--no-crawl", "--index", "engine"])
    try:
        base, = ["http://127.0.0.1:%d" % n for n in ports_of(p, 1)]
        r = requests.get(base + "/v2/everything", params={"q": "plinthor"},
                         headers={"X-Api-Key": key}, timeout=HTTP_TIMEOUT)
        assert r.status_code == 200 and r.json()["totalResults"] == 3, r.text
        assert scrape(base, "newsd_index_segments") >= 1
        assert scrape(base, "newsd_feeds_polled_total") == 0
    finally:
        err = stop(p)
    assert not (tmp_path / "not-this-store").exists()
    assert " GET /v2/everything" not in err, err[-2000:]
    assert "crawler: off" in err and FeedHits.hits == 0
    # NEWSD_STORE alone (no file) is the store, NEWSD_LISTEN the address.
    p = subprocess.Popen([BIN, "serve", "--no-crawl"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, cwd=str(tmp_path),
                         env=clean_env({"NEWSD_STORE": str(d), "NEWSD_LISTEN": "127.0.0.1:0"}))
    try:
        base, = ["http://127.0.0.1:%d" % n for n in ports_of(p, 1)]
        r = requests.get(base + "/v2/everything", params={"q": "plinthor"},
                         headers={"X-Api-Key": key}, timeout=HTTP_TIMEOUT)
        assert r.status_code == 200 and r.json()["totalResults"] == 3, r.text
    finally:
        err = stop(p)
    # Without --quiet the access log is on by default.
    assert " GET /v2/everything" in err, err[-2000:]
    assert not (tmp_path / "newsd-data").exists()


def test_x_forwarded_for_is_believed_only_from_trusted_proxies(store, tmp_path):
    d, key = store
    trusting = conf(tmp_path, "[server]\ntrusted_proxies = 127.0.0.1\n"
                    "metrics_allow_networks = 10.0.0.0/8\n", "trusting.conf")
    srv = Server(d, args=["--config", trusting, "--log-format", "json"])
    try:
        base = srv.base
        # Through a trusted peer: the rightmost address no trusted proxy
        # holds is the client, whatever a client wrote to the left of it.
        h = {"X-Api-Key": key, "X-Forwarded-For": "1.2.3.4, 10.1.2.3"}
        assert requests.get(base + "/v2/everything", params={"q": "plinthor"}, headers=h,
                            timeout=HTTP_TIMEOUT).status_code == 200
        # /metrics: 10.0.0.0/8 only.
        r = requests.get(base + "/metrics", timeout=HTTP_TIMEOUT)
        assert r.status_code == 403 and r.json()["code"] == "forbidden", r.text[:200]
        r = requests.get(base + "/metrics", headers={"X-Forwarded-For": "10.9.9.9"},
                         timeout=HTTP_TIMEOUT)
        assert r.status_code == 200, r.text[:200]
        lines = access_lines(srv, 3, "/v2/|/metrics")
    finally:
        problems = srv.stop()
    assert not problems, problems
    clients = [o["client"] for o in lines if o["target"].startswith(("/v2/", "/metrics"))]
    assert clients[:3] == ["10.1.2.3", "127.0.0.1", "10.9.9.9"], clients

    untrusting = conf(tmp_path, "[server]\nmetrics_allow_networks = 10.0.0.0/8\n", "plain.conf")
    srv = Server(d, args=["--config", untrusting, "--log-format", "json"])
    try:
        # Not from a trusted proxy: the header is a client's word, ignored.
        r = requests.get(srv.base + "/metrics", headers={"X-Forwarded-For": "10.9.9.9"},
                         timeout=HTTP_TIMEOUT)
        assert r.status_code == 403, r.text[:200]
        lines = access_lines(srv, 1, "/metrics")
    finally:
        problems = srv.stop()
    assert not problems, problems
    assert [o["client"] for o in lines if o["target"] == "/metrics"] == ["127.0.0.1"]


def free_port():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.mark.by_design(ASAN or os.environ.get("NEWSD_INDEX") == "fts5",
                       reason="one run is enough: nginx is what is tested here")
def test_the_nginx_example_serves_newsd_over_tls(store, tmp_path):
    """dist/nginx-newsd.conf, with only its addresses and paths changed for a
    test: HTTPS answers from newsd, newsd logs the client's own address (not
    nginx's), and the key is in neither log."""
    d, key = store
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    assert os.access(nginx, os.X_OK), "nginx missing: scripts/install-deps.sh --test installs it"
    newsd_conf = conf(tmp_path, "[server]\ntrusted_proxies = 127.0.0.1\n")
    srv = Server(d, args=["--config", newsd_conf, "--log-format", "json"])
    ngx = None
    try:
        cert, keyfile = tmp_path / "cert.pem", tmp_path / "key.pem"
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                        "-subj", "/CN=news.example.org", "-keyout", str(keyfile), "-out",
                        str(cert)], check=True, capture_output=True)
        port = free_port()
        example = open(os.path.join(REPO, "dist", "nginx-newsd.conf")).read()
        for old, new in [("127.0.0.1:8080", "127.0.0.1:%d" % srv.port),
                         ("listen 443 ssl http2;", "listen 127.0.0.1:%d ssl http2;" % port),
                         ("/etc/ssl/newsd/fullchain.pem", str(cert)),
                         ("/etc/ssl/newsd/privkey.pem", str(keyfile)),
                         ("/var/log/nginx/newsd.access.log", str(tmp_path / "access.log")),
                         ("/var/log/nginx/newsd.error.log", str(tmp_path / "error.log"))]:
            assert old in example, old
            example = example.replace(old, new)
        (tmp_path / "site.conf").write_text(example)
        (tmp_path / "tmp").mkdir()
        (tmp_path / "nginx.conf").write_text(
            "daemon off;\nworker_processes 1;\nuser root;\npid %s/nginx.pid;\n"
            "error_log %s/main-error.log warn;\nevents { worker_connections 64; }\n"
            "http {\n  client_body_temp_path %s/tmp;\n  proxy_temp_path %s/tmp;\n"
            "  fastcgi_temp_path %s/tmp;\n  uwsgi_temp_path %s/tmp;\n  scgi_temp_path %s/tmp;\n"
            "  access_log off;\n  include %s/site.conf;\n}\n" % ((tmp_path,) * 7 + (tmp_path,)))
        ngx = subprocess.Popen([nginx, "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        url = "https://news.example.org:%d/v2/everything?q=plinthor&apiKey=%s" % (port, key)
        # From another loopback address than nginx's own, so that the
        # client newsd logs can only have come from X-Forwarded-For.
        curl = ["curl", "-sk", "--fail-early", "--interface", "127.0.0.5", "--resolve",
                "news.example.org:%d:127.0.0.1" % port]
        # Wait for nginx with /livez, not with the searches: curl's exit status
        # is the last transfer's, so a first search refused while nginx was
        # still starting would pass unnoticed.
        livez = "https://news.example.org:%d/livez" % port
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            ready = subprocess.run(curl + ["-f", livez], capture_output=True, text=True)
            if ready.returncode == 0:
                break
            time.sleep(0.2)
        assert ready.returncode == 0, (ready, ngx.poll())
        out = subprocess.run(curl + [url, url], capture_output=True, text=True)
        assert out.returncode == 0, (out, ngx.poll())
        # /metrics stays private: the example does not pass it on.
        metrics = subprocess.run(curl + ["-o", "/dev/null", "-w", "%{http_code}",
                                         "https://news.example.org:%d/metrics" % port],
                                 capture_output=True, text=True)
        assert metrics.stdout == "404", metrics
        bodies = out.stdout.replace("}{", "}\n{").splitlines()
        assert len(bodies) == 2 and all(json.loads(b)["status"] == "ok" for b in bodies), \
            out.stdout[:300]
        lines = access_lines(srv, 2, "/v2/everything")
    finally:
        if ngx:
            ngx.send_signal(signal.SIGQUIT)
            try:
                ngx.wait(timeout=10)
            except subprocess.TimeoutExpired:
                ngx.kill()
        problems = srv.stop()
    assert not problems, problems
    assert not [o for o in lines if o["target"].startswith("/metrics")], lines
    searches = [o for o in lines if o["target"].startswith("/v2/everything")]
    assert len(searches) == 2 and all(o["client"] == "127.0.0.5" for o in searches), searches
    assert all(o["key"] for o in searches)
    nginx_log = (tmp_path / "access.log").read_text()
    assert "127.0.0.5" in nginx_log and "apiKey=***" in nginx_log, nginx_log
    assert key not in nginx_log and key not in srv_log_text(lines)


def srv_log_text(lines):
    return "\n".join(json.dumps(o) for o in lines)


def test_threads_from_the_file_is_the_number_of_workers_and_the_flag_wins(store, tmp_path):
    """[server] threads = 1: of two slow searches sent at once the second
    begins only once the first's 2 s test delay is over; --threads 2 over
    the file: the second begins while the first still sleeps. Read from the
    log's own timestamps of each search's start: the gap is bounded by the
    delay the test sets, not by newsd's speed."""
    d, key = store
    path = conf(tmp_path, "[server]\nthreads = 1\n", "threads.conf")
    delay = 2.0
    for args, serial in (([], True), (["--threads", "2"], False)):
        srv = Server(d, args=["--config", path] + args,
                     env={"NEWSD_TEST_SEARCH_DELAY_MS": str(int(delay * 1000))})
        try:
            def search():
                requests.get(srv.base + "/v2/everything", params={"q": "plinthor"},
                             headers={"X-Api-Key": key}, timeout=HTTP_TIMEOUT)
            both = [threading.Thread(target=search) for _ in range(2)]
            for t in both:
                t.start()
            text = srv.wait_log(r"test delay of \d+ ms begins", 2)
            for t in both:
                t.join()
        finally:
            problems = srv.stop()
        assert not problems, problems
        starts = [log_time(line) for line in text.splitlines() if "test delay of" in line]
        gap = starts[1] - starts[0]
        assert (gap >= delay - 0.01) if serial else (gap < delay), (args, gap, text[-2000:])


def log_time(line):
    """Seconds of a text log line's timestamp (2026-11-28T09:23:33.681Z ...)."""
    import calendar
    stamp = line.split(" ", 1)[0]
    whole, frac = stamp.rstrip("Z").split(".")
    return calendar.timegm(time.strptime(whole, "%Y-%m-%dT%H:%M:%S")) + float("0." + frac)


def test_query_timeout_from_the_file_and_the_flag_over_it(store, tmp_path):
    """[server] query_timeout_ms = 100 with every search first sleeping
    400 ms (the test hook): 503 serviceUnavailable; --query-timeout-ms
    5000 over the same file: 200."""
    d, key = store
    path = conf(tmp_path, "[server]\nquery_timeout_ms = 100\n", "budget.conf")
    for args, status in (([], 503), (["--query-timeout-ms", "5000"], 200)):
        srv = Server(d, args=["--config", path] + args,
                     env={"NEWSD_TEST_SEARCH_DELAY_MS": "400"})
        try:
            r = requests.get(srv.base + "/v2/everything", params={"q": "plinthor"},
                             headers={"X-Api-Key": key}, timeout=HTTP_TIMEOUT)
        finally:
            problems = srv.stop()
        assert not problems, problems
        assert r.status_code == status, (args, r.text)
        if status == 503:
            assert r.json()["code"] == "serviceUnavailable", r.text
