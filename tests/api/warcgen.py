"""WARC files for the tests, built from tests/data/pages (the page folders of
make bench-pages): what `newsd import --warc` reads. Written here so the
tests depend on no crawl: each page becomes a request and a response record
(plus a warcinfo record first and a metadata record per page, as Common
Crawl's files have), the response's HTTP head saying 200 and text/html
unless told otherwise.

  write(path, pages, gz=False, ...)   one WARC file; gz: one gzip member per
                                      record (CC-NEWS's layout); version:
                                      "WARC/0.17" for a Heritrix 1.x file;
                                      resource: pages as resource records
  write_arc(path, pages, gz=False)    one ARC v1 file (the Internet
                                      Archive's format; Heritrix's layout
                                      when gz)
  Page(name, url, status, body, ...)  one page to write
"""
import gzip
import io
import os
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
PAGES = os.path.join(HERE, "..", "data", "pages")
WARC_DATE = "2024-03-05T06:07:08Z"


class Page:
    def __init__(self, name, url, body, status=200, content_type="text/html; charset=utf-8",
                 chunked=False, gzip_body=False, date=WARC_DATE):
        self.name, self.url, self.body = name, url, body
        self.status, self.content_type = status, content_type
        self.chunked, self.gzip_body, self.date = chunked, gzip_body, date


def page_names():
    return sorted(n for n in os.listdir(PAGES)
                  if os.path.isfile(os.path.join(PAGES, n, "source.html")))


def source(name):
    with open(os.path.join(PAGES, name, "source.html"), "rb") as f:
        return f.read()


def page(name, host="news.example", **kw):
    return Page(name, "https://%s/%s/article.html" % (host, name), source(name), **kw)


def record(warc_type, uri, date, block, content_type, version="WARC/1.1"):
    head = [
        version,
        "WARC-Type: " + warc_type,
        "WARC-Record-ID: <urn:uuid:%s>" % uuid.uuid4(),
        "WARC-Date: " + date,
    ]
    if uri:
        head.append("WARC-Target-URI: " + uri)
    head += ["Content-Type: " + content_type, "Content-Length: %d" % len(block)]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + block + b"\r\n\r\n"


def http_response(p):
    body = p.body
    headers = ["HTTP/1.1 %d %s" % (p.status, "OK" if p.status == 200 else "Status")]
    if p.content_type:
        headers.append("Content-Type: " + p.content_type)
    if p.gzip_body:
        body = gzip.compress(body)
        headers.append("Content-Encoding: gzip")
    if p.chunked:
        out = io.BytesIO()
        for i in range(0, len(body), 7000):
            chunk = body[i:i + 7000]
            out.write(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
        out.write(b"0\r\n\r\n")
        body = out.getvalue()
        headers.append("Transfer-Encoding: chunked")
    else:
        headers.append("Content-Length: %d" % len(body))
    return ("\r\n".join(headers) + "\r\n\r\n").encode() + body


def records(pages, version="WARC/1.1", resource=False):
    """resource: each page a resource record (the page as it is, under its
    own Content-Type) instead of a request and a response."""
    yield record("warcinfo", None, WARC_DATE, b"software: newsd tests\r\n",
                 "application/warc-fields", version)
    for p in pages:
        if resource:
            yield record("resource", p.url, p.date, p.body, p.content_type, version)
        else:
            req = ("GET / HTTP/1.1\r\nHost: %s\r\n\r\n" % p.url.split("/")[2]).encode()
            yield record("request", p.url, p.date, req, "application/http; msgtype=request",
                         version)
            yield record("response", p.url, p.date, http_response(p),
                         "application/http; msgtype=response", version)
        yield record("metadata", p.url, p.date, b"fetchTimeMs: 12\r\n", "application/warc-fields",
                     version)


def arc_date(warc_date):
    """2024-03-05T06:07:08Z -> 20240305060708 (ARC's Archive-date)."""
    return "".join(c for c in warc_date if c.isdigit())[:14]


def arc_records(pages):
    """ARC v1: the version block (a record whose URL is filedesc://), then
    one record per page: "URL IP-address Archive-date Content-type
    Archive-length", a newline, the HTTP response, a newline."""
    desc = (b"1 0 newsd tests\n"
            b"URL IP-address Archive-date Content-type Archive-length\n")
    yield (b"filedesc://tests.arc 0.0.0.0 %s text/plain %d\n" % (
        arc_date(WARC_DATE).encode(), len(desc))) + desc + b"\n"
    for p in pages:
        block = http_response(p)
        line = "%s 192.0.2.7 %s %s %d\n" % (p.url, arc_date(p.date),
                                            (p.content_type or "no-type").split(";")[0],
                                            len(block))
        yield line.encode() + block + b"\n"


def write_arc(path, pages, gz=False):
    with open(path, "wb") as f:
        for rec in arc_records(pages):
            f.write(gzip.compress(rec) if gz else rec)
    return path


def write(path, pages, gz=False, raw=None, version="WARC/1.1", resource=False):
    """Write the records of pages; raw: a list of (index, bytes) put in as
    they are before the record of that index (malformed records)."""
    raw = dict(raw or [])
    with open(path, "wb") as f:
        for i, rec in enumerate(records(pages, version, resource)):
            if i in raw:
                f.write(gzip.compress(raw[i]) if gz else raw[i])
            f.write(gzip.compress(rec) if gz else rec)
    return path
