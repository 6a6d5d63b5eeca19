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
    cli_ok("import", "--create", "--store", str(store), "--language", "en",
           write_articles(tmp_path / "a.jsonl", 2000))
    key = new_key(store)
    before = count(store / "newsd.db")
    more = write_articles(tmp_path / "b.jsonl", 20000, start=2000)
    imp = subprocess.Popen([BIN, "import", "--create", "--store", str(store), "--language", "en", more],
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
    cli_ok("import", "--create", "--store", str(store), write_articles(tmp_path / "a.jsonl", 10))
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


def test_the_temporary_file_is_unpredictable_and_the_backup_private(tmp_path):
    """issue 23 item 7: the copy was written through FILE.tmp, opened with
    O_CREAT|O_TRUNC: a symlink planted there truncated and overwrote its
    target, and an existing FILE.tmp kept its mode (0666 backups). The
    temporary is now made by mkstemp beside FILE: a planted symlink and its
    target are left alone, and the backup is 0600 whatever was there."""
    store = tmp_path / "store"
    cli_ok("import", "--create", "--store", str(store), write_articles(tmp_path / "a.jsonl", 10))
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"not yours")
    target = out / "b.db"
    os.symlink(victim, str(target) + ".tmp")
    target.write_bytes(b"an older, world-readable backup")
    os.chmod(target, 0o666)
    old = os.umask(0)
    try:
        r = run_cli("backup", "--store", str(store), str(target))
    finally:
        os.umask(old)
    assert r.rc == 0, r
    assert victim.read_bytes() == b"not yours"
    assert os.path.islink(str(target) + ".tmp")
    assert stat.S_IMODE(os.lstat(target).st_mode) == 0o600
    # Nothing else left beside it: the temporary took the target's name.
    assert sorted(os.listdir(out)) == ["b.db", "b.db.tmp"]
    assert count(target) == 10


def test_a_backup_into_the_store_directory_is_refused(tmp_path):
    """issue 30 item 4: a target inside the store directory (or below it,
    by any spelling of its path), or one of the store's files under another
    name, is refused with a clear message; the store is untouched."""
    store = tmp_path / "store"
    cli_ok("import", "--create", "--store", str(store), write_articles(tmp_path / "a.jsonl", 10))
    alias = tmp_path / "alias"
    os.symlink(store, alias)
    link = tmp_path / "link.db"
    os.symlink(store / "newsd.db", link)
    (store / "sub").mkdir()
    (tmp_path / "out").mkdir()
    before = sorted(os.listdir(store))
    for target in (store / "newsd.db", store / "newsd.db-wal", store / "backup.db",
                   store / "sub" / "b.db", alias / "b.db",
                   tmp_path / "out" / ".." / "store" / "b.db"):
        r = run_cli("backup", "--store", str(store), str(target))
        assert r.rc == 1, (target, r)
        assert "inside the store directory" in r.err, (target, r.err)
        assert not os.path.exists(target) or target.name.startswith("newsd.db"), target
    r = run_cli("backup", "--store", str(store), str(link))
    assert r.rc == 1 and "the store's own file" in r.err, r
    assert os.path.islink(link)
    assert sorted(os.listdir(store)) == before
    assert count(store / "newsd.db") == 10
    r = run_cli("backup", "--store", str(store), str(tmp_path / "fine.db"))
    assert r.rc == 0 and count(tmp_path / "fine.db") == 10, r
