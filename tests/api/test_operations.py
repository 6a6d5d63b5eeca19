"""Running newsd for a year (issue 30): one server per store, SIGHUP that
neither kills nor goes unnoticed, imports whose exit status says whether
anything went in, and a key whose plan is gone told so."""
import json
import os
import re
import signal
import time

from corpus import DATA
from harness import SLOW, Client, Server, cli_ok, err, run_cli


def small_store(tmp_path):
    store = str(tmp_path / "store")
    cli_ok("sources", "import", "--create", "--store", store, os.path.join(DATA, "sources.jsonl"))
    cli_ok("import", "--create", "--store", store, os.path.join(DATA, "articles.jsonl"))
    return store


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)


def test_a_second_serve_on_one_store_is_refused_naming_the_first(tmp_path):
    """Two servers on one store would share one index directory with no
    order between their checkpoints, merges and deletions (issue 30 item
    13): the second is refused, and the message names the first's pid."""
    store = small_store(tmp_path)
    first = Server(store)
    try:
        second = run_cli("serve", "--store", store, "--listen", "127.0.0.1:0", "--no-crawl",
                         timeout=30 * SLOW)
        assert second.rc == 1, repr(second)
        assert "pid %d" % first.proc.pid in second.err, repr(second)
        assert "listening on" not in second.out, repr(second)
        # The first one is untouched by the attempt.
        key = cli_ok("keys", "create", "--create", "--store", store).out.strip()
        r = Client(first.base, key).get("/v2/everything", {"q": "the"})
        assert r.status_code == 200, r.text
    finally:
        assert not first.stop()
    # With the first stopped the store is free again: the lock died with it.
    again = Server(store)
    assert not again.stop()


def test_the_lock_of_a_killed_server_does_not_outlive_it(tmp_path):
    """A crash (SIGKILL) leaves the pid file behind but not the lock:
    systemd's restart must not find its own store 'in use'."""
    store = small_store(tmp_path)
    first = Server(store)
    first.proc.kill()
    first.proc.wait()
    again = Server(store)
    assert not again.stop()


def test_sighup_is_logged_and_the_server_keeps_serving(tmp_path):
    """SIGHUP's default action ended newsd without a word (issue 30 item
    12): it is now logged, says what a reload would need, and serving goes
    on until SIGTERM, which still exits 0."""
    store = small_store(tmp_path)
    key = cli_ok("keys", "create", "--create", "--store", store).out.strip()
    srv = Server(store)
    try:
        srv.proc.send_signal(signal.SIGHUP)
        wait_for(lambda: "SIGHUP" in srv.stderr(), 10 * SLOW, "the SIGHUP log line")
        assert srv.proc.poll() is None
        assert "restart" in srv.stderr()
        r = Client(srv.base, key).get("/v2/everything", {"q": "the"})
        assert r.status_code == 200, r.text
    finally:
        assert not srv.stop()


def test_an_import_of_which_nothing_went_in_fails(tmp_path):
    """Every line refused: exit 1 and a line that says so (issue 30 item
    11). An empty input imports nothing and is not a failure; one good line
    among bad ones is a success."""
    store = str(tmp_path / "store")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"title": "no url"}\nnot json at all\n{"url": 5}\n')
    r = run_cli("import", "--create", "--store", store, str(bad))
    assert r.rc == 1, repr(r)
    assert "nothing was imported" in r.err and "all 3 records were skipped" in r.err, repr(r)

    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    r = run_cli("import", "--create", "--store", store, str(empty))
    assert r.rc == 0, repr(r)

    mixed = tmp_path / "mixed.jsonl"
    good = {"url": "https://example.com/a", "title": "A title", "publishedAt": "2024-01-02T03:04:05Z",
            "source": {"id": None, "name": "Example"}}
    mixed.write_text(json.dumps(good) + "\nnot json\n")
    r = run_cli("import", "--create", "--store", store, str(mixed))
    assert r.rc == 0, repr(r)
    assert re.search(r"imported 1\b", r.err), repr(r)


def test_a_key_whose_plan_is_gone_is_told_so(tmp_path):
    """A key on a plan the config no longer defines is refused (never
    granted more), with NewsAPI's code but a message that says why; a
    disabled key keeps NewsAPI's own message."""
    store = small_store(tmp_path)
    cfg = tmp_path / "plans.conf"
    cfg.write_text("[plan gold]\nrequests_per_day = 1000\n")
    key = cli_ok("keys", "create", "--create", "--store", store, "--plan", "gold", "--config",
                 str(cfg)).out.strip()
    off = cli_ok("keys", "create", "--create", "--store", store, "--name", "off").out.strip()
    cli_ok("keys", "disable", "--store", store, "off")
    srv = Server(store)  # without the config: the plan 'gold' is unknown
    try:
        b = err(Client(srv.base, key).get("/v2/everything", {"q": "the"}), 401, "apiKeyDisabled")
        assert "plan is not defined on this server" in b["message"], b
        b = err(Client(srv.base, off).get("/v2/everything", {"q": "the"}), 401, "apiKeyDisabled")
        assert b["message"] == "Your API key has been disabled.", b
    finally:
        assert not srv.stop()


SECTIONS = {"server": "## [server]", "outbound": "## [outbound]",
            "retention": "## [retention]", "plan x": "## [plan NAME]"}


def parser_keys(tmp_path, section):
    """The keys the config parser accepts in section, from its own table: an
    unknown key is refused with the list of the known ones."""
    conf = tmp_path / "probe.conf"
    conf.write_text("[%s]\nno_such_key_here = 1\n" % section)
    r = run_cli("serve", "--config", str(conf), "--store", str(tmp_path / "never"))
    assert r.rc == 2, repr(r)
    m = re.search(r"unknown key 'no_such_key_here' in \[%s\] \(([^)]*)\)" % re.escape(section),
                  r.err)
    assert m, repr(r)
    keys = [k.strip() for k in m.group(1).split(",")]
    assert len(keys) >= 3 and all(re.fullmatch(r"[a-z_]+", k) for k in keys), keys
    return keys


def test_every_config_key_the_parser_accepts_is_documented(tmp_path):
    """docs/configuration.md has a row for every key of every section, in
    that section, and the man page names each one (issue 30 item 9: the
    reference had 10 of 19 [server] keys, the man page 7)."""
    from harness import REPO
    reference = open(os.path.join(REPO, "docs", "configuration.md"), encoding="utf-8").read()
    man = open(os.path.join(REPO, "docs", "newsd.1"), encoding="utf-8").read()
    heads = [(reference.index(h), name) for name, h in SECTIONS.items()]
    missing = []
    for name, head in SECTIONS.items():
        start = reference.index(head)
        ends = [at for at, _ in heads if at > start]
        part = reference[start:min(ends) if ends else len(reference)]
        for k in parser_keys(tmp_path, name):
            if "| `%s` |" % k not in part:
                missing.append("configuration.md [%s] %s" % (name, k))
            if not re.search(r"^\.B[R]? %s\b" % re.escape(k), man, re.M) and \
                    not re.search(r"\(%s\)|\b%s\b" % (re.escape(k), re.escape(k)), man):
                missing.append("newsd.1 %s" % k)
    assert not missing, missing
    assert not os.path.exists(tmp_path / "never"), "a refused config must create no store"
