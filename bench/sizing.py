#!/usr/bin/env python3
"""Sizing (docs/operations.md "Sizing"): what a store of N articles costs on
this machine, per million, for NewsAPI-sized articles and for the full page
text the crawler stores.

  sizing.py [--newsd build/newsd] [--gen build/release/bench/gen]
            [--work bench/work/sizing] [--profiles newsapi,page] N

For each profile: `gen --profile P N | newsd import --store DIR -` (timed:
the import's rate), then `newsd serve` on the new store builds its search
index (timed until /healthz answers 200: the first build's rate) and is
left running until its background merges have ended
(newsd_index_merges_running 0 for 3 s), so that the peak memory (VmHWM)
and the index's size are those of the index a running server keeps. Disk
is the database file (with its WAL) and the index directory.

Prints a Markdown table: the measured figures at N, and per million
(disk and time scale with N; memory is the peak measured at N, and the
build's peak grows with the largest segment it builds, so it is given as
measured, not scaled).
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

LISTENING = re.compile(rb"listening on http://127\.0\.0\.1:(\d+)")


def dir_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.stat(os.path.join(root, f)).st_size
            except FileNotFoundError:
                pass
    return total


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError:
        return 0, ""


def metric(text, name):
    m = re.search(r"^%s (\S+)$" % re.escape(name), text, re.M)
    return float(m.group(1)) if m else None


def vm_hwm_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def measure(args, profile):
    store = os.path.join(args.work, profile)
    shutil.rmtree(store, ignore_errors=True)
    os.makedirs(args.work, exist_ok=True)
    t0 = time.monotonic()
    gen = subprocess.Popen([args.gen, "--profile", profile, str(args.n)],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    imp = subprocess.run([args.newsd, "import", "--store", store, "-"], stdin=gen.stdout,
                         capture_output=True)
    gen.wait()
    import_s = time.monotonic() - t0
    if imp.returncode != 0 or gen.returncode != 0:
        sys.exit("sizing: the import of %s failed: %s" % (profile, imp.stderr.decode()[-500:]))
    db = os.path.join(store, "newsd.db")
    env = dict(os.environ, NEWSD_ENGINE_COUNT_CACHE="0")
    out_path = os.path.join(args.work, profile + ".out")
    with open(out_path, "wb") as out:
        t1 = time.monotonic()
        srv = subprocess.Popen([args.newsd, "serve", "--store", store, "--listen", "127.0.0.1:0",
                                "--no-crawl", "--quiet"], stdout=out,
                               stderr=subprocess.DEVNULL, env=env)
    try:
        port = None
        while port is None:
            if srv.poll() is not None:
                sys.exit("sizing: newsd serve exited %d" % srv.returncode)
            m = LISTENING.search(open(out_path, "rb").read())
            port = int(m.group(1)) if m else None
            time.sleep(0.05)
        base = "http://127.0.0.1:%d" % port
        while get(base + "/healthz")[0] != 200:
            if srv.poll() is not None:
                sys.exit("sizing: newsd serve exited %d" % srv.returncode)
            time.sleep(0.1)
        build_s = time.monotonic() - t1
        quiet_since = None
        while True:
            _, text = get(base + "/metrics")
            running = metric(text, "newsd_index_merges_running")
            now = time.monotonic()
            if running == 0:
                quiet_since = quiet_since or now
                if now - quiet_since >= 3:
                    break
            else:
                quiet_since = None
            time.sleep(0.2)
        settled_s = quiet_since - t1  # when the merges ended, not the 3 s watched after
        hwm = vm_hwm_kib(srv.pid) * 1024
    finally:
        srv.send_signal(signal.SIGTERM)
        srv.wait(timeout=120)
    db_bytes = sum(os.stat(p).st_size for p in (db, db + "-wal") if os.path.exists(p))
    index_bytes = dir_bytes(db + ".engine")
    return {"profile": profile, "import_s": import_s, "build_s": build_s,
            "settled_s": settled_s, "db": db_bytes, "index": index_bytes, "hwm": hwm}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--newsd", default="build/newsd")
    ap.add_argument("--gen", default="build/release/bench/gen")
    ap.add_argument("--work", default="bench/work/sizing")
    ap.add_argument("--profiles", default="newsapi,page")
    ap.add_argument("n", type=int)
    args = ap.parse_args()
    rows = [measure(args, p) for p in args.profiles.split(",")]
    scale = 1e6 / args.n
    gb = 1e9
    print("Sizing at N = %d articles per profile (per million: × %.1f)\n" % (args.n, scale))
    print("| | " + " | ".join("`%s`" % r["profile"] for r in rows) + " |")
    print("|---|" + "---|" * len(rows))
    lines = [
        ("database per million (GB)", lambda r: "%.2f" % (r["db"] * scale / gb)),
        ("search index per million (GB)", lambda r: "%.2f" % (r["index"] * scale / gb)),
        ("disk per million, both (GB)", lambda r: "%.2f" % ((r["db"] + r["index"]) * scale / gb)),
        ("import, articles/s", lambda r: "%.0f" % (args.n / r["import_s"])),
        ("first build, articles/s (until /healthz 200)", lambda r: "%.0f" % (args.n / r["build_s"])),
        ("first build per million (min)", lambda r: "%.1f" % (r["build_s"] * scale / 60)),
        ("build and merges per million (min)", lambda r: "%.1f" % (r["settled_s"] * scale / 60)),
        ("peak memory of the server at N (VmHWM, MB)", lambda r: "%.0f" % (r["hwm"] / 1e6)),
    ]
    for name, f in lines:
        print("| %s | %s |" % (name, " | ".join(f(r) for r in rows)))


if __name__ == "__main__":
    main()
