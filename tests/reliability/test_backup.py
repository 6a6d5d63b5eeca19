"""newsd backup (docs/operations.md): a copy taken while an import writes
is one committed state of the whole store, and restores — copied in as a
new store's newsd.db — to a store that serves, with its keys, and whose
rebuilt search index `newsd index verify` accepts."""
import os
import sqlite3
import stat
import subprocess
import time

from conftest import new_key, write_articles
from gen_articles import WORDS
from harness import BIN, Client, Server, articles_ok, clean_env, cli_ok, run_cli


def count(db):
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        return con.execute("SELECT count(*) FROM articles").fetchone()[0]
    finally:
        con.close()


def test_a_backup_taken_during_an_import_restores_and_verifies(tmp_path):
    store = tmp_path / "store"
    cli_ok("import", "--store", str(store), "--language", "en",
           write_articles(tmp_path / "a.jsonl", 2000))
    key = new_key(store)
    before = count(store / "newsd.db")
    more = write_articles(tmp_path / "b.jsonl", 20000, start=2000)
    imp = subprocess.Popen([BIN, "import", "--store", str(store), "--language", "en", more],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=clean_env())
    try:
        # Wait until the import has committed something, then back up.
        deadline = time.monotonic() + 60
        while count(store / "newsd.db") == before and time.monotonic() < deadline:
            time.sleep(0.05)
        backup = tmp_path / "backups" / "newsd-backup.db"
        backup.parent.mkdir()
        old = os.umask(0o022)
        try:
            r = run_cli("backup", "--store", str(store), str(backup))
        finally:
            os.umask(old)
        assert r.rc == 0, r
        still_importing = imp.poll() is None
    finally:
        _, errs = imp.communicate(timeout=300)
    assert imp.returncode == 0, errs
    after = count(store / "newsd.db")
    assert stat.S_IMODE(os.stat(backup).st_mode) == 0o600
    assert not (tmp_path / "backups" / "newsd-backup.db.tmp").exists()
    copied = count(backup)
    print("before %d, in the backup %d, after %d, import still running at the backup: %s"
          % (before, copied, after, still_importing))
    assert before <= copied <= after

    # Restore: a new store directory holding the copy as its newsd.db.
    restored = tmp_path / "restored"
    restored.mkdir(mode=0o700)
    os.link(backup, restored / "newsd.db")
    v = run_cli("index", "verify", "--store", str(restored))
    assert v.rc == 0 and "ok" in v.out, v
    assert "rows %d" % copied in v.out, v.out
    srv = Server(restored, args=["--quiet"])
    try:
        c = Client(srv.base, key)  # the key made before the backup
        # Every title holds one of WORDS: the restored store serves exactly
        # the rows the backup holds, each found by its words.
        every = " OR ".join('"%s"' % w for w in WORDS)
        b = articles_ok(c.get("/v2/everything", {"q": every, "pageSize": 1}))
        assert b["totalResults"] == copied, (b["totalResults"], copied)
    finally:
        problems = srv.stop()
    assert not problems, problems


def test_backup_usage_and_failures(tmp_path):
    store = tmp_path / "store"
    cli_ok("import", "--store", str(store), write_articles(tmp_path / "a.jsonl", 10))
    r = run_cli("backup", "--store", str(store))
    assert r.rc == 2 and "usage" in r.err, r
    r = run_cli("backup", "--store", str(store), str(tmp_path / "no-such-dir" / "b.db"))
    assert r.rc == 1 and "backup:" in r.err, r
    assert not (tmp_path / "no-such-dir").exists()
    # A backup replaces an older one whole.
    target = tmp_path / "b.db"
    target.write_bytes(b"an older file")
    r = run_cli("backup", "--store", str(store), str(target))
    assert r.rc == 0, r
    assert count(target) == 10
