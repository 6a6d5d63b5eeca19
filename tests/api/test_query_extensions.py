"""The query language's extensions (issue 31 item 6, docs/query-language.md),
over HTTP on the session's server (release, ASan and FTS5 passes alike).

Field terms: each is held to the parameter it is documented to equal — the
same totals and the same pages, in every relevancy and date order — with
values drawn from the fixture so that every comparison has matches and
differs from what the same text meant before (a phrase of the words)."""
import re
from collections import Counter

import pytest

from corpus import tokenize
from harness import articles_ok, err, urls

EV = "/v2/everything"
TH = "/v2/top-headlines"


def page(api, params, path=EV, sort="publishedAt"):
    """Totals and the first 100 urls, in the order asked for."""
    ps = list(params) + [("pageSize", "100")]
    if path == EV:
        ps.append(("sortBy", sort))
    b = articles_ok(api.get(path, ps))
    return b["totalResults"], urls(b)


def same(api, a, b, path=EV, sorts=("publishedAt", "relevancy")):
    """a and b give the same answer; the number of matches."""
    total = None
    for sort in sorts if path == EV else (None,):
        ga, gb = page(api, a, path, sort), page(api, b, path, sort)
        assert ga == gb, (a, b, sort, ga[0], gb[0])
        total = ga[0]
    return total


@pytest.fixture(scope="module")
def picks(corpus):
    """A frequent title word, the most common source id and a domain with
    a subdomain among the fixture's articles."""
    titles = Counter()
    for a in corpus.articles:
        titles.update(set(t for t in a.tok["title"] if t.isascii() and t.isalpha() and len(t) > 4))
    sources = Counter(a.source_id for a in corpus.articles if a.source_id)
    hosts = Counter(a.host for a in corpus.articles)
    parent = Counter(".".join(h.split(".")[-2:]) for h in hosts if h.count(".") >= 2)
    return {"word": titles.most_common(1)[0][0],
            "word2": titles.most_common(8)[7][0],
            "source": sources.most_common(1)[0][0],
            "source2": sources.most_common(2)[1][0],
            "domain": parent.most_common(1)[0][0]}


def test_title_term_is_qintitle(api, picks):
    w = picks["word"]
    n = same(api, [("q", "title:" + w)], [("qInTitle", w)])
    assert n > 0
    assert same(api, [("q", 'title:"%s"' % w)], [("qInTitle", '"%s"' % w)]) > 0
    # before the extension, the phrase "title <word>": nothing in the fixture
    assert page(api, [("q", '"title %s"' % w)])[0] != n


def test_title_term_ignores_searchin_as_qintitle_does(api, picks):
    w, w2 = picks["word"], picks["word2"]
    for search_in in ("content", "description", "title,content"):
        same(api, [("q", "title:%s %s" % (w, w2)), ("searchIn", search_in)],
             [("qInTitle", w), ("q", w2), ("searchIn", search_in)])
    # and it is not the whole-article word
    assert page(api, [("q", "title:" + w)])[0] < page(api, [("q", w)])[0]


def test_title_phrase_term_is_a_qintitle_phrase(api, corpus):
    a = next(x for x in corpus.articles
             if len([t for t in x.tok["title"] if t.isascii()]) >= 3 and x.title.isascii())
    phrase = " ".join(a.tok["title"][:2])
    assert same(api, [("q", 'title:"%s"' % phrase)], [("qInTitle", '"%s"' % phrase)]) > 0


def test_source_term_is_the_sources_parameter(api, picks):
    s, w = picks["source"], picks["word"]
    assert same(api, [("q", "source:" + s)], [("sources", s)]) > 0
    same(api, [("q", "%s source:%s" % (w, s))], [("q", w), ("sources", s)])
    assert same(api, [("q", "source:%s OR source:%s" % (s, picks["source2"]))],
                [("sources", s + "," + picks["source2"])]) > 0
    same(api, [("q", 'source:"%s"' % s)], [("sources", s)])


def test_source_term_inside_or_with_a_word(api, picks):
    """What no parameter can say: from this source, or this word anywhere."""
    s, w = picks["source"], picks["word"]
    n_or = page(api, [("q", "source:%s OR %s" % (s, w))])[0]
    n_s, n_w = page(api, [("sources", s)])[0], page(api, [("q", w)])[0]
    n_both = page(api, [("q", w), ("sources", s)])[0]
    assert n_or == n_s + n_w - n_both and n_or > max(n_s, n_w)


def test_excluded_source_term(api, picks):
    s, w = picks["source"], picks["word"]
    n = page(api, [("q", w)])[0]
    n_in = page(api, [("q", w), ("sources", s)])[0]
    assert page(api, [("q", "%s -source:%s" % (w, s))])[0] == n - n_in
    assert page(api, [("q", "%s NOT source:%s" % (w, s))])[0] == n - n_in


def test_domain_term_is_the_domains_parameter(api, picks):
    d, w = picks["domain"], picks["word"]
    assert same(api, [("q", "domain:" + d)], [("domains", d)]) > 0
    for spelled in ("https://www." + d.upper(), d + "."):
        same(api, [("q", 'domain:"%s"' % spelled)], [("domains", d)], sorts=("publishedAt",))
    same(api, [("q", "%s -domain:%s" % (w, d))], [("q", w), ("excludeDomains", d)])


def test_field_terms_in_top_headlines_and_qintitle(api, picks):
    s = picks["source"]
    same(api, [("q", "source:" + s), ("language", "en")], [("sources", s), ("language", "en")],
         path=TH)
    w = picks["word"]
    same(api, [("qInTitle", "%s domain:%s" % (w, picks["domain"]))],
         [("qInTitle", w), ("domains", picks["domain"])])


@pytest.mark.parametrize("q, phrase", [
    ("foo:bar", '"foo bar"'),
    ("author:smith", '"author smith"'),
    ("Title:apple", '"title apple"'),
    ("title: apple", "title apple"),
    ("title:(apple)", "title apple"),
    ('"title:apple"', '"title apple"'),
])
def test_other_colons_read_as_before(api, q, phrase):
    """Only the three lower-case names with a value at once are special."""
    assert page(api, [("q", q)]) == page(api, [("q", phrase)])


@pytest.mark.parametrize("q, msg", [
    ("a domain:.com", "invalid domain after domain: at character 3"),
    ("a domain:x/y", "invalid domain after domain: at character 3"),
    ('a source:"b c"', "invalid source id after source: at character 3"),
    ("-source:bbc-news", "only excludes"),
    ("a OR -domain:b.com", "exclusion (NOT or -) inside OR at character 6"),
])
def test_bad_field_terms_are_parameter_invalid(api, q, msg):
    b = err(api.get(EV, [("q", q)]), 400, "parameterInvalid")
    assert msg in b["message"], b["message"]


def test_unknown_source_term_matches_nothing(api, picks):
    """No sourceDoesNotExist: a condition inside q, like an absent word."""
    assert page(api, [("q", "source:no-such-source-here")]) == (0, [])
    n = page(api, [("q", picks["word"])])[0]
    assert page(api, [("q", "%s OR source:no-such-source-here" % picks["word"])])[0] == n


# ---- author: ----------------------------------------------------------------------------
def author_names(author):
    """The names an author field gives (docs/query-language.md), each as
    its words: the whole field; when it lists several (parts between , ;
    | or &, or around the word "and"), each part; each of these without a
    first word "by"."""
    names = set()
    words = tokenize(author or "")
    if not words:
        return names
    groups = []
    for part in re.split(r"[,;|&]", author):
        group = []
        for w in tokenize(part):
            if w == "and":
                groups.append(group)
                group = []
            else:
                group.append(w)
        groups.append(group)
    for name in [words] + [g for g in groups if g]:
        names.add(tuple(name))
        if name[0] == "by" and len(name) > 1:
            names.add(tuple(name[1:]))
    assert len(names) <= 8, author  # the fixture's fields: under the cap of terms
    return names


@pytest.fixture(scope="module")
def author_picks(corpus):
    """Names of the fixture's authors: the most common whole field, a name
    from a list, a field of a script other than Latin, one with accents."""
    fields = Counter(a.line.get("author") for a in corpus.articles if a.line.get("author"))
    listed = [f for f in fields if re.search(r"[,;|&]| and ", f) and len(author_names(f)) > 1]
    other = [f for f in fields if any(ord(c) > 0x400 for c in f) and tokenize(f)]
    accented = [f for f in fields if re.search(r"[à-ÿ]", f) and f.isascii() is False]
    assert listed and other and accented
    part = sorted(n for n in author_names(sorted(listed)[0]) if n != tuple(tokenize(sorted(listed)[0])))[0]
    return {"common": fields.most_common(1)[0][0], "part": " ".join(part),
            "other": sorted(other)[0], "accented": sorted(accented)[0]}


def by_author(articles, name):
    key = tuple(tokenize(name))
    return [a for a in articles if key in author_names(a.line.get("author"))]


def test_author_term_matches_the_names_of_the_author_field(api, corpus, author_picks):
    """Each pick, as written, lower-cased and with its accents dropped,
    finds exactly the articles whose author field gives that name."""
    everything = corpus.everything()
    for name in author_picks.values():
        want = by_author(everything, name)
        assert want, name
        for spelled in (name, name.lower(), name.upper()):
            total, got = page(api, [("q", 'author:"%s"' % spelled)])
            assert total == len(want), (spelled, total, len(want))
            assert set(got) == set(a.url for a in want[:100]) or total > 100, spelled


def test_author_term_combines_with_words_and_other_terms(api, corpus, author_picks):
    name = author_picks["common"]
    mine = set(a.url for a in by_author(corpus.everything(), name))
    w = Counter(t for a in corpus.articles if a.url in mine for t in set(a.tok["title"])
                if t.isascii() and t.isalpha() and len(t) > 3).most_common(1)[0][0]
    w = '"%s"' % w  # exact: the oracle does not stem
    with_w = set(a.url for a in corpus.everything(q=w))
    both = page(api, [("q", '%s author:"%s"' % (w, name))])
    assert both[0] == len(mine & with_w) > 0
    assert page(api, [("q", '%s -author:"%s"' % (w, name))])[0] == len(with_w - mine)
    assert page(api, [("q", '%s OR author:"%s"' % (w, name))])[0] == len(with_w | mine)
    other = set(a.url for a in by_author(corpus.everything(), author_picks["part"]))
    assert page(api, [("q", 'author:"%s" OR author:"%s"' % (name, author_picks["part"]))])[0] == \
        len(mine | other)
    # in qInTitle and in every relevancy order the same documents
    same(api, [("q", w), ("qInTitle", 'author:"%s"' % name)], [("q", '%s author:"%s"' % (w, name))],
         sorts=("publishedAt",))


def test_author_facet_values_are_author_terms(api):
    """Drilling down from the author facet: each value's count is at most
    what author:"<value>" finds (it also finds the value's other
    spellings and the lists that name it)."""
    r = api.get(EV, [("q", "the"), ("facets", "author"), ("facetSize", "8")])
    assert r.status_code == 200, r.text
    body = r.json()
    values = body["facets"]["author"]
    assert len(values) == 8
    for v in values:
        q = 'author:"%s"' % v["value"].replace('"', " ")
        assert page(api, [("q", q)])[0] >= v["count"], v


@pytest.mark.parametrize("q,msg", [
    ('author:"!!"', "invalid author after author: at character 1"),
    ("a author:&", "invalid author after author: at character 3"),
    ('author:"jane doe"~2', "not author:"),
    ("-author:smith", "only excludes"),
    ('author:"%s"' % " ".join("w%d" % i for i in range(65)), "more than 64 words"),
])
def test_bad_author_terms_are_parameter_invalid(api, q, msg):
    b = err(api.get(EV, [("q", q)]), 400, "parameterInvalid")
    assert msg in b["message"], b["message"]


def test_author_term_in_a_saved_search_is_accepted(api):
    alert_accepted(api, 'author:"Jane Doe" election')


# ---- prefixes: word* -------------------------------------------------------------------
@pytest.fixture(scope="module")
def prefix_pick(corpus):
    """A prefix of a few (2..10) distinct ASCII words of the fixture, and
    those words."""
    words = set()
    for a in corpus.articles:
        for f in ("title", "description", "content"):
            words.update(t for t in a.tok[f] if t.isascii() and t.isalnum())
    by = {}
    for w in words:
        if len(w) >= 5:
            by.setdefault(w[:4], set()).add(w)
    best = sorted((p for p, ws in by.items() if 3 <= len(ws) <= 10 and p.isalpha()
                   and not any(x.startswith(p) and x not in ws for x in words)))
    p = best[0]
    return p, sorted(x for x in words if x.startswith(p))


def test_prefix_is_the_or_of_its_words(api, prefix_pick):
    """word* = the OR of the exact (quoted) words of the store that start with it."""
    p, words = prefix_pick
    alt = " OR ".join('"%s"' % w for w in words)
    n = same(api, [("q", p + "*")], [("q", alt)])
    assert n > 0 and len(words) >= 3
    same(api, [("q", "title:%s*" % p)], [("qInTitle", alt)])
    # before the extension the star was dropped: the word itself
    assert page(api, [("q", p + "*")])[0] != page(api, [("q", p)])[0]


def test_prefix_combines_with_words_and_exclusions(api, prefix_pick, picks):
    p, words = prefix_pick
    alt = "(" + " OR ".join('"%s"' % w for w in words) + ")"
    same(api, [("q", "%s* OR %s" % (p, picks["word"]))], [("q", "%s OR %s" % (alt, picks["word"]))])
    same(api, [("q", "%s -%s*" % (picks["word"], p))], [("q", "%s -%s" % (picks["word"], alt))])


def test_prefix_of_no_word_matches_nothing(api):
    assert page(api, [("q", "zqxjvw*")]) == (0, [])


def test_prefix_of_too_many_words_is_refused(api):
    """Past 64 words: 400 parameterInvalid naming the prefix, on every
    search endpoint; a longer prefix of the same words is fine."""
    for path, extra in ((EV, []), (TH, [("language", "en")]), (EV + "/counts", [])):
        b = err(api.get(path, [("q", "s*")] + extra), 400, "parameterInvalid")
        assert "s*" in b["message"] and "64" in b["message"], b["message"]


def post_alert(api, q):
    """POST /v2/alerts of a saved search of q; the response."""
    import json
    body = {"query": {"q": q}, "webhook": "https://example.com/hook", "secret": "s3cret"}
    return api.request("POST", "/v2/alerts", data=json.dumps(body),
                       headers={"Content-Type": "application/json"})


def alert_accepted(api, q):
    """A saved search of q is created, echoes q, and is deleted again."""
    r = post_alert(api, q)
    assert r.status_code == 201, r.text
    alert = r.json()["alert"]
    assert alert["query"] == {"q": q}
    assert api.request("DELETE", "/v2/alerts/%s" % alert["id"]).status_code in (200, 204)


def test_prefix_in_a_saved_search_is_accepted(api):
    """Alerts match each new article's own words: no dictionary, no bound."""
    alert_accepted(api, "s* OR tech*")


def test_source_term_goes_with_country_in_top_headlines(api, picks):
    """The sources parameter cannot go with country (400), a
    source: term of q can: it is a condition of the query."""
    articles_ok(api.get(TH, [("q", "source:" + picks["source"]), ("country", "us")]))
    assert api.get(TH, [("sources", picks["source"]), ("country", "us")]).status_code == 400


# ---- proximity: "a b"~N ----------------------------------------------------------------
FIELDS = ("title", "description", "content")


def near_in(toks, words, n):
    """Brute force of docs/query-language.md: a window of one field holds
    every word with last - first <= n + len(words) - 1."""
    span = n + len(words) - 1
    pos = {w: [i for i, t in enumerate(toks) if t == w] for w in words}
    if not all(pos.values()):
        return False
    return any(all(any(i <= p <= i + span for p in pos[w]) for w in words)
               for i, t in enumerate(toks) if t in pos)


def near_expected(corpus, words, n, fields=FIELDS):
    return sorted(a.url for a in corpus.articles
                  if any(near_in(a.tok[f], words, n) for f in fields))


@pytest.fixture(scope="module")
def near_pick(corpus):
    """Two ASCII words of a title three positions apart (two tokens between),
    rare enough that every match fits one page, and matched farther apart
    elsewhere too (so that the distance decides something)."""
    best = None
    for a in corpus.articles:
        t = a.tok["title"]
        for i in range(len(t) - 3):
            w1, w2 = t[i], t[i + 3]
            if w1 == w2 or not (w1.isascii() and w1.isalpha() and w2.isascii() and w2.isalpha()):
                continue
            if len(w1) < 4 or len(w2) < 4:
                continue
            n2 = near_expected(corpus, (w1, w2), 2)
            n1 = near_expected(corpus, (w1, w2), 1)
            if 0 < len(n2) <= 100 and len(n1) < len(n2):
                return w1, w2
            if best is None and 0 < len(n2) <= 100:
                best = (w1, w2)
    assert best, "no word pair for the proximity tests"
    return best


def all_urls(api, q, extra=()):
    total, got = page(api, [("q", q)] + list(extra))
    assert total == len(got) <= 100, (q, total)
    return sorted(got)


def test_proximity_matches_the_brute_force(api, corpus, near_pick):
    w1, w2 = near_pick
    for n in (0, 1, 2, 3, 10):
        want = near_expected(corpus, (w1, w2), n)
        assert all_urls(api, '"%s %s"~%d' % (w1, w2, n)) == want, n
        assert all_urls(api, '"%s %s"~%d' % (w2, w1, n)) == want, n  # any order
    assert near_expected(corpus, (w1, w2), 2)  # the pick has matches


def test_proximity_distance_decides(api, corpus, near_pick):
    """~1 finds fewer than ~2 for the pick, which is two tokens apart in a
    title; every ~N match is an AND match."""
    w1, w2 = near_pick
    n1 = page(api, [("q", '"%s %s"~1' % (w1, w2))])[0]
    n2 = page(api, [("q", '"%s %s"~2' % (w1, w2))])[0]
    both = page(api, [("q", "%s %s" % (w1, w2))])[0]
    assert n1 <= n2 <= both and n2 > 0
    assert n1 < n2 or near_expected(corpus, (w1, w2), 1) == near_expected(corpus, (w1, w2), 2)


def test_proximity_in_title_and_searchin(api, corpus, near_pick):
    w1, w2 = near_pick
    want = near_expected(corpus, (w1, w2), 2, ("title",))
    assert want
    assert all_urls(api, 'title:"%s %s"~2' % (w1, w2)) == want
    assert sorted(page(api, [("qInTitle", '"%s %s"~2' % (w1, w2))])[1]) == want
    assert all_urls(api, '"%s %s"~2' % (w1, w2), [("searchIn", "content")]) == \
        near_expected(corpus, (w1, w2), 2, ("content",))


def test_proximity_combines(api, corpus, near_pick):
    w1, w2 = near_pick
    q = '"%s %s"~2' % (w1, w2)
    near = set(near_expected(corpus, (w1, w2), 2))
    total, _ = page(api, [("q", w1)])
    assert page(api, [("q", "%s -%s" % (w1, q))])[0] == total - len(near)
    assert all_urls(api, "(%s OR zqxjvw) %s" % (q, w1)) == sorted(near)


@pytest.mark.parametrize("q, same_as", [
    ('"%(a)s %(b)s"~', '"%(a)s %(b)s"'),                # no number: the phrase, as before
    ('"%(a)s %(b)s" ~2', '"%(a)s %(b)s" 2'),            # not at once: the word 2
    ('"%(a)s %(b)s"~2x', '"%(a)s %(b)s" 2x'),
    ('"%(a)s"~3', '"%(a)s"'),                           # one word: the exact word
    ('"%(a)s %(b)s %(a)s"~2', '"%(a)s %(b)s"~2'),       # a repeated word counts once
    ('"%(a)s %(b)s"~02', '"%(a)s %(b)s"~2'),
])
def test_proximity_spellings(api, near_pick, q, same_as):
    v = {"a": near_pick[0], "b": near_pick[1]}
    assert page(api, [("q", q % v)]) == page(api, [("q", same_as % v)])


@pytest.mark.parametrize("q, msg", [
    ('"a b"~101', "proximity distance above 100 at character 6"),
    ('x "a b"~99999999999', "proximity distance above 100 at character 8"),
    ('source:"bbc-news"~2', "not source:"),
    ('-"a b"~2', "only excludes"),
])
def test_bad_proximity_is_parameter_invalid(api, q, msg):
    for path, extra in ((EV, []), (TH, [("language", "en")])):
        b = err(api.get(path, [("q", q)] + extra), 400, "parameterInvalid")
        assert msg in b["message"], b["message"]


def test_proximity_in_a_saved_search_is_accepted(api):
    alert_accepted(api, '"rate cut"~3')
    r = post_alert(api, '"rate cut"~101')
    assert r.status_code == 400 and "above 100" in r.text, r.text
