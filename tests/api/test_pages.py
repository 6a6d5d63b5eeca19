"""The pages of crawled items (issue 16): a feed whose items say little more
than a title and a link, served on 127.0.0.1 with the pages they link to
(tests/data/pages), crawled by `newsd crawl --once`; the articles then have
the content, description, image, author and (for an undated item) the
publication time of their pages, through the real API. What the feed said
wins; an item the feed already describes fully is not fetched; a page that
holds no article leaves its item as the feed gave it. Nothing leaves the
loopback interface."""
import functools
import http.server
import json
import os
import re
import threading
import time

import pytest

from harness import (Client, Server, allow_loopback, articles_ok, cli_ok, reply, run_cli,
                     serve_http)

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")
CONTENT_SUFFIX = re.compile(r"^(.*) \[\+(\d+) chars\]$", re.S)
SUMMARY = re.compile(r"pages fetched (\d+), failed (\d+), without an article (\d+); "
                     r"articles completed (\d+)")


def expected(name):
    with open(os.path.join(DATA, "pages", name, "expected-metadata.json"), encoding="utf-8") as f:
        return json.load(f)


class Handler(http.server.SimpleHTTPRequestHandler):
    """tests/data as it is, plus /feed.xml; every path asked for is noted."""
    feed = b""
    asked = []

    def do_GET(self):
        Handler.asked.append(self.path)
        if self.path == "/feed.xml":
            reply(self, Handler.feed, "application/rss+xml; charset=utf-8")
            return
        super().do_GET()

    def log_message(self, *args):
        pass


def rss(base):
    page = base + "pages/%s/source.html"
    items = [
        # title and link only
        "<item><title>Whales and the sea</title><link>%s</link>"
        "<pubDate>Mon, 07 Jan 2019 10:00:00 GMT</pubDate></item>" % page % "guardian-1",
        # undated: the page's date is taken
        "<item><title>Le renseignement</title><link>%s</link></item>" % page % "lemonde-1",
        # a one-line description that the content only repeats
        "<item><title>Evolve</title><link>%s</link><description>Mutable history."
        "</description></item>" % page % "mercurial",
        # a page that holds no article
        "<item><title>Firefox Developer Edition</title><link>%s</link></item>"
        % page % "mozilla-2",
        # everything said by the feed: its page (missing here) is never asked for
        "<item><title>Complete item</title><link>%smissing/complete.html</link>"
        "<description>Summary of it.</description><author>feed@x.example (Feed Writer)</author>"
        "<enclosure url=\"%simg/complete.jpg\" type=\"image/jpeg\" length=\"1\"/>"
        "<content:encoded><![CDATA[<p>The whole text of the complete item, as the feed "
        "gives it.</p>]]></content:encoded></item>" % (base, base),
    ]
    return ("<?xml version=\"1.0\"?><rss version=\"2.0\" "
            "xmlns:content=\"http://purl.org/rss/1.0/modules/content/\"><channel>"
            "<title>Loopback news</title><link>%s</link>%s</channel></rss>"
            % (base, "".join(items))).encode()


def feed_site(d):
    """The test feed (rss) and its pages served on loopback, with a store
    folder and an outbound config in d: (server, base, store, config)."""
    srv, base = serve_http(functools.partial(Handler, directory=DATA))
    Handler.feed = rss(base)
    Handler.asked = []
    store = str(d / "store")
    os.mkdir(store)
    return srv, base, store, allow_loopback(d)


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    srv, base, store, conf = feed_site(tmp_path_factory.mktemp("pages"))
    cli_ok("feeds", "add", "--create", "--store", store, "--config", conf, base + "feed.xml")
    run = cli_ok("crawl", "--once", "--store", store, "--config", conf)
    key = cli_ok("keys", "create", "--create", "--store", store).out.strip()
    api_srv = Server(store)
    yield type("C", (), {"run": run, "api": Client(api_srv.base, key), "base": base,
                         "asked": list(Handler.asked)})
    problems = api_srv.stop()
    srv.shutdown()
    srv.server_close()
    assert not problems, "\n".join(problems)


def article(c, title):
    b = articles_ok(c.api.get("/v2/everything", [("q", '"%s"' % title), ("pageSize", "100")]))
    hits = [a for a in b["articles"] if a["title"] == title]
    assert len(hits) == 1, (title, b)
    return hits[0]


def test_crawl_once_fetches_the_pages_it_needs(crawled):
    m = SUMMARY.search(crawled.run.out)
    assert m, repr(crawled.run)
    fetched, failed, no_article, completed = (int(x) for x in m.groups())
    assert (fetched, failed, no_article, completed) == (4, 0, 1, 3), repr(crawled.run)
    assert "/missing/complete.html" not in crawled.asked, crawled.asked


def test_page_fills_content_image_author_description(crawled):
    want = expected("guardian-1")
    a = article(crawled, "Whales and the sea")
    assert a["author"] == want["byline"]
    assert re.match(r"https?://", a["urlToImage"] or ""), a
    assert a["description"] and a["description"].split()[:5] == want["excerpt"].split()[:5]
    m = CONTENT_SUFFIX.match(a["content"] or "")
    assert m and int(m.group(2)) > 1000, a["content"]
    # the feed's date wins over the page's (2019-01-03)
    assert a["publishedAt"] == "2019-01-07T10:00:00Z"
    # the feed's title stays; the url is the feed's link
    assert a["url"] == crawled.base + "pages/guardian-1/source.html"


def test_undated_item_gets_the_pages_date(crawled):
    a = article(crawled, "Le renseignement")
    assert a["content"] and "[+" in a["content"]
    # lemonde-1 states its time in article:published_time (2015-05-04 13:36:31+02:00)
    assert a["publishedAt"] == "2015-05-04T11:36:31Z"


def test_content_that_only_repeats_the_description_is_replaced(crawled):
    a = article(crawled, "Evolve")
    assert a["description"] == "Mutable history."
    assert a["content"] and a["content"] != "Mutable history." and "[+" in a["content"]


def test_page_without_an_article_leaves_the_item(crawled):
    a = article(crawled, "Firefox Developer Edition")
    assert a["content"] is None and a["author"] is None and a["urlToImage"] is None


def test_complete_item_keeps_what_the_feed_said(crawled):
    a = article(crawled, "Complete item")
    assert a["author"] == "Feed Writer"
    assert a["description"] == "Summary of it."
    assert a["urlToImage"] == crawled.base + "img/complete.jpg"
    assert a["content"].startswith("The whole text of the complete item")


def test_page_text_is_searched_in_full(crawled):
    """A word of the page's body, not of the feed, finds the article."""
    b = articles_ok(crawled.api.get("/v2/everything", [("q", "interconnectedness")]))
    assert [a["title"] for a in b["articles"]] == ["Whales and the sea"]


def test_pages_never_fetches_none_and_a_bad_mode_is_a_usage_error(tmp_path):
    srv, base, store, conf = feed_site(tmp_path)
    try:
        cli_ok("feeds", "add", "--create", "--store", store, "--config", conf, base + "feed.xml")
        bad = run_cli("crawl", "--once", "--store", store, "--config", conf, "--pages", "sometimes")
        assert bad.rc == 2 and "--pages" in bad.err, repr(bad)
        run = cli_ok("crawl", "--once", "--store", store, "--config", conf, "--pages", "never")
        assert SUMMARY.search(run.out).groups() == ("0", "0", "0", "0"), repr(run)
        assert Handler.asked == ["/feed.xml"], Handler.asked
    finally:
        srv.shutdown()
        srv.server_close()


def test_page_fetches_obey_the_outbound_rules(tmp_path):
    """An item whose page is on an address the [outbound] rules refuse: the
    feed (on an allowed address) is read, the page is never asked for, and
    the item stays as the feed said."""
    pages_asked = []

    class Pages(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            pages_asked.append(self.path)
            body = b"<html><body><article><p>private</p></article></body></html>"
            reply(self, body, "text/html")

        def log_message(self, *args):
            pass

    page_srv, page_base = serve_http(Pages, "127.0.0.2")
    page = page_base + "internal.html"
    feed_srv, base = serve_http(functools.partial(Handler, directory=DATA))
    Handler.feed = ("<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>t</title>"
                    "<link>%s</link><item><title>Internal page</title><link>%s</link>"
                    "</item></channel></rss>" % (base, page)).encode()
    try:
        store = str(tmp_path / "store")
        os.mkdir(store)
        conf = allow_loopback(tmp_path, "127.0.0.1/32")  # the feed's address only
        cli_ok("feeds", "add", "--create", "--store", store, "--config", conf, base + "feed.xml")
        run = cli_ok("crawl", "--once", "--store", store, "--config", conf)
        m = SUMMARY.search(run.out)
        assert m and int(m.group(1)) == 0 and int(m.group(2)) == 1, run.out
        assert pages_asked == [], pages_asked
        key = cli_ok("keys", "create", "--create", "--store", store).out.strip()
        srv = Server(store)
        try:
            a = articles_ok(Client(srv.base, key).get("/v2/everything",
                                                      {"q": "internal", "pageSize": 5}))
        finally:
            problems = srv.stop()
        assert not problems, problems
        assert a["totalResults"] == 1 and a["articles"][0]["content"] is None, a
    finally:
        for srv_ in (page_srv, feed_srv):
            srv_.shutdown()
            srv_.server_close()


def test_a_feeds_own_pages_setting_wins_and_travels_with_it(tmp_path):
    """`feeds add --pages never` keeps the crawler from the feed's pages even
    when the crawl asks for all of them; `feeds edit --pages ""` hands the
    feed back to the crawler's setting; the setting is listed, exported and
    re-imported (JSONL and OPML), and a bad value is refused."""
    srv, base, store, conf = feed_site(tmp_path)
    try:
        bad = run_cli("feeds", "add", "--create", "--store", store, "--config", conf, base + "feed.xml",
                      "--pages", "sometimes")
        assert bad.rc == 2 and "pages must be missing, always or never" in bad.err, repr(bad)
        fid = cli_ok("feeds", "add", "--create", "--store", store, "--config", conf, base + "feed.xml",
                     "--pages", "never").out.strip()
        listed = json.loads(cli_ok("feeds", "list", "--store", store, "--format", "json").out)
        assert [f.get("pages") for f in listed] == ["never"], listed

        run = cli_ok("crawl", "--once", "--store", store, "--config", conf, "--pages", "always")
        assert SUMMARY.search(run.out).groups() == ("0", "0", "0", "0"), repr(run)
        assert Handler.asked == ["/feed.xml"], Handler.asked

        jsonl = cli_ok("feeds", "export", "--store", store, "--format", "jsonl").out
        assert json.loads(jsonl.splitlines()[0])["pages"] == "never", jsonl
        opml = cli_ok("feeds", "export", "--store", store, "--format", "opml").out
        assert 'newsd:pages="never"' in opml, opml
        for name, text in (("feeds.jsonl", jsonl), ("feeds.opml", opml)):
            other = str(tmp_path / ("store-" + name))
            os.mkdir(other)
            path = tmp_path / name
            path.write_text(text)
            cli_ok("feeds", "import", "--create", "--store", other, "--config", conf, str(path))
            again = json.loads(cli_ok("feeds", "list", "--store", other, "--format", "json").out)
            assert [f.get("pages") for f in again] == ["never"], (name, again)
        badline = tmp_path / "bad.jsonl"
        badline.write_text(json.dumps({"url": base + "other.xml", "pages": "sometimes"}) + "\n")
        imp = run_cli("feeds", "import", "--create", "--store", store, "--config", conf, str(badline))
        assert "pages must be missing, always or never" in imp.err, repr(imp)

        cli_ok("feeds", "edit", "--store", store, fid, "--pages", "")
        listed = json.loads(cli_ok("feeds", "list", "--store", store, "--format", "json").out)
        assert "pages" not in listed[0], listed
        bad = run_cli("feeds", "edit", "--store", store, fid, "--pages", "often")
        assert bad.rc == 2 and "--pages" in bad.err, repr(bad)
    finally:
        srv.shutdown()
        srv.server_close()


def test_more_new_items_than_a_pass_fetches_all_get_their_pages(tmp_path):
    """150 new items in one feed (a pass fetches 64 pages): the rest wait for
    the following passes, and `crawl --once` returns when every page has
    been fetched, each article completed from its own page."""
    n = 150
    para = ("Paragraph of the report on item %d, long enough to be a paragraph of an "
            "article, with commas, clauses, and more words than a menu or a share bar "
            "would ever have; a reader view keeps text like this and drops the rest. ")

    class Site(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path == "/feed.xml":
                items = "".join(
                    "<item><title>Bulk item %d</title><link>%sitem/%d.html</link>"
                    "<pubDate>Mon, 07 Jan 2019 10:00:00 GMT</pubDate></item>" % (i, base, i)
                    for i in range(n))
                body = ("<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>Bulk"
                        "</title><link>%s</link>%s</channel></rss>" % (base, items)).encode()
                ctype = "application/rss+xml"
            else:
                m = re.match(r"^/item/(\d+)\.html$", self.path)
                if not m:
                    self.send_error(404)
                    return
                i = int(m.group(1))
                body = ("<html><head><title>Bulk item %d</title>"
                        "<meta name=\"author\" content=\"Writer %d\"></head><body><article>"
                        "<h1>Bulk item %d</h1>%s</article></body></html>"
                        % (i, i, i, "".join("<p>%s</p>" % (para % i) for _ in range(6)))).encode()
                ctype = "text/html; charset=utf-8"
            reply(self, body, ctype)

        def log_message(self, *args):
            pass

    srv, base = serve_http(Site)
    try:
        store = str(tmp_path / "store")
        os.mkdir(store)
        conf = allow_loopback(tmp_path)
        cli_ok("feeds", "add", "--create", "--store", store, "--config", conf, base + "feed.xml")
        run = cli_ok("crawl", "--once", "--store", store, "--config", conf)
        assert SUMMARY.search(run.out).groups() == (str(n), "0", "0", str(n)), run.out
        key = cli_ok("keys", "create", "--create", "--store", store).out.strip()
        api = Server(store)
        try:
            c = Client(api.base, key)
            for i in (0, 63, 64, 149):
                a = article(type("C", (), {"api": c}), "Bulk item %d" % i)
                assert a["author"] == "Writer %d" % i, a
                assert a["content"] and ("item %d," % i) in a["content"], a
        finally:
            problems = api.stop()
        assert not problems, problems
    finally:
        srv.shutdown()
        srv.server_close()


def metric_values(base):
    import requests
    text = requests.get(base + "/metrics", timeout=30).text
    return {line.split()[0]: float(line.split()[1]) for line in text.splitlines()
            if line.startswith("newsd_pages_")}


def test_a_serving_crawler_counts_its_pages_in_metrics(tmp_path, crawled):
    """The serving crawler moves newsd_pages_* as `crawl --once` counts the
    same feed: four pages read, one of them without an article, none failed
    (issue 30 item 7: an operator alerts on failing page fetches)."""
    import time
    once = [int(x) for x in SUMMARY.search(crawled.run.out).groups()]
    srv, base, store, conf = feed_site(tmp_path)
    api_srv = None
    try:
        api_srv = Server(store, args=["--config", conf, "--quiet"], crawl=True)
        before = metric_values(api_srv.base)
        assert before == {"newsd_pages_fetched_total": 0, "newsd_pages_failed_total": 0,
                          "newsd_pages_retries_total": 0, "newsd_pages_no_article_total": 0,
                          "newsd_pages_waiting": 0}, before
        cli_ok("feeds", "add", "--create", "--store", store, "--config", conf, base + "feed.xml")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            now = metric_values(api_srv.base)
            if now["newsd_pages_fetched_total"] + now["newsd_pages_failed_total"] >= 4:
                break
            time.sleep(0.2)
        assert [now["newsd_pages_fetched_total"], now["newsd_pages_failed_total"],
                now["newsd_pages_no_article_total"]] == once[:3] == [4, 0, 1], (now, once)
        assert now["newsd_pages_waiting"] == 0
    finally:
        problems = api_srv.stop() if api_srv else []
        srv.shutdown()
        srv.server_close()
    assert not problems, "\n".join(problems)


RETRIES = re.compile(r"page retries (\d+)")


class SlowPages(http.server.BaseHTTPRequestHandler):
    """A feed of `n` items whose pages answer after `delay` seconds each
    (guardian-1's page under 20 names), and pages that fail as `script`
    says: path -> statuses to answer in turn (200 after the last)."""
    feed = b""
    delay = 0.0
    script = {}
    asked = []
    lock = threading.Lock()

    def do_GET(self):
        with SlowPages.lock:
            SlowPages.asked.append(self.path)
            todo = SlowPages.script.get(self.path)
            status = todo.pop(0) if todo else 200
        if self.path == "/feed.xml":
            reply(self, SlowPages.feed, "application/rss+xml; charset=utf-8")
            return
        time.sleep(SlowPages.delay)
        with open(os.path.join(DATA, "pages", "guardian-1", "source.html"), "rb") as f:
            page = f.read()
        if status != 200:
            reply(self, b"<html><body>busy</body></html>", "text/html", status)
        else:
            reply(self, page, "text/html; charset=utf-8")

    def log_message(self, *args):
        pass


def slow_site(d, paths, delay=0.0, script=None, timeout_seconds=None):
    """SlowPages on loopback with a feed of one title-only item per path:
    (server, base, store, config with the loopback rule and, when given,
    [outbound] timeout_seconds)."""
    srv, base = serve_http(SlowPages)
    items = "".join("<item><title>Slow page %s</title><link>%s%s</link>"
                    "<pubDate>Mon, 07 Jan 2019 10:%02d:00 GMT</pubDate></item>"
                    % (p.strip("/"), base, p.lstrip("/"), i % 60) for i, p in enumerate(paths))
    SlowPages.feed = ("<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>Slow</title>"
                      "<link>%s</link>%s</channel></rss>" % (base, items)).encode()
    SlowPages.delay = delay
    SlowPages.script = {k: list(v) for k, v in (script or {}).items()}
    SlowPages.asked = []
    store = str(d / "store")
    os.mkdir(store)
    conf = allow_loopback(d)
    if timeout_seconds:
        with open(conf, "a") as f:
            f.write("timeout_seconds = %d\n" % timeout_seconds)
    return srv, base, store, conf


def test_pages_queued_for_one_slow_host_each_get_their_own_timeout(tmp_path):
    """20 pages of one site answering after 0.5 s each, one at a time
    (politeness), under a 2 s timeout per request: each page's time counts
    from its own start, so all 20 arrive (they used to share the batch's
    2 s: 4 pages, 16 timeouts)."""
    paths = ["/p/%02d.html" % i for i in range(20)]
    srv, base, store, conf = slow_site(tmp_path, paths, delay=0.5, timeout_seconds=2)
    try:
        cli_ok("feeds", "add", "--create", "--store", store, "--config", conf, base + "feed.xml")
        run = cli_ok("crawl", "--once", "--store", store, "--config", conf)
        m = SUMMARY.search(run.out)
        assert m and m.groups() == ("20", "0", "0", "20"), repr(run)
        assert RETRIES.search(run.out).group(1) == "0", repr(run)
        assert sorted(p for p in SlowPages.asked if p.startswith("/p/")) == paths
    finally:
        srv.shutdown()
        srv.server_close()


def test_a_page_that_fails_for_a_while_is_tried_again_and_stored(tmp_path):
    """A page answering 500 once is tried again later (crawl --once waits
    for it) and its article completed; a 404 is not tried again."""
    srv, base, store, conf = slow_site(tmp_path, ["/flaky.html", "/gone.html"],
                                       script={"/flaky.html": [500], "/gone.html": [404] * 9})
    try:
        cli_ok("feeds", "add", "--create", "--store", store, "--config", conf, base + "feed.xml")
        run = cli_ok("crawl", "--once", "--store", store, "--config", conf)
        m = SUMMARY.search(run.out)
        assert m and m.groups() == ("1", "1", "0", "1"), repr(run)
        assert RETRIES.search(run.out).group(1) == "1", repr(run)
        assert SlowPages.asked.count("/flaky.html") == 2, SlowPages.asked
        assert SlowPages.asked.count("/gone.html") == 1, SlowPages.asked
        key = cli_ok("keys", "create", "--create", "--store", store).out.strip()
        api = Server(store)
        try:
            c = type("C", (), {"api": Client(api.base, key)})
            flaky = article(c, "Slow page flaky.html")
            gone = article(c, "Slow page gone.html")
        finally:
            problems = api.stop()
        assert not problems, problems
        assert CONTENT_SUFFIX.match(flaky["content"] or ""), flaky
        assert gone["content"] is None, gone
    finally:
        srv.shutdown()
        srv.server_close()
