"""Reference model of the fixture store, written from API.md alone.

The tests compute every expected answer here, from the fixture files, never
from the server's output: which articles match (a small evaluator of the
query language of §4 over a tokenizer that follows §8), the filters of §2, the
live window of top-headlines, the rendering of §3 (content truncation, nulls,
source id), and the sources lists.

Plain (unquoted) query words may also match their Snowball stem on the server;
this reference has no stemmer, so every plain word a test uses is checked to be
"stem-safe" among the articles the other filters leave: no other token there
shares its first four letters (the whole word if shorter), so no stem can widen
the match.  Quoted words match exact tokens only (§8).
"""
import collections
import datetime
import json
import os
import re
import unicodedata
import urllib.parse

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "api")
EVERYTHING_LANGS = {"ar", "de", "en", "es", "fr", "he", "it", "nl", "no", "pt",
                    "ru", "sv", "ud", "zh"}
CATEGORIES = ("business", "entertainment", "general", "health", "science",
              "sports", "technology")


# ---- text ----------------------------------------------------------------------
def _is_cjk(ch):
    name = unicodedata.name(ch, "")
    return name.startswith(("CJK UNIFIED", "CJK COMPATIBILITY IDEOGRAPH", "HIRAGANA",
                            "KATAKANA", "HANGUL"))


def normalize(s):
    """Case fold and strip accents (NFKD, drop nonspacing marks, recompose)."""
    s = unicodedata.normalize("NFKD", s)
    s = "".join(c for c in s if unicodedata.category(c) != "Mn")
    return unicodedata.normalize("NFKC", s).casefold()


def tokenize(s):
    """Maximal runs of letters and digits; Han/kana/Hangul runs as bigrams."""
    out = []
    if not s:
        return out
    s = normalize(s)
    run, cjk = [], []

    def flush():
        if run:
            out.append("".join(run))
            run.clear()
        if cjk:
            if len(cjk) == 1:
                out.append(cjk[0])
            else:
                out.extend(cjk[i] + cjk[i + 1] for i in range(len(cjk) - 1))
            cjk.clear()

    for ch in s:
        if _is_cjk(ch):
            if run:
                flush()
            cjk.append(ch)
        elif ch.isalnum():
            if cjk:
                flush()
            run.append(ch)
        else:
            flush()
    flush()
    return out


# ---- time ----------------------------------------------------------------------
_TS = re.compile(r"(\d{4})-(\d\d)-(\d\d)(?:T(\d\d):(\d\d):(\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)?)?")


def parse_time(s, end_of_day=False):
    """Seconds since the epoch per §2/§8 (UTC without offset; fraction
    truncated; a date alone is 00:00:00, or 23:59:59 when end_of_day)."""
    m = _TS.fullmatch(s)
    if not m:
        raise ValueError(s)
    y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if m.group(4) is None:
        t = datetime.datetime(y, mo, d, 23, 59, 59) if end_of_day else datetime.datetime(y, mo, d)
    else:
        t = datetime.datetime(y, mo, d, int(m.group(4)), int(m.group(5)), int(m.group(6)))
        off = m.group(8)
        if off and off != "Z":
            sign = 1 if off[0] == "+" else -1
            t -= sign * datetime.timedelta(hours=int(off[1:3]), minutes=int(off[4:6]))
    return int(t.replace(tzinfo=datetime.timezone.utc).timestamp())


def fmt_time(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def truncate_content(c):
    """§3: over 200 code points → first 199 + '…' + ' [+N chars]'."""
    if c is None or len(c) <= 200:
        return c
    return c[:199] + "…" + " [+%d chars]" % (len(c) - 199)


def host_of(url):
    h = (urllib.parse.urlsplit(url).hostname or "").lower()
    return h[4:] if h.startswith("www.") else h


def image_url(u, base=None):
    """urlToImage as served (§8): an absolute http(s) URL with a host; a
    relative reference (a path, "//host/path") resolved against base, the
    article's URL (RFC 3986; issue 23 item 10); else None (javascript:,
    data:, the string "null", a reference with spaces...)."""
    if not isinstance(u, str) or any(ord(c) < 0x20 or ord(c) == 0x7F for c in u):
        return None
    parts = urllib.parse.urlsplit(u.strip(" "))
    if parts.scheme.lower() in ("http", "https") and parts.hostname:
        return u
    first = re.split(r"[/?#]", u, maxsplit=1)[0]
    if (base is None or parts.scheme or not u or u.lower() in ("null", "undefined")
            or any(c in u for c in " \\") or ":" in first):
        return None
    r = urllib.parse.urljoin(base, u)
    p = urllib.parse.urlsplit(r)
    return r if p.scheme in ("http", "https") and p.hostname else None


def domain_matches(host, dom):
    dom = dom.strip().lower()
    if dom.startswith("www."):
        dom = dom[4:]
    return host == dom or host.endswith("." + dom)


# ---- query language (§4, §8) ------------------------------------------------------

def swedish(code):
    """A language code with NewsAPI's se folded into sv."""
    code = code.lower()
    return "sv" if code == "se" else code

class QueryError(ValueError):
    pass


def _lex(q):
    toks, i = [], 0
    while i < len(q):
        c = q[i]
        if c.isspace():
            i += 1
        elif c in "()":
            toks.append((c, None))
            i += 1
        elif c in "+-" and i + 1 < len(q) and not q[i + 1].isspace():
            toks.append((c, None))
            i += 1
        elif c == '"':
            j = q.find('"', i + 1)
            if j < 0:
                raise QueryError("unbalanced quote")
            toks.append(("phrase", q[i + 1:j]))
            i = j + 1
        else:
            j = i
            while j < len(q) and not q[j].isspace() and q[j] not in '()"':
                j += 1
            w = q[i:j]
            toks.append((w, None) if w in ("AND", "OR", "NOT") else ("word", w))
            i = j
    return toks


class Query:
    """Evaluates a query of the tests' own choosing against token lists."""

    def __init__(self, q):
        self.toks = _lex(q)
        self.pos = 0
        self.plain = []
        self.ast = self._or()
        if self.pos != len(self.toks):
            raise QueryError("trailing tokens")

    def _peek(self):
        return self.toks[self.pos][0] if self.pos < len(self.toks) else None

    def _or(self):
        node = self._and()
        while self._peek() == "OR":
            self.pos += 1
            node = ("or", node, self._and())
        return node

    def _and(self):
        node = self._unary()
        while self._peek() not in (None, "OR", ")"):
            if self._peek() == "AND":
                self.pos += 1
            node = ("and", node, self._unary())
        return node

    def _unary(self):
        k = self._peek()
        if k in ("NOT", "-"):
            self.pos += 1
            return ("not", self._unary())
        if k == "+":
            self.pos += 1
            return self._unary()
        return self._atom()

    def _atom(self):
        if self.pos >= len(self.toks):
            raise QueryError("dangling")
        kind, val = self.toks[self.pos]
        self.pos += 1
        if kind == "(":
            node = self._or()
            if self._peek() != ")":
                raise QueryError("unbalanced paren")
            self.pos += 1
            return node
        if kind == "phrase":
            return ("phrase", tokenize(val))
        if kind == "word":
            parts = tokenize(val)
            if len(parts) == 1:
                self.plain.append(parts[0])
                return ("word", parts[0])
            return ("phrase", parts)
        raise QueryError("unexpected %r" % kind)

    def match(self, fields):
        """fields: list of token lists (one per searched field)."""
        return self._eval(self.ast, fields)

    def _eval(self, n, fields):
        op = n[0]
        if op == "or":
            return self._eval(n[1], fields) or self._eval(n[2], fields)
        if op == "and":
            return self._eval(n[1], fields) and self._eval(n[2], fields)
        if op == "not":
            return not self._eval(n[1], fields)
        if op == "word":
            return any(n[1] in f for f in fields)
        ph = n[1]
        for f in fields:
            for i in range(len(f) - len(ph) + 1):
                if f[i:i + len(ph)] == ph:
                    return True
        return False


# ---- the corpus --------------------------------------------------------------------
class Article:
    def __init__(self, line, catalogue):
        self.line = line
        src = line.get("source") or {}
        self.source_id = src.get("id") or None
        self.source_name = src.get("name")
        self.url = line["url"]
        self.title = line.get("title")
        self.description = line.get("description")
        self.content = line.get("content")
        self.t = parse_time(line["publishedAt"])
        self.host = host_of(self.url)
        cat = catalogue.get(self.source_id) or {}
        lang = line.get("language") or cat.get("language")
        self.language = "sv" if lang == "se" else lang
        self.headline = bool(line.get("headline", False))
        self.country = (line.get("country") or cat.get("country") or "").lower() or None
        self.category = (line.get("category") or cat.get("category") or "").lower() or None
        self.tok = {"title": tokenize(self.title), "description": tokenize(self.description),
                    "content": tokenize(self.content)}

    @property
    def published(self):
        return fmt_time(self.t)

    def rendered(self):
        """The article object §3 says the API returns (key order included)."""
        L = self.line
        return {"source": {"id": self.source_id, "name": self.source_name},
                "author": L.get("author"), "title": self.title,
                "description": self.description, "url": self.url,
                "urlToImage": image_url(L.get("urlToImage"), L.get("url")), "publishedAt": self.published,
                "content": truncate_content(self.content)}

    def __repr__(self):
        return "<%s %s>" % (self.published, self.url)


def _read_jsonl(name):
    with open(os.path.join(DATA, name), encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


class Corpus:
    def __init__(self):
        with open(os.path.join(DATA, "meta.json"), encoding="utf-8") as f:
            meta = json.load(f)
        self.now = parse_time(meta["now"])
        self.window = meta["window_hours"] * 3600
        self.sources = _read_jsonl("sources.jsonl")
        self.catalogue = {s["id"]: s for s in self.sources}
        self.real_lines = _read_jsonl("articles.jsonl")
        self.handmade_lines = _read_jsonl("handmade.jsonl")
        self.update_lines = _read_jsonl("updates.jsonl")
        by_url = {}
        for line in self.real_lines + self.handmade_lines + self.update_lines:
            by_url[line["url"]] = Article(line, self.catalogue)  # upsert
        self.articles = list(by_url.values())
        self.by_url = by_url
        # an article's unknown source id registers a (non-headline) source (§8)
        self.known_ids = set(self.catalogue) | {a.source_id for a in self.articles if a.source_id}
        times = [a.t for a in self.articles]
        assert len(times) == len(set(times)), "fixture publishedAt values must be unique"

    def frequent_words(self, n, text_of, min_len):
        """The n most frequent words (alphabetic, min_len characters or
        more) of text_of(article) over the articles, most frequent first."""
        words = collections.Counter(w for a in self.articles for w in tokenize(text_of(a))
                                    if len(w) >= min_len and w.isalpha())
        return [w for w, _ in words.most_common(n)]

    def frequent_sources(self, n):
        """The n source ids most articles carry, most first."""
        ids = collections.Counter(a.source_id for a in self.articles if a.source_id)
        return [s for s, _ in ids.most_common(n)]

    @staticmethod
    def assert_stem_safe(queries, articles):
        words = [w for q in queries for w in q.plain if w.isascii() and w.isalpha()]
        if not words:
            return
        vocab = set()
        for a in articles:
            for toks in a.tok.values():
                vocab.update(toks)
        for w in words:
            others = sorted(t for t in vocab if t != w and t.startswith(w[:4]))
            assert not others, "query word %r is not stem-safe here (%s)" % (w, others[:5])

    def article(self, url):
        return self.by_url[url]

    # -- /v2/everything --
    def everything(self, q=None, qintitle=None, searchin=None, sources=None, domains=None,
                   exclude=None, frm=None, to=None, language=None):
        qs = [Query(x) for x in _as_list(q)]
        qts = [Query(x) for x in _as_list(qintitle)]
        fields = [f.strip().lower() for f in (searchin or "title,description,content").split(",")]
        srcs = _items(sources)
        doms = _items(domains)
        excl = _items(exclude)
        lo = parse_time(frm) if frm else None
        hi = parse_time(to, end_of_day=True) if to else None
        if language:
            language = language.lower()
            language = "sv" if language == "se" else language
        cands = []
        for a in self.articles:
            if srcs is not None and a.source_id not in srcs:
                continue
            if doms is not None and not any(domain_matches(a.host, d) for d in doms):
                continue
            if excl is not None and any(domain_matches(a.host, d) for d in excl):
                continue
            if lo is not None and a.t < lo or hi is not None and a.t > hi:
                continue
            if language and a.language != language:
                continue
            cands.append(a)
        self.assert_stem_safe(qs + qts, cands)
        out = []
        for a in cands:
            ft = [a.tok[f] for f in fields]
            if not all(x.match(ft) for x in qs):
                continue
            if not all(x.match([a.tok["title"]]) for x in qts):
                continue
            out.append(a)
        out.sort(key=lambda a: -a.t)
        return out

    # -- /v2/top-headlines --
    def window_end(self, now=None):
        now = self.now if now is None else now
        newest = max(a.t for a in self.articles if a.headline)
        return min(now, newest)

    def top_headlines(self, q=None, qintitle=None, sources=None, country=None, category=None,
                      language=None, newest_first=False, now=None):
        end = self.window_end(now)
        qs = [Query(x) for x in _as_list(q)]
        qts = [Query(x) for x in _as_list(qintitle)]
        srcs = _items(sources)
        cands = []
        for a in self.articles:
            if not a.headline or not (end - self.window <= a.t <= end):
                continue
            if srcs is not None and a.source_id not in srcs:
                continue
            if country and a.country != country.lower():
                continue
            if category and a.category != category.lower():
                continue
            if language and a.language != language.lower():
                continue
            cands.append(a)
        self.assert_stem_safe(qs + qts, cands)
        out = []
        for a in cands:
            ft = [a.tok["title"], a.tok["description"], a.tok["content"]]
            if not all(x.match(ft) for x in qs):
                continue
            if not all(x.match([a.tok["title"]]) for x in qts):
                continue
            out.append(a)
        out.sort(key=lambda a: -a.t if newest_first else a.t)
        return out

    # -- /v2/top-headlines/sources --
    def headline_sources(self, category=None, language=None, country=None):
        out = []
        for s in self.sources:
            if s.get("headlines", True) is False:
                continue
            if category and s["category"].lower() != category.lower():
                continue
            # se is NewsAPI's code for Swedish besides sv (API.md §2): either
            # finds the catalogue's Swedish sources, whichever code they carry.
            if language and swedish(s["language"]) != swedish(language):
                continue
            if country and s["country"].lower() != country.lower():
                continue
            out.append({k: s[k] for k in ("id", "name", "description", "url", "category",
                                          "language", "country")})
        out.sort(key=lambda s: s["id"].encode("utf-8"))
        return out

    def popularity(self, source_id):
        s = self.catalogue.get(source_id)
        return None if s is None else s.get("popularity")


def _as_list(v):
    if v is None:
        return []
    return [v] if isinstance(v, str) else list(v)


def _items(v):
    if v is None:
        return None
    if not isinstance(v, str):
        v = ",".join(v)
    return {x.strip() for x in v.split(",") if x.strip()}
