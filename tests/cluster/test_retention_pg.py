"""Deleting articles from a PostgreSQL store (docs/operations.md
"Retention"): `newsd articles delete` by each selector and the [retention]
policy of a serving node delete in PostgreSQL, and every node's replica and
index follow the tombstones: the deleted articles leave /v2/everything and
totalResults on both nodes, and nothing else does."""
import os
import time

from conftest import NOW, Node, newsd, wait_converged, wait_for, write_jsonl

HOUR = 3600


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def article(i, published, word, source):
    return {"source": {"id": source, "name": source.title()},
            "title": "%s story number %d" % (word, i),
            "description": "%s description %d" % (word, i),
            "content": "%s content %d" % (word, i),
            "url": "https://%s.example.com/%s/%d" % (source, word, i),
            "publishedAt": iso(published)}


def totals(nodes, key, params):
    out = []
    for n in nodes:
        r = n.get("/v2/everything", dict(params, pageSize=1), key)
        assert r.status_code == 200, (n.name, r.text[:300])
        out.append(r.json()["totalResults"])
    return out


def wait_totals(nodes, key, params, want):
    wait_for("%r to be %d on every node" % (params, want),
             lambda: totals(nodes, key, params) == [want] * len(nodes))


def pg_count(pg, uri):
    return int(pg.psql(uri, "SELECT count(*) FROM articles").strip())


def new_store(pg, workdir, name):
    uri = pg.new_database()
    d = os.path.join(workdir, name)
    os.makedirs(d)
    start = NOW - 30 * 24 * HOUR
    rows = ([article(i, start + i * HOUR, "alpha", "alpha-wire") for i in range(40)] +
            [article(i, start + i * HOUR, "beta", "beta-wire") for i in range(40)])
    newsd("import", "--create", "--store", uri, write_jsonl(os.path.join(d, "a.jsonl"), rows))
    key = newsd("keys", "create", "--create", "--store", uri, "--plan", "unlimited")[1].strip()
    return uri, d, start, key


def test_articles_delete_on_postgresql_reaches_every_node(pg, workdir):
    uri, d, start, key = new_store(pg, workdir, "pg-delete")
    nodes = [Node(uri, os.path.join(d, "idx%d" % i), name="node%d" % i) for i in range(2)]
    try:
        wait_converged(pg, uri, nodes)
        assert totals(nodes, key, {"q": "story"}) == [80, 80]

        out = newsd("articles", "delete", "--store", uri, "--source", "alpha-wire")[1]
        assert out.strip() == "40"
        wait_converged(pg, uri, nodes)
        wait_totals(nodes, key, {"q": "alpha"}, 0)
        assert totals(nodes, key, {"q": "beta"}) == [40, 40]

        out = newsd("articles", "delete", "--store", uri, "--url",
                    "https://beta-wire.example.com/beta/3")[1]
        assert out.strip() == "1"
        wait_converged(pg, uri, nodes)
        wait_totals(nodes, key, {"q": "beta"}, 39)

        out = newsd("articles", "delete", "--store", uri, "--before", iso(start + 10 * HOUR))[1]
        assert out.strip() == "9"  # hours 0..9 of beta, less the 3rd
        wait_converged(pg, uri, nodes)
        wait_totals(nodes, key, {"q": "beta"}, 30)
        assert pg_count(pg, uri) == 30
    finally:
        for n in nodes:
            n.stop()
    # A replica's tombstones reached the engine through the deletion log:
    # each node's index agrees with its replica file.
    for i in range(2):
        rc, out, err = newsd("index", "verify", "--store", uri, "--index-dir",
                             os.path.join(d, "idx%d" % i), check=False)
        assert rc == 0 and "ok" in out and "rows 30" in out, (out, err)


def test_a_nodes_retention_policy_deletes_in_postgresql(pg, workdir):
    uri, d, start, key = new_store(pg, workdir, "pg-retention")
    conf = os.path.join(d, "retention.conf")
    with open(conf, "w") as f:
        f.write("[retention]\nmax_articles = 50\nperiod_seconds = 1\nbatch_size = 7\n")
    plain = Node(uri, os.path.join(d, "plain"), name="plain")
    keeper = Node(uri, os.path.join(d, "keeper"), args=["--config", conf], name="keeper")
    nodes = [plain, keeper]
    try:
        wait_for("the policy to keep 50 articles", lambda: pg_count(pg, uri) == 50)
        wait_converged(pg, uri, nodes)
        wait_totals(nodes, key, {"q": "story"}, 50)
        # The oldest went: hours 0..14 of both sources (alpha before beta
        # within an hour: ids follow publication time, then import order).
        assert totals(nodes, key, {"q": "alpha"}) == [25, 25]
        assert totals(nodes, key, {"q": "beta"}) == [25, 25]
    finally:
        for n in nodes:
            n.stop()
