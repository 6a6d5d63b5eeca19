"""The embedded store's WAL is given back while newsd serves (issue 30,
item 8): an import while a reader holds an old snapshot grows the -wal
file far past what SQLite's automatic checkpoints keep it at, and nothing
shrank it again while the store stayed idle. Now an idle store's WAL is
checkpointed with TRUNCATE (src/store/sqlite/idle.c)."""
import os
import sqlite3
import time

from conftest import write_articles
from harness import SLOW, Server, cli_ok

# PRAGMA journal_size_limit on the writer (src/store/sqlite/sqlite.c,
# STORE_SQLITE_WAL_LIMIT): what a restarted WAL is cut back to.
WAL_LIMIT = 16 * 1024 * 1024


def wal_size(store):
    try:
        return os.path.getsize(os.path.join(str(store), "newsd.db-wal"))
    except FileNotFoundError:
        return 0


def test_the_wal_of_a_serving_store_shrinks_once_it_is_idle(tmp_path):
    store = tmp_path / "store"
    cli_ok("import", "--create", "--store", str(store), write_articles(tmp_path / "a.jsonl", 200))
    srv = Server(store, args=["--quiet"])
    try:
        # A reader holding its snapshot keeps every page the import writes
        # in the WAL (no checkpoint may pass it): the WAL of a busy server.
        reader = sqlite3.connect(str(store / "newsd.db"), isolation_level=None)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM articles").fetchone()
        cli_ok("import", "--create", "--store", str(store),
               write_articles(tmp_path / "b.jsonl", 14000, start=200))
        reader.execute("COMMIT")
        reader.close()
        grown = wal_size(store)
        assert grown > WAL_LIMIT, "the import did not grow the WAL past the limit (%d bytes)" % grown
        deadline = time.monotonic() + 60 * SLOW
        while wal_size(store) > 0 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert wal_size(store) == 0, "the WAL stayed at %d bytes (was %d) on an idle store" % (
            wal_size(store), grown)
    finally:
        problems = srv.stop()
    assert not problems, problems
