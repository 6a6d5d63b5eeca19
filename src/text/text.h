/* The one tokenizer of newsd, used for indexing AND for querying so every
 * index agrees on what matches (DESIGN.md, ENGINE.md §8).
 *
 * Pipeline: UTF-8 (invalid bytes act as separators) → NFKC case fold
 * (utf8proc) → diacritics stripped for Latin, Greek, Cyrillic, Arabic and
 * Hebrew letters only (never Indic/Thai vowel signs, which are letters there)
 * → tokens are maximal runs of letters, digits and (non-stripped) marks;
 * apostrophes, hyphens and all other punctuation split → Han, Hiragana,
 * Katakana and Hangul runs become overlapping bigrams (a run of one character
 * is one token). Tokens longer than LIMIT_TOKEN_BYTES are cut at a code
 * point boundary. Thread-safe, allocation-free per token. */
#ifndef NEWSD_TEXT_TEXT_H
#define NEWSD_TEXT_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum text_token_flags {
    TEXT_TOKEN_CJK = 1 << 0, /* a CJK bigram or single CJK character: never stemmed */
};

struct text_token {
    const char *text; /* folded token, UTF-8, NOT NUL-terminated; valid during the callback */
    size_t len;
    size_t start, end; /* byte range of the source text it came from */
    uint32_t pos;      /* 0-based token position (bigrams: one per bigram) */
    unsigned flags;    /* enum text_token_flags */
};

/* Called once per token; a non-zero return stops tokenizing and is returned
 * by text_tokenize. */
typedef int (*text_token_cb)(const struct text_token *tok, void *ctx);

/* Tokenize s[0..n). Returns 0, the callback's non-zero value, or ERR_NOMEM. */
int text_tokenize(const char *s, size_t n, text_token_cb cb, void *ctx);

/* Languages of the API (ar de en es fr he it nl no pt ru sv ud zh). */
bool text_lang_known(const char *lang);

/* True when lang has a Snowball stemmer (he, ud, zh do not). */
bool text_lang_has_stemmer(const char *lang);

/* Stem a folded token in lang into out (cap bytes incl. NUL). Returns the
 * stem's length, 0 when lang has no stemmer (out untouched), or a negative
 * ERR_*. Uses one stemmer per (thread, language): thread-safe. */
int text_stem(const char *lang, const char *tok, size_t len, char *out, size_t cap);

/* Detect the language of a text (title + description are enough) among the
 * API's languages; writes a 2-letter code or "" when unsure. Thread-safe. */
void text_detect_language(const char *s, size_t n, char out[3]);

/* Release per-thread stemmers of the calling thread (optional, at thread exit). */
void text_thread_release(void);

#endif
