/* text_tokenize() of text.h: the one tokenizer of newsd (ENGINE.md §8).
 *
 * Each input code point is folded on its own (utf8proc NFKD + case fold),
 * which may yield several code points ("ﬁ" → f i, "①" → 1); each of them
 * carries the byte range of the input code point it came from. Marks are
 * then stripped or kept depending on the script of the letter they follow,
 * and kept marks are recomposed with the previous code point (pairwise NFC),
 * so precomposed and decomposed input give the same token. Runs of letters
 * and digits become tokens; Han/Kana/Hangul runs become overlapping bigrams.
 *
 * Known simplification: composition is pairwise with the previous code point
 * only (no canonical reordering across input code points); it only matters
 * for unusual mark sequences in scripts whose marks are kept. */
#include "text/text.h"

#include <string.h>
#include <utf8proc.h>

#include "text/category.h"
#include "util/ascii.h"
#include "util/limits.h"
#include "util/sort.h"

#include "util/banned.h"

#define FOLD_MAX 32 /* longest NFKD+casefold expansion of one code point is 18 */

/* A run of ordinary (non-CJK) letters and digits being collected. */
struct word {
    char buf[LIMIT_TOKEN_BYTES + 4]; /* folded UTF-8 */
    size_t len;
    size_t last_off;  /* offset in buf of the last code point */
    int32_t last_cp;  /* last code point appended, -1 when none */
    bool strip_marks; /* the letter marks now apply to is Latin/Greek/Cyrillic/... */
    bool full;        /* cut at LIMIT_TOKEN_BYTES: later code points dropped */
    size_t start, end;
};

/* A run of Han/Kana/Hangul characters: the previous and current character
 * are kept so a bigram is only emitted once the current one can no longer
 * absorb a combining mark (e.g. halfwidth ｶﾞ → ガ). */
struct cjk {
    int n; /* characters held: 0, 1 (cur) or 2 (prev + cur) */
    bool emitted;
    int32_t prev, cur;
    size_t prev_start, cur_start, cur_end;
};

struct tokenizer {
    struct word w;
    struct cjk c;
    uint32_t pos;
    text_token_cb cb;
    void *ctx;
};

/* Scripts whose combining marks are diacritics to remove (accents, Greek
 * tonos, Hebrew points, Arabic harakat). Cyrillic is included as the design
 * asks, so й folds to и and ё to е (Lucene-style folding; consistent on both
 * index and query side, at the cost of merging a few Russian word pairs).
 * Indic, Thai and other scripts keep their marks: there they are vowels. */
static const struct strip_range {
    int32_t lo, hi;
} strip_ranges[] = {
    {0x0041, 0x024F}, /* Basic Latin .. Latin Extended-B */
    {0x0250, 0x02AF}, /* IPA */
    {0x0370, 0x03FF}, /* Greek and Coptic */
    {0x0400, 0x052F}, /* Cyrillic, Cyrillic Supplement */
    {0x0590, 0x05FF}, /* Hebrew */
    {0x0600, 0x06FF}, /* Arabic */
    {0x0750, 0x077F}, /* Arabic Supplement */
    {0x0870, 0x08FF}, /* Arabic Extended-B, -A */
    {0x1C80, 0x1C8F}, /* Cyrillic Extended-C */
    {0x1D00, 0x1DBF}, /* Phonetic Extensions */
    {0x1E00, 0x1FFF}, /* Latin Extended Additional, Greek Extended */
    {0x2C60, 0x2C7F}, /* Latin Extended-C */
    {0x2DE0, 0x2DFF}, /* Cyrillic Extended-A */
    {0xA640, 0xA69F}, /* Cyrillic Extended-B */
    {0xA720, 0xA7FF}, /* Latin Extended-D */
    {0xAB30, 0xAB6F}, /* Latin Extended-E */
    {0xFB00, 0xFDFF}, /* Latin/Hebrew/Arabic presentation forms */
    {0xFE70, 0xFEFF}, /* Arabic presentation forms-B */
    {0xFF21, 0xFF5A}, /* fullwidth Latin (NFKC makes it ASCII anyway) */
};

/* The ranges are sorted and apart: a range orders before cp when it ends
 * below it, so the lower bound is the one range that may hold cp. */
static int range_cmp_cp(const void *element, const void *key)
{
    const struct strip_range *r = element;
    int32_t cp = *(const int32_t *)key;
    return r->hi < cp ? -1 : 0;
}

static bool in_strip_script(int32_t cp)
{
    size_t n = sizeof strip_ranges / sizeof strip_ranges[0];
    size_t at = sort_lower_bound(strip_ranges, n, sizeof strip_ranges[0], &cp, range_cmp_cp);
    return at < n && strip_ranges[at].lo <= cp;
}

/* Han (with extensions and compatibility ideographs), Hiragana, Katakana
 * and Hangul: scripts written without spaces, indexed as bigrams. */
static bool is_cjk(int32_t cp)
{
    return (cp >= 0x1100 && cp <= 0x11FF)       /* Hangul Jamo */
           || (cp >= 0x3005 && cp <= 0x3007)    /* 々 〆 〇 */
           || (cp >= 0x3041 && cp <= 0x30FF)    /* Hiragana, Katakana */
           || (cp >= 0x3131 && cp <= 0x318E)    /* Hangul compatibility jamo */
           || (cp >= 0x31F0 && cp <= 0x31FF)    /* Katakana phonetic extensions */
           || (cp >= 0x3400 && cp <= 0x4DBF)    /* CJK extension A */
           || (cp >= 0x4E00 && cp <= 0x9FFF)    /* CJK unified ideographs */
           || (cp >= 0xA960 && cp <= 0xA97F)    /* Hangul Jamo extended-A */
           || (cp >= 0xAC00 && cp <= 0xD7FF)    /* Hangul syllables, jamo ext-B */
           || (cp >= 0xF900 && cp <= 0xFAFF)    /* CJK compatibility ideographs */
           || (cp >= 0xFF66 && cp <= 0xFFDC)    /* halfwidth Katakana, Hangul */
           || (cp >= 0x1B000 && cp <= 0x1B16F)  /* Kana supplement, extended */
           || (cp >= 0x20000 && cp <= 0x323AF); /* CJK extensions B..H */
}

/* Format characters that sit inside words without separating them: soft
 * hyphen, ZWNJ/ZWJ (Indic and Persian shaping), word joiner, BOM, and the
 * Arabic tatweel (a letter by category, but only stretches the line). */
static bool is_ignorable(int32_t cp)
{
    return cp == 0x00AD || cp == 0x200C || cp == 0x200D || cp == 0x2060 || cp == 0xFEFF ||
           cp == 0x0640;
}

enum cls { CLS_SEP, CLS_WORD, CLS_MARK };

static enum cls classify(int32_t cp)
{
    utf8proc_category_t c = utf8proc_category(cp);
    if (text_category_letter(c))
        return CLS_WORD;
    switch (c) {
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
        return CLS_WORD;
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
        return CLS_MARK;
    default:
        return CLS_SEP;
    }
}

/* The canonical composition of a + b, or -1. Only asked for marks and
 * Hangul vowel/trailing jamo, the only second halves of compositions. */
static int32_t compose_pair(int32_t a, int32_t b)
{
    utf8proc_int32_t pair[2] = {a, b};
    if (utf8proc_normalize_utf32(pair, 2, UTF8PROC_COMPOSE) == 1)
        return pair[0];
    return -1;
}

static bool is_jamo_second(int32_t cp)
{
    return (cp >= 0x1160 && cp <= 0x11FF) || (cp >= 0xD7B0 && cp <= 0xD7FF);
}

static int emit(struct tokenizer *t, const char *text, size_t len, size_t start, size_t end,
                unsigned flags)
{
    struct text_token tok = {
        .text = text, .len = len, .start = start, .end = end, .pos = t->pos, .flags = flags};
    t->pos++;
    return t->cb(&tok, t->ctx);
}

static int word_flush(struct tokenizer *t)
{
    struct word *w = &t->w;
    int rc = 0;
    if (w->len > 0)
        rc = emit(t, w->buf, w->len, w->start, w->end, 0);
    w->len = 0;
    w->last_cp = -1;
    w->full = false;
    return rc;
}

static int cjk_flush_pending(struct tokenizer *t)
{
    struct cjk *c = &t->c;
    char buf[8];
    int rc = 0;
    if (c->n == 2) {
        size_t len = (size_t)utf8proc_encode_char(c->prev, (utf8proc_uint8_t *)buf);
        len += (size_t)utf8proc_encode_char(c->cur, (utf8proc_uint8_t *)buf + len);
        rc = emit(t, buf, len, c->prev_start, c->cur_end, TEXT_TOKEN_CJK);
    } else if (c->n == 1 && !c->emitted) {
        size_t len = (size_t)utf8proc_encode_char(c->cur, (utf8proc_uint8_t *)buf);
        rc = emit(t, buf, len, c->cur_start, c->cur_end, TEXT_TOKEN_CJK);
    }
    c->n = 0;
    c->emitted = false;
    return rc;
}

/* The pending CJK character(s) out as a token. With none pending there is
 * nothing to reset either (n == 0 means emitted is false: cjk_add sets it
 * only with n == 1), and most text has no CJK run while its every ASCII
 * letter comes here: that case inline, without the call (the 32 k real
 * articles of the test data tokenized in 186 ms where the call made it
 * 237). */
static inline int cjk_flush(struct tokenizer *t)
{
    return t->c.n == 0 ? 0 : cjk_flush_pending(t);
}

static void word_append(struct word *w, int32_t cp, size_t start, size_t end)
{
    utf8proc_uint8_t enc[4];
    size_t n;
    if (w->len == 0) {
        w->start = start;
        w->full = false;
    }
    w->end = end;
    if (w->full)
        return;
    if (cp < 0x80) { /* its own UTF-8 (a call into utf8proc a character was 3 % of a first build) */
        if (w->len + 1 > LIMIT_TOKEN_BYTES) {
            w->full = true;
            return;
        }
        w->buf[w->len] = (char)cp;
        w->last_off = w->len;
        w->last_cp = cp;
        w->len++;
        return;
    }
    n = (size_t)utf8proc_encode_char(cp, enc);
    if (w->len + n > LIMIT_TOKEN_BYTES) {
        w->full = true;
        return;
    }
    memcpy(w->buf + w->len, enc, n);
    w->last_off = w->len;
    w->last_cp = cp;
    w->len += n;
}

/* A kept mark: composed with the previous code point when Unicode has a
 * composition for the pair, else appended. */
static void word_add_mark(struct word *w, int32_t cp, size_t end)
{
    int32_t comp = w->full ? -1 : compose_pair(w->last_cp, cp);
    if (comp >= 0) {
        utf8proc_uint8_t enc[4];
        size_t n = (size_t)utf8proc_encode_char(comp, enc);
        if (w->last_off + n <= LIMIT_TOKEN_BYTES) {
            memcpy(w->buf + w->last_off, enc, n);
            w->len = w->last_off + n;
            w->last_cp = comp;
            w->end = end;
            return;
        }
    }
    word_append(w, cp, w->start, end);
}

static int cjk_add(struct tokenizer *t, int32_t cp, size_t start, size_t end)
{
    struct cjk *c = &t->c;
    int rc = 0;
    if (c->n == 2) {
        rc = cjk_flush(t);
        c->n = 1;
        c->emitted = true;
    }
    if (c->n == 1) {
        c->prev = c->cur;
        c->prev_start = c->cur_start;
        c->n = 2;
    } else {
        c->n = 1;
    }
    c->cur = cp;
    c->cur_start = start;
    c->cur_end = end;
    return rc;
}

/* Feed one folded code point that came from input bytes [start, end). */
static int feed(struct tokenizer *t, int32_t cp, size_t start, size_t end)
{
    struct word *w = &t->w;
    struct cjk *c = &t->c;
    enum cls cls = classify(cp);
    int rc = 0;

    if (cls == CLS_MARK || (is_jamo_second(cp) && c->n > 0)) {
        if (c->n > 0) {
            int32_t comp = compose_pair(c->cur, cp);
            if (comp >= 0) {
                c->cur = comp;
                c->cur_end = end;
                return 0;
            }
            if (cls == CLS_MARK) {
                c->cur_end = end; /* an unattached mark in CJK text: dropped */
                return 0;
            }
        } else if (w->len > 0) {
            if (cls == CLS_MARK) {
                if (w->strip_marks)
                    w->end = end;
                else
                    word_add_mark(w, cp, end);
                return 0;
            }
        } else if (cls == CLS_MARK) {
            return 0; /* a mark with nothing to attach to */
        }
    }

    if (cls == CLS_SEP) {
        if (is_ignorable(cp))
            return 0;
        rc = word_flush(t);
        if (rc == 0)
            rc = cjk_flush(t);
        return rc;
    }
    if (is_cjk(cp)) {
        rc = word_flush(t);
        if (rc == 0)
            rc = cjk_add(t, cp, start, end);
        return rc;
    }
    if (is_ignorable(cp))
        return 0;
    rc = cjk_flush(t);
    if (rc != 0)
        return rc;
    word_append(w, cp, start, end);
    /* Marks after digits are noise; after letters they are diacritics only
     * in the scripts listed in strip_ranges. */
    w->strip_marks = in_strip_script(cp) || utf8proc_category(cp) >= UTF8PROC_CATEGORY_ND;
    return 0;
}

int text_tokenize(const char *s, size_t n, text_token_cb cb, void *ctx)
{
    struct tokenizer t;
    size_t i = 0;
    int rc = 0;

    t.w.len = 0;
    t.w.last_cp = -1;
    t.w.full = false;
    t.w.strip_marks = true;
    t.c.n = 0;
    t.c.emitted = false;
    t.pos = 0;
    t.cb = cb;
    t.ctx = ctx;

    while (i < n && rc == 0) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t used;
        unsigned char b = (unsigned char)s[i];

        if (b < 0x80) { /* ASCII fast path: folding is lower-casing */
            b = (unsigned char)ascii_lower((char)b);
            if ((b >= 'a' && b <= 'z') || (b >= '0' && b <= '9')) {
                rc = cjk_flush(&t);
                if (rc == 0) {
                    word_append(&t.w, b, i, i + 1);
                    t.w.strip_marks = true;
                }
            } else {
                rc = word_flush(&t);
                if (rc == 0)
                    rc = cjk_flush(&t);
            }
            i++;
            continue;
        }

        used = utf8proc_iterate((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)(n - i), &cp);
        if (used <= 0) { /* an invalid byte separates words */
            rc = word_flush(&t);
            if (rc == 0)
                rc = cjk_flush(&t);
            i++;
            continue;
        }
        if (cp >= 0xAC00 && cp <= 0xD7A3) {
            /* Precomposed Hangul is already NFKC-casefolded. */
            rc = feed(&t, cp, i, i + (size_t)used);
        } else {
            utf8proc_int32_t folded[FOLD_MAX];
            int last_boundclass = 0;
            utf8proc_ssize_t k = utf8proc_decompose_char(
                cp, folded, FOLD_MAX, UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT | UTF8PROC_CASEFOLD,
                &last_boundclass);
            if (k < 0 || k > FOLD_MAX) { /* cannot happen with Unicode data */
                folded[0] = cp;
                k = 1;
            }
            for (utf8proc_ssize_t j = 0; j < k && rc == 0; j++)
                rc = feed(&t, folded[j], i, i + (size_t)used);
        }
        i += (size_t)used;
    }
    if (rc == 0)
        rc = word_flush(&t);
    if (rc == 0)
        rc = cjk_flush(&t);
    return rc;
}
