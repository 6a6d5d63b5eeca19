"""newsd import --warc (issue 16): WARC files built here from tests/data/pages
(warcgen.py), imported into a fresh store, and the articles checked through
a real server over HTTP: fields from the page (title, author, description,
image, publication time, canonical URL, source), content served truncated
and searched in full, WARC-Date when the page has no date, plain and gzip
files alike, archives of every vintage (WARC/0.17 and 0.18 drafts, resource
records, the Internet Archive's ARC), and the records that give no article (not 200, not HTML, no
article on the page, malformed, a file cut short) reported and skipped
while the rest is imported."""
import gzip
import json
import os
import re
import types

import pytest

import warcgen
from harness import Client, Server, articles_ok, cli_ok, parse_summary, run_cli

WARC_DATE_API = "2024-03-05T06:07:08Z"
CATALOGUED_HOST = "catalogued.example"
CONTENT_SUFFIX = re.compile(r"^(.*) \[\+(\d+) chars\]$", re.S)


def words(s):
    """Case, punctuation and spacing aside."""
    return re.sub(r"\W+", " ", (s or "").lower()).split()


def expected(name):
    with open(os.path.join(warcgen.PAGES, name, "expected-metadata.json"), encoding="utf-8") as f:
        return json.load(f)


def search(api, q):
    return articles_ok(api.get("/v2/everything", [("q", q), ("pageSize", "100")]))["articles"]


def by_title(api, name):
    """The article of page `name`, found by searching its title's words."""
    title = expected(name)["title"]
    q = " ".join(w for w in words(title) if len(w) > 3)[:200]
    hits = [a for a in search(api, q) if words(a["title"]) == words(title)]
    assert len(hits) == 1, "page %s: %d articles titled %r" % (name, len(hits), title)
    return hits[0]


ARTICLES = ["guardian-1", "lemonde-1", "mercurial", "lwn-1"]
NOT_ARTICLES = ["mozilla-2", "lazy-image-3"]


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    d = tmp_path_factory.mktemp("warc")
    store = str(d / "store")
    os.mkdir(store)
    cat = d / "sources.jsonl"
    cat.write_text(json.dumps({
        "id": "catalogued-times", "name": "Catalogued Times", "description": "A test source",
        "url": "https://www.%s" % CATALOGUED_HOST, "category": "general", "language": "en",
        "country": "us"}) + "\n")
    cli_ok("sources", "import", "--create", "--store", store, str(cat))
    pages = [warcgen.page(n) for n in ARTICLES + NOT_ARTICLES]
    pages.append(warcgen.page("001", host=CATALOGUED_HOST))
    # a 404 and a PDF: responses that are no article
    pages.append(warcgen.page("dev418", status=404))
    pages.append(warcgen.page("wapo-1", content_type="application/pdf"))
    # chunked and gzip-encoded payload
    pages.append(warcgen.page("wapo-2", chunked=True, gzip_body=True))
    gz = warcgen.write(str(d / "news.warc.gz"), pages, gz=True)
    s = types.SimpleNamespace(store=store, dir=d, pages=len(pages))
    s.run = cli_ok("import", "--create", "--warc", "--store", store, "--progress-every", "0.001", gz)
    key = cli_ok("keys", "create", "--create", "--store", store).out.strip()
    s.srv = Server(store)
    s.api = Client(s.srv.base, key)
    yield s
    if s.srv.proc.poll() is None:
        problems = s.srv.stop()
        assert not problems, "\n".join(problems)


def done_line(run, path_end):
    lines = [l for l in run.err.splitlines() if l.startswith("warc ") and ": done: " in l
             and l.split(":")[0].endswith(path_end)]
    assert len(lines) == 1, repr(run)
    return lines[0]


def test_summary_counts_articles_and_skips_by_reason(imported):
    summary = parse_summary(imported.run.err)
    assert summary == {"imported": len(ARTICLES) + 2, "updated": 0, "skipped": 4}, \
        repr(imported.run)
    line = done_line(imported.run, "news.warc.gz")
    # 1 warcinfo + 3 records per page
    assert " %d records" % (1 + 3 * imported.pages) in line, line
    assert "%d responses" % imported.pages in line, line
    assert "%d articles" % (len(ARTICLES) + 2) in line, line
    assert "no article 2" in line and "status not 200 1" in line and "not HTML 1" in line, line
    assert re.search(r"\(\d+/s\)", line), line


def test_progress_lines_on_stderr(imported):
    reads = [l for l in imported.run.err.splitlines() if re.match(r"warc .*: read \d+ records", l)]
    assert reads, repr(imported.run)


def test_page_fields_become_the_article(imported):
    want = expected("guardian-1")
    a = by_title(imported.api, "guardian-1")
    assert a["author"] == want["byline"]
    assert a["publishedAt"] == "2019-01-03T07:00:02Z"
    assert a["url"].startswith("https://www.theguardian.com/"), a["url"]
    assert a["source"] == {"id": None, "name": want["siteName"]}
    assert words(a["description"]) == words(want["excerpt"])
    assert re.match(r"https?://", a["urlToImage"] or ""), a["urlToImage"]
    m = CONTENT_SUFFIX.match(a["content"] or "")
    assert m and len(m.group(1)) <= 200 and int(m.group(2)) > 1000, a["content"]


def test_content_is_searched_in_full(imported):
    """A word only the body says (not the title, not the description, and
    past the 200 characters the API shows) finds the article."""
    a = by_title(imported.api, "lemonde-1")
    with open(os.path.join(warcgen.PAGES, "lemonde-1", "expected.html"), encoding="utf-8") as f:
        body = re.sub(r"<[^>]+>", " ", f.read())
    shown = set(words(a["title"]) + words(a["description"]) + words(a["content"]))
    rare = [w for w in words(body) if len(w) >= 9 and w.isalpha() and w not in shown]
    assert rare
    hits = search(imported.api, rare[-1])
    assert a["url"] in [h["url"] for h in hits], rare[-1]


def test_page_without_a_date_gets_the_warc_date(imported):
    a = by_title(imported.api, "mercurial")
    assert a["publishedAt"] == WARC_DATE_API
    # no og:site_name, no catalogue entry: the host names the source
    assert a["source"] == {"id": None, "name": "news.example"}


def test_source_from_the_catalogue_by_domain(imported):
    a = by_title(imported.api, "001")
    assert a["source"] == {"id": "catalogued-times", "name": "Catalogued Times"}
    assert a["url"] == "https://%s/001/article.html" % CATALOGUED_HOST
    assert a["author"] == "Nicolas Perriault"


def test_chunked_gzip_payload_is_decoded(imported):
    a = by_title(imported.api, "wapo-2")
    assert a["content"] and "[+" in a["content"]


def test_pages_without_an_article_are_not_imported(imported):
    for name in NOT_ARTICLES + ["dev418", "wapo-1"]:
        title = expected(name)["title"]
        hits = [h for h in search(imported.api, " ".join(words(title)[:3]))
                if words(h["title"]) == words(title)]
        assert hits == [], name


def test_reimport_updates_instead_of_duplicating(imported):
    pages = [warcgen.page(n) for n in ARTICLES]
    plain = warcgen.write(str(imported.dir / "again.warc"), pages)
    r = cli_ok("import", "--create", "--warc", "--store", imported.store, plain)
    assert parse_summary(r.err) == {"imported": 0, "updated": len(ARTICLES), "skipped": 0}, repr(r)


def test_malformed_and_truncated_files_are_survived(tmp_path):
    store = str(tmp_path / "store")
    os.mkdir(store)
    pages = [warcgen.page(n) for n in ["guardian-1", "lemonde-1", "lwn-1", "mercurial"]]
    # record 3 (guardian's metadata) is preceded by a record without
    # Content-Length, record 5 by a line of garbage
    bad = warcgen.write(str(tmp_path / "bad.warc"), pages, raw=[
        (3, b"WARC/1.1\r\nWARC-Type: response\r\n\r\njunk\r\n\r\n"),
        (5, b"this is no WARC record\r\n\r\n")])
    # gzip, one member per record, cut in the middle of the last response
    members = [gzip.compress(rec) for rec in warcgen.records(pages)]
    cut = tmp_path / "cut.warc.gz"
    cut.write_bytes(b"".join(members[:-2]) + members[-2][:len(members[-2]) // 2])
    r = run_cli("import", "--create", "--warc", "--store", store, bad, str(cut))
    assert r.rc == 0, repr(r)
    offsets = re.findall(r"record at offset (\d+): (.*)", r.err)
    reasons = [why for _, why in offsets]
    assert any("Content-Length" in w for w in reasons), repr(r)
    assert any("neither a WARC version line" in w for w in reasons), repr(r)
    assert any("cut short" in w for w in reasons), repr(r)
    assert all(int(o) > 0 for o, _ in offsets)
    # every page of bad.warc is there; cut.warc.gz gave those before the cut
    assert "4 articles" in done_line(r, "bad.warc")
    assert "3 articles" in done_line(r, "cut.warc.gz")
    assert parse_summary(r.err)["imported"] == 4, repr(r)


def test_corrupt_gzip_member_loses_only_its_record(tmp_path):
    store = str(tmp_path / "store")
    os.mkdir(store)
    names = ["guardian-1", "lemonde-1", "lwn-1", "mercurial"]
    recs = list(warcgen.records([warcgen.page(n) for n in names]))
    members = [gzip.compress(rec) for rec in recs]
    # damage the compressed bytes of lemonde-1's response (record 5: after
    # warcinfo, each page is request, response, metadata)
    m = bytearray(members[5])
    for i in range(len(m) // 3, len(m) // 3 + 64):
        m[i] ^= 0xA5
    members[5] = bytes(m)
    path = tmp_path / "damaged.warc.gz"
    path.write_bytes(b"".join(members))
    r = run_cli("import", "--create", "--warc", "--store", store, str(path))
    assert r.rc == 0, repr(r)
    assert re.search(r"record at offset \d+: corrupt gzip data at file offset \d+", r.err), repr(r)
    assert "3 articles" in done_line(r, "damaged.warc.gz"), repr(r)


def test_unreadable_file_fails_with_a_message(tmp_path):
    store = str(tmp_path / "store")
    os.mkdir(store)
    r = run_cli("import", "--create", "--warc", "--store", store, str(tmp_path / "missing.warc.gz"))
    assert r.rc != 0 and "missing.warc.gz" in r.err and "cannot open" in r.err, repr(r)


@pytest.fixture(scope="module")
def vintages(tmp_path_factory):
    """One page per vintage: an ARC v1 file gzip per record (Heritrix's
    .arc.gz), a plain ARC v1 file, a WARC/0.17 file (Heritrix 1.x), a
    WARC/0.18 one gzip per record, a WARC/1.0 one whose page is a resource
    record; imported in one run into a fresh store."""
    d = tmp_path_factory.mktemp("vintages")
    store = str(d / "store")
    os.mkdir(store)
    files = {
        "old.arc.gz": ("ARC v1", lambda p: warcgen.write_arc(p, [warcgen.page("guardian-1")], gz=True)),
        "old.arc": ("ARC v1", lambda p: warcgen.write_arc(p, [warcgen.page("mercurial")])),
        "h1.warc": ("WARC/0.17", lambda p: warcgen.write(p, [warcgen.page("lemonde-1")],
                                                         version="WARC/0.17")),
        "h2.warc.gz": ("WARC/0.18", lambda p: warcgen.write(p, [warcgen.page("lwn-1")], gz=True,
                                                            version="WARC/0.18")),
        "res.warc": ("WARC/1.0", lambda p: warcgen.write(p, [warcgen.page("wapo-2")],
                                                         version="WARC/1.0", resource=True)),
    }
    paths = []
    for name, (_, make) in files.items():
        paths.append(make(str(d / name)))
    s = types.SimpleNamespace(store=store, files=files)
    s.run = cli_ok("import", "--create", "--warc", "--store", store, *paths)
    key = cli_ok("keys", "create", "--create", "--store", store).out.strip()
    s.srv = Server(store)
    s.api = Client(s.srv.base, key)
    yield s
    if s.srv.proc.poll() is None:
        problems = s.srv.stop()
        assert not problems, "\n".join(problems)


def test_every_vintage_says_what_it_read(vintages):
    assert parse_summary(vintages.run.err) == {"imported": 5, "updated": 0, "skipped": 0}, \
        repr(vintages.run)
    for name, (fmt, _) in vintages.files.items():
        line = done_line(vintages.run, name)
        assert "1 articles" in line and line.endswith("; read as " + fmt), line
    assert "record at offset" not in vintages.run.err, repr(vintages.run)


def test_every_vintage_is_found_through_the_api(vintages):
    for name in ["guardian-1", "lemonde-1", "lwn-1", "wapo-2"]:
        by_title(vintages.api, name)
    # ARC: the Archive-date stands for the WARC-Date of a page without one
    a = by_title(vintages.api, "mercurial")
    assert a["publishedAt"] == WARC_DATE_API, a
    assert a["url"] == "https://news.example/mercurial/article.html", a


def test_arc_file_with_a_bad_record_line_goes_on(tmp_path):
    store = str(tmp_path / "store")
    os.mkdir(store)
    recs = list(warcgen.arc_records([warcgen.page(n) for n in ["guardian-1", "lemonde-1"]]))
    # the first page's line gets a date ARC does not write
    bad = recs[1].replace(b" 20240305060708 ", b" 2024-03-05 ", 1)
    path = tmp_path / "bad.arc"
    path.write_bytes(recs[0] + bad + recs[2])
    r = run_cli("import", "--create", "--warc", "--store", store, str(path))
    assert r.rc == 0, repr(r)
    assert re.search(r"record at offset \d+: ARC record line: Archive-date is not a "
                     r"YYYYMMDDhhmmss date", r.err), repr(r)
    line = done_line(r, "bad.arc")
    assert "1 articles" in line and line.endswith("; read as ARC v1"), line
