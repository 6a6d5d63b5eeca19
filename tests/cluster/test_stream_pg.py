"""Live streams on a cluster (issue 17 item 1): two nodes on one PostgreSQL
store, each streaming from its own replica of the article log. A stream on
each node sees every matching article imported into the store, in the same
order under the same ids, and a stream resumed on one node with a position
taken from the other gets exactly what it missed."""
import json
import os
import sys
import uuid

from conftest import Node, SLOW, newsd, write_jsonl

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "api"))
from sse import Stream  # noqa: E402  (tests/api/sse.py)

STREAM = "/v2/everything/stream"
WAIT = 30 * SLOW


def article(word, n):
    return {"source": {"id": None, "name": "Cluster Wire"},
            "title": "%s bulletin %d" % (word, n),
            "description": "About %s, number %d." % (word, n),
            "content": "Text %d." % n,
            "url": "https://cluster.example.com/%s/%s/%d" % (word, uuid.uuid4().hex[:10], n),
            "publishedAt": "2021-07-10T12:00:%02dZ" % n}


def collect(stream, n):
    out = []
    while len(out) < n:
        e = stream.next_event(WAIT)
        assert e is not None, "got %d of %d events" % (len(out), n)
        out.append(e)
    return [(e.id, json.loads(e.text)["url"]) for e in out]


def test_a_stream_on_each_node_sees_what_is_imported_through_the_store(pg, workdir):
    uri = pg.new_database()
    d = os.path.join(workdir, "stream")
    os.makedirs(d)
    _, out, _ = newsd("keys", "create", "--create", "--store", uri)
    key = out.strip()
    nodes = [Node(uri, index_dir=os.path.join(d, "n%d" % i), name="n%d" % i) for i in (1, 2)]
    streams = []
    try:
        word = "tidewater"
        streams = [Stream(n.base, STREAM, {"q": word}, {"X-Api-Key": key}) for n in nodes]
        assert [s.status for s in streams] == [200, 200], [s.body for s in streams]
        first = [article(word, 1), article("other", 2)]
        newsd("import", "--create", "--store", uri, write_jsonl(os.path.join(d, "a.jsonl"), first))
        second = [article(word, 3), article(word, 4)]
        newsd("import", "--create", "--store", uri, write_jsonl(os.path.join(d, "b.jsonl"), second))
        want = [first[0]["url"], second[0]["url"], second[1]["url"]]
        got = [collect(s, 3) for s in streams]
        for g in got:
            assert [u for _, u in g] == want
        assert got[0] == got[1], "the nodes' ids differ: %r" % got
        for s in streams:
            assert s.next_event(1.5 * SLOW) is None
        # A position from node 1 resumes on node 2.
        streams[0].close()
        resumed = Stream(nodes[1].base, STREAM, {"q": word},
                         {"X-Api-Key": key, "Last-Event-ID": got[0][0][0]})
        streams.append(resumed)
        assert resumed.status == 200
        assert collect(resumed, 2) == got[0][1:]
        assert resumed.next_event(1.5 * SLOW) is None
    finally:
        for s in streams:
            s.close()
        for n in nodes:
            n.stop()
