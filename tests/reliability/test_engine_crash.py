"""Crash safety of the engine's index directory (issue 9, docs/engine.md
"Persistence"): `newsd serve` is killed with SIGKILL again and again while
an import runs into its store and the engine writes segment files, merges
and replaces its MANIFEST after every change (NEWSD_ENGINE_CHECKPOINT_MS=0,
segments of 300 documents so that background merges run all the time, and
are installed or cut short by the kill). After each
kill `newsd index verify` must find every row of the table indexed exactly
once and every segment file whole, opening from the files the kill left
behind; at the end a server opened from the files answers exactly as one
that rebuilt its index from the table.

CI: 12,000 articles, 6 kills. RELIABILITY_LONG=1: 100,000 articles, 20 kills."""
import os
import random
import shutil
import signal
import subprocess
import time

from conftest import LONG, new_key, write_articles
from gen_articles import WORDS, unique_token
from harness import BIN, Client, Server, articles_ok, clean_env

N = 100000 if LONG else 12000
KILLS = 20 if LONG else 6


def verify(store):
    r = subprocess.run([BIN, "index", "verify", "--store", str(store)], capture_output=True,
                       text=True, env=clean_env(), timeout=600)
    assert r.returncode == 0, "index verify failed:\n%s%s" % (r.stdout, r.stderr)
    return r.stdout


def totals(base, key):
    c = Client(base, key)
    out = {}
    for w in WORDS[:4] + ["crash"]:
        for sort in ("publishedAt", "relevancy", "popularity"):
            b = articles_ok(c.get("/v2/everything", {"q": w, "sortBy": sort, "pageSize": 5}))
            out[(w, sort)] = (b["totalResults"], [a["url"] for a in b["articles"]])
    for i in (0, N // 2, N - 1):
        b = articles_ok(c.get("/v2/everything", {"q": unique_token(i)}))
        out[unique_token(i)] = [a["url"] for a in b["articles"]]
    return out


def served_totals(store, key):
    """totals() from a server started on store, stopped cleanly."""
    srv = Server(store)
    try:
        out = totals(srv.base, key)
    finally:
        problems = srv.stop()
    assert not problems, problems
    return out


def test_sigkill_while_the_engine_writes_its_files(tmp_path, monkeypatch):
    monkeypatch.setenv("NEWSD_INDEX", "engine")
    monkeypatch.setenv("NEWSD_ENGINE_CHECKPOINT_MS", "0")
    monkeypatch.setenv("NEWSD_ENGINE_SEGMENT_DOCS", "300")
    src = write_articles(tmp_path / "articles.jsonl", N)
    with open(src, encoding="utf-8") as f:
        lines = f.readlines()
    store = tmp_path / "store"
    rng = random.Random(int(os.environ.get("RELIABILITY_SEED", "9")))
    chunk = N // KILLS
    from_files = 0
    merged = 0
    for k in range(KILLS):
        part = tmp_path / ("part%d.jsonl" % k)
        with open(part, "w", encoding="utf-8") as f:
            f.writelines(lines[k * chunk:N if k == KILLS - 1 else (k + 1) * chunk])
        srv = Server(store)
        imp = subprocess.Popen([BIN, "import", "--create", "--store", str(store), "--language", "en",
                                str(part)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               env=clean_env())
        time.sleep(rng.uniform(0.3, 2.0))
        if k == KILLS - 1 and merged == 0:
            # No earlier kill landed after a merge (a slow machine merges
            # later): this one waits for one, as the test is about them.
            srv.wait_log("search index: merged", 1, timeout=120)
        srv.proc.send_signal(signal.SIGKILL)
        srv.proc.wait()
        merged += srv.stderr().count("search index: merged")
        _, err = imp.communicate(timeout=600)
        assert imp.returncode == 0, err.decode("utf-8", "replace")[-2000:]
        out = verify(store)
        from_files += "opened from its files" in out
        assert "rows %d, indexed %d" % ((k + 1) * chunk if k < KILLS - 1 else N,
                                        (k + 1) * chunk if k < KILLS - 1 else N) in out, out
    # Every kill but the first (whose server may die before its first
    # checkpoint) leaves files that the next open uses.
    assert from_files >= KILLS - 1, from_files
    # The kills landed among background merges (merge.c), not only between.
    assert merged > 0, merged

    key = new_key(store)
    from_disk = served_totals(store, key)
    assert from_disk[("crash", "publishedAt")][0] == N, from_disk
    shutil.rmtree(str(store / "newsd.db.engine"))
    assert served_totals(store, key) == from_disk
