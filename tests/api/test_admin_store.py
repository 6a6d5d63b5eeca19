"""Admin commands find the service's store (issue 30 item 6): they read the
config file as serve does (--config, else $NEWSD_CONFIG, else
/etc/newsd/newsd.conf) and use its [server] store when neither --store nor
$NEWSD_STORE is given; no command makes an empty store at a mistyped path
(only import, sources import, keys create and feeds add|import create one,
with --create or at the configured or default path), and a refusal names
the path and where it came from."""
import os
import subprocess

import pytest

from corpus import DATA
from harness import BIN, SLOW, Client, Server, clean_env, cli_ok, run_cli

ARTICLES = os.path.join(DATA, "articles.jsonl")
SOURCES = os.path.join(DATA, "sources.jsonl")


def config(tmp_path, store, name="newsd.conf"):
    path = str(tmp_path / name)
    with open(path, "w") as f:
        f.write("[server]\nstore = %s\n" % store)
    return path


def made_store(tmp_path, name="store"):
    store = str(tmp_path / name)
    cli_ok("import", "--create", "--store", store, ARTICLES)
    return store


def refused_missing(r, path, origin):
    assert r.rc == 1, repr(r)
    assert "no store at %s (%s" % (path, origin) in r.err, repr(r)
    assert not os.path.exists(path), "%s was created" % path


# Every command that must not create a store, with what else it needs.
READERS = [
    ["keys", "list"], ["keys", "disable", "1"], ["feeds", "list"], ["feeds", "poll", "--all"],
    ["articles", "compact"], ["articles", "delete", "--before", "2000-01-01"],
    ["alerts", "list"], ["index", "verify"], ["index", "sizes"], ["crawl", "--once"],
    ["migrate"],
]


@pytest.mark.parametrize("cmd", READERS, ids=lambda c: "-".join(c[:2]))
def test_a_command_that_reads_refuses_a_missing_store(tmp_path, cmd):
    typo = str(tmp_path / "stroe")
    refused_missing(run_cli(*(cmd + ["--store", typo])), typo, "given by --store")
    r = run_cli(*cmd, env={"NEWSD_STORE": typo})
    refused_missing(r, typo, "from $NEWSD_STORE")
    conf = config(tmp_path, typo)
    refused_missing(run_cli(*cmd, "--config", conf), typo, "from the config file " + conf)


def test_backup_refuses_a_missing_store_named_by_the_config(tmp_path):
    """backup has no --config: it reads $NEWSD_CONFIG."""
    typo = str(tmp_path / "stroe")
    conf = config(tmp_path, typo)
    r = run_cli("backup", str(tmp_path / "copy.db"), env={"NEWSD_CONFIG": conf})
    refused_missing(r, typo, "from the config file " + conf)


CREATORS = [
    (["import"], [ARTICLES]), (["sources", "import"], [SOURCES]), (["keys", "create"], []),
    (["feeds", "add"], ["https://example.com/feed.xml"]),
]


@pytest.mark.parametrize("cmd,args", CREATORS, ids=["-".join(c) for c, _ in CREATORS])
def test_a_command_that_creates_needs_create_for_a_typed_path(tmp_path, cmd, args):
    """A --store or $NEWSD_STORE path may be a typo: a new store there needs
    --create; the configured path does not."""
    typo = str(tmp_path / "stroe")
    r = run_cli(*(cmd + ["--store", typo] + args))
    refused_missing(r, typo, "given by --store")
    assert "--create" in r.err, repr(r)
    refused_missing(run_cli(*(cmd + args), env={"NEWSD_STORE": typo}), typo, "from $NEWSD_STORE")
    cli_ok(*(cmd + ["--store", typo, "--create"] + args))
    assert os.path.exists(os.path.join(typo, "newsd.db"))
    configured = str(tmp_path / "configured")
    cli_ok(*(cmd + ["--config", config(tmp_path, configured)] + args))
    assert os.path.exists(os.path.join(configured, "newsd.db"))


def test_the_default_store_is_made_only_by_a_creating_command(tmp_path):
    """Without --store, $NEWSD_STORE or a config, the default ./newsd-data:
    keys list refuses it when missing, keys create makes it."""
    def run(*args):
        p = subprocess.run([BIN] + list(args), cwd=str(tmp_path), capture_output=True,
                           text=True, env=clean_env(), timeout=60 * SLOW)
        return p.returncode, p.stderr
    rc, err = run("keys", "list")
    assert rc == 1 and "no store at ./newsd-data (the default)" in err, err
    assert not os.path.exists(tmp_path / "newsd-data")
    rc, err = run("keys", "create")
    assert rc == 0, err
    assert os.path.exists(tmp_path / "newsd-data" / "newsd.db")


def test_admin_commands_work_on_the_store_of_the_config_file(tmp_path):
    """The reported failure: a key printed for ./newsd-data that the server,
    on its configured store, rejects. Now keys create with the service's
    config (--config or $NEWSD_CONFIG) makes the key in the served store."""
    store = made_store(tmp_path)
    conf = config(tmp_path, store)
    key = cli_ok("keys", "create", "--config", conf, "--name", "ops").out.strip()
    assert "ops" in cli_ok("keys", "list", env={"NEWSD_CONFIG": conf}).out
    assert not os.path.exists(tmp_path / "newsd-data")
    # --store and $NEWSD_STORE still win over the config file.
    other = made_store(tmp_path, "other")
    assert "ops" not in cli_ok("keys", "list", "--config", conf, "--store", other).out
    assert "ops" not in cli_ok("keys", "list", env={"NEWSD_CONFIG": conf,
                                                     "NEWSD_STORE": other}).out
    # serve finds the same store from the same file, and the key works there.
    srv = Server(store, args=["--config", conf])
    try:
        r = Client(srv.base, key).get("/v2/everything", {"q": "the"})
        assert r.status_code == 200, r.text
    finally:
        assert not srv.stop()


def test_serve_reads_newsd_config_for_its_store(tmp_path):
    """serve without --store or --config: $NEWSD_CONFIG's [server] store."""
    store = made_store(tmp_path)
    key = cli_ok("keys", "create", "--store", store).out.strip()
    conf = config(tmp_path, store)
    p = subprocess.Popen([BIN, "serve", "--listen", "127.0.0.1:0", "--no-crawl"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=clean_env({"NEWSD_CONFIG": conf}))
    try:
        line = p.stdout.readline()
        assert "listening on http://127.0.0.1:" in line, (line, p.stderr.read())
        base = line.split("listening on ")[1].strip().rstrip("/")
        r = Client(base, key).get("/v2/everything", {"q": "the"})
        assert r.status_code == 200, r.text
    finally:
        p.terminate()
        p.wait(timeout=30 * SLOW)
    assert p.returncode == 0


def test_a_config_file_that_cannot_be_read_is_an_error(tmp_path):
    r = run_cli("keys", "list", "--config", str(tmp_path / "missing.conf"))
    assert r.rc == 1 and "missing.conf" in r.err, repr(r)
    r = run_cli("keys", "list", env={"NEWSD_CONFIG": str(tmp_path / "missing.conf")})
    assert r.rc == 1 and "missing.conf" in r.err, repr(r)
