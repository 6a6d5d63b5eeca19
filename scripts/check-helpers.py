#!/usr/bin/python3
"""One copy of each helper (issue 24 step 4): the mechanical checks that
what src/util/ holds once is not written again elsewhere in src/. Run by
`make docs-check` (so by `make check`).

    scripts/check-helpers.py [SRC]        (default: src/ beside this script)

Rules, each over the code of every .c and .h file (comments stripped
first, so that prose may name what code may not):

  clock      CLOCK_MONOTONIC is named in util/clock.c only, plus at most
             two other files where it only sets a condition variable's
             clock (pthread_condattr_setclock).                
  search     no hand-written binary search (a "lo + (hi - lo) / 2" or
             "(lo + hi) / 2" midpoint): util/sort.h's sort_lower_bound is
             the one (util/sort.c's selection picks its pivot so too).                                          
  compare    no hand-written int64_t qsort comparator: util/sort.h's
             sort_cmp_i64 / sort_order_i64.                    
  decode     no hand-written percent-decoding (a byte compared with '%'
             next to a hex digit read): util/url.h's url_decode_byte.
                                                                
  repair     U+FFFD's bytes, the stand-in for invalid UTF-8, are written only by
             util/utf8.c (utf8_put_repaired, the one repair) and the JSON
             and XML writers that escape byte by byte (util/jw.c,
             util/xml.c).                                      
  language   the language rule ("se" is "sv") and the category list are
             util/vocab.c's alone: no "se" or "entertainment" string in
             code elsewhere.                                   
  (File lengths are scripts/check-structure.py's rule.)

Exit status: 1 when a rule is broken, else 0."""
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
CONDVAR_FILES_MAX = 2

MIDPOINT = re.compile(r"\b(\w+)\s*\+\s*\(\s*(\w+)\s*-\s*\1\s*\)\s*(/\s*2\b|>>\s*1\b)|"
                      r"\(\s*(\w+)\s*\+\s*(\w+)\s*\)\s*(/\s*2\b|>>\s*1\b)")
I64_CMP = re.compile(r"\*\s*\(\s*const\s+int64_t\s*\*\s*\)\s*\w+\s*,\s*\w+\s*=\s*"
                     r"\*\s*\(\s*const\s+int64_t\s*\*\s*\)")
PERCENT = re.compile(r"==\s*'%'")
HEX_READ = re.compile(r"ascii_hex_value\s*\(|isxdigit\s*\(")
# String literals are blanked to "" by strip(); these rules read the raw
# literal, kept aside.
SE_LITERAL = re.compile(r'"se"|==\s*\'s\'[^;\n]*==\s*\'e\'')
CATEGORY_LITERAL = re.compile(r'"entertainment"')
REPLACEMENT = re.compile(r"\\x[eE][fF]\\x[bB][fF]\\x[bB][dD]")
REPAIRERS = ("util/utf8.c", "util/jw.c", "util/xml.c")


def strip(text):
    """text with every comment blanked (newlines kept, so line numbers
    hold); string and character literals stay as written, so that a "/*"
    inside one opens no comment and the literal rules can read them."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def files(src):
    for d, _, names in os.walk(src):
        for name in sorted(names):
            if name.endswith((".c", ".h")):
                path = os.path.join(d, name)
                yield os.path.relpath(path, src).replace(os.sep, "/"), path


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "src")
    broken = []
    condvar_files = []

    def hit(rel, rule, text, pos, what):
        broken.append("src/%s:%d: %s: %s" % (rel, line_of(text, pos), rule, what))

    for rel, path in sorted(files(src)):
        with open(path, encoding="utf-8", errors="replace") as f:
            raw = f.read()
        code = strip(raw)

        if rel != "util/clock.c":
            uses = [m.start() for m in re.finditer(r"\bCLOCK_MONOTONIC\b", code)]
            setclock = [p for p in uses
                        if re.search(r"pthread_condattr_setclock\s*\([^;]*$",
                                     code[code.rfind("\n", 0, p) + 1:p])]
            for p in uses:
                if p not in setclock:
                    line = "src/%s:%d: clock: CLOCK_MONOTONIC outside util/clock.c " \
                           "(clock_mono_ms, clock_mono_in, clock_cond_init)" % (
                               rel, line_of(code, p))
                    broken.append(line)
            if setclock:
                condvar_files.append((rel, line_of(code, setclock[0])))

        if rel not in ("util/sort.h", "util/sort.c"):  # the ordering module (its selection too)
            for m in MIDPOINT.finditer(code):
                # A search that checks each probe against the bounds of a
                # file it reads (a damaged segment stops it) says so with
                # "check-helpers: probe checked" in a comment of its function.
                if "check-helpers: probe checked" in raw[max(0, raw.rfind("\n}", 0, m.start())):m.start()]:
                    continue
                hit(rel, "search", code, m.start(),
                    "a hand-written binary search (util/sort.h: sort_lower_bound)")
        if rel != "util/sort.c":
            for m in I64_CMP.finditer(code):
                hit(rel, "compare", code, m.start(),
                    "a hand-written int64_t comparator (util/sort.h: sort_cmp_i64)")
        if rel != "util/url.c" and HEX_READ.search(code):
            for m in PERCENT.finditer(code):
                hit(rel, "decode", code, m.start(),
                    "a hand-written percent-decoder (util/url.h: url_decode_byte)")
        if rel not in REPAIRERS:
            for m in REPLACEMENT.finditer(code):
                hit(rel, "repair", code, m.start(),
                    "invalid UTF-8 repaired again (util/utf8.h: utf8_put_repaired)")
        if rel != "util/vocab.c":
            for m in SE_LITERAL.finditer(code):
                hit(rel, "language", code, m.start(),
                    "the language rule written again (util/vocab.h: vocab_language_alias)")
            for m in CATEGORY_LITERAL.finditer(code):
                hit(rel, "language", code, m.start(),
                    "a category list written again (util/vocab.h: vocab_category)")

    if len(condvar_files) > CONDVAR_FILES_MAX:
        for rel, line in condvar_files:
            broken.append("src/%s:%d: clock: a condition variable's clock set up here; at most "
                          "%d files may (util/clock.h: clock_cond_init)" % (
                              rel, line, CONDVAR_FILES_MAX))

    for line in broken:
        print(line)
    print("check-helpers: %d broken" % len(broken))
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
