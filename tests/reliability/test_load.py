"""Load and abuse (issue 8 §4): wrk with the bench query mix, resident
memory sampled, while the server's crawler polls a feed on loopback and
fetches its items' pages (issue 16); slow clients (slowloris); oversized URLs and headers; the
per-request time budget that stops a runaway query with HTTP 503.

CI: 20,000 bench articles, 200 connections for 10 s after a 4 s warm-up.
RELIABILITY_LONG=1: RELIABILITY_LOAD_N articles (default 1,000,000; the
store is kept in build/reliability/ between runs), 1,000 connections
(spread over loopback source addresses by srcaddr_preload.so, since newsd
limits connections per client address), 60 s. RELIABILITY_LOAD_CONNECTIONS
and RELIABILITY_LOAD_THREADS (serve --threads) change the load; the
figures of each run are written to build/reliability/load-{ci,long}.txt."""
import http.server
import os
import random
import re
import shutil
import socket
import subprocess
import threading
import time

import pytest

from conftest import LONG, REPO, tool
from harness import (BIN, Client, Server, allow_loopback, articles_ok, clean_env, cli_ok, err,
                     reply, serve_http)

N = int(os.environ.get("RELIABILITY_LOAD_N", "1000000")) if LONG else 20000
CONNECTIONS = int(os.environ.get("RELIABILITY_LOAD_CONNECTIONS", "1000" if LONG else "200"))
SECONDS = 60 if LONG else 10
WARMUP = 10 if LONG else 4
BENCH_GEN = os.path.join(REPO, "build", "release", "bench", "gen")
RESULTS = os.path.join(REPO, "build", "reliability")
# The time-budget tests: a budget of BUDGET_MS, and every search first
# sleeps DELAY_MS, past it (see test_query_time_budget_stops_...).
BUDGET_MS = 300
DELAY_MS = 2 * BUDGET_MS


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def threads_of(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    return 0


@pytest.fixture(scope="module")
def bench_store(tmp_path_factory):
    if not os.access(BENCH_GEN, os.X_OK):
        pytest.fail("bench generator missing: make %s" % os.path.relpath(BENCH_GEN, REPO))
    if LONG:
        d = os.path.join(RESULTS, "load-store-%d" % N)
        done = os.path.join(d, "complete")
        if os.path.exists(done):
            return d, open(done).read().strip()
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    else:
        d = str(tmp_path_factory.mktemp("load") / "store")
    src = subprocess.run([BENCH_GEN, "--sources"], capture_output=True, check=True).stdout
    cli_ok("sources", "import", "--create", "--store", d, "-", stdin=src)
    gen = subprocess.Popen([BENCH_GEN, str(N)], stdout=subprocess.PIPE)
    imp = subprocess.run([BIN, "import", "--create", "--store", d, "-"], stdin=gen.stdout,
                         capture_output=True, env=clean_env(), timeout=6 * 3600)
    gen.stdout.close()
    assert gen.wait() == 0 and imp.returncode == 0, imp.stderr[-2000:]
    key = cli_ok("keys", "create", "--create", "--store", d, "--name", "load").out.strip()
    # The index is built here, as an operator builds it ahead (newsd index
    # build), not by the first test's server: a first build under the
    # parallel suite on a slow machine could outlast the server's start
    # bound, and what these tests measure starts once the index is open.
    built = subprocess.run([BIN, "index", "build", "--store", d], capture_output=True, text=True,
                           env=clean_env(), timeout=6 * 3600)
    assert built.returncode == 0 and "index built ahead" in built.stdout, built
    if LONG:
        with open(os.path.join(d, "complete"), "w") as f:
            f.write(key)
    return d, key


def query_mix():
    """The /v2/everything query strings of bench/querymix.tsv."""
    out = []
    with open(os.path.join(REPO, "bench", "querymix.tsv")) as f:
        for line in f:
            if line.startswith("#") or line.startswith("id\t") or not line.strip():
                continue
            out.append(line.rstrip("\n").split("\t")[5])
    assert len(out) > 50
    return out


def wrk(base, key, paths, connections, seconds, workdir, threads=2):
    """Run wrk over paths round robin; returns (figures, raw output)."""
    script = os.path.join(str(workdir), "mix.lua")
    with open(script, "w") as f:
        f.write("wrk.headers['X-Api-Key'] = '%s'\npaths = {\n" % key)
        for p in paths:
            f.write("  %s,\n" % lua_string(p))
        # Each wrk thread runs its own copy; done() proves the script ran
        # (wrk falls back to "GET /" when a script fails to load).
        f.write("}\nlocal i = 0\nfunction request()\n  i = i + 1\n"
                "  return wrk.format('GET', paths[(i % #paths) + 1])\nend\n"
                "function done(summary, latency, requests)\n"
                "  io.write(string.format('mix of %d paths\\n', #paths))\nend\n")
    env = clean_env()
    if connections > 250:
        env["LD_PRELOAD"] = tool("srcaddr_preload.so")
    p = subprocess.run(["wrk", "-t", str(threads), "-c", str(connections), "-d", "%ds" % seconds,
                        "--timeout", "30s", "--latency", "-s", script, base],
                       capture_output=True, text=True, env=env, timeout=seconds + 120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stderr == "", "wrk: " + p.stderr
    assert "mix of %d paths" % len(paths) in p.stdout, p.stdout
    out = p.stdout
    fig = {"requests": int(re.search(r"(\d+) requests in", out).group(1)),
           "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
           "non2xx": int((re.search(r"Non-2xx or 3xx responses: (\d+)", out) or [0, 0])[1]),
           "socket_errors": re.search(r"Socket errors:.*", out).group(0)
           if "Socket errors" in out else "none"}
    for pct in ("50", "90", "99"):
        m = re.search(r"^\s+%s%%\s+([\d.]+)(us|ms|s)\s*$" % pct, out, re.M)
        scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}[m.group(2)]
        fig["p%s_ms" % pct] = float(m.group(1)) * scale
    return fig, out


def lua_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


class RssSampler(threading.Thread):
    def __init__(self, pid, every=0.25):
        super().__init__(daemon=True)
        self.pid, self.every, self.samples, self.stop_flag = pid, every, [], False

    def run(self):
        t0 = time.monotonic()
        while not self.stop_flag:
            self.samples.append((time.monotonic() - t0, rss_kb(self.pid), threads_of(self.pid)))
            time.sleep(self.every)


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def wait_idle(pid, limit=300):
    """Until newsd uses under 10 % of a core for half a second."""
    hz = os.sysconf("SC_CLK_TCK")
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        a = cpu_ticks(pid)
        time.sleep(0.5)
        if cpu_ticks(pid) - a < 0.05 * hz:
            return
    raise AssertionError("newsd still busy %d s after the load stopped" % limit)


PAGE_ITEMS = 300
# Only in the pages' text, never in the feed; new each run (a long run's
# store is kept between runs).
PAGE_WORD = "quarry" + "".join(random.choice("abcdefghij") for _ in range(8))


class PageSite:
    """A feed of PAGE_ITEMS title-and-link items and their pages, each page
    answered after 40 ms, so that the crawler is still fetching pages (one
    connection per host, 64 a pass) while wrk runs."""

    def __init__(self):
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path == "/feed.xml":
                    body = site.feed()
                    ctype = "application/rss+xml"
                else:
                    m = re.match(r"^/load/(\d+)\.html$", self.path)
                    if not m:
                        self.send_error(404)
                        return
                    time.sleep(0.04)
                    body = site.page(int(m.group(1)))
                    ctype = "text/html; charset=utf-8"
                reply(self, body, ctype)

            def log_message(self, *args):
                pass

        self.httpd, self.base = serve_http(Handler)

    def feed(self):
        items = "".join("<item><title>Load page item %d</title><link>%sload/%d.html</link>"
                        "<pubDate>Mon, 07 Jan 2019 10:00:00 GMT</pubDate></item>"
                        % (i, self.base, i) for i in range(PAGE_ITEMS))
        return ("<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>Load</title>"
                "<link>%s</link>%s</channel></rss>" % (self.base, items)).encode()

    def page(self, i):
        para = ("<p>Report %d of the %s survey, a paragraph long enough for a reader view, "
                "with commas, clauses, and words enough that no menu or share bar has as "
                "many; it goes on a little further to be sure of it.</p>" % (i, PAGE_WORD))
        return ("<html><head><title>Load page item %d</title><meta name=\"author\" "
                "content=\"Loader %d\"></head><body><article><h1>Load page item %d</h1>%s"
                "</article></body></html>" % (i, i, i, para * 5)).encode()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def record(name, text):
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, name), "w") as f:
        f.write(text)


@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk not installed (scripts/install-deps.sh)")
def test_load_with_the_bench_mix_no_errors_no_memory_growth(bench_store, tmp_path):
    store, key = bench_store
    paths = ["/v2/everything?" + q for q in query_mix()]
    threads = os.environ.get("RELIABILITY_LOAD_THREADS")
    site = PageSite()
    conf = allow_loopback(tmp_path, "127.0.0.1/32")
    cli_ok("feeds", "add", "--create", "--store", store, "--config", conf, site.base + "feed.xml")
    srv = Server(store, crawl=True, args=["--quiet", "--config", conf]
                 + (["--threads", threads] if threads else []))
    try:
        c = Client(srv.base, key)
        # Every query of the mix is a success on its own once the caches are
        # warm; cold, the heaviest ones may run past the time budget (503).
        cold = {}
        for p in paths:
            r = c.get(p)
            assert r.status_code in (200, 503), (p, r.status_code, r.text[:300])
            if r.status_code == 503:
                cold[p] = r.elapsed.total_seconds()
        for p in paths:
            r = c.get(p)
            assert r.status_code == 200, (p, r.status_code, r.text[:300])
        # Warm-up with few connections, then wait until newsd is idle: a
        # closed wrk leaves behind the requests it had in flight, which newsd
        # still runs (it cannot see that their clients left), and with many
        # connections that backlog would eat the measured run.
        wrk(srv.base, key, paths, min(CONNECTIONS, 50), WARMUP, tmp_path)
        wait_idle(srv.proc.pid)
        sampler = RssSampler(srv.proc.pid)
        sampler.start()
        fig, out = wrk(srv.base, key, paths, CONNECTIONS, SECONDS, tmp_path)
        sampler.stop_flag = True
        sampler.join()
        assert srv.proc.poll() is None, "newsd died under load"
        t = time.monotonic()
        wait_idle(srv.proc.pid)
        drain = time.monotonic() - t
        # Every item's page was fetched and stored under the load: its text
        # (only on the page) is searched, its author is the page's.
        deadline = time.monotonic() + 120
        while True:
            b = articles_ok(c.get("/v2/everything", {"q": PAGE_WORD, "pageSize": 100}))
            if b["totalResults"] == PAGE_ITEMS or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert b["totalResults"] == PAGE_ITEMS, b["totalResults"]
        for a in b["articles"]:
            n = int(a["title"].rsplit(" ", 1)[1])
            assert a["author"] == "Loader %d" % n, a
    finally:
        problems = srv.stop()
        site.stop()
    s = [kb for _, kb, _ in sampler.samples]
    third = max(1, len(s) // 3)
    first, last = max(s[:third]), max(s[-third:])
    series = " ".join("%ds:%dMB" % (t, kb // 1024) for t, kb, _ in sampler.samples[::20])
    report = ("N=%d connections=%d seconds=%d http threads=%s\n%r\nrss_kb first third max %d,"
              " last third max %d, overall max %d\nrss every 5 s: %s\nprocess threads %s\n"
              "over the time budget on a cold cache: %r\nbusy %.1f s after wrk stopped\n\n%s" % (
                  N, CONNECTIONS, SECONDS, threads or "default", fig, first, last, max(s), series,
                  sorted(set(t for _, _, t in sampler.samples)), cold, drain, out))
    record("load-%s.txt" % ("long" if LONG else "ci"), report)
    print(report)
    assert not problems, problems
    assert fig["requests"] > 0
    assert fig["non2xx"] == 0, out
    assert fig["socket_errors"] == "none", out
    # No growth over time: the last third of the run holds no more memory
    # than the first third (caches are warm by then), give or take 10 %.
    assert last <= first * 1.10 + 4096, report


def slow_socket(port, source):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((source, 0))
    s.settimeout(5)
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET /v2/everything?q=people HTTP/1.1\r\nHost: x\r\n")
    return s


def test_slow_clients_cannot_starve_the_server(bench_store):
    """Slowloris: 300 connections from one address trickle a header byte per
    second. newsd keeps at most its per-address limit of them, its threads
    and memory stay put, and a client elsewhere is answered as usual."""
    store, key = bench_store
    srv = Server(store, args=["--quiet"])
    socks = []
    try:
        c = Client(srv.base, key)
        articles_ok(c.get("/v2/everything", {"q": "people"}))
        threads0, rss0 = threads_of(srv.proc.pid), rss_kb(srv.proc.pid)
        for _ in range(300):
            try:
                socks.append(slow_socket(srv.port, "127.0.0.2"))
            except OSError:
                pass
        worst = 0.0
        t_end = time.monotonic() + (30 if LONG else 8)
        while time.monotonic() < t_end:
            alive = []
            for s in socks:  # one more header byte each, per round
                try:
                    s.send(b"X")
                    alive.append(s)
                except OSError:
                    s.close()
            socks = alive
            t = time.monotonic()
            b = articles_ok(c.get("/v2/everything", {"q": "people", "pageSize": 5}, fresh=True))
            worst = max(worst, time.monotonic() - t)
            assert b["totalResults"] > 0
            time.sleep(max(0.0, 1.0 - (time.monotonic() - t)))
        # Sockets the server closed show it on a read.
        still = 0
        for s in socks:
            s.setblocking(False)
            try:
                if s.recv(1) == b"":
                    continue
            except BlockingIOError:
                still += 1
            except OSError:
                continue
        threads1, rss1 = threads_of(srv.proc.pid), rss_kb(srv.proc.pid)
        print("slowloris: %d of 300 slow connections held, worst normal request %.3f s, "
              "threads %d -> %d, rss %d -> %d kB" % (still, worst, threads0, threads1, rss0, rss1))
        assert still <= 256, "per-address connection limit not enforced: %d held" % still
        assert worst < 2.0, "a normal request took %.2f s during the slowloris" % worst
        assert threads1 == threads0, (threads0, threads1)
        assert rss1 < rss0 + 64 * 1024, (rss0, rss1)
    finally:
        for s in socks:
            s.close()
        problems = srv.stop()
    assert not problems, problems


def test_oversized_urls_and_headers_are_refused_without_harm(bench_store):
    """Hundreds of oversized requests at once get 414/431 (or a closed
    connection), memory stays bounded and normal requests go on."""
    store, key = bench_store
    srv = Server(store, args=["--quiet"])
    try:
        c = Client(srv.base, key)
        rss0 = rss_kb(srv.proc.pid)
        long_url = "/v2/everything?q=" + "a" * (64 * 1024)
        big_headers = "".join("X-Junk-%d: %s\r\n" % (i, "b" * 1000) for i in range(64))
        results = []

        def attack(i):
            try:
                with socket.create_connection(("127.0.0.1", srv.port), timeout=20) as s:
                    if i % 2:
                        s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % long_url).encode())
                    else:
                        s.sendall(("GET /v2/everything?q=x HTTP/1.1\r\nHost: x\r\n%s\r\n"
                                   % big_headers).encode())
                    data = s.recv(65536)
                    results.append(data.split(b"\r\n", 1)[0])
            except OSError as e:  # the server may close before reading it all
                results.append(repr(e).encode())

        ts = [threading.Thread(target=attack, args=(i,)) for i in range(200)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(60)
        statuses = {}
        for line in results:
            statuses[line[:40]] = statuses.get(line[:40], 0) + 1
        print("oversized requests:", statuses)
        assert len(results) == 200
        # Every answer that came is a refusal, never a success or a 5xx.
        for line in results:
            if line.startswith(b"HTTP/"):
                assert line.split()[1] in (b"414", b"431", b"400"), line
        assert any(line.startswith(b"HTTP/1.1 414") for line in results), statuses
        assert any(line.startswith(b"HTTP/1.1 431") for line in results), statuses
        rss1 = rss_kb(srv.proc.pid)
        assert rss1 < rss0 + 64 * 1024, (rss0, rss1)
        err(c.get("/v2/everything?q=" + "a" * 9000), 414, "requestTooLarge")
        articles_ok(c.get("/v2/everything", {"q": "people"}))
    finally:
        problems = srv.stop()
    assert not problems, problems


def test_query_time_budget_stops_a_runaway_query_with_503(bench_store, monkeypatch):
    """A search past --query-timeout-ms ends with the NewsAPI error envelope,
    HTTP 503 serviceUnavailable; the server and its connections are fine
    afterwards. The same query without the tiny budget succeeds. The engine
    answers even this query within 1 ms on 20,000 articles, so every search
    first sleeps DELAY_MS (NEWSD_TEST_SEARCH_DELAY_MS): its budget, counted
    from arrival, is spent before it starts, whatever the machine's speed.
    The budget is not 1 ms: a request that waited for a worker longer than
    the budget is refused before it starts ("too busy", a different 503),
    and on a loaded machine 1 ms of scheduling delay is common."""
    store, key = bench_store
    heavy = {"q": "people OR time OR world OR year", "sortBy": "relevancy", "pageSize": 100}
    monkeypatch.setenv("NEWSD_TEST_SEARCH_DELAY_MS", str(DELAY_MS))
    fast = Server(store, args=["--quiet", "--query-timeout-ms", str(BUDGET_MS)])
    monkeypatch.delenv("NEWSD_TEST_SEARCH_DELAY_MS")
    try:
        c = Client(fast.base, key)
        for _ in range(3):
            b = err(c.get("/v2/everything", heavy), 503, "serviceUnavailable")
            assert "too long" in b["message"], b
        # The same (pooled) connections go on answering: the delay puts
        # even a cheap search past the budget (and a cheap search's wait for
        # a worker may too), so each answer is a 200 or a 503 envelope, never
        # a dropped connection or another error.
        for _ in range(5):
            r = c.get("/v2/everything", {"q": "zzqqxxnotaword"})
            if r.status_code != 200:
                err(r, 503, "serviceUnavailable")
    finally:
        problems = fast.stop()
    assert not problems, problems
    normal = Server(store, args=["--quiet"])
    try:
        b = articles_ok(Client(normal.base, key).get("/v2/everything", heavy))
        assert b["totalResults"] > 0
    finally:
        problems = normal.stop()
    assert not problems, problems


def test_a_query_stopped_by_the_time_budget_counts_toward_the_quota(bench_store, tmp_path,
                                                                   monkeypatch):
    """Issue 14 item 3: a search that ran until the time budget stopped it
    counts, or queries made slow on purpose would be free. A key of three
    requests a day: 200, 200, 503 (counted: Remaining 0), then 429. Before
    the fix the 503 was given back and the fourth request was served."""
    store, _ = bench_store
    cfg = tmp_path / "plans.conf"
    cfg.write_text("[plan three]\nrequests_per_day = 3\n")
    key = cli_ok("keys", "create", "--create", "--store", store, "--name", "three-%d" % os.getpid(),
                 "--plan", "three", "--config", str(cfg)).out.strip()
    heavy = {"q": "people OR time OR world OR year", "sortBy": "relevancy", "pageSize": 100}
    # Past the budget whatever the machine's speed (see the test above).
    monkeypatch.setenv("NEWSD_TEST_SEARCH_DELAY_MS", str(DELAY_MS))
    srv = Server(store, args=["--quiet", "--config", str(cfg), "--query-timeout-ms",
                              str(BUDGET_MS)])
    monkeypatch.delenv("NEWSD_TEST_SEARCH_DELAY_MS")
    try:
        c = Client(srv.base, key)
        left = []
        for _ in range(2):  # no search: the budget cannot stop these
            r = c.get("/v2/top-headlines/sources")
            assert r.status_code == 200, r.text
            left.append(r.headers["X-RateLimit-Remaining"])
        r = c.get("/v2/everything", heavy)
        b = err(r, 503, "serviceUnavailable")
        assert "too long" in b["message"], b
        left.append(r.headers["X-RateLimit-Remaining"])
        assert left == ["2", "1", "0"], left
        err(c.get("/v2/top-headlines/sources"), 429, "apiKeyExhausted")
    finally:
        problems = srv.stop()
    assert not problems, problems


def test_query_timeout_option_is_checked(newsd_bin, tmp_path):
    r = subprocess.run([newsd_bin, "serve", "--store", str(tmp_path / "s"), "--listen",
                        "127.0.0.1:0", "--query-timeout-ms", "soon"], capture_output=True,
                       text=True, env=clean_env(), timeout=30)
    assert r.returncode != 0 and "--query-timeout-ms" in r.stderr, r
