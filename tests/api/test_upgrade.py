"""Upgrades you can trust (issue 30 item 1): the version moves and says
what it writes on disk, only `newsd serve` and `newsd migrate` migrate a
store, every other command refuses one that needs it and leaves it as it
was, and a store made by an earlier release answers the same searches
after the upgrade as one made by this build (docs/operations.md
"Upgrading"). The stores of earlier releases are in tests/data/upgrade/."""
import fcntl
import hashlib
import os
import re
import shutil
import sqlite3

import pytest

from corpus import DATA
from harness import REPO, Client, Server, cli_ok, run_cli

# The upgrade of the engine's segment files (index build, the rebuild of an
# older format, the versions verify prints): the release and ASan runs use
# the engine; the fts5 run has nothing of it to check.
pytestmark = pytest.mark.by_design(os.environ.get("NEWSD_INDEX") == "fts5",
                                   reason="the engine's files are what an upgrade rebuilds")

UPGRADE = os.path.join(REPO, "tests", "data", "upgrade")
# The key each fixture's `keys create` printed (tests/data/upgrade/README.md).
FIXTURE_KEYS = {"schema4": "6df27848b30dfec9b80058c8ba9d2bf1",
                "schema6": "3f8a53387efe81151668d59e676c6dfa",
                "schema9-fts5": "a647b2d3dafc45de5afaa0c77e318aeb"}
FIXTURES = sorted(d for d in os.listdir(UPGRADE) if os.path.isdir(os.path.join(UPGRADE, d)))
ARTICLES = 12  # the first lines of tests/data/api/articles.jsonl, as the fixtures hold
QUERIES = [{"q": "the"}, {"q": "market OR election"}, {"q": "\"prime minister\""},
           {"q": "the", "sortBy": "relevancy"}, {"q": "a", "pageSize": "3", "page": "2"},
           {"domains": "bbc.co.uk"}, {"q": "nothingmatchesthisword"}]


def versions():
    """(release, schema of an embedded store, segment format) of this build."""
    out = cli_ok("--version").out
    m = re.search(r"^newsd (\S+) \(commit", out, re.M)
    s = re.search(r"store schema version (\d+) \(embedded\), (\d+) \(PostgreSQL\); "
                  r"engine segment format (\d+)", out)
    assert m and s, out
    return m.group(1), int(s.group(1)), int(s.group(3))


def schema_of(store):
    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(store, "newsd.db"), uri=True)
    try:
        return int(db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0])
    finally:
        db.close()


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def fixture_copy(tmp_path, name):
    store = str(tmp_path / name)
    shutil.copytree(os.path.join(UPGRADE, name), store)
    return store


def reference_store(tmp_path, index="engine"):
    """The fixtures' articles imported by this build; its key."""
    store = str(tmp_path / ("reference-" + index))
    path = str(tmp_path / "arts.jsonl")
    with open(os.path.join(DATA, "articles.jsonl"), encoding="utf-8") as f, \
            open(path, "w", encoding="utf-8") as out:
        for _ in range(ARTICLES):
            out.write(f.readline())
    env = {"NEWSD_INDEX": index}
    cli_ok("import", "--create", "--store", store, path, env=env)
    return store, cli_ok("keys", "create", "--store", store, env=env).out.strip()


def answers(store, key, index=None, queries=QUERIES):
    """The bodies of queries over /v2/everything and of /v2/top-headlines/sources."""
    srv = Server(store, args=("--index", index) if index else ())
    try:
        c = Client(srv.base, key)
        bodies = []
        for q in queries:
            r = c.get("/v2/everything", q)
            assert r.status_code == 200, r.text
            bodies.append(r.json())
        r = c.get("/v2/top-headlines/sources")
        assert r.status_code == 200, r.text
        bodies.append(r.json())
        return bodies, srv.stderr()
    finally:
        assert not srv.stop()


def test_the_version_moves_and_names_what_it_writes():
    """newsd --version: the release of the VERSION file, which CHANGELOG.md
    has an entry for, and the store schema and segment format it writes."""
    release, schema, segment = versions()
    with open(os.path.join(REPO, "VERSION")) as f:
        assert release == f.read().strip()
    with open(os.path.join(REPO, "CHANGELOG.md"), encoding="utf-8") as f:
        changelog = f.read()
    assert re.search(r"^## \[%s\]" % re.escape(release), changelog, re.M), \
        "CHANGELOG.md has no section for %s" % release
    assert schema >= 6 and segment >= 6


@pytest.mark.parametrize("name", FIXTURES)
def test_a_store_of_an_earlier_release_is_migrated_only_when_asked(tmp_path, name):
    """keys list and index verify refuse a store that needs a migration,
    say to stop the old server and run newsd migrate, and leave its file
    byte-identical; newsd migrate migrates and says from what to what; then
    the store answers as one made by this build."""
    _, current, _ = versions()
    store = fixture_copy(tmp_path, name)
    db = os.path.join(store, "newsd.db")
    before, old = digest(db), schema_of(store)
    if old < current:
        for cmd in (["keys", "list"], ["index", "verify"], ["import", "--create"]):
            args = cmd + ["--store", store] + ([db] if cmd[0] == "import" else [])
            r = run_cli(*args)
            assert r.rc == 1, repr(r)
            assert "newsd migrate" in r.err and "stop" in r.err, repr(r)
            assert "schema version %d needs migrating to %d" % (old, current) in r.err, repr(r)
            assert digest(db) == before, "%s changed the store's file" % " ".join(cmd)
            assert not os.path.exists(db + "-wal") or os.path.getsize(db + "-wal") == 0
        r = cli_ok("migrate", "--store", store)
        assert "schema migrated from version %d to %d" % (old, current) in r.out, repr(r)
        assert "schema migrated from version %d to %d" % (old, current) in r.err, repr(r)
        assert schema_of(store) == current
    r = cli_ok("migrate", "--store", store)
    assert "schema version %d, nothing to migrate" % current in r.out, repr(r)
    assert "fixture" in cli_ok("keys", "list", "--store", store).out

    ref, ref_key = reference_store(tmp_path)
    got, _ = answers(store, FIXTURE_KEYS[name])
    want, _ = answers(ref, ref_key)
    assert got == want


@pytest.mark.parametrize("name", FIXTURES)
def test_serve_migrates_an_earlier_release_store_and_logs_it(tmp_path, name):
    """Starting the new server is the other way to migrate: it logs the
    versions, and an index of an older segment format is rebuilt."""
    _, current, _ = versions()
    store = fixture_copy(tmp_path, name)
    old = schema_of(store)
    got, log = answers(store, FIXTURE_KEYS[name])
    if old < current:
        assert "schema migrated from version %d to %d" % (old, current) in log, log
    if os.path.isdir(os.path.join(UPGRADE, name, "newsd.db.engine")):
        assert "rebuilding" in log, log  # its segments are of an older format
    assert schema_of(store) == current
    assert got[0]["totalResults"] > 0


# The fixtures' authors as author: finds them: a whole field, one of a
# list, another script; relevancy over the words beside them.
AUTHOR_QUERIES = [{"q": 'author:"Callum Marius"'}, {"q": 'author:"asif iqbal shaik"'},
                  {"q": "author:SamMobile OR author:cnbeta"},
                  {"q": 'author:"Алексей Олефиренко"'}, {"q": "the -author:\"the associated press\""},
                  {"q": "the", "sortBy": "relevancy"}, {"q": "market OR election", "sortBy": "relevancy"}]


def fts5_varints(blob):
    """The integers of an FTS5 docsize record (SQLite's varint: 7 bits a
    byte, high bit set on all but the last)."""
    out, v = [], 0
    for b in blob:
        v = (v << 7) | (b & 0x7F)
        if not b & 0x80:
            out.append(v)
            v = 0
    return out


def check_full_text(store):
    """index verify (FTS5's integrity check) passes, and each row's meta
    column is as long as its stored meta terms: the authors' terms,
    colocated, add nothing to the length bm25 reads."""
    cli_ok("index", "verify", "--store", store, "--index", "fts5")
    db = sqlite3.connect(os.path.join(store, "newsd.db"))
    try:
        rows = db.execute("SELECT a.meta_terms, d.sz FROM articles a"
                          " JOIN articles_fts_docsize d ON d.id = a.id").fetchall()
    finally:
        db.close()
    assert rows
    for meta, sz in rows:
        assert fts5_varints(sz)[3] == len(meta.split()), (meta, fts5_varints(sz))


def test_a_full_text_store_gets_its_authors_terms_at_migration(tmp_path):
    """Schema 10: a store with the FTS5 side, made by the release before,
    has its full-text table made again with the authors' terms, so author:
    in q finds on it, through FTS5, what a store made by this build finds,
    with the same relevancy; no row is longer for them; FTS5's own
    integrity check passes; and a deletion still takes its article out (a
    contentless table's delete repeats what was inserted)."""
    store = fixture_copy(tmp_path, "schema9-fts5")
    got, log = answers(store, FIXTURE_KEYS["schema9-fts5"], index="fts5", queries=AUTHOR_QUERIES)
    assert "schema migrated from version 9 to %d" % versions()[1] in log, log
    ref, ref_key = reference_store(tmp_path, "fts5")
    want, _ = answers(ref, ref_key, index="fts5", queries=AUTHOR_QUERIES)
    assert got == want
    assert [b["totalResults"] for b in got[:4]] == [1, 1, 2, 1], got
    check_full_text(store)
    check_full_text(ref)
    db = sqlite3.connect(os.path.join(store, "newsd.db"))
    try:
        url = db.execute("SELECT url FROM articles WHERE author = 'Callum Marius'").fetchone()[0]
    finally:
        db.close()
    cli_ok("articles", "delete", "--store", store, "--url", url)
    check_full_text(store)
    got, _ = answers(store, FIXTURE_KEYS["schema9-fts5"], index="fts5", queries=AUTHOR_QUERIES[:1])
    assert got[0]["totalResults"] == 0, got


def tree_digest(path):
    return {f: digest(os.path.join(path, f)) for f in sorted(os.listdir(path))}


def test_index_build_ahead_of_an_upgrade_spares_the_rebuild(tmp_path):
    """newsd index build (new binary) beside the old server: it writes the
    new segment format into a directory of its own, touching neither the
    live index (whose lock a server holds: here this test) nor the store's
    file, even of an older schema; after the switch the new server adopts
    it instead of rebuilding, and answers as a store made by this build."""
    _, current, segment = versions()
    store = fixture_copy(tmp_path, "schema4")
    live = os.path.join(store, "newsd.db.engine")
    db = os.path.join(store, "newsd.db")
    before_live, before_db, old = tree_digest(live), digest(db), schema_of(store)
    with open(os.path.join(live, "lock"), "r+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the old server's hold
        r = cli_ok("index", "build", "--store", store)
    staged = os.path.join(store, "newsd.db.engine.v%d" % segment)
    assert "index built ahead in %s: segment format %d, %d articles" % (
        staged, segment, ARTICLES) in r.out, repr(r)
    assert tree_digest(live) == before_live
    assert digest(db) == before_db and schema_of(store) == old
    if old < current:
        cli_ok("migrate", "--store", store)
    got, log = answers(store, FIXTURE_KEYS["schema4"])
    assert "adopted the index built ahead in %s" % staged in log, log
    assert "opened from its files" in log and "rebuilding" not in log, log
    assert not os.path.exists(staged)
    ref, ref_key = reference_store(tmp_path)
    want, _ = answers(ref, ref_key)
    assert got == want


def test_a_staged_index_still_being_built_is_not_adopted(tmp_path):
    """A server that starts while index build still runs (it holds the
    staged directory's lock) keeps to the live index and leaves the staged
    one alone; the next start, the build done, adopts it."""
    _, _, segment = versions()
    store = fixture_copy(tmp_path, "schema6")
    cli_ok("index", "build", "--store", store)
    staged = os.path.join(store, "newsd.db.engine.v%d" % segment)
    with open(os.path.join(staged, "lock"), "r+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the build's hold
        _, log = answers(store, FIXTURE_KEYS["schema6"])
    assert "%s is still being built" % staged in log, log
    assert "adopted the index" not in log and os.path.isdir(staged), log
    _, log = answers(store, FIXTURE_KEYS["schema6"])
    assert "adopted the index built ahead in %s" % staged in log, log
    assert not os.path.exists(staged)


def test_index_build_is_refused_where_it_cannot_help(tmp_path):
    store = fixture_copy(tmp_path, "schema6")
    r = run_cli("index", "build", "--store", store, "--index", "fts5")
    assert r.rc == 1 and "only the engine" in r.err, repr(r)
    r = run_cli("index", "build", "--store", "postgresql://nobody@127.0.0.1:1/none")
    assert r.rc == 1 and "only for the embedded store" in r.err, repr(r)
    missing = str(tmp_path / "missing")
    r = run_cli("index", "build", "--store", missing)
    assert r.rc == 1 and "no store at" in r.err and not os.path.exists(missing), repr(r)


def test_migrate_refuses_while_a_server_runs_on_the_store(tmp_path):
    """A migration under a running server of the old version is what broke
    upgrades: migrate takes the server's lock first."""
    store = fixture_copy(tmp_path, "schema6")
    srv = Server(store)
    try:
        r = run_cli("migrate", "--store", store)
        assert r.rc == 1, repr(r)
        assert "pid %d" % srv.proc.pid in r.err and "stop it first" in r.err, repr(r)
    finally:
        assert not srv.stop()
    cli_ok("migrate", "--store", store)


def test_backup_copies_a_store_of_an_earlier_release_as_it_is(tmp_path):
    """Step 1 of an upgrade may be run with the new binary: backup only
    reads, so it copies a store that needs a migration without migrating
    it, and the copy is migrated like the original."""
    _, current, _ = versions()
    store = fixture_copy(tmp_path, "schema4")
    db = os.path.join(store, "newsd.db")
    before, old = digest(db), schema_of(store)
    copy = str(tmp_path / "copy" / "newsd.db")
    os.mkdir(os.path.dirname(copy))
    cli_ok("backup", "--store", store, copy)
    assert digest(db) == before
    assert schema_of(os.path.dirname(copy)) == old
    r = cli_ok("migrate", "--store", os.path.dirname(copy))
    assert "from version %d to %d" % (old, current) in r.out or old == current, repr(r)


def test_index_verify_prints_the_schema_and_segment_versions(tmp_path):
    _, schema, segment = versions()
    store = fixture_copy(tmp_path, "schema6")
    if schema_of(store) < schema:
        cli_ok("migrate", "--store", store)
    out = cli_ok("index", "verify", "--store", store).out
    assert "schema version %d" % schema in out, out
    assert "segment format %d" % segment in out, out
