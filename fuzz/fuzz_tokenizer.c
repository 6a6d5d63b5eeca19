/* libFuzzer harness: text_tokenize() on arbitrary bytes. Checks that every
 * token is non-empty, within LIMIT_TOKEN_BYTES, valid UTF-8, inside the
 * input, at consecutive positions, and a fixed point (tokenizing a token
 * gives that token back: the query side re-tokenizes folded words); stems
 * each token in English and Russian; runs language detection; and checks
 * that a column's words with text_fts5_token_stem's stems (the engine's
 * builder) are the tokens and stems text_fts5_column_tokenize gives FTS5. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text/text.h"
#include "text/text_fts5.h"
#include "util/limits.h"
#include "util/utf8.h"

struct check {
    size_t size;
    uint32_t next_pos;
};

struct same {
    const char *text;
    size_t len;
    int count;
};

static int same_cb(const struct text_token *t, void *arg)
{
    struct same *s = arg;
    if (++s->count > 1 || t->len != s->len || memcmp(t->text, s->text, t->len) != 0)
        abort();
    return 0;
}

static int check_cb(const struct text_token *t, void *arg)
{
    struct check *c = arg;
    char stem[LIMIT_TOKEN_BYTES * 2];
    struct same s = {t->text, t->len, 0};

    if (t->len == 0 || t->len > LIMIT_TOKEN_BYTES || !utf8_valid(t->text, t->len))
        abort();
    if (t->start >= t->end || t->end > c->size || t->pos != c->next_pos)
        abort();
    c->next_pos++;
    if (text_tokenize(t->text, t->len, same_cb, &s) != 0 || s.count != 1)
        abort();
    if (!(t->flags & TEXT_TOKEN_CJK)) {
        int n = text_stem("en", t->text, t->len, stem, sizeof stem);
        if (n < 0 || (n > 0 && !utf8_valid(stem, (size_t)n)))
            abort();
        n = text_stem("ru", t->text, t->len, stem, sizeof stem);
        if (n < 0 || (n > 0 && !utf8_valid(stem, (size_t)n)))
            abort();
    }
    return 0;
}

/* Each token of a column and its stem, as text_fts5_column_tokenize gives
 * them: recorded, then replayed against text_fts5_column_words. */
#define SEEN_MAX 4096
struct seen {
    size_t n, at;
    bool overflow;
    const char *lang; /* the replay's: text_fts5_column_words wrote it */
    struct {
        uint32_t pos;
        size_t len, stem_len;
        char text[LIMIT_TOKEN_BYTES], stem[LIMIT_TOKEN_BYTES + 1];
    } tok[SEEN_MAX];
};

static int record_cb(const struct text_token *t, const char *stem, size_t stem_len, void *arg)
{
    struct seen *s = arg;
    if (s->n == SEEN_MAX) {
        s->overflow = true;
        return 1;
    }
    if (t->len > LIMIT_TOKEN_BYTES || stem_len > LIMIT_TOKEN_BYTES ||
        (stem == NULL) != (stem_len == 0))
        abort();
    s->tok[s->n].pos = t->pos;
    s->tok[s->n].len = t->len;
    memcpy(s->tok[s->n].text, t->text, t->len);
    s->tok[s->n].stem_len = stem_len;
    if (stem)
        memcpy(s->tok[s->n].stem, stem, stem_len);
    s->n++;
    return 0;
}

static int replay_cb(const struct text_token *t, const char *stem, size_t stem_len, void *arg)
{
    struct seen *s = arg;
    char mine[LIMIT_TOKEN_BYTES + 1];
    if (stem != NULL || stem_len != 0 || s->at == s->n)
        abort();
    int n = text_fts5_token_stem(s->lang, t, mine);
    if (n < 0 || t->pos != s->tok[s->at].pos || t->len != s->tok[s->at].len ||
        memcmp(t->text, s->tok[s->at].text, t->len) != 0 || (size_t)n != s->tok[s->at].stem_len ||
        memcmp(mine, s->tok[s->at].stem, (size_t)n) != 0)
        abort();
    s->at++;
    return 0;
}

/* The first byte picks the column's language; the rest is its text. */
static void check_column_words(const uint8_t *data, size_t size)
{
    static const char *const langs[] = {"en", "ru", "de", "zh", "", "EN", "xx", "fr"};
    static struct seen s;
    char lang[TEXT_FTS5_LANG_MAX + 1];
    if (size == 0)
        return;
    char *text = malloc(size);
    if (text == NULL)
        abort();
    memcpy(text, data + 1, size - 1); /* NUL-terminated: a column is a C string */
    text[size - 1] = '\0';
    const char *language = langs[data[0] % (sizeof langs / sizeof langs[0])];
    s.n = s.at = 0;
    s.overflow = false;
    int rc = text_fts5_column_tokenize(language, text, record_cb, &s);
    if (rc != 0 && !s.overflow)
        abort();
    if (!s.overflow) {
        s.lang = lang;
        if (text_fts5_column_words(language, text, lang, replay_cb, &s) != 0 || s.at != s.n)
            abort();
    }
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct check c = {size, 0};
    char lang[3];

    if (text_tokenize((const char *)data, size, check_cb, &c) != 0)
        abort();
    text_detect_language((const char *)data, size, lang);
    if (lang[0] != '\0' && !text_lang_known(lang))
        abort();
    check_column_words(data, size);
    return 0;
}
