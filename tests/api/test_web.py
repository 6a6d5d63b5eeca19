"""The search page's files at /, /app.js and /style.css: what is served is
what web/ holds, with the types and the Content-Security-Policy that keep it
self-contained, and the files themselves name nothing outside the server.
(The page's behaviour in a browser is tests/web/, `make web-test`.)"""
import os
import re

import pytest

from harness import REPO, err

WEB = os.path.join(REPO, "web")
FILES = [("/", "index.html", "text/html; charset=utf-8"),
         ("/app.js", "app.js", "text/javascript; charset=utf-8"),
         ("/style.css", "style.css", "text/css; charset=utf-8")]


def read(name):
    with open(os.path.join(WEB, name), "rb") as f:
        return f.read()


@pytest.mark.parametrize("path,name,ctype", FILES)
def test_served_files_are_the_ones_in_web(api, path, name, ctype):
    r = api.get(path, key=None)
    assert r.status_code == 200
    assert r.content == read(name)
    assert r.headers["Content-Type"] == ctype
    csp = r.headers["Content-Security-Policy"]
    assert csp.startswith("default-src 'self'; img-src * data:"), csp
    assert "script-src" not in csp and "unsafe" not in csp  # default-src 'self' covers scripts
    assert r.headers["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize("path,name,ctype", FILES)
def test_page_files_take_head_and_refuse_other_methods(api, path, name, ctype):
    h = api.request("HEAD", path, key=None, headers={"Accept-Encoding": "identity"})
    assert h.status_code == 200 and h.content == b""
    assert int(h.headers["Content-Length"]) == len(read(name))
    err(api.request("PUT", path, key=None), 405, "methodNotAllowed")


def test_page_with_a_query_string_and_the_newsapi_prefix(api):
    r = api.get("/?endpoint=everything&q=plinthor", key=None)
    assert r.status_code == 200 and r.content == read("index.html")
    err(api.get("/index.htm", key=None), 404, "routeNotFound")


def test_gzip_when_asked(api):
    r = api.get("/app.js", key=None, headers={"Accept-Encoding": "gzip"})
    assert r.headers.get("Content-Encoding") == "gzip"
    assert r.content == read("app.js")  # requests decodes it


def test_the_page_loads_only_its_own_files():
    html = read("index.html").decode("utf-8")
    refs = re.findall(r'\b(?:src|href)="([^"]*)"', html)
    assert "app.js" in refs and "style.css" in refs
    for ref in refs:
        assert not re.match(r"^[a-z]+:", ref) or ref.startswith("data:"), ref
        assert not ref.startswith("//"), ref
    # no inline script or style: the CSP would block them
    assert re.search(r"<script(?![^>]*\bsrc=)", html) is None
    assert "<style" not in html and " style=" not in html
    css = read("style.css").decode("utf-8")
    assert "url(" not in css and "@import" not in css
    js = read("app.js").decode("utf-8")
    assert re.search(r"""["'`]https?://""", js) is None, "absolute URL in app.js"
    assert "innerHTML" not in js and "eval(" not in js


def test_every_control_has_a_label():
    html = read("index.html").decode("utf-8")
    ids = re.findall(r'<(?:input|select)\b[^>]*\bid="([^"]+)"', html)
    labelled = set(re.findall(r'<label for="([^"]+)"', html))
    assert ids and set(ids) <= labelled, set(ids) - labelled
