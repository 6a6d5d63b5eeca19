"""A cluster node and its PostgreSQL, as an operator sees them (issue 30
item 10): `newsd index verify` on a node says how far the node's local
index trails PostgreSQL instead of a plain "ok"."""
import os

import pytest

from conftest import DATA, Node, newsd, read_jsonl, wait_converged, write_jsonl


@pytest.fixture
def store(pg, workdir, request):
    uri = pg.new_database()
    d = os.path.join(workdir, request.node.name)
    os.makedirs(d)
    return uri, d


def test_index_verify_says_how_far_the_node_is_behind_postgresql(pg, store):
    uri, d = store
    idx = os.path.join(d, "index")
    rows = read_jsonl(os.path.join(DATA, "articles.jsonl"))
    first = write_jsonl(os.path.join(d, "first.jsonl"), rows[:-10])
    last = write_jsonl(os.path.join(d, "last.jsonl"), rows[-10:])
    newsd("import", "--create", "--store", uri, first)
    n = Node(uri, idx, name="node")
    try:
        wait_converged(pg, uri, [n])
    finally:
        n.stop()
    # While the node is stopped PostgreSQL gets 10 more articles.
    newsd("import", "--create", "--store", uri, last)
    _, out, _ = newsd("index", "verify", "--store", uri, "--index-dir", idx)
    here = len(rows) - 10
    assert "rows %d, indexed %d, missing 0, extra 0" % (here, here) in out, out
    assert "10 changes behind" in out, out
    assert "%d articles there, %d here (10 behind)" % (len(rows), here) in out, out
    assert out.strip().splitlines()[-1] != "ok", out
    assert "behind PostgreSQL" in out.strip().splitlines()[-1], out

    # Served, the node catches up by itself; verify then has nothing to add.
    n = Node(uri, idx, name="node")
    try:
        wait_converged(pg, uri, [n])
    finally:
        n.stop()
    _, out, _ = newsd("index", "verify", "--store", uri, "--index-dir", idx)
    assert "0 changes behind" in out and "(0 behind)" in out, out
    assert out.strip().splitlines()[-1] == "ok", out


def test_a_node_starts_while_postgresql_is_down_and_becomes_ready_by_itself(pg, store):
    """With the unit's restart policy a node that refused to start while
    its database was down failed for good. Now it starts, answers /livez,
    says why it is not ready, and is ready once PostgreSQL is back: one
    node with a local index from before, one that never reached it."""
    uri, d = store
    rows = read_jsonl(os.path.join(DATA, "articles.jsonl"))
    newsd("import", "--create", "--store", uri, os.path.join(DATA, "articles.jsonl"))
    _, key, _ = newsd("keys", "create", "--create", "--store", uri, "--name", "outage")
    key = key.strip()
    known = Node(uri, os.path.join(d, "known"), name="known")
    try:
        wait_converged(pg, uri, [known])
    finally:
        known.stop()
    nodes = []
    pg.stop()
    try:
        for name in ("known", "fresh"):
            nodes.append(Node(uri, os.path.join(d, name), name=name))
        for n in nodes:
            assert n.get("/livez").status_code == 200
            status, h = n.health()
            assert status == 503 and h["status"] == "database unreachable", h
            assert h["store_reachable"] is False and "PostgreSQL" in h["message"], h
            r = n.get("/v2/everything", {"q": "the"}, key)
            assert r.status_code == 503 and r.json()["code"] == "serviceUnavailable", r.text
    finally:
        pg.start()
    try:
        wait_converged(pg, uri, nodes)
        for n in nodes:
            status, h = n.health()
            assert status == 200 and h["status"] == "ok" and h["articles"] == len(rows), h
            r = n.get("/v2/everything", {"q": "the", "pageSize": 1}, key)
            assert r.status_code == 200 and r.json()["totalResults"] > 0, r.text
    finally:
        for n in nodes:
            n.stop()
