#!/usr/bin/env python3
"""Build bench/data/ from real NewsAPI text (stdlib only).

Reads ../shared/data/real/articles.jsonl and sources.jsonl (the article set
collected from public repositories, see its README) and writes, for each of
the 14 API languages:

  bench/data/words-<lang>.txt   top words by frequency: "word<TAB>count"
  bench/data/names-<lang>.txt   recurring multi-word names: "name<TAB>count"

plus bench/data/catalogue.tsv (the 129 catalogue sources) and
bench/data/SOURCES.md (what came from where, and which languages borrow).
bench/gen reads these files; they are committed, so the benchmark never reads
../shared at run time. Run it again only to refresh the lists:

  python3 bench/make_words.py [--real DIR] [--out bench/data]

An article's language: its catalogue source's language, else a guess from its
script (Arabic, Hebrew, Cyrillic, Han) or from stop words (Latin languages).
Articles in languages the API lacks (Japanese, Polish, Greek, ...) are
skipped. Words are maximal runs of letters and digits (as newsd's tokenizer
splits them); Chinese has no spaces, so its "words" are Han character
bigrams (which is what the tokenizer indexes). A name is a run of 2-3
capitalised words inside a sentence (Latin, Cyrillic) or a frequent word
pair without stop words (Arabic script, Hebrew) or a frequent Han trigram
(Chinese), seen in at least 3 different articles.
"""
import argparse
import collections
import json
import os
import re
import sys
import unicodedata

LANGS = ["ar", "de", "en", "es", "fr", "he", "it", "nl", "no", "pt", "ru", "sv", "ud", "zh"]
MAX_WORDS = 20000
MAX_NAMES = 2000
MIN_WORDS = 2000  # fewer distinct words than this: the language borrows
MIN_NAMES = 300  # fewer real names than this: synthetic ones complete the list
# Who lends to whom when a language has too little real text: the closest
# language with enough text in the same script.
# Urdu shares Arabic's script (the real set has no Urdu text at all).
BORROW = {"ud": "ar"}

# Stop words (the most frequent function words) to tell Latin languages
# apart; pl/tr/id/cs/ro/hu/hr are sinks so their articles are not mistaken
# for one of ours.
STOP = {
    "en": "the of and to in is for on that with was at by from as are be has have it this an".split(),
    "de": "der die und das den von zu mit ist im des für auf nicht sich dem ein eine auch bei".split(),
    "es": "de la que el en los del las por una con para se al es su lo como más".split(),
    "fr": "le la les des est et en du une pour dans que qui sur au par pas avec ce plus".split(),
    "it": "il di che la per del della non una sono alla dei nel con gli le si al anche".split(),
    "nl": "de het een van en in is op te dat met voor zijn niet aan ook er bij naar".split(),
    "no": "og i det som er på til en av for med har ikke de den var et om fra".split(),
    "sv": "och att det som är på för med en av till har inte den de var ett om från".split(),
    "pt": "de que do da em para com os uma no na por as dos mais ao das se foi".split(),
    "pl": "i w na z się że nie do to jest o jak od po przez dla".split(),
    "tr": "ve bir bu için ile da de olarak çok daha sonra gibi olan".split(),
    "id": "yang dan di ini itu dengan untuk dari dalam tidak akan pada".split(),
    "cs": "a v se na je že to s z do o jako by pro ale".split(),
    "ro": "și în de la cu pe care din a fost pentru că mai un o".split(),
    "hu": "a az és hogy nem is egy meg van csak már el".split(),
    "hr": "je i u na da se za su od ne koji sa".split(),
}
STOP_SETS = {k: set(v) for k, v in STOP.items()}
WORD_RE = re.compile(r"[^\W_]+")
TRUNC_RE = re.compile(r"…\s*\[\+\d+ chars\]\s*$|\.\.\.\s*\[\+\d+ chars\]\s*$")
TAGS_RE = re.compile(r"<[^>]{0,200}>")
HAN_RUN_RE = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf]+")


def script_of(text):
    """Dominant non-Latin script among letters, or 'latin'/None."""
    counts = collections.Counter()
    for ch in text:
        o = ord(ch)
        if 0x0600 <= o <= 0x06FF or 0x0750 <= o <= 0x077F:
            counts["arabic"] += 1
        elif 0x0590 <= o <= 0x05FF:
            counts["hebrew"] += 1
        elif 0x0400 <= o <= 0x04FF:
            counts["cyrillic"] += 1
        elif 0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF:
            counts["han"] += 1
        elif 0x3040 <= o <= 0x30FF:
            counts["kana"] += 1
        elif 0xAC00 <= o <= 0xD7AF:
            counts["hangul"] += 1
        elif 0x0370 <= o <= 0x03FF:
            counts["greek"] += 1
        elif 0x0900 <= o <= 0x0DFF or 0x0E00 <= o <= 0x0E7F:
            counts["indic_thai"] += 1
        elif ch.isalpha() and o < 0x0250:
            counts["latin"] += 1
    if not counts:
        return None
    script, n = counts.most_common(1)[0]
    if script == "han" and counts["kana"] > 0:
        return "kana"
    return script


def guess_language(text):
    script = script_of(text)
    if script == "arabic":
        # Urdu letters that Arabic lacks: ے ں ٹ ڈ ڑ ہ
        if any(c in text for c in "ےںٹڈڑہ"):
            return "ud"
        return "ar"
    if script == "hebrew":
        return "he"
    if script == "cyrillic":
        low = text.lower()
        if any(c in low for c in "іїєґ"):
            return None  # Ukrainian
        if any(c in low for c in "ђћџљњј"):
            return None  # Serbian
        if low.count("ъ") > 2 and "ы" not in low:
            return None  # Bulgarian
        return "ru"
    if script == "han":
        return "zh"
    if script != "latin":
        return None
    words = [w.lower() for w in WORD_RE.findall(text)]
    scores = {lang: sum(1 for w in words if w in s) for lang, s in STOP_SETS.items()}
    best = sorted(scores.items(), key=lambda kv: -kv[1])
    (l1, s1), (_, s2) = best[0], best[1]
    if s1 < 3 or s1 < 1.5 * s2:
        return None
    return l1 if l1 in LANGS else None


def clean(s):
    if not s:
        return ""
    s = TRUNC_RE.sub("", s)
    s = TAGS_RE.sub(" ", s)
    s = s.replace("&amp;", "&").replace("&nbsp;", " ").replace("&quot;", '"')
    return unicodedata.normalize("NFC", s)


def title_body(title):
    """A title without its ' - Publisher' suffix."""
    i = title.rfind(" - ")
    if i > 20:
        return title[:i]
    return title


def is_cap(w):
    return w[:1].isupper() and not w.isupper() and w[:1].isalpha()


def cased_names(text, counts_by_article, stop):
    """Runs of 2-3 capitalised words not starting a sentence."""
    found = set()
    for sentence in re.split(r"[.!?:;\"“”«»()\n\r]+", text):
        words = WORD_RE.findall(sentence)
        run = []
        for i, w in enumerate(words):
            if i > 0 and is_cap(w) and w.lower() not in stop and len(w) > 1:
                run.append(w)
                continue
            if 2 <= len(run) <= 3:
                found.add(" ".join(run))
            elif len(run) > 3:
                found.add(" ".join(run[:2]))
            run = []
        if 2 <= len(run) <= 3:
            found.add(" ".join(run))
    for f in found:
        counts_by_article[f] += 1


def native(w):
    """True for a word with no ASCII letter or digit (Arabic, Hebrew text)."""
    return not any(c.isascii() for c in w)


def pair_names(text, counts_by_article, stop):
    words = WORD_RE.findall(text)
    found = set()
    for a, b in zip(words, words[1:]):
        if a in stop or b in stop or len(a) < 2 or len(b) < 2:
            continue
        if not native(a) or not native(b):
            continue
        found.add(a + " " + b)
    for f in found:
        counts_by_article[f] += 1


def han_names(text, counts_by_article):
    found = set()
    for run in HAN_RUN_RE.findall(text):
        for i in range(len(run) - 2):
            found.add(run[i:i + 3])
    for f in found:
        counts_by_article[f] += 1


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--real", default=os.path.join(here, "..", "..", "shared", "data", "real"))
    ap.add_argument("--out", default=os.path.join(here, "data"))
    args = ap.parse_args()

    sources = {}
    with open(os.path.join(args.real, "sources.jsonl"), encoding="utf-8") as f:
        for line in f:
            s = json.loads(line)
            sources[s["id"]] = s

    texts = collections.defaultdict(list)  # lang -> [(title, rest)]
    skipped = collections.Counter()
    with open(os.path.join(args.real, "articles.jsonl"), encoding="utf-8") as f:
        for line in f:
            a = json.loads(line)
            title = clean(a.get("title"))
            rest = clean(a.get("description")) + "\n" + clean(a.get("content"))
            sid = (a.get("source") or {}).get("id")
            lang = None
            guessed = guess_language(title + "\n" + rest)
            if sid in sources:
                lang = sources[sid]["language"]
                lang = "sv" if lang == "se" else lang
                # A catalogue source's articles are in its language, except
                # the few that clearly are not (English wire copy on a
                # non-English source): trust a confident guess then.
                if guessed and guessed != lang:
                    lang = guessed
            else:
                lang = guessed
            if lang not in LANGS:
                skipped[script_of(title) or "none"] += 1
                continue
            texts[lang].append((title_body(title), rest))

    words = {}
    names = {}
    for lang in LANGS:
        wc = collections.Counter()
        forms = collections.defaultdict(collections.Counter)
        nc = collections.Counter()
        stop = set(STOP.get(lang, []))
        for title, rest in texts.get(lang, []):
            text = title + "\n" + rest
            if lang == "zh":
                for run in HAN_RUN_RE.findall(text):
                    if len(run) == 1:
                        wc[run] += 1
                    for i in range(len(run) - 1):
                        wc[run[i:i + 2]] += 1
                han_names(text, nc)
                continue
            for w in WORD_RE.findall(text):
                if w.isdigit():
                    continue
                low = w.lower()
                wc[low] += 1
                forms[low][w] += 1
            if lang in ("ar", "he", "ud"):
                pair_names(text, nc, {w for w, _ in wc.most_common(60)} | stop)
            else:
                cased_names(rest, nc, stop)
        top = wc.most_common(MAX_WORDS)
        if forms:
            # The most frequent spelling: proper nouns keep their capital.
            top = [(forms[w].most_common(1)[0][0], n) for w, n in top]
        words[lang] = top
        names[lang] = [(n, c) for n, c in nc.most_common(MAX_NAMES) if c >= 3]

    borrowed = {}
    for lang in LANGS:
        if len(words[lang]) >= MIN_WORDS:
            continue
        lender = BORROW.get(lang)
        if not lender or lender == lang or len(words[lender]) < MIN_WORDS:
            continue
        # Keep the language's own words first, then the lender's.
        own = {w.lower() for w, _ in words[lang]}
        extra = [(w, n) for w, n in words[lender] if w.lower() not in own]
        words[lang] = words[lang] + extra[: MAX_WORDS - len(words[lang])]
        if len(names[lang]) < 50:
            names[lang] = names[lang] + names[lender][: MAX_NAMES - len(names[lang])]
        borrowed[lang] = lender

    synthetic = {}
    for lang in LANGS:
        n = complete_names(lang, words[lang], names[lang])
        if n:
            synthetic[lang] = n

    os.makedirs(args.out, exist_ok=True)
    for lang in LANGS:
        with open(os.path.join(args.out, "words-%s.txt" % lang), "w", encoding="utf-8") as f:
            for w, n in words[lang]:
                f.write("%s\t%d\n" % (w, n))
        with open(os.path.join(args.out, "names-%s.txt" % lang), "w", encoding="utf-8") as f:
            for w, n in names[lang]:
                f.write("%s\t%d\n" % (w, n))

    with open(os.path.join(args.out, "catalogue.tsv"), "w", encoding="utf-8") as f:
        for sid in sorted(sources):
            s = sources[sid]
            host = re.sub(r"^[a-z]+://", "", s.get("url") or "").split("/")[0].lower()
            host = host[4:] if host.startswith("www.") else host
            row = [sid, s.get("name") or sid, host, s.get("language") or "",
                   s.get("country") or "", s.get("category") or ""]
            f.write("\t".join(x.replace("\t", " ") for x in row) + "\n")

    with open(os.path.join(args.out, "SOURCES.md"), "w", encoding="utf-8") as f:
        f.write("# bench/data — where the word lists come from\n\n")
        f.write("Made by `bench/make_words.py` from `../shared/data/real/articles.jsonl` "
                "(31,967 real NewsAPI articles saved in public repositories; see that "
                "folder's README for provenance and licences) and `sources.jsonl` "
                "(the 129 catalogue sources → `catalogue.tsv`).\n\n")
        f.write("| language | articles | own words | words in list | names (synthetic) "
                "| borrowed from |\n")
        f.write("|---|---|---|---|---|---|\n")
        for lang in LANGS:
            f.write("| %s | %d | %d | %d | %d (%d) | %s |\n" % (
                lang, len(texts.get(lang, [])), own_count(texts, lang),
                len(words[lang]), len(names[lang]), synthetic.get(lang, 0),
                borrowed.get(lang, "—")))
        f.write("\nSkipped (language outside the API's 14, by dominant script of the title): %s.\n"
                % ", ".join("%s %d" % kv for kv in skipped.most_common()))
        f.write("\nA language borrows when its real text gives fewer than %d distinct words: "
                "its own words come first (keeping their frequencies), then the lender's. "
                "The generated text of such a language is partly the lender's words, which "
                "only matters for realism, not for what the benchmark measures. Urdu (ud) "
                "has no real text in the set: it borrows all of Arabic's words and names "
                "(same script, different language).\n\n"
                "Names: a language with fewer than %d real names (runs of capitalised words, "
                "frequent native word pairs, Han trigrams seen in 3+ articles) gets synthetic "
                "ones, made of two of its own words (capitalised words where the script has "
                "case, else words of rank 100-3000), listed after the real ones with count 2.\n"
                % (MIN_WORDS, MIN_NAMES))
    for lang in LANGS:
        print("%s: %5d articles, %5d words, %4d names%s" % (
            lang, len(texts.get(lang, [])), len(words[lang]), len(names[lang]),
            " (borrows from %s)" % borrowed[lang] if lang in borrowed else ""), file=sys.stderr)
    return 0


def complete_names(lang, words, names):
    """Add synthetic two-word names until there are MIN_NAMES; returns how many."""
    import random
    if len(names) >= MIN_NAMES:
        return 0
    rng = random.Random("names-" + lang)
    if lang == "zh":
        pool = [w for w, _ in words[50:3000] if len(w) == 2]
    elif lang in ("ar", "he", "ud"):
        pool = [w for w, _ in words[100:3000] if len(w) > 2 and native(w)]
    else:
        pool = [w for w, _ in words[50:5000] if w[:1].isupper() and len(w) > 2]
        if len(pool) < 100:
            pool = [w for w, _ in words[100:3000] if len(w) > 2]
    have = {n for n, _ in names}
    added = 0
    tries = 0
    while len(names) < MIN_NAMES and tries < 100000 and len(pool) >= 2:
        tries += 1
        a, b = rng.sample(pool, 2)
        name = a + b if lang == "zh" else a + " " + b
        if name in have:
            continue
        have.add(name)
        names.append((name, 2))
        added += 1
    return added


_own_cache = {}


def own_count(texts, lang):
    """Distinct words of a language's own real text (before borrowing)."""
    if lang in _own_cache:
        return _own_cache[lang]
    seen = set()
    for title, rest in texts.get(lang, []):
        if lang == "zh":
            for run in HAN_RUN_RE.findall(title + rest):
                for i in range(max(1, len(run) - 1)):
                    seen.add(run[i:i + 2])
        else:
            seen.update(w.lower() for w in WORD_RE.findall(title + "\n" + rest) if not w.isdigit())
    _own_cache[lang] = len(seen)
    return _own_cache[lang]


if __name__ == "__main__":
    sys.exit(main())
