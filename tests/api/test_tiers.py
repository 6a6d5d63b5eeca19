"""Tiers (docs/engine.md "Tiers") change no answer: the API corpus, copied
with `newsd backup`, is served twice, once with a tier for every term of 8
documents or more a segment (NEWSD_ENGINE_TIER_MIN_DF=8) and once with
none; the same relevancy requests over HTTP (frequent words alone, their
ORs, ANDs and NOTs, with filters, small and large pages, three pages) give
byte-identical bodies, and the same bodies as the session's server."""
import os

import pytest

from harness import Server, cli_ok, same_everything

pytestmark = pytest.mark.by_design(os.environ.get("NEWSD_INDEX") == "fts5",
                                   reason="tiers are the engine's")

NO_TIERS = str(2**32 - 1)


def requests_for(corpus):
    """Relevancy requests over the corpus's most frequent words."""
    top = corpus.frequent_words(10, lambda a: (a.title or "") + " " + (a.description or ""), 3)
    some = ",".join(corpus.frequent_sources(3))
    qs = list(top)
    for a, b in zip(top, top[1:]):
        qs += ["%s OR %s" % (a, b), "%s %s" % (a, b), "+%s -%s" % (a, b)]
    qs.append(" OR ".join(top[:5]))
    out = []
    for q in qs:
        for extra in ({}, {"language": "en"}, {"sources": some}):
            for size, pages in ((2, (1, 2, 3)), (20, (1, 2))):
                for page in pages:
                    out.append(dict(q=q, sortBy="relevancy", page=page, pageSize=size, **extra))
    return out


@pytest.fixture(scope="module")
def servers(store, corpus, tmp_path_factory):
    made = []
    mp = pytest.MonkeyPatch()
    try:
        for name, min_df in (("tiers", "8"), ("none", NO_TIERS)):
            d = tmp_path_factory.mktemp("tiers-" + name)
            cli_ok("backup", "--store", store.path, str(d / "newsd.db"))
            mp.setenv("NEWSD_ENGINE_TIER_MIN_DF", min_df)
            made.append(Server(str(d), now=corpus.now))
        mp.undo()
        yield made
    finally:
        mp.undo()
        problems = []
        for srv in made:
            problems += srv.stop()
        assert not problems, "\n".join(problems)


def tier_bytes(srv):
    """The `tiers` line of `newsd index sizes` over srv's store."""
    out = cli_ok("index", "sizes", "--store", srv.store).out
    line = next(l for l in out.splitlines() if l.split()[:1] == ["tiers"])
    return int(line.split()[1])


def test_tiers_are_written_only_where_asked(servers):
    """The comparison means something only if one server has tiers."""
    tiered, plain = servers
    assert tier_bytes(tiered) > 0
    assert tier_bytes(plain) == 0


def test_relevancy_pages_are_the_same_with_and_without_tiers(servers, server, store, corpus):
    tiered, plain = servers
    reqs = requests_for(corpus)
    found = same_everything([tiered.base, plain.base, server.base], store.keys["main"], reqs)
    assert found > len(reqs) // 2, (found, len(reqs))
