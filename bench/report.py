#!/usr/bin/env python3
"""Turn the raw lines of one bench run (bench/common.h) into the Markdown report.

  report.py RAW.tsv [--gen-stats FILE] [--out FILE.md]

Prints the report and writes it to --out. Exit 1 when the run cannot be
trusted: a "cold" run (count cache off) that hit the count cache, or totals
that differ between newsd's own runs.

Conventions (stated in the report's header too):
- "× faster" = the FTS5 baseline's time ÷ newsd's time for the same queries
  in the same run: above 1 newsd is faster (12× = twelve times faster).
  Rates (articles/s, queries/s) the same way round: newsd's ÷ the
  baseline's. Sizes and memory: newsd's ÷ the baseline's ("× the FTS5
  index"), below 1 newsd is smaller.
- Percentiles are nearest-rank over every timed run in the group.
- Cold = NEWSD_ENGINE_COUNT_CACHE=0 (every count computed); pass 0 is each
  query's first run in its process, the later passes are repeats. The
  headline and the targets use the cold repeats, against the baseline's
  repeats; the first runs and the warm runs (count cache on, repeats) are
  shown beside them.
"""
import argparse
import collections
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import time

# Targets of issue 19 ("Engine v2"), by the N and profile they are set for.
AT_1M = "1 M newsapi"
AT_10M = "10 M newsapi"
AT_ANY = "any N"
SPEEDUP_IN_PROCESS = 10.0  # in-process p95 at least this many times faster
HTTP_FLOOR_MS = 0.5  # over HTTP: p95 <= max(baseline p95 / 10, 0.5 ms)
HTTP_10M_MS = 10.0
NEWEST_WORD_MS = 1.0
SORT_10M_MS = 10.0
QPS_16 = 1000.0
BUILD_RATE = 50000.0
RESTART_S = 2.0
RSS_GIB = 4.0
FRESH_S = 1.0
# Issue 17: saved searches against each committed article, one core.
PERCOLATE_SEARCHES = 10000
PERCOLATE_RATE = 2000.0
# Issue 27: an export of a broad query over loopback.
EXPORT_RATE = 100000.0

ONE_WORD_SHAPES = ("word-common", "word-rare", "word-ru")
# Issue 31: the peers newsd's latency targets are set against (the best of
# them per shape), as their result lines are named.
PEERS = ("fts5", "fts5-meta", "groonga")
PEER_LABELS = {"fts5": "FTS5", "fts5-meta": "FTS5 + filter terms", "groonga": "Groonga (HTTP)"}
# The index proper's parts, as `newsd index sizes` names them.
PART_LABELS = (
    ("docids", "docid gaps"),
    ("frequencies", "field masks and term frequencies"),
    ("positions", "positions"),
    ("skip-tables", "skip tables (block last docid, offsets, block maxima)"),
    ("dictionary", "term dictionary (entries and their block index)"),
    ("term-strings", "term strings"),
    ("columns", "per-document columns (id, row size, source)"),
    ("url-table", "URL-hash table (upserts)"),
    ("tiers", "tiers (each frequent term's best postings for relevancy, format 12)"),
    ("header+align", "headers and alignment"),
    ("of-it-pairs", "of all the above, the pairs' (the next-word index: entries, strings, lists)"),
)


def pct(values, p):
    if not values:
        return None
    v = sorted(values)
    k = max(0, min(len(v) - 1, math.ceil(p / 100.0 * len(v)) - 1))
    return v[k]


def ms(us):
    if us is None:
        return "—"
    x = us / 1000.0
    if x >= 100:
        return "%.0f" % x
    if x >= 10:
        return "%.1f" % x
    if x >= 1:
        return "%.2f" % x
    return "%.3f" % x


def times(x):
    if x is None:
        return "—"
    return "%.2f×" % x if x < 10 else "%.0f×" % x


def faster(newsd_us, base_us):
    """The baseline's time ÷ newsd's, as " (12×)"."""
    if newsd_us is None or base_us is None or newsd_us == 0:
        return ""
    return " (%s)" % times(base_us / newsd_us)


def human_bytes(n):
    if n is None:
        return "—"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return "%.1f %s" % (n, unit) if unit != "B" else "%d B" % n
        n /= 1024.0
    return str(n)


def verdict(ok):
    if ok is None:
        return "not measured"
    return "met" if ok else "**missed**"


def sh(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def machine():
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal"):
                    mem = "%.0f GiB" % (int(line.split()[1]) / 1048576.0)
    except OSError:
        pass
    cc = sh(["cc", "--version"]).split("\n")[0]
    commit = sh(["git", "rev-parse", "--short", "HEAD"])
    if commit and sh(["git", "status", "--porcelain", "--untracked-files=no"]):
        commit += " + uncommitted changes"
    return {
        "cpu": cpu or platform.processor() or "?",
        "cores": str(os.cpu_count()),
        "memory": mem or "?",
        "kernel": platform.system() + " " + platform.release(),
        "compiler": cc or "?",
        "commit": commit or "?",
    }


class Run:
    """Everything one raw.tsv holds."""

    def __init__(self, path):
        self.run, self.load = {}, {}
        self.lat = []  # (engine, id, shape, sort, filter, page, us, total, pass)
        self.tput = collections.defaultdict(dict)  # engine -> clients -> (qps, errors)
        self.mem = collections.defaultdict(dict)  # engine -> what -> kB
        self.size = collections.defaultdict(dict)  # engine -> what -> bytes
        self.stat = collections.defaultdict(dict)  # engine -> what -> text
        self.fresh = []  # seconds
        self.agg = collections.defaultdict(list)  # (engine, shape) -> [(us, total, pass)]
        self.errors = []
        self.order = collections.defaultdict(list)  # column -> values in mix order
        with open(path, encoding="utf-8") as f:
            for line in f:
                p = line.rstrip("\n").split("\t")
                kind = p[0] if p else ""
                if kind == "run":
                    self.run[p[1]] = p[2]
                elif kind == "load":
                    self.load[p[1]] = (int(p[2]), float(p[3]), int(p[4]))
                elif kind == "lat":
                    eng, qid, shape, sort, filt, page, us, total = p[1:9]
                    rep = int(p[9]) if len(p) > 9 else 0
                    self.lat.append((eng, qid, shape, sort, filt, page, float(us), int(total), rep))
                    for col, val in (("shape", shape), ("sort", sort), ("filter", filt),
                                     ("page", page)):
                        # the query language's mix has a table of its own
                        if val not in self.order[col] and not eng.startswith("lang-"):
                            self.order[col].append(val)
                elif kind == "tput":
                    eng, clients, n, secs, errs = p[1:6]
                    self.tput[eng][int(clients)] = (int(n) / float(secs), int(errs))
                elif kind == "mem":
                    self.mem[p[1]][p[2]] = int(p[3])
                elif kind == "size":
                    self.size[p[1]][p[2]] = int(p[3])
                elif kind == "stat":
                    self.stat[p[1]][p[2]] = p[3]
                elif kind == "agg":
                    self.agg[(p[1], p[2])].append((float(p[3]), int(p[4]), int(p[5])))
                elif kind == "fresh":
                    self.fresh.append(float(p[3]))
                elif kind == "err":
                    self.errors.append(" ".join(p[1:]))

    def us(self, engine, passes="repeat", **match):
        """Latencies of engine's runs: passes "first" (pass 0), "repeat"
        (the others) or "all"; match columns shape, sort, filter, page."""
        cols = {"shape": 2, "sort": 3, "filter": 4, "page": 5}
        out = []
        for r in self.lat:
            if r[0] != engine:
                continue
            if passes == "first" and r[8] != 0 or passes == "repeat" and r[8] == 0:
                continue
            if any(r[cols[k]] != v for k, v in match.items()):
                continue
            out.append(r[6])
        return out

    def totals_of(self, engine):
        """id -> the set of totals engine answered for it."""
        out = {}
        for r in self.lat:
            if r[0] == engine:
                out.setdefault(r[1], set()).add(r[7])
        return out

    def fstat(self, engine, what):
        v = self.stat.get(engine, {}).get(what)
        try:
            return float(v) if v is not None else None
        except ValueError:
            return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("raw")
    ap.add_argument("--gen-stats")
    ap.add_argument("--out")
    args = ap.parse_args()
    R = Run(args.raw)
    run = R.run
    bad = []  # reasons the run cannot be trusted

    out = []
    w = out.append
    n = int(run.get("N", "0"))
    profile = run.get("profile", "full")
    m = machine()
    # The commit the measured binaries were built from (`newsd --version`,
    # recorded by run.sh), not the tree rendering the report: they differ
    # when a report is rendered again, or from binaries built elsewhere.
    built = re.search(r"\(commit ([0-9a-f]+)(-dirty)?\)", run.get("newsd_version", ""))
    if built:
        m["commit"] = built.group(1)[:7] + (" + uncommitted changes" if built.group(2) else "")
    w("# newsd benchmark: %s articles, profile %s" % (format(n, ","), profile))
    w("")
    w("Run %s UTC, commit %s; seed %s; %s timed passes of the query mix per program "
      "(pass 0 = each query's first run, then %d repeats); throughput %s s per client "
      "count%s. Wall time of the whole run: %.0f s." % (
          time.strftime("%Y-%m-%d %H:%M", time.gmtime()), m["commit"], run.get("seed", "?"),
          run.get("reps", "?"), int(run.get("reps", "1")) - 1, run.get("seconds", "?"),
          " (smoke settings: figures only)" if run.get("smoke") == "1" else "",
          float(run.get("wall", "0"))))
    w("")
    w("Machine: %s, %s cores, %s memory, %s, %s, SQLite %s." % (
        m["cpu"], m["cores"], m["memory"], m["kernel"], m["compiler"], run.get("sqlite", "?")))
    w("")
    w("**Reading the figures.** *Cold* = newsd with its count cache off "
      "(`NEWSD_ENGINE_COUNT_CACHE=0`, every count computed): the headline. *Warm* = the "
      "count cache on, as configured by default, after one pass over the mix. *First run* "
      "= each query's first run in its process (pass 0); *repeats* = the later passes. "
      "Headline tables and targets use the cold repeats against the baseline's repeats. "
      "**× faster** = the FTS5 baseline's time ÷ newsd's for the same queries in this run "
      "(above 1: newsd is faster); for rates newsd's ÷ the baseline's; sizes and memory are "
      "newsd's ÷ the baseline's (below 1: newsd is smaller). HTTP figures are set against "
      "the baseline's in-process ones (it has no HTTP layer). Percentiles are nearest-rank; "
      "times in ms.")
    w("")

    shapes = R.order["shape"]

    def p95(eng, passes="repeat", **mt):
        return pct(R.us(eng, passes, **mt), 95)

    # ---- the peers (issue 31): plain FTS5, FTS5 with the filters as terms
    # and Groonga. A peer's line counts only where its total is plain
    # FTS5's (the same exact-token matching): fts5-meta must agree on
    # every line (else the run is not trusted); Groonga's tokenizer
    # differs on a few words (below), its other lines are kept.
    fts5_tot = R.totals_of("fts5")
    peer_skip = {}  # peer -> {id: (its total, fts5's)}
    for peer in PEERS[1:]:
        tot = R.totals_of(peer)
        peer_skip[peer] = {q: (min(t), min(fts5_tot[q])) for q, t in tot.items()
                           if q in fts5_tot and (len(t) > 1 or t != fts5_tot[q])}
    if peer_skip.get("fts5-meta"):
        bad.append("FTS5 with filter terms disagrees with plain FTS5 on totals: %s" % ", ".join(
            sorted(peer_skip["fts5-meta"])[:12]))

    def peer_us(peer, passes="repeat", **mt):
        skip = peer_skip.get(peer, {})
        return [r[6] for r in R.lat if r[0] == peer and r[1] not in skip and
                (r[8] == 0) == (passes == "first") and
                all(r[{"shape": 2, "sort": 3, "filter": 4, "page": 5}[k]] == v
                    for k, v in mt.items())]

    def best_peer(**mt):
        """(peer, its p95) of the peer with the lowest p95, or (None, None)."""
        got = [(pct(peer_us(p, **mt), 95), p) for p in PEERS if peer_us(p, **mt)]
        return (min(got)[1], min(got)[0]) if got else (None, None)

    # ---- targets
    w("## Targets (issue 19)")
    w("")
    here = "%s %s" % ("1 M" if n == 1000000 else "10 M" if n == 10000000 else format(n, ","),
                      profile)
    w("This run: %s. A verdict on a target set for another N or profile is only indicative." %
      here)
    w("")
    w("Issue 31: the ratios are to the **best peer** of the shape, the fastest p95 of plain "
      "FTS5, FTS5 with filter terms and Groonga in this run (section \"The peers\").")
    w("")
    w("| shape | in-process p95 | best peer p95 | × faster (≥ %.0f×, %s) | HTTP p95 "
      "| ≤ max(best peer p95 ÷ 10, %.1f ms) (%s) | ≤ %.0f ms (%s) | in-process first-run p95 |" % (
          SPEEDUP_IN_PROCESS, AT_1M, HTTP_FLOOR_MS, AT_1M, HTTP_10M_MS, AT_10M))
    w("|---|---:|---:|---|---:|---|---|---:|")
    missed = []
    for s in shapes:
        (bname, b), a, h = best_peer(shape=s), p95("newsd-cold", shape=s), p95("http-cold", shape=s)
        sp = b / a if a and b else None
        ok1 = sp >= SPEEDUP_IN_PROCESS if sp is not None else None
        lim = max(b / 10.0, HTTP_FLOOR_MS * 1000) if b is not None else None
        ok2 = h <= lim if h is not None and lim is not None else None
        ok3 = h <= HTTP_10M_MS * 1000 if h is not None else None
        for ok, what in ((ok1, "in-process ≥ 10×"), (ok2, "HTTP vs the best peer"),
                         (ok3, "HTTP ≤ 10 ms")):
            if ok is False:
                missed.append("%s (%s)" % (s, what))
        w("| %s | %s | %s (%s) | %s: %s | %s | %s: %s | %s | %s |" % (
            s, ms(a), ms(b), bname or "—", times(sp), verdict(ok1), ms(h), ms(lim), verdict(ok2),
            verdict(ok3), ms(p95("newsd-cold", "first", shape=s))))
    w("")

    rows = []  # (target, for, measured, ok)

    def target(text, at, measured, ok):
        rows.append((text, at, measured, ok))
        if ok is False:
            missed.append(text)

    newest = []
    for s in ONE_WORD_SHAPES:
        newest += R.us("http-cold", shape=s, sort="publishedAt", page="1", filter="none")
    x = pct(newest, 95)
    target("newest-first page 1 of one word, no filter, HTTP p95 ≤ %.0f ms" % NEWEST_WORD_MS,
           AT_10M, ms(x) + " ms" if x is not None else "—",
           x <= NEWEST_WORD_MS * 1000 if x is not None else None)
    for sort in ("relevancy", "popularity"):
        x = p95("http-cold", sort=sort)
        target("sortBy=%s, HTTP p95 ≤ %.0f ms" % (sort, SORT_10M_MS), AT_10M,
               ms(x) + " ms" if x is not None else "—",
               x <= SORT_10M_MS * 1000 if x is not None else None)
    q16 = R.tput.get("http-cold", {}).get(16, (None, 0))[0]
    target("the mix over HTTP, 16 clients, cold: ≥ %.0f queries/s" % QPS_16, AT_10M,
           "%.0f/s" % q16 if q16 is not None else "— (16 clients not run)",
           q16 >= QPS_16 if q16 is not None else None)
    eng_bytes = R.size.get("newsd", {}).get("engine-files")
    fts_index = R.size.get("fts5", {}).get("fts-index")
    # "Rows not counted": the engine's files also hold its document store
    # (each article's JSON, what serves a page: a copy of the rows, as
    # FTS5's fts_content is), so the target compares the index proper
    # (`newsd index sizes`) with FTS5's index; without that breakdown (an
    # older newsd) the whole files are compared, and the row says so.
    eng_index = R.size.get("newsd", {}).get("part-index")
    what = "index proper (files without the document store)"
    if eng_index is None:
        eng_index, what = eng_bytes, "whole index files (no breakdown: document store counted)"
    target("index files ≤ the FTS5 index of the same corpus (rows not counted)", AT_ANY,
           "%s: %s vs %s (%s)" % (what, human_bytes(eng_index), human_bytes(fts_index),
                                  times(eng_index / fts_index) if eng_index and fts_index else "—"),
           eng_index <= fts_index if eng_index is not None and fts_index else None)
    build = R.fstat("serve-first", "healthy_seconds")
    rate = n / build if build else None
    target("first index build ≥ %s articles/s" % format(int(BUILD_RATE), ","), AT_ANY,
           "%s articles/s (%.1f s)" % (format(int(rate), ","), build) if rate else "—",
           rate >= BUILD_RATE if rate else None)
    restart = R.fstat("serve-restart", "healthy_seconds")
    target("restart (serve on a built store until /healthz 200) ≤ %.0f s" % RESTART_S, AT_ANY,
           "%.2f s" % restart if restart is not None else "—",
           restart <= RESTART_S if restart is not None else None)
    rss = [R.mem.get(e, {}).get("after-throughput") for e in ("http-cold", "http-warm")]
    rss = [x for x in rss if x is not None]
    x = max(rss) if rss else None
    anon = [R.mem.get(e, {}).get("after-throughput-anon") for e in ("http-cold", "http-warm")]
    anon = [a for a in anon if a is not None]
    target("resident memory of `newsd serve` after the whole mix ≤ %.0f GiB" % RSS_GIB, AT_10M,
           (human_bytes(x * 1024) + (" VmRSS, of which %s anonymous (RssAnon; the rest is "
                                     "mapped index pages)" % human_bytes(max(anon) * 1024)
                                     if anon else "")) if x is not None else "—",
           x <= RSS_GIB * 1048576 if x is not None else None)
    fresh_max = max(R.fresh) if R.fresh else None
    fr = R.fstat("fresh", "target_rate")
    fmissed = int(R.fstat("fresh", "missed") or 0)
    if fmissed:
        fmeas, fok = "%d of %d markers not found within %.0f s" % (
            fmissed, fmissed + len(R.fresh), R.fstat("fresh", "timeout") or 0), False
    elif R.fresh:
        fmeas, fok = "max %.2f s of %d markers" % (fresh_max, len(R.fresh)), fresh_max <= FRESH_S
    else:
        fmeas, fok = "—", None
    target("a new article searchable ≤ %.0f s while %s articles/s are imported (every marker)" %
           (FRESH_S, format(int(fr), ",") if fr else "5,000"), AT_ANY, fmeas, fok)
    prate = R.fstat("percolate", "articles_per_s")
    pfiled = R.fstat("percolate", "searches")
    pmeas = "%s articles/s" % format(int(prate), ",") if prate is not None else "—"
    pok = prate >= PERCOLATE_RATE if prate is not None else None
    if pfiled is not None and int(pfiled) != PERCOLATE_SEARCHES:
        # (the smoke run files fewer: its rate is not the target's)
        pmeas += " with %s searches filed" % format(int(pfiled), ",")
        pok = None
    target("%s saved searches against ≥ %s articles/s on one core (issue 17)" % (
        format(PERCOLATE_SEARCHES, ","), format(int(PERCOLATE_RATE), ",")), AT_ANY, pmeas, pok)
    erate = R.fstat("export", "articles_per_s")
    target("export of a broad query ≥ %s articles/s over loopback (issue 27)" %
           format(int(EXPORT_RATE), ","), AT_10M,
           "%s articles/s" % format(int(erate), ",") if erate is not None else "—",
           erate >= EXPORT_RATE if erate is not None else None)
    w("| target | set for | measured | verdict |")
    w("|---|---|---|---|")
    for t, at, meas, ok in rows:
        w("| %s | %s | %s | %s |" % (t, at, meas, verdict(ok)))
    w("")
    w("Missed here: %s." % (", ".join(missed) if missed else "none"))
    w("")

    # ---- the peers
    w("## The peers (issue 31)")
    w("")
    w("Three ways a user could serve the same requests, each loaded with the same articles and "
      "sent the same mix in this run: **FTS5** (plain, filters as B-tree lookups), "
      "**FTS5 + filter terms** (`fts5_baseline --meta`: language, source and domain as terms "
      "of a fourth FTS column, MATCHed with the text), **Groonga** (`groonga -s`, HTTP, "
      "`select`, unicode61-like words (TokenDelimit + NormalizerNFKC130) and a meta vector "
      "index; "
      "bench/groonga_baseline.c). The FTS5 figures are in process; Groonga's are whole HTTP "
      "requests (JSON included), as newsd's HTTP column. Repeats, p50 / p95 in ms; the best "
      "peer is the lowest p95; **× faster** = the best peer's p95 ÷ newsd's.")
    w("")
    gskip = R.stat.get("groonga", {}).get("skipped")
    if gskip:
        w("Groonga: **not run** (%s): the best peer is the better FTS5." % gskip)
        w("")
    w("| shape | FTS5 | FTS5 + filter terms | Groonga (HTTP) | best peer p95 | newsd in-process "
      "p95 (× faster) | newsd HTTP p95 (× faster) |")
    w("|---|---:|---:|---:|---|---:|---:|")

    def pp95(xs):
        return "%s / %s" % (ms(pct(xs, 50)), ms(pct(xs, 95))) if xs else "—"

    for s in shapes + ["all"]:
        mt = {} if s == "all" else {"shape": s}
        bname, b = best_peer(**mt)
        a, h = p95("newsd-cold", **mt), p95("http-cold", **mt)
        w("| %s | %s | %s | %s | %s %s | %s%s | %s%s |" % (
            "**all**" if s == "all" else s, *[pp95(peer_us(p, **mt)) for p in PEERS],
            ms(b), bname or "", ms(a), faster(a, b), ms(h), faster(h, b)))
    w("")
    w("| filter | FTS5 | FTS5 + filter terms | Groonga (HTTP) | best peer p95 | newsd in-process "
      "p95 (× faster) |")
    w("|---|---:|---:|---:|---|---:|")
    for f in R.order["filter"]:
        bname, b = best_peer(filter=f)
        a = p95("newsd-cold", filter=f)
        w("| %s | %s | %s | %s | %s %s | %s%s |" % (
            f, *[pp95(peer_us(p, filter=f)) for p in PEERS], ms(b), bname or "", ms(a),
            faster(a, b)))
    w("")
    meta_n = len(R.totals_of("fts5-meta"))
    w("- FTS5 + filter terms: %d lines, totals equal to plain FTS5's on %d." % (
        meta_n, meta_n - len(peer_skip.get("fts5-meta", {}))))
    gs = peer_skip.get("groonga", {})
    if R.totals_of("groonga"):
        w("- Groonga: totals equal to plain FTS5's on %d of %d lines; the %d others are left "
          "out of its figures%s. Why they differ: Groonga's tokens are unicode61's words "
          "(TokenDelimit on runs of letters and digits, NormalizerNFKC130), but its "
          "normalizers do not fold diacritics as `remove_diacritics 2` does "
          "(\"coronavírus\" is `coronavirus` to FTS5 only), which moves NOT lines and "
          "some words by a few articles." % (
              len(R.totals_of("groonga")) - len(gs), len(R.totals_of("groonga")), len(gs),
              (": " + ", ".join("%s (%d vs %d)" % (q, g, f) for q, (g, f) in sorted(gs.items())))
              if gs else ""))
    w("")
    peers_tput = [e for e in PEERS if R.tput.get(e)]
    if peers_tput:
        w("| clients | %s | newsd HTTP cold |" % " | ".join(PEER_LABELS[e] for e in peers_tput))
        w("|---:|%s---:|" % ("---:|" * len(peers_tput)))
        for c in sorted(set().union(*(set(R.tput[e]) for e in peers_tput))):
            w("| %d | %s | %s |" % (c, " | ".join(
                "%.1f" % R.tput[e][c][0] if c in R.tput[e] else "—" for e in peers_tput),
                "%.1f" % R.tput["http-cold"][c][0] if c in R.tput.get("http-cold", {}) else "—"))
        w("")
    w("| peer | load + index | articles/s | on disk |")
    w("|---|---:|---:|---:|")
    for e in PEERS:
        ld = R.load.get(e)
        if ld:
            disk = ld[2] or R.size.get(e, {}).get("files")
            w("| %s | %.1f s | %.0f | %s |" % (PEER_LABELS[e], ld[1], ld[0] / ld[1] if ld[1] else 0,
                                             human_bytes(disk)))
    w("")

    # ---- build, start, size
    w("## Load, build and start")
    w("")
    w("| | articles | seconds | articles/s | × faster |")
    w("|---|---:|---:|---:|---:|")
    nd, fb, gn = R.load.get("newsd"), R.load.get("fts5"), R.load.get("gen")
    frate = fb[0] / fb[1] if fb and fb[1] else None
    if nd:
        r = nd[0] / nd[1] if nd[1] else 0
        w("| `newsd import` (rows only) | %s | %.1f | %.0f | %s |" % (
            format(nd[0], ","), nd[1], r, times(r / frate) if frate else "—"))
    if build:
        w("| newsd first index build (`newsd serve` on the fresh store until /healthz 200) "
          "| %s | %.1f | %.0f | |" % (format(n, ","), build, n / build))
    if nd and build:
        r = n / (nd[1] + build)
        w("| newsd import + first build | %s | %.1f | %.0f | %s |" % (
            format(n, ","), nd[1] + build, r, times(r / frate) if frate else "—"))
    if fb:
        w("| FTS5 baseline build (rows and FTS index) | %s | %.1f | %.0f | |" % (
            format(fb[0], ","), fb[1], frate or 0))
    if gn:
        w("| bench/gen alone (feeds both loads through a pipe) | %s | %.1f | %.0f | |" % (
            format(gn[0], ","), gn[1], gn[0] / gn[1] if gn[1] else 0))
    w("")
    w("| start | listening | healthy (/healthz 200) |")
    w("|---|---:|---:|")
    for name, label in (("serve-first", "first start on the fresh store (builds the index)"),
                        ("serve-restart", "restart on the built store"),
                        ("serve-fresh", "start for the freshness probe")):
        lst, hl = R.fstat(name, "listening_seconds"), R.fstat(name, "healthy_seconds")
        if lst is not None or hl is not None:
            w("| %s | %s | %s |" % (label, "%.3f s" % lst if lst is not None else "—",
                                    "%.3f s" % hl if hl is not None else "—"))
    settled = R.fstat("serve-first", "settled_seconds")
    if settled is not None:
        # the passes measure the index the merges leave (bench/run.sh)
        segs = R.stat.get("serve-first", {}).get("settled_segments", "?")
        w("| first start: its background merges ended (%s segment%s left; the passes measure "
          "that index) | | %.3f s |" % (segs, "" if segs == "1" else "s", settled))
    for name in ("newsd-cold", "newsd-warm"):
        o = R.fstat(name, "open_seconds")
        if o is not None:
            w("| bench_index %s: index_open (%s) | | %.3f s |" % (
                name, R.stat[name].get("index_kind", "?"), o))
    w("")
    w("| on disk | bytes | bytes/article | newsd ÷ FTS5 |")
    w("|---|---:|---:|---:|")

    def size_row(label, b, other=None):
        if b is None:
            return
        w("| %s | %s | %.0f | %s |" % (label, human_bytes(b), b / n if n else 0,
                                       times(b / other) if other else ""))

    files = R.stat.get("newsd", {}).get("engine_file_count", "?")
    nstore = R.size.get("newsd", {}).get("store")
    fwhole = fb[2] if fb else None
    fts_content = R.size.get("fts5", {}).get("fts-content")
    parts = R.size.get("newsd", {})
    size_row("newsd index files (`newsd.db.engine/`, %s files): index and document store" % files,
             eng_bytes)
    if "part-index" in parts:
        # Merges run in the background: a figure taken before they end
        # counts the per-term costs of every unmerged segment.
        nseg = R.stat.get("newsd", {}).get("index_segments", "?")
        size_row("newsd index proper (the files without the document store; segments: %s) "
                 "÷ the FTS5 index" % nseg, parts["part-index"], fts_index)
        for key, label in PART_LABELS:
            size_row("&nbsp;&nbsp;%s" % label, parts.get("part-" + key))
        size_row("newsd document store (each article's NewsAPI JSON, LZ4) ÷ FTS5's fts_content",
                 parts.get("part-store"), fts_content)
    size_row("newsd store without them (SQLite: rows, keys, sources)", nstore)
    if eng_bytes is not None and nstore is not None:
        size_row("newsd, all on disk ÷ the FTS5 baseline file", eng_bytes + nstore, fwhole)
    size_row("FTS5 index (fts_data, fts_idx, fts_docsize, fts_config)", fts_index)
    size_row("FTS5 copy of the text (fts_content)", fts_content)
    size_row("FTS5 rows (articles, sources, B-tree indexes)", R.size.get("fts5", {}).get("rows"))
    size_row("FTS5 baseline file, whole", fwhole)
    w("")

    # ---- latency
    def lat_table(title, col, values, newsd, http, base_passes, passes, total_row):
        w("### %s" % title)
        w("")
        w("| %s | runs | in-process p50 | p95 | p99 | HTTP p50 | p95 | p99 "
          "| FTS5 p50 | p95 | p99 |" % col)
        w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for v in values + (["all"] if total_row else []):
            mt = {} if v == "all" else {col: v}
            bp = [pct(R.us("fts5", base_passes, **mt), q) for q in (50, 95, 99)]
            cells = []
            for eng in (newsd, http):
                xs = R.us(eng, passes, **mt)
                for i, q in enumerate((50, 95, 99)):
                    x = pct(xs, q)
                    cells.append(ms(x) + faster(x, bp[i]))
            cells += [ms(x) for x in bp]
            label = "**all**" if v == "all" else v
            w("| %s | %d | %s |" % (label, len(R.us(newsd, passes, **mt)), " | ".join(cells)))
        w("")

    w("## Latency, cold (count cache off), repeats")
    w("")
    lat_table("By query shape", "shape", shapes, "newsd-cold", "http-cold", "repeat", "repeat",
              True)
    lat_table("By sortBy", "sort", R.order["sort"], "newsd-cold", "http-cold", "repeat",
              "repeat", False)
    lat_table("By filter", "filter", R.order["filter"], "newsd-cold", "http-cold", "repeat",
              "repeat", False)
    lat_table("By page", "page", R.order["page"], "newsd-cold", "http-cold", "repeat", "repeat",
              False)
    w("## Latency, first run of each query (pass 0; count cache off; FTS5's first runs)")
    w("")
    lat_table("By query shape", "shape", shapes, "newsd-cold", "http-cold", "first", "first",
              True)
    w("## Latency, warm (count cache on), repeats")
    w("")
    lat_table("By query shape", "shape", shapes, "newsd-warm", "http-warm", "repeat", "repeat",
              True)
    lat_table("By sortBy", "sort", R.order["sort"], "newsd-warm", "http-warm", "repeat",
              "repeat", False)

    # ---- the query language's own forms (issue 31 item 6)
    if R.totals_of("lang-engine"):
        w("## The query language's own forms over HTTP, cold (bench/querymix-lang.tsv)")
        w("")
        w("Prefixes, proximity and field terms, which NewsAPI's query language lacks: the "
          "engine against newsd's FTS5 backend (prefix `*`, `NEAR`, column filters and the "
          "meta column of FTS5's MATCH), both servers over HTTP with the count cache off. "
          "Target: every shape's p95 <= 10 ms at 10 M.")
        w("")
        if R.stat.get("fts5-counts", {}).get("skipped"):
            w("The FTS5 server: **not run** (%s)." % R.stat["fts5-counts"]["skipped"])
            w("")
        w("| id | shape | sort | filter | engine p50 | engine p95 | engine first | FTS5 p95 "
          "| FTS5 first | FTS5 ÷ engine (p95) | totals |")
        w("|---|---|---|---|---:|---:|---:|---:|---:|---:|---|")
        et, ft = R.totals_of("lang-engine"), R.totals_of("lang-fts5")
        seen = []
        for r in R.lat:
            if r[0] == "lang-engine" and r[1] not in seen:
                seen.append(r[1])
        for qid in seen:
            row = next(r for r in R.lat if r[0] == "lang-engine" and r[1] == qid)
            ex = [r[6] for r in R.lat if r[0] == "lang-engine" and r[1] == qid and r[8] != 0]
            e0 = [r[6] for r in R.lat if r[0] == "lang-engine" and r[1] == qid and r[8] == 0]
            fx = [r[6] for r in R.lat if r[0] == "lang-fts5" and r[1] == qid and r[8] != 0]
            f0 = [r[6] for r in R.lat if r[0] == "lang-fts5" and r[1] == qid and r[8] == 0]
            agree = ("equal" if qid in ft and len(et[qid] | ft[qid]) == 1
                     else "—" if qid not in ft else "**differ**")
            w("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                qid, row[2], row[3], row[4], ms(pct(ex, 50)), ms(pct(ex, 95)),
                ms(e0[0] if e0 else None), ms(pct(fx, 95)), ms(f0[0] if f0 else None),
                times(pct(fx, 95) / pct(ex, 95)) if ex and fx else "—", agree))
        w("")

    # ---- throughput
    w("## Throughput (queries/s, the whole mix in a loop per client)")
    w("")
    w("| clients | HTTP cold | HTTP warm | in-process cold | in-process warm | FTS5 baseline "
      "| errors |")
    w("|---:|---:|---:|---:|---:|---:|---:|")
    engines = ("http-cold", "http-warm", "newsd-cold", "newsd-warm", "fts5")
    for c in sorted(set().union(*(set(R.tput.get(e, {})) for e in engines))):
        b = R.tput.get("fts5", {}).get(c, (None, 0))[0]
        cells, errs = [], 0
        for eng in engines[:-1]:
            x, e = R.tput.get(eng, {}).get(c, (None, 0))
            errs += e
            cells.append("—" if x is None else "%.1f%s" % (
                x, " (%s)" % times(x / b) if b else ""))
        errs += R.tput.get("fts5", {}).get(c, (None, 0))[1]
        cells.append("—" if b is None else "%.1f" % b)
        w("| %d | %s | %d |" % (c, " | ".join(cells), errs))
    w("")

    # ---- memory
    w("## Memory (resident, /proc/PID/status)")
    w("")
    w("| | server cold | server warm | in-process cold | in-process warm | FTS5 baseline |")
    w("|---|---:|---:|---:|---:|---:|")
    for what, label in (("loaded", "after start / open (VmRSS)"),
                        ("after-latency", "after the latency passes"),
                        ("after-throughput", "after the throughput runs"),
                        ("after-throughput-anon",
                         "of which anonymous (RssAnon: not the mapped index files)"),
                        ("peak", "peak (VmHWM)")):
        cells = []
        for eng in ("http-cold", "http-warm", "newsd-cold", "newsd-warm", "fts5"):
            key = "opened" if what == "loaded" and eng in ("newsd-cold", "newsd-warm",
                                                            "fts5") else what
            x = R.mem.get(eng, {}).get(key)
            cells.append(human_bytes(x * 1024) if x is not None else "—")
        w("| %s | %s |" % (label, " | ".join(cells)))
    w("")

    # ---- freshness
    if R.fresh or "fresh" in R.stat:
        w("## Freshness")
        w("")
        st = R.stat.get("fresh", {})
        f = sorted(R.fresh)
        w("A marker article every 0.5 s handed to `newsd import` (running beside the server) "
          "while bench/gen articles are fed to it at %s/s (achieved %s/s, %s articles); the "
          "delay runs from the marker's line entering the import's pipe to the first "
          "/v2/everything answer that finds it (polled every 5 ms)." % (
              st.get("target_rate", "?"), st.get("fed_rate", "?"), st.get("fed", "?")))
        w("")
        w("| markers | found | not found within %s s | p50 | p95 | max |" % st.get("timeout", "?"))
        w("|---:|---:|---:|---:|---:|---:|")
        w("| %s | %d | %s | %s | %s | %s |" % (
            st.get("markers", "?"), len(f), st.get("missed", "?"),
            *["%.3f s" % x if x is not None else "—" for x in (pct(f, 50), pct(f, 95),
                                                               f[-1] if f else None)]))
        w("")

    # ---- saved searches
    if "percolate" in R.stat:
        st = R.stat["percolate"]
        w("## Saved searches (percolator)")
        w("")
        w("`bench_percolate`: %s saved searches (one word, ANDs and ORs of 2-3 words, phrases, "
          "some with a source or a language; words drawn by frequency from the corpus) "
          "against each of the store's first %s articles in log order, one thread. An "
          "article's cost is preparing it (tokens, stems, meta terms) and matching it; "
          "reading its row is not counted. The baseline tests every search on each article "
          "(over the first %s articles, whose answers must be the percolator's)." % (
              format(int(float(st.get("searches", 0))), ","),
              format(int(float(st.get("articles", 0))), ","), st.get("brute_articles", "?")))
        w("")
        w("| searches | without keys | matches per article | preparing alone | percolator "
          "| testing every search | × faster |")
        w("|---:|---:|---:|---:|---:|---:|---:|")
        rate, brute = R.fstat("percolate", "articles_per_s"), R.fstat("percolate", "brute_per_s")
        w("| %s | %s | %s | %s articles/s | %s articles/s | %s articles/s | %s |" % (
            format(int(float(st.get("searches", 0))), ","), st.get("keyless", "?"),
            st.get("matches_per_article", "?"),
            format(int(float(st.get("prep_per_s", 0))), ","),
            format(int(rate or 0), ","), "%.0f" % (brute or 0),
            times(rate / brute) if rate and brute else "—"))
        w("")

    # ---- export
    if "export" in R.stat:
        st = R.stat["export"]
        rate, base = R.fstat("export", "articles_per_s"), R.fstat("export-cursor", "articles_per_s")
        secs = R.fstat("export", "seconds")
        w("## Export")
        w("")
        w("`bench_http --export`: GET /v2/everything/export?%s (NDJSON, whole content) read to "
          "its end on one connection, then the same matches walked with cursor paging "
          "(pageSize=100, one request per page: what a client does without an export), in the "
          "same run. Memory: the server's RssAnon before, at its highest during the transfer "
          "(sampled every 64 MiB) and after." % st.get("params", "?"))
        w("")
        w("| articles | MB | export | cursor paging | × faster | RssAnon before / max / after |")
        w("|---:|---:|---:|---:|---:|---|")
        w("| %s | %.0f | %s articles/s | %s articles/s | %s | %s / %s / %s |" % (
            format(int(float(st.get("articles", 0))), ","),
            float(st.get("bytes", 0)) / 1e6 if secs else 0,
            format(int(rate or 0), ","), format(int(base or 0), ","),
            times(rate / base) if rate and base else "—",
            *[human_bytes(float(st[k]) * 1024) if k in st else "—"
              for k in ("anon_before_kb", "anon_max_kb", "anon_after_kb")]))
        w("")

    # ---- coverage over time and facets (issue 26)
    agg_shapes = []
    for (eng, shape) in R.agg:
        if shape not in agg_shapes:
            agg_shapes.append(shape)
    if agg_shapes:
        w("## Coverage over time and facets (issue 26), cold")
        w("")
        w("bench/bench_counts: daily counts over the two years for a one-word query "
          "(`rainfall`) and a very common word (`people`), hourly counts over a month "
          "(`people`, March 2025), five facets over `people`'s matches. In process: the "
          "endpoint's index calls (counts for `count` and for `total`; facets), the engine "
          "with its count cache off against FTS5's GROUP BY over the same MATCH, in this run. "
          "HTTP: `/v2/everything/counts` on a server with the count cache off, and on one "
          "started with `NEWSD_INDEX=fts5`. p50 / p95 of the repeats, ms; **× faster** = "
          "FTS5's p95 ÷ the engine's.")
        w("")
        cskip = R.stat.get("fts5-counts", {}).get("skipped")
        if cskip:
            w("FTS5's side: **not run** (%s: the FTS5 backend's index is not built into the "
              "store)." % cskip)
            w("")
        w("| shape | engine | FTS5 | × faster | HTTP engine | HTTP FTS5 | × faster (HTTP) | "
          "engine first run |")
        w("|---|---:|---:|---:|---:|---:|---:|---:|")

        def agg_us(eng, shape, first=False):
            return [u for u, _, ps in R.agg.get((eng, shape), []) if (ps == 0) == first]

        def pp(v):
            return "%s / %s" % (ms(pct(v, 50)), ms(pct(v, 95))) if v else "—"

        for shape in agg_shapes:
            e, f = agg_us("counts-engine", shape), agg_us("counts-fts5", shape)
            he, hf = agg_us("counts-http", shape), agg_us("counts-http-fts5", shape)
            w("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
                shape, pp(e), pp(f), times(pct(f, 95) / pct(e, 95)) if e and f and pct(e, 95) else "—",
                pp(he), pp(hf), times(pct(hf, 95) / pct(he, 95)) if he and hf and pct(he, 95) else "—",
                ms(pct(agg_us("counts-engine", shape, True), 50))
                if agg_us("counts-engine", shape, True) else "—"))
            # a shape runs several queries (bench_counts): each engine's set
            # of totals must be the others'
            tot = {eng: frozenset(t for _, t, _ in R.agg[(eng, shape)])
                   for eng in ("counts-engine", "counts-fts5", "counts-http", "counts-http-fts5")
                   if (eng, shape) in R.agg}
            if len(set(tot.values())) > 1:
                bad.append("counts shape %s: the engines disagree on its totals (%s)" % (
                    shape, "; ".join("%s %s" % (e, sorted(t)) for e, t in sorted(tot.items()))))
        fb = R.fstat("counts-engine", "facet_columns_first_build_seconds")
        if fb is not None:
            w("")
            w("The engine's facet columns (five facets, every segment) were built by the first "
              "facets request in %.3f s; the process then held %s kB resident." % (
                  fb, R.mem.get("counts-engine", {}).get("after-facet-columns", "?")))
        w("")

    # ---- checks
    w("## Checks")
    w("")
    for eng in ("newsd-cold", "http-cold"):
        st = R.stat.get(eng, {})
        hits = [int(v) for k, v in st.items() if k.startswith("count_cache_hits")]
        if hits:
            w("- %s: count cache hits %d (a cold run must have none)." % (eng, max(hits)))
            if max(hits) > 0:
                bad.append("%s hit the count cache: it was not cold" % eng)
        else:
            w("- %s: no count cache counters (not the engine, or not exported)." % eng)
    totals = collections.defaultdict(dict)  # engine -> id -> set of totals
    for r in R.lat:
        totals[r[0]].setdefault(r[1], set()).add(r[7])
    newsd_engines = [e for e in ("newsd-cold", "newsd-warm", "http-cold", "http-warm")
                     if e in totals]
    ids = sorted(set().union(*(set(totals[e]) for e in newsd_engines))) if newsd_engines else []
    differ = [q for q in ids
              if len(set().union(*(totals[e].get(q, set()) for e in newsd_engines))) > 1]
    w("- Queries in the mix: %d; newsd's totalResults differing between its runs (cold, warm, "
      "in-process, HTTP, every pass): %d%s." % (
          len(ids), len(differ), (" (" + ", ".join(differ[:12]) + ")") if differ else ""))
    if differ:
        bad.append("newsd's totals differ between runs: %s" % ", ".join(differ[:12]))
    ref = {q: min(v) for q, v in totals.get("newsd-cold", {}).items()}
    zero = sorted(q for q, t in ref.items() if t == 0)
    w("- With no match in newsd: %d%s." % (
        len(zero), (" (" + ", ".join(zero[:12]) + ")") if zero else ""))
    ratios = [ref[q] / min(totals["fts5"][q]) for q in ref
              if q in totals.get("fts5", {}) and min(totals["fts5"][q]) > 0]
    if ratios:
        w("- totalResults of newsd ÷ the baseline's: median %.2f, range %.2f–%.2f (newsd also "
          "matches stems of unquoted words; the baseline matches exact tokens only)." % (
              statistics.median(ratios), min(ratios), max(ratios)))
    if args.gen_stats and os.path.exists(args.gen_stats):
        with open(args.gen_stats, encoding="utf-8") as f:
            stats = [l.rstrip() for l in f if l.strip()]
        if stats:
            w("- Corpus: " + stats[0].replace("gen: ", "") + "; languages: " +
              ", ".join(re.sub(r"\s+", " ", l.replace("gen:", "").strip()) for l in stats[1:]) +
              ".")
    for b in bad:
        w("- **Not trustworthy: %s.**" % b)
    w("")
    if R.errors:
        w("## Errors")
        w("")
        for e in R.errors[:50]:
            w("- " + e)
        if len(R.errors) > 50:
            w("- … %d more" % (len(R.errors) - 50))
        w("")

    text = "\n".join(out)
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
