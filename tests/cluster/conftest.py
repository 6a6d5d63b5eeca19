"""Cluster mode under test: a throwaway PostgreSQL (scripts/pg-test-server.sh),
newsd nodes serving one PostgreSQL store each with a local index, and an
embedded-mode newsd holding the same articles as the reference.

Every wait here is a bounded poll (no fixed sleeps): a node is "converged"
when its /healthz says it holds every change up to the head of the store's
article log, read from PostgreSQL itself."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest
import requests

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import longest_first  # noqa: E402
import skip_policy  # noqa: E402
from logfiles import log_file  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BIN = os.environ.get("NEWSD_BIN") or os.path.join(REPO, "build", "newsd")
PG_SCRIPT = os.path.join(REPO, "scripts", "pg-test-server.sh")
DATA = os.path.join(REPO, "tests", "data", "api")
ASAN = os.environ.get("NEWSD_ASAN") == "1"
SLOW = 6 if ASAN else 1
LISTENING = re.compile(r"listening on http://127\.0\.0\.1:(\d+)")
SANITIZER = re.compile(r"ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:")
# The clock every server runs at (top-headlines' live window depends on it).
NOW = 1673136000  # 2023-01-08T00:00:00Z


def pytest_configure(config):
    skip_policy.install(config)  # every skip shown; in CI a precondition skip fails


# tests/longest_first.py (--durations=0 summed by file, 2026-11-28:
# test_cluster ~27 s of ~70 s).
LONGEST_FIRST = ["test_cluster", "test_alerts_pg", "test_upgrade_pg", "test_stream_pg",
                 "test_node_pg"]


def pytest_collection_modifyitems(config, items):
    longest_first.sort(config, items, LONGEST_FIRST)


def clean_env(extra=None):
    env = {k: v for k, v in os.environ.items()
           if k not in ("NEWSD_STORE", "NEWSD_LISTEN", "NEWSD_NOW")}
    env.update(extra or {})
    return env


def run(args, check=True, timeout=120):
    p = subprocess.run([str(a) for a in args], capture_output=True, env=clean_env(),
                       timeout=timeout * SLOW)
    out = p.stdout.decode("utf-8", "replace")
    err = p.stderr.decode("utf-8", "replace")
    assert not SANITIZER.search(err), "sanitizer report from %r:\n%s" % (args, err[-4000:])
    if check:
        assert p.returncode == 0, "%r -> %d\nstdout: %s\nstderr: %s" % (
            args, p.returncode, out[-2000:], err[-2000:])
    return p.returncode, out, err


def newsd(*args, check=True):
    return run([BIN] + list(args), check=check)


def wait_for(what, cond, timeout=30):
    """Poll cond() until it returns a true value (returned) or fail after timeout s."""
    deadline = time.monotonic() + timeout * SLOW
    last = None
    while time.monotonic() < deadline:
        try:
            last = cond()
        except (requests.RequestException, OSError) as e:
            last = e
        else:
            if last:
                return last
        time.sleep(0.05)
    raise AssertionError("timed out waiting for %s (last: %r)" % (what, last))


class Postgres:
    """The throwaway server; one database per test (new_database)."""

    def __init__(self, root):
        self.dir = os.path.join(root, "pg")
        self.base = run([PG_SCRIPT, "start", self.dir], timeout=120)[1].strip()
        self.n = 0

    def admin_uri(self):
        return self.base

    def new_database(self):
        self.n += 1
        name = "newsd_t%d" % self.n
        self.psql(self.base, "CREATE DATABASE %s" % name)
        return self.base.rsplit("/", 1)[0] + "/" + name

    @staticmethod
    def psql(uri, sql):
        return run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", uri, "-c", sql])[1]

    def head(self, uri):
        """The last sequence number of the store's article log."""
        return int(self.psql(uri, "SELECT greatest((SELECT max(seq) FROM articles),"
                                  " (SELECT max(seq) FROM article_tombstones), 0)").strip())

    def stop(self):
        run([PG_SCRIPT, "stop", self.dir])

    def kill(self):
        run([PG_SCRIPT, "kill", self.dir])

    def start(self):
        run([PG_SCRIPT, "restart", self.dir])

    def destroy(self):
        run([PG_SCRIPT, "destroy", self.dir], check=False)


class Node:
    """newsd serve on 127.0.0.1:0 (any free port), crawler off."""

    def __init__(self, store, index_dir=None, args=(), name="node"):
        self.store, self.index_dir, self.args, self.name = store, index_dir, list(args), name
        self.proc = None
        self.start()

    def start(self):
        self._forget_logs()
        self.err_path = log_file("newsd-%s-err-" % self.name)
        self.out_path = log_file("newsd-%s-out-" % self.name)
        cmd = [BIN, "serve", "--store", self.store, "--listen", "127.0.0.1:0", "--no-crawl",
               "--quiet"] + self.args
        if self.index_dir:
            cmd += ["--index-dir", self.index_dir]
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                         env=clean_env({"NEWSD_NOW": str(NOW)}))

        def listening():
            m = LISTENING.search(self._read(self.out_path))
            if m:
                return int(m.group(1))
            assert self.proc.poll() is None, "%s exited %r:\n%s" % (
                self.name, self.proc.returncode, self.stderr()[-4000:])
            return None
        self.port = wait_for("%s to listen" % self.name, listening)
        self.base = "http://127.0.0.1:%d" % self.port
        self.session = requests.Session()

        def index_open():
            """Past "starting" (the engine building its index); "catching up"
            is the node's own state, which the tests look at."""
            r = self.session.get(self.base + "/healthz", timeout=10)
            return not (r.status_code == 503 and r.json().get("status") == "starting")
        wait_for("%s's index to open" % self.name, index_open)

    def _forget_logs(self):
        for p in (getattr(self, "err_path", None), getattr(self, "out_path", None)):
            if p:
                try:
                    os.unlink(p)
                except OSError:
                    pass

    @staticmethod
    def _read(path):
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def stderr(self):
        return self._read(self.err_path)

    def get(self, path, params=None, key=None):
        headers = {"X-Api-Key": key} if key else {}
        # Not a pooled connection near newsd's 30 s keep-alive timeout: one
        # sent on as the server closes it is dropped (tests/api/harness.py).
        if time.monotonic() - getattr(self, "last_used", 0) > 15:
            self.session.close()
        self.last_used = time.monotonic()
        return self.session.get(self.base + path, params=params, headers=headers,
                                timeout=30 * SLOW)

    def health(self):
        r = self.get("/healthz")
        return r.status_code, r.json()

    def kill(self):
        """SIGKILL: no chance to flush or close anything."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        """SIGTERM; must exit 0 without a sanitizer report."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30 * SLOW)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError("%s did not stop on SIGTERM" % self.name)
            assert self.proc.returncode == 0, "%s exited %d:\n%s" % (
                self.name, self.proc.returncode, self.stderr()[-4000:])
        found = [l for l in self.stderr().splitlines() if SANITIZER.search(l)]
        assert not found, "\n".join(found)
        self._forget_logs()


def wait_converged(pg, uri, nodes, timeout=60):
    """Every node reports status ok and holds the log up to its head."""
    head = pg.head(uri)

    def done():
        for n in nodes:
            status, h = n.health()
            if status != 200 or h.get("applied_seq") != head or h.get("lag_seq") != 0:
                return None
        return True
    wait_for("nodes %s to reach seq %d" % ([n.name for n in nodes], head), done, timeout)
    return head


@pytest.fixture(scope="session")
def workdir():
    d = tempfile.mkdtemp(prefix="newsd-cluster-")
    # The server user (nobody, when run as root) must reach the pg directory.
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="session")
def pg(workdir):
    if not os.access(BIN, os.X_OK):
        pytest.exit("newsd binary not found: %s (set NEWSD_BIN)" % BIN, 2)
    server = Postgres(workdir)
    yield server
    server.destroy()


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    return path
