#!/usr/bin/env python3
"""The rooms of ingest/ and fetch/ keep their shape (docs/architecture.md,
issue 24): run by `make docs-check`, after the release build.

  - push/ includes nothing of ingest/ (webhooks go out through fetch/);
    fetch/ includes nothing of ingest/ or push/ (it is below its users).
  - Each room of ingest/ (feeds, pages, imports) has one header for the
    rest of src/: ingest/ROOM/ROOM.h. Its other headers are private (its
    own files, tests/unit, fuzz/, bench/ may read them).
  - Rooms lean one way: the roof (src/ingest/*.c, ingest.h) includes no
    room; pages includes neither feeds nor imports; feeds and imports do
    not include each other.
  - A room's header (and the roof's, and fetch/'s) declares functions of at
    most three name prefixes (the word before the first '_': feed_parse,
    crawl_new, opml_write).
  - No two files of a room (or of the roof, or of fetch/) call each other,
    directly or round a circle: read from the symbols of the release
    objects (build/release/src/...), when they are built.

    scripts/check-rooms.py [BUILD_DIR]      (default build/release)"""
import glob
import os
import re
import subprocess
import sys

ROOMS = ("feeds", "pages", "imports")
# What each part of ingest/ may include of the others.
MAY_INCLUDE = {
    "roof": set(),
    "pages": {"roof"},
    "feeds": {"roof", "pages"},
    "imports": {"roof", "pages"},
}
MAX_PREFIXES = 3
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
DECL = re.compile(r"^[A-Za-z_][\w \t\*]*?\b([a-z][a-z0-9]*)_\w*\s*\(", re.M)


def sources(root):
    for dirpath, _, names in os.walk(root):
        for n in sorted(names):
            if n.endswith((".c", ".h")):
                yield os.path.join(dirpath, n)


def includes(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return INCLUDE.findall(f.read())


def part_of(path):
    """roof, a room's name, or None for a file outside ingest/."""
    rel = os.path.relpath(path, "src")
    bits = rel.split(os.sep)
    if bits[0] != "ingest":
        return None
    if len(bits) > 2 and bits[1] in ROOMS:
        return bits[1]
    return "roof"


def part_of_include(inc):
    bits = inc.split("/")
    if bits[0] != "ingest":
        return None
    if len(bits) > 2 and bits[1] in ROOMS:
        return bits[1]
    return "roof"


def check_includes(problems):
    for path in sources("src"):
        part = part_of(path)
        top = os.path.relpath(path, "src").split(os.sep)[0]
        for inc in includes(path):
            if top == "push" and inc.startswith("ingest/"):
                problems.append(f"{path}: push/ includes {inc} (webhooks use fetch/fetch.h)")
            if top == "fetch" and inc.split("/")[0] in ("ingest", "push"):
                problems.append(f"{path}: fetch/ includes {inc}: fetch is below its users")
            target = part_of_include(inc)
            if target in ROOMS and part != target:
                public = f"ingest/{target}/{target}.h"
                if inc != public:
                    problems.append(f"{path}: includes {inc}, private to ingest/{target} "
                                    f"(the room's header is {public})")
            if part is not None and target is not None and target != part and \
                    target not in MAY_INCLUDE[part]:
                problems.append(f"{path}: ingest {part} includes {inc} of ingest {target}: "
                                f"{part} may include only {sorted(MAY_INCLUDE[part]) or 'no room'}")


def check_headers(problems):
    headers = [f"src/ingest/{room}/{room}.h" for room in ROOMS]
    for header in headers + ["src/ingest/ingest.h", "src/fetch/fetch.h"]:
        if not os.path.exists(header):
            problems.append(f"{header}: missing: each room has one header")
            continue
        with open(header, encoding="utf-8") as f:
            text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
        prefixes = sorted(set(DECL.findall(text)))
        if len(prefixes) > MAX_PREFIXES:
            problems.append(f"{header}: functions of {len(prefixes)} name prefixes "
                            f"({', '.join(prefixes)}); at most {MAX_PREFIXES}")


def symbols(obj):
    out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "TDBR":
            defined.add(f[2])
        elif len(f) == 2 and f[0] == "U":
            used.add(f[1])
    return defined, used


def circle(graph):
    """A list of nodes round a circle of graph, or None."""
    state = {}
    for start in sorted(graph):
        if state.get(start):
            continue
        stack = [(start, iter(sorted(graph[start])))]
        path = [start]
        state[start] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
                path.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif not state.get(nxt):
                state[nxt] = 1
                stack.append((nxt, iter(sorted(graph[nxt]))))
                path.append(nxt)
    return None


def check_calls(problems, build):
    dirs = ["src/fetch", "src/ingest"] + [f"src/ingest/{r}" for r in ROOMS]
    checked = 0
    for d in dirs:
        objs = {}
        for c in sorted(glob.glob(f"{d}/*.c")):
            obj = os.path.join(build, c[:-2] + ".o")
            if os.path.exists(obj):
                objs[os.path.basename(c)] = symbols(obj)
        checked += len(objs)
        graph = {a: {b for b in objs if b != a and objs[a][1] & objs[b][0]} for a in objs}
        loop = circle(graph)
        if loop:
            problems.append(f"{d}: files call each other round a circle: {' -> '.join(loop)}")
    return checked


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build/release"
    problems = []
    check_includes(problems)
    check_headers(problems)
    checked = check_calls(problems, build)
    for p in problems:
        print(f"check-rooms: {p}", file=sys.stderr)
    if problems:
        return 1
    note = f"{checked} objects' calls" if checked else f"no objects in {build}: calls not checked"
    print(f"check-rooms: ingest's rooms and fetch/ keep their shape ({note})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
