/* libFuzzer harness: text_tokenize() on arbitrary bytes. Checks that every
 * token is non-empty, within LIMIT_TOKEN_BYTES, valid UTF-8, inside the
 * input, at consecutive positions, and a fixed point (tokenizing a token
 * gives that token back: the query side re-tokenizes folded words); stems
 * each token in English and Russian; runs language detection. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text/text.h"
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct check c = {size, 0};
    char lang[3];

    if (text_tokenize((const char *)data, size, check_cb, &c) != 0)
        abort();
    text_detect_language((const char *)data, size, lang);
    if (lang[0] != '\0' && !text_lang_known(lang))
        abort();
    return 0;
}
