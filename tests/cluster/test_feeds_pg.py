"""Managing feeds on a PostgreSQL store through the real CLI (docs/feeds.md):
the same adds, edits, pauses and an OPML import on a fresh database and on
an embedded store give the same exports and the same listed settings, and
an export of the PostgreSQL store imports into an embedded one unchanged."""
import json
import os

from conftest import newsd

OPML = """<?xml version="1.0" encoding="UTF-8"?>
<opml version="1.0"><head><title>reader</title></head><body>
  <outline text="Business">
    <outline type="rss" text="FT" xmlUrl="https://www.ft.com/rss/home"/>
    <outline text="Markets"><outline type="rss" text="M" xmlUrl="https://m.example.com/rss"/></outline>
  </outline>
  <outline type="rss" text="Plain" xmlUrl="https://plain.example.org/atom.xml"/>
</body></opml>
"""
KEYS = ("url", "source", "country", "category", "language", "headlines", "interval", "state")


def manage(store, opml_path):
    _, out, _ = newsd("feeds", "add", "--create", "--store", store, "https://a.example.org/rss",
                      "--source", "bbc-news", "--country", "gb", "--headlines",
                      "--interval", "3600")
    first = out.strip()
    newsd("feeds", "import", "--create", "--store", store, opml_path)
    newsd("feeds", "edit", "--store", store, first, "--interval", "600", "--no-headlines",
          "--category", "general", "--country", "")
    newsd("feeds", "pause", "--store", store, "3")
    newsd("feeds", "pause", "--store", store, "4")
    newsd("feeds", "resume", "--store", store, "4")
    rc, _, err = newsd("feeds", "edit", "--store", store, "99", "--interval", "600",
                       check=False)
    assert rc == 1 and "no feed has the id '99'" in err, err


def listed(store):
    _, out, _ = newsd("feeds", "list", "--store", store, "--format", "json")
    return [{k: f.get(k) for k in KEYS} for f in json.loads(out)]


def test_feed_management_on_postgresql_matches_the_embedded_store(pg, workdir):
    uri = pg.new_database()
    emb = os.path.join(workdir, "feeds-emb")
    opml = os.path.join(workdir, "reader.opml")
    with open(opml, "w") as f:
        f.write(OPML)
    manage(uri, opml)
    manage(emb, opml)
    got = listed(uri)
    assert got == listed(emb)
    assert [f["state"] for f in got] == ["active", "active", "paused", "active"]
    assert [f["category"] for f in got] == ["general", "business", "business", None]
    assert got[0]["interval"] == 600 and got[0]["headlines"] is False
    assert got[0].get("country") is None
    _, exported, _ = newsd("feeds", "export", "--store", uri)
    assert exported == newsd("feeds", "export", "--store", emb)[1]
    path = os.path.join(workdir, "pg-export.opml")
    with open(path, "w") as f:
        f.write(exported)
    again = os.path.join(workdir, "feeds-again")
    newsd("feeds", "import", "--create", "--store", again, path)
    assert listed(again) == got
