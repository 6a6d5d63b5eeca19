#!/usr/bin/env python3
"""Freshness probe of the benchmark (bench/README.md): how long a new article
takes to become searchable while articles are being imported.

  fresh.py --newsd BIN --store DIR --url BASE --key KEY --gen GEN
           [--profile P] [--seed S] [--rate 5000] [--seconds 20]
           [--every 0.5] [--timeout 30]

Runs `newsd import --store DIR -` next to the running server and feeds it
articles from bench/gen at RATE articles/s (paced every 10 ms). Every EVERY
seconds it slips in a marker article whose title carries a word found
nowhere else, and from the moment its line is handed to the import (written
and flushed into the pipe) polls GET /v2/everything?q=<word> every 5 ms
until totalResults is 1. The delay covers everything a user waits for: the
import's batching and commit, the index noticing the new rows, the search.

Prints raw lines (bench/common.h) on stdout:
  fresh   ENGINE MARKER SECONDS          one per marker found
  stat    ENGINE WHAT VALUE              target_rate, fed_rate, fed, markers,
                                         missed (not found within TIMEOUT)
  err     ENGINE WHAT MESSAGE            the import failed, or a search did
A marker not found in time is a figure (the index fell behind), not a
failure; exit 1 only when the import or the searches failed.
"""
import argparse
import json
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request

ENGINE = "fresh"


def marker_line(run_id, k):
    word = "zqfresh%s%dq" % (run_id, k)
    art = {
        "source": {"id": None, "name": "Bench Freshness Probe"},
        "author": None,
        "title": "Freshness probe %s for the benchmark" % word,
        "description": None,
        "url": "https://fresh-probe.example/%s/%d" % (run_id, k),
        "urlToImage": None,
        "publishedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "content": None,
        "language": "en",
    }
    return word, (json.dumps(art) + "\n").encode()


class Poller(threading.Thread):
    """Polls each pending marker's word until the server finds it."""

    def __init__(self, base, key, timeout):
        super().__init__(daemon=True)
        self.base, self.key, self.timeout = base, key, timeout
        self.lock = threading.Lock()
        self.pending = {}  # word -> (marker number, time handed over)
        self.found = []  # (marker number, seconds)
        self.missed = []  # (marker number, last search error or None)
        self.stop = False

    def add(self, k, word, t):
        with self.lock:
            self.pending[word] = (k, t)

    def busy(self):
        with self.lock:
            return bool(self.pending)

    def search(self, word):
        q = urllib.parse.urlencode({"q": word, "pageSize": 1})
        req = urllib.request.Request(self.base + "/v2/everything?" + q,
                                     headers={"X-Api-Key": self.key})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.load(r).get("totalResults", 0)

    def run(self):
        while not (self.stop and not self.busy()):
            with self.lock:
                todo = list(self.pending.items())
            for word, (k, t) in todo:
                try:
                    total = self.search(word)
                except (OSError, ValueError) as e:
                    total, err = 0, str(e)
                else:
                    err = None
                now = time.monotonic()
                with self.lock:
                    if total >= 1:
                        self.found.append((k, now - t))
                        del self.pending[word]
                    elif now - t > self.timeout:
                        self.missed.append((k, err))
                        del self.pending[word]
            time.sleep(0.005)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--newsd", required=True)
    ap.add_argument("--store", required=True)
    ap.add_argument("--url", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--gen", required=True)
    ap.add_argument("--profile", default="full")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--rate", type=float, default=5000)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--every", type=float, default=0.5)
    ap.add_argument("--timeout", type=float, default=30)
    args = ap.parse_args()

    # Articles of another seed: new URLs, the same vocabulary. Enough for the
    # whole probe: the generator waits on the pipe, and is stopped at the end.
    n = int(args.rate * (args.seconds + args.timeout + 10)) + 1000
    gen = subprocess.Popen([args.gen, "--seed", str(args.seed + 1000), "--profile", args.profile,
                            str(n)], stdout=subprocess.PIPE)
    imp = subprocess.Popen([args.newsd, "import", "--store", args.store, "-"],
                           stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    poller = Poller(args.url.rstrip("/"), args.key, args.timeout)
    poller.start()
    run_id = "%x" % (int(time.time()) % 0xFFFFFF)
    fed, markers, failed = 0, 0, False
    t0 = time.monotonic()
    next_marker = t0 + args.every
    try:
        # Markers for SECONDS, then the feed goes on at the same pace until
        # the last one is found: the import commits a batch when it is full,
        # and a stream that stopped would leave the last markers waiting.
        while True:
            now = time.monotonic()
            probing = now - t0 < args.seconds
            if not probing and not poller.busy():
                break
            want = int(args.rate * (now - t0))
            chunk = []
            while fed < want:
                line = gen.stdout.readline()
                if not line:
                    break
                chunk.append(line)
                fed += 1
            if probing and now >= next_marker:
                word, line = marker_line(run_id, markers)
                chunk.append(line)
            if chunk:
                imp.stdin.write(b"".join(chunk))
                imp.stdin.flush()
            if probing and now >= next_marker:
                # Handed over: the import can read it from here on.
                poller.add(markers, word, time.monotonic())
                markers += 1
                next_marker += args.every
            time.sleep(0.01)
    except BrokenPipeError:
        print("err\t%s\timport\tnewsd import stopped reading" % ENGINE)
        failed = True
    elapsed = time.monotonic() - t0
    poller.stop = True
    poller.join()
    try:
        imp.stdin.close()
    except BrokenPipeError:
        pass
    gen.kill()
    gen.wait()
    if imp.wait() != 0:
        print("err\t%s\timport\tnewsd import exited %d" % (ENGINE, imp.returncode))
        failed = True
    print("stat\t%s\ttarget_rate\t%.0f" % (ENGINE, args.rate))
    print("stat\t%s\tfed\t%d" % (ENGINE, fed))
    print("stat\t%s\tfed_rate\t%.0f" % (ENGINE, fed / elapsed if elapsed > 0 else 0))
    print("stat\t%s\tmarkers\t%d" % (ENGINE, markers))
    print("stat\t%s\ttimeout\t%.0f" % (ENGINE, args.timeout))
    print("stat\t%s\tmissed\t%d" % (ENGINE, len(poller.missed)))
    for k, secs in sorted(poller.found):
        print("fresh\t%s\t%d\t%.4f" % (ENGINE, k, secs))
    for k, msg in sorted(poller.missed):
        if msg:
            print("err\t%s\tmarker %d\t%s" % (ENGINE, k, msg))
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
