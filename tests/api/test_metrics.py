"""/metrics: the Prometheus text format, exact counts under concurrency, the
histogram's invariants, articles stored, the placeholders, and
--metrics-listen (a listener of its own; 404 on the main one)."""
import os
import re
import threading
import time

import pytest
import requests

from harness import HTTP_TIMEOUT, SLOW, Client, Server, err, run_cli

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
    """A client for the --metrics-listen address. Not harness.Client: the
    session checks harness.Client's answers against docs/openapi.json, which
    describes the main listener."""

    def __init__(self, base):
        self.base = base

    def request(self, method, path, params=None, key=None):
        return requests.request(method, self.base + path, params=params, timeout=HTTP_TIMEOUT)

    def get(self, path, params=None, key=None):
        return self.request("GET", path, params)


def requests_total(samples, endpoint, status):
    return samples.get(("newsd_http_requests_total",
                        frozenset({("endpoint", endpoint), ("status", str(status))})), 0)


def test_metrics_needs_no_key_and_has_every_family(api):
    samples, types = scrape(api)
    assert types["newsd_http_requests_total"] == "counter"
    assert types["newsd_http_request_duration_seconds"] == "histogram"
    assert types["newsd_articles_stored"] == "gauge"
    for name, kind in [("newsd_feeds_polled_total", "counter"),
                       ("newsd_feeds_failed_total", "counter"),
                       ("newsd_feeds_failing", "gauge"), ("newsd_ingest_lag_seconds", "gauge")]:
        assert types[name] == kind
        assert (name, frozenset()) in samples
    # a bad key is no reason to refuse the scrape
    r = api.get("/metrics", key="bogus")
    assert r.status_code == 200


def test_articles_stored_is_the_store_size(api, corpus):
    samples, _ = scrape(api)
    assert samples[("newsd_articles_stored", frozenset())] == len(corpus.articles)


def test_the_index_shows_its_size_and_its_count_cache(api, corpus):
    samples, types = scrape(api)
    assert samples[("newsd_index_ready", frozenset())] == 1
    if os.environ.get("NEWSD_INDEX") == "fts5":
        assert ("newsd_index_documents", frozenset()) not in samples
        return
    assert samples[("newsd_index_documents", frozenset())] == len(corpus.articles)
    assert samples[("newsd_index_segments", frozenset())] >= 1
    assert samples[("newsd_index_file_bytes", frozenset())] >= 0
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
    after, _ = scrape(api)
    for endpoint, status in [("everything", 200), ("everything", 401), ("sources", 200),
                             ("none", 404), ("sources", 405), ("healthz", 200)]:
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


def test_metrics_listen_has_its_own_address(store, corpus):
    srv = Server(store.path, now=corpus.now, args=["--metrics-listen", "127.0.0.1:0"])
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
def test_bad_metrics_listen_fails_cleanly(store, value):
    r = run_cli("serve", "--store", store.path, "--listen", "127.0.0.1:0", "--no-crawl",
                "--metrics-listen", value, timeout=30 * SLOW)
    assert r.rc != 0 and "newsd:" in r.err, r
