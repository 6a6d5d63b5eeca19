"""`make install` into a temporary DESTDIR gives a working tree: the
installed binary runs, serves the installed sample with the installed
config, and the paths inside the unit and the config follow PREFIX.
(Runs with the release build only: it installs build/newsd.)"""
import re
import shutil
import subprocess

import pytest
import requests

import harness
from harness import ASAN, HTTP_TIMEOUT, REPO, Server, clean_env

pytestmark = pytest.mark.by_design(ASAN, reason="installs the release build")

HARDENING = ["NoNewPrivileges=yes", "ProtectSystem=strict", "PrivateTmp=yes",
             "StateDirectory=newsd", "DynamicUser=yes", "ProtectHome=yes",
             "RestrictAddressFamilies=", "CapabilityBoundingSet=", "SystemCallFilter="]


def make_install(dest, prefix):
    r = subprocess.run(["make", "--no-print-directory", "-C", REPO, "install",
                        "DESTDIR=" + str(dest), "PREFIX=" + prefix],
                       capture_output=True, text=True, timeout=600, env=clean_env())
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return r


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    dest = tmp_path_factory.mktemp("destdir")
    make_install(dest, "/usr")
    return dest


def test_install_lays_out_the_tree(tree):
    for rel, mode in [("usr/bin/newsd", 0o755), ("usr/share/man/man1/newsd.1", 0o644),
                      ("usr/lib/systemd/system/newsd.service", 0o644),
                      ("etc/newsd/newsd.conf", 0o644),
                      ("usr/share/newsd/sample/articles.jsonl", 0o644),
                      ("usr/share/newsd/sample/sources.json", 0o644),
                      ("usr/share/newsd/openapi.yaml", 0o644)]:
        p = tree / rel
        assert p.is_file(), rel
        assert p.stat().st_mode & 0o777 == mode, (rel, oct(p.stat().st_mode))
    with open(tree / "usr/lib/systemd/system/newsd.service") as f:
        unit = f.read()
    assert not re.search(r"@[A-Z]+@", unit), "unsubstituted @VAR@ in the unit"
    exec_start = re.search(r"(?m)^ExecStart=(.*)$", unit).group(1).split()
    assert exec_start[:2] == ["/usr/bin/newsd", "serve"]
    assert exec_start[exec_start.index("--config") + 1] == "/etc/newsd/newsd.conf"
    assert exec_start[exec_start.index("--store") + 1] == "/var/lib/newsd"
    for directive in HARDENING:
        assert re.search(r"(?m)^" + re.escape(directive), unit), directive
    with open(tree / "usr/share/man/man1/newsd.1") as f:
        assert f.read().startswith(".\\\"")


def test_installed_binary_runs(tree):
    binary = str(tree / "usr/bin/newsd")
    r = subprocess.run([binary, "--help"], capture_output=True, text=True, env=clean_env())
    assert r.returncode == 0 and "serve" in r.stdout, r
    r = subprocess.run([binary, "serve", "--help"], capture_output=True, text=True,
                       env=clean_env())
    assert r.returncode == 0 and "--metrics-listen" in r.stdout, r


def test_installed_tree_serves_the_sample(tree, tmp_path):
    binary = str(tree / "usr/bin/newsd")
    sample = tree / "usr/share/newsd/sample"
    store = str(tmp_path / "store")

    def run(*args):
        r = subprocess.run([binary] + list(args), capture_output=True, text=True,
                           env=clean_env(), timeout=300)
        assert r.returncode == 0, (args, r.stderr)
        return r.stdout

    run("sources", "import", "--create", "--store", store, str(sample / "sources.json"))
    run("import", "--create", "--store", store, str(sample / "articles.jsonl"))
    key = run("keys", "create", "--create", "--store", store).strip()
    with open(sample / "articles.jsonl", encoding="utf-8") as f:
        lines = sum(1 for line in f if line.strip())
    saved = harness.BIN
    harness.BIN = binary  # Server starts harness.BIN
    try:
        srv = Server(store, args=["--config", str(tree / "etc/newsd/newsd.conf")])
    finally:
        harness.BIN = saved
    try:
        h = requests.get(srv.base + "/healthz", timeout=HTTP_TIMEOUT)
        assert h.status_code == 200 and h.json()["status"] == "ok"
        assert 0 < h.json()["articles"] <= lines
        r = requests.get(srv.base + "/v2/everything", params={"q": "the", "pageSize": "5"},
                         headers={"X-Api-Key": key}, timeout=HTTP_TIMEOUT)
        assert r.status_code == 200 and len(r.json()["articles"]) == 5
        assert requests.get(srv.base + "/", timeout=HTTP_TIMEOUT).status_code == 200
    finally:
        problems = srv.stop()
    assert not problems, "\n".join(problems)


def test_prefix_and_existing_config(tmp_path):
    dest = tmp_path / "dest"
    conf = dest / "etc/newsd/newsd.conf"
    conf.parent.mkdir(parents=True)
    conf.write_text("[server]\nthreads = 2\n")
    r = make_install(dest, "/opt/newsd")
    assert (dest / "opt/newsd/bin/newsd").is_file()
    assert (dest / "opt/newsd/share/man/man1/newsd.1").is_file()
    with open(dest / "opt/newsd/lib/systemd/system/newsd.service") as f:
        assert "ExecStart=/opt/newsd/bin/newsd serve" in f.read()
    # an administrator's config is never overwritten
    assert conf.read_text() == "[server]\nthreads = 2\n"
    assert "keeping" in r.stdout
    assert not (tmp_path / "opt").exists()  # everything went under DESTDIR
    shutil.rmtree(dest)
