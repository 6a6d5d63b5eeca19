#!/usr/bin/env python3
"""Pages per second through `newsd import --warc` (make bench-pages,
docs/extraction.md): writes the development set's pages (DEVSET) as one
WARC/1.0 file of response records into OUT, imports it into a new store
there with NEWSD (build/newsd by default) and prints newsd's own summary
and the pages per second of wall time, storage and indexing included.
Pages without a URL get one under http://devset.invalid/. Figures only.

    bench/pages_warc.py DEVSET [OUT] [NEWSD]"""
import gzip
import json
import os
import shutil
import subprocess
import sys
import time


def record(url, body):
    http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n" % len(body) + body
    head = ("WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: %s\r\n"
            "WARC-Date: 2024-01-01T00:00:00Z\r\nWARC-Record-ID: <urn:uuid:%08d-0000-0000-0000-000000000000>\r\n"
            "Content-Type: application/http; msgtype=response\r\nContent-Length: %d\r\n\r\n"
            % (url, record.n, len(http))).encode()
    record.n += 1
    return head + http + b"\r\n\r\n"


record.n = 0


def main():
    devset = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else "build/pages-table"
    newsd = sys.argv[3] if len(sys.argv) > 3 else "build/newsd"
    os.makedirs(out, exist_ok=True)
    warc = os.path.join(out, "dev.warc")
    n = 0
    with open(warc, "wb") as w, open(os.path.join(devset, "expectations.jsonl"), encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            with gzip.open(os.path.join(devset, rec["file"]), "rb") as f:
                body = f.read()
            url = rec.get("url") or "http://devset.invalid/" + os.path.basename(rec["file"])[:-3]
            w.write(record(url.strip(), body))
            n += 1
    store = os.path.join(out, "warc-store")
    shutil.rmtree(store, ignore_errors=True)
    start = time.monotonic()
    res = subprocess.run([newsd, "import", "--warc", "--store", store, "--create", warc],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    secs = time.monotonic() - start
    print(res.stdout.strip())
    print(f"newsd import --warc: {n} pages in {secs:.2f} s, {n / secs:.0f} pages/s"
          " (wall time; parsing, extraction, storage and indexing)")
    shutil.rmtree(store, ignore_errors=True)


if __name__ == "__main__":
    main()
