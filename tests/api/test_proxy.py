"""Running behind a reverse proxy (docs/operations.md): every serve setting
from the config file alone, X-Forwarded-For believed only from
trusted_proxies, /metrics limited by metrics_allow_networks, and the
shipped nginx example (dist/nginx-newsd.conf) run as it is in front of a
real newsd over TLS on loopback."""
import json
import os
import re
import shutil
import signal
import subprocess
import time

import pytest
import requests

from harness import ASAN, BIN, HTTP_TIMEOUT, REPO, Server, clean_env, cli_ok

LISTENING = re.compile(r" on http://[^:]+:(\d+)")  # "listening on ...", "metrics on ..."


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    d = tmp_path_factory.mktemp("proxy") / "store"
    cli_ok("import", "--create", "--store", str(d), os.path.join(REPO, "tests", "data", "api",
                                                       "handmade.jsonl"))
    key = cli_ok("keys", "create", "--create", "--store", str(d), "--name", "proxy").out.strip()
    return d, key


def conf(tmp_path, text, name="newsd.conf"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def access_lines(srv):
    time.sleep(0.3)  # the log line follows the answer
    return [json.loads(line) for line in srv.stderr().splitlines()
            if line.startswith("{") and '"msg":"http"' in line]


def test_the_config_file_alone_sets_every_serve_setting(store, tmp_path):
    """No flag but --config: the store, the metrics listener, the crawler,
    the log format and the access log come from [server]."""
    d, key = store
    path = conf(tmp_path, "[server]\nlisten = 127.0.0.1:0\nstore = %s\nmetrics_listen = "
                "127.0.0.1:0\ncrawl = false\nlog_format = json\naccess_log = true\n" % d)
    p = subprocess.Popen([BIN, "serve", "--config", path], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=clean_env())
    try:
        # serve prints its two addresses once both listen (or exits).
        lines = [p.stdout.readline() for _ in range(2)]
        ports = [int(m.group(1)) for m in map(LISTENING.search, lines) if m]
        assert len(ports) == 2, (lines, p.poll())
        base, metrics = "http://127.0.0.1:%d" % ports[0], "http://127.0.0.1:%d" % ports[1]
        r = requests.get(base + "/v2/everything", params={"q": "plinthor"},
                         headers={"X-Api-Key": key}, timeout=HTTP_TIMEOUT)
        assert r.status_code == 200 and r.json()["totalResults"] > 0
        # /metrics lives on the metrics listener only.
        assert requests.get(base + "/metrics", timeout=HTTP_TIMEOUT).status_code == 404
        m = requests.get(metrics + "/metrics", timeout=HTTP_TIMEOUT).text
        # crawl = false: no crawler polled anything.
        assert re.search(r"^newsd_feeds_polled_total 0$", m, re.M), m[:300]
    finally:
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=30)
    lines = [json.loads(line) for line in err.splitlines() if line.strip()]
    assert any(o.get("msg") == "http" and o["status"] == 200 for o in lines), err[-1000:]


def test_x_forwarded_for_is_believed_only_from_trusted_proxies(store, tmp_path):
    d, key = store
    trusting = conf(tmp_path, "[server]\ntrusted_proxies = 127.0.0.1\n"
                    "metrics_allow_networks = 10.0.0.0/8\n", "trusting.conf")
    srv = Server(d, args=["--config", trusting, "--log-format", "json"])
    try:
        base = srv.base
        # Through a trusted peer: the rightmost address no trusted proxy
        # holds is the client, whatever a client wrote to the left of it.
        h = {"X-Api-Key": key, "X-Forwarded-For": "1.2.3.4, 10.1.2.3"}
        assert requests.get(base + "/v2/everything", params={"q": "plinthor"}, headers=h,
                            timeout=HTTP_TIMEOUT).status_code == 200
        # /metrics: 10.0.0.0/8 only.
        r = requests.get(base + "/metrics", timeout=HTTP_TIMEOUT)
        assert r.status_code == 403 and r.json()["code"] == "forbidden", r.text[:200]
        r = requests.get(base + "/metrics", headers={"X-Forwarded-For": "10.9.9.9"},
                         timeout=HTTP_TIMEOUT)
        assert r.status_code == 200, r.text[:200]
        lines = access_lines(srv)
    finally:
        problems = srv.stop()
    assert not problems, problems
    clients = [o["client"] for o in lines if o["target"].startswith(("/v2/", "/metrics"))]
    assert clients[:3] == ["10.1.2.3", "127.0.0.1", "10.9.9.9"], clients

    untrusting = conf(tmp_path, "[server]\nmetrics_allow_networks = 10.0.0.0/8\n", "plain.conf")
    srv = Server(d, args=["--config", untrusting, "--log-format", "json"])
    try:
        # Not from a trusted proxy: the header is a client's word, ignored.
        r = requests.get(srv.base + "/metrics", headers={"X-Forwarded-For": "10.9.9.9"},
                         timeout=HTTP_TIMEOUT)
        assert r.status_code == 403, r.text[:200]
        lines = access_lines(srv)
    finally:
        problems = srv.stop()
    assert not problems, problems
    assert [o["client"] for o in lines if o["target"] == "/metrics"] == ["127.0.0.1"]


def free_port():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.mark.by_design(ASAN or os.environ.get("NEWSD_INDEX") == "fts5",
                       reason="one run is enough: nginx is what is tested here")
def test_the_nginx_example_serves_newsd_over_tls(store, tmp_path):
    """dist/nginx-newsd.conf, with only its addresses and paths changed for a
    test: HTTPS answers from newsd, newsd logs the client's own address (not
    nginx's), and the key is in neither log."""
    d, key = store
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    assert os.access(nginx, os.X_OK), "nginx missing: scripts/install-deps.sh --test installs it"
    newsd_conf = conf(tmp_path, "[server]\ntrusted_proxies = 127.0.0.1\n")
    srv = Server(d, args=["--config", newsd_conf, "--log-format", "json"])
    ngx = None
    try:
        cert, keyfile = tmp_path / "cert.pem", tmp_path / "key.pem"
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                        "-subj", "/CN=news.example.org", "-keyout", str(keyfile), "-out",
                        str(cert)], check=True, capture_output=True)
        port = free_port()
        example = open(os.path.join(REPO, "dist", "nginx-newsd.conf")).read()
        for old, new in [("127.0.0.1:8080", "127.0.0.1:%d" % srv.port),
                         ("listen 443 ssl http2;", "listen 127.0.0.1:%d ssl http2;" % port),
                         ("/etc/ssl/newsd/fullchain.pem", str(cert)),
                         ("/etc/ssl/newsd/privkey.pem", str(keyfile)),
                         ("/var/log/nginx/newsd.access.log", str(tmp_path / "access.log")),
                         ("/var/log/nginx/newsd.error.log", str(tmp_path / "error.log"))]:
            assert old in example, old
            example = example.replace(old, new)
        (tmp_path / "site.conf").write_text(example)
        (tmp_path / "tmp").mkdir()
        (tmp_path / "nginx.conf").write_text(
            "daemon off;\nworker_processes 1;\nuser root;\npid %s/nginx.pid;\n"
            "error_log %s/main-error.log warn;\nevents { worker_connections 64; }\n"
            "http {\n  client_body_temp_path %s/tmp;\n  proxy_temp_path %s/tmp;\n"
            "  fastcgi_temp_path %s/tmp;\n  uwsgi_temp_path %s/tmp;\n  scgi_temp_path %s/tmp;\n"
            "  access_log off;\n  include %s/site.conf;\n}\n" % ((tmp_path,) * 7 + (tmp_path,)))
        ngx = subprocess.Popen([nginx, "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        url = "https://news.example.org:%d/v2/everything?q=plinthor&apiKey=%s" % (port, key)
        # From another loopback address than nginx's own, so that the
        # client newsd logs can only have come from X-Forwarded-For.
        curl = ["curl", "-sk", "--fail-early", "--interface", "127.0.0.5", "--resolve",
                "news.example.org:%d:127.0.0.1" % port]
        # Wait for nginx with /livez, not with the searches: curl's exit status
        # is the last transfer's, so a first search refused while nginx was
        # still starting would pass unnoticed.
        livez = "https://news.example.org:%d/livez" % port
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            ready = subprocess.run(curl + ["-f", livez], capture_output=True, text=True)
            if ready.returncode == 0:
                break
            time.sleep(0.2)
        assert ready.returncode == 0, (ready, ngx.poll())
        out = subprocess.run(curl + [url, url], capture_output=True, text=True)
        assert out.returncode == 0, (out, ngx.poll())
        # /metrics stays private: the example does not pass it on.
        metrics = subprocess.run(curl + ["-o", "/dev/null", "-w", "%{http_code}",
                                         "https://news.example.org:%d/metrics" % port],
                                 capture_output=True, text=True)
        assert metrics.stdout == "404", metrics
        bodies = out.stdout.replace("}{", "}\n{").splitlines()
        assert len(bodies) == 2 and all(json.loads(b)["status"] == "ok" for b in bodies), \
            out.stdout[:300]
        lines = access_lines(srv)
    finally:
        if ngx:
            ngx.send_signal(signal.SIGQUIT)
            try:
                ngx.wait(timeout=10)
            except subprocess.TimeoutExpired:
                ngx.kill()
        problems = srv.stop()
    assert not problems, problems
    assert not [o for o in lines if o["target"].startswith("/metrics")], lines
    searches = [o for o in lines if o["target"].startswith("/v2/everything")]
    assert len(searches) == 2 and all(o["client"] == "127.0.0.5" for o in searches), searches
    assert all(o["key"] for o in searches)
    nginx_log = (tmp_path / "access.log").read_text()
    assert "127.0.0.5" in nginx_log and "apiKey=***" in nginx_log, nginx_log
    assert key not in nginx_log and key not in srv_log_text(lines)


def srv_log_text(lines):
    return "\n".join(json.dumps(o) for o in lines)
