#!/usr/bin/env python3
"""bench/stories_quality.py [--newsd BIN] [--data DIR] [--percent P,...] [--halves]
[--show-errors 0|1|all] — how well newsd groups articles into stories (issue 25;
docs/stories.md "Quality").

Imports the labelled real articles of bench/data/stories (made by
bench/stories_label.py; labels.tsv says which are one story) into a new
store with the real binary, once per similarity threshold
([stories] similarity_percent), reads every article's story id back from
the store's SQLite file, and scores the grouping against the labels:

  pairwise  precision / recall / F1 over all pairs of labelled articles
            (a pair is "same" when both are in one story)
  BCubed    precision / recall / F1 (Bagga & Baldwin: per article, the share
            of its predicted story that is its true story, and back)

In the same run, the baseline: plain MinHash (64 hash functions over
lower-cased word pairs of title + description + content as given, LSH of
32 bands x 2 rows, one threshold, pairs within the same 3-day window, the
groups the transitive closure of the pairs above the threshold), with no
exact rules (no URL, no title, no host rule).

--halves scores each of two fixed halves of the labelled stories too (a
hash of a story's smallest URL): rules are chosen on half 0 and checked on
half 1, against over-fitting the one labelled set there is. A join between
the two halves counts as a wrong join in both. --show-errors prints the
wrong joins and the missed pairs of the first threshold's run.

Speed is not measured here (docs/stories.md has the import rate). The exit
status says only whether the harness worked.
"""
import argparse
import collections
import datetime
import gzip
import hashlib
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load(data):
    labels = {}
    with open(os.path.join(data, "labels.tsv"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                continue
            group, url = line.rstrip("\n").split("\t")
            labels[url] = int(group)
    with gzip.open(os.path.join(data, "articles.jsonl.gz"), "rt", encoding="utf-8") as f:
        lines = f.read()
    return labels, lines


def scores(truth, pred, only=None):
    """Pairwise and BCubed precision, recall, F1 of pred against truth
    (dicts item -> cluster), over the items of truth. only (a set of items):
    score those items; a pair joined between one of them and another item
    still counts as a wrong join, so a split of the labelled set does not
    hide the joins across its parts."""
    items = [k for k in truth if k in pred]
    mine = items if only is None else [k for k in items if k in only]
    by_t = collections.defaultdict(set)
    by_p = collections.defaultdict(set)
    for k in items:
        by_t[truth[k]].add(k)
        by_p[pred[k]].add(k)
    both = collections.Counter((truth[k], pred[k]) for k in items)
    pairs = lambda n: n * (n - 1) // 2
    tp = sum(pairs(n) for (t, _), n in both.items() if only is None or by_t[t] <= only)
    tt = sum(pairs(len(v)) for v in by_t.values() if only is None or v <= only)
    pp = 0
    for v in by_p.values():
        inside = len(v) if only is None else len(v & only)
        pp += pairs(inside) + inside * (len(v) - inside)
    p = tp / pp if pp else 1.0
    r = tp / tt if tt else 1.0
    bp = sum(both[(truth[k], pred[k])] / len(by_p[pred[k]]) for k in mine) / len(mine)
    br = sum(both[(truth[k], pred[k])] / len(by_t[truth[k]]) for k in mine) / len(mine)
    f = lambda a, b: 2 * a * b / (a + b) if a + b else 0.0
    return {"n": len(mine), "pairs_true": tt, "pairs_pred": pp, "p": p, "r": r, "f1": f(p, r),
            "bp": bp, "br": br, "bf1": f(bp, br)}


def recall_by_kind(truth, pred, lines):
    """Recall of the same-story pairs by kind: within the 3-day window or
    not (what the window can find at all)."""
    import json
    t = {}
    for l in lines.split("\n"):
        if l.strip():
            a = json.loads(l)
            t[a["url"]] = datetime.datetime.strptime(a["publishedAt"],
                                                     "%Y-%m-%dT%H:%M:%SZ").timestamp()
    by_t = collections.defaultdict(list)
    for k in truth:
        if k in pred:
            by_t[truth[k]].append(k)
    kinds = collections.Counter()
    found = collections.Counter()
    for members in by_t.values():
        for x in range(len(members)):
            for y in range(x):
                u, v = members[x], members[y]
                kind = "within 3 days" if abs(t[u] - t[v]) <= 3 * 86400 else "further apart"
                kinds[kind] += 1
                found[kind] += pred[u] == pred[v]
    return ", ".join(f"{k}: {found[k] / kinds[k]:.3f} of {kinds[k]}" for k in sorted(kinds))


def half_keys(truth):
    """The half (0 or 1) of every labelled story: a hash of the smallest URL
    in it, so the halves are fixed, not chosen, survive a renumbering of the
    labels, and never split a story. Rules are tuned on half 0 and checked
    on half 1 (docs/stories.md "Quality")."""
    first = {}
    for url, g in truth.items():
        if g not in first or url < first[g]:
            first[g] = url
    return {g: hashlib.blake2b(u.encode(), digest_size=1).digest()[0] & 1
            for g, u in first.items()}


def halves(truth, pred):
    """The scores over each half of the labelled stories and over all."""
    half = half_keys(truth)
    out = []
    for h in (0, 1):
        part = {k for k, v in truth.items() if half[v] == h}
        out.append((f"half {h}", scores(truth, pred, part)))
    out.append(("whole", scores(truth, pred)))
    return out


def show_errors(truth, pred, lines, half):
    """Print the pairs joined wrongly and the same-story pairs missed (the
    articles' host, time, title and the start of their text), over one half
    (None: all)."""
    import json
    art = {}
    for l in lines.split("\n"):
        if l.strip():
            a = json.loads(l)
            art[a["url"]] = a
    halfk = half_keys(truth)
    mine = lambda u: half is None or halfk[truth[u]] == half
    by_p = collections.defaultdict(list)
    by_t = collections.defaultdict(list)
    for k in truth:
        if k in pred:
            by_p[pred[k]].append(k)
            by_t[truth[k]].append(k)

    def show(u):
        a = art[u]
        text = " ".join((a.get("description") or "", a.get("content") or "")).replace("\n", " ")
        return f"    {a['publishedAt']} {u}\n      {a.get('title')!r}\n      {text[:200]!r}"

    for what, groups, wrong in (("joined, labelled different", by_p, lambda u, v: truth[u] != truth[v]),
                                ("labelled same, not joined", by_t, lambda u, v: pred[u] != pred[v])):
        pairs = [(u, v) for m in groups.values() for x, u in enumerate(m) for v in m[:x]
                 if wrong(u, v) and (mine(u) or mine(v))]
        print(f"\n{what}: {len(pairs)} pairs")
        for u, v in pairs:
            print(f"  group {truth[u]} / {truth[v]}")
            print(show(v))
            print(show(u))


def newsd_grouping(newsd, lines, percent, tmp):
    store = os.path.join(tmp, f"store-{percent}")
    conf = os.path.join(tmp, f"newsd-{percent}.conf")
    src = os.path.join(tmp, "articles.jsonl")
    if not os.path.exists(src):
        with open(src, "w", encoding="utf-8") as f:
            f.write(lines)
    with open(conf, "w") as f:
        f.write(f"[stories]\nsimilarity_percent = {percent}\n")
    r = subprocess.run([newsd, "import", "--store", store, "--create", "--config", conf, src],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"stories_quality: newsd import failed ({r.returncode}): {r.stderr[-2000:]}")
    db = sqlite3.connect(os.path.join(store, "newsd.db"))
    got = dict(db.execute("SELECT url, story_id FROM articles"))
    db.close()
    if any(v is None for v in got.values()):
        sys.exit("stories_quality: an imported article has no story id")
    return got


WORD = re.compile(r"\w+", re.U)
MASK = (1 << 64) - 1
K, BANDS, ROWS = 64, 32, 2
SEEDS = [(int.from_bytes(hashlib.blake2b(b"a%d" % i, digest_size=8).digest(), "little") | 1,
          int.from_bytes(hashlib.blake2b(b"b%d" % i, digest_size=8).digest(), "little"))
         for i in range(K)]


def minhash(text):
    w = WORD.findall(text.lower())
    sh = {int.from_bytes(hashlib.blake2b(f"{w[i]} {w[i + 1]}".encode(), digest_size=8).digest(),
                         "little") for i in range(len(w) - 1)}
    if len(sh) < 8:
        return None
    return [min(((x ^ b) * a) & MASK for x in sh) for a, b in SEEDS]


def baseline_grouping(lines, threshold, sigs=None):
    import json
    arts = [json.loads(l) for l in lines.split("\n") if l.strip()]
    if sigs is None:
        sigs = [minhash(" ".join(a.get(k) or "" for k in ("title", "description", "content")))
                for a in arts]
    t = [datetime.datetime.strptime(a["publishedAt"], "%Y-%m-%dT%H:%M:%SZ").timestamp()
         for a in arts]
    parent = list(range(len(arts)))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    buckets = collections.defaultdict(list)
    for i, s in enumerate(sigs):
        if s is None:
            continue
        for b in range(BANDS):
            buckets[(b, tuple(s[b * ROWS:(b + 1) * ROWS]))].append(i)
    seen = set()
    for docs in buckets.values():
        for x in range(len(docs)):
            for y in range(x):
                i, j = docs[y], docs[x]
                if (i, j) in seen or abs(t[i] - t[j]) > 3 * 86400:
                    continue
                seen.add((i, j))
                same = sum(a == b for a, b in zip(sigs[i], sigs[j])) / K
                if same >= threshold:
                    parent[find(i)] = find(j)
    return {a["url"]: find(i) for i, a in enumerate(arts)}, sigs


def row(name, s):
    return (f"| {name} | {s['p']:.3f} | {s['r']:.3f} | {s['f1']:.3f} | {s['bp']:.3f} | "
            f"{s['br']:.3f} | {s['bf1']:.3f} | {s['pairs_pred']} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--newsd", default=os.environ.get("NEWSD_BIN", os.path.join(ROOT, "build/newsd")))
    ap.add_argument("--data", default=os.path.join(ROOT, "bench/data/stories"))
    ap.add_argument("--percent", default="30,35,40,45,50,60",
                    help="newsd's [stories] similarity_percent values to run")
    ap.add_argument("--baseline", default="0.3,0.4,0.5,0.6,0.7",
                    help="the plain MinHash thresholds to run")
    ap.add_argument("--halves", action="store_true",
                    help="also score each half of the labelled stories (tune on half 0)")
    ap.add_argument("--show-errors", metavar="HALF", choices=("0", "1", "all"),
                    help="print the wrong joins and missed pairs of the first threshold's run")
    args = ap.parse_args()
    labels, lines = load(args.data)
    groups = collections.Counter(labels.values())
    same_pairs = sum(n * (n - 1) // 2 for n in groups.values())
    print(f"labelled set: {len(labels)} real articles, {sum(1 for n in groups.values() if n > 1)}"
          f" stories of 2 or more ({same_pairs} same-story pairs); newsd {args.newsd}")
    print()
    print("| grouping | pairwise P | R | F1 | BCubed P | R | F1 | pairs joined |")
    print("|---|---|---|---|---|---|---|---|")
    kinds = []
    errors = None
    with tempfile.TemporaryDirectory(prefix="newsd-stories-") as tmp:
        for pct in (int(x) for x in args.percent.split(",")):
            got = newsd_grouping(args.newsd, lines, pct, tmp)
            s = scores(labels, got)
            if args.halves:
                for name, hs in halves(labels, got):
                    print(row(f"newsd, similarity {pct} %, {name}", hs), flush=True)
            else:
                print(row(f"newsd, similarity {pct} %", s), flush=True)
            if args.show_errors and errors is None:
                errors = got
            kinds.append(f"newsd {pct} %: {recall_by_kind(labels, got, lines)}")
    sigs = None
    for th in (float(x) for x in args.baseline.split(",")):
        got, sigs = baseline_grouping(lines, th, sigs)
        if args.halves:
            for name, hs in halves(labels, got):
                print(row(f"plain MinHash, threshold {th:.2f}, {name}", hs), flush=True)
        else:
            print(row(f"plain MinHash, threshold {th:.2f}", scores(labels, got)), flush=True)
    print("\npairwise recall by how far apart the two were published:")
    for k in kinds:
        print(f"  {k}")
    if errors is not None:
        show_errors(labels, errors, lines, None if args.show_errors == "all" else int(args.show_errors))
    if len(got) != len(labels):
        print(f"\n({len(labels) - s['n']} labelled articles share a stored URL with another"
              " and are scored once)")


if __name__ == "__main__":
    main()
