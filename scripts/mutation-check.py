#!/usr/bin/env python3
"""A mutation check you can rerun (issue 29 item 7): apply one small bug at a
time from scripts/mutations.toml to a scratch copy of the tree, rebuild only
what its tests need, run those tests, and say whether they noticed.

    scripts/mutation-check.py [--list FILE] [--keep] [--no-baseline] [ID...]

The scratch copy is the working tree as it is (tracked and untracked files,
not ignored ones) plus build/ copied with its times, so the first build is
incremental; it lives in a temporary directory removed at the end (--keep
leaves it). Before any mutation every test named in the list runs once on
the unmutated copy (--no-baseline skips it): a test that fails there would
count every mutation as caught.

Per mutation: "caught" (a test failed), "MISSED" (every test passed),
"stale" (its text is no longer in the file: update the list), "no build"
(the mutated tree does not compile: not a useful mutation). The score is
caught / (caught + missed). Not part of `make check`: it rebuilds a file and
runs a few targeted tests per mutation (seconds each; about 5 minutes for the
list on 2 cores). docs/reliability.md "Mutation check" has the last score.
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

try:
    import tomllib
except ImportError:  # Python < 3.11
    sys.exit("mutation-check: needs Python 3.11 (tomllib)")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEST_TIMEOUT = 900  # seconds per test command: a hang is a catch, not a stall


def log(msg):
    print(msg, flush=True)


def load(path):
    with open(path, "rb") as f:
        data = tomllib.load(f)
    muts = data.get("mutation", [])
    seen = set()
    for m in muts:
        for k in ("id", "file", "find", "replace", "tests"):
            if k not in m:
                sys.exit("mutation-check: %s: a mutation without %r: %r" % (path, k, m))
        if m["id"] in seen:
            sys.exit("mutation-check: %s: id %s twice" % (path, m["id"]))
        seen.add(m["id"])
    return muts


def scratch_copy(dst):
    """The working tree's files (not the ignored ones) and build/, times kept."""
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, check=True, capture_output=True).stdout.split(b"\0")
    for rel in files:
        if not rel:
            continue
        rel = rel.decode()
        src = os.path.join(REPO, rel)
        if not os.path.isfile(src):
            continue  # deleted in the working tree
        os.makedirs(os.path.dirname(os.path.join(dst, rel)), exist_ok=True)
        shutil.copy2(src, os.path.join(dst, rel))
    if os.path.isdir(os.path.join(REPO, "build")):
        shutil.copytree(os.path.join(REPO, "build"), os.path.join(dst, "build"), symlinks=True)


def targets(test):
    """The make target a test command needs."""
    kind, _, rest = test.partition(" ")
    if kind == "unit":
        return "build/asan/tests/" + rest.split()[0]
    if kind == "pytest":
        return "build/newsd"
    sys.exit("mutation-check: unknown test kind: %s" % test)


def build(tree, tests):
    want = sorted({targets(t) for t in tests})
    r = subprocess.run(["make", "-j2"] + want, cwd=tree, capture_output=True, text=True)
    return r.returncode == 0, (r.stdout + r.stderr)[-3000:]


def pytest_python():
    """A Python that has pytest (MUTATION_PYTHON, this one, or the system's)."""
    for py in (os.environ.get("MUTATION_PYTHON"), sys.executable, "/usr/bin/python3"):
        if py and subprocess.run([py, "-c", "import pytest"], capture_output=True).returncode == 0:
            return py
    sys.exit("mutation-check: no Python with pytest (set MUTATION_PYTHON)")


def run_test(tree, test):
    """True when the test passed."""
    kind, _, rest = test.partition(" ")
    env = dict(os.environ)
    if kind == "unit":
        cmd = [os.path.join(tree, "build/asan/tests", rest.split()[0])]
        cwd = os.path.join(tree, "tests/unit")
    else:
        cmd = [pytest_python(), "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"] + \
            shlex.split(rest)
        cwd = tree
        env["NEWSD_BIN"] = os.path.join(tree, "build/newsd")
        env.pop("NEWSD_ASAN", None)
    try:
        r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                           timeout=TEST_TIMEOUT)
    except subprocess.TimeoutExpired:
        return False, "timed out after %d s" % TEST_TIMEOUT
    out = (r.stdout + r.stderr).strip().splitlines()
    if kind == "pytest" and r.returncode == 5:
        return False, "no test selected: fix the -k of this mutation"
    # the first failed test's name says more than a leak summary
    failed = [l for l in out if l.startswith("[  FAILED  ] ") and "test(s)" not in l]
    return r.returncode == 0, failed[0] if failed else (out[-1] if out else "")


def apply(tree, m):
    """The original text of the file, or None when the mutation is stale."""
    path = os.path.join(tree, m["file"])
    with open(path) as f:
        text = f.read()
    if m.get("regex"):
        found = list(re.finditer(m["find"], text, re.M))
        if len(found) != 1:
            return None
        new = text[:found[0].start()] + found[0].expand(m["replace"]) + text[found[0].end():]
    else:
        if text.count(m["find"]) != 1:
            return None
        new = text.replace(m["find"], m["replace"])
    with open(path, "w") as f:
        f.write(new)
    return text


def restore(tree, m, text):
    with open(os.path.join(tree, m["file"]), "w") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", default=os.path.join(REPO, "scripts/mutations.toml"))
    ap.add_argument("--keep", action="store_true", help="keep the scratch copy")
    ap.add_argument("--no-baseline", action="store_true")
    ap.add_argument("ids", nargs="*", help="only these mutations")
    args = ap.parse_args()

    muts = load(args.list)
    if args.ids:
        unknown = set(args.ids) - {m["id"] for m in muts}
        if unknown:
            sys.exit("mutation-check: no such mutation: %s" % ", ".join(sorted(unknown)))
        muts = [m for m in muts if m["id"] in args.ids]
    tree = tempfile.mkdtemp(prefix="newsd-mutation-")
    results = []
    try:
        log("scratch copy in %s" % tree)
        scratch_copy(tree)
        all_tests = []
        for m in muts:
            all_tests += [t for t in m["tests"] if t not in all_tests]
        ok, out = build(tree, all_tests)
        if not ok:
            sys.exit("mutation-check: the unmutated tree does not build:\n" + out)
        if not args.no_baseline:
            for t in all_tests:
                passed, last = run_test(tree, t)
                log("baseline  %-4s %s  %s" % ("ok" if passed else "FAIL", t, last))
                if not passed:
                    sys.exit("mutation-check: a test fails on the unmutated tree: " + t)
        for m in muts:
            t0 = time.monotonic()
            orig = apply(tree, m)
            if orig is None:
                results.append((m, "stale", "the text to replace is not in %s once" % m["file"]))
            else:
                try:
                    ok, out = build(tree, m["tests"])
                    if not ok:
                        results.append((m, "no build", out.strip().splitlines()[-1]))
                    else:
                        verdict, why = "MISSED", "every test passed"
                        for t in m["tests"]:
                            passed, last = run_test(tree, t)
                            if not passed:
                                verdict, why = "caught", "%s: %s" % (t, last)
                                break
                        results.append((m, verdict, why))
                finally:
                    restore(tree, m, orig)
            m_, verdict, why = results[-1]
            log("%-8s %-40s %5.0f s  %s%s" % (verdict, m["id"], time.monotonic() - t0, why,
                                             "  (known)" if m.get("known") else ""))
    finally:
        if args.keep:
            log("kept %s" % tree)
        else:
            shutil.rmtree(tree, ignore_errors=True)

    caught = sum(1 for _, v, _ in results if v == "caught")
    missed = [m["id"] for m, v, _ in results if v == "MISSED"]
    other = [(m["id"], v) for m, v, _ in results if v not in ("caught", "MISSED")]
    total = caught + len(missed)
    log("")
    log("score: %d of %d caught (%.0f %%)" % (caught, total, 100.0 * caught / total if total else 0))
    if missed:
        log("missed: " + ", ".join(missed))
    for i, v in other:
        log("%s: %s" % (v, i))
    return 1 if missed or other else 0


if __name__ == "__main__":
    sys.exit(main())
