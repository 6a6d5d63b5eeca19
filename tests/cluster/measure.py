"""Cluster-mode figures for docs/scaling.md (not a test: pytest does not
collect it). Run from the repository root after `make build/newsd
build/release/bench/gen`:

    /usr/bin/python3 tests/cluster/measure.py [N]      (default N = 100000)

It starts a throwaway PostgreSQL (scripts/pg-test-server.sh), imports N
articles of the benchmark corpus (bench/gen) into it, then measures:
bootstrap time and local index size of a node started from nothing, the
lag from an import's commit to the articles being searchable on every node,
and /v2/everything throughput (wrk, the query mix of bench/querymix.tsv)
against 1, 2 and 3 nodes. Prints Markdown."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

import requests

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from conftest import REPO, Node, Postgres, newsd  # noqa: E402

GEN = os.path.join(REPO, "build", "release", "bench", "gen")
MIX = os.path.join(REPO, "bench", "querymix.tsv")
WRK_SECONDS = 10

LUA = r"""
local queries = {}
for line in io.lines(os.getenv("NEWSD_MIX")) do
  local qs = line:match("([^\t]+)$")
  if not line:match("^#") and qs and qs:find("=") then
    table.insert(queries, qs)
  end
end
local key = os.getenv("NEWSD_KEY")
local i = 0
setup = function(thread) end
init = function(args) i = math.random(#queries) end
request = function()
  i = i % #queries + 1
  return wrk.format("GET", "/v2/everything?" .. queries[i], {["X-Api-Key"] = key})
end
"""


def du(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(root, f))
            except OSError:
                pass
    return total


def wait_ok(node, timeout=3600):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        try:
            status, h = node.health()
            if status == 200 and h.get("status") == "ok":
                return time.monotonic() - t0, h
        except requests.RequestException:
            pass
        time.sleep(0.05)
    raise RuntimeError("%s never caught up" % node.name)


def wrk(nodes, key, lua, seconds=WRK_SECONDS, conns=8):
    """Run one wrk per node at once; total requests/s and non-2xx count."""
    env = dict(os.environ, NEWSD_MIX=MIX, NEWSD_KEY=key)
    procs = [subprocess.Popen(["wrk", "-t1", "-c%d" % conns, "-d%ds" % seconds, "-s", lua,
                               n.base], env=env, stdout=subprocess.PIPE, text=True)
             for n in nodes]
    rps, bad = 0.0, 0
    for p in procs:
        out, _ = p.communicate()
        for line in out.splitlines():
            if line.startswith("Requests/sec:"):
                rps += float(line.split()[1])
            if "Non-2xx" in line:
                bad += int(line.split()[-1])
    return rps, bad


def lag_rounds(pg, uri, nodes, key, d, rounds=20, batch=50):
    """Seconds from an import's commit (the CLI exits after it) until every
    node finds the batch."""
    out = []
    for r in range(rounds):
        token = "lagmark%dq" % r
        path = os.path.join(d, "lag-%d.jsonl" % r)
        with open(path, "w") as f:
            for i in range(batch):
                f.write('{"source": {"id": null, "name": "Lag"}, "title": "%s story %d",'
                        ' "url": "https://lag.example/%d/%d", "publishedAt":'
                        ' "2025-06-30T12:00:00Z", "description": "d", "content": "c"}\n'
                        % (token, i, r, i))
        newsd("import", "--create", "--store", uri, path)
        t0 = time.monotonic()
        pending = set(range(len(nodes)))
        while pending:
            for i in list(pending):
                r2 = nodes[i].get("/v2/everything", {"q": token}, key)
                if r2.status_code == 200 and r2.json()["totalResults"] == batch:
                    pending.discard(i)
            if time.monotonic() - t0 > 30:
                raise RuntimeError("lag round %d never converged" % r)
        out.append(time.monotonic() - t0)
    out.sort()
    return out


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
    d = tempfile.mkdtemp(prefix="newsd-measure-")
    os.chmod(d, 0o755)
    pg = Postgres(d)
    nodes = []
    try:
        uri = pg.new_database()
        corpus = os.path.join(d, "corpus.jsonl")
        with open(corpus, "wb") as f:
            subprocess.run([GEN, str(n)], stdout=f, check=True)
        with open(os.path.join(d, "sources.jsonl"), "wb") as f:
            subprocess.run([GEN, "--sources"], stdout=f, check=True)
        newsd("sources", "import", "--create", "--store", uri, os.path.join(d, "sources.jsonl"))
        t0 = time.monotonic()
        newsd("import", "--create", "--store", uri, corpus)
        t_import = time.monotonic() - t0
        key = newsd("keys", "create", "--create", "--store", uri, "--plan", "unlimited")[1].strip()
        pg_size = int(Postgres.psql(uri, "SELECT pg_database_size(current_database())").strip())

        print("## Cluster figures (N = %d articles)\n" % n)
        print("| step | figure |\n|---|---|")
        print("| import into PostgreSQL (`newsd import`, batches of 2000) | %.1f s, %.0f articles/s |"
              % (t_import, n / t_import))
        print("| PostgreSQL database size | %.0f MB |" % (pg_size / 1e6))

        nodes.append(Node(uri, os.path.join(d, "index-1"), ["--threads", "4"], name="n1"))
        t_boot, h = wait_ok(nodes[0])
        size = os.path.getsize(os.path.join(d, "index-1", "newsd.db"))
        wal = du(os.path.join(d, "index-1")) - size
        print("| bootstrap of a node from nothing | %.1f s (%.0f articles/s) |"
              % (t_boot, h["articles"] / t_boot))
        print("| local index of a node (newsd.db) | %.0f MB (%.0f MB per 100k articles), "
              "plus %.0f MB of WAL |"
              % (size / 1e6, size / 1e6 * 100000 / max(h["articles"], 1), wal / 1e6))
        for i in (2, 3):
            nodes.append(Node(uri, os.path.join(d, "index-%d" % i), ["--threads", "4"],
                              name="n%d" % i))
        t0 = time.monotonic()
        for node in nodes[1:]:
            wait_ok(node)
        print("| two more nodes bootstrapping at once | %.1f s |" % (time.monotonic() - t0))

        lags = lag_rounds(pg, uri, nodes, key, d)
        print("| commit → searchable on all 3 nodes (20 imports of 50) | p50 %.0f ms, max %.0f ms |"
              % (lags[len(lags) // 2] * 1000, lags[-1] * 1000))

        lua = os.path.join(d, "mix.lua")
        with open(lua, "w") as f:
            f.write(LUA)
        print("\n| nodes | /v2/everything requests/s (query mix, 8 connections per node) | non-2xx |")
        print("|---|---|---|")
        for k in (1, 2, 3):
            rps, bad = wrk(nodes[:k], key, lua)
            print("| %d | %.0f | %d |" % (k, rps, bad))
        print("\n%d cores on this machine (`nproc`); every node and every wrk share them."
              % os.cpu_count())
    finally:
        for node in nodes:
            try:
                node.stop()
            except AssertionError as e:
                print("stop:", e, file=sys.stderr)
        pg.destroy()
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
