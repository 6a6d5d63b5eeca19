"""The README's first command, as a newcomer runs it: scripts/demo.sh (what
`make demo` runs after building) loads the sample, serves it, prints curl
lines that work as printed, and a way to live news that works as printed:
the printed feeds command adds the bundled catalogue to the running demo,
whose key keeps working. And `make demo` installs no test tool.
(Release build only; the catalogue's feeds are on the internet, which the
test does not reach: it checks that they are loaded and polled.)"""
import os
import re
import shlex
import signal
import subprocess
import time

import pytest
import requests

from harness import ASAN, BIN, HTTP_TIMEOUT, REPO, clean_env

pytestmark = [
    pytest.mark.by_design(ASAN, reason="runs the release build as make demo does"),
    # The demo serves with the default index; the fts5 run of the suite
    # (make api-test-fts5) would only repeat these minutes.
    pytest.mark.by_design(os.environ.get("NEWSD_INDEX") == "fts5",
                          reason="the demo uses the default index: run once, in make api-test"),
]


def start_demo(store, feeds=False):
    env = clean_env({"NEWSD_LISTEN": "127.0.0.1:0", "FEEDS": "1" if feeds else ""})
    proc = subprocess.Popen(["scripts/demo.sh", BIN, str(store)], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    lines = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
        if line.startswith("(or stop and run") or "feeds list" in line:
            # the last block printed before the demo waits: read one more
            lines.append(proc.stdout.readline().rstrip("\n"))
            break
    return proc, lines


def stop(proc):
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def printed(lines, start):
    return [line.strip() for line in lines if line.strip().startswith(start)]


def test_make_demo_installs_build_packages_only():
    build = subprocess.run([os.path.join(REPO, "scripts", "install-deps.sh"), "--list"],
                           capture_output=True, text=True, check=True).stdout.split()
    full = subprocess.run([os.path.join(REPO, "scripts", "install-deps.sh"), "--list", "--test"],
                          capture_output=True, text=True, check=True).stdout.split()
    assert set(build) < set(full)
    for tool in ("postgresql", "chromium", "clang", "wrk", "libcmocka-dev", "python3-pytest"):
        assert tool in full and tool not in build, tool
    make = subprocess.run(["make", "-n", "-C", REPO, "demo"], capture_output=True, text=True,
                          env=clean_env())
    assert re.search(r"scripts/install-deps.sh\s*$", make.stdout, re.M), make.stdout[:500]
    assert "install-deps.sh --test" not in make.stdout, make.stdout[:500]


def test_the_demo_prints_lines_that_work_and_a_way_to_live_news(tmp_path):
    store = tmp_path / "demo-store"
    proc, lines = start_demo(store)
    try:
        text = "\n".join(lines)
        curls = printed(lines, "curl ")
        assert len(curls) >= 3, text
        for c in curls:
            r = subprocess.run(shlex.split(c), capture_output=True, text=True, timeout=30)
            assert r.returncode == 0 and '"status":"ok"' in r.stdout, (c, r.stdout[:300])
        # The way to live news, run exactly as printed, on the running demo.
        cmd = [line for line in printed(lines, BIN) if " feeds import " in line]
        assert len(cmd) == 1, text
        r = subprocess.run(cmd[0], shell=True, cwd=REPO, capture_output=True, text=True,
                           timeout=60, env=clean_env())
        assert r.returncode == 0, (cmd, r.stdout, r.stderr)
        listed = subprocess.run([BIN, "feeds", "list", "--store", str(store)],
                                capture_output=True, text=True, check=True, env=clean_env())
        with open(os.path.join(REPO, "data", "feeds.jsonl")) as f:
            catalogue = sum(1 for line in f if line.strip())
        assert len(re.findall(r"https?://", listed.stdout)) == catalogue, listed.stdout[:500]
        # The running demo polls them (here they fail: no internet), and its
        # key still answers.
        key = open(store / "demo.key").read().strip()
        base = re.search(r"serving the sample on (\S+)", text).group(1)
        deadline = time.monotonic() + 60
        polled = 0
        while time.monotonic() < deadline and not polled:
            m = requests.get(base + "/metrics", timeout=HTTP_TIMEOUT).text
            polled = int(float(re.search(r"^newsd_feeds_polled_total (\S+)", m, re.M).group(1)))
            time.sleep(0.5)
        assert polled > 0, "the demo server did not poll the new feeds"
        r = requests.get(base + "/v2/everything", params={"q": "bitcoin"},
                         headers={"X-Api-Key": key}, timeout=HTTP_TIMEOUT)
        assert r.status_code == 200, r.text[:200]
    finally:
        stop(proc)


def test_make_demo_feeds_1_loads_the_catalogue(tmp_path):
    store = tmp_path / "demo-store"
    proc, lines = start_demo(store, feeds=True)
    try:
        text = "\n".join(lines)
        assert "polls the" in text, text
        assert (store / ".feeds-loaded").exists()
    finally:
        stop(proc)
    # A second start does not load it twice.
    proc, lines = start_demo(store, feeds=True)
    stop(proc)
    assert "adding the bundled feed catalogue" not in "\n".join(lines)


def test_a_fresh_clone_runs_make_demo(tmp_path):
    """The README's first command on a fresh clone of the committed tree:
    `make demo` builds from nothing but what is committed (no build/ from
    this checkout, no generated file left lying around) and serves. Skipped
    outside a git checkout (a worktree, where .git is a file, is one).

    The clone builds at -O0 (RELEASE_OPT): 12 s instead of 51 s here, a
    quarter of the API suite's CPU otherwise. What this test adds is that
    the committed files alone build and serve, which the optimisation level
    does not change; the -O2 build of the same files, warnings as errors
    (more of them than at -O0), is make check's first step."""
    if not os.path.exists(os.path.join(REPO, ".git")):
        pytest.skip("not a git checkout")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", REPO, str(clone)], check=True, timeout=120)
    env = clean_env({"NEWSD_LISTEN": "127.0.0.1:0", "DEMO_STORE": str(tmp_path / "store")})
    proc = subprocess.Popen(["make", "--no-print-directory", "-C", str(clone), "demo", "-j2",
                             "RELEASE_OPT=-O0"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        lines = []
        deadline = time.monotonic() + 900
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line.rstrip("\n"))
            if line.startswith("(or stop and run"):
                break
        text = "\n".join(lines)
        curls = printed(lines, "curl ")
        assert curls, text[-3000:]
        r = subprocess.run(shlex.split(curls[0]), capture_output=True, text=True, timeout=30)
        assert '"status":"ok"' in r.stdout, (curls[0], r.stdout[:300])
    finally:
        stop(proc)
