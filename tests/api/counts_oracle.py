"""Brute-force reference for /v2/everything/counts and facets (issue 26),
computed from the fixture articles of corpus.py, never from the server."""
import bisect
import datetime
import zoneinfo

FACETS = ("source", "domain", "language", "country", "category", "author")


def zone(tz):
    """A tz parameter as Python sees it: an offset (+05:30, -0800, +03, Z,
    UTC) or an IANA name."""
    if tz in (None, "Z", "UTC"):
        return datetime.timezone.utc
    if tz[0] in "+-":
        sign = 1 if tz[0] == "+" else -1
        digits = tz[1:].replace(":", "")
        h, m = int(digits[:2]), int(digits[2:4] or 0)
        return datetime.timezone(sign * datetime.timedelta(hours=h, minutes=m))
    return zoneinfo.ZoneInfo(tz)


def _local_midnight(d, tz):
    return int(datetime.datetime(d.year, d.month, d.day, tzinfo=tz).timestamp())


def bounds(interval, tz, frm, to):
    """Bucket starts covering [frm, to] plus the end of the last one."""
    z = zone(tz)
    local = datetime.datetime.fromtimestamp(frm, z)
    out = []
    if interval == "hour":
        u = frm - (local.minute * 60 + local.second)
        while True:
            out.append(u)
            if u > to:
                return out
            u += 3600
    d = local.date()
    if interval == "week":
        d -= datetime.timedelta(days=d.weekday())
    elif interval == "month":
        d = d.replace(day=1)
    while True:
        out.append(_local_midnight(d, z))
        if out[-1] > to:
            return out
        if interval == "day":
            d += datetime.timedelta(days=1)
        elif interval == "week":
            d += datetime.timedelta(days=7)
        else:
            d = (d.replace(day=28) + datetime.timedelta(days=4)).replace(day=1)


def counts(articles, b, frm, to):
    """Matches per bucket [b[i], b[i+1]) within [frm, to]."""
    c = [0] * (len(b) - 1)
    for a in articles:
        if frm <= a.t <= to and b[0] <= a.t < b[-1]:
            c[bisect.bisect_right(b, a.t) - 1] += 1
    return c


def facet_value(a, facet):
    v = {"source": a.source_id, "domain": a.host, "language": a.language,
         "country": a.country, "category": a.category,
         "author": a.line.get("author")}[facet]
    if facet in ("language", "country", "category") and v:
        v = v.lower()
    return v or None


def facets(articles, names, size):
    out = {}
    for f in names:
        n = {}
        for a in articles:
            v = facet_value(a, f)
            if v is not None:
                n[v] = n.get(v, 0) + 1
        top = sorted(n.items(), key=lambda kv: (-kv[1], kv[0].encode()))[:size]
        out[f] = [(v, c) for v, c in top]
    return out
