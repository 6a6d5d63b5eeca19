"""Driving a real newsd: CLI runs, a served store, an HTTP client, and the
checks every response gets (§3 envelope and key order, CORS, JSON form)."""
import http.server
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import requests

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from logfiles import log_file  # noqa: E402  (tests/logfiles.py)

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BIN = os.environ.get("NEWSD_BIN") or os.path.join(REPO, "build", "newsd")
ASAN = os.environ.get("NEWSD_ASAN") == "1"
SLOW = 6 if ASAN else 1           # ASan builds are slower: stretch every timeout
HTTP_TIMEOUT = 20 * SLOW
SANITIZER = re.compile(r"ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:")
LISTENING = re.compile(r"listening on http://127\.0\.0\.1:(\d+)")

ARTICLE_KEYS = ["source", "author", "title", "description", "url", "urlToImage",
                "publishedAt", "content"]
SOURCE_KEYS = ["id", "name", "description", "url", "category", "language", "country"]
PUBLISHED = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def clean_env(extra=None):
    env = {k: v for k, v in os.environ.items()
           if k not in ("NEWSD_STORE", "NEWSD_LISTEN", "NEWSD_NOW")}
    # No config file from the machine (/etc/newsd/newsd.conf, $NEWSD_CONFIG):
    # a test that wants one passes --config or sets it in extra.
    env["NEWSD_CONFIG"] = "/dev/null"
    env.update(extra or {})
    return env


def allow_loopback(directory, networks="127.0.0.0/8 ::1"):
    """A config file in directory whose [outbound] allow_networks admits the
    tests' own feed servers on loopback, which newsd refuses by default;
    its path, for --config."""
    path = os.path.join(str(directory), "outbound.conf")
    with open(path, "w") as f:
        f.write("[outbound]\nallow_networks = %s\n" % networks)
    return path


def reply(handler, body, ctype, status=200):
    """Answer the request an http.server handler holds with body (bytes)."""
    handler.send_response(status)
    handler.send_header("Content-Type", ctype)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def serve_http(handler, host="127.0.0.1"):
    """A threading HTTP server for handler on host, any free port, running
    in a daemon thread; (server, "http://host:port/"). server.shutdown()
    and server.server_close() end it."""
    srv = http.server.ThreadingHTTPServer((host, 0), handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, "http://%s:%d/" % (host, srv.server_address[1])


def import_jsonl(store, rows):
    """`newsd import` of rows (article dicts) into store, in another
    process, through a temporary JSONL file; one commit."""
    fd, path = tempfile.mkstemp(prefix="newsd-rows-", suffix=".jsonl")
    try:
        with os.fdopen(fd, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
        cli_ok("import", "--create", "--store", store, path)
    finally:
        os.unlink(path)


def sanitizer_findings(text):
    return [line for line in text.splitlines() if SANITIZER.search(line)]


class Run:
    def __init__(self, args, rc, out, err):
        self.args, self.rc, self.out, self.err = args, rc, out, err

    def __repr__(self):
        return "newsd %s -> %d\nstdout: %s\nstderr: %s" % (
            " ".join(self.args), self.rc, self.out[-2000:], self.err[-2000:])


def run_cli(*args, stdin=None, env=None, timeout=None):
    """Run newsd ARGS; fail on any sanitizer report in its stderr."""
    args = [str(a) for a in args]
    p = subprocess.run([BIN] + args, input=stdin, capture_output=True,
                       env=clean_env(env), timeout=timeout or 60 * SLOW)
    r = Run(args, p.returncode, p.stdout.decode("utf-8", "replace"),
            p.stderr.decode("utf-8", "replace"))
    found = sanitizer_findings(r.err)
    assert not found, "sanitizer report from %r" % r
    return r


def cli_ok(*args, **kw):
    r = run_cli(*args, **kw)
    assert r.rc == 0, repr(r)
    return r


def parse_summary(text):
    """The import summary's counts, whatever the wording's order:
    'imported 3, updated 1, skipped 2' or '3 imported, 1 updated, 2 skipped'."""
    out = {}
    for word in ("imported", "updated", "skipped"):
        m = (re.search(r"\b%s\b\s*[:=]?\s*(\d+)" % word, text)
             or re.search(r"(\d+)\s+(?:articles?\s+)?%s\b" % word, text))
        if m:
            out[word] = int(m.group(1))
    return out


class Server:
    """newsd serve on 127.0.0.1:0 with its own stdout/stderr files; with
    --no-crawl unless crawl=True."""

    def __init__(self, store, now=None, args=(), wait_ready=True, crawl=False, env=None):
        self.store = store
        self.out_path = log_file("newsd-out-")
        self.err_path = log_file("newsd-err-")
        env = clean_env(dict({"NEWSD_NOW": str(now)} if now is not None else {}, **(env or {})))
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(
                [BIN, "serve", "--store", str(store), "--listen", "127.0.0.1:0"]
                + ([] if crawl else ["--no-crawl"]) + list(args),
                stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env)
        self.port = None
        # NEWSD_START_TIMEOUT (seconds): a large store takes minutes to open
        # (the engine builds its index; serve listens after 5 s of it and
        # says "starting" on /healthz until the index is ready).
        start_timeout = float(os.environ.get("NEWSD_START_TIMEOUT") or 30 * SLOW)
        deadline = time.monotonic() + start_timeout
        while time.monotonic() < deadline:
            m = LISTENING.search(self._read(self.out_path))
            if m:
                self.port = int(m.group(1))
                break
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        if self.port is None:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("newsd serve did not report 'listening on ...' (exit %r)\n"
                                 "stdout: %s\nstderr: %s" % (
                                     self.proc.returncode, self._read(self.out_path)[-2000:],
                                     self._read(self.err_path)[-4000:]))
        self.base = "http://127.0.0.1:%d" % self.port
        while wait_ready and self._starting():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                if self.proc.poll() is None:  # not left running behind the failure
                    self.proc.kill()
                    self.proc.wait()
                raise AssertionError("newsd serve's index was not ready in time\nstderr: %s"
                                     % self._read(self.err_path)[-4000:])
            time.sleep(0.05)

    def _starting(self):
        """True while /healthz says the search index is still being built."""
        try:
            r = requests.get(self.base + "/healthz", timeout=HTTP_TIMEOUT)
            return r.status_code == 503 and r.json().get("status") == "starting"
        except (requests.RequestException, ValueError):
            return False

    @staticmethod
    def _read(path):
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def stderr(self):
        return self._read(self.err_path)

    def wait_log(self, pattern, n=1, timeout=None):
        """Wait until stderr holds n lines matching pattern (a regex); its
        text. For events the server logs (an access line follows the answer;
        a test delay's start shows a request being run), instead of a sleep."""
        deadline = time.monotonic() + (timeout or HTTP_TIMEOUT)
        rx = re.compile(pattern, re.M)
        while True:
            text = self.stderr()
            if len(rx.findall(text)) >= n:
                return text
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise AssertionError("newsd logged %d of %d lines matching %r\n%s" % (
                    len(rx.findall(text)), n, pattern, text[-3000:]))
            time.sleep(0.02)

    def stop(self):
        """SIGTERM; returns a list of problems (empty when it exited 0, cleanly)."""
        problems = []
        if self.proc.poll() is not None:
            problems.append("newsd serve died during the tests (exit %d)" % self.proc.returncode)
        else:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30 * SLOW)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                problems.append("newsd serve did not exit within %ds of SIGTERM" % (30 * SLOW))
            if self.proc.returncode != 0:
                problems.append("newsd serve exited %d on SIGTERM (contract: 0)"
                                % self.proc.returncode)
        err = self.stderr()
        found = sanitizer_findings(err)
        if found:
            problems.append("sanitizer reports in newsd serve stderr:\n" + "\n".join(found[:20]))
        if problems:
            problems.append("stderr tail:\n" + err[-4000:])
        for p in (self.out_path, self.err_path):
            try:
                os.unlink(p)
            except OSError:
                pass
        return problems


DEFAULT = object()


# newsd closes a keep-alive connection idle for 30 s (src/http/server.c). A
# client that sends on a pooled connection just as the server closes it gets
# "Remote end closed connection without response": the race every HTTP/1.1
# client has, which a loaded ASan run hit once (a session idle about 30 s
# while another test's server ran). A careful client does not reuse a
# connection near the server's idle timeout: these start a fresh one after
# half of it. A drop on a fresh connection still fails the test.
KEEPALIVE_REUSE_S = 15


class Client:
    def __init__(self, base, key):
        self.base, self.key = base, key
        self.session = requests.Session()
        self.last_used = time.monotonic()

    def request(self, method, path, params=None, key=DEFAULT, headers=None, fresh=False,
                **kw):
        h = {}
        key = self.key if key is DEFAULT else key
        if key is not None:
            h["X-Api-Key"] = key
        h.update(headers or {})
        if not fresh and time.monotonic() - self.last_used > KEEPALIVE_REUSE_S:
            self.session.close()  # its pool is dropped; the next request connects anew
        send = requests.request if fresh else self.session.request
        try:
            return send(method, self.base + path, params=params, headers=h,
                        timeout=HTTP_TIMEOUT, allow_redirects=False, **kw)
        finally:
            self.last_used = time.monotonic()

    def get(self, path, params=None, **kw):
        return self.request("GET", path, params, **kw)

    def raw(self, request_bytes):
        """Send bytes as they are; return (status, headers dict lower-cased, body)."""
        host, port = self.base[len("http://"):].split(":")
        with socket.create_connection((host, int(port)), timeout=HTTP_TIMEOUT) as s:
            s.sendall(request_bytes)
            chunks = []
            while True:
                c = s.recv(65536)
                if not c:
                    break
                chunks.append(c)
        data = b"".join(chunks)
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ")[1])
        headers = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = dechunk(body)
        return status, headers, body

    def raw_get(self, target, headers=()):
        req = "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n" % (
            target, self.base[len("http://"):])
        for k, v in headers:
            req += "%s: %s\r\n" % (k, v)
        return self.raw((req + "\r\n").encode("utf-8"))


def dechunk(b):
    out = b""
    while b:
        size, _, rest = b.partition(b"\r\n")
        n = int(size.split(b";")[0], 16)
        if n == 0:
            break
        out += rest[:n]
        b = rest[n + 2:]
    return out


# ---- response checks -------------------------------------------------------------
def _no_dups(pairs):
    keys = [k for k, _ in pairs]
    assert len(keys) == len(set(keys)), "duplicate JSON keys: %r" % keys
    return dict(pairs)


def parse_json(raw):
    """Parse a body (bytes): UTF-8, strict JSON, no duplicate keys. dicts keep
    the document's key order, which the checks below rely on."""
    return json.loads(raw.decode("utf-8"), object_pairs_hook=_no_dups)


def assert_compact(raw):
    """No whitespace between tokens (trailing whitespace allowed), non-ASCII
    characters unescaped (only control characters, DEL and U+2028/2029 may
    appear as \\u escapes)."""
    text = raw.decode("utf-8").rstrip(" \t\r\n")
    i, n, in_str = 0, len(text), False
    while i < n:
        c = text[i]
        if in_str:
            if c == "\\":
                if text[i + 1] == "u":
                    cp = int(text[i + 2:i + 6], 16)
                    assert cp < 0x20 or cp == 0x7F or cp in (0x2028, 0x2029), \
                        "needless \\u escape %s at %d" % (text[i:i + 6], i)
                    i += 6
                    continue
                i += 2
                continue
            if c == '"':
                in_str = False
        else:
            assert c not in " \t\r\n", "whitespace outside strings at %d: %r" % (
                i, text[max(0, i - 30):i + 30])
            if c == '"':
                in_str = True
        i += 1


def assert_common_headers(r):
    assert r.headers.get("Access-Control-Allow-Origin") == "*", \
        "missing CORS header on %s %s" % (r.status_code, r.url)


def ok(r):
    """A success response: 200, JSON content type, status ok, no error keys."""
    assert r.status_code == 200, "%s %s: %s" % (r.status_code, r.url, r.text[:500])
    assert_common_headers(r)
    ct = r.headers.get("Content-Type", "").replace(" ", "").lower()
    assert ct == "application/json;charset=utf-8", r.headers.get("Content-Type")
    b = parse_json(r.content)
    assert b.get("status") == "ok", b
    assert "code" not in b and "message" not in b, "error keys on a success: %r" % list(b)
    return b


def same_everything(bases, key, reqs):
    """Each request of reqs (query parameters) to /v2/everything of every
    server in bases: a success with the same body, byte for byte, from
    each. Returns how many of them found articles."""
    found = 0
    for params in reqs:
        bodies = []
        for base in bases:
            r = requests.get(base + "/v2/everything", params=params,
                             headers={"X-Api-Key": key}, timeout=30)
            ok(r)
            bodies.append(r.content)
        assert all(b == bodies[0] for b in bodies), params
        found += b'"totalResults":0,' not in bodies[0]
    return found


def articles_ok(r):
    b = ok(r)
    assert list(b) == ["status", "totalResults", "articles"], list(b)
    assert isinstance(b["totalResults"], int) and b["totalResults"] >= 0
    for a in b["articles"]:
        assert list(a) == ARTICLE_KEYS, list(a)
        assert list(a["source"]) == ["id", "name"], list(a["source"])
        assert PUBLISHED.fullmatch(a["publishedAt"]), a["publishedAt"]
    return b


def total(c, params):
    """/v2/everything's totalResults for params."""
    return articles_ok(c.get("/v2/everything", dict(params, pageSize=1)))["totalResults"]


def wait_total(c, params, want, timeout=30 * SLOW, why=None):
    """Wait until /v2/everything's totalResults for params is want: for what
    the server does in the background (its retention sweep, its follower
    indexing an import larger than read-your-writes waits for), never a
    time the test asserts. why: a callable giving more for the failure's
    message (the server's log)."""
    deadline = time.monotonic() + timeout
    got = None
    while time.monotonic() < deadline:
        got = total(c, params)
        if got == want:
            return got
        time.sleep(0.1)
    raise AssertionError("%r: totalResults %r, want %r\n%s" % (params, got, want,
                                                               why() if why else ""))


def sources_ok(r):
    b = ok(r)
    assert list(b) == ["status", "sources"], list(b)
    for s in b["sources"]:
        assert list(s) == SOURCE_KEYS, list(s)
    return b


def err(r, status, code, message=None):
    """An error response: the envelope, alone, with the expected code."""
    assert r.status_code == status, "want %d %s, got %d: %s" % (
        status, code, r.status_code, r.text[:500])
    assert_common_headers(r)
    ct = r.headers.get("Content-Type", "").replace(" ", "").lower()
    assert ct == "application/json;charset=utf-8", r.headers.get("Content-Type")
    b = parse_json(r.content)
    assert list(b) == ["status", "code", "message"], list(b)
    assert b["status"] == "error"
    assert b["code"] == code, b
    assert isinstance(b["message"], str) and b["message"], b
    if message is not None:
        assert b["message"] == message, b["message"]
    return b


def urls(body):
    return [a["url"] for a in body["articles"]]
