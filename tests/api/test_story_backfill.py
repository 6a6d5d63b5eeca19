"""The stories of articles stored before stories (issue 25; docs/stories.md
"Backfill"): a store written by 0.14.0 (tests/data/upgrade-stories/, no
story column) holding real copies (three labelled stories of the set
test_story_ids.py reads, wire copies under other titles) and pages of two
sites that share only boiler-plate. After `newsd migrate` every article is
its own story; after `newsd stories backfill` the copies share one in
/v2/stories, /v2/stories/{id} and dedupe=true, the boiler-plate pages stay
apart, and nothing else of a row changes (no new seq: no index re-reads it
and no webhook is sent it again). A second run changes nothing, the batch
size changes nothing, and a running server makes the command refuse."""
import os
import shutil
import sqlite3

import pytest

from harness import REPO, Client, Server, cli_ok, err, ok, run_cli

FIXTURE = os.path.join(REPO, "tests", "data", "upgrade-stories", "schema6")
KEY = "e0e8d36b762debb1a65235b19d7af94a"  # tests/data/upgrade-stories/README.md
NOW = 1626480000  # 2021-07-17T00:00:00Z, after every article of the fixture

SAME = {
    "AP: Spain's hospitals": [
        "https://news.yahoo.com/virus-surge-sends-younger-patients-071309448.html",
        "https://abcnews.go.com/Health/wireStory/virus-surge-sends-younger-patients-spains-hospitals-78768300",
        "https://apnews.com/79cac2e505903e6056685bb922a8eaab",
        "https://www.ctvnews.ca/health/coronavirus/new-virus-surge-sends-younger-patients-to-spain-s-hospitals-1.5504246",
    ],
    "PTI: Singapore study": [
        "https://www.ndtv.com/world-news/1-in-10-recovered-patients-had-long-covid-symptom-in-singapore-study-2483735",
        "https://www.news18.com/news/world/one-in-10-covid-19-patients-had-persistent-symptoms-in-singapore-study-3948857.html",
        "https://www.tribuneindia.com/news/nation/10-show-persistent-symptoms-post-covid-singapore-study-281286",
    ],
    "supervolcano (agency copy, three titles)": [
        "https://www.dw.com/es/supervolc%C3%A1n-parti%C3%B3-la-corteza-terrestre-hace-150-millones-de-a%C3%B1os-revelan-cient%C3%ADficos/a-58208327",
        "https://www.elcomercio.com/tendencias/ciencia/deteccion-supervolcan-movimiento-giro-india.html",
        "https://www.eluniversal.com.mx/ciencia-y-salud/un-supervolcan-movio-y-giro-la-india-hace-105-millones-de-anos",
    ],
}
APART = [
    "https://www.derstandard.de/story/2000128073443/macbooks-neu-designte-modelle-ohne-touchbar-dafuer-mit-mehr-anschluessen",
    "https://www.derstandard.at/story/2000128105518/daimler-stoppt-produktion-in-deutschem-werk",
    "https://www.derstandard.at/story/2000128066607/oneplus-9-aktuelles-softwareupdate-reduziert-die-leistung-des-smartphones-massiv",
    "https://www.blic.rs/biznis/bitkoin-jutros-ostar-pad-vrednosti-vecine-kriptovaluta/g5x2mgz",
    "https://sport.blic.rs/fudbal/domaci-fudbal/dijego-falcineli-napustio-zvezdu-fk-crvena-zvezda-najnovije-vesti/80zpzg3",
]
AP_DOMAINS = "yahoo.com,abcnews.go.com,apnews.com,ctvnews.ca"


def rows(store):
    """url -> (story_id, seq, ingested_at, every other column) of each row."""
    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(store, "newsd.db"), uri=True)
    try:
        cols = [r[1] for r in db.execute("PRAGMA table_info(articles)")]
        rest = [c for c in cols if c not in ("story_id",)]
        q = "SELECT url, %s, %s FROM articles" % (
            "story_id" if "story_id" in cols else "NULL", ", ".join(rest))
        return {r[0]: (r[1], r[2:]) for r in db.execute(q)}
    finally:
        db.close()


def migrated(tmp_path, name="store"):
    store = str(tmp_path / name)
    shutil.copytree(FIXTURE, store)
    cli_ok("migrate", "--store", store)
    return store


def backfill(store, *args):
    r = cli_ok("stories", "backfill", "--store", store, *args)
    return int(r.out.strip()), r.err


def dedupe_ap(store):
    """/v2/everything over the AP copies' domains with dedupe=true."""
    srv = Server(store, now=NOW)
    try:
        api = Client(srv.base, KEY)
        return ok(api.get("/v2/everything", [("domains", AP_DOMAINS), ("dedupe", "true")]))
    finally:
        assert not srv.stop()


def test_the_fixture_is_an_older_store_without_stories(tmp_path):
    store = migrated(tmp_path)
    got = rows(store)
    assert len(got) == 15
    assert all(story is None for story, _ in got.values())
    # read as a story each: the four AP copies are four stories
    b = dedupe_ap(store)
    assert b["totalResults"] == 4 and all(a["storySize"] == 1 for a in b["articles"])


def test_backfill_groups_the_copies_and_changes_nothing_else(tmp_path):
    store = migrated(tmp_path)
    before = rows(store)
    n, log = backfill(store)
    assert n == 15, log
    assert "15 articles read, 15 given a story (7 joined" in log, log
    after = rows(store)
    for name, group in SAME.items():
        ids = {after[u][0] for u in group}
        assert len(ids) == 1 and None not in ids, (name, ids)
    firsts = [after[g[0]][0] for g in SAME.values()] + [after[u][0] for u in APART]
    assert len(set(firsts)) == len(firsts), "two stories merged"
    # only the story column moved: seq, ingested_at and the text are the row's
    assert {u: r[1] for u, r in after.items()} == {u: r[1] for u, r in before.items()}

    srv = Server(store, now=NOW)
    try:
        api = Client(srv.base, KEY)
        b = ok(api.get("/v2/everything", [("domains", AP_DOMAINS), ("dedupe", "true")]))
        assert b["totalResults"] == 1
        assert b["articles"][0]["storySize"] == 4
        sid = b["articles"][0]["storyId"]
        assert sid == str(after[SAME["AP: Spain's hospitals"][0]][0])
        one = ok(api.get("/v2/stories/" + sid))
        assert sorted(a["url"] for a in one["articles"]) == sorted(SAME["AP: Spain's hospitals"])
        for name, group in SAME.items():
            one = ok(api.get("/v2/stories/%d" % after[group[0]][0]))
            assert one["totalResults"] == len(group), name
        # a boiler-plate page is a story of its own
        one = ok(api.get("/v2/stories/%d" % after[APART[0]][0]))
        assert [a["url"] for a in one["articles"]] == [APART[0]]
        # dedupe=false is NewsAPI's answer: every copy
        b = ok(api.get("/v2/everything", [("domains", AP_DOMAINS)]))
        assert b["totalResults"] == 4
    finally:
        assert not srv.stop()


def test_a_second_run_and_the_batch_size_change_nothing(tmp_path):
    one = migrated(tmp_path, "one")
    assert backfill(one)[0] == 15
    first = rows(one)
    n, log = backfill(one)
    assert n == 0 and "0 given a story" in log, log
    assert rows(one) == first
    small = migrated(tmp_path, "small")
    assert backfill(small, "--batch", "1")[0] == 15
    assert {u: r[0] for u, r in rows(small).items()} == {u: r[0] for u, r in first.items()}


def test_a_running_server_makes_it_refuse(tmp_path):
    store = migrated(tmp_path)
    srv = Server(store, now=NOW)
    try:
        r = run_cli("stories", "backfill", "--store", store)
        assert r.rc == 1, repr(r)
        assert "serving this store" in r.err and "backfill the stories" in r.err, repr(r)
        assert all(story is None for story, _ in rows(store).values())
    finally:
        assert not srv.stop()


def test_an_outdated_store_is_refused_unchanged(tmp_path):
    store = str(tmp_path / "old")
    shutil.copytree(FIXTURE, store)
    r = run_cli("stories", "backfill", "--store", store)
    assert r.rc == 1 and "newsd migrate" in r.err, repr(r)
    with open(os.path.join(store, "newsd.db"), "rb") as f, \
            open(os.path.join(FIXTURE, "newsd.db"), "rb") as g:
        assert f.read() == g.read()


@pytest.mark.parametrize("args,code", [
    (["stories"], 2),
    (["stories", "rebuild"], 2),
    (["stories", "backfill", "--batch", "0"], 2),
    (["stories", "backfill", "--batch", "x"], 2),
    (["stories", "backfill", "--batch", "1000001"], 2),
    (["stories", "backfill", "extra"], 2),
    (["stories", "backfill", "--store", "/nonexistent/newsd-store"], 1),
])
def test_bad_use_is_a_clear_refusal(args, code):
    r = run_cli(*args)
    assert r.rc == code, repr(r)
    assert r.err.strip(), repr(r)


def test_help():
    r = cli_ok("stories", "--help")
    assert "backfill" in r.out and "--batch" in r.out
