/* Languages and Snowball stemming of text.h (ENGINE.md §8).
 * libstemmer objects are not thread-safe, so each thread lazily creates its
 * own stemmer per language; text_thread_release() frees the caller's.
 *
 * Each thread also keeps a small memo of recent (language, token) -> stem:
 * words repeat (Zipf), and a Snowball stem costs far more than a hash and a
 * compare (perf of a first index build of 1 M articles: libstemmer 18 % of
 * all samples). A stem is a pure function of its token, so the memo changes
 * nothing but the time. */
#include "text/text.h"

#include <libstemmer.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/hash.h"
#include "util/vocab.h"
#include "util/banned.h"

/* The API's languages, with their Snowball algorithm (NULL: none). */
static const struct {
    char code[3];
    const char *algorithm;
} langs[] = {
    {"ar", "arabic"},    {"de", "german"},     {"en", "english"}, {"es", "spanish"},
    {"fr", "french"},    {"he", NULL},         {"it", "italian"}, {"nl", "dutch"},
    {"no", "norwegian"}, {"pt", "portuguese"}, {"ru", "russian"}, {"sv", "swedish"},
    {"ud", NULL},        {"zh", NULL},
};

#define LANG_COUNT (sizeof langs / sizeof langs[0])

/* The memo: direct-mapped, one slot per hash; tokens and stems longer
 * than MEMO_WORD bytes are stemmed every time. */
#define MEMO_SLOTS 65536 /* a power of two; 4 MB a thread, resident as touched (calloc) */
#define MEMO_WORD 29

struct memo_slot {
    uint8_t lang; /* index in langs[] + 1; 0: empty */
    uint8_t tok_len;
    uint8_t stem_len;
    char tok[MEMO_WORD];
    char stem[MEMO_WORD + 1];
    char pad[2]; /* 64 bytes */
};

/* A thread's stemmers and memo, freed together. */
struct thread_text {
    struct sb_stemmer *st[LANG_COUNT];
    struct memo_slot *memo;
};

static _Thread_local struct thread_text thread_text;

/* A key whose destructor frees a thread's stemmers when it exits, so
 * server threads need not call text_thread_release() themselves. */
static pthread_key_t stemmers_key;
static pthread_once_t stemmers_once = PTHREAD_ONCE_INIT;
static bool stemmers_key_ok;

static void stemmers_free(void *arg)
{
    struct thread_text *tt = arg;
    for (size_t i = 0; i < LANG_COUNT; i++) {
        sb_stemmer_delete(tt->st[i]);
        tt->st[i] = NULL;
    }
    free(tt->memo);
    tt->memo = NULL;
}

static uint64_t memo_hash(int lang, const char *tok, size_t len)
{
    return hash_mix64(hash_fnv1a64_update(HASH_FNV1A64_INIT ^ (uint64_t)lang, tok, len));
}

static void stemmers_key_init(void)
{
    stemmers_key_ok = pthread_key_create(&stemmers_key, stemmers_free) == 0;
}

/* Index of lang in langs[], or -1. "se" (a quirk of the NewsAPI source
 * catalogue) is Swedish. */
static int lang_index(const char *lang)
{
    if (lang == NULL)
        return -1;
    lang = vocab_language_alias(lang);
    for (size_t i = 0; i < LANG_COUNT; i++) {
        if (strcmp(langs[i].code, lang) == 0)
            return (int)i;
    }
    return -1;
}

bool text_lang_known(const char *lang)
{
    /* Known as written: a code the language rule would respell ("se") is not. */
    return lang != NULL && strcmp(vocab_language_alias(lang), lang) == 0 && lang_index(lang) >= 0;
}

bool text_lang_has_stemmer(const char *lang)
{
    int i = lang_index(lang);
    return i >= 0 && langs[i].algorithm != NULL;
}

int text_stem(const char *lang, const char *tok, size_t len, char *out, size_t cap)
{
    int i = lang_index(lang);
    struct sb_stemmer *st;
    const sb_symbol *stem;
    int n;

    if (i < 0 || langs[i].algorithm == NULL)
        return 0;
    if (len > INT_MAX || cap == 0)
        return ERR_INVALID;
    struct memo_slot *slot = NULL;
    if (len <= MEMO_WORD) {
        struct memo_slot *m = thread_text.memo;
        if (m == NULL && thread_text.st[i] != NULL)               /* (the key is set: see below) */
            m = thread_text.memo = calloc(MEMO_SLOTS, sizeof *m); /* NULL: no memo */
        if (m) {
            slot = &m[memo_hash(i, tok, len) & (MEMO_SLOTS - 1)];
            if (slot->lang == i + 1 && (size_t)slot->tok_len == len &&
                memcmp(slot->tok, tok, len) == 0) {
                if ((size_t)slot->stem_len >= cap)
                    return ERR_TOO_LARGE;
                memcpy(out, slot->stem, slot->stem_len);
                out[slot->stem_len] = '\0';
                return slot->stem_len;
            }
        }
    }
    st = thread_text.st[i];
    if (st == NULL) {
        st = sb_stemmer_new(langs[i].algorithm, "UTF_8");
        if (st == NULL)
            return ERR_NOMEM;
        thread_text.st[i] = st;
        pthread_once(&stemmers_once, stemmers_key_init);
        if (stemmers_key_ok)
            pthread_setspecific(stemmers_key, &thread_text);
    }
    stem = sb_stemmer_stem(st, (const sb_symbol *)tok, (int)len);
    if (stem == NULL)
        return ERR_NOMEM;
    n = sb_stemmer_length(st);
    if (n < 0 || (size_t)n >= cap)
        return ERR_TOO_LARGE;
    memcpy(out, stem, (size_t)n);
    out[n] = '\0';
    if (slot && n <= MEMO_WORD) {
        slot->lang = (uint8_t)(i + 1);
        slot->tok_len = (uint8_t)len;
        slot->stem_len = (uint8_t)n;
        memcpy(slot->tok, tok, len);
        memcpy(slot->stem, stem, (size_t)n);
    }
    return n;
}

void text_thread_release(void)
{
    stemmers_free(&thread_text);
    if (stemmers_key_ok)
        pthread_setspecific(stemmers_key, NULL);
}
