"""Live ingestion (API.md §7, docs/feeds.md): `newsd feeds add|import|list|
remove`, `newsd crawl --once`, and `newsd serve` crawling in the background
(no --no-crawl) until the feeds' articles are searchable through the API.
The feeds are real feed files of tests/data/feeds served by a Python
http.server on 127.0.0.1:0 (it answers If-Modified-Since with 304); nothing
leaves the loopback interface, which newsd refuses to fetch from unless the
config file's [outbound] allow_networks admits it (docs/security.md): the
tests pass such a file with --config, and check the refusals without it.
Expected values were read from the files."""
import functools
import http.server
import json
import os
import re
import signal
import sqlite3
import subprocess
import threading
import time

import pytest

from harness import (BIN, LISTENING, SLOW, Client, allow_loopback, articles_ok, clean_env,
                     cli_ok, log_file, run_cli, sanitizer_findings)

FEEDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "feeds")
GUARDIAN = "rbren__rss-parser/test/input/guardian.rss"
HEISE = "rbren__rss-parser/test/input/heise.atom"
GUARDIAN_ITEMS, HEISE_ITEMS = 55, 15
YOGIS_URL = ("https://www.theguardian.com/artanddesign/gallery/2018/jan/31/"
             "earths-ultimate-yogis-in-pictures-yoga")
WILDFLY_URL = ("http://www.heise.de/developer/meldung/"
               "Java-Anwendungsserver-Red-Hat-gibt-WildFly-10-frei-3088438.html?"
               "wt_mc=rss.developer.beitrag.atom")
WAIT = 60 * SLOW  # a poll, not a sleep: only a failure waits this long (the crawl under a parallel make check took over 15 s once)
SUMMARY = re.compile(r"feeds fetched (\d+), not modified (\d+), failed (\d+); "
                     r"articles new (\d+), updated (\d+)")


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def feed_server():
    handler = functools.partial(QuietHandler, directory=FEEDS)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield "http://127.0.0.1:%d/" % srv.server_address[1]
    srv.shutdown()
    srv.server_close()


def summary(run):
    m = SUMMARY.search(run.out)
    assert m, "no crawl summary in %r" % run
    return tuple(int(x) for x in m.groups())


def feeds_table(store):
    """`newsd feeds list` as {url: row dict} (columns named by the header)."""
    r = cli_ok("feeds", "list", "--store", store)
    lines = r.out.splitlines()
    assert lines and lines[0].split()[:2] == ["ID", "URL"], repr(r)
    rows = {}
    for line in lines[1:]:
        cells = re.split(r"\s{2,}", line.strip(), maxsplit=9)
        assert len(cells) == 10, "bad feeds list row %r" % line
        row = dict(zip(["id", "url", "source", "last_fetch", "status", "last_success", "items",
                        "stored", "next_fetch", "error"], cells))
        rows[row["url"]] = row
    return rows


class CrawlingServer:
    """newsd serve on 127.0.0.1:0 WITH its crawler (harness.Server passes
    --no-crawl)."""

    def __init__(self, store, config=None):
        self.out_path = log_file("newsd-feeds-out-")
        self.err_path = log_file("newsd-feeds-err-")
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(
                [BIN, "serve", "--store", str(store), "--listen", "127.0.0.1:0", "--quiet"]
                + (["--config", str(config)] if config else []),
                stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=clean_env())
        self.base = None
        deadline = time.monotonic() + 30 * SLOW
        while time.monotonic() < deadline and self.proc.poll() is None:
            m = LISTENING.search(self._read(self.out_path))
            if m:
                self.base = "http://127.0.0.1:%s" % m.group(1)
                break
            time.sleep(0.02)
        if self.base is None:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("newsd serve did not start: %s" % self._read(self.err_path))

    @staticmethod
    def _read(path):
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def stop(self):
        """SIGTERM; returns (exit status, seconds it took, stderr)."""
        t = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30 * SLOW)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        took = time.monotonic() - t
        err = self._read(self.err_path)
        for p in (self.out_path, self.err_path):
            os.unlink(p)
        return self.proc.returncode, took, err


def wait_for(fetch, done, what):
    """Call fetch() until done(result) or WAIT seconds pass; the last result."""
    deadline = time.monotonic() + WAIT
    while True:
        res = fetch()
        if done(res) or time.monotonic() > deadline:
            assert done(res), "%s: not seen within %ds: %r" % (what, WAIT, res)
            return res
        time.sleep(0.2)


def test_serve_crawls_feeds_into_the_api(tmp_path, feed_server):
    store = tmp_path / "s"
    conf = allow_loopback(tmp_path)
    key = cli_ok("keys", "create", "--create", "--store", store).out.strip()
    r = cli_ok("feeds", "add", "--create", "--store", store, "--config", conf, feed_server + GUARDIAN,
               "--headlines",
               "--country", "gb", "--category", "general")
    assert re.fullmatch(r"\d+\n", r.out), repr(r)
    cli_ok("feeds", "add", "--create", "--store", store, "--config", conf, feed_server + HEISE,
           "--language", "de")
    before = feeds_table(store)
    assert before[feed_server + GUARDIAN]["last_fetch"] == "never"

    srv = CrawlingServer(store, conf)
    try:
        api = Client(srv.base, key)
        # A word of one Guardian item: found once the crawler stored it.
        body = wait_for(lambda: articles_ok(api.get("/v2/everything", {"q": "yogis"})),
                        lambda b: b["totalResults"] > 0, "/v2/everything?q=yogis")
        assert [a["url"] for a in body["articles"]] == [YOGIS_URL]
        a = body["articles"][0]
        assert a["source"] == {"id": None, "name": "The Guardian"}
        assert a["title"] == "Earth's ultimate yogis \u2013 in pictures"
        assert a["author"] is None
        assert a["publishedAt"] == "2018-01-31T07:00:20Z"
        assert a["description"].startswith(
            "Worried that fitness obsessives were making yoga too commercial")

        # The headline feed (gb, general): the newest headlines of this store.
        body = wait_for(lambda: articles_ok(api.get("/v2/top-headlines", {
            "country": "gb", "pageSize": 100})),
            lambda b: YOGIS_URL in [x["url"] for x in b["articles"]],
            "/v2/top-headlines?country=gb")
        assert all(x["source"]["name"] == "The Guardian" for x in body["articles"])
        assert articles_ok(api.get("/v2/top-headlines", {"country": "de"}))["totalResults"] == 0
        cat = articles_ok(api.get("/v2/top-headlines", {"country": "gb", "category": "general",
                                                        "pageSize": 100}))
        assert cat["totalResults"] == body["totalResults"]

        # The second feed (same host, so a politeness gap later): German.
        body = wait_for(lambda: articles_ok(api.get("/v2/everything", {
            "q": "WildFly", "language": "de"})),
            lambda b: WILDFLY_URL in [x["url"] for x in b["articles"]],
            "/v2/everything?q=WildFly&language=de")
        # Not a headline feed: nothing of it among the headlines.
        heads = articles_ok(api.get("/v2/top-headlines", {"q": "WildFly"}))
        assert heads["totalResults"] == 0
        total = articles_ok(api.get("/v2/everything", {"domains": "theguardian.com",
                                                       "pageSize": 1}))["totalResults"]
        assert total == GUARDIAN_ITEMS
    finally:
        status, took, err = srv.stop()
    assert status == 0, err[-3000:]
    assert took < 10 * SLOW, "serve took %.1fs to stop" % took
    assert not sanitizer_findings(err), err[-3000:]

    rows = feeds_table(store)
    g = rows[feed_server + GUARDIAN]
    assert g["status"] == "200" and g["items"] == str(GUARDIAN_ITEMS)
    assert g["stored"] == str(GUARDIAN_ITEMS) and g["error"] == "-"
    assert g["last_fetch"] != "never"
    assert rows[feed_server + HEISE]["stored"] == str(HEISE_ITEMS)


def test_no_crawl_means_no_crawling(tmp_path, feed_server):
    store = tmp_path / "s"
    conf = allow_loopback(tmp_path)
    cli_ok("feeds", "add", "--create", "--store", store, "--config", conf, feed_server + GUARDIAN)
    proc = subprocess.Popen([BIN, "serve", "--store", str(store), "--listen", "127.0.0.1:0",
                             "--quiet", "--no-crawl", "--config", conf], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=clean_env())
    try:
        line = proc.stdout.readline().decode()
        assert LISTENING.search(line), line
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30 * SLOW)
    assert proc.returncode == 0, err
    # Not "nothing fetched within a few seconds": serve says it started no
    # crawler (the thread that would poll is never made), and nothing was.
    assert b"crawler: off" in err, err[-2000:]
    assert feeds_table(store)[feed_server + GUARDIAN]["last_fetch"] == "never"


def test_crawl_once_prints_a_summary(tmp_path, feed_server):
    store = tmp_path / "s"
    conf = allow_loopback(tmp_path)
    for path in (GUARDIAN, HEISE, "no/such/feed.xml", "newsd/README.md"):  # the last: no feed
        cli_ok("feeds", "add", "--create", "--store", store, "--config", conf, feed_server + path)
    r = cli_ok("crawl", "--store", store, "--once", "--pages", "never", "--config", conf)
    assert summary(r) == (2, 0, 2, GUARDIAN_ITEMS + HEISE_ITEMS, 0), repr(r)
    rows = feeds_table(store)
    missing = rows[feed_server + "no/such/feed.xml"]
    assert missing["status"] == "404" and missing["error"] == "HTTP status 404", missing
    junk = rows[feed_server + "newsd/README.md"]
    assert junk["status"] == "200" and junk["error"].startswith("parse: "), junk
    # Nothing is due any more: a second round fetches nothing.
    r = cli_ok("crawl", "--store", store, "--once", "--pages", "never", "--config", conf)
    assert summary(r) == (0, 0, 0, 0, 0), repr(r)


def test_feeds_import_list_and_remove(tmp_path, feed_server):
    store = tmp_path / "s"
    conf = allow_loopback(tmp_path)
    f = tmp_path / "feeds.jsonl"
    f.write_text("\n".join([
        json.dumps({"url": feed_server + GUARDIAN, "source": "the-guardian-uk", "country": "gb",
                    "category": "general", "language": "en", "headlines": True,
                    "interval": 600, "verified": False}),
        "",
        json.dumps({"url": feed_server + HEISE, "extra": {"ignored": [1, 2]}}),
        "{broken json",
        json.dumps({"url": "ftp://example.com/feed"}),
        json.dumps({"url": feed_server + "x.xml", "category": "weather"}),
        json.dumps({"url": feed_server + "y.xml", "headlines": "yes"}),
    ]) + "\n")
    r = cli_ok("feeds", "import", "--create", "--store", store, "--config", conf, f)
    for n in (4, 5, 6, 7):
        assert re.search(r"line %d:" % n, r.err), repr(r)
    assert not re.search(r"line [123]:", r.err), repr(r)
    assert "added 2" in r.err and "skipped 4" in r.err, repr(r)
    # Again: nothing new, the known urls left alone.
    r = cli_ok("feeds", "import", "--create", "--store", store, "--config", conf, f)
    assert "added 0" in r.err and "already present 2" in r.err, repr(r)

    rows = feeds_table(store)
    assert sorted(rows) == sorted([feed_server + GUARDIAN, feed_server + HEISE])
    g = rows[feed_server + GUARDIAN]
    assert g["source"] == "the-guardian-uk" and g["last_fetch"] == "never"
    assert rows[feed_server + HEISE]["source"] == "-"

    r = run_cli("feeds", "add", "--create", "--store", store, "--config", conf, feed_server + GUARDIAN)
    assert r.rc == 1 and len(r.err.strip().splitlines()) == 1, repr(r)
    cli_ok("feeds", "remove", "--store", store, g["id"])
    assert list(feeds_table(store)) == [feed_server + HEISE]
    r = run_cli("feeds", "remove", "--store", store, g["id"])
    assert r.rc == 1 and len(r.err.strip().splitlines()) == 1, repr(r)


@pytest.mark.parametrize("args", [
    ["feeds"],
    ["feeds", "add"],
    ["feeds", "add", "not a url"],
    ["feeds", "add", "https://example.com/feed", "--country", "gbr"],
    ["feeds", "add", "https://example.com/feed", "--category", "weather"],
    ["feeds", "add", "https://example.com/feed", "--language", "english"],
    ["feeds", "add", "https://example.com/feed", "--interval", "5"],
    ["feeds", "add", "https://example.com/feed", "--interval", "abc"],
    ["feeds", "list", "extra"],
    ["feeds", "remove"],
    ["feeds", "frobnicate"],
    ["feeds", "import"],
    ["crawl", "--bogus"],
    ["crawl", "extra"],
])
def test_usage_errors_exit_2(tmp_path, args):
    r = run_cli(*(args + ["--store", tmp_path / "s"]))
    assert r.rc == 2, repr(r)
    assert r.err.strip(), repr(r)


def test_the_bundled_catalogue_imports(tmp_path):
    cat = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data",
                       "feeds.jsonl")
    with open(cat) as fh:
        lines = [json.loads(x) for x in fh if x.strip()]
    assert all(x.get("verified") is False for x in lines)
    r = cli_ok("feeds", "import", "--create", "--store", tmp_path / "s", cat)
    assert "added %d," % len(lines) in r.err and "skipped 0" in r.err, repr(r)
    assert len(feeds_table(tmp_path / "s")) == len(lines)


# ---- outgoing requests (issue 14: the network policy, secrets in logs) ----

REFUSAL = re.compile(r"refused: (\S+) is [^;]+; allow it with \[outbound\] allow_networks")


class CountingFiles(QuietHandler):
    def do_GET(self):
        self.server.hits += 1
        super().do_GET()


class Redirector(http.server.BaseHTTPRequestHandler):
    """Every request: 302 to the server's target."""

    def do_GET(self):
        self.server.hits += 1
        self.send_response(302)
        self.send_header("Location", self.server.target)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def serve_on(host, handler):
    srv = http.server.ThreadingHTTPServer((host, 0), handler)
    srv.hits = 0
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def articles_stored(store):
    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(str(store), "newsd.db"), uri=True)
    try:
        return db.execute("SELECT count(*) FROM articles").fetchone()[0]
    finally:
        db.close()


def test_a_redirect_is_followed_only_into_allowed_networks(tmp_path):
    """A feed on 127.0.0.1 that 302-redirects to the feed on 127.0.0.2: every
    hop's address is checked."""
    feeds = serve_on("127.0.0.2", functools.partial(CountingFiles, directory=FEEDS))
    hop = serve_on("127.0.0.1", Redirector)
    hop.target = "http://127.0.0.2:%d/%s" % (feeds.server_address[1], GUARDIAN)
    url = "http://127.0.0.1:%d/feed.xml" % hop.server_address[1]
    for d in ("all", "one"):
        (tmp_path / d).mkdir()
    everything = allow_loopback(tmp_path / "all", "127.0.0.0/8")
    first_only = allow_loopback(tmp_path / "one", "127.0.0.1/32")
    try:
        # Allowed: the redirect is followed and the feed stored.
        cli_ok("feeds", "add", "--create", "--store", tmp_path / "a", "--config", everything, url)
        r = cli_ok("crawl", "--store", tmp_path / "a", "--once",
                   "--pages", "never", "--config", everything)
        assert summary(r) == (1, 0, 0, GUARDIAN_ITEMS, 0), repr(r)
        assert (hop.hits, feeds.hits) == (1, 1)
        assert articles_stored(tmp_path / "a") == GUARDIAN_ITEMS

        # The hop's network not allowed: refused there, nothing stored.
        cli_ok("feeds", "add", "--create", "--store", tmp_path / "b", "--config", first_only, url)
        r = cli_ok("crawl", "--store", tmp_path / "b", "--once",
                   "--pages", "never", "--config", first_only)
        assert summary(r) == (0, 0, 1, 0, 0), repr(r)
        row = feeds_table(tmp_path / "b")[url]
        assert row["error"] == ("fetch: refused: 127.0.0.2 is loopback; allow it with "
                                "[outbound] allow_networks"), row
        assert row["stored"] == "0"
        assert articles_stored(tmp_path / "b") == 0
        assert (hop.hits, feeds.hits) == (2, 1)  # the refused address was never contacted

        # No config at all: loopback is refused from the first hop.
        cli_ok("feeds", "add", "--create", "--store", tmp_path / "c", "--config", everything, url)
        r = cli_ok("crawl", "--store", tmp_path / "c", "--once", "--pages", "never")
        assert summary(r) == (0, 0, 1, 0, 0), repr(r)
        row = feeds_table(tmp_path / "c")[url]
        assert row["error"] == ("fetch: refused: 127.0.0.1 is loopback; allow it with "
                                "[outbound] allow_networks"), row
        assert articles_stored(tmp_path / "c") == 0
        assert (hop.hits, feeds.hits) == (2, 1)
    finally:
        for srv in (feeds, hop):
            srv.shutdown()
            srv.server_close()


def test_serve_without_allowed_networks_fetches_nothing_from_loopback(tmp_path, feed_server):
    store = tmp_path / "s"
    cli_ok("feeds", "add", "--create", "--store", store, "--config", allow_loopback(tmp_path),
           feed_server + GUARDIAN)
    srv = CrawlingServer(store)  # no --config: the default policy
    try:
        wait_for(lambda: feeds_table(store)[feed_server + GUARDIAN],
                 lambda row: row["last_fetch"] != "never", "the crawler's first pass")
    finally:
        status, _, err = srv.stop()
    assert status == 0, err[-3000:]
    row = feeds_table(store)[feed_server + GUARDIAN]
    assert REFUSAL.search(row["error"]) and "127.0.0.1 is loopback" in row["error"], row
    assert articles_stored(store) == 0
    assert "127.0.0.1 is loopback" in err


@pytest.mark.parametrize("url", [
    "http://0x7f000001:8080/x", "http://127.1/", "http://[::1]/", "http://2130706433/",
    "http://017700000001:8080/", "http://0177.0.0.1/", "http://%31%32%37.0.0.1/",
    "http://[::ffff:127.0.0.1]/", "http://169.254.169.254/latest/meta-data/",
    "http://10.0.0.1/feed", "http://0.0.0.0/", "https://user:pw@192.168.1.1/rss",
])
def test_feeds_add_refuses_a_blocked_literal_address(tmp_path, url):
    store = tmp_path / "s"
    r = run_cli("feeds", "add", "--create", "--store", store, url)
    assert r.rc == 2, repr(r)
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("newsd: feeds add: refused: "), repr(r)
    assert REFUSAL.search(lines[0]), repr(r)
    assert not store.exists()  # refused before a store was made for it
    # A feed list with it: that line is skipped, the others kept.
    f = tmp_path / "feeds.jsonl"
    f.write_text(json.dumps({"url": url}) + "\n" +
                 json.dumps({"url": "https://example.com/feed"}) + "\n")
    r = cli_ok("feeds", "import", "--create", "--store", store, f)
    assert re.search(r"line 1: refused: ", r.err) and "added 1," in r.err, repr(r)
    # What the config allows is accepted.
    conf = allow_loopback(tmp_path, "0.0.0.0/0 ::/0")
    r = cli_ok("feeds", "add", "--create", "--store", store, "--config", conf, url)
    assert re.fullmatch(r"\d+\n", r.out), repr(r)


def test_a_name_that_resolves_to_loopback_is_refused_when_fetched(tmp_path, feed_server):
    """Names are checked where they are connected to, after DNS: 'localhost'
    stands for a name an attacker points at an internal address."""
    url = feed_server.replace("127.0.0.1", "localhost") + GUARDIAN
    cli_ok("feeds", "add", "--create", "--store", tmp_path / "s", url)  # a name: accepted
    r = cli_ok("crawl", "--store", tmp_path / "s", "--once", "--pages", "never")
    assert summary(r) == (0, 0, 1, 0, 0), repr(r)
    row = feeds_table(tmp_path / "s")[url]
    m = REFUSAL.fullmatch(row["error"].replace("fetch: ", "", 1))
    assert m and m.group(1) in ("127.0.0.1", "::1"), row
    assert articles_stored(tmp_path / "s") == 0
    # Allowed, the same feed is fetched.
    conf = allow_loopback(tmp_path)
    cli_ok("feeds", "add", "--create", "--store", tmp_path / "t", "--config", conf, url)
    r = cli_ok("crawl", "--store", tmp_path / "t", "--once", "--pages", "never", "--config", conf)
    assert summary(r) == (1, 0, 0, GUARDIAN_ITEMS, 0), repr(r)


def test_feed_url_secrets_stay_out_of_logs_and_errors(tmp_path, feed_server):
    """user:PASSWORD@ and ?token=SECRET of a failing feed: masked wherever
    newsd shows the URL (issue 14 item 8)."""
    conf = allow_loopback(tmp_path)
    store = tmp_path / "s"
    base = feed_server.replace("http://", "http://reader:PASSWORD@")
    url = base + "no/such/feed.xml?token=SECRET&lang=en"
    shown = (feed_server.replace("http://", "http://***@") +
             "no/such/feed.xml?token=***&lang=***")
    texts = []
    cli_ok("feeds", "add", "--create", "--store", store, "--config", conf, url)
    r = run_cli("feeds", "add", "--create", "--store", store, "--config", conf, url)
    assert r.rc == 1 and "the feed %s is already registered" % shown in r.err, repr(r)
    texts += [r.out, r.err]
    r = cli_ok("crawl", "--store", store, "--once", "--pages", "never", "--config", conf)
    assert summary(r)[2] == 1, repr(r)
    assert "feed 1 %s: HTTP status 404" % shown in r.err, repr(r)
    texts += [r.out, r.err]
    # The background crawler of serve logs the same way.
    url2 = base + "missing.xml?token=SECRET"
    cli_ok("feeds", "add", "--create", "--store", store, "--config", conf, url2)
    srv = CrawlingServer(store, conf)
    # feeds list masks the password and credential-named query values (the
    # user and the rest tell the feeds apart):
    # test_feeds_manage.py::test_feeds_list_masks_passwords.
    listed = url2.replace("reader:PASSWORD@", "reader:***@").replace("SECRET", "***")
    try:
        wait_for(lambda: feeds_table(store)[listed], lambda row: row["error"] != "-",
                 "the crawler's failure")
    finally:
        status, _, err = srv.stop()
    assert status == 0, err[-3000:]
    assert "missing.xml?token=***: HTTP status 404" in err, err[-3000:]
    texts.append(err)
    for text in texts:
        assert "PASSWORD" not in text and "SECRET" not in text, text[-3000:]
    listing = cli_ok("feeds", "list", "--store", store).out
    assert "PASSWORD" not in listing and "SECRET" not in listing, listing
