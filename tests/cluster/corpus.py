"""Articles for the cluster tests: the API fixture's real articles plus a
deterministic synthetic corpus (pseudo-words, many articles per second so
ids collide within a second, updates that move articles to another second),
and the requests every node must answer exactly as embedded mode does."""
import datetime
import random

from conftest import DATA, read_jsonl

SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "pe", "da", "zu", "ri", "mo",
             "fa", "gi", "be", "xo", "ly"]
BASE = 1672531200  # 2023-01-01T00:00:00Z


def iso(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


def vocabulary(rng, n=300):
    words = set()
    while len(words) < n:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


class Synthetic:
    def __init__(self, n, seed=7):
        rng = random.Random(seed)
        self.words = vocabulary(rng)
        sources = [s["id"] for s in read_jsonl(DATA + "/sources.jsonl")][:40]
        hot = [BASE + rng.randint(0, 7 * 86400) for _ in range(25)]  # crowded seconds
        self.articles = []
        for i in range(n):
            t = rng.choice(hot) if rng.random() < 0.3 else BASE + rng.randint(0, 7 * 86400)
            self.articles.append(self._article(rng, i, t, sources))
        self.rng = rng
        self.sources = sources

    def _text(self, rng, lo, hi):
        return " ".join(rng.choice(self.words) for _ in range(rng.randint(lo, hi)))

    def _article(self, rng, i, t, sources):
        src = rng.choice(sources + [None])
        host = "%s.news%d.example" % (rng.choice(["www", "world", "sport", "m"]), i % 23)
        return {
            "source": {"id": src, "name": (src or "Independent %d" % (i % 5)).title()},
            "author": None if i % 7 == 0 else "Author %d" % (i % 31),
            "title": self._text(rng, 4, 9).capitalize(),
            "description": self._text(rng, 10, 25),
            "url": "https://%s/story/%d" % (host, i),
            "urlToImage": None if i % 3 == 0 else "https://img.example/%d.jpg" % i,
            "publishedAt": iso(t),
            "content": self._text(rng, 30, 90),
        }

    def updates(self, k):
        """k earlier articles again: new titles, and every third one moved in time."""
        out = []
        for a in self.rng.sample(self.articles, k):
            b = dict(a)
            b["title"] = "Updated " + self._text(self.rng, 3, 6)
            if len(out) % 3 == 0:
                b["publishedAt"] = iso(BASE + self.rng.randint(0, 7 * 86400))
            out.append(b)
        return out


def requests_for(words, sources):
    """The requests compared across nodes (path, params); each first page."""
    w = words
    reqs = []
    for q in [w[0], w[5], "%s OR %s" % (w[1], w[2]), "%s AND NOT %s" % (w[3], w[4]),
              '"%s %s"' % (w[6], w[7]), "police", "the", "election OR football", w[9] + "*"]:
        for sort in ("publishedAt", "relevancy", "popularity"):
            reqs.append(("/v2/everything", {"q": q, "sortBy": sort, "pageSize": 100}))
    reqs += [
        ("/v2/everything", {"q": w[10], "searchIn": "title", "pageSize": 20, "page": 2}),
        ("/v2/everything", {"qInTitle": w[11]}),
        ("/v2/everything", {"sources": ",".join(sources[:3]), "pageSize": 100}),
        ("/v2/everything", {"domains": "news3.example,bbc.co.uk", "pageSize": 100}),
        ("/v2/everything", {"domains": "news4.example", "excludeDomains": "m.news4.example",
                            "pageSize": 100}),
        ("/v2/everything", {"q": w[12], "from": "2023-01-03", "to": "2023-01-05T12:00:00",
                            "sortBy": "publishedAt", "pageSize": 100}),
        ("/v2/everything", {"q": w[13], "language": "en", "pageSize": 100}),
        ("/v2/top-headlines", {"country": "us", "pageSize": 100}),
        ("/v2/top-headlines", {"category": "technology", "pageSize": 100}),
        ("/v2/top-headlines", {"q": w[14], "country": "us"}),
        ("/v2/top-headlines/sources", {}),
        ("/v2/top-headlines/sources", {"language": "en", "country": "us"}),
        ("/v2/sources", {"category": "business"}),
    ]
    return reqs
