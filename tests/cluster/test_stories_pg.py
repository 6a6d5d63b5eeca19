"""Stories in cluster mode (issue 25): the story ids belong to the data.
Articles are imported into one PostgreSQL store by separate import
processes (each starting its story window from what is stored), and into
an embedded store from the same files in the same order. Two nodes, one
on the purpose-built index and one on FTS5, must give every article the
story id the store holds, and answer /v2/stories, /v2/stories/{id},
dedupe=true and similarTo byte for byte as each other and as embedded
mode, also for copies that arrive while they serve."""
import os
import random

from conftest import Node, newsd, wait_converged, wait_for, write_jsonl
from test_cluster import Reference, cluster, create_key  # noqa: F401 (a fixture)

SIZES = [1, 3, 2, 5, 1, 4, 2, 1, 3]


def copies():
    """Stories of SIZES copies, each copy from its own host; the copies of
    a story are spread over the three batches."""
    rnd = random.Random(2025)
    vocab = ["w%03d%s" % (i, rnd.choice("abcdefgh")) for i in range(2000)]
    batches = [[], [], []]
    for s, size in enumerate(SIZES):
        words = rnd.sample(vocab, 100)
        topic = "alpha" if s % 2 == 0 else "beta"
        for k in range(size):
            batches[k % 3].append({
                "source": {"id": None, "name": "Site%d" % k}, "author": None,
                "title": "Story %d: %s" % (s, " ".join(words[:7])),
                "description": "%s %s" % (topic, words[0]),
                "url": "https://site%d.example/news/%d" % (k, s), "urlToImage": None,
                "publishedAt": "2023-01-0%dT%02d:%02d:00Z" % (2 + k % 3, 6 + s, k),
                "content": "%s %s" % (topic, " ".join(words[7:]))})
    return batches


def stored_stories(pg, uri):
    out = {}
    for line in pg.psql(uri, "SELECT url, story_id FROM articles").splitlines():
        url, story = line.split("|")
        out[url] = story
    return out


def test_two_nodes_give_the_same_story_ids(pg, cluster):
    uri, emb, d = cluster
    batches = [write_jsonl(os.path.join(d, "s%d.jsonl" % i), b) for i, b in enumerate(copies())]
    for path in batches[:2]:
        newsd("import", "--store", uri, path)
        newsd("import", "--store", emb, path)
    key = create_key(uri, "--name", "n")
    ref = Reference(emb, create_key(emb, "--name", "e"))
    nodes = [Node(uri, os.path.join(d, "index-engine"), name="engine"),
             Node(uri, os.path.join(d, "index-fts5"), ["--index", "fts5"], name="fts5")]
    try:
        wait_converged(pg, uri, nodes)
        # the third batch's copies join stories stored by the first two
        newsd("import", "--store", uri, batches[2])
        newsd("import", "--store", emb, batches[2])
        wait_converged(pg, uri, nodes)
        wait_for("the embedded server to see the last batch", lambda: ref.node.get(
            "/v2/everything", {"q": "alpha OR beta"}, ref.key).json()["totalResults"]
            == sum(SIZES))

        stored = stored_stories(pg, uri)
        assert len(stored) == sum(SIZES) and all(stored.values())
        rows = [r for b in copies() for r in b]
        # copies share their story's id, and no two stories share one
        by_story = {}
        for r in rows:
            by_story.setdefault(r["title"], set()).add(stored[r["url"]])
        assert all(len(ids) == 1 for ids in by_story.values()), by_story
        assert len({next(iter(ids)) for ids in by_story.values()}) == len(SIZES)

        def same(path, params):
            want = ref.node.get(path, params, ref.key)
            assert want.status_code == 200, (path, params, want.text[:300])
            for n in nodes:
                got = n.get(path, params, key)
                assert got.content == want.content, (n.name, path, params, got.text[:600],
                                                     want.text[:600])
            return want.json()

        ev = "/v2/everything"
        page = same("/v2/stories", {"q": "alpha OR beta", "pageSize": 100})
        assert page["totalResults"] == len(SIZES)
        for s in page["stories"]:
            members = [r["url"] for r in rows if stored[r["url"]] == s["id"]]
            assert s["size"] == len(members)
            one = same("/v2/stories/" + s["id"], {})
            assert sorted(a["url"] for a in one["articles"]) == sorted(members)
        same("/v2/stories", {"q": "alpha", "sortBy": "size"})
        dd = same(ev, {"q": "alpha OR beta", "dedupe": "true"})
        assert {a["storyId"] for a in dd["articles"]} == set(stored.values())
        same(ev, {"q": "beta", "dedupe": "true", "sortBy": "relevancy"})
        same(ev, {"similarTo": rows[3]["url"], "pageSize": 5})
    finally:
        for n in nodes:
            n.stop()
        ref.node.stop()
