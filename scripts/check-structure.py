#!/usr/bin/python3
"""The structure rules of docs/architecture.md that a machine can check:
`make check` runs this (make structure-check, part of make docs-check).

    scripts/check-structure.py [ROOT]      (default: this checkout)

Each rule is one function that takes the checkout's root and returns its
violations as "path:line: what" lines; RULES lists them. To add a rule,
write one more function with a docstring saying the rule and add it to
RULES. Every violation is printed and the exit status is 1 when there is
any."""
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def sources(root, top="src"):
    """The C files under root/top, as paths relative to root, sorted."""
    found = []
    for d, _, files in os.walk(os.path.join(root, top)):
        for f in files:
            if f.endswith((".c", ".h")):
                found.append(os.path.relpath(os.path.join(d, f), root))
    return sorted(found)


def includes(root, path):
    """(line number, '<' or '"', header) of each #include of the file."""
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield n, m.group(1), m.group(2)


# ---- the rules -------------------------------------------------------------


def backend_headers(root):
    """A store backend's headers (store/sqlite/*.h, store/pg/*.h) are
    included only inside that backend and by the store's root (the files
    directly in src/store/): everyone else reads the store through
    store/store.h and store/journal.h."""
    out = []
    for path in sources(root):
        d = os.path.dirname(path)
        for n, _, header in includes(root, path):
            m = re.match(r"store/(sqlite|pg)/[^/]+\.h$", header)
            if m and d not in ("src/store", "src/store/" + m.group(1)):
                out.append("%s:%d: includes %s, a header of the store's %s backend "
                           "(only that backend and src/store/*.[ch] may)"
                           % (path, n, header, m.group(1)))
    return out


def database_clients(root):
    """Only the store talks to a database: sqlite3.h and libpq-fe.h are
    included in src/store/ alone (and by src/text/, whose tokenizer the
    store registers with SQLite's FTS5), so no SQLite or PostgreSQL handle
    crosses into another module (the fts5 index asks the journal)."""
    allowed = ("src/store/", "src/text/")
    out = []
    for path in sources(root):
        if path.startswith(allowed):
            continue
        for n, _, header in includes(root, path):
            if header in ("sqlite3.h", "sqlite3ext.h", "libpq-fe.h"):
                out.append("%s:%d: includes %s: only src/store/ talks to a database"
                           % (path, n, header))
    return out


RULES = [backend_headers, database_clients]


def main(argv):
    root = os.path.abspath(argv[1]) if len(argv) > 1 else ROOT
    failed = 0
    for rule in RULES:
        for v in rule(root):
            print(v)
            failed += 1
    if failed:
        print("check-structure: %d violation(s); the rules are the docstrings of "
              "scripts/check-structure.py" % failed, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
