"""A damaged segment file of the engine's index (issue 23 item 4,
docs/engine.md "Damaged files"): bytes of a serving store's segment file
are overwritten where they do the most harm, and `newsd serve` must neither
crash nor answer other text than the table holds.

- A term's document frequency (the dictionary entry of "bitcoin"): four
  bytes of it, in format 7, and the first q=bitcoin killed serve with
  SIGSEGV in block_each,
  and again after every restart. Now the term's postings are checked when a
  search first opens it: the search answers 500 with NewsAPI's envelope,
  the segment is rebuilt from the table, and the next searches (and the next
  start) answer exactly.
- Eight bytes of a segment's zstd dictionary: pages decoded into altered
  text, answered 200. Now every document's checksum (in its frame: zstd's
  until format 10, the XXH3 in front of the LZ4 block since 11) is checked
  when it is decoded: 500, never altered text, newsd_index_corrupt_total
  moves.
- Its ids damaged too: the rows it held cannot be named, the whole index
  is rebuilt from the table.

The offsets come from parsing the file here (segfile.c's layout and
tdict.h's entries, format 14: the header of 10 and 11, a dictionary entry
with one more varint, its tier's bytes, when its kind is flagged tiered
(format 12); a word's kind may carry its residual's flags too (13); no
published_at part (14)).
"""
import os
import re
import struct
import time

import pytest

from conftest import new_key
from gen_articles import article
from harness import ASAN, Client, Server, import_jsonl

N = 3000          # segments with a trained dictionary (docs.c: >= 1024 documents)
WORD = "bitcoin"  # in every third article: a list of several blocks
WAIT = 30 * (6 if ASAN else 1)

HEADER = struct.Struct("<8sIIIIQQQQIIQQQ")  # struct seg_header, 88 bytes
TBLOCK = struct.Struct("<QII")               # struct eng_tblock, 16 bytes
TDICT_BLOCK = 16                             # entries a block


@pytest.fixture(autouse=True)
def engine(monkeypatch):
    monkeypatch.setenv("NEWSD_INDEX", "engine")


def rows():
    out = []
    for i in range(N):
        a = article(i)
        if i % 3 == 0:
            a["title"] += " " + WORD
        out.append(a)
    return out


def expected():
    return {a["url"]: a for a in rows()}


def align8(x):
    return (x + 7) & ~7


def layout(path):
    """The parts of a segment file: {name: (offset, length)} and its header."""
    with open(path, "rb") as f:
        head = f.read(HEADER.size)
    (magic, version, _endian, tblock_size, n, nterms, strs_len, post_len, _ntoken, _crc,
     _ids_crc, dict_len, dz_len, tdict_len) = HEADER.unpack(head)
    assert magic == b"NEWSDSEG" and version == 14 and tblock_size == TBLOCK.size
    nblocks = (nterms + TDICT_BLOCK - 1) // TDICT_BLOCK
    parts = [("ids", 8 * n), ("dl", 4 * n), ("src", 4 * n), ("pkh", 8 * n),
             ("pkd", 4 * n), ("tidx", TBLOCK.size * nblocks), ("tdict", tdict_len),
             ("strs", strs_len), ("post", post_len), ("doff", 8 * (n + 1)),
             ("dict", dict_len), ("dz", dz_len)]
    at, out = HEADER.size, {}
    for name, length in parts:
        out[name] = (at, length)
        at = align8(at + length)
    assert at == os.path.getsize(path)
    return out, n, nterms


def varint(b, at):
    """The varint at b[at]: its value and where it ends."""
    x = shift = 0
    while True:
        c = b[at]
        at += 1
        x |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return x, at


def entries(path):
    """Each dictionary entry of a segment file, in order: (its string, the
    file offset of its df varint, df, the file offset of its postings, their
    bytes, its tier's bytes (0: none)). An entry: the string's length, the
    kind byte, df, the docid stream's bytes, the postings' bytes, its tier's
    bytes when the kind has TIERED (0x40), and for a list of one block (df
    <= 128) its two block maxima. A term's postings begin where the previous
    term's tier (or postings) end, 4-byte aligned for a list of several
    blocks (tdict.h)."""
    parts, _n, nterms = layout(path)
    with open(path, "rb") as f:
        f.seek(parts["tidx"][0])
        tidx = f.read(parts["tidx"][1])
        f.seek(parts["tdict"][0])
        tdict = f.read(parts["tdict"][1])
        f.seek(parts["strs"][0])
        strs = f.read(parts["strs"][1])
    post = 0
    for i in range(nterms):
        if i % TDICT_BLOCK == 0:
            packed, s, at = TBLOCK.unpack_from(tidx, i // TDICT_BLOCK * TBLOCK.size)
            post = packed >> 24
        length, at = varint(tdict, at)
        kind = tdict[at]
        at += 1
        df_at = at
        df, at = varint(tdict, at)
        _docs, at = varint(tdict, at)
        nbytes, at = varint(tdict, at)
        tier = 0
        if kind & 0x40:
            tier, at = varint(tdict, at)
        if 0 < df <= 128:
            _v, at = varint(tdict, at)
            _v, at = varint(tdict, at)
        off = (post + 3) & ~3 if df > 128 else post
        yield (strs[s:s + length], parts["tdict"][0] + df_at, df, parts["post"][0] + off,
               nbytes, tier)
        post = off + nbytes + tier
        s += length


def term_entry(path, word):
    """File offset of the df varint of word's dictionary entry, and the df
    (None, 0 when absent)."""
    for string, df_at, df, _post, _nbytes, _tier in entries(path):
        if string == word.encode():
            return df_at, df
    return None, 0


def tier_span(path, word):
    """File offset and length of word's tier (format 12: after its
    postings, when its kind has TIERED), None when it has none."""
    for string, _df_at, _df, post, nbytes, tier in entries(path):
        if string == word.encode():
            return (post + nbytes, tier) if tier else None
    return None


def largest_varint(nbytes):
    """The largest value a varint of nbytes holds (the same length: the
    entries after it stay where they are)."""
    return b"\xff" * (nbytes - 1) + b"\x7f"


def overwrite(path, at, data):
    """In place: the server's mapping of the file sees the bytes at once."""
    with open(path, "r+b") as f:
        f.seek(at)
        f.write(data)


def segment_files(store):
    d = os.path.join(str(store), "newsd.db.engine")
    segs = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".seg"))
    assert segs, "no segment file in %s" % d
    return segs


def word_entry(store):
    """A segment file holding WORD in several blocks, the offset of its
    entry's df and the bytes of that varint."""
    for path in segment_files(store):
        at, df = term_entry(path, WORD)
        if df > 128:
            with open(path, "rb") as f:
                f.seek(at)
                head = f.read(5)
            return path, at, varint(head, 0)[1]
    raise AssertionError("no segment holds %s in more than one block" % WORD)


def corrupt_total(c):
    body = c.get("/metrics").text
    m = re.search(r"^newsd_index_corrupt_total (\d+)$", body, re.M)
    assert m, "newsd_index_corrupt_total missing from /metrics"
    return int(m.group(1))


def assert_envelope_500(r):
    assert r.status_code == 500, (r.status_code, r.text[:300])
    b = r.json()
    assert b["status"] == "error" and b["code"] == "unexpectedError", b


def assert_exact(r, want):
    """A 200 page whose every article is the table's, field for field."""
    assert r.status_code == 200, (r.status_code, r.text[:300])
    b = r.json()
    for a in b["articles"]:
        w = want[a["url"]]
        for k in ("title", "description", "author", "publishedAt"):
            assert a[k] == w[k], (k, a[k], w[k])
        shown = re.sub(r"\u2026? ?\[\+\d+ chars\]$", "", a["content"])  # NewsAPI's cut
        assert len(shown) > 100 and w["content"].startswith(shown), (a["content"], w["content"])
        assert a["source"]["name"] == w["source"]["name"]
    return b


def word_total():
    return len(range(0, N, 3))


def wait_exact(c, want):
    """Bounded wait for the rebuilt segment: q=bitcoin answers exactly."""
    deadline = time.monotonic() + WAIT
    while True:
        r = c.get("/v2/everything", {"q": WORD, "pageSize": 100})
        if r.status_code == 200:
            b = assert_exact(r, want)
            assert b["totalResults"] == word_total()
            return
        assert_envelope_500(r)
        assert time.monotonic() < deadline, "the damaged segment was not rebuilt in time"
        time.sleep(0.1)


def served_store(tmp_path):
    store = tmp_path / "store"
    import_jsonl(str(store), rows())
    key = new_key(store)
    return store, key


def assert_damage_answered(srv, c, r, before, what, said, want):
    """r read the damaged bytes (what): serve is alive, r is a 500 in
    NewsAPI's envelope, the damage is counted once and the log says `said`;
    then the segment is rebuilt and every answer exact again."""
    assert srv.proc.poll() is None, "serve died on the damaged %s" % what
    assert_envelope_500(r)
    assert corrupt_total(c) == before + 1
    assert said in srv.stderr()
    wait_exact(c, want)


def stop_ok(srv):
    problems = srv.stop()
    assert not problems, problems


def test_a_damaged_document_frequency_is_a_500_and_a_rebuild(tmp_path):
    store, key = served_store(tmp_path)
    want = expected()
    srv = Server(store)
    try:
        c = Client(srv.base, key)
        before = corrupt_total(c)
        path, at, nbytes = word_entry(store)
        overwrite(path, at, largest_varint(nbytes))  # its df
        r = c.get("/v2/everything", {"q": WORD, "pageSize": 100})
        assert_damage_answered(srv, c, r, before, "term", "damaged", want)
        # other words answer too, from the rebuilt segment
        assert_exact(c.get("/v2/everything", {"q": "harbor", "pageSize": 100}), want)
    finally:
        stop_ok(srv)
    # the next start maps the rebuilt file: no crash, no rebuild again
    srv = Server(store)
    try:
        c = Client(srv.base, key)
        r = c.get("/v2/everything", {"q": WORD, "pageSize": 100})
        assert assert_exact(r, want)["totalResults"] == word_total()
        assert corrupt_total(c) == 0
    finally:
        stop_ok(srv)


def test_a_damaged_tier_is_a_500_and_a_rebuild(tmp_path, monkeypatch):
    """Format 12: a frequent term's tier decides a relevancy page alone, so
    it is checked against its list when the term is first opened. Its last
    byte (the last tier document's weighted frequency, a one-byte varint)
    changed: the relevancy page is a 500, never another page, and the
    segment is rebuilt."""
    monkeypatch.setenv("NEWSD_ENGINE_TIER_MIN_DF", "64")  # WORD's 1,000 documents: a tier
    store, key = served_store(tmp_path)
    want = expected()
    srv = Server(store)
    try:
        c = Client(srv.base, key)
        before = corrupt_total(c)
        spans = [(p, tier_span(p, WORD)) for p in segment_files(store)]
        path, (at, length) = next((p, t) for p, t in spans if t)
        with open(path, "rb") as f:
            f.seek(at + length - 1)
            last = f.read(1)[0]
        assert last < 0x80
        overwrite(path, at + length - 1, bytes([last ^ 0x40]))
        r = c.get("/v2/everything", {"q": WORD, "sortBy": "relevancy", "pageSize": 10})
        assert_damage_answered(srv, c, r, before, "tier", "tier", want)
        r = c.get("/v2/everything", {"q": WORD, "sortBy": "relevancy", "pageSize": 100})
        assert assert_exact(r, want)["totalResults"] == word_total()
    finally:
        stop_ok(srv)


def test_a_damaged_file_at_rest_is_no_crash_loop(tmp_path):
    store, key = served_store(tmp_path)
    want = expected()
    stop_ok(Server(store))  # the index files written
    path, at, nbytes = word_entry(store)
    overwrite(path, at, largest_varint(nbytes))
    for _ in range(2):  # the crash loop was: start, q=bitcoin, SIGSEGV, again
        srv = Server(store)
        try:
            c = Client(srv.base, key)
            wait_exact(c, want)
            assert srv.proc.poll() is None
        finally:
            stop_ok(srv)


def test_a_damaged_dictionary_never_gives_altered_text(tmp_path):
    store, key = served_store(tmp_path)
    want = expected()
    srv = Server(store)
    try:
        c = Client(srv.base, key)
        before = corrupt_total(c)
        dicts = [(layout(p)[0]["dict"], p) for p in segment_files(store)]
        (at, length), path = max(dicts, key=lambda d: d[0][1])
        assert length > 1024, "no segment has a dictionary"
        # the dictionary's end: the content frames refer to most
        overwrite(path, at + length - 8, b"\x00\xffDAMAGE")
        statuses = []
        for page in range(1, N // 100 + 1):
            r = c.get("/v2/everything", {"q": "article", "pageSize": 100, "page": page})
            assert srv.proc.poll() is None, "serve died on the damaged dictionary"
            if r.status_code == 500:
                assert_envelope_500(r)
            else:
                assert_exact(r, want)  # never text other than the table's
            statuses.append(r.status_code)
            if r.status_code == 500:
                break
        assert 500 in statuses, "no page read the damaged dictionary: %r" % statuses
        assert corrupt_total(c) == before + 1
        assert "damaged" in srv.stderr()
        # rebuilt from the table: every page exact again
        deadline = time.monotonic() + WAIT
        while c.get("/v2/everything", {"q": "article", "pageSize": 1}).status_code != 200:
            assert time.monotonic() < deadline, "the damaged segment was not rebuilt in time"
            time.sleep(0.1)
        seen = 0
        for page in range(1, N // 100 + 1):
            r = c.get("/v2/everything", {"q": "article", "pageSize": 100, "page": page})
            seen += len(assert_exact(r, want)["articles"])
        assert seen == N
    finally:
        stop_ok(srv)


def test_a_damaged_segment_whose_ids_are_damaged_too_rebuilds_the_whole_index(tmp_path):
    # The rows a segment held are named by its ids: when their CRC (in the
    # header) no longer matches, the whole index is built from the table.
    store, key = served_store(tmp_path)
    want = expected()
    srv = Server(store)
    try:
        c = Client(srv.base, key)
        path, at, nbytes = word_entry(store)
        ids_at = layout(path)[0]["ids"][0]
        overwrite(path, ids_at + 8, b"\x01")  # the low byte of the second id
        overwrite(path, at, largest_varint(nbytes))
        r = c.get("/v2/everything", {"q": WORD, "pageSize": 100})
        assert srv.proc.poll() is None
        assert_envelope_500(r)
        wait_exact(c, want)
        assert "rebuilding the whole index" in srv.stderr()
        seen = 0
        for page in range(1, N // 100 + 1):
            r = c.get("/v2/everything", {"q": "article", "pageSize": 100, "page": page})
            b = assert_exact(r, want)
            assert b["totalResults"] == N
            seen += len(b["articles"])
        assert seen == N
    finally:
        stop_ok(srv)
