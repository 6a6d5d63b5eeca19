#!/usr/bin/env python3
"""Why newsd's main text misses the development set's snippets
(docs/extraction.md, issue 28): per page of one half whose text finds at
most MAX of its "with" snippets, the snippets found and missed, where
newsd's text sits in the page (the deepest element holding its first and
its last line) and the deepest element holding most missed snippets, each
as a tag.class#id path. The tree is Python's html.parser's, not newsd's:
close enough to tell which container was picked beside which.
Figures only; asserts nothing.

    bench/pages_misses.py DEVSET [OUT] [--half tuning|held-out|all] [--max N]"""
import html.parser
import json
import subprocess
import sys

from pages_devset import unpack
from pages_split import TOOL, half, norm

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
        "source", "track", "wbr"}
SKIP = {"script", "style", "noscript", "template"}


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.parent, self.kids, self.parts = tag, parent, [], []
        a = dict(attrs)
        self.label = tag + "".join("." + c for c in (a.get("class") or "").split()[:2])
        self.label += "#" + a["id"] if a.get("id") else ""
        self.text = ""

    def path(self):
        out, n = [], self
        while n and n.tag != "#root":
            out.append(n.label)
            n = n.parent
        return " > ".join(reversed(out[:6]))


class Tree(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = self.cur = Node("#root", [], None)
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in VOID:
            return
        n = Node(tag, attrs, self.cur)
        self.cur.kids.append(n)
        self.cur = n
        self.skip += tag in SKIP

    def handle_endtag(self, tag):
        n = self.cur
        while n.parent and n.tag != tag:
            n = n.parent
        if n.parent:
            self.skip -= sum(1 for m in self._chain(self.cur, n) if m.tag in SKIP)
            self.cur = n.parent

    @staticmethod
    def _chain(a, b):
        while a is not b:
            yield a
            a = a.parent
        yield b

    def handle_data(self, data):
        if not self.skip:
            self.cur.kids.append(data)


def fill(n):
    """Each node's text, white space folded (post-order without recursion)."""
    stack, order = [n], []
    while stack:
        x = stack.pop()
        order.append(x)
        stack.extend(k for k in x.kids if isinstance(k, Node))
    for x in reversed(order):
        x.text = norm(" ".join(k if isinstance(k, str) else k.text for k in x.kids))


def deepest(root, needles):
    """The deepest node whose text holds the most of needles, and how many."""
    best, best_n, stack = root, -1, [(root, 0)]
    while stack:
        x, depth = stack.pop()
        k = sum(1 for s in needles if s in x.text)
        if k == 0:
            continue
        if k > best_n or (k == best_n and depth > getattr(best, "_d", -1)):
            best, best_n = x, k
            x._d = depth
        stack.extend((c, depth + 1) for c in x.kids if isinstance(c, Node))
    return best, max(best_n, 0)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    opt = dict(zip(sys.argv[1::], sys.argv[2::]))
    which = opt.get("--half", "tuning")
    most = int(opt.get("--max", "0"))
    devset = args[0]
    out = args[1] if len(args) > 1 and args[1] not in ("tuning", "held-out", "all") else "build/pages-split"
    gold = {}
    rows = ["%s\t%s\t%s\n" % r for r in unpack(devset, out, gold)]
    res = subprocess.run([TOOL], input="".join(rows).encode(), stdout=subprocess.PIPE, check=True)
    got = {r["file"]: r for r in map(json.loads, res.stdout.decode().splitlines()) if r}
    paths = {n: p for n, _, p in (r.rstrip("\n").split("\t") for r in rows)}
    count = 0
    for name, g in sorted(gold.items()):
        if which != "all" and half(name) != which:
            continue
        r = got.get(name, {})
        raw = r.get("raw_text") or ""
        t = norm(r["text"]) if isinstance(r.get("text"), str) else None
        want = [norm(w) for w in g["with"]]
        found = [w for w in want if t is not None and w in t]
        if len(found) > most:
            continue
        count += 1
        leaked = [norm(w) for w in g["without"] if t is not None and norm(w) in t]
        p = Tree()
        with open(paths[name], "rb") as fh:
            p.feed(fh.read().decode("utf-8", "replace"))
        fill(p.root)
        missed = [w for w in want if w not in found]
        lines = [norm(x) for x in raw.split("\n") if norm(x)]
        print(f"== {name} ({half(name)}) found {len(found)}/{len(want)}, leaked {len(leaked)}"
              f"{'' if t is not None else ', left out as no article'}; newsd {len(raw)} bytes")
        if lines:
            picked, _ = deepest(p.root, [lines[0][:60], lines[-1][-60:]])
            print("   picked  ", picked.path())
        if missed:
            where, k = deepest(p.root, missed)
            print(f"   missed  {k}/{len(missed)} in", where.path())
        for w in missed:
            print("   -", w[:100])
    print(f"{count} pages")


if __name__ == "__main__":
    main()
