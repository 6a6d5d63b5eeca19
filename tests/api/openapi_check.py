"""Validate real responses against docs/openapi.json, so the document cannot
drift from the code.

`validating()` wraps harness.Client.request for the whole session
(conftest.py): every response the API tests receive is checked against the
operation its method and path select — the status must be documented, the
Content-Type must be one the document lists, documented headers must match
their schemas, and a JSON body must match the schema of that status. A
mismatch fails the test that made the request.

The document's $refs are inlined once (it has no recursive schemas), so
plain jsonschema Draft 2020-12 validators do the work with any jsonschema
version (Debian bookworm has 4.10)."""
import json
import os

import jsonschema

import harness

DOC_PATH = os.path.join(harness.REPO, "docs", "openapi.json")
PREFIXES = ("/https://newsapi.org", "/http://newsapi.org")
JSON_TYPE = "application/json"


def load_doc():
    with open(DOC_PATH, encoding="utf-8") as f:
        return json.load(f)


def inline_refs(node, doc, seen=()):
    """A copy of node with every local $ref replaced by what it points to."""
    if isinstance(node, dict):
        if "$ref" in node:
            ref = node["$ref"]
            assert ref.startswith("#/"), "non-local $ref %s" % ref
            assert ref not in seen, "recursive $ref %s" % ref
            target = doc
            for part in ref[2:].split("/"):
                target = target[part.replace("~1", "/").replace("~0", "~")]
            rest = {k: v for k, v in node.items() if k != "$ref"}
            out = inline_refs(target, doc, seen + (ref,))
            if rest:  # OpenAPI 3.1 allows siblings next to $ref
                out = dict(out, **inline_refs(rest, doc, seen))
            return out
        return {k: inline_refs(v, doc, seen) for k, v in node.items()}
    if isinstance(node, list):
        return [inline_refs(v, doc, seen) for v in node]
    return node


def media_type(value):
    return (value or "").replace(" ", "").lower()


class Checker:
    def __init__(self, doc=None):
        raw = doc or load_doc()
        self.doc = inline_refs(raw, raw)
        self.components = self.doc["components"]["responses"]
        self.checked = 0
        self.seen = set()  # (operation path, method, status) validated so far

    def normalise(self, path):
        path = path.split("?", 1)[0]
        for p in PREFIXES:
            if path == p or path.startswith(p + "/"):
                path = path[len(p):] or "/"
                break
        if len(path) > 1 and path.endswith("/"):
            path = path[:-1]
        return path

    def template_of(self, path):
        """The documented path that path is: itself, or a template whose
        {name} segments stand for one segment each (/v2/alerts/{id})."""
        if path in self.doc["paths"]:
            return path
        parts = path.split("/")
        for t in self.doc["paths"]:
            tparts = t.split("/")
            if "{" in t and len(tparts) == len(parts) and all(
                    a == b or (a.startswith("{") and a.endswith("}") and b)
                    for a, b in zip(tparts, parts)):
                return t
        return path

    def expected(self, method, path, status):
        """(operation key, response object) for a request, or raise."""
        if status == 414:
            return ("*", "*", 414), self.components["UriTooLong"]
        if status == 431:
            return ("*", "*", 431), self.components["HeadersTooLarge"]
        path = self.template_of(self.normalise(path))
        item = self.doc["paths"].get(path)
        if item is None:
            assert status == 404, "%s %s: undocumented path answered %d" % (method, path, status)
            return ("*", "*", 404), self.components["NotFound"]
        op = item.get("get" if method == "HEAD" else method.lower())
        if op is None:
            assert status == 405, "%s %s: undocumented method answered %d" % (method, path, status)
            return ("*", method, 405), self.components["MethodNotAllowed"]
        resp = op["responses"].get(str(status))
        assert resp is not None, "%s %s: status %d is not documented (documented: %s)" % (
            method, path, status, ", ".join(sorted(op["responses"])))
        return (path, "GET", status), resp

    def check(self, method, path, status, headers, body):
        """Validate one response; headers is a case-insensitive mapping,
        body the bytes received (b"" for HEAD)."""
        method = method.upper()
        if method == "OPTIONS":
            return  # CORS preflights are answered by the HTTP layer, not described
        key, resp = self.expected(method, path, status)
        where = "%s %s -> %d" % (method, path, status)
        for name, h in resp.get("headers", {}).items():
            value = headers.get(name)
            if name in ("X-Request-Id", "Access-Control-Allow-Origin"):
                assert value, "%s: header %s missing" % (where, name)
            if value is None:
                continue
            schema = h.get("schema", {})
            v = int(value) if schema.get("type") == "integer" and value.lstrip("-").isdigit() \
                else value
            errs = list(jsonschema.Draft202012Validator(schema).iter_errors(v))
            assert not errs, "%s: header %s=%r: %s" % (where, name, value, errs[0].message)
        content = resp.get("content")
        if not content:
            assert not body, "%s: a body where the document describes none" % where
            return
        ct = media_type(headers.get("Content-Type"))
        types = {media_type(k): v for k, v in content.items()}
        if ct not in types:  # a documented type without parameters covers them all
            ct = ct.split(";", 1)[0]
        assert ct in types, "%s: Content-Type %r, documented: %s" % (
            where, headers.get("Content-Type"), ", ".join(content))
        self.checked += 1
        self.seen.add(key)
        if method == "HEAD" or not ct.startswith(JSON_TYPE):
            return
        doc = json.loads(body.decode("utf-8"))
        validator = jsonschema.Draft202012Validator(types[ct]["schema"])
        errs = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        if errs:
            e = errs[0]
            raise AssertionError("%s: response does not match docs/openapi.json: %s at %s "
                                 "(%d errors)\nbody: %s" % (
                                     where, e.message, "/".join(map(str, e.absolute_path)),
                                     len(errs), body[:500]))

    def check_response(self, method, path, r):
        self.check(method, path, r.status_code, r.headers, r.content)


CHECKER = None


def checker():
    global CHECKER
    if CHECKER is None:
        CHECKER = Checker()
    return CHECKER


def validating():
    """Generator for a session fixture: every harness.Client.request in the
    session is validated against the document."""
    original = harness.Client.request
    c = checker()

    def request(self, method, path, params=None, **kw):
        r = original(self, method, path, params, **kw)
        if not kw.get("stream"):  # a streamed body belongs to the test
            c.check_response(method, path, r)
        return r

    harness.Client.request = request
    try:
        yield c
    finally:
        harness.Client.request = original
