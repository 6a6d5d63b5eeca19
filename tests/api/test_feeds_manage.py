"""Managing feeds (docs/feeds.md): OPML import and export through the real
CLI (a round trip into a new store, a reader's export with nested
folders), `feeds edit`, `pause` and `resume` with a loopback feed server
that proves a paused feed is not fetched and a resumed one is, the
configured User-Agent as the server receives it, and the [outbound] proxy:
a tiny HTTP proxy on loopback sees the requests, and a target whose name
resolves to a refused address is never asked of it (also after a
redirect). Feed files come from tests/data/feeds."""
import functools
import http.server
import json
import os
import threading
import time

import pytest

from harness import allow_loopback, cli_ok, run_cli, sanitizer_findings

FEEDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "feeds")
GUARDIAN = "rbren__rss-parser/test/input/guardian.rss"
HEISE = "rbren__rss-parser/test/input/heise.atom"
SETTINGS = ("url", "source", "country", "category", "language", "headlines", "interval",
            "state")


class Recorder:
    """Requests a test server saw: (path, User-Agent) in order."""

    def __init__(self):
        self.lock = threading.Lock()
        self.seen = []

    def add(self, path, ua):
        with self.lock:
            self.seen.append((path, ua))

    def paths(self):
        with self.lock:
            return [p for p, _ in self.seen]


def serve(handler):
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


@pytest.fixture
def feed_server():
    """tests/data/feeds on loopback, every request recorded."""
    rec = Recorder()

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self):
            rec.add(self.path, self.headers.get("User-Agent"))
            super().do_GET()

        def log_message(self, *args):
            pass

    srv = serve(functools.partial(Handler, directory=FEEDS))
    yield "http://127.0.0.1:%d/" % srv.server_address[1], rec
    srv.shutdown()
    srv.server_close()


@pytest.fixture
def proxy():
    """A forward proxy that answers every request itself: GET of an
    absolute URI, recorded; ".../redirect" answers 302 to localhost (a
    refused address), anything else the Guardian feed."""
    rec = Recorder()
    with open(os.path.join(FEEDS, GUARDIAN), "rb") as f:
        body = f.read()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            rec.add(self.path, self.headers.get("User-Agent"))
            if self.path.endswith("/redirect"):
                self.send_response(302)
                self.send_header("Location", "http://localhost:9/after-redirect.xml")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/rss+xml")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_CONNECT(self):
            # An https:// target: the tunnel request is what a proxy sees.
            rec.add("CONNECT " + self.path, self.headers.get("User-Agent"))
            self.send_response(403)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    srv = serve(Handler)
    yield "http://127.0.0.1:%d" % srv.server_address[1], rec
    srv.shutdown()
    srv.server_close()


def feeds_json(store):
    return json.loads(cli_ok("feeds", "list", "--store", store, "--format", "json").out)


def settings(store):
    return [{k: f.get(k) for k in SETTINGS} for f in feeds_json(store)]


def add(store, *args):
    return int(cli_ok("feeds", "add", "--create", "--store", store, *args).out)


# ---- OPML and JSONL import and export ----------------------------------------

def test_an_export_reimports_to_the_same_feeds(tmp_path):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    add(a, "https://feeds.example.org/world.rss", "--source", "bbc-news", "--country", "gb",
        "--category", "general", "--language", "en", "--headlines", "--interval", "600")
    add(a, "https://news.example.net/feed?x=1&y=<2>", "--language", "de")
    paused = add(a, "https://c.example.com/atom.xml", "--category", "technology")
    cli_ok("feeds", "pause", "--store", a, paused)
    want = settings(a)
    assert [f["state"] for f in want] == ["active", "active", "paused"]

    opml = cli_ok("feeds", "export", "--store", a).out
    assert opml.startswith("<?xml") and "<opml version=\"2.0\"" in opml, opml
    assert 'xmlUrl="https://news.example.net/feed?x=1&amp;y=&lt;2&gt;"' in opml, opml
    (tmp_path / "a.opml").write_text(opml)
    r = cli_ok("feeds", "import", "--create", "--store", b, tmp_path / "a.opml")
    assert "feeds added 3, already present 0, skipped 0" in r.err, repr(r)
    assert settings(b) == want
    assert cli_ok("feeds", "export", "--store", b).out == opml
    # Again: nothing changes.
    r = cli_ok("feeds", "import", "--create", "--store", b, tmp_path / "a.opml")
    assert "feeds added 0, already present 3" in r.err, repr(r)

    jsonl = cli_ok("feeds", "export", "--store", a, "--format", "jsonl").out
    lines = [json.loads(x) for x in jsonl.splitlines()]
    assert [x["paused"] for x in lines] == [False, False, True]
    r = cli_ok("feeds", "import", "--create", "--store", c, "-", stdin=jsonl.encode())
    assert "feeds added 3" in r.err, repr(r)
    assert settings(c) == want


CREDENTIALED = [
    # (as added, as feeds list shows it)
    ("https://reader:s3cret-PW@feeds.example.org/private.rss",
     "https://reader:***@feeds.example.org/private.rss"),
    ("https://reader:p%40ss%3APW@example.net/feed?lang=en&password=PWQ",
     "https://reader:***@example.net/feed?lang=en&password=***"),
    ("https://reader:PW@[2606:4700::1111]:8443/atom.xml",
     "https://reader:***@[2606:4700::1111]:8443/atom.xml"),
    ("https://token-user@example.com/rss", "https://token-user@example.com/rss"),
    ("https://example.com/rss?lang=en&apikey=s3cret&Token=s3cret",
     "https://example.com/rss?lang=en&apikey=***&Token=***"),
    ("https://example.org/plain.xml", "https://example.org/plain.xml"),
]


def test_feeds_list_masks_passwords(tmp_path):
    """A listing gets pasted into tickets: `feeds list` (table and json) shows
    a feed URL with its password and query credentials as ***, the user
    and the rest kept; the
    export, made to be imported again, keeps the URL whole (docs/feeds.md)."""
    store = tmp_path / "s"
    for url, _ in CREDENTIALED:
        add(store, url)
    table = cli_ok("feeds", "list", "--store", store).out
    listed = json.loads(cli_ok("feeds", "list", "--store", store, "--format", "json").out)
    for text in (table, json.dumps(listed)):
        assert "PW" not in text and "s3cret" not in text and "p%40ss" not in text, text
    rows = [line.split()[1] for line in table.splitlines()[1:]]
    assert rows == [shown for _, shown in CREDENTIALED], table
    assert [f["url"] for f in listed] == [shown for _, shown in CREDENTIALED]
    # The export round-trips: the credentials are in it, and a store
    # imported from it fetches with them.
    jsonl = cli_ok("feeds", "export", "--store", store, "--format", "jsonl").out
    assert [json.loads(x)["url"] for x in jsonl.splitlines()] == [u for u, _ in CREDENTIALED]
    opml = cli_ok("feeds", "export", "--store", store).out
    assert 'xmlUrl="https://reader:s3cret-PW@feeds.example.org/private.rss"' in opml, opml
    copy = tmp_path / "copy"
    cli_ok("feeds", "import", "--create", "--store", copy, "-", stdin=jsonl.encode())
    assert cli_ok("feeds", "export", "--store", copy, "--format", "jsonl").out == jsonl


READER_OPML = """<?xml version="1.0" encoding="UTF-8"?>
<opml version="1.0">
  <head>
    <title>Jane subscriptions in feedly Cloud</title>
    <dateCreated>Tue, 24 Nov 2026 09:12:44 GMT</dateCreated>
  </head>
  <body>
    <outline text="Technology" title="Technology">
      <outline type="rss" text="Ars Technica" title="Ars Technica"
               xmlUrl="https://feeds.arstechnica.com/arstechnica/index"
               htmlUrl="https://arstechnica.com"/>
      <outline type="rss" text="The Verge -  All Posts" title="The Verge -  All Posts"
               xmlUrl="https://www.theverge.com/rss/index.xml" htmlUrl="https://www.theverge.com/"/>
      <outline text="Linux" title="Linux">
        <outline type="rss" text="LWN.net" title="LWN.net" xmlUrl="https://lwn.net/headlines/rss"
                 htmlUrl="https://lwn.net"/>
      </outline>
    </outline>
    <outline text="Sports" title="Sports">
      <outline type="rss" text="BBC Sport &amp; more" xmlUrl="https://feeds.bbci.co.uk/sport/rss.xml"
               htmlUrl="https://www.bbc.co.uk/sport"/>
    </outline>
    <outline text="Blogs" title="Blogs">
      <outline type="rss" text="Julia Evans" xmlUrl="https://jvns.ca/atom.xml"
               htmlUrl="https://jvns.ca"/>
      <outline type="rss" text="Broken" xmlUrl="not a url"/>
      <outline type="rss" text="My router" xmlUrl="http://192.168.1.1/feed"/>
      <outline type="rss" text="Ars again" xmlUrl="https://feeds.arstechnica.com/arstechnica/index"/>
    </outline>
    <outline type="rss" text="Hacker News" title="Hacker News"
             xmlUrl="https://news.ycombinator.com/rss" htmlUrl="https://news.ycombinator.com/"/>
  </body>
</opml>
"""


def test_a_readers_opml_with_folders_imports(tmp_path):
    store = tmp_path / "s"
    path = tmp_path / "feedly.opml"
    path.write_text(READER_OPML)
    r = cli_ok("feeds", "import", "--create", "--store", store, path)
    assert "feeds added 6, already present 1, skipped 2" in r.err, repr(r)
    # Each bad outline named by its line, with the reason.
    assert "line 26: the feed url must be an absolute http(s) URL" in r.err, repr(r)
    assert "line 27: refused: 192.168.1.1 is private" in r.err, repr(r)
    got = {f["url"]: f for f in feeds_json(store)}
    assert sorted(got) == sorted([
        "https://feeds.arstechnica.com/arstechnica/index", "https://www.theverge.com/rss/index.xml",
        "https://lwn.net/headlines/rss", "https://feeds.bbci.co.uk/sport/rss.xml",
        "https://jvns.ca/atom.xml", "https://news.ycombinator.com/rss"])
    # Folders named after a category give it, also through a sub-folder.
    cats = {u: f.get("category") for u, f in got.items()}
    assert cats == {
        "https://feeds.arstechnica.com/arstechnica/index": "technology",
        "https://www.theverge.com/rss/index.xml": "technology",
        "https://lwn.net/headlines/rss": "technology",
        "https://feeds.bbci.co.uk/sport/rss.xml": "sports",
        "https://jvns.ca/atom.xml": None,
        "https://news.ycombinator.com/rss": None}
    assert all(f["state"] == "active" and f["headlines"] is False for f in got.values())


def test_bad_opml_is_refused_whole(tmp_path):
    store = tmp_path / "s"
    bomb = tmp_path / "bomb.opml"
    bomb.write_text('<?xml version="1.0"?>\n<!DOCTYPE opml [<!ENTITY a "aaaaaaaa">'
                    '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>\n'
                    '<opml><body><outline xmlUrl="https://a.test/&b;"/></body></opml>\n')
    r = run_cli("feeds", "import", "--create", "--store", store, bomb)
    assert r.rc == 2 and "DOCTYPE" in r.err, repr(r)
    broken = tmp_path / "broken.opml"
    broken.write_text('<opml><body>\n<outline xmlUrl="https://a.test/">\n</body></opml>\n')
    r = run_cli("feeds", "import", "--create", "--store", store, broken)
    assert r.rc == 2 and "not well-formed XML, line 3" in r.err, repr(r)
    assert feeds_json(store) == []


# ---- edit, pause, resume -------------------------------------------------------

def test_edit_changes_only_what_it_names(tmp_path):
    store = tmp_path / "s"
    fid = add(store, "https://a.example.org/rss", "--country", "gb", "--category", "general",
              "--language", "en", "--headlines", "--interval", "3600")
    cli_ok("feeds", "edit", "--store", store, fid, "--interval", "900", "--no-headlines")
    f = feeds_json(store)[0]
    assert (f["interval"], f["headlines"], f["country"], f["category"], f["language"]) == \
        (900, False, "gb", "general", "en")
    cli_ok("feeds", "edit", "--store", store, fid, "--country", "", "--category", "Sports",
           "--language", "fr", "--headlines")
    f = feeds_json(store)[0]
    assert (f.get("country"), f["category"], f["language"], f["headlines"]) == \
        (None, "sports", "fr", True)
    for bad in (["--interval", "10"], ["--country", "gbr"], ["--category", "weather"],
                ["--language", "french"], [], ["--headlines", "--no-headlines"],
                ["--source", "x"]):
        r = run_cli("feeds", "edit", "--store", store, fid, *bad)
        assert r.rc == 2 and r.err.strip(), repr(r)
    r = run_cli("feeds", "edit", "--store", store, "99", "--interval", "600")
    assert r.rc == 1 and "no feed has the id '99'" in r.err, repr(r)
    assert feeds_json(store)[0] == f


@pytest.mark.parametrize("args", [
    ["feeds", "pause"],
    ["feeds", "resume", "1", "2"],
    ["feeds", "edit"],
    ["feeds", "export", "extra"],
    ["feeds", "export", "--format", "csv"],
    ["feeds", "list", "--format", "opml"],
    ["feeds", "pause", "1", "--interval", "600"],
    ["feeds", "add", "--create", "https://example.com/feed", "--no-headlines"],
    ["feeds", "import", "--create", "x", "--format", "opml"],
])
def test_usage_errors_exit_2(tmp_path, args):
    r = run_cli(*(args + ["--store", tmp_path / "s"]))
    assert r.rc == 2, repr(r)
    assert r.err.strip(), repr(r)


def test_a_paused_feed_is_not_fetched_and_a_resumed_one_is(tmp_path, feed_server):
    base, rec = feed_server
    store = tmp_path / "s"
    conf = allow_loopback(tmp_path)
    add(store, "--config", conf, base + GUARDIAN)
    heise = add(store, "--config", conf, base + HEISE)
    cli_ok("feeds", "pause", "--store", store, heise)
    table = cli_ok("feeds", "list", "--store", store).out
    assert "paused" in [line.split()[-2] for line in table.splitlines()[1:]], table

    cli_ok("crawl", "--once", "--pages", "never", "--store", store, "--config", conf)
    assert rec.paths() == ["/" + GUARDIAN]
    states = {f["url"]: f for f in feeds_json(store)}
    assert states[base + HEISE]["state"] == "paused"
    assert states[base + HEISE]["last_fetch_at"] is None
    assert states[base + HEISE]["next_fetch_at"] is None
    assert states[base + GUARDIAN]["last_status"] == 200
    assert states[base + GUARDIAN]["last_success_at"] is not None
    assert states[base + GUARDIAN]["items_total"] == 55

    cli_ok("feeds", "resume", "--store", store, heise)
    cli_ok("crawl", "--once", "--pages", "never", "--store", store, "--config", conf)
    assert rec.paths() == ["/" + GUARDIAN, "/" + HEISE]
    h = {f["url"]: f for f in feeds_json(store)}[base + HEISE]
    assert h["state"] == "active" and h["items_total"] == 15 and h["last_error"] is None
    r = run_cli("feeds", "pause", "--store", store, "42")
    assert r.rc == 1 and "no feed has the id '42'" in r.err, repr(r)


# ---- [outbound] user_agent and proxy ----------------------------------------------

def test_the_configured_user_agent_reaches_the_server(tmp_path, feed_server):
    base, rec = feed_server
    ua = "newsd/0.14 (+https://news.example.org; mailto:ops@example.org)"
    conf = allow_loopback(tmp_path)
    with open(conf, "a") as f:
        f.write('user_agent = "%s"\n' % ua)
    add(tmp_path / "s", "--config", conf, base + GUARDIAN)
    cli_ok("crawl", "--once", "--pages", "never", "--store", tmp_path / "s", "--config", conf)
    assert rec.seen == [("/" + GUARDIAN, ua)]
    # Without it: newsd's own.
    plain = allow_loopback(tmp_path / "s")
    add(tmp_path / "t", "--config", plain, base + HEISE)
    cli_ok("crawl", "--once", "--pages", "never", "--store", tmp_path / "t", "--config", plain)
    assert rec.seen[1][0] == "/" + HEISE
    assert rec.seen[1][1].startswith("newsd/") and "(+http" in rec.seen[1][1], rec.seen


def proxy_conf(tmp_path, proxy_url):
    """[outbound] proxy only: no special-use network allowed (the proxy's
    own loopback address needs none)."""
    path = tmp_path / "proxy.conf"
    path.write_text("[outbound]\nproxy = %s\nuser_agent = proxied-newsd/1\n" % proxy_url)
    return path


def test_requests_go_through_the_proxy_and_refused_targets_do_not(tmp_path, proxy):
    proxy_url, rec = proxy
    store = tmp_path / "s"
    conf = proxy_conf(tmp_path, proxy_url)
    public = "http://93.184.215.14/world.rss"  # a public address: only the proxy answers
    add(store, "--config", conf, public)
    add(store, "--config", conf, "http://93.184.215.14/redirect")
    add(store, "--config", conf, "http://localhost:9/direct.xml")  # a name for loopback
    add(store, "--config", conf, "https://93.184.215.14/secure.xml")
    add(store, "--config", conf, "https://localhost:9/secure.xml")
    r = cli_ok("crawl", "--once", "--pages", "never", "--store", store, "--config", conf)
    assert "feeds fetched 1" in r.out, repr(r)
    # The proxy saw the public targets only: absolute URIs with our UA, and
    # the tunnel to the https one.
    assert sorted(rec.seen) == sorted([(public, "proxied-newsd/1"),
                                       ("http://93.184.215.14/redirect", "proxied-newsd/1"),
                                       ("CONNECT 93.184.215.14:443", "proxied-newsd/1")])
    got = {f["url"]: f for f in feeds_json(store)}
    assert got[public]["items_total"] == 55 and got[public]["last_error"] is None
    for url in ("http://localhost:9/direct.xml", "http://93.184.215.14/redirect",
                "https://localhost:9/secure.xml"):
        err = got[url]["last_error"] or ""
        assert "refused:" in err and "is loopback" in err, (url, got[url])


def test_environment_proxies_stay_ignored(tmp_path, feed_server, proxy):
    base, rec = feed_server
    proxy_url, prec = proxy
    conf = allow_loopback(tmp_path)
    add(tmp_path / "s", "--config", conf, base + GUARDIAN)
    env = {"http_proxy": proxy_url, "HTTP_PROXY": proxy_url, "all_proxy": proxy_url,
           "no_proxy": ""}
    cli_ok("crawl", "--once", "--pages", "never", "--store", tmp_path / "s", "--config", conf, env=env)
    assert rec.paths() == ["/" + GUARDIAN] and prec.seen == []


def test_a_running_server_follows_pause_and_resume(tmp_path, feed_server):
    from test_feeds import CrawlingServer, wait_for  # newsd serve with its crawler
    base, rec = feed_server
    store = tmp_path / "s"
    conf = allow_loopback(tmp_path)
    add(store, "--config", conf, base + GUARDIAN)
    heise = add(store, "--config", conf, base + HEISE)
    cli_ok("feeds", "pause", "--store", store, heise)
    srv = CrawlingServer(store, conf)
    try:
        wait_for(rec.paths, lambda p: "/" + GUARDIAN in p, "the active feed's poll")
        # One more of the crawler's rounds, seen (not slept through): once
        # the first poll is stored, every feed is made due now and the
        # active one is polled again; the paused one, due all along, waits.
        wait_for(lambda: {f["url"]: f for f in feeds_json(store)}[base + GUARDIAN],
                 lambda f: f["items_total"] > 0, "the first poll stored")
        cli_ok("feeds", "poll", "--store", store, "--all")
        wait_for(rec.paths, lambda p: p.count("/" + GUARDIAN) >= 2, "the active feed's 2nd poll")
        assert "/" + HEISE not in rec.paths()
        cli_ok("feeds", "resume", "--store", store, heise)
        wait_for(rec.paths, lambda p: "/" + HEISE in p, "the resumed feed's poll")
        # The poll is seen when it is sent; its items are stored after the
        # answer is parsed (seconds under ASan on a loaded machine).
        wait_for(lambda: {f["url"]: f for f in feeds_json(store)}[base + HEISE],
                 lambda f: f["items_total"] > 0, "the resumed feed's items stored")
    finally:
        status, _, err = srv.stop()
    assert status == 0 and not sanitizer_findings(err), err[-3000:]
    h = {f["url"]: f for f in feeds_json(store)}[base + HEISE]
    assert h["state"] == "active" and h["items_total"] == 15


# ---- staying fresh: the interval's ceiling, poll now, honest answers (issue 30 item 2) ----

def crawl_conf(tmp_path, body):
    """allow_loopback's config with more sections after it."""
    conf = allow_loopback(tmp_path)
    with open(conf, "a") as f:
        f.write(body)
    return conf


def test_a_quiet_feeds_interval_stops_at_its_ceiling(tmp_path, feed_server):
    """A poll that brings nothing new stretches the interval by half, up to
    [crawl]'s ceiling: 1000 s -> 1500 s would pass 1200 (a feed marked
    headlines: headlines_max_interval_seconds) and 1400 (the others:
    max_interval_seconds). An interval set above the ceiling by hand comes
    down to it at the next successful poll."""
    base, _ = feed_server
    store = tmp_path / "s"
    conf = crawl_conf(tmp_path, "[crawl]\nmax_interval_seconds = 1400\n"
                                "headlines_max_interval_seconds = 1200\n")
    plain = add(store, "--config", conf, base + GUARDIAN, "--interval", "1000")
    headline = add(store, "--config", conf, base + HEISE, "--interval", "1000", "--headlines")
    cli_ok("crawl", "--once", "--pages", "never", "--store", store, "--config", conf)
    for fid in (plain, headline):  # the first poll: new items, due again at once for the test
        cli_ok("feeds", "poll", "--store", store, fid)
    cli_ok("crawl", "--once", "--pages", "never", "--store", store, "--config", conf)
    by_id = {f["id"]: f for f in feeds_json(store)}
    assert by_id[plain]["interval"] == 1400, by_id[plain]
    assert by_id[headline]["interval"] == 1200, by_id[headline]

    cli_ok("feeds", "edit", "--store", store, plain, "--interval", "86400")
    cli_ok("feeds", "poll", "--store", store, plain)
    cli_ok("crawl", "--once", "--pages", "never", "--store", store, "--config", conf)
    assert {f["id"]: f for f in feeds_json(store)}[plain]["interval"] == 1400


def test_the_default_ceiling_of_a_headlines_feed_is_an_hour(tmp_path, feed_server):
    base, _ = feed_server
    store = tmp_path / "s"
    conf = allow_loopback(tmp_path)
    fid = add(store, "--config", conf, base + HEISE, "--interval", "3000", "--headlines")
    for _ in range(2):
        cli_ok("crawl", "--once", "--pages", "never", "--store", store, "--config", conf)
        cli_ok("feeds", "poll", "--store", store, fid)
    assert feeds_json(store)[0]["interval"] == 3600


@pytest.mark.parametrize("body", ["[crawl]\nmax_interval_seconds = 10\n",
                                  "[crawl]\nmax_interval = 600\n",
                                  "[crawl]\nmax_interval_seconds = 600\nmax_interval_seconds = 700\n"])
def test_bad_crawl_settings_are_refused(tmp_path, body):
    conf = tmp_path / "c.conf"
    conf.write_text(body)
    r = run_cli("crawl", "--once", "--store", tmp_path / "s", "--config", conf)
    assert r.rc == 2 and "c.conf:" in r.err, repr(r)


def test_poll_makes_a_feed_due_now_and_says_what_it_did(tmp_path, feed_server):
    """feeds poll ID: due now (the next crawl fetches it although its
    interval has not passed); --all: every active feed, a paused one named
    and left alone; an unknown id fails."""
    base, rec = feed_server
    store = tmp_path / "s"
    conf = allow_loopback(tmp_path)
    g = add(store, "--config", conf, base + GUARDIAN)
    h = add(store, "--config", conf, base + HEISE)
    cli_ok("crawl", "--once", "--pages", "never", "--store", store, "--config", conf)
    assert sorted(rec.paths()) == sorted(["/" + GUARDIAN, "/" + HEISE])
    cli_ok("crawl", "--once", "--pages", "never", "--store", store, "--config", conf)
    assert len(rec.paths()) == 2, "nothing is due before its interval"

    r = cli_ok("feeds", "poll", "--store", store, g)
    assert "feed %d is due now" % g in r.out, repr(r)
    cli_ok("crawl", "--once", "--pages", "never", "--store", store, "--config", conf)
    assert rec.paths()[2:] == ["/" + GUARDIAN]

    cli_ok("feeds", "pause", "--store", store, h)
    r = cli_ok("feeds", "poll", "--store", store, "--all")
    assert "feed %d is due now" % g in r.out and "feed %d is paused" % h in r.out, repr(r)
    cli_ok("crawl", "--once", "--pages", "never", "--store", store, "--config", conf)
    assert rec.paths()[3:] == ["/" + GUARDIAN]

    r = run_cli("feeds", "poll", "--store", store, "99")
    assert r.rc == 1 and "no feed has the id '99'" in r.err, repr(r)
    for bad in (["feeds", "poll"], ["feeds", "poll", str(g), "--all"],
                ["feeds", "list", "--all"]):
        r = run_cli(*(bad + ["--store", store]))
        assert r.rc == 2, repr(r)


def test_pause_and_resume_that_change_nothing_say_so(tmp_path):
    store = tmp_path / "s"
    fid = add(store, "https://example.com/feed.xml")
    r = cli_ok("feeds", "resume", "--store", store, fid)
    assert "not paused: nothing to do" in r.out, repr(r)
    cli_ok("feeds", "pause", "--store", store, fid)
    r = cli_ok("feeds", "pause", "--store", store, fid)
    assert "already paused" in r.out, repr(r)
    r = cli_ok("feeds", "resume", "--store", store, fid)
    assert "nothing to do" not in r.out, repr(r)
    assert feeds_json(store)[0]["state"] == "active"
