"""The command line (§7, §8, and the test interface): import summaries and
bad-line reports, sources import, keys, exit statuses, SIGTERM."""
import json
import os
import re
import sqlite3
import subprocess
import time
import types

import pytest

from corpus import DATA, image_url
from harness import (BIN, SLOW, Client, Server, articles_ok, clean_env, cli_ok, parse_summary,
                     run_cli, sanitizer_findings, sources_ok, urls)


def good(n, **kw):
    a = {"source": {"id": None, "name": "Cli Gazette"}, "author": None,
         "title": "Clitest article %d" % n, "description": None,
         "url": "https://cli.test/a%d" % n, "urlToImage": None,
         "publishedAt": "2021-01-0%dT10:00:00Z" % n, "content": None}
    a.update(kw)
    return json.dumps(a)


def test_fixture_import_summary(store, corpus):
    """The session store's imports: every line imported, none skipped; the
    re-import of two urls counted as updates (§8 upsert)."""
    run = store.import_run
    # The only reports: real NewsAPI image URLs that are no http(s) URL
    # ("null" as a string), stored as null; a relative path is resolved
    # against the article's URL and kept.
    lines = corpus.real_lines + corpus.handmade_lines
    dropped = [n for n, line in enumerate(lines, 1)
               if line.get("urlToImage") is not None
               and image_url(line["urlToImage"], line.get("url")) is None]
    assert dropped, "the fixture has such image URLs: this checks their report"
    reports = re.findall(r"line (\d+): (.*)", run.err)
    assert all("urlToImage" in why for _, why in reports), run.err
    assert len(reports) == len(dropped), run.err
    assert "%d image URLs dropped" % len(dropped) in run.err, run.err
    s = store.import_summary
    assert s == {"imported": len(corpus.real_lines) + len(corpus.handmade_lines),
                 "updated": 0, "skipped": 0}, repr(run)
    assert store.update_summary == {"imported": 0, "updated": 2, "skipped": 0}, \
        repr(store.update_run)


def test_bad_lines_reported_and_skipped(tmp_path):
    f = tmp_path / "mixed.jsonl"
    f.write_text("\n".join([
        good(1),
        "{not json",
        good(2),
        json.dumps({"title": "no url here", "publishedAt": "2021-01-01T00:00:00Z"}),
        json.dumps("a JSON string, not an article"),
        good(3),
    ]) + "\n")
    store = tmp_path / "s"
    store.mkdir()
    r = run_cli("import", "--create", "--store", store, f)
    for n in (2, 4, 5):
        assert re.search(r"^.*line %d:" % n, r.err, re.M), repr(r)
    for n in (1, 3, 6):
        assert not re.search(r"line %d:" % n, r.err), repr(r)
    assert parse_summary(r.out + "\n" + r.err) == {"imported": 3, "updated": 0, "skipped": 3}, \
        repr(r)
    r = run_cli("import", "--create", "--store", store, f)
    assert parse_summary(r.out + "\n" + r.err) == {"imported": 0, "updated": 3, "skipped": 3}, \
        repr(r)


def test_image_urls_other_than_http_are_stored_as_null(tmp_path):
    """Issue 14 item 7: urlToImage reaches browsers as an img src or a link,
    so only http(s) URLs with a host are kept; the others are reported,
    counted in the summary and served as null (before the fix javascript:
    and data: URLs were stored and served). Issue 23 item 10: a relative
    reference (NewsAPI gives /images/... for some sites) is resolved against
    the article's URL and kept (it was dropped)."""
    bad = ["javascript:alert(3)", "data:text/html,<script>alert(3)</script>",
           "ftp://cdn.test/a.jpg", "http://", "https:///path.jpg", "null",
           "JaVaScRiPt:alert(4)", "http://cdn.test/a\n.jpg", "/images/a b.jpg", "//"]
    kept = ["http://cdn.test/a.jpg", "https://cdn.test/b.jpg?w=640&h=480",
            "HTTPS://CDN.test:8443/c.jpg"]
    resolved = {"/images/news/2021/07/x.jpg": "https://img.test/images/news/2021/07/x.jpg",
                "images/relative.jpg": "https://img.test/images/relative.jpg",
                "../up/./y.png?w=1": "https://img.test/up/y.png?w=1",
                "//cdn.test/a.jpg": "https://cdn.test/a.jpg"}
    f = tmp_path / "images.jsonl"
    images = bad + kept + list(resolved) + [""]  # empty: null too, but no report
    f.write_text("\n".join(good(1, url="https://img.test/%d" % i, urlToImage=u,
                                 title="Imagetest article %d" % i)
                            for i, u in enumerate(images)) + "\n")
    store = tmp_path / "s"
    r = cli_ok("import", "--create", "--store", store, f)
    assert parse_summary(r.err) == {"imported": len(images), "updated": 0, "skipped": 0}, repr(r)
    assert "%d image URLs dropped" % len(bad) in r.err, repr(r)
    reported = {int(n) for n in re.findall(r"line (\d+): urlToImage", r.err)}
    assert reported == set(range(1, len(bad) + 1)), repr(r)
    key = cli_ok("keys", "create", "--create", "--store", store, "--name", "img").out.strip()
    srv = Server(store)
    try:
        b = articles_ok(Client(srv.base, key).get("/v2/everything",
                                                  {"q": "Imagetest", "pageSize": 100}))
    finally:
        problems = srv.stop()
    assert not problems, problems
    served = {a["url"]: a["urlToImage"] for a in b["articles"]}
    assert served == {"https://img.test/%d" % i: (u if u in kept else resolved.get(u))
                      for i, u in enumerate(images)}, served


def test_keys_lifecycle(tmp_path):
    store = tmp_path / "k"
    store.mkdir()
    k1 = cli_ok("keys", "create", "--create", "--store", store, "--name", "alpha").out
    k2 = cli_ok("keys", "create", "--create", "--store", store, "--name", "beta", "--plan", "unlimited").out
    for k in (k1, k2):
        assert len(k.split()) == 1 and k.endswith("\n"), repr(k)
    assert k1 != k2
    assert key_rows(store) == {"alpha": ("1", "unlimited", "active"),
                               "beta": ("2", "unlimited", "active")}
    # Each verb seen doing its work in the listing, not only exiting 0.
    for verb, state in (("disable", "disabled"), ("enable", "active")):
        cli_ok("keys", verb, "--store", store, "beta")
        assert key_rows(store)["beta"] == ("2", "unlimited", state), verb
    cli_ok("keys", "delete", "--store", store, "2")  # an id works as a name does
    assert key_rows(store) == {"alpha": ("1", "unlimited", "active")}
    for verb in ("disable", "enable", "delete"):
        r = run_cli("keys", verb, "--store", store, "no-such-key")
        assert r.rc == 1, repr(r)
        assert len([l for l in r.err.splitlines() if l.strip()]) == 1, repr(r)
    # An unknown plan exits 2 (docs/configuration.md), creating nothing.
    r = run_cli("keys", "create", "--create", "--store", store, "--plan", "no-such-plan")
    assert r.rc == 2 and r.err.strip() and not r.out.strip(), repr(r)
    assert list(key_rows(store)) == ["alpha"]


def key_rows(store):
    """keys list as {name: (id, plan, state)}."""
    lines = cli_ok("keys", "list", "--store", store).out.splitlines()
    assert lines[0].split()[:4] == ["ID", "NAME", "PLAN", "STATE"], lines[0]
    return {f[1]: (f[0], f[2], f[3]) for f in (line.split() for line in lines[1:] if line.strip())}


def test_keys_set_plan_is_seen_by_a_running_server(tmp_path):
    """set-plan changes the plan in the store; a running server applies it
    (here at once: NEWSD_KEY_CACHE_TTL_MS=0); a plan of --config works, an
    unknown plan exits 2, an unknown key 1, and neither changes anything."""
    store = tmp_path / "k"
    cfg = tmp_path / "plans.conf"
    cfg.write_text("[plan five]\nrequests_per_day = 5\n")
    key = cli_ok("keys", "create", "--create", "--store", store, "--name", "alpha").out.strip()
    srv = Server(store, args=["--config", str(cfg)], env={"NEWSD_KEY_CACHE_TTL_MS": "0"})
    try:
        c = Client(srv.base, key)
        r = c.get("/v2/top-headlines/sources")
        assert r.status_code == 200 and "X-RateLimit-Limit" not in r.headers, r.headers
        cli_ok("keys", "set-plan", "--store", store, "alpha", "developer")
        assert key_rows(store)["alpha"] == ("1", "developer", "active")
        r = c.get("/v2/top-headlines/sources")
        assert r.headers.get("X-RateLimit-Limit") == "100", r.headers
        cli_ok("keys", "set-plan", "--store", store, "1", "five", "--config", str(cfg))
        r = c.get("/v2/top-headlines/sources")
        assert r.headers.get("X-RateLimit-Limit") == "5", r.headers
        r = run_cli("keys", "set-plan", "--store", store, "alpha", "no-such-plan")
        assert r.rc == 2 and "unknown plan 'no-such-plan'" in r.err, repr(r)
        r = run_cli("keys", "set-plan", "--store", store, "nobody", "business")
        assert r.rc == 1 and "'nobody'" in r.err, repr(r)
        assert key_rows(store)["alpha"] == ("1", "five", "active")
    finally:
        problems = srv.stop()
    assert not problems, problems


def test_keys_ambiguous_name_refused(tmp_path):
    store = tmp_path / "k2"
    store.mkdir()
    cli_ok("keys", "create", "--create", "--store", store, "--name", "twin")
    cli_ok("keys", "create", "--create", "--store", store, "--name", "twin")
    r = run_cli("keys", "disable", "--store", store, "twin")
    # Exit 1 (docs/configuration.md), and neither key was touched.
    assert r.rc == 1 and r.err.strip(), repr(r)
    assert "disabled" not in cli_ok("keys", "list", "--store", store).out


S = "{store}"
USAGE = [
    [], ["no-such-command"], ["import", "--create", "--store", S], ["import", "--create", "--store"],
    ["serve", "--store", S, "--no-such-flag"], ["keys"], ["keys", "frobnicate", "--store", S],
    ["keys", "disable", "--store", S], ["keys", "create", "--create", "--store", S, "--name"],
    ["sources"], ["sources", "import", "--create", "--store", S], ["sources", "frobnicate", "--store", S],
    ["import", "--create", "--store", S, "--country"], ["serve", "--store", S, "--listen"],
]


@pytest.mark.parametrize("args", USAGE, ids=[" ".join(a) or "(none)" for a in USAGE])
def test_usage_errors_exit_2(tmp_path, args):
    store = tmp_path / "u"
    store.mkdir()
    r = run_cli(*[str(store) if a == S else a for a in args])
    assert r.rc == 2, repr(r)
    assert r.err.strip(), repr(r)


@pytest.mark.parametrize("args", [["import"], ["sources", "import"]])
def test_missing_file_exits_1(tmp_path, args):
    store = tmp_path / "f"
    store.mkdir()
    r = run_cli(*args, "--store", store, tmp_path / "does-not-exist.jsonl")
    assert r.rc == 1, repr(r)
    # one clear line (an import's closing summary line aside)
    lines = [l for l in r.err.splitlines() if l.strip() and not parse_summary(l)]
    assert len(lines) == 1, repr(r)


@pytest.mark.parametrize("proxy", ["http://user:PW5ECRET@bad host:3128",
                                   "socks5://user:PW5ECRET@proxy.lan:1080"])
@pytest.mark.parametrize("command", [["crawl", "--once"], ["serve"]])
def test_a_bad_proxy_in_the_config_is_refused_without_its_password(tmp_path, proxy, command):
    """[outbound] proxy may carry user:password@: a wrong one stops the
    command with the file and line, never the password (docs/security.md)."""
    store = tmp_path / "p"
    store.mkdir()
    conf = tmp_path / "newsd.conf"
    conf.write_text("[outbound]\nproxy = %s\n" % proxy)
    r = run_cli(*command, "--store", store, "--config", conf)
    assert r.rc == 2, repr(r)  # a config error, as every other
    assert "newsd.conf:2: proxy" in r.err, repr(r)
    assert "PW5ECRET" not in r.err + r.out, repr(r)


# ---- a trickled import: `tail -f articles.jsonl | newsd import -` ----------------------

def stored_urls(store):
    """The urls in the store's articles table; none while there is no
    database yet or a writer holds it."""
    try:
        db = sqlite3.connect("file:%s?mode=ro" % os.path.join(str(store), "newsd.db"), uri=True,
                             timeout=1)
        try:
            return {row[0] for row in db.execute("SELECT url FROM articles")}
        finally:
            db.close()
    except sqlite3.OperationalError:
        return set()


def wait_stored(store, url, proc, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if url in stored_urls(store):
            return True
        assert proc.poll() is None, "the import ended early (status %s)" % proc.returncode
        time.sleep(0.05)
    return False


def test_a_trickled_import_stores_each_batch_without_more_input(tmp_path):
    """A pipe that goes quiet: an article is stored within about 200 ms
    (IMPORT_BATCH_MS) of arriving, not when the next line or the end of input
    comes; also while a later line has come only in part. Closing the pipe
    ends the import with status 0."""
    store = tmp_path / "s"
    store.mkdir()
    err_path = tmp_path / "import.err"
    with open(err_path, "wb") as err:
        proc = subprocess.Popen([BIN, "import", "--create", "--store", str(store), "-"],
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=err,
                                env=clean_env())
    try:
        first, second = good(1), good(2)
        half = len(second) // 2
        proc.stdin.write((first + "\n" + second[:half]).encode())
        proc.stdin.flush()
        assert wait_stored(store, "https://cli.test/a1", proc, 10 * SLOW), \
            "the first article was not stored while the input stayed open"
        assert "https://cli.test/a2" not in stored_urls(store)
        proc.stdin.write((second[half:] + "\n").encode())
        proc.stdin.flush()
        assert wait_stored(store, "https://cli.test/a2", proc, 10 * SLOW), \
            "the second article was not stored while the input stayed open"
        proc.stdin.close()
        rc = proc.wait(timeout=30 * SLOW)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = err_path.read_text(errors="replace")
    assert rc == 0, text
    assert not sanitizer_findings(text), text
    assert parse_summary(text) == {"imported": 2, "updated": 0, "skipped": 0}, text
    assert stored_urls(store) == {"https://cli.test/a1", "https://cli.test/a2"}


# ---- a store built through the other input forms, then served ---------------------------
@pytest.fixture(scope="module")
def small(tmp_path_factory):
    d = tmp_path_factory.mktemp("small")
    store = str(d / "store")
    os.mkdir(store)
    s = types.SimpleNamespace()
    s.sources = cli_ok("sources", "import", "--create", "--store", store, os.path.join(DATA, "sources.json"))
    # a NewsAPI response JSON file
    resp = d / "response.json"
    resp.write_text(json.dumps({"status": "ok", "totalResults": 2, "articles": [
        json.loads(good(1, source={"id": "bbc-news", "name": "BBC News"})),
        json.loads(good(2))]}))
    s.resp = cli_ok("import", "--create", "--store", store, str(resp))
    # JSONL on stdin
    s.stdin = cli_ok("import", "--create", "--store", store, "-",
                     stdin=(good(3) + "\n" + good(4) + "\n").encode())
    key = cli_ok("keys", "create", "--create", "--store", store).out.strip()
    srv = Server(store)
    s.api = Client(srv.base, key)
    s.srv = srv
    yield s
    if srv.proc.poll() is None:
        problems = srv.stop()
        assert not problems, "\n".join(problems)


def test_sources_import_newsapi_json(small):
    with open(os.path.join(DATA, "sources.json"), encoding="utf-8") as f:
        cat = json.load(f)["sources"]
    b = sources_ok(small.api.get("/v2/sources"))
    assert b["sources"] == sorted(cat, key=lambda s: s["id"].encode())


def test_import_response_json_and_stdin(small):
    assert parse_summary(small.resp.out + small.resp.err).get("imported") == 2, repr(small.resp)
    assert parse_summary(small.stdin.out + small.stdin.err).get("imported") == 2, \
        repr(small.stdin)
    b = articles_ok(small.api.get("/v2/everything", [("q", "clitest")]))
    assert urls(b) == ["https://cli.test/a%d" % n for n in (4, 3, 2, 1)]
    assert b["articles"][3]["source"] == {"id": "bbc-news", "name": "BBC News"}


def test_serve_sigterm_exits_0(small):
    """Last in this module: stop the small server; it must exit 0, cleanly."""
    assert small.api.get("/healthz", key=None).status_code == 200
    problems = small.srv.stop()
    assert not problems, "\n".join(problems)


def test_index_sizes_parts_add_up_to_the_files(tmp_path):
    """`newsd index sizes`: the engine's files part by part, every byte
    named once (the parts add up to the index proper and the document store,
    and those to the files on disk), none before the files are there (and
    nothing built to make them), and no breakdown for fts5."""
    store = tmp_path / "s"
    cli_ok("import", "--create", "--store", store, os.path.join(DATA, "articles.jsonl"),
           os.path.join(DATA, "handmade.jsonl"))
    # before any index files: a report, not a build of the whole table (10 minutes at 10 M)
    r = run_cli("index", "sizes", "--store", store, "--index", "engine")
    assert r.rc == 1 and "no index files of segment format" in r.err, repr(r)
    assert not os.path.exists(os.path.join(store, "newsd.db.engine")), "sizes made the directory"
    cli_ok("index", "verify", "--store", store, "--index", "engine")  # writes the files
    r = cli_ok("index", "sizes", "--store", store, "--index", "engine")
    parts = {}
    for line in r.out.splitlines():
        f = line.split()
        if len(f) == 4 and f[1].isdigit():
            parts[f[0]] = int(f[1])
    head = re.search(r"segments (\d+) \((\d+) files, (\d+) bytes\); documents (\d+), terms (\d+)",
                     r.out)
    assert head, r.out
    files = [os.path.join(store, "newsd.db.engine", n)
             for n in os.listdir(os.path.join(store, "newsd.db.engine")) if n.endswith(".seg")]
    on_disk = sum(os.path.getsize(p) for p in files)
    assert int(head.group(2)) == len(files) and int(head.group(3)) == on_disk, r.out
    index_parts = ("header+align", "columns", "url-table", "dictionary", "term-strings",
                   "skip-tables", "docids", "frequencies", "positions", "tiers")
    assert sum(parts[k] for k in index_parts) == parts["index"], r.out
    assert sum(parts[k] for k in ("store-offsets", "store-dict", "store-frames")) == parts["store"]
    assert parts["index"] + parts["store"] == parts["total"] == on_disk, r.out
    for k in ("docids", "frequencies", "positions", "dictionary", "store-frames"):
        assert parts[k] > 0, r.out
    # pairs (the next-word index) are a share of the parts above, not one more
    assert 0 < parts["of-it-pairs"] < parts["index"], r.out
    assert int(head.group(4)) > 0 and parts["columns"] == 16 * int(head.group(4)), r.out
    r = run_cli("index", "sizes", "--store", store, "--index", "fts5")
    assert r.rc == 1 and "no size breakdown" in r.err, repr(r)
