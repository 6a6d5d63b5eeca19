#!/usr/bin/env python3
"""Two builds of newsd on one corpus, measured in the same period: the
query mix over HTTP, cold (NEWSD_ENGINE_COUNT_CACHE=0), each build's server
on its own copy of the store (a store has one server: its lock), both
running at once and measured in alternating rounds, so that a shared,
noisy machine slows both alike. For "no shape slower than the run's
noise" after a change that should not change speed (issue 24).

  compare_builds.py run --a NAME=BIN:STORE --b NAME=BIN:STORE --bench-bin DIR
        --key KEY [--rounds K] [--reps R] [--mix FILE] > RAW
  compare_builds.py report RAW > REPORT.md

`run` waits for each server's first build and its merges to settle
(bench_http --wait-settled), then K rounds of bench_http --mix (R passes
each; pass 0 is each query's first run in that round), the order of the two
builds swapped every round, each shape's queries a bench_http run of
their own with the server's CPU time read from /proc around it. `report`: per shape, p50 and p95 (nearest
rank) of the repeats of each build, b ÷ a, the first runs of round 0 (the
first run in the process), and whether every query's totalResults agreed.
The noise of the run is shown by splitting a's repeats into its even and
odd rounds: the p95 ratio of a to itself. Figures only: nothing is
asserted; a request that fails is an err line and `run` exits 1."""
import argparse
import os
import signal
import subprocess
import sys
import tempfile

from bench_extensions import pct, start  # nearest-rank percentile; a cold server until /healthz 200


def cpu_ms(pid):
    """The server's user + system CPU so far (ms): robust on a shared
    machine where wall times scatter with the load."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000.0 / os.sysconf("SC_CLK_TCK")


def shape_mixes(mix, log_dir):
    """One mix file a shape (the header lines kept), for per-shape CPU."""
    head, by = [], {}
    for line in open(mix):
        cols = line.rstrip("\n").split("\t")
        if line.startswith("#") or len(cols) < 6 or cols[0] == "id":
            head.append(line)
        else:
            by.setdefault(cols[1], []).append(line)
    out = {}
    for shape, lines in sorted(by.items()):
        out[shape] = os.path.join(log_dir, "mix-%s.tsv" % shape)
        with open(out[shape], "w") as f:
            f.writelines(head + lines)
    return out


def parse_build(s):
    name, rest = s.split("=", 1)
    binary, store = rest.split(":", 1)
    return name, binary, store


def cmd_run(a):
    log_dir = tempfile.mkdtemp(prefix="compare-builds-")
    builds = [parse_build(a.a), parse_build(a.b)]
    servers, failed = {}, 0
    http_bin = os.path.join(a.bench_bin, "bench_http")
    try:
        for name, binary, store in builds:
            servers[name] = start(binary, store, name, False, log_dir)
            failed |= subprocess.call([http_bin, "--url", servers[name][1], "--wait-settled",
                                       "3600", "--pid", str(servers[name][0].pid), "--name",
                                       name], stdout=sys.stdout) != 0
        names = [b[0] for b in builds]
        mixes = shape_mixes(a.mix, log_dir)
        for rnd in range(a.rounds):
            for name in (names if rnd % 2 == 0 else names[::-1]):
                print("round\t%s\t%d" % (name, rnd), flush=True)
                for shape, mix in mixes.items():
                    c0 = cpu_ms(servers[name][0].pid)
                    failed |= subprocess.call(
                        [http_bin, "--url", servers[name][1], "--key", a.key, "--mix", mix,
                         "--reps", str(a.reps), "--warmup", "0", "--clients", "1", "--seconds",
                         "0", "--name", "%s@%d" % (name, rnd)], stdout=sys.stdout) != 0
                    print("cpu\t%s\t%d\t%s\t%.1f" % (name, rnd, shape,
                                                    cpu_ms(servers[name][0].pid) - c0), flush=True)
    finally:
        for p, _ in servers.values():
            p.send_signal(signal.SIGTERM)
            p.wait()
    if failed:
        print("compare_builds: the servers' logs are in %s" % log_dir, file=sys.stderr)
    return 1 if failed else 0


def cmd_report(a):
    rep, first, totals, names, cpu, whole = {}, {}, {}, [], {}, {}
    for line in open(a.raw):
        f = line.rstrip("\n").split("\t")
        if f[0] == "cpu":
            cpu.setdefault((f[1], f[3]), []).append(float(f[4]))
            whole.setdefault((f[1], f[2]), []).append(float(f[4]))
            continue
        if f[0] != "lat":
            continue
        name, rnd = f[1].rsplit("@", 1)
        if name not in names:
            names.append(name)
        shape, us, total, pss = f[3], float(f[7]), f[8], int(f[9])
        totals.setdefault(f[2], set()).add(total)
        if pss > 0:
            rep.setdefault((name, shape), []).append(us)
            rep.setdefault((name + "/" + ("even" if int(rnd) % 2 == 0 else "odd"), shape),
                           []).append(us)
        elif rnd == "0":
            first.setdefault((name, shape), []).append(us)
    for (name, rnd), xs in whole.items():  # the whole mix: a round's sum
        cpu.setdefault((name, "*whole mix*"), []).append(sum(xs))
    if len(names) != 2:
        sys.exit("compare_builds: the raw file holds %d builds, not 2" % len(names))
    x, y = names
    out = ["| shape | %s p50 | %s p95 | %s p50 | %s p95 | %s ÷ %s (p95) | noise: %s even ÷ odd "
           "rounds (p95) | %s first-run p95 | %s first-run p95 | server CPU %s ÷ %s |"
           % (x, x, y, y, y, x, x, x, y, y, x),
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    med = lambda xs: sorted(xs)[len(xs) // 2] if xs else float("nan")
    shapes = sorted({s for (n, s) in rep if n == x})
    for s in shapes + ["*whole mix*"]:
        pick = (lambda n: [v for (m, t), vs in rep.items() if m == n for v in vs]) \
            if s == "*whole mix*" else (lambda n: rep.get((n, s), []))
        pf = (lambda n: [v for (m, t), vs in first.items() if m == n for v in vs]) \
            if s == "*whole mix*" else (lambda n: first.get((n, s), []))
        ax, ay = pick(x), pick(y)
        ev, od = pick(x + "/even"), pick(x + "/odd")
        cx, cy = cpu.get((x, s), []), cpu.get((y, s), [])
        out.append("| %s | %.2f | %.2f | %.2f | %.2f | %.2f× | %s | %.2f | %.2f | %s |" % (
            s, pct(ax, 50) / 1e3, pct(ax, 95) / 1e3, pct(ay, 50) / 1e3, pct(ay, 95) / 1e3,
            pct(ay, 95) / pct(ax, 95),
            "%.2f×" % (pct(ev, 95) / pct(od, 95)) if ev and od else "–",
            pct(pf(x), 95) / 1e3, pct(pf(y), 95) / 1e3,
            "%.2f× (%.0f / %.0f ms)" % (med(cy) / med(cx), med(cy), med(cx)) if cx and cy
            and med(cx) > 0 else "–"))
    differ = sorted(q for q, ts in totals.items() if len(ts) > 1)
    out.append("")
    out.append("Times in ms, cold, over HTTP, repeats unless marked; server CPU: the median"
               " over rounds of the server's user + system CPU for the shape's requests"
               " (every pass), the figure that holds on a loaded machine. totalResults: %s" % (
        "every query gave the same total on both builds in every pass" if not differ
        else "**differ** for %s" % ", ".join(differ)))
    print("\n".join(out))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--a", required=True, help="NAME=BIN:STORE, the baseline")
    r.add_argument("--b", required=True, help="NAME=BIN:STORE, the build measured against it")
    r.add_argument("--bench-bin", required=True)
    r.add_argument("--key", required=True)
    r.add_argument("--rounds", type=int, default=4)
    r.add_argument("--reps", type=int, default=3)
    r.add_argument("--mix", default=os.path.join(os.path.dirname(__file__), "querymix.tsv"))
    p = sub.add_parser("report")
    p.add_argument("raw")
    a = ap.parse_args()
    return cmd_run(a) if a.cmd == "run" else cmd_report(a)


if __name__ == "__main__":
    sys.exit(main())
