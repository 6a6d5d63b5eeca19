"""Crash safety (issue 8 §2): newsd is killed with SIGKILL again and again
in the middle of a large import, restarted, and the store must open with
every acknowledged article present and intact, no duplicates, the full-text
index agreeing with the table, and totals unchanged by a restart.

"Acknowledged" = reported by `newsd import --progress` ("committed N"
after each committed batch). Killed batches must vanish whole: what is
stored is always a prefix of the file, never a hole or a half article.

CI: 30,000 articles, 6 kills. RELIABILITY_LONG=1: 200,000 articles, 20 kills."""
import pytest
import os
import random
import re
import signal
import subprocess
import threading
import time

from conftest import (LONG, check_rows, new_key, store_check, stored_articles, write_articles)
from gen_articles import WORDS, unique_token
from harness import BIN, Client, Server, articles_ok, clean_env

pytestmark = pytest.mark.usefixtures("fts5_side")

N = 200000 if LONG else 30000
KILLS = 20 if LONG else 6
COMMITTED = re.compile(r"^committed (\d+)$")


class Import:
    """newsd import --progress in the background; acks read from stderr."""

    def __init__(self, store, path):
        self.acked = 0
        self.lines = []
        self.proc = subprocess.Popen(
            [BIN, "import", "--create", "--store", str(store), "--language", "en", "--progress", path],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=clean_env())
        self.cv = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for raw in self.proc.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            with self.cv:
                self.lines.append(line)
                m = COMMITTED.match(line)
                if m:
                    n = int(m.group(1))
                    assert n >= self.acked, "progress went backwards: %s" % line
                    self.acked = n
                self.cv.notify_all()

    def wait_acks(self, n, timeout):
        """Until at least n articles are acknowledged or the import ended."""
        deadline = time.monotonic() + timeout
        with self.cv:
            while self.acked < n and self.proc.poll() is None:
                left = deadline - time.monotonic()
                assert left > 0, "no progress: %r" % self.lines[-5:]
                self.cv.wait(min(left, 0.05))

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        return self.finish()

    def finish(self):
        rc = self.proc.wait(timeout=600)
        self.reader.join(timeout=30)  # every line printed before death is read
        return rc


def verify(store, acked, context):
    """The store after a crash: consistent index, every acknowledged article
    intact, what is stored a prefix of the file. Returns how many are stored."""
    ok, fig, text = store_check(store, words=WORDS)
    assert ok, "%s: store_check failed:\n%s" % (context, text)
    rows = stored_articles(store)
    seen = check_rows(rows, N)
    assert len(seen) >= acked, "%s: %d acknowledged, %d stored" % (context, acked, len(seen))
    assert seen == set(range(len(seen))), \
        "%s: stored articles are not a prefix of the file (hole at %d)" % (
            context, min(set(range(len(seen))) - seen))
    assert int(fig["articles"]) == len(seen)
    return len(seen)


def search_totals(base, key):
    c = Client(base, key)
    out = {}
    for w in WORDS[:3] + ["crash"]:
        out[w] = articles_ok(c.get("/v2/everything", {"q": w, "pageSize": 1}))["totalResults"]
    for i in (0, N // 2, N - 1):
        b = articles_ok(c.get("/v2/everything", {"q": unique_token(i)}))
        out[unique_token(i)] = [a["url"] for a in b["articles"]]
    return out


def test_sigkill_during_import_loses_nothing_acknowledged(tmp_path):
    src = write_articles(tmp_path / "articles.jsonl", N)
    store = tmp_path / "store"
    rng = random.Random(int(os.environ.get("RELIABILITY_SEED", "8")))
    batches = None
    history = []
    best_ack = 0
    for k in range(KILLS):
        imp = Import(store, src)
        # Kill after a random number of acknowledged batches plus a random
        # moment inside the next one (reading, normalising or committing).
        target = rng.randint(1, max(1, N // 4000)) * 2000 if batches is None else \
            rng.randint(1, batches - 1) * (N // batches)
        imp.wait_acks(target, timeout=300)
        time.sleep(rng.uniform(0, 0.25))
        rc = imp.kill()
        assert rc in (-signal.SIGKILL, 0), "import exited %r: %r" % (rc, imp.lines[-5:])
        acks = [int(COMMITTED.match(x).group(1)) for x in imp.lines if COMMITTED.match(x)]
        if batches is None and len(acks) >= 2:
            batches = max(2, N // (acks[1] - acks[0]))
        best_ack = max(best_ack, imp.acked)
        stored = verify(store, best_ack, "after kill %d" % (k + 1))
        history.append((imp.acked, stored, rc))
    # The last run completes: everything, once.
    imp = Import(store, src)
    assert imp.finish() == 0, imp.lines[-5:]
    assert verify(store, N, "after the complete import") == N
    assert any(rc == -signal.SIGKILL for _, _, rc in history), history
    print("kills (acked, stored, rc):", history)

    key = new_key(store)
    srv = Server(store)
    try:
        before = search_totals(srv.base, key)
    finally:
        srv.proc.send_signal(signal.SIGKILL)  # the server dies too
        srv.proc.wait()
    assert before["crash"] == N and before[WORDS[0]] == N // len(WORDS), before
    for i in (0, N // 2, N - 1):
        assert before[unique_token(i)] == [
            "https://reliability.example/news/%d/%s" % (i, unique_token(i))], before
    srv = Server(store)
    try:
        after = search_totals(srv.base, key)
    finally:
        problems = srv.stop()
    assert after == before, "totals changed across a restart: %r -> %r" % (before, after)
    assert not problems, problems


def test_store_check_sees_a_broken_index(tmp_path):
    """The checker itself can fail: an article deleted behind the index's
    back leaves a stale index row, and a duplicate url is counted."""
    import sqlite3
    store = tmp_path / "store"
    src = write_articles(tmp_path / "a.jsonl", 50)
    imp = Import(store, src)
    assert imp.finish() == 0
    ok, fig, text = store_check(store, words=WORDS)
    assert ok, text
    db = sqlite3.connect(str(store / "newsd.db"))
    db.execute("DROP TRIGGER articles_fts_delete")
    db.execute("DELETE FROM articles WHERE url LIKE '%/news/7/%'")
    db.commit()
    db.close()
    ok, fig, text = store_check(store, words=WORDS)
    assert not ok and fig["stale"] == "1" and fig["articles"] == "49", text
    assert fig["word"][WORDS[7]] == ["4", "5"], text
