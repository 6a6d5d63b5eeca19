"""newsd restore (issue 30 item 3), the way the shipped unit lays a store
out: systemd's DynamicUser= makes /var/lib/newsd a symlink to
/var/lib/private/newsd, a directory owned by the service's user, and the
service runs as that user. The documented `mv` of the store directory moved
the symlink (systemd then refused to start), and an admin command run as
root left root-owned index files the service could not read (it rebuilt
its index in memory at every start).

The service's user here is a throwaway uid with no passwd entry, taken with
setpriv(1); the tests need root for that and are skipped otherwise."""
import os
import random
import shutil
import sqlite3
import stat
import tempfile
import time

import pytest

import harness
from conftest import write_articles
from harness import Client, Server, articles_ok, cli_ok, run_cli

NOW = 1704067200 + 30 * 86400  # gen_articles' articles are from 2024-01-01 on
QUERIES = [("/v2/everything", {"q": "harbor", "sortBy": "publishedAt", "pageSize": 20}),
           ("/v2/everything", {"q": "glacier OR falcon", "pageSize": 50, "page": 2}),
           ("/v2/sources", {})]

pytestmark = pytest.mark.skipif(os.geteuid() != 0,
                                reason="needs root: the service's user is a throwaway uid "
                                       "taken with setpriv")


def free_uid():
    import pwd
    import grp
    while True:
        uid = random.randint(40000, 59999)
        try:
            pwd.getpwuid(uid)
            continue
        except KeyError:
            pass
        try:
            grp.getgrgid(uid)
            continue
        except KeyError:
            return uid


@pytest.fixture
def service(monkeypatch):
    """(uid, base, run_as): a uid for the service, a base directory laid out
    as /var/lib with private/newsd owned by it and newsd -> private/newsd,
    and a context that makes harness' newsd runs setpriv to the uid."""
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv(1) not installed")
    uid = free_uid()
    base = tempfile.mkdtemp(prefix="newsd-varlib-")
    os.chmod(base, 0o755)
    os.mkdir(os.path.join(base, "private"), 0o700)  # as systemd makes it
    store = os.path.join(base, "private", "newsd")
    os.mkdir(store, 0o700)
    os.chown(store, uid, uid)
    os.symlink("private/newsd", os.path.join(base, "newsd"))
    # /var/lib/private is 0700 root: only systemd's mount namespace lets the
    # service through. Here the service's uid goes through a 0711 one.
    os.chmod(os.path.join(base, "private"), 0o711)
    wrapper = os.path.join(base, "as-service")
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\nexec setpriv --reuid=%d --regid=%d --clear-groups -- %s \"$@\"\n"
                % (uid, uid, harness.BIN))
    os.chmod(wrapper, 0o755)
    root_bin = harness.BIN

    class RunAs:
        def __init__(self, as_service):
            self.as_service = as_service

        def __enter__(self):
            monkeypatch.setattr(harness, "BIN", wrapper if self.as_service else root_bin)

        def __exit__(self, *exc):
            monkeypatch.setattr(harness, "BIN", root_bin)

    try:
        yield uid, base, RunAs
    finally:
        shutil.rmtree(base, ignore_errors=True)


def owners(directory):
    """path -> uid of everything under directory (the directory too)."""
    out = {directory: os.lstat(directory).st_uid}
    for root, dirs, files in os.walk(directory):
        for name in dirs + files:
            p = os.path.join(root, name)
            out[p] = os.lstat(p).st_uid
    return out


def import_from_stdin(store, path):
    """newsd import of the file at path through stdin (the service's uid
    cannot read the test's temporary directory)."""
    with open(path, "rb") as f:
        cli_ok("import", "--create", "--store", store, "-", stdin=f.read())


def answers(srv, key):
    c = Client(srv.base, key)
    out = []
    for path, params in QUERIES:
        r = c.get(path, params)
        assert r.status_code == 200, r.text
        out.append(r.content)
    return out


def count(db):
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        return con.execute("SELECT count(*) FROM articles").fetchone()[0]
    finally:
        con.close()


def test_a_root_run_restore_serves_the_backed_up_answers_to_the_services_user(service, tmp_path):
    uid, base, run_as = service
    link = os.path.join(base, "newsd")
    real = os.path.join(base, "private", "newsd")
    with run_as(True):  # the service's own store, made by the service's user
        import_from_stdin(link, write_articles(tmp_path / "a.jsonl", 1500))
        key = cli_ok("keys", "create", "--create", "--store", link, "--name", "restore").out.strip()
        srv = Server(link, now=NOW, args=["--quiet"])
    try:
        before = answers(srv, key)
        assert articles_ok(Client(srv.base, key).get(*QUERIES[0]))["totalResults"] > 0
        backup = tmp_path / "newsd-backup.db"
        cli_ok("backup", "--store", link, str(backup))  # as root, while serving
        # Restoring under a running server is refused, naming it.
        r = run_cli("restore", "--store", link, str(backup))
        assert r.rc == 1 and "pid %d" % srv.proc.pid in r.err, r
        with run_as(True):  # the store moves on after the backup
            import_from_stdin(link, write_articles(tmp_path / "b.jsonl", 700, start=1500))
        deadline = time.monotonic() + 30
        while answers(srv, key) == before and time.monotonic() < deadline:
            time.sleep(0.1)
        assert answers(srv, key) != before
    finally:
        problems = srv.stop()
    assert not problems, problems
    assert count(os.path.join(real, "newsd.db")) == 2200

    r = cli_ok("restore", "--store", link, str(backup))  # as root
    assert "restored" in r.err, r
    assert os.path.islink(link) and os.readlink(link) == "private/newsd"
    assert not os.path.exists(os.path.join(real, "newsd.db.engine")), "the old index was kept"
    assert not os.path.exists(os.path.join(real, "newsd.db.restore"))
    st = os.stat(os.path.join(real, "newsd.db"))
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (uid, uid, 0o600)
    wrong = {p: u for p, u in owners(real).items() if u != uid}
    assert not wrong, "root-owned files after the restore: %r" % wrong
    assert count(os.path.join(real, "newsd.db")) == 1500

    # The documented check after a restore, run as root: it builds the
    # index, whose files must be the service's (else the service, unable to
    # read them, rebuilt its index in memory at every start).
    v = cli_ok("index", "verify", "--store", link)
    assert "ok" in v.out and "built from the table" in v.out, v
    wrong = {p: u for p, u in owners(real).items() if u != uid}
    assert not wrong, "root-owned files after a root-run index verify: %r" % wrong
    with run_as(True):
        srv = Server(link, now=NOW, args=["--quiet"])
    try:
        assert answers(srv, key) == before, "the restored store answers differently"
        assert "opened from its files" in srv.stderr(), srv.stderr()[-2000:]
    finally:
        problems = srv.stop()
    assert not problems, problems


def test_restore_refuses_what_is_not_a_sound_newsd_store(service, tmp_path):
    uid, base, run_as = service
    link = os.path.join(base, "newsd")
    real = os.path.join(base, "private", "newsd")
    with run_as(True):
        import_from_stdin(link, write_articles(tmp_path / "a.jsonl", 50))
    files = tmp_path.__class__(base) / "files"  # where the service's uid can read
    files.mkdir(mode=0o755)
    junk = files / "junk.db"
    junk.write_bytes(b"not a database at all" * 100)
    other = files / "other.db"
    con = sqlite3.connect(str(other))
    con.execute("CREATE TABLE t(x)")
    con.commit()
    con.close()
    damaged = files / "damaged.db"
    cli_ok("backup", "--store", link, str(damaged))
    con = sqlite3.connect("file:%s?mode=ro" % damaged, uri=True)
    page_size = con.execute("PRAGMA page_size").fetchone()[0]
    root = con.execute("SELECT rootpage FROM sqlite_master WHERE name = 'articles'").fetchone()[0]
    con.close()
    raw = bytearray(damaged.read_bytes())
    at = (root - 1) * page_size
    raw[at:at + 12] = b"\xff" * 12  # the articles table's root page header: no b-tree page
    damaged.write_bytes(bytes(raw))
    for f in (junk, other, damaged):
        os.chmod(f, 0o644)
    before = open(os.path.join(real, "newsd.db"), "rb").read()
    for bad, why in ((junk, "not a SQLite database"), (other, "not a newsd store"),
                     (damaged, "damaged"), (files / "missing.db", "cannot open")):
        with run_as(True):  # the service's user restoring its own store
            r = run_cli("restore", "--store", link, str(bad))
        assert r.rc == 1 and why in r.err, (why, r)
        assert open(os.path.join(real, "newsd.db"), "rb").read() == before
        assert not os.path.exists(os.path.join(real, "newsd.db.restore"))
    r = run_cli("restore", "--store", link)
    assert r.rc == 2 and "usage" in r.err, r
    r = run_cli("restore", "--store", str(tmp_path / "nowhere"), str(damaged))
    assert r.rc == 1 and "does not exist" in r.err, r
    assert not os.path.exists(tmp_path / "nowhere")


def test_a_restore_drops_an_index_built_ahead_from_the_replaced_table(tmp_path):
    """`newsd index build` stages the next format's index beside the live
    one (newsd.db.engine.vN), and the next server adopts it: built from the
    table a restore replaces, it would be taken for the restored table's
    (same store, same table identity). restore removes it with the live
    index and an adoption's leftover (newsd.db.engine.old)."""
    store = str(tmp_path / "s")
    cli_ok("keys", "create", "--create", "--store", store)
    backup = tmp_path / "b.db"
    cli_ok("backup", "--store", store, str(backup))
    version = [l for l in cli_ok("--version").out.splitlines() if "segment format" in l][0]
    fmt = version.rsplit(" ", 1)[1]
    leftovers = [os.path.join(store, "newsd.db.engine.v" + fmt),
                 os.path.join(store, "newsd.db.engine.old"), os.path.join(store, "newsd.db.engine")]
    for d in leftovers:
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "seg-0000000000000001.seg"), "wb") as f:
            f.write(b"from the replaced table")
    cli_ok("restore", "--store", store, str(backup))
    assert [d for d in leftovers if os.path.exists(d)] == []
