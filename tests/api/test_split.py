"""One search over two threads answers exactly as one (docs/engine.md, "One
search on both cores"): the API corpus, copied with `newsd backup`, is
served twice in segments of 37 documents (NEWSD_ENGINE_SEGMENT_DOCS), once
with every search split over two threads (NEWSD_ENGINE_SPLIT=always) and
once never (=0); the same requests over HTTP (words, ANDs, ORs, NOTs,
phrases, filters, every sort, two pages) give byte-identical bodies, and
the same bodies as the session's server over its own segments."""
import os
import re

import pytest
import requests

from corpus import tokenize
from harness import Server, cli_ok, same_everything

pytestmark = pytest.mark.by_design(os.environ.get("NEWSD_INDEX") == "fts5",
                                   reason="the engine's segments are what is split")


def requests_for(corpus):
    """Requests over the corpus's most frequent title words: each alone, in
    pairs (AND, OR, NOT, a phrase), with filters; every sort, pages 1 and 2."""
    top = corpus.frequent_words(8, lambda a: a.title, 4)
    some = ",".join(corpus.frequent_sources(3))
    qs = list(top)
    for a, b in zip(top, top[1:]):
        qs += ["%s %s" % (a, b), "%s OR %s" % (a, b), "%s NOT %s" % (a, b),
               "(%s OR %s) AND NOT zzqx" % (a, b)]
    title = next(a.title for a in corpus.articles if a.title and len(tokenize(a.title)) > 3)
    qs.append('"%s"' % " ".join(tokenize(title)[:2]))
    out = []
    for q in qs:
        for extra in ({}, {"language": "en"}, {"sources": some}):
            for sort in ("publishedAt", "relevancy", "popularity"):
                for page in (1, 2):
                    out.append(dict(q=q, sortBy=sort, page=page, pageSize=20, **extra))
    return out


@pytest.fixture(scope="module")
def servers(store, corpus, tmp_path_factory, monkeypatch_module):
    made = []
    try:
        for split in ("always", "0"):
            d = tmp_path_factory.mktemp("split-" + split)
            cli_ok("backup", "--store", store.path, str(d / "newsd.db"))
            monkeypatch_module.setenv("NEWSD_ENGINE_SEGMENT_DOCS", "37")
            monkeypatch_module.setenv("NEWSD_ENGINE_SPLIT", split)
            made.append(Server(str(d), now=corpus.now))
        monkeypatch_module.delenv("NEWSD_ENGINE_SEGMENT_DOCS")
        monkeypatch_module.delenv("NEWSD_ENGINE_SPLIT")
        yield made
    finally:
        problems = []
        for srv in made:
            problems += srv.stop()
        assert not problems, "\n".join(problems)


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def split_searches(srv):
    """newsd_index_split_searches_total: the searches srv ran over two threads."""
    text = requests.get(srv.base + "/metrics", timeout=30).text
    m = re.search(r"^newsd_index_split_searches_total (\d+)$", text, re.M)
    assert m, text[-2000:]
    return int(m.group(1))


def test_a_split_search_answers_as_one_thread(servers, server, store, corpus):
    """Every request of the split server was split (its counter moved by
    exactly their number) and none of the other's: equal bodies then say
    that two threads answer as one, not that neither split."""
    split, single = servers
    reqs = requests_for(corpus)
    before = split_searches(split), split_searches(single)
    found = same_everything([split.base, single.base, server.base], store.keys["main"], reqs)
    # the requests do find articles (most of them: a phrase or a filter may not)
    assert found > len(reqs) // 2, (found, len(reqs))
    assert split_searches(split) - before[0] == len(reqs)
    assert split_searches(single) == before[1] == 0


def test_the_split_servers_hold_many_segments(servers):
    """The comparison means something only if there were segments to split."""
    for srv in servers:
        seg_files = [f for f in os.listdir(os.path.join(srv.store, "newsd.db.engine"))
                     if f.endswith(".seg")]
        assert len(seg_files) >= 2, seg_files
