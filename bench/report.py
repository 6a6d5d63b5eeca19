#!/usr/bin/env python3
"""Turn the raw lines of one bench run (bench/common.h) into the Markdown report.

  report.py RAW.tsv [--gen-stats FILE] [--out FILE.md]

Prints the report and writes it to --out. Every newsd figure is followed by
its ratio to the FTS5 baseline of the same run: for times, sizes and memory
newsd / baseline (below 1 = newsd is better); for rates (articles/s,
queries/s) newsd / baseline too (above 1 = newsd is better). Percentiles are
nearest-rank over every timed run of the queries in the group.
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

ENGINES = ("newsd", "http", "fts5")


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
    return "%.2f" % x


def ratio(a, b):
    if a is None or b is None or b == 0:
        return ""
    r = a / b
    return " (%.2f×)" % r if r < 10 else " (%.0f×)" % r


def human_bytes(n):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return "%.1f %s" % (n, unit) if unit != "B" else "%d B" % n
        n /= 1024.0
    return str(n)


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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("raw")
    ap.add_argument("--gen-stats")
    ap.add_argument("--out")
    args = ap.parse_args()

    run = {}
    load = {}
    lat = collections.defaultdict(list)  # (engine, key, value) -> [us]
    totals = collections.defaultdict(dict)  # engine -> id -> total
    tput = collections.defaultdict(dict)  # engine -> clients -> (qps, errors)
    mem = collections.defaultdict(dict)
    errors = []
    shapes, sorts, filters, pages = [], [], [], []
    with open(args.raw, encoding="utf-8") as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if not p or not p[0]:
                continue
            kind = p[0]
            if kind == "run":
                run[p[1]] = p[2]
            elif kind == "load":
                load[p[1]] = (int(p[2]), float(p[3]), int(p[4]))
            elif kind == "lat":
                eng, qid, shape, sort, filt, page, us, total = p[1:9]
                us = float(us)
                for key, val, order in (("shape", shape, shapes), ("sort", sort, sorts),
                                        ("filter", filt, filters), ("page", page, pages)):
                    lat[(eng, key, val)].append(us)
                    if val not in order:
                        order.append(val)
                lat[(eng, "all", "all")].append(us)
                totals[eng][qid] = int(total)
            elif kind == "tput":
                eng, clients, n, secs, errs = p[1:6]
                tput[eng][int(clients)] = (int(n) / float(secs), int(errs))
            elif kind == "mem":
                mem[p[1]][p[2]] = int(p[3])
            elif kind == "err":
                errors.append(" ".join(p[1:]))

    out = []
    w = out.append
    n = int(run.get("N", "0"))
    m = machine()
    w("# newsd benchmark: %s articles" % format(n, ","))
    w("")
    w("Run %s UTC, commit %s; seed %s; %s timed pass(es) of the mix after %s warm-up pass(es); "
      "throughput %s s per client count%s. Wall time of the whole run: %.0f s." % (
          time.strftime("%Y-%m-%d %H:%M", time.gmtime()), m["commit"], run.get("seed", "?"),
          run.get("reps", "?"), run.get("warmup", "?"), run.get("seconds", "?"),
          " (smoke settings: figures only)" if run.get("smoke") == "1" else "",
          float(run.get("wall", "0"))))
    w("")
    w("Machine: %s, %s cores, %s memory, %s, %s, SQLite %s." % (
        m["cpu"], m["cores"], m["memory"], m["kernel"], m["compiler"], run.get("sqlite", "?")))
    w("")
    w("Ratios in parentheses are newsd ÷ the plain FTS5 baseline of the same run "
      "(bench/README.md): for times, sizes and memory below 1 means newsd is better; "
      "for rates above 1 means newsd is better. HTTP figures are divided by the "
      "baseline's in-process figures (the baseline has no HTTP layer).")
    w("")

    # ---- load
    w("## Load")
    w("")
    w("| | articles | seconds | articles/s | size on disk | bytes/article |")
    w("|---|---:|---:|---:|---:|---:|")
    nd, fb, gn = load.get("newsd"), load.get("fts5"), load.get("gen")
    for name, L, other in (("`newsd import`", nd, fb), ("FTS5 baseline build", fb, None)):
        if not L:
            continue
        rate = L[0] / L[1] if L[1] else 0
        orate = other[0] / other[1] if other and other[1] else None
        w("| %s | %s | %.1f | %.0f%s | %s%s | %.0f%s |" % (
            name, format(L[0], ","), L[1], rate, ratio(rate, orate),
            human_bytes(L[2]), ratio(L[2], other[2] if other else None),
            L[2] / L[0] if L[0] else 0,
            ratio(L[2] / L[0] if L[0] else None, other[2] / other[0] if other and other[0] else None)))
    if gn:
        w("")
        w("Both loads read the corpus from bench/gen through a pipe; the generator alone "
          "takes %.1f s (%.0f articles/s) on the other core." % (gn[1], gn[0] / gn[1] if gn[1] else 0))
    if "index_first_open" in run or "serve_start" in run:
        w("")
        w("Search index: the first open (bench_index: the engine builds its index from the "
          "store and writes its files) took %s s; `newsd serve` then started (mapping those "
          "files) and listened after %s s." % (run.get("index_first_open", "?"),
                                                run.get("serve_start", "?")))
    w("")

    # ---- latency
    def lat_table(key, values, title):
        w("## Latency by %s (ms)" % title)
        w("")
        w("| %s | runs | in-process p50 | p95 | p99 | HTTP p50 | p95 | p99 "
          "| FTS5 p50 | p95 | p99 |" % title)
        w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for v in values + (["all"] if key == "shape" else []):
            k = "all" if v == "all" else key
            base = lat.get(("fts5", k, v), [])
            bp = [pct(base, q) for q in (50, 95, 99)]
            cells = []
            for eng in ("newsd", "http"):
                xs = lat.get((eng, k, v), [])
                for i, q in enumerate((50, 95, 99)):
                    x = pct(xs, q)
                    cells.append(ms(x) + ratio(x, bp[i]))
            cells += [ms(x) for x in bp]
            runs = len(lat.get(("newsd", k, v), []))
            label = "**all**" if v == "all" else v
            w("| %s | %d | %s |" % (label, runs, " | ".join(cells)))
        w("")

    lat_table("shape", shapes, "query shape")
    lat_table("sort", sorts, "sortBy")
    lat_table("filter", filters, "filter")
    lat_table("page", pages, "page")

    # ---- throughput
    w("## Throughput (queries/s, the whole mix in a loop per client)")
    w("")
    w("| clients | newsd over HTTP | newsd in-process | FTS5 baseline | errors |")
    w("|---:|---:|---:|---:|---:|")
    for c in sorted(set(tput["newsd"]) | set(tput["http"]) | set(tput["fts5"])):
        b = tput["fts5"].get(c, (None, 0))[0]
        cells = []
        errs = 0
        for eng in ("http", "newsd"):
            x, e = tput[eng].get(c, (None, 0))
            errs += e
            cells.append("—" if x is None else "%.1f%s" % (x, ratio(x, b)))
        errs += tput["fts5"].get(c, (None, 0))[1]
        cells.append("—" if b is None else "%.1f" % b)
        w("| %d | %s | %d |" % (c, " | ".join(cells), errs))
    w("")

    # ---- memory
    w("## Memory (resident, from /proc/PID/status)")
    w("")
    s, bmem = mem.get("server", {}), mem.get("fts5", {}).get("peak")
    w("| | newsd | FTS5 baseline |")
    w("|---|---:|---:|")
    if s:
        w("| `newsd serve` after start (VmRSS) | %s | |" % human_bytes(s.get("loaded", 0) * 1024))
        w("| `newsd serve` after the latency runs | %s | |" % human_bytes(s.get("after-latency", 0) * 1024))
        w("| `newsd serve` after 16 clients | %s | |" % human_bytes(s.get("after-throughput", 0) * 1024))
        w("| `newsd serve` peak (VmHWM) vs the baseline's query process peak | %s%s | %s |" % (
            human_bytes(s.get("peak", 0) * 1024),
            ratio(s.get("peak"), bmem), human_bytes((bmem or 0) * 1024)))
    nm = mem.get("newsd", {}).get("peak")
    if nm:
        w("| in-process benchmark peak (VmHWM) | %s%s | %s |" % (
            human_bytes(nm * 1024), ratio(nm, bmem), human_bytes((bmem or 0) * 1024)))
    w("")

    # ---- results agreement
    w("## Results")
    w("")
    common = [q for q in totals["newsd"] if q in totals["fts5"]]
    diff_http = [q for q in totals["newsd"] if q in totals["http"] and totals["http"][q] != totals["newsd"][q]]
    zero = [q for q in totals["newsd"] if totals["newsd"][q] == 0]
    ratios = [totals["newsd"][q] / totals["fts5"][q] for q in common if totals["fts5"][q] > 0]
    w("- Queries in the mix: %d; with no match in newsd: %d%s." % (
        len(totals["newsd"]), len(zero), (" (" + ", ".join(sorted(zero)[:12]) + ")") if zero else ""))
    w("- totalResults over HTTP differing from the in-process call: %d." % len(diff_http))
    if ratios:
        w("- totalResults of newsd ÷ the baseline's: median %.2f, range %.2f–%.2f (newsd also "
          "matches stems of unquoted words; the baseline matches exact tokens only)." % (
              statistics.median(ratios), min(ratios), max(ratios)))
    if args.gen_stats and os.path.exists(args.gen_stats):
        with open(args.gen_stats, encoding="utf-8") as f:
            stats = [l.rstrip() for l in f if l.strip()]
        if stats:
            w("- Corpus: " + stats[0].replace("gen: ", "") + "; languages: " +
              ", ".join(re.sub(r"\s+", " ", l.replace("gen:", "").strip()) for l in stats[1:]) + ".")
    w("")
    if errors:
        w("## Errors")
        w("")
        for e in errors[:50]:
            w("- " + e)
        if len(errors) > 50:
            w("- … %d more" % (len(errors) - 50))
        w("")

    text = "\n".join(out)
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
