"""/metrics: the Prometheus text format, exact counts under concurrency, the
histogram's invariants, --metrics-listen (a listener of its own; 404 on the
main one), and every metric moved by the event it counts: requests, an
import (articles stored), the crawler's polls, failures, failing feeds and
ingest lag (loopback feeds served by a Python http.server)."""
import email.utils
import functools
import http.server
import json
import os
import re
import sqlite3
import threading
import time

import pytest
import requests

from harness import HTTP_TIMEOUT, SLOW, Client, Server, cli_ok, err, run_cli

LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def parse(text):
    """{(name, frozenset(labels)): value} and {family: type}; checks the
    format as it goes: every sample belongs to a family with # TYPE, each
    family is declared once, before its samples."""
    samples, types = {}, {}
    assert text.endswith("\n")
    for line in text.splitlines():
        if line.startswith("# HELP "):
            continue
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            assert name not in types, "family %s declared twice" % name
            assert kind in ("counter", "gauge", "histogram", "summary", "untyped")
            types[name] = kind
            continue
        m = LINE.match(line)
        assert m, "not a sample line: %r" % line
        name, labels = m.group(1), frozenset(LABEL.findall(m.group(3) or ""))
        family = re.sub(r"_(bucket|sum|count)$", "", name) if name not in types else name
        assert family in types, "sample %s before its # TYPE" % name
        assert (name, labels) not in samples, "duplicate series %s %s" % (name, labels)
        samples[(name, labels)] = float(m.group(4))
    return samples, types


def scrape(client, path="/metrics"):
    r = client.get(path, key=None)
    assert r.status_code == 200, r.text[:300]
    assert r.headers["Content-Type"] == CONTENT_TYPE
    return parse(r.text)


class Plain:
    """A client for the --metrics-listen address (and for scrapes of a test's
    own server). Not harness.Client: the session checks harness.Client's
    answers against docs/openapi.json, which describes the main listener."""

    def __init__(self, base):
        self.base = base

    def request(self, method, path, params=None, key=None):
        return requests.request(method, self.base + path, params=params, timeout=HTTP_TIMEOUT)

    def get(self, path, params=None, key=None):
        return self.request("GET", path, params)


def requests_total(samples, endpoint, status):
    return samples.get(("newsd_http_requests_total",
                        frozenset({("endpoint", endpoint), ("status", str(status))})), 0)


FEED_METRICS = [("newsd_feeds_polled_total", "counter"), ("newsd_feeds_failed_total", "counter"),
                ("newsd_feeds_failing", "gauge"), ("newsd_pages_fetched_total", "counter"),
                ("newsd_pages_failed_total", "counter"), ("newsd_pages_retries_total", "counter"),
                ("newsd_pages_no_article_total", "counter"), ("newsd_pages_waiting", "gauge")]


def value(samples, name):
    return samples.get((name, frozenset()))


def test_metrics_needs_no_key_and_a_server_without_crawler_shows_its_metrics_at_0(api):
    """The session's store has no feed, so this shows the families only;
    that --no-crawl polls nothing, on a store with a due feed, is
    test_feeds.py::test_no_crawl_means_no_crawling and
    test_proxy.py::test_the_config_file_alone_sets_every_serve_setting."""
    samples, types = scrape(api)
    assert types["newsd_http_requests_total"] == "counter"
    assert types["newsd_http_request_duration_seconds"] == "histogram"
    assert types["newsd_articles_stored"] == "gauge"
    # --no-crawl: the crawler's metrics are shown, and nothing moved them
    for name, kind in FEED_METRICS:
        assert types[name] == kind
        assert value(samples, name) == 0, name
    # No feed read: the ingest lag is unknown, so it is absent (a 0 would
    # say "fresh" to an alert on it), and an embedded store has no cluster lag.
    assert "newsd_ingest_lag_seconds" not in types
    assert not [n for n in types if n.startswith("newsd_cluster_")], types
    # a bad key is no reason to refuse the scrape
    r = api.get("/metrics", key="bogus")
    assert r.status_code == 200


def test_articles_stored_is_the_store_size(api, corpus):
    samples, _ = scrape(api)
    assert samples[("newsd_articles_stored", frozenset())] == len(corpus.articles)


def test_the_index_shows_its_size_and_its_count_cache(api, corpus, store):
    samples, types = scrape(api)
    assert samples[("newsd_index_ready", frozenset())] == 1
    if os.environ.get("NEWSD_INDEX") == "fts5":
        assert ("newsd_index_documents", frozenset()) not in samples
        return
    assert samples[("newsd_index_documents", frozenset())] == len(corpus.articles)
    # The figures of the files themselves (the session's server wrote its
    # segments at start and nothing since: the store is only read).
    engine = os.path.join(store.path, "newsd.db.engine")
    segs = [os.path.join(engine, f) for f in os.listdir(engine) if f.endswith(".seg")]
    assert samples[("newsd_index_segments", frozenset())] == len(segs) >= 1
    assert samples[("newsd_index_file_bytes", frozenset())] == sum(map(os.path.getsize, segs))
    assert types["newsd_index_count_cache_hits_total"] == "counter"
    # The same search twice: the second one's counts come from the cache.
    before = samples[("newsd_index_count_cache_hits_total", frozenset())]
    for _ in range(2):
        r = api.get("/v2/everything", {"q": "election OR budget", "pageSize": 1})
        assert r.status_code == 200
    after, _ = scrape(api)
    assert after[("newsd_index_count_cache_hits_total", frozenset())] > before


def test_requests_are_counted_exactly_under_concurrency(api, key):
    """8 threads, 25 requests each, all at once: the counter grows by exactly 200."""
    before, _ = scrape(api)
    errors = []

    def worker():
        c = Client(api.base, key)
        for _ in range(25):
            r = c.get("/v2/top-headlines", [("pageSize", "3")])  # parametersMissing
            if r.status_code != 400:
                errors.append(r.status_code)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    after, _ = scrape(api)
    assert requests_total(after, "top-headlines", 400) - \
        requests_total(before, "top-headlines", 400) == 200
    count = ("newsd_http_request_duration_seconds_count",
             frozenset({("endpoint", "top-headlines")}))
    assert after[count] - before.get(count, 0) == 200


def test_statuses_and_endpoints_are_labelled(api):
    before, _ = scrape(api)
    api.get("/v2/everything", [("q", "plinthor")])
    api.get("/v2/everything", [("q", "plinthor")], key=None)
    api.get("/v2/sources")
    api.get("/no/such/path", key=None)
    api.request("DELETE", "/v2/sources")
    api.get("/healthz", key=None)
    api.get("/v2/stories", [("q", "plinthor")])
    api.get("/v2/stories/12345")
    after, _ = scrape(api)
    for endpoint, status in [("everything", 200), ("everything", 401), ("sources", 200),
                             ("none", 404), ("sources", 405), ("healthz", 200),
                             ("stories", 200), ("stories", 404)]:
        assert requests_total(after, endpoint, status) - \
            requests_total(before, endpoint, status) == 1, (endpoint, status)
    # the scrape that produced `before` is counted too
    assert requests_total(after, "metrics", 200) - requests_total(before, "metrics", 200) == 1


def test_histogram_invariants(api):
    api.get("/v2/everything", [("q", "plinthor")])
    samples, _ = scrape(api)
    endpoints = {dict(l)["endpoint"] for (n, l) in samples
                 if n == "newsd_http_request_duration_seconds_count"}
    assert {"everything", "metrics"} <= endpoints
    for ep in endpoints:
        buckets = sorted(
            ((float("inf") if dict(l)["le"] == "+Inf" else float(dict(l)["le"])), v)
            for (n, l), v in samples.items()
            if n == "newsd_http_request_duration_seconds_bucket" and dict(l)["endpoint"] == ep)
        assert buckets[-1][0] == float("inf")
        counts = [v for _, v in buckets]
        assert counts == sorted(counts), "buckets of %s not cumulative: %s" % (ep, buckets)
        total = samples[("newsd_http_request_duration_seconds_count",
                         frozenset({("endpoint", ep)}))]
        assert counts[-1] == total
        # every request of the endpoint, whatever its status, is in the histogram
        by_status = sum(v for (n, l), v in samples.items()
                        if n == "newsd_http_requests_total" and dict(l)["endpoint"] == ep)
        assert by_status == total, ep
        s = samples[("newsd_http_request_duration_seconds_sum", frozenset({("endpoint", ep)}))]
        assert 0 <= s < total * 30 * SLOW


def copy_of(store, tmp_path):
    """A copy of the session's store (its keys and articles; the index is
    rebuilt from the table): one store takes one server (issue 30 item 13)
    and the session's is serving."""
    path = tmp_path / "copy"
    path.mkdir()
    src = sqlite3.connect("file:%s?mode=ro" % os.path.join(store.path, "newsd.db"), uri=True)
    dst = sqlite3.connect(str(path / "newsd.db"))
    src.backup(dst)
    dst.close()
    src.close()
    return str(path)


def test_metrics_listen_has_its_own_address(store, corpus, tmp_path):
    srv = Server(copy_of(store, tmp_path), now=corpus.now,
                 args=["--metrics-listen", "127.0.0.1:0"])
    try:
        deadline = time.monotonic() + 10 * SLOW
        m = None
        while m is None and time.monotonic() < deadline:
            with open(srv.out_path, encoding="utf-8") as f:
                m = re.search(r"metrics on (http://127\.0\.0\.1:\d+)/metrics", f.read())
            if m is None:
                time.sleep(0.02)
        assert m, "serve --metrics-listen did not print its address"
        metrics = Plain(m.group(1))
        main = Client(srv.base, store.keys["main"])
        assert m.group(1) != srv.base
        main.get("/v2/everything", [("q", "plinthor")])
        samples, _ = scrape(metrics)
        assert requests_total(samples, "everything", 200) == 1
        assert samples[("newsd_articles_stored", frozenset())] == len(corpus.articles)
        # only /metrics there; not on the main listener
        err(main.get("/metrics", key=None), 404, "routeNotFound")
        err(metrics.get("/v2/everything", [("q", "plinthor")], key=None), 404, "routeNotFound")
        err(metrics.request("POST", "/metrics", key=None), 405, "methodNotAllowed")
        r = metrics.request("HEAD", "/metrics", key=None)
        assert r.status_code == 200 and r.content == b""
        samples, _ = scrape(metrics)
        # the main listener refused /metrics, the metrics listener /v2/everything
        assert requests_total(samples, "none", 404) == 2
        assert requests_total(samples, "metrics", 405) == 1
    finally:
        problems = srv.stop()
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("value", ["nohost", "127.0.0.1:99999"])
def test_bad_metrics_listen_fails_cleanly(tmp_path, value):
    r = run_cli("serve", "--store", str(tmp_path / "s"), "--listen", "127.0.0.1:0", "--no-crawl",
                "--metrics-listen", value, timeout=30 * SLOW)
    # A failure to listen, as for --listen: exit 1 with one line naming it.
    assert r.rc == 1 and "newsd: cannot listen on %s: " % value in r.err, r


def test_an_import_moves_articles_stored(tmp_path):
    store = tmp_path / "s"
    srv = Server(store)
    try:
        m = Plain(srv.base)
        before, _ = scrape(m)
        f = tmp_path / "three.jsonl"
        f.write_text("".join(json.dumps({
            "source": {"id": None, "name": "Metrics Test"}, "title": "Counted article %d" % i,
            "url": "https://metrics.example/%d" % i,
            "publishedAt": "2021-07-10T14:43:%02dZ" % i}) + "\n" for i in range(3)))
        cli_ok("import", "--create", "--store", store, f)
        after, _ = scrape(m)
        assert value(after, "newsd_articles_stored") - value(before, "newsd_articles_stored") == 3
    finally:
        problems = srv.stop()
    assert not problems, "\n".join(problems)


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def feed_dir(tmp_path):
    """A directory served over loopback HTTP: (path, base URL)."""
    d = tmp_path / "feeds"
    d.mkdir()
    srv = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(d)))
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield d, "http://127.0.0.1:%d/" % srv.server_address[1]
    srv.shutdown()
    srv.server_close()


def rss(items):
    """An RSS 2.0 document of (title, link, unix seconds) items."""
    body = "".join(
        "<item><title>%s</title><link>%s</link><pubDate>%s</pubDate></item>"
        % (title, link, email.utils.formatdate(when, usegmt=True)) for title, link, when in items)
    return ('<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
            "<title>Metrics feed</title><link>https://metrics.example/</link>%s"
            "</channel></rss>" % body)


def wait_until(fetch, done, what, seconds=15 * SLOW):
    deadline = time.monotonic() + seconds
    while True:
        res = fetch()
        if done(res) or time.monotonic() > deadline:
            assert done(res), "%s: not seen within %ds" % (what, seconds)
            return res
        time.sleep(0.2)


def test_the_crawler_counts_polls_failures_failing_feeds_and_ingest_lag(tmp_path, feed_dir):
    """A served store with its crawler; one good loopback feed whose newest
    item is an hour old and one that answers 404. Each poll moves
    polled_total, the 404 failed_total and failing; the lag is the age of
    the newest item."""
    d, base = feed_dir
    published = int(time.time()) - 3600
    (d / "good.xml").write_text(rss([
        ("Metrics item new", "https://metrics.example/new", published),
        ("Metrics item old", "https://metrics.example/old", published - 3600)]))
    conf = tmp_path / "newsd.conf"
    # The crawler fetches the tests' loopback feeds only when allowed.
    conf.write_text("[outbound]\n"
                    "allow_networks = 127.0.0.0/8\n"
                    "[server]\n"
                    "threads = 2\n"
                    "pages = never\n")
    store = tmp_path / "s"
    srv = Server(store, args=["--config", str(conf), "--quiet"], crawl=True)
    try:
        m = Plain(srv.base)
        before, types = scrape(m)
        for name, _kind in FEED_METRICS:
            assert value(before, name) == 0, name  # no feeds yet
        assert "newsd_ingest_lag_seconds" not in types  # unknown until a feed is read
        cli_ok("feeds", "add", "--create", "--store", store, "--config", str(conf), base + "good.xml")
        cli_ok("feeds", "add", "--create", "--store", store, "--config", str(conf), base + "missing.xml")

        def polled(samples):
            return value(samples, "newsd_feeds_polled_total")

        # Both feeds share a host: polled a politeness gap apart.
        after = wait_until(lambda: scrape(m)[0], lambda x: polled(x) == 2, "two polls")
        scraped_at = time.time()
        assert value(after, "newsd_feeds_failed_total") == 1
        assert value(after, "newsd_feeds_failing") == 1
        lag = value(after, "newsd_ingest_lag_seconds")
        assert 3600 <= lag <= scraped_at - published + 1, lag
        # nothing is due again for minutes: the lag grows (waited for, not
        # slept through) while the counts stay
        later = wait_until(lambda: scrape(m)[0],
                           lambda x: value(x, "newsd_ingest_lag_seconds") > lag, "the lag grow")
        assert polled(later) == 2 and value(later, "newsd_feeds_failed_total") == 1
        assert value(later, "newsd_ingest_lag_seconds") > lag
    finally:
        problems = srv.stop()
    assert not problems, "\n".join(problems)


def test_build_info_names_the_build_that_runs(api):
    """newsd_build_info carries the release and commit newsd --version prints."""
    samples, types = scrape(api)
    assert types["newsd_build_info"] == "gauge"
    infos = [labels for (name, labels), v in samples.items()
             if name == "newsd_build_info" and v == 1]
    assert len(infos) == 1, infos
    labels = dict(infos[0])
    out = run_cli("--version").out.splitlines()[0]  # the second line: schema and format
    assert out == "newsd %s (commit %s)" % (labels["version"], labels["commit"]), (out, labels)


def test_every_metric_the_documented_alerts_use_exists(api):
    """docs/operations.md "Monitoring": each metric its alert rules name is
    exported (issue 30 item 7: the docs told operators to alert on values
    that were only in /healthz's JSON). Two families exist only where they
    mean something; their tests are named here."""
    from harness import REPO
    text = open(os.path.join(REPO, "docs", "operations.md"), encoding="utf-8").read()
    block = re.search(r"## Monitoring\n.*?```yaml\n(.*?)```", text, re.S)
    assert block, "docs/operations.md has no Monitoring rules"
    named = {re.sub(r"_bucket$", "", n) for n in re.findall(r"\bnewsd_[a-z_]+", block.group(1))}
    assert len(named) >= 10, named
    _, types = scrape(api)
    conditional = {
        "newsd_ingest_lag_seconds": "test_the_crawler_counts_polls_failures_failing_feeds_and_ingest_lag",
        "newsd_cluster_store_reachable": "tests/cluster/test_cluster.py",
        "newsd_cluster_lag_seconds": "tests/cluster/test_cluster.py",
        # the engine's (not the fts5 index's): tests/reliability/test_engine_damage.py
        "newsd_index_corrupt_total": "test_a_damaged_document_frequency_is_a_500_and_a_rebuild",
    }
    missing = [n for n in named if n not in types and n not in conditional]
    assert not missing, missing
