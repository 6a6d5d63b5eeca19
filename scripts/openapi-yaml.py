#!/usr/bin/python3
"""docs/openapi.json is the source of the OpenAPI document; docs/openapi.yaml
is its YAML rendering, written by this script (stdlib only):

    scripts/openapi-yaml.py            rewrite docs/openapi.yaml
    scripts/openapi-yaml.py --check    exit 1 if docs/openapi.yaml is stale

Emits the YAML 1.2 subset JSON needs: block mappings and sequences, plain
scalars where they cannot be read as anything else, literal blocks for
multi-line text, and JSON-style double-quoted strings otherwise (a JSON
string is a valid YAML double-quoted scalar)."""
import json
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SRC = os.path.join(ROOT, "docs", "openapi.json")
DST = os.path.join(ROOT, "docs", "openapi.yaml")

PLAIN = re.compile(r"[A-Za-z_/$][A-Za-z0-9_./$-]*")
RESERVED = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"}


def scalar(v):
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, (int, float)):
        return json.dumps(v)
    if PLAIN.fullmatch(v) and v.lower() not in RESERVED:
        return v
    return json.dumps(v, ensure_ascii=False)


def literal_ok(s):
    """A literal block keeps s exactly (with |-): several lines, no final
    newline, no trailing blanks, no leading blank on the first line, and
    printable characters only."""
    if "\n" not in s or s.endswith("\n") or s.startswith((" ", "\t")):
        return False
    return all(line == line.rstrip(" \t") and line.isprintable() for line in s.split("\n"))


def emit(v, indent, out):
    pad = " " * indent
    if isinstance(v, dict):
        for k, x in v.items():
            key = scalar(k)
            if isinstance(x, (dict, list)) and x:
                out.append("%s%s:\n" % (pad, key))
                emit(x, indent + 2, out)
            elif isinstance(x, str) and literal_ok(x):
                out.append("%s%s: |-\n" % (pad, key))
                for line in x.split("\n"):
                    out.append(("%s  %s\n" % (pad, line)) if line else "\n")
            else:
                out.append("%s%s: %s\n" % (pad, key, empty_or_scalar(x)))
    elif isinstance(v, list):
        for x in v:
            if isinstance(x, dict) and x:
                sub = []
                emit(x, indent + 2, sub)
                # The first key goes on the dash's line.
                sub[0] = pad + "- " + sub[0][indent + 2:]
                out.extend(sub)
            elif isinstance(x, list) and x:
                out.append("%s-\n" % pad)
                emit(x, indent + 2, out)
            else:
                out.append("%s- %s\n" % (pad, empty_or_scalar(x)))


def empty_or_scalar(x):
    if isinstance(x, dict):
        return "{}"
    if isinstance(x, list):
        return "[]"
    return scalar(x)


def render():
    with open(SRC, encoding="utf-8") as f:
        doc = json.load(f)
    out = ["# Generated from docs/openapi.json by scripts/openapi-yaml.py; edit the JSON.\n"]
    emit(doc, 0, out)
    return "".join(out)


def main(argv):
    text = render()
    if "--check" in argv:
        try:
            with open(DST, encoding="utf-8") as f:
                current = f.read()
        except OSError:
            current = None
        if current != text:
            sys.exit("docs/openapi.yaml is stale: run scripts/openapi-yaml.py")
        return
    with open(DST, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    main(sys.argv[1:])
