/* libFuzzer harness: HTML to plain text (ingest/pages/pages.h) on arbitrary
 * bytes, in the three modes feeds use. Invariants: valid UTF-8, within
 * max_out, no control character but '\n' (none in one-line mode), no
 * leading, trailing or doubled white space. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/pages/pages.h"
#include "util/arena.h"
#include "util/utf8.h"

static void check(const struct html_text_out *o, size_t max, unsigned flags)
{
    if (!o->text || strlen(o->text) != o->len || !utf8_valid(o->text, o->len))
        abort();
    if (max && o->len > max)
        abort();
    for (size_t i = 0; i < o->len; i++) {
        unsigned char ch = (unsigned char)o->text[i];
        if (ch == '\n' && (flags & HTML_TEXT_ONE_LINE))
            abort();
        if ((ch < 0x20 && ch != '\n') || ch == 0x7F)
            abort();
        bool ws = ch == ' ' || ch == '\n';
        if (ws && (i == 0 || i + 1 == o->len))
            abort();
        if (ws && i > 0 && (o->text[i - 1] == ' ' || o->text[i - 1] == '\n'))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct {
        unsigned flags;
        size_t max;
    } modes[] = {{0, 0}, {HTML_TEXT_ONE_LINE, 100}, {HTML_TEXT_PLAIN, 37}};
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        struct arena a;
        arena_init(&a, 64 << 20);
        struct html_text_out o;
        if (html_text_extract(&a, (const char *)data, size, modes[m].max, modes[m].flags, &o) == 0)
            check(&o, modes[m].max, modes[m].flags);
        arena_release(&a);
    }
    return 0;
}
