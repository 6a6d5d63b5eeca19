"""An export's bytes do not change when its code is made faster (issue 27
item 2): every line, escape, CSV quote, story id and cursor of a few whole
exports of the session's store is what the export before its speed-up
(commit 3331b68) wrote.

tests/data/api/export-bytes.json holds, per export, the status, the
number of bytes and the SHA-256 of the body that build gave on the
session's store (the fixture imported as conftest.py imports it, the clock
at the fixture's NOW). Regenerate it only when an export is meant to
change, and say why in the commit:

    NEWSD_BIN=/path/to/newsd python3 tests/api/test_export_bytes.py --write
"""
import hashlib
import json
import os
import sys

from test_newsapi_bytes import golden_answers, golden_write

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "..", "data", "api", "export-bytes.json")

# Broad and narrow, both formats, the handmade articles' Unicode, the
# fixture's hostile fields among the com domains.
EXPORTS = [
    "q=the",
    "q=the&format=csv",
    "q=%22covid%22%20OR%20%22the%22&language=en",
    "domains=com&excludeDomains=cnn.com&from=2023-01-05&to=2023-01-08&format=csv",
    "domains=com",
    "domains=com&format=csv",
    "domains=newsd.test",
    "domains=newsd.test&format=csv",
    "q=%C3%A9t%C3%A9",
]


def answer(base, key, query):
    import requests
    r = requests.get("%s/v2/everything/export?%s&apiKey=%s" % (base, query, key), timeout=60)
    return {"status": r.status_code, "bytes": len(r.content),
            "sha256": hashlib.sha256(r.content).hexdigest()}


def answers(base, key):
    return {q: answer(base, key, q) for q in EXPORTS}


def test_exports_write_the_bytes_they_wrote_before_the_speed_up(server, store):
    with open(GOLDEN, encoding="utf-8") as f:
        golden = json.load(f)
    assert sorted(golden) == sorted(EXPORTS)
    got = answers(server.base, store.keys["main"])
    assert all(g["status"] == 200 and g["bytes"] > 0 for g in got.values()), got
    changed = [q for q in EXPORTS if got[q] != golden[q]]
    assert not changed, "exports changed: %s" % changed


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"] or not os.environ.get("NEWSD_BIN"):
        sys.exit(__doc__)
    golden_write(GOLDEN, golden_answers(os.environ["NEWSD_BIN"], answers))
