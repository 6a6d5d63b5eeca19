/* libFuzzer harness: an article's author field read into its author terms
 * (store/meta.h store_meta_author_terms; the field comes from feeds,
 * pages and imports: hostile). For any bytes: no crash and no read past
 * them; at most STORE_META_AUTHOR_TERMS_MAX terms, each "w" and 16
 * lower-case hex digits, one space between two, none twice; a field with
 * a word has at least one, the first being the term author:"<the field>"
 * searches (store_meta_term of the whole field, which the query parser's
 * name leads to), and a field without a word has none. The input cut at
 * its first NUL is the C string a row holds. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/meta.h"
#include "text/text.h"
#include "util/buf.h"
#include "check.h"

#define TERM_LEN 17 /* "w" and 16 hex digits */

static int count_word(const struct text_token *t, void *ctx)
{
    (void)t;
    ++*(size_t *)ctx;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstring(data, size);
    if (!s)
        return 0;
    size_t len = strlen(s), words = 0;
    CHECK(text_tokenize(s, len, count_word, &words) >= 0);

    struct buf terms = BUF_INIT;
    int n = store_meta_author_terms(&terms, s);
    CHECK(n >= 0 && n <= STORE_META_AUTHOR_TERMS_MAX && !buf_error(&terms));
    CHECK((n == 0) == (words == 0));
    CHECK(terms.len == (n ? (size_t)n * (TERM_LEN + 1) - 1 : 0));
    for (int i = 0; i < n; i++) {
        const char *t = terms.data + (size_t)i * (TERM_LEN + 1);
        CHECK(t[0] == STORE_META_AUTHOR);
        for (int k = 1; k < TERM_LEN; k++)
            CHECK((t[k] >= '0' && t[k] <= '9') || (t[k] >= 'a' && t[k] <= 'f'));
        CHECK(i + 1 == n || t[TERM_LEN] == ' ');
        for (int j = 0; j < i; j++)
            CHECK(memcmp(t, terms.data + (size_t)j * (TERM_LEN + 1), TERM_LEN) != 0);
    }
    if (n > 0) {
        struct buf whole = BUF_INIT;
        store_meta_term(&whole, STORE_META_AUTHOR, s, len);
        CHECK(!buf_error(&whole) && whole.len == TERM_LEN);
        CHECK(memcmp(whole.data, terms.data, TERM_LEN) == 0);
        buf_release(&whole);
    }
    buf_release(&terms);
    free(s);
    return 0;
}
