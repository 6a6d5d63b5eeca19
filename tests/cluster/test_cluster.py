"""Cluster mode: several newsd nodes on one PostgreSQL store, each searching a
local index that follows the store's article log.

The reference is an embedded-mode newsd holding the same articles (imported
from the same files in the same order): every node must answer every request
byte for byte as it does, after ingestion through the store, a node killed
mid-ingest and restarted, PostgreSQL restarted and killed mid-ingest, and a
node started from nothing."""
import http.server
import os
import re
import subprocess
import threading
import time

import pytest

from conftest import (BIN, DATA, Node, clean_env, newsd, read_jsonl, wait_converged, wait_for,
                      write_jsonl)
from corpus import Synthetic, requests_for

CHUNK = 400


def import_both(uri, emb, path, *opts):
    newsd("import", "--create", "--store", uri, *opts, path)
    newsd("import", "--create", "--store", emb, *opts, path)


def create_key(store, *args):
    _, out, _ = newsd("keys", "create", "--create", "--store", store, *args)
    key = out.strip()
    assert len(key) == 32, out
    return key


class Reference:
    """The embedded-mode server and the key each server takes."""

    def __init__(self, emb, emb_key):
        self.node = Node(emb, name="embedded")
        self.key = emb_key

    def settle(self):
        """Restart the server, so that its index holds all of its store.
        An import into the embedded store is found by a running server's
        searches through read-your-writes, which waits at most 1 s for its
        follower (docs/engine.md); a CI machine under load indexed the
        2,400-article import below in more than that, and the reference
        answered from part of it. A server that opens is caught up with its
        table before it serves, so the reference never depends on a time."""
        self.node.stop()
        self.node.start()


def compare(nodes, node_key, ref, reqs, paged=()):
    """Every node answers every request exactly as the reference; the paged
    requests are walked through every page."""
    ref.settle()
    checked = 0
    for path, params in reqs:
        want = ref.node.get(path, params, ref.key)
        assert want.status_code == 200, (path, params, want.text[:300])
        for n in nodes:
            got = n.get(path, params, node_key)
            assert got.status_code == 200, (n.name, path, params, got.text[:300])
            assert got.content == want.content, (
                "%s differs from embedded mode on %s %r:\n%s\nvs\n%s"
                % (n.name, path, params, got.text[:600], want.text[:600]))
            checked += 1
    for path, params in paged:
        total = ref.node.get(path, dict(params, pageSize=100), ref.key).json()["totalResults"]
        assert total > 100, "a paged request should span pages: %r" % (params,)
        for page in range(1, min(total, 10000) // 100 + 2):
            p = dict(params, pageSize=100, page=page)
            want = ref.node.get(path, p, ref.key)
            for n in nodes:
                got = n.get(path, p, node_key)
                assert got.content == want.content, (n.name, path, p)
                checked += 1
    return checked


@pytest.fixture
def cluster(pg, workdir, request):
    """A fresh database, an empty embedded store, sources imported into both,
    and a key in each."""
    uri = pg.new_database()
    d = os.path.join(workdir, request.node.name)
    os.makedirs(d)
    emb = os.path.join(d, "embedded")
    for store in (uri, emb):
        newsd("sources", "import", "--create", "--store", store, os.path.join(DATA, "sources.jsonl"))
    return uri, emb, d


def chunks(d, rows, size, name):
    out = []
    for i in range(0, len(rows), size):
        out.append(write_jsonl(os.path.join(d, "%s-%02d.jsonl" % (name, i // size)),
                               rows[i:i + size]))
    return out


def cluster_metrics(node):
    """The newsd_cluster_* samples of node's /metrics."""
    r = node.get("/metrics")
    assert r.status_code == 200, r.text
    out = {}
    for line in r.text.splitlines():
        if line.startswith("newsd_cluster_"):
            name, v = line.split()
            out[name] = float(v)
    return out


def test_nodes_match_embedded_mode_through_failures(pg, cluster):
    uri, emb, d = cluster
    syn = Synthetic(3600)
    parts = chunks(d, syn.articles, CHUNK, "syn")
    real = [os.path.join(DATA, "articles.jsonl"), os.path.join(DATA, "handmade.jsonl")]
    key = create_key(uri)
    ref = Reference(emb, create_key(emb))
    reqs = requests_for(syn.words, syn.sources)
    paged = [("/v2/everything", {"q": syn.words[0] + " OR " + syn.words[1] + " OR "
                                 + syn.words[2], "sortBy": "publishedAt"})]
    nodes = {}
    try:
        for name in "ABC":
            nodes[name] = Node(uri, os.path.join(d, "index-" + name), name=name)
        A, B, C = nodes["A"], nodes["B"], nodes["C"]

        # Ingestion through the store, some of it as live headlines.
        import_both(uri, emb, real[0], "--headlines", "--country", "us")
        import_both(uri, emb, parts[0])
        import_both(uri, emb, parts[1], "--headlines", "--country", "us", "--category",
                    "technology")
        wait_converged(pg, uri, [A, B, C])
        compare([A, B, C], key, ref, reqs)

        # SIGKILL node B while an import of several batches is committing
        # (and B applying them); it catches up on restart.
        big = write_jsonl(os.path.join(d, "big.jsonl"),
                          sum((read_jsonl(p) for p in parts[2:8]), []))
        head = pg.head(uri)
        imp = subprocess.Popen([BIN, "import", "--create", "--store", uri, big], env=clean_env(),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        wait_for("the import to commit a batch",
                 lambda: imp.poll() is not None or pg.head(uri) > head)
        B.kill()
        _, err = imp.communicate(timeout=120)
        assert imp.returncode == 0, err.decode()
        newsd("import", "--create", "--store", emb, big)
        B.start()
        wait_converged(pg, uri, [A, B, C])
        compare([A, B, C], key, ref, reqs, paged)

        # PostgreSQL stops: nodes keep answering searches from their local
        # index, ingestion fails (nothing acknowledged), then resumes.
        pg.stop()
        compare([A, B, C], key, ref, reqs[:6])
        for n in (A, B, C):
            status, h = n.health()
            assert status == 200 and h["status"] == "ok", h
        rc, _, err = newsd("import", "--create", "--store", uri, parts[8], check=False)
        assert rc != 0, "an import with the store down must fail"
        wait_for("a node to notice the store is down",
                 lambda: not A.health()[1]["store_reachable"])
        # What an operator alerts on is in /metrics too (issue 30 item 7).
        assert cluster_metrics(A)["newsd_cluster_store_reachable"] == 0
        # What PostgreSQL says as it goes (its FATAL to open connections)
        # reaches the log as newsd's own lines, not as libpq's raw ones,
        # which broke --log-format json (issue 30 item 7).
        raw = [l for l in A.stderr().splitlines()
               if l.strip() and not re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", l)]
        assert not raw, raw
        pg.start()
        import_both(uri, emb, parts[8])
        wait_converged(pg, uri, [A])
        wait_for("A's metrics to show it back in step", lambda: cluster_metrics(A) == {
            "newsd_cluster_store_reachable": 1, "newsd_cluster_lag_changes": 0,
            "newsd_cluster_lag_seconds": 0, "newsd_cluster_caught_up": 1})

        # PostgreSQL killed (no shutdown checkpoint) while an import runs:
        # whatever the import acknowledged survives; an import that failed
        # is simply run again.
        imp = subprocess.Popen([BIN, "import", "--create", "--store", uri, real[1]], env=clean_env(),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        pg.kill()
        imp.communicate(timeout=120)
        pg.start()
        if imp.returncode != 0:
            newsd("import", "--create", "--store", uri, real[1])
        newsd("import", "--create", "--store", emb, real[1])
        wait_converged(pg, uri, [A, B, C])
        compare([A, B, C], key, ref, reqs)

        # Updates (new titles, articles moved to other seconds) and a node
        # that starts from nothing.
        upd = write_jsonl(os.path.join(d, "updates.jsonl"), syn.updates(150))
        import_both(uri, emb, upd)
        nodes["D"] = D = Node(uri, os.path.join(d, "index-D"), name="D")
        wait_converged(pg, uri, [A, B, C, D])
        compare([A, B, C, D], key, ref, reqs, paged)
        counts = {n.name: n.health()[1]["articles"] for n in (A, B, C, D)}
        want = ref.node.health()[1]["articles"]
        assert set(counts.values()) == {want}, (counts, want)

        # A delete in the store (by hand: tombstones carry it to every node).
        victim = syn.articles[17]
        word = victim["title"].split()[0].lower()
        before = A.get("/v2/everything", {"q": word, "pageSize": 100}, key).json()["totalResults"]
        pg.psql(uri, "DELETE FROM articles WHERE url = '%s'" % victim["url"])
        wait_converged(pg, uri, [A, B, C, D])
        for n in (A, B, C, D):
            r = n.get("/v2/everything", {"q": word, "pageSize": 100}, key).json()
            assert r["totalResults"] == before - 1, (n.name, r["totalResults"], before)
            assert victim["url"] not in [a["url"] for a in r["articles"]]
            assert n.health()[1]["articles"] == want - 1
    finally:
        for n in nodes.values():
            if n.proc.poll() is None:
                n.stop()
        ref.node.stop()


def test_a_node_pointed_at_another_database_rebuilds(pg, cluster, workdir):
    uri, emb, d = cluster
    idx = os.path.join(d, "index")
    newsd("import", "--create", "--store", uri, os.path.join(DATA, "handmade.jsonl"))
    n = Node(uri, idx, name="first")
    try:
        wait_converged(pg, uri, [n])
        assert n.health()[1]["articles"] == len(read_jsonl(os.path.join(DATA, "handmade.jsonl")))
    finally:
        n.stop()
    other = pg.new_database()
    newsd("import", "--create", "--store", other, os.path.join(DATA, "updates.jsonl"))
    n = Node(other, idx, name="second")
    try:
        wait_converged(pg, other, [n])
        # Nothing of the first database is left in the local index.
        assert n.health()[1]["articles"] == len(read_jsonl(os.path.join(DATA, "updates.jsonl")))
    finally:
        n.stop()


def test_quota_is_exact_across_nodes(pg, cluster, workdir):
    uri, _, d = cluster
    limit = 10
    conf = os.path.join(d, "newsd.conf")
    with open(conf, "w") as f:
        f.write("[plan tiny]\nrequests_per_day = %d\n" % limit)
    newsd("import", "--create", "--store", uri, os.path.join(DATA, "handmade.jsonl"))
    key = create_key(uri, "--plan", "tiny", "--config", conf)
    nodes = [Node(uri, os.path.join(d, "index-%d" % i), ["--config", conf], name="q%d" % i)
             for i in range(2)]
    def ask(i):
        return nodes[i % 2].get("/v2/everything", {"q": "the"}, key).status_code

    def used():
        return int(pg.psql(uri, "SELECT coalesce(sum(n), 0) FROM usage").strip())

    try:
        wait_converged(pg, uri, nodes)
        codes = [ask(i) for i in range(4)]
        # PostgreSQL away: the nodes go on serving, counting on their own,
        # and write those counts once it is back.
        pg.stop()
        try:
            codes += [ask(i) for i in range(4)]
        finally:
            pg.start()
        assert codes == [200] * 8, codes
        wait_for("the counts of the outage to reach the store", lambda: used() == 8)
        codes = [ask(i) for i in range(2 * limit)]
        assert codes.count(200) == limit - 8, codes
        assert codes.count(429) == limit + 8, codes
    finally:
        for n in nodes:
            n.stop()
    # The counts written by both nodes add up in the store.
    used = int(pg.psql(uri, "SELECT coalesce(sum(n), 0) FROM usage").strip())
    assert used == limit


def rss(feed, n_items):
    items = "".join(
        "<item><title>Feed %d story %d lease%d</title><link>https://feed%d.example/s/%d</link>"
        "<description>Story %d of feed %d</description>"
        "<pubDate>Fri, 06 Jan 2023 %02d:%02d:00 GMT</pubDate></item>"
        % (feed, i, feed, feed, i, i, feed, 10 + feed, i) for i in range(n_items))
    return ("<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>Feed %d</title>"
            "<link>https://feed%d.example/</link><description>d</description>%s"
            "</channel></rss>" % (feed, feed, items)).encode()


def test_two_crawlers_fetch_each_due_feed_once(pg, cluster):
    """Feed claims are leases in PostgreSQL: two crawlers on one store share
    the due feeds, never fetching one twice."""
    uri, _, d = cluster
    n_feeds, n_items = 8, 5
    hits = {}
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            with lock:
                hits[self.path] = hits.get(self.path, 0) + 1
            time.sleep(0.1)  # slow enough that the two crawlers overlap
            body = rss(int(self.path.strip("/").split(".")[0]), n_items)
            self.send_response(200)
            self.send_header("Content-Type", "application/rss+xml")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    # Four hosts (the crawler spaces fetches to one host), two feeds each.
    servers = [http.server.ThreadingHTTPServer(("127.0.0.%d" % (h + 1), 0), Handler)
               for h in range(4)]
    for srv in servers:
        threading.Thread(target=srv.serve_forever, daemon=True).start()
    # Loopback feeds are refused unless [outbound] allow_networks admits them.
    conf = os.path.join(d, "outbound.conf")
    with open(conf, "w") as f:
        f.write("[outbound]\nallow_networks = 127.0.0.0/8\n")
    try:
        for i in range(n_feeds):
            srv = servers[i % len(servers)]
            newsd("feeds", "add", "--create", "--store", uri, "--config", conf,
                  "http://%s:%d/%d.xml" % (srv.server_address[0], srv.server_address[1], i))
        crawlers = [subprocess.Popen([BIN, "crawl", "--once",
                                      "--pages", "never", "--store", uri, "--config", conf],
                                     env=clean_env(),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                    for _ in range(2)]
        fetched = 0
        for c in crawlers:
            out, err = c.communicate(timeout=120)
            assert c.returncode == 0, err.decode()
            m = re.search(r"feeds fetched (\d+)", out.decode())
            assert m, out.decode()
            fetched += int(m.group(1))
        assert sorted(hits) == sorted("/%d.xml" % i for i in range(n_feeds)), hits
        assert set(hits.values()) == {1}, hits
        assert fetched == n_feeds
        # Nothing is due any more: a third crawl fetches nothing.
        _, out, _ = newsd("crawl", "--once", "--pages", "never", "--store", uri, "--config", conf)
        assert re.search(r"feeds fetched 0\b", out), out
        assert sum(hits.values()) == n_feeds
        _, out, _ = newsd("feeds", "list", "--store", uri)
        assert out.count(" 200 ") >= n_feeds, out
    finally:
        for srv in servers:
            srv.shutdown()
            srv.server_close()
    n = Node(uri, os.path.join(d, "index"), name="feeds")
    try:
        wait_converged(pg, uri, [n])
        assert n.health()[1]["articles"] == n_feeds * n_items
        key = create_key(uri)
        r = n.get("/v2/everything", {"q": "lease3"}, key).json()
        assert r["totalResults"] == n_items, r
    finally:
        n.stop()


def test_two_nodes_cannot_share_an_index_directory(pg, cluster):
    uri, _, d = cluster
    idx = os.path.join(d, "index")
    n = Node(uri, idx, name="owner")
    try:
        p = subprocess.run([BIN, "serve", "--store", uri, "--listen", "127.0.0.1:0",
                            "--no-crawl", "--index-dir", idx], env=clean_env(),
                           capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
        assert p.returncode != 0
        # The server lock in the index directory (newsd.pid) refuses it,
        # naming the first, before the replica's own lock is reached.
        assert b"another newsd (pid %d)" % n.proc.pid in p.stderr, p.stderr
        assert n.health()[0] == 200
    finally:
        n.stop()
