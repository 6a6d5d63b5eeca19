#!/usr/bin/env python3
"""The extensions of issues 25-27 over HTTP, newsd's engine against its FTS5
backend, both servers measured interleaved in the same period (so that a
shared, noisy machine slows both alike and the ratios hold).

  bench_extensions.py run --newsd BIN --bench-bin DIR --store DIR
        --fts5-store DIR --key KEY [--rounds K] [--reps R] [--mix FILE]
        [--counts-reps C] [--ext-reps E] [--export PARAMS | --no-export]
        [--export-servers engine[,fts5]] [--no-fts5-mix]  > RAW
  bench_extensions.py report RAW [RAW...] > REPORT.md

`run` starts two `newsd serve`, both with the count cache off
(NEWSD_ENGINE_COUNT_CACHE=0, cold): the engine on --store and the FTS5
backend (NEWSD_INDEX=fts5) on --fts5-store, a copy of the same store (a
store has one server at a time: its lock). Then K rounds, each server's turn first in every other round:
  - bench_counts --url (issue 26's shapes: /v2/everything/counts);
  - bench_http --mix: the bench's query mix, then the same mix with
    dedupe=true (issue 25: the ratio of the two);
  - here, timed around each whole request on one keep-alive connection:
    /v2/stories page 1 (three searches), /v2/stories/{id} (stories of
    that page), similarTo=URL (articles of a search's page 1);
and last, per server, bench_http --export (issue 27: articles/s against
cursor paging, the server's RssAnon). The programs' own lines (lat, agg,
stat, mem, err) pass through, labelled; this script's requests print
  ext SERVER SHAPE MICROSECONDS TOTAL ROUND
`report` turns the lines into Markdown tables: p50/p95 (nearest rank) per
server and shape, and the ratios. Figures only: nothing is asserted, but a
request that does not answer 200 is an err line and `run` exits 1."""
import argparse
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

STORIES = ["q=people", "q=rainfall", "q=%22Premier%20League%22"]
SERVERS = ("engine", "fts5")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start(newsd, store, name, fts5, log_dir):
    port = free_port()
    env = dict(os.environ, NEWSD_ENGINE_COUNT_CACHE="0")
    env.pop("NEWSD_INDEX", None)
    if fts5:
        env["NEWSD_INDEX"] = "fts5"
    out = open(os.path.join(log_dir, name + ".err"), "w")
    t0 = time.time()
    p = subprocess.Popen([newsd, "serve", "--store", store, "--listen", "127.0.0.1:%d" % port,
                          "--no-crawl", "--quiet", "--query-timeout-ms", "0"],
                         env=env, stdout=subprocess.DEVNULL, stderr=out)
    while True:
        if p.poll() is not None:
            sys.exit("bench_extensions: %s ended (exit %s), see %s" % (name, p.returncode,
                                                                     out.name))
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            c.request("GET", "/healthz")
            if c.getresponse().status == 200:
                break
        except OSError:
            pass
        time.sleep(0.05)
    print("stat\t%s\thealthy_seconds\t%.3f" % (name, time.time() - t0), flush=True)
    return p, "http://127.0.0.1:%d" % port


class Client:
    def __init__(self, url, key):
        u = urllib.parse.urlsplit(url)
        self.host, self.port, self.key = u.hostname, u.port, key
        self.conn = None

    def get(self, path):
        """(microseconds, status, parsed body) of one GET, the whole
        request as a client sees it (send, server, receive, not the parse)."""
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=600)
            try:
                t0 = time.perf_counter()
                self.conn.request("GET", path, headers={"X-Api-Key": self.key})
                r = self.conn.getresponse()
                body = r.read()
                us = (time.perf_counter() - t0) * 1e6
                return us, r.status, json.loads(body)
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = None
                if attempt:
                    raise
        raise AssertionError("unreachable")


def requests_of(c):
    """The shapes' requests, chosen once from the engine's answers (so both
    servers get the same paths)."""
    out = [("stories-p1", "/v2/stories?" + q) for q in STORIES]
    _, st, b = c.get("/v2/stories?q=people&pageSize=5")
    if st != 200:
        sys.exit("bench_extensions: /v2/stories answered %s: %s" % (st, b))
    ids = [s["id"] for s in b["stories"]]
    _, st, b = c.get("/v2/stories?q=people&sortBy=size&pageSize=2")
    ids += [s["id"] for s in b.get("stories", [])]
    out += [("story-id", "/v2/stories/" + i) for i in ids]
    sizes = [s["size"] for s in b.get("stories", [])]
    print("stat\tengine\tlargest_story_sizes\t%s" % ",".join(map(str, sizes)), flush=True)
    _, st, b = c.get("/v2/everything?q=people&pageSize=5")
    urls = [a["url"] for a in b["articles"]]
    _, st, b = c.get("/v2/everything?q=rainfall&pageSize=2")
    urls += [a["url"] for a in b["articles"]]
    out += [("similarTo", "/v2/everything?similarTo=" + urllib.parse.quote(u, safe=""))
            for u in urls]
    return out


def run_programs(a, name, url, raw_mix):
    """bench_counts and bench_http on one server; their lines to stdout."""
    failed = 0
    cmds = [[os.path.join(a.bench_bin, "bench_counts"), "--url", url, "--key", a.key,
             "--reps", str(a.counts_reps or a.reps * 5), "--no-inprocess", "--http-name", "counts-" + name]]
    if name == "engine" or a.fts5_mix:
        cmds += [[os.path.join(a.bench_bin, "bench_http"), "--url", url, "--key", a.key,
                  "--mix", mix, "--reps", str(a.reps), "--warmup", "0", "--clients", "1",
                  "--seconds", "0", "--name", "%s-%s" % (name, kind)]
                 for kind, mix in raw_mix]
    for cmd in cmds:
        sys.stdout.flush()
        failed |= subprocess.call(cmd, stdout=sys.stdout) != 0
    return failed


def cmd_run(a):
    log_dir = tempfile.mkdtemp(prefix="bench-ext-")
    # The dedupe mix: every request of the mix with dedupe=true.
    plain = [l.rstrip("\n") for l in open(a.mix) if l.strip()]
    dd = os.path.join(log_dir, "querymix-dedupe.tsv")
    with open(dd, "w") as f:
        for l in plain:
            cols = l.split("\t")
            if len(cols) >= 6 and not l.startswith("#") and cols[0] != "id":
                cols[5] += "&dedupe=true"
            f.write("\t".join(cols) + "\n")
    raw_mix = [("plain", a.mix), ("dedupe", dd)]
    servers = {}
    failed = 0
    try:
        servers["engine"] = start(a.newsd, a.store, "engine", False, log_dir)
        # The first build's background merges end before anything is
        # measured (as bench/run.sh does): the index a running server keeps.
        failed |= subprocess.call(
            [os.path.join(a.bench_bin, "bench_http"), "--url", servers["engine"][1],
             "--wait-settled", "3600", "--pid", str(servers["engine"][0].pid), "--name",
             "engine"], stdout=sys.stdout) != 0
        servers["fts5"] = start(a.newsd, a.fts5_store, "fts5", True, log_dir)
        clients = {n: Client(servers[n][1], a.key) for n in SERVERS}
        reqs = requests_of(clients["engine"])
        for rnd in range(a.rounds):
            order = SERVERS if rnd % 2 == 0 else SERVERS[::-1]
            for name in order:
                failed |= run_programs(a, name, servers[name][1], raw_mix)
                for shape, path in reqs:
                    for _ in range(a.ext_reps or a.reps):
                        us, st, b = clients[name].get(path)
                        if st != 200:
                            print("err\t%s\t%s\t%s %s" % (name, shape, st, b), flush=True)
                            failed = 1
                            continue
                        total = b.get("totalResults", 0)
                        print("ext\t%s\t%s\t%.1f\t%s\t%d" % (name, shape, us, total, rnd),
                              flush=True)
        for name in (a.export_servers.split(",") if a.export else ()):
            sys.stdout.flush()
            failed |= subprocess.call(
                [os.path.join(a.bench_bin, "bench_http"), "--url", servers[name][1], "--key",
                 a.key, "--pid", str(servers[name][0].pid), "--name", "export-" + name,
                 "--export", a.export], stdout=sys.stdout) != 0
    finally:
        for p, _ in servers.values():
            p.send_signal(signal.SIGTERM)
            p.wait()
    if failed:
        print("bench_extensions: the servers' logs are in %s" % log_dir, file=sys.stderr)
        return 1
    shutil.rmtree(log_dir)
    return 0


def pct(xs, p):
    xs = sorted(xs)
    return xs[max(0, -(-len(xs) * p // 100) - 1)] if xs else float("nan")


def ms(us):
    return "%.2f" % (us / 1000)


def cmd_report(a):
    lat, agg, ext, stat, errs = {}, {}, {}, {}, []
    first, seen = {}, set()  # counts: each query's first run in its server
    for line in (l for raw in a.raw for l in open(raw)):
        f = line.rstrip("\n").split("\t")
        if f[0] == "lat" and int(f[9]) > 0:  # repeats only (pass 0: first runs)
            lat.setdefault((f[1], f[3]), []).append(float(f[7]))
        elif f[0] == "agg" and (f[1], f[2], f[4]) not in seen and int(f[5]) == 0:
            # a shape's queries differ in their totals: the first line of
            # (server, shape, total) is that query's first run
            seen.add((f[1], f[2], f[4]))
            first.setdefault((f[1], f[2]), []).append(float(f[3]))
        elif f[0] == "agg" and int(f[5]) > 0:
            agg.setdefault((f[1], f[2]), []).append(float(f[3]))
        elif f[0] == "ext":
            ext.setdefault((f[1], f[2]), []).append(float(f[3]))
        elif f[0] == "stat":
            stat[(f[1], f[2])] = f[3]
        elif f[0] == "err":
            errs.append(line.strip())
    out = []
    w = out.append
    w("### Coverage over time and facets (issue 26): /v2/everything/counts, cold\n")
    w("Repeats (pass > 0) in the main columns; *first run* = each query's first run"
      " in its server (cold, count cache off); *warm* = the engine with its count cache"
      " on, repeats (when measured).\n")
    w("| shape | engine p50 ms | engine p95 ms | FTS5 p50 ms | FTS5 p95 ms | × faster (p95) |"
      " engine first-run p95 | FTS5 first-run p95 | engine warm p95 |")
    w("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for shape in ("daily-word", "daily-common", "hourly-month", "facets5"):
        e, f = agg.get(("counts-engine", shape), []), agg.get(("counts-fts5", shape), [])
        e1, f1 = first.get(("counts-engine", shape), []), first.get(("counts-fts5", shape), [])
        wm = agg.get(("counts-engine-warm", shape), [])
        opt = lambda xs: ms(pct(xs, 95)) if xs else "–"
        if e:
            w("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                shape, ms(pct(e, 50)), ms(pct(e, 95)), ms(pct(f, 50)) if f else "–",
                ms(pct(f, 95)) if f else "–",
                "%.1f×" % (pct(f, 95) / pct(e, 95)) if f else "–", opt(e1), opt(f1), opt(wm)))
    w("")
    w("### dedupe=true against the same request without it (issue 25), cold, repeats\n")
    w("| server | shape | plain p50 | plain p95 | dedupe p50 | dedupe p95 | dedupe ÷ plain (p95) |")
    w("|---|---|---:|---:|---:|---:|---:|")
    for srv in SERVERS:
        shapes = sorted({s for (n, s) in lat if n == srv + "-plain"})
        allp, alld = [], []
        for s in shapes:
            p, d = lat.get((srv + "-plain", s), []), lat.get((srv + "-dedupe", s), [])
            if p and d:
                allp += p
                alld += d
                w("| %s | %s | %s | %s | %s | %s | %.2f× |" % (
                    srv, s, ms(pct(p, 50)), ms(pct(p, 95)), ms(pct(d, 50)), ms(pct(d, 95)),
                    pct(d, 95) / pct(p, 95)))
        if allp:
            w("| %s | **whole mix** | %s | %s | %s | %s | **%.2f×** |" % (
                srv, ms(pct(allp, 50)), ms(pct(allp, 95)), ms(pct(alld, 50)), ms(pct(alld, 95)),
                pct(alld, 95) / pct(allp, 95)))
    w("")
    w("### Stories and similarTo (issue 25), cold, whole request (ms)\n")
    w("| shape | engine p50 | engine p95 | FTS5 p50 | FTS5 p95 | × faster (p95) |")
    w("|---|---:|---:|---:|---:|---:|")
    for shape in ("stories-p1", "story-id", "similarTo"):
        e, f = ext.get(("engine", shape), []), ext.get(("fts5", shape), [])
        if e:
            w("| %s | %s | %s | %s | %s | %s |" % (
                shape, ms(pct(e, 50)), ms(pct(e, 95)), ms(pct(f, 50)) if f else "–",
                ms(pct(f, 95)) if f else "–",
                "%.1f×" % (pct(f, 95) / pct(e, 95)) if f else "–"))
    w("")
    w("### Export (issue 27): every match of a broad query, NDJSON, against cursor paging\n")
    w("| server | articles | export articles/s | cursor paging articles/s | export ÷ cursor |"
      " RssAnon before → highest → after (MiB) |")
    w("|---|---:|---:|---:|---:|---|")
    for srv in SERVERS:
        e = lambda k, n="export-" + srv: stat.get((n, k))
        if e("articles_per_s") is None:
            continue
        cur = e("articles_per_s", "export-%s-cursor" % srv)
        mib = lambda k: "%.0f" % (int(e(k)) / 1024) if e(k) not in (None, "-1") else "?"
        w("| %s | %s | %s | %s | %s | %s → %s → %s |" % (
            srv, e("articles"), e("articles_per_s"), cur or "–",
            "%.2f×" % (float(e("articles_per_s")) / float(cur)) if cur else "–",
            mib("anon_before_kb"), mib("anon_max_kb"), mib("anon_after_kb")))
    w("")
    w("| server | stat | value |")
    w("|---|---|---:|")
    for (n, k), v in sorted(stat.items()):
        if k in ("healthy_seconds", "largest_story_sizes", "settled_seconds", "segments"):
            w("| %s | %s | %s |" % (n, k, v))
    if errs:
        w("\nErrors:\n")
        w("```\n" + "\n".join(errs) + "\n```")
    print("\n".join(out))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--newsd", required=True)
    r.add_argument("--bench-bin", required=True)
    r.add_argument("--store", required=True)
    r.add_argument("--fts5-store", required=True)
    r.add_argument("--key", required=True)
    r.add_argument("--rounds", type=int, default=3)
    r.add_argument("--reps", type=int, default=3)
    r.add_argument("--counts-reps", type=int, default=0,
                   help="bench_counts' passes per round (default: 5 × --reps, as run.sh)")
    r.add_argument("--ext-reps", type=int, default=0,
                   help="each stories/similarTo request's runs per round (default: --reps)")
    r.add_argument("--mix", default=os.path.join(os.path.dirname(__file__), "querymix.tsv"))
    r.add_argument("--export", default="q=the%20OR%20of%20OR%20and%20OR%20a%20OR%20in")
    r.add_argument("--no-export", dest="export", action="store_const", const="",
                   help="no export step (FTS5's cursor walk alone takes minutes at 1 M)")
    r.add_argument("--export-servers", default=",".join(SERVERS),
                   help="the servers that export, comma-separated (FTS5's cursor walk is"
                   " hours at 10 M: --export-servers engine)")
    r.add_argument("--no-fts5-mix", dest="fts5_mix", action="store_false",
                   help="the query mix (plain and dedupe) on the engine only")
    p = sub.add_parser("report")
    p.add_argument("raw", nargs="+", help="raw files of `run` (and bench_counts' lines)")
    a = ap.parse_args()
    return cmd_run(a) if a.cmd == "run" else cmd_report(a)


if __name__ == "__main__":
    sys.exit(main())
