/* Languages and Snowball stemming of text.h (ENGINE.md §8).
 * libstemmer objects are not thread-safe, so each thread lazily creates its
 * own stemmer per language; text_thread_release() frees the caller's. */
#include "text/text.h"

#include <libstemmer.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>

#include "util/err.h"
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

static _Thread_local struct sb_stemmer *thread_stemmers[LANG_COUNT];

/* A key whose destructor frees a thread's stemmers when it exits, so
 * server threads need not call text_thread_release() themselves. */
static pthread_key_t stemmers_key;
static pthread_once_t stemmers_once = PTHREAD_ONCE_INIT;
static bool stemmers_key_ok;

static void stemmers_free(void *arr)
{
    struct sb_stemmer **st = arr;
    for (size_t i = 0; i < LANG_COUNT; i++) {
        sb_stemmer_delete(st[i]);
        st[i] = NULL;
    }
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
    if (strcmp(lang, "se") == 0)
        lang = "sv";
    for (size_t i = 0; i < LANG_COUNT; i++) {
        if (strcmp(langs[i].code, lang) == 0)
            return (int)i;
    }
    return -1;
}

bool text_lang_known(const char *lang)
{
    return lang != NULL && strcmp(lang, "se") != 0 && lang_index(lang) >= 0;
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
    st = thread_stemmers[i];
    if (st == NULL) {
        st = sb_stemmer_new(langs[i].algorithm, "UTF_8");
        if (st == NULL)
            return ERR_NOMEM;
        thread_stemmers[i] = st;
        pthread_once(&stemmers_once, stemmers_key_init);
        if (stemmers_key_ok)
            pthread_setspecific(stemmers_key, thread_stemmers);
    }
    stem = sb_stemmer_stem(st, (const sb_symbol *)tok, (int)len);
    if (stem == NULL)
        return ERR_NOMEM;
    n = sb_stemmer_length(st);
    if (n < 0 || (size_t)n >= cap)
        return ERR_TOO_LARGE;
    memcpy(out, stem, (size_t)n);
    out[n] = '\0';
    return n;
}

void text_thread_release(void)
{
    stemmers_free(thread_stemmers);
    if (stemmers_key_ok)
        pthread_setspecific(stemmers_key, NULL);
}
