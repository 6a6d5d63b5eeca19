"""WARC files for the tests, built from tests/data/pages (the page folders of
make bench-pages): what `newsd import --warc` reads. Written here so the
tests depend on no crawl: each page becomes a request and a response record
(plus a warcinfo record first and a metadata record per page, as Common
Crawl's files have), the response's HTTP head saying 200 and text/html
unless told otherwise.

  write(path, pages, gz=False, ...)   one WARC file; gz: one gzip member per
                                      record (CC-NEWS's layout)
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


def record(warc_type, uri, date, block, content_type):
    head = [
        "WARC/1.1",
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


def records(pages):
    yield record("warcinfo", None, WARC_DATE, b"software: newsd tests\r\n",
                 "application/warc-fields")
    for p in pages:
        req = ("GET / HTTP/1.1\r\nHost: %s\r\n\r\n" % p.url.split("/")[2]).encode()
        yield record("request", p.url, p.date, req, "application/http; msgtype=request")
        yield record("response", p.url, p.date, http_response(p),
                     "application/http; msgtype=response")
        yield record("metadata", p.url, p.date, b"fetchTimeMs: 12\r\n", "application/warc-fields")


def write(path, pages, gz=False, raw=None):
    """Write the records of pages; raw: a list of (index, bytes) put in as
    they are before the record of that index (malformed records)."""
    raw = dict(raw or [])
    with open(path, "wb") as f:
        for i, rec in enumerate(records(pages)):
            if i in raw:
                f.write(gzip.compress(raw[i]) if gz else raw[i])
            f.write(gzip.compress(rec) if gz else rec)
    return path
