/* Which container the main text comes from (docs/extraction.md, "How it
 * works" step 4): a <nav> is navigation as role="navigation" is, and its
 * text never outscores the article's, however long it is. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "ingest/pages/pages.h"
#include "util/arena.h"

#define PARA(n)                                                                                    \
    "<p>Paragraph " #n " of the report: the committee met on Tuesday to discuss the proposal, "    \
    "which had been debated for months, and decided that the plan would go ahead.</p>"

/* The district guide in the menu has more commas than the article. */
#define GUIDE(n)                                                                                   \
    "<p>District " #n ": old town, market, harbour, park, museum, theatre, zoo, all within a "     \
    "short walk, with cafés, shops, bakeries, and a view of the river from the hill.</p>"

static const char nav_page[] =
    "<html><head><title>River plan</title></head><body><aside><nav><div>" GUIDE(1) GUIDE(2)
        GUIDE(3) "</div></nav></aside><main><div>" PARA(1) PARA(2) PARA(3)
            PARA(4) "</div></main></body></html>";

static void a_nav_is_never_the_article(void **state)
{
    (void)state;
    struct arena a;
    arena_init(&a, 0);
    struct extracted_page p;
    struct extract_options opt = {.url = "https://news.example/2024/05/river-plan"};
    assert_int_equal(extract_page(&a, nav_page, sizeof nav_page - 1, &opt, &p), 0);
    for (int n = 1; n <= 4; n++) {
        char want[32];
        snprintf(want, sizeof want, "Paragraph %d of", n);
        if (!strstr(p.text, want))
            fail_msg("lost [%s] in [%s]", want, p.text);
    }
    if (strstr(p.text, "District"))
        fail_msg("kept the menu in [%s]", p.text);
    arena_release(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_nav_is_never_the_article),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
