"""Webhook alerts in a cluster (issue 17): two nodes on one PostgreSQL store
deliver each matching article once per alert between them — an article
comes twice only as a retry of the same delivery id — while articles are
imported by `newsd import` in other processes, the webhook fails for a
while, and one node is killed with SIGKILL (the other takes its alerts
over when the lease runs out and resends what it had queued, unchanged)."""
import json
import os
import sys

import pytest
import requests

from conftest import Node, newsd, wait_for, write_jsonl

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "api"))
from webhook import Receiver, check_deliveries  # noqa: E402

FAST = {"NEWSD_ALERTS_LEASE_MS": "1500", "NEWSD_ALERTS_RETRY_MIN_MS": "200",
        "NEWSD_ALERTS_RETRY_MAX_MS": "800", "NEWSD_KEY_CACHE_TTL_MS": "0"}
WORDS = ["quasarine", "borealix", "tundrafy"]


def article(word, i):
    return {"source": {"id": None, "name": "Cluster Wire"}, "author": None,
            "title": "%s report %d" % (word, i), "description": "About %s, part %d" % (word, i),
            "url": "https://cluster.example/%s/%d" % (word, i), "urlToImage": None,
            "publishedAt": "2023-01-07T10:%02d:%02dZ" % (i // 60 % 60, i % 60),
            "content": "Text %d" % i}


@pytest.fixture
def cluster(pg, workdir, monkeypatch):
    for k, v in FAST.items():
        monkeypatch.setenv(k, v)
    uri = pg.new_database()
    config = os.path.join(workdir, "alerts-outbound.conf")
    with open(config, "w") as f:
        f.write("[outbound]\nallow_networks = 127.0.0.0/8\n")
    newsd("import", "--create", "--store", uri, write_jsonl(os.path.join(workdir, "seed.jsonl"),
                                                [article("seed", 0)]))
    nodes = [Node(uri, index_dir=os.path.join(workdir, "alerts-idx-%s-%d" % (n, pg.n)),
                  args=["--config", config], name="alerts-" + n) for n in "ab"]
    yield uri, nodes
    for n in nodes:
        if n.proc.poll() is None:
            n.stop()


def test_two_nodes_deliver_each_article_once_per_alert(cluster, workdir, pg):
    uri, (a, b) = cluster
    rec = Receiver(fail_first=4)
    try:
        key = newsd("keys", "create", "--create", "--store", uri)[1].strip()
        alerts, secrets = {}, {}
        for i, word in enumerate(WORDS):
            # Created through either node: one store.
            node = (a, b)[i % 2]
            r = requests.post(node.base + "/v2/alerts", headers={"X-Api-Key": key},
                              json={"query": {"q": word}, "webhook": rec.url,
                                    "secret": "secret-%d" % i}, timeout=30)
            assert r.status_code == 201, r.text
            alerts[word] = r.json()["alert"]["id"]
            secrets[alerts[word]] = "secret-%d" % i
        want = {w: [] for w in WORDS}

        def batch(name, start, n):
            rows = [article(WORDS[i % 3], i) for i in range(start, start + n)]
            for r in rows:
                want[r["title"].split()[0]].append(r["url"])
            newsd("import", "--create", "--store", uri, write_jsonl(os.path.join(workdir, name), rows))

        def delivered_all():
            return all(sorted(set(rec.delivered(alerts[w]))) == sorted(want[w]) for w in WORDS)

        batch("c1.jsonl", 0, 30)
        batch("c2.jsonl", 30, 45)
        wait_for("the first two batches", delivered_all)
        # The webhook fails while the node that holds the leases has
        # deliveries queued; it dies without a word; the other takes the
        # alerts over and resends them.
        with rec.lock:
            rec.fail_first = 10 ** 9
            before = len(rec.posts)
        batch("c3.jsonl", 75, 60)
        wait_for("failed attempts", lambda: len(rec.snapshot()) >= before + 2)
        owners = pg.psql(uri, "SELECT DISTINCT lease_owner FROM alerts").split()
        assert len(owners) == 1, owners  # one node has taken them all
        holder = a if ":%d:" % a.proc.pid in owners[0] else b
        assert ":%d:" % holder.proc.pid in owners[0], (owners, a.proc.pid, b.proc.pid)
        holder.kill()
        batch("c4.jsonl", 135, 12)
        with rec.lock:
            rec.fail_first = len(rec.posts) + 3
        wait_for("every batch after a node died", delivered_all, timeout=60)
        owners = pg.psql(uri, "SELECT DISTINCT lease_owner FROM alerts").split()
        assert ":%d:" % holder.proc.pid not in owners[0], owners

        bodies = check_deliveries(rec, secrets)
        # Once per alert between the nodes: counted over distinct delivery
        # ids (a retry repeats an id, never an article under a new one).
        for w in WORDS:
            urls = []
            for body in bodies.values():
                doc = json.loads(body)
                if doc["alert"] == alerts[w]:
                    urls.extend(x["url"] for x in doc["articles"])
            assert sorted(urls) == sorted(want[w]), w
            assert len(urls) == len(set(urls)), "%s: an article in two deliveries" % w
        # The node that was killed restarts and nothing is sent again.
        holder.start()
        seen = len(rec.snapshot())
        batch("c5.jsonl", 147, 6)
        wait_for("the batch after the restart", delivered_all)
        check_deliveries(rec, secrets)
        for post in rec.snapshot()[seen:]:
            doc = json.loads(post[2])
            assert all(int(x["url"].rsplit("/", 1)[1]) >= 147 for x in doc["articles"]), doc
    finally:
        rec.close()


def story_copy(word, host, i):
    """Article i of one story: the same text under another site's URL."""
    return dict(article(word, i), title="%s harbour warehouse fire forces evacuation" % word,
                url="https://%s/fire/%d" % (host, i), source={"id": None, "name": host},
                description="A warehouse fire at the %s harbour." % word,
                content="Crews fought the %s harbour warehouse fire overnight." % word)


def test_dedupe_delivers_a_story_once_and_counts_copies_for_every_node(cluster, workdir, pg):
    """"dedupe": true in cluster mode: the story ids come with the rows, so
    the node that delivers sends the story's first article once and counts
    its copies in the store, where the other node reads the same count; a
    node that takes the alert over knows the stories delivered."""
    uri, (a, b) = cluster
    rec = Receiver()
    try:
        key = newsd("keys", "create", "--create", "--store", uri)[1].strip()
        r = requests.post(a.base + "/v2/alerts", headers={"X-Api-Key": key},
                          json={"query": {"q": "skerrywind"}, "webhook": rec.url,
                                "secret": "once", "dedupe": True}, timeout=30)
        assert r.status_code == 201, r.text
        aid = r.json()["alert"]["id"]
        other = dict(article("skerrywind", 2), title="skerrywind council approves a budget",
                     description="The skerrywind council voted.", content="Budget text.")
        rows = [story_copy("skerrywind", "wire-a.example", 1), other,
                story_copy("skerrywind", "wire-b.example", 3),
                story_copy("skerrywind", "wire-c.example", 4)]
        for i, row in enumerate(rows):  # a commit each
            newsd("import", "--create", "--store", uri,
                  write_jsonl(os.path.join(workdir, "dd%d.jsonl" % i), [row]))

        def delivered():
            """The articles of each delivery id once: a delivery is at least
            once, and a node whose lease ran out under load may send one again
            (the same id, the same body: check_deliveries holds that); a copy
            sent in a delivery of its own would still show here."""
            seen, out = set(), []
            for did, sig, body, status, ctype in rec.snapshot():
                doc = json.loads(body)
                if doc["alert"] == aid and status == 200 and did not in seen:
                    seen.add(did)
                    out.extend(x["url"] for x in doc["articles"])
            return out

        def copies(node):
            return requests.get("%s/v2/alerts/%d" % (node.base, aid), headers={"X-Api-Key": key},
                                timeout=30).json()["alert"]["copies"]
        wait_for("both stories", lambda: len(delivered()) >= 2)
        wait_for("the copies counted", lambda: copies(a) == 2 and copies(b) == 2)
        assert delivered() == [rows[0]["url"], rows[1]["url"]]
        # The node that delivers dies; the other takes the alert over with
        # the stories delivered (they are in the store): a copy is counted.
        owner = pg.psql(uri, "SELECT lease_owner FROM alerts WHERE id = %d" % aid).strip()
        holder, rest = (a, b) if ":%d:" % a.proc.pid in owner else (b, a)
        assert ":%d:" % holder.proc.pid in owner, owner
        holder.kill()
        newsd("import", "--create", "--store", uri,
              write_jsonl(os.path.join(workdir, "dd-late.jsonl"),
                          [story_copy("skerrywind", "wire-d.example", 5)]))
        wait_for("the copy counted by the node that took over", lambda: copies(rest) == 3,
                 timeout=60)
        assert delivered() == [rows[0]["url"], rows[1]["url"]]
        check_deliveries(rec, {aid: "once"})
    finally:
        rec.close()
