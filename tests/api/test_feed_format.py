"""Any search as a feed (issue 27 item 3, docs/api.md "Search as a feed"):
format=rss|atom|jsonfeed on /v2/everything and /v2/top-headlines, read back
by an independent parser (Debian's python3-feedparser) and checked against
the JSON page of the same search; Atom's RFC 4287 rules checked on the XML
itself; conditional GET (ETag, Last-Modified -> 304, not counted); the key
never in the document; and newsd's own crawler following newsd's feed."""
import calendar
import json
import re
import sqlite3
import time
import xml.etree.ElementTree as ET

import feedparser
import pytest

from harness import (Client, Server, allow_loopback, cli_ok, err, import_jsonl, ok, run_cli)

ATOM = "{http://www.w3.org/2005/Atom}"
RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")
SEARCH = [("q", "the"), ("pageSize", "20"), ("sortBy", "publishedAt")]


def page_and_feed(api, fmt, params=SEARCH, path="/v2/everything"):
    j = ok(api.get(path, params))
    r = api.get(path, params + [("format", fmt)])
    assert r.status_code == 200, r.text[:300]
    return j, r


def epoch(iso):
    return calendar.timegm(time.strptime(iso, "%Y-%m-%dT%H:%M:%SZ")) if iso else None


@pytest.mark.parametrize("fmt,ctype", [("rss", "application/rss+xml"),
                                       ("atom", "application/atom+xml")])
def test_a_feed_holds_the_page_a_parser_reads_back(api, fmt, ctype):
    """The articles of the JSON page, in its order, with their links,
    titles, dates, authors, summaries and images, as feedparser sees them."""
    j, r = page_and_feed(api, fmt)
    assert r.headers["Content-Type"] == ctype + "; charset=utf-8"
    f = feedparser.parse(r.content)
    assert not f.bozo, f.bozo_exception
    arts = j["articles"]
    assert len(arts) == 20 and len(f.entries) == 20
    for a, e in zip(arts, f.entries):
        assert e.link == a["url"]
        assert e.id == a["url"]
        assert e.get("title", "") == (a["title"] or "")
        assert calendar.timegm(e.published_parsed) == epoch(a["publishedAt"])
        if a["description"]:
            assert e.summary == a["description"]
        if a["author"]:
            assert e.author == a["author"]
        images = [x.href for x in e.get("enclosures", [])]
        assert images == ([a["urlToImage"]] if a["urlToImage"] else [])


def test_a_json_feed_holds_the_page(api):
    """Debian's feedparser 6.0 reads no JSON Feed: the items are checked
    against the JSON page field by field."""
    j, r = page_and_feed(api, "jsonfeed")
    assert r.headers["Content-Type"] == "application/feed+json; charset=utf-8"
    items = json.loads(r.content)["items"]
    assert len(items) == len(j["articles"]) == 20
    for a, it in zip(j["articles"], items):
        assert it["id"] == it["url"] == a["url"]
        assert it.get("title") == a["title"]
        assert it.get("summary") == a["description"]
        assert it.get("image") == a["urlToImage"]
        assert it["date_published"] == a["publishedAt"]
        assert it.get("authors", [{}])[0].get("name") == a["author"]
        assert it["content_text"] == (a["content"] or a["description"] or "")
        assert it["_newsd"]["source"] == a["source"]


def test_feeds_of_top_headlines_are_its_page(api):
    params = [("country", "us"), ("pageSize", "5")]
    for fmt in ("rss", "atom"):
        j, r = page_and_feed(api, fmt, params, "/v2/top-headlines")
        f = feedparser.parse(r.content)
        assert not f.bozo and [e.link for e in f.entries] == [a["url"] for a in j["articles"]]
    j, r = page_and_feed(api, "jsonfeed", params, "/v2/top-headlines")
    assert [it["url"] for it in json.loads(r.content)["items"]] == [a["url"] for a in j["articles"]]


def test_atom_keeps_the_rules_of_rfc_4287(api):
    """What a validator checks (RFC 4287 §4.1): one id, title and updated
    per feed and per entry, every id an absolute IRI, dates RFC 3339, an
    author for every entry (its own or the feed's), an alternate link."""
    _, r = page_and_feed(api, "atom")
    root = ET.fromstring(r.content)
    assert root.tag == ATOM + "feed"

    def one(node, name):
        found = node.findall(ATOM + name)
        assert len(found) == 1, (name, len(found))
        return found[0]
    for name in ("id", "title", "updated"):
        one(root, name)
    assert RFC3339.match(one(root, "updated").text)
    feed_author = root.findall(ATOM + "author")
    selfs = [l for l in root.findall(ATOM + "link") if l.get("rel") == "self"]
    assert len(selfs) == 1
    entries = root.findall(ATOM + "entry")
    assert entries
    for e in entries:
        assert re.match(r"^https?://", one(e, "id").text)
        one(e, "title")
        for name in ("updated", "published"):
            assert RFC3339.match(one(e, name).text)
        assert feed_author or e.findall(ATOM + "author")
        alts = [l for l in e.findall(ATOM + "link") if l.get("rel") in (None, "alternate")]
        assert len(alts) == 1 and alts[0].get("href") == one(e, "id").text


def test_json_feed_keeps_the_rules_of_1_1(api):
    _, r = page_and_feed(api, "jsonfeed")
    doc = json.loads(r.content)
    assert doc["version"] == "https://jsonfeed.org/version/1.1"
    assert doc["title"] and doc["feed_url"].startswith("http")
    for item in doc["items"]:
        assert isinstance(item["id"], str) and item["id"]
        assert "content_text" in item or "content_html" in item
        assert RFC3339.match(item["date_published"])
        for k in item:  # only the spec's keys, and extensions starting with _
            assert k.startswith("_") or k in (
                "id", "url", "external_url", "title", "content_html", "content_text", "summary",
                "image", "banner_image", "date_published", "date_modified", "authors", "tags",
                "language", "attachments"), k


def test_the_key_stays_out_of_the_feed(server, store):
    """A feed is shared and pasted: the key given in the URL (the way a
    reader sends it) is not written into the self link or anywhere."""
    key = store.keys["main"]
    c = Client(server.base, None)
    for fmt in ("rss", "atom", "jsonfeed"):
        r = c.get("/v2/everything", [("q", "the"), ("apiKey", key), ("format", fmt)])
        assert r.status_code == 200
        assert key.encode() not in r.content
        if fmt == "jsonfeed":
            self_link = json.loads(r.content)["feed_url"]
        else:
            links = feedparser.parse(r.content).feed.get("links", [])
            self_link = [x.href for x in links if x.get("rel") == "self"][0]
        assert "format=%s" % fmt in self_link and "apiKey" not in self_link, self_link
    # A name that decodes to apikey is the key too (the key check decodes it).
    r = c.get("/v2/everything?q=the&API%%4Bey=%s&format=atom" % key)
    assert r.status_code == 200 and key.encode() not in r.content, r.content[:300]


def test_markup_in_articles_is_text_in_the_feed(tmp_path):
    """Titles, authors and descriptions are text, whatever they hold: the
    XML stays well-formed and a parser gives back the very strings."""
    store = str(tmp_path / "s")
    hostile = {"url": "https://example.com/a?x=1&y=<2>", "title": "Ben & Jerry's <script>x</script> \"q\"",
               "description": "a]]>b & <b>c</b>\ttab", "author": "O'Brien <ob@example.com>",
               "publishedAt": "2024-05-06T07:08:09Z", "source": {"id": None, "name": "A & B"},
               "urlToImage": "https://img.example.com/x.png?a=1&b=2"}
    cli_ok("import", "--create", "--store", store, "-", stdin=(json.dumps(hostile) + "\n").encode())
    key = cli_ok("keys", "create", "--create", "--store", store).out.strip()
    srv = Server(store)
    try:
        c = Client(srv.base, key)
        for fmt in ("rss", "atom"):
            r = c.get("/v2/everything", [("q", "jerry"), ("format", fmt)])
            ET.fromstring(r.content)  # well-formed
            e = feedparser.parse(r.content).entries[0]
            assert e.title == hostile["title"]
            assert e.link == hostile["url"]
            assert e.author == hostile["author"]
    finally:
        assert not srv.stop()


def test_conditional_get_answers_304_and_does_not_count(tmp_path):
    """A reader that polls with the ETag (or Last-Modified) it got gets
    304 with no body while nothing changed, and such a poll is not taken
    from the plan's quota; a new article changes the ETag."""
    store = str(tmp_path / "s")
    conf = tmp_path / "plans.conf"
    conf.write_text("[plan five]\nrequests_per_day = 5\n")
    art = {"url": "https://example.com/1", "title": "Zebra crossing opens",
           "publishedAt": "2024-05-06T07:08:09Z", "source": {"id": None, "name": "Ex"}}
    import_jsonl_create(store, [art])
    key = cli_ok("keys", "create", "--create", "--store", store, "--plan", "five", "--config",
                 str(conf)).out.strip()
    srv = Server(store, args=["--config", str(conf)])
    try:
        c = Client(srv.base, key)
        q = [("q", "zebra"), ("format", "rss")]
        first = c.get("/v2/everything", q)
        assert first.status_code == 200 and first.headers["X-RateLimit-Remaining"] == "4"
        etag, modified = first.headers["ETag"], first.headers["Last-Modified"]
        assert modified == "Mon, 06 May 2024 07:08:09 GMT"
        for h in ({"If-None-Match": etag}, {"If-None-Match": "W/" + etag},
                  {"If-None-Match": '"other", ' + etag}, {"If-Modified-Since": modified}):
            r = c.get("/v2/everything", q, headers=h)
            assert r.status_code == 304 and r.content == b"", h
            assert r.headers["ETag"] == etag
            assert r.headers["X-RateLimit-Remaining"] == "4", h
        r = c.get("/v2/everything", q, headers={"If-None-Match": '"0000000000000000"'})
        assert r.status_code == 200 and r.headers["X-RateLimit-Remaining"] == "3"
        r = c.get("/v2/everything", q, headers={"If-Modified-Since": "Sun, 05 May 2024 00:00:00 GMT"})
        assert r.status_code == 200 and r.headers["X-RateLimit-Remaining"] == "2"
        import_jsonl(store, [dict(art, url="https://example.com/2", publishedAt="2024-05-07T00:00:00Z")])
        deadline = 50
        while deadline:
            r = c.get("/v2/everything", q, headers={"If-None-Match": etag})
            if r.status_code == 200:
                break
            deadline -= 1
        assert r.status_code == 200 and r.headers["ETag"] != etag
        assert len(feedparser.parse(r.content).entries) == 2
    finally:
        assert not srv.stop()


def import_jsonl_create(store, rows):
    cli_ok("import", "--create", "--store", store, "-",
           stdin="".join(json.dumps(r) + "\n" for r in rows).encode())


def test_a_bad_format_is_refused_and_json_is_todays_bytes(api):
    b = err(api.get("/v2/everything", [("q", "the"), ("format", "xml")]), 400, "parameterInvalid")
    assert "format" in b["message"] and "rss" in b["message"]
    plain = api.get("/v2/everything", [("q", "the")])
    explicit = api.get("/v2/everything", [("q", "the"), ("format", "json")])
    assert plain.content == explicit.content
    assert "ETag" not in plain.headers


def test_streams_and_alerts_refuse_format(api):
    r = api.get("/v2/everything/stream", [("q", "the"), ("format", "rss")])
    b = err(r, 400, "parameterInvalid")
    assert "format" in b["message"]


def test_newsd_follows_another_newsds_search(tmp_path, server, store):
    """One newsd's crawler subscribes to another's search as a feed (the
    key in the URL, as any reader would): the articles of the feed are
    stored with their links, titles and dates. A federation for free."""
    url = "%s/v2/everything?q=the&pageSize=10&format=rss&apiKey=%s" % (server.base,
                                                                      store.keys["main"])
    want = feedparser.parse(Client(server.base, None).get(
        "/v2/everything", [("q", "the"), ("pageSize", "10"), ("format", "rss"),
                           ("apiKey", store.keys["main"])]).content)
    other = str(tmp_path / "other")
    conf = allow_loopback(tmp_path)
    cli_ok("feeds", "add", "--create", "--store", other, "--config", conf, url)
    cli_ok("crawl", "--once", "--pages", "never", "--store", other, "--config", conf)
    db = sqlite3.connect("file:%s/newsd.db?mode=ro" % other, uri=True)
    rows = {u: (t, p) for u, t, p in db.execute("SELECT url, title, published_at FROM articles")}
    db.close()
    assert len(want.entries) == 10 and set(rows) == {e.link for e in want.entries}
    for e in want.entries:
        title, published = rows[e.link]
        assert title == e.title
        assert published == calendar.timegm(e.published_parsed)
